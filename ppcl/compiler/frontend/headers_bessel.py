"""PyOpenCL's Bessel headers, ppcl's own text: ``bessel_jn(n, x)`` and ``bessel_yn(n, x)``.

``pyopencl-bessel-j.h`` gives ``bessel_j0``, ``bessel_j1`` and ``bessel_jn(int n, double x)``;
``pyopencl-bessel-y.h`` adds ``bessel_y0``, ``bessel_y1`` and ``bessel_yn``. PyOpenCL spells
them ``.cl``; both spellings are provided. The methods, for order ``n >= 0``:

- ``0 < x < 25``: Miller's backward recurrence from an order past ``max(n, x)``, normalized by
  ``J_0 + 2 (J_2 + J_4 + ...) = 1``; the same pass sums the Neumann series of ``Y_0`` and of
  ``Y_1 = -Y_0'``, so ``Y_0`` and ``Y_1`` cost nothing more. Values are rescaled before they
  overflow, so a tiny ``x`` (1e-5) and a large order both work.
- ``x >= 25``: Hankel's asymptotic expansion of ``J_0, J_1, Y_0, Y_1``, summed until its terms
  fall below 1e-17 (the smallest term at ``x = 25`` is about ``exp(-50)``), the phases
  ``x - pi/4`` and ``x - 3 pi/4`` taken from ``cos x`` and ``sin x`` so no large angle is
  rounded twice.
- ``J_n``: forward recurrence from ``J_0, J_1`` where ``x >= n`` (stable there), Miller's
  value otherwise. ``Y_n``: forward recurrence from ``Y_0, Y_1`` (always stable).

``J_n(0)`` is 0 (1 for ``n = 0``), ``Y_n(0)`` is ``-inf``; a negative ``x`` gives
``(-1)^n J_n(-x)`` and a NaN ``Y_n``, as scipy's ``jn`` and ``yn``.
"""

from __future__ import annotations

