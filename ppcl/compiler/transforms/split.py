"""Input space splitting (Moll, Doerfert, Hack, Sections 3-4): a work-item loop whose control or
addresses depend on where a work-item lies gets a fast copy for the lanes where they do not.

The affine model (``analysis/affine.py``) finds the *sites* of a work-item loop body that are
decided on a subdomain:

* a guard ``if (c1 || c2 ...) next_workitem;`` (a guard block normalized to an early exit):
  each affine comparison ``ci`` is false on ``not ci``;
* a condition ``if (c1 && c2 ...)``: each affine ``ci`` is true on ``ci``;
* ``min``, ``max`` and ``clamp`` of affine integers: in an address, the argument that moves
  with ``gid0`` is chosen (the access becomes consecutive, Section 3.2.2); elsewhere (loop
  bounds, values) the argument that is the same for every lane (control becomes uniform, the
  full-tile predicate of Section 3.2.1);
* a periodic wrap (``_wrap_sites``): ``if (xs < 0) xs += nx;``, ``x == 0 ? nx - 1 : x - 1``,
  ``(x - 1 + nx) % nx``: the condition takes the value it has inside the launch (``_interior``:
  above a constant, below a size), the arm or the remainder's left side minus its multiple
  of ``nx`` stands for the whole (any ternary so decided is an ``arm`` site:
  ``gid < n ? x[gid] : 0.0f``). Loads from ``__constant`` tables (``CX[q]``) are bounded by
  the table's values (``affine.table_bounds``).

Each site gives constraints ``p >= 0``. Counters of the body are replaced by their worst value
in their bounds and the lanes along y and z by their worst value in the group's tile (a linear
inequality holds on a box iff it holds at one corner), which leaves per constraint either a
test of the group's position and the scalar arguments, or a bound on the global id along x
(coefficient +-1). A site whose constraints are neither is not split. The fast copy of the
loop has every site replaced; ``wg.SplitLoop`` records the test, the bounds and both copies,
and the printer runs the lanes between the bounds through the fast copy when the test holds
(``codegen/kernel_c.py``). The lanes outside, and every lane of a group where the test fails,
run the loop as formed, so the split never changes what a kernel computes.

Each split also gets a score (``split_score.py``): a launch whose fast subdomain is too small
to pay for the extra loops runs the loop as formed, chosen at launch by the device from the
``unsplit`` mask of the launch descriptor (bit ``SplitLoop.index``); a split that loses on every
launch is not made.

A loop whose whole body sits under a guard also gets an *empty test* (``empty_test``): some
constraint of the guard, at its best corner over the group's lanes, is negative, so no lane of
the group passes it and the group skips the loop (an empty launch of LU's update no longer runs
every lane through the guard one at a time). Where the split's bounds on ``gid0`` are the
guard's own and the same on every row (``edges_fail``), the lanes before and after the fast
range fail the guard as well, and no loop runs them.

Splitting is skipped for loops with a mask or a plan (jammed, grid-stride), where the work-item
order is fixed, and with the build option ``-ppcl-no-split``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ppcl.compiler.analysis.affine import (
    BASES,
    LANES,
    Counter,
    Model,
    Monomial,
    Poly,
    accesses,
    affine_of,
    constraint_assuming,
    constraint_of,
    isl_set,
    model_of,
    writes_in,
)
from ppcl.compiler.analysis.effects import Effects, effects, is_effect_free, write_counts
from ppcl.compiler.frontend.consteval import fold
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.types import INT, LONG, SIZE_T, UINT, ULONG, ScalarType
from ppcl.compiler.ir.visit import Node, Rewriter, find_all, walk
from ppcl.compiler.transforms.context import varying_float_sum
from ppcl.compiler.transforms.rotate import Rotated, rotate_entered
from ppcl.compiler.transforms.split_score import (
    DISPATCH_UNITS,
    LOOKUP_UNITS,
    choose,
    lane_cost,
    launch_values,
    make_score,
    most_saved,
    score_lines,
    worth_dispatching,
    worth_evaluating,
)
from ppcl.compiler.transforms.wide_index import is_sign_test, tile_facts, widen_indices
from ppcl.compiler.transforms.workgroup import FormedKernel

_MINMAX = ("min", "max", "clamp")


@dataclass(frozen=True)
class Site:
    """A node of the body decided on a subdomain: ``node`` becomes ``replacement`` where every
    constraint holds."""

    node: ir.Expr
    replacement: ir.Expr
    constraints: tuple[Poly, ...]
    what: str


@dataclass(frozen=True)
class SplitPlan:
    """The split of one work-item loop: the group test (each ``p >= 0``), bounds on ``gid0``
    (``lower <= gid0 <= upper``), all over parameters and group bases, and the sites."""

    test: tuple[Poly, ...]
    lower: tuple[Poly, ...]
    upper: tuple[Poly, ...]
    sites: tuple[Site, ...]
    model: Model

    def domain_text(self) -> str:
        parts = [f"{p} >= 0" for p in self.test]
        parts += [f"gid0 >= {p}" for p in self.lower]
        parts += [f"gid0 <= {p}" for p in self.upper]
        return " and ".join(parts) if parts else "every lane"


def _strip(e: ir.Expr) -> ir.Expr:
    while isinstance(e, ir.Cast) and e.implicit:
        e = e.operand
    return e


def _terms(e: ir.Expr, op: str) -> list[ir.Expr]:
    e = _strip(e)
    if isinstance(e, ir.Binary) and e.op == op:
        return _terms(e.lhs, op) + _terms(e.rhs, op)
    return [e]


def _is_exit(s: ir.Stmt) -> bool:
    if isinstance(s, wg.WorkItemExit):
        return True
    return isinstance(s, ir.Block) and len(s.stmts) == 1 and _is_exit(s.stmts[0])


def _false(e: ir.Expr) -> ir.Expr:
    return ir.IntLit(e.type, 0)


def _true(e: ir.Expr) -> ir.Expr:
    return ir.IntLit(e.type, 1)


def _address_vars(body: ir.Stmt, model: Model) -> set[str]:
    """The single-assignment locals an address depends on, transitively."""
    out: set[str] = set()
    todo = [n.name for node in walk(body) if isinstance(node, ir.Index)
            for n in walk(node.index) if isinstance(n, ir.VarRef)]
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.add(name)
        if name in model.defs:
            todo += [n.name for n in walk(model.defs[name]) if isinstance(n, ir.VarRef)]
    return out


def _in_address(body: ir.Stmt, model: Model) -> set[int]:
    """Ids of the min/max/clamp calls that an address depends on."""
    roots: list[Node] = [node.index for node in walk(body) if isinstance(node, ir.Index)]
    roots += [model.defs[n] for n in _address_vars(body, model) if n in model.defs]
    return {id(n) for r in roots for n in walk(r) if isinstance(n, ir.Call)}


def _minmax_site(call: ir.Call, model: Model, address: bool) -> Site | None:
    args = [affine_of(a, model) for a in call.args]
    if any(a is None or not a.is_affine for a in args):
        return None
    polys = [a for a in args if a is not None]
    lanes = set(LANES)
    if call.name == "clamp":
        if not address or len(polys) != 3 or not polys[0].names() & lanes:
            return None
        v, lo, hi = polys
        return Site(call, call.args[0], (v - lo, hi - v), "clamp")
    if len(polys) != 2:
        return None
    if address:
        pick = [i for i, p in enumerate(polys) if p.coeff("gid0") != 0]
        if not pick:
            pick = [i for i, p in enumerate(polys) if p.names() & lanes]
    else:
        pick = [i for i, p in enumerate(polys) if not p.names() & lanes]
    if len(pick) != 1:
        return None
    i = pick[0]
    chosen, other = polys[i], polys[1 - i]
    constraint = other - chosen if call.name == "min" else chosen - other
    return Site(call, call.args[i], (constraint,), call.name)


def find_sites(body: ir.Stmt, model: Model) -> list[Site]:
    """The sites of ``body`` (see the module docstring), in program order."""
    sites: list[Site] = []
    address = _in_address(body, model)
    chosen: dict[ir.Expr, ir.Expr] = {}
    inner = dataclasses.replace(model, chosen=chosen)
    calls = [n for n in walk(body) if isinstance(n, ir.Call) and n.builtin is not None
             and n.name in _MINMAX and isinstance(n.type, ScalarType) and n.type.is_integer]
    for call in reversed(calls):  # inner calls first: min(max(y, 0), h - 1)
        site = _minmax_site(call, inner, id(call) in address)
        # an outer call is modelled with this one's chosen argument: only a site the plan
        # keeps (its constraints reduce) may stand for its call, or the outer site's
        # constraints would rest on a choice the fast copy does not make
        if site is not None and _reduced(site, model) is not None:
            sites.append(site)
            chosen[call] = site.replacement
    wraps, claimed = _wrap_sites(body, model)
    sites += wraps
    whole = _sole_statement(body)
    for node in walk(body):
        if isinstance(node, ir.If) and id(node) not in claimed:
            # unsigned differences and sums count as exact where they do not wrap, which the
            # subdomain must then hold as well (``x < width - 1`` on uint: ``width >= 1``)
            exits = _is_exit(node.then) and node.otherwise is None
            disjuncts = _terms(node.cond, "||")
            if exits or (len(disjuncts) > 1 and _stores(node.then)):
                # each term false where it is: also the border of ``if (x == 0 || x >= w - 1)
                # { out[i] = 0; return; }``, whose branch stores (a branch setting only the
                # formation's masks, as an exit before a group-level loop becomes, measured
                # slower split: 3mm's product 1.47 -> 1.74 ms)
                for term in disjuncts:
                    side = _false_side(term, model)
                    if side is not None:
                        sites.append(Site(term, _false(term), side,
                                          "guard" if exits else "condition"))
            else:
                for term in _terms(node.cond, "&&"):
                    found = constraint_assuming(term, model)
                    if found is not None:
                        sites.append(Site(term, _true(term), (found[0], *found[1]),
                                          "condition"))
                    one_lane = _one_lane_above(term, model)
                    # an if that is the whole body leaves the lanes past that one nothing
                    # to run: a fast copy of them would be empty
                    if one_lane is not None and node is not whole and _scatters(node.then,
                                                                                model):
                        sites.append(Site(term, _false(term), (one_lane,), "condition"))
    return sites


def _stores(s: ir.Stmt) -> bool:
    """``s`` writes memory (a buffer, a ``__local`` array), not only private values."""
    return effects(s, Effects()).memory


def _false_side(term: ir.Expr, model: Model) -> tuple[Poly, ...] | None:
    """The constraints under which the comparison ``term`` is false, its assumptions
    included (``_sides``): ``x == 0`` above or below, ``!=`` on no range."""
    false = _sides(term, model, assuming=True)[1]
    return None if false is None else tuple(false)


# ---------------------------------------------------------------- wraps


def _interior(p: Poly, model: Model) -> bool:
    """Whether ``p >= 0`` holds inside the launch along the one lane it moves with, its
    counters and table loads at their worst: above a constant or the group's base
    (``x - 1 >= 0``), or below a size or an argument (``nx - 2 - x >= 0``); not past an edge
    (``x - nx >= 0``, ``-1 - x >= 0``), where a periodic wrap is taken."""
    for name, c in model.counters.items():
        a = p.coeff(name)
        if a:
            p = p.substitute(name, c.low if a > 0 else c.high)
    if not p.is_affine:
        return False
    moving = [lane for lane in LANES if p.coeff(lane)]
    if len(moving) != 1:
        return False
    a = p.coeff(moving[0])
    rest = p - Poly.var(moving[0]).scale(a)
    names = rest.names()
    if a > 0:
        return names <= set(BASES)
    return bool(names - set(BASES)) or (bool(names) and rest.constant > 0)


def _sides(cond: ir.Expr, model: Model, assuming: bool = False
           ) -> tuple[list[Poly] | None, list[Poly] | None]:
    """The constraints under which the comparison ``cond`` is true, and false, each None
    where it is no one affine inequality: ``a == b`` is false above or below (the side that
    is interior, ``_interior``), never true on a range. ``assuming``: unsigned differences,
    sums and conversions taken as exact, the constraints under which they are following the
    side's own (``constraint_assuming``)."""
    bare = _strip(cond)
    if not isinstance(bare, ir.Binary):
        return None, None

    def side(e: ir.Expr, negate: bool = False) -> list[Poly] | None:
        if not assuming:
            p = constraint_of(e, model, negate)
            return None if p is None else [p]
        found = constraint_assuming(e, model, negate)
        return None if found is None else [found[0], *found[1]]

    if bare.op in ("==", "!="):
        below = side(ir.Binary(bare.type, "<", bare.lhs, bare.rhs))
        above = side(ir.Binary(bare.type, ">", bare.lhs, bare.rhs))
        apart = next((c for c in (below, above) if c is not None and _interior(c[0], model)),
                     None)
        return (None, apart) if bare.op == "==" else (apart, None)
    return side(bare), side(bare, negate=True)


