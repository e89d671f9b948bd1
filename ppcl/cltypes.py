"""OpenCL C scalar and vector types as numpy dtypes, as in ``pyopencl.cltypes``.

``cltypes.float4`` is a structured dtype with fields ``s0..s3`` (titles ``x, y, z, w``);
3-component vectors have a fourth padding field, so ``float3`` takes 16 bytes as in OpenCL C.
``make_float4(1, 2, 3, 4)``, ``zeros_float4()``, ``ones_float4()`` and ``filled_float4(v)``
build values usable as kernel arguments and array elements.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

char = np.int8
uchar = np.uint8
short = np.int16
ushort = np.uint16
int = np.int32  # noqa: A001 - the OpenCL C name
uint = np.uint32
long = np.int64
ulong = np.uint64
half = np.float16
float = np.float32  # noqa: A001 - the OpenCL C name
double = np.float64

SCALAR_TYPES: dict[str, type[np.generic]] = {
    "char": char, "uchar": uchar, "short": short, "ushort": ushort, "int": int, "uint": uint,
    "long": long, "ulong": ulong, "float": float, "double": double,
}
VECTOR_COUNTS = (2, 3, 4, 8, 16)
_TITLES = ("x", "y", "z", "w")

vec_types: dict[tuple[np.dtype, Any], np.dtype] = {}
vec_type_to_scalar_and_count: dict[np.dtype, tuple[np.dtype, Any]] = {}


def vector_dtype(base: type[np.generic], count: Any) -> np.dtype:
    """The structured dtype of an OpenCL vector of ``count`` elements of ``base``."""
    padded = 4 if count == 3 else count
    names = [f"s{i}" for i in range(count)] + [f"padding{i}" for i in range(padded - count)]
    titles: list[str | None] = [(_TITLES[i] if i < len(_TITLES) and i < count else None)
                                for i in range(padded)]
    return np.dtype({"names": names, "formats": [base] * padded, "titles": titles})


def _maker(dtype: np.dtype, count: Any) -> Callable[..., Any]:
    padded = 4 if count == 3 else count

    def make(*values: Any) -> Any:
        if len(values) != count:
            raise TypeError(f"make_ needs {count} values, got {len(values)}")
        # a writable 0-d array, as PyOpenCL's: a kernel argument, or a host destination
        # that enqueue_copy reads a vector back into
        return np.array(tuple(values) + (0,) * (padded - count), dtype=dtype)

    return make


def _define_vectors(namespace: dict[str, Any]) -> None:
    for base_name, base in SCALAR_TYPES.items():
        for count in VECTOR_COUNTS:
            name = f"{base_name}{count}"
            dtype = vector_dtype(base, count)
            make = _maker(dtype, count)
            namespace[name] = dtype
            namespace[f"make_{name}"] = make
            namespace[f"filled_{name}"] = (lambda value, m=make, n=count: m(*[value] * n))
            namespace[f"zeros_{name}"] = (lambda m=make, n=count: m(*[0] * n))
            namespace[f"ones_{name}"] = (lambda m=make, n=count: m(*[1] * n))
            vec_types[np.dtype(base), count] = dtype
            vec_type_to_scalar_and_count[dtype] = (np.dtype(base), count)


_define_vectors(globals())


def __getattr__(name: str) -> Any:  # for type checkers: the generated names are Any
    raise AttributeError(f"module 'ppcl.cltypes' has no attribute '{name}'")
