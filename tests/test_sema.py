"""Focused tests of the semantic analysis: types, conversions, vectors, constants, names."""

from __future__ import annotations

import numpy as np
import pytest

from ppcl.compiler.diagnostics import CompileError
from ppcl.compiler.frontend import compile_source
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import types as T
from ppcl.compiler.ir.visit import find_all
from tests.launch import run


def body_of(source: str, name: str = "k", **kwargs: object) -> ir.Block:
    module = compile_source(source, "t.cl", **kwargs).module  # type: ignore[arg-type]
    fn = module.function(name)
    assert fn is not None and fn.body is not None
    return fn.body


def init_of(source: str, var: str) -> ir.Expr:
    for decl in find_all(body_of(source), ir.VarDecl):
        if decl.name == var:
            assert decl.init is not None
            return decl.init
    raise AssertionError(f"no variable {var}")


def errors_of(source: str, **kwargs: object) -> list[str]:
    with pytest.raises(CompileError) as info:
        compile_source(source, "t.cl", **kwargs)  # type: ignore[arg-type]
    return [d.message for d in info.value.diagnostics if d.severity.value == "error"]


def k(body: str, params: str = "__global float *out") -> str:
    return f"__kernel void k({params}) {{\n{body}\n}}\n"


# ---------------------------------------------------------------- literals and arithmetic


@pytest.mark.parametrize("literal, expected", [
    ("1", T.INT), ("1u", T.UINT), ("1l", T.LONG), ("1ul", T.ULONG), ("0xFFFFFFFF", T.UINT),
    ("4294967296", T.LONG), ("2147483648", T.LONG), ("1.0f", T.FLOAT), ("1.0", T.DOUBLE),
    ("'a'", T.INT),
])
def test_literal_types(literal: str, expected: T.Type) -> None:
    e = init_of(k(f"long x = {literal};"), "x")
    inner = e.operand if isinstance(e, ir.Cast) else e
    assert inner.type == expected


def test_single_precision_constant_makes_double_literals_float() -> None:
    e = init_of(k("float x = 1.5;"), "x")
    source = k("float x = 1.5;")
    e = body_of(source, options="-cl-single-precision-constant")  # type: ignore[assignment]
    lit = find_all(e, ir.FloatLit)[0]
    assert lit.type == T.FLOAT


def test_usual_arithmetic_inserts_implicit_casts() -> None:
    e = init_of(k("int i = 1; float x = i + 2.0f;"), "x")
    assert isinstance(e, ir.Binary) and e.type == T.FLOAT
    assert isinstance(e.lhs, ir.Cast) and e.lhs.implicit and e.lhs.operand.type == T.INT


def test_integer_promotion_of_char() -> None:
    e = init_of(k("char a = 1; char b = 2; int c = a + b;"), "c")
    assert isinstance(e, ir.Binary) and e.type == T.INT


def test_scalar_widened_to_vector() -> None:
    e = init_of(k("float4 v = (float4)(1.0f); float4 w = v * 2.0f;"), "w")
    assert isinstance(e, ir.Binary) and e.type == T.VectorType(T.FLOAT, 4)
    assert isinstance(e.rhs, ir.Cast) and e.rhs.type == T.VectorType(T.FLOAT, 4)


def test_vector_comparison_yields_signed_vector() -> None:
    e = init_of(k("float4 a = (float4)(1.0f); int4 m = a < a;"), "m")
    assert e.type == T.VectorType(T.INT, 4)
    e = init_of(k("double2 a = (double2)(1.0); long2 m = !a;"), "m")
    assert e.type == T.VectorType(T.LONG, 2)


def test_pointer_arithmetic_types() -> None:
    src = k("__global float *p = out + 4; long d = p - out; int c = p < out;")
    body = body_of(src)
    decls = {d.name: d for d in find_all(body, ir.VarDecl)}
    assert decls["p"].init is not None and isinstance(decls["p"].init.type, T.PointerType)
    assert decls["d"].init is not None and decls["d"].init.type == T.LONG


def test_subscript_with_the_pointer_inside_the_brackets() -> None:
    """C's subscript is symmetric: ``2[p]`` reads ``p[2]``, for a pointer and an array."""
    src = k("__private float a[4]; out[0] = 2[out] + 1[a];")
    indexes = find_all(body_of(src), ir.Index)
    assert indexes and all(isinstance(i.index.type, T.ScalarType) for i in indexes)
    assert all(not isinstance(i.base.type, T.ScalarType) for i in indexes)


