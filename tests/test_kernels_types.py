"""Element-wise kernels on every scalar type and every vector width, compared with numpy."""

from __future__ import annotations

import numpy as np
import pytest
from launch import run

WIDTHS = (1, 2, 3, 4, 8, 16)
TYPES = {
    "char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
    "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64,
    "float": np.float32, "double": np.float64,
}


def source_for(scalar: str) -> str:
    params, body = [], []
    for w in WIDTHS:
        t = scalar if w == 1 else f"{scalar}{w}"
        params += [f"__global {t} *a{w}", f"__global const {t} *b{w}"]
        body.append(f"    a{w}[i] = a{w}[i] * b{w}[i] + ({t})(1);")
    return ("__kernel void fma_all(" + ", ".join(params) + ") {\n"
            "    size_t i = get_global_id(0);\n" + "\n".join(body) + "\n}\n")


@pytest.mark.parametrize("scalar", list(TYPES))
def test_elementwise_every_type_and_width(scalar):
    dtype = TYPES[scalar]
    n, local = 24, 8
    rng = np.random.default_rng(7)
    args, expected = [], []
    for w in WIDTHS:
        storage = 4 if w == 3 else w
        shape = (n,) if w == 1 else (n, storage)
        lo = 0 if np.issubdtype(dtype, np.unsignedinteger) else -9
        a = rng.integers(lo, 10, shape).astype(dtype)
        b = rng.integers(lo, 10, shape).astype(dtype)
        expected.append((a * b + dtype(1)).astype(dtype))
        args += [a, b]
    run(source_for(scalar), "fma_all", (n,), (local,), *args)
    for w, want, got in zip(WIDTHS, expected, args[::2]):
        if w == 3:
            want, got = want[:, :3], got[:, :3]
        np.testing.assert_array_equal(got, want, err_msg=f"{scalar}{w}")


def test_postfix_operators_apply_to_a_vector_literal():
    # '(float4)(1, 2, 3, 4).wzyx' swizzles the vector, as in clang: C's cast grammar read it as
    # a cast of '(1, 2, 3, 4).wzyx', a swizzle of an int, and the build failed
    src = """
    __kernel void k(__global float *o, float f) {
        float4 v = (float4)(1.0f, 2.0f, 3.0f, f).wzyx;
        float2 h = (float4)(1.0f, 2.0f, 3.0f, 4.0f).hi;
        float2 e = (float3)(f, 6.0f, 7.0f).even;
        o[0] = v.x; o[1] = v.w; o[2] = h.x; o[3] = h.y; o[4] = e.x; o[5] = e.y;
        o[6] = -(float4)(f).y;
        o[7] = (float8)((float4)(1.0f, 2.0f, 3.0f, 4.0f).xxyy, 0.0f, 0.0f, 0.0f, 0.0f)[3];
        o[8] = (float)(f) * 2.0f;
    }
    """
    out = np.zeros(9, np.float32)
    run(src, "k", (1,), None, out, np.float32(5.0))
    assert out.tolist() == [5.0, 1.0, 3.0, 4.0, 5.0, 7.0, -5.0, 2.0, 10.0]


def test_vector_literal_through_a_typedef_name():
    # '(V)(1, 2, 3, 4).x' with 'typedef float4 V' is a vector literal too (also through a
    # typedef of a typedef, and in a function's own scope); the parser knew only the built-in
    # vector names, read a cast of '(1, 2, 3, 4).x' and refused the swizzle of an int
    src = """
    typedef float4 V;
    typedef V W;
    typedef int2 I2;
    typedef float F;
    __kernel void k(__global float *o, float f) {
        typedef uint3 U;
        o[0] = (V)(1.0f, 2.0f, 3.0f, f).w;
        o[1] = (W)(f).y + (V)((float2)(1.0f, 2.0f), 3.0f, 4.0f).z;
        o[2] = (I2)(7, 8).y;
        o[3] = (U)(1, 2, 3).z;
        o[4] = (F)(f) * 2.0f;
    }
    """
    out = np.zeros(5, np.float32)
    run(src, "k", (1,), None, out, np.float32(5.0))
    assert out.tolist() == [5.0, 8.0, 8.0, 3.0, 10.0]


