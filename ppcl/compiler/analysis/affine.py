"""An affine model of the work-items of a formed kernel, after the input space splitting paper
(Moll, Doerfert, Hack, Section 5).

A work-item loop runs one statement list for every lane of a work-group (or of a row of
groups). Its iteration domain has one dimension per global id, ``gid0``..``gid2`` (the paper's
``i_d + GroupOffset_d``), each in ``[base_d, base_d + L_d)`` where ``base_d`` is the global id of
the group's first lane and ``L_d`` the local size the build is specialized for, plus one
dimension per counted loop of the body (its counter, between bounds that are affine in the
parameters). The parameters are the group bases, the launch's sizes (``gsize_d``,
``ngroups_d``, ``group_d``, ``offset_d``) and the kernel's integer scalar arguments that the
kernel never writes, by their own names.

``affine_of`` maps an integer expression to a polynomial over those names (``Poly``: affine
when every monomial has degree <= 1; ``w * gid1`` is kept as a degree-2 monomial so that an
access ``in[y * w + x]`` is still known to move by 1 along ``gid0``). It answers None, never a
wrong value, for anything it cannot model exactly: division, shifts, unsigned subtraction
(which wraps; but not ``gsize_d - c`` for a constant up to the local size, see ``_size_less``),
a variable written after its declaration, a conversion that may change the
value, a call other than the id queries. (``constraint_assuming``, for the split's conditions,
takes an unsigned difference or sum and a signed value converted to unsigned as exact, with
the constraints under which they are, which the split then tests with its subdomain.) Those
parts are over-approximated as the paper does:
an access whose index is None may touch the whole buffer and is divergent, a condition that is
None is kept as it is in every version of the code.

A comparison becomes a constraint ``p >= 0`` (``constraint_of``); ``Access`` classifies a memory
access along ``gid0`` (uniform, consecutive, strided, divergent) as Section 3.2.2 defines them;
``isl_set`` turns constraints into an islpy set, the form ``ppcl explain`` prints and the tests
check the split predicates against (``tile_inside``: the group bases whose whole tile lies in
a domain). Min, max and clamp are not affine; ``transforms/split.py`` chooses one of their
arguments on a subdomain and asks this model again.

A load from a ``__constant`` program-scope table of integers with a literal initializer
(``table_bounds``: ``CX[q]`` of a lattice's velocity table) at an index the same for every lane
is a name of its own, ``CX[q]``, bounded by the table's least and largest value: the model
keeps it among the counters (a value somewhere in ``[low, high]``, which every use takes at
its worst), so ``x - CX[q] >= 0`` holds for every ``q`` where ``gid0 >= max(CX)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ppcl.compiler.analysis.effects import Effects, effects
from ppcl.compiler.analysis.uniformity import const_int
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import AddressSpace, ArrayType, PointerType, ScalarType
from ppcl.compiler.ir.visit import Node, walk

Monomial = tuple[str, ...]  # sorted names; () is the constant term

LANES = ("gid0", "gid1", "gid2")
BASES = ("base0", "base1", "base2")
GROUPS = ("group0", "group1", "group2")  # get_group_id(d), as _SIZE_QUERIES names it
_SIZE_QUERIES = {"get_global_size": "gsize", "get_num_groups": "ngroups",
                 "get_group_id": "group", "get_global_offset": "offset"}


@dataclass(frozen=True)
class Poly:
    """A polynomial with integer coefficients over named integers; ``terms`` sorted, no zero
    coefficients."""

    terms: tuple[tuple[Monomial, int], ...] = ()

    @staticmethod
    def of(terms: Mapping[Monomial, int]) -> Poly:
        return Poly(tuple(sorted((m, c) for m, c in terms.items() if c != 0)))

    @staticmethod
    def const(value: int) -> Poly:
        return Poly.of({(): value})

    @staticmethod
    def var(name: str) -> Poly:
        return Poly.of({(name,): 1})

    def __add__(self, other: Poly) -> Poly:
        out = dict(self.terms)
        for m, c in other.terms:
            out[m] = out.get(m, 0) + c
        return Poly.of(out)

    def scale(self, k: int) -> Poly:
        return Poly.of({m: c * k for m, c in self.terms})

    def __neg__(self) -> Poly:
        return self.scale(-1)

    def __sub__(self, other: Poly) -> Poly:
        return self + (-other)

    def __mul__(self, other: Poly) -> Poly:
        out: dict[Monomial, int] = {}
        for m1, c1 in self.terms:
            for m2, c2 in other.terms:
                m = tuple(sorted(m1 + m2))
                out[m] = out.get(m, 0) + c1 * c2
        return Poly.of(out)

    @property
    def constant(self) -> int:
        return dict(self.terms).get((), 0)

    @property
    def is_affine(self) -> bool:
        return all(len(m) <= 1 for m, _ in self.terms)

    def coeff(self, name: str) -> int:
        """The coefficient of the degree-1 monomial ``name``."""
        return dict(self.terms).get((name,), 0)

    def names(self) -> set[str]:
        return {n for m, _ in self.terms for n in m}

    def mentions_nonlinearly(self, name: str) -> bool:
        return any(name in m and len(m) > 1 for m, _ in self.terms)

    def substitute(self, name: str, value: Poly) -> Poly:
        out = Poly()
        for m, c in self.terms:
            term = Poly.const(c)
            for n in m:
                term = term * (value if n == name else Poly.var(n))
            out = out + term
        return out

    def evaluate(self, values: Mapping[str, int]) -> int:
        total = 0
        for m, c in self.terms:
            prod = c
            for n in m:
                prod *= values[n]
            total += prod
        return total

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts: list[str] = []
        for m, c in sorted(self.terms, key=lambda t: (len(t[0]) == 0, t[0])):
            name = "*".join(m)
            mag = abs(c)
            text = str(mag) if not name else (name if mag == 1 else f"{mag}*{name}")
            parts.append(("- " if c < 0 else "+ ") + text)
        out = " ".join(parts)
        return out[2:] if out.startswith("+ ") else "-" + out[2:]


@dataclass(frozen=True)
class Counter:
    """A counted loop of the body: ``name`` runs from ``low`` to ``high`` (inclusive), both
    affine in the parameters, by steps of 1; or a bounded table load (``table_load``), some
    value in ``[low, high]``."""

    name: str
    low: Poly
    high: Poly


@dataclass
class Model:
    """What ``affine_of`` needs to know about one work-item loop body (``model_of``)."""

    params: frozenset[str]  # integer scalar arguments the kernel never writes
    local_size: tuple[int, int, int]
    rows: bool  # the loop runs a row of groups: local id and group id along x vary per group
    narrow_ids: bool  # every global id fits in int: (int)get_global_id(d) is exact
    defs: dict[str, ir.Expr] = field(default_factory=dict)  # single-assignment integer locals
    counters: dict[str, Counter] = field(default_factory=dict)
    chosen: Mapping[ir.Expr, ir.Expr] = field(default_factory=dict)  # min/max -> chosen arg
    # ``__constant`` integer tables: name -> (least, largest value) (``table_bounds``)
    tables: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    # where not None, unsigned ``a - b`` and ``a + b`` are modelled as the integers' difference
    # and sum, and the constraint under which they do not wrap is appended here
    # (``constraint_assuming``)
    assumed: list[Poly] | None = None


def _scalar(t: object) -> ScalarType | None:
    return t if isinstance(t, ScalarType) and t.is_integer and not t.is_bool else None


def _exact_cast(to: ScalarType, e: ir.Expr, model: Model) -> bool:
    """Whether converting ``e`` to ``to`` keeps its value for every value ``e`` may take."""
    src = _scalar(e.type)
    if src is None:
        return False
    if isinstance(e, ir.IntLit):
        return _wrap(e.value, to) == e.value
    if isinstance(e, ir.Call) and e.name == "get_global_id" and model.narrow_ids \
            and to.size >= 4:
        return True
    if isinstance(e, ir.Call) and e.name == "get_local_id" and to.size >= 4:
        return True  # below the local size, which an int holds
    if isinstance(e, ir.Call) and e.name in ("get_global_size", "get_global_offset") \
            and model.narrow_ids and to.size >= 4:
        return True  # offset + size - 1 is a global id, which fits in int: so do both
    if src.is_signed == to.is_signed:
        return to.size >= src.size
    if not src.is_signed:  # unsigned into a wider signed type
        return to.size > src.size
    return False


def _wrap(value: int, to: ScalarType) -> int:
    """``value`` converted to the integer type ``to``: modulo 2^bits, into its range."""
    bits = to.size * 8
    value &= (1 << bits) - 1
    return value - (1 << bits) if to.is_signed and value >> (bits - 1) else value


def affine_of(e: ir.Expr, model: Model) -> Poly | None:
    """``e`` as a polynomial over the model's names, or None where that would not be exact."""
    e = model.chosen.get(e, e)
    t = _scalar(e.type)
    if t is None:
        return None
    if isinstance(e, ir.IntLit):
        return Poly.const(e.value)
    if isinstance(e, ir.VarRef):
        if e.name in model.params:
            return Poly.var(e.name)
        if e.name in model.counters:
            return Poly.var(e.name)
        if e.name in model.defs:
            return affine_of(model.defs[e.name], model)
        return None
    if isinstance(e, ir.Cast):
        if _exact_cast(t, e.operand, model):
            return affine_of(e.operand, model)
        wrapped = _wrapped(e.operand, t, model)
        if wrapped is None and model.assumed is not None:
            return _assumed_unsigned(e.operand, t, model)
        return wrapped
    if isinstance(e, ir.Unary):
        inner = affine_of(e.operand, model)
        if inner is None:
            return None
        if e.op == "+":
            return inner
        if e.op == "-" and t.is_signed:
            return -inner
        return None
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*"):
        if not t.is_signed and (e.op == "-" or t.size < 8):
            sized = _size_less(e, model)  # unsigned arithmetic may wrap
            if sized is not None or model.assumed is None or e.op == "*":
                return sized
            return _assumed_exact(e, t, model)
        lhs, rhs = affine_of(e.lhs, model), affine_of(e.rhs, model)
        if lhs is None or rhs is None:
            return None
        return lhs + rhs if e.op == "+" else lhs - rhs if e.op == "-" else lhs * rhs
    if isinstance(e, ir.Call) and e.builtin is not None and e.args:
        return _query(e, model)
    if isinstance(e, ir.Index):
        name = table_load(e, model)
        return Poly.var(name) if name is not None and name in model.counters else None
    return None


