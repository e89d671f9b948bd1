"""Matrix-vector products (gemv) for ``ppcl.array.matmul``.

Each work-item computes four rows of ``y = A x`` with sixteen-wide vector loads along them, so
every load of ``x`` serves four rows; groups of eight work-items share ``x`` in cache. Memory
bound like OpenBLAS's sgemv: one pass over ``A``.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

import ppcl as cl
from ppcl.elementwise import build_kernel
from ppcl.tools import dtype_to_ctype


@functools.cache  # printed once per dtype, not at every launch
def _gemv_source(dtype: np.dtype) -> str:
    t = dtype_to_ctype(dtype)
    rows = "\n".join(f"  __global const {t} *a{r} = A + (row + {r}) * m;" for r in range(4))
    return f"""
__kernel void ppcl_gemv(__global const {t} *A__base, long A__offset,
                        __global const {t} *x__base, long x__offset,
                        __global {t} *y__base, long y__offset, long rows, long m) {{
  __global const {t} *A = A__base + A__offset, *x = x__base + x__offset;
  __global {t} *y = y__base + y__offset;
  long row = (long)get_global_id(0) * 4;
  if (row + 4 > rows) {{
    for (; row < rows; row++) {{
      {t} s = 0;
      for (long j = 0; j < m; j++) s += A[row * m + j] * x[j];
      y[row] = s;
    }}
    return;
  }}
{rows}
  {t}16 c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  long j = 0;
  for (; j + 16 <= m; j += 16) {{
    {t}16 xv = vload16(0, x + j);
    c0 += vload16(0, a0 + j) * xv; c1 += vload16(0, a1 + j) * xv;
    c2 += vload16(0, a2 + j) * xv; c3 += vload16(0, a3 + j) * xv;
  }}
  {t}8 e0 = c0.lo + c0.hi, e1 = c1.lo + c1.hi, e2 = c2.lo + c2.hi, e3 = c3.lo + c3.hi;
  {t}4 d0 = e0.lo + e0.hi, d1 = e1.lo + e1.hi, d2 = e2.lo + e2.hi, d3 = e3.lo + e3.hi;
  {t} s0 = d0.x + d0.y + d0.z + d0.w, s1 = d1.x + d1.y + d1.z + d1.w;
  {t} s2 = d2.x + d2.y + d2.z + d2.w, s3 = d3.x + d3.y + d3.z + d3.w;
  for (; j < m; j++) {{
    {t} xv = x[j];
    s0 += a0[j] * xv; s1 += a1[j] * xv; s2 += a2[j] * xv; s3 += a3[j] * xv;
  }}
  y[row] = s0; y[row + 1] = s1; y[row + 2] = s2; y[row + 3] = s3;
}}
"""


def gemv(queue: cl.CommandQueue, dtype: np.dtype, shape: tuple[int, ...], a: Any,
         a_offset: int, x: Any, x_offset: int, y: Any, y_offset: int,
         wait_for: Sequence[cl.Event] | None = None) -> cl.Event:
    """Enqueue ``y = A x`` for a C-contiguous ``A`` of ``shape`` (offsets in elements), after
    ``wait_for``."""
    kernel = build_kernel(queue.context, _gemv_source(dtype), "ppcl_gemv")
    rows, m = shape
    items = builtins.max(1, -(-rows // 4))
    local = 8 if items % 8 == 0 else 1  # eight work-items a group share the loads of x
    return kernel(queue, (items,), (local,), a, np.int64(a_offset), x, np.int64(x_offset),
                  y, np.int64(y_offset), np.int64(rows), np.int64(m), wait_for=wait_for)
