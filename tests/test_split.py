"""Input space splitting (``transforms/split.py``) against the unsplit kernel: every split kernel
runs on random inputs and on sizes that hit every piece of its domain (groups wholly inside,
groups across a border, sizes that the group size does not divide, a border wider than the
domain) and must write exactly what the kernel built with ``-ppcl-no-split`` writes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from benchmarks.overlay import SOURCE as OVERLAY_SOURCE
from benchmarks.splitting import FIR
from ppcl.compiler.frontend import compile_source
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.visit import find_all
from ppcl.compiler.pipeline import KernelSpec, kernel_ir
from tests.launch import run

CLAMPED = """
__kernel void blur(__global const float *in, __global float *out, int w, int h, int r)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= w || y >= h) return;
    float s = 0.0f;
    for (int dy = -r; dy <= r; dy++) {
        int yy = min(max(y + dy, 0), h - 1);
        for (int dx = -r; dx <= r; dx++) {
            int xx = clamp(x + dx, 0, w - 1);
            s += in[yy * w + xx] * (float)(dx + 2 * dy);
        }
    }
    out[y * w + x] = s;
}
"""

STENCIL = """
__kernel void stencil(__global const float *a, __global float *b, int ni, int nj)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if ((i < ni - 1) && (j < nj - 1) && (i > 0) && (j > 0)) {
        b[i * nj + j] = 0.5f * a[i * nj + j] + 0.125f * (a[(i - 1) * nj + j]
            + a[(i + 1) * nj + j] + a[i * nj + j - 1] + a[i * nj + j + 1]);
    }
}
"""

BOUND = FIR  # the benchmark's kernel: a loop bound that depends on the id

OFFSET_1D = """
__kernel void shift(__global const int *a, __global int *b, int n, int lo)
{
    int i = get_global_id(0);
    if (i < n && i >= lo)
        b[i] = a[max(i - 3, 0)] + a[min(i + 3, n - 1)];
    else if (i < n)
        b[i] = -1;
}
"""


def _both(source: str, name: str, gsize: tuple[int, ...], lsize: tuple[int, ...],
          make: object, *scalars: object) -> None:
    arrays_split = make()  # type: ignore[operator]
    arrays_plain = [a.copy() for a in arrays_split]
    run(source, name, gsize, lsize, *arrays_split, *scalars)
    run(source, name, gsize, lsize, *arrays_plain, *scalars, options="-ppcl-no-split")
    for got, want in zip(arrays_split, arrays_plain, strict=True):
        np.testing.assert_array_equal(got, want)


def _round(n: int, k: int) -> int:
    return (n + k - 1) // k * k


@pytest.mark.parametrize("w,h,r", [(67, 45, 2), (64, 16, 1), (5, 3, 2), (70, 9, 0), (33, 12, 9),
                                   (40, 6, -1)])
def test_clamped_convolution_matches_unsplit(w: int, h: int, r: int) -> None:
    rng = np.random.default_rng(w * 100 + h)

    def make() -> list[np.ndarray]:
        return [rng.random(w * h, dtype=np.float32), np.zeros(w * h, dtype=np.float32)]

    _both(CLAMPED, "blur", (_round(w, 16), _round(h, 4)), (16, 4), make,
          np.int32(w), np.int32(h), np.int32(r))


@pytest.mark.parametrize("ni,nj", [(67, 95), (8, 32), (2, 2), (9, 17), (30, 1)])
def test_guarded_stencil_matches_unsplit(ni: int, nj: int) -> None:
    rng = np.random.default_rng(ni * nj)

    def make() -> list[np.ndarray]:
        return [rng.random(ni * nj, dtype=np.float32), rng.random(ni * nj, dtype=np.float32)]

    _both(STENCIL, "stencil", (_round(nj, 32), _round(ni, 8)), (32, 8), make,
          np.int32(ni), np.int32(nj))


@pytest.mark.parametrize("n,taps", [(1000, 7), (100, 64), (33, 40), (5, 1), (64, 0)])
def test_id_dependent_bound_matches_unsplit(n: int, taps: int) -> None:
    rng = np.random.default_rng(n + taps)

    def make() -> list[np.ndarray]:
        return [rng.random(n, dtype=np.float32), rng.random(max(taps, 1), dtype=np.float32),
                np.zeros(n, dtype=np.float32)]

    _both(BOUND, "fir", (_round(n, 32),), (32,), make, np.int32(n), np.int32(taps))


@pytest.mark.parametrize("n,lo", [(200, 5), (20, 40), (64, -7), (3, 0)])
def test_min_max_and_else_branch_match_unsplit(n: int, lo: int) -> None:
    rng = np.random.default_rng(n)

    def make() -> list[np.ndarray]:
        return [rng.integers(0, 1000, n, dtype=np.int32), np.zeros(_round(n, 16), np.int32)]

    _both(OFFSET_1D, "shift", (_round(n, 16),), (16,), make, np.int32(n), np.int32(lo))


NESTED_UNSPLIT = """
__kernel void k(__global int *out, int k)
{
    int g = get_global_id(0);
    out[g] = min(max(2 * g, k), g);
}
"""


@pytest.mark.parametrize("k", [0, 5, 40, -3])
def test_outer_min_over_an_inner_max_that_is_not_split(k: int) -> None:
    # max(2 * g, k) is not split (its bound on g has coefficient 2); the outer min once
    # took its k for granted and the fast copy stored max(2 * g, k) where g was wanted
    def make() -> list[np.ndarray]:
        return [np.zeros(64, np.int32)]

    _both(NESTED_UNSPLIT, "k", (64,), (16,), make, np.int32(k))
    out = make()[0]
    run(NESTED_UNSPLIT, "k", (64,), (16,), out, np.int32(k))
    g = np.arange(64)
    np.testing.assert_array_equal(out, np.minimum(np.maximum(2 * g, k), g))


def _formed(source: str, name: str, local: tuple[int, int, int], options: str = ""):
    result = compile_source(source, "t.cl", options)
    return kernel_ir(result.module, name, KernelSpec(local), result.options).formed


def test_split_is_recorded_in_the_ir_and_the_plans() -> None:
    formed = _formed(CLAMPED, "blur", (16, 4, 1))
    splits = find_all(formed.body, wg.SplitLoop)
    assert len(splits) == 1
    assert any("split along x" in line for line in formed.plans)
    # the fast copy has no clamp and no guard left
    fast = splits[0].fast.body
    assert not [c for c in find_all(fast, type(splits[0].test)) if getattr(c, "name", "")
                in ("clamp", "min", "max")]


def test_no_split_option_keeps_the_loop_as_formed() -> None:
    formed = _formed(CLAMPED, "blur", (16, 4, 1), "-ppcl-no-split")
    assert not find_all(formed.body, wg.SplitLoop)


def test_id_dependent_bound_becomes_uniform_in_the_fast_copy() -> None:
    formed = _formed(BOUND, "fir", (32, 1, 1))
    (split,) = find_all(formed.body, wg.SplitLoop)
    assert "taps" in split.reason and "mins" in split.reason
    # the guarded copy's sum runs a loop of varying trip count, the fast copy's does not: the
    # vectorizer, off for the formed kernel, is on after the split
    assert split.guarded.serial_reduction and not split.fast.serial_reduction
    assert formed.vectorize and any("vectorizer on" in p for p in formed.plans)


EXPLAINED = [
    (CLAMPED, "16,4", ["fast subdomain: [base1, h, r, w] -> { [gid0] :",
                       "fast read  in[dx + dy*w + gid0 + gid1*w]: consecutive",
                       "read  in[not affine]: divergent"]),
    (STENCIL, "32,8", ["fast subdomain:", "sites: guard",
                       "fast read  a[gid0 + gid1*nj]: consecutive"]),
    (BOUND, "32", ["sites: guard, min", "fast read  h[k]: uniform",
                   "fast read  x[gid0 - k]: consecutive"]),
    (OFFSET_1D, "16", ["sites: condition, max, min", "fast read  a[gid0 + 3]: consecutive"]),
    ("__kernel void k(__global float *a, int s) { a[get_global_id(0) * s] = 1.0f; }", "8",
     ["write a[not affine]: divergent", "subkernels: guarded only"]),
    ("__kernel void k(__global float *a) { a[2 * get_global_id(0) + 1] = 1.0f; }", "8",
     ["write a[2*gid0 + 1]: strided"]),
    # the vendors' Sobel: bounds on the launch's own size, in unsigned arithmetic
    ("""__kernel void k(__global const float *in, __global float *out) {
        uint x = get_global_id(0), y = get_global_id(1);
        uint width = get_global_size(0), height = get_global_size(1);
        if (x >= 1 && x < width - 1 && y >= 1 && y < height - 1)
            out[x + y * width] = in[x + y * width - 1] + in[x + y * width + 1];
    }""", "16,16", ["0 < gid0 <= -2 + gsize0", "gsize1 >= 17 + base1"]),
]


def test_bounds_on_the_launch_size_split_and_compute_what_the_guard_does() -> None:
    source = EXPLAINED[-1][0]
    for shape in ((32, 32), (48, 16), (16, 16)):
        h, w = shape[1], shape[0]
        a = np.random.default_rng(w + h).random(w * h, dtype=np.float32)
        out = np.zeros_like(a)
        run(source, "k", shape, (16, 16), a, out)
        want = np.zeros((h, w), np.float32)
        grid = a.reshape(h, w)
        want[1:-1, 1:-1] = grid[1:-1, :-2] + grid[1:-1, 2:]
        np.testing.assert_array_equal(out.reshape(h, w), want)


def test_a_size_minus_more_than_the_local_size_is_not_modelled() -> None:
    """``gsize0 - c`` in unsigned arithmetic is exact only for ``c`` up to the local size (a
    global size is a multiple of it); beyond, it may wrap and stays unmodelled."""
    from ppcl.compiler.analysis.affine import Model, Poly, affine_of
    from ppcl.compiler.ir.types import ScalarType

    uint = ScalarType("uint")
    size = ir.Cast(uint, ir.Call(ScalarType("ulong"), "get_global_size",
                                 (ir.IntLit(uint, 0),), "get_global_size(uint)"))
    model = Model(frozenset(), (16, 1, 1), False, True)
    for c, expected in ((1, Poly.var("gsize0") - Poly.const(1)),
                        (16, Poly.var("gsize0") - Poly.const(16)), (17, None)):
        e = ir.Binary(uint, "-", size, ir.IntLit(uint, c))
        assert affine_of(e, model) == expected


@pytest.mark.parametrize("source,local,expected", EXPLAINED)
def test_explain_prints_the_model(tmp_path, capsys, source: str, local: str,
                                  expected: list[str]) -> None:
    from ppcl.cli import main

    path = tmp_path / "k.cl"
    path.write_text(source)
    assert main(["explain", str(path), "--local", local]) == 0
    out = capsys.readouterr().out
    for line in expected:
        assert line in out, out


def test_explain_says_what_a_launch_takes(tmp_path, capsys) -> None:
    from ppcl.cli import main

    path = tmp_path / "k.cl"
    path.write_text(STENCIL)
    assert main(["explain", str(path), "--local", "32,8", "--global", "64,32",
                 "--arg", "ni=32", "--arg", "nj=64"]) == 0
    out = capsys.readouterr().out
    # rows 8..15 and 16..23 are the only groups of 8 rows wholly inside 1 <= i <= 30, and
    # in them the lanes 1 <= j <= 62: 2 * 2 groups of 31 * 8 lanes
    assert "launch: 4 of 8 groups run the fast copy, 992 of 2048 work-items" in out, out


def test_explain_of_a_launch_missing_an_argument_says_so(tmp_path, capsys) -> None:
    """``--global`` without the scalar a layout's column count needs is reported, not a crash."""
    from ppcl.cli import main

    path = tmp_path / "k.cl"
    path.write_text(STENCIL)
    assert main(["explain", str(path), "--local", "32,8", "--global", "64,32"]) == 0
    out = capsys.readouterr().out
    assert "reuse distances not computed" in out and "give it with --arg" in out, out


