"""The data layout change (transposition of a buffer viewed as a row-major matrix): the host
shuffles, which kernels are accepted and why others are not, transposed kernels run on
transposed data against the original kernels on random inputs, and the reuse-distance choice
between the two layouts."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ppcl as cl
from ppcl.compiler.analysis.order import DATA_PARALLEL, SERIAL, ExecutionOrder
from ppcl.compiler.analysis.reuse import better_layout, reuse_distance
from ppcl.compiler.codegen.opencl import print_opencl
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.transforms.layout import (
    ROWS_PARAM,
    TransposeFacts,
    from_transposed,
    to_transposed,
    transposable,
    transpose,
    vector_components,
)

mf = cl.mem_flags


def kernel_of(ctx, source: str, name: str) -> tuple[ir.Module, ir.Function]:
    module = cl.Program(ctx, source).build()._module
    fn = next(d for d in module.decls if isinstance(d, ir.Function) and d.is_kernel
              and d.name == name)
    return module, fn


def facts_of(fn: ir.Function, param: str) -> TransposeFacts:
    facts = transposable(fn, param)
    assert isinstance(facts, TransposeFacts), facts
    return facts


# ---------------------------------------------------------------- shuffles


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64, np.uint8, np.int64])
@pytest.mark.parametrize("rows,columns", [(1, 1), (1, 7), (7, 1), (37, 4), (3, 5), (64, 3)])
def test_shuffles_round_trip(dtype, rows, columns):
    rng = np.random.default_rng(rows * 31 + columns)
    data = rng.integers(0, 100, rows * columns).astype(dtype)
    there = to_transposed(data, rows, columns)
    assert there.shape == data.shape and there.dtype == data.dtype
    assert np.array_equal(there, data.reshape(rows, columns).T.reshape(-1))
    assert np.array_equal(from_transposed(there, rows, columns), data)
    # element (r, c) moves from r*C + c to c*R + r
    r, c = rows - 1, columns - 1
    assert there[c * rows + r] == data[r * columns + c]


def test_shuffles_refuse_a_wrong_shape():
    with pytest.raises(ValueError, match="rows"):
        to_transposed(np.zeros(10, np.float32), 3, 4)
    with pytest.raises(ValueError, match="1-D"):
        from_transposed(np.zeros((2, 2), np.float32), 2, 2)


# ---------------------------------------------------------------- which kernels

AOS4 = """
__kernel void aos4(__global float *p, __global const float *v, float dt, int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float w = p[4*i + 3];
    p[4*i] += dt * v[3*i] * w;
    p[4*i + 1] += dt * v[3*i + 1] * w;
    p[4*i + 2] += dt * v[3*i + 2] * w;
}
"""

NEIGHBORS = """
__kernel void nbr(__global const int *n, __global const float *x, __global float *out,
                  int A, int J)
{
    int tid = get_global_id(0);
    if (tid >= A) return;
    float s = 0.0f;
    for (int j = 0; j < J; j++)
        s += x[n[tid + j*A]] * (float)(j + 1);
    out[tid] = s;
}
"""

KMEANS = """
__kernel void kmeans(__global const float *f, __global const float *clusters,
                     __global int *membership, int npoints, int nclusters, int nfeatures)
{
    int pid = get_global_id(0);
    if (pid < npoints) {
        float best = 3.0e38f;
        int index = 0;
        for (int i = 0; i < nclusters; i++) {
            float dist = 0.0f;
            for (int l = 0; l < nfeatures; l++) {
                float d = f[l*npoints + pid] - clusters[i*nfeatures + l];
                dist += d * d;
            }
            if (dist < best) { best = dist; index = i; }
        }
        membership[pid] = index;
    }
}
"""

ELL = """
__kernel void ell(__global const float *vals, __global const int *cols,
                  __global const float *x, __global float *y, int nrows, int width)
{
    size_t row = get_global_id(0);
    if (row < nrows) {
        float s = 0.0f;
        for (int j = 0; j < width; j++) {
            int c = cols[j*nrows + row];
            if (c >= 0)
                s += vals[j*nrows + row] * x[c];
        }
        y[row] = s;
    }
}
"""


def test_transposable_aos_and_coalesced(ctx):
    _, aos = kernel_of(ctx, AOS4, "aos4")
    p = facts_of(aos, "p")
    assert isinstance(p.columns, ir.IntLit) and p.columns.value == 4
    assert p.accesses == 4 and str(p.element) == "float"
    v = facts_of(aos, "v")
    assert isinstance(v.columns, ir.IntLit) and v.columns.value == 3
    _, nbr = kernel_of(ctx, NEIGHBORS, "nbr")
    n = facts_of(nbr, "n")
    assert isinstance(n.columns, ir.VarRef) and n.columns.name == "A"
    # the guard tid < A keeps the column inside [0, A) even when the NDRange is rounded up
    assert n.holds((40, 1, 1), (0, 0, 0), {"A": 37, "J": 5}, 37 * 5)
    assert not n.holds((40, 1, 1), (0, 0, 0), {"A": 37, "J": 5}, 37 * 5 + 1)
    assert "p" in p.describe() and "4 columns" in p.describe()
    _, ell = kernel_of(ctx, ELL, "ell")
    for name in ("vals", "cols"):
        facts = facts_of(ell, name)
        assert isinstance(facts.columns, ir.VarRef) and facts.columns.name == "nrows"


def test_holds_needs_the_launch_inside_the_columns(ctx):
    source = """__kernel void k(__global float *a, int A, int J) {
        size_t t = get_global_id(0);
        for (int j = 0; j < J; j++) a[t + j*A] += 1.0f; }"""
    _, fn = kernel_of(ctx, source, "k")
    facts = facts_of(fn, "a")
    assert facts.holds((16, 1, 1), (0, 0, 0), {"A": 16, "J": 2}, 32)
    assert not facts.holds((17, 1, 1), (0, 0, 0), {"A": 16, "J": 2}, 32)
    assert not facts.holds((16, 1, 1), (1, 0, 0), {"A": 16, "J": 2}, 32)
    assert not facts.holds((16, 1, 1), (0, 0, 0), {"J": 2}, 32)  # C unknown


def test_an_unsigned_guard_bounds_only_while_its_limit_is_not_negative(ctx):
    source = """__kernel void k(__global float *a, int A, int m) {
        size_t t = get_global_id(0);
        if (t < m) { a[t] = 1.0f; a[t + A] = 2.0f; } }"""
    _, fn = kernel_of(ctx, source, "k")
    facts = facts_of(fn, "a")
    assert facts.holds((20, 1, 1), (0, 0, 0), {"A": 16, "m": 16}, 32)
    assert not facts.holds((20, 1, 1), (0, 0, 0), {"A": 16, "m": 17}, 32)
    # (size_t)-1 lets every work-item through
    assert not facts.holds((20, 1, 1), (0, 0, 0), {"A": 16, "m": -1}, 32)
    with pytest.raises(ValueError, match="already"):
        twice = transpose(fn, facts, "k_t")
        transpose(twice, facts, "k_tt")


REFUSED = [
    ("vload4(i, p)", "passed to vload4"),
    ("atomic_add((__global int *)&p[4*i], 1)", "address"),
    ("helper(p, i)", "passed to helper"),
    ("(p + 4*i)[1]", "pointer arithmetic"),
    ("p[i*n + i*i]", "do not all split as r*C + c with c in [0, C) for C in n"),
    ("p[(int)p[i]]", "not a polynomial"),  # an opaque row may not read the buffer itself
    ("p[4*i + n/2]", "do not all split"),  # a column part that is no polynomial has no range
    ("p[4*i + i]", "row stride"),  # 5*i and 4*i + 1 share no stride
]


@pytest.mark.parametrize("use,reason", REFUSED)
def test_transposable_refuses_with_a_reason(ctx, use, reason):
    source = f"""
    float helper(__global float *q, int i) {{ return q[i]; }}
    __kernel void k(__global float *p, __global float *out, int n) {{
        int i = get_global_id(0);
        float4 unused = (float4)(0.0f);
        out[i] = (float)({use}) + unused.x + p[4*i + 1];
    }}"""
    if "vload4" in use:
        source = source.replace(f"(float)({use})", f"({use}).x")
    if "atomic" in use:
        source = source.replace("__global float *p", "__global int *p")
    _, fn = kernel_of(ctx, source, "k")
    got = transposable(fn, "p")
    assert isinstance(got, str) and reason in got, got


def test_transposable_refuses_other_buffers(ctx):
    source = """__kernel void k(__global float4 *p, __local float *l, float s) {
        int i = get_global_id(0); l[4*i] = s; p[4*i] = (float4)(s); }"""
    _, fn = kernel_of(ctx, source, "k")
    assert "not scalars" in transposable(fn, "p")  # type: ignore[operator]
    assert "__local" in transposable(fn, "l")  # type: ignore[operator]
    assert "not a pointer" in transposable(fn, "s")  # type: ignore[operator]
    assert "no parameter" in transposable(fn, "zz")  # type: ignore[operator]


# ---------------------------------------------------------------- differential


def _run(ctx, queue, module, fn, gsize, lsize, args):
    """Launch ``fn`` (a kernel of ``module``'s program) on copies of ``args``; returns the
    arrays' contents afterwards."""
    decls = tuple(d for d in module.decls if not (isinstance(d, ir.Function) and d.is_kernel))
    source = print_opencl(dataclasses.replace(module, decls=decls + (fn,)))
    prog = cl.Program(ctx, source).build()
    buffers, launch = [], []
    for a in args:
        if isinstance(a, np.ndarray) and a.ndim == 1:
            buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a.copy())
            buffers.append((buf, a))
            launch.append(buf)
        else:
            launch.append(a)
    getattr(prog, fn.name)(queue, gsize, lsize, *launch)
    out = []
    for buf, a in buffers:
        got = np.empty_like(a)
        cl.enqueue_copy(queue, got, buf)
        out.append(got)
    queue.finish()
    return out