def _decided(cond: ir.Expr, model: Model) -> tuple[bool, list[Poly]] | None:
    """The value a condition takes inside the launch (``_interior``) and the constraints
    under which it does, or None where neither side is interior."""
    true, false = _sides(cond, model)
    for value, side in ((False, false), (True, true)):
        if side and all(_interior(p, model) for p in side):
            return value, side
    return None


def _is_false(e: ir.Expr) -> bool:
    e = _strip(e)
    return isinstance(e, ir.IntLit) and e.value == 0


def _scalar_int(t: object) -> bool:
    return isinstance(t, ScalarType) and t.is_integer and not t.is_bool


def _wrap_sites(body: ir.Stmt, model: Model) -> tuple[list[Site], set[int]]:
    """The sites of periodic wraps, and the ids of the ifs they claim from ``find_sites``'s
    conditions:

    * ``int xs = x - CX[q]; if (xs < 0) xs += nx; if (xs >= nx) xs -= nx;``: an if without
      else that only assigns locals declared before it in its block, whose condition reads the
      local's declared value as long as every update since sat under an if decided not taken
      (the site depends on those ifs' constraints as well); the condition takes the value
      it has inside the launch;
    * ``x == 0 ? nx - 1 : x - 1``: the arm the condition picks inside the launch;
    * ``(a + nx) % nx`` (signed): ``a`` where ``0 <= a < nx`` (or ``(a) % nx`` where the same
      holds of its left side) and those bounds are interior."""
    sites: list[Site] = []
    claimed: set[int] = set()
    eff = effects(body, Effects())
    taken = eff.writes - eff.address_taken  # a local written through a pointer is not kept
    for block in walk(body):
        if not isinstance(block, ir.Block):
            continue
        # a local's declared value and the constraints under which it still holds
        kept: dict[str, tuple[ir.Expr, tuple[Poly, ...]]] = {}
        for stmt in block.stmts:
            if isinstance(stmt, ir.DeclStmt):
                for d in stmt.decls:
                    kept.pop(d.name, None)
                    if d.init is not None and _scalar_int(d.type) and d.name in taken \
                            and d.name not in model.defs and is_effect_free(d.init):
                        kept[d.name] = (d.init, ())
                continue
            written = writes_in(stmt)
            site = _wrap_if(stmt, kept, model) if isinstance(stmt, ir.If) else None
            if site is not None:
                sites.append(site)
                claimed.add(id(stmt))
                if _is_false(site.replacement):
                    for name in written & kept.keys():
                        kept[name] = (kept[name][0], site.constraints)
                    continue
            for name in written:
                kept.pop(name, None)
    for node in walk(body):
        if isinstance(node, ir.Conditional) and is_effect_free(node.cond):
            decided = _decided(node.cond, model)
            if decided is not None:
                value, side = decided
                arm = node.then if value else node.otherwise
                if arm.type != node.type:
                    arm = ir.Cast(node.type, arm, implicit=True, loc=arm.loc)
                sites.append(Site(node, arm, tuple(side), "arm"))
        elif isinstance(node, ir.Binary) and node.op == "%":
            site = _remainder_site(node, model)
            if site is not None:
                sites.append(site)
    return sites, claimed