def test_split_predicate_agrees_with_isl_tile_inside() -> None:
    """The corner rule of the split pass gives the same groups as islpy's projection."""
    from ppcl.compiler.analysis.affine import Poly, model_of, tile_inside
    from ppcl.compiler.transforms.split import plan_split

    formed = _formed(STENCIL, "stencil", (32, 8, 1), "-ppcl-no-split")
    (loop,) = find_all(formed.body, wg.WorkItemLoop)
    model = model_of(loop.body, {"ni", "nj"}, (32, 8, 1), rows=False, narrow_ids=True)
    plan = plan_split(loop.body, model)
    assert not isinstance(plan, str)
    cons = [c for s in plan.sites for c in s.constraints]
    inside = tile_inside(cons, (8, 8, 1), {})
    small = dataclasses.replace(model, local_size=(8, 8, 1))
    plan8 = plan_split(loop.body, small)
    assert not isinstance(plan8, str)
    for b0 in range(0, 40, 8):
        for b1 in range(0, 40, 8):
            values = {"base0": b0, "base1": b1, "base2": 0, "ni": 30, "nj": 33}
            ours = all(p.evaluate(values) >= 0 for p in plan8.test) and \
                max([b0] + [p.evaluate(values) for p in plan8.lower]) <= b0 and \
                min([b0 + 7] + [p.evaluate(values) for p in plan8.upper]) >= b0 + 7
            point = inside.params()  # a parameter set over the bases and the sizes
            import islpy as isl
            fixed = point
            for name, v in values.items():
                idx = fixed.find_dim_by_name(isl.dim_type.param, name)
                if idx >= 0:
                    fixed = fixed.fix_val(isl.dim_type.param, idx, v)
            assert ours == (not fixed.is_empty()), (b0, b1)
    assert Poly.var("gid0").coeff("gid0") == 1