def table_load(e: ir.Index, model: Model) -> str | None:
    """The name of a load from a bounded ``__constant`` table (``Model.tables``) at an index
    the same for every lane (affine over counters and parameters), ``CX[q]``; None for any
    other access. A load whose index moves with the lane is not one name: its value would
    look uniform along x."""
    base = e.base
    if not (isinstance(base, ir.VarRef) and base.name in model.tables):
        return None
    index = affine_of(e.index, model)
    if index is None or index.names() & set(LANES):
        return None
    return f"{base.name}[{index}]"


def table_bounds(module: ir.Module) -> dict[str, tuple[int, int]]:
    """The least and largest value of every ``__constant`` program-scope array of integers
    whose initializer is a list of integer constants (elements it leaves out are 0): a load
    from it lies between them, whatever its index (one past the end is undefined). A table of
    another type, space or initializer is left out."""
    out: dict[str, tuple[int, int]] = {}
    for top in module.decls:
        if not isinstance(top, ir.GlobalVar):
            continue
        decl = top.decl
        t = decl.type
        elem = _scalar(t.elem) if isinstance(t, ArrayType) else None
        if decl.space is not AddressSpace.CONSTANT or not isinstance(t, ArrayType) \
                or elem is None or not isinstance(decl.init, ir.InitList):
            continue
        values = [const_int(v) for v in decl.init.elems]
        length = len(values) if t.length is None else t.length
        if not values or any(v is None for v in values) or len(values) > length:
            continue
        known = [_wrap(v, elem) for v in values if v is not None]
        if len(known) < length:
            known.append(0)
        out[decl.name] = (min(known), max(known))
    return out


