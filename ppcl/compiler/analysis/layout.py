"""Whether a buffer is a row-major matrix whose transpose a kernel can use instead (PPOpenCL's
data layout change, Section 3.3.2).

Both layout changes the paper names are one transposition. View a buffer of ``T`` elements as a
row-major ``R x C`` matrix; element ``(r, c)`` sits at ``r*C + c``; its transpose keeps it at
``c*R + r``. An array of structures ``p[4*i + 2]`` is the case ``C = 4`` (a literal), ``r = i``,
``c = 2``: its transpose is the structure of arrays. A coalesced neighbor list ``n[tid + j*A]``
is the case ``C = A`` (a scalar argument), ``r = j``, ``c = tid``: its transpose is the
contiguous list, one row per work-item.

``transposable`` accepts a pointer argument only when every use is an index ``p[e]`` and every
``e`` is exactly ``r*C + c`` with ``c`` provably in ``[0, C)``: a literal below a literal ``C``,
or ``get_global_id(d) + k`` whose range the launch decides (checked by ``TransposeFacts.holds``,
narrowed by a dominating guard ``if (gid < n)`` or ``if (gid >= n) return;``). Then
``r = e div C`` and ``c = e mod C``, so the rewritten access ``c*R + r`` reads the element the
original read, on the transposed buffer.

Nothing is needed of ``r`` but that it is an integer: an access in bounds has ``0 <= r*C + c <
R*C``, so with ``c`` in ``[0, C)`` also ``r`` is in ``[0, R)``. So inside an element index, an
integer subexpression that is not a polynomial (a variable a conditional wraps, as periodic
streaming does, ``(ys * nx + xs) * 9 + q``; a value loaded from memory; a division) is an
opaque atom (``OPAQUE`` and a number, its expression in ``Symbols.opaque``) when it has no
effects, calls no user function and does not read the buffer itself. Opaque atoms may appear
only in the row part: a column part with one has no range and is refused. The rewrite
evaluates each one where the original did, in the new index ``c*R + r``.

Index expressions are polynomials (``affine.Poly``) over these atoms: ``gid0..2``, ``lid0..2``,
``grp0..2``, ``gsize0..2``, ``lsize0..2``, ``ngroups0..2`` (the work-item queries), the integer
scalar arguments the kernel never writes, and the counters of ``for`` loops that declare their
counter and never write it in the body. Integer locals declared with a value and never written
again stand for their value. Signed arithmetic is exact (overflow is undefined), 64-bit
unsigned arithmetic is exact modulo 2^64 (an in-bounds index below 2^63 is then the value of the
polynomial). 32-bit unsigned arithmetic is exact modulo 2^32, which is below the index width:
where such a value widens to 64 bits, indexes, or is compared, its polynomial is kept in
``TransposeFacts.wraps`` and ``holds`` checks, by interval arithmetic over the launch's ids, the
arguments and the counters' ranges, that it stays in ``[0, 2^32)``. Narrowing conversions are
refused except ``(int)get_global_id(d)`` and ``(uint)get_global_id(d)`` (then the launch must
keep ids below 2^31, which ``holds`` checks).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from math import gcd

from ppcl.compiler.analysis.affine import Poly
from ppcl.compiler.analysis.effects import Effects, effects
from ppcl.compiler.analysis.uniformity import const_int
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import (
    LONG,
    AddressSpace,
    PointerType,
    ScalarType,
    StructType,
    Type,
)
from ppcl.compiler.ir.visit import Node, Rewriter, children, walk

QUERIES = {"get_global_id": "gid", "get_local_id": "lid", "get_group_id": "grp",
           "get_global_size": "gsize", "get_local_size": "lsize", "get_num_groups": "ngroups"}
_NARROW_LIMIT = 2 ** 31
OPAQUE = "\0opaque"  # the prefix of an opaque atom's name; no identifier can take it
_COLLECTIVE = ("work_group_", "sub_group_")  # builtins that must run once per work-item


def _int_type(t: object) -> ScalarType | None:
    return t if isinstance(t, ScalarType) and t.is_integer and not t.is_bool else None


def wraps_at_32(t: object) -> bool:
    """Whether arithmetic in ``t`` wraps below the 64-bit index width (``uint``)."""
    return isinstance(t, ScalarType) and t.is_integer and not t.is_signed and t.size == 4


@dataclass
class Symbols:
    """The names an index polynomial may use in one kernel, and their types."""

    types: dict[str, Type] = field(default_factory=dict)  # params and stable loop counters
    params: set[str] = field(default_factory=set)  # the integer scalar arguments among them
    defs: dict[str, ir.Expr] = field(default_factory=dict)  # single-assignment integer locals
    narrowed: bool = False  # some id was converted to a 32-bit type on the way
    # uint values used as 64-bit ones (or as an index): each polynomial is their value only
    # while it lies in [0, 2^32), which the launch must ensure (TransposeFacts.holds)
    wraps: list[Poly] = field(default_factory=list)
    # opaque atoms by name (see the module's note); None where none may be made: outside an
    # element index, where every name must have a value the launch decides
    opaque: dict[str, ir.Expr] | None = None
    buffer: str = ""  # the pointer whose element indexes are read: no opaque atom reads it
    # integer locals declared with a value and written later: that value (reuse.py's guess)
    initial: dict[str, ir.Expr] = field(default_factory=dict)


def symbols_of(fn: ir.Function) -> Symbols:
    """The kernel's integer scalar arguments it never writes, its stable loop counters and its
    single-assignment integer locals."""
    assert fn.body is not None
    eff = effects(fn.body, Effects())
    changed = eff.writes | eff.address_taken
    out = Symbols()
    for p in fn.params:
        if _int_type(p.type) is not None and p.name not in changed:
            out.types[p.name] = p.type
            out.params.add(p.name)
    for node in walk(fn.body):
        if isinstance(node, ir.VarDecl) and node.init is not None \
                and _int_type(node.type) is not None:
            if node.name not in changed:
                out.defs[node.name] = node.init
            else:
                out.initial.setdefault(node.name, node.init)
        if isinstance(node, ir.For):
            counter = _stable_counter(node)
            if counter is not None:
                out.types[counter.name] = counter.type
    return out


def _stable_counter(loop: ir.For) -> ir.VarDecl | None:
    """The loop's own counter when the body never writes it (only the step does)."""
    if not isinstance(loop.init, ir.DeclStmt) or len(loop.init.decls) != 1:
        return None
    decl = loop.init.decls[0]
    if _int_type(decl.type) is None:
        return None
    eff = effects(loop.body, Effects())
    if loop.cond is not None:
        effects(loop.cond, eff)
    if decl.name in eff.writes or decl.name in eff.address_taken:
        return None
    return decl


