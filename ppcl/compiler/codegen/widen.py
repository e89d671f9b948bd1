"""Signed ``int`` index arithmetic computed in 64 bits.

``out[z * plane + y * nx + x]`` with ``int`` variables is a 32-bit sum that C then sign-extends
to an address offset. gcc does not see through that extension, so a work-item loop over ``x``
indexes memory with gathers and scatters instead of consecutive vector loads and stores. Signed
overflow is undefined in OpenCL C as in C, so a kernel whose ``int`` arithmetic is defined gets
the same values in 64 bits: clang's ``nsw`` flags let LLVM widen such induction variables for
the same reason.

A private scalar ``int`` variable is declared 64 bits wide (``widened``) when it reaches a
subscript or pointer offset through ``+``, ``-``, ``*`` and every value assigned to it is such
arithmetic on literals, variables and work-item ids: not a load, a call, a bit operation or a
wrapping conversion. The caller excludes values uniform across the work-group: only those
that vary along the vectorized work-item loop need it.
Reads of it where the type matters print an explicit conversion (see ``KernelPrinter``).
"""

from __future__ import annotations

from ppcl.compiler.analysis.uniformity import ID_QUERIES
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import INT, AddressSpace, PointerType, ScalarType
from ppcl.compiler.ir.visit import Node, walk

_AFFINE_OPS = frozenset(("+", "-", "*"))
_AFFINE_UPDATES = frozenset(("=", "+=", "-=", "*="))


def _small_signed(t: object) -> bool:
    return isinstance(t, ScalarType) and t.is_integer and t.is_signed and t.size <= 4


def _index_arithmetic(e: ir.Expr) -> bool:
    """Whether ``e`` only combines signed literals, variables and id queries with + - * and
    conversions that keep every value. Unsigned arithmetic wraps by definition and a
    conversion to ``int`` from a wider type truncates, so neither may run in 64 bits."""
    if not _small_signed(e.type):
        return False
    if isinstance(e, ir.IntLit | ir.VarRef):
        return True
    if isinstance(e, ir.Binary):
        return e.op in _AFFINE_OPS and _index_arithmetic(e.lhs) and _index_arithmetic(e.rhs)
    if isinstance(e, ir.Unary):
        return e.op in ("-", "+") and _index_arithmetic(e.operand)
    if isinstance(e, ir.Cast):
        inner = e.operand
        if isinstance(inner, ir.Call):  # (int)get_global_id(d): ids fit (narrow_ids)
            return inner.builtin is not None and inner.name in ID_QUERIES
        return _index_arithmetic(inner)
    return False


def _terms(e: ir.Expr, names: set[str]) -> set[str]:
    """The variables of ``names`` that ``e`` adds, subtracts or multiplies into its value."""
    if isinstance(e, ir.VarRef):
        return {e.name} & names
    if isinstance(e, ir.Binary) and e.op in _AFFINE_OPS:
        return _terms(e.lhs, names) | _terms(e.rhs, names)
    if isinstance(e, ir.Unary) and e.op in ("-", "+"):
        return _terms(e.operand, names)
    if isinstance(e, ir.Cast) and e.operand.type == INT:
        return _terms(e.operand, names)
    return set()


def widened_ints(body: Node, exclude: set[str]) -> set[str]:
    """The ``int`` variables declared in ``body`` (less ``exclude``) to declare 64 bits wide."""
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
    eligible = {name for name in candidates if all(_index_arithmetic(v) for v in values[name])}
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
