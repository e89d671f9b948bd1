"""Index arithmetic of the overlay's generated kernels computed in ``int`` where the launch
bounds it (``ppcl/overlay/narrow.py``): results equal to the kernels run without the overlay,
and the bound respected."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from ppcl.compiler.codegen.opencl import print_opencl
from ppcl.compiler.ir import nodes as ir
from ppcl.overlay.narrow import narrow_indices

mf = cl.mem_flags

SOURCE = """
__kernel void scale(__global const float *x, __global float *y, float a)
{
    int i = get_global_id(1) * get_global_size(0) + get_global_id(0);
    y[i] = a * x[i];
}

__kernel void shift_rows(__global const float *y, __global float *z, int w)
{
    int row = get_global_id(1) * w;
    z[row + get_global_id(0)] = y[row + get_global_id(0)] - 1.0f;
}
"""


def kernel_body(ctx, name):
    prg = cl.Program(ctx, SOURCE).build()
    return next(d for d in prg._module.decls if isinstance(d, ir.Function) and d.name == name)


def test_index_is_narrowed_when_the_range_bounds_it(ctx):
    fn = kernel_body(ctx, "scale")
    body, count = narrow_indices(fn.body, (640, 480), (0, 0))
    assert count == 1
    assert "(int)get_global_id(1) * (int)get_global_size(0) + (int)get_global_id(0)" in \
        print_opencl(ir.Module((ir.Function(fn.name, fn.ret, fn.params, body, is_kernel=True),)))


@pytest.mark.parametrize("size, offset", [((65536, 65536), (0, 0)), ((4, 4), (0, 2 ** 31 - 2))])
def test_index_that_may_leave_int_is_kept(ctx, size, offset):
    fn = kernel_body(ctx, "scale")
    body, count = narrow_indices(fn.body, size, offset)
    assert count == 0 and body == fn.body


def test_index_of_an_unspecialized_scalar_is_kept(ctx):
    fn = kernel_body(ctx, "shift_rows")  # w is a run-time value: nothing bounds it
    _, count = narrow_indices(fn.body, (64, 64), (0, 0))
    assert count == 0


@pytest.mark.parametrize("offset", [None, (3, 5)])
def test_narrowed_fused_kernels_equal_unfused(ctx, offset):
    prg = cl.Program(ctx, SOURCE).build()
    rng = np.random.default_rng(5)
    w, h = 40, 24
    plain = cl.CommandQueue(ctx)
    overlaid = cl.CommandQueue(ctx)
    cl.overlay.enable(overlaid)

    def run(queue, x0):
        n = (w + 3) * (h + 5)  # room for the offset range
        x = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x0)
        y, z = cl.Buffer(ctx, mf.READ_WRITE, n * 4), cl.Buffer(ctx, mf.READ_WRITE, n * 4)
        cl.enqueue_fill_buffer(queue, z, np.float32(0), 0, n * 4)
        prg.scale(queue, (w, h), None, x, y, np.float32(1.5), global_offset=offset)
        prg.shift_rows(queue, (w, h), None, y, z, np.int32(w), global_offset=offset)
        y.release()
        out = np.empty(n, np.float32)
        cl.enqueue_copy(queue, out, z)
        return out

    for _ in range(3):  # the second and third replays run the specialized kernel
        x0 = rng.random((w + 3) * (h + 5), dtype=np.float32)
        np.testing.assert_array_equal(run(overlaid, x0), run(plain, x0))
    notes = cl.overlay.graph().notes
    assert any(n.startswith("narrowed") for n in notes)
