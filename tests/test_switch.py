"""Switch statements holding barriers (``transforms/switch.py``), run against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from launch import run

from ppcl.compiler.frontend import CompileError, compile_source
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.visit import find_all
from ppcl.compiler.transforms.switch import lower_switches

# a uniform switch with fall-through, a break under an if, a barrier in several cases and a
# return; work-item l of a group of 32 reads s[31 - l] after the barrier
STAGES = """
__kernel void stages(__global int *a, int m) {
    __local int s[32];
    int l = get_local_id(0);
    int v = a[get_global_id(0)];
    for (int it = 0; it < 4; it++) {
        switch (m + it) {
        case 1:
        case 2: { int t = v * 2; s[l] = t; }
                barrier(CLK_LOCAL_MEM_FENCE);
                if (m == 2) break;
                v = s[31 - l];
        case 3: v += 1;
        case 4: barrier(CLK_LOCAL_MEM_FENCE); break;
        case 5: return;
        }
        a[get_global_id(0)] = v;
    }
}
"""

# a continue of the enclosing loop from inside the switch, in a loop with barriers
OPS = """
__kernel void ops(__global int *a, __global const int *op) {
    __local int s[32];
    int l = get_local_id(0);
    int v = a[get_global_id(0)];
    for (int k = 0; k < 6; k++) {
        s[l] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        switch (op[k]) {
        case 0: continue;
        case 1: v = s[31 - l]; break;
        case 2: v += l; break;
        default: v -= 1;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    a[get_global_id(0)] = v;
}
"""


def _stages_reference(a: np.ndarray, m: int) -> np.ndarray:
    out = a.copy()
    for g in range(0, len(a), 32):
        v = a[g:g + 32].copy()
        for it in range(4):
            case = m + it
            if case == 5:
                break
            if case in (1, 2):
                if m != 2:
                    v = (v * 2)[::-1].copy() + 1
            elif case == 3:
                v = v + 1
            out[g:g + 32] = v
    return out


def _ops_reference(a: np.ndarray, op: np.ndarray) -> np.ndarray:
    out = a.copy()
    lanes = np.arange(32)
    for g in range(0, len(a), 32):
        v = a[g:g + 32].copy()
        for code in op:
            if code == 1:
                v = v[::-1].copy()
            elif code == 2:
                v = v + lanes
            elif code != 0:
                v = v - 1
        out[g:g + 32] = v
    return out


@pytest.mark.parametrize("uniformity", [True, False])
@pytest.mark.parametrize("m", range(6))
def test_switch_with_barriers_falls_through_and_breaks(m: int, uniformity: bool) -> None:
    a = np.random.default_rng(m).integers(0, 100, 64).astype(np.int32)
    expected = _stages_reference(a, m)
    run(STAGES, "stages", (64,), (32,), a, np.int32(m), uniformity=uniformity)
    np.testing.assert_array_equal(a, expected)


@pytest.mark.parametrize("uniformity", [True, False])
@pytest.mark.parametrize("op", [[1, 0, 2, 5, 1, 0], [0, 0, 0, 0, 0, 0], [2, 2, 1, 7, 7, 1]])
def test_continue_out_of_a_switch_in_a_barrier_loop(op: list[int], uniformity: bool) -> None:
    a = np.random.default_rng(1).integers(0, 100, 64).astype(np.int32)
    codes = np.array(op, np.int32)
    expected = _ops_reference(a, codes)
    run(OPS, "ops", (64,), (32,), a, codes, uniformity=uniformity)
    np.testing.assert_array_equal(a, expected)


def test_async_copy_in_a_switch() -> None:
    source = """
    __kernel void pick(__global const float *in, __global float *out, int which) {
        __local float t[32];
        event_t e;
        switch (which) {
        case 0: e = async_work_group_copy(t, in, 32, 0); break;
        default: e = async_work_group_copy(t, in + 32, 32, 0); break;
        }
        wait_group_events(1, &e);
        out[get_global_id(0)] = t[31 - get_local_id(0)];
    }
    """
    x = np.arange(64, dtype=np.float32)
    for half in (0, 1):
        out = np.zeros(64, np.float32)
        run(source, "pick", (64,), (32,), x, out, np.int32(half))
        np.testing.assert_array_equal(out, np.tile(x[32 * half:32 * half + 32][::-1], 2))


def test_switches_without_barriers_are_left_alone() -> None:
    source = """
    __kernel void k(__global int *a) {
        switch (a[0]) { case 0: a[1] = 1; break; default: a[1] = 2; }
    }
    """
    kernel = compile_source(source).module.kernels[0]
    assert find_all(lower_switches(kernel), ir.Switch)


def test_case_label_nested_in_a_statement_is_a_located_error() -> None:
    source = """
    __kernel void k(__global int *a) {
        switch (a[0]) {
        case 0:
            if (a[1]) {
        case 1:   a[2] = 1;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    """
    kernel = compile_source(source).module.kernels[0]
    with pytest.raises(CompileError, match="case label nested") as info:
        lower_switches(kernel)
    assert info.value.diagnostics[0].loc.line == 6


# 'x' and 'c' are declared after 'case 1' and used after 'case 2' (C allows it; x holds no
# value when the switch jumps to case 2); 'y' is shared and initialized from a call
SHARED = """
__kernel void shared(__global int *a, int m) {
    __local int s[32];
    int l = get_local_id(0);
    switch (m) {
    case 1:
        a[get_global_id(0)] += 100;
        int x = l * 2, y = a[get_global_id(0)], z = 1;
        const int c = 3;
        s[l] = z;
    case 2:
        x = l + (m == 1 ? c : 3);
        s[l] = x;
        barrier(CLK_LOCAL_MEM_FENCE);
        a[get_global_id(0)] = s[31 - l] + (m == 1 ? y : 0);
        break;
    }
}
"""


@pytest.mark.parametrize("uniformity", [True, False])
@pytest.mark.parametrize("m", [1, 2])
def test_variable_declared_after_one_label_and_used_after_another(m: int,
                                                                   uniformity: bool) -> None:
    # each case's statements become the body of an 'if', so the declaration's scope ended
    # before the later case; the build stopped at "declared after another case label"
    a = np.arange(64, dtype=np.int32)
    run(SHARED, "shared", (64,), (32,), a, np.int32(m), uniformity=uniformity)
    lanes = np.tile(np.arange(32), 2)
    expected = (31 - lanes) + 3 + (np.arange(64) + 100 if m == 1 else 0)
    np.testing.assert_array_equal(a, expected)


def test_braced_initializer_shared_across_labels_is_a_located_error() -> None:
    source = """
    __kernel void k(__global int *a) {
        switch (a[0]) {
        case 0: a[1] = 0;
            int t[2] = {1, 2};
        case 1: a[2] = t[1];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    """
    kernel = compile_source(source).module.kernels[0]
    with pytest.raises(CompileError, match="initialized with a braced list") as info:
        lower_switches(kernel)
    assert info.value.diagnostics[0].loc.line == 5



# case labels inside plain blocks of the switch body: one in a block after 'case 0', and
# 'case 4' and 'case 5' in a block before any label of the body (once dropped as unreachable:
# those cases ran nothing); 'w' is declared in the block and used after a later label
BLOCKS = """
__kernel void blocks(__global int *a, int m) {
    __local int s[8];
    int l = get_local_id(0);
    int v = l;
    switch (m) {
        { case 4: v += 1000;
          case 5: v += 2000; }
    case 0: {
        int w = 10;
        v += w;
    case 1:
        v += 1;
    }
        s[l] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        v = s[7 - l];
    case 2:
        v += 100;
    }
    a[get_global_id(0)] = v;
}
"""


def _blocks_reference(m: int) -> np.ndarray:
    v = np.arange(8)
    added = {4: 3011, 5: 2011, 0: 11, 1: 1}
    if m in added:
        v = (v + added[m])[::-1]
    if m in added or m == 2:
        v = v + 100
    return v


@pytest.mark.parametrize("uniformity", [True, False])
@pytest.mark.parametrize("m", [0, 1, 2, 3, 4, 5])
def test_case_labels_in_blocks_of_a_switch_with_a_barrier(m: int, uniformity: bool) -> None:
    a = np.zeros(8, dtype=np.int32)
    run(BLOCKS, "blocks", (8,), (8,), a, np.int32(m), uniformity=uniformity)
    np.testing.assert_array_equal(a, _blocks_reference(m))


def test_duffs_device_with_a_barrier_is_a_located_error() -> None:
    source = """
    __kernel void k(__global int *a, int m) {
        int n = 2;
        switch (m) {
        case 0: do { a[0] += 1;
                     barrier(CLK_LOCAL_MEM_FENCE);
        case 1:      a[1] += 1;
                } while (--n > 0);
        }
    }
    """
    kernel = compile_source(source).module.kernels[0]
    with pytest.raises(CompileError, match="case label nested in a statement") as info:
        lower_switches(kernel)
    loc = info.value.diagnostics[0].loc
    assert (loc.line, loc.col) == (7, 9)
    with pytest.raises(RuntimeError, match=r"<source>:7:9: error: a case label nested") as built:
        run(source, "k", (8,), (8,), np.zeros(2, dtype=np.int32), np.int32(0))
    assert "\n        case 1:      a[1] += 1;\n        ^" in str(built.value)


@pytest.mark.parametrize("m", [0, 1, 2])
def test_labels_only_in_a_block_of_the_switch_body_are_reached(m: int) -> None:
    # the block stood before the body's first label, so it was dropped as never reached:
    # every case ran nothing (wrong results, no diagnostic)
    source = """
    __kernel void k(__global int *a, int m) {
        int v = get_local_id(0);
        switch (m) { { case 0: v += 1; case 1: v += 10; barrier(CLK_LOCAL_MEM_FENCE); } }
        a[get_global_id(0)] = v;
    }
    """
    a = np.zeros(8, dtype=np.int32)
    run(source, "k", (8,), (8,), a, np.int32(m))
    np.testing.assert_array_equal(a, np.arange(8) + {0: 11, 1: 10, 2: 0}[m])
