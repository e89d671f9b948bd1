"""Conformance, compiler: the OpenCL C 1.2 language as real programs use it.

``true``/``false``, string literals as ``__constant char`` arrays, ``half`` as a storage type
(``vload_half``/``vstore_half`` and their rounding, vector and aligned forms, against numpy's
float16), structs and unions by value and in buffers with OpenCL's layout (numpy structured
dtypes with the same offsets), ``aligned``/``packed``, program-scope ``__constant`` tables,
enums, kernel attributes, ``overloadable`` functions, ``#pragma unroll``, and programs long or
deep enough to exhaust a recursive front end. Every test checks on the device and compares with
numpy or Python.
"""

from __future__ import annotations

import numpy as np
import pytest
from launch import LocalMem, build_kernel, run, serial_context

import ppcl as cl
from ppcl.compiler.frontend import CompileError, compile_source

# ---------------------------------------------------------------- bool, true, false


def test_bool_true_false():
    source = """
    bool is_odd(int x) { return (x & 1) ? true : false; }
    __kernel void flags(__global const int *in, __global int *out) {
        size_t i = get_global_id(0);
        bool b = true;
        bool c = false;
        bool odd = is_odd(in[i]);
        bool seen[2] = {false, true};
        out[i] = (odd == true) * 100 + (b && !c) * 10 + seen[odd] + (true + true) * 1000
                 + (false ? 7 : 0);
    }
    """
    x = np.arange(-5, 11, dtype=np.int32)
    out = np.zeros_like(x)
    run(source, "flags", (16,), (8,), x, out)
    odd = (x & 1).astype(bool)
    np.testing.assert_array_equal(out, odd * 100 + 10 + odd + 2000)


# ---------------------------------------------------------------- string literals


def test_string_literals_as_constant_char_arrays():
    """A literal passed to a ``__constant char *`` parameter, assigned to a variable,
    subscripted, measured by ``sizeof``, and a program-scope ``__constant char`` table."""
    source = r"""
    __constant char greeting[] = "hello, world";
    __constant char names[3][6] = {"red", "green", "blue"};
    int length(__constant char *s) { int n = 0; while (s[n] != '\0') n++; return n; }
    int sum(const __constant char *s) { int t = 0; for (int k = 0; s[k]; k++) t += s[k]; return t; }
    __kernel void strings(__global int *out) {
        __constant char *p = "tab\there";
        __constant char *q;
        q = "xyz";
        char local_copy[] = "ppcl";
        out[0] = length("abc");
        out[1] = length(p);
        out[2] = p[3];
        out[3] = "xyz"[2];
        out[4] = q[1];
        out[5] = sizeof("abc");
        out[6] = length(greeting);
        out[7] = sum(names[1]);
        out[8] = sizeof(local_copy);
        out[9] = local_copy[1];
        out[10] = sum("\x41\102");
    }
    """
    out = np.zeros(11, np.int32)
    run(source, "strings", (1,), (1,), out)
    want = [3, len("tab\there"), ord("\t"), ord("z"), ord("y"), 4, len("hello, world"),
            sum(map(ord, "green")), 5, ord("p"), 0x41 + 0o102]
    np.testing.assert_array_equal(out, want)


def test_table_of_string_pointers_and_qualified_pointers():
    """``constant char * constant names[]``: an address space after the ``*`` qualifies the
    pointer itself (the parser's look-ahead took only C's qualifiers there)."""
    source = r"""
    constant char * constant names[3] = {"red", "green", "blue"};
    constant char * __constant one = "single";
    int length(constant char *s) { int n = 0; while (s[n]) n++; return n; }
    __kernel void names_k(__global int *out) {
        int i = (int)get_global_id(0);
        __global int * __private slot = out + i;
        *slot = length(names[i]) * 100 + names[i][0] + length(one) * 1000;
    }
    """
    out = np.zeros(3, np.int32)
    run(source, "names_k", (3,), (3,), out)
    want = [len(w) * 100 + ord(w[0]) + 6000 for w in ("red", "green", "blue")]
    np.testing.assert_array_equal(out, want)


def test_string_literal_pointer_live_across_a_barrier():
    source = r"""
    int count(__constant char *s, char c) { int n = 0; for (int k = 0; s[k]; k++) n += s[k] == c; return n; }
    __kernel void fruit(__global int *out, __local int *tally) {
        size_t l = get_local_id(0);
        __constant char *p = (l & 1) ? "banana" : "apple";
        tally[l] = count(p, 'a');
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = tally[(l + 1) % get_local_size(0)] * 10 + p[1];
    }
    """
    for uniformity in (True, False):
        out = np.zeros(8, np.int32)
        run(source, "fruit", (8,), (4,), out, LocalMem(16), uniformity=uniformity)
        want = [("banana".count("a") * 10 + ord("p")) if i % 2 == 0 else
                ("apple".count("a") * 10 + ord("a")) for i in range(8)]
        np.testing.assert_array_equal(out, want)