def _strip(e: ir.Expr) -> ir.Expr:
    while isinstance(e, ir.Cast) and e.implicit:
        e = e.operand
    return e


def poly_of(e: ir.Expr, syms: Symbols) -> Poly | None:
    """The integer expression ``e`` as a polynomial over the atoms, None where that is not
    exact (see the module's note on wrapping). While ``syms.opaque`` is a dict, a
    subexpression that is no polynomial is an opaque atom where it may be one."""
    value = _poly(e, syms)
    if value is None and syms.opaque is not None:
        return _opaque_atom(e, syms)
    return value


def _opaque_atom(e: ir.Expr, syms: Symbols) -> Poly | None:
    """``e`` as a new opaque atom, None when it may not be one: not an integer, effects, a
    call of a user function or a collective builtin, a read of ``syms.buffer``."""
    assert syms.opaque is not None
    if _int_type(e.type) is None:
        return None
    eff = effects(e, Effects())
    if eff.writes or eff.memory or eff.address_taken:
        return None
    for n in walk(e):
        if isinstance(n, ir.Call) and (n.builtin is None or n.name.startswith(_COLLECTIVE)):
            return None
        if isinstance(n, ir.VarRef) and n.name == syms.buffer:
            return None
    name = f"{OPAQUE}{len(syms.opaque)}"
    syms.opaque[name] = e
    return Poly.var(name)


def is_opaque(name: str) -> bool:
    return name.startswith(OPAQUE)


