"""Choices between cheap floating-point values made without a branch (pass ``selects``):
which ``if``/``else`` and ``?:`` are rewritten and which stay (the plans), the results equal
to the kernels built without the pass on random data, and ``select`` of scalar floats
lowered without a branch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ppcl
import ppcl as cl
import ppcl.runtime.platform
from ppcl.devices.serial import SerialDevice
from tests.launch import build_kernel, plan_text

mf = cl.mem_flags

SOURCE = """
/* a bitonic step: compare and swap a pair, both branches storing both elements */
__kernel void swap(__global const float *a, __global float *o, uint j, uint k)
{
    uint i = get_global_id(0), ixj = i ^ j;
    if (ixj > i) {
        float x = a[i], y = a[ixj];
        int up = (i & k) == 0;
        if ((x > y) == up) {
            o[i] = y;
            o[ixj] = x;
        } else {
            o[i] = x;
            o[ixj] = y;
        }
    }
}

/* the AMD sample's spelling: the greater and the lesser chosen, then stored in the order of
   the work-item's block */
__kernel void order(__global const double *a, __global double *o, uint width)
{
    uint t = get_global_id(0);
    uint left = (t % width) + (t / width) * 2 * width, right = left + width;
    double l = a[left], r = a[right], greater, lesser;
    if (l > r) {
        greater = l;
        lesser = r;
    } else {
        greater = r;
        lesser = l;
    }
    if ((t / width) % 2 == 0) {
        o[left] = lesser;
        o[right] = greater;
    } else {
        o[left] = greater;
        o[right] = lesser;
    }
}

/* ?: of cheap values, and the spellings that stay */
__kernel void pick(__global const float *a, __global const int *to, __global float *o,
                   int flag)
{
    int i = get_global_id(0);
    float x = a[2 * i], y = a[2 * i + 1];
    float chosen = x * y > 0.25f ? x - y : y * 2.0f;  /* rewritten */
    float smaller = x < y ? x : y;                     /* a minimum: stays */
    float loaded = x > 0.5f ? a[i] : y;                /* a load: stays */
    float flagged = flag ? x : -y;                     /* an int variable: rewritten */
    float chose = select(x, y, flag * (i & 1));        /* rewritten */
    if (x > 0.1f)                                      /* a conditional scatter */
        o[to[i]] = chosen + smaller + loaded + flagged + chose;
}

/* the same swap with its stores at affine addresses: the work-item loop vectorizes */
__kernel void pairs(__global const float *a, __global float *o)
{
    int i = get_global_id(0);
    float x = a[2 * i], y = a[2 * i + 1];
    if (x > y) {
        o[2 * i] = y;
        o[2 * i + 1] = x;
    } else {
        o[2 * i] = x;
        o[2 * i + 1] = y;
    }
}