def test_string_literal_cannot_be_written():
    source = '__kernel void k(__global int *o) { __constant char *p = "ab"; p[0] = 1; }'
    with pytest.raises(CompileError, match="cannot write to __constant memory"):
        compile_source(source)


# ---------------------------------------------------------------- half as a storage type

HALF_SOURCE = """
__kernel void halves(__global const half *h, __global float *loaded, __global float4 *loaded4,
                     __global float4 *aligned3, __global const float *x,
                     __global half *rte, __global half *rtz, __global half *rtp,
                     __global half *rtn, __global half *plain, __global half *v4,
                     __global half *a3, __global half *v3, __global half *a1) {
    size_t i = get_global_id(0);
    loaded[i] = vload_half(i, h) + vloada_half(i, h);
    loaded4[i] = vload_half4(i, h);
    aligned3[i] = (float4)(vloada_half3(i, h), vload_half3(i, h).x);
    vstore_half_rte(x[i], i, rte);
    vstore_half_rtz(x[i], i, rtz);
    vstore_half_rtp(x[i], i, rtp);
    vstore_half_rtn(x[i], i, rtn);
    vstore_half(x[i], i, plain);
    vstore_half4_rtz(vload4(i, x), i, v4);
    vstorea_half3(vload3(i, x), i, a3);
    vstore_half3_rtp(vload3(i, x), i, v3);
    vstorea_half_rtn(x[i], i, a1);
}
"""


def _round_half(x: np.ndarray, mode: str) -> np.ndarray:
    """float32 values rounded to float16 in ``mode``, from numpy's round-to-nearest-even."""
    with np.errstate(over="ignore"):  # beyond 65520 rounds to infinity, as intended
        nearest = x.astype(np.float16)
    back = nearest.astype(np.float32)
    out = nearest.copy()
    finite = ~np.isnan(x)
    if mode == "rtz":
        fix = finite & (np.abs(back) > np.abs(x))
        out[fix] = np.nextafter(nearest[fix], np.float16(0))
    elif mode == "rtp":
        fix = finite & (back < x)
        out[fix] = np.nextafter(nearest[fix], np.float16(np.inf))
    elif mode == "rtn":
        fix = finite & (back > x)
        out[fix] = np.nextafter(nearest[fix], np.float16(-np.inf))
    return out


def _same_halves(got: np.ndarray, want: np.ndarray, what: str) -> None:
    np.testing.assert_array_equal(got.view(np.uint16) * ~np.isnan(want),
                                  want.view(np.uint16) * ~np.isnan(want), err_msg=what)
    assert np.isnan(got[np.isnan(want)]).all(), what


def test_half_loads_and_stores_with_every_rounding():
    n = 64
    rng = np.random.default_rng(5)
    specials = np.array([0.0, -0.0, 1.0, -1.0, 65504.0, 65520.0, 70000.0, -70000.0, np.inf,
                         -np.inf, np.nan, 1e-6, -1e-6, 6.1e-5, 1e-8, 2049.0, 2051.0, -2051.0,
                         0.1, 1.0 / 3.0], np.float32)
    x = np.concatenate([specials, (rng.standard_normal(n * 4 - len(specials)) * 1000)]
                       ).astype(np.float32)
    with np.errstate(over="ignore"):
        h = x.astype(np.float16)
    loaded = np.zeros(n, np.float32)
    loaded4 = np.zeros((n, 4), np.float32)
    aligned3 = np.zeros((n, 4), np.float32)
    stores = {mode: np.zeros(n, np.float16) for mode in ("rte", "rtz", "rtp", "rtn", "plain")}
    v4 = np.zeros(n * 4, np.float16)
    a3 = np.zeros(n * 4, np.float16)
    v3 = np.zeros(n * 3, np.float16)
    a1 = np.zeros(n, np.float16)
    run(HALF_SOURCE, "halves", (n,), (8,), h, loaded, loaded4, aligned3, x, *stores.values(),
        v4, a3, v3, a1)
    wide = h.astype(np.float32)
    np.testing.assert_array_equal(loaded, wide[:n] * 2)
    np.testing.assert_array_equal(loaded4, wide.reshape(n, 4))
    np.testing.assert_array_equal(aligned3[:, :3], wide.reshape(n, 4)[:, :3])  # 4-spaced
    np.testing.assert_array_equal(aligned3[:, 3], wide[np.arange(n) * 3])  # 3-spaced
    for mode in ("rte", "rtz", "rtp", "rtn"):
        _same_halves(stores[mode], _round_half(x[:n], mode), mode)
    _same_halves(stores["plain"], _round_half(x[:n], "rte"), "vstore_half")
    _same_halves(v4, _round_half(x, "rtz"), "vstore_half4_rtz")
    want_a3 = _round_half(x[: n * 3], "rte").reshape(n, 3)  # vload3: 3-spaced floats
    _same_halves(a3.reshape(n, 4)[:, :3], want_a3, "vstorea_half3")  # stored 4-spaced
    want_v3 = _round_half(x[: n * 3], "rtp")
    _same_halves(v3, want_v3, "vstore_half3_rtp")
    _same_halves(a1, _round_half(x[:n], "rtn"), "vstorea_half_rtn")