def _poly(e: ir.Expr, syms: Symbols) -> Poly | None:
    t = _int_type(e.type)
    if t is None:
        return None
    if isinstance(e, ir.IntLit):
        return Poly.const(e.value)
    if isinstance(e, ir.VarRef):
        if e.name in syms.types:
            return Poly.var(e.name)
        if e.name in syms.defs:
            if syms.opaque is None:
                return poly_of(syms.defs[e.name], syms)
            # its value without opaque atoms, or the variable itself as one: an opaque part
            # of its initializer might read another value at the access (memory, a variable)
            opaque, syms.opaque = syms.opaque, None
            try:
                value = poly_of(syms.defs[e.name], syms)
            finally:
                syms.opaque = opaque
            return value
        return None
    if isinstance(e, ir.Cast):
        src = _int_type(e.operand.type)
        if src is None:
            return None
        if t.size < src.size or (t.size == src.size < 8 and t.is_signed and not src.is_signed):
            inner = _strip(e.operand)
            if t.size >= 4 and isinstance(inner, ir.Call) and inner.name == "get_global_id":
                syms.narrowed = True  # exact while ids stay below 2^31 (holds checks it)
                return poly_of(inner, syms)
            return None
        value = poly_of(e.operand, syms)
        if value is not None and wraps_at_32(src) and t.size > src.size \
                and not (len(value.terms) == 1 and value.terms[0][1] == 1
                         and len(value.terms[0][0]) == 1 and is_opaque(value.terms[0][0][0])):
            syms.wraps.append(value)  # zero-extended: exact only inside [0, 2^32)
        return value
    if isinstance(e, ir.Unary) and e.op in ("+", "-"):
        value = poly_of(e.operand, syms)
        if value is None:
            return None
        return value if e.op == "+" else -value
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*"):
        lhs, rhs = poly_of(e.lhs, syms), poly_of(e.rhs, syms)
        if lhs is None or rhs is None:
            return None
        return lhs + rhs if e.op == "+" else lhs - rhs if e.op == "-" else lhs * rhs
    if isinstance(e, ir.Call) and e.name in QUERIES and len(e.args) == 1:
        dim = const_int(e.args[0])
        if dim is None or not 0 <= dim <= 2:
            return None
        return Poly.var(f"{QUERIES[e.name]}{dim}")
    return None


# ---------------------------------------------------------------- r*C + c


@dataclass(frozen=True)
class Guard:
    """``gid<dim> <= bound`` where a condition dominates an access. An unsigned comparison
    means that only while its other side, ``limit``, is not negative (a negative one converts
    to a huge unsigned value that every id passes)."""

    dim: int
    bound: Poly
    limit: Poly | None = None

    def upper(self, values: Mapping[str, int]) -> int | None:
        """The bound under these argument values, None where the guard does not bound."""
        try:
            if self.limit is not None and self.limit.evaluate(values) < 0:
                return None
            return self.bound.evaluate(values)
        except KeyError:
            return None


@dataclass(frozen=True)
class Column:
    """The column part of one access: ``atom + offset``, where ``atom`` is ``gid<d>``, a loop
    counter, or empty (the column is the literal ``offset``). An id's range comes from the
    launch, narrowed by the ``guards`` that dominate the access; a counter's is
    ``[low, high]`` (arguments decide both)."""

    atom: str
    offset: int
    guards: tuple[Guard, ...] = ()
    low: Poly | None = None
    high: Poly | None = None

    @property
    def dim(self) -> int:
        """The id's dimension, -1 when the atom is not an id."""
        return int(self.atom[3:]) if self.atom.startswith("gid") else -1

    def range(self, global_size: tuple[int, int, int], offset: tuple[int, int, int],
              values: Mapping[str, int]) -> tuple[int, int] | None:
        """The smallest and largest column this access may use; None when the arguments do
        not say (an empty range is low > high)."""
        if not self.atom:
            return self.offset, self.offset
        if self.dim < 0:
            assert self.low is not None and self.high is not None
            try:
                return self.low.evaluate(values) + self.offset, \
                    self.high.evaluate(values) + self.offset
            except KeyError:
                return None
        low = offset[self.dim] + self.offset
        high = offset[self.dim] + global_size[self.dim] - 1 + self.offset
        for guard in self.guards:
            upper = guard.upper(values)
            if upper is not None:
                high = min(high, upper + self.offset)
        return low, high

    def describe(self) -> str:
        if not self.atom:
            return str(self.offset)
        name = f"get_global_id({self.dim})" if self.dim >= 0 else self.atom
        text = name + (f" + {self.offset}" if self.offset else "")
        if self.dim < 0:
            return text + f" ({self.atom} in [{self.low}, {self.high}])"
        return text + "".join(f" (guarded <= {g.bound})" for g in self.guards)