# ---------------------------------------------------------------- vectors


def test_swizzle_indices() -> None:
    body = body_of(k("float16 v = (float16)(0.0f); float4 a = v.s0257; float4 b = v.hi.lo;"
                     " float c = v.sA; float3 w = (float3)(1.0f); float2 h = w.hi;"))
    swizzles = {s.spelling: s for s in find_all(body, ir.Swizzle)}
    assert swizzles["s0257"].indices == (0, 2, 5, 7)
    assert swizzles["sA"].indices == (10,)
    # v.hi.lo is one selection from v: components 8..11
    assert swizzles["s89ab"].indices == (8, 9, 10, 11)
    assert swizzles["s89ab"].type == T.VectorType(T.FLOAT, 4)
    assert [s.indices for s in find_all(body, ir.Swizzle) if s.spelling == "hi"][-1] == (2, 3)


def test_vector_literal_expansion() -> None:
    e = init_of(k("float2 a = (float2)(1.0f, 2.0f); float4 v = (float4)(a, 3, 4.0f);"), "v")
    assert isinstance(e, ir.VectorLiteral) and len(e.elems) == 3
    assert e.elems[1].type == T.FLOAT  # int 3 converted


def test_rgba_rejected_in_opencl_1_2() -> None:
    messages = errors_of(k("float4 v = (float4)(1.0f); float r = v.r;"))
    assert "OpenCL C 3.0" in messages[0]


def test_explicit_vector_cast_rejected() -> None:
    messages = errors_of(k("int4 i = (int4)(1); float4 f = (float4)i;"))
    assert "convert_float4" in messages[0]


def test_vector_ternary_is_select() -> None:
    e = init_of(k("float4 a = (float4)(1.0f); int4 m = a > a; float4 r = m ? a : 0.0f;"), "r")
    assert isinstance(e, ir.Conditional) and e.type == T.VectorType(T.FLOAT, 4)


# ---------------------------------------------------------------- constants, sizes


def test_constant_folding_array_size_and_case() -> None:
    src = k("int a[(3 + 5) * 2 >> 1]; switch (a[0]) { case 1 << 3: break; case -1: break; }")
    body = body_of(src)
    decl = find_all(body, ir.VarDecl)[0]
    assert decl.type == T.ArrayType(T.INT, 8)
    assert [c.value for c in find_all(body, ir.Case)] == [8, -1]


def test_duplicate_case_rejected() -> None:
    assert "duplicate case value" in errors_of(
        k("int x = 1; switch (x) { case 1: break; case 1: break; }"))[0]


@pytest.mark.parametrize("spelling, message", [
    ("short long", "invalid type 'short long'"),
    ("char short", "invalid type 'char short'"),
    ("char int", "invalid type 'char int'"),
    ("int int", "'int' given twice in type 'int int'"),
    ("unsigned unsigned", "'unsigned' given twice in type 'unsigned unsigned'"),
    ("signed unsigned", "'signed' and 'unsigned' cannot be combined"),
])
def test_contradictory_integer_type_words_rejected(spelling: str, message: str) -> None:
    # 'short long' and the like were taken as their first size word, silently
    assert errors_of(k(f"{spelling} d = 1;"))[0] == message


def test_integer_type_word_orders_accepted() -> None:
    src = k("short int a = 1; int long b = 2; long unsigned int c = 3; signed char d = 4; "
            "unsigned short int e = 5; signed f = 6;")
    types = [init_of(src, name).type for name in "abcdef"]
    assert types == [T.SHORT, T.LONG, T.ULONG, T.CHAR, T.USHORT, T.INT]


def test_second_default_in_one_switch_rejected() -> None:
    # was accepted, and the C compiler then rejected the generated code as a ppcl bug
    assert errors_of(k("int x = 1;\nswitch (x) { default: break;\n  default: break; }")) == [
        "multiple default labels in one switch (the first is at line 3)"]
    body = body_of(k("int x = 1; switch (x) { default: switch (x) { default: break; } }"))
    assert len(find_all(body, ir.Default)) == 2


