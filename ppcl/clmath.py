"""``pyopencl.clmath``: OpenCL C math functions applied elementwise to arrays.

Each function returns a lazy array (see ``ppcl.array``), so ``clmath.exp(a) * b`` runs as one
kernel. Integer arrays give float64 results, as numpy's ufuncs do; complex arrays take
``exp``, ``log``, ``sqrt``, the trigonometric and hyperbolic functions (PyOpenCL's complex
helpers) and ``fabs`` (their modulus). The Bessel functions ``bessel_jn``, ``bessel_yn`` and
``hankel_01`` run at once, one kernel each, over the device functions of ppcl's
``pyopencl-bessel-*`` headers (``compiler/frontend/headers_bessel.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ppcl.array import Array, _cached, empty, empty_like
from ppcl.elementwise import ElementwiseKernel
from ppcl.expression import BINARY_FUNCTIONS, COMPLEX_FUNCTIONS, Op, result_dtype
from ppcl.runtime.errors import make_error
from ppcl.tools import dtype_to_ctype

_UNARY = ("acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atanh", "atanpi",
          "cbrt", "ceil", "cos", "cosh", "cospi", "erf", "erfc", "exp", "exp2", "exp10",
          "expm1", "fabs", "floor", "lgamma", "log", "log2", "log10", "log1p", "logb", "rint",
          "round", "rsqrt", "sin", "sinh", "sinpi", "sqrt", "tan", "tanh", "tanpi", "tgamma",
          "trunc")
_BINARY = (*BINARY_FUNCTIONS, "pow")


def _float_dtype(dtype: np.dtype) -> np.dtype:
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def _float_result(op: str, left: np.dtype, right: np.dtype) -> np.dtype:
    return _float_dtype(result_dtype(op, left, right))


def _unary(name: str) -> Any:
    def apply(array: Array, queue: Any = None) -> Array:
        if not isinstance(array, Array):
            raise make_error(f"clmath.{name}", "INVALID_VALUE",
                             f"clmath.{name} takes a ppcl.array.Array, not "
                             f"{type(array).__name__}")
        if name == "fabs":
            return abs(array)
        if array.dtype.kind == "c" and name not in COMPLEX_FUNCTIONS:
            raise make_error(f"clmath.{name}", "INVALID_VALUE",
                             f"clmath.{name} is not defined on complex arrays")
        return array._lazy(Op(_float_dtype(array.dtype), name, (array._node(),)))

    apply.__name__ = name
    apply.__doc__ = f"``{name}`` of every element (lazy)."
    return apply


def _binary(name: str) -> Any:
    def apply(a: Any, b: Any, queue: Any = None) -> Array:
        if not isinstance(a, Array) and not isinstance(b, Array):
            raise make_error(f"clmath.{name}", "INVALID_VALUE",
                             f"clmath.{name} needs an array argument")
        first = a if isinstance(a, Array) else b
        dtypes = [v.dtype if isinstance(v, Array) else first.dtype for v in (a, b)]
        if _float_result(name, *dtypes).kind == "c":
            raise make_error(f"clmath.{name}", "INVALID_VALUE",
                             f"clmath.{name} is not defined on complex arrays")
        # the operands' shapes are checked (and a one-element array broadcast) as for operators
        made = first._binary_node(b if first is a else a, name, reverse=first is b,
                                  dtype_of=_float_result)
        if made is None:
            raise make_error(f"clmath.{name}", "INVALID_VALUE",
                             f"clmath.{name} takes arrays and scalars")
        return first._lazy(*made)

    apply.__name__ = name
    apply.__doc__ = f"``{name}`` of every pair of elements (lazy)."
    return apply


for _name in _UNARY:
    globals()[_name] = _unary(_name)
for _name in _BINARY:
    globals()[_name] = _binary(_name)


# PyOpenCL's keyword names for the three binary functions it has
def atan2(y: Any, x: Any, queue: Any = None) -> Array:
    """``atan2(y, x)`` of every pair of elements (lazy)."""
    return _binary("atan2")(y, x, queue)


def atan2pi(y: Any, x: Any, queue: Any = None) -> Array:
    """``atan2(y, x) / pi`` of every pair of elements (lazy)."""
    return _binary("atan2pi")(y, x, queue)


def fmod(arg: Any, mod: Any, queue: Any = None) -> Array:
    """``fmod(arg, mod)`` of every pair of elements (lazy)."""
    return _binary("fmod")(arg, mod, queue)


def ldexp(significand: Any, exponent: Any, queue: Any = None) -> Array:
    """``significand * 2**exponent`` of every element (lazy); ``exponent`` an array or a
    number, integer or real: a real one is truncated toward zero, as PyOpenCL's kernel casts
    it to ``int`` (numpy's ``ldexp`` refuses it, but PyOpenCL programs pass float arrays)."""
    if not isinstance(significand, Array):
        raise make_error("clmath.ldexp", "INVALID_VALUE",
                         "clmath.ldexp takes a ppcl.array.Array significand")
    if significand.dtype.kind == "c":
        raise make_error("clmath.ldexp", "INVALID_VALUE",
                         "clmath.ldexp is not defined on complex arrays")
    exponent_dtype = exponent.dtype if isinstance(exponent, Array) else np.asarray(exponent).dtype
    if exponent_dtype.kind not in "iuf":
        raise make_error("clmath.ldexp", "INVALID_VALUE",
                         f"clmath.ldexp takes integer or real exponents, not {exponent_dtype}")
    if not isinstance(exponent, Array) and not -2**31 <= int(exponent) < 2**31:
        raise make_error("clmath.ldexp", "INVALID_VALUE",
                         f"clmath.ldexp: the exponent {exponent} is past int")
    made = significand._binary_node(exponent, "ldexp",
                                    dtype_of=lambda op, left, right: _float_dtype(left))
    if made is None:
        raise make_error("clmath.ldexp", "INVALID_VALUE",
                         "clmath.ldexp takes an integer or real array or number as exponent")
    return significand._lazy(*made)


def frexp(arg: Array, queue: Any = None) -> tuple[Array, Array]:
    """Significands in [0.5, 1) and int32 exponents of every element, as numpy's ``frexp``."""
    return _split("frexp", arg, queue, np.dtype(np.int32),
                  "int e; a[i] = frexp(x[i], &e); b[i] = e;")


def modf(arg: Array, queue: Any = None) -> tuple[Array, Array]:
    """Fractional and integral parts of every element (both with its sign), as numpy's."""
    return _split("modf", arg, queue, None, "T whole; a[i] = modf(x[i], &whole); b[i] = whole;")


def _split(name: str, arg: Array, queue: Any, second: np.dtype | None,
           body: str) -> tuple[Array, Array]:
    """A function with two results per element, run at once by an ``ElementwiseKernel`` over
    a contiguous floating copy where ``arg`` is not one (``T``: its C type)."""
    if not isinstance(arg, Array):
        raise make_error(f"clmath.{name}", "INVALID_VALUE",
                         f"clmath.{name} takes a ppcl.array.Array, not {type(arg).__name__}")
    if arg.dtype.kind == "c":
        raise make_error(f"clmath.{name}", "INVALID_VALUE",
                         f"clmath.{name} is not defined on complex arrays")
    x = arg if arg.dtype.kind == "f" else arg.astype(np.float64, queue)
    if not x.flags.c_contiguous:
        x = x.copy() if queue is None else x.copy(queue)
    ctype = dtype_to_ctype(x.dtype)
    second = second or x.dtype
    kernel = _cached(x.context, ("clmath", name, x.dtype.str), lambda: ElementwiseKernel(
        x.context, f"{ctype} *a, {dtype_to_ctype(second)} *b, {ctype} *x",
        body.replace("T ", f"{ctype} "), name=f"clmath_{name}"))
    queue = x._queue(queue, f"clmath.{name}")
    first_out, second_out = empty_like(x, queue), empty(queue, x.shape, second)
    kernel(first_out, second_out, x, queue=queue)
    return first_out, second_out


def bessel_jn(n: int, x: Array, queue: Any = None) -> Array:
    """Bessel functions of the first kind ``J_n(x)`` of integer order ``n``, computed in double
    precision (a float32 array gets float32 results; integer arrays float64); on a complex
    array ``J_n(z)`` for ``n >= 0``."""
    return _bessel("j", n, x, queue)


def bessel_yn(n: int, x: Array, queue: Any = None) -> Array:
    """Bessel functions of the second kind ``Y_n(x)`` of integer order ``n`` (``x > 0``; NaN
    below 0, ``-inf`` at 0, as scipy's ``yn``), computed in double precision."""
    return _bessel("y", n, x, queue)


def _bessel(which: str, n: int, x: Array, queue: Any) -> Array:
    name = f"bessel_{which}n"
    if not isinstance(x, Array):
        raise make_error(f"clmath.{name}", "INVALID_VALUE",
                         f"clmath.{name} takes a ppcl.array.Array, not {type(x).__name__}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not -2**31 <= n < 2**31:
        raise make_error(f"clmath.{name}", "INVALID_VALUE",
                         f"clmath.{name} takes an int order, not {n!r}")
    if x.dtype.kind == "c":
        if which != "j":
            raise make_error(f"clmath.{name}", "INVALID_VALUE",
                             f"clmath.{name} is not defined on complex arrays")
        if n < 0:
            raise make_error(f"clmath.{name}", "INVALID_VALUE",
                             f"clmath.{name} takes orders n >= 0 on complex arrays, not {n}")
        body = ("cdouble_t value, next; bessel_j_complex(ord_n, cdouble_cast_from(x[i]), "
                "&value, &next); a[i] = cdouble_cast_to(value);")
        preamble = _COMPLEX_PREAMBLE + "#include <pyopencl-bessel-j-complex.cl>\n"
        return _special(name, x, queue, 1, body, _complex_casts(x, preamble),
                        "int ord_n", (np.int32(n),))[0]
    preamble = f"#include <pyopencl-bessel-{which}.cl>\n"
    body = f"a[i] = {name}(ord_n, (double)x[i]);"
    return _special(name, x, queue, 1, body, preamble, "int ord_n", (np.int32(n),))[0]


def hankel_01(z: Array, queue: Any = None) -> tuple[Array, Array]:
    """Hankel functions of the first kind ``H_0^(1)(z)`` and ``H_1^(1)(z)`` of every element
    (complex or real; the principal branch, cut along the negative real axis), as two arrays
    of ``z``'s complex dtype, computed in double precision."""
    if not isinstance(z, Array):
        raise make_error("clmath.hankel_01", "INVALID_VALUE",
                         f"clmath.hankel_01 takes a ppcl.array.Array, not {type(z).__name__}")
    if z.dtype.kind != "c":
        z = z.astype(np.complex64 if z.dtype == np.float32 else np.complex128, queue)
    body = ("cdouble_t h0, h1; hankel_01_complex(cdouble_cast_from(x[i]), &h0, &h1, 1); "
            "a[i] = cdouble_cast_to(h0); b[i] = cdouble_cast_to(h1);")
    preamble = _COMPLEX_PREAMBLE + "#include <pyopencl-hankel-complex.cl>\n"
    h0, h1 = _special("hankel_01", z, queue, 2, body, _complex_casts(z, preamble))
    return h0, h1


_COMPLEX_PREAMBLE = "#define PYOPENCL_DEFINE_CDOUBLE\n#include <pyopencl-complex.h>\n"


def _complex_casts(x: Array, preamble: str) -> str:
    """``preamble`` with ``cdouble_cast_from``/``cdouble_cast_to`` between ``x``'s complex
    type and ``cdouble_t``: complex64 arrays are computed in double, as real float32 ones."""
    if x.dtype == np.complex128:
        return preamble + ("#define cdouble_cast_from(v) (v)\n"
                           "#define cdouble_cast_to(v) (v)\n")
    return preamble + ("#define cdouble_cast_from(v) cdouble_cast(v)\n"
                       "#define cdouble_cast_to(v) cfloat_cast(v)\n")


def _special(name: str, arg: Array, queue: Any, outputs: int, body: str, preamble: str,
             scalars: str = "", values: tuple[Any, ...] = ()) -> list[Array]:
    """Run a function with ``outputs`` results per element (``a``, ``b``, ...) over a
    contiguous floating copy ``x`` where ``arg`` is not one, the ``scalars`` declared after
    the arrays, as an ``ElementwiseKernel`` cached per context and dtype."""
    x = arg if arg.dtype.kind in "fc" else arg.astype(np.float64, queue)
    if not x.flags.c_contiguous:
        x = x.copy() if queue is None else x.copy(queue)
    ctype = dtype_to_ctype(x.dtype)
    results = "abcd"[:outputs]
    arguments = ", ".join([*(f"{ctype} *{r}" for r in results), f"{ctype} *x",
                           *([scalars] if scalars else [])])
    kernel = _cached(x.context, ("clmath", name, x.dtype.str), lambda: ElementwiseKernel(
        x.context, arguments, body, name=f"clmath_{name}", preamble=preamble))
    queue = x._queue(queue, f"clmath.{name}")
    made = [empty_like(x, queue) for _ in results]
    kernel(*made, x, *values, queue=queue)
    return made


def __getattr__(name: str) -> Any:  # for type checkers: the generated functions
    raise AttributeError(f"module 'ppcl.clmath' has no attribute '{name}'")


__all__ = [*_UNARY, *_BINARY, "ldexp", "frexp", "modf", "bessel_jn", "bessel_yn",
           "hankel_01"]