def _size_less(e: ir.Binary, model: Model) -> Poly | None:
    """``gsize_d - c`` in unsigned arithmetic, for a constant ``c`` no larger than the local
    size ``L_d``, as in ``x < get_global_size(0) - 1``: a global size is a multiple of the
    local size, so at least ``L_d``, and the difference does not wrap. None otherwise."""
    if e.op != "-":
        return None
    lhs, rhs = affine_of(e.lhs, model), affine_of(e.rhs, model)
    if lhs is None or rhs is None or rhs.names():
        return None
    for d in range(3):
        if lhs == Poly.var(f"gsize{d}") and 0 <= rhs.constant <= model.local_size[d]:
            return lhs - rhs
    return None


def _assumed_exact(e: ir.Binary, t: ScalarType, model: Model) -> Poly | None:
    """Unsigned ``a - b`` or ``a + b`` as the integers' difference or sum, with the constraint
    under which C's result is that value appended to ``model.assumed``: ``a - b >= 0``, or
    ``a + b`` at most the type's largest value."""
    assert model.assumed is not None
    lhs, rhs = affine_of(e.lhs, model), affine_of(e.rhs, model)
    if lhs is None or rhs is None:
        return None
    if e.op == "-":
        value = lhs - rhs
        model.assumed.append(value)
    else:
        value = lhs + rhs
        model.assumed.append(Poly.const((1 << (8 * t.size)) - 1) - value)
    return value