def test_half_storage_every_vector_width():
    widths = (2, 3, 4, 8, 16)
    body = "\n".join(f"    vstore_half{w}(vload_half{w}(i, in{w}) * 2.0f, i, out{w});"
                     for w in widths)
    params = ", ".join(f"__global const half *in{w}, __global half *out{w}" for w in widths)
    source = (f"__kernel void widths({params}) {{\n    size_t i = get_global_id(0);\n"
              f"{body}\n}}\n")
    n = 8
    rng = np.random.default_rng(9)
    args, inputs = [], []
    for w in widths:
        a = (rng.standard_normal(n * w) * 100).astype(np.float16)
        inputs.append(a)
        args += [a, np.zeros_like(a)]
    run(source, "widths", (n,), (4,), *args)
    for w, a, got in zip(widths, inputs, args[1::2]):
        want = (a.astype(np.float32) * 2).astype(np.float16)
        np.testing.assert_array_equal(got, want, err_msg=f"half{w}")


# ---------------------------------------------------------------- structs and unions

STRUCT_SOURCE = """
typedef struct { char c; float4 v; int i; } Inner;
typedef struct { Inner s; short t[3]; double d; uchar2 u; } Outer;
typedef union { int i; float f; uchar4 b; } Bits;
typedef struct __attribute__((packed)) { char c; int i; short s; } Packed;
typedef struct { char c; int i __attribute__((aligned(16))); } AlignedMember;
typedef struct __attribute__((aligned(32))) { float x; } AlignedRecord;

__kernel void records(Inner a, Outer n, Bits u, __global Outer *arr, __global Bits *bits,
                      __global Packed *packed, __global float *o, __global ulong *layout) {
    size_t g = get_global_id(0);
    __global Outer *e = &arr[g];
    e->s.i = e->s.c * 2 + (int)e->t[1];
    e->d = e->s.v.z + e->s.v.x + a.v.w;
    e->u = (uchar2)(e->u.y, e->u.x);
    e->t[2] = (short)(n.t[2] + g);
    bits[g].f = (float)bits[g].i;
    packed[g].i = packed[g].c + packed[g].s;
    if (g == 0) {
        o[0] = a.c + a.v.w + a.i + n.s.v.y + n.t[2] + (float)n.d + u.f + u.b.s3;
        __global char *base = (__global char *)arr;
        layout[0] = (ulong)((__global char *)&arr->s.v - base);
        layout[1] = (ulong)((__global char *)&arr->s.i - base);
        layout[2] = (ulong)((__global char *)&arr->t - base);
        layout[3] = (ulong)((__global char *)&arr->d - base);
        layout[4] = (ulong)((__global char *)&arr->u - base);
        layout[5] = sizeof(Outer);
        layout[6] = sizeof(Inner);
        layout[7] = sizeof(Bits);
        layout[8] = sizeof(Packed);
        layout[9] = sizeof(AlignedMember);
        layout[10] = sizeof(AlignedRecord);
    }
}
"""

INNER = np.dtype({"names": ["c", "v", "i"], "formats": [np.int8, (np.float32, 4), np.int32],
                  "offsets": [0, 16, 32], "itemsize": 48})
OUTER = np.dtype({"names": ["s", "t", "d", "u"],
                  "formats": [INNER, (np.int16, 3), np.float64, (np.uint8, 2)],
                  "offsets": [0, 48, 56, 64], "itemsize": 80})
