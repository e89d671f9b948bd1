"""The execution order of a device, for the optimizer's analyses (PPOpenCL's WII model).

The CPU device runs a work-group as nested work-item loops whose innermost loop, along
dimension 0, the C compiler vectorizes (``#pragma omp simd``): data-parallel, as many lanes as
a vector register holds floats, and the device already vectorizes across work-items (so
holistic vectorization only adds what it cannot do). A GPU runs warps of 32 threads along
dimension 0 and keeps at least one warp per group after coarsening. The paper's Algorithm 2
keeps 128 work-items; with jam, fewer and fuller work-items pay: on an H200 the naive sgemm
with groups of 16 x 16, jammed along y by 8 into groups of 16 x 2, ran 1.36x faster than the
original, and by 2 (all that 128 allows) 1.12x. The guard times the
candidate either way. The checking device interprets one work-item after another: serial.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ppcl.compiler.analysis.order import DATA_PARALLEL, SERIAL, ExecutionOrder
from ppcl.compiler.transforms.workgroup import LoopDecision

GPU_WARP = 32
GPU_MIN_GROUP = 32  # one warp (see above)
GPU_REGISTERS = 64  # 32-bit registers a thread may use before occupancy falls (of 255)
CPU_REGISTERS = 16  # vector registers of x86-64 (AVX2) and of AArch64 NEON (32) at least
FLOAT_BYTES = 4


def execution_order(device: Any) -> ExecutionOrder:
    """The model of ``device`` (a runtime device or its backend)."""
    backend = getattr(device, "backend", device)
    info = backend.info
    line = max(info.cache_line, 16)
    vector = max(info.vector_bytes, FLOAT_BYTES)
    if info.kind == "gpu":
        return ExecutionOrder(DATA_PARALLEL, GPU_WARP, 0, line, 16, GPU_REGISTERS,
                              warp=GPU_WARP, min_group=GPU_MIN_GROUP, vectorizes_items=False)
    if type(backend).__module__.startswith("ppcl.devices.check"):
        return ExecutionOrder(SERIAL, 1, 0, line, vector, CPU_REGISTERS)
    return ExecutionOrder(DATA_PARALLEL, vector // FLOAT_BYTES, 0, line, vector, CPU_REGISTERS,
                          vectorizes_items=True)


def kernel_order(order: ExecutionOrder, loops: Sequence[LoopDecision]) -> tuple[ExecutionOrder, str]:
    """The order one kernel runs in on a device that vectorizes work-item loops: a loop that
    work-group formation keeps inside each work-item (not interchanged with the work-item
    loop) makes that loop run work-item by work-item, serially, whatever the lanes."""
    if not order.vectorizes_items:
        return order, ""
    kept = [loop for loop in loops if not loop.interchanged]
    if not kept:
        return order, ""
    loop = kept[0]
    return (dataclasses.replace(order, kind=SERIAL, lanes=1, vectorizes_items=False),
            f"serial for this kernel: the {loop.kind} loop at {loop.loc} runs inside each "
            f"work-item ({loop.reason})")
