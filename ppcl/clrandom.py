"""``pyopencl.clrandom``: random arrays from a counter-based generator.

``PhiloxGenerator`` is Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
1, 2, 3"): element ``i`` of a call is the hash of the counter ``(i, call number)`` under the
key, so any work-item layout gives the same numbers and a seed reproduces them. Uniform floats
take 24 (float32) or 53 (float64) bits, integers are reduced modulo ``b - a``, normals come from
Box-Muller. ``rand(queue, shape, dtype, a=0, b=1)`` and ``fill_rand(ary)`` use one shared
generator per context, as PyOpenCL's do. The Ranlux and Threefry generators are not provided.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

import ppcl as cl
from ppcl.array import Array
from ppcl.elementwise import ElementwiseKernel
from ppcl.runtime.errors import make_error
from ppcl.tools import dtype_to_ctype

PHILOX = """
inline uint4 ppcl_philox(uint4 ctr, uint2 key) {
  for (int r = 0; r < 10; r++) {
    ulong p0 = (ulong)0xD2511F53u * ctr.x;
    ulong p1 = (ulong)0xCD9E8D57u * ctr.z;
    ctr = (uint4)((uint)(p1 >> 32) ^ ctr.y ^ key.x, (uint)p1,
                  (uint)(p0 >> 32) ^ ctr.w ^ key.y, (uint)p0);
    key += (uint2)(0x9E3779B9u, 0xBB67AE85u);
  }
  return ctr;
}
"""

_DRAW = "uint4 r = ppcl_philox((uint4)((uint)i, (uint)((ulong)i >> 32), c2, c3), (uint2)(k0, k1));"


def _uniform_expr(dtype: np.dtype) -> str:
    ctype = dtype_to_ctype(dtype)
    if dtype == np.float64:
        return ("out[i] = a + (b - a) * ((double)(((ulong)r.x << 21) ^ (r.y >> 11)) "
                "* 0x1.0p-53)")
    if dtype == np.float32:
        return "out[i] = a + (b - a) * ((float)(r.x >> 8) * 0x1.0p-24f)"
    if dtype.kind in "iu":
        return f"out[i] = a + ({ctype})(((ulong)r.x | ((ulong)r.y << 32)) % (ulong)(b - a))"
    raise make_error("clrandom", "INVALID_VALUE", f"no uniform numbers of dtype {dtype}")


def _normal_expr(dtype: np.dtype) -> str:
    if dtype.kind != "f":
        raise make_error("clrandom", "INVALID_VALUE", f"no normal numbers of dtype {dtype}")
    real = dtype_to_ctype(dtype)
    return (f"{real} u1 = ((({real})r.x) + 1) * ({real})0x1.0p-32; "
            f"{real} u2 = (({real})r.y) * ({real})0x1.0p-32; "
            f"out[i] = a + b * sqrt(-2 * log(u1)) * cospi(2 * u2)")


class PhiloxGenerator:
    """``pyopencl.clrandom.PhiloxGenerator(context, key=None, counter=None, seed=None)``."""

    def __init__(self, context: cl.Context, key: Any = None, counter: Any = None,
                 seed: int | None = None) -> None:
        self.context = context
        if key is None:
            rng = np.random.default_rng(seed)
            key = rng.integers(0, 2**32, size=2, dtype=np.uint64)
        self.key = [int(k) & 0xFFFFFFFF for k in key]
        self.counter = [int(c) & 0xFFFFFFFF for c in (counter or (0, 0, 0, 0))]
        self._kernels: dict[tuple[str, str], ElementwiseKernel] = {}

    def _kernel(self, dtype: np.dtype, distribution: str) -> ElementwiseKernel:
        key = (dtype.str, distribution)
        kernel = self._kernels.get(key)
        if kernel is None:
            ctype = dtype_to_ctype(dtype)
            body = _uniform_expr(dtype) if distribution == "uniform" else _normal_expr(dtype)
            kernel = ElementwiseKernel(
                self.context, f"{ctype} *out, uint k0, uint k1, uint c2, uint c3, "
                f"{ctype} a, {ctype} b", f"{_DRAW} {body}", name=f"ppcl_{distribution}",
                preamble=PHILOX)
            self._kernels[key] = kernel
        return kernel

    def _fill(self, ary: Array, distribution: str, a: Any, b: Any,
              queue: cl.CommandQueue | None) -> Array:
        queue = queue or ary.queue
        target = ary if ary.flags.c_contiguous else Array(queue, ary.shape, ary.dtype)
        kernel = self._kernel(ary.dtype, distribution)
        kernel(target, *self.key, *self.counter[2:], a, b, queue=queue)
        self.counter[2] = (self.counter[2] + 1) & 0xFFFFFFFF
        if self.counter[2] == 0:
            self.counter[3] = (self.counter[3] + 1) & 0xFFFFFFFF
        if target is not ary:
            ary[...] = target
        return ary

    def fill_uniform(self, ary: Array, a: Any = 0, b: Any = 1,
                     queue: cl.CommandQueue | None = None) -> Array:
        return self._fill(ary, "uniform", a, b, queue)

    def uniform(self, queue: cl.CommandQueue, shape: Any, dtype: Any, order: str = "C",
                allocator: Any = None, a: Any = 0, b: Any = 1, **kwargs: Any) -> Array:
        return self.fill_uniform(Array(queue, shape, dtype, allocator=allocator), a, b, queue)

    def fill_normal(self, ary: Array, mu: Any = 0, sigma: Any = 1,
                    queue: cl.CommandQueue | None = None) -> Array:
        return self._fill(ary, "normal", mu, sigma, queue)

    def normal(self, queue: cl.CommandQueue, shape: Any, dtype: Any, order: str = "C",
               allocator: Any = None, mu: Any = 0, sigma: Any = 1, **kwargs: Any) -> Array:
        return self.fill_normal(Array(queue, shape, dtype, allocator=allocator), mu, sigma,
                                queue)


_generators: weakref.WeakKeyDictionary[cl.Context, PhiloxGenerator] = \
    weakref.WeakKeyDictionary()


def _shared(context: cl.Context) -> PhiloxGenerator:
    generator = _generators.get(context)
    if generator is None:
        generator = _generators[context] = PhiloxGenerator(context)
    return generator


def rand(queue: cl.CommandQueue, shape: Any, dtype: Any, luxury: Any = None, a: Any = 0,
         b: Any = 1, generator: PhiloxGenerator | None = None) -> Array:
    """Uniform numbers in ``[a, b)`` (integers: ``a <= x < b``)."""
    generator = generator or _shared(queue.context)
    return generator.uniform(queue, shape, np.dtype(dtype), a=a, b=b)


def fill_rand(result: Array, queue: cl.CommandQueue | None = None, luxury: Any = None,
              a: Any = 0, b: Any = 1) -> Array:
    queue = queue or result.queue
    if queue is None:
        raise make_error("fill_rand", "INVALID_COMMAND_QUEUE", "pass queue=")
    return _shared(queue.context).fill_uniform(result, a, b, queue)


__all__ = ["PhiloxGenerator", "fill_rand", "rand"]
