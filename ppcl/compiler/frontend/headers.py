"""Headers a program may ``#include <...>`` without having them: PyOpenCL's complex helpers
and its Bessel functions (``headers_bessel.py``).

``pyopencl-complex.h`` gives ``cfloat_t`` (and, after ``#define PYOPENCL_DEFINE_CDOUBLE``,
``cdouble_t``) with PyOpenCL's functions: ``new``, ``fromreal``, ``real``, ``imag``, ``conj``,
``neg``, ``add``/``addr``/``radd``, ``sub``/``subr``/``rsub``, ``mul``/``mulr``/``rmul``,
``fma`` (``a * b + c``, its real part's product and sum rounded once as PyOpenCL's),
``divide``/``divider``/``rdivide``, ``abs``, ``abs_squared``, ``arg``, ``sqrt``, ``exp``,
``log``, ``pow``/``powr``/``rpow``, ``sin``, ``cos``, ``tan``, ``sinh``, ``cosh``, ``tanh``,
and ``cfloat_cast``/``cdouble_cast`` between the two. A complex value is a ``float2``
(``double2``) holding the real and imaginary parts, numpy's complex64 (complex128) layout; its
parts are ``.x`` and ``.y`` (PyOpenCL's union also names them ``.real`` and ``.imag``).

Each type's definitions are guarded, so ``ppcl.array``'s generated kernels, which take the same
text (``complex_header``), and a preamble that includes the header may both hold them. The
preprocessor looks here after the ``-I`` directories, so a program's own header of the name
wins.
"""

from __future__ import annotations

from ppcl.compiler.frontend.headers_bessel import HEADERS as BESSEL_HEADERS
from ppcl.compiler.frontend.headers_bessel import complex_headers