/* branches that do not assign the same places the same way: kept */
__kernel void kept(__global const float *a, __global float *o, __global int *n)
{
    int i = get_global_id(0);
    float x = a[i];
    if (x > 0.5f) {                 /* stores in another order */
        o[2 * i] = x;
        o[2 * i + 1] = 1.0f;
    } else {
        o[2 * i + 1] = 2.0f;
        o[2 * i] = -x;
    }
    if (x > 0.25f)                  /* integers: left to gcc's conditional move */
        n[i] = 1;
    else
        n[i] = 2;
    float v;
    if (x > 0.75f)                  /* a division in one branch */
        v = 1.0f / x;
    else
        v = x;
    o[2 * i] += v;
}
"""

DECISIONS = [
    ("swap", ["branch-free: the if at line 9 as 2 choice(s) (2 store(s), 0 variable(s)) (the "
              "store at line 11 scatters under a condition"]),
    ("order", ["branch-free: the if at line 26 as 2 choice(s) (0 store(s), 2 variable(s))",
               "branch-free: the if at line 33 as 2 choice(s) (2 store(s), 0 variable(s))"]),
    ("pick", ["branch-free: the ?: at line 48 as a bitselect",
              "branch-free: the ?: at line 51 as a bitselect",
              "branch-free: the select at line 52 as a bitselect"]),
    ("pairs", ["no branch-free choice: the if at line 62 stays: no store scatters under a "
               "condition"]),
]


def _plans(name: str) -> list[str]:
    return [line for line in plan_text(SOURCE, name).splitlines() if "branch-free" in line]


@pytest.mark.parametrize("name, wanted", DECISIONS)
def test_plans_name_each_choice_made_branch_free(name: str, wanted: list[str]) -> None:
    lines = _plans(name)
    for text in wanted:
        assert any(text in line for line in lines), (text, lines)
    assert len(lines) == len(wanted), lines


def test_other_spellings_keep_their_branches() -> None:
    assert _plans("kept") == []


def test_the_build_option_turns_the_pass_off() -> None:
    text = plan_text(SOURCE, "swap", options="-ppcl-no-selects")
    assert "selects: off (build option -ppcl-no-selects)" in text and "branch-free" not in text


@pytest.fixture(scope="module")
def contexts() -> tuple[tuple[cl.Context, str], tuple[cl.Context, str]]:
    """The serial device, building with the pass and without it."""
    platform = ppcl.get_platforms()[0]
    ctx = cl.Context([ppcl.runtime.platform.Device(platform, SerialDevice())])
    return (ctx, ""), (ctx, "-ppcl-no-selects")


def _run(build: tuple[cl.Context, str], name: str, n: int, arrays: list[np.ndarray],
         scalars: tuple[Any, ...]) -> list[np.ndarray]:
    ctx, options = build
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SOURCE).build(options=options)
    buffers = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) for a in arrays]
    getattr(prg, name)(queue, (n,), None, *buffers, *scalars)
    out = [np.empty_like(a) for a in arrays]
    for host, buffer in zip(out, buffers):
        cl.enqueue_copy(queue, host, buffer)
    return out


@pytest.mark.parametrize("n", [64, 256, 1024])  # powers of two: i ^ j stays below n
@pytest.mark.parametrize("j, k", [(1, 2), (4, 8), (32, 64)])
def test_a_bitonic_step_equals_the_build_without_the_pass_and_numpy(contexts, n: int, j: int,
                                                                     k: int) -> None:
    rng = np.random.default_rng(n + j)
    a = rng.standard_normal(n).astype(np.float32)
    a[j::8] = a[:n - j:8]  # equal keys too: pairs j apart
    got, without = (_run(c, "swap", n, [a, np.zeros_like(a)], (np.uint32(j), np.uint32(k)))[1]
                    for c in contexts)
    np.testing.assert_array_equal(got, without)
    want = np.zeros_like(a)
    for i in range(n):
        p = i ^ j
        if p > i:
            x, y = a[i], a[p]
            swap = (x > y) == ((i & k) == 0)
            want[i], want[p] = (y, x) if swap else (x, y)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name, n", [("order", 96), ("pick", 129), ("kept", 65),
                                     ("pairs", 40)])
@pytest.mark.parametrize("flag", [0, 1, 2])
def test_other_kernels_equal_the_build_without_the_pass(contexts, name: str, n: int,
                                                        flag: int) -> None:
    rng = np.random.default_rng(n + flag)
    to = rng.permutation(n).astype(np.int32)
    scalars: tuple[Any, ...] = ()
    arrays: list[np.ndarray]
    if name == "order":
        width = 1 << (flag * 2)  # 1, 4, 16
        arrays = [rng.standard_normal(2 * n), np.zeros(2 * n)]
        arrays[0][::5] = np.nan  # comparisons with NaN take the else branch in both
        scalars = (np.uint32(width),)
    elif name == "pick":
        arrays = [rng.random(2 * n).astype(np.float32), to, np.zeros(n, np.float32)]
        scalars = (np.int32(flag),)  # 2: a flag that is neither 0 nor 1
    elif name == "pairs":
        arrays = [rng.random(2 * n).astype(np.float32), np.zeros(2 * n, np.float32)]
    else:
        arrays = [rng.random(n).astype(np.float32), np.zeros(2 * n, np.float32),
                  np.zeros(n, np.int32)]
    got, without = (_run(c, name, n, arrays, scalars) for c in contexts)
    for g, w in zip(got, without):
        np.testing.assert_array_equal(g, w)
    if name == "order":
        a, want = arrays[0], np.zeros(2 * n)
        for t in range(n):
            left = t % width + t // width * 2 * width
            right = left + width
            low, high = (a[right], a[left]) if a[left] > a[right] else (a[left], a[right])
            want[left], want[right] = (low, high) if t // width % 2 == 0 else (high, low)
        np.testing.assert_array_equal(got[1], want)
    if name == "pick":
        x, y = arrays[0][0::2], arrays[0][1::2]
        odd = (np.arange(n) & 1).astype(bool)
        want = (np.where(x * y > 0.25, x - y, y * 2) + np.minimum(x, y)
                + np.where(x > 0.5, arrays[0][:n], y) + (x if flag else -y)
                + np.where(odd & (flag != 0), y, x)).astype(np.float32)
        stored = x > 0.1
        np.testing.assert_allclose(got[2][to][stored], want[stored], rtol=1e-6)
        assert not got[2][to][~stored].any()


def test_a_chosen_value_is_bit_operations_without_a_branch() -> None:
    """The swap calls ``bitselect`` on floats, whose definition is bit masks."""
    c = build_kernel(SOURCE, "swap", local_size=(16,)).c_source
    start = c.index("float __ppcl_bitselect__float_float_float(")
    definition = c[start:c.index("}", start)]
    assert " ? " not in definition and "& ~c" in definition, definition
    assert "__ppcl_bitselect__float_float_float(" in c[c.index("ppcl_group_swap("):]