SOBEL_X = OVERLAY_SOURCE  # the overlay benchmark's kernels, sobel_x among them


def test_fast_copy_of_clamped_indices_is_printed_for_contiguous_vectors() -> None:
    """The fast copy's neighbours (``x - 1`` there, ``max(x - 1, 0)`` in the guarded copy) are
    64 bits wide and its lanes are counted by an ``int``, so that gcc sees consecutive
    addresses in the lanes between the split's run-time bounds (gathers were 5x slower)."""
    from tests.launch import build_kernel

    k = build_kernel(SOBEL_X, "sobel_x", local_size=(16, 1))
    group = k.c_source[k.c_source.index("static void ppcl_group_sobel_x"):]
    for name in ("xl", "xr"):  # y's neighbours are uniform in a row of 16: not widened
        assert f"long ppcl_u_{name} = ppcl_u_" in group  # the fast copy's bare neighbour
    assert "for (int __lx = (int)(__slo" in group


@pytest.mark.parametrize("w, h, lw", [(64, 4, 16), (37, 5, 1), (3, 3, 1), (48, 2, 16)])
def test_clamped_sobel_matches_unsplit(w: int, h: int, lw: int) -> None:
    rng = np.random.default_rng(w * h)

    def make() -> list[np.ndarray]:
        return [rng.random(w * h, dtype=np.float32), np.zeros(w * h, dtype=np.float32)]

    _both(SOBEL_X, "sobel_x", (w, h), (lw, 1), make, np.int32(w), np.int32(h))


LU_UPDATE = """
__kernel void lu_update(__global float *A, int k, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if ((i > k) && (j > k) && (i < n) && (j < n)) {
        A[i * n + j] = A[i * n + j] - A[i * n + k] * A[k * n + j];
    }
}
"""

TRIANGLE = """
__kernel void upper(__global const float *a, __global float *b, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (j > i) {
        int m = get_global_size(0);  /* a row of b per row of lanes: no two lanes share */
        b[i * m + j] = 2.0f * a[i * n + j] + a[j * n + i];
    }
}
"""


@pytest.mark.parametrize("n,k,lsize", [(37, 0, (32, 8)), (37, 36, (32, 8)), (37, 20, (32, 8)),
                                       (64, 31, (32, 8)), (64, 63, (32, 8)), (13, 5, (4, 2)),
                                       (9, 8, (1, 1)), (20, 0, (8, 4))])
def test_lu_update_with_empty_groups_matches_unsplit(n: int, k: int,
                                                     lsize: tuple[int, int]) -> None:
    rng = np.random.default_rng(n * 7 + k)

    def make() -> list[np.ndarray]:
        return [rng.random(n * n, dtype=np.float32)]

    gsize = (_round(n, lsize[0]), _round(n, lsize[1]))
    _both(LU_UPDATE, "lu_update", gsize, lsize, make, np.int32(k), np.int32(n))


@pytest.mark.parametrize("n,lsize", [(37, (8, 4)), (64, (16, 16)), (5, (4, 4)), (30, (1, 8))])
def test_triangular_guard_matches_unsplit(n: int, lsize: tuple[int, int]) -> None:
    rng = np.random.default_rng(n)

    def make() -> list[np.ndarray]:
        return [rng.random(_round(n, 16) ** 2, dtype=np.float32),
                np.zeros(_round(n, 16) ** 2, dtype=np.float32)]

    gsize = (_round(n, lsize[0]), _round(n, lsize[1]))
    _both(TRIANGLE, "upper", gsize, lsize, make, np.int32(n))


def test_empty_test_is_recorded_in_the_ir_and_the_plans() -> None:
    formed = _formed(LU_UPDATE, "lu_update", (32, 8, 1))
    loops = find_all(formed.body, wg.SplitLoop) + find_all(formed.body, wg.WorkItemLoop)
    assert any(loop.empty is not None for loop in loops)
    line = next(p for p in formed.plans if "skips it" in p)
    # at the tile's best corner: the last row of the group and (groups run as rows along x)
    # the last lane of the launch along x
    assert "base1 - k + 6 < 0" in line and "gsize0 - k + offset0 - 2 < 0" in line, line
    assert "-base1 + n - 1 < 0" in line and "-base0 + n - 1 < 0" in line, line


def test_empty_test_of_a_triangular_guard() -> None:
    formed = _formed(TRIANGLE, "upper", (8, 4, 1))
    # a[j * n + i] walks down a column along x: the groups run one by one, not as rows,
    # so the test is at the group's own best corner (its last lane along x, first row)
    assert not formed.rows
    line = next(p for p in formed.plans if "skips it" in p)
    assert "base0 - base1 + 6 < 0" in line, line


def test_no_empty_test_when_work_follows_the_guard() -> None:
    source = """
    __kernel void k(__global float *a, int n)
    {
        int i = get_global_id(0);
        if (i < n) { a[i] = 1.0f; }
        a[i + n] = 2.0f;
    }
    """
    formed = _formed(source, "k", (16, 1, 1))
    assert not any("skips it" in p for p in formed.plans)


def test_explain_shows_the_empty_groups(tmp_path, capsys) -> None:
    from ppcl.cli import main

    path = tmp_path / "k.cl"
    path.write_text(LU_UPDATE)
    assert main(["explain", str(path), "--local", "32,8"]) == 0
    out = capsys.readouterr().out
    assert "empty groups (skip the loop): where base1 - k + 6 < 0" in out, out


