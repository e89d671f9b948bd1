"""A readable dump of a formed kernel: the IR dump (``codegen/irprint.py``) plus the work-group
nodes (``ir/wgnodes.py``) and the decisions recorded on them, for ``PPCL_DEBUG=passes`` and
the golden tests.

Work-item loops print as ``workitems [mask=m] [simd] ... { ... }`` with their plan (``jam 4``,
``grid-stride i``), context array entries as ``ctx.<name>``, masks as ``<mask>[lid]``."""

from __future__ import annotations

from ppcl.compiler.codegen.cstyle import INDENT, PREC_ASSIGN, PREC_PRIMARY
from ppcl.compiler.codegen.irprint import IRPrinter
from ppcl.compiler.codegen.kernel_c import Formed, group_node_expr, group_node_stmt
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg

DUMP_GROUP_SPELLINGS = {
    "ContextRef": "ctx.{name}",
    "MaskRef": "{name}[lid]",
    "MaskAny": "any({name})",
    "MaskFew": "few({name})",
    "MaskAll": "all({name})",
    "MaskSet": "{name}[lid] = {value};",
    "MaskFill": "fill {name} = {value};",
    "MaskCopy": "copy {dst} = {src};",
    "GroupCall": "group {call};",
    "GroupCallTo": "group {target} = {call};",
}


def _plan_text(plan: wg.JamPlan | wg.StridePlan | None) -> str:
    if isinstance(plan, wg.JamPlan):
        return f" jam={plan.width}"
    if isinstance(plan, wg.StridePlan):
        return f" grid-stride={plan.var.name}"
    return ""


class FormedIRPrinter(IRPrinter):
    def stmt(self, s: ir.Stmt, level: int) -> list[str]:
        ind = INDENT * level
        if isinstance(s, wg.WorkItemLoop):
            flags = "".join([f" mask={s.mask}" if s.mask else "", " simd" if s.simd else "",
                             " serial-reduction" if s.serial_reduction else "",
                             _plan_text(s.plan),
                             f" skip={s.skip.width} where {self.expr(s.skip.load, PREC_ASSIGN)}"
                             " == 0" if s.skip is not None else "",
                             f" sink={self.expr(s.sink.target, PREC_ASSIGN)}"
                             if s.sink is not None else ""])
            return [ind + f"workitems{flags} {{", *self.body(s.body, level), ind + "}"]
        if isinstance(s, wg.SplitLoop):
            bounds = [f"gid0 >= {self.expr(b, PREC_ASSIGN)}" for b in s.lower]
            bounds += [f"gid0 <= {self.expr(b, PREC_ASSIGN)}" for b in s.upper]
            where = " && ".join([self.expr(s.test, PREC_ASSIGN)] + bounds)
            return [ind + f"split where {where} {{", *self.stmt(s.fast, level + 1),
                    ind + "} otherwise {", *self.stmt(s.guarded, level + 1), ind + "}"]
        if isinstance(s, wg.WorkItemExit):
            return [ind + "next_workitem;"]
        if isinstance(s, wg.ContextInit):
            return [ind + f"ctx.{s.name} = {self.expr(s.init, PREC_ASSIGN)};"]
        simple = group_node_stmt(self, s, DUMP_GROUP_SPELLINGS)
        if simple is not None:
            return [ind + simple]
        if isinstance(s, wg.ContextDecl | wg.LocalVarDecl):
            return [ind + f"// {type(s).__name__} {s.name}"]
        if isinstance(s, wg.MaskDecl):
            return [ind + f"// mask {s.name}"]
        return super().stmt(s, level)

    def expr_prec(self, e: ir.Expr) -> tuple[str, int]:
        simple = group_node_expr(e, DUMP_GROUP_SPELLINGS, 0)
        if simple is not None:
            return simple, PREC_PRIMARY
        if isinstance(e, wg.GroupEval):
            into = f" -> ctx.{e.temp}" if e.temp is not None else ""
            return f"group_eval({self.expr(e.expr, PREC_ASSIGN)}{into})", PREC_PRIMARY
        return super().expr_prec(e)


def print_formed(formed: Formed) -> str:
    """The dump of a formed kernel: its group-level state, its decisions and its body."""
    p = FormedIRPrinter()
    x, y, z = formed.local_size
    lines = [f"// formed kernel {formed.function.name}, local size {x}x{y}x{z}"]
    for name, t in formed.context_vars.items():
        layout = " (component-major)" if name in formed.component_major else \
            " (element-major)" if name in formed.element_major else ""
        lines.append(f"// context {p.declaration(t, name)}{layout}")
    for name, t in formed.group_scalars.items():
        lines.append(f"// group scalar {p.declaration(t, name)}")
    for mask in formed.masks:
        lines.append(f"// mask {mask}")
    for v in formed.local_vars:
        lines.append(f"// local {p.declaration(v.type, v.name)} at {v.offset}")
    if formed.rows:
        lines.append("// runs rows of groups along x")
    if not formed.vectorize:
        lines.append("// loop vectorizer off")
    if formed.widened:
        lines.append("// 64-bit ints: " + ", ".join(sorted(formed.widened)))
    for position in sorted(p.expr(e, PREC_ASSIGN) for e in formed.wide_positions):
        lines.append(f"// 64-bit position: {position}")
    lines += p.stmts(formed.body.stmts, 0)
    return "\n".join(lines) + "\n"