def _assumed_unsigned(e: ir.Expr, to: ScalarType, model: Model) -> Poly | None:
    """A signed ``e`` converted to the unsigned type ``to``, at least as wide, as in ``gid <
    n`` with ``uint gid`` and ``int n`` (C converts ``n``): the same value, with ``e >= 0``
    appended to ``model.assumed`` (a negative ``n`` becomes a huge bound)."""
    assert model.assumed is not None
    src = _scalar(e.type)
    if src is None or not src.is_signed or to.is_signed or to.size < src.size:
        return None
    value = affine_of(e, model)
    if value is not None:
        model.assumed.append(value)
    return value


def _wrapped(e: ir.Expr, to: ScalarType, model: Model) -> Poly | None:
    """``(to)e`` for an integer ``e`` at least as wide as the signed type ``to``, as in
    ``int j = get_global_id(0) + k + 1``: the conversion keeps ``e``'s value modulo 2^bits, which
    the sum, difference or product of its operands converted to ``to`` has as well. So ``e``
    is the same polynomial as that arithmetic in ``to`` (assumed, as all signed arithmetic here,
    to stay in the type's range) where each leaf converts exactly: ``int j = gid + k + 1`` and
    ``int g = gid; int j = g + k + 1`` are one shape. None where a leaf does not."""
    e = model.chosen.get(e, e)
    src = _scalar(e.type)
    if src is None or not to.is_signed or src.size < to.size:
        return None
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*"):
        lhs, rhs = _wrapped(e.lhs, to, model), _wrapped(e.rhs, to, model)
        if lhs is None or rhs is None:
            return None
        return lhs + rhs if e.op == "+" else lhs - rhs if e.op == "-" else lhs * rhs
    if isinstance(e, ir.Unary) and e.op in ("+", "-"):
        inner = _wrapped(e.operand, to, model)
        return None if inner is None else inner if e.op == "+" else -inner
    if isinstance(e, ir.IntLit):
        return Poly.const(_wrap(e.value, to))
    if isinstance(e, ir.Cast) and (_scalar(e.operand.type) or to).size >= to.size:
        return _wrapped(e.operand, to, model)  # modulo 2^bits, a widening or narrowing is moot
    if _exact_cast(to, e, model):
        return affine_of(e, model)
    if isinstance(e, ir.VarRef) and e.name in model.defs:
        return _wrapped(model.defs[e.name], to, model)
    return None