_TEMPLATE = """
#ifndef ppcl_@T@_header
#define ppcl_@T@_header
typedef @R@2 @T@_t;
inline @T@_t @T@_new(@R@ re, @R@ im) { return (@T@_t)(re, im); }
inline @T@_t @T@_fromreal(@R@ re) { return (@T@_t)(re, 0); }
inline @R@ @T@_real(@T@_t a) { return a.x; }
inline @R@ @T@_imag(@T@_t a) { return a.y; }
inline @T@_t @T@_conj(@T@_t a) { return (@T@_t)(a.x, -a.y); }
inline @T@_t @T@_neg(@T@_t a) { return -a; }
inline @T@_t @T@_add(@T@_t a, @T@_t b) { return a + b; }
inline @T@_t @T@_addr(@T@_t a, @R@ b) { return (@T@_t)(a.x + b, a.y); }
inline @T@_t @T@_radd(@R@ a, @T@_t b) { return (@T@_t)(a + b.x, b.y); }
inline @T@_t @T@_sub(@T@_t a, @T@_t b) { return a - b; }
inline @T@_t @T@_subr(@T@_t a, @R@ b) { return (@T@_t)(a.x - b, a.y); }
inline @T@_t @T@_rsub(@R@ a, @T@_t b) { return (@T@_t)(a - b.x, -b.y); }
inline @T@_t @T@_mul(@T@_t a, @T@_t b) {
  return (@T@_t)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
inline @T@_t @T@_fma(@T@_t a, @T@_t b, @T@_t c) {
  return (@T@_t)(fma(a.x, b.x, c.x) - a.y * b.y, fma(a.y, b.x, fma(a.x, b.y, c.y))); }
inline @T@_t @T@_mulr(@T@_t a, @R@ b) { return (@T@_t)(a.x * b, a.y * b); }
inline @T@_t @T@_rmul(@R@ a, @T@_t b) { return (@T@_t)(a * b.x, a * b.y); }
inline @T@_t @T@_divide(@T@_t a, @T@_t b) {
  @R@ d = b.x * b.x + b.y * b.y;
  return (@T@_t)((a.x * b.x + a.y * b.y) / d, (a.y * b.x - a.x * b.y) / d); }
inline @T@_t @T@_divider(@T@_t a, @R@ b) { return (@T@_t)(a.x / b, a.y / b); }
inline @T@_t @T@_rdivide(@R@ a, @T@_t b) {
  @R@ d = b.x * b.x + b.y * b.y;
  return (@T@_t)(a * b.x / d, -a * b.y / d); }
inline @R@ @T@_abs(@T@_t a) { return hypot(a.x, a.y); }
inline @R@ @T@_abs_squared(@T@_t a) { return a.x * a.x + a.y * a.y; }
inline @R@ @T@_arg(@T@_t a) { return atan2(a.y, a.x); }
inline @T@_t @T@_exp(@T@_t a) {
  @R@ e = exp(a.x); return (@T@_t)(e * cos(a.y), e * sin(a.y)); }
inline @T@_t @T@_log(@T@_t a) { return (@T@_t)(log(hypot(a.x, a.y)), atan2(a.y, a.x)); }
inline @T@_t @T@_sqrt(@T@_t a) {
  @R@ r = hypot(a.x, a.y);
  if (r == 0) return (@T@_t)(0, a.y);
  @R@ t = sqrt((r + fabs(a.x)) / 2);
  if (a.x >= 0) return (@T@_t)(t, a.y / (2 * t));
  return (@T@_t)(fabs(a.y) / (2 * t), copysign(t, a.y)); }
inline @T@_t @T@_pow(@T@_t a, @T@_t b) {
  if (a.x == 0 && a.y == 0) return (@T@_t)(b.x == 0 && b.y == 0 ? 1 : 0, 0);
  return @T@_exp(@T@_mul(b, @T@_log(a))); }
inline @T@_t @T@_powr(@T@_t a, @R@ b) { return @T@_pow(a, @T@_fromreal(b)); }
inline @T@_t @T@_rpow(@R@ a, @T@_t b) { return @T@_pow(@T@_fromreal(a), b); }
inline @T@_t @T@_sin(@T@_t a) { return (@T@_t)(sin(a.x) * cosh(a.y), cos(a.x) * sinh(a.y)); }
inline @T@_t @T@_cos(@T@_t a) { return (@T@_t)(cos(a.x) * cosh(a.y), -sin(a.x) * sinh(a.y)); }
inline @T@_t @T@_tan(@T@_t a) { return @T@_divide(@T@_sin(a), @T@_cos(a)); }
inline @T@_t @T@_sinh(@T@_t a) { return (@T@_t)(sinh(a.x) * cos(a.y), cosh(a.x) * sin(a.y)); }
inline @T@_t @T@_cosh(@T@_t a) { return (@T@_t)(cosh(a.x) * cos(a.y), sinh(a.x) * sin(a.y)); }
inline @T@_t @T@_tanh(@T@_t a) { return @T@_divide(@T@_sinh(a), @T@_cosh(a)); }
#endif
"""

_CASTS = """
#ifndef ppcl_complex_casts
#define ppcl_complex_casts
inline cfloat_t cfloat_cast(cdouble_t a) { return (cfloat_t)((float)a.x, (float)a.y); }
inline cdouble_t cdouble_cast(cfloat_t a) { return (cdouble_t)((double)a.x, (double)a.y); }
#endif
"""


def complex_header(real: str) -> str:
    """The complex helpers over ``real`` (``float``: ``cfloat_t``, ``double``: ``cdouble_t``)."""
    name = {"float": "cfloat", "double": "cdouble"}[real]
    return _TEMPLATE.replace("@T@", name).replace("@R@", real)


BUILTIN_HEADERS = {
    "pyopencl-complex.h": complex_header("float")
    + "#ifdef PYOPENCL_DEFINE_CDOUBLE\n" + complex_header("double") + _CASTS + "#endif\n",
    **BESSEL_HEADERS,
    **complex_headers(complex_header("double")),
}
