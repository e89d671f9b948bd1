"""Printers of the IR: OpenCL C (golden text and print->parse->print identity), the C dialect
(checked by the system C compiler) and the IR dump."""

from __future__ import annotations

import pathlib
import subprocess

import pytest

from ppcl.compiler.codegen.c import print_c, vector_typedefs
from ppcl.compiler.codegen.cstyle import CodegenError, float32_repr
from ppcl.compiler.codegen.irprint import print_ir
from ppcl.compiler.codegen.opencl import print_opencl
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import (
    DOUBLE,
    FLOAT,
    INT,
    LONG,
    UCHAR,
    UINT,
    ULONG,
    VOID,
    AddressSpace,
    ArrayType,
    EnumType,
    Field,
    PointerType,
    StructType,
    VectorType,
)

KERNELS = sorted((pathlib.Path(__file__).parent / "kernels").glob("*.cl"))
FLOAT4 = VectorType(FLOAT, 4)
FLOAT2 = VectorType(FLOAT, 2)
INT4 = VectorType(INT, 4)


def v(name: str, t=INT) -> ir.VarRef:
    return ir.VarRef(t, name)


def lit(value: int, t=INT) -> ir.IntLit:
    return ir.IntLit(t, value)


def b(op: str, lhs: ir.Expr, rhs: ir.Expr) -> ir.Binary:
    return ir.Binary(lhs.type, op, lhs, rhs)


def u(op: str, operand: ir.Expr) -> ir.Unary:
    return ir.Unary(operand.type, op, operand)


a, bb, c, x = v("a"), v("b"), v("c"), v("x")


# ---------------------------------------------------------------- expressions


