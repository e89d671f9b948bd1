"""The group function of a kernel in C for the CPU backend: ``KernelPrinter``.

The group function ``ppcl_group_<kernel>`` runs one work-group (local size baked in); the
translation unit around it (entry point, helpers, prelude) is ``codegen/c_unit.py``.
Group-level code sees local id 0 (``__lx``/``__ly``/``__lz``/``__lid`` are constants 0 there);
work-item loops shadow them. Context arrays are ``__ctx_<name>[LS]``, masks ``int[LS]``; a
private array ``T a[n]`` laid out element-major (``ContextLayout``) is ``__ctx_a[n][LS]``,
its element ``a[i]`` spelled ``__ctx_a[i][__lid]``.

The printer decides nothing: the plan of each work-item loop, rows of groups, and the ``int``
values computed 64 bits wide come recorded in the formed kernel (``transforms/schedule.py``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Protocol

from ppcl.compiler.analysis.callgraph import WORKITEM_FUNCTIONS
from ppcl.compiler.analysis.uniformity import const_int
from ppcl.compiler.codegen.c import C
from ppcl.compiler.codegen.c_builtins import c_builtin_name
from ppcl.compiler.codegen.c_printf import lower_printf
from ppcl.compiler.codegen.cstyle import (
    INDENT,
    PREC_ASSIGN,
    PREC_POSTFIX,
    PREC_PRIMARY,
    PREC_UNARY,
    CStylePrinter,
)
from ppcl.compiler.ir import builtins
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.printf_spec import PrintfFormat
from ppcl.compiler.ir.types import (
    INT,
    LONG,
    AddressSpace,
    ArrayType,
    PointerType,
    ScalarType,
    StructType,
    Type,
    VectorType,
    component_layout,
)
from ppcl.compiler.ir.visit import Node, Renamer, walk

_DIMS = "xyz"
_NUMERIC = re.compile(r"^[0-9.]")


class LocalVariable(Protocol):
    """A ``__local`` variable of the kernel at ``offset`` in the group's local block."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> Type: ...
    @property
    def offset(self) -> int: ...


class Formed(Protocol):
    """What codegen reads of a formed and scheduled kernel (``FormedKernel`` of
    ``transforms/workgroup.py``; codegen does not depend on the transforms)."""

    @property
    def function(self) -> ir.Function: ...
    @property
    def body(self) -> ir.Block: ...
    @property
    def local_size(self) -> tuple[int, int, int]: ...
    @property
    def context_vars(self) -> Mapping[str, Type]: ...
    @property
    def group_scalars(self) -> Mapping[str, Type]: ...
    @property
    def masks(self) -> tuple[str, ...]: ...
    @property
    def local_vars(self) -> Sequence[LocalVariable]: ...
    @property
    def local_static_bytes(self) -> int: ...
    @property
    def context_offsets(self) -> Mapping[str, int]: ...
    @property
    def rows(self) -> bool: ...
    @property
    def vectorize(self) -> bool: ...
    @property
    def no_pre(self) -> bool: ...
    @property
    def widened(self) -> frozenset[str]: ...
    @property
    def wide_positions(self) -> frozenset[ir.Expr]: ...
    @property
    def element_major(self) -> frozenset[str]: ...
    @property
    def component_major(self) -> frozenset[str]: ...


# How the printers spell the simple work-group nodes: the C of the CPU backend here, the
# readable dump in ``formed_ir.py``. Fields: name, value, dst, src, call, target, items.
C_GROUP_SPELLINGS: Mapping[str, str] = {
    "ContextRef": "__ctx_{name}[__lid]",
    "MaskRef": "{name}[__lid]",
    "MaskAny": "ppcl_any({name}, sizeof {name})",
    "MaskAll": "ppcl_all({name}, {items})",
    "MaskFew": "ppcl_few({name}, {items})",
    "MaskSet": "{name}[__lid] = {value};",
    "MaskFill": "memset({name}, {value}, sizeof {name});",
    "MaskCopy": "memcpy({dst}, {src}, sizeof {dst});",
    "GroupCall": "(void){call};",
    "GroupCallTo": "{target} = {call};",
}


def group_node_stmt(p: CStylePrinter, s: ir.Stmt, spellings: Mapping[str, str]) -> str | None:
    """``s`` printed with ``spellings`` when it is a mask or group-call node, else None."""
    if isinstance(s, wg.MaskSet | wg.MaskFill):
        return spellings[type(s).__name__].format(name=s.name, value=s.value)
    if isinstance(s, wg.MaskCopy):
        return spellings["MaskCopy"].format(dst=s.dst, src=s.src)
    if isinstance(s, wg.GroupCall):
        call = p.expr(s.call, PREC_ASSIGN)
        if s.target is None:
            return spellings["GroupCall"].format(call=call)
        return spellings["GroupCallTo"].format(target=p.expr(s.target, PREC_UNARY), call=call)
    return None


def group_node_expr(e: ir.Expr, spellings: Mapping[str, str], items: int) -> str | None:
    """``e`` printed with ``spellings`` when it is a context-array or mask node, else None
    (``items``: the work-items of the group)."""
    if isinstance(e, wg.ContextRef | wg.MaskRef | wg.MaskAny | wg.MaskAll | wg.MaskFew):
        return spellings[type(e).__name__].format(name=e.name, items=items)
    return None