GUARD_AND_MAX = """
__kernel void g(__global const float *a, __global float *b, int n, int s)
{
    int x = get_global_id(0);
    if (x < 1 || x >= n) return;
    b[x] = a[max(x - s, 0)] + a[x];
}
"""


@pytest.mark.parametrize("n,s", [(100, 1), (100, 5), (37, 40), (16, 0)])
def test_edges_run_when_a_bound_is_not_the_guards(n: int, s: int) -> None:
    # the lower bound of the fast range is max(1, s): below s, lanes past the guard still
    # store, so the lanes before the fast range must run unless s <= 1
    rng = np.random.default_rng(n + s)

    def make() -> list[np.ndarray]:
        return [rng.random(n, dtype=np.float32), np.zeros(_round(n, 16), np.float32)]

    _both(GUARD_AND_MAX, "g", (_round(n, 16),), (16,), make, np.int32(n), np.int32(s))


def test_lu_update_runs_no_loop_for_lanes_outside_the_fast_range() -> None:
    formed = _formed(LU_UPDATE, "lu_update", (32, 8, 1))
    (split,) = find_all(formed.body, wg.SplitLoop)
    assert split.edges_fail == (True, True)
    assert any("the lanes below and above the fast range fail the guard" in p
               for p in formed.plans)
    # the triangle's bound moves with the row: the lanes before its fast range still run
    formed = _formed(TRIANGLE, "upper", (8, 4, 1))
    for split in find_all(formed.body, wg.SplitLoop):
        assert not split.edges_fail[0]


def test_fast_copy_runs_a_counted_loop_as_do_while() -> None:
    """The FIR's fast copy sums over ``taps`` for every lane: its loop becomes a do-while,
    entered where ``taps >= 1`` (a group test), so that gcc vectorizes the lanes around it;
    the guarded copy keeps its ``for`` with the bound that varies across lanes."""
    from tests.launch import build_kernel

    formed = _formed(BOUND, "fir", (32, 1, 1))
    (split,) = find_all(formed.body, wg.SplitLoop)
    assert "taps - 1 >= 0" in split.reason
    assert find_all(split.fast.body, ir.DoWhile) and not find_all(split.fast.body, ir.For)
    assert find_all(split.guarded.body, ir.For)
    assert any("entered at least once where taps - 1 >= 0: do-while" in p
               for p in formed.plans)
    k = build_kernel(BOUND, "fir", local_size=(32,), want_vector_report=True)
    fast = k.c_source[k.c_source.index("for (int __lx = (int)(__slo"):]
    assert "do {" in fast.split("#pragma omp simd")[0]
    assert "optimized: loop vectorized" in k.vector_report  # type: ignore[attr-defined]


STRIDED_ROWS = """
__kernel void rows(__global const float *a, __global float *out, int n, int m)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float s = 0.0f;
    for (int k = 0; k < min(i + 1, m); k++)
        s += a[i * 4 + k];
    out[i] = s;
}
"""

CONTINUES = """
__kernel void odd(__global const int *a, __global int *out, int n, int m)
{
    int i = get_global_id(0);
    if (i >= n) return;
    int s = 0;
    for (int k = 0; k < min(i + 1, m); k++) {
        if (a[i + k] & 1) continue;
        s += a[i + k];
    }
    out[i] = s;
}
"""


@pytest.mark.parametrize("source,name", [(STRIDED_ROWS, "rows"), (CONTINUES, "odd")])
def test_loops_that_would_not_vectorize_keep_their_for(source: str, name: str) -> None:
    # a strided access (a gather per step once the lanes vectorize) or a continue (which a
    # do-while would send past the step) leaves the loop as it is
    formed = _formed(source, name, (16, 1, 1))
    (split,) = find_all(formed.body, wg.SplitLoop)
    assert find_all(split.fast.body, ir.For) and not find_all(split.fast.body, ir.DoWhile)
    assert not any("do-while" in p for p in formed.plans)


NESTED_COUNTED = """
__kernel void box(__global const int *in, __global int *out, int n, int r, int q)
{
    int i = get_global_id(0);
    if (i >= n) return;
    int s = 0;
    for (int d = -min(i, r); d <= min(r, n - 1 - i); d++)
        for (int e = 0; e < q; e++)
            s += in[i + d] * (e + 1);
    out[i] = s;
}
"""


@pytest.mark.parametrize("n,r,q", [(100, 2, 3), (50, 0, 1), (64, 3, 0), (40, -1, 2), (7, 5, 4)])
def test_nested_counted_loops_entered_or_not_match_unsplit(n: int, r: int, q: int) -> None:
    rng = np.random.default_rng(n * 7 + r)

    def make() -> list[np.ndarray]:
        return [rng.integers(-50, 50, n, dtype=np.int32), np.zeros(_round(n, 16), np.int32)]

    _both(NESTED_COUNTED, "box", (_round(n, 16),), (16,), make, np.int32(n), np.int32(r),
          np.int32(q))
    formed = _formed(NESTED_COUNTED, "box", (16, 1, 1))
    (split,) = find_all(formed.body, wg.SplitLoop)
    assert len(find_all(split.fast.body, ir.DoWhile)) == 2


TRAILING_UPDATE = """
__kernel void update(__global float *a, int k, int n)
{
    %s
    if (i < n && j <= i)
        a[i * n + j] -= a[i * n + k] * a[j * n + k];
}
"""

# the indices of a trailing update written three ways: size_t arithmetic converted to int,
# int arithmetic on converted ids, and a mix with explicit casts
INDEX_SHAPES = [
    "int j = get_global_id(0) + k + 1; int i = get_global_id(1) + k + 1;",
    "int gj = get_global_id(0), gi = get_global_id(1); int j = gj + k + 1; int i = gi + k + 1;",
    "int j = (int)(get_global_id(0) + (size_t)(k + 1)); int i = (int)get_global_id(1) + (k + 1);",
]


def test_index_arithmetic_in_size_t_or_int_gets_one_split() -> None:
    plans = [[line for line in _formed(TRAILING_UPDATE % shape, "update", (32, 8, 1)).plans
              if "split" in line] for shape in INDEX_SHAPES]
    assert any("split along x" in line for line in plans[0]), plans[0]
    assert plans[0] == plans[1] == plans[2]


@pytest.mark.parametrize("shape", INDEX_SHAPES[::2])
@pytest.mark.parametrize("n,k,lsize", [(37, 0, (32, 8)), (37, 20, (8, 4)), (50, 48, (4, 4)),
                                       (19, 3, (1, 8))])
