"""Thread coarsening: one work-item runs ``factor`` consecutive work-items of one dimension.

Work that is uniform along a dimension (its values do not depend on the work-item's position
along it: a row's setup when coarsening along the columns) is repeated by every work-item of
that dimension. After coarsening along ``dim`` by ``f``, a merged work-item does that work once
and then runs the rest of the kernel for its ``f`` original work-items (PPOpenCL's thread
reorganization, section 3.3.1 of the paper):

    ulong __ppcl_n = <how many of its f original work-items lie in the range: 0 .. f>;
    <hoisted statements: uniform along dim, no stores>
    for (ulong __ppcl_k = 0; __ppcl_k < __ppcl_n; __ppcl_k++) {
        ulong __ppcl_id = offset + (get_global_id(dim) - offset) * f + __ppcl_k;
        <the remaining statements, returns turned into continue>
    }

The loop bound is the same for every work-item of a row, and a top-level ``if (c) continue;``
becomes ``if (!c) { the rest }``, so that work-group formation on the CPU device can
interchange the loop with the work-item loop along x (which then vectorizes). A top-level
guard ``if (a || b) return;`` is split into ``if (a) return; if (b) return;`` first (the same
evaluation), so the part uniform along ``dim`` is hoisted on its own.

The coarsened kernel takes one more parameter, ``__ppcl_coarse_size`` (``ulong``): the
original global size along ``dim``. The host launches it with the same offset and
``ceil(G / f)`` work-items along ``dim`` (rounded up to the local size); when the kernel asks
for local ids, group ids, local sizes or group counts along ``dim`` (``needs_divisible``),
``f`` must divide the local size ``L`` and the launch uses ``G / f`` and ``L / f`` exactly.

Which statements are hoisted (``HOIST``). Only top-level statements of the kernel body move, whole, and
keep their order. A statement is hoisted when it

* does not ask for the work-item's id, local id or group id along ``dim``,
* stores nothing to memory (no store through a pointer, atomic, vstore, image write, printf,
  call of a helper function); a variable whose address the kernel takes counts as written by
  every statement that stores through a pointer,
* reads and writes no variable that a statement left in the loop writes (those are per
  work-item: a hoisted declaration of one would be shared by the ``f`` work-items),
* writes no variable that an earlier statement left in the loop reads (it would see the new
  value),
* loads from memory only where no earlier statement left in the loop stores, or from
  ``__constant`` memory (so the load still sees what the work-item would have seen; stores of
  other work-items racing with it are undefined behaviour in the original already),
* runs where the original work-items run it: after an earlier statement that may ``return``
  and stays in the loop, only statements that cannot fault are hoisted (no load, no integer
  division, no loop), and a statement that may itself ``return`` is hoisted only past
  statements that store nothing (what they compute is dead once the work-item returns).

A statement that breaks only the last rule and contains no ``return`` runs once, for the
merged work-item, where the first original work-item would run it (``ONCE``): a column's setup
after the usual ``if (y >= h) return;``, when coarsening along ``y``. Its declarations move
before the loop (initializers become assignments; brace-initialized arrays stay per
work-item). Ordering rules as above, against the statements run per work-item. The first run
of ONCE statements is pre-checked where the per-work-item statements before it store nothing,
cannot fault and write only variables they declare (comparisons of ids, arguments, private
values): a side loop over the ``f`` original work-items runs those statements again and sets
``__ppcl_any`` when one gets past them; the run then sits before the loop under
``if (__ppcl_any)``. Other ONCE statements run in the loop under a flag set by the first
work-item that reaches them.

The placement is the largest fixed point of these rules (start from every statement before
the loop, move violators down, HOIST -> ONCE -> EACH, until none is left). The merged
work-items past the end of the range run the hoisted part too: its values are those of the
first work-item of their row, which exists and ran it (no varying return precedes what may
fault); they never reach a ONCE statement.

Refused (``DimFacts.coarsenable`` False, with the reason): barriers and async copies (the
work-items of a group change), ``__local`` memory, calls of helper functions (the transform sees
the kernel alone; inline them first), work-item queries with a dimension that is not a
constant, and a ``return`` inside a loop of the part that stays per work-item (it cannot become
``continue`` of the work-item loop).

Costs are the estimates of ``analysis/cost.py`` (per work-item, in abstract operations).

Pass name: ``coarsen``.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ppcl.compiler.analysis.callgraph import builtin_family
from ppcl.compiler.analysis.cost import is_pointer_access, stmt_cost
from ppcl.compiler.analysis.effects import root_var
from ppcl.compiler.analysis.order import DATA_PARALLEL, ExecutionOrder
from ppcl.compiler.analysis.uniformity import ID_QUERIES, const_int
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import (
    INT,
    SIZE_T,
    UINT,
    ULONG,
    AddressSpace,
    PointerType,
    ScalarType,
    indexes_in_place,
)
from ppcl.compiler.ir.visit import Renamer, Rewriter, child_stmts, walk
from ppcl.compiler.transforms import coarsen_jam
from ppcl.compiler.transforms.coarsen_jam import JamPlan, nest_continues

PASS_NAME = "coarsen"
SIZE_PARAM = "__ppcl_coarse_size"
_K = "__ppcl_k"
_ID = "__ppcl_id"
_N = "__ppcl_n"  # the original work-items of a merged one
_ANY = "__ppcl_any"  # some original work-item reaches the prechecked statements
_PRE = "__ppcl_p"  # suffix of the pre-check loop's own variables
_ONCE = "__ppcl_once"  # flags of the statements the first work-item runs for all
_COPY = "__ppcl_c"  # suffix of the per-work-item copy of a parameter the loop writes

# queries whose value changes along the dimension asked for
_ALONG = ("get_global_id", "get_local_id", "get_group_id")
# queries that tie the coarsened launch to the local size: the factor must divide it
_DIVISIBLE = ("get_local_id", "get_group_id", "get_local_size", "get_num_groups")

_LOOPS = (ir.For, ir.While, ir.DoWhile)


@dataclass(frozen=True)
class DimFacts:
    dim: int
    coarsenable: bool
    reason: str  # why not; or what coarsening shares
    shared_cost: int  # cost per work-item of the work uniform along dim that coarsening shares
    total_cost: int  # cost per work-item of the whole kernel body
    needs_divisible: bool  # local/group queries along dim: the factor must divide the local size
    jams: bool = False  # full merged work-items run the per-work-item loop once (coarsen_jam.py)
    jam: str = ""  # what jam shares, or why the per-work-item part is not jammed


@dataclass(frozen=True)
class CoarsenFacts:
    kernel: str
    dims: tuple[DimFacts, DimFacts, DimFacts]


# ---------------------------------------------------------------- facts of one statement


@dataclass(frozen=True)
class _Stmt:
    """What the hoisting rules ask of one top-level statement."""

    reads: frozenset[str]  # variables referred to
    writes: frozenset[str]  # variables declared, assigned or whose address is taken
    addressed: frozenset[str]  # variables whose address it takes (``&x``, an array's decay)
    along: frozenset[int]  # dimensions whose id, local id or group id it asks for
    stores: bool  # stores to memory, or effects we cannot see (helper calls)
    loads: bool  # loads from memory that is not __constant
    constant_loads: bool  # loads from __constant memory
    exits: bool  # contains a return
    faults: bool  # may trap when run where the original did not: loads, integer division, loops
    assignable: bool  # its declarations can be split into a declaration and an assignment
    cost: int


def _space_of_access(e: ir.Expr) -> AddressSpace | None:
    base = e.base if isinstance(e, ir.Index | ir.Member) else e.operand  # type: ignore[attr-defined]
    t = base.type
    return t.space if isinstance(t, PointerType) else None


def _stmt_facts(s: ir.Stmt) -> _Stmt:
    reads: set[str] = set()
    writes: set[str] = set()
    addressed: set[str] = set()
    along: set[int] = set()
    stores = loads = constant_loads = exits = faults = False
    # the memory a plain `=` writes is stored, not loaded (`+=`, `++` load it first); counted
    # per node, since a rewritten tree may hold one node object both as a target and a load
    stored_only = Counter(id(n.target) for n in walk(s)
                          if isinstance(n, ir.Assign) and n.op == "=")
    for n in walk(s):
        if isinstance(n, ir.VarRef):
            reads.add(n.name)
        elif isinstance(n, ir.VarDecl):
            writes.add(n.name)
        elif isinstance(n, ir.Return):
            exits = True
        elif isinstance(n, _LOOPS):
            faults = True
        elif isinstance(n, ir.Assign | ir.Unary) and _writes_target(n) is not None:
            target = _writes_target(n)
            assert target is not None
            root = root_var(target)
            if root is None:
                stores = True
            else:
                writes.add(root)
            if isinstance(n, ir.Assign) and n.op in ("/=", "%=") and _integer(n.type):
                faults = True
        elif isinstance(n, ir.Unary) and n.op == "&" or isinstance(n, ir.Cast) \
                and isinstance(n.type, PointerType) and indexes_in_place(n.operand.type):
            root = root_var(n.operand)
            if root is not None:
                addressed.add(root)  # written through a pointer we do not follow
        elif isinstance(n, ir.Binary) and n.op in ("/", "%") and _integer(n.type):
            faults = True
        elif isinstance(n, ir.Call):
            if n.name in ID_QUERIES:
                dim = const_int(n.args[0]) if n.args else None
                if n.name in _ALONG and dim is not None:
                    along.add(dim)
                continue
            family = builtin_family(n)
            if n.builtin is None or family in ("atomic", "vstore", "async", "sync", "printf") \
                    or n.name.startswith("write_image"):
                stores = True
            elif family == "vload" or n.name.startswith("read_image"):
                loads = faults = True
            elif any(isinstance(a.type, PointerType) and not _private_address(a) for a in n.args):
                stores = True
        if is_pointer_access(n):
            faults = True
            if stored_only[id(n)]:
                stored_only[id(n)] -= 1
                continue
            if _space_of_access(n) is AddressSpace.CONSTANT:
                constant_loads = True
            else:
                loads = True
    assignable = not isinstance(s, ir.DeclStmt) or all(
        d.init is None or not isinstance(d.init, ir.InitList | ir.StringLit) for d in s.decls)
    return _Stmt(frozenset(reads), frozenset(writes | addressed), frozenset(addressed),
                 frozenset(along), stores, loads,
                 constant_loads, exits, faults, assignable, stmt_cost(s))


def _writes_target(n: ir.Assign | ir.Unary) -> ir.Expr | None:
    if isinstance(n, ir.Assign):
        return n.target
    if n.op in ("++", "--", "p++", "p--"):
        return n.operand
    return None


def _private_address(e: ir.Expr) -> bool:
    """``&x`` of a private variable (``sincos(a, &c)``): a write of ``x``, not of memory."""
    while isinstance(e, ir.Cast):
        e = e.operand
    return isinstance(e, ir.Unary) and e.op == "&" and root_var(e.operand) is not None


def _integer(t: object) -> bool:
    return isinstance(t, ScalarType) and t.is_integer


# ---------------------------------------------------------------- which statements hoist

HOIST = "hoist"  # before the work-item loop
ONCE = "once"  # in the loop where it was, run by the first work-item that reaches it
EACH = "each"  # in the loop, once per work-item


def _placement(stmts: Sequence[_Stmt], dim: int) -> list[str]:
    """Per top-level statement: HOIST, ONCE or EACH (see the module docstring for the rules;
    the largest sets satisfying them: statements only ever move down HOIST -> ONCE -> EACH)."""
    # a store through a pointer may write any variable whose address the kernel takes
    addressed = frozenset().union(*(s.addressed for s in stmts))
    stmts = [dataclasses.replace(s, writes=s.writes | addressed) if s.stores else s
             for s in stmts]
    where = [HOIST if dim not in s.along and not s.stores else EACH for s in stmts]
    changed = True
    while changed:
        changed = False
        each_writes: set[str] = set()
        loop_writes: set[str] = set()
        for s, w in zip(stmts, where):
            if w == EACH:
                each_writes |= s.writes
            if w != HOIST:
                loop_writes |= s.writes
        for i, s in enumerate(stmts):
            was = where[i]
            if was == HOIST and not _may_hoist(s, stmts[:i], where[:i], loop_writes):
                where[i] = ONCE
            if where[i] == ONCE and not _may_run_once(s, stmts[:i], where[:i], each_writes):
                where[i] = EACH
            changed = changed or where[i] != was
    return where


def _may_hoist(s: _Stmt, before: Sequence[_Stmt], placed: Sequence[str],
               loop_writes: set[str]) -> bool:
    if (s.reads | s.writes) & loop_writes:
        return False
    for other, w in zip(before, placed):
        if w == HOIST:
            continue
        if s.writes & other.reads or (s.loads or s.exits) and other.stores:
            return False
        if other.exits and s.faults:
            return False  # it would run where no original work-item ran it
    return True


def _may_run_once(s: _Stmt, before: Sequence[_Stmt], placed: Sequence[str],
                  each_writes: set[str]) -> bool:
    if s.exits or not s.assignable or (s.reads | s.writes) & each_writes:
        return False
    return not any(w == EACH and (s.writes & other.reads or s.loads and other.stores)
                   for other, w in zip(before, placed))


# ---------------------------------------------------------------- guards


def _bare_return(s: ir.Stmt) -> bool:
    if isinstance(s, ir.Block):
        return len(s.stmts) == 1 and _bare_return(s.stmts[0])
    return isinstance(s, ir.Return) and s.value is None


def split_guards(stmts: Sequence[ir.Stmt]) -> tuple[ir.Stmt, ...]:
    """The top-level statements in the form the hoisting rules see best, each step the same
    evaluation: ``int a = .., b = ..;`` as one declaration each (``a`` may be uniform where
    ``b`` is not); a last ``if (c) { rest }`` as ``if (!c) return; rest`` (the guard of a
    GPU-style kernel, so that the rest is top-level statements again); ``if (a || b) return;``
    as ``if (a) return; if (b) return;`` (``||`` stops at the first true operand), so that a
    part uniform along the coarsened dimension (``x >= width``) is hoisted while the part that
    varies (``y >= height``) stays per work-item."""
    out: list[ir.Stmt] = []
    pending = list(stmts)
    while pending:
        s = pending.pop(0)
        if not pending and isinstance(s, ir.If) and s.otherwise is None \
                and not _bare_return(s.then):
            guard = ir.If(_negate(s.cond), ir.Block((ir.Return(loc=s.loc),)), loc=s.loc)
            out.extend(_split_guard(guard))
            pending = list(s.then.stmts) if isinstance(s.then, ir.Block) else [s.then]
        elif isinstance(s, ir.DeclStmt) and len(s.decls) > 1:
            out.extend(ir.DeclStmt((d,), loc=s.loc) for d in s.decls)
        else:
            out.extend(_split_guard(s))
    return tuple(out)


_FLIPPED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def _negate(cond: ir.Expr) -> ir.Expr:
    """``!cond`` as a condition: ``!(a && b)`` as ``!a || !b``, an integer comparison flipped."""
    if isinstance(cond, ir.Binary) and cond.op == "&&":
        return ir.Binary(INT, "||", _negate(cond.lhs), _negate(cond.rhs))
    if isinstance(cond, ir.Binary) and cond.op in _FLIPPED and _integer(cond.lhs.type) \
            and _integer(cond.rhs.type):
        return dataclasses.replace(cond, op=_FLIPPED[cond.op])
    return ir.Unary(INT, "!", cond)


def _split_guard(s: ir.Stmt) -> list[ir.Stmt]:
    if not (isinstance(s, ir.If) and s.otherwise is None and _bare_return(s.then)):
        return [s]
    cond = s.cond
    if not (isinstance(cond, ir.Binary) and cond.op == "||"):
        return [s]
    return _split_guard(dataclasses.replace(s, cond=cond.lhs)) + \
        _split_guard(dataclasses.replace(s, cond=cond.rhs))


# ---------------------------------------------------------------- facts


def _kernel_refusal(fn: ir.Function) -> str | None:
    """Why no dimension of ``fn`` can be coarsened, or None."""
    if fn.body is None:
        return "a prototype has no body"
    for p in fn.params:
        if isinstance(p.type, PointerType) and p.type.space is AddressSpace.LOCAL:
            return f"__local parameter '{p.name}' (work-groups change shape)"
    for n in walk(fn.body):
        if isinstance(n, ir.VarDecl) and n.space is AddressSpace.LOCAL:
            return f"__local variable '{n.name}' (work-groups change shape)"
        if not isinstance(n, ir.Call):
            continue
        if n.builtin is None:
            return f"calls helper function '{n.name}' (inline it first: the transform sees " \
                   "the kernel alone)"
        family = builtin_family(n)
        if n.name == "barrier" or family == "async" and n.name != "prefetch":
            return f"'{n.name}' synchronizes the work-group"
        if n.name in ID_QUERIES and n.args and const_int(n.args[0]) is None:
            return f"'{n.name}' with a dimension that is not a constant"
    return None


def _returns_in_loops(s: ir.Stmt, in_loop: bool = False) -> bool:
    if isinstance(s, ir.Return):
        return in_loop
    inner = in_loop or isinstance(s, _LOOPS)
    return any(_returns_in_loops(c, inner) for c in child_stmts(s))


def _needs_divisible(fn: ir.Function, dim: int) -> bool:
    return any(isinstance(n, ir.Call) and n.name in _DIVISIBLE and n.args
               and const_int(n.args[0]) == dim for n in walk(fn.body))


def _dim_facts(fn: ir.Function, dim: int, stmts: Sequence[ir.Stmt], facts: Sequence[_Stmt],
               refusal: str | None) -> DimFacts:
    total = sum(f.cost for f in facts)
    divisible = refusal is None and _needs_divisible(fn, dim)
    if refusal is not None:
        return DimFacts(dim, False, refusal, 0, total, divisible)
    where = _placement(facts, dim)
    for s, w in zip(stmts, where):
        if w == EACH and _returns_in_loops(s):
            return DimFacts(dim, False, f"a return inside a loop at {s.loc} would have to leave "
                            "the coarsened work-item loop", 0, total, divisible)
    count = sum(w != EACH for w in where)
    shared = sum(f.cost for f, w in zip(facts, where) if w != EACH)
    plan = _jam_plan(fn, stmts, facts, where, dim)
    jam = f"no jam: {plan}" if isinstance(plan, str) else plan.describe()
    jam_cost = 0 if isinstance(plan, str) else plan.shared_cost
    if shared + jam_cost == 0:
        return DimFacts(dim, True, f"nothing uniform along dimension {dim} to share; {jam}", 0,
                        total, divisible, False, jam)
    return DimFacts(dim, True, f"{count} statement{'s' if count != 1 else ''} (cost {shared}) "
                    f"uniform along dimension {dim}; {jam}", shared + jam_cost, total, divisible,
                    not isinstance(plan, str), jam)


def _jam_plan(fn: ir.Function, stmts: Sequence[ir.Stmt], facts: Sequence[_Stmt],
              where: Sequence[str], dim: int) -> JamPlan | str:
    """The jam plan of the statements a coarsened work-item runs per original work-item, or
    why there is none."""
    if ONCE in where:
        return "a statement runs once for the merged work-item, under a flag"
    copies = _param_copies(fn, facts, where)
    per_item = _Queries(dim, 2, True, copies)
    items = _item_prologue(fn, dim, 2, copies) + [
        per_item.rewrite(s) for s, w in zip(stmts, where) if w == EACH]
    return coarsen_jam.jam_plan(items, [_stmt_facts(s) for s in items])


def _param_copies(fn: ir.Function, facts: Sequence[_Stmt], where: Sequence[str]) -> dict[str, str]:
    """The parameters the per-work-item statements write, each with the name of its copy."""
    written: set[str] = set()
    for f, w in zip(facts, where):
        if w == EACH:
            written |= f.writes
    return {p.name: p.name + _COPY for p in fn.params if p.name in written}


def _item_prologue(fn: ir.Function, dim: int, factor: int,
                   copies: dict[str, str]) -> list[ir.Stmt]:
    """The first statements of the work-item loop: the original work-item's id along ``dim``
    and the copies of the parameters it writes."""
    out: list[ir.Stmt] = [
        ir.DeclStmt((ir.VarDecl(_ID, SIZE_T, init=_add(_first_id(dim, factor), _var(_K))),)),
    ]
    for p in fn.params:
        if p.name in copies:
            out.append(ir.DeclStmt((ir.VarDecl(copies[p.name], p.type,
                                               init=ir.VarRef(p.type, p.name)),)))
    return out


def coarsen_facts(fn: ir.Function) -> CoarsenFacts:
    """What coarsening ``fn`` along each dimension would share, or why it cannot."""
    refusal = _kernel_refusal(fn)
    stmts = split_guards(fn.body.stmts) if fn.body is not None else ()
    facts = [_stmt_facts(s) for s in stmts]
    d0, d1, d2 = (_dim_facts(fn, d, stmts, facts, refusal) for d in range(3))
    return CoarsenFacts(fn.name, (d0, d1, d2))


# ---------------------------------------------------------------- the transform


def _query(name: str, dim: int) -> ir.Call:
    return ir.Call(SIZE_T, name, (ir.IntLit(UINT, dim),), builtin=f"{name}__uint")


def _ulong(value: int) -> ir.IntLit:
    return ir.IntLit(ULONG, value)


def _var(name: str) -> ir.VarRef:
    return ir.VarRef(ULONG, name)


def _add(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.Binary(ULONG, "+", a, b)


def _sub(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.Binary(ULONG, "-", a, b)


def _mul(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.Binary(ULONG, "*", a, b)


class _Queries(Rewriter):
    """Work-item queries along ``dim`` as the original work-item would see them; in the
    per-work-item part (``per_item``) also ``return`` -> ``continue`` and the copies of the
    parameters it writes."""

    def __init__(self, dim: int, factor: int, per_item: bool, copies: dict[str, str]):
        self.dim = dim
        self.factor = factor
        self.per_item = per_item
        self.copies = copies

    def rewrite_Call(self, e: ir.Call) -> ir.Expr:
        if e.name not in ID_QUERIES or not e.args or const_int(e.args[0]) != self.dim:
            return e
        f = _ulong(self.factor)
        if e.name == "get_global_id":
            return _var(_ID)
        if e.name == "get_global_size":
            return _var(SIZE_PARAM)
        if e.name == "get_local_id":
            return _add(_mul(e, f), _var(_K))
        if e.name == "get_local_size":
            return _mul(e, f)
        return e  # group ids and counts, offsets and the work dimension do not change

    def rewrite_VarRef(self, e: ir.VarRef) -> ir.Expr:
        copy = self.copies.get(e.name)
        return e if copy is None else dataclasses.replace(e, name=copy)

    def rewrite_Return(self, s: ir.Return) -> ir.Stmt:
        # the checked precondition: no return of the per-item part sits inside a loop
        return ir.Continue(loc=s.loc) if self.per_item else s


def coarsen(fn: ir.Function, dim: int, factor: int, name: str, jam: bool = True) -> ir.Function:
    """``fn`` coarsened along ``dim`` by ``factor`` as kernel ``name`` (see the module
    docstring for the launch it needs); raises ValueError where ``coarsen_facts`` refuses.
    ``jam``: full merged work-items run the per-work-item loop once where ``coarsen_jam``
    allows (False: always one original work-item after another)."""
    if dim not in (0, 1, 2) or factor < 1:
        raise ValueError(f"cannot coarsen dimension {dim} by {factor}")
    facts = coarsen_facts(fn).dims[dim]
    if not facts.coarsenable:
        raise ValueError(f"cannot coarsen {fn.name} along dimension {dim}: {facts.reason}")
    assert fn.body is not None
    attrs = fn.attrs
    if attrs.reqd_work_group_size is not None:
        sizes = list(attrs.reqd_work_group_size)
        if sizes[dim] % factor:
            raise ValueError(f"factor {factor} does not divide the required work-group size "
                             f"{sizes[dim]} along dimension {dim}")
        sizes[dim] //= factor
        attrs = dataclasses.replace(attrs, reqd_work_group_size=(sizes[0], sizes[1], sizes[2]))
    attrs = dataclasses.replace(attrs, work_group_size_hint=None)

    stmts = split_guards(fn.body.stmts)
    facts_of = [_stmt_facts(s) for s in stmts]
    where = _placement(facts_of, dim)
    copies = _param_copies(fn, facts_of, where)

    shared = _Queries(dim, factor, False, {})
    per_item = _Queries(dim, factor, True, copies)
    first_run = _prechecked_run(facts_of, where)
    # the number of original work-items of this merged one (0 past the end): the same for every
    # work-item of a row, so formation can interchange the loop with the work-item loop
    head: list[ir.Stmt] = [ir.DeclStmt((ir.VarDecl(_N, ULONG, init=_count(dim, factor)),))]
    loop_body = _item_prologue(fn, dim, factor, copies)
    precheck: list[ir.Stmt] = []  # the statements before the prechecked run, per work-item
    prechecked: list[ir.Stmt] = []  # the run, for the merged work-item when one reaches it
    flags = 0
    for i, (s, w) in enumerate(zip(stmts, where)):
        if w == HOIST:
            head.append(shared.rewrite(s))
        elif w == EACH:
            loop_body.append(per_item.rewrite(s))
            if first_run is not None and i < min(first_run):
                precheck.append(_Queries(dim, factor, True, {}).rewrite(s))
        elif first_run is not None and i in first_run:
            prechecked.extend(_split_declarations(shared.rewrite(s), head))
        elif loop_body and isinstance(loop_body[-1], ir.If) and _is_once(loop_body[-1]):
            # the next statement of a run of ONCE statements: under the same flag
            run = loop_body[-1]
            assert isinstance(run.then, ir.Block)
            stmt = _split_declarations(shared.rewrite(s), head)
            loop_body[-1] = dataclasses.replace(
                run, then=dataclasses.replace(run.then, stmts=run.then.stmts + stmt))
        else:
            flag = f"{_ONCE}{flags}"
            flags += 1
            head.append(ir.DeclStmt((ir.VarDecl(flag, INT, init=ir.IntLit(INT, 0)),)))
            first = (ir.ExprStmt(ir.Assign(INT, "=", ir.VarRef(INT, flag), ir.IntLit(INT, 1))),)
            stmt = _split_declarations(shared.rewrite(s), head)
            loop_body.append(ir.If(ir.Unary(INT, "!", ir.VarRef(INT, flag)),
                                   ir.Block(first + stmt)))
    if first_run is not None:
        head.extend(_precheck(dim, factor, precheck, prechecked))
    loop: ir.Stmt = _item_loop(nest_continues(loop_body))
    if jam and factor > 1 and flags == 0 and first_run is None:
        plan = coarsen_jam.jam_plan(loop_body, [_stmt_facts(s) for s in loop_body])
        if not isinstance(plan, str):
            before, cond, jammed = coarsen_jam.jammed(loop_body, plan, factor, _K, _N)
            head.extend(before)
            loop = ir.If(cond, jammed, ir.Block((loop,)))
    body = ir.Block(tuple(head) + (loop,), loc=fn.body.loc)
    params = fn.params + (ir.Param(SIZE_PARAM, ULONG),)
    return dataclasses.replace(fn, name=name, params=params, body=body, attrs=attrs)


def _item_loop(body: tuple[ir.Stmt, ...]) -> ir.For:
    """``for (ulong __ppcl_k = 0; __ppcl_k < __ppcl_n; __ppcl_k++) body``."""
    return ir.For(ir.DeclStmt((ir.VarDecl(_K, ULONG, init=_ulong(0)),)),
                  ir.Binary(INT, "<", _var(_K), _var(_N)),
                  ir.Unary(ULONG, "p++", _var(_K)), ir.Block(body))


def _count(dim: int, factor: int) -> ir.Expr:
    """``first >= size ? 0 : size - first < f ? size - first : f`` with ``first`` the
    position of the merged work-item's first original one in the range."""
    offset = _query("get_global_offset", dim)
    first = _mul(_sub(_query("get_global_id", dim), offset), _ulong(factor))
    size = _var(SIZE_PARAM)
    left = _sub(size, first)
    f = _ulong(factor)
    rest = ir.Conditional(ULONG, ir.Binary(INT, "<", left, f), left, f)
    return ir.Conditional(ULONG, ir.Binary(INT, ">=", first, size), _ulong(0), rest)