BESSEL_J = r"""
#ifndef ppcl_bessel_j_header
#define ppcl_bessel_j_header

/* Miller's backward recurrence at 0 < x: J_n(x) in *jn, and J_0, J_1, Y_0, Y_1 of x. */
inline void ppcl_bessel_backward(int n, double x, double *jn, double *j0, double *j1,
                                 double *y0, double *y1) {
  double top = n > x ? (double)n : x;
  int start = 2 * (((int)(top + 24.0 + 3.0 * sqrt(top))) / 2 + 1);
  double above = 0.0, here = 1e-30;   /* f_{m+1}, f_m */
  double norm = 0.0, sum_y0 = 0.0, sum_y1 = 0.0, saved = 0.0;
  double f1 = 0.0;
  for (int m = start; m >= 0; --m) {
    if (m == n) saved = here;
    if (m == 1) f1 = here;
    if (m > 0 && (m & 1) == 0) {          /* J_2k, k = m / 2 */
      int k = m / 2;
      double sign = (k & 1) ? -1.0 : 1.0;
      norm += 2.0 * here;
      sum_y0 += sign * here / k;
    } else if (m & 1) {                  /* J_m in the terms k = (m + 1) / 2 and (m - 1) / 2 */
      double sign = (((m + 1) / 2) & 1) ? -1.0 : 1.0;
      double weight = m == 1 ? 1.0 : 2.0 / (m + 1) + 2.0 / (m - 1);
      sum_y1 += sign * weight * here;
    }
    if (m == 0) break;
    double below = 2.0 * m / x * here - above;
    above = here;
    here = below;
    if (fabs(here) > 1e200) {             /* keep every accumulated value on one scale */
      here *= 1e-200; above *= 1e-200; norm *= 1e-200; sum_y0 *= 1e-200;
      sum_y1 *= 1e-200; saved *= 1e-200; f1 *= 1e-200;
    }
  }
  norm += here;
  double log_term = log(0.5 * x) + 0.57721566490153286061;
  *jn = saved / norm;
  *j0 = here / norm;
  *j1 = f1 / norm;
  *y0 = M_2_PI * (log_term * *j0 - 2.0 * sum_y0 / norm);
  *y1 = M_2_PI * (-*j0 / x + log_term * *j1 + sum_y1 / norm);
}

/* Hankel's expansion at large x: J_0, J_1, Y_0, Y_1. */
inline void ppcl_bessel_asymptotic(double x, double *j0, double *j1, double *y0, double *y1) {
  double p[2], q[2];
  for (int nu = 0; nu < 2; ++nu) {
    double mu = 4.0 * nu * nu, term = 1.0, p_sum = 1.0, q_sum = 0.0;
    for (int k = 1; k < 60; ++k) {
      term *= (mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (8.0 * k * x);
      /* a_k / x^k enters P (k even) or Q (k odd) with sign (-1)^(k/2) or (-1)^((k-1)/2) */
      double signed_term = ((k / 2) & 1) ? -term : term;
      if (k & 1) q_sum += signed_term; else p_sum += signed_term;
      if (fabs(term) < 1e-17) break;
    }
    p[nu] = p_sum;
    q[nu] = q_sum;
  }
  double c = cos(x), s = sin(x), scale = sqrt(M_2_PI / x);
  double cos0 = M_SQRT1_2 * (c + s), sin0 = M_SQRT1_2 * (s - c);   /* of x - pi/4 */
  double cos1 = M_SQRT1_2 * (s - c), sin1 = -M_SQRT1_2 * (s + c);  /* of x - 3 pi/4 */
  *j0 = scale * (p[0] * cos0 - q[0] * sin0);
  *y0 = scale * (p[0] * sin0 + q[0] * cos0);
  *j1 = scale * (p[1] * cos1 - q[1] * sin1);
  *y1 = scale * (p[1] * sin1 + q[1] * cos1);
}

/* J_0, J_1, Y_0, Y_1 of 0 < x < inf; J_n in *jn as well where Miller's pass gives it. */
inline void ppcl_bessel_jy01(int n, double x, double *jn, double *j0, double *j1,
                             double *y0, double *y1) {
  if (x < 25.0) {
    ppcl_bessel_backward(n, x, jn, j0, j1, y0, y1);
  } else {
    ppcl_bessel_asymptotic(x, j0, j1, y0, y1);
    *jn = 0.0;
  }
}

/* J_n of 0 < x < inf, n >= 0 */
inline double ppcl_bessel_jn_positive(int n, double x) {
  double jn, j0, j1, y0, y1;
  if (x < 25.0 || x < n) {               /* Miller's value, good at any order there */
    ppcl_bessel_backward(n, x, &jn, &j0, &j1, &y0, &y1);
    return jn;
  }
  ppcl_bessel_asymptotic(x, &j0, &j1, &y0, &y1);
  if (n == 0) return j0;
  if (n == 1) return j1;
  double below = j0, here = j1;          /* forward: stable while the order is below x */
  for (int m = 1; m < n; ++m) {
    double next = 2.0 * m / x * here - below;
    below = here;
    here = next;
  }
  return here;
}

inline double bessel_jn(int n, double x) {
  if (isnan(x)) return x;
  /* J_{-n}(x) = (-1)^n J_n(x) = J_n(-x) */
  double sign = ((n & 1) && (n < 0) != (x < 0)) ? -1.0 : 1.0;
  n = abs(n);
  x = fabs(x);
  if (x == 0) return n == 0 ? 1.0 : 0.0;
  if (isinf(x)) return 0.0;
  return sign * ppcl_bessel_jn_positive(n, x);
}

inline double bessel_j0(double x) { return bessel_jn(0, x); }
inline double bessel_j1(double x) { return bessel_jn(1, x); }
#endif
"""

BESSEL_Y = BESSEL_J + r"""
#ifndef ppcl_bessel_y_header
#define ppcl_bessel_y_header
inline double bessel_yn(int n, double x) {
  if (isnan(x)) return x;
  if (x < 0) return NAN;
  double sign = ((n & 1) && n < 0) ? -1.0 : 1.0;    /* Y_{-n} = (-1)^n Y_n */
  n = abs(n);
  if (x == 0) return -INFINITY;
  if (isinf(x)) return 0.0;
  double jn, j0, j1, y0, y1;
  ppcl_bessel_jy01(0, x, &jn, &j0, &j1, &y0, &y1);
  if (n == 0) return y0;
  if (n == 1) return sign * y1;
  double below = y0, here = y1;          /* forward: Y_n grows with n, the stable direction */
  for (int m = 1; m < n && !isinf(here); ++m) {
    double next = 2.0 * m / x * here - below;
    below = here;
    here = next;
  }
  return sign * here;
}

inline double bessel_y0(double x) { return bessel_yn(0, x); }
inline double bessel_y1(double x) { return bessel_yn(1, x); }
#endif
"""

HEADERS = {
    "pyopencl-bessel-j.h": BESSEL_J,
    "pyopencl-bessel-j.cl": BESSEL_J,
    "pyopencl-bessel-y.h": BESSEL_Y,
    "pyopencl-bessel-y.cl": BESSEL_Y,
}