def test_arrow_on_a_pointer_to_a_vector_selects_components():
    # 'p->y' on a 'float2 *' is '(*p).y', as clang reads it, read or written through any
    # address space; the build refused it as a member reference on a non-struct pointer
    src = """
    __constant float2 table[2] = { (float2)(1.0f, 2.0f), (float2)(3.0f, 4.0f) };
    __kernel void k(__global float *o, __global float4 *g) {
        __constant float2 *c = table + 1;
        float4 v = (float4)(5.0f, 6.0f, 7.0f, 8.0f);
        float4 *p = &v;
        p->z = 9.0f;
        p->xy += (float2)(10.0f, 20.0f);
        (g + 1)->w = c->x;
        o[0] = c->y; o[1] = p->z; o[2] = v.x; o[3] = p->y; o[4] = g->x;
    }
    """
    out = np.zeros(5, np.float32)
    g = np.arange(8, dtype=np.float32)
    run(src, "k", (1,), None, out, g)
    assert out.tolist() == [4.0, 9.0, 15.0, 26.0, 0.0]
    assert g.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 3.0]


def test_anonymous_struct_and_union_members():
    # C11 anonymous members, as clang takes them in OpenCL C: their members are named as the
    # enclosing record's own, through '.', '->', nesting and a kernel argument passed by value;
    # the build refused any anonymous member
    src = """
    typedef struct { int tag; union { float f; int i; }; struct { short lo, hi; }; } V;
    typedef union { struct { float x, y; }; float2 v; } P;
    __kernel void k(__global int *o, P p) {
        V v = {5, {2.0f}, {8, 9}};
        V *q = &v;
        q->hi += 1;
        o[0] = v.i; o[1] = v.lo; o[2] = v.hi; o[3] = sizeof(V);
        v.f = 1.0f;
        o[4] = v.i;
        o[5] = (int)p.y; o[6] = (int)p.v.x;
    }
    """
    out = np.zeros(7, np.int32)
    p = np.array([(3.0, 4.0)], dtype=[("x", np.float32), ("y", np.float32)])
    run(src, "k", (1,), None, out, p)
    assert out.tolist() == [0x40000000, 8, 10, 12, 0x3F800000, 4, 3]


def test_array_parameters_in_an_address_space_are_pointers():
    # '__global float g[]' and '__local int t[2][3]' as a helper's parameters point to that
    # address space, as clang reads them; the build refused them as parameters declared in it
    src = """
    void put(__global float g[], int i, float v) { g[i] = v; }
    float second(const __global float g[4]) { return g[1]; }
    void mark(__local int t[2][3]) { t[1][2] = 42; }
    __kernel void k(__global float *o) {
        __local int t[2][3];
        if (get_local_id(0) == 0) mark(t);
        barrier(CLK_LOCAL_MEM_FENCE);
        put(o, 0, second(o + 4));
        o[1] = t[1][2];
    }
    """
    out = np.arange(8, dtype=np.float32)
    run(src, "k", (1,), (1,), out)
    assert out[:2].tolist() == [5.0, 42.0]


def test_array_sizes_may_name_const_variables_of_constant_value():
    # 'const int TS = 4; __local float tile[TS][TS];' is a constant array in clang (an
    # extension to C's constant expressions), here as at program scope and through another
    # const; the build refused these sizes as variable length arrays
    src = """
    __constant int ROWS = 2;
    __kernel void k(__global float *o) {
        const int TS = 4;
        const int TWICE = TS * 2;
        __local float tile[ROWS][TS];
        float priv[TWICE];
        int lid = get_local_id(0);
        for (int j = 0; j < TWICE; j++) priv[j] = j;
        for (int r = 0; r < ROWS; r++) tile[r][lid] = r * 10 + lid + priv[TWICE - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
        o[lid] = tile[1][TS - 1 - lid];
        o[4 + lid] = sizeof(tile) + sizeof(priv);
    }
    """
    out = np.zeros(8, np.float32)
    run(src, "k", (4,), (4,), out)
    assert out.tolist() == [20.0, 19.0, 18.0, 17.0, 64.0, 64.0, 64.0, 64.0]


