"""int index arithmetic declared 64 bits wide: which variables, and that values do not change."""

from __future__ import annotations

import numpy as np
import pytest
from launch import build_kernel, run

from ppcl.compiler.frontend import compile_source
from ppcl.compiler.transforms.widen import widened_ints

STENCIL = """
__kernel void s(__global const float *in, __global float *out, int nx, int ny) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    int plane = nx * ny;
    int idx = y * nx + x;
    int loaded = (int)in[idx];
    int masked = idx & 3;
    uint u = x;
    int unsigned_sum = x;
    unsigned_sum += u;  /* unsigned arithmetic wraps: stays 32 bits */
    out[idx + plane * 0 + unsigned_sum] = in[idx] + in[loaded] + masked;
}
"""


def test_only_index_arithmetic_is_widened():
    kernel = compile_source(STENCIL).module.kernels[0]
    assert kernel.body is not None
    widened = widened_ints(kernel.body, set())
    assert widened == {"x", "y", "plane", "idx"}  # 'loaded' is a load, 'masked' a bit operation
    assert widened_ints(kernel.body, {"idx"}) == {"plane"}  # excluded names stop the chain


CONVERSIONS = """
__kernel void c(__global int *out, uint big) {
    int i = get_global_id(0);
    int neg = i - 5;
    int wrapped = big;  /* an implicit uint -> int conversion wraps */
    out[neg + 5] = neg < 1u;  /* int < uint compares as unsigned */
    out[16 + i + wrapped + 16] = (uint)neg >> 28;
}
"""


def test_widened_variables_keep_int_semantics():
    k = build_kernel(CONVERSIONS, "c", local_size=(8,))
    group = k.c_source[k.c_source.index("static void ppcl_group_c"):]
    assert "long ppcl_u_neg" in group
    assert "int ppcl_u_wrapped" in group  # assigned a wrapping conversion: stays 32 bits
    out = np.full(24, -1, np.int32)
    run(CONVERSIONS, "c", (8,), (8,), out, np.uint32(0xFFFFFFF0))
    neg = np.arange(8) - 5
    np.testing.assert_array_equal(out[:8], (neg.astype(np.uint32) < 1).astype(np.int32))
    np.testing.assert_array_equal(out[16:24], neg.astype(np.uint32) >> 28)


def test_printf_of_a_widened_variable_prints_an_int(capfd):
    source = """
    __kernel void p(__global int *out) {
        int i = (int)get_global_id(0) - 3;
        out[i + 3] = i;
        printf("%d|", i);
    }"""
    k = build_kernel(source, "p", local_size=(4,))
    assert "long ppcl_u_i" in k.c_source
    out = np.zeros(4, np.int32)
    run(source, "p", (4,), (4,), out)
    assert capfd.readouterr().out == "-3|-2|-1|0|"
    np.testing.assert_array_equal(out, [-3, -2, -1, 0])


def test_left_shift_of_a_widened_variable_wraps_like_an_int():
    source = """
    __kernel void s(__global int *out) {
        int i = (int)get_global_id(0);
        out[i] = (i << 30) < 0;
    }"""
    k = build_kernel(source, "s", local_size=(4,))
    assert "long ppcl_u_i" in k.c_source
    out = np.full(4, -1, np.int32)
    run(source, "s", (4,), (4,), out)
    np.testing.assert_array_equal(out, [0, 0, 1, 1])  # bit 1 reaches the sign bit: 2, 3 < 0


DIVIDED = """
__kernel void d(__global int *out, int w) {
    int i = (int)get_global_id(0) - 37;
    out[i + 37] = i / 3 + i % 7 + (i + 40) / w;
}
"""


def test_a_widened_variable_divides_in_32_bits_and_vectorizes():
    """``i / 3`` of a widened ``i`` is a 32-bit division: in 64 bits gcc has no vector
    multiply-high for the constant and left the loop scalar; the values (negative ones
    truncated toward zero) are the int ones."""
    k = build_kernel(DIVIDED, "d", local_size=(16,), want_vector_report=True)
    group = k.c_source[k.c_source.index("static void ppcl_group_d"):]
    assert "long ppcl_u_i" in group and "(int)ppcl_u_i / 3" in group
    assert "loop vectorized" in k.vector_report, k.vector_report
    out = np.zeros(64, np.int32)
    run(DIVIDED, "d", (64,), (16,), out, np.int32(5))
    i = np.arange(64) - 37
    expected = np.trunc(i / 3) + np.fmod(i, 7) + (i + 40) // 5
    np.testing.assert_array_equal(out, expected.astype(np.int32))