def _differential(ctx, queue, source, name, params, args, gsize, lsize, values):
    """The original kernel on ``args`` against the kernel with ``params`` transposed on the
    transposed arrays; every array compared after shuffling back."""
    module, fn = kernel_of(ctx, source, name)
    names = [p.name for p in fn.params]
    expected = _run(ctx, queue, module, fn, gsize, lsize, args)
    new_fn, new_args, shapes = fn, list(args), {}
    for param in params:
        facts = facts_of(new_fn, param)
        k = names.index(param)
        columns = facts.columns.value if isinstance(facts.columns, ir.IntLit) \
            else values[facts.columns.name]
        rows = args[k].size // columns
        g3 = tuple(gsize) + (1,) * (3 - len(gsize))
        assert facts.holds(g3, (0, 0, 0), values, args[k].size)
        new_fn = transpose(new_fn, facts, name + "_t")
        assert new_fn.params[-1].name == ROWS_PARAM.format(param)
        new_args[k] = to_transposed(args[k], rows, columns)
        new_args.append(np.uint64(rows))
        shapes[k] = (rows, columns)
    got = _run(ctx, queue, module, new_fn, gsize, lsize, new_args)
    arrays = [k for k, a in enumerate(args) if isinstance(a, np.ndarray) and a.ndim == 1]
    for slot, k in enumerate(arrays):
        back = got[slot] if k not in shapes else from_transposed(got[slot], *shapes[k])
        np.testing.assert_array_equal(back, expected[slot], err_msg=f"argument {names[k]}")