def decompose(index: Poly, columns: int | str) -> tuple[Poly, Poly] | None:
    """``(r, c)`` with ``index == r*C + c`` where ``c`` is a literal or one atom plus a
    literal; None when no such split exists. ``columns`` is a literal C or the name of a
    scalar argument. (Whether ``c`` stays in ``[0, C)`` is the caller's question.)"""
    row: dict[tuple[str, ...], int] = {}
    col: dict[tuple[str, ...], int] = {}
    for mono, coeff in index.terms:
        if isinstance(columns, int):
            if mono and coeff % columns == 0:
                row[mono] = coeff // columns
            elif mono:
                col[mono] = coeff
            else:
                row[()], col[()] = divmod(coeff, columns)
        elif columns in mono:
            rest = list(mono)
            rest.remove(columns)
            row[tuple(rest)] = coeff
        else:
            col[mono] = coeff
    varying = [m for m in col if m]
    if varying:
        if isinstance(columns, int) and () in row:  # keep the constant with the atom
            col[()] = col.get((), 0) + row.pop(()) * columns
        if len(varying) != 1 or col[varying[0]] != 1 or len(varying[0]) != 1:
            return None
    return Poly.of(row), Poly.of(col)


def column_of(c: Poly) -> Column:
    names = [m[0] for m, _ in c.terms if m]
    return Column(names[0] if names else "", c.constant)


def counted_loop(loop: ir.For, syms: Symbols) -> tuple[str, Poly | None, Poly | None, int] | None:
    """``for (T i = low; i < high; i += step)`` (also ``<=``, ``i++``, ``++i``) with a stable
    counter: its name, its bounds as polynomials (None where not exact; ``high`` exclusive)
    and its positive literal step (None for the whole answer when the loop has another
    form)."""
    if not isinstance(loop.init, ir.DeclStmt) or len(loop.init.decls) != 1:
        return None
    decl = loop.init.decls[0]
    if decl.init is None or decl.name not in syms.types or decl.name in syms.params:
        return None
    step = _step(loop.step, decl.name)
    if step is None:
        return None
    low = poly_of(decl.init, syms)
    high: Poly | None = None
    cond = _strip(loop.cond) if loop.cond is not None else None
    counter = _strip(cond.lhs) if isinstance(cond, ir.Binary) else None
    if isinstance(cond, ir.Binary) and cond.op in ("<", "<=") \
            and isinstance(counter, ir.VarRef) and counter.name == decl.name:
        high = poly_of(cond.rhs, syms)
        if wraps_at_32(cond.lhs.type) and high is not None:
            syms.wraps.append(high)  # a uint comparison: the bound must not be negative
        if high is not None and cond.op == "<=":
            high = high + Poly.const(1)
    return decl.name, low, high, step


def _step(step: ir.Expr | None, name: str) -> int | None:
    if step is None:
        return None
    if isinstance(step, ir.Unary) and step.op in ("++", "p++") \
            and isinstance(step.operand, ir.VarRef) and step.operand.name == name:
        return 1
    if isinstance(step, ir.Assign) and step.op == "+=" and isinstance(step.target, ir.VarRef) \
            and step.target.name == name:
        value = _strip(step.value)
        if isinstance(value, ir.IntLit) and value.value > 0:
            return value.value
    return None


def counter_ranges(body: ir.Stmt, syms: Symbols) -> dict[str, tuple[Poly, Poly]]:
    """The stable counters whose whole range the arguments decide: ``[low, high]``
    (inclusive) in the body of their loop."""
    out: dict[str, tuple[Poly, Poly]] = {}
    for node in walk(body):
        if not isinstance(node, ir.For):
            continue
        counted = counted_loop(node, syms)
        if counted is None:
            continue
        name, low, high, _ = counted
        if low is None or high is None or (low.names() | high.names()) - syms.params:
            continue
        out[name] = (low, high - Poly.const(1))
    return out


# ---------------------------------------------------------------- elements


def struct_fields(t: Type) -> tuple[ScalarType, tuple[str, ...]] | None:
    """A struct whose fields share one scalar type and sit without padding: that type and the
    field names in order (the struct is then a row of a matrix of scalars)."""
    if not isinstance(t, StructType) or t.is_union or not t.fields:
        return None
    first = t.fields[0].type
    if not isinstance(first, ScalarType) or any(f.type != first for f in t.fields):
        return None
    offsets, size, _ = t.layout()
    if offsets != tuple(k * first.size for k in range(len(t.fields))) \
            or size != first.size * len(t.fields):
        return None
    return first, tuple(f.name for f in t.fields)


def is_site(e: Node, param: str) -> bool:
    """Whether ``e`` reads or writes one scalar element of ``param``: ``p[e]`` on scalars,
    ``p[e].f`` on structs of scalars."""
    if isinstance(e, ir.Member) and not e.arrow:
        return _is_index_of(e.base, param) and _points_to_struct(e.base)
    return _is_index_of(e, param) and not _points_to_struct(e)


