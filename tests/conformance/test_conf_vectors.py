"""Conformance, vectors: subscripts ``v[i]`` of every vector type, as clang accepts them.

A constant index reads and writes one component (``v[2]`` is ``v.s2``), a variable index reads
and writes the component it selects, on vector variables, vectors in private arrays and struct
members, through private pointers and in global memory. Every test checks on the device and
compares with numpy.
"""

from __future__ import annotations

import numpy as np
import pytest
from launch import LocalMem, run

import ppcl as cl
from ppcl.compiler.frontend import CompileError, compile_source

WIDTHS = (2, 3, 4, 8, 16)
TYPES = {
    "char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
    "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64,
    "float": np.float32, "double": np.float64,
}


def _storage(width: int) -> int:
    return 4 if width == 3 else width


def subscript_source(scalar: str) -> str:
    """One kernel exercising every kind of subscript on every vector width of ``scalar``."""
    decls, params, body = [], ["__global const int *idx"], ["    size_t i = get_global_id(0);"]
    for w in WIDTHS:
        vt = f"{scalar}{w}"
        decls.append(f"typedef struct {{ char tag; {vt} m; }} Box{w};")
        params += [f"__global const {vt} *in{w}", f"__global {vt} *out{w}",
                   f"__global {scalar} *sc{w}"]
        body += [
            f"    {vt} v{w} = in{w}[i];",
            f"    int j{w} = idx[i] % {w};",
            f"    {scalar} first{w} = v{w}[0];",
            f"    {scalar} last{w} = v{w}[{w - 1}];",
            f"    v{w}[j{w}] = ({scalar})(v{w}[j{w}] + ({scalar})1);",
            f"    v{w}[0] = last{w};",
            f"    {vt} arr{w}[2];",
            f"    arr{w}[0] = v{w};",
            f"    arr{w}[1] = in{w}[i];",
            f"    arr{w}[1][j{w}] = first{w};",
            f"    Box{w} box{w};",
            f"    box{w}.m = arr{w}[1];",
            f"    box{w}.m[(j{w} + 1) % {w}] = ({scalar})7;",
            f"    __private {vt} *p{w} = &arr{w}[0];",
            f"    p{w}[1][{w - 1} - j{w}] = (*p{w})[j{w}];",
            f"    out{w}[i] = arr{w}[1];",
            f"    out{w}[i][{w - 1}] = ({scalar})(out{w}[i][{w - 1}] + box{w}.m[(j{w} + 1) % {w}]);",
            f"    sc{w}[i] = v{w}[j{w}];",
        ]
    return ("\n".join(decls) + "\n__kernel void subscripts(" + ", ".join(params) + ") {\n"
            + "\n".join(body) + "\n}\n")


def subscript_reference(a: np.ndarray, j: int, w: int) -> tuple[np.ndarray, object]:
    """What the kernel computes for one work-item, on numpy values of the element type."""
    t = a.dtype.type
    v = a.copy()
    first, last = v[0], v[w - 1]
    v[j] = t(v[j] + t(1))
    v[0] = last
    arr0, arr1 = v.copy(), a.copy()
    arr1[j] = first
    box = arr1.copy()
    box[(j + 1) % w] = t(7)
    arr1[w - 1 - j] = arr0[j]
    out = arr1.copy()
    out[w - 1] = t(out[w - 1] + box[(j + 1) % w])
    return out, v[j]


# every element type in the formed kernel; two also with every statement masked
FORMATIONS = [(scalar, True) for scalar in TYPES] + [("int", False), ("float", False)]


@pytest.mark.parametrize(("scalar", "uniformity"), FORMATIONS)
def test_subscripts_every_type_and_width(scalar, uniformity):
    dtype = TYPES[scalar]
    n = 16
    rng = np.random.default_rng(11)
    idx = rng.integers(0, 1000, n).astype(np.int32)
    args: list[np.ndarray] = [idx]
    inputs = {}
    for w in WIDTHS:
        a = rng.integers(0, 50, (n, _storage(w))).astype(dtype)
        inputs[w] = a
        args += [a, np.zeros_like(a), np.zeros(n, dtype)]
    run(subscript_source(scalar), "subscripts", (n,), (8,), *args, uniformity=uniformity)
    for k, w in enumerate(WIDTHS):
        out, sc = args[2 + 3 * k], args[3 + 3 * k]
        for i in range(n):
            want_out, want_sc = subscript_reference(inputs[w][i, :w], int(idx[i]) % w, w)
            np.testing.assert_array_equal(out[i, :w], want_out, err_msg=f"{scalar}{w} item {i}")
            assert sc[i] == want_sc, f"{scalar}{w} item {i}"


