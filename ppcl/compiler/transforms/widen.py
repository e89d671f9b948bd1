"""Signed ``int`` index arithmetic computed in 64 bits.

``out[z * plane + y * nx + x]`` with ``int`` variables is a 32-bit sum that C then sign-extends
to an address offset. gcc does not see through that extension, so a work-item loop over ``x``
indexes memory with gathers and scatters instead of consecutive vector loads and stores. Signed
overflow is undefined in OpenCL C as in C, so a kernel whose ``int`` arithmetic is defined gets
the same values in 64 bits: clang's ``nsw`` flags let LLVM widen such induction variables for
the same reason.

A private scalar ``int`` variable is declared 64 bits wide (``widened``) when it reaches a
subscript or pointer offset through ``+``, ``-``, ``*`` and every value assigned to it is such
arithmetic on literals, variables and work-item ids (or ``min``/``max``/``clamp`` of such):
not a load, another call, a bit operation or a wrapping conversion. The caller excludes values uniform across the work-group: only those
that vary along the vectorized work-item loop need it.
``transforms/schedule.py`` records the widened variables and the group positions (see
``GroupPosition``) on the formed kernel; the printer declares and reads them 64 bits wide, with
explicit conversions where the type matters (see ``KernelPrinter``).
"""

from __future__ import annotations

from ppcl.compiler.analysis.uniformity import ID_QUERIES, const_int
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import INT, AddressSpace, PointerType, ScalarType
from ppcl.compiler.ir.visit import Node, walk

_AFFINE_OPS = frozenset(("+", "-", "*"))
_AFFINE_UPDATES = frozenset(("=", "+=", "-=", "*="))
# builtins whose value is one of their arguments: a clamped index (``min(x + 1, w - 1)``) has
# the same value in 64 bits as its arguments do, and after input space splitting its fast copy
# is the bare ``x + 1``, which must be 64 bits wide for gcc to see consecutive addresses
_SELECTING = frozenset(("min", "max", "clamp"))


def _selecting(e: ir.Expr) -> bool:
    return isinstance(e, ir.Call) and e.builtin is not None and e.name in _SELECTING


def _small_signed(t: object) -> bool:
    return isinstance(t, ScalarType) and t.is_integer and t.is_signed and t.size <= 4


def _index_arithmetic(e: ir.Expr, position: GroupPosition) -> bool:
    """Whether ``e`` only combines signed literals, variables and id queries with + - * and
    conversions that keep every value. Unsigned arithmetic wraps by definition and a
    conversion to ``int`` from a wider type truncates, so neither may run in 64 bits, except
    a work-item's position in the range (see ``GroupPosition``)."""
    if not _small_signed(e.type):
        return False
    if isinstance(e, ir.IntLit | ir.VarRef):
        return True
    if isinstance(e, ir.Binary):
        return e.op in _AFFINE_OPS and _index_arithmetic(e.lhs, position) \
            and _index_arithmetic(e.rhs, position)
    if isinstance(e, ir.Unary):
        return e.op in ("-", "+") and _index_arithmetic(e.operand, position)
    if _selecting(e):
        assert isinstance(e, ir.Call)
        return all(_index_arithmetic(a, position) for a in e.args)
    if isinstance(e, ir.Cast):
        inner = e.operand
        if isinstance(inner, ir.Call):  # (int)get_global_id(d): ids fit (narrow_ids)
            return inner.builtin is not None and inner.name in ID_QUERIES
        return position.covers(inner) or _index_arithmetic(inner, position)
    return False


def _query_dim(e: ir.Expr, name: str) -> int | None:
    while isinstance(e, ir.Cast):
        e = e.operand
    if isinstance(e, ir.Call) and e.builtin is not None and e.name == name and e.args:
        return const_int(e.args[0])
    return None


class GroupPosition:
    """``get_group_id(d) * C + lid`` where ``lid`` is a local id along some ``d'`` (directly or
    through an ``int`` holding only it) and ``local_size[d'] <= C <= local_size[d]``: the
    value is below ``num_groups[d] * local_size[d]``, the global size along ``d``. With every
    global id fitting in ``int`` (the ``narrow_ids`` specialization), converting it to ``int``
    keeps its value, like ``(int)get_global_id(d)``.
    """

    def __init__(self, local_size: tuple[int, int, int] | None, local_id_vars: dict[str, int]):
        self.local_size = local_size
        self.local_id_vars = local_id_vars

    def local_id(self, e: ir.Expr) -> int | None:
        while isinstance(e, ir.Cast):
            e = e.operand
        if isinstance(e, ir.VarRef):
            return self.local_id_vars.get(e.name)
        return _query_dim(e, "get_local_id")

    def covers(self, e: ir.Expr) -> bool:
        if self.local_size is None or not isinstance(e, ir.Binary) or e.op != "+":
            return False
        for scaled, lid in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if not isinstance(scaled, ir.Binary) or scaled.op != "*":
                continue
            for group, factor in ((scaled.lhs, scaled.rhs), (scaled.rhs, scaled.lhs)):
                d = _query_dim(group, "get_group_id")
                c = const_int(factor)
                d_lid = self.local_id(lid)
                if d is not None and 0 <= d < 3 and c is not None and d_lid is not None \
                        and 0 <= d_lid < 3 and self.local_size[d_lid] <= c <= self.local_size[d]:
                    return True
        return False