@pytest.mark.parametrize("expr, text", [
    (b("-", a, b("-", bb, c)), "a - (b - c)"),
    (b("-", b("-", a, bb), c), "a - b - c"),
    (b("*", b("+", a, bb), c), "(a + b) * c"),
    (b("+", a, b("*", bb, c)), "a + b * c"),
    (b("<<", a, b("+", lit(1), bb)), "a << 1 + b"),
    (b("+", b("<<", a, lit(1)), bb), "(a << 1) + b"),
    (u("-", u("-", x)), "-(-x)"),
    (u("-", u("--", x)), "-(--x)"),
    (u("-", u("~", x)), "-~x"),
    (u("!", b("&&", a, bb)), "!(a && b)"),
    (b("||", b("&&", a, bb), c), "a && b || c"),
    (b("&&", a, b("||", bb, c)), "a && (b || c)"),
    (b("&", a, b("==", bb, c)), "a & b == c"),
    (b("==", b("&", a, bb), c), "(a & b) == c"),
    (b("-", a, lit(-1)), "a - -1"),
    (u("-", lit(-1)), "-(-1)"),
    (u("p++", x), "x++"),
    (u("-", u("p--", x)), "-x--"),
    (ir.Assign(INT, "=", a, ir.Assign(INT, "+=", bb, c)), "a = b += c"),
    (b("+", ir.Assign(INT, "=", a, bb), c), "(a = b) + c"),
    (ir.Conditional(INT, a, bb, ir.Conditional(INT, c, x, a)), "a ? b : c ? x : a"),
    (ir.Conditional(INT, ir.Conditional(INT, a, bb, c), x, a), "(a ? b : c) ? x : a"),
    (ir.Conditional(INT, a, ir.Assign(INT, "=", bb, c), x), "a ? b = c : x"),
    (b("+", ir.Conditional(INT, a, bb, c), x), "(a ? b : c) + x"),
    (ir.Comma(INT, (ir.Assign(INT, "=", a, bb), u("p++", c))), "a = b, c++"),
    (ir.Cast(FLOAT, b("+", a, bb)), "(float)(a + b)"),
    (ir.Cast(FLOAT, u("-", a)), "(float)-a"),
    (ir.Cast(FLOAT, b("+", a, bb), implicit=True), "a + b"),
    (b("*", ir.Cast(FLOAT, b("+", a, bb), implicit=True), v("f", FLOAT)), "(a + b) * f"),
    (ir.Cast(FLOAT4, v("f", FLOAT)), "(float4)f"),
    (ir.Index(FLOAT, b("+", v("p", PointerType(FLOAT)), lit(1)), lit(2)), "(p + 1)[2]"),
    (ir.Index(FLOAT, ir.Index(ArrayType(FLOAT, 4), v("m", ArrayType(ArrayType(FLOAT, 4), 4)),
                              a), bb), "m[a][b]"),
    (ir.Unary(FLOAT, "*", b("+", v("p", PointerType(FLOAT)), lit(1))), "*(p + 1)"),
    (u("&", ir.Index(FLOAT, v("p", PointerType(FLOAT)), lit(1))), "&p[1]"),
    (ir.Member(FLOAT, v("s"), "f"), "s.f"),
    (ir.Member(FLOAT, v("p"), "f", arrow=True), "p->f"),
    (ir.Member(FLOAT, u("*", v("pp")), "f"), "(*pp).f"),
    (ir.Call(FLOAT, "mad", (a, bb, ir.Comma(INT, (a, c)))), "mad(a, b, (a, c))"),
    (ir.Swizzle(FLOAT2, v("q", FLOAT4), (0, 1), "xy"), "q.xy"),
    (ir.Swizzle(FLOAT2, v("q", FLOAT4), (0, 2), "s02"), "q.s02"),
    (ir.VectorLiteral(FLOAT4, (ir.FloatLit(FLOAT, 0.0, "0.0f"),)), "(float4)(0.0f)"),
    (ir.VectorLiteral(FLOAT4, (ir.Swizzle(FLOAT2, v("q", FLOAT4), (0, 1), "xy"),
                               v("f", FLOAT), ir.FloatLit(FLOAT, 1.0))),
     "(float4)(q.xy, f, 1.0f)"),
    (ir.Swizzle(FLOAT, ir.VectorLiteral(FLOAT4, (ir.FloatLit(FLOAT, 1.0),)), (0,), "x"),
     "((float4)(1.0f)).x"),
    (ir.SizeOf(ULONG, FLOAT4, 16), "sizeof(float4)"),
    (ir.SizeOf(ULONG, INT, 4, operand=a), "sizeof a"),
    (ir.SizeOf(ULONG, INT, 4, operand=b("+", a, bb)), "sizeof(a + b)"),
    (ir.VecStep(INT, FLOAT4, 4), "vec_step(float4)"),
    (ir.VecStep(INT, FLOAT4, 4, operand=v("q", FLOAT4)), "vec_step(q)"),
    (ir.Cast(PointerType(FLOAT, AddressSpace.GLOBAL, const=True), v("p")),
     "(__global const float *)p"),
    (ir.StringLit(PointerType(UCHAR, AddressSpace.CONSTANT), "%d\\n"), '"%d\\n"'),
])
def test_expression_golden(expr: ir.Expr, text: str) -> None:
    assert print_opencl(expr) == text


@pytest.mark.parametrize("expr, text", [
    (ir.IntLit(INT, 16, "0x10"), "0x10"),
    (ir.IntLit(INT, 7), "7"),
    (ir.IntLit(UINT, 7), "7u"),
    (ir.IntLit(LONG, 7), "7L"),
    (ir.IntLit(ULONG, 7), "7UL"),
    (ir.IntLit(UCHAR, 7), "(uchar)7"),
    (ir.IntLit(INT, -2**31), "(-2147483647 - 1)"),
    (ir.FloatLit(FLOAT, 0.125, "0x1p-3f"), "0x1p-3f"),
    (ir.FloatLit(FLOAT, 1.0), "1.0f"),
    (ir.FloatLit(FLOAT, 0.001), "0.001f"),
    (ir.FloatLit(FLOAT, 1e-30), "1e-30f"),
    (ir.FloatLit(FLOAT, 3e20), "3e+20f"),
    (ir.FloatLit(FLOAT, 0.1), "0.1f"),
    (ir.FloatLit(FLOAT, float("inf")), "INFINITY"),
    (ir.FloatLit(DOUBLE, 0.1), "0.1"),
    (ir.FloatLit(DOUBLE, 1e100), "1e+100"),
    (ir.FloatLit(DOUBLE, 2.0), "2.0"),
])
def test_literal_golden(expr: ir.Expr, text: str) -> None:
    assert print_opencl(expr) == text


