"""The IR verifier: the front end's output over the corpus is valid, and each invariant is
caught, located, in hand-broken IR."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ppcl.compiler.analysis.uniformity import analyze_kernel
from ppcl.compiler.analysis.verify import VerificationError, check, verify, verify_barriers_uniform
from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.frontend import compile_source
from ppcl.compiler.ir import builtins
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import types as T

KERNEL_DIR = Path(__file__).parent / "kernels"
FILES = sorted(p.name for p in KERNEL_DIR.glob("*.cl"))

FLOAT4 = T.VectorType(T.FLOAT, 4)
INT4 = T.VectorType(T.INT, 4)
GLOBAL_FLOAT_P = T.PointerType(T.FLOAT, T.AddressSpace.GLOBAL)


def at(line: int, col: int = 1) -> Loc:
    return Loc("t.cl", line, col)


def compile_module(source: str) -> ir.Module:
    return compile_source(source, "t.cl").module


def function(*stmts: ir.Stmt, name: str = "k", kernel: bool = True, ret: T.Type = T.VOID,
             params: tuple[ir.Param, ...] = ()) -> ir.Function:
    return ir.Function(name, ret, params, ir.Block(tuple(stmts)), is_kernel=kernel,
                       loc=at(1))


def module(*decls: ir.TopLevel) -> ir.Module:
    return ir.Module(tuple(decls))


def var(name: str, t: T.Type, line: int = 2) -> ir.VarRef:
    return ir.VarRef(t, name, loc=at(line, 5))


def decl(name: str, t: T.Type, init: ir.Expr | None = None, line: int = 2,
         space: T.AddressSpace = T.AddressSpace.PRIVATE) -> ir.DeclStmt:
    return ir.DeclStmt((ir.VarDecl(name, t, space, init=init, loc=at(line, 3)),), loc=at(line))


def int_lit(value: int, t: T.Type = T.INT) -> ir.IntLit:
    return ir.IntLit(t, value)


def expr_problems(e: ir.Expr, *decls: ir.DeclStmt) -> list[str]:
    return verify(module(function(*decls, ir.ExprStmt(e, loc=at(3)))))


# ---------------------------------------------------------------- the front end's output


@pytest.mark.parametrize("name", FILES)
def test_corpus_kernel_verifies(name: str) -> None:
    path = KERNEL_DIR / name
    result = compile_source(path.read_text(encoding="utf-8"), str(path))
    assert verify(result.module) == []


def test_front_end_conventions_verify() -> None:
    m = compile_module("""
        typedef struct { float x; int n; } pair;
        __constant int table[3] = {1, 2, 3};
        int helper(__global const float *p, int i) { return (int)p[i] + table[i]; }
        __kernel void k(__global float *out, __global const float4 *v, __local float *tmp) {
            char c = 1; c += 2; c <<= 1; c *= 1.5f;
            float4 f = v[0] * 2.0f; f.xy = f.zw; f += 1;
            float3 g = (float3)(1.0f); float2 h = g.hi;
            __global float *p = out; p += 2;
            pair q = {1.0f, 2};
            int x = helper(out, q.n) ? 1 : 0;
            for (int i = 0; i < 4; i++) { if (i == x) continue; switch (i) { case 1: break; } }
            tmp[get_local_id(0)] = clamp(f.x, 0.0f, 1.0f) + h.x;
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = tmp[0] + (float)c + g.x;
        }
    """)
    assert verify(m) == []
    check(m)


# ---------------------------------------------------------------- each invariant


def test_binary_operands_of_different_types() -> None:
    e = ir.Binary(T.INT, "+", int_lit(1), ir.FloatLit(T.FLOAT, 1.0), loc=at(3, 7))
    problems = expr_problems(e)
    assert len(problems) == 1
    assert problems[0].startswith("t.cl:3:7: in 'k':")
    assert "different types ('int' and 'float')" in problems[0]


def test_comparison_result_type() -> None:
    f4 = var("f", FLOAT4, 3)
    e = ir.Binary(FLOAT4, "<", f4, f4, loc=at(3, 7))
    problems = expr_problems(e, decl("f", FLOAT4))
    assert len(problems) == 1 and "not 'int4'" in problems[0]


def test_shift_and_pointer_arithmetic_keep_operand_types() -> None:
    shift = ir.Binary(T.LONG, "<<", int_lit(1, T.LONG), int_lit(3))
    pointer = ir.Binary(GLOBAL_FLOAT_P, "+", var("p", GLOBAL_FLOAT_P), int_lit(1, T.ULONG))
    params = (ir.Param("p", GLOBAL_FLOAT_P),)
    f = function(ir.ExprStmt(shift), ir.ExprStmt(pointer), params=params)
    assert verify(module(f)) == []


def test_assignment_of_another_type() -> None:
    e = ir.Assign(T.INT, "=", var("x", T.INT, 3), ir.FloatLit(T.FLOAT, 2.0), loc=at(3, 9))
    problems = expr_problems(e, decl("x", T.INT))
    assert len(problems) == 1
    assert problems[0].startswith("t.cl:3:9:") and "assignment of 'float' to 'int'" in problems[0]


def test_compound_assignment_value_has_the_operation_type() -> None:
    x = var("x", T.CHAR, 3)
    good = ir.Assign(T.CHAR, "+=", x, int_lit(1))
    bad = ir.Assign(T.CHAR, "+=", x, ir.Cast(T.CHAR, int_lit(1), implicit=True), loc=at(3, 4))
    assert expr_problems(good, decl("x", T.CHAR)) == []
    problems = expr_problems(bad, decl("x", T.CHAR))
    assert len(problems) == 1 and "operation's type 'int'" in problems[0]


def test_conditional_branches_differ() -> None:
    e = ir.Conditional(T.INT, int_lit(1), int_lit(2), int_lit(3, T.LONG), loc=at(3, 2))
    problems = expr_problems(e)
    assert len(problems) == 1 and "'?:' branches have different types" in problems[0]


def test_builtin_arguments_match_the_overload() -> None:
    key = builtins.resolve("sqrt", [T.FLOAT]).key
    good = ir.Call(T.FLOAT, "sqrt", (ir.FloatLit(T.FLOAT, 2.0),), builtin=key)
    bad = ir.Call(T.FLOAT, "sqrt", (int_lit(2),), builtin=key, loc=at(3, 1))
    assert expr_problems(good) == []
    problems = expr_problems(bad)
    assert len(problems) == 1 and "argument 1 of float sqrt(float) has type 'int'" in problems[0]


def test_builtin_key_must_exist() -> None:
    e = ir.Call(T.FLOAT, "sqrt", (ir.FloatLit(T.FLOAT, 2.0),), builtin="sqrt__nothing")
    problems = expr_problems(e)
    assert len(problems) == 1 and "names no builtin overload" in problems[0]


def test_user_call_arguments_match_the_callee() -> None:
    helper = ir.Function("helper", T.INT, (ir.Param("a", T.INT),),
                         ir.Block((ir.Return(var("a", T.INT)),)))
    call = ir.Call(T.INT, "helper", (int_lit(1, T.LONG),), loc=at(3, 3))
    problems = verify(module(helper, function(ir.ExprStmt(call))))
    assert len(problems) == 1 and "argument 1 of 'helper' has type 'long'" in problems[0]
    unknown = ir.Call(T.INT, "nowhere", ())
    assert "not a function of the module" in verify(module(function(ir.ExprStmt(unknown))))[0]


def test_index_base_is_pointer_array_or_vector() -> None:
    e = ir.Index(T.INT, var("x", T.INT, 3), int_lit(0), loc=at(3, 6))
    problems = expr_problems(e, decl("x", T.INT))
    assert len(problems) == 1 and "subscript of 'int', not a pointer, array or vector" in problems[0]
    i4 = T.VectorType(T.INT, 4)
    assert expr_problems(ir.Index(T.INT, var("v", i4, 3), var("k", T.INT, 3)),
                         decl("v", i4), decl("k", T.INT)) == []


def test_swizzle_indices_in_range() -> None:
    f3 = T.VectorType(T.FLOAT, 3)
    good = ir.Swizzle(T.VectorType(T.FLOAT, 2), var("f", f3, 3), (2, 3), "hi")
    bad = ir.Swizzle(T.FLOAT, var("f", f3, 3), (3,), "w", loc=at(3, 8))
    assert expr_problems(good, decl("f", f3)) == []
    problems = expr_problems(bad, decl("f", f3))
    assert len(problems) == 1 and "component 3 out of range for 'float3'" in problems[0]


def test_vector_literal_component_count() -> None:
    one = ir.FloatLit(T.FLOAT, 1.0)
    splat = ir.VectorLiteral(FLOAT4, (one,))
    bad = ir.VectorLiteral(FLOAT4, (one, one, one), loc=at(3, 2))
    assert expr_problems(splat) == []
    problems = expr_problems(bad)
    assert len(problems) == 1 and "has 3 components" in problems[0]


def test_implicit_cast_between_vector_types() -> None:
    e = ir.Cast(FLOAT4, var("v", INT4, 3), implicit=True, loc=at(3, 4))
    problems = expr_problems(e, decl("v", INT4))
    assert len(problems) == 1 and "implicit conversion between vector types" in problems[0]
    explicit = ir.Cast(FLOAT4, ir.Cast(T.FLOAT, int_lit(1)), implicit=False)
    assert expr_problems(explicit) == []


def test_variable_not_declared() -> None:
    problems = expr_problems(var("ghost", T.INT, 3))
    assert problems == ["t.cl:3:5: in 'k': 'ghost' is not a variable in scope"]


def test_variable_used_before_its_declaration_or_out_of_its_block() -> None:
    use_before = function(ir.ExprStmt(var("x", T.INT, 2)), decl("x", T.INT, line=3))
    assert "'x' is not a variable in scope" in verify(module(use_before))[0]
    inner = ir.If(int_lit(1), ir.Block((decl("y", T.INT),)))
    out_of_block = function(inner, ir.ExprStmt(var("y", T.INT, 4)))
    problems = verify(module(out_of_block))
    assert len(problems) == 1 and problems[0].startswith("t.cl:4:5:")


def test_program_scope_constants_and_parameters_are_in_scope() -> None:
    table = ir.GlobalVar(ir.VarDecl("table", T.INT, T.AddressSpace.CONSTANT, True,
                                    init=int_lit(3)))
    f = function(ir.ExprStmt(ir.Binary(T.INT, "+", var("table", T.INT), var("n", T.INT))),
                 params=(ir.Param("n", T.INT),))
    assert verify(module(table, f)) == []


def test_local_names_unique_in_a_function() -> None:
    f = function(decl("x", T.INT, line=2), ir.Block((decl("x", T.INT, line=5),)),
                 params=(ir.Param("n", T.INT),))
    problems = verify(module(f))
    assert len(problems) == 1
    assert problems[0].startswith("t.cl:5:3:") and "not unique" in problems[0]
    shadowing = function(decl("n", T.INT), params=(ir.Param("n", T.INT),))
    assert "not unique" in verify(module(shadowing))[0]


def test_break_and_continue_inside_loops() -> None:
    f = function(ir.Break(loc=at(2)), ir.Switch(int_lit(1), ir.Block((ir.Continue(loc=at(4)),))))
    problems = verify(module(f))
    assert problems == ["t.cl:2:1: in 'k': 'break' outside a loop or switch",
                        "t.cl:4:1: in 'k': 'continue' outside a loop"]
    loop = ir.While(int_lit(1), ir.Switch(int_lit(1), ir.Block((ir.Continue(), ir.Break()))))
    assert verify(module(function(loop))) == []


def test_return_value_type() -> None:
    helper = function(ir.Return(ir.FloatLit(T.FLOAT, 1.0), loc=at(2)), name="h", kernel=False,
                      ret=T.INT)
    missing = function(ir.Return(loc=at(2)), name="m", kernel=False, ret=T.INT)
    problems = verify(module(helper, missing))
    assert len(problems) == 2
    assert "return value has type 'float', the function returns 'int'" in problems[0]
    assert "return without a value" in problems[1]


def test_kernels_return_void() -> None:
    f = function(ir.Return(int_lit(0)), ret=T.INT)
    problems = verify(module(f))
    assert problems[0] == "t.cl:1:1: in 'k': kernel 'k' returns 'int', not void"


def test_local_variables_only_in_kernels() -> None:
    buffer = T.ArrayType(T.FLOAT, 16)
    in_kernel = function(decl("buf", buffer, space=T.AddressSpace.LOCAL))
    in_helper = function(decl("buf", buffer, space=T.AddressSpace.LOCAL), kernel=False)
    assert verify(module(in_kernel)) == []
    problems = verify(module(in_helper))
    assert problems == ["t.cl:2:3: in 'k': __local variable 'buf' outside a kernel"]


def test_check_raises_with_every_problem() -> None:
    f = function(ir.Break(loc=at(2)), ir.ExprStmt(var("ghost", T.INT, 3)))
    with pytest.raises(VerificationError) as info:
        check(module(f), "after pass 'x'")
    assert len(info.value.problems) == 2
    text = str(info.value)
    assert "invalid IR after pass 'x': 2 problems" in text
    assert "t.cl:2:1" in text and "t.cl:3:5" in text


def test_broken_front_end_output_is_caught() -> None:
    m = compile_module("__kernel void k(__global float *a) { a[0] = 1.0f; }")
    k = m.kernels[0]
    assert k.body is not None
    stmt = k.body.stmts[0]
    assert isinstance(stmt, ir.ExprStmt) and isinstance(stmt.expr, ir.Assign)
    broken = dataclasses.replace(stmt.expr, value=ir.FloatLit(T.DOUBLE, 1.0))
    body = ir.Block((ir.ExprStmt(broken, loc=stmt.loc),))
    problems = verify(ir.Module((dataclasses.replace(k, body=body),)))
    assert len(problems) == 1 and problems[0].startswith("t.cl:1:")


# ---------------------------------------------------------------- barriers under control


def barrier_info(source: str) -> list[str]:
    m = compile_module(source)
    kernel = m.kernels[0]
    return verify_barriers_uniform(kernel, analyze_kernel(m, kernel))


def test_barriers_under_uniform_control_are_not_listed() -> None:
    assert barrier_info("""
        __kernel void k(__local float *t, int n) {
            for (int i = 0; i < n; i++) { if (n > 2) barrier(CLK_LOCAL_MEM_FENCE); }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    """) == []


def test_barrier_under_varying_control_is_listed() -> None:
    info = barrier_info("""__kernel void k(__local float *t, int n) {
    if (get_local_id(0) < 4) {
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}""")
    assert len(info) == 1
    assert info[0].startswith("t.cl:3:9: in 'k': barrier under if at t.cl:2:")


@pytest.mark.parametrize("name", [n for n in FILES if "barrier" in n])
def test_corpus_barrier_kernels_report_without_error(name: str) -> None:
    path = KERNEL_DIR / name
    m = compile_source(path.read_text(encoding="utf-8"), str(path)).module
    for kernel in m.kernels:
        for line in verify_barriers_uniform(kernel, analyze_kernel(m, kernel)):
            assert "barrier under" in line


def test_formed_kernels_are_checked_without_the_unique_name_rule() -> None:
    from ppcl.compiler.analysis.verify import verify
    from ppcl.compiler.frontend import compile_source
    from ppcl.compiler.ir import nodes as ir

    module = compile_source("__kernel void k(__global int *o) { int a = 1; o[0] = a; }").module
    kernel = module.kernels[0]
    assert kernel.body is not None
    twice = ir.Block(kernel.body.stmts[:1] + kernel.body.stmts, loc=kernel.body.loc)
    redeclared = ir.Module(tuple(ir.Function(kernel.name, kernel.ret, kernel.params, twice,
                                             kernel.is_kernel) if d is kernel else d
                                 for d in module.decls), module.extensions)
    problems = verify(redeclared)
    assert len(problems) == 1 and "is not unique in the function" in problems[0]
    assert verify(redeclared, unique_names=False) == []