@pytest.mark.parametrize("params", [("p",), ("v",), ("p", "v")])
def test_aos_particles(ctx, queue, params):
    rng = np.random.default_rng(1)
    n = 37
    p = rng.standard_normal(4 * n).astype(np.float32)
    v = rng.standard_normal(3 * n).astype(np.float32)
    args = [p, v, np.float32(0.25), np.int32(n)]
    _differential(ctx, queue, AOS4, "aos4", params, args, (40,), (8,), {"n": n})


def test_neighbor_list(ctx, queue):
    rng = np.random.default_rng(2)
    A, J = 37, 5
    n = rng.integers(0, 50, A * J).astype(np.int32)
    x = rng.standard_normal(50).astype(np.float32)
    args = [n, x, np.zeros(A, np.float32), np.int32(A), np.int32(J)]
    _differential(ctx, queue, NEIGHBORS, "nbr", ("n",), args, (40,), (8,), {"A": A, "J": J})


def test_kmeans_features(ctx, queue):
    rng = np.random.default_rng(3)
    npoints, nclusters, nfeatures = 37, 3, 5
    f = rng.standard_normal(npoints * nfeatures).astype(np.float32)
    c = rng.standard_normal(nclusters * nfeatures).astype(np.float32)
    args = [f, c, np.zeros(npoints, np.int32), np.int32(npoints), np.int32(nclusters),
            np.int32(nfeatures)]
    values = {"npoints": npoints, "nclusters": nclusters, "nfeatures": nfeatures}
    _differential(ctx, queue, KMEANS, "kmeans", ("f",), args, (48,), (16,), values)


def test_ell_sparse_matrix(ctx, queue):
    rng = np.random.default_rng(4)
    nrows, width = 37, 6
    cols = rng.integers(-1, 41, nrows * width).astype(np.int32)
    vals = rng.standard_normal(nrows * width).astype(np.float32)
    x = rng.standard_normal(41).astype(np.float32)
    args = [vals, cols, x, np.zeros(nrows, np.float32), np.int32(nrows), np.int32(width)]
    values = {"nrows": nrows, "width": width}
    _differential(ctx, queue, ELL, "ell", ("vals", "cols"), args, (40,), None, values)