def _points_to_struct(e: ir.Expr) -> bool:
    assert isinstance(e, ir.Index)
    t = e.base.type
    return isinstance(t, PointerType) and isinstance(t.pointee, StructType)


def _is_index_of(e: Node, param: str) -> bool:
    return isinstance(e, ir.Index) and isinstance(e.base, ir.VarRef) and e.base.name == param


def site_poly(site: ir.Expr, syms: Symbols, opaque: bool = False) -> Poly | None:
    """The element index a site uses, as a polynomial: the index itself on scalars,
    ``index*F + k`` for field ``k`` of ``F`` on structs. With ``opaque``, subexpressions that
    are no polynomial become opaque atoms in ``syms.opaque`` (which it makes when None)."""
    if opaque:
        made = syms.opaque is None
        if made:
            syms.opaque = {}
        try:
            return site_poly(site, syms)
        finally:
            if made:
                syms.opaque = None
    if isinstance(site, ir.Member):
        assert isinstance(site.base, ir.Index) and isinstance(site.base.base.type, PointerType)
        fields = struct_fields(site.base.base.type.pointee)
        row = poly_of(site.base.index, syms)
        if fields is None or row is None:
            return None
        names = fields[1]
        return row.scale(len(names)) + Poly.const(names.index(site.field_name))
    assert isinstance(site, ir.Index)
    return poly_of(site.index, syms)


# ---------------------------------------------------------------- guards


def _bounds(cond: ir.Expr, syms: Symbols, negate: bool) -> list[Guard]:
    """``gid<d> <= bound`` facts that hold where ``cond`` (or its negation) is true."""
    cond = _strip(cond)
    if isinstance(cond, ir.Binary) and cond.op == ("||" if negate else "&&"):
        return _bounds(cond.lhs, syms, negate) + _bounds(cond.rhs, syms, negate)
    if isinstance(cond, ir.Unary) and cond.op == "!":
        return _bounds(cond.operand, syms, not negate)
    if not isinstance(cond, ir.Binary) or cond.op not in ("<", "<=", ">", ">="):
        return []
    lhs, rhs = poly_of(cond.lhs, syms), poly_of(cond.rhs, syms)
    if lhs is None or rhs is None:
        return []
    operand = _int_type(cond.lhs.type)
    unsigned = operand is not None and not operand.is_signed
    if wraps_at_32(operand):  # compares values modulo 2^32
        syms.wraps.extend((lhs, rhs))
    op = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}[cond.op] if negate else cond.op
    if op in (">", ">="):
        lhs, rhs, op = rhs, lhs, "<" if op == ">" else "<="
    diff = rhs - lhs - Poly.const(1 if op == "<" else 0)  # diff >= 0
    out: list[Guard] = []
    for d in range(3):
        lane = f"gid{d}"
        if diff.coeff(lane) != -1 or diff.mentions_nonlinearly(lane) or lane in rhs.names():
            continue
        bound = diff + Poly.var(lane)
        if not bound.names() - syms.params:  # a bound the launch's arguments decide
            out.append(Guard(d, bound, rhs if unsigned else None))
    return out


def _is_return(s: ir.Stmt) -> bool:
    if isinstance(s, ir.Block):
        return len(s.stmts) == 1 and _is_return(s.stmts[0])
    return isinstance(s, ir.Return)


Guards = tuple[Guard, ...]


def guarded_sites(body: ir.Stmt, param: str, syms: Symbols) -> list[tuple[ir.Expr, Guards]]:
    """Every element access of ``param`` (``is_site``) in ``body``, in source order, with the
    guards that dominate it."""
    out: list[tuple[ir.Expr, Guards]] = []

    def exprs(node: Node, guards: Guards) -> None:
        for n in walk(node):
            if is_site(n, param):
                out.append((n, guards))

    def stmt(s: ir.Stmt, guards: Guards) -> None:
        if isinstance(s, ir.Block):
            for inner in s.stmts:
                stmt(inner, guards)
                if isinstance(inner, ir.If) and inner.otherwise is None and _is_return(inner.then):
                    guards = guards + tuple(_bounds(inner.cond, syms, negate=True))
            return
        if isinstance(s, ir.If):
            exprs(s.cond, guards)
            stmt(s.then, guards + tuple(_bounds(s.cond, syms, negate=False)))
            if s.otherwise is not None:
                stmt(s.otherwise, guards + tuple(_bounds(s.cond, syms, negate=True)))
            return
        for child in children(s):
            if isinstance(child, ir.Stmt):
                stmt(child, guards)
            else:
                exprs(child, guards)

    stmt(body, ())
    return out