def test_index_arithmetic_in_size_t_matches_unsplit(shape: str, n: int, k: int,
                                                    lsize: tuple[int, int]) -> None:
    rng = np.random.default_rng(n + k)

    def make() -> list[np.ndarray]:
        return [rng.random(n * n, dtype=np.float32)]

    rest = n - k - 1
    gsize = (_round(rest, lsize[0]), _round(rest, lsize[1]))
    _both(TRAILING_UPDATE % shape, "update", gsize, lsize, make, np.int32(k), np.int32(n))


BAND = """
__kernel void band(__global const float *a, __global float *b, int n, int lo, int hi)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i >= n || j < i - lo || j > i + hi || j >= n)
        return;
    b[i * n + j] = a[i * n + j] * 2.0f + a[j * n + i];
}
"""

WEDGE_3D = """
__kernel void wedge(__global float *a, int n)
{
    size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x + 1 <= y + z && x < n && y < n && z < n)
        a[(z * n + y) * n + x] += (float)(x + 2 * y + 3 * z);
}
"""


@pytest.mark.parametrize("n,lo,hi,lsize", [(37, 3, 2, (32, 8)), (64, 0, 0, (16, 4)),
                                            (20, 25, 1, (4, 4)), (13, 1, 30, (1, 8)),
                                            (50, 7, 7, (8, 1))])
def test_band_guard_clipped_per_row_matches_unsplit(n: int, lo: int, hi: int,
                                                    lsize: tuple[int, int]) -> None:
    rng = np.random.default_rng(n + lo)

    def make() -> list[np.ndarray]:
        return [rng.random(n * n, dtype=np.float32), np.zeros(n * n, dtype=np.float32)]

    gsize = (_round(n, lsize[0]), _round(n, lsize[1]))
    _both(BAND, "band", gsize, lsize, make, np.int32(n), np.int32(lo), np.int32(hi))


@pytest.mark.parametrize("n,lsize", [(9, (4, 2, 2)), (16, (8, 4, 2)), (5, (1, 1, 4))])
def test_wedge_guard_clipped_per_row_in_3d_matches_unsplit(n: int,
                                                           lsize: tuple[int, int, int]) -> None:
    rng = np.random.default_rng(n)

    def make() -> list[np.ndarray]:
        return [rng.random(n ** 3, dtype=np.float32)]

    gsize = tuple(_round(n, s) for s in lsize)
    _both(WEDGE_3D, "wedge", gsize, lsize, make, np.int32(n))


def test_row_bounds_are_recorded_in_the_ir_and_the_plans() -> None:
    formed = _formed(BAND, "band", (16, 4, 1))
    line = next(p for p in formed.plans if "each row" in p)
    assert "gid0 >= gid1 - lo" in line and "gid0 <= gid1 + hi" in line, line
    loops = find_all(formed.body, wg.WorkItemLoop)
    assert loops and all(loop.clip_lower and loop.clip_upper for loop in loops)
    # a guard whose bounds on x are the same for every row clips nothing per row
    formed = _formed(STENCIL, "stencil", (16, 4, 1))
    assert not any("each row" in p for p in formed.plans)
    assert not any(loop.clip_lower or loop.clip_upper
                   for loop in find_all(formed.body, wg.WorkItemLoop))


def test_a_literal_past_int_is_converted_as_the_kernel_converts_it() -> None:
    """(int)(gid + 4000000000u) is gid - 294967296: the model must not read the literal as its
    unconverted value, or a split would decide the guard on the wrong lanes."""
    source = """
    __kernel void shifted(__global int *out, int n)
    {
        int j = get_global_id(0) + 4000000000u;
        if (j + 294967296 < n)
            out[get_global_id(0)] = j;
    }
    """
    n = 40

    def make() -> list[np.ndarray]:
        return [np.full(64, -7, dtype=np.int32)]

    _both(source, "shifted", (64,), (16,), make, np.int32(n))
    got = make()[0]
    run(source, "shifted", (64,), (16,), got, np.int32(n))
    np.testing.assert_array_equal(got[:n], np.arange(n) - 294967296)
    np.testing.assert_array_equal(got[n:], -7)
    formed = _formed(source, "shifted", (16, 1, 1))
    assert any("gid0 <= n - 1" in p for p in formed.plans), formed.plans


# one lane of each group also records where its value came from, through a loaded index
ONE_LANE = """
__kernel void note(__global const int *src, __global int *dst, __global int *seen) {
    int lx = get_local_id(0);
    int g = get_global_id(0);
    int v = src[g] * 3;
    if (lx == 5)
        seen[src[g]] = g;
    dst[g] = v + lx;
}
"""


def test_a_branch_of_one_lane_drops_out_of_the_lanes_past_it() -> None:
    result = compile_source(ONE_LANE, "t.cl", "")
    # ids narrowed to int, as a launch of fewer than 2**31 work-items builds it
    formed = kernel_ir(result.module, "note", KernelSpec((256, 1, 1), False, True),
                       result.options).formed
    assert any("split along x, fast where gid0 >= base0 + 6" in line
               for line in formed.plans), formed.plans
    fast = find_all(formed.body, wg.SplitLoop)[0].fast.body
    assert not [s for s in find_all(fast, ir.If)]


@pytest.mark.parametrize("n", [768, 300, 5])
def test_a_branch_of_one_lane_matches_unsplit(n: int) -> None:
    rng = np.random.default_rng(n)
    size = _round(n, 256)

    def make() -> list[np.ndarray]:
        return [rng.permutation(size).astype(np.int32), np.zeros(size, dtype=np.int32),
                np.full(size, -1, dtype=np.int32)]

    _both(ONE_LANE, "note", (size,), (256,), make)


# ---------------------------------------------------------------- periodic wraps

STREAM_IF = """
__constant int CX[9] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
__constant int CY[9] = {0, 0, 1, 0, -1, 1, 1, -1, -1};

__kernel void stream(__global const float *src, __global float *dst, int nx, int ny)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= nx || y >= ny)
        return;
    for (int q = 0; q < 9; q++) {
        int xs = x - CX[q];
        int ys = y - CY[q];
        if (xs < 0) xs += nx;
        if (xs >= nx) xs -= nx;
        if (ys < 0) ys += ny;
        if (ys >= ny) ys -= ny;
        dst[(y * nx + x) * 9 + q] = src[(ys * nx + xs) * 9 + q];
    }
}
"""

