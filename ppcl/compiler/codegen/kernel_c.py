"""C for one kernel of the CPU backend: the work-group function and its entry point.

Layout of the generated translation unit: ``ppcl_types.h``, the definitions of the builtins the
program calls, the launch descriptor, the program's records/typedefs/``__constant`` tables,
helper functions, the group function ``ppcl_group_<kernel>`` (one work-group, local size baked
in) and the entry point::

    void ppcl_run_<kernel>(void **args, const ppcl_launch *launch,
                           size_t first_group, size_t last_group, char *local_mem);

which runs the linear group range ``[first_group, last_group)`` (groups numbered x fastest).
``args[i]`` points at the bytes of argument ``i``: for a buffer, at the data pointer; for a
scalar, vector or struct, at its value; for a ``__local`` pointer argument, at a ``size_t``
offset into ``local_mem`` (one local block per executing thread; the kernel's own ``__local``
variables occupy its first ``local_mem_static_bytes``).

Group-level code sees local id 0 (``__lx``/``__ly``/``__lz``/``__lid`` are constants 0 there);
work-item loops shadow them. Context arrays are ``__ctx_<name>[LS]``, masks ``char[LS]``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ppcl.compiler.analysis.callgraph import reaching
from ppcl.compiler.analysis.effects import written_vars
from ppcl.compiler.analysis.uniformity import analyze_kernel, const_int
from ppcl.compiler.codegen.c import C
from ppcl.compiler.codegen.c_builtins import TYPES_HEADER, c_builtin_definitions, c_builtin_name
from ppcl.compiler.codegen.cstyle import (
    INDENT,
    PREC_ASSIGN,
    PREC_POSTFIX,
    PREC_PRIMARY,
    PREC_UNARY,
    CStylePrinter,
)
from ppcl.compiler.codegen.widen import GroupPosition, group_position, widened_ints
from ppcl.compiler.ir import builtins
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.types import (
    INT,
    LONG,
    AddressSpace,
    ArrayType,
    PointerType,
    ScalarType,
    StructType,
    Type,
    scalar_of,
    width_of,
)
from ppcl.compiler.ir.visit import Node, Renamer, find_all, walk
from ppcl.compiler.transforms.inline import inline_barrier_functions
from ppcl.compiler.transforms.jam import (
    JAM_WIDTH,
    JamPlan,
    StridePlan,
    plan_jam,
    plan_stride,
)
from ppcl.compiler.transforms.workgroup import FormedKernel, form_workgroup

WORKITEM_FUNCTIONS = ("get_global_id", "get_local_id", "get_group_id", "get_local_size",
                      "get_global_size", "get_num_groups", "get_global_offset", "get_work_dim")
_LOWERED_HERE = WORKITEM_FUNCTIONS + ("barrier", "work_group_barrier", "async_work_group_copy",
                                      "async_work_group_strided_copy", "wait_group_events",
                                      "printf")

PRELUDE = r"""
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdarg.h>
typedef size_t event_t;
typedef struct ppcl_launch {
    size_t work_dim;
    size_t global_size[3];
    size_t global_offset[3];
    size_t local_size[3];
    size_t num_groups[3];
} ppcl_launch;
typedef struct ppcl_group {
    size_t group[3];
    size_t gbase[3];
    const ppcl_launch *launch;
} ppcl_group;
static inline int ppcl_any(const char *mask, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (mask[i]) {
            return 1;
        }
    }
    return 0;
}
static inline int ppcl_all(const char *mask, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!mask[i]) {
            return 0;
        }
    }
    return 1;
}
"""

PRINTF_SUPPORT = r"""
static _Thread_local char ppcl_printf_buffer[1 << 16];
static _Thread_local size_t ppcl_printf_used;
static void ppcl_printf_flush(void)
{
    if (ppcl_printf_used == 0) {
        return;
    }
    fwrite(ppcl_printf_buffer, 1, ppcl_printf_used, stdout);
    fflush(stdout);
    ppcl_printf_used = 0;
}
static int ppcl_printf(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    char line[4096];
    int n = vsnprintf(line, sizeof line, format, ap);
    va_end(ap);
    if (n < 0) {
        return -1;
    }
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (ppcl_printf_used + len > sizeof ppcl_printf_buffer) {
        ppcl_printf_flush();
    }
    memcpy(ppcl_printf_buffer + ppcl_printf_used, line, len);
    ppcl_printf_used += len;
    return 0;
}
"""

_DIMS = "xyz"
_NUMERIC = re.compile(r"^[0-9.]")
_PRINTF_SPEC = re.compile(r"%([-+ #0]*[0-9]*(?:\.[0-9]+)?)(v(?:2|3|4|8|16))?(hh|hl|h|ll|l)?([diouxXfFeEgGaAcsp%])")


@dataclass(frozen=True)
class ArgKind:
    """How argument ``index`` is passed: ``buffer``, ``local`` (a size_t offset), ``value``."""

    name: str
    kind: str
    type: Type
    size: int  # bytes of the value for ``value`` arguments


@dataclass(frozen=True)
class GeneratedKernel:
    source: str
    kernel_name: str
    entry: str
    arg_kinds: tuple[ArgKind, ...]
    local_mem_static_bytes: int
    local_size: tuple[int, int, int]
    uses_printf: bool
    formed: FormedKernel


class KernelPrinter(CStylePrinter):
    """The C dialect printer plus work-group nodes, work-item functions and hidden state."""

    def __init__(self, formed: FormedKernel, zero_offset: bool, wi_helpers: set[str],
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
        self.uses_printf = False
        self.widened: set[str] = set()  # int variables declared 64 bits wide (see widen.py)
        self.position = GroupPosition(None, {})  # group positions printed 64 bits wide
        self.rows = False  # the group function runs a row of groups (see ``runs_rows``)
        params = {q.name for q in formed.function.params}
        self.fixed_params = frozenset(params - written_vars(formed.body))

    # ------------------------------------------------------------ statements

    def stmt(self, s: ir.Stmt, level: int) -> list[str]:
        ind = INDENT * level
        if isinstance(s, wg.WorkItemLoop):
            return self.workitem_loop(s, level)
        if isinstance(s, wg.WorkItemExit):
            if self.nest == 0:
                return [ind + "continue;"]
            self.used_goto = True
            return [ind + f"goto {self.exit_label};"]
        if isinstance(s, wg.ContextInit):
            return self.context_init(s, level)
        if isinstance(s, wg.MaskSet):
            return [ind + f"{s.name}[__lid] = {s.value};"]
        if isinstance(s, wg.MaskFill):
            return [ind + f"memset({s.name}, {s.value}, sizeof {s.name});"]
        if isinstance(s, wg.MaskCopy):
            return [ind + f"memcpy({s.dst}, {s.src}, sizeof {s.dst});"]
        if isinstance(s, wg.GroupCall):
            call = self.expr(s.call, PREC_ASSIGN)
            if s.target is None:
                return [ind + f"(void){call};"]
            return [ind + f"{self.expr(s.target, PREC_UNARY)} = {call};"]
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

    def workitem_loop(self, s: wg.WorkItemLoop, level: int) -> list[str]:
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
        jam = stride = None
        if not self.rows and not self.in_helper:
            jam = plan_jam(s, ls, self.formed.uniform_vars, self.fixed_params)
            if jam is None:
                stride = plan_stride(s, self.formed.uniform_vars, self.fixed_params)
        if jam is not None:  # the plain loop below is the fallback for a block
            lines += self.jammed(jam, depth, lid)
            depth += 1
            body = [INDENT + line for line in body]
        elif stride is not None:  # the plain loop below is the fallback for a step <= 0
            lines += self.strided(stride, depth, lid, simd)
            depth += 1  # printed one level shallower than the else it sits in
            body = [INDENT + line for line in body]
        if simd and jam is None:
            lines.append(INDENT * depth + "#pragma omp simd")
        if jam is not None:
            lines.append(INDENT * depth + f"for (size_t __lx = __lb; __lx < __lb + {JAM_WIDTH}; "
                         "__lx++) {")
        elif self.rows:
            # int, so that gcc sees a narrowed global id (int)__gb0 + __lx as affine
            ctype = "int" if self.narrow_ids else "size_t"
            lines.append(INDENT * depth + f"for ({ctype} __lx = 0; __lx < ({ctype})__nrow * "
                         f"{ls[0]}; __lx++) {{")
        else:
            lines.append(INDENT * depth + f"for (size_t __lx = 0; __lx < {ls[0]}; __lx++) {{")
        lines += body
        lines.append(INDENT * depth + "}")
        if jam is not None:  # the block loop
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
        return lines

    def strided(self, plan: StridePlan, depth: int, lid: str, simd: bool) -> list[str]:
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

    def jammed(self, plan: JamPlan, depth: int, lid: str) -> list[str]:
        """The work-item loop ``JAM_WIDTH`` work-items at a time (see ``transforms/jam.py``):
        their prefixes, the loop once with their bodies in turn, their suffixes; a block in
        which one of them exits in its prefix runs one work-item at a time."""
        ind = INDENT * depth
        self.labels += 1
        slow = f"__ppcl_jam{self.labels}"
        copies = []
        for j in range(JAM_WIDTH):
            names = {d.name: f"{d.name}__j{j}" for d in plan.carried}
            self.widened |= {new for old, new in names.items() if old in self.widened}
            copies.append((j, Renamer(names)))
        lines = [ind + f"for (size_t __lb = 0; __lb < {self.formed.local_size[0]}; "
                 f"__lb += {JAM_WIDTH}) {{"]
        inner = depth + 1
        for _, ren in copies:
            decls = [dataclasses.replace(d, name=ren.names[d.name], init=None, const=False)
                     for d in plan.carried]
            lines.append(INDENT * inner + self.var_decls(decls) + ";")

        def scoped(j: int, stmts: Sequence[ir.Stmt], level: int) -> list[str]:
            out = [INDENT * level + "{",
                   INDENT * (level + 1) + f"const size_t __lx = __lb + {j}; (void)__lx;",
                   INDENT * (level + 1) + f"const size_t __lid = {lid}; (void)__lid;"]
            out += self.stmts(stmts, level + 1)
            return out + [INDENT * level + "}"]

        saved = (self.exit_label, self.nest)
        self.exit_label, self.nest = slow, 1  # an exit in a prefix leaves for the slow path
        for j, ren in copies:
            prefix: list[ir.Stmt] = []
            for st in plan.prefix:
                st = ren.rewrite(st)
                if isinstance(st, ir.DeclStmt):
                    prefix += [ir.ExprStmt(ir.Assign(d.type, "=", ir.VarRef(d.type, d.name), d.init))
                               for d in st.decls if d.init is not None]  # d: renamed
                else:
                    prefix.append(st)
            lines += scoped(j, prefix, inner)
        self.exit_label, self.nest = saved
        bodies = [ren.rewrite(plan.loop.body) for _, ren in copies]
        loop_lines = self.stmt(dataclasses.replace(plan.loop, body=ir.Block(())), inner)
        # the loop header once, then each work-item's body in its own scope
        header, close = loop_lines[0], loop_lines[-1]
        assert header.rstrip().endswith("{") and close.strip() == "}", loop_lines
        lines.append(header)
        for j, body in zip(range(JAM_WIDTH), bodies):
            lines += scoped(j, body.stmts if isinstance(body, ir.Block) else (body,), inner + 1)
        lines.append(close)
        for j, ren in copies:
            lines += scoped(j, [ren.rewrite(st) for st in plan.suffix], inner)
        lines.append(INDENT * inner + "continue;")
        lines.append(INDENT * depth + f"{slow}: ;")
        return lines

    def var_decls(self, decls: Sequence[ir.VarDecl]) -> str:
        if self.widened and not self.in_helper:
            decls = [dataclasses.replace(d, type=LONG) if d.name in self.widened else d
                     for d in decls]
        return super().var_decls(decls)

    def mentions_widened(self, e: ir.Expr) -> bool:
        return not self.in_helper and any(
            (isinstance(n, ir.VarRef) and n.name in self.widened) or self.wide_position(n)
            for n in walk(e))

    def wide_position(self, e: Node) -> bool:
        """A group position converted to ``int``, printed 64 bits wide (see ``GroupPosition``)."""
        return isinstance(e, ir.Cast) and e.type == INT and self.position.covers(e.operand)

    def cast(self, e: ir.Cast) -> tuple[str, int]:
        """Implicit conversions that C would do differently with a widened operand are
        spelled out: ``long < uint`` compares signed where ``int < uint`` does not. (Left
        shifts are the other operation whose 64-bit result differs: see ``expr_prec``.)"""
        if not self.in_helper and self.wide_position(e):
            return f"(long)({self.expr(e.operand, PREC_ASSIGN)})", PREC_UNARY
        if e.implicit and isinstance(e.type, ScalarType) and e.type != e.operand.type \
                and self.mentions_widened(e.operand):
            return f"({self.type_name(e.type)})({self.expr(e.operand, PREC_ASSIGN)})", PREC_UNARY
        return super().cast(e)

    def context_init(self, s: wg.ContextInit, level: int) -> list[str]:
        ind = INDENT * level
        t = self.formed.context_vars[s.name]
        if isinstance(t, ArrayType | StructType):
            temp = self.declaration(t, "__ppcl_init")
            return [ind + f"{{ {temp} = {self.initializer(s.init)}; "
                          f"memcpy(&__ctx_{s.name}[__lid], &__ppcl_init, sizeof __ppcl_init); }}"]
        return [ind + f"__ctx_{s.name}[__lid] = {self.expr(s.init, PREC_ASSIGN)};"]

    def swizzle_store(self, e: ir.Assign) -> str:
        target = e.target
        assert isinstance(target, ir.Swizzle)
        base = self.expr(target.base, PREC_POSTFIX)
        value_type = self.type_name(target.type)
        value = self.expr(e.value, PREC_ASSIGN)
        if e.op != "=":
            value = f"{self.expr(target, PREC_POSTFIX)} {e.op[:-1]} ({value})"
        stores = " ".join(f"{base}[{i}] = __ppcl_sw[{k}];" for k, i in enumerate(target.indices))
        return f"({{ {value_type} __ppcl_sw = {value}; {stores} __ppcl_sw; }})"

    # ------------------------------------------------------------ expressions

    def expr_prec(self, e: ir.Expr) -> tuple[str, int]:
        if isinstance(e, wg.ContextRef):
            return f"__ctx_{e.name}[__lid]", PREC_POSTFIX
        if isinstance(e, wg.MaskRef):
            return f"{e.name}[__lid]", PREC_POSTFIX
        if isinstance(e, wg.MaskAny):
            return f"ppcl_any({e.name}, {self.group_items})", PREC_POSTFIX
        if isinstance(e, wg.MaskAll):
            return f"ppcl_all({e.name}, {self.group_items})", PREC_POSTFIX
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
        if isinstance(e, ir.Cast):
            narrowed = self.narrow_global_id(e)
            if narrowed is not None:
                return narrowed, PREC_PRIMARY
        if isinstance(e, ir.Binary) and e.op == "<<" and self.mentions_widened(e.lhs):
            # bits shifted past an int's sign bit must be lost as they are in 32 bits
            return super().expr_prec(dataclasses.replace(e, lhs=ir.Cast(e.lhs.type, e.lhs)))
        return super().expr_prec(e)

    def narrow_global_id(self, e: ir.Cast) -> str | None:
        """``(int)get_global_id(d)`` computed in 32-bit arithmetic.

        Kernels very often keep the global id in an ``int``/``uint``. Narrowing the 64-bit sum
        ``base + local id`` hides from gcc that consecutive work-items get consecutive indices,
        and the work-item loop is then vectorized with gathers and scatters (3x slower for
        saxpy). Adding in the narrow type keeps the index an induction variable: for ``uint``
        this is the same modulo arithmetic; for ``int`` it needs every global id (offset
        included) to fit in ``int``, so it is a specialization (``narrow_ids``) that launches
        of a larger range do not use."""
        if not self.narrow_ids or self.in_helper or not isinstance(e.type, ScalarType) or e.type.name not in ("int", "uint"):
            return None
        call = e.operand
        if not isinstance(call, ir.Call) or call.name != "get_global_id" or not call.args:
            return None
        dim = const_int(call.args[0])
        if dim is None or dim > 2:
            return None
        c_type = "int" if e.type.name == "int" else "unsigned int"
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
            d = self.expr(args[0], PREC_ASSIGN)
            parts = [self.workitem(name, (ir.IntLit(ScalarType("uint"), k),)) for k in range(3)]
            default = "1" if name in ("get_local_size", "get_global_size", "get_num_groups") else "0"
            return f"((size_t)({d}) < 3 ? ((size_t[3]){{{', '.join(parts)}}})[{d}] : {default})"
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
            return f"{launch}->global_size[{dim}]"
        if name == "get_num_groups":
            return f"{launch}->num_groups[{dim}]"
        if name == "get_global_offset":
            return "(size_t)0" if self.zero_offset else f"{launch}->global_offset[{dim}]"
        raise AssertionError(name)

    def printf(self, e: ir.Call) -> str:
        self.uses_printf = True
        fmt_expr = e.args[0]
        while isinstance(fmt_expr, ir.Cast):
            fmt_expr = fmt_expr.operand
        if not isinstance(fmt_expr, ir.StringLit):
            return f"ppcl_printf({self.args(e.args)})"
        values = list(e.args[1:])
        out_args: list[str] = []
        pieces: list[str] = []
        pos = 0
        text = fmt_expr.value
        for m in _PRINTF_SPEC.finditer(text):
            pieces.append(text[pos:m.start()])
            pos = m.end()
            flags, vec, length, conv = m.groups()
            if conv == "%":
                pieces.append("%%")
                continue
            if not values:
                pieces.append(m.group(0))
                continue
            value = values.pop(0)
            if vec is None:
                pieces.append(m.group(0))
                if self.mentions_widened(value):  # a variadic argument keeps its C type
                    out_args.append(f"({self.type_name(value.type)})({self.expr(value, PREC_ASSIGN)})")
                else:
                    out_args.append(self.expr(value, PREC_ASSIGN))
                continue
            width = int(vec[1:])
            elem = scalar_of(value.type)
            if conv in "fFeEgGaA":
                spec, cast = f"%{flags}{conv}", "double"
            elif conv in "di":
                spec, cast = f"%{flags}ll{conv}", "long long"
            else:
                spec, cast = f"%{flags}ll{conv}", "unsigned long long"
            temp = self.expr(value, PREC_POSTFIX)
            if elem is not None and width_of(value.type) == width:
                comps = [f"({cast}){temp}[{k}]" for k in range(width)]
            else:
                comps = [f"({cast})0"] * width
            pieces.append(",".join([spec] * width))
            out_args += comps
        pieces.append(text[pos:])
        fmt = "".join(pieces)
        return "ppcl_printf(" + ", ".join([f'"{fmt}"', *out_args]) + ")"

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
            return f"{e.name}({', '.join(args)})"
        if e.name in WORKITEM_FUNCTIONS:
            return self.workitem(e.name, e.args)
        if e.name in ("barrier", "work_group_barrier", "wait_group_events"):
            return "((void)0)"
        if e.name == "printf":
            return self.printf(e)
        if e.name in ("async_work_group_copy", "async_work_group_strided_copy"):
            return self.async_copy(e)
        ov = builtins.lookup(e.builtin)
        return f"{c_builtin_name(ov)}({self.args(e.args)})"


_GROUP_VARYING = ("get_global_id", "get_local_id", "get_group_id")


def runs_rows(formed: FormedKernel, wi_helpers: set[str]) -> bool:
    """Whether the group function may run a row of groups along dimension 0 at once.

    Work-groups of a kernel without barriers, local memory or per-group state are independent
    down to their work-items, so a row of groups can run as one work-item loop over the row's
    global x range. The work-items of a 2D or 3D group then run in memory order, a whole row
    of the NDRange after another, instead of tile by tile: a 7-point stencil on 64x4 groups
    runs 1.6x faster because the hardware prefetchers follow long rows. A 1D range gains
    nothing, its groups already run in memory order. Rows need one
    work-item loop, at the top of the group function, and group-level code that does not
    depend on the group's position along dimension 0."""
    if formed.local_size[1] * formed.local_size[2] == 1:
        return False  # the groups of a 1D range already run in memory order
    stmts = formed.body.stmts
    loops = find_all(formed.body, wg.WorkItemLoop)
    if len(loops) != 1 or not any(s is loops[0] for s in stmts) or loops[0].mask is not None:
        return False
    if formed.context_vars or formed.masks or formed.local_vars or formed.group_scalars:
        return False
    if any(isinstance(p.type, PointerType) and p.type.space is AddressSpace.LOCAL
           for p in formed.function.params):
        return False
    for node in walk(formed.body):
        if isinstance(node, wg.GroupEval | wg.GroupCall):
            return False
        if isinstance(node, ir.Call) and (node.name == "printf" or node.name in wi_helpers):
            return False
    for s in stmts:
        if s is loops[0]:
            continue
        for node in walk(s):
            if isinstance(node, ir.Call) and node.builtin is not None \
                    and node.name in _GROUP_VARYING and const_int(node.args[0]) in (None, 0):
                return False
    return True