BITS = np.dtype({"names": ["i", "f", "b"], "formats": [np.int32, np.float32, (np.uint8, 4)],
                 "offsets": [0, 0, 0], "itemsize": 4})
PACKED = np.dtype({"names": ["c", "i", "s"], "formats": [np.int8, np.int32, np.int16],
                   "offsets": [0, 1, 5], "itemsize": 7})


def test_structs_and_unions_by_value_and_in_buffers():
    n = 8
    a = np.zeros(1, INNER)
    a["c"], a["v"], a["i"] = 3, [1, 2, 3, 4.5], 5
    outer = np.zeros(1, OUTER)
    outer["s"]["v"] = [0, 7, 0, 0]
    outer["t"] = [0, 0, 9]
    outer["d"] = 0.5
    u = np.zeros(1, BITS)
    u["f"] = 1.25
    arr = np.zeros(n, OUTER)
    arr["s"]["c"] = np.arange(n)
    arr["t"][:, 1] = 10
    arr["s"]["v"] = np.arange(4 * n).reshape(n, 4)
    arr["u"] = np.stack([np.arange(n), np.arange(n) + 100], axis=1)
    bits = np.zeros(n, BITS)
    bits["i"] = np.arange(n) * 3 - 7
    packed = np.zeros(n, PACKED)
    packed["c"], packed["s"] = np.arange(n), np.arange(n) * 1000
    o = np.zeros(1, np.float32)
    layout = np.zeros(11, np.uint64)
    before = arr.copy()
    run(STRUCT_SOURCE, "records", (n,), (4,), a, outer, u, arr, bits, packed, o, layout)

    np.testing.assert_array_equal(layout, [OUTER.fields["s"][1] + INNER.fields["v"][1],
                                           INNER.fields["i"][1], OUTER.fields["t"][1],
                                           OUTER.fields["d"][1], OUTER.fields["u"][1],
                                           OUTER.itemsize, INNER.itemsize, BITS.itemsize,
                                           PACKED.itemsize, 32, 32])
    u_bytes = u["b"][0]
    assert o[0] == np.float32(3 + 4.5 + 5 + 7 + 9 + 0.5 + 1.25 + float(u_bytes[3]))
    np.testing.assert_array_equal(arr["s"]["i"], before["s"]["c"] * 2 + 10)
    np.testing.assert_array_equal(arr["d"], before["s"]["v"][:, 2] + before["s"]["v"][:, 0] + 4.5)
    np.testing.assert_array_equal(arr["u"], before["u"][:, ::-1])
    np.testing.assert_array_equal(arr["t"][:, 2], 9 + np.arange(n))
    np.testing.assert_array_equal(bits["f"], (np.arange(n) * 3 - 7).astype(np.float32))
    np.testing.assert_array_equal(packed["i"], np.arange(n) + np.arange(n) * 1000)


def test_compound_literals():
    source = """
    typedef struct { int a; float b; } S;
    S make(int a) { return (S){a, a * 0.5f}; }
    __kernel void literals(__global S *out, __global int *r) {
        size_t i = get_global_id(0);
        out[i] = (S){(int)i, 2.0f};
        out[i + 4] = make((int)i + 10);
        r[i] = ((S){3, 4.0f}).a + ((int4){1, 2, 3, 4}).w + (int){7} + (int)i;
    }
    """
    pair = np.dtype([("a", np.int32), ("b", np.float32)])
    out = np.zeros(8, pair)
    r = np.zeros(4, np.int32)
    run(source, "literals", (4,), (4,), out, r)
    np.testing.assert_array_equal(out["a"], [0, 1, 2, 3, 10, 11, 12, 13])
    np.testing.assert_array_equal(out["b"], [2, 2, 2, 2, 5, 5.5, 6, 6.5])
    np.testing.assert_array_equal(r, 14 + np.arange(4))


def test_designated_initializers():
    source = """
    typedef struct { int a; float b; int c[3]; float4 v; } S;
    __constant int table[] = {[2] = 5, 7, [0] = 1};
    __constant S fixed = {.c = {1, 2, 3}, .a = 9};
    __kernel void designated(__global int *o, __global float *f) {
        S s = {.b = 1.5f, .v = (float4)(2.0f)};
        int arr[6] = {[4] = 40, [1] = 10, 20};
        union { int i; float g; } u = {.i = 3};
        o[0] = sizeof(table) / sizeof(table[0]);
        for (int k = 0; k < 4; k++) o[1 + k] = table[k];
        o[5] = s.a;
        o[6] = s.c[2];
        o[7] = fixed.a;
        o[8] = fixed.c[2];
        for (int k = 0; k < 6; k++) o[9 + k] = arr[k];
        o[15] = u.i;
        f[0] = s.b;
        f[1] = s.v.w;
        f[2] = fixed.b;
    }
    """
    o = np.zeros(16, np.int32)
    f = np.zeros(3, np.float32)
    run(source, "designated", (1,), (1,), o, f)
    np.testing.assert_array_equal(o, [4, 1, 0, 5, 7, 0, 0, 9, 3, 0, 10, 20, 0, 40, 0, 3])
    np.testing.assert_array_equal(f, [1.5, 2.0, 0.0])