# ---------------------------------------------------------------- the facts


@dataclass(frozen=True)
class TransposeFacts:
    """A pointer argument whose buffer the kernel reads as a row-major ``R x C`` matrix, every
    access ``p[r*C + c]`` with ``c`` in ``[0, C)`` as long as ``holds``."""

    param: str
    columns: ir.Expr  # C: an IntLit, or a VarRef to a scalar parameter the kernel never writes
    element: ScalarType
    accesses: int
    column_parts: tuple[Column, ...] = ()  # one per distinct column part
    narrowed: bool = False  # an id converted to 32 bits on the way: ids must stay below 2^31
    wraps: tuple[Poly, ...] = ()  # uint values that must stay in [0, 2^32)
    counters: tuple[tuple[str, Poly, Poly], ...] = ()  # ranges of the counters wraps use
    opaque_rows: bool = False  # some row part holds an opaque atom (see the module's note)

    def column_count(self, values: Mapping[str, int]) -> int | None:
        if isinstance(self.columns, ir.IntLit):
            return self.columns.value
        assert isinstance(self.columns, ir.VarRef)
        value = values.get(self.columns.name)
        return int(value) if value is not None else None

    def holds(self, global_size: tuple[int, int, int], offset: tuple[int, int, int],
              values: Mapping[str, int], elements: int) -> bool:
        """Whether a launch with these sizes and argument values keeps every column part in
        ``[0, C)`` and the buffer a whole number of rows."""
        columns = self.column_count(values)
        if columns is None or columns <= 0 or elements % columns != 0:
            return False
        if self.narrowed and any(o + g > _NARROW_LIMIT for o, g in zip(offset, global_size)):
            return False
        for part in self.column_parts:
            span = part.range(global_size, offset, values)
            if span is None:
                return False
            low, high = span
            if high >= low and (low < 0 or high >= columns):
                return False
        return self._no_wrap(global_size, offset, values)

    def _no_wrap(self, global_size: tuple[int, int, int], offset: tuple[int, int, int],
                 values: Mapping[str, int]) -> bool:
        if not self.wraps:
            return True
        ranges: dict[str, tuple[int, int]] = {k: (int(v), int(v)) for k, v in values.items()}
        for d in range(3):
            ranges[f"gid{d}"] = (offset[d], offset[d] + global_size[d] - 1)
            ranges[f"gsize{d}"] = (global_size[d], global_size[d])
        empty: set[str] = set()
        for name, low, high in self.counters:
            try:
                span = low.evaluate(values), high.evaluate(values)
            except KeyError:
                return False
            if span[0] > span[1]:
                empty.add(name)  # the loop never runs: what uses its counter never runs
            ranges[name] = span
        for poly in self.wraps:
            if poly.names() & empty:
                continue
            reach = _interval(poly, ranges)
            if reach is None or reach[0] < 0 or reach[1] >= 2 ** 32:
                return False
        return True

    def describe(self) -> str:
        parts = ", ".join(p.describe() for p in self.column_parts)
        rows = "; some rows are values that are no polynomial" if self.opaque_rows else ""
        return (f"{self.param}: {self.accesses} accesses as a row-major matrix of {self.element} "
                f"with {_spell(self.columns)} columns (column parts {parts}{rows})")


def _interval(p: Poly, ranges: Mapping[str, tuple[int, int]]) -> tuple[int, int] | None:
    """The smallest and largest value of ``p`` with every atom in its range; None when an
    atom has none."""
    low = high = 0
    for mono, coeff in p.terms:
        lo, hi = coeff, coeff
        for name in mono:
            span = ranges.get(name)
            if span is None:
                return None
            ends = (lo * span[0], lo * span[1], hi * span[0], hi * span[1])
            lo, hi = min(ends), max(ends)
        low, high = low + lo, high + hi
    return low, high


def _spell(e: ir.Expr) -> str:
    return str(e.value) if isinstance(e, ir.IntLit) else e.name if isinstance(e, ir.VarRef) \
        else "?"


