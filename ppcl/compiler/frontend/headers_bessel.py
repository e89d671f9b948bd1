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
  int saved_rescales = 0;   /* rescales after J_n was saved, applied last (no subnormals) */
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
      sum_y1 *= 1e-200; f1 *= 1e-200;
      if (m <= n) ++saved_rescales;
    }
  }
  norm += here;
  double log_term = log(0.5 * x) + 0.57721566490153286061;
  *jn = saved / norm;
  for (int k = 0; k < saved_rescales; ++k) *jn *= 1e-200;
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


BESSEL_COMPLEX = r"""
#ifndef ppcl_bessel_complex_header
#define ppcl_bessel_complex_header

/* i^q z for q = 0..3: a quarter turn q times */
inline cdouble_t ppcl_turn(cdouble_t z, int q) {
  switch (q & 3) {
    case 0: return z;
    case 1: return (cdouble_t)(-z.y, z.x);
    case 2: return -z;
    default: return (cdouble_t)(z.y, -z.x);
  }
}

/* Miller's backward recurrence at complex z != 0: J_n(z) in *jn, and J_0, J_1, Y_0, Y_1 of z
   (principal branch). The recurrence's values are normalized by the generating function at
   t = -i above the real axis (e^{-iz} = J_0 + 2 sum (-i)^k J_k) and t = i below it
   (e^{iz}): the one of modulus e^{|Im z|}, so the sum has no cancellation however large
   |Im z| is, where J_0 + 2 (J_2 + J_4 + ...) = 1 would lose e^{|Im z|}. */
inline void ppcl_bessel_backward_complex(int n, cdouble_t z, cdouble_t *jn, cdouble_t *j0,
                                         cdouble_t *j1, cdouble_t *y0, cdouble_t *y1) {
  double r = cdouble_abs(z);
  double top = n > r ? (double)n : r;
  int start = 2 * (((int)(top + 24.0 + 3.0 * sqrt(top))) / 2 + 1);
  int upper = z.y >= 0;
  cdouble_t inv_z = cdouble_rdivide(1.0, z);
  cdouble_t above = (cdouble_t)(0.0, 0.0), here = (cdouble_t)(1e-30, 0.0);
  cdouble_t norm = above, sum_y0 = above, sum_y1 = above, saved = above, f1 = above;
  int saved_rescales = 0;   /* rescales after J_n was saved: applied at the end, so a tiny
                               J_n does not pass through the subnormals on its way */
  for (int m = start; m >= 0; --m) {
    if (m == n) saved = here;
    if (m == 1) f1 = here;
    if (m > 0) norm += 2.0 * ppcl_turn(here, upper ? 4 - (m & 3) : m);   /* t^m J_m */
    if (m > 0 && (m & 1) == 0) {          /* J_2k in Y_0's series, k = m / 2 */
      int k = m / 2;
      sum_y0 += ((k & 1) ? -1.0 : 1.0) / k * here;
    } else if (m & 1) {                  /* J_m in Y_1's terms k = (m + 1) / 2, (m - 1) / 2 */
      double sign = (((m + 1) / 2) & 1) ? -1.0 : 1.0;
      double weight = m == 1 ? 1.0 : 2.0 / (m + 1) + 2.0 / (m - 1);
      sum_y1 += sign * weight * here;
    }
    if (m == 0) break;
    cdouble_t below = 2.0 * m * cdouble_mul(here, inv_z) - above;
    above = here;
    here = below;
    if (fabs(here.x) + fabs(here.y) > 1e200) {   /* keep every accumulated value on one scale */
      here *= 1e-200; above *= 1e-200; norm *= 1e-200; sum_y0 *= 1e-200;
      sum_y1 *= 1e-200; f1 *= 1e-200;
      if (m <= n) ++saved_rescales;
    }
  }
  norm += here;
  cdouble_t target = cdouble_exp(upper ? (cdouble_t)(z.y, -z.x) : (cdouble_t)(-z.y, z.x));
  /* target / norm, with norm brought near 1 first: its squared modulus may pass 1e308 */
  double size = fmax(fabs(norm.x), fabs(norm.y));
  cdouble_t scale = cdouble_divide(target, norm / size) / size;
  cdouble_t log_term = cdouble_addr(cdouble_log(0.5 * z), 0.57721566490153286061);
  *jn = cdouble_mul(saved, scale);
  for (int k = 0; k < saved_rescales; ++k) *jn *= 1e-200;
  *j0 = cdouble_mul(here, scale);
  *j1 = cdouble_mul(f1, scale);
  *y0 = M_2_PI * (cdouble_mul(log_term, *j0) - 2.0 * cdouble_mul(sum_y0, scale));
  *y1 = M_2_PI * (-cdouble_mul(*j0, inv_z) + cdouble_mul(log_term, *j1)
                  + cdouble_mul(sum_y1, scale));
}
#endif
"""

