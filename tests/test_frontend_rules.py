"""OpenCL C rules the front end enforces as pocl's clang does: each invalid program fails with
its first error at the given line:col, with a message naming the rule and the source line
with a caret in the log; each valid neighbour compiles."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from ppcl.compiler.diagnostics import CompileError
from ppcl.compiler.frontend import compile_source


def first_error(source: str, options: str = "") -> tuple[int, int, str, str]:
    """(line, col, message, log) of the first error of ``source``."""
    with pytest.raises(CompileError) as info:
        compile_source(source, "t.cl", options=options)
    errors = [d for d in info.value.diagnostics if d.severity.value == "error"]
    assert errors, info.value.log
    first = errors[0]
    return first.loc.line, first.loc.col, first.message, info.value.log


def assert_rejected(source: str, at: tuple[int, int], fragment: str, options: str = "") -> None:
    line, col, message, log = first_error(source, options)
    assert (line, col) == at, log
    assert fragment in message, log
    assert "^" in log


# ---------------------------------------------------------------- half without cl_khr_fp16

HALF_INVALID = [
    # a load through a half pointer
    ("__kernel void k(__global half *a, __global float *b) { b[0] = a[0] + 1.0f; }",
     (1, 63), "loading a 'half' value needs the cl_khr_fp16 extension"),
    ("__kernel void k(__global half *a, __global float *b) { b[0] = *a; }",
     (1, 64), "read it with vload_half()"),
    # the pragma does not enable an extension ppcl lacks
    ("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
     "__kernel void k(__global half *a) { a[0] = a[1] * a[2]; }",
     (2, 44), "loading a 'half' value"),
    # a store
    ("__kernel void k(__global half *a, __global float *b) { a[1] = b[0]; }",
     (1, 61), "storing a 'half' value needs the cl_khr_fp16 extension"),
    ("__kernel void k(__global half *a) { a[0]++; }",
     (1, 38), "storing a 'half' value"),
    # a conversion
    ("__kernel void k(__global float *b) { b[0] = (float)(half)b[1]; }",
     (1, 52), "a conversion to 'half' needs the cl_khr_fp16 extension"),
    # half vectors do not exist without the extension (the C compiler rejected them)
    ("__kernel void k(__global half4 *a, __global float *b) { b[0] = 1.0f; }",
     (1, 26), "type 'half4' needs the cl_khr_fp16 extension"),
]


@pytest.mark.parametrize("source, at, fragment", HALF_INVALID)
def test_half_values_need_fp16(source: str, at: tuple[int, int], fragment: str) -> None:
    assert_rejected(source, at, fragment)


def test_half_pointers_sizeof_and_vload_half_need_no_extension() -> None:
    compile_source("__kernel void k(__global half *a, __global float *b) {\n"
                   "  __global half *p = &a[1];\n"
                   "  b[0] = vload_half(0, p) + sizeof(half) + sizeof(a[0]);\n"
                   "  vstore_half(b[1], 2, a);\n"
                   "}\n", "t.cl")


# ---------------------------------------------------------------- kernel parameters

@pytest.mark.parametrize("spelling", ["size_t", "const size_t", "ptrdiff_t", "intptr_t",
                                      "uintptr_t"])
def test_kernel_parameter_of_device_sized_type_rejected(spelling: str) -> None:
    source = f"__kernel void k(__global float *a, {spelling} n) {{ a[0] = n; }}"
    assert_rejected(source, (1, source.index(" n)") + 2),
                    f"kernel parameter 'n' cannot have type '{spelling.split()[-1]}'")


def test_device_sized_types_allowed_in_helpers_and_behind_pointers() -> None:
    compile_source("float f(size_t n) { return n; }\n"
                   "__kernel void k(__global float *a, __global size_t *n, ulong m) {\n"
                   "  size_t i = get_global_id(0); a[i] = f(n[i] + m);\n"
                   "}\n", "t.cl")


def test_kernel_parameter_of_typedef_of_size_t_rejected() -> None:
    source = ("typedef size_t index_t;\ntypedef index_t count_t;\n"
              "__kernel void k(__global float *a, count_t n) { a[0] = n; }")
    assert_rejected(source, (3, 44), "kernel parameter 'n' cannot have type 'size_t'")


@pytest.mark.parametrize("record, member", [
    ("typedef struct { int i; bool b; } S;", "'b' of type 'bool'"),
    ("typedef struct { size_t n; } S;", "'n' of type 'size_t'"),
    ("typedef uintptr_t addr_t;\ntypedef struct { int i; addr_t a[2]; } S;",
     "'a' of type 'uintptr_t'"),
    ("typedef struct { float f; struct { char c; bool flags[4]; } in; } S;",
     "'flags' of type 'bool'"),
    ("typedef union { int i; ptrdiff_t d; } S;", "'d' of type 'ptrdiff_t'"),
])
def test_kernel_parameter_of_record_with_host_unsized_member_rejected(record: str,
                                                                      member: str) -> None:
    # OpenCL C 1.2 6.9.k forbids these records as kernel parameters, as the types themselves:
    # the host cannot know the record's layout
    source = record + "\n__kernel void k(__global int *o, S s) { o[0] = 1; }"
    line = source.count("\n") + 1
    assert_rejected(source, (line, 36), f"kernel parameter 's' of type 'S' cannot hold member "
                                        f"{member}")


def test_records_with_bool_or_size_t_allowed_behind_pointers_and_in_helpers() -> None:
    compile_source("typedef struct { bool b; size_t n; } S;\n"
                   "int f(S s) { return s.b + s.n; }\n"
                   "__kernel void k(__global int *o, __global S *s) { o[0] = f(s[0]); }\n",
                   "t.cl")


# ---------------------------------------------------------------- __local variables

@pytest.mark.parametrize("body, at", [
    ("{ __local float t[4]; t[0] = 1; a[0] = t[0]; }", (1, 54)),
    ("for (int i = 0; i < 2; i++) { __local float t[4]; t[i] = 1; a[i] = t[i]; }", (1, 82)),
])
def test_kernel_local_variables_only_in_outermost_block(body: str, at: tuple[int, int]) -> None:
    assert_rejected(f"__kernel void k(__global float *a) {{ {body} }}", at,
                    "__local variable 't' must be declared in the outermost block")


def test_kernel_local_variables_in_outermost_block_accepted() -> None:
    compile_source("__kernel void k(__global float *a) {\n"
                   "  __local float t[4];\n"
                   "  { __constant float c[2] = {1, 2}; t[0] = c[1]; } a[0] = t[0];\n"
                   "}\n", "t.cl")


# ---------------------------------------------------------------- operators on vectors

@pytest.mark.parametrize("statement, col, fragment", [
    ("v++;", 49, "'++' does not apply to the floating vector type 'float4'"),
    ("--v;", 51, "'--' does not apply to the floating vector type 'float4'"),
    ("a[0]--;", 49, "write '-= 1'"),
])
def test_increment_of_floating_vector_rejected(statement: str, col: int, fragment: str) -> None:
    source = f"__kernel void k(__global float4 *a) {{ float4 v; {statement} }}"
    assert_rejected(source, (1, col), fragment)


def test_increment_of_integer_vector_and_floating_component_accepted() -> None:
    compile_source("__kernel void k(__global int4 *a, __global float4 *b) {\n"
                   "  int4 v = a[0]; v++; --v; a[1]++; b[0].x++; a[0] = v;\n"
                   "}\n", "t.cl")


# ---------------------------------------------------------------- switch labels

@pytest.mark.parametrize("labels, col", [("case 0:", 64), ("default:", 65)])
def test_declaration_right_after_a_switch_label_rejected(labels: str, col: int) -> None:
    source = ("__kernel void k(__global int *a) { switch (a[0]) { "
              f"{labels} int x = 1; a[1] = x; break; }} }}")
    assert_rejected(source, (1, col), f"a declaration cannot directly follow a "
                                      f"'{labels.split()[0].rstrip(':')}' label")


def test_declarations_after_a_statement_or_in_braces_after_a_label_accepted() -> None:
    compile_source("__kernel void k(__global int *a) {\n"
                   "  switch (a[0]) {\n"
                   "  case 0: { int x = 1; a[1] = x; } break;\n"
                   "  case 1: a[2] = 2; int y = 3; a[3] = y; break;\n"
                   "  default: ;\n"
                   "  }\n"
                   "}\n", "t.cl")


# ---------------------------------------------------------------- function pointers

@pytest.mark.parametrize("source, at", [
    ("int g(int x) { return x; }\n"
     "__kernel void k(__global int *a) { int (*fp)(int) = g; a[0] = fp(1); }", (2, 41)),
    ("typedef float (*unary)(float);\n__kernel void k(__global float *a) { }", (1, 16)),
    ("float apply(float (*f)(float), float x) { return f(x); }\n"
     "__kernel void k(__global float *a) { }", (1, 20)),
])
def test_function_pointer_rejected(source: str, at: tuple[int, int]) -> None:
    assert_rejected(source, at, "pointers to functions are not allowed in OpenCL C")


# ---------------------------------------------------------------- attributes after a struct body

TRAILING_ATTRIBUTES = """
typedef struct { char c; int i; float f; } __attribute__((packed)) Packed;
struct Wide { char c; } __attribute__((aligned(8)));
typedef struct Tag { short s; } __attribute__((aligned(16))) Tagged;
__kernel void k(__global int *out, Packed p, __global Packed *many) {
    out[0] = sizeof(Packed); out[1] = sizeof(struct Wide); out[2] = sizeof(Tagged);
    out[3] = __alignof__(Tagged); out[4] = p.i; out[5] = (int)many[1].f + many[1].c;
}
"""


def test_attributes_after_a_struct_body_apply_to_the_struct(ctx, queue) -> None:
    """As in pocl's clang (9, 8, 16, 16): the attributes were dropped (12, 1, 2, 2), so a
    numpy record of the packed layout was read at the wrong offsets."""
    packed = np.dtype([("c", "i1"), ("i", "<i4"), ("f", "<f4")])  # numpy records are packed
    one = np.zeros(1, packed)
    one["i"] = 77
    many = np.zeros(2, packed)
    many[1] = (3, 0, 40.0)
    out = np.zeros(6, np.int32)
    out_buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    many_buf = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=many)
    cl.Program(ctx, TRAILING_ATTRIBUTES).build().k(queue, (1,), None, out_buf, one, many_buf)
    cl.enqueue_copy(queue, out, out_buf)
    assert out.tolist() == [9, 8, 16, 16, 77, 43]


STATEMENT_ATTRIBUTES = """
__kernel void k(__global int *out) {
    int sum = 0;
    __attribute__((opencl_unroll_hint(2)))
    for (int i = 0; i < 5; i++) sum += i;
    __attribute__((xcl_pipeline_loop(1))) __attribute__((opencl_unroll_hint))
    while (sum < 20) { sum += 3; }
    __attribute__((aligned(16))) int kept = sum;
    out[0] = kept;
}
"""


def test_loop_hint_attributes_before_a_statement_are_accepted(ctx, queue) -> None:
    """Attributes before a loop (OpenCL 2.0's opencl_unroll_hint, vendor pipeline hints),
    which pocl's clang takes, failed with 'expected a declaration before for'."""
    out = np.zeros(1, np.int32)
    out_buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    cl.Program(ctx, STATEMENT_ATTRIBUTES).build().k(queue, (1,), None, out_buf)
    cl.enqueue_copy(queue, out, out_buf)
    assert out[0] == 22


GNU_KEYWORD_SPELLINGS = """
static __inline__ int twice(__const int v) { return 2 * v; }
__kernel void k(__global int *__restrict__ out, __global const int *__restrict in,
                __signed__ int bias) {
    __volatile__ int v = in[0];
    out[0] = twice(v) + bias;
}
"""


def test_gnu_spellings_of_keywords_are_the_keywords(ctx, queue) -> None:
    """'__restrict__', '__inline__', '__const', ... which pocl's clang takes as the keywords
    they spell, failed with "unknown type name '__restrict__'"."""
    out = np.zeros(1, np.int32)
    data = np.array([20], np.int32)
    out_buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    in_buf = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=data)
    program = cl.Program(ctx, GNU_KEYWORD_SPELLINGS).build()
    program.k(queue, (1,), None, out_buf, in_buf, np.int32(2))
    cl.enqueue_copy(queue, out, out_buf)
    assert out[0] == 42


