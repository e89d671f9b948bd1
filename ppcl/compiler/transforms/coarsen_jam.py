"""Coarsening with jam: the original work-items of a coarsened work-item share one loop
(unroll-and-jam across the coarsened dimension; ``jam.py`` is the CPU device's jam of the
work-item loop along ``x``, decided at work-group formation).

Coarsening (``coarsen.py``) runs the statements that stay per work-item once for each of the
``f`` original work-items of a merged one, one after another:

    for (k = 0; k < n; k++) { prefix; loop; suffix }

When those statements are a prefix that stores nothing, one loop whose control is the same for
the ``f`` work-items, and a suffix, a full merged work-item (``n == f``, and each original
work-item gets past the prefix's exits) runs instead

    prefix_0 ... prefix_{f-1}
    for (control) { const T __ppcl_u0 = <shared load>; ...; body_0 ... body_{f-1} }
    suffix_0 ... suffix_{f-1}

where ``_j`` is the statements with the variables they declare renamed for copy ``j``. Loads in
the loop body that read no per-work-item variable are loaded once per iteration for all copies
(``B[k * n + col]`` of a naive matrix product coarsened along ``y``: the merged work-item reads
a row of ``B`` once for ``f`` rows of ``C``). A loop body that loads them anyway (each copy would
load the same element) leaves the C compiler, and NVRTC, free to do the rest. The other merged
work-items (the end of the range, an original work-item leaving in the prefix) run the
sequential loop.

Each original work-item runs its own statements in their order; what changes is the order
between the ``f`` work-items, which OpenCL leaves free (a work-item reading what another one of
the same launch stores without a barrier is a race already).

Preconditions (``JamPlan`` or the reason it is refused):

* the per-work-item statements hold one top-level ``for`` or ``while`` loop (the first one is
  taken) and no statement before it stores to memory;
* the loop's control (``for`` initializer, condition, step) reads no variable of the work-item
  (the loop's own variables aside), and its body writes none of the variables the control reads
  nor any variable the ``for`` initializer declares (the jammed loop has one of each for all
  copies) and has no ``break`` or ``continue`` of the loop;
* the loop does not both store to memory and load memory that is not ``__constant`` (a pointer
  it stores through may alias one it loads through: a shared load could miss a copy's store).

The prefix's exits (``continue`` of the work-item loop: the kernel's ``return``) are counted
before the jammed form: the prefix up to its last exit runs again for each original work-item
with its variables renamed (it stores nothing, so this is invisible), and counts those that get
past it. The suffix keeps its exits: a top-level guard becomes an ``if`` around the rest, any
other exit leaves a one-trip loop around the copy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ppcl.compiler.analysis.cost import expr_cost, is_pointer_access, loop_trips
from ppcl.compiler.analysis.effects import is_effect_free, written_vars
from ppcl.compiler.analysis.uniformity import ID_QUERIES
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import INT, ULONG, AddressSpace, PointerType, ScalarType, VectorType
from ppcl.compiler.ir.visit import Renamer, Rewriter, child_stmts, walk

_COPY = "__ppcl_j"  # suffix of copy j's variables
_COUNT = "__ppcl_q"  # suffix of the variables of the loop counting who passes the prefix
_PASS = "__ppcl_pass"  # how many original work-items get past the prefix's exits
_SHARED = "__ppcl_u"  # a load shared by the copies
_ONE = "__ppcl_one"  # the counter of a one-trip loop around a suffix copy that exits

_LOOPS = (ir.For, ir.While, ir.DoWhile)


class StmtEffects(Protocol):
    """What jam asks of a per-work-item statement (``coarsen._Stmt`` gives it)."""

    @property
    def stores(self) -> bool: ...  # stores to memory, or effects that cannot be seen

    @property
    def loads(self) -> bool: ...  # loads memory that is not __constant


@dataclass(frozen=True)
class JamPlan:
    """How the per-work-item statements are jammed."""

    loop: int  # the index of the loop among the statements
    exits_until: int  # the statements before this index hold the prefix's exits (0: none)
    shared: tuple[ir.Expr, ...]  # loads read once per iteration for all copies
    shared_cost: int  # cost of the shared loads per work-item (per iteration times trips)
    loc: ir.Loc

    def describe(self) -> str:
        loads = len(self.shared)
        return (f"jam: the loop at {self.loc} runs once for the merged work-items, "
                f"{loads} load{'s' if loads != 1 else ''} uniform along the dimension in it "
                f"shared (cost {self.shared_cost})")


# ---------------------------------------------------------------- exits


def exits(s: ir.Stmt) -> bool:
    """Whether ``s`` leaves the work-item: a ``continue`` outside any loop of its own."""
    if isinstance(s, ir.Continue):
        return True
    if isinstance(s, _LOOPS):
        return False
    return any(exits(c) for c in child_stmts(s))


def _drop_exits(s: ir.Stmt) -> ir.Stmt | None:
    """``s`` with its exits (never taken where it runs) left out, None when nothing is left
    of it (an ``if`` of an effect-free condition whose branches only exited)."""
    if isinstance(s, ir.Continue):
        return None
    if isinstance(s, ir.Block):
        kept = tuple(k for k in (_drop_exits(c) for c in s.stmts) if k is not None)
        return dataclasses.replace(s, stmts=kept) if kept or not s.stmts else None
    if isinstance(s, ir.If):
        then = _drop_exits(s.then)
        otherwise = _drop_exits(s.otherwise) if s.otherwise is not None else None
        if then is None and otherwise is None and is_effect_free(s.cond):
            return None
        return dataclasses.replace(s, then=then if then is not None else ir.Block(()),
                                   otherwise=otherwise)
    if isinstance(s, ir.Switch):
        body = _drop_exits(s.body)
        return dataclasses.replace(s, body=body if isinstance(body, ir.Block) else ir.Block(()))
    return s


def nest_continues(stmts: Sequence[ir.Stmt]) -> tuple[ir.Stmt, ...]:
    """``if (c) continue; rest`` as ``if (!c) { rest }``: an exit of the loop body would make
    work-group formation keep the loop inside each work-item (its uniformity analysis counts
    any exit after a varying return as divergent)."""
    for i, s in enumerate(stmts):
        if isinstance(s, ir.If) and s.otherwise is None and _bare_continue(s.then):
            rest = nest_continues(stmts[i + 1:])
            if not rest:
                return tuple(stmts[:i])
            negated = ir.Unary(INT, "!", s.cond)
            return tuple(stmts[:i]) + (ir.If(negated, ir.Block(rest), loc=s.loc),)
    return tuple(stmts)


def _bare_continue(s: ir.Stmt) -> bool:
    if isinstance(s, ir.Block):
        return len(s.stmts) == 1 and _bare_continue(s.stmts[0])
    return isinstance(s, ir.Continue)


def _leaves_loop(s: ir.Stmt, in_switch: bool = False) -> bool:
    """Whether ``s`` (in the body of a loop) has a ``break`` or ``continue`` of that loop."""
    if isinstance(s, ir.Continue):
        return True
    if isinstance(s, ir.Break):
        return not in_switch
    if isinstance(s, _LOOPS):
        return False
    inner = in_switch or isinstance(s, ir.Switch)
    return any(_leaves_loop(c, inner) for c in child_stmts(s))


# ---------------------------------------------------------------- the plan


def _declared(stmts: Sequence[ir.Stmt]) -> set[str]:
    return {n.name for s in stmts for n in walk(s) if isinstance(n, ir.VarDecl)}


def _refs(node: ir.Expr | ir.Stmt | None) -> set[str]:
    if node is None:
        return set()
    return {n.name for n in walk(node) if isinstance(n, ir.VarRef)}


def _control(loop: ir.For | ir.While) -> list[ir.Expr | ir.Stmt | None]:
    if isinstance(loop, ir.For):
        return [loop.init, loop.cond, loop.step]
    return [loop.cond]


def jam_plan(stmts: Sequence[ir.Stmt], effects: Sequence[StmtEffects]) -> JamPlan | str:
    """How to jam the per-work-item statements ``stmts`` (their exits are ``continue``), or
    why they cannot be."""
    loop_at = next((i for i, s in enumerate(stmts) if isinstance(s, _LOOPS)), None)
    if loop_at is None:
        return "no loop among the statements run per work-item"
    loop = stmts[loop_at]
    if not isinstance(loop, ir.For | ir.While):
        return f"the loop at {loop.loc} is a do-while"
    storing = next((s for s, e in zip(stmts[:loop_at], effects) if e.stores), None)
    if storing is not None:
        return f"the statement at {storing.loc} before the loop stores to memory"
    own = _declared([loop.init]) if isinstance(loop, ir.For) and loop.init is not None \
        else set()
    per_item = _declared(stmts) - own
    control = set().union(*(_refs(c) for c in _control(loop)))
    varying = sorted(control & per_item)
    if varying:
        return (f"the control of the loop at {loop.loc} reads {', '.join(varying)}, which "
                "differs between the work-items")
    if isinstance(loop, ir.For) and loop.init is not None and not isinstance(loop.init,
                                                                          ir.DeclStmt):
        return f"the loop at {loop.loc} starts with an assignment"
    overwritten = sorted(written_vars(loop.body) & control)
    if overwritten:
        return f"the body of the loop at {loop.loc} writes {', '.join(overwritten)}, which " \
               "its control reads"
    # the jammed loop declares them once for the f copies, whose bodies would each update them
    advanced = sorted(written_vars(loop.body) & own)
    if advanced:
        return f"the body of the loop at {loop.loc} writes {', '.join(advanced)}, declared by " \
               "the loop (one variable for all the work-items)"
    if _leaves_loop(loop.body):
        return f"the loop at {loop.loc} has a break or continue"
    if effects[loop_at].stores and effects[loop_at].loads:
        return (f"the loop at {loop.loc} stores to memory and loads memory the store may "
                "reach")
    exiting = [i for i, s in enumerate(stmts[:loop_at]) if exits(s)]
    shared = _shared_loads(loop.body, per_item)
    cost = sum(expr_cost(e) for e in shared) * loop_trips(loop)
    return JamPlan(loop_at, exiting[-1] + 1 if exiting else 0, tuple(shared), cost, loop.loc)


# ---------------------------------------------------------------- shared loads


def _shared_loads(body: ir.Stmt, per_item: set[str]) -> list[ir.Expr]:
    """Loads reading no per-work-item variable that every iteration runs (in a top-level
    statement of the body, outside the branches of ``&&``, ``||`` and ``?:``), first seen
    first, each once."""
    found: list[ir.Expr] = []
    top = body.stmts if isinstance(body, ir.Block) else (body,)
    for s in top:
        if isinstance(s, ir.ExprStmt):
            _unconditional_loads(s.expr, per_item, found)
        elif isinstance(s, ir.DeclStmt):
            for d in s.decls:
                if d.init is not None:
                    _unconditional_loads(d.init, per_item, found)
    return found


def _unconditional_loads(e: ir.Expr, per_item: set[str], found: list[ir.Expr]) -> None:
    if is_pointer_access(e) and _loadable(e, per_item):
        if e not in found:
            found.append(e)
        return
    if isinstance(e, ir.Assign):
        _unconditional_loads(e.value, per_item, found)
        return
    if isinstance(e, ir.Unary) and e.op in ("&", "++", "--", "p++", "p--"):
        return
    if isinstance(e, ir.Binary) and e.op in ("&&", "||"):
        _unconditional_loads(e.lhs, per_item, found)
        return
    if isinstance(e, ir.Conditional):
        _unconditional_loads(e.cond, per_item, found)
        return
    for n in _expr_children(e):
        _unconditional_loads(n, per_item, found)


def _expr_children(e: ir.Expr) -> list[ir.Expr]:
    out: list[ir.Expr] = []
    for f in dataclasses.fields(e):
        if f.name in ("type", "loc"):
            continue
        value = getattr(e, f.name)
        if isinstance(value, ir.Expr):
            out.append(value)
        elif isinstance(value, tuple):
            out.extend(v for v in value if isinstance(v, ir.Expr))
    return out


def _loadable(e: ir.Expr, per_item: set[str]) -> bool:
    """A load of a scalar or vector whose address reads no per-work-item variable and has no
    effect of its own."""
    if not isinstance(e.type, ScalarType | VectorType):
        return False
    base = e.base if isinstance(e, ir.Index | ir.Member) else e.operand  # type: ignore[attr-defined]
    if isinstance(base.type, PointerType) and base.type.space is AddressSpace.LOCAL:
        return False
    for n in walk(e):
        if isinstance(n, ir.VarRef) and n.name in per_item:
            return False
        if isinstance(n, ir.Assign) or isinstance(n, ir.Unary) and n.op in (
                "++", "--", "p++", "p--"):
            return False
        if isinstance(n, ir.Call) and n.name not in ID_QUERIES:
            return False
    return True


class _Shared(Rewriter):
    """Each shared load replaced by its temporary."""

    def __init__(self, names: dict[ir.Expr, str]):
        self.names = names

    def rewrite(self, node: ir.Expr | ir.Stmt) -> ir.Expr | ir.Stmt:
        if isinstance(node, ir.Expr):
            name = self.names.get(node)
            if name is not None:
                return ir.VarRef(node.type, name)
        return super().rewrite(node)  # type: ignore[no-any-return]

    def rewrite_Assign(self, e: ir.Assign) -> ir.Expr:
        return e  # targets were rewritten only where a load equals them: none (checked)


# ---------------------------------------------------------------- the jammed form


def jammed(stmts: Sequence[ir.Stmt], plan: JamPlan, factor: int, counter: str,
           count: str) -> tuple[list[ir.Stmt], ir.Expr, ir.Block]:
    """The jammed form of the per-work-item statements ``stmts`` for ``factor`` copies:
    statements to run first (counting who passes the prefix), the condition under which the
    jammed block runs (otherwise the sequential loop does), and the block. ``counter`` is the
    name of the work-item loop's counter (0 .. factor - 1 in the copies), ``count`` the
    variable holding how many original work-items the merged one has."""
    loop = stmts[plan.loop]
    assert isinstance(loop, ir.For | ir.While)
    own = _declared([loop.init]) if isinstance(loop, ir.For) and loop.init is not None \
        else set()
    per_item = (_declared(stmts) - own) | {counter}
    f = ir.IntLit(ULONG, factor)
    before: list[ir.Stmt] = []
    if plan.exits_until:
        before = _pass_count(stmts[:plan.exits_until], per_item, counter, count)
        cond: ir.Expr = ir.Binary(INT, "==", ir.VarRef(ULONG, _PASS), f)
    else:
        cond = ir.Binary(INT, "==", ir.VarRef(ULONG, count), f)

    copies = [Renamer({n: f"{n}{_COPY}{j}" for n in per_item}) for j in range(factor)]
    body: list[ir.Stmt] = []
    for j, rename in enumerate(copies):
        body.append(rename.rewrite(ir.DeclStmt((ir.VarDecl(counter, ULONG,
                                                           init=ir.IntLit(ULONG, j)),))))
        for i, s in enumerate(stmts[:plan.loop]):
            kept = _drop_exits(s) if i < plan.exits_until else s
            if kept is not None:
                body.append(rename.rewrite(kept))

    names = {e: f"{_SHARED}{i}" for i, e in enumerate(plan.shared)}
    loads = tuple(ir.DeclStmt((ir.VarDecl(name, e.type, const=True, init=e),), loc=loop.loc)
                  for e, name in names.items())
    share = _Shared(names)
    per_copy = tuple(rename.rewrite(share.rewrite(loop.body)) for rename in copies)
    body.append(dataclasses.replace(loop, body=ir.Block(loads + per_copy, loc=loop.loc)))

    for rename in copies:
        suffix = nest_continues([rename.rewrite(s) for s in stmts[plan.loop + 1:]])
        body.extend(_one_trip(suffix) if any(exits(s) for s in suffix) else suffix)
    return before, cond, ir.Block(tuple(body), loc=loop.loc)


def _pass_count(prefix: Sequence[ir.Stmt], per_item: set[str], counter: str,
                count: str) -> list[ir.Stmt]:
    """``ulong __ppcl_pass = 0; for (k < n) { prefix; __ppcl_pass++; }`` with the prefix's
    variables renamed (it stores nothing: running it again is invisible)."""
    passed = ir.ExprStmt(ir.Unary(ULONG, "p++", ir.VarRef(ULONG, _PASS)))
    body = nest_continues(list(prefix) + [passed])
    loop = ir.For(ir.DeclStmt((ir.VarDecl(counter, ULONG, init=ir.IntLit(ULONG, 0)),)),
                  ir.Binary(INT, "<", ir.VarRef(ULONG, counter), ir.VarRef(ULONG, count)),
                  ir.Unary(ULONG, "p++", ir.VarRef(ULONG, counter)), ir.Block(body))
    renamed = Renamer({n: n + _COUNT for n in per_item}).rewrite(loop)
    return [ir.DeclStmt((ir.VarDecl(_PASS, ULONG, init=ir.IntLit(ULONG, 0)),)), renamed]


def _one_trip(stmts: Sequence[ir.Stmt]) -> tuple[ir.Stmt, ...]:
    """``for (int once = 0; once < 1; once++) { stmts }``: their exits (``continue``) leave
    the copy and nothing else."""
    one = ir.VarRef(INT, _ONE)
    return (ir.For(ir.DeclStmt((ir.VarDecl(_ONE, INT, init=ir.IntLit(INT, 0)),)),
                   ir.Binary(INT, "<", one, ir.IntLit(INT, 1)), ir.Unary(INT, "p++", one),
                   ir.Block(tuple(stmts))),)