def _call_hook(p: CStylePrinter, e: ir.Expr) -> str | None:
    assert isinstance(p, KernelPrinter) and isinstance(e, ir.Call)
    return p.call(e)


# ---------------------------------------------------------------- the translation unit


def _used_overloads(nodes: list[ir.Function]) -> list[builtins.Overload]:
    keys: dict[str, None] = {}
    for f in nodes:
        if f.body is None:
            continue
        for n in walk(f.body):
            if isinstance(n, ir.Call) and n.builtin is not None and n.name not in _LOWERED_HERE:
                keys.setdefault(n.builtin, None)
    return [builtins.lookup(k) for k in keys]


def _helpers_using_workitems(module: ir.Module) -> set[str]:
    helpers = {f.name for f in module.functions if not f.is_kernel}
    return set(reaching(module, lambda call: call.name in WORKITEM_FUNCTIONS) & helpers)


def _arg_kind(p: ir.Param) -> ArgKind:
    t = p.type
    if isinstance(t, PointerType):
        kind = "local" if t.space is AddressSpace.LOCAL else "buffer"
        return ArgKind(p.name, kind, t, 8)
    return ArgKind(p.name, "value", t, t.size)


def generate_c(module: ir.Module, kernel_name: str, *,
               local_size: tuple[int, int, int] = (1, 1, 1), zero_offset: bool = False,
               fast_math: bool = False, use_uniformity: bool = True,
               narrow_ids: bool = True) -> GeneratedKernel:
    """Form ``kernel_name`` for ``local_size`` and print its C translation unit."""
    kernel = module.function(kernel_name)
    if kernel is None or not kernel.is_kernel:
        raise KeyError(f"no kernel named {kernel_name!r}")
    kernel = inline_barrier_functions(module, kernel)
    uniformity = analyze_kernel(module, kernel) if use_uniformity else None
    formed = form_workgroup(module, kernel, local_size, uniformity)
    return generate_formed_c(module, formed, zero_offset=zero_offset, fast_math=fast_math,
                             narrow_ids=narrow_ids)