PERIODIC = """
__constant int DX[5] = {0, 1, 0, -1, 0};
__constant int DY[5] = {0, 0, 1, 0, -1};

__kernel void stream(__global const float *src, __global float *dst,
                     int nx, int ny, float w)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= nx || y >= ny)
        return;
    int cell = y * nx + x;
    float f[5];
    for (int q = 0; q < 5; q++) {
        int xs = x - DX[q];
        int ys = y - DY[q];
        if (xs < 0) xs += nx;
        if (xs >= nx) xs -= nx;
        if (ys < 0) ys += ny;
        if (ys >= ny) ys -= ny;
        f[q] = src[(ys * nx + xs) * 5 + q];
    }
    float s = f[0] + f[1] + f[2] + f[3] + f[4];
    for (int q = 0; q < 5; q++)
        dst[cell * 5 + q] = f[q] + w * (0.2f * s - f[q]);
    dst[cell * 5] += src[((y * 7) / 7 * nx + x) * 5 + 4] * 0.5f;
}
"""

GATHERED = """
__kernel void gathered(__global const int *perm, __global float *p, __global float *out,
                       int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    int j = perm[i];
    float s = 0.0f;
    for (int k = 0; k < 3; k++)
        s += p[j * 3 + k] * (float)(k + 1);
    out[i * 2] = s;
    out[2 * perm[n - 1 - i] + 1] = p[3 * (long)perm[i] + 2];
    p[perm[i] * 3 + 1] = s - p[3 * j + 1];
}
"""