def _wrap_if(stmt: ir.If, kept: Mapping[str, tuple[ir.Expr, tuple[Poly, ...]]],
             model: Model) -> Site | None:
    """The site of ``if (c) <update>`` (``_wrap_sites``), with the locals of ``kept`` at their
    declared values."""
    if stmt.otherwise is not None or not is_effect_free(stmt.cond) \
            or not _updates(stmt.then, kept.keys()):
        return None
    read = {n.name for n in walk(stmt.cond) if isinstance(n, ir.VarRef)}
    todo = list(read & kept.keys())
    deps: list[Poly] = []
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        init, under = kept[name]
        deps += [p for p in under if p not in deps]
        todo += [n.name for n in walk(init) if isinstance(n, ir.VarRef) and n.name in kept]
    inner = dataclasses.replace(model, defs={**model.defs, **{n: kept[n][0] for n in seen}})
    decided = _decided(stmt.cond, inner)
    if decided is None:
        return None
    value, side = decided
    return Site(stmt.cond, _true(stmt.cond) if value else _false(stmt.cond),
                tuple(side) + tuple(p for p in deps if p not in side), "wrap")


def _updates(s: ir.Stmt, names: Collection[str]) -> bool:
    """Whether ``s`` does nothing but assign locals of ``names`` values without effects
    (``xs += nx``): the update of a wrap, not work a lane does at an edge."""
    stmts = s.stmts if isinstance(s, ir.Block) else (s,)
    if not stmts:
        return False
    for stmt in stmts:
        e = stmt.expr if isinstance(stmt, ir.ExprStmt) else None
        if not (isinstance(e, ir.Assign) and isinstance(e.target, ir.VarRef)
                and e.target.name in names and is_effect_free(e.value)):
            return False
    return True


def _remainder_site(rem: ir.Binary, model: Model) -> Site | None:
    """``e % m`` in a signed type, where ``e = a + k * m`` for ``k`` 0 or 1 and
    ``0 <= a <= m - 1`` is interior: the remainder is ``a`` there (``e`` is not negative)."""
    t = rem.type
    if not (isinstance(t, ScalarType) and _scalar_int(t) and t.is_signed):
        return None
    e, m = affine_of(rem.lhs, model), affine_of(rem.rhs, model)
    if e is None or m is None:
        return None
    for k in (0, 1):
        a = e - m.scale(k)
        constraints = (a, m - a - Poly.const(1))
        if all(_interior(p, model) for p in constraints):
            value = rem.lhs if k == 0 else ir.Binary(t, "-", rem.lhs, rem.rhs, loc=rem.loc)
            return Site(rem, value, constraints, "wrap")
    return None


def _sole_statement(body: ir.Stmt) -> ir.Stmt:
    """The one statement with effects ``body`` is, through blocks of one such statement
    (declarations with effect-free initializers beside it do nothing for a lane alone)."""
    while isinstance(body, ir.Block):
        acting = [s for s in body.stmts if not (
            isinstance(s, ir.DeclStmt)
            and all(d.init is None or is_effect_free(d.init) for d in s.decls))]
        if len(acting) != 1:
            break
        body = acting[0]
    return body


def _scatters(body: ir.Stmt, model: Model) -> bool:
    """Whether ``body`` stores through an index the model cannot follow (one it loaded)."""
    return any(isinstance(n, ir.Assign) and isinstance(n.target, ir.Index)
               and affine_of(n.target.index, model) is None for n in walk(body))


def _one_lane_above(term: ir.Expr, model: Model) -> Poly | None:
    """For a term ``a == b`` that holds on one lane along x (``lid == 11``: a debugging store,
    a lane that writes the group's result), ``a - b - 1 >= 0`` when ``a`` grows along x: the
    lanes past that one, where the term is false and the branch it guards drops out of the
    fast copy. A branch that one lane takes keeps gcc from vectorizing the loop around it
    when it stores through an address it loaded (a scatter, ``_scatters``): only such
    branches are sites, a group's result stored by its first lane is not."""
    bare = _strip(term)
    if not (isinstance(bare, ir.Binary) and bare.op == "=="):
        return None
    le = ir.Binary(bare.type, "<", bare.rhs, bare.lhs)
    p = constraint_of(le, model)  # lhs - rhs - 1 >= 0
    if p is None or p.mentions_nonlinearly(LANES[0]) or p.coeff(LANES[0]) <= 0:
        return None
    return p


def _worst(p: Poly, model: Model) -> Poly:
    """``p`` at its smallest over the counters' ranges and the tile's lanes along y and z."""
    for name, c in model.counters.items():
        a = p.coeff(name)
        if a:
            p = p.substitute(name, c.low if a > 0 else c.high)
    for d in (1, 2):
        a = p.coeff(LANES[d])
        if a:
            base = Poly.var(BASES[d])
            p = p.substitute(LANES[d], base if a > 0 else
                             base + Poly.const(model.local_size[d] - 1))
    return p


def _best(p: Poly, model: Model) -> Poly | None:
    """``p`` at its largest over the group's lanes (x spans the whole launch in rows mode,
    where a row's extent is no group-level value), or None when it moves with a counter."""
    if not p.is_affine or p.names() & set(model.counters):
        return None
    for d in range(3):
        a = p.coeff(LANES[d])
        if not a:
            continue
        base = Poly.var(BASES[d])
        if a < 0:
            p = p.substitute(LANES[d], base)
        elif d == 0 and model.rows:
            p = p.substitute(LANES[d], Poly.var("offset0") + Poly.var("gsize0")
                             - Poly.const(1))
        else:
            p = p.substitute(LANES[d], base + Poly.const(model.local_size[d] - 1))
    return p


def _quiet_decl(s: ir.Stmt, context: Collection[str]) -> bool:
    """A declaration a lane may skip: private to this loop, initializers without effects."""
    return isinstance(s, ir.DeclStmt) and all(
        d.name not in context and (d.init is None or is_effect_free(d.init)) for d in s.decls)


