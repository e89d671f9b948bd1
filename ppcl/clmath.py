"""``pyopencl.clmath``: OpenCL C math functions applied elementwise to arrays.

Each function returns a lazy array (see ``ppcl.array``), so ``clmath.exp(a) * b`` runs as one
kernel. Integer arrays give float64 results, as numpy's ufuncs do; complex arrays take
``exp`` and ``fabs`` (their modulus).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ppcl.array import Array
from ppcl.expression import Op, result_dtype
from ppcl.runtime.errors import make_error

_UNARY = ("acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atanh", "atanpi",
          "cbrt", "ceil", "cos", "cosh", "cospi", "erf", "erfc", "exp", "exp2", "exp10",
          "expm1", "fabs", "floor", "lgamma", "log", "log2", "log10", "log1p", "logb", "rint",
          "round", "rsqrt", "sin", "sinh", "sinpi", "sqrt", "tan", "tanh", "tanpi", "tgamma",
          "trunc")
_BINARY = ("atan2", "fmod", "hypot", "copysign", "pow")


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
        if array.dtype.kind == "c" and name != "exp":
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


def __getattr__(name: str) -> Any:  # for type checkers: the generated functions
    raise AttributeError(f"module 'ppcl.clmath' has no attribute '{name}'")


__all__ = [*_UNARY, *_BINARY]