HEAT_TERNARY = """
__kernel void heat(__global const float *a, __global float *b, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    int xm = x == 0 ? w - 1 : x - 1;
    int xp = x == w - 1 ? 0 : x + 1;
    int ym = y == 0 ? h - 1 : y - 1;
    int yp = y == h - 1 ? 0 : y + 1;
    b[y * w + x] = 0.2f * (a[y * w + x] + a[y * w + xm] + a[y * w + xp]
                           + a[ym * w + x] + a[yp * w + x]);
}
"""

HEAT_REMAINDER = """
__kernel void heat(__global const float *a, __global float *b, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= w || y >= h)
        return;
    int xm = (x - 1 + w) % w;
    int xp = (x + 1) % w;
    int ym = (y + h - 1) % h;
    int yp = (y + 1) % h;
    b[y * w + x] = 0.2f * (a[y * w + x] + a[y * w + xm] + a[y * w + xp]
                           + a[ym * w + x] + a[yp * w + x]);
}
"""

# steps far wider than the lattice: the interior x >= 40 and x <= nx - 41 is empty for
# every size below, and each remainder wraps the coordinate back into [0, nx)
WIDE_TABLE = """
__constant int DX[4] = {-40, 3, 40, 0};

__kernel void far(__global const int *src, __global int *dst, int nx)
{
    int x = get_global_id(0);
    if (x >= nx)
        return;
    int s = 0;
    for (int k = 0; k < 4; k++) {
        int xs = ((x - DX[k]) % nx + nx) % nx;
        s += (k + 1) * src[xs];
    }
    dst[x] = s;
}
"""

_WRAP_SIZES = [(1, 1), (1, 7), (7, 1), (2, 3), (3, 2), (33, 17), (16, 16), (70, 9)]


def _stream_numpy(src: np.ndarray, nx: int, ny: int) -> np.ndarray:
    cx = [0, 1, 0, -1, 0, 1, -1, -1, 1]
    cy = [0, 0, 1, 0, -1, 1, 1, -1, -1]
    f = src.reshape(ny, nx, 9)
    out = np.empty_like(f)
    for q in range(9):
        out[:, :, q] = np.roll(f[:, :, q], (cy[q], cx[q]), axis=(0, 1))
    return out.reshape(-1)


@pytest.mark.parametrize("nx,ny", _WRAP_SIZES)
def test_periodic_stream_with_table_wraps_matches_numpy(nx: int, ny: int) -> None:
    rng = np.random.default_rng(nx * 31 + ny)

    def make() -> list[np.ndarray]:
        return [rng.random(nx * ny * 9, dtype=np.float32),
                np.zeros(nx * ny * 9, dtype=np.float32)]

    _both(STREAM_IF, "stream", (_round(nx, 16), _round(ny, 4)), (16, 4), make,
          np.int32(nx), np.int32(ny))
    src, dst = make()
    run(STREAM_IF, "stream", (_round(nx, 16), _round(ny, 4)), (16, 4), src, dst,
        np.int32(nx), np.int32(ny))
    np.testing.assert_array_equal(dst, _stream_numpy(src, nx, ny))


def _heat_numpy(a: np.ndarray, w: int, h: int) -> np.ndarray:
    g = a.reshape(h, w)
    s = g + np.roll(g, 1, 1) + np.roll(g, -1, 1) + np.roll(g, 1, 0) + np.roll(g, -1, 0)
    return (np.float32(0.2) * s).reshape(-1)


@pytest.mark.parametrize("source", [HEAT_TERNARY, HEAT_REMAINDER], ids=["ternary", "remainder"])
@pytest.mark.parametrize("w,h", _WRAP_SIZES)
def test_periodic_heat_matches_unsplit_and_numpy(source: str, w: int, h: int) -> None:
    rng = np.random.default_rng(w * 7 + h)

    def make() -> list[np.ndarray]:
        return [rng.random(w * h, dtype=np.float32), np.zeros(w * h, dtype=np.float32)]

    _both(source, "heat", (_round(w, 16), _round(h, 4)), (16, 4), make, np.int32(w),
          np.int32(h))
    a, b = make()
    run(source, "heat", (_round(w, 16), _round(h, 4)), (16, 4), a, b, np.int32(w), np.int32(h))
    np.testing.assert_allclose(b, _heat_numpy(a, w, h), rtol=1e-6)


@pytest.mark.parametrize("nx", [1, 2, 5, 64, 79, 200])
def test_table_whose_interior_is_empty_matches_numpy(nx: int) -> None:
    rng = np.random.default_rng(nx)

    def make() -> list[np.ndarray]:
        return [rng.integers(-100, 100, nx, dtype=np.int32), np.zeros(nx, np.int32)]

    _both(WIDE_TABLE, "far", (_round(nx, 32),), (32,), make, np.int32(nx))
    src, dst = make()
    run(WIDE_TABLE, "far", (_round(nx, 32),), (32,), src, dst, np.int32(nx))
    want = sum((k + 1) * np.roll(src, d) for k, d in enumerate([-40, 3, 40, 0]))
    np.testing.assert_array_equal(dst, want)


def _wrap_free(fast: ir.Stmt) -> bool:
    """No if, ternary or remainder left in a fast copy's statements before its store."""
    return not (find_all(fast, ir.If) or find_all(fast, ir.Conditional)
                or [b for b in find_all(fast, ir.Binary) if b.op == "%"])


@pytest.mark.parametrize("source", [STREAM_IF, HEAT_TERNARY, HEAT_REMAINDER],
                         ids=["if", "ternary", "remainder"])
def test_periodic_wraps_drop_out_of_the_fast_copy(source: str) -> None:
    name = "stream" if "stream" in source else "heat"
    formed = _formed(source, name, (16, 4, 1))
    (split,) = find_all(formed.body, wg.SplitLoop)
    line = next(p for p in formed.plans if "split along x" in p)
    assert ("wraps" in line or "arms" in line) and "gid0 >= 1" in line, line
    assert "gid0 <= " in line, line
    assert "base1 - 1 >= 0" in line, line
    assert _wrap_free(split.fast.body)
    assert not _wrap_free(split.guarded.body)


def test_table_loads_at_their_bounds_are_in_the_plans() -> None:
    formed = _formed(STREAM_IF, "stream", (16, 4, 1))
    assert formed.tables == {"CX": (-1, 1), "CY": (-1, 1)}
    assert any("table loads at their bounds: CX[q] in [-1, 1], CY[q] in [-1, 1]" in p
               for p in formed.plans), formed.plans