def whole_guard(body: ir.Stmt, model: Model, context: Collection[str]) -> list[Poly]:
    """When ``body`` does nothing but under a guard (after declarations without effects:
    ``if (c1 || ..) next_workitem;`` first, or ``if (c1 && ..) {...}`` last), the affine
    constraints ``p >= 0`` a lane must meet to pass it; empty when the body is not guarded so."""
    stmts = body.stmts if isinstance(body, ir.Block) else (body,)
    first = 0
    while first < len(stmts) and _quiet_decl(stmts[first], context):
        first += 1
    if first == len(stmts):
        return []
    guard = stmts[first]
    if not isinstance(guard, ir.If) or guard.otherwise is not None:
        return []
    if _is_exit(guard.then):
        found = [c for t in _terms(guard.cond, "||") for c in _constraints(t, model, True)]
    elif first == len(stmts) - 1:
        found = [c for t in _terms(guard.cond, "&&") for c in _constraints(t, model, False)]
    else:
        return []
    return [p for p in found if p is not None]


def _constraints(e: ir.Expr, model: Model, negate: bool) -> list[Poly | None]:
    """The constraints of one term of a guard: an equality (``lid == 0`` in a condition, or
    ``lid != 0`` in an exit) is two inequalities, any other comparison one."""
    bare = _strip(e)
    if isinstance(bare, ir.Binary) and bare.op == ("!=" if negate else "=="):
        le = ir.Binary(bare.type, "<=", bare.lhs, bare.rhs)
        return [constraint_of(le, model), constraint_of(dataclasses.replace(le, op=">="), model)]
    return [constraint_of(e, model, negate=negate)]


def empty_test(guard: list[Poly], model: Model) -> tuple[Poly, ...]:
    """The constraints of a whole-body guard (``whole_guard``) at their best corner over the
    group's lanes: where one is negative, no lane of the group passes the guard."""
    best = [_best(p, model) for p in guard]
    # of two tests that differ in their constant, the smaller fails more often
    tests = _tightest([p for p in best if p is not None], min)
    return tuple(p for p in tests if p.names() or p.constant < 0)


def _guard_bounds(guard: list[Poly], skip: set[str]) -> tuple[list[Poly], list[Poly]]:
    """The whole-body guard's own bounds on ``gid0`` (lower, upper; inclusive), of its affine
    constraints with a coefficient of +-1 on ``gid0`` and none of the names in ``skip``."""
    lows: list[Poly] = []
    highs: list[Poly] = []
    for p in guard:
        if not p.is_affine or p.names() & skip:
            continue
        a = p.coeff("gid0")
        rest = p - Poly.var("gid0").scale(a)
        if a == 1:
            lows.append(-rest)
        elif a == -1:
            highs.append(rest)
    return lows, highs


def edges_fail(guard: list[Poly], plan: SplitPlan) -> tuple[bool, bool]:
    """Whether every lane below the plan's lower bounds (above its upper bounds) fails the
    whole-body guard: each bound is one of the guard's own, a bound on ``gid0`` alone that is
    the same for every row (no lane along y or z, no counter in it)."""
    lows, highs = _guard_bounds(guard, set(LANES[1:]) | set(plan.model.counters))
    return (bool(plan.lower) and all(b in lows for b in plan.lower),
            bool(plan.upper) and all(b in highs for b in plan.upper))


def row_bounds(guard: list[Poly], model: Model) -> tuple[tuple[Poly, ...], tuple[Poly, ...]]:
    """Bounds on ``gid0`` (lower, upper; inclusive) that every lane passing the whole-body
    guard meets, where some bound moves with the lanes along y or z (``j <= i`` of a triangle):
    a row of lanes along x then runs only the lanes between them, the others failing the guard.
    Empty when no bound moves with the row (the split's bounds and ``edges_fail`` see those)."""
    lows, highs = _guard_bounds(guard, set(model.counters))
    rows = set(LANES[1:])
    if not any(b.names() & rows for b in lows + highs):
        return (), ()
    return tuple(_tightest(lows, max)), tuple(_tightest(highs, min))


def group_bounds(body: ir.Stmt, formed: FormedKernel, scalars: frozenset[str],
                 narrow_ids: bool) -> tuple[tuple[Poly, ...], tuple[Poly, ...], frozenset[str]]:
    """Bounds on ``gid0`` (lower, upper; inclusive) that every lane passing the whole-body
    guard meets, where a bound is the group's own: its base along x or an integer variable of
    group-level code that the body does not write (a tree reduction's ``if (lid < stride)``
    inside a loop over ``stride``, ``if (lid == 0)``). The lanes outside fail the guard, so the
    work-item loop runs only the lanes between them; the names of the group-level variables
    the bounds read come third."""
    if formed.rows:
        return (), (), frozenset()  # the local id along x varies with the group in a row
    written = writes_in(body)
    group = frozenset(n for n, t in formed.group_scalars.items()
                      if isinstance(t, ScalarType) and t.is_integer and not t.is_bool
                      and n not in written and n not in formed.context_vars)
    model = model_of(body, scalars | group, formed.local_size, rows=False,
                     narrow_ids=narrow_ids, tables=formed.tables)
    guard = whole_guard(body, model, formed.context_vars)
    lows, highs = _guard_bounds(guard, set(model.counters) | set(LANES[1:]))
    own = group | {BASES[0]}
    lows = [b for b in lows if b.names() & own]
    highs = [b for b in highs if b.names() & own]
    used = frozenset(n for b in lows + highs for n in b.names() & group)
    return tuple(_tightest(lows, max)), tuple(_tightest(highs, min)), used


def _reduced(site: Site, model: Model) -> tuple[list[Poly], list[Poly], list[Poly]] | None:
    """The site's constraints as group tests, lower and upper bounds on ``gid0``; None when
    one of them is neither (the site is not split)."""
    t: list[Poly] = []
    lo: list[Poly] = []
    hi: list[Poly] = []
    for p in site.constraints:
        w = _worst(p, model)
        if not w.is_affine or w.names() & (set(LANES[1:]) | set(model.counters)):
            return None
        a = w.coeff("gid0")
        rest = w - Poly.var("gid0").scale(a)
        if a == 0:
            t.append(w)
        elif a == 1:
            lo.append(-rest)
        elif a == -1:
            hi.append(rest)
        else:
            return None
    return t, lo, hi


def plan_split(body: ir.Stmt, model: Model) -> SplitPlan | str:
    """The split of a work-item loop body, or why there is none."""
    test: list[Poly] = []
    lower: list[Poly] = []
    upper: list[Poly] = []
    kept: list[Site] = []
    for site in find_sites(body, model):
        reduced = _reduced(site, model)
        if reduced is not None:
            t, lo, hi = reduced
            kept.append(site)
            test += [p for p in t if p not in test]
            lower += [p for p in lo if p not in lower]
            upper += [p for p in hi if p not in upper]
    if not kept:
        return "no guard, condition, min, max or clamp decided on a subdomain"
    test = _tightest(test, min)
    if any(not p.names() and p.constant < 0 for p in test):
        return "the subdomain is empty"
    test = [p for p in test if p.names()]
    return SplitPlan(tuple(test), tuple(_tightest(lower, max)), tuple(_tightest(upper, min)),
                     tuple(kept), model)


def _bounds_text(lows: Iterable[Poly], highs: Iterable[Poly]) -> str:
    return " and ".join([f"gid0 >= {p}" for p in lows] + [f"gid0 <= {p}" for p in highs])