def test_an_address_space_in_a_typedef_goes_with_it():
    # 'typedef __local float lfloat;': an 'lfloat *' points to __local memory and an 'lfloat'
    # array is a __local variable, as in clang; the typedef dropped the address space, and
    # 'lfloat *p = buf' failed as a __local-to-__private pointer conversion
    src = """
    typedef __local float lfloat;
    typedef __global const float *cgptr;
    float first(cgptr p) { return p[0]; }
    __kernel void k(__global float *o) {
        lfloat buf[4];
        lfloat *p = buf;
        int lid = get_local_id(0);
        p[lid] = lid + first(o + 4);
        barrier(CLK_LOCAL_MEM_FENCE);
        o[lid] = p[3 - lid];
    }
    """
    out = np.zeros(8, np.float32)
    out[4] = 10.0
    run(src, "k", (4,), (4,), out)
    assert out[:4].tolist() == [13.0, 12.0, 11.0, 10.0]


def test_character_literals_are_signed_chars_converted_to_int() -> None:
    """'\\377' and '\\xff' are the char -1 (char is signed), so as a uint they are 0xffffffff,
    as clang (and so pocl) computes them; ASCII characters keep their codes."""
    source = r"""__kernel void k(__global uint *o, __global int *p) {
        uint v = '\377'; o[0] = v; o[1] = '\xff'; o[2] = 'a'; o[3] = '\x7f'; o[4] = '\200';
        p[0] = '\xff'; p[1] = '\x80' + 1; p[2] = '\n'; }"""
    o = np.zeros(5, np.uint32)
    p = np.zeros(3, np.int32)
    run(source, "k", (1,), (1,), o, p)
    np.testing.assert_array_equal(o, [0xFFFFFFFF, 0xFFFFFFFF, 97, 127, 0xFFFFFF80])
    np.testing.assert_array_equal(p, [-1, -127, 10])


def test_wide_character_literals_are_ints() -> None:
    """L'c' is a wchar_t, a 32-bit int, as clang makes it: an escape is not wrapped to a
    signed char (L'\\xff' is 255); the build refused every wide character literal."""
    source = r"""__kernel void k(__global int *o) {
        o[0] = L'a'; o[1] = sizeof(L'a'); o[2] = L'\xff'; o[3] = L'\n'; o[4] = L'\x7fffffff'; }"""
    o = np.zeros(5, np.int32)
    run(source, "k", (1,), (1,), o)
    np.testing.assert_array_equal(o, [97, 4, 255, 10, 0x7FFFFFFF])



VLOADS = """
__kernel void shifted(__global const TYPE *src, __global TYPE *dst, int shift) {
    int i = get_global_id(0);
    __local TYPE tile[4 * WIDTH * 8];
    TYPE private_copy[2 * WIDTH];
    VEC v = VLOAD(i, src + shift);             /* element-aligned only where shift is odd */
    VSTORE(v, get_local_id(0), tile + shift);
    barrier(CLK_LOCAL_MEM_FENCE);
    VSTORE(VLOAD(get_local_id(0), tile + shift), 0, private_copy + (shift & 1));
    VSTORE(VLOAD(0, private_copy + (shift & 1)) + (VEC)(1), i, dst + shift);
}
"""


@pytest.mark.parametrize("scalar,width", [("float", 4), ("float", 2), ("char", 16),
                                          ("short", 8), ("double", 4), ("int", 3),
                                          ("float", 16)])
@pytest.mark.parametrize("shift", [0, 1, 3])
def test_vload_vstore_at_any_element_alignment(queue, scalar: str, width: int,
                                               shift: int) -> None:
    """vloadn/vstoren need only the element's alignment: a device that moves an aligned vector
    as one wide access (the GPU) must still load and store the shifted ones element-wise."""
    import ppcl as cl

    dtype = TYPES[scalar]
    items = 8
    source = (VLOADS.replace("VEC", f"{scalar}{width}").replace("TYPE", scalar)
              .replace("WIDTH", str(width)).replace("VLOAD", f"vload{width}")
              .replace("VSTORE", f"vstore{width}"))
    if scalar == "double":
        source = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + source
    rng = np.random.default_rng(width + shift)
    count = items * width + shift
    src = rng.integers(-50, 50, count).astype(dtype)
    mf = cl.mem_flags
    d_src = cl.Buffer(queue.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=src)
    dst = np.full(count, 7, dtype)
    d_dst = cl.Buffer(queue.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=dst)
    kernel = cl.Program(queue.context, source).build().shifted
    kernel(queue, (items,), (items,), d_src, d_dst, np.int32(shift))
    cl.enqueue_copy(queue, dst, d_dst)
    want = np.full(count, 7, dtype)
    want[shift:] = src[shift:] + dtype(1)
    np.testing.assert_array_equal(dst, want)
