"""Holistic vectorization (transforms/vectorize.py): the merged kernel computes what the
original computed, on random data and awkward sizes, for every vector width; refusals say why.

Integer results must match exactly. Float results are compared to within a few ULPs: the
vector forms of math builtins (``exp``, ``sin`` on ``float8``) may take a different code path
from the scalar ones on a device, and OpenCL only bounds each to the same ULP error, not to
the same bits. Plain arithmetic (``+ - *``) is done in the same order per lane, so in practice
it matches exactly too.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ppcl as cl
from ppcl.compiler.analysis.order import DATA_PARALLEL, SERIAL, ExecutionOrder
from ppcl.compiler.codegen.opencl import print_opencl
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.transforms.vectorize import (
    SIZE_PARAM,
    Refused,
    choose_width,
    vectorize,
    vectorize_facts,
)

mf = cl.mem_flags
WIDTHS = (2, 4, 8, 16)
SIZES = (1, 7, 37, 1000)


@pytest.fixture(scope="module")
def ctx():
    return cl.Context()


@pytest.fixture(scope="module")
def queue(ctx):
    return cl.CommandQueue(ctx)


def kernel_of(ctx, source: str, name: str) -> tuple[cl.Program, ir.Function]:
    prog = cl.Program(ctx, source).build()
    fn = prog._module.function(name)
    assert fn is not None and fn.is_kernel
    return prog, fn


def merged_program(ctx, prog: cl.Program, fn: ir.Function, width: int) -> cl.Program:
    merged = vectorize(fn, width, fn.name + "_v")
    module = prog._module
    decls = tuple(d for d in module.decls
                  if not (isinstance(d, ir.Function) and d.is_kernel)) + (merged,)
    source = print_opencl(dataclasses.replace(module, decls=decls))
    return cl.Program(ctx, source).build()


def run(ctx, queue, prog, name, gsize, lsize, args, offset=None):
    """Launches ``name`` on copies of ``args`` (arrays become buffers); the arrays after."""
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a.copy())
            if isinstance(a, np.ndarray) else a for a in args]
    kernel = getattr(prog, name)
    kernel.set_args(*bufs)
    cl.enqueue_nd_range_kernel(queue, kernel, gsize, lsize, global_work_offset=offset)
    out = []
    for a, b in zip(args, bufs):
        if isinstance(a, np.ndarray):
            host = np.empty_like(a)
            cl.enqueue_copy(queue, host, b)
            out.append(host)
    return out


def merged_range(gsize, lsize, width, queries_group_x):
    g0 = -(-gsize[0] // width)
    if lsize is None:
        return (g0,) + tuple(gsize[1:]), None
    l0 = lsize[0] // width if queries_group_x else lsize[0]
    g0 = -(-g0 // l0) * l0
    return (g0,) + tuple(gsize[1:]), (l0,) + tuple(lsize[1:])


def check(ctx, queue, source, name, gsize, args, width, lsize=None, offset=None, maxulp=0):
    prog, fn = kernel_of(ctx, source, name)
    facts = vectorize_facts(fn)
    assert facts.possible, facts.reason
    expected = run(ctx, queue, prog, name, gsize, lsize, args, offset)
    merged = merged_program(ctx, prog, fn, width)
    mg, ml = merged_range(gsize, lsize, width, facts.queries_group_x)
    got = run(ctx, queue, merged, name + "_v", mg, ml, list(args) + [np.uint64(gsize[0])],
              offset)
    for e, g in zip(expected, got):
        if e.dtype.kind == "f" and maxulp:
            np.testing.assert_array_max_ulp(g, e, maxulp=maxulp)
        else:
            np.testing.assert_array_equal(g, e)
    return facts


def rand_f(rng, n):
    return rng.uniform(-2, 2, n).astype(np.float32)


SAXPY = """__kernel void saxpy(__global float *y, __global const float *x, float a, int n) {
    int i = get_global_id(0);
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("g", SIZES)
def test_saxpy(ctx, queue, width, g):
    rng = np.random.default_rng(g + width)
    n = max(1, g - 3)  # the guard cuts inside the last vector
    facts = check(ctx, queue, SAXPY, "saxpy", (g,),
                  [rand_f(rng, g), rand_f(rng, g), np.float32(1.5), np.int32(n)], width)
    assert facts.contiguous == 3 and facts.gathers == 0
    assert "2 contiguous loads, 1 contiguous store" in facts.reason


POLY = """__kernel void poly(__global float *out, __global const float *x) {
    size_t i = get_global_id(0);
    float v = x[i];
    float p = 3.0f * v * v - 2.0f * v + 0.5f;
    out[i] = exp(v) * sin(p) + sqrt(fabs(v)) + mad(v, p, 1.0f) + fmin(v, p);
}"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("g", SIZES)
def test_transcendental(ctx, queue, width, g):
    rng = np.random.default_rng(g)
    check(ctx, queue, POLY, "poly", (g,), [np.zeros(g, np.float32), rand_f(rng, g)], width,
          maxulp=4)


ROWS = """__kernel void rows(__global float *out, __global const float *in,
                       __global const float *scale, int w) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    float s = scale[y];
    out[y * w + x] += in[y * w + x] * s + (float)y;
}"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("g", SIZES)
def test_2d_uniform_rows(ctx, queue, width, g):
    rng = np.random.default_rng(g)
    h = 3
    facts = check(ctx, queue, ROWS, "rows", (g, h),
                  [rand_f(rng, g * h), rand_f(rng, g * h), rand_f(rng, h), np.int32(g)],
                  width)
    assert "1 uniform access" in facts.reason