def _tightest(polys: list[Poly], pick: Callable[[Iterable[int]], int]) -> list[Poly]:
    """Of the polynomials that differ only in their constant, the one whose constant ``pick``
    chooses: ``min`` for the tightest ``p >= 0`` or upper bound, ``max`` for a lower bound."""
    by_rest: dict[tuple[tuple[Monomial, int], ...], list[int]] = {}
    for p in polys:
        rest = (p - Poly.const(p.constant)).terms
        by_rest.setdefault(rest, []).append(p.constant)
    return [Poly(rest) + Poly.const(pick(consts)) for rest, consts in by_rest.items()]


class _Replace(Rewriter):
    """Replaces the sites (matched by identity in the tree as formed), then folds the
    conditions and guards that became constants."""

    def __init__(self, sites: Mapping[int, ir.Expr]):
        self.sites = sites

    def rewrite(self, node: Node) -> Any:
        if id(node) in self.sites:  # the chosen argument may hold sites of its own
            return self.rewrite(self.sites[id(node)])
        return super().rewrite(node)

    def rewrite_Binary(self, e: ir.Binary) -> ir.Expr:
        lhs, rhs = _strip(e.lhs), _strip(e.rhs)
        if e.op in ("||", "&&") and isinstance(lhs, ir.IntLit) and isinstance(rhs, ir.IntLit):
            value = (lhs.value or rhs.value) if e.op == "||" else (lhs.value and rhs.value)
            return ir.IntLit(e.type, 1 if value else 0)
        if e.op == "||" and isinstance(lhs, ir.IntLit):
            return e.rhs if not lhs.value else ir.IntLit(e.type, 1)
        if e.op == "||" and isinstance(rhs, ir.IntLit):
            return e.lhs if not rhs.value else ir.IntLit(e.type, 1)
        if e.op == "&&" and isinstance(lhs, ir.IntLit):
            return e.rhs if lhs.value else ir.IntLit(e.type, 0)
        if e.op == "&&" and isinstance(rhs, ir.IntLit):
            return e.lhs if rhs.value else ir.IntLit(e.type, 0)
        return e

    def rewrite_If(self, s: ir.If) -> ir.Stmt | tuple[ir.Stmt, ...]:
        cond = _strip(s.cond)
        if not isinstance(cond, ir.IntLit):
            return s
        if cond.value:
            return s.then
        return s.otherwise if s.otherwise is not None else ()


def fast_body(body: ir.Stmt, plan: SplitPlan) -> ir.Stmt:
    """``body`` with every site of ``plan`` replaced and the constants folded."""
    ids: dict[int, ir.Expr] = {}
    wanted = {id(s.node): s.replacement for s in plan.sites}
    for node in walk(body):
        if id(node) in wanted:
            ids[id(node)] = wanted[id(node)]
    result: ir.Stmt = _Replace(ids).rewrite(body)
    return result


# ---------------------------------------------------------------- the group-level IR


def _query(name: str, dim: int) -> ir.Expr:
    return ir.Call(SIZE_T, name, (ir.IntLit(UINT, dim),), builtin=f"{name}__uint")


_LEAVES = {"gsize": "get_global_size", "ngroups": "get_num_groups", "group": "get_group_id",
           "offset": "get_global_offset"}


def _leaf(name: str, params: Mapping[str, ir.Param]) -> ir.Expr:
    if name in params:
        p = params[name]
        return ir.Cast(LONG, ir.VarRef(p.type, name))
    if name in BASES:  # at group level, where every local id is 0
        return ir.Cast(LONG, _query("get_global_id", BASES.index(name)))
    if name in LANES[1:]:  # in a row of lanes along x (``WorkItemLoop.clip_lower``)
        return ir.Cast(LONG, _query("get_global_id", LANES.index(name)))
    for prefix, query in _LEAVES.items():
        if name.startswith(prefix) and name[len(prefix):] in ("0", "1", "2"):
            return ir.Cast(LONG, _query(query, int(name[len(prefix):])))
    raise AssertionError(f"no group-level value for {name}")


def poly_expr(p: Poly, params: Mapping[str, ir.Param]) -> ir.Expr:
    """``p`` as a ``long`` expression at group level."""
    out: ir.Expr | None = None
    for m, c in p.terms:
        term: ir.Expr | None = None if m and c == 1 else ir.IntLit(LONG, c)
        for name in m:
            leaf = _leaf(name, params)
            term = leaf if term is None else ir.Binary(LONG, "*", term, leaf)
        assert term is not None
        out = term if out is None else ir.Binary(LONG, "+", out, term)
    return out if out is not None else ir.IntLit(LONG, 0)


def _empty_expr(test: tuple[Poly, ...], params: Mapping[str, ir.Param]) -> ir.Expr | None:
    """Whether some ``p`` of ``test`` is negative, as a group-level ``int``."""
    out: ir.Expr | None = None
    for p in test:
        cmp = ir.Binary(INT, "<", poly_expr(p, params), ir.IntLit(LONG, 0))
        out = cmp if out is None else ir.Binary(INT, "||", out, cmp)
    return out


def empty_text(test: tuple[Poly, ...]) -> str:
    return " or ".join(f"{p} < 0" for p in test)


def _signed(t: object) -> bool:
    return not isinstance(t, ScalarType) or t.is_signed


def _largest(t: object) -> int:
    """The largest magnitude of an integer type's values (``INT_MIN``'s for a signed one)."""
    if not isinstance(t, ScalarType):
        return 0
    return 1 << (8 * t.size - 1) if t.is_signed else (1 << (8 * t.size)) - 1


def _sum_expr(terms: list[tuple[Monomial, int]], params: Mapping[str, ir.Param]) -> ir.Expr:
    """``sum c * m`` (every ``c > 0``, every name never negative) in ``ulong``."""
    out: ir.Expr | None = None
    for m, c in terms:
        term: ir.Expr | None = None if m and c == 1 else ir.IntLit(ULONG, c)
        for name in m:
            leaf = ir.Cast(ULONG, _leaf(name, params))
            term = leaf if term is None else ir.Binary(ULONG, "*", term, leaf)
        assert term is not None
        out = term if out is None else ir.Binary(ULONG, "+", out, term)
    return out if out is not None else ir.IntLit(ULONG, 0)


def _sides_expr(p: Poly, params: Mapping[str, ir.Param]) -> ir.Expr:
    """``p >= 0`` as its negative terms negated against its positive ones, both in ``ulong``
    (``wide_index._testable`` bounds each below 2^64)."""
    low = [(m, -c) for m, c in p.terms if c < 0]
    high = [(m, c) for m, c in p.terms if c > 0]
    return ir.Binary(INT, "<=", _sum_expr(low, params), _sum_expr(high, params))


def _test_expr(test: tuple[Poly, ...], params: Mapping[str, ir.Param],
               wide: tuple[Poly, ...] = ()) -> ir.Expr:
    """Whether every ``p >= 0`` of ``test`` and of ``wide`` holds, as a group-level ``int``.
    ``wide``: launch conditions of 64-bit indices, over names never negative where they
    hold (a signed argument has its own test), compared in ``ulong``
    (``wide_index._testable``)."""
    out: ir.Expr = ir.IntLit(INT, 1)
    for p in test + wide:
        if p in wide and p not in test and not is_sign_test(p):
            cmp = _sides_expr(p, params)
        else:
            cmp = ir.Binary(INT, ">=", poly_expr(p, params), ir.IntLit(LONG, 0))
        out = cmp if isinstance(out, ir.IntLit) else ir.Binary(INT, "&&", out, cmp)
    return out