TRANSPOSE = """
#define T 8
__kernel void tr(__global const float *in, __global float *out, int rows, int cols) {
    __local float tile[T][T + 1];
    int lx = get_local_id(0);
    int ly = get_local_id(1);
    int x = get_group_id(0) * T + lx;
    int y = get_group_id(1) * T + ly;
    if (x < cols && y < rows)
        tile[ly][lx] = in[y * cols + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    int ox = get_group_id(1) * T + lx;
    int oy = get_group_id(0) * T + ly;
    if (ox < rows && oy < cols)
        out[oy * rows + ox] = tile[lx][ly];
}
"""


def test_group_positions_are_computed_64_bits_wide():
    k = build_kernel(TRANSPOSE, "tr", local_size=(8, 8))
    group = k.c_source[k.c_source.index("static void ppcl_group_tr"):]
    for name in ("x", "y", "ox", "oy"):
        assert f"long ppcl_u_{name} = (long)(" in group
    rows, cols = 13, 21
    a = np.random.default_rng(0).random((rows, cols), dtype=np.float32)
    out = np.zeros((cols, rows), np.float32)
    run(TRANSPOSE, "tr", (24, 16), (8, 8), a, out, np.int32(rows), np.int32(cols))
    np.testing.assert_array_equal(out, a.T)


@pytest.mark.parametrize("scale, local_size, narrow", [(32, 16, True), (16, 16, False)])
def test_positions_that_might_not_fit_keep_int_conversions(scale, local_size, narrow):
    source = f"""
    __kernel void p(__global int *out) {{
        int lx = get_local_id(0);
        int x = get_group_id(0) * {scale} + lx;
        out[x] = x;
    }}"""
    k = build_kernel(source, "p", local_size=(local_size,), narrow_ids=narrow)
    assert "(long)(__grp0" not in k.c_source
    out = np.full(2 * scale, -1, np.int32)
    # the runtime launches the build without 32-bit ids for a range whose ids pass INT_MAX;
    # the kernel reads only group and local ids, which the offset leaves alone
    offset = None if narrow else (2**31,)
    run(source, "p", (2 * local_size,), (local_size,), out, offset=offset)
    want = np.full(2 * scale, -1, np.int32)
    for g in range(2):
        idx = g * scale + np.arange(local_size)
        want[idx] = idx
    np.testing.assert_array_equal(out, want)


def test_printf_of_a_group_position_prints_an_int(capfd):
    source = """
    __kernel void p(__global int *out) {
        int lx = get_local_id(0);
        out[get_group_id(0) * 2 + lx] = 1;
        printf("%d|", (int)(get_group_id(0) * 2 + lx));
    }"""
    out = np.zeros(4, np.int32)
    run(source, "p", (4,), (2,), out)
    assert capfd.readouterr().out == "0|1|2|3|"


def test_clamped_indices_are_widened():
    """``min``/``max``/``clamp`` of index arithmetic select one of their arguments' values, so
    the variables holding them (and what flows into them) are 64 bits wide too."""
    source = """
    __kernel void k(__global const float *in, __global float *out, int w) {
        int x = get_global_id(0);
        int xl = max(x - 1, 0);
        int xr = clamp(x + 1, 0, w - 1);
        int t = (int)in[x];
        int xt = min(t, w - 1);  /* an int either way; t, a load, stays 32 bits */
        out[x] = in[xl] + in[xr] + in[xt];
    }"""
    kernel = compile_source(source).module.kernels[0]
    assert kernel.body is not None
    assert widened_ints(kernel.body, set()) == {"x", "xl", "xr", "xt"}


# `idx` reaches a subscript and is widened, `i` is not: one declaration of two types, which C
# does not allow in a for-init (a loop whose bound varies stays in each work-item)
MIXED_FOR_INIT = """
__kernel void m(__global const float *in, __global float *out, int w, int n) {
    int x = get_global_id(0);
    float s = 0.0f;
    for (int i = 0, idx = x; i < n + x % 3; i++) { s += in[idx] * (float)i; idx += w; }
    out[x] = s;
}
"""


def test_a_for_init_declaring_a_widened_and_a_narrow_variable():
    w, n = 8, 4
    data = np.arange(w * (n + 2), dtype=np.float32)
    out = np.zeros(w, np.float32)
    run(MIXED_FOR_INIT, "m", (w,), (w,), data, out, np.int32(w), np.int32(n))
    want = [sum(data[x + i * w] * i for i in range(n + x % 3)) for x in range(w)]
    np.testing.assert_array_equal(out, np.array(want, np.float32))
