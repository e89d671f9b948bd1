"""Thread coarsening (``ppcl/compiler/transforms/coarsen.py``): coarsened kernels give the
original's results bit for bit on random inputs and awkward sizes (factors that do not divide
the global size, offsets, guards, local and group ids), refusals say why, the facts find the
dimension with the uniform work, and ``choose`` follows the device's constraints."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from oracle import Shape, check_context, cpu_context, launch

import ppcl as cl
from ppcl.compiler.analysis.order import DATA_PARALLEL, SERIAL, ExecutionOrder
from ppcl.compiler.codegen.opencl import print_opencl
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.transforms.coarsen import SIZE_PARAM, choose, coarsen, coarsen_facts

# setup that depends on the column only (uniform along y), a guard on x, per-element work
ROW_SETUP = r"""
__kernel void rows(__global const float *w, __global const float *in, __global float *out,
                   int K, int W, int n) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= n) return;
    float s = 0.0f;
    for (int i = 0; i < K; i++)
        s += w[x * K + i] * w[x * K + i];
    float scale = 1.0f / (1.0f + s);
    out[y * W + x] = in[y * W + x] * scale + (float)get_global_size(1);
}
"""

# the guard is along the coarsened dimension: the setup runs once, for the first work-item
# that passes it
GUARDED = r"""
__kernel void guarded(__global const float *w, __global const float *in, __global float *out,
                      int K, int W, int H) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (y >= H) return;
    float s = 0.0f;
    for (int i = 0; i < K; i++)
        s += w[x * K + i] * 0.5f;
    out[y * W + x] = s * in[y * W + x];
}
"""

# 1-D, integers: a hash of a seed (uniform), a guard, a parameter written per work-item
HASH = r"""
__kernel void hashed(__global const int *in, __global int *out, uint seed, int n, int rounds,
                     int bias) {
    if (rounds < 0) return;
    uint h = seed;
    for (int r = 0; r < rounds; r++)
        h = (h ^ (h >> 7)) * 2654435761u + (uint)r;
    int gid = get_global_id(0);
    if (gid >= n) return;
    out += 1;
    bias += gid;
    out[gid - 1] = in[gid] ^ (int)h ^ bias;
}
"""

# 3-D, integers: a plane's setup uniform along z
PLANES = r"""
__kernel void planes(__global const int *a, __global int *out, int nx, int ny) {
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    int base = a[y * nx + x] * 3 + x - y;
    int acc = 0;
    for (int i = 0; i < 8; i++)
        acc += (base >> (i & 3)) ^ i;
    out[(z * ny + y) * nx + x] = acc + z * base;
}
"""

# local ids, group ids, local sizes and group counts along the coarsened dimension
LOCAL_IDS = r"""
__kernel void local_ids(__global const float *in, __global float *out, int W) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    float c = in[x] * 2.0f + 1.0f;
    int tag = (int)(get_local_id(1) + 100 * get_group_id(1) + 10000 * get_local_size(1)
                    + 1000000 * get_num_groups(1));
    out[y * W + x] = c * (float)tag;
}
"""


def _coarsened(source: str, name: str, dim: int, factor: int) -> tuple[str, str, ir.Function]:
    """The program text with ``name`` coarsened (as ``name_c``), and the new kernel."""
    prog = cl.Program(cpu_context(), source).build()
    module = prog._module
    fn = module.function(name)
    assert fn is not None
    new = coarsen(fn, dim, factor, name + "_c")
    decls = tuple(d for d in module.decls
                  if not (isinstance(d, ir.Function) and d.is_kernel)) + (new,)
    return print_opencl(dataclasses.replace(module, decls=decls)), name + "_c", new


def _coarse_shape(shape: Shape, dim: int, factor: int, divisible: bool) -> Shape:
    """The launch of the coarsened kernel: the same offset, ceil(G/f) work-items along
    ``dim`` rounded up to the new local size (L/f, or any size when nothing needs it)."""
    g, loc = list(shape.global_size), list(shape.local_size)
    if divisible:
        assert loc[dim] % factor == 0
        loc[dim] //= factor
        g[dim] //= factor
    else:
        loc[dim] = max(1, loc[dim] // factor)
        merged = -(-g[dim] // factor)
        g[dim] = -(-merged // loc[dim]) * loc[dim]
    return Shape(tuple(g), tuple(loc), shape.offset)


def _same(want: np.ndarray, have: np.ndarray, what: str) -> None:
    # the same operations in the same order: equal bit for bit
    assert want.dtype == have.dtype
    same = want.view(np.uint8) == have.view(np.uint8)
    assert same.all(), f"{what}: differs at {np.argwhere(~same)[0]} ({want!r} vs {have!r})"


def _compare(source: str, name: str, dim: int, factor: int, shapes: Sequence[Shape],
             make_args: Any, context: cl.Context | None = None) -> None:
    context = context or cpu_context()
    text, coarse, _ = _coarsened(source, name, dim, factor)
    divisible = _needs_divisible(source, name, dim)
    rng = np.random.default_rng(1234)
    for shape in shapes:
        args = list(make_args(shape, rng))
        want = launch(context, source, name, shape, args)
        size = np.uint64(shape.global_size[dim])
        have = launch(context, text, coarse, _coarse_shape(shape, dim, factor, divisible),
                      args + [size])
        for i, (a, b) in enumerate(zip(want, have)):
            _same(a, b, f"{name} dim {dim} factor {factor} at {shape}, buffer {i}")


def _needs_divisible(source: str, name: str, dim: int) -> bool:
    fn = cl.Program(cpu_context(), source).build()._module.function(name)
    return coarsen_facts(fn).dims[dim].needs_divisible


def _facts(source: str, name: str):
    fn = cl.Program(cpu_context(), source).build()._module.function(name)
    return coarsen_facts(fn)


# ---------------------------------------------------------------- results


def _rows_args(shape: Shape, rng: np.random.Generator, K: int = 9) -> list[Any]:
    gx, gy = shape.global_size[:2]
    ox, oy = shape.offset or (0, 0)
    W, H = gx + ox, gy + oy
    n = max(1, gx + ox - 3)  # the guard cuts the last columns off
    w = rng.standard_normal(W * K).astype(np.float32)
    src = rng.standard_normal(W * H).astype(np.float32)
    out = np.full(W * H, -7.0, np.float32)
    return [w, src, out, np.int32(K), np.int32(W), np.int32(n)]


@pytest.mark.parametrize("factor", [2, 4, 3])
def test_row_setup_coarsened_along_y(factor):
    shapes = [Shape((8, 37), (4, 1)), Shape((5, 12), (5, 4)), Shape((7, 9), (1, 3), (2, 5)),
              Shape((16, 16), (8, 8)), Shape((1, 1), (1, 1))]
    _compare(ROW_SETUP, "rows", 1, factor, shapes, _rows_args)


def test_row_setup_coarsened_along_x():
    # uniform along x: only the row index; legal, if not what a CPU would pick
    shapes = [Shape((37, 5), (1, 5)), Shape((12, 4), (4, 2), (3, 1))]
    _compare(ROW_SETUP, "rows", 0, 4, shapes, _rows_args)


def _guarded_args(shape: Shape, rng: np.random.Generator) -> list[Any]:
    gx, gy = shape.global_size[:2]
    ox, oy = shape.offset or (0, 0)
    W, Hall = gx + ox, gy + oy
    K = 5
    H = max(0, Hall - 2)  # the last rows return at the guard
    return [rng.standard_normal(W * K).astype(np.float32),
            rng.standard_normal(W * Hall).astype(np.float32),
            np.zeros(W * Hall, np.float32), np.int32(K), np.int32(W), np.int32(H)]


def test_setup_after_a_guard_on_the_coarsened_dimension():
    shapes = [Shape((6, 37), (2, 1)), Shape((4, 10), (4, 5), (1, 2)), Shape((3, 3), (3, 3))]
    _compare(GUARDED, "guarded", 1, 4, shapes, _guarded_args)


def _hash_args(shape: Shape, rng: np.random.Generator) -> list[Any]:
    g = shape.global_size[0] + (shape.offset or (0,))[0]
    return [rng.integers(-2**31, 2**31 - 1, g + 1, dtype=np.int64).astype(np.int32),
            np.zeros(g + 2, np.int32), np.uint32(rng.integers(0, 2**32 - 1)),
            np.int32(max(0, g - 2)), np.int32(11), np.int32(rng.integers(-99, 99))]


@pytest.mark.parametrize("factor", [4, 5])
def test_one_dimension_integers_guard_offset_and_written_parameter(factor):
    shapes = [Shape((37,), (1,)), Shape((40,), (8,)), Shape((24,), (8,), (5,)), Shape((1,), (1,))]
    _compare(HASH, "hashed", 0, factor, shapes, _hash_args)


def _planes_args(shape: Shape, rng: np.random.Generator) -> list[Any]:
    nx, ny, nz = shape.global_size
    return [rng.integers(-1000, 1000, nx * ny).astype(np.int32),
            np.zeros(nx * ny * nz, np.int32), np.int32(nx), np.int32(ny)]


def test_three_dimensions_coarsened_along_z():
    shapes = [Shape((4, 3, 7), (2, 3, 1)), Shape((2, 2, 8), (2, 1, 4)), Shape((3, 1, 5), (3, 1, 5))]
    _compare(PLANES, "planes", 2, 2, shapes, _planes_args)
    _compare(PLANES, "planes", 2, 4, shapes, _planes_args)


def _local_args(shape: Shape, rng: np.random.Generator) -> list[Any]:
    gx, gy = (g + o for g, o in zip(shape.global_size, shape.offset or (0, 0)))
    return [rng.standard_normal(gx).astype(np.float32), np.zeros(gx * gy, np.float32),
            np.int32(gx)]


def test_local_and_group_ids_need_a_dividing_factor():
    assert _facts(LOCAL_IDS, "local_ids").dims[1].needs_divisible
    assert not _facts(LOCAL_IDS, "local_ids").dims[0].needs_divisible
    shapes = [Shape((3, 16), (3, 8)), Shape((2, 24), (1, 4))]
    _compare(LOCAL_IDS, "local_ids", 1, 2, shapes, _local_args)
    _compare(LOCAL_IDS, "local_ids", 1, 4, shapes, _local_args)


def test_checking_device_finds_nothing_and_agrees():
    # the checking device runs the IR with exact semantics and checks every access: the
    # coarsened kernel must neither read out of bounds on the padded work-items nor race
    shapes = [Shape((6, 37), (2, 1)), Shape((4, 9), (2, 3), (1, 1))]
    _compare(GUARDED, "guarded", 1, 4, shapes, _guarded_args, check_context())
    _compare(HASH, "hashed", 0, 4, [Shape((37,), (1,))], _hash_args, check_context())


PRIVATE_ALIAS = r"""
__kernel void alias(__global float *o, __global const float *in) {
    float t[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    float *p = t;
    float u = 0.5f;
    float *q = &u;
    int g = get_global_id(0);
    p[g & 3] += in[g];
    *q += in[g];
    o[g] = t[0] + t[1] * 2.0f + t[2] * 4.0f + t[3] * 8.0f + u;
}
"""


def test_private_memory_written_through_pointers_stays_per_work_item():
    # the array and the scalar are written through pointers by every work-item: sharing
    # them would let the four merged work-items see each other's writes
    def make(shape: Shape, rng: np.random.Generator) -> list[Any]:
        g = shape.global_size[0]
        return [np.zeros(g, np.float32), rng.standard_normal(g).astype(np.float32)]

    _compare(PRIVATE_ALIAS, "alias", 0, 4, [Shape((37,), (1,)), Shape((16,), (8,))], make)
    assert _facts(PRIVATE_ALIAS, "alias").dims[0].shared_cost == 0


def _divisor(n: int, rng: np.random.Generator) -> int:
    return int(rng.choice([d for d in range(1, n + 1) if n % d == 0]))


def _random_shape(rng: np.random.Generator, dims: int, dim: int, multiple: int = 1) -> Shape:
    """A launch with random sizes and offsets; along ``dim`` the local size is a multiple of
    ``multiple`` (a factor that must divide it)."""
    g, loc = [], []
    for d in range(dims):
        if d == dim and multiple > 1:
            local = multiple * int(rng.integers(1, 4))
            g.append(local * int(rng.integers(1, 5)))
            loc.append(local)
            continue
        size = int(rng.integers(1, 50 if d == dim else 9))
        g.append(size)
        loc.append(_divisor(size, rng))
    offset = tuple(int(o) for o in rng.integers(0, 6, dims))
    return Shape(tuple(g), tuple(loc), offset)


@pytest.mark.parametrize("seed", range(4))
def test_random_shapes_and_factors(seed):
    rng = np.random.default_rng(seed)
    factor = int(rng.integers(2, 8))
    # one seed on the checking device: no out-of-range access on any padded work-item
    context = check_context() if seed == 0 else cpu_context()
    _compare(ROW_SETUP, "rows", 1, factor, [_random_shape(rng, 2, 1) for _ in range(3)],
             _rows_args, context)
    _compare(HASH, "hashed", 0, factor, [_random_shape(rng, 1, 0) for _ in range(3)],
             _hash_args, context)
    _compare(LOCAL_IDS, "local_ids", 1, factor,
             [_random_shape(rng, 2, 1, factor) for _ in range(3)], _local_args, context)
    _compare(GUARDED, "guarded", 1, factor, [_random_shape(rng, 2, 1) for _ in range(3)],
             _guarded_args, context)


REQUIRED = r"""
__kernel __attribute__((reqd_work_group_size(2, 4, 1)))
void fixed(__global const float *in, __global float *out, int W) {
    int x = get_global_id(0), y = get_global_id(1);
    float c = in[x] * in[x] + 1.0f;
    out[y * W + x] = c + (float)get_local_id(1);
}
"""


def test_a_required_group_size_shrinks_with_the_factor():
    _, _, new = _coarsened(REQUIRED, "fixed", 1, 2)
    assert new.attrs.reqd_work_group_size == (2, 2, 1)
    _compare(REQUIRED, "fixed", 1, 2, [Shape((4, 8), (2, 4)), Shape((2, 12), (2, 4), (1, 3))],
             _local_args)
    fn = cl.Program(cpu_context(), REQUIRED).build()._module.function("fixed")
    with pytest.raises(ValueError, match="does not divide"):
        coarsen(fn, 1, 3, "fixed_c")


MIXED = r"""
__constant int table[4] = {3, 5, 7, 11};

__kernel void mixed(__global int *out, __global const int *in, __constant int *coef, int W,
                    int d) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    out[y * W + x] = -1;
    int c0 = coef[x & 3] + table[x & 3];
    int c = c0;
    switch (in[y * W + x] & 3) {
        case 0: return;
        case 1: c += 1; break;
        default: break;
    }
    int q = (x + 7) / d;
    out[y * W + x] = c * in[y * W + x] + q;
}
"""


def _mixed_args(shape: Shape, rng: np.random.Generator) -> list[Any]:
    gx, gy = (g + o for g, o in zip(shape.global_size, shape.offset or (0, 0)))
    return [np.zeros(gx * gy, np.int32), rng.integers(-50, 50, gx * gy).astype(np.int32),
            rng.integers(-9, 9, 4).astype(np.int32), np.int32(gx), np.int32(3)]


def test_constant_loads_after_stores_and_a_return_in_a_switch():
    text, _, _ = _coarsened(MIXED, "mixed", 1, 4)
    kernel = text[text.index("__kernel void mixed_c"):]
    loop = kernel.index("for (ulong __ppcl_k")
    # __constant memory is never written: its loads move above the first store
    assert kernel.index("int c0 = coef[x & 3] + table[x & 3];") < loop
    # a division after a varying return runs once, for the first work-item reaching it
    assert "__ppcl_once0 = 1;" in kernel and kernel.index("int q;") < loop
    assert "continue;" in kernel and "return;" not in kernel
    shapes = [Shape((5, 37), (5, 1)), Shape((8, 12), (4, 4), (2, 3))]
    _compare(MIXED, "mixed", 1, 4, shapes, _mixed_args)
    _compare(MIXED, "mixed", 1, 3, shapes[:1], _mixed_args, check_context())


# ---------------------------------------------------------------- structure


def test_hoisted_setup_appears_once_before_the_work_item_loop():
    text, _, new = _coarsened(ROW_SETUP, "rows", 1, 4)
    kernel = text[text.index("__kernel void rows_c"):]
    assert new.params[-1].name == SIZE_PARAM
    loop = kernel.index("for (ulong __ppcl_k = 0UL; __ppcl_k < __ppcl_n; __ppcl_k++)")
    assert kernel.count("s += w[x * K + i] * w[x * K + i];") == 1
    assert kernel.index("s += w[x * K + i]") < loop
    assert kernel.index("float scale = 1.0f / (1.0f + s);") < loop
    assert kernel.index("return;") < loop  # the guard on x is uniform along y
    assert kernel.index("int y = __ppcl_id;") > loop
    assert "get_global_size(1u)" not in kernel and "__ppcl_coarse_size" in kernel


def test_parameters_written_per_work_item_get_a_copy_per_work_item():
    text, _, _ = _coarsened(HASH, "hashed", 0, 4)
    kernel = text[text.index("__kernel void hashed_c"):]
    loop = kernel.index("for (ulong __ppcl_k")
    assert kernel.index("out += 1;") < loop  # uniform: once
    assert kernel.index("int bias__ppcl_c = bias;") > loop
    assert "bias__ppcl_c += gid;" in kernel


def test_guard_on_the_coarsened_dimension_is_prechecked():
    # the setup after `if (y >= H) return;` runs once, under a pre-check that some original
    # work-item passes the guard; the work-item loop nests the rest under the negated guard
    text, _, _ = _coarsened(GUARDED, "guarded", 1, 2)
    kernel = text[text.index("__kernel void guarded_c"):]
    assert "return;" not in kernel and "continue;" not in kernel and "break;" not in kernel
    assert "__ppcl_once" not in kernel
    assert kernel.count("s += w[x * K + i] * 0.5f;") == 1
    setup = kernel.index("s += w[x * K + i]")
    assert kernel.index("if (__ppcl_any)") < setup < kernel.index("__ppcl_k < __ppcl_n; __ppcl_k++")


# ---------------------------------------------------------------- facts and refusals


def test_facts_pick_the_dimension_with_the_uniform_work():
    facts = _facts(ROW_SETUP, "rows")
    x, y = facts.dims[0], facts.dims[1]
    assert x.coarsenable and y.coarsenable
    assert y.shared_cost > 10 * x.shared_cost > 0
    assert y.total_cost == x.total_cost >= y.shared_cost
    assert "uniform along dimension 1" in y.reason
    assert not y.needs_divisible
    cpu = ExecutionOrder(DATA_PARALLEL, 8, vector_dim=0, vectorizes_items=True)
    pick, why = choose(facts, cpu, (8, 16), (64, 64))
    assert pick == (1, 16), why
    pick, why = choose(facts, ExecutionOrder(SERIAL, 1), (8, 16), (64, 64))
    assert pick == (1, 16), why
    # too little parallelism left on a small range: a smaller factor
    pick, why = choose(facts, cpu, (8, 16), (8, 32))
    assert pick == (1, 4), why
    # groups of one row: the kernel needs no dividing factor, so the local size does not bound it
    pick, why = choose(facts, cpu, (64, 1), (256, 256))
    assert pick == (1, 16), why
    pick, why = choose(facts, cpu, None, (256, 5))
    assert pick == (1, 5), why
    # local ids along y: the factor must divide the local size
    pick, why = choose(_facts(LOCAL_IDS, "local_ids"), cpu, (64, 12), (256, 48))
    assert pick == (1, 12), why
    pick, why = choose(_facts(LOCAL_IDS, "local_ids"), cpu, (64, 1), (256, 48))
    assert pick is None and "no factor divides the local size 1" in why


def test_choose_keeps_gpu_groups_whole():
    facts = _facts(LOCAL_IDS, "local_ids")
    gpu = ExecutionOrder(DATA_PARALLEL, 32, warp=32, min_group=128)
    pick, why = choose(facts, gpu, (32, 16), (256, 256))
    assert pick is not None and pick[1] == 4, why  # 32 * 16 / 4 = 128 work-items a group
    pick, why = choose(facts, gpu, (128, 1), (256, 256))
    assert pick is None and "parallelism" in why


def test_cpu_never_coarsens_the_vectorized_dimension():
    facts = _facts(PLANES, "planes")
    cpu = ExecutionOrder(DATA_PARALLEL, 8, vector_dim=0, vectorizes_items=True)
    pick, why = choose(facts, cpu, (8, 8, 8), (64, 64, 64))
    assert pick is not None and pick[0] == 2, why
    one_d = _facts(HASH, "hashed")
    pick, why = choose(one_d, cpu, (64,), (4096,))
    assert pick is None and "vectorizes" in why


REFUSED = {
    "barrier": ("""__kernel void k(__global float *a) { float s = a[0] * 2.0f;
                   barrier(CLK_GLOBAL_MEM_FENCE); a[get_global_id(0)] = s; }""",
                "synchronizes"),
    "local": ("""__kernel void k(__global float *a, __local float *t) {
                 t[get_local_id(0)] = a[get_global_id(0)]; a[get_global_id(0)] = t[0]; }""",
              "__local"),
    "helper": ("""float twice(float v) { return 2.0f * v; }
                  __kernel void k(__global float *a) { a[get_global_id(0)] = twice(1.0f); }""",
               "helper"),
    "dynamic dimension": ("""__kernel void k(__global float *a, uint d) {
                             a[get_global_id(d)] = 1.0f; }""", "not a constant"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refusals_say_why(case):
    source, words = REFUSED[case]
    facts = _facts(source, "k")
    for d in facts.dims:
        assert not d.coarsenable and words in d.reason, d.reason
    fn = cl.Program(cpu_context(), source).build()._module.function("k")
    with pytest.raises(ValueError, match=words):
        coarsen(fn, 0, 2, "k_c")


EARLY_EXIT = r"""
__kernel void early(__global const int *a, __global int *b, int n, int W) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    for (int i = 0; i < n; i++)
        if (a[x * n + i] < -40) return;
    b[y * W + x] = a[x * n] + y;
}
"""


def _early_args(shape: Shape, rng: np.random.Generator) -> list[Any]:
    gx, gy = shape.global_size
    n = 4
    return [rng.integers(-50, 50, gx * n).astype(np.int32), np.zeros(gx * gy, np.int32),
            np.int32(n), np.int32(gx)]


def test_return_inside_a_loop_only_where_the_loop_is_shared():
    facts = _facts(EARLY_EXIT, "early")
    # along x the loop stays per work-item and its return cannot become a continue
    assert not facts.dims[0].coarsenable and "return inside a loop" in facts.dims[0].reason
    # along y the loop is shared: its return leaves the merged work-item, as it left all
    assert facts.dims[1].coarsenable and facts.dims[1].shared_cost > 0
    _compare(EARLY_EXIT, "early", 1, 4, [Shape((16, 37), (4, 1)), Shape((5, 8), (5, 4))],
             _early_args)


# ---------------------------------------------------------------- split guards and the pre-check

# `||` guard: the part on x is uniform along y (hoisted), the parts on y stay per work-item; the
# setup reads rows h - 1 and lo of `lut`, which lie outside it when no row passes the guard
PRECHECK = r"""
__kernel void column(__global const float *lut, __global const float *in, __global float *out,
                     int W, int h, int lo) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= W || y >= h || y < lo) return;
    float s = lut[(h - 1) * W + x] * 0.5f + lut[lo * W + x];
    out[y * W + x] = s * in[y * W + x];
}
"""


def _precheck_args(h: int, lo: int) -> Any:
    def make(shape: Shape, rng: np.random.Generator) -> list[Any]:
        gx, gy = shape.global_size[:2]
        ox, oy = shape.offset or (0, 0)
        W, H = gx + ox - 1, gy + oy  # the last column is cut off
        lut = rng.standard_normal(max(h, 1) * W).astype(np.float32)  # rows 0 .. h - 1
        src = rng.standard_normal((W + 1) * H).astype(np.float32)
        out = np.full((W + 1) * H, -7.0, np.float32)
        return [lut, src, out, np.int32(W), np.int32(h), np.int32(lo)]
    return make


def test_an_or_guard_is_split_and_its_uniform_part_hoisted():
    text, _, _ = _coarsened(PRECHECK, "column", 1, 4)
    kernel = text[text.index("__kernel void column_c"):]
    first_loop = kernel.index("for (ulong")
    assert kernel.index("if (x >= W) {") < kernel.index("return;") < first_loop
    assert kernel.count("return;") == 1 and "continue;" not in kernel
    assert "__ppcl_once" not in kernel and kernel.count("lut[") == 2


@pytest.mark.parametrize("h, lo", [(9, 0), (6, 2), (2, 5), (0, 0)])
def test_prechecked_setup_runs_only_where_an_original_work_item_passes(h, lo):
    # (2, 5) and (0, 0): no work-item passes the guard, and the setup's reads lie outside
    # `lut`: the checking device reports any access out of bounds
    shapes = [Shape((5, 9), (5, 1)), Shape((4, 7), (2, 1), (1, 0))]
    _compare(PRECHECK, "column", 1, 4, shapes, _precheck_args(h, lo), check_context())
    _compare(PRECHECK, "column", 1, 3, shapes, _precheck_args(h, lo))


# the guard loads from memory: no pre-check (it would load where no work-item did), a flag
LOADED_GUARD = r"""
__kernel void loaded(__global const float *lut, __global const float *in, __global float *out,
                     int W) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (in[y * W + x] < 0.0f) return;
    float s = lut[x] * 3.0f;
    out[y * W + x] = s + in[y * W + x];
}
"""


def _loaded_args(shape: Shape, rng: np.random.Generator) -> list[Any]:
    gx, gy = shape.global_size[:2]
    ox, oy = shape.offset or (0, 0)
    W, H = gx + ox, gy + oy
    lut = rng.standard_normal(W).astype(np.float32)
    src = rng.standard_normal(W * H).astype(np.float32)
    out = np.full(W * H, -7.0, np.float32)
    return [lut, src, out, np.int32(W)]


def test_a_guard_that_loads_keeps_the_first_work_item_flag():
    text, _, _ = _coarsened(LOADED_GUARD, "loaded", 1, 4)
    kernel = text[text.index("__kernel void loaded_c"):]
    assert "__ppcl_once0" in kernel and "__ppcl_any" not in kernel
    shapes = [Shape((6, 13), (3, 1)), Shape((4, 8), (4, 2), (0, 1))]
    _compare(LOADED_GUARD, "loaded", 1, 4, shapes, _loaded_args)
    _compare(LOADED_GUARD, "loaded", 1, 4, shapes[:1], _loaded_args, check_context())


# ---------------------------------------------------------------- jam (coarsen_jam.py)

# a naive matrix product: B[k * N + col] does not depend on the row, so coarsening along y
# with jam reads it once for the f rows of a merged work-item
SGEMM = r"""
__kernel void sgemm(int M, int N, int K, __global const float *A, __global const float *B,
                    __global float *C) {
    int col = get_global_id(0), row = get_global_id(1);
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++)
            acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc + (float)get_local_id(1);
    }
}
"""

# no guard, a written parameter, a suffix that returns and a loop reading __constant memory
BANDED = r"""
__kernel void banded(__global const int *a, __constant int *w, __global int *out, int K,
                     int W, int bias) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    bias += y;
    int acc = bias;
    for (int k = 0; k < K; k++) {
        int t = a[(x + k) % W] * w[k];
        acc += (t ^ y) + a[y * W + x] * w[k & 3];
    }
    if (acc < 0) return;
    out[y * W + x] = acc;
}
"""


def _sgemm_args(shape: Shape, rng: np.random.Generator) -> list[Any]:
    gx, gy = (g + o for g, o in zip(shape.global_size, shape.offset or (0, 0)))
    M, N, K = max(gy - 2, 0), max(gx - 1, 0), 7  # the guards cut rows and a column off
    return [np.int32(M), np.int32(N), np.int32(K),
            rng.standard_normal(max(M, 1) * K).astype(np.float32),
            rng.standard_normal(K * max(N, 1)).astype(np.float32),
            np.full(max(gx * gy, 1), -3.0, np.float32)]


def _banded_args(shape: Shape, rng: np.random.Generator) -> list[Any]:
    gx, gy = (g + o for g, o in zip(shape.global_size, shape.offset or (0, 0)))
    return [rng.integers(-40, 40, gx * gy).astype(np.int32),
            rng.integers(-5, 5, 9).astype(np.int32), np.zeros(gx * gy, np.int32), np.int32(9),
            np.int32(gx), np.int32(rng.integers(-9, 99))]


def _kernel_text(source: str, name: str, dim: int, factor: int) -> str:
    text, _, _ = _coarsened(source, name, dim, factor)
    return text[text.index(f"__kernel void {name}_c"):]


def test_jam_shares_the_load_uniform_along_the_dimension():
    kernel = _kernel_text(SGEMM, "sgemm", 1, 4)
    jam = kernel.index("if (__ppcl_pass == 4UL)")
    # the guard on the column is hoisted, the one on the row counted before the jammed form
    assert kernel.index("if (col >= N)") < kernel.index("__ppcl_pass++;") < jam
    assert kernel.count("const float __ppcl_u0 = B[k * N + col];") == 1
    for j in range(4):
        assert f"acc__ppcl_j{j} += A[row__ppcl_j{j} * K + k] * __ppcl_u0;" in kernel
    assert "B[k * N + col]" in kernel[kernel.index("} else {", jam):]  # the sequential loop
    facts = _facts(SGEMM, "sgemm").dims[1]
    assert facts.jams and "1 load uniform" in facts.jam, facts


@pytest.mark.parametrize("factor", [2, 3, 4, 8])
def test_jammed_sgemm_computes_the_same(factor):
    # sizes that the factor does not divide, guards cutting rows off, offsets, local ids
    shapes = [Shape((5, 37), (5, 1)), Shape((8, 16), (4, 8)), Shape((3, 9), (1, 3), (2, 5)),
              Shape((16, 16), (16, 16)), Shape((1, 1), (1, 1))]
    divisible = [s for s in shapes if s.local_size[1] % factor == 0]
    _compare(SGEMM, "sgemm", 1, factor, divisible, _sgemm_args)


def test_jam_with_a_written_parameter_a_returning_suffix_and_constant_loads():
    kernel = _kernel_text(BANDED, "banded", 1, 4)
    assert "if (__ppcl_n == 4UL)" in kernel  # no exit before the loop: full items jam
    assert "const int __ppcl_u0 = a[(x + k) % W];" in kernel
    assert "bias__ppcl_c__ppcl_j3 += y__ppcl_j3;" in kernel
    shapes = [Shape((6, 37), (2, 1)), Shape((5, 8), (5, 4), (1, 2)), Shape((3, 3), (3, 3))]
    _compare(BANDED, "banded", 1, 4, shapes, _banded_args)
    _compare(BANDED, "banded", 1, 3, shapes, _banded_args)


def test_jammed_kernels_check_clean():
    # the checking device runs the IR exactly and reports any access out of range: the
    # counted guard keeps rows past M out of the jammed form
    shapes = [Shape((6, 12), (2, 3)), Shape((4, 9), (2, 3), (1, 1))]
    _compare(SGEMM, "sgemm", 1, 3, shapes, _sgemm_args, check_context())
    _compare(BANDED, "banded", 1, 4, [Shape((6, 13), (2, 1))], _banded_args, check_context())


@pytest.mark.parametrize("seed", range(3))
def test_jam_random_shapes_and_factors(seed):
    rng = np.random.default_rng(100 + seed)
    factor = int(rng.integers(2, 7))
    _compare(SGEMM, "sgemm", 1, factor, [_random_shape(rng, 2, 1, factor) for _ in range(3)],
             _sgemm_args)
    _compare(BANDED, "banded", 1, factor, [_random_shape(rng, 2, 1) for _ in range(3)],
             _banded_args)


JAM_REFUSED = {
    "bound varies": ("""__kernel void k(__global const float *a, __global float *o, int W) {
                        int x = get_global_id(0), y = get_global_id(1);
                        float s = 0.0f;
                        for (int i = 0; i < y; i++) s += a[i * W + x];
                        o[y * W + x] = s; }""", "reads y, which differs"),
    "stores what it loads": ("""__kernel void k(__global float *a, __global float *o, int W) {
                        int x = get_global_id(0), y = get_global_id(1);
                        for (int i = 0; i < 4; i++)
                            o[y * W + x] = o[y * W + x] * 0.5f + a[i * W + x];
                        }""", "stores to memory and loads"),
    "break": ("""__kernel void k(__global const float *a, __global float *o, int W) {
                        int x = get_global_id(0), y = get_global_id(1);
                        float s = 0.0f;
                        for (int i = 0; i < W; i++) { if (a[i] > (float)y) break; s += a[i]; }
                        o[y * W + x] = s; }""", "break or continue"),
    "store before the loop": ("""__kernel void k(__global const float *a, __global float *o,
                        int W) {
                        int x = get_global_id(0), y = get_global_id(1);
                        o[y * W + x] = 0.0f;
                        for (int i = 0; i < W; i++) o[y * W + x] += a[i * W + x];
                        }""", "before the loop stores"),
    # idx is declared by the loop, so the jammed loop has one idx for the f copies: each
    # copy's `idx += W` would advance it (f times an iteration)
    "loop variable written by the body": ("""__kernel void k(__global const float *a,
                        __global float *o, int W) {
                        int x = get_global_id(0), y = get_global_id(1);
                        float s = 0.0f;
                        for (int i = 0, idx = 0; i < 3; i++) { s += a[idx + x] * (float)y; idx += W; }
                        o[y * W + x] = s; }""", "writes idx, declared by the loop"),
    "no loop": ("""__kernel void k(__global const float *a, __global float *o, int W) {
                   int x = get_global_id(0), y = get_global_id(1);
                   o[y * W + x] = a[x] * 2.0f; }""", "no loop"),
}


@pytest.mark.parametrize("case", sorted(JAM_REFUSED))
def test_jam_refusals_say_why_and_keep_the_sequential_loop(case):
    source, words = JAM_REFUSED[case]
    facts = _facts(source, "k").dims[1]
    assert facts.coarsenable and not facts.jams and words in facts.jam, facts.jam
    assert "no jam: " in facts.reason
    kernel = _kernel_text(source, "k", 1, 4)
    assert "__ppcl_j" not in kernel and "__ppcl_u" not in kernel

    def make(shape: Shape, rng: np.random.Generator) -> list[Any]:
        gx, gy = shape.global_size
        return [rng.standard_normal(gx * gy).astype(np.float32),
                np.zeros(gx * gy, np.float32), np.int32(gx)]

    _compare(source, "k", 1, 4, [Shape((5, 6), (5, 1)), Shape((4, 8), (2, 2))], make)


def test_a_barrier_refuses_coarsening_and_so_jam():
    facts = _facts(REFUSED["barrier"][0], "k").dims[1]
    assert not facts.coarsenable and not facts.jams and "synchronizes" in facts.reason


# a loop storing results and loading only __constant memory: a store's own target is not a
# load, so the loop is jammed and the weight w[i] is read once for the merged work-item
STORES_WEIGHTS = """
__kernel void k(__constant float *w, __global float *o, int W) {
    int x = get_global_id(0), y = get_global_id(1);
    float s = (float)(y * W + x);
    for (int i = 0; i < 4; i++) o[(y * W + x) * 4 + i] = s * w[i];
}
"""


def test_a_loop_that_stores_and_loads_only_constant_memory_is_jammed():
    facts = _facts(STORES_WEIGHTS, "k").dims[1]
    assert facts.jams and "1 load uniform" in facts.jam, facts.jam

    def make(shape: Shape, rng: np.random.Generator) -> list[Any]:
        gx, gy = (g + o for g, o in zip(shape.global_size, shape.offset or (0, 0)))
        return [rng.standard_normal(4).astype(np.float32),
                np.zeros(gx * gy * 4, np.float32), np.int32(gx)]

    _compare(STORES_WEIGHTS, "k", 1, 4, [Shape((5, 9), (5, 1)), Shape((4, 8), (2, 4), (1, 2))],
             make)


def test_jam_can_be_turned_off_and_gives_the_same():
    fn = cl.Program(cpu_context(), SGEMM).build()._module.function("sgemm")
    plain = coarsen(fn, 1, 4, "sgemm_c", jam=False)
    text = print_opencl(plain)
    assert "__ppcl_pass" not in text and "__ppcl_u0" not in text


def test_the_model_counts_the_shared_loads():
    # before jam, coarsening the naive product along y shared only `int col` (gain 1.00x)
    facts = _facts(SGEMM, "sgemm")
    y = facts.dims[1]
    assert y.shared_cost > 0.2 * y.total_cost, y
    cpu = ExecutionOrder(DATA_PARALLEL, 8, vector_dim=0, vectorizes_items=True)
    pick, why = choose(facts, cpu, (16, 16), (512, 512))
    assert pick == (1, 16) and "jam" in why, why
    # on a GPU, dimension 0 shares as much (the row of A) but its loads are a warp's
    # broadcast already: the tie goes to y
    gpu = ExecutionOrder(DATA_PARALLEL, 32, warp=32, min_group=128)
    pick, why = choose(facts, gpu, (16, 16), (1024, 1024))
    assert pick == (1, 2), why