# the bits of the launch's ``unsplit`` mask (a size_t) a kernel's split loops may use
MAX_SPLITS = 64


def score_plan(plan: SplitPlan, body: ir.Stmt, fast: ir.Stmt, formed: FormedKernel,
               scalars: frozenset[str], narrow_ids: bool) -> wg.SplitScore | str:
    """The score of ``plan`` for the loop ``body`` and its fast copy ``fast``
    (``split_score.py``) from the costs of both copies, or why the split loses on every
    launch."""
    model = plan.model
    fast_model = model_of(fast, scalars, formed.local_size, rows=formed.rows,
                          narrow_ids=narrow_ids, tables=formed.tables)
    guarded_cost = lane_cost(body, model, len(plan.sites))
    return make_score(plan.test, plan.lower, plan.upper, lane_cost(fast, fast_model, 0),
                      guarded_cost, model)


def _counted_group_loops(body: ir.Block) -> list[tuple[str, int, int, ir.For]]:
    """Each group-level counted loop (an interchanged loop, formed as ``i = lo; for (; i <=
    hi; i++)``): its counter set once from a constant just before it, compared with a
    constant, stepped up by one or by a positive constant (``i += 8``), written nowhere else;
    with the counter's range (which a step of more than one may not reach)."""
    writes = write_counts(body)
    out: list[tuple[str, int, int, ir.For]] = []
    for block in walk(body):
        if not isinstance(block, ir.Block):
            continue
        for before, loop in zip(block.stmts, block.stmts[1:]):
            if not (isinstance(loop, ir.For) and loop.init is None
                    and isinstance(before, ir.ExprStmt) and isinstance(before.expr, ir.Assign)
                    and before.expr.op == "=" and isinstance(before.expr.target, ir.VarRef)):
                continue
            name = before.expr.target.name
            low = fold(before.expr.value)
            cond, step = loop.cond, loop.step
            if low is None or not (isinstance(cond, ir.Binary) and cond.op in ("<", "<=")
                                   and isinstance(cond.lhs, ir.VarRef)
                                   and cond.lhs.name == name):
                continue
            high = fold(cond.rhs)
            stepped = (isinstance(step, ir.Unary) and step.op in ("++", "p++")
                       and isinstance(step.operand, ir.VarRef) and step.operand.name == name) \
                or (isinstance(step, ir.Assign) and step.op == "+="
                    and isinstance(step.target, ir.VarRef) and step.target.name == name
                    and (fold(step.value) or 0) > 0)  # up by a constant: within the range
            if high is None or not stepped or writes.get(name) != 2:
                continue
            out.append((name, low, high - 1 if cond.op == "<" else high, loop))
    return out


def group_counter_ranges(body: ir.Block) -> dict[str, tuple[int, int]]:
    """The range of each counter of a group-level counted loop (``_counted_group_loops``),
    inside that loop (after it, the counter is one step past its range)."""
    return {name: (low, high) for name, low, high, _loop in _counted_group_loops(body)}


def _loop_ranges(body: ir.Block) -> dict[int, dict[str, tuple[int, int]]]:
    """For each work-item loop (by ``id``) inside group-level counted loops, the ranges of
    their counters there."""
    out: dict[int, dict[str, tuple[int, int]]] = {}
    for name, low, high, loop in _counted_group_loops(body):
        for n in walk(loop.body):
            if isinstance(n, wg.WorkItemLoop):
                out.setdefault(id(n), {})[name] = (low, high)
    return out


