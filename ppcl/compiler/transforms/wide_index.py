"""64-bit indices in the fast copy of a split loop, where 32-bit index arithmetic cannot wrap.

Kernels keep ids and sizes in ``uint`` or ``int`` and index with ``x + y * w`` in that type:
``in[c - 1 - w]`` is ``in + (unsigned)(c - 1 - w)``. Unsigned arithmetic wraps modulo 2^32 by
definition, so gcc must assume it may, and the address is then no affine function of the
work-item loop's counter: every access of the loop is a gather, or the loop is not vectorized
at all ("evolution of base is not affine").

Sums, differences and products are ring operations modulo 2^32, so a 32-bit index built of them
(over ids, sizes, scalar arguments, counters and constants, through conversions between integer
types of at least 32 bits) equals the exact value ``P`` of the same arithmetic modulo 2^32; when
``P`` lies in the index type's range, the index *is* ``P``, and computing it in ``long`` gives
the same element. On the fast copy's subdomain, each site's constraints hold for every lane
(``split.py``), which bounds the ids (``1 <= gid0 <= gsize0 - 2``); with the counters' bounds
and the ids' global bounds (``offset_d <= gid_d < offset_d + gsize_d``), ``P`` is bounded by
substituting each variable's bound by the sign of its monomial. A bound that is not a constant
is a *launch condition* (``gsize0 * gsize1 - 2 * gsize0 - 3 <= 4294967295``): the fast copy
runs only where it holds, and every other lane keeps the exact 32-bit arithmetic of the loop as
formed. So an unsigned wraparound that lands in bounds (``in[x - 1u + 1u]`` at ``x = 0``, an
overflowing ``a * b``) gives the same element everywhere it can happen.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ppcl.compiler.analysis.affine import LANES, Model, Poly, affine_of
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import LONG, PointerType, ScalarType, int_limits
from ppcl.compiler.ir.visit import Rewriter

# names that are never negative: sizes, offsets, group counts and positions, bases
_SIZES = ("gsize", "ngroups", "offset", "group", "base")


@dataclass(frozen=True)
class Widened:
    """One index of the fast copy computed in ``long``: its source line, its exact value and
    the launch conditions (each ``p >= 0``) under which that value does not wrap."""

    line: int
    value: Poly
    conditions: tuple[Poly, ...]


def _int32(t: object) -> ScalarType | None:
    ok = isinstance(t, ScalarType) and t.is_integer and not t.is_bool and t.size == 4
    return t if ok and isinstance(t, ScalarType) else None


def _wide_int(t: object) -> bool:
    return isinstance(t, ScalarType) and t.is_integer and not t.is_bool and t.size >= 4


def exact(e: ir.Expr, model: Model) -> tuple[Poly, ir.Expr] | None:
    """``e`` computed without wrapping: its value as a polynomial and a ``long`` expression
    for it, or None where ``e`` is not +, -, * over exactly modelled leaves (``affine_of``)
    through conversions between integer types of at least 32 bits."""
    e = model.chosen.get(e, e)
    if not _wide_int(e.type):
        return None
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*"):
        lhs, rhs = exact(e.lhs, model), exact(e.rhs, model)
        if lhs is None or rhs is None:
            return None
        value = lhs[0] + rhs[0] if e.op == "+" else lhs[0] - rhs[0] if e.op == "-" \
            else lhs[0] * rhs[0]
        return value, ir.Binary(LONG, e.op, lhs[1], rhs[1], loc=e.loc)
    if isinstance(e, ir.Unary) and e.op in ("+", "-"):
        inner = exact(e.operand, model)
        if inner is None:
            return None
        return (inner[0], inner[1]) if e.op == "+" else \
            (-inner[0], ir.Unary(LONG, "-", inner[1], loc=e.loc))
    if isinstance(e, ir.Cast) and _wide_int(e.operand.type):
        return exact(e.operand, model)  # modulo 2^32, a conversion is moot
    if isinstance(e, ir.IntLit):
        return Poly.const(e.value), ir.IntLit(LONG, e.value, loc=e.loc)
    if isinstance(e, ir.VarRef) and e.name in model.defs:
        return exact(model.defs[e.name], model)
    leaf = affine_of(e, model)
    if leaf is None or not (isinstance(e, ir.Call) or e.type.size <= 4):
        return None
    return leaf, ir.Cast(LONG, e, loc=e.loc)


def _bounds(facts: Iterable[Poly], model: Model) -> tuple[dict[str, Poly], dict[str, Poly]]:
    """Lower and upper bounds, over parameters only, of every lane and counter: the first
    fact ``p >= 0`` with a coefficient of +-1 on it and no other lane or counter, else the
    launch's range (the counter's bounds)."""
    free = set(LANES) | set(model.counters)
    low: dict[str, Poly] = {}
    high: dict[str, Poly] = {}
    for p in facts:
        if not p.is_affine:
            continue
        for v in free & p.names():
            if (p.names() - {v}) & free:
                continue
            a = p.coeff(v)
            rest = p - Poly.var(v).scale(a)
            if a == 1:
                low.setdefault(v, -rest)
            elif a == -1:
                high.setdefault(v, rest)
    for d, lane in enumerate(LANES):
        low.setdefault(lane, Poly.var(f"offset{d}"))
        high.setdefault(lane, Poly.var(f"offset{d}") + Poly.var(f"gsize{d}") - Poly.const(1))
    for name, c in model.counters.items():
        low.setdefault(name, c.low)
        high.setdefault(name, c.high)
    return low, high


def _sign(names: Iterable[str], nonneg: Mapping[str, int]) -> bool:
    return all(n in nonneg or n.rstrip("012") in _SIZES for n in names)


def _largest(name: str, nonneg: Mapping[str, int], model: Model) -> int:
    """The largest value of a name of known sign: an unsigned argument's type's, a size's
    (below 2^31 where every global id fits in int)."""
    if name in nonneg:
        return nonneg[name]
    return (1 << 31) - 1 if model.narrow_ids else (1 << 64) - 1


def extreme(p: Poly, model: Model, low: Mapping[str, Poly], high: Mapping[str, Poly],
            nonneg: Mapping[str, int], largest: bool) -> Poly | None:
    """A bound of ``p`` over the box ``low``..``high`` of its lanes and counters (the least
    value with ``largest`` False): each monomial at its own extreme, which needs at most one
    lane or counter in it and every other name of known sign. None where that fails."""
    free = set(LANES) | set(model.counters)
    out = Poly()
    for m, c in p.terms:
        inside = [n for n in m if n in free]
        if not inside:
            out = out + Poly.of({m: c})
            continue
        rest = tuple(n for n in m if n not in free)
        if len(inside) != 1 or not _sign(rest, nonneg):
            return None
        up = (c > 0) == largest
        v = inside[0]
        out = out + Poly.of({rest: c}) * (high[v] if up else low[v])
    return out


def _holds(p: Poly, nonneg: Mapping[str, int], model: Model) -> bool:
    """Whether ``p >= 0`` for every value of its names, all of known sign: each monomial at
    its least (0, or the product of the largest values where its coefficient is negative)."""
    if not all(_sign(m, nonneg) for m, _ in p.terms):
        return False
    least = 0
    for m, c in p.terms:
        if not m or c < 0:
            most = c
            for n in m:
                most *= _largest(n, nonneg, model)
            least += most
    return least >= 0


def _testable(p: Poly, nonneg: Mapping[str, int], model: Model) -> bool:
    """Whether a launch test ``p >= 0`` is safe to evaluate in ``long``: every name of known
    sign, and the sum of the monomials' magnitudes at the names' largest values below 2^63."""
    if not all(_sign(m, nonneg) for m, _ in p.terms):
        return False
    total = 0
    for m, c in p.terms:
        most = abs(c)
        for n in m:
            most *= _largest(n, nonneg, model)
        total += most
    return total < 1 << 63


def conditions(value: Poly, t: ScalarType, model: Model, facts: Iterable[Poly],
               nonneg: Mapping[str, int]) -> tuple[Poly, ...] | None:
    """The launch conditions under which ``value`` lies in the range of ``t`` over the
    fast subdomain (``facts``), or None where no bound can be found."""
    low, high = _bounds(facts, model)
    least = extreme(value, model, low, high, nonneg, largest=False)
    most = extreme(value, model, low, high, nonneg, largest=True)
    if least is None or most is None:
        return None
    floor, ceiling = int_limits(t)
    out = []
    for p in (least - Poly.const(floor), Poly.const(ceiling) - most):
        if _holds(p, nonneg, model):
            continue
        if not p.names() or not _testable(p, nonneg, model):
            return None  # fails on every launch, or too large to test
        out.append(p)
    return tuple(out)


class _Widen(Rewriter):
    def __init__(self, model: Model, facts: tuple[Poly, ...], nonneg: Mapping[str, int]):
        self.model = model
        self.facts = facts
        self.nonneg = nonneg
        self.done: list[Widened] = []

    def widen(self, e: ir.Expr) -> ir.Expr | None:
        t = _int32(e.type)
        if t is None:
            return None
        found = exact(e, self.model)
        if found is None:
            return None
        value, wide = found
        if not value.names() & (set(LANES) | set(self.model.counters)):
            return None  # the same for every lane: gcc hoists it as it is
        conds = conditions(value, t, self.model, self.facts, self.nonneg)
        if conds is None:
            return None
        self.done.append(Widened(e.loc.line, value, conds))
        return wide

    def rewrite_Index(self, e: ir.Index) -> ir.Expr:
        if not isinstance(e.base.type, PointerType):
            return e
        wide = self.widen(e.index)
        return e if wide is None else ir.Index(e.type, e.base, wide, loc=e.loc)

    def rewrite_Binary(self, e: ir.Binary) -> ir.Expr:
        if e.op not in ("+", "-") or not isinstance(e.type, PointerType) \
                or not isinstance(e.lhs.type, PointerType):
            return e
        wide = self.widen(e.rhs)
        return e if wide is None else ir.Binary(e.type, e.op, e.lhs, wide, loc=e.loc)


def widen_indices(body: ir.Stmt, model: Model, facts: tuple[Poly, ...],
                  nonneg: Mapping[str, int]) -> tuple[ir.Stmt, tuple[Widened, ...]]:
    """``body`` (a fast copy, ``model`` its model) with every 32-bit index that cannot wrap
    on the subdomain where ``facts`` hold computed in ``long``, and what was widened.
    ``nonneg``: the scalar arguments that are never negative (unsigned), by their largest
    value."""
    widen = _Widen(model, facts, nonneg)
    out: ir.Stmt = widen.rewrite(body)
    return out, tuple(widen.done)
