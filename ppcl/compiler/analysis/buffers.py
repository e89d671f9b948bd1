"""Which pointer parameters a kernel reads and writes, and with which index expressions.

The command overlay (``ppcl/overlay``) builds its task graph from these static sets, refined by
the buffers a launch binds; vertical fusion asks whether every access to a buffer is a plain
``p[e]`` with ``e`` one index it can compare across kernels (``direct`` and ``indices``).

A pointer parameter used in any other way (passed to a function, copied, offset, an element's
address taken as in ``atomic_add(&p[i], 1)``, a member of an element written) is ``direct=False`` and counts as read and, unless its pointee is
``const`` (and no cast makes it a pointer to non-const data), written: the sets are
conservative, never too small.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ppcl.compiler.analysis.effects import Effects, effects
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import PointerType
from ppcl.compiler.ir.visit import Node, children, find_all


@dataclass
class ParamAccess:
    """How a kernel uses one pointer parameter."""

    reads: bool = False
    writes: bool = False
    direct: bool = True  # every access is p[e] read, or p[e] = v at the whole element
    indices: list[ir.Expr] = field(default_factory=list)  # the e of every p[e]


def _param_of(e: ir.Expr, params: dict[str, ParamAccess]) -> ParamAccess | None:
    if isinstance(e, ir.VarRef):
        return params.get(e.name)
    return None


def _element_root(e: ir.Expr) -> ir.Index | None:
    """The ``p[e]`` an lvalue such as ``p[i].x`` or ``p[i].s0`` is part of."""
    while isinstance(e, ir.Member | ir.Swizzle) and not (isinstance(e, ir.Member) and e.arrow):
        e = e.base
    return e if isinstance(e, ir.Index) else None


def _escape(access: ParamAccess, pointer: ir.Expr) -> None:
    """The pointer (or an element's address) is used other than by ``p[e]``: it may be read,
    and written unless its pointee is ``const``."""
    access.direct = False
    access.reads = True
    pointee_const = isinstance(pointer.type, PointerType) and pointer.type.const
    access.writes = access.writes or not pointee_const


def _scan(node: Node, params: dict[str, ParamAccess]) -> None:
    if isinstance(node, ir.Assign):
        whole = node.target
        root = whole if isinstance(whole, ir.Index) else _element_root(whole)
        access = _param_of(root.base, params) if root is not None else None
        if root is not None and access is not None:
            access.writes = True
            access.indices.append(root.index)
            if node.op != "=" or root is not whole:
                access.reads = True
                access.direct = False
            _scan(root.index, params)
            _scan(node.value, params)
            return
    if isinstance(node, ir.Unary) and node.op == "&":
        root = _element_root(node.operand)
        access = _param_of(root.base, params) if root is not None else None
        if root is not None and access is not None:  # &p[e]: escapes as p itself does
            _escape(access, root.base)
            access.indices.append(root.index)
            _scan(root.index, params)
            return
    if isinstance(node, ir.Unary) and node.op in ("++", "--", "p++", "p--"):
        root = _element_root(node.operand)
        access = _param_of(root.base, params) if root is not None else None
        if root is not None and access is not None:
            access.reads = access.writes = True
            access.direct = False
            access.indices.append(root.index)
            _scan(root.index, params)
            return
    if isinstance(node, ir.Index):
        access = _param_of(node.base, params)
        if access is not None:
            access.reads = True
            access.indices.append(node.index)
            _scan(node.index, params)
            return
    if isinstance(node, ir.VarRef) and node.name in params:
        _escape(params[node.name], node)
        return
    if isinstance(node, ir.Cast) and isinstance(node.type, PointerType) and not node.type.const:
        # a cast to a pointer to non-const data, ((__global float *)a)[i] = v, writes
        # through a parameter whatever its own pointee's const says
        _scan(node.operand, params)
        for ref in find_all(node.operand, ir.VarRef):
            if ref.name in params:
                params[ref.name].writes = True
        return
    for child in children(node):
        _scan(child, params)


def buffer_accesses(fn: ir.Function) -> dict[str, ParamAccess]:
    """Per pointer parameter of ``fn``: read, written, direct, and its index expressions."""
    params = {p.name: ParamAccess() for p in fn.params if isinstance(p.type, PointerType)}
    if fn.body is not None:
        _scan(fn.body, params)
    return params


def single_definitions(fn: ir.Function) -> dict[str, ir.Expr]:
    """Private variables declared once with an initializer and never assigned again (nor
    their address taken): each name maps to its initializer, which it always equals."""
    if fn.body is None:
        return {}
    decls = find_all(fn.body, ir.VarDecl)
    counts: dict[str, int] = {}
    for decl in decls:
        counts[decl.name] = counts.get(decl.name, 0) + 1
    eff = effects(fn.body, Effects())
    return {d.name: d.init for d in decls
            if d.init is not None and counts[d.name] == 1 and d.name not in eff.writes
            and d.name not in eff.address_taken and not isinstance(d.init, ir.InitList)}