class _Indexed(Rewriter):
    def __init__(self, param: str):
        self.param = param

    def _offset(self, e: ir.Expr) -> ir.Expr | None | bool:
        """The integer offset of ``e`` from the argument (None: none), False when ``e`` is
        not the argument plus or minus integers."""
        if isinstance(e, ir.VarRef) and e.name == self.param:
            return None
        if not isinstance(e, ir.Binary) or e.op not in ("+", "-"):
            return False
        if isinstance(e.lhs.type, PointerType):
            base, add, sign = self._offset(e.lhs), e.rhs, e.op
        elif e.op == "+" and isinstance(e.rhs.type, PointerType):
            base, add, sign = self._offset(e.rhs), e.lhs, "+"
        else:
            return False
        if base is False:
            return False
        add = add if add.type == LONG else ir.Cast(LONG, add, loc=add.loc)
        if base is None:
            return add if sign == "+" else ir.Unary(LONG, "-", add, loc=e.loc)
        assert isinstance(base, ir.Expr)
        base = base if base.type == LONG else ir.Cast(LONG, base, loc=base.loc)
        return ir.Binary(LONG, sign, base, add, loc=e.loc)

    def rewrite_Unary(self, e: ir.Unary) -> ir.Expr:
        if e.op != "*":
            return e
        offset = self._offset(e.operand)
        if offset is False:
            return e
        base = ir.VarRef(next(n.type for n in walk(e.operand)
                              if isinstance(n, ir.VarRef) and n.name == self.param), self.param)
        if offset is None:
            offset = ir.IntLit(ScalarType("int"), 0, loc=e.loc)
        assert isinstance(offset, ir.Expr)
        return ir.Index(e.type, base, offset, loc=e.loc)


    def rewrite_Member(self, e: ir.Member) -> ir.Expr:
        if not e.arrow:
            return e
        offset = self._offset(e.base)
        if offset is False:
            return e
        if offset is None:
            offset = ir.IntLit(ScalarType("int"), 0, loc=e.loc)
        assert isinstance(offset, ir.Expr) and isinstance(e.base.type, PointerType)
        base = ir.VarRef(next(n.type for n in walk(e.base)
                              if isinstance(n, ir.VarRef) and n.name == self.param), self.param)
        element = ir.Index(e.base.type.pointee, base, offset, loc=e.loc)
        return dataclasses.replace(e, base=element, arrow=False)


def indexed(fn: ir.Function, param: str) -> ir.Function:
    """``fn`` with ``*(p + e)``, ``*(e + p)``, ``*p``, ``(p + e)->f`` and ``p->f`` on the
    argument ``param`` written as ``p[e]``, ``p[0]``, ``p[e].f`` and ``p[0].f``, the forms the
    layout change reads."""
    return _Indexed(param).rewrite(fn)


def _misuse(body: ir.Stmt, param: str, struct: bool) -> str | None:
    """Why ``param`` is used other than as the base of an element access, or None."""
    for node in walk(body):
        if isinstance(node, ir.Unary) and node.op == "&" and (
                is_site(node.operand, param) or _is_index_of(node.operand, param)):
            return f"the address of an element of {param} is taken"
        for child in children(node):
            if struct and _is_index_of(child, param) \
                    and not (isinstance(node, ir.Member) and node.base is child):
                return f"whole structures of {param} are read or written, not only fields"
            if not (isinstance(child, ir.VarRef) and child.name == param):
                continue
            if isinstance(node, ir.Index) and node.base is child:
                continue
            if isinstance(node, ir.Call):
                return f"{param} is passed to {node.name}"
            if isinstance(node, ir.Unary) and node.op == "&":
                return f"the address of {param} is taken"
            if isinstance(node, ir.Unary) and node.op == "*":
                return f"{param} is dereferenced without an index"
            if isinstance(node, ir.Unary) or isinstance(node, ir.Assign) and node.target is child:
                return f"{param} itself is modified"
            if isinstance(node, ir.Binary):
                return f"{param} is used in pointer arithmetic ({node.op})"
            if isinstance(node, ir.VarDecl | ir.Assign):
                return f"{param} is copied into another pointer"
            return f"{param} is used as a {type(node).__name__}"
    return None


