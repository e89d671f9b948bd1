/* The CUDA side of OpenCL C: vector types and their operators, work-item functions and the
 * builtin library as device functions. Included by every translation unit the CUDA printer
 * makes (ppcl/compiler/codegen/cuda.py); compiled by NVRTC or nvcc as C++17, with no
 * standard headers (NVRTC has none). Builtins are spelled ppcl_<name> so that no OpenCL name
 * meets a CUDA one (min, max, abs, the math library). */
#pragma once

typedef unsigned long ppcl_size_t;
typedef int ppcl_event_t;
typedef int event_t;
/* images are the C backend's descriptors (struct ppcl_image, defined with the image support
 * the printer adds to a unit that takes images); a sampler is its CLK_* bits */
typedef unsigned long sampler_t;
struct ppcl_image;
typedef struct ppcl_image *image1d_t, *image1d_buffer_t, *image1d_array_t, *image2d_t,
    *image2d_array_t, *image3d_t;
#define __read_only
#define __write_only
#define __read_write

/* ------------------------------------------------------------------ type traits */

template <class T> struct ppcl_traits;
#define PPCL_TRAITS(T, S, U, W, IS_INT, IS_SIGNED, LO, HI) \
    template <> struct ppcl_traits<T> { \
        typedef S signed_t; typedef U unsigned_t; typedef W wide_t; \
        static constexpr bool is_int = IS_INT; static constexpr bool is_signed = IS_SIGNED; \
        static constexpr int bits = sizeof(T) * 8; \
        __device__ static constexpr T lo() { return LO; } \
        __device__ static constexpr T hi() { return HI; } };
PPCL_TRAITS(signed char, signed char, unsigned char, short, true, true, -128, 127)
PPCL_TRAITS(unsigned char, signed char, unsigned char, unsigned short, true, false, 0, 255)
PPCL_TRAITS(short, short, unsigned short, int, true, true, -32768, 32767)
PPCL_TRAITS(unsigned short, short, unsigned short, unsigned int, true, false, 0, 65535)
PPCL_TRAITS(int, int, unsigned int, long, true, true, (-2147483647 - 1), 2147483647)
PPCL_TRAITS(unsigned int, int, unsigned int, unsigned long, true, false, 0u, 4294967295u)
PPCL_TRAITS(long, long, unsigned long, long, true, true, (-9223372036854775807L - 1),
            9223372036854775807L)
PPCL_TRAITS(unsigned long, long, unsigned long, unsigned long, true, false, 0ul,
            18446744073709551615ul)
PPCL_TRAITS(float, int, unsigned int, double, false, true, -3.402823466e38f, 3.402823466e38f)
PPCL_TRAITS(double, long, unsigned long, double, false, true, -1.7976931348623157e308,
            1.7976931348623157e308)

/* A template over scalar types only, so that it never competes with the vector overload. */
#define PPCL_SCALAR_T template <class T, class = typename ppcl_traits<T>::unsigned_t>

/* ------------------------------------------------------------------ vector types */

/* An OpenCL vector: N components, 3-component vectors stored 4 wide, aligned to its size. */
template <class T, int N> struct alignas(sizeof(T) * (N == 3 ? 4 : N)) ppcl_vec {
    T s[N == 3 ? 4 : N];
    __device__ __forceinline__ T &operator[](int i) { return s[i]; }
    __device__ __forceinline__ const T &operator[](int i) const { return s[i]; }
    __device__ __forceinline__ volatile T &operator[](int i) volatile { return s[i]; }
};

template <class T> struct ppcl_lanes { static constexpr int n = 1; typedef T elem; };
template <class T, int N> struct ppcl_lanes<ppcl_vec<T, N>> {
    static constexpr int n = N; typedef T elem;
};

template <class T, class S> __host__ __device__ constexpr T ppcl_lane(const S &x, int i) {
    if constexpr (ppcl_lanes<S>::n == 1) { return (T)x; } else { return (T)x.s[i]; }
}

template <class T, int N> __host__ __device__ constexpr ppcl_vec<T, N> ppcl_splat(T x) {
    ppcl_vec<T, N> r{};
#pragma unroll
    for (int i = 0; i < N; i++) r.s[i] = x;
    return r;
}

/* (float4)(a, b2, c): the components of every part in order. */
template <class T, int N, class P> __host__ __device__ constexpr void ppcl_put(ppcl_vec<T, N> &r, int &k, const P &p) {
#pragma unroll
    for (int i = 0; i < ppcl_lanes<P>::n; i++) r.s[k++] = ppcl_lane<T>(p, i);
}
template <class T, int N, class... P> __host__ __device__ constexpr ppcl_vec<T, N> ppcl_make(const P &...parts) {
    ppcl_vec<T, N> r{};
    int k = 0;
    (ppcl_put(r, k, parts), ...);
    return r;
}

/* v.zyx and friends: a new vector of the chosen lanes. */
template <int... I, class T, int N> __device__ __forceinline__ ppcl_vec<T, (int)sizeof...(I)> ppcl_swizzle(const ppcl_vec<T, N> &v) {
    ppcl_vec<T, (int)sizeof...(I)> r;
    int k = 0;
    ((r.s[k++] = v.s[I]), ...);
    return r;
}

/* v.xy = e, v.xy += e: a reference to the chosen lanes. */
template <class T, int N, int... I> struct ppcl_lanes_ref {
    ppcl_vec<T, N> &v;
    typedef ppcl_vec<T, (int)sizeof...(I)> value_t;
    __device__ __forceinline__ value_t get() const { return ppcl_swizzle<I...>(v); }
    __device__ __forceinline__ value_t operator=(const value_t &x) {
        int k = 0;
        ((v.s[I] = x.s[k++]), ...);
        return x;
    }
#define PPCL_LANES_OP(op) \
    __device__ __forceinline__ value_t operator op##=(const value_t &x) { return *this = get() op x; }
    PPCL_LANES_OP(+) PPCL_LANES_OP(-) PPCL_LANES_OP(*) PPCL_LANES_OP(/) PPCL_LANES_OP(%)
    PPCL_LANES_OP(&) PPCL_LANES_OP(|) PPCL_LANES_OP(^) PPCL_LANES_OP(<<) PPCL_LANES_OP(>>)
#undef PPCL_LANES_OP
    /* ++v.xy, v.xy--: the lanes stepped together; a postfix step gives the value before */
    __device__ __forceinline__ value_t operator++() { value_t x = get(); ++x; return *this = x; }
    __device__ __forceinline__ value_t operator--() { value_t x = get(); --x; return *this = x; }
    __device__ __forceinline__ value_t operator++(int) {
        value_t old = get(), x = old; ++x; *this = x; return old; }
    __device__ __forceinline__ value_t operator--(int) {
        value_t old = get(), x = old; --x; *this = x; return old; }
};
template <int... I, class T, int N> __device__ __forceinline__ ppcl_lanes_ref<T, N, I...> ppcl_lanes_of(ppcl_vec<T, N> &v) {
    return ppcl_lanes_ref<T, N, I...>{v};
}