@pytest.mark.parametrize("expr, value", [
    ("sizeof(float4)", 16), ("sizeof(float3)", 16), ("sizeof(char)", 1), ("sizeof(size_t)", 8),
    ("vec_step(float3)", 4), ("vec_step(int8)", 8), ("vec_step(float)", 1),
    ("sizeof(struct S)", 48), ("sizeof(union U)", 16), ("sizeof(struct P)", 5),
])
def test_sizeof_and_vec_step(expr: str, value: int) -> None:
    src = ("struct S { char c; float4 v; int i; };\n"
           "union U { int i; float4 v; };\n"
           "struct __attribute__((packed)) P { char c; int i; };\n"
           + k(f"int x = {expr};"))
    e = init_of(src, "x")
    inner = e.operand if isinstance(e, ir.Cast) else e
    assert isinstance(inner, (ir.SizeOf, ir.VecStep)) and inner.value == value


def test_enum_values() -> None:
    module = compile_source("enum E { A, B = 5, C, D = B * 2 };\n" + k("int x = C + D;"),
                            "t.cl").module
    enum = [d for d in module.decls if isinstance(d, ir.EnumDef)][0]
    assert isinstance(enum.type, T.EnumType)
    assert enum.type.enumerators == (("A", 0), ("B", 5), ("C", 6), ("D", 10))


def test_array_size_from_initializer_and_constant_data() -> None:
    module = compile_source("__constant float w[] = {1.0f, 2.0f, 3.0f};\n"
                            + k("out[0] = w[1];"), "t.cl").module
    gv = [d for d in module.decls if isinstance(d, ir.GlobalVar)][0]
    assert gv.decl.type == T.ArrayType(T.FLOAT, 3)
    assert gv.decl.space is T.AddressSpace.CONSTANT


# ---------------------------------------------------------------- names and declarations


def test_unique_local_names_on_shadowing() -> None:
    body = body_of(k("int x = 1; { int x = 2; { int x = 3; } } for (int x = 0; x < 2; x++) {}"))
    names = [d.name for d in find_all(body, ir.VarDecl)]
    assert names == ["x", "x_1", "x_2", "x_3"]
    refs = {r.name for r in find_all(body, ir.VarRef)}
    assert "x_3" in refs


def test_kernel_attributes_parsed() -> None:
    src = ("__kernel __attribute__((reqd_work_group_size(8, 4, 1)))\n"
           "__attribute__((vec_type_hint(float4))) void k(__global float *out) {}\n")
    fn = compile_source(src, "t.cl").module.kernels[0]
    assert fn.attrs.reqd_work_group_size == (8, 4, 1)
    assert fn.attrs.vec_type_hint == T.VectorType(T.FLOAT, 4)


def test_local_arrays_kept_in_kernel_body() -> None:
    body = body_of(k("__local float tile[16][16]; tile[0][0] = 1.0f;"))
    decl = find_all(body, ir.VarDecl)[0]
    assert decl.space is T.AddressSpace.LOCAL
    assert decl.type == T.ArrayType(T.ArrayType(T.FLOAT, 16), 16)


def test_typedef_kept_and_resolved() -> None:
    module = compile_source("typedef float real;\n" + k("real x = 1.0f; out[0] = x;"),
                            "t.cl").module
    assert any(isinstance(d, ir.TypeDef) and d.name == "real" for d in module.decls)
    fn = module.kernels[0]
    assert fn.body is not None and find_all(fn.body, ir.VarDecl)[0].type == T.FLOAT


def test_builtin_overload_key() -> None:
    body = body_of(k("float4 a = (float4)(1.0f); float d = dot(a, a); int g = get_global_id(0);"))
    calls = {c.name: c for c in find_all(body, ir.Call)}
    assert calls["dot"].builtin is not None and calls["dot"].type == T.FLOAT
    assert calls["get_global_id"].builtin is not None
    assert calls["get_global_id"].args[0].type == T.UINT


# ---------------------------------------------------------------- errors


def test_several_errors_reported_per_build() -> None:
    messages = errors_of(k("int a = b; float c = d;"))
    assert len(messages) == 2


def test_double_rejected_without_fp64() -> None:
    assert "double" in errors_of(k("double x = 1.0;"), fp64=False)[0]