def test_alignment_and_offset_queries_match_numpy_layout():
    source = """
    typedef struct { char c; double d; } S;
    __kernel void alignments(__global ulong *o) {
        float3 v;
        o[0] = __alignof__(float3);
        o[1] = _Alignof(S);
        o[2] = __alignof__(v);
        o[3] = __alignof(char);
        o[4] = __alignof__(o[0]);
        o[5] = __alignof__(long16);
        o[6] = __builtin_offsetof(Inner, v);
        o[7] = __builtin_offsetof(Outer, d);
        o[8] = __builtin_offsetof(Outer, s.i);
        o[9] = __builtin_offsetof(Outer, t[2]);
    }
    """
    records = STRUCT_SOURCE.split("__kernel")[0]  # the Inner/Outer layouts of the test above
    o = np.zeros(10, np.uint64)
    run(records + source, "alignments", (1,), (1,), o)
    record = np.dtype([("c", np.int8), ("d", np.float64)], align=True)
    np.testing.assert_array_equal(o, [16, record.alignment, 16, 1, 8, 128,
                                      INNER.fields["v"][1], OUTER.fields["d"][1],
                                      OUTER.fields["s"][1] + INNER.fields["i"][1],
                                      OUTER.fields["t"][1] + 2 * 2])


# ---------------------------------------------------------------- program-scope constants, enums

CONSTANT_SOURCE = """
typedef struct { int id; float w; int2 pair; } Entry;
enum Color { RED, GREEN = 5, BLUE, NEGATIVE = -3 };
typedef enum { SMALL = 1, LARGE = 1 << 20 } Size;

__constant int grid[3][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10}};
__constant Entry entries[3] = {{1, 0.5f, (int2)(1, 2)}, {2, 1.5f, (int2)(3, 4)}, {3}};
__constant float4 corners[2] = {(float4)(1.0f, 2.0f, 3.0f, 4.0f), (float4)(0.5f)};
__constant int cube[2][2][2] = {{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}};
__constant enum Color palette[3] = {BLUE, RED, GREEN};

int weight(enum Color c) {
    switch (c) {
    case RED: return 1;
    case GREEN: return 2;
    case BLUE: return 3;
    default: return -1;
    }
}

__kernel void tables(__global int *out, __global float *f) {
    size_t i = get_global_id(0);
    int r = (int)(i % 3), c = (int)(i % 4);
    enum Color col = palette[r];
    Size s = LARGE;
    out[i] = grid[r][c] * 1000 + entries[r].id * 100 + weight(col) * 10 + cube[i & 1][(i >> 1) & 1][c & 1]
             + entries[r].pair.y + (s == LARGE) + NEGATIVE;
    f[i] = entries[r].w + corners[i & 1][c];
}
"""


def test_program_scope_constant_tables_and_enums():
    n = 12
    out = np.zeros(n, np.int32)
    f = np.zeros(n, np.float32)
    run(CONSTANT_SOURCE, "tables", (n,), (4,), out, f)
    grid = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 0, 0]])
    ids, weights, pairs_y = [1, 2, 3], [0.5, 1.5, 0.0], [2, 4, 0]
    corners = np.array([[1, 2, 3, 4], [0.5] * 4], np.float32)
    cube = np.arange(1, 9).reshape(2, 2, 2)
    palette_weight = [3, 1, 2]  # BLUE, RED, GREEN
    i = np.arange(n)
    r, c = i % 3, i % 4
    want = (grid[r, c] * 1000 + np.take(ids, r) * 100 + np.take(palette_weight, r) * 10
            + cube[i & 1, (i >> 1) & 1, c & 1] + np.take(pairs_y, r) + 1 - 3)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(f, np.take(weights, r).astype(np.float32) + corners[i & 1, c])


# ---------------------------------------------------------------- kernel attributes

ATTRIBUTE_SOURCE = """
__kernel __attribute__((reqd_work_group_size(4, 2, 1)))
__attribute__((work_group_size_hint(4, 2, 1))) __attribute__((vec_type_hint(float4)))
void fixed(__global int *out) {
    size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);
    out[i] = (int)(get_local_size(0) * 10 + get_local_size(1));
}
"""