def generate_formed_c(module: ir.Module, formed: FormedKernel, *, zero_offset: bool,
                      fast_math: bool, narrow_ids: bool = True) -> GeneratedKernel:
    """The C translation unit of one formed kernel (see the module docstring)."""
    kernel = formed.function
    name = kernel.name
    wi_helpers = _helpers_using_workitems(module)
    p = KernelPrinter(formed, zero_offset, wi_helpers, narrow_ids)
    ls = formed.local_size
    items = ls[0] * ls[1] * ls[2]

    # helpers and top-level declarations
    top: list[str] = []
    helpers = [f for f in module.functions if not f.is_kernel]
    for d in module.decls:
        if isinstance(d, ir.TypeDef | ir.RecordDef | ir.EnumDef):
            top += p.top_level(d)
        elif isinstance(d, ir.GlobalVar):
            decl = dataclasses.replace(d.decl, const=True, space=AddressSpace.PRIVATE)
            top.append("static " + p.var_decls([decl]) + ";")
    p.in_helper = True
    headers = {}
    for f in helpers:
        hidden = ", const ppcl_group *__G, size_t __lx, size_t __ly, size_t __lz" \
            if f.name in wi_helpers else ""
        params = ", ".join(p.param(q) for q in f.params) or ("" if hidden else "void")
        if hidden and not f.params:
            hidden = hidden[2:]
        headers[f.name] = "static inline " + p.declaration(f.ret, f"{f.name}({params}{hidden})")
        top.append(headers[f.name] + ";")
    for f in helpers:
        assert f.body is not None
        top += [headers[f.name], "{"] + p.stmts(f.body.stmts, 1) + ["}"]
    p.in_helper = False

    # the group function
    param_texts = [p.param(q) for q in kernel.params]
    loops = find_all(formed.body, wg.WorkItemLoop)
    # Work-item loops that cannot vectorize because of a varying-trip float sum, and no other
    # that could: gcc would vectorize the inner sums in order, which is slower than scalar.
    scalar = not fast_math and any(w.serial_reduction for w in loops) and not any(
        w.simd and not w.serial_reduction for w in loops)
    attribute = '__attribute__((optimize("no-tree-loop-vectorize"))) ' if scalar else ""
    p.rows = runs_rows(formed, wi_helpers)
    group = [f"{attribute}static void ppcl_group_{name}("
             + ", ".join([*param_texts, "const ppcl_launch *__L", "size_t __grp0", "size_t __grp1",
                          "size_t __grp2", "char *__lm", *(["size_t __nrow"] if p.rows else [])])
             + ")", "{"]
    g = INDENT
    group.append(g + "const size_t __lx = 0, __ly = 0, __lz = 0, __lid = 0;")
    group.append(g + "(void)__lx; (void)__ly; (void)__lz; (void)__lid; (void)__lm; (void)__L;")
    for dim in range(3):
        offset = "" if zero_offset else f" + __L->global_offset[{dim}]"
        group.append(g + f"const size_t __gb{dim} = __grp{dim} * {ls[dim]}{offset}; (void)__gb{dim};")
    group.append(g + "const ppcl_group __G_value = {{__grp0, __grp1, __grp2}, {__gb0, __gb1, __gb2}, __L};")
    group.append(g + "const ppcl_group *__G = &__G_value; (void)__G;")
    for v in formed.local_vars:
        group.append(g + p.declaration(PointerType(v.type), f"__lm_{v.name}")
                     + f" = (void *)(__lm + {v.offset});")
    for cname, t in formed.context_vars.items():
        group.append(g + p.declaration(ArrayType(t, items), f"__ctx_{cname}")
                     + " __attribute__((aligned(64)));")
    for mask in formed.masks:
        group.append(g + f"char {mask}[{items}];")
    for sname, t in formed.group_scalars.items():
        group.append(g + p.declaration(t, sname) + ";")
    # uniform values gain nothing from widening: they are not vectorized along work-items
    p.position = group_position(formed.body, ls if narrow_ids else None)
    p.widened = widened_ints(formed.body, set(formed.context_vars) | set(formed.group_scalars)
                             | formed.uniform_vars, ls if narrow_ids else None)
    group += p.stmts(formed.body.stmts, 1)
    group.append("}")

    # the entry point
    kinds = tuple(_arg_kind(q) for q in kernel.params)
    run = [f"void ppcl_run_{name}(void **args, const ppcl_launch *launch, size_t first_group, "
           "size_t last_group, char *local_mem)", "{"]
    for i, (q, kind) in enumerate(zip(kernel.params, kinds)):
        arg_decl = p.declaration(q.type, f"a{i}")
        if kind.kind == "local":
            run.append(g + f"{arg_decl} = (void *)(local_mem + *(const size_t *)args[{i}]);")
        else:
            run.append(g + f"{arg_decl}; memcpy(&a{i}, args[{i}], sizeof a{i});")
    run.append(g + "const size_t n0 = launch->num_groups[0], n1 = launch->num_groups[1];")
    call_args = [f"a{i}" for i in range(len(kernel.params))]
    if p.rows:  # the rest of the chunk's current row of groups along dimension 0, in one call
        run.append(g + "for (size_t g = first_group; g < last_group; ) {")
        run.append(g * 2 + "size_t row = n0 - g % n0;")
        run.append(g * 2 + "if (row > last_group - g) row = last_group - g;")
        run.append(g * 2 + f"ppcl_group_{name}(" + ", ".join(
            [*call_args, "launch", "g % n0", "(g / n0) % n1", "g / (n0 * n1)", "local_mem",
             "row"]) + ");")
        run.append(g * 2 + "g += row;")
    else:
        run.append(g + "for (size_t g = first_group; g < last_group; g++) {")
        run.append(g * 2 + f"ppcl_group_{name}(" + ", ".join(
            [*call_args, "launch", "g % n0", "(g / n0) % n1", "g / (n0 * n1)", "local_mem"])
            + ");")
    if p.uses_printf:
        run.append(g * 2 + "ppcl_printf_flush();")
    run.append(g + "}")
    run.append("}")

    builtin_defs = c_builtin_definitions(_used_overloads([*helpers, kernel]), fast_math=fast_math)
    parts = [TYPES_HEADER.read_text(encoding="utf-8"), PRELUDE]
    if p.uses_printf:
        parts.append(PRINTF_SUPPORT)
    parts += [builtin_defs, "\n".join(top), "\n".join(group), "\n".join(run)]
    source = "\n".join(parts) + "\n"
    return GeneratedKernel(
        source=source,
        kernel_name=name,
        entry=f"ppcl_run_{name}",
        arg_kinds=kinds,
        local_mem_static_bytes=formed.local_static_bytes,
        local_size=ls,
        uses_printf=p.uses_printf,
        formed=formed,
    )