def test_local_in_helper_rejected() -> None:
    assert "kernel function" in errors_of("void f(void) { __local int x; }\n" + k(""))[0]


def test_write_through_const_pointer_rejected() -> None:
    msg = errors_of(k("out[0] = 1.0f; p[0] = 2.0f;", "__global float *out, "
                                                     "__global const float *p"))[0]
    assert "const" in msg


def test_assign_to_rvalue_rejected() -> None:
    assert "not assignable" in errors_of(k("int a = 1; a + 1 = 2;"))[0]


def test_werror_turns_warnings_into_errors() -> None:
    src = "__attribute__((reqd_work_group_size(1, 1, 1))) void f(void) {}\n" + k("")
    result = compile_source(src, "t.cl")
    assert "only applies to kernel" in result.log
    compile_source(src, "t.cl", "-w")
    with pytest.raises(CompileError):
        compile_source(src, "t.cl", "-Werror")


def test_floating_literal_losing_its_fraction_warns() -> None:
    # 'int x = 1.5;' is 1: clang warns (and -Werror fails the build, as on pocl); ppcl built
    # it without a word. Integral literals, casts and float targets are quiet.
    src = k("int x = 1.5; x = 2.0; short s = 3.25f; x = (int)2.5; float f = 0.5;")
    result = compile_source(src, "t.cl")
    assert "changes value from 1.5 to 1" in result.log
    assert "from 'float' to 'short' changes value from 3.25f to 3" in result.log
    assert result.log.count("changes value") == 2
    with pytest.raises(CompileError, match="changes value from 1.5 to 1"):
        compile_source(src, "t.cl", "-Werror")


def test_floating_literal_out_of_the_range_of_its_integer_type_warns() -> None:
    # 'uint u = 1e10;' is undefined in C: clang warns (as pocl's build log shows), ppcl built
    # it without a word. A negated literal, an assignment and a float literal count; in-range
    # values, casts, compound assignments and float targets are quiet.
    src = k("  uint u = 1e10;\n  uint n = -1.0;\n  int i = -3.5e12f;\n  uchar c = 300.0;\n"
            "  u = 1e10; int fine = 2147483647.0; uint zero = -0.0; long l = -9.2e18;\n"
            "  u = (uint)1e10; u += 1e10; double d = 1e300; int x = -1.5;")
    result = compile_source(src, "t.cl")
    undefined = "implicit conversion of out of range value from '{}' to '{}' is undefined"
    assert "t.cl:2:12: warning: " + undefined.format("double", "uint") in result.log
    assert "\n  uint u = 1e10;\n           ^" in result.log
    assert ":3:13: warning: " + undefined.format("double", "uint") in result.log
    assert ":4:12: warning: " + undefined.format("float", "int") in result.log
    assert ":5:13: warning: " + undefined.format("double", "uchar") in result.log
    assert ":6:7: warning: " + undefined.format("double", "uint") in result.log
    assert result.log.count("out of range") == 5
    assert "changes value from -1.5 to -1" in result.log
    assert result.log.count("warning:") == 6
    with pytest.raises(CompileError, match="out of range value"):
        compile_source(src, "t.cl", "-Werror")


def test_constant_folding_masks_shift_counts_and_converts_floats_to_bool():
    from ppcl.compiler.frontend import compile_source as compile_

    src = """__kernel void k(__global int *o, int x) {
        switch (x) { case 1 << 33: o[0] = 1; break; case (bool)0.5f: o[0] = 2; break; }
    }"""
    module = compile_(src, "fold.cl").module
    from ppcl.compiler.ir import nodes as irn
    from ppcl.compiler.ir.visit import find_all

    assert sorted(c.value for c in find_all(module, irn.Case)) == [1, 2]


@pytest.mark.parametrize("storage", ["auto", "register"])
def test_auto_and_register_are_not_opencl_c(storage):
    """OpenCL C supports neither storage class (clang and pocl reject both); the error does not
    drop the declaration, so its uses give no second error."""
    errors = errors_of(f"__kernel void k(__global int *o) {{ {storage} int x = 1; o[0] = x; }}")
    assert len(errors) == 1 and (f"does not support the '{storage}' storage class specifier"
                                 in errors[0])


