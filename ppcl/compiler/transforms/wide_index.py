"""64-bit indices where 32-bit index arithmetic cannot wrap: in the fast copy of a split loop,
and in a *wide copy* of a loop that is not split.

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

An unsigned index with no arithmetic of its own (``uint gid = get_global_id(0)``, printed
``(uint)__gb0 + (uint)__lx``, which gcc must let wrap) is widened in the fast copy too.
A loop with no split (no guard or clamp to decide, or one not worth it) is widened the same
way, its indices of unsigned arithmetic only (``_unsigned_arithmetic``: a signed one cannot
wrap in a defined kernel), with the bounds of a lane in its group's tile as the facts
(``tile_facts``): a local
position is then bounded by constants, and ``y * w + x`` with a ``uint w`` argument by a test of
the group's base and ``w`` (``(base1 + 15) * w + base0 + 15 <= 4294967295``). ``split.py``
makes that test a split with no bounds along x: a group that passes it runs the wide copy, any
other the loop as formed. A bound like that one reaches 2^63 where ids fit in ``int``, so a
test compares its two sides in ``ulong``. A signed argument in a bound (``y * width + x`` with
``int width``) is bounded by its magnitude, with ``width >= 0`` one more condition.

An index that is a variable whole (``tock[id]`` with ``uint id = idy * nx + idx``) reads a
``long`` companion declared after the variable (``COMPANION``), not its own copy of the sum:
gcc sees one address where the branches of an ``if`` store to it, and if-converts them into
one store; a copy of the sum per branch left four masked stores it could not vectorize.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ppcl.compiler.analysis.affine import BASES, GROUPS, LANES, Model, Poly, affine_of
from ppcl.compiler.analysis.uniformity import const_int
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import LONG, SIZE_T, UINT, PointerType, ScalarType, int_limits
from ppcl.compiler.ir.visit import Rewriter, walk

# the suffix of a variable's ``long`` companion (``_Widen.rewrite_Block``)
COMPANION = "__ppcl_w"
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
    position = _group_position(e, model)
    if position is not None:
        return position
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


def _reaches(e: ir.Expr, model: Model, found: Callable[[ir.Expr], bool]) -> bool:
    """Whether ``found`` holds of a node of ``e`` or of the value of a variable it reads,
    through the model's single definitions."""
    todo = [e]
    seen: set[str] = set()
    while todo:
        for n in walk(todo.pop()):
            if isinstance(n, ir.Expr) and found(n):
                return True
            if isinstance(n, ir.VarRef) and n.name in model.defs and n.name not in seen:
                seen.add(n.name)
                todo.append(model.defs[n.name])
    return False


def _wraps_32(n: ir.Expr) -> bool:
    """``+``, ``-`` or ``*`` in a 32-bit unsigned type, or a wider value converted to one
    (an id query's conversion aside: ids fit in ``int``)."""
    if isinstance(n, ir.Binary | ir.Unary) and n.op in ("+", "-", "*"):
        t = _int32(n.type)
        return t is not None and not t.is_signed
    t = _int32(n.type) if isinstance(n, ir.Cast) else None
    return isinstance(n, ir.Cast) and t is not None and not t.is_signed \
        and _wide_int(n.operand.type) and n.operand.type.size > 4 \
        and not isinstance(_bare(n.operand), ir.Call)


def _truncates_sum(n: ir.Expr) -> bool:
    """A sum, difference or product of a wider unsigned type converted to 32 bits."""
    if not isinstance(n, ir.Cast) or _int32(n.type) is None:
        return False
    inner = _bare(n.operand)
    t = inner.type
    return isinstance(inner, ir.Binary) and inner.op in ("+", "-", "*") \
        and isinstance(t, ScalarType) and not t.is_signed and t.size > 4


def _unsigned_arithmetic(e: ir.Expr, model: Model) -> bool:
    """Whether ``e`` adds, subtracts or multiplies in a 32-bit unsigned type somewhere, or
    converts a wider sum to one (its variables' values included): arithmetic that wraps by
    definition. A sum converted to ``int`` counts as signed arithmetic, as in the affine model
    (``analysis/affine._wrapped``), and the conversion of an id query not at all: ids fit in
    ``int``."""
    return _reaches(e, model, _wraps_32)


def _truncated_sum(e: ir.Expr, model: Model) -> bool:
    """Whether ``e`` converts a sum, difference or product of a wider unsigned type to a
    32-bit one somewhere (its variables' values included), as ``int i = get_global_id(1) * w
    + get_global_id(0)`` does in ``size_t``: the conversion keeps the value modulo 2^32, which
    gcc cannot follow along the work-item loop (it left such a loop scalar). The affine model
    reads it as the same arithmetic in ``int`` (``analysis/affine._wrapped``), so in a split's
    fast copy it is one shape with the ``int`` arithmetic on converted ids; a loop that is not
    split gives it a wide copy."""
    return _reaches(e, model, _truncates_sum)