def test_table_bounds_of_constant_arrays_with_literal_initializers() -> None:
    from ppcl.compiler.analysis.affine import table_bounds

    source = """
    __constant int PART[6] = {3, 7};
    __constant uchar BYTES[] = {1, 300, 9};
    __constant float F[2] = {1.0f, 2.0f};
    __constant int GRID[2][2] = {{1, 2}, {3, 4}};
    __constant int NEG[3] = {-5, 2, -1};
    __kernel void k(__global int *o) { o[0] = PART[0] + BYTES[0] + NEG[0] + GRID[0][0]; }
    """
    module = compile_source(source, "t.cl", "").module
    # left-out elements are 0; 300 is 44 as a uchar; floats and rows of a grid are no table
    assert table_bounds(module) == {"PART": (0, 7), "BYTES": (1, 44), "NEG": (-5, 2)}


NOT_TABLES = """
__constant int CX[3] = {-1, 0, 1};

__kernel void k(__global const float *src, __global float *dst, __constant int *DX,
                __global const int *GX, int nx)
{
    int x = get_global_id(0);
    if (x >= nx)
        return;
    int PX[3] = {-1, 0, 1};
    float s = 0.0f;
    for (int q = 0; q < 3; q++) {
        int a = x - DX[q];
        int b = x - GX[q];
        int c = x - PX[q];
        if (a < 0) a += nx;
        if (a >= nx) a -= nx;
        if (b < 0) b += nx;
        if (b >= nx) b -= nx;
        if (c < 0) c += nx;
        if (c >= nx) c -= nx;
        s += src[a] + 2.0f * src[b] + 4.0f * src[c];
    }
    dst[x] = s;
}
"""


def test_constant_arguments_global_and_private_tables_are_not_bounded() -> None:
    formed = _formed(NOT_TABLES, "k", (16, 1, 1))
    assert formed.tables == {"CX": (-1, 1)}  # the program's table, which k never reads
    assert not any("table loads" in p for p in formed.plans), formed.plans
    assert not any("wraps" in p for p in formed.plans), formed.plans


@pytest.mark.parametrize("nx", [1, 2, 17, 64])
def test_constant_arguments_global_and_private_tables_match_numpy(nx: int) -> None:
    rng = np.random.default_rng(nx)
    # steps of 2 and -2 wrap twice where nx is 1: the kernel's single wrap reads past the
    # end, so keep to steps of one where the lattice is that small
    steps = np.array([-1, 0, 1] if nx < 3 else [2, -2, 1], np.int32)

    def make() -> list[np.ndarray]:
        return [rng.random(nx, dtype=np.float32), np.zeros(nx, np.float32)]

    src, dst = make()
    run(NOT_TABLES, "k", (_round(nx, 16),), (16,), src, dst, steps, steps, np.int32(nx))
    want = sum(np.roll(src, d) * 1.0 + 2.0 * np.roll(src, d) for d in steps)
    want = want + sum(4.0 * np.roll(src, d) for d in (-1, 0, 1))
    np.testing.assert_allclose(dst, want, rtol=1e-5)


def test_a_local_named_as_a_table_is_not_bounded() -> None:
    source = STREAM_IF.replace("for (int q = 0; q < 9; q++) {",
                               "int CX[9] = {0, 5, 0, -5, 0, 5, -5, -5, 5};\n"
                               "    for (int q = 0; q < 9; q++) {")
    formed = _formed(source, "stream", (16, 4, 1))
    # the local is renamed apart from the table; its loads are not the table's
    line = next(p for p in formed.plans if "table loads" in p)
    assert "CY[q] in [-1, 1]" in line and "CX" not in line, line


ADDRESS_TAKEN = """
__kernel void k(__global const int *src, __global int *dst, int nx, int s)
{
    int x = get_global_id(0);
    if (x >= nx)
        return;
    int xs = x - 1, ys = 0;
    int *p = s >= 0 ? &xs : &ys;  /* one of two: not read through as xs (addresses.py) */
    *p = x + s;
    if (xs >= nx) xs -= nx;
    dst[x] = src[xs];
}
"""


@pytest.mark.parametrize("nx,s", [(40, 1), (40, 39), (7, 3)])
def test_a_local_written_through_a_pointer_keeps_its_wrap(nx: int, s: int) -> None:
    # xs is x + s when the wrap is tested, not its declared x - 1: the wrap must not be
    # taken for decided where x - 1 < nx
    src = np.arange(nx, dtype=np.int32) * 3
    dst = np.zeros(nx, np.int32)
    run(ADDRESS_TAKEN, "k", (_round(nx, 16),), (16,), src, dst, np.int32(nx), np.int32(s))
    np.testing.assert_array_equal(dst, src[(np.arange(nx) + s) % nx])


def test_a_local_written_through_a_pointer_is_no_wrap_site() -> None:
    from ppcl.compiler.analysis.affine import model_of
    from ppcl.compiler.transforms.split import find_sites

    formed = _formed(ADDRESS_TAKEN, "k", (16, 1, 1))
    (loop,) = find_all(formed.body, wg.WorkItemLoop)
    model = model_of(loop.body, {"nx", "s"}, formed.local_size, rows=formed.rows,
                     narrow_ids=True, tables=formed.tables)
    assert [s.what for s in find_sites(loop.body, model)] == ["guard"]


UNSIGNED_BORDER = """
__kernel void border(__global const float *in, __global float *out, uint width, uint height)
{
    uint x = get_global_id(0), y = get_global_id(1);
    uint i = y * width + x;
    float v = 0.0f;
    if (x >= 1 && x < width - 1 && y >= 1 && y < height - 1)
        v = in[i - 1] + in[i + 1] + in[i - width] + in[i + width];
    if (x < width && y < height)
        out[i] = v;
}
"""

UNSIGNED_ABOVE = """
__kernel void above(__global int *out, uint width)
{
    uint x = get_global_id(0);
    if (x > width - 1)
        out[x] = 1;
    else
        out[x] = 2;
}
"""

BORDER_FIRST = """
__kernel void frame(__global const float *in, __global float *out, uint width, uint height)
{
    uint x = get_global_id(0), y = get_global_id(1);
    uint i = y * width + x;
    if (x >= width || y >= height)
        return;
    if (x == 0 || y == 0 || x >= width - 1 || y >= height - 1) {
        out[i] = -1.0f;
        return;
    }
    out[i] = in[i - 1] + in[i + width];
}
"""