def _prechecked_run(facts: Sequence[_Stmt], where: Sequence[str]) -> set[int] | None:
    """The first run of ONCE statements (their indexes, smallest first when sorted), when
    whether some original work-item reaches it can be found before the work-item loop by
    running the per-work-item statements before it again (``_precheck``): they store nothing,
    cannot fault, and write only variables they declare. None: the run keeps its flag."""
    start = next((i for i, w in enumerate(where) if w == ONCE), None)
    if start is None:
        return None
    before = [f for f, w in zip(facts[:start], where[:start]) if w == EACH]
    declared: set[str] = set()
    for f in before:
        if f.stores or f.faults or f.addressed or f.loads:
            return None
        declared |= f.writes - f.reads  # declarations write before they read
    if any(not f.writes <= declared for f in before):
        return None
    run = {start}
    for i in range(start + 1, len(where)):
        if where[i] == EACH:
            break
        if where[i] == ONCE:
            run.add(i)
    return run


def _precheck(dim: int, factor: int, before: list[ir.Stmt],
              run: list[ir.Stmt]) -> list[ir.Stmt]:
    """``int __ppcl_any = 0; for (k < n) { before; __ppcl_any = 1; }  if (__ppcl_any) { run }``:
    the run, once, when some original work-item gets past the statements before it (their
    returns are ``continue`` here, nested away as in the work-item loop). The loop's variables
    get names of their own (locals keep unique names)."""
    flag = ir.VarRef(INT, _ANY)
    found = ir.ExprStmt(ir.Assign(INT, "=", flag, ir.IntLit(INT, 1)))
    body = (ir.DeclStmt((ir.VarDecl(_ID, SIZE_T, init=_add(_first_id(dim, factor), _var(_K))),)),) \
        + tuple(before) + (found,)
    declared = {d.name for s in body if isinstance(s, ir.DeclStmt) for d in s.decls} | {_K}
    renamer = Renamer({n: n + _PRE for n in declared})
    loop = renamer.rewrite(_item_loop(nest_continues(body)))
    return [ir.DeclStmt((ir.VarDecl(_ANY, INT, init=ir.IntLit(INT, 0)),)), loop,
            ir.If(flag, ir.Block(tuple(run)))]


