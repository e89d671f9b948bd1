"""``pyopencl.clrandom``: random arrays from a counter-based generator.

``PhiloxGenerator`` is Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
1, 2, 3"): element ``i`` of a call is the hash of the counter ``(i, call number)`` under the
key, so any work-item layout gives the same numbers and a seed reproduces them. Uniform floats
take 24 (float32) or 53 (float64) bits, integers are reduced modulo ``b - a``, normals come from
Box-Muller. The bounds ``a``/``b`` (or ``mu``/``sigma``) may be arrays of the result's shape,
read per element; vector dtypes (``cltypes.float4``) are filled element by element.
``rand(queue, shape, dtype, a=0, b=1)`` and ``fill_rand(ary)`` use one shared
generator per context, as PyOpenCL's do. ``fill_uniform``/``fill_normal`` return the event
of the fill, ``uniform``/``normal`` the new array. ``ThreefryGenerator`` (Threefry4x32-20)
has the same interface. Both hashes match Random123's known-answer vectors. Ranlux is not provided.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

import ppcl as cl
from ppcl import cltypes
from ppcl.array import Array
from ppcl.elementwise import ElementwiseKernel
from ppcl.runtime.errors import make_error
from ppcl.runtime.queue import enqueue_no_work
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

_ROTATIONS = ((10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11), (25, 10), (18, 20))


def _threefry_source() -> str:
    """Threefry4x32-20 (Random123): twenty rounds of add-rotate-xor, the key injected every
    four; the rounds are unrolled since each has its own rotation constants."""
    lines = []
    for r in range(20):
        left, right = _ROTATIONS[r % 8]
        if r % 2 == 0:
            lines.append(f"x0 += x1; x1 = rotate(x1, {left}u); x1 ^= x0; "
                         f"x2 += x3; x3 = rotate(x3, {right}u); x3 ^= x2;")
        else:
            lines.append(f"x0 += x3; x3 = rotate(x3, {left}u); x3 ^= x0; "
                         f"x2 += x1; x1 = rotate(x1, {right}u); x1 ^= x2;")
        if (r + 1) % 4 == 0:
            s = (r + 1) // 4
            lines.append(f"x0 += ks[{s % 5}]; x1 += ks[{(s + 1) % 5}]; "
                         f"x2 += ks[{(s + 2) % 5}]; x3 += ks[{(s + 3) % 5}] + {s}u;")
    body = "\n  ".join(lines)
    return f"""