def test_float32_repr_round_trips() -> None:
    import struct
    largest = 0x7F7FFFFF  # FLT_MAX: its short roundings overflow single precision
    for bits in [*range(0x3F800000, 0x3F800000 + 5000, 37), largest, largest - 1, 1]:
        value = struct.unpack("<f", struct.pack("<I", bits))[0]
        assert struct.unpack("<f", struct.pack("<f", float(float32_repr(value))))[0] == value


# ---------------------------------------------------------------- declarations


def decl(name: str, t, **kw) -> str:
    return print_opencl(ir.DeclStmt((ir.VarDecl(name, t, **kw),))).strip()


def test_declarators() -> None:
    gcf = PointerType(FLOAT, AddressSpace.GLOBAL, const=True, restrict=True)
    assert print_opencl(gcf) == "__global const float *restrict"
    assert decl("p", gcf) == "__global const float *restrict p;"
    assert decl("p", PointerType(FLOAT)) == "float *p;"
    assert decl("p", PointerType(FLOAT), const=True) == "float *const p;"
    assert decl("a", ArrayType(INT, 8)) == "int a[8];"
    assert decl("tile", ArrayType(ArrayType(FLOAT, 16), 16), space=AddressSpace.LOCAL) \
        == "__local float tile[16][16];"
    assert decl("t", ArrayType(FLOAT, 4), space=AddressSpace.LOCAL, align=16) \
        == "__local float t[4] __attribute__((aligned(16)));"
    assert decl("q", PointerType(ArrayType(FLOAT, 4))) == "float (*q)[4];"
    assert decl("ps", ArrayType(PointerType(FLOAT, AddressSpace.GLOBAL), 3)) \
        == "__global float *ps[3];"
    assert decl("pp", PointerType(PointerType(INT, AddressSpace.LOCAL))) == "__local int **pp;"
    assert decl("n", INT, const=True, init=lit(3)) == "const int n = 3;"
    assert decl("v", FLOAT4) == "float4 v;"
    assert decl("u", ULONG) == "ulong u;"
    s = StructType("S", (Field("x", FLOAT),))
    assert decl("s", PointerType(s, AddressSpace.GLOBAL)) == "__global struct S *s;"
    assert decl("e", EnumType("E", (("A", 0),))) == "enum E e;"


def test_declarations_share_specifiers() -> None:
    d = ir.DeclStmt((ir.VarDecl("i", INT, init=lit(0)), ir.VarDecl("p", PointerType(INT)),
                     ir.VarDecl("f", FLOAT)))
    assert print_opencl(d) == "int i = 0, *p; float f;\n"


# ---------------------------------------------------------------- statements


def es(e: ir.Expr) -> ir.ExprStmt:
    return ir.ExprStmt(e)


def inc(name: str) -> ir.Expr:
    return u("p++", v(name))


def test_statement_kinds() -> None:
    body = ir.Block((
        ir.For(ir.DeclStmt((ir.VarDecl("i", INT, init=lit(0)),)), b("<", v("i"), v("n")),
               inc("i"), es(inc("s"))),
        ir.For(None, None, None, ir.Block((ir.Break(),))),
        ir.If(b("<", a, bb), es(inc("a")),
              ir.If(b(">", a, bb), ir.Block((es(inc("b")),)), ir.Block((ir.Continue(),)))),
        ir.While(a, ir.Block((ir.Empty(),))),
        ir.DoWhile(ir.Block((es(inc("c")),)), b("<", c, lit(10))),
        ir.Switch(a, ir.Block((
            ir.Case(1, lit(1)), es(inc("b")), ir.Break(),
            ir.Case(2, lit(2)),
            ir.Default(), ir.Block((ir.Return(),)),
        ))),
        ir.Block((ir.Return(a),)),
    ))
    expected = """\
{
    for (int i = 0; i < n; i++) {
        s++;
    }
    for (;;) {
        break;
    }
    if (a < b) {
        a++;
    } else if (a > b) {
        b++;
    } else {
        continue;
    }
    while (a) {
        ;
    }
    do {
        c++;
    } while (c < 10);
    switch (a) {
        case 1:
            b++;
            break;
        case 2:
        default:
            {
                return;
            }
    }
    {
        return a;
    }
}
"""
    assert print_opencl(body) == expected