class KernelPrinter(CStylePrinter):
    """The C dialect printer plus work-group nodes, work-item functions and hidden state."""

    def __init__(self, formed: Formed, zero_offset: bool, wi_helpers: frozenset[str],
                 narrow_ids: bool = True):
        super().__init__(dataclasses.replace(C, call=_call_hook))
        self.formed = formed
        self.zero_offset = zero_offset
        self.narrow_ids = narrow_ids
        self.wi_helpers = wi_helpers
        self.local_names = {v.name for v in formed.local_vars}
        self.in_helper = False
        self.labels = 0
        self.nest = 0  # loops/switches entered inside the current work-item loop
        self.exit_label: str | None = None
        self.used_goto = False
        # the unit's printf format table (``printf_table``): format -> id
        self.printf_ids: dict[PrintfFormat, int] = {}
        # int variables declared 64 bits wide, with their copies in jammed work-items
        self.widened: set[str] = set(formed.widened)
        self.rows = formed.rows  # the group function runs a row of groups
        # while printing the copy of a loop whose uniform store is sunk: the store, its flag
        self.sunk: tuple[ir.Stmt, str] | None = None

    # ------------------------------------------------------------ statements

    def stmt(self, s: ir.Stmt, level: int) -> list[str]:
        ind = INDENT * level
        if isinstance(s, wg.WorkItemLoop):
            return self.workitem_loop(s, level)
        if isinstance(s, wg.SplitLoop):
            return self.split_loop(s, level)
        if self.sunk is not None and s is self.sunk[0]:
            return [ind + f"{self.sunk[1]} |= 1;"]
        if isinstance(s, wg.WorkItemExit):
            if self.nest == 0:
                return [ind + "continue;"]
            self.used_goto = True
            return [ind + f"goto {self.exit_label};"]
        if isinstance(s, wg.ContextInit):
            return self.context_init(s, level)
        simple = group_node_stmt(self, s, C_GROUP_SPELLINGS)
        if simple is not None:
            return [ind + simple]
        if isinstance(s, ir.For | ir.While | ir.DoWhile | ir.Switch) and self.exit_label:
            self.nest += 1
            try:
                return super().stmt(s, level)
            finally:
                self.nest -= 1
        if isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.Assign) and isinstance(
                s.expr.target, ir.Swizzle) and len(s.expr.target.indices) > 1:
            return [ind + self.swizzle_store(s.expr) + ";"]
        return super().stmt(s, level)

    def split_loop(self, s: wg.SplitLoop, level: int) -> list[str]:
        """The lanes along x between the bounds through the fast copy when the group test
        holds, the others through the guarded loop (``transforms/split.py`` decided it)."""
        ind, ind2 = INDENT * level, INDENT * (level + 1)
        if not s.lower and not s.upper and s.score is None:
            return self.unless_empty(s.empty, self.versioned(s, level), level)
        self.labels += 1
        lo, hi = f"__slo{self.labels}", f"__shi{self.labels}"
        extent = f"(long)__nrow * {self.formed.local_size[0]}" if self.rows \
            else str(self.formed.local_size[0])
        lines = [ind + "{", ind2 + f"long {lo} = 0, {hi} = {extent};"]
        lines += self.narrowed(lo, hi, s.lower, s.upper, ind2)
        test = self.expr(s.test, PREC_ASSIGN)
        if s.score is not None:  # the launch's dispatcher may have chosen the loop as formed
            test = f"!((__L->unsplit >> {s.index}) & 1) && ({test})"
        lines.append(ind2 + f"if (({test}) && {lo} < {hi}) {{")
        below, above = s.edges_fail
        if not below:
            lines += self.workitem_loop(s.guarded, level + 2, ("0", lo))
        lines += self.workitem_loop(s.fast, level + 2, (lo, hi))
        if not above:
            lines += self.workitem_loop(s.guarded, level + 2, (hi, extent))
        lines.append(ind2 + "} else {")
        lines += self.workitem_loop(s.guarded, level + 2)
        lines += [ind2 + "}", ind + "}"]
        return self.unless_empty(s.empty, lines, level)

    def versioned(self, s: wg.SplitLoop, level: int) -> list[str]:
        """A split with no bounds along x and no dispatcher's choice: every lane runs the fast
        copy when the test holds, the loop as formed otherwise."""
        ind = INDENT * level
        lines = [ind + f"if ({self.expr(s.test, PREC_ASSIGN)}) {{"]
        lines += self.workitem_loop(s.fast, level + 1)
        lines.append(ind + "} else {")
        lines += self.workitem_loop(s.guarded, level + 1)
        return lines + [ind + "}"]

    def row_clip(self, s: wg.WorkItemLoop, xrange: tuple[str, str] | None,
                 depth: int) -> tuple[list[str], tuple[str, str]]:
        """The lines (inside the loops along y and z) that narrow the lanes along x to run,
        ``xrange`` or all of them, to the row's lanes between ``s``'s clip bounds."""
        ind = INDENT * depth
        if xrange is None:
            xrange = ("0", f"(long)__nrow * {self.formed.local_size[0]}" if self.rows
                      else str(self.formed.local_size[0]))
        self.labels += 1
        lo, hi = f"__clo{self.labels}", f"__chi{self.labels}"
        lines = [ind + f"long {lo} = (long)({xrange[0]}), {hi} = (long)({xrange[1]});"]
        lines += self.narrowed(lo, hi, s.clip_lower, s.clip_upper, ind)
        return lines, (lo, hi)

    def narrowed(self, lo: str, hi: str, lower: tuple[ir.Expr, ...],
                 upper: tuple[ir.Expr, ...], ind: str) -> list[str]:
        """The lines that raise ``lo`` to every lower bound and lower ``hi`` past every upper
        bound (inclusive global ids along x; ``lo`` and ``hi`` count lanes from ``__gb0``)."""
        lines = []
        for bound in lower:
            b = f"({self.expr(bound, PREC_ASSIGN)}) - (long)__gb0"
            lines.append(ind + f"if ({b} > {lo}) {lo} = {b};")
        for bound in upper:
            b = f"({self.expr(bound, PREC_ASSIGN)}) + 1 - (long)__gb0"
            lines.append(ind + f"if ({b} < {hi}) {hi} = {b};")
        return lines

    def unless_empty(self, empty: ir.Expr | None, lines: list[str], level: int) -> list[str]:
        """``lines`` (a loop printed at ``level``) skipped when the group-level ``empty`` holds
        (no lane of the group passes the loop's guard)."""
        if empty is None:
            return lines
        ind = INDENT * level
        return ([ind + f"if (!({self.expr(empty, PREC_ASSIGN)})) {{"]
                + [INDENT + line for line in lines] + [ind + "}"])

    def workitem_loop(self, s: wg.WorkItemLoop, level: int,
                      xrange: tuple[str, str] | None = None) -> list[str]:
        """``xrange``: the lanes along x to run (C expressions), all of them when None."""
        if s.sink is not None:
            return self.sunk_loop(s, s.sink, level, xrange)
        return self.lanes_loop(s, level, xrange)

    def sunk_loop(self, s: wg.WorkItemLoop, plan: wg.SinkPlan, level: int,
                  xrange: tuple[str, str] | None) -> list[str]:
        """Where the loop's other accesses miss the sunk store's bytes, the loop with the
        store as a flag and the store once after it; elsewhere the loop as formed
        (``transforms/sink.py``)."""
        ind, ind1 = INDENT * level, INDENT * (level + 1)
        self.labels += 1
        flag = f"__sunk{self.labels}"
        target = f"(const char *)&({self.expr(plan.target, PREC_ASSIGN)})"
        size = f"sizeof({self.expr(plan.target, PREC_ASSIGN)})"
        misses = []
        for pointer, low, high in plan.others:
            base = self.expr(pointer, PREC_ASSIGN)
            lo = f"(const char *)({base} + ({self.expr(low, PREC_ASSIGN)}))"
            hi = f"(const char *)({base} + ({self.expr(high, PREC_ASSIGN)}) + 1)"
            misses.append(f"((uintptr_t)({target}) + {size} <= (uintptr_t){lo} || "
                          f"(uintptr_t){hi} <= (uintptr_t)({target}))")
        formed = dataclasses.replace(s, sink=None)
        lines = [ind + "{", ind1 + f"int {flag} = 0;",
                 ind1 + f"if ({' && '.join(misses) or '1'}) {{"]
        saved = self.sunk
        self.sunk = (plan.store, flag)
        try:
            lines += self.lanes_loop(formed, level + 2, xrange)
        finally:
            self.sunk = saved
        lines.append(ind1 + INDENT + f"if ({flag}) {{")
        lines += self.stmt(plan.store, level + 3)
        lines += [ind1 + INDENT + "}", ind1 + "} else {"]
        lines += self.lanes_loop(formed, level + 2, xrange)
        lines += [ind1 + "}", ind + "}"]
        return lines

    def lanes_loop(self, s: wg.WorkItemLoop, level: int,
                   xrange: tuple[str, str] | None = None) -> list[str]:
        """The work-item loop ``s`` (see ``workitem_loop``)."""
        ls = self.formed.local_size
        saved = (self.exit_label, self.nest, self.used_goto)
        self.labels += 1
        self.exit_label, self.nest, self.used_goto = f"__ppcl_next{self.labels}", 0, False
        lines: list[str] = [INDENT * level + "{"]
        depth = level + 1
        for dim in (2, 1):
            if ls[dim] > 1:
                v = f"__l{_DIMS[dim]}"
                lines.append(INDENT * depth + f"for (size_t {v} = 0; {v} < {ls[dim]}; {v}++) {{")
                depth += 1
        body_level = depth + 1
        lid = "__lx"
        if ls[1] > 1 or ls[2] > 1:
            lid = f"(__lz * {ls[1]} + __ly) * {ls[0]} + __lx"
        body = [INDENT * body_level + f"const size_t __lid = {lid}; (void)__lid;"]
        if s.mask is not None:
            body.append(INDENT * body_level + f"if (!{s.mask}[__lid]) continue;")
        body += self.body(s.body, depth)
        if self.used_goto:
            body.append(INDENT * body_level + f"{self.exit_label}: ;")
        simd = s.simd and not self.used_goto
        jam = s.plan if isinstance(s.plan, wg.JamPlan) else None
        stride = s.plan if isinstance(s.plan, wg.StridePlan) else None
        if s.clip_lower or s.clip_upper:  # the row's lanes between the guard's bounds
            clipped, xrange = self.row_clip(s, xrange, depth)
            lines += clipped
        if jam is not None:  # the plain loop below is the fallback for a block
            lines += self.jammed(jam, depth, lid)
            depth += 1
            body = [INDENT + line for line in body]
        elif stride is not None:  # the plain loop below is the fallback for a step <= 0
            lines += self.strided(stride, depth, lid, simd)
            depth += 1  # printed one level shallower than the else it sits in
            body = [INDENT + line for line in body]
        skip = s.skip if jam is None and stride is None and not self.rows else None
        if skip is not None:  # blocks of lanes that run no lane skipped at once
            lines += self.skipped_blocks(skip, depth, lid, xrange)
            depth += 1
            body = [INDENT + line for line in body]
            ctype = "int" if xrange is not None and self.narrow_ids else "size_t"
        if simd and jam is None:
            # a sunk store's flag is or-ed by the lanes (transforms/sink.py)
            reduction = f" reduction(|:{self.sunk[1]})" if self.sunk is not None else ""
            lines.append(INDENT * depth + "#pragma omp simd" + reduction)
        if jam is not None:
            lines.append(INDENT * depth + f"for (size_t __lx = __lb; __lx < __lb + {jam.width}; "
                         "__lx++) {")
        elif self.rows:
            # int, so that gcc sees a narrowed global id (int)__gb0 + __lx as affine
            ctype = "int" if self.narrow_ids else "size_t"
            first, end = xrange if xrange is not None else ("0", f"({ctype})__nrow * {ls[0]}")
            lines.append(INDENT * depth + f"for ({ctype} __lx = ({ctype})({first}); __lx < "
                         f"({ctype})({end}); __lx++) {{")
        elif skip is not None:
            lines.append(INDENT * depth + f"for ({ctype} __lx = __sb; __lx < __se; __lx++) {{")
        elif xrange is not None:
            # lanes between two bounds computed at run time: an int counter when ids are
            # narrowed, so that (int)__lx is the counter itself and the position stays affine
            ctype = "int" if self.narrow_ids else "size_t"
            lines.append(INDENT * depth + f"for ({ctype} __lx = ({ctype})({xrange[0]}); __lx < "
                         f"({ctype})({xrange[1]}); __lx++) {{")
        else:
            lines.append(INDENT * depth + f"for (size_t __lx = 0; __lx < {ls[0]}; __lx++) {{")
        lines += body
        lines.append(INDENT * depth + "}")
        if jam is not None or skip is not None:  # the block loop
            depth -= 1
            lines.append(INDENT * depth + "}")
        elif stride is not None:  # the else, then the scope of the uniform values
            depth -= 1
            lines += [INDENT * (depth + 1) + "}", INDENT * depth + "}"]
        for _ in range(depth - level - 1):
            depth -= 1
            lines.append(INDENT * depth + "}")
        lines.append(INDENT * level + "}")
        self.exit_label, self.nest, self.used_goto = saved
        return self.unless_empty(s.empty, lines, level) if xrange is None else lines

    def skipped_blocks(self, plan: wg.SkipPlan, depth: int, lid: str,
                       xrange: tuple[str, str] | None) -> list[str]:
        """The loop over blocks of ``plan.width`` lanes along x (``__sb`` to ``__se``), open,
        that skips a block where the guard's comparisons before its load are false at the
        block's first and last lane and the load reads zero bits for all of its lanes
        (``transforms/skip.py``); the lanes' loop follows inside it."""
        ind = INDENT * depth
        ind1, ind2 = ind + INDENT, ind + INDENT * 2
        ctype = "int" if xrange is not None and self.narrow_ids else "size_t"
        first, end = xrange if xrange is not None else ("0", str(self.formed.local_size[0]))
        width = plan.width
        lines = [ind + f"for ({ctype} __sb = ({ctype})({first}), __sx = ({ctype})({end}); "
                       f"__sb < __sx; __sb += {width}) {{",
                 ind1 + f"const {ctype} __se = __sb + {width} < __sx ? __sb + {width} : __sx;"]

        def at_lane(lane: str, test: str) -> list[str]:
            out = [ind1 + "{", ind2 + f"const {ctype} __lx = {lane}; (void)__lx;",
                   ind2 + f"const size_t __lid = {lid}; (void)__lid;"]
            for decl in plan.prefix:
                out += self.stmt(decl, depth + 2)
            out += [ind2 + f"__skip = {test};", ind1 + "}"]
            return out

        bounds = " && ".join(f"!({self.expr(b, PREC_ASSIGN)})" for b in plan.bounds) or "1"
        load = self.expr(plan.load, PREC_ASSIGN)
        lines.append(ind1 + "int __skip = 1;")
        if plan.bounds:
            lines += at_lane("__se - 1", bounds)
            lines.append(ind1 + "if (__skip)")
        lines += at_lane("__sb", f"{bounds} && !ppcl_any(&({load}), "
                                 f"(size_t)(__se - __sb) * sizeof({load}))")
        lines.append(ind1 + "if (__skip) continue;")
        return lines

    def strided(self, plan: wg.StridePlan, depth: int, lid: str, simd: bool) -> list[str]:
        """A grid-stride loop run by the work-items in lock step (``transforms/jam.py``); ends
        inside the ``else`` that runs the plain work-item loop when the step is not positive.
        Uniform values are evaluated at group level, where the local ids are 0."""
        ind = INDENT * depth
        ls0 = self.formed.local_size[0]
        assert plan.var.init is not None
        lines = [ind + "{",
                 ind + INDENT + f"const long __first = (long)({self.expr(plan.var.init, PREC_ASSIGN)});",
                 ind + INDENT + f"const long __step = (long)({self.expr(plan.step, PREC_ASSIGN)});",
                 ind + INDENT + f"const long __end = (long)({self.expr(plan.end, PREC_ASSIGN)});",
                 ind + INDENT + "if (__step > 0) {",
                 ind + INDENT * 2 + "for (long __t = __first; __t < __end; __t += __step) {",
                 ind + INDENT * 3 + f"const size_t __hi = __end - __t < {ls0} ? "
                                    f"(size_t)(__end - __t) : {ls0};"]
        if simd:
            lines.append(ind + INDENT * 3 + "#pragma omp simd")
        lines.append(ind + INDENT * 3 + "for (size_t __lx = 0; __lx < __hi; __lx++) {")
        inner = depth + 4
        decl = self.var_decls([dataclasses.replace(plan.var, init=None, const=False)])
        lines += [INDENT * inner + f"const size_t __lid = {lid}; (void)__lid;",
                  INDENT * inner + decl + " = __t + (long)__lx;"]
        lines += self.body(plan.loop.body, inner - 1)
        lines += [ind + INDENT * 3 + "}", ind + INDENT * 2 + "}", ind + INDENT + "} else {"]
        return lines

    def jammed(self, plan: wg.JamPlan, depth: int, lid: str) -> list[str]:
        """The work-item loop ``plan.width`` work-items at a time (see ``transforms/jam.py``):
        their prefixes, the loop once with their bodies in turn, their suffixes; a block in
        which one of them exits in its prefix runs one work-item at a time."""
        ind = INDENT * depth
        self.labels += 1
        slow = f"__ppcl_jam{self.labels}"
        copies = []
        for j in range(plan.width):
            names = {d.name: f"{d.name}__j{j}" for d in plan.carried}
            self.widened |= {new for old, new in names.items() if old in self.widened}
            copies.append((j, Renamer(names)))
        lines = [ind + f"for (size_t __lb = 0; __lb < {self.formed.local_size[0]}; "
                 f"__lb += {plan.width}) {{"]
        inner = depth + 1
        if plan.shared:
            shared = [dataclasses.replace(d, init=None, const=False) for d in plan.shared]
            lines.append(INDENT * inner + self.var_decls(shared) + ";")
        for _, ren in copies:
            decls = [dataclasses.replace(d, name=ren.names[d.name], init=None, const=False)
                     for d in plan.carried]
            if decls:
                lines.append(INDENT * inner + self.var_decls(decls) + ";")

        def scoped(j: int, stmts: Sequence[ir.Stmt], level: int) -> list[str]:
            out = [INDENT * level + "{",
                   INDENT * (level + 1) + f"const size_t __lx = __lb + {j}; (void)__lx;",
                   INDENT * (level + 1) + f"const size_t __lid = {lid}; (void)__lid;"]
            out += self.stmts(stmts, level + 1)
            return out + [INDENT * level + "}"]

        def assigned(stmts: Sequence[ir.Stmt], ren: Renamer) -> list[ir.Stmt]:
            """``stmts`` of one copy, its declarations as assignments (declared above)."""
            out: list[ir.Stmt] = []
            for st in stmts:
                st = ren.rewrite(st)
                if isinstance(st, ir.DeclStmt):
                    out += [ir.ExprStmt(ir.Assign(d.type, "=", ir.VarRef(d.type, d.name), d.init))
                            for d in st.decls if d.init is not None]  # d: renamed
                else:
                    out.append(st)
            return out

        saved = (self.exit_label, self.nest)
        self.exit_label, self.nest = slow, 1  # an exit in a prefix leaves for the slow path
        for j, ren in copies:
            lines += scoped(j, assigned(plan.prefix, ren), inner)
        self.exit_label, self.nest = saved
        for j, ren in copies:  # no copy exits any more: the statements with effects
            if plan.lead:
                lines += scoped(j, assigned(plan.lead, ren), inner)
        bodies = [ren.rewrite(plan.loop.body) for _, ren in copies]
        # the control reads uniform values, the same in every copy: the first copy's names
        header_loop = copies[0][1].rewrite(dataclasses.replace(plan.loop, body=ir.Block(())))
        loop_lines = self.stmt(header_loop, inner)
        # the loop header once, then each work-item's body in its own scope
        header, close = loop_lines[0], loop_lines[-1]
        assert header.rstrip().endswith("{") and close.strip() == "}", loop_lines
        lines.append(header)
        for j, body in zip(range(plan.width), bodies):
            lines += scoped(j, body.stmts if isinstance(body, ir.Block) else (body,), inner + 1)
        lines.append(close)
        for j, ren in copies:
            lines += scoped(j, [ren.rewrite(st) for st in plan.suffix], inner)
        lines.append(INDENT * inner + "continue;")
        lines.append(INDENT * depth + f"{slow}: ;")
        return lines

    def decl_groups(self, decls: Sequence[ir.VarDecl]) -> list[str]:
        if self.widened and not self.in_helper:
            decls = [dataclasses.replace(d, type=LONG) if d.name in self.widened else d
                     for d in decls]
        return super().decl_groups(decls)

    def mentions_widened(self, e: ir.Expr) -> bool:
        return not self.in_helper and any(
            (isinstance(n, ir.VarRef) and n.name in self.widened) or self.wide_position(n)
            for n in walk(e))

    def wide_position(self, e: Node) -> bool:
        """A group position converted to ``int``, printed 64 bits wide (``wide_positions``)."""
        return isinstance(e, ir.Cast) and e.type == INT and isinstance(e.operand, ir.Binary) \
            and e.operand.op == "+" and e.operand in self.formed.wide_positions

    def cast(self, e: ir.Cast) -> tuple[str, int]:
        """Implicit conversions that C would do differently with a widened operand are
        spelled out: ``long < uint`` compares signed where ``int < uint`` does not. (Left
        shifts are the other operation whose 64-bit result differs: see ``expr_prec``.)"""
        if not self.in_helper and self.wide_position(e):
            return f"(long)({self.expr(e.operand, PREC_ASSIGN)})", PREC_UNARY
        if e.implicit and isinstance(e.type, ScalarType) and e.type != e.operand.type \
                and self.mentions_widened(e.operand):
            return f"({self.type_name(e.type)})({self.expr(e.operand, PREC_ASSIGN)})", PREC_UNARY
        if isinstance(e.type, VectorType) and isinstance(e.operand.type, ScalarType) \
                and self.mentions_widened(e.operand):
            # a scalar splat: GCC refuses to splat a ``long`` into an ``int`` vector
            # (truncation), so the 64-bit value is brought back to its OpenCL type first
            narrowed = ir.Cast(e.operand.type, e.operand, loc=e.loc)
            return super().cast(dataclasses.replace(e, operand=narrowed))
        return super().cast(e)

    def element_major_entry(self, e: ir.Index) -> str | None:
        """``a[i][j]`` of an element-major context array as ``__ctx_a[i][j][__lid]``, None for
        any other index expression."""
        indices: list[ir.Expr] = []
        base: ir.Expr = e
        while isinstance(base, ir.Index) and isinstance(base.base.type, ArrayType):
            indices.append(base.index)
            base = base.base
        if not indices or not isinstance(base, wg.ContextRef) \
                or base.name not in self.formed.element_major:
            return None
        assert not isinstance(e.type, ArrayType), "an element-major array used as a whole"
        return f"__ctx_{base.name}" + "".join(
            f"[{self.expr(i)}]" for i in reversed(indices)) + "[__lid]"

    def context_init(self, s: wg.ContextInit, level: int) -> list[str]:
        ind = INDENT * level
        t = self.formed.context_vars[s.name]
        if s.name in self.formed.component_major:
            stores = " ".join(f"__ctx_{s.name}[{k}][__lid] = __ppcl_init{part};"
                              for k, part in enumerate(self.component_parts(t)))
            return [ind + f"{{ {self.declaration(t, '__ppcl_init')} = "
                          f"{self.initializer(s.init)}; {stores} }}"]
        if s.name in self.formed.element_major:
            return [ind + line for line in self.element_major_init(s, t)]
        if isinstance(t, ArrayType | StructType) or isinstance(s.init, ir.InitList):
            # a braced initializer is no expression C can assign, whatever the type (a vector's
            # '{0.0f, 0.0f, 0.0f, 0.0f}' too): it initializes a temporary that is copied in
            temp = self.declaration(t, "__ppcl_init")
            return [ind + f"{{ {temp} = {self.initializer(s.init)}; "
                          f"memcpy(&__ctx_{s.name}[__lid], &__ppcl_init, sizeof __ppcl_init); }}"]
        return [ind + f"__ctx_{s.name}[__lid] = {self.expr(s.init, PREC_ASSIGN)};"]

    def component_major_ref(self, e: ir.Expr) -> str | None:
        """The name of the component-major (vector or struct) context array ``e`` refers to as
        a whole."""
        return e.name if isinstance(e, wg.ContextRef) \
            and e.name in self.formed.component_major else None

    def component_major_expr(self, e: ir.Expr) -> tuple[str, int] | None:
        """A component-major vector (or field-major struct) context array
        (``ContextLayout.components``): a component as ``__ctx_z[k][__lid]``, the whole value
        composed from its components, an assignment to it as the value split into them; None
        for any other expression."""
        if isinstance(e, ir.Member) and not e.arrow:
            name = self.component_major_ref(e.base)
            if name is None:
                return None
            record = e.base.type
            assert isinstance(record, StructType)
            k = [f.name for f in record.fields].index(e.field_name)
            return f"__ctx_{name}[{k}][__lid]", PREC_POSTFIX
        if isinstance(e, ir.Swizzle | ir.Index):
            base = e.base
            name = self.component_major_ref(base)
            if name is None:
                return None
            picked = e.indices if isinstance(e, ir.Swizzle) else (const_int(e.index),)
            assert None not in picked, "a component-major vector indexed by a variable"
            if len(picked) == 1:
                return f"__ctx_{name}[{picked[0]}][__lid]", PREC_POSTFIX
            lanes = ", ".join(f"__ctx_{name}[{k}][__lid]" for k in picked)
            return f"(({self.type_name(e.type)}){{{lanes}}})", PREC_PRIMARY
        name = self.component_major_ref(e)
        if name is not None:
            lanes = ", ".join(f"__ctx_{name}[{k}][__lid]" for k in range(_components(e.type)))
            return f"(({self.type_name(e.type)}){{{lanes}}})", PREC_PRIMARY
        if isinstance(e, ir.Assign):
            name = self.component_major_ref(e.target)
            if name is None:
                return None
            t = e.target.type
            operation: ir.Expr = e.value
            if e.op != "=":
                operation = ir.Binary(t, e.op[:-1], e.target, e.value, loc=e.loc)
            value = self.expr(operation, PREC_ASSIGN)
            stores = " ".join(f"__ctx_{name}[{k}][__lid] = __ppcl_cv{part};"
                              for k, part in enumerate(self.component_parts(t)))
            return (f"({{ {self.type_name(t)} __ppcl_cv = {value}; {stores} __ppcl_cv; }})",
                    PREC_PRIMARY)
        return None

    def component_parts(self, t: Type) -> list[str]:
        """How each component of a vector (``[k]``) or field of a struct (``.name``) is
        selected from a value of type ``t``."""
        if isinstance(t, StructType):
            return [f".{self.name(f.name)}" for f in t.fields]
        return [f"[{k}]" for k in range(_components(t))]

    def element_major_init(self, s: wg.ContextInit, t: Type) -> list[str]:
        """The initializer of an element-major context array stored element by element."""
        dims: list[int] = []
        while isinstance(t, ArrayType):
            assert t.length is not None
            dims.append(t.length)
            t = t.elem
        counters = [f"__ppcl_e{d}" for d in range(len(dims))]
        entry = "".join(f"[{c}]" for c in counters)
        lines = ["{ " + self.declaration(self.formed.context_vars[s.name], "__ppcl_init")
                 + f" = {self.initializer(s.init)};"]
        lines += [INDENT * (d + 1) + f"for (size_t {c} = 0; {c} < {n}; {c}++)"
                  for d, (c, n) in enumerate(zip(counters, dims))]
        lines.append(INDENT * (len(dims) + 1)
                     + f"__ctx_{s.name}{entry}[__lid] = __ppcl_init{entry};")
        lines.append("}")
        return lines

    def swizzle_store(self, e: ir.Assign) -> str:
        target = e.target
        assert isinstance(target, ir.Swizzle)
        base = self.expr(target.base, PREC_POSTFIX)
        value_type = self.type_name(target.type)
        operation: ir.Expr = e.value
        if e.op != "=":  # printed as the operator, so division and shifts get C's checks
            operation = ir.Binary(target.type, e.op[:-1], target, e.value, loc=e.loc)
        value = self.expr(operation, PREC_ASSIGN)
        stores = " ".join(f"{base}[{i}] = __ppcl_sw[{k}];" for k, i in enumerate(target.indices))
        return f"({{ {value_type} __ppcl_sw = {value}; {stores} __ppcl_sw; }})"

    def swizzle_step(self, e: ir.Unary) -> str:
        """``++v.xy`` and ``v.xy--``: C has no lvalue for several components of a vector, so
        the step is the store of ``v.xy + 1`` (``swizzle_store``), and a postfix step gives
        the value read before it."""
        target = e.operand
        assert isinstance(target, ir.Swizzle)
        op = "+=" if e.op.endswith("++") else "-="
        store = self.swizzle_store(ir.Assign(target.type, op, target, ir.IntLit(INT, 1, loc=e.loc),
                                             loc=e.loc))
        if not e.op.startswith("p"):
            return store
        old = self.expr(target, PREC_ASSIGN)
        return f"({{ {self.type_name(target.type)} __ppcl_old = {old}; {store}; __ppcl_old; }})"

    # ------------------------------------------------------------ expressions

    def expr_prec(self, e: ir.Expr) -> tuple[str, int]:
        if self.formed.component_major and not self.in_helper:
            spelled = self.component_major_expr(e)
            if spelled is not None:
                return spelled
        simple = group_node_expr(e, C_GROUP_SPELLINGS, self.group_items)
        if simple is not None:
            return simple, PREC_POSTFIX
        if isinstance(e, wg.GroupEval):
            return self.group_eval(e), PREC_PRIMARY
        if isinstance(e, ir.VarRef) and e.name in self.local_names and not self.in_helper:
            return f"(*__lm_{e.name})", PREC_PRIMARY
        if isinstance(e, ir.IntLit) and e.text is not None and not _NUMERIC.match(e.text):
            return self.int_literal(dataclasses.replace(e, text=None))
        if isinstance(e, ir.FloatLit) and e.text is not None and not _NUMERIC.match(e.text):
            return self.float_literal(dataclasses.replace(e, text=None))
        if isinstance(e, ir.Assign) and isinstance(e.target, ir.Swizzle) and len(
                e.target.indices) > 1:
            return self.swizzle_store(e), PREC_PRIMARY
        if isinstance(e, ir.Unary) and e.op in ("++", "--", "p++", "p--") \
                and isinstance(e.operand, ir.Swizzle) and len(e.operand.indices) > 1:
            return self.swizzle_step(e), PREC_PRIMARY
        if isinstance(e, ir.Index):
            element = self.element_major_entry(e)
            if element is not None:
                return element, PREC_POSTFIX
        if isinstance(e, ir.Cast):
            narrowed = self.narrow_global_id(e)
            if narrowed is not None:
                return narrowed, PREC_PRIMARY
        if isinstance(e, ir.Binary) and e.op == "<<" and self.mentions_widened(e.lhs):
            # bits shifted past an int's sign bit must be lost as they are in 32 bits
            return super().expr_prec(dataclasses.replace(e, lhs=ir.Cast(e.lhs.type, e.lhs)))
        if isinstance(e, ir.Binary) and e.op in ("/", "%") and isinstance(e.type, ScalarType) \
                and e.type.size == 4 and (self.mentions_widened(e.lhs)
                                          or self.mentions_widened(e.rhs)):
            # a 32-bit quotient of widened operands (their values fit the type) divides in 32
            # bits: x86 has no 64-bit vector multiply-high, so a 64-bit division by a constant
            # kept gcc from vectorizing the loop, where the 32-bit one vectorizes
            lhs = ir.Cast(e.lhs.type, e.lhs) if self.mentions_widened(e.lhs) else e.lhs
            rhs = ir.Cast(e.rhs.type, e.rhs) if self.mentions_widened(e.rhs) else e.rhs
            return super().expr_prec(dataclasses.replace(e, lhs=lhs, rhs=rhs))
        return super().expr_prec(e)

    def narrow_global_id(self, e: ir.Cast) -> str | None:
        """``(int)get_global_id(d)`` computed in 32-bit arithmetic.

        Kernels very often keep the global id in an ``int``/``uint``. Narrowing the 64-bit sum
        ``base + local id`` hides from gcc that consecutive work-items get consecutive indices,
        and the work-item loop is then vectorized with gathers and scatters (3x slower for
        saxpy). Adding in the narrow type keeps the index an induction variable: for ``uint``
        this is the same modulo arithmetic; for ``int`` it needs every global id (offset
        included) to fit in ``int``, so it is a specialization (``narrow_ids``) that launches
        of a larger range do not use. ``(long)get_global_id(d)`` (a 64-bit index,
        ``transforms/wide_index.py``) adds in ``long`` for the same reason: gcc follows a
        signed sum of the base and the counter, not a ``size_t`` sum converted."""
        if not self.narrow_ids or self.in_helper or not isinstance(e.type, ScalarType) or e.type.name not in ("int", "uint", "long"):
            return None
        call = e.operand
        if not isinstance(call, ir.Call) or call.name != "get_global_id" or not call.args:
            return None
        dim = const_int(call.args[0])
        if dim is None or dim > 2:
            return None
        # long: the id fits in int, so neither sum can overflow (``wide_index.py``'s indices)
        c_type = {"int": "int", "uint": "unsigned int", "long": "long"}[e.type.name]
        return f"(({c_type})__gb{dim} + ({c_type})__l{_DIMS[dim]})"

    @property
    def group_items(self) -> int:
        x, y, z = self.formed.local_size
        return x * y * z

    def group_eval(self, e: wg.GroupEval) -> str:
        if e.temp is None:
            stmt: ir.Stmt = ir.ExprStmt(e.expr)
        else:
            stmt = ir.ExprStmt(ir.Assign(e.type, "=", wg.ContextRef(e.type, e.temp), e.expr))
        loop = self.workitem_loop(wg.WorkItemLoop(ir.Block((stmt,))), 1)
        value = f" __ctx_{e.temp}[0];" if e.temp is not None else ""
        return "({\n" + "\n".join(loop) + "\n" + value + " })"

    # ------------------------------------------------------------ work-item functions

    def workitem(self, name: str, args: tuple[ir.Expr, ...]) -> str:
        if name == "get_work_dim":
            return "(unsigned int)__L->work_dim" if not self.in_helper else \
                "(unsigned int)__G->launch->work_dim"
        dim = const_int(args[0])
        launch = "__G->launch" if self.in_helper else "__L"
        if dim is None:
            # The argument converted to the parameter's uint (the implicit conversion of a float
            # prints as nothing, and a float subscript is a C error), and evaluated once.
            d = self.expr(args[0], PREC_ASSIGN)
            parts = [self.workitem(name, (ir.IntLit(ScalarType("uint"), k),)) for k in range(3)]
            default = "1" if name in ("get_local_size", "get_global_size", "get_num_groups") else "0"
            return (f"({{ unsigned int __dim = (unsigned int)({d}); __dim < 3 ? "
                    f"((size_t[3]){{{', '.join(parts)}}})[__dim] : {default}; }})")
        if dim > 2:
            return "1" if name in ("get_local_size", "get_global_size", "get_num_groups") else "0"
        lid = f"__l{_DIMS[dim]}"
        if self.rows and dim == 0 and not self.in_helper:
            if name == "get_local_id":
                return f"((size_t)__lx % {self.formed.local_size[0]})"
            if name == "get_group_id":
                return f"(__grp0 + (size_t)__lx / {self.formed.local_size[0]})"
        if name == "get_local_id":
            return lid
        if name == "get_local_size":
            return f"(size_t){self.formed.local_size[dim]}"
        if name == "get_global_id":
            base = f"__G->gbase[{dim}]" if self.in_helper else f"__gb{dim}"
            return f"({base} + {lid})"
        if name == "get_group_id":
            return f"__G->group[{dim}]" if self.in_helper else f"__grp{dim}"
        if name == "get_global_size":
            return f"{launch}->global_size[{dim}]" if self.in_helper else f"__gs{dim}"
        if name == "get_num_groups":
            return f"{launch}->num_groups[{dim}]" if self.in_helper else f"__ng{dim}"
        if name == "get_global_offset":
            return "(size_t)0" if self.zero_offset else f"{launch}->global_offset[{dim}]"
        raise AssertionError(name)

    def global_linear_id(self) -> str:
        """The C of the work-item's global linear id (OpenCL 2.0's ``get_global_linear_id``:
        row-major over the global range, offsets removed)."""
        def of(name: str, dim: int) -> str:
            return self.workitem(name, (ir.IntLit(ScalarType("uint"), dim),))

        linear = ""
        for dim in (2, 1, 0):
            position = f"({of('get_global_id', dim)} - {of('get_global_offset', dim)})"
            linear = position if not linear else \
                f"{position} + {of('get_global_size', dim)} * ({linear})"
        return linear

    def async_copy(self, e: ir.Call) -> str:
        dst, src, count = e.args[0], e.args[1], e.args[2]
        assert isinstance(dst.type, PointerType)
        elem = self.type_name(PointerType(dst.type.pointee))
        selem = self.type_name(PointerType(dst.type.pointee, const=True))
        parts = [f"{elem} __d = {self.expr(dst, PREC_ASSIGN)};",
                 f"{selem} __s = {self.expr(src, PREC_ASSIGN)};",
                 f"size_t __n = {self.expr(count, PREC_ASSIGN)};"]
        if e.name == "async_work_group_copy":
            parts.append("for (size_t __i = 0; __i < __n; __i++) __d[__i] = __s[__i];")
        else:
            parts.append(f"size_t __st = {self.expr(e.args[3], PREC_ASSIGN)};")
            to_local = dst.type.space is AddressSpace.LOCAL
            if to_local:
                parts.append("for (size_t __i = 0; __i < __n; __i++) __d[__i] = __s[__i * __st];")
            else:
                parts.append("for (size_t __i = 0; __i < __n; __i++) __d[__i * __st] = __s[__i];")
        return "({ " + " ".join(parts) + " (event_t)1; })"

    def call(self, e: ir.Call) -> str | None:
        if e.builtin is None:
            args = [self.expr(a, PREC_ASSIGN) for a in e.args]
            if e.name in self.wi_helpers:
                args += ["__G", "__lx", "__ly", "__lz"]
            return f"{self.name(e.name)}({', '.join(args)})"
        if e.name in WORKITEM_FUNCTIONS:
            return self.workitem(e.name, e.args)
        if e.name in ("barrier", "work_group_barrier", "wait_group_events"):
            return "((void)0)"
        if e.name == "printf":
            return lower_printf(self, e, self.printf_ids, self.mentions_widened,
                                self.global_linear_id())
        if e.name in ("async_work_group_copy", "async_work_group_strided_copy"):
            return self.async_copy(e)
        ov = builtins.lookup(e.builtin)
        return f"{c_builtin_name(ov)}({self.args(e.args)})"



def _call_hook(p: CStylePrinter, e: ir.Expr) -> str | None:
    assert isinstance(p, KernelPrinter) and isinstance(e, ir.Call)
    return p.call(e)


def _components(t: Type) -> int:
    """The components of a vector type or fields of a struct laid out component-major."""
    layout = component_layout(t)
    assert layout is not None, f"{t} laid out component-major"
    return layout[1]