@pytest.mark.parametrize("source, message", [
    ("__kernel void k(__global float *o) { if (o[0] > 0) { __local float t[4]; "
     "t[get_local_id(0)] = 1; o[1] = t[0]; } }",
     "__local variable 't' must be declared in the outermost block"),
    ("__kernel void k(__global float *o) { __local float t = 2; o[0] = t; }",
     "__local variable 't' cannot have an initializer"),
    ("void f(__global float *o) { __local float t[4]; t[0] = 1; o[0] = t[0]; }\n"
     "__kernel void k(__global float *o) { f(o); }",
     "__local variable 't' can only be declared in a kernel function"),
    ("__kernel void k(__global float *o) { __constant float t; o[0] = t; }",
     "__constant variable 't' must be initialized"),
])
def test_address_space_rules_keep_the_declaration(source: str, message: str) -> None:
    """A variable breaking an address-space rule (a lavaMD-style kernel declaring its __local
    tiles inside an 'if') gets that one error: its uses are not reported as undeclared."""
    errors = errors_of(source)
    assert len(errors) == 1 and message in errors[0], errors


def test_const_pointer_passed_to_a_helper_without_const_warns() -> None:
    # A read-only buffer handed on to a helper whose parameter lacks const: clang warns and
    # builds it (pocl runs such kernels); ppcl refused the program. -Werror still refuses it.
    src = ("float first(__global float *p) { return p[0]; }\n"
           "__kernel void k(__global const float *in, __global float *out) {\n"
           "  __global float *alias = in;\n"
           "  out[0] = first(in) + alias[1];\n"
           "}\n")
    result = compile_source(src, "t.cl")
    assert result.log.count("discards qualifiers") == 2
    assert "t.cl:4:18: warning: " in result.log
    with pytest.raises(CompileError, match="discards qualifiers"):
        compile_source(src, "t.cl", "-Werror")


def test_prototype_of_printf_is_accepted_and_the_builtin_kept() -> None:
    # Kernels written for compilers without a declared printf declare it themselves; clang
    # takes the prototype, ppcl refused it as a user variadic function.
    for proto in ("int printf(const char *restrict format, ...);",
                  "int printf(__constant char *, ...);"):
        src = proto + "\n" + k('printf("%d\\n", 3);')
        body = body_of(src)
        assert any(c.name == "printf" for c in find_all(body, ir.Call))
    bad = "void printf(int x, ...);\n" + k("")
    assert "conflicting types for 'printf'" in errors_of(bad)[0]
    assert "variadic functions are not supported" in errors_of(
        "int show(const char *f, ...);\n" + k(""))[0]


# ---------------------------------------------------------------- clang's branch hint


def test_builtin_expect_is_its_first_argument_as_a_long():
    # the likely()/unlikely() macros of published kernels: a hint, the value of the condition
    init = init_of(k("long v = __builtin_expect(!!(out[0] > 1.0f), 1);"), "v")
    assert init.type == T.LONG
    assert not any(isinstance(c, ir.Call) for c in find_all(init, ir.Call))


@pytest.mark.parametrize("call, message", [
    ("__builtin_expect(1)", "__builtin_expect takes 2 arguments, got 1"),
    ("__builtin_expect(out[0], 1)", "__builtin_expect takes integer arguments, not 'float'"),
])
def test_builtin_expect_with_wrong_arguments_is_an_error(call, message):
    assert message in errors_of(k(f"long v = {call};"))


def test_builtin_expect_runs_as_the_condition_it_hints():
    source = ("#define likely(x) __builtin_expect(!!(x), 1)\n"
              "#define unlikely(x) __builtin_expect((x), 0)\n"
              "__kernel void k(__global const int *a, __global long *out)\n{\n"
              "    int i = get_global_id(0);\n"
              "    long hinted = __builtin_expect(a[i] * 3, 7);\n"
              "    if (likely(a[i] > 2)) hinted += 1000;\n"
              "    if (unlikely(a[i] == 5)) hinted = -hinted;\n"
              "    out[i] = hinted;\n}\n")
    a = np.arange(-3, 9, dtype=np.int32)
    out = np.zeros(a.size, np.int64)
    run(source, "k", (a.size,), (4,), a, out)
    expect = a.astype(np.int64) * 3 + np.where(a > 2, 1000, 0)
    expect = np.where(a == 5, -expect, expect)
    assert out.tolist() == expect.tolist()