ARROW_ON_VECTOR_POINTERS = """
__kernel void k(__global float4 *p, __global float *o) {
    o[0] = p->y + (p + 1)->w;
    p->x = 7.0f;
    (p + 1)->xy = (float2)(8.0f, 9.0f);
    float4 mine[2] = {(float4)(1.0f), (float4)(2.0f)};
    o[1] = mine->x + (mine + 1)->y;
}
"""


def test_arrow_selects_components_through_a_pointer_to_a_vector(ctx, queue) -> None:
    """'p->y' on a pointer to a vector is '(*p).y', as pocl's clang takes it; it was refused
    as a member reference on something not a pointer to a struct."""
    vectors = np.arange(8, dtype=np.float32)
    out = np.zeros(2, np.float32)
    vec_buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                        hostbuf=vectors)
    out_buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    cl.Program(ctx, ARROW_ON_VECTOR_POINTERS).build().k(queue, (1,), None, vec_buf, out_buf)
    cl.enqueue_copy(queue, vectors, vec_buf)
    cl.enqueue_copy(queue, out, out_buf)
    assert vectors.tolist() == [7, 1, 2, 3, 8, 9, 6, 7]
    assert out.tolist() == [8, 3]


TYPEDEF_BEFORE_DEFINITION = """
struct Pair;
typedef struct Pair Pair;
typedef union Bits Bits;
struct Pair { int a; float b; };
union Bits { float f; uint u; };
int sum(const Pair *p) { return p->a + (int)p->b; }
__kernel void k(__global int *out, Pair p) {
    Pair q = {3, 4.0f};
    Bits bits;
    bits.f = 1.0f;
    struct Here;
    typedef struct Here Here;
    struct Here { int z; };
    Here here = {2};
    out[0] = sum(&p) + sum(&q) + (bits.u == 0x3f800000u) + here.z;
}
"""