inline uint4 ppcl_threefry(uint4 ctr, uint4 key) {{
  uint ks[5] = {{key.x, key.y, key.z, key.w, 0x1BD11BDAu ^ key.x ^ key.y ^ key.z ^ key.w}};
  uint x0 = ctr.x + ks[0], x1 = ctr.y + ks[1], x2 = ctr.z + ks[2], x3 = ctr.w + ks[3];
  {body}
  return (uint4)(x0, x1, x2, x3);
}}
"""


THREEFRY = _threefry_source()

_COUNTER = "(uint4)((uint)i, (uint)((ulong)i >> 32), c2, c3)"


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


class _CounterGenerator:
    """A generator over a counter-based hash: element ``i`` of a call is the hash of the
    counter ``(i, call)`` under the key."""

    _key_words = 2
    _preamble = ""
    _draw = ""

    def __init__(self, context: cl.Context, key: Any = None, counter: Any = None,
                 seed: int | None = None) -> None:
        self.context = context
        if key is None:
            rng = np.random.default_rng(seed)
            key = rng.integers(0, 2**32, size=self._key_words, dtype=np.uint64)
        if len(key) != self._key_words:
            raise make_error(type(self).__name__, "INVALID_VALUE",
                             f"the key has {self._key_words} words, got {len(key)}")
        self.key = [int(k) & 0xFFFFFFFF for k in key]
        self.counter = [int(c) & 0xFFFFFFFF for c in (counter or (0, 0, 0, 0))]
        self._kernels: dict[tuple[str, str, tuple[bool, bool]], ElementwiseKernel] = {}

    def _kernel(self, dtype: np.dtype, distribution: str, arrays: tuple[bool, bool]
                ) -> ElementwiseKernel:
        """The kernel filling ``out`` with ``distribution``, its two parameters (``a`` and
        ``b``: bounds, or mean and deviation) arrays read at ``i`` where ``arrays`` says."""
        key = (dtype.str, distribution, arrays)
        kernel = self._kernels.get(key)
        if kernel is None:
            ctype = dtype_to_ctype(dtype)
            body = _uniform_expr(dtype) if distribution == "uniform" else _normal_expr(dtype)
            keys = ", ".join(f"uint k{n}" for n in range(self._key_words))
            params = ", ".join(f"{ctype} *{p}__" if array else f"{ctype} {p}"
                               for p, array in zip("ab", arrays, strict=True))
            reads = "".join(f"{ctype} {p} = {p}__[i]; "
                            for p, array in zip("ab", arrays, strict=True) if array)
            kernel = ElementwiseKernel(
                self.context, f"{ctype} *out, {keys}, uint c2, uint c3, {params}",
                f"uint4 r = {self._draw}; {reads}{body}", name=f"ppcl_{distribution}",
                preamble=self._preamble)
            self._kernels[key] = kernel
        return kernel

    def _fill(self, ary: Array, distribution: str, a: Any, b: Any,
              queue: cl.CommandQueue | None) -> cl.Event:
        """Fill ``ary``; returns the event of the fill, as PyOpenCL does."""
        queue = ary._queue(queue, "clrandom")
        scalar = cltypes.vec_type_to_scalar_and_count.get(ary.dtype, (None,))[0]
        if scalar is not None:  # a vector dtype (cltypes.float4): fill its elements
            return self._fill(ary.view(scalar) if ary.flags.c_contiguous else ary,
                              distribution, a, b, queue)
        target = ary if ary.flags.c_contiguous else Array(queue, ary.shape, ary.dtype)
        arrays = (isinstance(a, Array), isinstance(b, Array))
        for name, value in zip(("a", "b") if distribution == "uniform" else ("mu", "sigma"),
                               (a, b), strict=True):
            if isinstance(value, Array) and (value.shape != ary.shape
                                             or value.dtype != ary.dtype):
                raise make_error("clrandom", "INVALID_VALUE",
                                 f"{name} as an array must have the shape and dtype of the "
                                 f"result, {ary.shape} {ary.dtype}: got {value.shape} "
                                 f"{value.dtype}")
        kernel = self._kernel(ary.dtype, distribution, arrays)
        event = kernel(target, *self.key, *self.counter[2:], a, b, queue=queue)
        self.counter[2] = (self.counter[2] + 1) & 0xFFFFFFFF
        if self.counter[2] == 0:
            self.counter[3] = (self.counter[3] + 1) & 0xFFFFFFFF
        if target is not ary:
            ary[...] = target
            event = enqueue_no_work(queue, ary.events)  # the copy into ary, or nothing left
        return event

    def fill_uniform(self, ary: Array, a: Any = 0, b: Any = 1,
                     queue: cl.CommandQueue | None = None) -> cl.Event:
        if ary.dtype.kind in "iu":  # the kernel reduces modulo b - a
            if not isinstance(a, Array) and not isinstance(b, Array):
                if b <= a:
                    raise make_error("clrandom", "INVALID_VALUE",
                                     f"integers in [a, b) need a < b, got a={a}, b={b}")
            elif ary.size and int((b <= a).max(queue).get()):  # per element: one reduction
                raise make_error("clrandom", "INVALID_VALUE",
                                 "integers in [a, b) need a < b at every element: the bounds "
                                 "given as arrays have b <= a at some")
        return self._fill(ary, "uniform", a, b, queue)

    def uniform(self, queue: cl.CommandQueue, shape: Any, dtype: Any, order: str = "C",
                allocator: Any = None, a: Any = 0, b: Any = 1, **kwargs: Any) -> Array:
        result = Array(queue, shape, dtype, allocator=allocator)
        self.fill_uniform(result, a, b, queue)
        return result

    def fill_normal(self, ary: Array, mu: Any = 0, sigma: Any = 1,
                    queue: cl.CommandQueue | None = None) -> cl.Event:
        return self._fill(ary, "normal", mu, sigma, queue)

    def normal(self, queue: cl.CommandQueue, shape: Any, dtype: Any, order: str = "C",
               allocator: Any = None, mu: Any = 0, sigma: Any = 1, **kwargs: Any) -> Array:
        result = Array(queue, shape, dtype, allocator=allocator)
        self.fill_normal(result, mu, sigma, queue)
        return result


class PhiloxGenerator(_CounterGenerator):
    """``pyopencl.clrandom.PhiloxGenerator(context, key=None, counter=None, seed=None)``:
    Philox4x32-10, a key of two 32-bit words."""

    _key_words = 2
    _preamble = PHILOX
    _draw = f"ppcl_philox({_COUNTER}, (uint2)(k0, k1))"


class ThreefryGenerator(_CounterGenerator):
    """``pyopencl.clrandom.ThreefryGenerator(context, key=None, counter=None, seed=None)``:
    Threefry4x32-20, a key of four 32-bit words."""

    _key_words = 4
    _preamble = THREEFRY
    _draw = f"ppcl_threefry({_COUNTER}, (uint4)(k0, k1, k2, k3))"


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


def fill_rand(result: Array, queue: cl.CommandQueue | None = None, a: Any = 0, b: Any = 1,
              luxury: Any = None) -> Array:
    """``fill_rand(result, queue, a, b)`` in PyOpenCL's order: its ``luxury`` (Ranlux's
    quality level) was dropped from between ``queue`` and ``a``, so it comes last here and is
    ignored."""
    queue = result._queue(queue, "fill_rand")
    _shared(queue.context).fill_uniform(result, a, b, queue)
    return result


__all__ = ["PhiloxGenerator", "ThreefryGenerator", "fill_rand", "rand"]