def test_reqd_work_group_size_is_honored():
    ctx = serial_context()
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, ATTRIBUTE_SOURCE).build()
    kernel = program.fixed
    out = np.zeros(32, np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, out.nbytes)
    kernel(queue, (8, 4), None, buf)  # no local size: the required one is used
    cl.enqueue_copy(queue, out, buf)
    np.testing.assert_array_equal(out, np.full(32, 42))
    info = kernel.get_work_group_info(cl.kernel_work_group_info.COMPILE_WORK_GROUP_SIZE,
                                      ctx.devices[0])
    assert list(info) == [4, 2, 1]
    with pytest.raises(cl.LogicError, match="CL_INVALID_WORK_GROUP_SIZE"):
        kernel(queue, (8, 4), (2, 2), buf)
    with pytest.raises(cl.LogicError, match="CL_INVALID_WORK_GROUP_SIZE"):
        kernel(queue, (8, 4), (8, 4), buf)


def test_kernel_attribute_errors():
    with pytest.raises(CompileError, match="attribute 'reqd_work_group_size' takes 3 arguments"):
        compile_source("__kernel __attribute__((reqd_work_group_size(4, 1))) void k() {}")
    with pytest.raises(CompileError, match="invalid type 'bool' for 'vec_type_hint'"):
        compile_source("__kernel __attribute__((vec_type_hint(bool))) void k() {}")


# ---------------------------------------------------------------- overloadable functions

OVERLOAD_SOURCE = """
int __attribute__((overloadable)) f(int x) { return x + 1; }
float __attribute__((overloadable)) f(float x) { return x * 2.0f; }
float4 __attribute__((overloadable)) f(float4 x) { return x * 3.0f; }
__attribute__((overloadable)) long f(long x, long y);
__attribute__((overloadable)) int g(__global const int *p) { return p[0]; }
__attribute__((overloadable)) int g(__global const float *p) { return (int)(p[0] * 10.0f); }
__kernel void calls(__global float *out, __global const int *ip, __global const float *fp) {
    char c = 4;
    short s = 5;
    out[0] = f(1);
    out[1] = f(2.0f);
    out[2] = f(c);
    out[3] = f((float4)(1.0f)).y;
    out[4] = f(3, 4);
    out[5] = f(s);
    out[6] = g(ip) + g(fp);
}
__attribute__((overloadable)) long f(long x, long y) { return x * y; }
"""


def test_overloadable_functions():
    out = np.zeros(7, np.float32)
    run(OVERLOAD_SOURCE, "calls", (1,), (1,), out, np.array([7], np.int32),
        np.array([0.5], np.float32))
    np.testing.assert_array_equal(out, [2, 4, 5, 3, 12, 6, 7 + 5])


@pytest.mark.parametrize(("source", "message"), [
    ("int __attribute__((overloadable)) f(int x) { return x; }\n"
     "float __attribute__((overloadable)) f(float x) { return x; }\n"
     "__kernel void k(__global float *o) { o[0] = f(1.0); }",
     "3:45: error: call to 'f(double)' is ambiguous; candidates: int f(int); float f(float)"),
    ("int __attribute__((overloadable)) f(int x) { return x; }\n"
     "int __attribute__((overloadable)) f(float x) { return 1; }\n"
     "__kernel void k(__global float *o) { o[0] = f(o); }",
     "error: no matching function for call to 'f(__global float *)'"),
    ("int f(int x) { return x; }\n"
     "float __attribute__((overloadable)) f(float x) { return x; }\n"
     "__kernel void k(__global float *o) { o[0] = f(1); }",
     "2:37: error: redeclaration of 'f' must have the 'overloadable' attribute"),
    ("int __attribute__((overloadable)) f(int x) { return x; }\n"
     "float __attribute__((overloadable)) f(int x) { return x; }\n"
     "__kernel void k(__global float *o) { o[0] = f(1); }",
     "conflicting types for 'f'"),
    ("__attribute__((overloadable)) int f(int);\n"
     "__attribute__((overloadable)) int f(float x) { return 1; }\n"
     "__kernel void k(__global int *o) { o[0] = f(1); }",
     "3:43: error: function 'f(int)' is called by 'k' but never defined"),
    ("__attribute__((overloadable)) int f(int x) { return x ? f(x - 1) : 0; }\n"
     "__attribute__((overloadable)) int f(float x) { return 1; }\n"
     "__kernel void k(__global int *o) { o[0] = f(1); }",
     "error: recursive call is not allowed in OpenCL C: 'f(int)' -> 'f(int)'"),
], ids=["ambiguous", "no-match", "missing-attribute", "return-type-only", "undefined",
        "recursive"])