def _bare(e: ir.Expr) -> ir.Expr:
    while isinstance(e, ir.Cast) and _wide_int(e.type) and _wide_int(e.operand.type):
        e = e.operand
    return e


def _query_dim(e: ir.Expr, name: str) -> int | None:
    e = _bare(e)
    if isinstance(e, ir.Call) and e.builtin is not None and e.name == name and e.args:
        dim = const_int(e.args[0])
        return dim if dim is not None and 0 <= dim <= 2 else None
    return None


def _group_position(e: ir.Expr, model: Model) -> tuple[Poly, ir.Expr] | None:
    """``get_group_id(d) * get_local_size(d) + get_local_id(d)`` (factors and terms in either
    order, the size as a call or as the build's constant) is ``gid_d - offset_d`` by OpenCL's
    definition: in a row of groups, where the model follows neither id along x, too."""
    e = _bare(e)
    if not isinstance(e, ir.Binary) or e.op != "+":
        return None
    for scaled, local in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
        d = _query_dim(local, "get_local_id")
        scaled = _bare(scaled)
        if d is None or not isinstance(scaled, ir.Binary) or scaled.op != "*" \
                or not all(_wide_int(x.type) for x in (scaled, scaled.lhs, scaled.rhs)):
            continue
        for group, size in ((scaled.lhs, scaled.rhs), (scaled.rhs, scaled.lhs)):
            if _query_dim(group, "get_group_id") != d:
                continue
            bare = _bare(size)
            if _query_dim(bare, "get_local_size") == d or (
                    isinstance(bare, ir.IntLit) and bare.value == model.local_size[d]):
                value = Poly.var(LANES[d]) - Poly.var(f"offset{d}")
                wide = ir.Binary(LONG, "-", ir.Cast(LONG, _call("get_global_id", d)),
                                 ir.Cast(LONG, _call("get_global_offset", d)), loc=e.loc)
                return value, wide
    return None


def _call(name: str, dim: int) -> ir.Expr:
    return ir.Call(SIZE_T, name, (ir.IntLit(UINT, dim),), builtin=f"{name}__uint")


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
    (below 2^31 where every global id fits in int; a group's base then leaves room for its
    whole tile, as OpenCL 1.2's groups are uniform, and a group id is that base over the
    local size)."""
    if name in nonneg:
        return nonneg[name]
    if not model.narrow_ids:
        return (1 << 64) - 1
    if name in BASES:
        return (1 << 31) - model.local_size[BASES.index(name)]
    if name in GROUPS:  # its group's base, a multiple of the local size, is below 2^31
        return (1 << 31) // model.local_size[GROUPS.index(name)] - 1
    return (1 << 31) - 1


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


def _magnitude(m: tuple[str, ...], c: int, nonneg: Mapping[str, int], model: Model) -> int:
    most = abs(c)
    for n in m:
        most *= _largest(n, nonneg, model)
    return most


def is_sign_test(p: Poly) -> bool:
    """Whether ``p >= 0`` is ``name >= 0``, the condition on a signed argument (``conditions``),
    which is tested in ``long``; every other launch condition compares two sums in ``ulong``
    (``split.py``)."""
    return len(p.terms) == 1 and len(p.terms[0][0]) == 1 and p.terms[0][1] == 1


def _sides(p: Poly, nonneg: Mapping[str, int], model: Model) -> tuple[int, int]:
    """The largest values of the two sums ``p >= 0`` compares: its negative terms negated
    against its positive ones."""
    low = sum(_magnitude(m, c, nonneg, model) for m, c in p.terms if c < 0)
    high = sum(_magnitude(m, c, nonneg, model) for m, c in p.terms if c > 0)
    return low, high


def _testable(p: Poly, nonneg: Mapping[str, int], model: Model) -> bool:
    """Whether a launch test ``p >= 0`` is safe to evaluate: every name of known sign, and
    each of the two sums it compares (``_sides``) below 2^64, in ``ulong``: a row index times
    a ``uint`` width reaches 2^63 where ids fit in ``int``."""
    if not all(_sign(m, nonneg) for m, _ in p.terms):
        return False
    return all(side < 1 << 64 for side in _sides(p, nonneg, model))


def conditions(value: Poly, t: ScalarType, model: Model, facts: Iterable[Poly],
               nonneg: Mapping[str, int],
               assumed: frozenset[str] = frozenset()) -> tuple[Poly, ...] | None:
    """The launch conditions under which ``value`` lies in the range of ``t`` over the
    fast subdomain (``facts``), or None where no bound can be found. ``assumed``: the names
    of ``nonneg`` that are signed arguments (an ``int width``), bounded there by their
    magnitude: a bound that reads one has ``name >= 0`` among its conditions."""
    low, high = _bounds(facts, model)
    least = extreme(value, model, low, high, nonneg, largest=False)
    most = extreme(value, model, low, high, nonneg, largest=True)
    if least is None or most is None:
        return None
    floor, ceiling = int_limits(t)
    out = [Poly.var(n) for n in sorted((least.names() | most.names()) & assumed)]
    for p in (least - Poly.const(floor), Poly.const(ceiling) - most):
        if _holds(p, nonneg, model):
            continue
        if not p.names() or not _testable(p, nonneg, model):
            return None  # fails on every launch, or too large to test
        out.append(p)
    return tuple(out)


def tile_facts(model: Model) -> tuple[Poly, ...]:
    """The bounds of a lane in its group's tile, ``base_d <= gid_d <= base_d + L_d - 1``, as
    facts ``p >= 0`` for ``conditions``: a local position (``(lid1 + 1) * (L0 + 2) + lid0``)
    is then bounded by constants, and a global one by the group's base. Along x in a row of
    groups the lanes span the row, bounded by the launch's range alone."""
    out: list[Poly] = []
    for d, lane in enumerate(LANES):
        if model.rows and d == 0:
            continue
        gid, base = Poly.var(lane), Poly.var(BASES[d])
        out += [gid - base, base + Poly.const(model.local_size[d] - 1) - gid]
    return tuple(out)