def _first_id(dim: int, factor: int) -> ir.Expr:
    """The global id of a merged work-item's first original work-item."""
    offset = _query("get_global_offset", dim)
    return _add(offset, _mul(_sub(_query("get_global_id", dim), offset), _ulong(factor)))


def _is_once(s: ir.If) -> bool:
    cond = s.cond
    return isinstance(cond, ir.Unary) and cond.op == "!" and isinstance(cond.operand, ir.VarRef) \
        and cond.operand.name.startswith(_ONCE)


def _split_declarations(s: ir.Stmt, head: list[ir.Stmt]) -> tuple[ir.Stmt, ...]:
    """``s`` to run under a ONCE flag: its declarations go to ``head`` (so the work-items
    after the first see them) and their initializers become assignments."""
    if not isinstance(s, ir.DeclStmt):
        return (s,)
    out: list[ir.Stmt] = []
    for d in s.decls:
        head.append(ir.DeclStmt((dataclasses.replace(d, init=None, const=False),), loc=s.loc))
        if d.init is not None:
            out.append(ir.ExprStmt(ir.Assign(d.type, "=", ir.VarRef(d.type, d.name), d.init),
                                   loc=s.loc))
    return tuple(out)


# ---------------------------------------------------------------- choosing (Algorithms 1, 2)