INTS = """__kernel void ints(__global int *c, __global const int *a, __global const int *b,
                       uint n) {
    uint i = get_global_id(0);
    if (i >= n) return;
    int x = a[i], y = b[i];
    int m = x > y ? x : y;
    int t = (x < 0) + (x == y) * 2 + !y + (x > 0 && y > 0) * 4;
    c[i] = m * 3 + t + select(x, y, x < y) + min(x, y) + (x >> 2) + (int)(i % 5u) + abs(x);
}"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("g", SIZES)
def test_integer_tail_guard_exact(ctx, queue, width, g):
    rng = np.random.default_rng(g)
    a = rng.integers(-50, 50, g).astype(np.int32)
    b = a.copy()
    b[::3] = rng.integers(-50, 50, len(b[::3]))
    check(ctx, queue, INTS, "ints", (g,), [np.zeros(g, np.int32), a, b, np.uint32(max(g - 5, 0))],
          width)


COLUMNS = """__kernel void columns(__global float *out, __global const float *m,
                          __global const float *v, int rows, int cols) {
    int x = get_global_id(0);
    if (x >= cols) return;
    float acc = 0.0f;
    for (int j = 0; j < rows; j++) {
        acc += m[j * cols + x] * v[j];
    }
    out[x] = acc;
}"""

MATVEC = """__kernel void matvec(__global float *out, __global const float *m,
                         __global const float *v, int cols) {
    int x = get_global_id(0);
    float acc = 0.0f;
    for (int j = 0; j < cols; j++) {
        acc += m[x * cols + j] * v[j];
    }
    out[2 * x] -= acc;
}"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("g", SIZES)
def test_uniform_loop_contiguous_and_gathered(ctx, queue, width, g):
    rng = np.random.default_rng(g)
    rows = 5
    facts = check(ctx, queue, COLUMNS, "columns", (g,),
                  [np.zeros(g, np.float32), rand_f(rng, rows * g), rand_f(rng, rows),
                   np.int32(rows), np.int32(g)], width)
    assert facts.contiguous == 2 and facts.gathers == 0
    facts = check(ctx, queue, MATVEC, "matvec", (g,),
                  [np.zeros(2 * g, np.float32), rand_f(rng, rows * g), rand_f(rng, rows),
                   np.int32(rows)], width)
    # m[x * cols + j] (stride cols), and out[2 * x] -= read and written lane by lane
    assert facts.gathers == 3