def _terms(e: ir.Expr, names: set[str]) -> set[str]:
    """The variables of ``names`` that ``e`` adds, subtracts or multiplies into its value."""
    if isinstance(e, ir.VarRef):
        return {e.name} & names
    if isinstance(e, ir.Binary) and e.op in _AFFINE_OPS:
        return _terms(e.lhs, names) | _terms(e.rhs, names)
    if isinstance(e, ir.Unary) and e.op in ("-", "+"):
        return _terms(e.operand, names)
    if _selecting(e):
        assert isinstance(e, ir.Call)
        return set().union(*(_terms(a, names) for a in e.args))
    if isinstance(e, ir.Cast) and e.operand.type == INT:
        return _terms(e.operand, names)
    return set()


def group_position(body: Node, local_size: tuple[int, int, int] | None) -> GroupPosition:
    """The ``GroupPosition`` test for ``body``: its ``int`` variables that only ever hold a
    local id are known by name."""
    values: dict[str, list[ir.Expr | None]] = {}  # None: a value of another kind
    for n in walk(body):
        if isinstance(n, ir.DeclStmt):
            for d in n.decls:
                values.setdefault(d.name, []).append(d.init)
        elif isinstance(n, ir.Assign) and isinstance(n.target, ir.VarRef):
            values.setdefault(n.target.name, []).append(None)
        elif isinstance(n, ir.Unary) and isinstance(n.operand, ir.VarRef) \
                and n.op in ("++", "--", "p++", "p--", "&"):
            values.setdefault(n.operand.name, []).append(None)
    local_id_vars: dict[str, int] = {}
    for name, assigned in values.items():
        dims = {None if v is None else _query_dim(v, "get_local_id") for v in assigned}
        dim = dims.pop() if len(dims) == 1 else None
        if dim is not None:
            local_id_vars[name] = dim
    return GroupPosition(local_size, local_id_vars)


def group_positions(body: Node, local_size: tuple[int, int, int] | None) -> frozenset[ir.Expr]:
    """The expressions of ``body`` that are group positions (``GroupPosition``): converted to
    ``int``, they are printed 64 bits wide. None for ``local_size``: no global id is known to
    fit in ``int``, so none."""
    if local_size is None:
        return frozenset()
    position = group_position(body, local_size)
    return frozenset(n for n in walk(body) if isinstance(n, ir.Binary) and position.covers(n))


def widened_ints(body: Node, exclude: set[str],
                 local_size: tuple[int, int, int] | None = None) -> set[str]:
    """The ``int`` variables declared in ``body`` (less ``exclude``) to declare 64 bits wide.

    ``local_size``: the group size the body was formed for, given when every global id fits in
    ``int``; it lets a position computed from group and local ids be widened too."""
    candidates: set[str] = set()
    for n in walk(body):
        if isinstance(n, ir.DeclStmt):
            candidates |= {d.name for d in n.decls if d.type == INT and not d.volatile
                           and d.space is AddressSpace.PRIVATE}
    candidates -= exclude
    values: dict[str, list[ir.Expr]] = {name: [] for name in candidates}
    seeds: set[str] = set()
    for n in walk(body):
        if isinstance(n, ir.DeclStmt):
            for d in n.decls:
                if d.name in values and d.init is not None:
                    values[d.name].append(d.init)
        elif isinstance(n, ir.Assign) and isinstance(n.target, ir.VarRef):
            if n.target.name in values:
                if n.op in _AFFINE_UPDATES:
                    values[n.target.name].append(n.value)
                else:
                    candidates.discard(n.target.name)
        elif isinstance(n, ir.Unary) and n.op == "&":
            for ref in walk(n.operand):
                if isinstance(ref, ir.VarRef):
                    candidates.discard(ref.name)
        elif isinstance(n, ir.SizeOf) and n.operand is not None:
            candidates -= {r.name for r in walk(n.operand) if isinstance(r, ir.VarRef)}
        elif isinstance(n, ir.Index):
            seeds |= _terms(n.index, candidates)
        elif isinstance(n, ir.Binary) and n.op in ("+", "-"):
            if isinstance(n.lhs.type, PointerType):
                seeds |= _terms(n.rhs, candidates)
            elif isinstance(n.rhs.type, PointerType):
                seeds |= _terms(n.lhs, candidates)
    position = group_position(body, local_size)
    eligible = {name for name in candidates
                if all(_index_arithmetic(v, position) for v in values[name])}
    widened: set[str] = set()
    pending = list(seeds & eligible)
    while pending:
        name = pending.pop()
        if name in widened:
            continue
        widened.add(name)
        for value in values[name]:
            pending += [t for t in _terms(value, eligible) if t not in widened]
    return widened