def test_unsigned_upper_bounds_split_assuming_no_wrap() -> None:
    """``x < width - 1`` on ``uint``: ``width - 1`` wraps at ``width == 0``, so the split
    assumes ``width - 1 >= 0`` and tests it with the rest of its subdomain."""
    formed = _formed(UNSIGNED_BORDER, "border", (16, 4, 1))
    line = next(p for p in formed.plans if "split along x" in p)
    assert "width - 1 >= 0" in line and "gid0 <= width - 2" in line, line
    assert "height - 1 >= 0" in line and "-base1 + height - 5 >= 0" in line, line


@pytest.mark.parametrize("w,h", [(37, 9), (64, 16), (1, 5), (2, 2), (48, 4)])
def test_unsigned_border_matches_unsplit(w: int, h: int) -> None:
    rng = np.random.default_rng(w * h)

    def make() -> list[np.ndarray]:
        return [rng.random(_round(w, 16) * _round(h, 4) + 64, dtype=np.float32),
                np.zeros(_round(w, 16) * _round(h, 4) + 64, np.float32)]

    _both(UNSIGNED_BORDER, "border", (_round(w, 16), _round(h, 4)), (16, 4), make,
          np.uint32(w), np.uint32(h))


@pytest.mark.parametrize("width", [0, 1, 17, 64, 100])
def test_a_condition_true_past_a_wrapped_bound_is_not_taken(width: int) -> None:
    """At ``width == 0``, ``x > width - 1`` compares with the largest ``uint`` and is false
    for every lane, where the integers' ``x > -1`` is true: the assumption ``width - 1 >= 0``
    keeps the fast copy (which has it true) out of such a launch."""
    formed = _formed(UNSIGNED_ABOVE, "above", (16, 1, 1))
    assert any("width - 1 >= 0" in p for p in formed.plans if "split along x" in p), \
        formed.plans
    out = np.zeros(64, np.int32)
    run(UNSIGNED_ABOVE, "above", (64,), (16,), out, np.uint32(width))
    want = np.where(np.arange(64) > (width - 1) % 2**32, 1, 2)
    np.testing.assert_array_equal(out, want)


def test_a_border_of_disjuncts_with_a_store_before_returning_splits() -> None:
    """``if (x == 0 || ... || y >= height - 1) { out[i] = -1; return; }``: each disjunct is
    false on a subdomain (``x == 0`` above 0, the interior side), so the fast copy skips
    the branch, though it does more than return."""
    formed = _formed(BORDER_FIRST, "frame", (16, 4, 1))
    line = next(p for p in formed.plans if "split along x" in p)
    assert "gid0 >= 1" in line and "gid0 <= width - 2" in line and "(6 sites" in line, line
    for w, h in ((37, 9), (16, 4), (1, 1), (3, 70)):
        rng = np.random.default_rng(w + h)
        size = _round(w, 16) * _round(h, 4) + 64

        def make(size: int = size, rng: np.random.Generator = rng) -> list[np.ndarray]:
            return [rng.random(size, dtype=np.float32), np.zeros(size, np.float32)]

        _both(BORDER_FIRST, "frame", (_round(w, 16), _round(h, 4)), (16, 4), make,
              np.uint32(w), np.uint32(h))


SIGNED_BOUND = """
__kernel void bound(__global const float *in, __global float *out, int n)
{
    uint gid = get_global_id(0);
    if (gid < n)
        out[gid] = 2.0f * in[gid];
}
"""


@pytest.mark.parametrize("n", [-5, 0, 37, 64, 200])
def test_an_int_bound_compared_with_an_unsigned_id_splits_assuming_it_is_not_negative(
        n: int) -> None:
    """``gid < n`` with ``uint gid`` and ``int n`` converts ``n``: a negative ``n`` is a huge
    bound and every lane passes. The split assumes ``n >= 0`` and tests it per launch."""
    formed = _formed(SIGNED_BOUND, "bound", (16, 1, 1))
    line = next(p for p in formed.plans if "split along x" in p)
    assert "n >= 0" in line and "gid0 <= n - 1" in line, line
    # the uint id indexes in 64 bits there: C's (uint)base + (uint)lane may wrap, so gcc
    # could not step the address along the loop
    assert any("fast copy: index gid0 (line 6) in 64-bit arithmetic" in p
               for p in formed.plans), formed.plans
    a = np.random.default_rng(abs(n)).random(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    run(SIGNED_BOUND, "bound", (64,), (16,), a, out, np.int32(n))
    passing = np.arange(64) < (n % 2**32)
    np.testing.assert_array_equal(out, np.where(passing, 2.0 * a, 0.0).astype(np.float32))


WRAPPING_CONDITIONS = """
__kernel void k(__global int *out, uint w, int n)
{
    uint x = get_global_id(0);
    int r = 0;
    if (x < w - 1) r += 1;
    if (x + 1 < w) r += 4;
    if (x >= n) r += 8;
    if (x <= w - 3 && x != 5) r += 16;
    if (x == 0 || x >= w - 1) {
        out[x] = r + 100;
        return;
    }
    out[x] = r;
}
"""


def _wrapping_reference(w: int, n: int, size: int) -> np.ndarray:
    mod = 2**32
    out = np.zeros(size, np.int64)
    for x in range(size):
        r = (1 if x < (w - 1) % mod else 0) + (4 if (x + 1) % mod < w else 0)
        r += 8 if x >= n % mod else 0
        r += 16 if x <= (w - 3) % mod and x != 5 else 0
        out[x] = r + 100 if x == 0 or x >= (w - 1) % mod else r
    return out.astype(np.int32)


@pytest.mark.parametrize("w", [0, 1, 2, 3, 15, 16, 17, 33, 64, 100, 2**32 - 1])
@pytest.mark.parametrize("n", [-3, 0, 5, 64])
def test_unsigned_conditions_split_as_c_computes_them(w: int, n: int) -> None:
    """Every comparison here wraps for some ``w`` or ``n`` (``w - 1`` at 0, ``w - 3`` below 3,
    ``n`` negative as a ``uint``): the split's assumptions keep its fast copy to launches
    where none does, and the results are C's in every case."""
    line = next(p for p in _formed(WRAPPING_CONDITIONS, "k", (16, 1, 1)).plans
                if "split along x" in p)
    assert "w - 3 >= 0 and n >= 0" in line and "gid0 <= w - 3" in line, line
    out = np.zeros(64, np.int32)
    run(WRAPPING_CONDITIONS, "k", (64,), (16,), out, np.uint32(w), np.int32(n))
    np.testing.assert_array_equal(out, _wrapping_reference(w, n, 64))