class _Splitter(Rewriter):
    def __init__(self, formed: FormedKernel, narrow_ids: bool):
        self.formed = formed
        self.narrow_ids = narrow_ids
        self.loop_ranges = _loop_ranges(formed.body)
        self.params = {p.name: p for p in formed.function.params}
        self.scalars = frozenset(n for n, p in self.params.items()
                                 if isinstance(p.type, ScalarType) and p.type.is_integer)
        self.notes: list[str] = []
        self.number = 0
        self.splits = 0  # SplitLoops made so far: the next one's bit in the launch's mask

    def rewrite_WorkItemLoop(self, loop: wg.WorkItemLoop) -> wg.WorkItemLoop | wg.SplitLoop:
        self.number += 1
        if loop.mask is not None or loop.plan is not None:
            return loop  # its work-items run in a fixed order; the plan's line says which
        model = model_of(loop.body, self.scalars, self.formed.local_size,
                         rows=self.formed.rows, narrow_ids=self.narrow_ids,
                         tables=self.formed.tables)
        guard = whole_guard(loop.body, model, self.formed.context_vars)
        empty = empty_test(guard, model)
        empty_expr = _empty_expr(empty, self.params)
        if empty:
            self.notes.append(f"work-item loop {self.number}: the group skips it where "
                              f"{empty_text(empty)}")
        lows, highs = row_bounds(guard, model)
        if lows or highs:
            loop = dataclasses.replace(
                loop, clip_lower=tuple(poly_expr(p, self.params) for p in lows),
                clip_upper=tuple(poly_expr(p, self.params) for p in highs))
            self.notes.append(f"work-item loop {self.number}: each row runs only the lanes "
                              f"where {_bounds_text(lows, highs)} (the guard's bounds)")
        else:
            loop = self._clipped_by_group(loop)
        plan = plan_split(loop.body, model)
        if isinstance(plan, str):
            self.notes.append(f"work-item loop {self.number}: no split ({plan})")
            return self._wide_only(loop, empty_expr)
        fast = dataclasses.replace(loop, body=fast_body(loop.body, plan))
        if loop.serial_reduction and not _varying_sum(fast.body, self.scalars, self.formed,
                                                      self.narrow_ids):
            fast = dataclasses.replace(fast, serial_reduction=False)
        plan, rotated = with_entry(plan, fast.body, self.scalars, self.formed, self.narrow_ids)
        score = score_plan(plan, loop.body, fast.body, self.formed, self.scalars,
                           self.narrow_ids)
        fast = dataclasses.replace(fast, body=rotated.body)
        if self.splits >= MAX_SPLITS:
            score = f"the kernel has {MAX_SPLITS} split loops already"
        if isinstance(score, str):
            self.notes.append(f"work-item loop {self.number}: no split ({score})")
            return self._wide_only(loop, empty_expr)
        facts = tuple(p for site in plan.sites for p in site.constraints)
        fast, wide = self._widened(fast, facts, "fast copy")
        whats = ", ".join(sorted({f"{s.what}s" for s in plan.sites}))
        reason = f"fast where {plan.domain_text()} ({len(plan.sites)} sites: {whats})"
        self.notes.append(f"work-item loop {self.number}: split along x, {reason}")
        loads = _table_loads(plan)
        if loads:
            self.notes.append(f"work-item loop {self.number}: table loads at their bounds: "
                              + ", ".join(loads))
        self.notes += [f"work-item loop {self.number}: fast copy: {n}" for n in rotated.notes]
        self.notes.append(f"work-item loop {self.number}: score " + "; ".join(score_lines(score)))
        index, self.splits = self.splits, self.splits + 1
        edges = edges_fail(guard, plan)
        if any(edges):
            which = " and ".join(w for w, e in zip(("below", "above"), edges, strict=True) if e)
            self.notes.append(f"work-item loop {self.number}: the lanes {which} the fast range "
                              "fail the guard: no loop runs them")
        return wg.SplitLoop(
            guarded=loop, fast=fast, test=_test_expr(plan.test, self.params, wide),
            lower=tuple(poly_expr(p, self.params) for p in plan.lower),
            upper=tuple(poly_expr(p, self.params) for p in plan.upper), reason=reason,
            index=index, score=score, empty=empty_expr, edges_fail=edges)


    def _widened(self, fast: wg.WorkItemLoop, facts: tuple[Poly, ...], what: str,
                 unsigned_only: bool = False, group: Mapping[str, ir.Param] | None = None
                 ) -> tuple[wg.WorkItemLoop, tuple[Poly, ...]]:
        """``fast`` with its 32-bit indices that cannot wrap where ``facts`` hold computed in
        ``long`` (``wide_index.py``), and the launch conditions that makes ``what`` (the
        copy's name in the plans) computes them so; ``group``: integer variables of the
        group-level code around the loop, read as further arguments."""
        params = {**self.params, **(group or {})}
        scalars = self.scalars | frozenset(group or ())
        model = model_of(fast.body, scalars, self.formed.local_size, rows=self.formed.rows,
                         narrow_ids=self.narrow_ids, tables=self.formed.tables)
        self._count_group_loops(model, {n: r for n, r in self.loop_ranges.get(id(fast), {}).items()
                                        if n in (group or {})})
        known = {n: _largest(params[n].type) for n in scalars}
        signed = frozenset(n for n in scalars if _signed(params[n].type))
        body, widened = widen_indices(fast.body, model, facts, known, signed, unsigned_only)
        conditions: list[Poly] = []
        shown: set[tuple[int, Poly]] = set()
        for w in widened:
            conditions += [p for p in w.conditions if p not in conditions]
            if (w.line, w.value) in shown:
                continue  # the components of one vector access
            shown.add((w.line, w.value))
            where = " where " + " and ".join(f"{p} >= 0" for p in w.conditions) \
                if w.conditions else ""
            self.notes.append(f"work-item loop {self.number}: {what}: index {w.value} "
                              f"(line {w.line}) in 64-bit arithmetic: no 32-bit wrap{where}")
        conditions = _tightest(conditions, min)
        if conditions:
            self.notes.append(f"work-item loop {self.number}: launch conditions of the {what}: "
                              + " and ".join(f"{p} >= 0" for p in conditions))
        return dataclasses.replace(fast, body=body), tuple(conditions)

    @staticmethod
    def _count_group_loops(model: Model, ranges: Mapping[str, tuple[int, int]]) -> None:
        """The counters of the group-level loops around a work-item loop, of known ``ranges``
        there, read as counters of ``model`` (bounded by constants, of either sign) rather than
        as arguments (a signed argument needs a test ``i >= 0``)."""
        for name, (low, high) in ranges.items():
            if low <= high:
                model.params = model.params - {name}
                model.counters[name] = Counter(name, Poly.const(low), Poly.const(high))

    def _wide_only(self, loop: wg.WorkItemLoop,
                   empty: ir.Expr | None) -> wg.WorkItemLoop | wg.SplitLoop:
        """``loop``, not split, with its 32-bit indices of unsigned arithmetic that cannot
        wrap on any lane of the group's tile computed in ``long`` (``wide_index.py``). Where that needs conditions on
        the group and the launch (``y * w + x`` with a ``uint w`` argument), a split with no
        bounds on ``gid0``: a group that meets them runs the wide copy, any other the loop as
        formed, so a wrapping index keeps its 32-bit value."""
        if not loop.simd:  # gcc does not vectorize it: its addresses need not be affine
            return dataclasses.replace(loop, empty=empty)
        # the counters of group-level loops around it counted between constants (an
        # interchanged tap loop's ``i``), as counters of that range. Other integers of the
        # group's code, read as arguments, gave wide copies and their tests inside lock-step
        # loops that cost a tiled sgemm and a reduction 3-5%: they are left out
        written = writes_in(loop.body)
        ranges = self.loop_ranges.get(id(loop), {})
        group = {n: ir.Param(n, t) for n, t in self.formed.group_scalars.items()
                 if n in ranges and isinstance(t, ScalarType) and t.is_integer
                 and not t.is_bool and n not in written and n not in self.formed.context_vars}
        model = model_of(loop.body, self.scalars | frozenset(group), self.formed.local_size,
                         rows=self.formed.rows, narrow_ids=self.narrow_ids)
        self._count_group_loops(model, {n: ranges[n] for n in group})
        wide, conditions = self._widened(loop, tile_facts(model), "wide copy", True, group)
        if wide.body == loop.body:
            return dataclasses.replace(loop, empty=empty)
        if not conditions:
            self.notes.append(f"work-item loop {self.number}: its indices in 64-bit "
                              "arithmetic on every launch")
            return dataclasses.replace(wide, empty=empty)
        reason = ("the wide copy where " + " and ".join(f"{p} >= 0" for p in conditions)
                  + " (no 32-bit index wraps)")
        self.notes.append(f"work-item loop {self.number}: versioned: {reason}, else as formed")
        return wg.SplitLoop(guarded=loop, fast=wide,
                            test=_test_expr((), {**self.params, **group}, conditions),
                            lower=(), upper=(), reason=reason, empty=empty)

    def _clipped_by_group(self, loop: wg.WorkItemLoop) -> wg.WorkItemLoop:
        """``loop`` running only the lanes between the guard's bounds of group-level values
        (``group_bounds``)."""
        lows, highs, used = group_bounds(loop.body, self.formed, self.scalars,
                                         self.narrow_ids)
        if not lows and not highs:
            return loop
        leaves = {**self.params, **{n: ir.Param(n, self.formed.group_scalars[n])
                                    for n in used}}
        self.notes.append(f"work-item loop {self.number}: runs only the lanes where "
                          f"{_bounds_text(lows, highs)} (the guard's bounds at group level)")
        return dataclasses.replace(loop, clip_lower=tuple(poly_expr(p, leaves) for p in lows),
                                   clip_upper=tuple(poly_expr(p, leaves) for p in highs))


def _table_loads(plan: SplitPlan) -> list[str]:
    """``CX[q] in [-1, 1]`` for each bounded table load (``affine.table_load``) a site's
    constraints read."""
    names = sorted({n for site in plan.sites for p in site.constraints for n in p.names()
                    if "[" in n and n in plan.model.counters})
    counters = plan.model.counters
    return [f"{n} in [{counters[n].low}, {counters[n].high}]" for n in names]


def with_entry(plan: SplitPlan, fast: ir.Stmt, scalars: frozenset[str], formed: FormedKernel,
               narrow_ids: bool) -> tuple[SplitPlan, Rotated]:
    """``plan`` with the first-iteration tests of the fast copy's rotated loops, and the
    rotation of ``fast`` (unrotated where the fast copy does not vectorize anyway)."""
    model = model_of(fast, scalars, formed.local_size, rows=formed.rows, narrow_ids=narrow_ids,
                     tables=formed.tables)
    rotated = rotate_entered(fast, model)
    if not rotated.entry:
        return plan, rotated
    test = _tightest(list(plan.test) + [p for p in rotated.entry if p.names()], min)
    if any(not p.names() and p.constant < 0 for p in rotated.entry):
        return plan, Rotated(fast, (), ())  # a loop never entered: leave it as it is
    return dataclasses.replace(plan, test=tuple(test)), rotated


