"""Inlining of helpers with barriers: kernels built end to end and compared with numpy, the
inlined IR checked by the verifier, and the located error for a barrier call on a lazy operand.

Every kernel runs with the uniformity analysis (lock-step regions) and without it (masked).
"""

from __future__ import annotations

import numpy as np
import pytest
from launch import LocalMem, build_kernel, run

import ppcl as cl
from ppcl.compiler.analysis.verify import verify
from ppcl.compiler.diagnostics import CompileError
from ppcl.compiler.frontend import compile_source
from ppcl.compiler.frontend.options import parse_build_options
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.visit import walk
from ppcl.compiler.pipeline import KernelSpec, kernel_ir
from ppcl.compiler.transforms.inline import barrier_functions, inline_barrier_functions
from ppcl.devices.interface import DeviceBuildError
from ppcl.settings import Debug

MODES = [True, False]  # use the uniformity analysis or run everything masked
LOCAL = 8
GROUPS = 3
N = LOCAL * GROUPS

SOURCE = """
float group_sum(__local float *s, float v) {
    uint lid = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = get_local_size(0) / 2; k > 0; k >>= 1) {
        if (lid < k) s[lid] += s[lid + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return s[0];
}

int bcast(__local int *t, int v) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) t[0] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    return t[0];
}

float neighbour_or_neg(__local float *s, float v) {
    uint lid = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    float r = s[(lid + 1) % get_local_size(0)];
    if (r < 0.5f) return -r;
    r = r * 2.0f;
    return r + 1.0f;
}

float first_above(__local float *s, float v, float limit) {
    barrier(CLK_LOCAL_MEM_FENCE);
    s[get_local_id(0)] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = 0; i < get_local_size(0); i++) {
        if (s[i] > limit) return (float)i;
    }
    return -1.0f;
}

float variance(__local float *s, float v) {
    float mean = group_sum(s, v) / get_local_size(0);
    float d = v - mean;
    return group_sum(s, d * d) / get_local_size(0);
}

void store_sum(__local float *s, __global float *out, float v) {
    float total = group_sum(s, v);
    if (get_local_id(0) != 0) return;
    out[get_group_id(0)] = total;
}

__kernel void sums(__global const float *in, __global float *out, __local float *s) {
    out[get_global_id(0)] = group_sum(s, in[get_global_id(0)]);
}

__kernel void twice(__global const float *in, __global float *out, __local float *s) {
    float v = in[get_global_id(0)];
    float a = group_sum(s, v);
    float b = group_sum(s, v * v);
    out[get_global_id(0)] = a + 2.0f * b;
}

__kernel void early_return(__global const float *in, __global float *out, __local float *s) {
    size_t g = get_global_id(0);
    out[g] = neighbour_or_neg(s, in[g]) + first_above(s, in[g], 0.75f) * 10.0f;
}

__kernel void in_expressions(__global const float *in, __global float *out, __local float *s) {
    size_t g = get_global_id(0);
    float x = 1.0f + group_sum(s, in[g]) * 2.0f;
    int rounds = 0;
    float acc = 0.0f;
    while (group_sum(s, (float)rounds) < 3.0f * get_local_size(0)) {
        acc += in[g];
        rounds++;
        if (rounds == 1) continue;
        acc += 0.5f;
    }
    out[g] = x + acc + rounds * 100;
}

__kernel void loops(__global int *out, __local int *t) {
    int acc = 0;
    for (int i = bcast(t, 0); i < bcast(t, 4); i += bcast(t, 1)) {
        if (i == 1) continue;
        acc += i;
    }
    int j = 0, acc2 = 0;
    do {
        j++;
        if (j == 2) continue;
        if (j > 10) break;
        acc2 += j;
    } while (bcast(t, j) < 5);
    int k = 0;
    do {
        k++;
        if (k == 3) break;
        if (k == 1) continue;
    } while (bcast(t, k) < 10);
    int m = 0;
    for (;;) {
        if (bcast(t, m) >= 2 && m > 0) break;
        m++;
    }
    out[get_global_id(0)] = acc + 100 * acc2 + 10000 * k + 1000000 * m;
}

__kernel void nested(__global const float *in, __global float *out, __local float *s) {
    size_t g = get_global_id(0);
    out[g] = variance(s, in[g]);
    store_sum(s, out + get_global_size(0), in[g]);
}
"""


