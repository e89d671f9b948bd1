"""Pointers to private variables read through as the variables themselves.

Inlining a helper with out-parameters (``void flux(float3 m, float3 *fx)`` called as
``flux(m, &fx)``) leaves a pointer initialized with a variable's address
(``float3 *fx__inl0 = &fx;``) and every write through it (``fx__inl0->x = ...``,
``*fx__inl0 = ...``). The variable's address is then taken, so the passes that split vectors
into scalars and keep variables in registers leave it alone, and the work-item loop around it
keeps gcc's vector types for ``float3``, which gcc does not vectorize across work-items.

A pointer declared once with ``&v`` (``v`` a private variable of the kernel), never assigned,
stepped or address-taken itself, and read only as ``*p``, ``p[0]`` or ``p->field``, is the
variable: those reads become ``v``, ``v`` and ``v.field``, and the declaration goes. ``v`` is
in scope wherever the pointer is, since the pointer's declaration took its address.
"""

from __future__ import annotations

import dataclasses

from ppcl.compiler.analysis.effects import Effects, effects
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import AddressSpace, PointerType
from ppcl.compiler.ir.visit import Node, Rewriter, children, walk


def _target(d: ir.VarDecl, private: dict[str, ir.VarDecl]) -> str | None:
    """The private variable whose address ``d`` is declared with, if that is all it is."""
    if not isinstance(d.type, PointerType) or d.volatile or d.init is None:
        return None
    init = d.init
    if not (isinstance(init, ir.Unary) and init.op == "&" and isinstance(init.operand, ir.VarRef)):
        return None
    v = private.get(init.operand.name)
    if v is None or v.volatile or v.type != d.type.pointee:
        return None
    return v.name


def _uses_through(node: Node, pointers: set[str], bad: set[str]) -> None:
    """Add to ``bad`` each of ``pointers`` that ``node`` uses other than as ``*p``, ``p[0]``
    or ``p->field``."""
    if isinstance(node, ir.Unary) and node.op == "*" and isinstance(node.operand, ir.VarRef):
        return
    if isinstance(node, ir.Index) and isinstance(node.base, ir.VarRef) \
            and isinstance(node.index, ir.IntLit) and node.index.value == 0:
        return
    if isinstance(node, ir.Member) and node.arrow and isinstance(node.base, ir.VarRef):
        return
    if isinstance(node, ir.VarRef) and node.name in pointers:
        bad.add(node.name)
        return
    for child in children(node):
        _uses_through(child, pointers, bad)


class _Through(Rewriter):
    def __init__(self, targets: dict[str, ir.VarDecl]) -> None:
        self.targets = targets

    def _var(self, e: ir.Expr) -> ir.Expr | None:
        if isinstance(e, ir.VarRef) and e.name in self.targets:
            v = self.targets[e.name]
            return ir.VarRef(v.type, v.name, loc=e.loc)
        return None

    def rewrite_Unary(self, e: ir.Unary) -> ir.Expr:
        v = self._var(e.operand) if e.op == "*" else None
        return e if v is None else v

    def rewrite_Index(self, e: ir.Index) -> ir.Expr:
        v = self._var(e.base)
        return e if v is None else v

    def rewrite_Member(self, e: ir.Member) -> ir.Expr:
        v = self._var(e.base) if e.arrow else None
        return e if v is None else dataclasses.replace(e, base=v, arrow=False)

    def rewrite_DeclStmt(self, s: ir.DeclStmt) -> ir.Stmt | tuple[ir.Stmt, ...]:
        kept = tuple(d for d in s.decls if d.name not in self.targets)
        if len(kept) == len(s.decls):
            return s
        return dataclasses.replace(s, decls=kept) if kept else ()


def read_through_addresses(body: ir.Block) -> ir.Block:
    """``body`` with its pointers to private variables replaced by the variables (see the
    module docstring)."""
    decls = [d for n in walk(body) if isinstance(n, ir.DeclStmt) for d in n.decls]
    private = {d.name: d for d in decls if d.space is AddressSpace.PRIVATE}
    whole = effects(body, Effects())
    targets: dict[str, ir.VarDecl] = {}
    for d in decls:
        name = _target(d, private)
        if name is not None and d.name not in whole.writes \
                and d.name not in whole.address_taken:
            targets[d.name] = private[name]
    if not targets:
        return body
    bad: set[str] = set()
    _uses_through(body, set(targets), bad)
    targets = {p: v for p, v in targets.items() if p not in bad}
    if not targets:
        return body
    out: ir.Block = _Through(targets).rewrite(body)
    return out