@pytest.mark.parametrize("scalar", ["int", "double"])
def test_subscripts_on_the_threaded_device(ctx, queue, scalar):
    """The same kernel on the default device, its work-groups spread over threads."""
    dtype = TYPES[scalar]
    n = 64
    rng = np.random.default_rng(21)
    idx = rng.integers(0, 1000, n).astype(np.int32)
    mf = cl.mem_flags
    buffers = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=idx)]
    inputs, outputs = {}, {}
    for w in WIDTHS:
        inputs[w] = rng.integers(0, 50, (n, _storage(w))).astype(dtype)
        outputs[w] = (np.zeros_like(inputs[w]), np.zeros(n, dtype))
        buffers += [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=inputs[w]),
                    cl.Buffer(ctx, mf.WRITE_ONLY, inputs[w].nbytes),
                    cl.Buffer(ctx, mf.WRITE_ONLY, n * np.dtype(dtype).itemsize)]
    program = cl.Program(ctx, subscript_source(scalar)).build()
    program.subscripts(queue, (n,), (8,), *buffers)
    for k, w in enumerate(WIDTHS):
        out, sc = outputs[w]
        cl.enqueue_copy(queue, out, buffers[2 + 3 * k])
        cl.enqueue_copy(queue, sc, buffers[3 + 3 * k])
        for i in range(n):
            want_out, want_sc = subscript_reference(inputs[w][i, :w], int(idx[i]) % w, w)
            np.testing.assert_array_equal(out[i, :w], want_out, err_msg=f"{scalar}{w} item {i}")
            assert sc[i] == want_sc, f"{scalar}{w} item {i}"


BARRIER_SOURCE = """
__kernel void rotate(__global const float4 *in, __global float4 *out, __local float *tile) {
    size_t l = get_local_id(0);
    size_t n = get_local_size(0);
    float4 v = in[get_global_id(0)];
    int j = (int)(l % 4);
    tile[l] = v[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < 4; k++) {
        v[(j + k) % 4] += tile[(l + k) % n];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = v;
}
"""