@pytest.mark.parametrize("nx,ny", [(13, 7), (16, 16), (1, 5), (9, 1)])
def test_periodic_streaming_rows_are_opaque(ctx, queue, nx, ny):
    """Lattice-Boltzmann pull streaming: the neighbor's cell ``ys*nx + xs`` comes from
    conditionals (periodic edges), so it is no polynomial; the row may be any integer value,
    the column ``q`` stays in [0, 5)."""
    _, fn = kernel_of(ctx, PERIODIC, "stream")
    src, dst = facts_of(fn, "src"), facts_of(fn, "dst")
    assert src.opaque_rows and not dst.opaque_rows
    assert isinstance(src.columns, ir.IntLit) and src.columns.value == 5
    assert "no polynomial" in src.describe()
    rng = np.random.default_rng(nx * 100 + ny)
    args = [rng.standard_normal(5 * nx * ny).astype(np.float32),
            rng.standard_normal(5 * nx * ny).astype(np.float32),
            np.int32(nx), np.int32(ny), np.float32(0.7)]
    gsize = (-(-nx // 4) * 4, -(-ny // 4) * 4)
    for params in (("src",), ("dst",), ("src", "dst")):
        _differential(ctx, queue, PERIODIC, "stream", params, args, gsize, (4, 4),
                      {"nx": nx, "ny": ny})


def test_rows_loaded_from_memory(ctx, queue):
    """A row read from another buffer (a permutation), also one widened to 64 bits, in loads
    and in stores; an output whose rows are loaded is transposed too."""
    _, fn = kernel_of(ctx, GATHERED, "gathered")
    facts = facts_of(fn, "p")
    assert facts.opaque_rows and facts.accesses == 4
    assert facts_of(fn, "out").opaque_rows
    rng = np.random.default_rng(11)
    for n in (1, 23, 64):
        perm = rng.permutation(n).astype(np.int32)
        args = [perm, rng.standard_normal(3 * n).astype(np.float32),
                rng.standard_normal(2 * n).astype(np.float32), np.int32(n)]
        for params in (("p",), ("out",), ("p", "out")):
            _differential(ctx, queue, GATHERED, "gathered", params, args, (-(-n // 8) * 8,),
                          (8,), {"n": n})


OPAQUE_REFUSED = [
    ("p[4*i + idx[i]]", "do not all split"),  # a loaded column: its range is unknown
    ("p[4*idx[i] + (i & 3)]", "do not all split"),  # the column is no polynomial
    ("p[4*(int)p[i] + 1]", "not a polynomial"),  # the row reads the buffer itself
    ("p[4*helper(i) + 1]", "not a polynomial"),  # a user function
    ("p[4*(i++) + 1]", "not a polynomial"),  # an effect
    ("p[4u*(uint)idx[i] + 1u]", "may wrap"),  # uint arithmetic on a value of unknown range
]


@pytest.mark.parametrize("use,reason", OPAQUE_REFUSED)
def test_opaque_rows_refused_with_a_reason(ctx, use, reason):
    source = f"""
    int helper(int i) {{ return i / 2; }}
    __kernel void k(__global float *p, __global const int *idx, __global float *out) {{
        int i = get_global_id(0);
        out[i] = {use} + p[4*(i/3) + 2];
    }}"""
    _, fn = kernel_of(ctx, source, "k")
    got = transposable(fn, "p")
    assert isinstance(got, str) and reason in got, got


def test_opaque_rows_accept_a_division(ctx, queue):
    source = """__kernel void k(__global float *p, __global const int *idx, int n) {
        int i = get_global_id(0);
        if (i >= n) return;
        if (i % 2) p[4*(i/2) + 1] += p[4*idx[i] + 3] * 2.0f;
        else p[4*(i/2)] -= p[4*idx[i] + 3]; }"""
    _, fn = kernel_of(ctx, source, "k")
    assert facts_of(fn, "p").opaque_rows
    rng = np.random.default_rng(12)
    n = 19
    args = [rng.standard_normal(4 * 10).astype(np.float32),
            rng.integers(0, 10, n).astype(np.int32), np.int32(n)]
    _differential(ctx, queue, source, "k", ("p",), args, (24,), (8,), {"n": n})


# ---------------------------------------------------------------- reuse distance


def test_reuse_distance_picks_the_layout_for_the_order(ctx):
    _, fn = kernel_of(ctx, NEIGHBORS, "nbr")
    facts = facts_of(fn, "n")
    values = {"A": 1024, "J": 32}
    serial = ExecutionOrder(SERIAL, 1)
    vector = ExecutionOrder(DATA_PARALLEL, 8)
    size, local = (1024, 1, 1), (64, 1, 1)
    ser_orig = reuse_distance(fn, "n", serial, size, local, values, facts, False)
    ser_tr = reuse_distance(fn, "n", serial, size, local, values, facts, True)
    assert ser_tr.mean < ser_orig.mean, (ser_orig.describe(), ser_tr.describe())
    vec_orig = reuse_distance(fn, "n", vector, size, local, values, facts, False)
    vec_tr = reuse_distance(fn, "n", vector, size, local, values, facts, True)
    assert vec_orig.mean < vec_tr.mean, (vec_orig.describe(), vec_tr.describe())
    assert ser_orig.accesses > 0 and ser_orig.lines > 0 and "lines" in ser_orig.describe()
    move, reason = better_layout(fn, "n", serial, size, local, values, facts)
    assert move and f"{ser_orig.mean:.1f}" in reason
    move, reason = better_layout(fn, "n", vector, size, local, values, facts)
    assert not move and "keep" in reason


def test_reuse_distance_of_structures(ctx):
    _, fn = kernel_of(ctx, AOS4, "aos4")
    facts = facts_of(fn, "p")
    values = {"n": 4096}
    size, local = (4096, 1, 1), (64, 1, 1)
    # one work-item reads its whole structure from one line: serially, the packed structure
    # has nothing left to gain
    serial = ExecutionOrder(SERIAL, 1)
    packed = reuse_distance(fn, "p", serial, size, local, values, facts, False)
    split = reuse_distance(fn, "p", serial, size, local, values, facts, True)
    assert packed.mean < split.mean, (packed.describe(), split.describe())
    move, reason = better_layout(fn, "p", serial, size, local, values, facts)
    assert not move, reason


SHIFTED = """
__kernel void shifted(__global const float *a, __global float *out, int A, int J)
{
    int t = get_global_id(0);
    float s = 0.0f;
    for (int j = 0; j < J; j++)
        s += a[(j + 1)*A + t + 1] - a[j*A + t + 1] * 0.5f;
    out[t] = s;
}
"""


def test_column_with_an_offset(ctx, queue):
    """Column part ``gid + 1``: the launch must stop one short of the columns."""
    _, fn = kernel_of(ctx, SHIFTED, "shifted")
    facts = facts_of(fn, "a")
    A, J = 37, 4
    assert facts.holds((36, 1, 1), (0, 0, 0), {"A": A, "J": J}, A * (J + 1))
    assert not facts.holds((37, 1, 1), (0, 0, 0), {"A": A, "J": J}, A * (J + 1))
    rng = np.random.default_rng(5)
    args = [rng.standard_normal(A * (J + 1)).astype(np.float32), np.zeros(36, np.float32),
            np.int32(A), np.int32(J)]
    _differential(ctx, queue, SHIFTED, "shifted", ("a",), args, (36,), (4,), {"A": A, "J": J})


ROWMAJOR = """
__kernel void rows(__global const float *vals, __global const int *cols,
                   __global const float *x, __global float *y, int nrows, int width)
{
    int row = get_global_id(0);
    if (row >= nrows) return;
    float s = 0.0f;
    for (int j = 0; j < width; j++)
        s += vals[row*width + j] * x[cols[row*width + j]];
    y[row] = s;
}

__kernel void fields(__global float *pos, __global const float *vel, int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    for (int d = 0; d < 3; d++)
        pos[3*i + d] += vel[3*i + d] * (float)(d + 1);
}
"""


POINTERS = """
__kernel void deref(__global float *p, int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float w = *(p + 2*i);
    *(2*i + 1 + p) = w * 3.0f + *p;
}
"""


def test_dereferences_are_indices(ctx, queue):
    _, fn = kernel_of(ctx, POINTERS, "deref")
    facts = facts_of(fn, "p")
    assert facts.accesses == 3 and isinstance(facts.columns, ir.IntLit)
    rng = np.random.default_rng(7)
    args = [rng.standard_normal(2 * 37).astype(np.float32), np.int32(37)]
    _differential(ctx, queue, POINTERS, "deref", ("p",), args, (40,), (8,), {"n": 37})


def test_column_from_a_loop_counter(ctx, queue):
    """The other direction: a row-major matrix walked by a counter becomes column-major."""
    _, fn = kernel_of(ctx, ROWMAJOR, "rows")
    facts = facts_of(fn, "vals")
    assert isinstance(facts.columns, ir.VarRef) and facts.columns.name == "width"
    assert facts.holds((40, 1, 1), (0, 0, 0), {"nrows": 37, "width": 6}, 37 * 6)
    rng = np.random.default_rng(6)
    nrows, width = 37, 6
    args = [rng.standard_normal(nrows * width).astype(np.float32),
            rng.integers(0, 41, nrows * width).astype(np.int32),
            rng.standard_normal(41).astype(np.float32), np.zeros(nrows, np.float32),
            np.int32(nrows), np.int32(width)]
    _differential(ctx, queue, ROWMAJOR, "rows", ("vals", "cols"), args, (40,), (8,),
                  {"nrows": nrows, "width": width})
    _, fields = kernel_of(ctx, ROWMAJOR, "fields")
    pos = facts_of(fields, "pos")
    assert isinstance(pos.columns, ir.IntLit) and pos.columns.value == 3
    n = 37
    args = [rng.standard_normal(3 * n).astype(np.float32),
            rng.standard_normal(3 * n).astype(np.float32), np.int32(n)]
    _differential(ctx, queue, ROWMAJOR, "fields", ("pos", "vel"), args, (40,), (8,), {"n": n})


def test_counter_range_must_fit_the_columns(ctx):
    source = """__kernel void k(__global float *p, int K) {
        int i = get_global_id(0);
        for (int d = 0; d < K; d++) p[4*i + d] = 0.0f; }"""
    _, fn = kernel_of(ctx, source, "k")
    facts = facts_of(fn, "p")
    assert facts.holds((8, 1, 1), (0, 0, 0), {"K": 4}, 32)
    assert facts.holds((8, 1, 1), (0, 0, 0), {"K": 0}, 32)  # no iteration, no access
    assert not facts.holds((8, 1, 1), (0, 0, 0), {"K": 5}, 32)


STRUCTS = """
typedef struct { float x, y, z, w; } Particle;
struct Pair { int a; float b; };

__kernel void move(__global Particle *p, __global const float *v, float dt, int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    p[i].x += dt * v[i] * p[i].w;
    (p + i)->y -= dt * p[i].w;
    if (i == 0) p->z = 1.0f;
}

__kernel void whole(__global Particle *p, __global struct Pair *q, int n)
{
    int i = get_global_id(0);
    Particle t = p[i];
    t.x = 1.0f;
    p[i] = t;
    q[i].a = 1;
}
"""


def test_structures_of_one_scalar_type(ctx, queue):
    module, fn = kernel_of(ctx, STRUCTS, "move")
    facts = facts_of(fn, "p")
    assert isinstance(facts.columns, ir.IntLit) and facts.columns.value == 4
    assert str(facts.element) == "float" and facts.accesses == 5
    moved = transpose(fn, facts, "move_t")
    assert str(moved.params[0].type.pointee) == "float"  # type: ignore[attr-defined]
    rng = np.random.default_rng(8)
    n = 37
    p = rng.standard_normal(4 * n).astype(np.float32)
    v = rng.standard_normal(n).astype(np.float32)
    expected = _run(ctx, queue, module, fn, (40,), (8,), [p, v, np.float32(0.5), np.int32(n)])
    got = _run(ctx, queue, module, moved, (40,), (8,),
               [to_transposed(p, n, 4), v, np.float32(0.5), np.int32(n), np.uint64(n)])
    np.testing.assert_array_equal(from_transposed(got[0], n, 4), expected[0])
    _, whole = kernel_of(ctx, STRUCTS, "whole")
    assert "whole structures" in transposable(whole, "p")  # type: ignore[operator]
    assert "not one scalar type" in transposable(whole, "q")  # type: ignore[operator]
    serial = ExecutionOrder(SERIAL, 1)
    move, reason = better_layout(fn, "p", serial, (1024, 1, 1), (64, 1, 1), {"n": 1024}, facts)
    assert not move, reason


def test_stack_distances_count_distinct_lines_between_reuses():
    from ppcl.compiler.analysis.reuse import stack_distances

    assert stack_distances([1, 2, 3, 1]) == (2, 1)
    assert stack_distances([1, 1, 1]) == (0, 2)
    assert stack_distances([1, 2, 2, 2, 1]) == (0 + 0 + 1, 3)
    assert stack_distances([5, 6, 7]) == (0, 0)


@pytest.mark.parametrize("seed", range(20))
def test_decompose_splits_exactly(seed):
    from ppcl.compiler.analysis.affine import Poly
    from ppcl.compiler.analysis.layout import decompose

    rng = np.random.default_rng(seed)
    columns = int(rng.integers(2, 9))
    row = Poly.var("gid0").scale(int(rng.integers(0, 4))) + Poly.var("j") \
        + Poly.const(int(rng.integers(-3, 4)))
    col = int(rng.integers(0, columns))
    literal = row.scale(columns) + Poly.const(col)
    split = decompose(literal, columns)
    assert split is not None and split[1] == Poly.const(col)
    assert split[0].scale(columns) + split[1] == literal
    # C a scalar argument, column part an id plus a literal
    param = row * Poly.var("A") + Poly.var("gid1") + Poly.const(col)
    split = decompose(param, "A")
    assert split is not None and split[0] * Poly.var("A") + split[1] == param
    assert split[1] == Poly.var("gid1") + Poly.const(col)
    # two varying column atoms do not split
    assert decompose(param + Poly.var("gid2"), "A") is None


RODINIA_KMEANS = """
__kernel void kmeans_uint(__global const float *feature, __global const float *clusters,
                          __global int *membership, int npoints, int nclusters, int nfeatures)
{
    unsigned int point_id = get_global_id(0);
    int index = 0;
    if (point_id < npoints) {
        float min_dist = 3.0e38f;
        for (int i = 0; i < nclusters; i++) {
            float dist = 0.0f;
            for (int l = 0; l < nfeatures; l++) {
                float d = feature[l * npoints + point_id] - clusters[i * nfeatures + l];
                dist += d * d;
            }
            if (dist < min_dist) { min_dist = dist; index = i; }
        }
        membership[point_id] = index;
    }
}
"""


def test_unsigned_index_arithmetic_must_not_wrap(ctx, queue):
    """Rodinia's k-means spells the point as ``unsigned int``: the index is computed modulo
    2^32, which is the polynomial only while it stays below 2^32."""
    _, fn = kernel_of(ctx, RODINIA_KMEANS, "kmeans_uint")
    facts = facts_of(fn, "feature")
    assert isinstance(facts.columns, ir.VarRef) and facts.columns.name == "npoints"
    assert facts.wraps
    values = {"npoints": 37, "nclusters": 3, "nfeatures": 5}
    assert facts.holds((48, 1, 1), (0, 0, 0), values, 37 * 5)
    big = {"npoints": 2 ** 30, "nclusters": 3, "nfeatures": 5}  # l*npoints passes 2^32
    assert not facts.holds((2 ** 30, 1, 1), (0, 0, 0), big, 2 ** 30 * 5)
    assert facts.holds((2 ** 30, 1, 1), (0, 0, 0), dict(big, nfeatures=3), 2 ** 30 * 3)
    rng = np.random.default_rng(9)
    f = rng.standard_normal(37 * 5).astype(np.float32)
    c = rng.standard_normal(3 * 5).astype(np.float32)
    args = [f, c, np.zeros(37, np.int32), np.int32(37), np.int32(3), np.int32(5)]
    _differential(ctx, queue, RODINIA_KMEANS, "kmeans_uint", ("feature",), args, (48,), (16,),
                  values)


# ---------------------------------------------------------------- vector elements

VECTORS = """
__kernel void shade(__global const T *hdr, __global T *out, __global T *acc, int n, float k)
{
    int i = get_global_id(0);
    if (i >= n) return;
    T px = hdr[i];
    float l = 0.25f * px.s0 + 0.5f * hdr[i].s1 + hdr[n - 1 - i].s1 * px.s0;
    out[i] = px * k + hdr[n - 1 - i];
    out[i].s1 = l;
    acc[i] += px;
    acc[i].s0 -= out[i].s1;
    acc[i].s10 = out[i].s01 * 0.5f + hdr[i].s10;
    acc[i] *= 0.75f;
}
"""

REFUSED = """
__kernel void refused(__global float4 *a, __global float4 *b, __global float4 *c,
                      __global float4 *d, __global float4 *e, __global float4 *f, int n)
{
    int i = get_global_id(0);
    float4 t;
    b[i++] = (float4)(1.0f);
    c[i] = vload4(0, (__global float *)d);
    t = e[i] = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
    __global float4 *g = &f[i];
    a[i].x = t.x + g[1].y;
}
"""


def _components_of(fn: ir.Function, param: str) -> ir.Function:
    scalar = vector_components(fn, param)
    assert isinstance(scalar, ir.Function), scalar
    return scalar


@pytest.mark.parametrize("width", [2, 3, 4, 8])
@pytest.mark.parametrize("n,gsize,lsize", [(37, (40,), (8,)), (53, (53,), None),
                                           (5, (16,), (16,)), (67, (128,), (64,))])
def test_vector_elements_read_as_components_then_transposed(ctx, queue, width, n, gsize,
                                                            lsize):
    module, fn = kernel_of(ctx, VECTORS.replace("T ", f"float{width} "), "shade")
    storage = 4 if width == 3 else width
    rng = np.random.default_rng(n * 10 + width)
    arrays = [rng.standard_normal(storage * n).astype(np.float32) for _ in range(3)]
    args = [*arrays, np.int32(n), np.float32(0.75)]
    # a 3-component store leaves the padding unspecified: compare the components alone
    real = np.arange(storage * n) % storage < width
    expected = [a[real] for a in _run(ctx, queue, module, fn, gsize, lsize, args)]
    # the same kernel on the same bytes, each vector read and written component by component
    scalar = fn
    for param in ("hdr", "out", "acc"):
        scalar = _components_of(scalar, param)
    for got, want in zip(_run(ctx, queue, module, scalar, gsize, lsize, args), expected):
        np.testing.assert_array_equal(got[real], want)
    # then each buffer as the structure of arrays: one column per component, one row a vector
    moved, moved_args, g3 = fn, list(args), tuple(gsize) + (1, 1)
    for k, param in enumerate(("hdr", "out", "acc")):
        moved = _components_of(moved, param)
        facts = facts_of(moved, param)
        assert isinstance(facts.columns, ir.IntLit) and facts.columns.value == storage
        assert facts.holds(g3[:3], (0, 0, 0), {"n": n}, storage * n)
        moved = transpose(moved, facts, "shade_t")
        moved_args[k] = to_transposed(args[k], n, storage)
        moved_args.append(np.uint64(n))
    got = _run(ctx, queue, module, moved, gsize, lsize, moved_args)
    for k in range(3):
        back = from_transposed(got[k], n, storage)
        np.testing.assert_array_equal(back[real], expected[k])
        # the layout round trip is exact, padding included
        np.testing.assert_array_equal(from_transposed(moved_args[k], n, storage), args[k])


def test_vector_elements_refused_with_a_reason(ctx):
    _, fn = kernel_of(ctx, REFUSED, "refused")
    assert isinstance(vector_components(fn, "a"), ir.Function)
    assert "once per component" in vector_components(fn, "b")  # type: ignore[operator]
    assert "used other than" in vector_components(fn, "d")  # type: ignore[operator]
    assert "does not point to vectors" in vector_components(fn, "n")  # type: ignore[operator]
    for param in ("e", "f"):
        assert "stored or have their address taken" in vector_components(fn, param)  # type: ignore[operator]


PIXELS = """
__kernel void scale(__global const float4 *hdr, __global float4 *out, int n, float k)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float l = 0.25f * hdr[i].x;
    for (int j = 0; j < 4; j++)
        l = l * k + 0.5f * hdr[i].y;
    out[i].x = l + hdr[i].w;
}
"""


def test_reuse_distance_of_vectors(ctx):
    _, fn = kernel_of(ctx, PIXELS, "scale")
    scalar = _components_of(fn, "hdr")
    facts = facts_of(scalar, "hdr")
    size, local, values = (4096, 1, 1), (64, 1, 1), {"n": 4096}
    # lanes along x read two components of their vector again and again: those of
    # neighboring lanes are interleaved with the others, so the structure of arrays reuses
    # each line sooner
    vector = ExecutionOrder(DATA_PARALLEL, 8)
    move, reason = better_layout(scalar, "hdr", vector, size, local, values, facts, 4 * 4096)
    assert move, reason
    # a work-item after another reads its vector from one line: nothing to gain
    move, reason = better_layout(scalar, "hdr", ExecutionOrder(SERIAL, 1), size, local, values,
                                 facts, 4 * 4096)
    assert not move, reason