def _data(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random(N).astype(np.float32)


def _per_item(group_values: np.ndarray) -> np.ndarray:
    return np.repeat(group_values, LOCAL)


@pytest.mark.parametrize("uniform", MODES)
def test_local_reduction_helper(uniform):
    a = _data(1)
    out = np.zeros(N, np.float32)
    run(SOURCE, "sums", (N,), (LOCAL,), a, out, LocalMem(4 * LOCAL), uniformity=uniform)
    np.testing.assert_allclose(out, _per_item(a.reshape(GROUPS, LOCAL).sum(1)), rtol=1e-5)


@pytest.mark.parametrize("uniform", MODES)
def test_same_helper_twice(uniform):
    a = _data(2)
    out = np.zeros(N, np.float32)
    run(SOURCE, "twice", (N,), (LOCAL,), a, out, LocalMem(4 * LOCAL), uniformity=uniform)
    groups = a.reshape(GROUPS, LOCAL)
    expect = groups.sum(1) + 2.0 * (groups * groups).sum(1)
    np.testing.assert_allclose(out, _per_item(expect), rtol=1e-5)


@pytest.mark.parametrize("uniform", MODES)
def test_early_returns(uniform):
    a = _data(3)
    out = np.zeros(N, np.float32)
    run(SOURCE, "early_return", (N,), (LOCAL,), a, out, LocalMem(4 * LOCAL), uniformity=uniform)
    groups = a.reshape(GROUPS, LOCAL)
    neighbour = np.roll(groups, -1, axis=1)
    first = np.where(neighbour < 0.5, -neighbour, neighbour * 2 + 1)
    above = groups > 0.75
    index = np.where(above.any(1), above.argmax(1), -1).astype(np.float32)
    expect = first + index[:, None] * 10
    np.testing.assert_allclose(out, expect.ravel(), rtol=1e-6)


@pytest.mark.parametrize("uniform", MODES)
def test_calls_in_expressions_and_loop_condition(uniform):
    a = _data(4)
    out = np.zeros(N, np.float32)
    run(SOURCE, "in_expressions", (N,), (LOCAL,), a, out, LocalMem(4 * LOCAL), uniformity=uniform)
    x = 1 + 2 * _per_item(a.reshape(GROUPS, LOCAL).sum(1))
    np.testing.assert_allclose(out, x + 3 * a + 1.0 + 300, rtol=1e-5)


@pytest.mark.parametrize("uniform", MODES)
def test_calls_in_for_and_do_while_headers_with_continue_and_break(uniform):
    out = np.zeros(N, np.int32)
    run(SOURCE, "loops", (N,), (LOCAL,), out, LocalMem(4), uniformity=uniform)
    np.testing.assert_array_equal(out, np.full(N, 5 + 100 * 13 + 10000 * 3 + 1000000 * 2))


@pytest.mark.parametrize("uniform", MODES)
def test_nested_helpers(uniform):
    a = _data(5)
    out = np.zeros(N + GROUPS, np.float32)
    run(SOURCE, "nested", (N,), (LOCAL,), a, out, LocalMem(4 * LOCAL), uniformity=uniform)
    groups = a.reshape(GROUPS, LOCAL).astype(np.float64)
    np.testing.assert_allclose(out[:N], _per_item(groups.var(1)), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(out[N:], groups.sum(1), rtol=1e-5)


def test_inlined_kernels_verify_and_call_no_barrier_function():
    module = compile_source(SOURCE).module
    targets = barrier_functions(module)
    kernels = {k.name for k in module.kernels}
    assert targets - kernels == {"group_sum", "bcast", "neighbour_or_neg", "first_above", "variance",
                       "store_sum"}
    for kernel in module.kernels:
        inlined = inline_barrier_functions(module, kernel)
        assert not any(isinstance(n, ir.Call) and n.name in targets for n in walk(inlined))
        decls = tuple(inlined if d is kernel else d for d in module.decls)
        assert verify(ir.Module(decls, module.extensions)) == []


LAZY = """
int bcast(__local int *t, int v) {
    barrier(CLK_LOCAL_MEM_FENCE);
    t[0] = v;
    return t[0];
}
__kernel void k(__global int *out, __local int *t) {
    int x = get_local_id(0) > 3 && bcast(t, 1);
    out[0] = x;
}
__kernel void c(__global int *out, __local int *t) {
    out[0] = out[1] ? 2 : bcast(t, 1);
}
"""


@pytest.mark.parametrize(("kernel", "construct", "where"),
                         [("k", "'&&'", ":8:36:"), ("c", "'?:'", ":12:27:")])
def test_barrier_call_on_lazy_operand_is_a_located_error(kernel, construct, where):
    with pytest.raises(DeviceBuildError) as info:
        build_kernel(LAZY, kernel, local_size=(4,))
    assert construct in info.value.log and where in info.value.log
    assert "contains a barrier" in info.value.log
    assert isinstance(info.value.__cause__, CompileError)
    # a launch reports the same located message with the OpenCL error name
    with pytest.raises(cl.Error, match="BUILD_PROGRAM_FAILURE") as launched:
        run(LAZY, kernel, (4,), (4,), np.zeros(4, np.int32), LocalMem(16))
    assert where in str(launched.value) and "contains a barrier" in str(launched.value)


SMALL_HELPERS = """
int at(int row, int col, int n) { return row * n + col; }
float weight(float a, float b) { return a * b; }
int bound(int n) { return n; }

__kernel void mm(__global const float *A, __global const float *B, __global float *C, int n,
                 __global const int *flags) {
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < n; k++)
        acc += weight(A[at(row, k, n)], B[at(k, col, n)]);
    if (flags[col] > 0 && weight(acc, 2.0f) > 1.0f)  /* a call on a lazy operand stays */
        acc = -acc;
    int steps = 0;
    for (int k = 0; k < bound(n); k += 5)  /* and so does one in a loop's condition */
        steps++;
    C[at(row, col, n)] = acc + steps;
}
"""


def test_small_helpers_are_inlined_so_the_plans_see_through_them():
    """A loop calling a helper was never interchanged ("it calls a function"): small helpers
    are inlined (pocl inlines every function), except on a lazy operand and in a loop's
    condition or step, where inlining would change the shape of the code around the call
    (the loop would no longer be a counted one)."""
    module = compile_source(SMALL_HELPERS).module
    kernel = inline_barrier_functions(module, module.kernels[0], small=True)
    decls = tuple(kernel if d is module.kernels[0] else d for d in module.decls)
    assert verify(ir.Module(decls, module.extensions)) == []
    calls = {n.name for n in walk(kernel.body) if isinstance(n, ir.Call) and n.builtin is None}
    assert calls == {"bound", "weight"}  # the loop condition's and the lazy operand's
    assert not any(isinstance(n, ir.Call) and n.name == "at" for n in walk(kernel.body))
    formed = kernel_ir(module, "mm", KernelSpec((16, 2, 1)), parse_build_options(""),
                       Debug(verify=True)).formed
    assert formed is not None and [p.plan for p in formed.loop_plans][0] == "interchange"
    n = 16
    rng = np.random.default_rng(8)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    flags = rng.integers(-1, 2, n).astype(np.int32)
    c = np.zeros((n, n), np.float32)
    run(SMALL_HELPERS, "mm", (n, n), (16, 2), a, b, c, np.int32(n), flags)
    want = a.astype(np.float64) @ b
    want = np.where((flags[None, :] > 0) & (2 * want > 1), -want, want) + (n + 4) // 5
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)