def test_typedef_of_a_record_defined_later(ctx, queue) -> None:
    """'struct S;' and 'typedef struct S S;' ahead of S's definition, as ported C writes
    them, were refused as uses of an incomplete type; a use before the definition still is."""
    out = np.zeros(1, np.int32)
    pair = np.array([(10, 20.0)], np.dtype([("a", "<i4"), ("b", "<f4")]))
    out_buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    cl.Program(ctx, TYPEDEF_BEFORE_DEFINITION).build().k(queue, (1,), None, out_buf, pair)
    cl.enqueue_copy(queue, out, out_buf)
    assert out[0] == 40
    assert_rejected("typedef struct S S;\nS make(void);\nstruct S { int a; };\n", (2, 1),
                    "'S' names the incomplete type 'struct S'")
    assert_rejected("struct node { int v; struct node *next; };\n", (1, 29),
                    "'struct node' refers to itself inside its own definition")


SHARED_DEFINITION = """
typedef struct _Parms { float a; int b; } Parms, *PParms;
__constant struct C { float a; int b; } x = {1.5f, 2}, y = {2.5f, 3};
typedef enum { A = 3, B } E, *PE;
__kernel void k(__global float *out) {
    struct P { int a; } u, v;
    u.a = 1; v = u;
    Parms p = {0.25f, 5}; PParms pp = &p;
    E e = B; PE pe = &e;
    out[0] = v.a + x.a + y.b + *pe + pp->a + pp->b;
}
"""