def test_overloadable_errors(source, message):
    with pytest.raises(CompileError) as info:
        compile_source(source, "ovl.cl")
    assert message in str(info.value)
    assert "^" in str(info.value)


def test_prototypes_without_parameter_names():
    source = """
    int scale(int, __global const float *);
    float4 pick(float4 [2], int);
    __kernel void protos(__global const float *in, __global float *out) {
        float4 pair[2] = {(float4)(1.0f), (float4)(2.0f)};
        out[get_global_id(0)] = scale(3, in) + pick(pair, 1).x;
    }
    int scale(int k, __global const float *p) { return k * (int)p[0]; }
    float4 pick(float4 v[2], int i) { return v[i]; }
    """
    x = np.array([5.0, 0.0], np.float32)
    out = np.zeros(2, np.float32)
    run(source, "protos", (2,), (2,), x, out)
    np.testing.assert_array_equal(out, [17.0, 17.0])
    with pytest.raises(CompileError, match="parameter 1 of 'g' has no name"):
        compile_source("int g(int) { return 1; }")


# ---------------------------------------------------------------- pragma unroll


def test_pragma_unroll_is_recorded():
    source = """
    __kernel void unrolled(__global int *out) {
        size_t i = get_global_id(0);
        int acc = 0;
        #pragma unroll
        for (int k = 0; k < 4; k++) acc += k;
        #pragma unroll 2
        for (int k = 0; k < (int)i; k++) acc += 10;
        #pragma unroll 8
        for (int k = 0; k < 8; k++) acc += 100;
        out[i] = acc;
    }
    """
    out = np.zeros(8, np.int32)
    run(source, "unrolled", (8,), (4,), out)
    np.testing.assert_array_equal(out, 6 + 10 * np.arange(8) + 800)
    # a count is recorded on the loop and asked of the C compiler; the bare pragma is left to
    # its own complete unrolling
    c_source = build_kernel(source, "unrolled", local_size=(4,)).c_source
    assert [line.strip() for line in c_source.splitlines() if "#pragma GCC" in line] == [
        "#pragma GCC unroll 2", "#pragma GCC unroll 8"]
    with pytest.raises(CompileError, match="'#pragma unroll' takes a positive integer count"):
        compile_source("__kernel void k(__global int *o) {\n#pragma unroll x\n"
                       "for (int i = 0; i < 4; i++) o[i] = i; }")


# ---------------------------------------------------------------- long and deep programs


def test_twenty_thousand_statements():
    n = 20_000
    body = "\n".join(f"    acc += i * {k % 7} + {k % 1000};" for k in range(n))
    source = ("__kernel void long_kernel(__global int *out) {\n"
              "    int i = (int)get_global_id(0);\n    int acc = 0;\n"
              f"{body}\n    out[i] = acc;\n}}\n")
    out = np.zeros(4, np.int32)
    run(source, "long_kernel", (4,), (4,), out)
    k = np.arange(n)
    want = [int(np.sum(i * (k % 7) + k % 1000)) for i in range(4)]
    np.testing.assert_array_equal(out, want)


def test_expressions_nested_256_deep():
    depth = 256
    expr = "(" * depth + "x" + "".join(f" + {k})" for k in range(depth))
    blocks = "{" * depth + " acc += 1; " + "}" * depth
    source = (f"__kernel void deep(__global int *out) {{\n    int x = out[0];\n    int acc = 0;\n"
              f"    {blocks}\n    out[0] = {expr} + acc;\n}}\n")
    out = np.array([5], np.int32)
    run(source, "deep", (1,), (1,), out)
    assert out[0] == 5 + sum(range(depth)) + 1


def test_long_sum_and_deep_conditionals_compile():
    """A flat sum of 4000 terms and 256 nested ``if`` statements: no RecursionError escapes
    the front end (a stage out of recursion runs again on a deep stack)."""
    terms = " + ".join(f"in[{k % 8}]" for k in range(4000))
    nested = "".join(f"if (x > {k}) " for k in range(256)) + "x++;"
    source = (f"__kernel void wide(__global int *in, __global int *out) {{\n"
              f"    int x = in[0];\n    {nested}\n    out[0] = {terms} + x;\n}}\n")
    data = np.arange(8, dtype=np.int32) * 1000
    out = np.zeros(1, np.int32)
    run(source, "wide", (1,), (1,), data, out)
    assert out[0] == 500 * int(data.sum()) + 0