@pytest.mark.parametrize("uniformity", [True, False], ids=["formed", "masked"])
def test_subscript_live_across_barriers(uniformity):
    """A vector written through a variable subscript keeps its value across barriers (it
    lives in the work-group's context) and inside a loop with barriers (the hot region that
    splits vectors into scalars keeps a subscripted one whole)."""
    n, local = 32, 8
    rng = np.random.default_rng(3)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    out = np.zeros_like(x)
    run(BARRIER_SOURCE, "rotate", (n,), (local,), x, out, LocalMem(local * 4),
        uniformity=uniformity)
    want = x.copy()
    for g in range(n // local):
        rows = range(g * local, (g + 1) * local)
        tile = np.array([x[r, (r - g * local) % 4] for r in rows], np.float32)
        for li, r in enumerate(rows):
            for k in range(4):
                want[r, (li % 4 + k) % 4] += tile[(li + k) % local]
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_subscript_on_vector_rvalues_and_constants():
    """Subscripts of a vector an expression computes, of a ``__constant`` vector and of a
    vector literal read the selected component."""
    source = """
    __constant int4 table = (int4)(10, 20, 30, 40);
    __kernel void pick(__global const int *idx, __global int *out) {
        size_t i = get_global_id(0);
        int j = idx[i];
        int4 v = (int4)(1, 2, 3, 4);
        out[i] = (v * 2)[j] + table[j] + ((int4)(5, 6, 7, 8))[3 - j] + table[3];
    }
    """
    idx = np.array([0, 1, 2, 3, 3, 2, 1, 0], np.int32)
    out = np.zeros(8, np.int32)
    run(source, "pick", (8,), (4,), idx, out)
    v = np.array([1, 2, 3, 4])
    table = np.array([10, 20, 30, 40])
    np.testing.assert_array_equal(out, (v * 2)[idx] + table[idx] + np.array([5, 6, 7, 8])[3 - idx]
                                  + 40)


def test_subscripts_of_component_selections():
    """``v.hi[i]``, ``v.odd[i]``, ``v.s3210[i]`` read and write the component of ``v`` they
    select; other selections (``v.s0011``) can be read."""
    source = """
    __kernel void selections(__global int *o) {
        int8 v = (int8)(1, 2, 3, 4, 5, 6, 7, 8);
        int j = o[0];
        v.hi[j] = 50;
        v.odd[j] += 100;
        v.s3210[j] = -1;
        v.s76[1] = 70;
        vstore8(v, 0, o + 1);
        o[9] = v.s7531[j] + v.s0011.even[j & 1];
    }
    """
    for j in range(4):
        o = np.zeros(10, np.int32)
        o[0] = j
        run(source, "selections", (1,), (1,), o)
        v = np.arange(1, 9)
        v[4 + j] = 50
        v[1 + 2 * j] += 100
        v[3 - j] = -1
        v[6] = 70
        np.testing.assert_array_equal(o[1:9], v, err_msg=f"j={j}")
        assert o[9] == v[7 - 2 * j] + v[j & 1], f"j={j}"  # .s0011.even is (v0, v1)


@pytest.mark.parametrize(("body", "message"), [
    ("int4 v = 0; out[0] = v[4];", "vector subscript 4 is out of range for 'int4' (0 ... 3)"),
    ("int3 v = 0; v[3] = 1;", "vector subscript 3 is out of range for 'int3' (0 ... 2)"),
    ("int4 v = 0; out[0] = v[1.5f];", "vector subscript is not an integer ('float')"),
    ("out[0] = table[idx];", "cannot write to __constant memory"),
    ("int4 v = 0; int j = out[1]; (v * 2)[j] = 1;", "expression is not assignable"),
    ("int4 v = 0; int j = out[1]; int *p = &v[j];",
     "cannot take the address of a vector component selection"),
    ("int4 v = 0; int j = out[1]; v.xxyy[j] = 1;", "expression is not assignable"),
], ids=["out-of-range", "out-of-range-3", "float-index", "constant", "rvalue", "address",
        "repeated-selection"])
def test_subscript_errors(body, message):
    if "table" in body:
        body = "int idx = out[1]; table[idx] = 1;"
    source = ("__constant int4 table = (int4)(1, 2, 3, 4);\n"
              f"__kernel void bad(__global int *out) {{ {body} }}\n")
    with pytest.raises(CompileError) as info:
        compile_source(source, "bad.cl")
    text = str(info.value)
    assert message in text
    assert "bad.cl:2:" in text and "^" in text


SELECT_SOURCE = """
__kernel void selects(__global const float4 *a, __global const float4 *b,
                      __global const int4 *m, __global const uchar8 *u,
                      __global float4 *larger, __global int4 *picked, __global int4 *not_m,
                      __global uchar8 *u_out, __global char8 *not_u, __global int4 *not_f,
                      __global int4 *both, __global int4 *either) {
    size_t i = get_global_id(0);
    float4 x = a[i], y = b[i];
    larger[i] = x > y ? x : y;
    picked[i] = m[i] ? (int4)(1, 2, 3, 4) : m[i] * 10;
    not_m[i] = !m[i];
    uchar8 w = u[i];
    u_out[i] = w ? w : (uchar8)(200);
    not_u[i] = !w;
    not_f[i] = !(x - x);
    both[i] = (x > 0.0f) && m[i];
    either[i] = m[i] || 0;
}
"""


def test_vector_select_not_and_logical_operators():
    """``c ? a : b`` with a vector condition picks per component by the sign bit of ``c``;
    ``!v``, ``&&`` and ``||`` give -1 where true, 0 where false, per component."""
    n = 16
    rng = np.random.default_rng(4)
    a = rng.standard_normal((n, 4)).astype(np.float32)
    b = rng.standard_normal((n, 4)).astype(np.float32)
    m = rng.choice(np.array([0, -1, 5, -7, np.iinfo(np.int32).min], np.int32), (n, 4))
    u = rng.choice(np.array([0, 1, 127, 128, 255], np.uint8), (n, 8))
    larger = np.zeros_like(a)
    picked = np.zeros_like(m)
    not_m = np.zeros_like(m)
    u_out = np.zeros_like(u)
    not_u = np.zeros((n, 8), np.int8)
    not_f = np.zeros((n, 4), np.int32)
    both = np.zeros((n, 4), np.int32)
    either = np.zeros((n, 4), np.int32)
    run(SELECT_SOURCE, "selects", (n,), (8,), a, b, m, u, larger, picked, not_m, u_out, not_u,
        not_f, both, either)
    np.testing.assert_array_equal(larger, np.where(a > b, a, b))
    np.testing.assert_array_equal(picked, np.where(m < 0, np.array([1, 2, 3, 4], np.int32),
                                                   m * 10))
    np.testing.assert_array_equal(not_m, np.where(m == 0, -1, 0))
    np.testing.assert_array_equal(u_out, np.where(u >= 128, u, np.uint8(200)))  # sign bit
    np.testing.assert_array_equal(not_u, np.where(u == 0, -1, 0))
    np.testing.assert_array_equal(not_f, np.full((n, 4), -1))
    np.testing.assert_array_equal(both, np.where((a > 0) & (m != 0), -1, 0))
    np.testing.assert_array_equal(either, np.where(m != 0, -1, 0))


INTEGER_TYPES = {name: dtype for name, dtype in TYPES.items() if name not in ("float", "double")}


@pytest.mark.parametrize("scalar", list(INTEGER_TYPES))
def test_shift_counts_use_their_low_bits(scalar):
    """``x << y`` shifts by the low log2(N) bits of ``y``, N the bits of ``x`` after integer
    promotion for a scalar and of its components for a vector (OpenCL 1.2 §6.3.j)."""
    dtype = INTEGER_TYPES[scalar]
    source = f"""
    __kernel void shifts(__global const {scalar} *a, __global const {scalar} *b,
                         __global {scalar} *s, __global {scalar}4 *v) {{
        size_t i = get_global_id(0);
        {scalar} x = a[i], y = b[i];
        s[3 * i] = x << y;
        s[3 * i + 1] = x >> y;
        x <<= y + 1;
        s[3 * i + 2] = x;
        {scalar}4 p = vload4(i, a), q = vload4(i, b);
        v[3 * i] = p << q;
        v[3 * i + 1] = p >> q;
        p >>= q + ({scalar}4)(1);
        v[3 * i + 2] = p;
    }}
    """
    n = 32
    info = np.iinfo(dtype)
    rng = np.random.default_rng(8)
    a = rng.integers(info.min, info.max, n * 4, dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, n * 4, dtype=dtype, endpoint=True)
    s = np.zeros(n * 3, dtype)
    v = np.zeros((n * 3, 4), dtype)
    run(source, "shifts", (n,), (8,), a, b, s, v)

    bits = np.dtype(dtype).itemsize * 8
    promoted = dtype if bits >= 32 else np.int32  # char and short are shifted as int
    scalar_bits = max(bits, 32)
    x, y = a[:n].astype(promoted), b[:n].astype(promoted)
    with np.errstate(over="ignore"):
        sx = x << (y & (scalar_bits - 1))
        sr = x >> (y & (scalar_bits - 1))
        sc = x << ((y + 1) & (scalar_bits - 1))
    np.testing.assert_array_equal(s[0::3], sx.astype(dtype), err_msg="<<")
    np.testing.assert_array_equal(s[1::3], sr.astype(dtype), err_msg=">>")
    np.testing.assert_array_equal(s[2::3], sc.astype(dtype), err_msg="<<=")
    p, q = a.reshape(n, 4), b.reshape(n, 4)
    count = (q & dtype(bits - 1)).astype(dtype)
    np.testing.assert_array_equal(v[0::3], p << count, err_msg="vector <<")
    np.testing.assert_array_equal(v[1::3], p >> count, err_msg="vector >>")
    plus = ((q + dtype(1)) & dtype(bits - 1)).astype(dtype)
    np.testing.assert_array_equal(v[2::3], p >> plus, err_msg="vector >>=")