def test_declarators_sharing_a_record_or_enum_definition(ctx, queue) -> None:
    """`typedef struct S {...} T, *PT;` (the AMD SDK's style) defines the struct once for every
    declarator: each one analysed the definition again, so the second was a 'redefinition of
    struct S' (or of the enum's constants)."""
    out = np.zeros(1, np.float32)
    out_buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    cl.Program(ctx, SHARED_DEFINITION).build().k(queue, (1,), None, out_buf)
    cl.enqueue_copy(queue, out, out_buf)
    assert out.tolist() == [1 + 1.5 + 3 + 4 + 0.25 + 5]


def test_alignment_after_a_struct_body_must_be_a_power_of_two() -> None:
    assert_rejected("typedef struct { char c; } __attribute__((aligned(3))) S;\n"
                    "__kernel void k(__global S *s) { }", (1, 43),
                    "requested alignment 3 is not a power of two")


@pytest.mark.parametrize(("source", "col"), [
    ("typedef union { char c[5]; int i; } __attribute__((packed)) U;", 52),
    ("union __attribute__((aligned(16))) V { int i; };", 7),
    ("union V __attribute__((aligned(16))) { int i; };", 9),
    ("union V { int i; } __attribute__((aligned(16)));", 35),
])
def test_attributes_of_a_union_are_refused(source: str, col: int) -> None:
    """pocl lays a packed or aligned union out by its attributes; ppcl's parser dropped them
    and gave the natural layout (sizeof 8 against 5, 4 against 16), so it refuses them."""
    assert_rejected(source + "\n__kernel void k(__global int *o) { o[0] = 1; }", (1, col),
                    "attributes of a union (packed, aligned) are not supported")


