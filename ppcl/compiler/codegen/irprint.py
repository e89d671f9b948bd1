"""A readable dump of the IR (``--emit ir``).

The dump reads like OpenCL C, with what the semantic analysis added made visible in comments:
implicit conversions print as ``(float)i /*implicit*/``, builtin calls name the overload they
resolved to (``sqrt(x) /*builtin sqrt(float)*/``), ``sizeof``/``vec_step`` and ``case`` labels
show their computed values. With ``types=True`` every operator, call and access also shows its
result type (``(a + b) /*: float4*/``). The text is deterministic, and apart from the conversions
that become explicit it is the OpenCL program the IR stands for.

It is the OpenCL dialect of the one C-family printer with annotations added, so it lives with
the printers in codegen; the IR itself knows nothing of how it is printed.
"""

from __future__ import annotations

from ppcl.compiler.codegen.cstyle import INDENT, PREC_COND, PREC_PRIMARY, PREC_UNARY, CStylePrinter
from ppcl.compiler.codegen.opencl import OPENCL
from ppcl.compiler.ir import nodes as ir

_LEAVES = (ir.IntLit, ir.FloatLit, ir.StringLit, ir.VarRef, ir.InitList, ir.Cast, ir.SizeOf,
           ir.VecStep)


class IRPrinter(CStylePrinter):
    def __init__(self, types: bool = False) -> None:
        super().__init__(OPENCL)
        self.types = types

    def expr_prec(self, e: ir.Expr) -> tuple[str, int]:
        text, prec = super().expr_prec(e)
        if isinstance(e, ir.Call) and e.builtin is not None:
            text = f"{text} /*builtin {e.builtin}*/"
        elif isinstance(e, ir.SizeOf | ir.VecStep):
            text = f"{text} /*= {e.value}*/"
        if self.types and not isinstance(e, _LEAVES):
            text = f"({text}) /*: {self.type_name(e.type)}*/"
            prec = PREC_PRIMARY
        return text, prec

    def cast(self, e: ir.Cast) -> tuple[str, int]:
        if not e.implicit:
            return super().cast(e)
        operand = self.expr(e.operand, PREC_UNARY)
        return f"({self.type_name(e.type)}){operand} /*implicit*/", PREC_UNARY

    def stmt(self, s: ir.Stmt, level: int) -> list[str]:
        if isinstance(s, ir.Case) and not isinstance(s.expr, ir.IntLit):
            return [INDENT * level + f"case {self.expr(s.expr, PREC_COND)} /*= {s.value}*/:"]
        return super().stmt(s, level)


def print_ir(node: object, types: bool = False) -> str:
    """The IR dump of a module, declaration, statement or expression."""
    return IRPrinter(types=types).print(node)