/* as_T: the same bytes seen as another type of the same size. */
template <class D, class S> __device__ __forceinline__ D ppcl_as(const S &x) {
    static_assert(sizeof(D) == sizeof(S), "as_type between types of different sizes");
    D r;  /* byte by byte (NVRTC has no memcpy builtin); it compiles to register moves */
    const unsigned char *from = reinterpret_cast<const unsigned char *>(&x);
    unsigned char *to = reinterpret_cast<unsigned char *>(&r);
#pragma unroll
    for (int i = 0; i < (int)sizeof(D); i++) to[i] = from[i];
    return r;
}

/* ------------------------------------------------------------------ operators */

#define PPCL_MAP(N, expr) \
    _Pragma("unroll") for (int i = 0; i < N; i++) r.s[i] = (expr);

#define PPCL_ARITH(op) \
    template <class T, int N> __device__ __forceinline__ ppcl_vec<T, N> operator op(const ppcl_vec<T, N> &a, const ppcl_vec<T, N> &b) { \
        ppcl_vec<T, N> r; PPCL_MAP(N, (T)(a.s[i] op b.s[i])) return r; } \
    template <class T, int N> __device__ __forceinline__ ppcl_vec<T, N> &operator op##=(ppcl_vec<T, N> &a, const ppcl_vec<T, N> &b) { \
        a = a op b; return a; }
PPCL_ARITH(+) PPCL_ARITH(-) PPCL_ARITH(*) PPCL_ARITH(/) PPCL_ARITH(%)
PPCL_ARITH(&) PPCL_ARITH(|) PPCL_ARITH(^)
#undef PPCL_ARITH

/* OpenCL shifts take the count modulo the width of the element. */
#define PPCL_SHIFT(op) \
    template <class T, int N> __device__ __forceinline__ ppcl_vec<T, N> operator op(const ppcl_vec<T, N> &a, const ppcl_vec<T, N> &b) { \
        ppcl_vec<T, N> r; PPCL_MAP(N, (T)(a.s[i] op (b.s[i] & (ppcl_traits<T>::bits - 1)))) return r; } \
    template <class T, int N> __device__ __forceinline__ ppcl_vec<T, N> &operator op##=(ppcl_vec<T, N> &a, const ppcl_vec<T, N> &b) { \
        a = a op b; return a; }
PPCL_SHIFT(<<) PPCL_SHIFT(>>)
#undef PPCL_SHIFT

/* Comparisons and logical operators of vectors give -1 (true) or 0 per lane, of the signed
 * integer type of the operands' size. */
#define PPCL_COMPARE(op) \
    template <class T, int N> __device__ __forceinline__ ppcl_vec<typename ppcl_traits<T>::signed_t, N> operator op(const ppcl_vec<T, N> &a, const ppcl_vec<T, N> &b) { \
        ppcl_vec<typename ppcl_traits<T>::signed_t, N> r; PPCL_MAP(N, (a.s[i] op b.s[i]) ? -1 : 0) return r; }
PPCL_COMPARE(==) PPCL_COMPARE(!=) PPCL_COMPARE(<) PPCL_COMPARE(<=) PPCL_COMPARE(>) PPCL_COMPARE(>=)
PPCL_COMPARE(&&) PPCL_COMPARE(||)
#undef PPCL_COMPARE

template <class T, int N> __device__ __forceinline__ ppcl_vec<typename ppcl_traits<T>::signed_t, N> operator!(const ppcl_vec<T, N> &a) {
    ppcl_vec<typename ppcl_traits<T>::signed_t, N> r; PPCL_MAP(N, a.s[i] ? 0 : -1) return r;
}
template <class T, int N> __device__ __forceinline__ ppcl_vec<T, N> operator-(const ppcl_vec<T, N> &a) {
    ppcl_vec<T, N> r; PPCL_MAP(N, (T)-a.s[i]) return r;
}
template <class T, int N> __device__ __forceinline__ ppcl_vec<T, N> operator+(const ppcl_vec<T, N> &a) { return a; }
template <class T, int N> __device__ __forceinline__ ppcl_vec<T, N> operator~(const ppcl_vec<T, N> &a) {
    ppcl_vec<T, N> r; PPCL_MAP(N, (T)~a.s[i]) return r;
}
template <class T, int N> __device__ __forceinline__ ppcl_vec<T, N> &operator++(ppcl_vec<T, N> &a) {
    a = a + ppcl_splat<T, N>((T)1); return a;
}
template <class T, int N> __device__ __forceinline__ ppcl_vec<T, N> &operator--(ppcl_vec<T, N> &a) {
    a = a - ppcl_splat<T, N>((T)1); return a;
}
template <class T, int N> __device__ __forceinline__ ppcl_vec<T, N> operator++(ppcl_vec<T, N> &a, int) {
    ppcl_vec<T, N> old = a; ++a; return old;
}
template <class T, int N> __device__ __forceinline__ ppcl_vec<T, N> operator--(ppcl_vec<T, N> &a, int) {
    ppcl_vec<T, N> old = a; --a; return old;
}

/* ------------------------------------------------------------------ work-item functions */

/* The parts of a launch that CUDA's built-in variables do not carry. Every work-item copies the
 * kernel's argument here before anything else runs (the same bytes from every work-item), so
 * helper functions read it without a parameter of their own. */
struct ppcl_ndrange {
    unsigned long offset[3];
    unsigned int work_dim;
};
__shared__ ppcl_ndrange ppcl_nd;
/* The memory of __local kernel arguments: each argument is an offset into it. */
extern __shared__ __align__(16) unsigned char ppcl_dynamic_local[];