BESSEL_J_COMPLEX = BESSEL_COMPLEX + r"""
#ifndef ppcl_bessel_j_complex_header
#define ppcl_bessel_j_complex_header
/* J_n(z) in *jv and J_{n+1}(z) in *jvp1, PyOpenCL's signature (n >= 0) */
inline void bessel_j_complex(int n, cdouble_t z, cdouble_t *jv, cdouble_t *jvp1) {
  if (z.x == 0 && z.y == 0) {
    *jv = (cdouble_t)(n == 0 ? 1.0 : 0.0, 0.0);
    *jvp1 = (cdouble_t)(0.0, 0.0);
    return;
  }
  cdouble_t j0, j1, y0, y1;
  ppcl_bessel_backward_complex(n, z, jv, &j0, &j1, &y0, &y1);
  ppcl_bessel_backward_complex(n + 1, z, jvp1, &j0, &j1, &y0, &y1);
}
#endif
"""

HANKEL_COMPLEX = BESSEL_COMPLEX + r"""
#ifndef ppcl_hankel_complex_header
#define ppcl_hankel_complex_header
/* H_0^(1) and H_1^(1) at 0 <= ph z <= pi with |z| > 2, or -pi/4 <= ph z < 0 with |z| >= 8,
   from the Laplace-type integral
     H_nu(z) = sqrt(2 / (pi z)) e^{i(z - nu pi/2 - pi/4)} / Gamma(nu + 1/2)
               * int_0^inf e^{-u} u^{nu - 1/2} (1 + iu / (2z))^{nu - 1/2} du
   with u = s^2: int e^{-s^2} (1 + is^2/(2z))^{-1/2} ds over the real line for nu = 0 and
   2 int e^{-s^2} s^2 (1 + is^2/(2z))^{1/2} ds for nu = 1. The integrands are analytic in a
   strip of half-width at least sqrt(2 |z|) sin(ph(2iz) / 2) around the real s axis (the
   branch point s^2 = 2iz), 1.4 and 1.5 in those domains, so the trapezoid rule with step 0.2
   is within about e^{2.3 - 2 pi 1.4 / 0.2} of them; e^{-s^2} is below 1e-18 past s = 6.6.
   No cancellation: H decays like e^{-Im z} above the axis, and so does each term. */
inline void ppcl_hankel_01_integral(cdouble_t z, cdouble_t *h0, cdouble_t *h1) {
  const double step = 0.2;
  cdouble_t inv_2z = cdouble_rdivide(0.5, z);
  cdouble_t sum0 = (cdouble_t)(0.0, 0.0), sum1 = sum0;
  for (int j = 0; j <= 33; ++j) {
    double u = (j * step) * (j * step);
    double weight = (j == 0 ? 1.0 : 2.0) * exp(-u);
    cdouble_t root = cdouble_sqrt((cdouble_t)(1.0 - u * inv_2z.y, u * inv_2z.x));
    sum0 += weight * cdouble_rdivide(1.0, root);
    sum1 += (weight * u) * root;
  }
  double e = exp(-z.y);
  cdouble_t prefactor = cdouble_divide((cdouble_t)(e * cos(z.x), e * sin(z.x)),
                                       cdouble_sqrt(z));
  prefactor *= step * sqrt(M_2_PI) * M_2_SQRTPI * 0.5;   /* sqrt(2/pi) / sqrt(pi) */
  /* e^{-i pi/4} and 2 e^{-3i pi/4} */
  *h0 = cdouble_mul(cdouble_mul(prefactor, (cdouble_t)(M_SQRT1_2, -M_SQRT1_2)), sum0);
  *h1 = cdouble_mul(cdouble_mul(prefactor, (cdouble_t)(-M_SQRT2, -M_SQRT2)), sum1);
}

/* H_0^(1)(z) and H_1^(1)(z), PyOpenCL's signature; ifexpon = 0 asks, as there, for
   e^{-iz} H (PyOpenCL's scaled values). Below the real axis H = J + iY grows as e^{|Im z|}
   with J and Y, and Miller's recurrence gives both; above it, where H decays and J + iY
   cancels, the integral does, except at |z| <= 2 where the cancellation costs at most a
   factor 30. Near the negative real axis from below (ph z <= -3 pi/4), H has zeros, and
   J + iY from the recurrence (about 1e-15 absolute) is 1e-13 relative near them; there
   H_n^(1)(z) = (-1)^n (2 H_n^(1)(w) + H_n^(2)(w)) at w = -z, both terms by the integral
   (H^(2)(w) is the conjugate of H^(1) at conj(w), ph conj(w) >= -pi/4). */
inline void hankel_01_complex(cdouble_t z, cdouble_t *h0, cdouble_t *h1, int ifexpon) {
  if (z.x == 0 && z.y == 0) {
    *h0 = (cdouble_t)(NAN, -INFINITY);
    *h1 = (cdouble_t)(NAN, -INFINITY);
    return;
  }
  double r = cdouble_abs(z);
  int above = z.y >= 0 && r > 2.0;
  int reflected = r >= 8.0 && z.y < 0 && z.y >= z.x;   /* -pi < ph z <= -3 pi/4 */
  if (above || reflected) {
    /* one call site of the integral, so a kernel holds one copy of it */
    *h0 = (cdouble_t)(0.0, 0.0);
    *h1 = *h0;
    for (int piece = 0; piece < (reflected ? 2 : 1); ++piece) {
      cdouble_t at = above ? z : (piece == 0 ? -z : cdouble_conj(-z));
      cdouble_t part0, part1;
      ppcl_hankel_01_integral(at, &part0, &part1);
      if (piece == 1) {                 /* H^(2)(w) = conj(H^(1)(conj w)) */
        part0 = cdouble_conj(part0);
        part1 = cdouble_conj(part1);
      }
      double weight = above ? 1.0 : (piece == 0 ? 2.0 : 1.0);
      *h0 += weight * part0;
      *h1 -= (above ? -weight : weight) * part1;   /* (-1)^n for n = 1 when reflected */
    }
  } else {
    cdouble_t jn, j0, j1, y0, y1;
    ppcl_bessel_backward_complex(0, z, &jn, &j0, &j1, &y0, &y1);
    *h0 = j0 + ppcl_turn(y0, 1);
    *h1 = j1 + ppcl_turn(y1, 1);
  }
  if (!ifexpon) {
    cdouble_t unscale = cdouble_exp((cdouble_t)(z.y, -z.x));
    *h0 = cdouble_mul(*h0, unscale);
    *h1 = cdouble_mul(*h1, unscale);
  }
}
#endif
"""



def complex_headers(cdouble_helpers: str) -> dict[str, str]:
    """The complex-argument headers, each after ``cdouble_helpers`` (the guarded text of
    ``pyopencl-complex.h`` over double), so they build whether or not a program included that
    header and defined ``PYOPENCL_DEFINE_CDOUBLE`` first."""
    j_complex = cdouble_helpers + BESSEL_J_COMPLEX
    hankel = cdouble_helpers + HANKEL_COMPLEX
    return {
        "pyopencl-bessel-j-complex.h": j_complex,
        "pyopencl-bessel-j-complex.cl": j_complex,
        "pyopencl-hankel-complex.h": hankel,
        "pyopencl-hankel-complex.cl": hankel,
    }