DATA_GUARD = """__kernel void data_guard(__global float *y, __global const float *x, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float v = x[i];
    if (v < -1.5f) return;
    y[i] = v * 2.0f;
}"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("g", SIZES)
def test_guards_that_read_memory(ctx, queue, width, g):
    """A guard on loaded data is a tail guard too: vectors where some lane leaves run the
    scalar loop, the others the vector code."""
    rng = np.random.default_rng(g)
    facts = check(ctx, queue, DATA_GUARD, "data_guard", (g,),
                  [np.zeros(g, np.float32), rand_f(rng, g), np.int32(g - 2)], width)
    assert "2 tail guards" in facts.reason


LOCAL = """__kernel void local_ids(__global int *out) {
    size_t g = get_global_id(0);
    out[g] = (int)(get_local_id(0) * 1000 + get_group_id(0) * 10 + get_local_size(0)
                   + get_global_size(0) * 100000);
}"""


@pytest.mark.parametrize("width", (2, 4, 8, 16))
def test_local_and_group_ids_with_narrower_groups(ctx, queue, width):
    g = 64
    facts = check(ctx, queue, LOCAL, "local_ids", (g,), [np.zeros(g, np.int32)], width,
                  lsize=(16,))
    assert facts.queries_group_x


def test_global_offset(ctx, queue):
    g = 37
    rng = np.random.default_rng(1)
    check(ctx, queue, SAXPY, "saxpy", (g,),
          [rand_f(rng, g + 5), rand_f(rng, g + 5), np.float32(2.0), np.int32(g + 3)], 4,
          offset=(5,))


UNIFORM_VECTOR = """__kernel void k(__global float *out, __global const float *x, float c) {
    size_t i = get_global_id(0);
    float4 w = (float4)(c, -2.0f, 3.0f, 4.0f) * 2.0f;
    out[i] = x[i] * w.x + w.y;
}"""


def test_explicit_vectors_uniform_along_x_vectorize(ctx, queue):
    rng = np.random.default_rng(2)
    for width in (4, 16):
        facts = check(ctx, queue, UNIFORM_VECTOR, "k", (37,),
                      [np.zeros(37, np.float32), rand_f(rng, 37), np.float32(1.5)], width)
        assert facts.explicit_width == 4


COMPLEX = """__kernel void cplx(__global float2 *out, __global const float2 *a,
                       __global const float *s, __global int2 *flags, __global float *o2,
                       float k) {
    int i = get_global_id(0);
    float2 v = a[i];
    float2 w = (float2)(v.x * v.x - v.y * v.y, 2.0f * v.x * v.y);
    float t = s[i];
    float2 u = v;
    u.y = t * 2.0f;
    u.x += k;
    out[i] = w * t + v.yx + (float2)(k) + fmin(v, t) + u;
    flags[i] = v > w;
    vstore2(vload2(i, s) * k, i, o2);
}"""


@pytest.mark.parametrize("width", (2, 4, 8))
@pytest.mark.parametrize("g", SIZES)
def test_explicit_float2_is_widened(ctx, queue, width, g):
    rng = np.random.default_rng(g)
    facts = check(ctx, queue, COMPLEX, "cplx", (g,),
                  [np.zeros(2 * g, np.float32), rand_f(rng, 2 * g), rand_f(rng, 2 * g),
                   np.zeros(2 * g, np.int32), np.zeros(2 * g, np.float32), np.float32(0.75)],
                  width)
    assert facts.explicit_width == 2
    assert facts.contiguous == 6 and facts.gathers == 0


def test_explicit_float2_refuses_more_than_16_lanes(ctx):
    _, fn = kernel_of(ctx, COMPLEX, "cplx")
    with pytest.raises(Refused, match="16"):
        vectorize(fn, 16, "cplx_v")
    facts = vectorize_facts(fn)
    roomy = ExecutionOrder(DATA_PARALLEL, 16, vector_bytes=64, registers=1024)
    assert choose_width(facts, roomy, 4)[0] == 8  # 16 float lanes / explicit width 2


SPLAT8 = """__kernel void k(__global float8 *y, __global const float *x) {
    int i = get_global_id(0);
    y[i] = x[i] * (float8)(1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f);
}"""


def test_explicit_width_bounds_the_lanes(ctx, queue):
    """A varying scalar splat into float8 fits 2 lanes (16 floats), not 4."""
    rng = np.random.default_rng(3)
    facts = check(ctx, queue, SPLAT8, "k", (37,), [np.zeros(8 * 37, np.float32),
                                                  rand_f(rng, 37)], 2)
    assert facts.explicit_width == 8
    _, fn = kernel_of(ctx, SPLAT8, "k")
    with pytest.raises(Refused, match="16 lanes"):
        vectorize(fn, 4, "k_v")


REFUSED = {
    "divergent": ("""__kernel void k(__global float *y, __global const float *x) {
        int i = get_global_id(0);
        if (x[i] > 0.0f) { y[i] = 1.0f; }
        y[i] += 2.0f;
    }""", "condition varies along x"),
    "atomic": ("""__kernel void k(__global int *c, __global const int *x) {
        int i = get_global_id(0);
        atomic_add(c, x[i]);
    }""", "atomic_add"),
    "barrier": ("""__kernel void k(__global float *y, __local float *t) {
        int i = get_local_id(0);
        t[i] = y[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        y[get_global_id(0)] = t[0];
    }""", "barrier"),
    "float3": ("""__kernel void k(__global float *y, __global const float *x) {
        int i = get_global_id(0);
        float3 v = vload3(i, x);
        vstore3(v * v, i, y);
    }""", "vload3"),
    "division under select": ("""__kernel void k(__global int *y, __global const int *x) {
        int i = get_global_id(0);
        int d = x[i];
        y[i] = d != 0 ? 100 / d : 0;
    }""", "division in a branch"),
    "uniform store of varying value": ("""__kernel void k(__global int *y, __global const int *x) {
        int i = get_global_id(0);
        y[0] = x[i];
    }""", "stored to an address uniform"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refusals_have_reasons(ctx, case):
    source, reason = REFUSED[case]
    _, fn = kernel_of(ctx, source, "k")
    facts = vectorize_facts(fn)
    assert not facts.possible
    assert reason in facts.reason
    if case == "float3":
        assert facts.explicit_width == 3
    with pytest.raises(Refused):
        vectorize(fn, 4, "k_v")
    width, why = choose_width(facts, ExecutionOrder(SERIAL, 1), 4)
    assert width == 1 and facts.reason in why


def test_choose_width_follows_algorithm_4(ctx):
    _, fn = kernel_of(ctx, SAXPY, "saxpy")
    facts = vectorize_facts(fn)
    gpu_like = ExecutionOrder(DATA_PARALLEL, 32, vector_bytes=16, registers=64, warp=32)
    assert choose_width(facts, gpu_like, 4)[0] == 4
    assert choose_width(facts, gpu_like, 8)[0] == 2
    avx512 = ExecutionOrder(DATA_PARALLEL, 16, vector_bytes=64, registers=64)
    assert choose_width(facts, avx512, 4)[0] == 16
    tight = dataclasses.replace(avx512, registers=2 * facts.registers_per_item)
    assert choose_width(facts, tight, 4)[0] == 2
    cpu = dataclasses.replace(avx512, vectorizes_items=True)
    width, why = choose_width(facts, cpu, 4)
    assert width == 1 and "already vectorizes" in why
    explicit = dataclasses.replace(facts, explicit_width=4)
    assert choose_width(explicit, avx512, 4)[0] == 4
    assert choose_width(explicit, cpu, 4)[0] == 4


def test_size_parameter_is_appended(ctx):
    _, fn = kernel_of(ctx, SAXPY, "saxpy")
    merged = vectorize(fn, 8, "saxpy_v")
    assert merged.params[-1].name == SIZE_PARAM and merged.params[:-1] == fn.params
    text = print_opencl(merged)
    assert "vload8(0" in text and "vstore8(" in text


def vector_path_only(merged: ir.Function) -> ir.Function:
    """The merged kernel without its scalar fallback loop (the body's last statement)."""
    assert merged.body is not None and isinstance(merged.body.stmts[-1], ir.For)
    return dataclasses.replace(merged, body=dataclasses.replace(
        merged.body, stmts=merged.body.stmts[:-1]))


VECTOR_CASES = {
    "saxpy": (SAXPY, lambda rng, g: [rand_f(rng, g), rand_f(rng, g), np.float32(1.5),
                                     np.int32(g)], 1),
    "poly": (POLY, lambda rng, g: [np.zeros(g, np.float32), rand_f(rng, g)], 1),
    "ints": (INTS, lambda rng, g: [np.zeros(g, np.int32), rng.integers(-9, 9, g, np.int32),
                                   rng.integers(-9, 9, g, np.int32), np.uint32(g)], 1),
    "columns": (COLUMNS, lambda rng, g: [np.zeros(g, np.float32), rand_f(rng, 3 * g),
                                         rand_f(rng, 3), np.int32(3), np.int32(g)], 1),
    "matvec": (MATVEC, lambda rng, g: [np.zeros(2 * g, np.float32), rand_f(rng, 3 * g),
                                       rand_f(rng, 3), np.int32(3)], 1),
    "rows": (ROWS, lambda rng, g: [np.zeros(2 * g, np.float32), rand_f(rng, 2 * g),
                                   rand_f(rng, 2), np.int32(g)], 2),
}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("case", sorted(VECTOR_CASES))
def test_whole_vectors_need_no_fallback(ctx, queue, case, width):
    """With every lane inside the range and the guards, the vector code alone computes the
    whole result: the fallback loop is not what makes the other tests pass."""
    source, make_args, dims = VECTOR_CASES[case]
    g = 12 * width
    gsize = (g,) if dims == 1 else (g, 2)
    args = make_args(np.random.default_rng(width), g)
    prog, fn = kernel_of(ctx, source, case)
    expected = run(ctx, queue, prog, case, gsize, None, args)
    merged = vector_path_only(vectorize(fn, width, case + "_v"))
    decls = tuple(d for d in prog._module.decls
                  if not (isinstance(d, ir.Function) and d.is_kernel)) + (merged,)
    built = cl.Program(ctx, print_opencl(dataclasses.replace(prog._module, decls=decls))).build()
    got = run(ctx, queue, built, case + "_v", (g // width,) + gsize[1:], None,
              list(args) + [np.uint64(g)])
    for e, r in zip(expected, got):
        np.testing.assert_array_max_ulp(r, e, maxulp=4) if e.dtype.kind == "f" \
            else np.testing.assert_array_equal(r, e)


WRAP = """__kernel void wrap(__global uint *out, __global const uint *in) {
    uint i = get_global_id(0);
    uint z = get_global_id(0) - get_global_id(0);
    out[i] = in[(uchar)i] * 3u + in[z + 3u] + (uint)(ushort)(i * 300u);
}"""


@pytest.mark.parametrize("width", WIDTHS)
def test_narrow_conversions_end_a_stride_and_cancelled_strides_are_uniform(ctx, queue, width):
    """``in[(uchar)i]`` wraps at 256, so it is gathered, never one vector load; ``i - i`` is
    uniform, though computed from varying values."""
    g = 600
    rng = np.random.default_rng(width)
    facts = check(ctx, queue, WRAP, "wrap", (g,),
                  [np.zeros(g, np.uint32), rng.integers(0, 1000, 256, np.uint32)], width)
    assert facts.gathers == 1 and facts.contiguous == 1


# generated kernels (ppcl.fuzz, free of undefined behaviour) that vectorize: (seed, mode)
FUZZ_CASES = ((2, "vector"), (13, "vector"), (20, "plain"), (26, "vector"), (29, "vector"),
              (45, "plain"), (96, "vector"))


@pytest.mark.parametrize("seed, mode", FUZZ_CASES)
def test_generated_kernels(ctx, queue, seed, mode):
    from ppcl.fuzz.generate import generate
    from ppcl.fuzz.run import _ACC_START, input_data

    program = generate(seed, mode)
    data = input_data(program)
    g, local = program.global_size, program.local_size
    args = [np.zeros_like(data), data, np.uint32(data.size), _ACC_START.copy()]
    prog, fn = kernel_of(ctx, program.source, "fuzz")
    explicit = vectorize_facts(fn).explicit_width
    widths = [w for w in WIDTHS if local % w == 0 and w * explicit <= 16]
    assert widths
    for width in widths:
        facts = check(ctx, queue, program.source, "fuzz", (g,), args, width, lsize=(local,))
        assert facts.queries_group_x


@pytest.mark.parametrize("width", (2, 4, 8, 16))
def test_required_group_size_narrows_with_the_group(ctx, queue, width):
    source = LOCAL.replace("__kernel void", "__kernel __attribute__((reqd_work_group_size(16, 1, 1))) void")
    check(ctx, queue, source, "local_ids", (64,), [np.zeros(64, np.int32)], width, lsize=(16,))
    _, fn = kernel_of(ctx, source, "local_ids")
    merged = vectorize(fn, width, "local_ids_v")
    assert merged.attrs.reqd_work_group_size == (16 // width, 1, 1)
    plain = SAXPY.replace("__kernel void", "__kernel __attribute__((reqd_work_group_size(8, 1, 1))) void")
    _, fn = kernel_of(ctx, plain, "saxpy")
    assert vectorize(fn, width, "saxpy_v").attrs.reqd_work_group_size is None