# ---------------------------------------------------------------- modules


def small_module() -> ir.Module:
    s = StructType("Particle", (Field("pos", FLOAT4), Field("id", INT, align=8)), packed=True,
                   aligned=16)
    e = EnumType("Mode", (("ADD", 0), ("SUB", 1), ("MUL", 5)))
    gpf = PointerType(FLOAT, AddressSpace.GLOBAL, restrict=True)
    gcf = PointerType(FLOAT, AddressSpace.GLOBAL, const=True, restrict=True)
    coeffs = ir.VarDecl("coeffs", ArrayType(FLOAT, 3), space=AddressSpace.CONSTANT, const=True,
                        init=ir.InitList(ArrayType(FLOAT, 3), (
                            ir.FloatLit(FLOAT, 0.25, "0.25f"), ir.FloatLit(FLOAT, 0.5),
                            ir.FloatLit(FLOAT, 0.25, "0.25f"))))
    gid = ir.Call(ULONG, "get_global_id", (ir.IntLit(UINT, 0, "0"),), builtin="get_global_id(uint)")
    i = v("i")
    square = ir.Function("square", FLOAT, (ir.Param("t", FLOAT),),
                         ir.Block((ir.Return(b("*", v("t", FLOAT), v("t", FLOAT))),)), inline=True)
    proto = ir.Function("helper", INT, (ir.Param("k", INT, const=True),), None)
    kernel = ir.Function(
        "saxpy", VOID,
        (ir.Param("y", gpf), ir.Param("x", gcf), ir.Param("alpha", FLOAT, const=True),
         ir.Param("n", INT, const=True)),
        ir.Block((
            ir.DeclStmt((ir.VarDecl("i", INT, const=True, init=ir.Cast(INT, gid, implicit=True)),)),
            ir.DeclStmt((ir.VarDecl("tile", ArrayType(FLOAT, 64), space=AddressSpace.LOCAL),)),
            ir.If(b(">=", i, v("n")), ir.Return()),
            es(ir.Assign(FLOAT, "=", ir.Index(FLOAT, v("y", gpf), i),
                         b("+", b("*", v("alpha", FLOAT), ir.Index(FLOAT, v("x", gcf), i)),
                           ir.Index(FLOAT, v("y", gpf), i)))),
        )),
        is_kernel=True,
        attrs=ir.KernelAttrs(reqd_work_group_size=(64, 1, 1), vec_type_hint=FLOAT4),
    )
    return ir.Module((
        ir.RecordDef(s), ir.TypeDef("Particle", s), ir.EnumDef(e), ir.GlobalVar(coeffs),
        proto, square, kernel,
    ), extensions=(("cl_khr_fp64", True),))


SMALL_MODULE_TEXT = """\
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

struct __attribute__((packed, aligned(16))) Particle {
    float4 pos;
    int id __attribute__((aligned(8)));
};

typedef struct Particle Particle;

enum Mode {
    ADD,
    SUB,
    MUL = 5,
};

__constant const float coeffs[3] = {0.25f, 0.5f, 0.25f};

int helper(const int k);

inline float square(float t)
{
    return t * t;
}

__kernel __attribute__((reqd_work_group_size(64, 1, 1))) __attribute__((vec_type_hint(float4))) \
void saxpy(__global float *restrict y, __global const float *restrict x, const float alpha, \
const int n)
{
    const int i = get_global_id(0);
    __local float tile[64];
    if (i >= n) {
        return;
    }
    y[i] = alpha * x[i] + y[i];
}
"""


def test_small_module_golden() -> None:
    assert print_opencl(small_module()) == SMALL_MODULE_TEXT


def test_idempotent_on_hand_built_ir() -> None:
    m = small_module()
    assert print_opencl(m) == print_opencl(m)
    assert print_opencl(m.decls[-1]) == print_opencl(m.decls[-1])