@pytest.mark.parametrize("emit", ["ir", "opencl", "c"])
def test_deep_program_printed_by_the_command_line(tmp_path, capsys, emit):
    """``ppcl build --emit`` prints a program nested 256 deep in parentheses, in a sum of 2000
    terms: its printers recurse as the front end does, and run again on a deep stack when
    they must."""
    from ppcl.cli import main

    depth = 256
    expr = "(" * depth + "x" + "".join(f" + {k})" for k in range(depth))
    terms = " + ".join(f"o[{k % 8}]" for k in range(2000))
    path = tmp_path / "deep.cl"
    path.write_text(f"__kernel void deep(__global int *o) {{ int x = o[0]; "
                    f"o[0] = {expr} + {terms}; }}\n")
    assert main(["build", str(path), "--emit", emit]) == 0
    printed = capsys.readouterr().out
    assert "deep" in printed and f"+ {depth - 1}" in printed


CONVERT_TYPES = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float",
                 "double")
ROUNDING = ("", "_rte", "_rtz", "_rtp", "_rtn")


def test_convert_every_type_pair_through_macros():
    """Every ``convert_<type>[_sat][_rounding]`` instantiated through token-pasting macros,
    as conformance kernels write them (this used to raise RecursionError)."""
    calls = []
    for dst in CONVERT_TYPES:
        for src in CONVERT_TYPES:
            for sat in ("", "_sat"):
                if sat and dst in ("float", "double"):
                    continue
                for rounding in ROUNDING:
                    calls.append(f"    CONVERT({dst}, {src}, {sat}{rounding})")
    params = ", ".join(f"__global const {t} *in_{t}" for t in CONVERT_TYPES)
    source = ("#define CONVERT(D, S, SUFFIX) out[k++] = (double)convert_##D##SUFFIX(in_##S[i]);\n"
              f"__kernel void conversions({params}, __global double *out) {{\n"
              "    int i = (int)get_global_id(0);\n    int k = 0;\n"
              + "\n".join(calls) + "\n}\n")
    dtypes = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
              np.float32, np.float64]
    value = 100
    inputs = [np.array([value], dt) for dt in dtypes]
    out = np.zeros(len(calls), np.float64)
    run(source, "conversions", (1,), (1,), *inputs, out)
    np.testing.assert_array_equal(out, np.full(len(calls), value))


# ---------------------------------------------------------------- what is not supported


@pytest.mark.parametrize(("source", "message"), [
    ("__kernel void k(__global int *o) { o[0] = ((int[]){1, 2})[1]; }",
     "t.cl:1:48: error: compound literals of array type '(T[]){...}' are not supported"),
    ("typedef struct { struct { int x; } in; float b; } S;\n"
     "__kernel void k(__global S *o) { S s = {.in.x = 1}; o[0] = s; }",
     "t.cl:2:49: error: nested designators ('.a.b', '[i].f') are not supported by ppcl"),
    ("typedef union { int i; float f; } U;\n"
     "__kernel void k(__global U *o) { U u = {.f = 1.0f}; o[0] = u; }",
     "t.cl:2:46: error: a union is initialized through its first member ('.i')"),
    ("__kernel void k(__global half *h) { half a = h[0]; h[1] = a; }",
     "t.cl:1:42: error: variable 'a' has type 'half': 'half' may only be used through pointers"),
    ("__kernel void k(__global int *o) { goto end; end: o[0] = 1; }",
     "t.cl:1:36: error: 'goto' is not supported by ppcl"),
    ("typedef struct { int n; struct { __global float *p; } inner; } S;\n"
     "__kernel void k(S s) { s.inner.p[0] = 1; }",
     "t.cl:2:19: error: kernel parameter 's' of type 'S': struct kernel parameters may not "
     "contain pointers"),
    ("__kernel void k(__global int *o) { int y = ({ int x = 2; x * 3; }); o[0] = y; }",
     "t.cl:1:45: error: statement expressions '({ ... })' used as a value are a GNU extension"),
], ids=["array-compound-literal", "nested-designator", "union-designator", "half-variable", "goto",
        "struct-argument-with-pointer", "statement-expression"])
def test_unsupported_constructs_are_located_errors(source, message):
    """The README's list of what is not supported, and what OpenCL C forbids: each is an
    error at its place."""
    with pytest.raises(CompileError) as info:
        compile_source(source, "t.cl")
    assert message in str(info.value)
    assert "^" in str(info.value)
