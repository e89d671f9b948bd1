"""Scheduling (``transforms/schedule.py``): the decisions are recorded in the IR, and the C
printer follows what it is given."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from ppcl.compiler.codegen.c_unit import print_c_unit
from ppcl.compiler.frontend import compile_source
from ppcl.compiler.frontend.options import parse_build_options
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.visit import find_all
from ppcl.compiler.pipeline import KernelSpec, kernel_ir
from ppcl.compiler.transforms.workgroup import FormedKernel
from ppcl.settings import Debug

CODEGEN = Path(__file__).parent.parent / "ppcl" / "compiler" / "codegen"

ROW_SUM = """
__kernel void rs(__global const float *A, __global float *y, int cols) {
    int row = get_global_id(0);
    float acc = 0.0f;
    for (int k = 0; k < cols; ++k)
        acc += A[row * cols + k];
    y[row] = acc;
}
"""

GRID_STRIDE = """
__kernel void fill(__global int *out, int n) {
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        out[i] = i;
}
"""

IDS_2D = """
__kernel void ids(__global int *out, int w) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * w + x] = x + y;
}
"""

CSR = """
__kernel void spmv(__global const int *rowptr, __global const float *vals, __global float *y) {
    int row = get_global_id(0);
    float sum = 0.0f;
    for (int j = rowptr[row]; j < rowptr[row + 1]; j++)
        sum += vals[j];
    y[row] = sum;
}
"""


def formed(source: str, local_size: tuple[int, int, int], options: str = "") -> FormedKernel:
    module = compile_source(source).module
    result = kernel_ir(module, module.kernels[0].name, KernelSpec(local_size),
                       parse_build_options(options), Debug(verify=True))
    assert result.formed is not None
    return result.formed


def plans(f: FormedKernel) -> list[object]:
    return [loop.plan for loop in find_all(f.body, wg.WorkItemLoop)]


def test_a_row_sum_is_jammed_and_says_so() -> None:
    f = formed(ROW_SUM, (16, 1, 1))
    (plan,) = plans(f)
    assert isinstance(plan, wg.JamPlan) and plan.width == 4
    assert f.plans == ("work-item loop 1: jam by 4",)


def test_jam_needs_several_blocks_of_work_items() -> None:
    f = formed(ROW_SUM, (4, 1, 1))
    assert plans(f) == [None]
    assert "no jam: local size 4 along x" in f.plans[0]


def test_a_grid_stride_loop_runs_in_lock_step() -> None:
    f = formed(GRID_STRIDE, (8, 1, 1))
    (plan,) = plans(f)
    assert isinstance(plan, wg.StridePlan) and plan.var.name == "i"
    assert f.plans[0].startswith("work-item loop 1: grid-stride in lock step (no jam: ")


def test_rows_of_2d_groups_and_no_plans_then() -> None:
    f = formed(IDS_2D, (4, 2, 1))
    assert f.rows and plans(f) == [None]
    assert formed(IDS_2D, (8, 1, 1)).rows is False  # 1D groups already run in memory order


def test_the_printer_follows_the_recorded_rows() -> None:
    module = compile_source(IDS_2D).module
    f = formed(IDS_2D, (4, 2, 1))
    rows = print_c_unit(module, f, zero_offset=False, fast_math=False).source
    plain = print_c_unit(module, dataclasses.replace(f, rows=False), zero_offset=False,
                         fast_math=False).source
    assert "__nrow" in rows and "__nrow" not in plain


def test_serial_reductions_turn_the_vectorizer_off_unless_fast_math() -> None:
    assert formed(CSR, (8, 1, 1)).vectorize is False
    assert formed(CSR, (8, 1, 1), "-cl-fast-relaxed-math").vectorize is True
    assert formed(GRID_STRIDE, (8, 1, 1)).vectorize is True


def test_widened_ints_and_positions_are_recorded() -> None:
    f = formed(IDS_2D, (4, 2, 1))
    assert {"x", "y"} <= f.widened


def test_codegen_imports_no_transforms() -> None:
    for path in sorted(CODEGEN.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("ppcl.compiler.transforms"), path.name
                assert node.module != "ppcl.compiler.pipeline", path.name


PIXELS = """
__kernel void shade(__global const float *hdr, __global float *out, int n, float k)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 px = (float4)(hdr[4 * i], hdr[4 * i + 1], hdr[4 * i + 2], hdr[4 * i + 3]);
    float l = px.x;
    float4 o = px * k + (float4)(l, -l, hdr[4 * (n - 1 - i)], 1.0f);
    out[4 * i] = o.s0;
    out[4 * i + 1] = o.s1;
    out[4 * i + 2] = o.s2;
    out[4 * i + 3] = o.s3;
}
"""


def test_a_vector_private_in_a_simd_loop_turns_tree_pre_off() -> None:
    module = compile_source(PIXELS).module
    f = formed(PIXELS, (16, 1, 1))
    assert f.no_pre is True and formed(GRID_STRIDE, (8, 1, 1)).no_pre is False
    source = print_c_unit(module, f, zero_offset=False, fast_math=False).source
    assert '__attribute__((optimize("no-tree-pre"))) static void ppcl_group_shade(' in source


def test_vector_pixels_at_every_local_size_write_every_output() -> None:
    """gcc 12's tree PRE dropped every store of this kernel's simd loop at local size 16."""
    import numpy as np

    import ppcl as cl

    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    kernel = cl.Program(ctx, PIXELS).build().shade
    n, k = 64, np.float32(0.5)
    hdr = np.random.default_rng(3).random(4 * n, dtype=np.float32) + 1
    px = hdr.reshape(n, 4)
    want = px * k
    want[:, 0] += px[:, 0]
    want[:, 1] -= px[:, 0]
    want[:, 2] += hdr[4 * (n - 1 - np.arange(n))]
    want[:, 3] += 1
    mf = cl.mem_flags
    hdr_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=hdr)
    for local in (4, 8, 16, 32, 64):
        out = cl.Buffer(ctx, mf.READ_WRITE, 16 * n)
        kernel(queue, (n,), (local,), hdr_buf, out, np.int32(n), k)
        got = np.empty((n, 4), np.float32)
        cl.enqueue_copy(queue, got, out)
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"local size {local}")


ROW_DOTS_IN_MEMORY = """
__kernel void rows(__global const float *m, __global const float *v, __global float *out, int n) {
    int r = get_global_id(0);
    for (int c = 0; c < n; c++)
        out[r] += m[r * n + c] * v[c];
}
"""

COLUMN_DOTS_IN_MEMORY = """
__kernel void cols(__global const float *m, __global const float *v, __global float *out, int n) {
    int c = get_global_id(0);
    for (int r = 0; r < n; r++)
        out[c] += m[r * n + c] * v[r];
}
"""


def test_a_row_per_work_item_is_not_interchanged_but_jammed() -> None:
    # out[r] is consecutive along x but stays in place; m[r * n + c] moves with the loop and
    # strides across work-items: interchanged, each step would gather a line per work-item
    f = formed(ROW_DOTS_IN_MEMORY, (16, 1, 1))
    (decision,) = f.loops
    assert not decision.interchanged and "streams its own row" in decision.reason
    (plan,) = plans(f)
    assert isinstance(plan, wg.JamPlan)
    assert [p.plan for p in f.loop_plans] == ["jam"]


def test_a_column_per_work_item_is_still_interchanged() -> None:
    # m[r * n + c] moves with the loop and is consecutive along x: the work-item loop inside
    # the interchanged loop reads a row of m at each step
    f = formed(COLUMN_DOTS_IN_MEMORY, (16, 1, 1))
    assert [p.plan for p in f.loop_plans] == ["interchange"]
