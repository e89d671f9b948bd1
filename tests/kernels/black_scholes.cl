// Black-Scholes European option pricing (call and put) for a batch of
// options, using a polynomial approximation of the normal CDF.

#define A1  0.31938153f
#define A2 -0.356563782f
#define A3  1.781477937f
#define A4 -1.821255978f
#define A5  1.330274429f
#define RSQRT2PI 0.39894228040143267793994605993438f

float cnd(float d)
{
    float k = 1.0f / (1.0f + 0.2316419f * fabs(d));
    float poly = k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5))));
    float c = RSQRT2PI * exp(-0.5f * d * d) * poly;
    return (d > 0.0f) ? 1.0f - c : c;
}

__kernel void black_scholes(__global float *call,
                            __global float *put,
                            __global const float *spot,
                            __global const float *strike,
                            __global const float *years,
                            const float riskfree,
                            const float volatility)
{
    size_t i = get_global_id(0);
    float S = spot[i];
    float X = strike[i];
    float T = years[i];

    float sqrtT = sqrt(T);
    float d1 = (log(S / X) + (riskfree + 0.5f * volatility * volatility) * T)
               / (volatility * sqrtT);
    float d2 = d1 - volatility * sqrtT;
    float cndd1 = cnd(d1);
    float cndd2 = cnd(d2);
    float expRT = exp(-riskfree * T);

    call[i] = S * cndd1 - X * expRT * cndd2;
    put[i] = X * expRT * (1.0f - cndd2) - S * (1.0f - cndd1);
}