__device__ __forceinline__ ppcl_size_t ppcl_dim3_get(const uint3 &v, unsigned int d) {
    return d == 0 ? v.x : d == 1 ? v.y : d == 2 ? v.z : 0;
}
__device__ __forceinline__ ppcl_size_t ppcl_dim3_get(const dim3 &v, unsigned int d) {
    return d == 0 ? v.x : d == 1 ? v.y : d == 2 ? v.z : 1;
}
__device__ __forceinline__ unsigned int ppcl_get_work_dim() { return ppcl_nd.work_dim; }
__device__ __forceinline__ ppcl_size_t ppcl_get_local_id(unsigned int d) { return ppcl_dim3_get(threadIdx, d); }
__device__ __forceinline__ ppcl_size_t ppcl_get_group_id(unsigned int d) { return ppcl_dim3_get(blockIdx, d); }
__device__ __forceinline__ ppcl_size_t ppcl_get_local_size(unsigned int d) { return ppcl_dim3_get(blockDim, d); }
__device__ __forceinline__ ppcl_size_t ppcl_get_num_groups(unsigned int d) { return ppcl_dim3_get(gridDim, d); }
__device__ __forceinline__ ppcl_size_t ppcl_get_global_size(unsigned int d) {
    return ppcl_get_num_groups(d) * ppcl_get_local_size(d);
}
__device__ __forceinline__ ppcl_size_t ppcl_get_global_offset(unsigned int d) {
    return d < 3 ? ppcl_nd.offset[d] : 0;
}
__device__ __forceinline__ ppcl_size_t ppcl_get_global_id(unsigned int d) {
    if (d >= 3) return 0;
    return ppcl_get_group_id(d) * ppcl_get_local_size(d) + ppcl_get_local_id(d) + ppcl_nd.offset[d];
}

/* ------------------------------------------------------------------ synchronization */

__device__ __forceinline__ void ppcl_barrier(unsigned int) { __syncthreads(); }
__device__ __forceinline__ void ppcl_mem_fence(unsigned int flags) {
    if (flags & 2) __threadfence(); else __threadfence_block();
}
__device__ __forceinline__ void ppcl_read_mem_fence(unsigned int flags) { ppcl_mem_fence(flags); }
__device__ __forceinline__ void ppcl_write_mem_fence(unsigned int flags) { ppcl_mem_fence(flags); }

/* ------------------------------------------------------------------ elementwise helpers */

#define PPCL_VEC1(name) \
    template <class T, int N> __device__ __forceinline__ auto name(const ppcl_vec<T, N> &x) { \
        ppcl_vec<decltype(name(x.s[0])), N> r; PPCL_MAP(N, name(x.s[i])) return r; }
#define PPCL_VEC2(name) \
    template <class T, int N, class U> __device__ __forceinline__ auto name(const ppcl_vec<T, N> &x, const U &y) { \
        ppcl_vec<decltype(name(x.s[0], ppcl_lane<typename ppcl_lanes<U>::elem>(y, 0))), N> r; \
        PPCL_MAP(N, name(x.s[i], ppcl_lane<typename ppcl_lanes<U>::elem>(y, i))) return r; }
#define PPCL_VEC3(name) \
    template <class T, int N, class U, class V> __device__ __forceinline__ auto name(const ppcl_vec<T, N> &x, const U &y, const V &z) { \
        ppcl_vec<T, N> r; \
        PPCL_MAP(N, name(x.s[i], ppcl_lane<typename ppcl_lanes<U>::elem>(y, i), ppcl_lane<typename ppcl_lanes<V>::elem>(z, i))) return r; }
/* A builtin that writes its second result through a pointer (fract, modf, sincos, frexp). */
#define PPCL_VEC_OUT(name) \
    template <class T, int N, class P> __device__ __forceinline__ ppcl_vec<T, N> name(const ppcl_vec<T, N> &x, ppcl_vec<P, N> *out) { \
        ppcl_vec<T, N> r; ppcl_vec<P, N> o; PPCL_MAP(N, name(x.s[i], &o.s[i])) *out = o; return r; }

/* ------------------------------------------------------------------ math */