def _query(e: ir.Call, model: Model) -> Poly | None:
    dim = const_int(e.args[0])
    if dim is None or not 0 <= dim <= 2:
        return None
    if e.name == "get_global_id":
        return Poly.var(LANES[dim])
    if e.name == "get_local_size":
        return Poly.const(model.local_size[dim])
    if model.rows and dim == 0 and e.name in ("get_local_id", "get_group_id"):
        return None  # varies per group along a row
    if e.name == "get_local_id":
        return Poly.var(LANES[dim]) - Poly.var(BASES[dim])
    if e.name in _SIZE_QUERIES:
        return Poly.var(f"{_SIZE_QUERIES[e.name]}{dim}")
    return None


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def constraint_of(e: ir.Expr, model: Model, negate: bool = False) -> Poly | None:
    """The comparison ``e`` (or its negation) as ``p >= 0``; None if it is not one or is not
    exactly affine."""
    while isinstance(e, ir.Cast) and e.implicit:
        e = e.operand
    if not isinstance(e, ir.Binary) or e.op not in _FLIP:
        return None
    lhs, rhs = affine_of(e.lhs, model), affine_of(e.rhs, model)
    if lhs is None or rhs is None:
        return None
    op = NEGATED[e.op] if negate else e.op
    if op == "<":
        return rhs - lhs - Poly.const(1)
    if op == "<=":
        return rhs - lhs
    if op == ">":
        return lhs - rhs - Poly.const(1)
    return lhs - rhs


def constraint_assuming(e: ir.Expr, model: Model, negate: bool = False
                        ) -> tuple[Poly, tuple[Poly, ...]] | None:
    """``constraint_of`` with unsigned differences and sums taken as exact, and the
    constraints under which they are: ``x < width - 1`` on ``uint`` is ``width - 2 - x >= 0``
    assuming ``width - 1 >= 0`` (at ``width == 0`` C's ``width - 1`` wraps to the largest
    ``uint`` and the comparison is true everywhere). A split that decides the comparison must
    hold the assumptions on its subdomain too."""
    assumed: list[Poly] = []
    p = constraint_of(e, dataclasses.replace(model, assumed=assumed), negate)
    if p is None:
        return None
    return p, tuple(dict.fromkeys(a for a in assumed if a.names() or a.constant < 0))


# ---------------------------------------------------------------- the model of a body


def _counter(loop: ir.For, model: Model, written: set[str]) -> Counter | None:
    init = loop.init
    if not isinstance(init, ir.DeclStmt) or len(init.decls) != 1:
        return None
    decl = init.decls[0]
    if decl.init is None or _scalar(decl.type) is None or decl.name in written:
        return None
    cond = loop.cond
    while isinstance(cond, ir.Cast) and cond.implicit:
        cond = cond.operand
    if not isinstance(cond, ir.Binary) or cond.op not in ("<", "<="):
        return None
    lhs = cond.lhs
    while isinstance(lhs, ir.Cast) and lhs.implicit:
        lhs = lhs.operand
    if not (isinstance(lhs, ir.VarRef) and lhs.name == decl.name):
        return None
    step = loop.step
    if not (isinstance(step, ir.Unary) and step.op in ("++", "p++")
            and isinstance(step.operand, ir.VarRef) and step.operand.name == decl.name):
        return None
    low, high = affine_of(decl.init, model), affine_of(cond.rhs, model)
    if low is None or high is None or not low.is_affine or not high.is_affine:
        return None
    if (low.names() | high.names()) - model.params:
        return None  # bounds that vary across lanes or with another counter
    return Counter(decl.name, low, high - Poly.const(1) if cond.op == "<" else high)


def model_of(body: ir.Stmt, params: Iterable[str], local_size: tuple[int, int, int], *,
             rows: bool, narrow_ids: bool,
             chosen: Mapping[ir.Expr, ir.Expr] | None = None,
             tables: Mapping[str, tuple[int, int]] | None = None) -> Model:
    """The model of a work-item loop body: its single-assignment integer locals (declared with
    a value and never written again, address never taken), its counted loops and its loads
    from bounded tables (``tables``, of ``table_bounds``; a name the body declares itself is
    no table)."""
    eff = effects(body, Effects())
    declared = {n.name for n in walk(body) if isinstance(n, ir.VarDecl)}
    kept = {n: b for n, b in (tables or {}).items() if n not in declared}
    model = Model(frozenset(params), local_size, rows, narrow_ids, chosen=chosen or {},
                  tables=kept)
    for node in walk(body):
        if isinstance(node, ir.VarDecl) and node.init is not None \
                and _scalar(node.type) is not None and node.name not in eff.writes \
                and node.name not in eff.address_taken:
            model.defs[node.name] = node.init
    for node in walk(body):
        if isinstance(node, ir.For):
            written = (eff.writes | eff.address_taken) - {_loop_var(node)}
            written |= {n for n in writes_in(node.body)}
            counter = _counter(node, model, written)
            if counter is not None:
                model.counters[counter.name] = counter
    if model.tables:
        for node in walk(body):
            if isinstance(node, ir.Index):
                name = table_load(node, model)
                if name is not None:
                    low, high = model.tables[name.split("[", 1)[0]]
                    model.counters[name] = Counter(name, Poly.const(low), Poly.const(high))
    return model