def test_ir_dump_shows_implicit_conversions() -> None:
    text = print_ir(small_module())
    assert "const int i = (int)get_global_id(0) /*builtin get_global_id(uint)*/ /*implicit*/;" \
        in text
    typed = print_ir(b("+", a, ir.Cast(INT, v("f", FLOAT), implicit=True)), types=True)
    assert typed == "(a + (int)f /*implicit*/) /*: int*/"
    assert print_ir(ir.SizeOf(ULONG, FLOAT4, 16)) == "sizeof(float4) /*= 16*/"


# ---------------------------------------------------------------- the C dialect


def test_c_dialect_spellings() -> None:
    q = v("q", FLOAT4)
    assert print_c(FLOAT4) == "ppcl_float4"
    assert print_c(PointerType(UINT, AddressSpace.GLOBAL, const=True)) == "const unsigned int *"
    assert print_c(ir.Swizzle(FLOAT, q, (2,), "z")) == "ppcl_u_q[2]"
    assert print_c(ir.Swizzle(FLOAT2, q, (0, 1), "xy")) == "__builtin_shufflevector(ppcl_u_q, ppcl_u_q, 0, 1)"
    lit4 = ir.VectorLiteral(FLOAT4, (ir.Swizzle(FLOAT2, q, (1, 3), "yw"), v("f", FLOAT),
                                     ir.FloatLit(FLOAT, 1.0)))
    assert print_c(lit4) == "((ppcl_float4){ppcl_u_q[1], ppcl_u_q[3], ppcl_u_f, 1.0f})"
    assert print_c(ir.VecStep(INT, FLOAT4, 4)) == "4"
    assert print_c(ir.Cast(FLOAT4, v("f", FLOAT))) == "((ppcl_float4){} + ppcl_u_f)"
    assert print_c(ir.Cast(FLOAT4, v("i"))) == "((ppcl_float4){} + (float)ppcl_u_i)"
    half = ir.Swizzle(FLOAT2, b("+", q, q), (0, 1), "lo")
    assert print_c(ir.VectorLiteral(FLOAT4, (half, v("w", FLOAT2)))) == (
        "({ ppcl_float2 __ppcl_part0 = ({ ppcl_float4 __ppcl_base = ppcl_u_q + ppcl_u_q; "
        "__builtin_shufflevector(__ppcl_base, __ppcl_base, 0, 1); }); "
        "((ppcl_float4){__ppcl_part0[0], __ppcl_part0[1], ppcl_u_w[0], ppcl_u_w[1]}); })")
    target = ir.Swizzle(FLOAT2, q, (0, 1), "xy")
    with pytest.raises(CodegenError):
        print_c(ir.Assign(FLOAT2, "=", target, target))


C_FUNCTION = ir.Function(
    "f", FLOAT,
    (ir.Param("q", FLOAT4), ir.Param("i", INT), ir.Param("w", FLOAT2),
     ir.Param("p", PointerType(FLOAT, AddressSpace.GLOBAL, const=True, restrict=True))),
    ir.Block((
        ir.DeclStmt((ir.VarDecl("x", FLOAT, init=ir.Index(FLOAT, v("p"), lit(0))),)),
        ir.DeclStmt((
            ir.VarDecl("a", FLOAT4, init=ir.Cast(FLOAT4, v("i"))),
            ir.VarDecl("s", FLOAT4, init=ir.Cast(FLOAT4, v("x", FLOAT), implicit=True)),
        )),
        ir.DeclStmt((ir.VarDecl("c", VectorType(FLOAT, 3), init=ir.Swizzle(
            VectorType(FLOAT, 3), v("q", FLOAT4), (2, 1, 0), "zyx")),)),
        ir.DeclStmt((ir.VarDecl("d", FLOAT4, init=ir.VectorLiteral(FLOAT4, (
            v("w", FLOAT2), ir.Swizzle(FLOAT, v("q", FLOAT4), (2,), "z"),
            ir.FloatLit(FLOAT, 1.0)))),)),
        ir.DeclStmt((ir.VarDecl("e", FLOAT4, init=ir.VectorLiteral(FLOAT4, (
            b("-", ir.Swizzle(VectorType(FLOAT, 3), v("q", FLOAT4), (0, 1, 2), "xyz"),
              ir.Swizzle(VectorType(FLOAT, 3), v("a", FLOAT4), (0, 1, 2), "xyz")),
            ir.FloatLit(FLOAT, 0.0)))),)),
        ir.DeclStmt((ir.VarDecl("m", INT4, init=b("<", v("a", FLOAT4), v("d", FLOAT4))),)),
        ir.DeclStmt((ir.VarDecl("k", UINT, init=ir.VecStep(INT, FLOAT4, 4)),)),
        es(ir.Assign(FLOAT, "=", ir.Swizzle(FLOAT, v("q", FLOAT4), (2,), "z"),
                     ir.FloatLit(FLOAT, 3.0))),
        ir.Return(b("+", ir.Swizzle(FLOAT, v("c", VectorType(FLOAT, 3)), (0,), "x"),
                    ir.Swizzle(FLOAT, v("s", FLOAT4), (3,), "w"))),
    )),
    inline=True,
)