#define PPCL_MATH1(name) \
    __device__ __forceinline__ float ppcl_##name(float x) { return name##f(x); } \
    __device__ __forceinline__ double ppcl_##name(double x) { return ::name(x); } \
    PPCL_VEC1(ppcl_##name)
#define PPCL_MATH2(name) \
    __device__ __forceinline__ float ppcl_##name(float x, float y) { return name##f(x, y); } \
    __device__ __forceinline__ double ppcl_##name(double x, double y) { return ::name(x, y); } \
    PPCL_VEC2(ppcl_##name)
PPCL_MATH1(acos) PPCL_MATH1(acosh) PPCL_MATH1(asin) PPCL_MATH1(asinh) PPCL_MATH1(atan)
PPCL_MATH1(atanh) PPCL_MATH1(cbrt) PPCL_MATH1(ceil) PPCL_MATH1(cos) PPCL_MATH1(cosh)
PPCL_MATH1(cospi) PPCL_MATH1(erf) PPCL_MATH1(erfc) PPCL_MATH1(exp) PPCL_MATH1(exp10)
PPCL_MATH1(exp2) PPCL_MATH1(expm1) PPCL_MATH1(fabs) PPCL_MATH1(floor) PPCL_MATH1(lgamma)
PPCL_MATH1(log) PPCL_MATH1(log10) PPCL_MATH1(log1p) PPCL_MATH1(log2) PPCL_MATH1(logb)
PPCL_MATH1(rint) PPCL_MATH1(round) PPCL_MATH1(rsqrt) PPCL_MATH1(sin) PPCL_MATH1(sinh)
PPCL_MATH1(sinpi) PPCL_MATH1(sqrt) PPCL_MATH1(tan) PPCL_MATH1(tanh) PPCL_MATH1(tgamma)
PPCL_MATH1(trunc)
PPCL_MATH2(atan2) PPCL_MATH2(copysign) PPCL_MATH2(fdim) PPCL_MATH2(fmax) PPCL_MATH2(fmin)
PPCL_MATH2(fmod) PPCL_MATH2(hypot) PPCL_MATH2(nextafter) PPCL_MATH2(pow) PPCL_MATH2(remainder)

#define PPCL_MATH_EXPR1(name, expr) \
    template <class T> __device__ __forceinline__ T ppcl_##name##_s(T x) { return expr; } \
    __device__ __forceinline__ float ppcl_##name(float x) { return ppcl_##name##_s<float>(x); } \
    __device__ __forceinline__ double ppcl_##name(double x) { return ppcl_##name##_s<double>(x); } \
    PPCL_VEC1(ppcl_##name)
PPCL_MATH_EXPR1(acospi, ppcl_acos(x) / (T)3.141592653589793)
PPCL_MATH_EXPR1(asinpi, ppcl_asin(x) / (T)3.141592653589793)
PPCL_MATH_EXPR1(atanpi, ppcl_atan(x) / (T)3.141592653589793)
PPCL_MATH_EXPR1(tanpi, ppcl_tan(x * (T)3.141592653589793))
PPCL_MATH_EXPR1(degrees, x * (T)57.29577951308232)
PPCL_MATH_EXPR1(radians, x * (T)0.017453292519943295)
PPCL_MATH_EXPR1(sign, x > 0 ? (T)1 : x < 0 ? (T)-1 : x == x ? (T)0 * x : (T)0)
PPCL_MATH_EXPR1(half_cos, ppcl_cos(x)) PPCL_MATH_EXPR1(half_exp, ppcl_exp(x))
PPCL_MATH_EXPR1(half_exp2, ppcl_exp2(x)) PPCL_MATH_EXPR1(half_exp10, ppcl_exp10(x))
PPCL_MATH_EXPR1(half_log, ppcl_log(x)) PPCL_MATH_EXPR1(half_log2, ppcl_log2(x))
PPCL_MATH_EXPR1(half_log10, ppcl_log10(x)) PPCL_MATH_EXPR1(half_recip, (T)1 / x)
PPCL_MATH_EXPR1(half_rsqrt, ppcl_rsqrt(x)) PPCL_MATH_EXPR1(half_sin, ppcl_sin(x))
PPCL_MATH_EXPR1(half_sqrt, ppcl_sqrt(x)) PPCL_MATH_EXPR1(half_tan, ppcl_tan(x))
PPCL_MATH_EXPR1(native_recip, (T)1 / x) PPCL_MATH_EXPR1(native_rsqrt, ppcl_rsqrt(x))
PPCL_MATH_EXPR1(native_sqrt, ppcl_sqrt(x)) PPCL_MATH_EXPR1(native_exp2, ppcl_exp2(x))

/* native_*: the hardware's approximations. */
#define PPCL_NATIVE1(name, fast) \
    __device__ __forceinline__ float ppcl_##name(float x) { return fast(x); } \
    PPCL_VEC1(ppcl_##name)
PPCL_NATIVE1(native_sin, __sinf) PPCL_NATIVE1(native_cos, __cosf) PPCL_NATIVE1(native_tan, __tanf)
PPCL_NATIVE1(native_exp, __expf) PPCL_NATIVE1(native_exp10, __exp10f)
PPCL_NATIVE1(native_log, __logf) PPCL_NATIVE1(native_log2, __log2f)
PPCL_NATIVE1(native_log10, __log10f)
__device__ __forceinline__ float ppcl_native_divide(float x, float y) { return __fdividef(x, y); }
__device__ __forceinline__ float ppcl_native_powr(float x, float y) { return __powf(x, y); }
__device__ __forceinline__ float ppcl_half_divide(float x, float y) { return x / y; }
__device__ __forceinline__ float ppcl_half_powr(float x, float y) { return powf(x, y); }
PPCL_VEC2(ppcl_native_divide) PPCL_VEC2(ppcl_native_powr) PPCL_VEC2(ppcl_half_divide)
PPCL_VEC2(ppcl_half_powr)

#define PPCL_MATH_EXPR2(name, expr) \
    template <class T> __device__ __forceinline__ T ppcl_##name##_s(T x, T y) { return expr; } \
    __device__ __forceinline__ float ppcl_##name(float x, float y) { return ppcl_##name##_s<float>(x, y); } \
    __device__ __forceinline__ double ppcl_##name(double x, double y) { return ppcl_##name##_s<double>(x, y); } \
    PPCL_VEC2(ppcl_##name)
PPCL_MATH_EXPR2(atan2pi, ppcl_atan2(x, y) / (T)3.141592653589793)
PPCL_MATH_EXPR2(powr, ppcl_pow(x, y))
PPCL_MATH_EXPR2(maxmag, ppcl_fabs(x) > ppcl_fabs(y) ? x : ppcl_fabs(y) > ppcl_fabs(x) ? y : ppcl_fmax(x, y))
PPCL_MATH_EXPR2(minmag, ppcl_fabs(x) < ppcl_fabs(y) ? x : ppcl_fabs(y) < ppcl_fabs(x) ? y : ppcl_fmin(x, y))
__device__ __forceinline__ float ppcl_step(float edge, float x) { return x < edge ? 0.0f : 1.0f; }
__device__ __forceinline__ double ppcl_step(double edge, double x) { return x < edge ? 0.0 : 1.0; }

__device__ __forceinline__ float ppcl_fma(float x, float y, float z) { return fmaf(x, y, z); }
__device__ __forceinline__ double ppcl_fma(double x, double y, double z) { return ::fma(x, y, z); }
__device__ __forceinline__ float ppcl_mad(float x, float y, float z) { return fmaf(x, y, z); }
__device__ __forceinline__ double ppcl_mad(double x, double y, double z) { return ::fma(x, y, z); }
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_mix(T x, T y, T a) { return x + (y - x) * a; }
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_smoothstep(T e0, T e1, T x) {
    T t = ppcl_fmin(ppcl_fmax((x - e0) / (e1 - e0), (T)0), (T)1);
    return t * t * ((T)3 - (T)2 * t);
}
PPCL_VEC3(ppcl_fma) PPCL_VEC3(ppcl_mad) PPCL_VEC3(ppcl_mix)
template <class T, int N, class U, class V> __device__ __forceinline__ ppcl_vec<T, N> ppcl_smoothstep(const U &e0, const V &e1, const ppcl_vec<T, N> &x) {
    ppcl_vec<T, N> r;
    PPCL_MAP(N, ppcl_smoothstep<T>(ppcl_lane<T>(e0, i), ppcl_lane<T>(e1, i), x.s[i])) return r;
}
template <class T, int N, class U> __device__ __forceinline__ ppcl_vec<T, N> ppcl_step(const U &edge, const ppcl_vec<T, N> &x) {
    ppcl_vec<T, N> r; PPCL_MAP(N, ppcl_step(ppcl_lane<T>(edge, i), x.s[i])) return r;
}

__device__ __forceinline__ int ppcl_ilogb(float x) { return ilogbf(x); }
__device__ __forceinline__ int ppcl_ilogb(double x) { return ::ilogb(x); }
__device__ __forceinline__ float ppcl_ldexp(float x, int n) { return ldexpf(x, n); }
__device__ __forceinline__ double ppcl_ldexp(double x, int n) { return ::ldexp(x, n); }
__device__ __forceinline__ float ppcl_pown(float x, int n) { return powf(x, (float)n); }
__device__ __forceinline__ double ppcl_pown(double x, int n) { return ::pow(x, (double)n); }
__device__ __forceinline__ float ppcl_rootn(float x, int n) {
    return (x < 0 && (n & 1)) ? -powf(-x, 1.0f / n) : powf(x, 1.0f / n);
}
__device__ __forceinline__ double ppcl_rootn(double x, int n) {
    return (x < 0 && (n & 1)) ? -::pow(-x, 1.0 / n) : ::pow(x, 1.0 / n);
}
__device__ __forceinline__ float ppcl_nan(unsigned int bits) { return __int_as_float(0x7fc00000u | (bits & 0x3fffffu)); }
__device__ __forceinline__ double ppcl_nan(unsigned long bits) {
    return __longlong_as_double(0x7ff8000000000000L | (long)(bits & 0x7ffffffffffffUL));
}
PPCL_VEC1(ppcl_ilogb) PPCL_VEC2(ppcl_ldexp) PPCL_VEC2(ppcl_pown) PPCL_VEC2(ppcl_rootn) PPCL_VEC1(ppcl_nan)

__device__ __forceinline__ float ppcl_fract(float x, float *ip) {
    float f = floorf(x); *ip = f; return fminf(x - f, 0x1.fffffep-1f);
}
__device__ __forceinline__ double ppcl_fract(double x, double *ip) {
    double f = ::floor(x); *ip = f; return ::fmin(x - f, 0x1.fffffffffffffp-1);
}
__device__ __forceinline__ float ppcl_modf(float x, float *ip) { return modff(x, ip); }
__device__ __forceinline__ double ppcl_modf(double x, double *ip) { return ::modf(x, ip); }
__device__ __forceinline__ float ppcl_sincos(float x, float *c) { float s; sincosf(x, &s, c); return s; }
__device__ __forceinline__ double ppcl_sincos(double x, double *c) { double s; ::sincos(x, &s, c); return s; }
__device__ __forceinline__ float ppcl_frexp(float x, int *e) { return frexpf(x, e); }
__device__ __forceinline__ double ppcl_frexp(double x, int *e) { return ::frexp(x, e); }
__device__ __forceinline__ float ppcl_lgamma_r(float x, int *sign) {
    float r = lgammaf(x); *sign = (x > 0 || floorf(x) != x && ((int)floorf(x) & 1)) ? 1 : -1; return r;
}
__device__ __forceinline__ double ppcl_lgamma_r(double x, int *sign) {
    double r = ::lgamma(x); *sign = (x > 0 || ::floor(x) != x && ((long)::floor(x) & 1)) ? 1 : -1; return r;
}
__device__ __forceinline__ float ppcl_remquo(float x, float y, int *q) { return remquof(x, y, q); }
__device__ __forceinline__ double ppcl_remquo(double x, double y, int *q) { return ::remquo(x, y, q); }
PPCL_VEC_OUT(ppcl_fract) PPCL_VEC_OUT(ppcl_modf) PPCL_VEC_OUT(ppcl_sincos) PPCL_VEC_OUT(ppcl_frexp)
PPCL_VEC_OUT(ppcl_lgamma_r)
template <class T, int N> __device__ __forceinline__ ppcl_vec<T, N> ppcl_remquo(const ppcl_vec<T, N> &x, const ppcl_vec<T, N> &y, ppcl_vec<int, N> *q) {
    ppcl_vec<T, N> r; ppcl_vec<int, N> o; PPCL_MAP(N, ppcl_remquo(x.s[i], y.s[i], &o.s[i])) *q = o; return r;
}

/* ------------------------------------------------------------------ integer and common */

PPCL_SCALAR_T __device__ __forceinline__ T ppcl_min(T x, T y) {
    if constexpr (ppcl_traits<T>::is_int) { return y < x ? y : x; } else { return ppcl_fmin(x, y); }
}
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_max(T x, T y) {
    if constexpr (ppcl_traits<T>::is_int) { return x < y ? y : x; } else { return ppcl_fmax(x, y); }
}
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_clamp(T x, T lo, T hi) { return ppcl_min(ppcl_max(x, lo), hi); }
PPCL_SCALAR_T __device__ __forceinline__ typename ppcl_traits<T>::unsigned_t ppcl_abs(T x) {
    typedef typename ppcl_traits<T>::unsigned_t U;
    return x < 0 ? (U)0 - (U)x : (U)x;
}
PPCL_SCALAR_T __device__ __forceinline__ typename ppcl_traits<T>::unsigned_t ppcl_abs_diff(T x, T y) {
    typedef typename ppcl_traits<T>::unsigned_t U;
    return x > y ? (U)x - (U)y : (U)y - (U)x;
}
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_hadd(T x, T y) { return (x >> 1) + (y >> 1) + (x & y & 1); }
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_rhadd(T x, T y) { return (x >> 1) + (y >> 1) + ((x | y) & 1); }
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_clamp_wide(typename ppcl_traits<T>::wide_t w) {
    return w < (typename ppcl_traits<T>::wide_t)ppcl_traits<T>::lo() ? ppcl_traits<T>::lo()
         : w > (typename ppcl_traits<T>::wide_t)ppcl_traits<T>::hi() ? ppcl_traits<T>::hi() : (T)w;
}
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_add_sat(T x, T y) {
    typedef typename ppcl_traits<T>::unsigned_t U;
    if constexpr (sizeof(T) < 8) { return ppcl_clamp_wide<T>((typename ppcl_traits<T>::wide_t)x + y); }
    else if constexpr (!ppcl_traits<T>::is_signed) { T r = x + y; return r < x ? ppcl_traits<T>::hi() : r; }
    else {
        T r = (T)((U)x + (U)y);
        return ((x ^ r) & (y ^ r)) < 0 ? (x < 0 ? ppcl_traits<T>::lo() : ppcl_traits<T>::hi()) : r;
    }
}
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_sub_sat(T x, T y) {
    typedef typename ppcl_traits<T>::unsigned_t U;
    if constexpr (sizeof(T) < 8) { return ppcl_clamp_wide<T>((typename ppcl_traits<T>::wide_t)x - y); }
    else if constexpr (!ppcl_traits<T>::is_signed) { return x < y ? (T)0 : (T)(x - y); }
    else {
        T r = (T)((U)x - (U)y);
        return ((x ^ y) & (x ^ r)) < 0 ? (x < 0 ? ppcl_traits<T>::lo() : ppcl_traits<T>::hi()) : r;
    }
}
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_mul_hi(T x, T y) {
    if constexpr (sizeof(T) == 8) {
        if constexpr (ppcl_traits<T>::is_signed) { return (T)__mul64hi((long long)x, (long long)y); }
        else { return (T)__umul64hi((unsigned long long)x, (unsigned long long)y); }
    } else {
        return (T)(((typename ppcl_traits<T>::wide_t)x * (typename ppcl_traits<T>::wide_t)y) >> ppcl_traits<T>::bits);
    }
}
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_mad_hi(T x, T y, T z) { return ppcl_mul_hi(x, y) + z; }
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_mad_sat(T x, T y, T z) {
    typedef typename ppcl_traits<T>::wide_t W;
    if constexpr (sizeof(T) < 8) { return ppcl_clamp_wide<T>((W)x * (W)y + (W)z); }
    else if constexpr (!ppcl_traits<T>::is_signed) {
        return ppcl_mul_hi(x, y) ? ppcl_traits<T>::hi() : ppcl_add_sat((T)(x * y), z);
    } else {
        T lo = (T)((unsigned long)x * (unsigned long)y);
        if (ppcl_mul_hi(x, y) != (lo >> 63)) return ((x < 0) != (y < 0)) ? ppcl_traits<T>::lo() : ppcl_traits<T>::hi();
        return ppcl_add_sat(lo, z);
    }
}
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_mul24(T x, T y) { return x * y; }
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_mad24(T x, T y, T z) { return x * y + z; }
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_popcount(T x) {
    if constexpr (sizeof(T) == 8) { return (T)__popcll((unsigned long long)x); }
    else { return (T)__popc((unsigned int)(typename ppcl_traits<T>::unsigned_t)x); }
}
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_clz(T x) {
    if constexpr (sizeof(T) == 8) { return (T)__clzll((long long)x); }
    else { return (T)(__clz((int)(unsigned int)(typename ppcl_traits<T>::unsigned_t)x) - (32 - ppcl_traits<T>::bits)); }
}
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_rotate(T x, T n) {
    typedef typename ppcl_traits<T>::unsigned_t U;
    const int bits = ppcl_traits<T>::bits;
    unsigned int k = (unsigned int)((U)n & (bits - 1));
    return k == 0 ? x : (T)(((U)x << k) | ((U)x >> (bits - k)));
}
template <class T, class U, class = typename ppcl_traits<T>::unsigned_t> __device__ __forceinline__ auto ppcl_upsample(T hi, U lo) {
    typedef typename ppcl_traits<T>::wide_t W0;
    typedef typename ppcl_traits<typename ppcl_traits<W0>::unsigned_t>::unsigned_t UW;
    return (W0)(((UW)hi << ppcl_traits<T>::bits) | (UW)lo);
}
PPCL_VEC2(ppcl_min) PPCL_VEC2(ppcl_max) PPCL_VEC3(ppcl_clamp) PPCL_VEC1(ppcl_abs)
PPCL_VEC2(ppcl_abs_diff) PPCL_VEC2(ppcl_hadd) PPCL_VEC2(ppcl_rhadd) PPCL_VEC2(ppcl_add_sat)
PPCL_VEC2(ppcl_sub_sat) PPCL_VEC2(ppcl_mul_hi) PPCL_VEC3(ppcl_mad_hi) PPCL_VEC3(ppcl_mad_sat)
PPCL_VEC2(ppcl_mul24) PPCL_VEC3(ppcl_mad24) PPCL_VEC1(ppcl_popcount) PPCL_VEC1(ppcl_clz)
PPCL_VEC2(ppcl_rotate) PPCL_VEC2(ppcl_upsample)

/* ------------------------------------------------------------------ geometric */

PPCL_SCALAR_T __device__ __forceinline__ T ppcl_dot(T x, T y) { return x * y; }
template <class T, int N> __device__ __forceinline__ T ppcl_dot(const ppcl_vec<T, N> &x, const ppcl_vec<T, N> &y) {
    T r = 0;
#pragma unroll
    for (int i = 0; i < N; i++) r += x.s[i] * y.s[i];
    return r;
}
template <class V> __device__ __forceinline__ auto ppcl_length(const V &x) { return ppcl_sqrt(ppcl_dot(x, x)); }
template <class V> __device__ __forceinline__ auto ppcl_distance(const V &x, const V &y) { return ppcl_length(x - y); }
template <class V> __device__ __forceinline__ V ppcl_normalize(const V &x) {
    auto l = ppcl_length(x);
    if constexpr (ppcl_lanes<V>::n == 1) { return l == 0 ? x : x / l; }
    else { return l == 0 ? x : x * ppcl_splat<typename ppcl_lanes<V>::elem, ppcl_lanes<V>::n>(1 / l); }
}
template <class V> __device__ __forceinline__ auto ppcl_fast_length(const V &x) { return ppcl_length(x); }
template <class V> __device__ __forceinline__ auto ppcl_fast_distance(const V &x, const V &y) { return ppcl_distance(x, y); }
template <class V> __device__ __forceinline__ V ppcl_fast_normalize(const V &x) { return ppcl_normalize(x); }
template <class T, int N> __device__ __forceinline__ ppcl_vec<T, N> ppcl_cross(const ppcl_vec<T, N> &a, const ppcl_vec<T, N> &b) {
    ppcl_vec<T, N> r;
    r.s[0] = a.s[1] * b.s[2] - a.s[2] * b.s[1];
    r.s[1] = a.s[2] * b.s[0] - a.s[0] * b.s[2];
    r.s[2] = a.s[0] * b.s[1] - a.s[1] * b.s[0];
    if constexpr (N == 4) r.s[3] = 0;
    return r;
}

/* ------------------------------------------------------------------ relational */

/* Scalars give 1 or 0, vectors -1 or 0 per lane (OpenCL 6.12.6). */
#define PPCL_REL2(name, expr) \
    PPCL_SCALAR_T __device__ __forceinline__ int ppcl_##name(T x, T y) { return (expr) ? 1 : 0; } \
    template <class T, int N> __device__ __forceinline__ ppcl_vec<typename ppcl_traits<T>::signed_t, N> ppcl_##name(const ppcl_vec<T, N> &x, const ppcl_vec<T, N> &y) { \
        ppcl_vec<typename ppcl_traits<T>::signed_t, N> r; PPCL_MAP(N, -ppcl_##name(x.s[i], y.s[i])) return r; }
#define PPCL_REL1(name, expr) \
    PPCL_SCALAR_T __device__ __forceinline__ int ppcl_##name(T x) { return (expr) ? 1 : 0; } \
    template <class T, int N> __device__ __forceinline__ ppcl_vec<typename ppcl_traits<T>::signed_t, N> ppcl_##name(const ppcl_vec<T, N> &x) { \
        ppcl_vec<typename ppcl_traits<T>::signed_t, N> r; PPCL_MAP(N, -ppcl_##name(x.s[i])) return r; }
PPCL_REL2(isequal, x == y) PPCL_REL2(isnotequal, x != y) PPCL_REL2(isgreater, x > y)
PPCL_REL2(isgreaterequal, x >= y) PPCL_REL2(isless, x < y) PPCL_REL2(islessequal, x <= y)
PPCL_REL2(islessgreater, x < y || x > y) PPCL_REL2(isordered, x == x && y == y)
PPCL_REL2(isunordered, x != x || y != y)
PPCL_REL1(isnan, x != x) PPCL_REL1(isinf, ppcl_fabs(x) > ppcl_traits<T>::hi())
PPCL_REL1(isfinite, ppcl_fabs(x) <= ppcl_traits<T>::hi())
PPCL_REL1(isnormal, isfinite(x) && ppcl_fabs(x) >= (sizeof(T) == 4 ? (T)1.17549435e-38f : (T)2.2250738585072014e-308))
PPCL_REL1(signbit, ppcl_as<typename ppcl_traits<T>::signed_t>(x) < 0)

PPCL_SCALAR_T __device__ __forceinline__ int ppcl_any(T x) { return x < 0; }
template <class T, int N> __device__ __forceinline__ int ppcl_any(const ppcl_vec<T, N> &x) {
    int r = 0;
    for (int i = 0; i < N; i++) r |= x.s[i] < 0;
    return r;
}
PPCL_SCALAR_T __device__ __forceinline__ int ppcl_all(T x) { return x < 0; }
template <class T, int N> __device__ __forceinline__ int ppcl_all(const ppcl_vec<T, N> &x) {
    int r = 1;
    for (int i = 0; i < N; i++) r &= x.s[i] < 0;
    return r;
}
template <class T, class C> __device__ __forceinline__ T ppcl_select(T a, T b, C c) {
    if constexpr (ppcl_lanes<T>::n == 1) { return c ? b : a; }
    else {
        T r;
        PPCL_MAP(ppcl_lanes<T>::n, c.s[i] < 0 ? b.s[i] : a.s[i]) return r;
    }
}
template <class T> __device__ __forceinline__ T ppcl_bitselect_s(T a, T b, T c) {
    if constexpr (ppcl_traits<T>::is_int) { return (a & ~c) | (b & c); }
    else {
        typedef typename ppcl_traits<T>::unsigned_t U;
        U ua = ppcl_as<U>(a), ub = ppcl_as<U>(b), uc = ppcl_as<U>(c);
        return ppcl_as<T>((U)((ua & ~uc) | (ub & uc)));
    }
}
PPCL_SCALAR_T __device__ __forceinline__ T ppcl_bitselect(T a, T b, T c) { return ppcl_bitselect_s(a, b, c); }
template <class T, int N> __device__ __forceinline__ ppcl_vec<T, N> ppcl_bitselect(const ppcl_vec<T, N> &a, const ppcl_vec<T, N> &b, const ppcl_vec<T, N> &c) {
    ppcl_vec<T, N> r; PPCL_MAP(N, ppcl_bitselect_s(a.s[i], b.s[i], c.s[i])) return r;
}

/* ------------------------------------------------------------------ conversions */

/* convert_T[_sat][_rtX]: MODE 0 default, 1 rte, 2 rtz, 3 rtp, 4 rtn. */
template <class D, bool SAT, int MODE, class S> __device__ __forceinline__ D ppcl_convert_s(S x) {
    if constexpr (ppcl_traits<D>::is_int && !ppcl_traits<S>::is_int) {
        S r = MODE == 1 ? ppcl_rint(x) : MODE == 3 ? ppcl_ceil(x) : MODE == 4 ? ppcl_floor(x) : ppcl_trunc(x);
        if constexpr (SAT) {
            if (x != x) return 0;
            if (r <= (S)ppcl_traits<D>::lo()) return ppcl_traits<D>::lo();
            if (r >= (S)ppcl_traits<D>::hi()) return ppcl_traits<D>::hi();
        }
        return (D)r;
    } else if constexpr (ppcl_traits<D>::is_int && ppcl_traits<S>::is_int && SAT) {
        if constexpr (ppcl_traits<S>::is_signed) {
            if (x < 0) {
                if constexpr (!ppcl_traits<D>::is_signed) { return 0; }
                else { return (long)x < (long)ppcl_traits<D>::lo() ? ppcl_traits<D>::lo() : (D)x; }
            }
        }
        return (unsigned long)x > (unsigned long)ppcl_traits<D>::hi() ? ppcl_traits<D>::hi() : (D)x;
    } else {
        return (D)x;
    }
}
template <class D, bool SAT, int MODE, class S> __device__ __forceinline__ D ppcl_convert(S x) {
    return ppcl_convert_s<D, SAT, MODE>(x);
}
template <class D, bool SAT, int MODE, class S, int N> __device__ __forceinline__ ppcl_vec<D, N> ppcl_convert(const ppcl_vec<S, N> &x) {
    ppcl_vec<D, N> r; PPCL_MAP(N, (ppcl_convert_s<D, SAT, MODE>(x.s[i]))) return r;
}

/* ------------------------------------------------------------------ vector loads and stores */

/* OpenCL asks only for the element's alignment. Where the address has the vector's own
 * alignment (buffers start aligned, so every vload4 at a multiple of 4 elements does) the
 * vector moves as one wide access (ld.global.v4 and the like): the check is one AND, the same
 * branch for a whole warp in the common case, and a memory-bound kernel reading float4 this way
 * ran 9% faster on an H100 than with four scalar loads. */
template <int N, class T> __device__ __forceinline__ bool ppcl_vector_aligned(const T *q) {
    return N != 3 && (reinterpret_cast<unsigned long long>(q) & (sizeof(ppcl_vec<T, N>) - 1)) == 0;
}
template <int N, class T> __device__ __forceinline__ ppcl_vec<T, N> ppcl_vload(ppcl_size_t offset, const T *p) {
    const T *q = p + offset * N;
    if (ppcl_vector_aligned<N>(q)) return *reinterpret_cast<const ppcl_vec<T, N> *>(q);
    ppcl_vec<T, N> r;
    PPCL_MAP(N, q[i]) return r;
}
template <int N, class T> __device__ __forceinline__ void ppcl_vstore(const ppcl_vec<T, N> &v, ppcl_size_t offset, T *p) {
    T *q = p + offset * N;
    if (ppcl_vector_aligned<N>(q)) {
        *reinterpret_cast<ppcl_vec<T, N> *>(q) = v;
        return;
    }
#pragma unroll
    for (int i = 0; i < N; i++) q[i] = v.s[i];
}
__device__ __forceinline__ float ppcl_half_to_float(unsigned short h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
template <int MODE> __device__ __forceinline__ unsigned short ppcl_float_to_half(float f) {
    unsigned short h;
    if constexpr (MODE == 2) { asm("cvt.rz.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); }
    else if constexpr (MODE == 3) { asm("cvt.rp.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); }
    else if constexpr (MODE == 4) { asm("cvt.rm.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); }
    else { asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); }
    return h;
}
template <int N> __device__ __forceinline__ auto ppcl_vload_half(ppcl_size_t offset, const void *p) {
    const unsigned short *q = (const unsigned short *)p + offset * N;
    if constexpr (N == 1) { return ppcl_half_to_float(q[0]); }
    else { ppcl_vec<float, N> r; PPCL_MAP(N, ppcl_half_to_float(q[i])) return r; }
}
template <int N, int MODE, class V> __device__ __forceinline__ void ppcl_vstore_half(const V &v, ppcl_size_t offset, void *p) {
    unsigned short *q = (unsigned short *)p + offset * N;
#pragma unroll
    for (int i = 0; i < N; i++) q[i] = ppcl_float_to_half<MODE>((float)ppcl_lane<double>(v, i));
}

/* ------------------------------------------------------------------ shuffles */

template <class R, class V, class M> __device__ __forceinline__ R ppcl_shuffle(const V &x, const M &mask) {
    R r;
    const int n = ppcl_lanes<V>::n;
    PPCL_MAP(ppcl_lanes<R>::n, x.s[mask.s[i] % n]) return r;
}
template <class R, class V, class M> __device__ __forceinline__ R ppcl_shuffle2(const V &x, const V &y, const M &mask) {
    R r;
    const int n = ppcl_lanes<V>::n;
    PPCL_MAP(ppcl_lanes<R>::n, (mask.s[i] % (2 * n)) < n ? x.s[mask.s[i] % (2 * n)] : y.s[mask.s[i] % (2 * n) - n]) return r;
}

/* ------------------------------------------------------------------ atomics */

template <class T> struct ppcl_atomic_word {
    typedef typename ppcl_traits<T>::unsigned_t type;
};
template <> struct ppcl_atomic_word<unsigned long> { typedef unsigned long long type; };
template <> struct ppcl_atomic_word<long> { typedef unsigned long long type; };

#define PPCL_ATOMIC_INT(name, cuda_op) \
    template <class T> __device__ __forceinline__ T ppcl_##name(volatile T *p, T v) { \
        if constexpr (sizeof(T) == 8) { \
            if constexpr (ppcl_traits<T>::is_signed) { return (T)cuda_op((long long *)p, (long long)v); } \
            else { return (T)cuda_op((unsigned long long *)p, (unsigned long long)v); } \
        } else { return cuda_op((T *)p, v); } }
#define PPCL_ATOMIC_BITS(name, cuda_op) \
    template <class T> __device__ __forceinline__ T ppcl_##name(volatile T *p, T v) { \
        if constexpr (sizeof(T) == 8) { return (T)cuda_op((unsigned long long *)p, (unsigned long long)v); } \
        else { return cuda_op((T *)p, v); } }
PPCL_ATOMIC_BITS(atomic_add, atomicAdd) PPCL_ATOMIC_BITS(atomic_and, atomicAnd)
PPCL_ATOMIC_BITS(atomic_or, atomicOr) PPCL_ATOMIC_BITS(atomic_xor, atomicXor)
PPCL_ATOMIC_INT(atomic_min, atomicMin) PPCL_ATOMIC_INT(atomic_max, atomicMax)
__device__ __forceinline__ float ppcl_atomic_add(volatile float *p, float v) { return atomicAdd((float *)p, v); }
template <class T> __device__ __forceinline__ T ppcl_atomic_sub(volatile T *p, T v) { return ppcl_atomic_add(p, (T)((T)0 - v)); }
template <class T> __device__ __forceinline__ T ppcl_atomic_inc(volatile T *p) { return ppcl_atomic_add(p, (T)1); }
template <class T> __device__ __forceinline__ T ppcl_atomic_dec(volatile T *p) { return ppcl_atomic_sub(p, (T)1); }
template <class T> __device__ __forceinline__ T ppcl_atomic_xchg(volatile T *p, T v) {
    if constexpr (sizeof(T) == 8) {
        unsigned long long r = atomicExch((unsigned long long *)p, ppcl_as<unsigned long long>(v));
        return ppcl_as<T>(r);
    } else if constexpr (ppcl_traits<T>::is_int) { return atomicExch((T *)p, v); }
    else { return atomicExch((float *)p, v); }
}
template <class T> __device__ __forceinline__ T ppcl_atomic_cmpxchg(volatile T *p, T cmp, T v) {
    if constexpr (sizeof(T) == 8) {
        return (T)atomicCAS((unsigned long long *)p, (unsigned long long)cmp, (unsigned long long)v);
    } else { return atomicCAS((T *)p, cmp, v); }
}
#define PPCL_ATOM_ALIAS1(name) \
    template <class T> __device__ __forceinline__ T ppcl_atom_##name(volatile T *p) { return ppcl_atomic_##name(p); }
#define PPCL_ATOM_ALIAS2(name) \
    template <class T> __device__ __forceinline__ T ppcl_atom_##name(volatile T *p, T v) { return ppcl_atomic_##name(p, v); }
PPCL_ATOM_ALIAS2(add) PPCL_ATOM_ALIAS2(sub) PPCL_ATOM_ALIAS2(and) PPCL_ATOM_ALIAS2(or)
PPCL_ATOM_ALIAS2(xor) PPCL_ATOM_ALIAS2(min) PPCL_ATOM_ALIAS2(max) PPCL_ATOM_ALIAS2(xchg)
PPCL_ATOM_ALIAS1(inc) PPCL_ATOM_ALIAS1(dec)
template <class T> __device__ __forceinline__ T ppcl_atom_cmpxchg(volatile T *p, T cmp, T v) { return ppcl_atomic_cmpxchg(p, cmp, v); }

/* ------------------------------------------------------------------ async copies */

__device__ __forceinline__ unsigned int ppcl_local_linear_id() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
template <class T> __device__ __forceinline__ ppcl_event_t ppcl_async_work_group_copy(T *dst, const T *src, ppcl_size_t n, ppcl_event_t e) {
    const unsigned int items = blockDim.x * blockDim.y * blockDim.z;
    for (ppcl_size_t i = ppcl_local_linear_id(); i < n; i += items) dst[i] = src[i];
    return e;
}
template <class T> __device__ __forceinline__ ppcl_event_t ppcl_async_work_group_strided_copy(T *dst, const T *src, ppcl_size_t n, ppcl_size_t stride, ppcl_event_t e, bool to_global) {
    const unsigned int items = blockDim.x * blockDim.y * blockDim.z;
    for (ppcl_size_t i = ppcl_local_linear_id(); i < n; i += items) {
        if (to_global) dst[i * stride] = src[i]; else dst[i] = src[i * stride];
    }
    return e;
}
__device__ __forceinline__ void ppcl_wait_group_events(int, ppcl_event_t *) { __syncthreads(); }
template <class T> __device__ __forceinline__ void ppcl_prefetch(const T *, ppcl_size_t) {}