def _loop_var(loop: ir.For) -> str:
    if isinstance(loop.init, ir.DeclStmt) and loop.init.decls:
        return loop.init.decls[0].name
    return ""


def writes_in(node: Node) -> set[str]:
    """The variables ``node`` assigns, steps or takes the address of."""
    eff = effects(node, Effects())
    return eff.writes | eff.address_taken


# ---------------------------------------------------------------- accesses


@dataclass(frozen=True)
class Access:
    """One memory access through a pointer argument, classified along ``gid0``."""

    buffer: str
    index: Poly | None
    write: bool
    loc: object

    @property
    def kind(self) -> str:
        """``uniform``, ``consecutive``, ``strided`` (a constant stride other than 1) or
        ``divergent`` (unknown: not exactly affine along gid0)."""
        if self.index is None or self.index.mentions_nonlinearly("gid0"):
            return "divergent"
        stride = self.index.coeff("gid0")
        return "uniform" if stride == 0 else "consecutive" if stride == 1 else "strided"


def accesses(body: ir.Stmt, model: Model) -> list[Access]:
    """Every ``p[i]`` of the body whose base is a pointer argument or variable, in order."""
    stores = set()
    for node in walk(body):
        if isinstance(node, ir.Assign) and isinstance(node.target, ir.Index):
            stores.add(id(node.target))
    out: list[Access] = []
    for node in walk(body):
        if isinstance(node, ir.Index) and isinstance(node.base.type, PointerType) \
                and isinstance(node.base, ir.VarRef):
            out.append(Access(node.base.name, affine_of(node.index, model),
                              id(node) in stores, node.loc))
    return out


# ---------------------------------------------------------------- islpy


def isl_set(constraints: Iterable[Poly], dims: Iterable[str],
            extra_params: Iterable[str] = ()) -> Any:
    """The islpy set ``{ [dims] : every p >= 0 }`` with every other name (and
    ``extra_params``) a parameter. Every constraint must be affine."""
    import islpy as isl

    cons = list(constraints)
    dim_list = list(dims)
    names: set[str] = set(extra_params)
    for p in cons:
        if not p.is_affine:
            raise ValueError(f"{p} is not affine")
        names |= p.names()
    params = sorted(names - set(dim_list))
    space = isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=dim_list, params=params)
    result = isl.BasicSet.universe(space)
    for p in cons:
        coeffs: dict[Any, int] = {m[0]: c for m, c in p.terms if m}
        coeffs[1] = p.constant
        result = result.add_constraint(isl.Constraint.ineq_from_names(space, coeffs))
    return isl.Set.from_basic_set(result)


def tile_inside(constraints: Iterable[Poly], local_size: tuple[int, int, int],
                counters: Mapping[str, Counter]) -> Any:
    """The islpy set of group bases (and parameters) for which every lane of the group's tile
    and every counter value satisfies every constraint: the complement of the projection of
    the tile's lanes that leave the domain (the paper's full-tile predicate, one group as the
    tile)."""
    import islpy as isl

    cons = list(constraints)
    dims = [LANES[d] for d in range(3)] + sorted(counters)
    box: list[Poly] = []
    for d in range(3):
        lane, base = Poly.var(LANES[d]), Poly.var(BASES[d])
        box += [lane - base, base + Poly.const(local_size[d] - 1) - lane]
    for c in counters.values():
        box += [Poly.var(c.name) - c.low, c.high - Poly.var(c.name)]
    names: set[str] = set()
    for p in cons + box:
        names |= p.names()
    tile = isl_set(box, dims, names)
    inside = isl_set(cons, dims, names)
    outside = tile.subtract(inside)
    n = len(dims)
    bad = outside.project_out(isl.dim_type.set, 0, n).params()
    every = tile.project_out(isl.dim_type.set, 0, n).params()
    return every.subtract(bad).coalesce()