def test_c_dialect_compiles_with_gcc(tmp_path: pathlib.Path) -> None:
    source = vector_typedefs() + "\n" + print_c(C_FUNCTION)
    assert "static inline float ppcl_u_f(ppcl_float4 ppcl_u_q, int ppcl_u_i, ppcl_float2 ppcl_u_w, const float *restrict ppcl_u_p)" \
        in source
    path = tmp_path / "f.c"
    path.write_text(source)
    result = subprocess.run(["gcc", "-std=gnu11", "-fsyntax-only", "-Wall", "-Wno-unused-variable", "-Werror", str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr + source


# ---------------------------------------------------------------- round trip over the corpus


def _compile(source: str, filename: str) -> ir.Module:
    from ppcl.compiler.frontend import compile_source

    return compile_source(source, filename).module


@pytest.mark.parametrize("path", KERNELS, ids=[p.name for p in KERNELS])
def test_round_trip_over_kernels(path: pathlib.Path) -> None:
    module = _compile(path.read_text(), path.name)
    first = print_opencl(module)
    reparsed = _compile(first, path.name)
    assert print_opencl(reparsed) == first
    # after one trip the IR itself is a fixed point (bodies gained braces, literals their text)
    assert _compile(print_opencl(reparsed), path.name) == reparsed


def test_round_trip_of_hand_built_module() -> None:
    text = print_opencl(small_module())
    assert print_opencl(_compile(text, "module.cl")) == text


EXPRESSION_ZOO = """__kernel void zoo(__global int *out, __global float4 *v, const int a, const int b, const int c)
{
    int x = a - (b - c) + (a + b) * c - -(-a) + (a << 1 + b) + (a & b == c);
    int y = a ? b : c ? a : b, z = (a ? b : c) ? a : b;
    float4 q = (float4)(v[0].xy, 1.0f, 2.0f) + (float4)(0.5f);
    float2 w = ((float4)(1.0f, 2.0f, 3.0f, 4.0f)).zw + v[1].s01;
    float f = (float)(a + b) * 1e-3f + 0x1p-3f + (float)-a;
    ulong s = sizeof(float4) + sizeof x + vec_step(float3) + vec_step(q);
    out[0] = x + y + z + (int)f + (int)s + (int)w.x + (int)q.w;
    x = y = z;
    for (int i = 0, j = 1; i < j; i++, j--) {
        out[i] += j;
    }
}
"""


def test_round_trip_of_expression_zoo() -> None:
    text = print_opencl(_compile(EXPRESSION_ZOO, "zoo.cl"))
    assert "a - (b - c) + (a + b) * c - -(-a) + (a << 1 + b) + (a & b == c)" in text
    assert print_opencl(_compile(text, "zoo.cl")) == text


def test_printed_module_parses() -> None:
    from ppcl.compiler.diagnostics import Diagnostics
    from ppcl.compiler.frontend.parse import parse

    diagnostics = Diagnostics()
    assert parse(print_opencl(small_module()), "module.cl", diagnostics) is not None
    assert not diagnostics.items