def transposable(fn: ir.Function, param: str) -> TransposeFacts | str:
    """The facts that let ``transforms.layout.transpose`` rewrite ``param``'s accesses, or the
    reason it cannot."""
    if fn.body is None:
        return f"{fn.name} has no body"
    decl = next((p for p in fn.params if p.name == param), None)
    if decl is None:
        return f"{fn.name} has no parameter {param}"
    if not isinstance(decl.type, PointerType):
        return f"{param} is not a pointer"
    if decl.type.space not in (AddressSpace.GLOBAL, AddressSpace.CONSTANT):
        return f"{param} points to {decl.type.space.spelling} memory, which the host cannot shuffle"
    element = decl.type.pointee
    fields = struct_fields(element)
    if fields is not None:
        element = fields[0]
    elif isinstance(element, StructType):
        return f"{param}'s elements are {element}, whose fields are not one scalar type " \
               "without padding"
    if not isinstance(element, ScalarType):
        return f"{param}'s elements are {element}, not scalars"
    fn = indexed(fn, param)
    assert fn.body is not None
    reason = _misuse(fn.body, param, fields is not None)
    if reason is not None:
        return reason
    syms = symbols_of(fn)
    syms.buffer = param
    sites = guarded_sites(fn.body, param, syms)
    if not sites:
        return f"{param} is never accessed"
    polys: list[tuple[Poly, Guards]] = []
    syms.opaque = {}
    for site, guards in sites:
        poly = site_poly(site, syms)
        if poly is None:
            syms.opaque = None
            return f"the index of {param} at {site.loc} is not a polynomial in ids, loop " \
                   "counters, scalar arguments and integer values without effects"
        element_index = site.base if isinstance(site, ir.Member) else site
        assert isinstance(element_index, ir.Index)
        if wraps_at_32(element_index.index.type):  # a uint index: its value modulo 2^32
            index = poly_of(element_index.index, syms)
            assert index is not None
            syms.wraps.append(index)
        polys.append((poly, guards))
    opaque_rows = any(is_opaque(n) for p, _ in polys for n in p.names())
    syms.opaque = None
    ranges = counter_ranges(fn.body, syms)
    wraps = tuple(dict.fromkeys(syms.wraps))
    used = {n for w in wraps for n in w.names()}
    if used - set(ranges) - syms.params - {f"gid{d}" for d in range(3)} \
            - {f"gsize{d}" for d in range(3)}:
        return f"a 32-bit unsigned value in an index of {param} depends on something whose " \
               "range is unknown, so it may wrap"
    counters = tuple((n, low, high) for n, (low, high) in ranges.items() if n in used)
    tried: list[str] = []
    for columns in _candidates([p for p, _ in polys], syms):
        parts = _parts(polys, columns, ranges)
        if parts is None:
            tried.append(str(columns))
            continue
        lit: ir.Expr = ir.IntLit(ScalarType("ulong"), columns) if isinstance(columns, int) \
            else ir.VarRef(syms.types[columns], columns)
        return TransposeFacts(param, lit, element, len(sites), parts, syms.narrowed, wraps,
                              counters, opaque_rows)
    if not tried:
        return f"no access of {param} has a row stride (a literal above 1 or a scalar argument)"
    return f"the accesses of {param} do not all split as r*C + c with c in [0, C) " \
           f"for C in {', '.join(tried)}"


def _candidates(polys: list[Poly], syms: Symbols) -> list[int | str]:
    """Scalar arguments that multiply something in an index, then the gcd of the literal
    strides when it is above 1, then scalar arguments added alone (``a[t + A]``: row 1)."""
    products: list[int | str] = []
    alone: list[int | str] = []
    stride = 0
    for p in polys:
        for mono, coeff in p.terms:
            if mono and not (len(mono) == 1 and coeff == 1):  # not a column's atom
                stride = gcd(stride, coeff)
            for n in mono:
                if n in syms.params:
                    found = products if len(mono) > 1 else alone
                    if n not in found:
                        found.append(n)
    tail = [n for n in alone if n not in products]
    return products + ([stride] if stride > 1 else []) + tail


def _parts(polys: list[tuple[Poly, Guards]], columns: int | str,
           ranges: Mapping[str, tuple[Poly, Poly]]) -> tuple[Column, ...] | None:
    found: list[Column] = []
    for poly, guards in polys:
        split = decompose(poly, columns)
        if split is None:
            return None
        part = column_of(split[1])
        if part.dim >= 0:
            part = dataclasses.replace(part, guards=tuple(g for g in guards
                                                         if g.dim == part.dim))
        elif part.atom in ranges:
            low, high = ranges[part.atom]
            part = dataclasses.replace(part, low=low, high=high)
        elif part.atom:
            return None  # a column part whose range nothing decides
        if not part.atom and isinstance(columns, int) and not 0 <= part.offset < columns:
            return None
        if part not in found:
            found.append(part)
    return tuple(found)
