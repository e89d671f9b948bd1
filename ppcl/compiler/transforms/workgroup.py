"""Work-group formation: a kernel written for one work-item becomes code for a whole group.

The kernel body is split at barriers into parallel regions, each wrapped in a ``WorkItemLoop``.
A barrier inside an ``if`` or loop whose control is provably uniform (``control_uniform``) runs
in lock step: the statement stays at group level and its condition is evaluated once, as
work-item 0 sees it. Anything else that contains a barrier runs in lock step with activity
masks (one ``char`` per work-item): an ``if`` splits the current mask into then/else masks, a
loop keeps a loop mask and a per-iteration body mask and stops when no work-item is active, and
``break``/``continue``/``return`` clear the masks of the leaving work-item up to their target.
The masked mode is correct for every valid kernel, so correctness never rests on the analysis.

After formation, private variables referenced in more than one region (or at group level)
become context arrays indexed by the linear local id, or group scalars when they are uniform
and only written where every work-item writes the same value once (see ``_group_scalars``).
A variable whose one initializer is a pure function of work-item ids and kernel arguments
(``int lid = get_local_id(0);``) is instead recomputed in every region that reads it: the
compiler then sees ``lid`` as the loop counter, not as a load from memory, and vectorizes
accordingly (see ``_recomputable``).

Pass name: ``workgroup``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ppcl.compiler.analysis import liveness
from ppcl.compiler.analysis.effects import (
    ASYNC_COPIES,
    Effects,
    effects,
    is_effect_free,
    written_vars,
)
from ppcl.compiler.analysis.uniformity import ID_QUERIES, Kind, Uniformity
from ppcl.compiler.diagnostics import CompileError, Diagnostic, Loc, Severity
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.types import (
    CHAR,
    INT,
    AddressSpace,
    ArrayType,
    EnumType,
    PointerType,
    ScalarType,
    Type,
    VectorType,
)
from ppcl.compiler.ir.visit import Node, Rewriter, children, walk
from ppcl.compiler.transforms.inline import calls_barrier_functions

PASS_NAME = "workgroup"
LOCAL_ALIGN = 128  # every __local object starts on a 128-byte boundary (vectors, cache lines)

_LOOPS = (ir.For, ir.While, ir.DoWhile)
# builtins whose calls are ordered side effects across work-items (no simd, no group scalars)
_EFFECT_FAMILIES = ("atomic", "printf", "async", "sync")


@dataclass(frozen=True)
class LocalVar:
    name: str
    type: Type
    offset: int


@dataclass(frozen=True)
class FormedKernel:
    """A kernel after work-group formation; ``body`` is group-level code."""

    function: ir.Function
    body: ir.Block
    local_size: tuple[int, int, int]
    context_vars: dict[str, Type]
    group_scalars: dict[str, Type]
    masks: tuple[str, ...]
    local_vars: tuple[LocalVar, ...]
    local_static_bytes: int
    interchanged: int = 0
    notes: tuple[str, ...] = field(default=())
    recomputed: tuple[str, ...] = ()  # redeclared in each region that reads them
    uniform_vars: frozenset[str] = frozenset()  # the same for every work-item (by analysis)
    # decisions of transforms/schedule.py, which the printer follows
    rows: bool = False  # the group function runs a row of groups along x (``runs_rows``)
    vectorize: bool = True  # False: gcc's loop vectorizer is turned off for the group function
    widened: frozenset[str] = frozenset()  # int variables declared 64 bits wide
    wide_positions: frozenset[ir.Expr] = frozenset()  # group positions read 64 bits wide
    plans: tuple[str, ...] = ()  # one line per work-item loop: the plan chosen and why


class _NeedMasked(Exception):
    """A construct formed in uniform lock step turned out to need masks (an exit that cannot
    be lifted to group level); the nearest uniform construct re-forms itself masked."""


def _error(loc: Loc, message: str) -> CompileError:
    diagnostic = Diagnostic(Severity.ERROR, message, loc)
    return CompileError([diagnostic], diagnostic.format())


# ---------------------------------------------------------------- syntactic queries


def _is_builtin_call(node: Node, names: tuple[str, ...]) -> bool:
    return isinstance(node, ir.Call) and node.builtin is not None and node.name in names


def has_barrier(node: Node) -> bool:
    return any(_is_builtin_call(n, ("barrier", "work_group_barrier")) for n in walk(node))


def _has_async(node: Node) -> bool:
    return any(_is_builtin_call(n, ASYNC_COPIES) for n in walk(node))


def escapes(s: ir.Stmt) -> set[str]:
    """The kinds of exits (``break``, ``continue``, ``return``) that leave ``s``."""
    found: set[str] = set()

    def visit(node: Node, in_loop: bool, in_switch: bool) -> None:
        if isinstance(node, ir.Return):
            found.add("return")
        elif isinstance(node, ir.Break):
            if not in_loop and not in_switch:
                found.add("break")
        elif isinstance(node, ir.Continue):
            if not in_loop:
                found.add("continue")
        if not isinstance(node, ir.Stmt):
            return
        for child in children(node):
            if isinstance(child, ir.Stmt):
                visit(child, in_loop or isinstance(node, _LOOPS),
                      in_switch or isinstance(node, ir.Switch))

    visit(s, False, False)
    return found


# ---------------------------------------------------------------- phase 1: structure


class _Former:
    """Builds group-level code; statements without barriers go to regions unchanged except
    for the exits that leave a region (lowered to mask updates and ``WorkItemExit``)."""

    def __init__(self, uniformity: Uniformity | None, has_return: bool,
                 local_size: tuple[int, int, int] = (1, 1, 1)):
        self.uni = uniformity
        self.local_size = local_size
        self.interchanged = 0
        self.mask_names: list[str] = []
        self.fn_mask: str | None = self._new_mask("m_fn") if has_return else None
        # mask stack, outermost first: (kind, name), kind in fn/loop/body/if
        self.masks: list[tuple[str, str]] = [("fn", self.fn_mask)] if self.fn_mask else []
        self.guard: str | None = None  # mask of the work-items active here; None: all
        self.loops: list[str] = []  # group-level loops, innermost last: "lockstep" / "masked"
        self.lockstep_depth = 0
        self.lowered_return = False
        self.in_masked_copy = False  # forming the partial-mask copy of an interchanged loop

    def _new_mask(self, prefix: str) -> str:
        name = f"__ppcl_{prefix}{len(self.mask_names)}"
        self.mask_names.append(name)
        return name

    def _uniform(self, s: ir.Stmt) -> bool:
        if self.uni is None:
            return False
        if self.guard is None:
            return self.uni.control_uniform(s)
        return self._interchangeable(s)

    # ------------------------------------------------------------ blocks and regions

    def _structural(self, s: ir.Stmt) -> bool:
        if has_barrier(s):
            return True
        if self._interchangeable(s):
            return True
        if self.guard is not None:
            return False
        if _has_async(s):
            return True
        exits = escapes(s)
        if self.loops and self.loops[-1] == "lockstep" and exits & {"break", "continue"}:
            return True
        if "return" in exits:
            if self.lockstep_depth > 0:
                return True
            if isinstance(s, ir.Return):
                return True
            if isinstance(s, ir.Block):
                return any(self._structural(c) for c in s.stmts)
            return isinstance(s, ir.If) and self._uniform(s)
        return False

    def _interchangeable(self, s: ir.Stmt) -> bool:
        """Horizontal inner-loop parallelization: a barrier-free loop with uniform control,
        no exits and a memory access consecutive in local id 0 moves out of the work-item
        loop (it runs in lock step like a barrier loop), so the work-item loop inside its body
        vectorizes across work-items; its accumulators become context arrays.

        Under a mask (after a varying early ``return``, say) the loop must be ``convergent``
        and its control computable at group level even when no work-item is active: only
        arguments, its own counters and variables every work-item assigned, no memory.
        (``guard`` may still be None here while the return sits in the pending run of
        statements; the region cut before the loop puts the function mask in place.)"""
        if self.uni is None or not isinstance(s, _LOOPS):
            return False
        if self.local_size[0] <= 1 or escapes(s) or _has_async(s):
            return False
        if not (self.guard is None and self.uni.control_uniform(s)) and not (
                self.uni.convergent(s) and self._group_computable(s)):
            return False
        for n in walk(s):
            if isinstance(n, ir.Call) and (n.builtin is None or n.name.startswith(("atom", "printf"))):
                return False
        uni = self.uni
        shapes = [uni.expr(n.index) if isinstance(n, ir.Index) else uni.expr(n.operand)
                  for n in walk(s.body) if isinstance(n, ir.Index)
                  or (isinstance(n, ir.Unary) and n.op == "*")]
        if any(shape.consecutive_in(0) for shape in shapes):
            return True
        # Per-work-item arithmetic on data every work-item reads alike (all-pairs n-body):
        # every access is a broadcast along local id 0, and some private value varies.
        if any(shape.kind is Kind.VARYING or shape.strides[0] != 0 for shape in shapes):
            return False
        if any(isinstance(n, ir.Index) and isinstance(n.base.type, ArrayType)
               for n in walk(s.body)):
            return False  # a private array would become a context array strided by its length
        return any(not uni.var(name).is_uniform for name in written_vars(s.body))

    def _group_computable(self, s: ir.For | ir.While | ir.DoWhile) -> bool:
        assert self.uni is not None
        control: list[Node] = [s.cond] if s.cond is not None else []
        own: set[str] = set()
        if isinstance(s, ir.For):
            control += [n for n in (s.init, s.step) if n is not None]
            if isinstance(s.init, ir.DeclStmt):
                own = {d.name for d in s.init.decls}
        for part in control:
            for n in walk(part):
                if isinstance(n, ir.VarRef):
                    if n.name not in own and self.uni.declared_level(n.name) > 0:
                        return False
                elif isinstance(n, ir.Index | ir.Member) or (
                        isinstance(n, ir.Unary) and n.op in ("*", "&")):
                    return False
                elif isinstance(n, ir.Call) and n.name not in ID_QUERIES:
                    return False
        return True

    def block(self, stmts: tuple[ir.Stmt, ...] | list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        run: list[ir.Stmt] = []
        for s in stmts:
            if not self._structural(s):
                run.append(s)
                continue
            if run:
                out.append(self.region(run))
                run = []
            out.extend(self.stmt(s))
            self._after_return_at_top()
        if run:
            out.append(self.region(run))
        return out

    def _after_return_at_top(self) -> None:
        if self.lowered_return and self.lockstep_depth == 0 and self.guard is None:
            self.guard = self.fn_mask

    def region(self, stmts: list[ir.Stmt]) -> wg.WorkItemLoop:
        body = ir.Block(tuple(self._lower_exits(s, False, False) for s in stmts),
                        loc=stmts[0].loc)
        loop = wg.WorkItemLoop(body, mask=self.guard, loc=stmts[0].loc)
        self._after_return_at_top()
        return loop

    def _clear(self, upto_kind: str | None, loc: Loc) -> ir.Stmt:
        """Clear the masks from the innermost up to the nearest of kind ``upto_kind``
        (None: every mask), then leave the region."""
        cleared: list[ir.Stmt] = []
        for kind, name in reversed(self.masks):
            cleared.append(wg.MaskSet(name, 0, loc=loc))
            if kind == upto_kind:
                break
        return ir.Block((*cleared, wg.WorkItemExit(loc=loc)), loc=loc)

    def _lower_exits(self, s: ir.Stmt, in_loop: bool, in_switch: bool) -> ir.Stmt:
        if isinstance(s, ir.Return):
            if self.lockstep_depth > 0 and self.guard is None:
                raise _NeedMasked
            self.lowered_return = True
            return self._clear(None, s.loc) if self.fn_mask else wg.WorkItemExit(loc=s.loc)
        if isinstance(s, ir.Break | ir.Continue):
            leaves = not in_loop and (isinstance(s, ir.Continue) or not in_switch)
            if not leaves:
                return s
            if not self.loops or self.loops[-1] != "masked":
                raise _NeedMasked
            return self._clear("loop" if isinstance(s, ir.Break) else "body", s.loc)
        if not escapes(s):
            return s
        inner_loop = in_loop or isinstance(s, _LOOPS)
        inner_switch = in_switch or isinstance(s, ir.Switch)
        changes: dict[str, object] = {}
        for f in dataclasses.fields(s):
            value = getattr(s, f.name)
            if isinstance(value, ir.Stmt):
                changes[f.name] = self._lower_exits(value, inner_loop, inner_switch)
            elif isinstance(value, tuple) and value and isinstance(value[0], ir.Stmt):
                changes[f.name] = tuple(self._lower_exits(v, inner_loop, inner_switch)
                                        for v in value)
        return dataclasses.replace(s, **changes)  # type: ignore[arg-type]

    # ------------------------------------------------------------ structural statements

    def stmt(self, s: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(s, ir.Block):
            return self.block(s.stmts)
        if isinstance(s, ir.ExprStmt):
            return self._expr_stmt(s)
        if isinstance(s, ir.DeclStmt):
            return self._decl_stmt(s)
        if isinstance(s, ir.Break | ir.Continue | ir.Return):
            return [s]
        if isinstance(s, ir.Switch):
            raise _error(s.loc, "barrier inside a switch statement is not supported")
        if isinstance(s, ir.If | ir.For | ir.While | ir.DoWhile):
            if self._uniform(s):
                saved = self._save()
                try:
                    return self._lockstep(s)
                except _NeedMasked:
                    self._restore(saved)
            if self.guard is None and self.lockstep_depth > 0 and not has_barrier(s):
                # an exit that must reach a group-level loop: only the enclosing one can help
                raise _NeedMasked
            return self._masked(s)
        raise _error(s.loc, f"unsupported statement around a barrier: {type(s).__name__}")

    def _save(self) -> tuple[object, ...]:
        return (list(self.masks), self.guard, list(self.loops), self.lockstep_depth,
                self.lowered_return)

    def _restore(self, saved: tuple[object, ...]) -> None:
        masks, guard, loops, depth, lowered = saved
        self.masks = list(masks)  # type: ignore[call-overload]
        self.guard = guard  # type: ignore[assignment]
        self.loops = list(loops)  # type: ignore[call-overload]
        self.lockstep_depth = depth  # type: ignore[assignment]
        self.lowered_return = lowered  # type: ignore[assignment]

    def _expr_stmt(self, s: ir.ExprStmt) -> list[ir.Stmt]:
        e = s.expr
        if _is_builtin_call(e, ("barrier", "work_group_barrier")):
            return []
        if self.guard is None and isinstance(e, ir.Call) and _is_builtin_call(e, ASYNC_COPIES):
            return [wg.GroupCall(e, None, loc=s.loc)]
        if (self.guard is None and isinstance(e, ir.Assign) and e.op == "="
                and isinstance(e.value, ir.Call) and _is_builtin_call(e.value, ASYNC_COPIES)):
            return [wg.GroupCall(e.value, e.target, loc=s.loc)]
        if has_barrier(e):
            raise _error(s.loc, "barrier must be called as a statement of its own")
        return [self.region([s])]

    def _decl_stmt(self, s: ir.DeclStmt) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for d in s.decls:
            init = d.init
            if self.guard is None and isinstance(init, ir.Call) and _is_builtin_call(init, ASYNC_COPIES):
                out.append(ir.DeclStmt((dataclasses.replace(d, init=None),), loc=s.loc))
                out.append(wg.GroupCall(init, ir.VarRef(d.type, d.name, loc=s.loc), loc=s.loc))
            else:
                out.append(self.region([ir.DeclStmt((d,), loc=s.loc)]))
        return out

    def _lockstep(self, s: ir.If | ir.For | ir.While | ir.DoWhile) -> list[ir.Stmt]:
        if isinstance(s, _LOOPS) and not has_barrier(s) and not _has_async(s):
            self.interchanged += 1
            if self.guard is not None and not self.in_masked_copy:
                return [self._interchange_under_mask(s, self.guard)]
        return self._lockstep_formed(s)

    def _interchange_under_mask(self, s: ir.For | ir.While | ir.DoWhile, guard: str) -> ir.Stmt:
        """An interchanged loop under a mask, formed twice: the mask cannot change inside it
        (it has no exits), so when every work-item is active, as in all groups away from the
        edges of the range, its work-item loops run without testing the mask and vectorize."""
        self.guard = None
        try:
            full = self._lockstep_formed(s)
        finally:
            self.guard = guard
        self.in_masked_copy = True  # nested loops are formed once, masked, to keep the two
        try:                        # copies region for region alike (see liveness)
            partial = self._lockstep_formed(s)
        finally:
            self.in_masked_copy = False
        return ir.If(wg.MaskAll(INT, guard, loc=s.loc), ir.Block(tuple(full), loc=s.loc),
                     ir.Block(tuple(partial), loc=s.loc), loc=s.loc)

    def _lockstep_formed(self, s: ir.If | ir.For | ir.While | ir.DoWhile) -> list[ir.Stmt]:
        self.lockstep_depth += 1
        try:
            if isinstance(s, ir.If):
                then = ir.Block(tuple(self.stmt_as_block(s.then)), loc=s.then.loc)
                other = None
                if s.otherwise is not None:
                    other = ir.Block(tuple(self.stmt_as_block(s.otherwise)), loc=s.otherwise.loc)
                return [ir.If(s.cond, then, other, loc=s.loc)]
            self.loops.append("lockstep")
            body = ir.Block(tuple(self.stmt_as_block(s.body)), loc=s.body.loc)
            self.loops.pop()
            if isinstance(s, ir.While):
                return [ir.While(s.cond, body, loc=s.loc)]
            if isinstance(s, ir.DoWhile):
                return [ir.DoWhile(body, s.cond, loc=s.loc)]
            out: list[ir.Stmt] = []
            if s.init is not None:
                out.append(s.init)  # group level; phase 2 decides scalar or per work-item
            out.append(ir.For(None, s.cond, s.step, body, loc=s.loc))
            return [ir.Block(tuple(out), loc=s.loc)] if len(out) > 1 else out
        finally:
            self.lockstep_depth -= 1

    def stmt_as_block(self, s: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(s, ir.Block):
            return self.block(s.stmts)
        return self.block((s,))

    # ------------------------------------------------------------ masked lock step

    def _mask_split(self, cond: ir.Expr, then_mask: str, else_mask: str, loc: Loc) -> ir.Stmt:
        choose = ir.If(cond, ir.Block((wg.MaskSet(then_mask, 1, loc=loc),), loc=loc),
                       ir.Block((wg.MaskSet(else_mask, 1, loc=loc),), loc=loc), loc=loc)
        body: list[ir.Stmt] = [wg.MaskSet(then_mask, 0, loc=loc), wg.MaskSet(else_mask, 0, loc=loc)]
        if self.guard is None:
            body.append(choose)
        else:
            body.append(ir.If(wg.MaskRef(CHAR, self.guard, loc=loc), choose, loc=loc))
        return wg.WorkItemLoop(ir.Block(tuple(body), loc=loc), loc=loc)

    def _masked(self, s: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(s, ir.If):
            return self._masked_if(s)
        assert isinstance(s, ir.For | ir.While | ir.DoWhile)
        return self._masked_loop(s)

    def _masked_if(self, s: ir.If) -> list[ir.Stmt]:
        loc = s.loc
        then_mask, else_mask = self._new_mask("m_then"), self._new_mask("m_else")
        out: list[ir.Stmt] = [self._mask_split(s.cond, then_mask, else_mask, loc)]
        saved_guard = self.guard
        for mask, branch in ((then_mask, s.then), (else_mask, s.otherwise)):
            if branch is None:
                continue
            self.masks.append(("if", mask))
            self.guard = mask
            body = self.stmt_as_block(branch)
            self.masks.pop()
            self.guard = saved_guard
            out.append(ir.If(wg.MaskAny(INT, mask, loc=loc), ir.Block(tuple(body), loc=loc),
                             loc=loc))
        return out

    def _masked_loop(self, s: ir.For | ir.While | ir.DoWhile) -> list[ir.Stmt]:
        loc = s.loc
        out: list[ir.Stmt] = []
        if isinstance(s, ir.For) and s.init is not None:
            out.append(self.region([s.init]))
        loop_mask, body_mask = self._new_mask("m_loop"), self._new_mask("m_body")
        if self.guard is None:
            out.append(wg.MaskFill(loop_mask, 1, loc=loc))
        else:
            out.append(wg.MaskCopy(loop_mask, self.guard, loc=loc))

        def test(cond: ir.Expr) -> list[ir.Stmt]:
            not_cond = ir.Unary(INT, "!", cond, loc=cond.loc)
            clear = ir.If(not_cond, ir.Block((wg.MaskSet(loop_mask, 0, loc=loc),), loc=loc),
                          loc=loc)
            stop = ir.If(ir.Unary(INT, "!", wg.MaskAny(INT, loop_mask, loc=loc), loc=loc),
                         ir.Block((ir.Break(loc=loc),), loc=loc), loc=loc)
            return [wg.WorkItemLoop(ir.Block((clear,), loc=loc), mask=loop_mask, loc=loc), stop]

        iteration: list[ir.Stmt] = []
        if isinstance(s, ir.While):
            iteration += test(s.cond)
        elif isinstance(s, ir.For):
            if s.cond is not None:
                iteration += test(s.cond)
            else:
                iteration += test(ir.IntLit(INT, 1, loc=loc))
        iteration.append(wg.MaskCopy(body_mask, loop_mask, loc=loc))
        saved_guard = self.guard
        self.masks += [("loop", loop_mask), ("body", body_mask)]
        self.loops.append("masked")
        self.guard = body_mask
        iteration += self.stmt_as_block(s.body)
        self.guard = saved_guard
        self.loops.pop()
        del self.masks[-2:]
        if isinstance(s, ir.For) and s.step is not None:
            step = ir.ExprStmt(s.step, loc=s.step.loc)
            iteration.append(wg.WorkItemLoop(ir.Block((step,), loc=loc), mask=loop_mask, loc=loc))
        if isinstance(s, ir.DoWhile):
            iteration += test(s.cond)
        out.append(ir.For(None, None, None, ir.Block(tuple(iteration), loc=loc), loc=loc))
        return out

    def function_body(self, body: ir.Block) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        if self.fn_mask is not None:
            out.append(wg.MaskFill(self.fn_mask, 1, loc=body.loc))
        return out + self.block(body.stmts)


# ---------------------------------------------------------------- phase 2: variables


def _pure_of(e: ir.Expr, names: set[str]) -> bool:
    """True when ``e`` only combines literals, the variables ``names`` and work-item id queries
    with operators: evaluating it again anywhere gives the same value and has no effect."""
    for n in walk(e):
        if isinstance(n, ir.Unary):
            if n.op not in ("-", "+", "!", "~"):
                return False
        elif isinstance(n, ir.VarRef):
            if n.name not in names:
                return False
        elif isinstance(n, ir.Call):
            if n.builtin is None or n.name not in ID_QUERIES:
                return False
        elif not isinstance(n, ir.IntLit | ir.FloatLit | ir.Binary | ir.Conditional | ir.Cast):
            return False
    return True


def _scalar_like(t: Type) -> bool:
    return isinstance(t, ScalarType | VectorType | PointerType | EnumType)


class _Variables:
    """Decides where each private variable lives and rewrites the formed body accordingly."""

    def __init__(self, body: ir.Block, decls: dict[str, ir.VarDecl], params: dict[str, ir.Param],
                 uniformity: Uniformity | None):
        self.decls = decls
        self.params = params
        self.uni = uniformity
        self.temps: dict[str, Type] = {}
        whole = effects(body, Effects())
        written_params = {n for n in whole.writes | whole.address_taken if n in params}
        candidates = set(decls) | written_params
        live = liveness.live_across_regions(body, candidates)
        self.written_params = sorted(written_params)
        self.group_scalars = self._group_scalars(body, live - written_params, whole)
        self.recomputed = self._recomputable(body, params, whole)
        self.context = {n for n in live | written_params
                        if n not in self.group_scalars and n not in self.recomputed}

    def var_type(self, name: str) -> Type:
        if name in self.decls:
            return self.decls[name].type
        return self.params[name].type

    # ------------------------------------------------------------ recomputed variables

    def _recomputable(self, body: ir.Block, params: dict[str, ir.Param],
                      whole: Effects) -> dict[str, ir.VarDecl]:
        """Variables declared once with a pure initializer over ids, unwritten arguments and
        other such variables, never written after, never referenced at group level: each
        region that reads one declares it again (``_redeclare``), in declaration order."""
        forms: dict[str, set[ir.VarDecl]] = {}  # an interchanged loop may be formed twice
        for n in walk(body):
            if isinstance(n, ir.DeclStmt):
                for d in n.decls:
                    forms.setdefault(d.name, set()).add(d)
        at_group = _group_level_refs(body)
        candidates = {name: d for name, d in self.decls.items()
                      if len(forms.get(name, ())) == 1 and d.init is not None
                      and isinstance(d.type, ScalarType) and not d.volatile
                      and name not in whole.writes and name not in whole.address_taken
                      and name not in at_group}
        fixed = {p for p in params if p not in whole.writes and p not in whole.address_taken}
        changed = True
        while changed:
            changed = False
            for name, d in list(candidates.items()):
                assert d.init is not None
                if not _pure_of(d.init, fixed | set(candidates)):
                    del candidates[name]
                    changed = True
        order = {name: i for i, name in enumerate(self.decls)}
        return dict(sorted(candidates.items(), key=lambda item: order[item[0]]))

    def _redeclare(self, body: ir.Stmt) -> ir.Stmt:
        """``body`` of a work-item loop with the recomputed variables it reads but does not
        declare (and those their initializers read) declared first."""
        if not self.recomputed:
            return body
        declared = {d.name for n in walk(body) if isinstance(n, ir.DeclStmt) for d in n.decls}
        needed = {n.name for n in walk(body) if isinstance(n, ir.VarRef)
                  and n.name in self.recomputed and n.name not in declared}
        pending = list(needed)
        while pending:
            decl = self.recomputed[pending.pop()]
            assert decl.init is not None
            for n in walk(decl.init):
                if isinstance(n, ir.VarRef) and n.name in self.recomputed \
                        and n.name not in needed and n.name not in declared:
                    needed.add(n.name)
                    pending.append(n.name)
        if not needed:
            return body
        decls = tuple(ir.DeclStmt((d,), loc=d.loc) for name, d in self.recomputed.items()
                      if name in needed)
        stmts = body.stmts if isinstance(body, ir.Block) else (body,)
        return ir.Block((*decls, *stmts), loc=body.loc)

    # ------------------------------------------------------------ group scalars

    def _group_scalars(self, body: ir.Block, live: set[str], whole: Effects) -> set[str]:
        if self.uni is None:
            return set()
        candidates = {n for n in live
                      if n in self.decls and self.uni.var(n).is_uniform
                      and n not in whole.address_taken and _scalar_like(self.decls[n].type)}
        region_writes: Effects = Effects()
        group_exprs: list[ir.Expr] = []
        self._collect(body, region_writes, group_exprs)
        candidates -= region_writes.writes
        changed = True
        while changed:
            changed = False
            for e in group_exprs:
                eff = effects(e, Effects())
                if eff.writes and (eff.memory or not eff.writes <= candidates):
                    if eff.writes & candidates:
                        candidates -= eff.writes
                        changed = True
        return candidates

    def _collect(self, node: Node, region_writes: Effects, group_exprs: list[ir.Expr]) -> None:
        """Writes inside regions other than pure declaration initializers, and every
        group-level expression."""
        if isinstance(node, wg.WorkItemLoop):
            for n in walk(node.body):
                if isinstance(n, ir.DeclStmt):
                    for d in n.decls:
                        if d.init is not None and not is_effect_free(d.init):
                            region_writes.writes.add(d.name)
                elif isinstance(n, ir.Assign | ir.Unary):
                    effects(n, region_writes)
            return
        if isinstance(node, ir.DeclStmt):
            for d in node.decls:
                if d.init is not None:
                    group_exprs.append(ir.Assign(d.type, "=", ir.VarRef(d.type, d.name), d.init))
            return
        if isinstance(node, wg.GroupCall):
            if node.target is not None:
                group_exprs.append(ir.Assign(node.target.type, "=", node.target,
                                             ir.IntLit(INT, 0)))
            return
        if isinstance(node, ir.Expr):
            group_exprs.append(node)
            return
        for child in children(node):
            self._collect(child, region_writes, group_exprs)

    # ------------------------------------------------------------ rewriting

    def rewrite(self, body: ir.Block) -> ir.Block:
        refs = _RefRewriter(self)
        stmts = list(self._group_stmts(body.stmts, refs))
        if self.written_params:
            inits = tuple(wg.ContextInit(n, ir.VarRef(self.var_type(n), n)) for n in self.written_params)
            stmts.insert(0, wg.WorkItemLoop(ir.Block(inits), simd=False))
        return ir.Block(tuple(stmts), loc=body.loc)

    def _group_stmts(self, stmts: tuple[ir.Stmt, ...], refs: _RefRewriter) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            out.extend(self._group_stmt(s, refs))
        return out

    def _group_block(self, s: ir.Stmt, refs: _RefRewriter) -> ir.Block:
        stmts = s.stmts if isinstance(s, ir.Block) else (s,)
        return ir.Block(tuple(self._group_stmts(stmts, refs)), loc=s.loc)

    def _group_expr(self, e: ir.Expr | None, refs: _RefRewriter, value_used: bool) -> ir.Expr | None:
        if e is None:
            return None
        eff = effects(e, Effects())
        rewritten = refs.rewrite(e)
        if not eff.writes and not eff.memory:
            return rewritten
        if not eff.memory and eff.writes <= self.group_scalars:
            return rewritten
        temp = None
        if value_used:
            temp = f"__ppcl_ge{len(self.temps)}"
            self.temps[temp] = e.type
        return wg.GroupEval(e.type, rewritten, temp, loc=e.loc)

    def _group_stmt(self, s: ir.Stmt, refs: _RefRewriter) -> list[ir.Stmt]:
        if isinstance(s, wg.WorkItemLoop):
            body = self._redeclare(refs.rewrite(s.body))
            return [dataclasses.replace(s, body=body, simd=self._simd_ok(s.body),
                                        serial_reduction=self._serial_reduction(s.body))]
        if isinstance(s, ir.Block):
            return [self._group_block(s, refs)]
        if isinstance(s, ir.If):
            cond = self._group_expr(s.cond, refs, True)
            assert cond is not None
            other = None if s.otherwise is None else self._group_block(s.otherwise, refs)
            return [ir.If(cond, self._group_block(s.then, refs), other, loc=s.loc)]
        if isinstance(s, ir.While):
            cond = self._group_expr(s.cond, refs, True)
            assert cond is not None
            return [ir.While(cond, self._group_block(s.body, refs), loc=s.loc)]
        if isinstance(s, ir.DoWhile):
            cond = self._group_expr(s.cond, refs, True)
            assert cond is not None
            return [ir.DoWhile(self._group_block(s.body, refs), cond, loc=s.loc)]
        if isinstance(s, ir.For):
            assert s.init is None
            return [ir.For(None, self._group_expr(s.cond, refs, True),
                           self._group_expr(s.step, refs, False),
                           self._group_block(s.body, refs), loc=s.loc)]
        if isinstance(s, ir.ExprStmt):
            e = self._group_expr(s.expr, refs, False)
            assert e is not None
            if isinstance(e, wg.GroupEval):
                return [wg.WorkItemLoop(ir.Block((ir.ExprStmt(e.expr, loc=s.loc),)), loc=s.loc)]
            return [ir.ExprStmt(e, loc=s.loc)]
        if isinstance(s, ir.DeclStmt):
            out: list[ir.Stmt] = []
            for d in s.decls:
                if d.space is AddressSpace.LOCAL or d.name in self.recomputed:
                    continue
                if d.name in self.group_scalars:
                    if d.init is not None:
                        target = ir.VarRef(d.type, d.name, loc=s.loc)
                        out.append(ir.ExprStmt(ir.Assign(d.type, "=", target, refs.rewrite(d.init)),
                                               loc=s.loc))
                    continue
                # a context variable declared at group level: every work-item initializes it
                decl = refs.rewrite(ir.DeclStmt((d,), loc=s.loc))
                out.append(wg.WorkItemLoop(ir.Block((decl,) if not isinstance(decl, tuple)
                                                    else decl), loc=s.loc))
            return out
        if isinstance(s, wg.GroupCall):
            call = refs.rewrite(s.call)
            call_target = None if s.target is None else refs.rewrite(s.target)
            return [wg.GroupCall(call, call_target, loc=s.loc)]
        return [s]

    def _serial_reduction(self, body: ir.Stmt) -> bool:
        if self.uni is None:
            return False
        for loop in walk(body):
            if isinstance(loop, _LOOPS) and not self.uni.convergent(loop) and any(
                    isinstance(n, ir.Assign) and n.op in ("+=", "-=", "*=")
                    and isinstance(n.target, ir.VarRef) and isinstance(n.target.type, ScalarType)
                    and n.target.type.is_float for n in walk(loop.body)):
                return True
        return False

    def _simd_ok(self, body: ir.Stmt) -> bool:
        for n in walk(body):
            if isinstance(n, ir.Call):
                if n.builtin is None:
                    return False
                if any(n.name.startswith(p) for p in ("atom", "printf", "async", "barrier")):
                    return False
            if isinstance(n, ir.DeclStmt) and any(d.name in self.group_scalars for d in n.decls):
                return False
            if isinstance(n, (*_LOOPS, ir.Switch)) and any(
                    isinstance(x, wg.WorkItemExit) for x in walk(n)):
                return False  # the exit is a goto out of a nested loop
        return True


def _group_level_refs(node: Node) -> set[str]:
    """Variables referenced outside every work-item loop."""
    if isinstance(node, wg.WorkItemLoop):
        return set()
    if isinstance(node, ir.VarRef):
        return {node.name}
    found: set[str] = set()
    for child in children(node):
        found |= _group_level_refs(child)
    return found


class _RefRewriter(Rewriter):
    def __init__(self, variables: _Variables):
        self.vars = variables

    def rewrite_VarRef(self, e: ir.VarRef) -> ir.Expr:
        if e.name in self.vars.context:
            return wg.ContextRef(e.type, e.name, loc=e.loc)
        return e

    def rewrite_DeclStmt(self, s: ir.DeclStmt) -> ir.Stmt | tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        keep: list[ir.VarDecl] = []
        for d in s.decls:
            if d.space is AddressSpace.LOCAL:
                continue
            if d.name in self.vars.context:
                if keep:
                    out.append(ir.DeclStmt(tuple(keep), loc=s.loc))
                    keep = []
                if d.init is not None:
                    out.append(wg.ContextInit(d.name, d.init, loc=s.loc))
            elif d.name in self.vars.group_scalars:
                if keep:
                    out.append(ir.DeclStmt(tuple(keep), loc=s.loc))
                    keep = []
                if d.init is not None:
                    target = ir.VarRef(d.type, d.name, loc=s.loc)
                    out.append(ir.ExprStmt(ir.Assign(d.type, "=", target, d.init), loc=s.loc))
            else:
                keep.append(d)
        if keep:
            out.append(ir.DeclStmt(tuple(keep), loc=s.loc))
        if len(out) == 1:
            return out[0]
        if not out:
            return ir.Empty(loc=s.loc)
        return tuple(out)


# ---------------------------------------------------------------- the pass


def _local_vars(body: ir.Block) -> tuple[tuple[LocalVar, ...], int]:
    placed: list[LocalVar] = []
    offset = 0
    for n in walk(body):
        if isinstance(n, ir.DeclStmt):
            for d in n.decls:
                if d.space is AddressSpace.LOCAL:
                    offset = (offset + LOCAL_ALIGN - 1) // LOCAL_ALIGN * LOCAL_ALIGN
                    placed.append(LocalVar(d.name, d.type, offset))
                    offset += d.type.size
    return tuple(placed), offset


def form_workgroup(module: ir.Module, kernel: ir.Function, local_size: tuple[int, int, int],
                   uniformity: Uniformity | None = None) -> FormedKernel:
    """Work-group formation of ``kernel`` for a fixed local size. Helpers that reach a barrier
    are inlined before (``transforms/inline.py``), vector temporaries scalarized after
    (``transforms/scalarize.py``): see the ``inline`` and ``scalarize`` passes."""
    assert not calls_barrier_functions(module, kernel), "inline barrier helpers first"
    assert kernel.body is not None
    body = kernel.body
    has_return = any(isinstance(n, ir.Return) for n in walk(body))
    probe = _Former(uniformity, False, local_size)
    structured = has_barrier(body) or _has_async(body) or any(
        probe._interchangeable(n) for n in walk(body) if isinstance(n, ir.Stmt))
    former = _Former(uniformity, has_return and structured, local_size)
    if structured:
        group = ir.Block(tuple(former.function_body(body)), loc=body.loc)
    else:
        group = ir.Block((former.region(list(body.stmts)),), loc=body.loc) if body.stmts else body
    decls = {d.name: d for n in walk(body) if isinstance(n, ir.DeclStmt) for d in n.decls
             if d.space is not AddressSpace.LOCAL}
    params = {p.name: p for p in kernel.params}
    variables = _Variables(group, decls, params, uniformity)
    rewritten = variables.rewrite(group)
    context = {n: variables.var_type(n) for n in sorted(variables.context)}
    context.update(variables.temps)
    scalars = {n: variables.var_type(n) for n in sorted(variables.group_scalars)}
    local_vars, local_bytes = _local_vars(body)
    return FormedKernel(
        function=kernel,
        body=rewritten,
        local_size=local_size,
        context_vars=context,
        group_scalars=scalars,
        masks=tuple(former.mask_names),
        local_vars=local_vars,
        local_static_bytes=local_bytes,
        interchanged=former.interchanged,
        recomputed=tuple(variables.recomputed),
        uniform_vars=frozenset(n for n in decls if uniformity is not None
                               and uniformity.var(n).is_uniform),
    )