def split_kernel(formed: FormedKernel, narrow_ids: bool) -> FormedKernel:
    """``formed`` with every work-item loop that has sites split (see the module docstring);
    one line per work-item loop added to the plans."""
    splitter = _Splitter(formed, narrow_ids)
    body = splitter.rewrite(formed.body)
    notes = list(splitter.notes)
    vectorize = formed.vectorize
    if not vectorize and any(s.fast.simd and not s.fast.serial_reduction
                             for s in find_all(body, wg.SplitLoop)):
        # the guarded copy's sums in loops of varying trip count made gcc's vectorizer not
        # pay; the fast copy's loops have a trip count the same for every lane, so its lanes
        # vectorize as a whole, and it runs nearly every lane
        vectorize = True
        notes.append("vectorizer on: the fast copy's float sums run loops whose trip count "
                     "is the same for every lane")
    return dataclasses.replace(formed, body=body, vectorize=vectorize,
                               plans=formed.plans + tuple(f"split: {n}" for n in notes))


def _varying_sum(body: ir.Stmt, scalars: frozenset[str], formed: FormedKernel,
                 narrow_ids: bool) -> bool:
    """Whether ``body`` accumulates floats in a loop the affine model cannot count with bounds
    the same for every lane (``Model.counters``): a sum gcc would vectorize in order."""
    model = model_of(body, scalars, formed.local_size, rows=formed.rows, narrow_ids=narrow_ids,
                     tables=formed.tables)

    def counted(loop: ir.Stmt) -> bool:
        return isinstance(loop, ir.For) and isinstance(loop.init, ir.DeclStmt) \
            and len(loop.init.decls) == 1 and loop.init.decls[0].name in model.counters

    return varying_float_sum(body, counted)


# ---------------------------------------------------------------- explaining a split


def _access_lines(body: ir.Stmt, model: Model) -> list[str]:
    out = []
    for a in accesses(body, model):
        index = "not affine" if a.index is None else str(a.index)
        out.append(f"{'write' if a.write else 'read '} {a.buffer}[{index}]: {a.kind}")
    return out


def explain(formed: FormedKernel, narrow_ids: bool,
            launch: Mapping[str, int] | None = None) -> list[str]:
    """What ``ppcl explain`` prints for one formed kernel: per work-item loop, the accesses as
    formed and in the fast copy, the fast subdomain as an islpy set, and with ``launch`` (the
    values of the parameters: scalar arguments, ``gsize0``..) how many groups and lanes a
    launch runs through the fast copy."""
    splitter = _Splitter(formed, narrow_ids)
    lines: list[str] = []
    for number, loop in enumerate(find_all(formed.body, wg.WorkItemLoop), 1):
        model = model_of(loop.body, splitter.scalars, formed.local_size, rows=formed.rows,
                         narrow_ids=narrow_ids, tables=formed.tables)
        lines.append(f"work-item loop {number}:")
        lines += [f"  {line}" for line in _access_lines(loop.body, model)]
        plain = loop.mask is None and loop.plan is None
        empty = empty_test(whole_guard(loop.body, model, formed.context_vars), model) \
            if plain else ()
        if empty:
            lines.append(f"  empty groups (skip the loop): where {empty_text(empty)}")
        plan = plan_split(loop.body, model) if plain else "masked or planned"
        if isinstance(plan, str):
            lines.append(f"  subkernels: guarded only ({plan})")
            continue
        fast = fast_body(loop.body, plan)
        plan, rotated = with_entry(plan, fast, splitter.scalars, formed, narrow_ids)
        fast_model = model_of(fast, splitter.scalars, formed.local_size, rows=formed.rows,
                              narrow_ids=narrow_ids, tables=formed.tables)
        bounds = [Poly.var("gid0") - p for p in plan.lower]
        bounds += [p - Poly.var("gid0") for p in plan.upper]
        domain = isl_set(list(plan.test) + bounds, ["gid0"])
        lines.append(f"  fast subdomain: {domain}")
        lines.append("  sites: " + ", ".join(sorted({s.what for s in plan.sites})))
        lines += [f"  fast copy: {n}" for n in rotated.notes]
        lines += [f"  fast {line}" for line in _access_lines(fast, fast_model)]
        score = score_plan(plan, loop.body, fast, formed, splitter.scalars, narrow_ids)
        if isinstance(score, str):
            lines.append(f"  subkernels: guarded only (the split is dropped: {score})")
            continue
        lines.append("  subkernels: split (the fast copy on the subdomain, guarded on the "
                     "others), guarded (the loop as formed)")
        lines.append("  score (estimated cost, the cheaper runs):")
        lines += [f"    {line}" for line in score_lines(score)]
        if launch is not None:
            lines.append("  launch: " + _launch_text(plan, formed.local_size, launch))
            lines.append("  launch picks: " + _pick_text(score, formed.local_size, launch))
    return lines


def _pick_text(score: wg.SplitScore, local: tuple[int, int, int],
               launch: Mapping[str, int]) -> str:
    """Which subkernel the dispatcher runs for ``launch``, with both costs."""
    gsize = (launch.get("gsize0", local[0]), launch.get("gsize1", local[1]),
             launch.get("gsize2", local[2]))
    values = launch_values(gsize, local, (0, 0, 0), launch)
    most = most_saved(score, gsize)
    if not worth_dispatching(score, gsize):
        return (f"guarded (the split saves at most {most} on this launch, less than a kept "
                f"choice costs: {LOOKUP_UNITS})")
    try:
        choice = choose(score, values)
    except KeyError as missing:
        return f"give a value for {missing.args[0]} (--arg NAME=VALUE)"
    v = choice.volumes
    kept = "" if worth_evaluating(score, gsize) else (
        f"; kept while the scalar values repeat: the split saves at most {most}, less than "
        f"choosing for new values costs ({DISPATCH_UNITS})")
    return (f"{choice.name} (split {choice.split_cost}, guarded {choice.guarded_cost}; "
            f"N={v.lanes}, F={v.fast}, R={v.rows}{kept})")


def _launch_text(plan: SplitPlan, local: tuple[int, int, int],
                 launch: Mapping[str, int]) -> str:
    """How many groups of the launch take the fast copy and how many of their lanes it runs."""
    gsize = [launch.get(f"gsize{d}", local[d]) for d in range(3)]
    groups = fast_groups = lanes = 0
    for b2 in range(0, gsize[2], local[2]):
        for b1 in range(0, gsize[1], local[1]):
            for b0 in range(0, gsize[0], local[0]):
                groups += 1
                values = dict(launch, base0=b0, base1=b1, base2=b2)
                try:
                    if not all(p.evaluate(values) >= 0 for p in plan.test):
                        continue
                    lo = max([b0] + [p.evaluate(values) for p in plan.lower])
                    hi = min([b0 + local[0] - 1] + [p.evaluate(values) for p in plan.upper])
                except KeyError as missing:
                    return f"give a value for {missing.args[0]} (--arg NAME=VALUE)"
                if lo <= hi:
                    fast_groups += 1
                    lanes += (hi - lo + 1) * local[1] * local[2]
    total = gsize[0] * gsize[1] * gsize[2]
    return (f"{fast_groups} of {groups} groups run the fast copy, "
            f"{lanes} of {total} work-items ({100.0 * lanes / max(total, 1):.1f}%)")