MIN_MERGED_ITEMS = 64  # on a CPU, keep this many merged work-items (threads times lanes)
FREE_FACTOR = 16  # the CPU factor the paper reports, where the local size does not bound it


def _candidates(local: int, divisible: bool) -> list[int]:
    """Factors to try along a dimension of local size ``local``, largest first: the local size
    itself (the paper's choice), then the powers of two below it (that divide it, when the
    factor must)."""
    powers = [1 << i for i in range(local.bit_length() - 1, 0, -1)]
    found = [local] if local > 1 else []
    found += [f for f in powers if f < local and (not divisible or local % f == 0)]
    return found


def _fits(order: ExecutionOrder, dim: int, factor: int, local: Sequence[int],
          global_size: Sequence[int]) -> bool:
    """Algorithm 2's constraints on the parallelism a factor leaves."""
    if order.is_gpu:
        others = math.prod(local) // local[dim]
        group = local[dim] // factor * others
        return local[dim] % factor == 0 and group >= order.min_group and \
            group % max(order.warp, 1) == 0
    merged = math.prod(global_size) // factor
    return merged >= MIN_MERGED_ITEMS


def choose(facts: CoarsenFacts, order: ExecutionOrder, local_size: Sequence[int] | None,
           global_size: Sequence[int]) -> tuple[tuple[int, int] | None, str]:
    """The dimension and factor to coarsen by (or None), and why: the dimension saving the most
    (shared cost times factor, Algorithm 1) under the device's constraints (Algorithm 2: never
    the dimension a CPU vectorizes; on a GPU, groups of at least ``min_group`` work-items in
    whole warps). The factor starts from the local size along the dimension (the paper's
    choice); a kernel that does not need it to divide the local size may go up to
    ``FREE_FACTOR`` on a CPU, where a group of one row is common. ``local_size`` None: the
    runtime chooses, taken as 1."""
    dims = len(global_size)
    given = tuple(local_size) if local_size is not None else (1,) * dims
    local = given + (1,) * (3 - len(given))
    sizes = tuple(global_size) + (1,) * (3 - len(global_size))
    best: tuple[int, int, int] | None = None  # (saved, dim, factor)
    why: list[str] = []
    for d in facts.dims:
        if d.dim >= dims:
            continue
        if not d.coarsenable or d.shared_cost == 0:
            why.append(f"dimension {d.dim}: {d.reason}")
            continue
        vectorized = order.kind == DATA_PARALLEL and not order.is_gpu
        if vectorized and d.dim == order.vector_dim:
            why.append(f"dimension {d.dim}: the device vectorizes work-items along it")
            continue
        cap = local[d.dim]
        if not d.needs_divisible and not order.is_gpu:
            cap = min(max(cap, FREE_FACTOR), sizes[d.dim])
        candidates = _candidates(cap, d.needs_divisible or order.is_gpu)
        if not candidates:
            why.append(f"dimension {d.dim}: no factor divides the local size {local[d.dim]}")
            continue
        factor = next((f for f in candidates if _fits(order, d.dim, f, local, sizes)), None)
        if factor is None:
            why.append(f"dimension {d.dim}: no factor keeps enough parallelism")
            continue
        saved = d.shared_cost * factor
        # on a tie, not the dimension the lanes or a warp run along: a load uniform along it
        # is one broadcast for them already, and coarsening it strides their accesses
        if best is None or saved > best[0] or saved == best[0] and best[1] == order.vector_dim:
            best = (saved, d.dim, factor)
    if best is None:
        return None, "; ".join(why) or "nothing to coarsen"
    saved, dim, factor = best
    chosen = facts.dims[dim]
    return (dim, factor), (f"dimension {dim} by {factor}: {chosen.reason}, saves about "
                           f"{chosen.shared_cost * (factor - 1)} of {chosen.total_cost * factor} "
                           "per merged work-item")