class _Widen(Rewriter):
    def __init__(self, model: Model, facts: tuple[Poly, ...], nonneg: Mapping[str, int],
                 assumed: frozenset[str], in_blocks: frozenset[str], unsigned_only: bool):
        self.model = model
        self.unsigned_only = unsigned_only
        self.facts = facts
        self.nonneg = nonneg
        self.assumed = assumed
        self.in_blocks = in_blocks  # variables declared by a statement of a block
        self.done: list[Widened] = []
        self.companions: dict[str, ir.Expr] = {}  # variable -> its value in ``long``

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
        nonneg, assumed = self.nonneg, self.assumed
        # also an unsigned index with no arithmetic of its own (``uint i = get_global_id(0)``
        # is ``(uint)__gb0 + (uint)__lx`` in C, which gcc must let wrap), and in a loop that
        # is not split a wider sum truncated to 32 bits
        wraps = _unsigned_arithmetic(e, self.model) or not t.is_signed \
            or (self.unsigned_only and _truncated_sum(e, self.model))
        if self.unsigned_only and not wraps:
            return None
        if not wraps:
            # signed arithmetic does not wrap in a defined kernel: a signed argument's sign
            # is left unknown, and such an index stays as it was (``widen.py``'s concern)
            nonneg = {n: v for n, v in nonneg.items() if n not in assumed}
            assumed = frozenset()
        conds = conditions(value, t, self.model, self.facts, nonneg, assumed)
        if conds is None:
            return None
        self.done.append(Widened(e.loc.line, value, conds))
        var = e
        while isinstance(var, ir.Cast) and _wide_int(var.operand.type):
            var = var.operand
        if isinstance(var, ir.VarRef) and var.name in self.model.defs \
                and var.name in self.in_blocks:
            # one value for every access through the variable: gcc then sees one address
            # where the branches of an if store to it, and if-converts them into one store
            self.companions[var.name] = wide
            return ir.VarRef(LONG, var.name + COMPANION, loc=e.loc)
        return wide

    def rewrite_Block(self, b: ir.Block) -> ir.Block:
        """Each variable an index reads whole gets its ``long`` companion declared after it:
        its value bounded as the index's is, on every lane the copy runs."""
        stmts: list[ir.Stmt] = []
        for s in b.stmts:
            stmts.append(s)
            if not isinstance(s, ir.DeclStmt):
                continue
            for d in s.decls:
                wide = self.companions.get(d.name)
                if wide is not None:
                    stmts.append(ir.DeclStmt((ir.VarDecl(d.name + COMPANION, LONG, const=True,
                                                         init=wide, loc=d.loc),), loc=s.loc))
        return b if len(stmts) == len(b.stmts) else ir.Block(tuple(stmts), loc=b.loc)

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
                  nonneg: Mapping[str, int], assumed: frozenset[str] = frozenset(),
                  unsigned_only: bool = False) -> tuple[ir.Stmt, tuple[Widened, ...]]:
    """``body`` (a copy of a loop, ``model`` its model) with every 32-bit index that cannot
    wrap on the subdomain where ``facts`` hold computed in ``long``, and what was widened.
    ``nonneg``: the scalar arguments of known sign by their largest magnitude: unsigned ones,
    and the signed ones of ``assumed``, which a launch condition keeps from being negative
    (``conditions``). ``unsigned_only``: only indices with unsigned arithmetic in them (a
    loop's wide copy: signed ones cannot wrap in a defined kernel, ``widen.py`` and gcc see
    them as they are)."""
    in_blocks = frozenset(d.name for b in walk(body) if isinstance(b, ir.Block)
                          for s in b.stmts if isinstance(s, ir.DeclStmt) for d in s.decls)
    widen = _Widen(model, facts, nonneg, assumed, in_blocks, unsigned_only)
    out: ir.Stmt = widen.rewrite(body)
    return out, tuple(widen.done)