def test_a_union_without_attributes_beside_a_packed_struct_compiles(ctx, queue) -> None:
    source = """typedef struct { char c; int i; } __attribute__((packed)) S;
        union W { int i; float f; char c[6]; };
        __kernel void k(__global int *o) { o[0] = sizeof(S); o[1] = sizeof(union W); }"""
    program = cl.Program(ctx, source).build()
    out = np.zeros(2, np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    program.k(queue, (1,), None, buf)
    cl.enqueue_copy(queue, out, buf)
    assert out.tolist() == [5, 8]


# ---------------------------------------------------------------- qualifiers of a typedef

@pytest.mark.parametrize("body, at", [
    ("cfloat c = 2; c = 3;", (2, 55)),
    ("p[0] = 1;", (2, 44)),
    ("__private cfloat arr[2] = {1, 2}; arr[1] = 0;", (2, 80)),
])
def test_const_of_a_typedef_is_kept(body: str, at: tuple[int, int]) -> None:
    # 'typedef const float cfloat;' made a cfloat writable: the typedef's const was dropped
    source = ("typedef const float cfloat;\n"
              f"__kernel void k(__global cfloat *p) {{ {body} }}")
    assert_rejected(source, at, "const")


def test_pointer_to_const_typedef_reports_const_argument(ctx) -> None:
    source = ("typedef const float cfloat;\n"
              "__kernel void k(__global cfloat *p, __global float *o) { o[0] = p[0]; }")
    kernel = cl.Program(ctx, source).build("-cl-kernel-arg-info").k
    info = cl.kernel_arg_info
    assert kernel.get_arg_info(0, info.TYPE_QUALIFIER) == cl.kernel_arg_type_qualifier.CONST
    assert kernel.get_arg_info(0, info.TYPE_NAME) == "float*"
