"""The data layout change of PPOpenCL (Section 3.3.2, Algorithm 3): a kernel that reads a
buffer as a row-major ``R x C`` matrix, rewritten to read its transpose, and the host-side
shuffles between the two layouts.

``analysis.layout.transposable`` says whether (and with which ``C``) a buffer can be
transposed; ``transpose`` rewrites every access ``p[r*C + c]`` to ``p[c*R + r]``, with ``R``
passed in a trailing ``ulong`` argument (``ROWS_PARAM``) so one compiled kernel serves every
size. The new index is computed in 64-bit arithmetic from ``r`` and ``c`` as the analysis split
them (no division); an opaque atom of ``r`` (a value that is no polynomial) is its original
expression, evaluated at the access as before. ``to_transposed`` and ``from_transposed`` are the shuffles the host runs
before and after the kernel (the paper's ``shuffle()``); ``analysis.reuse.better_layout``
decides whether the change pays on a device.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ppcl.compiler.analysis.affine import Poly
from ppcl.compiler.analysis.effects import Effects, effects
from ppcl.compiler.analysis.layout import (
    QUERIES,
    Symbols,
    TransposeFacts,
    decompose,
    indexed,
    is_opaque,
    is_site,
    site_poly,
    symbols_of,
    transposable,
)
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import LONG, UINT, ULONG, PointerType, VectorType
from ppcl.compiler.ir.visit import Node, Rewriter, walk

__all__ = ["ROWS_PARAM", "TransposeFacts", "from_transposed", "to_transposed", "transposable",
           "transpose", "vector_components"]

ROWS_PARAM = "__ppcl_rows_{}"  # format with the pointer's name: the trailing ulong R
_QUERY_OF = {prefix: name for name, prefix in QUERIES.items()}


def transpose(fn: ir.Function, facts: TransposeFacts, name: str) -> ir.Function:
    """``fn`` renamed ``name``, reading ``facts.param``'s buffer in its transposed layout, with
    one more trailing ``ulong`` argument holding the row count ``R``."""
    assert fn.body is not None
    rows_name = ROWS_PARAM.format(facts.param)
    if any(p.name == rows_name for p in fn.params):
        raise ValueError(f"{fn.name} already reads {facts.param} transposed")
    rows = ir.VarRef(ULONG, rows_name)
    columns: int | str = facts.columns.value if isinstance(facts.columns, ir.IntLit) \
        else facts.columns.name  # type: ignore[attr-defined]
    fn = indexed(fn, facts.param)
    assert fn.body is not None
    # a buffer of structs of one scalar type becomes a buffer of that scalar type
    pointer = next(p.type for p in fn.params if p.name == facts.param)
    assert isinstance(pointer, PointerType)
    scalars = dataclasses.replace(pointer, pointee=facts.element)
    syms = symbols_of(fn)
    syms.buffer = facts.param
    rewriter = _Transposer(facts.param, columns, rows, syms, scalars)
    body = rewriter.rewrite(fn.body)
    params = tuple(dataclasses.replace(p, type=scalars) if p.name == facts.param else p
                   for p in fn.params) + (ir.Param(rows_name, ULONG),)
    return dataclasses.replace(fn, name=name, params=params, body=body)


class _Transposer(Rewriter):
    """Every element access ``is_site`` finds, as ``p[c*R + r]`` on a pointer to scalars (the
    sites are recognized on the original tree: the rewriter passes the Member of a struct
    access before its Index child has changed)."""

    def __init__(self, param: str, columns: int | str, rows: ir.Expr, syms: Symbols,
                 pointer: PointerType):
        self.param = param
        self.columns = columns
        self.rows = rows
        self.syms = syms
        self.pointer = pointer

    def rewrite(self, node: Node) -> Any:
        if is_site(node, self.param):
            return self._site(node)
        return super().rewrite(node)

    def _site(self, site: ir.Expr) -> ir.Expr:
        self.syms.opaque = {}
        poly = site_poly(site, self.syms)
        split = None if poly is None else decompose(poly, self.columns)
        if split is None:  # transposable() accepted every access, so this is a misuse
            raise ValueError(f"the access of {self.param} at {site.loc} does not split as "
                             "r*C + c")
        row, col = split
        index = _build(col * Poly.var(_ROWS) + row, self.syms, self.rows)
        self.syms.opaque = None
        base = ir.VarRef(self.pointer, self.param, loc=site.loc)
        return ir.Index(self.pointer.pointee, base, dataclasses.replace(index, loc=site.loc),
                        loc=site.loc)


_ROWS = "\0rows"  # R's name inside a polynomial; no identifier can take it


def _atom(name: str, syms: Symbols, rows: ir.Expr) -> ir.Expr:
    """A name of a polynomial as a ulong expression."""
    if name == _ROWS:
        return rows
    if is_opaque(name):  # evaluated where the original index evaluated it
        assert syms.opaque is not None
        value = syms.opaque[name]
        return value if value.type == ULONG else ir.Cast(ULONG, value)
    prefix = name.rstrip("012")
    if prefix in _QUERY_OF and name[len(prefix):].isdigit():
        dim = ir.IntLit(UINT, int(name[len(prefix):]), f"{name[len(prefix):]}u")
        query = _QUERY_OF[prefix]
        return ir.Call(ULONG, query, (dim,), builtin=f"{query}__uint")
    ref = ir.VarRef(syms.types[name], name)
    return ref if ref.type == ULONG else ir.Cast(ULONG, ref)


def _build(p: Poly, syms: Symbols, rows: ir.Expr) -> ir.Expr:
    """``p`` as a ulong expression: a sum of coefficient-times-atoms terms. Arithmetic modulo
    2^64 gives the same bits as exact arithmetic wherever the exact value is an index, so a
    negative coefficient is a wrapping subtraction."""
    total: ir.Expr | None = None
    for mono, coeff in sorted(p.terms, key=lambda t: (len(t[0]) == 0, t[0])):
        term: ir.Expr | None = None
        for name in mono:
            atom = _atom(name, syms, rows)
            term = atom if term is None else ir.Binary(ULONG, "*", term, atom)
        magnitude = abs(coeff)
        if term is None:
            term = ir.IntLit(ULONG, magnitude, f"{magnitude}UL")
        elif magnitude != 1:
            term = ir.Binary(ULONG, "*", ir.IntLit(ULONG, magnitude, f"{magnitude}UL"), term)
        if total is None:
            total = term if coeff > 0 else ir.Binary(ULONG, "-", ir.IntLit(ULONG, 0, "0UL"), term)
        else:
            total = ir.Binary(ULONG, "+" if coeff > 0 else "-", total, term)
    return total if total is not None else ir.IntLit(ULONG, 0, "0UL")


# ---------------------------------------------------------------- vector elements


VECTOR_TEMP = "__ppcl_{}_{}"  # format with the pointer's name and a number: a stored vector
_STORES = ("++", "--", "p++", "p--", "&")  # unary operators whose operand is an lvalue


def vector_components(fn: ir.Function, param: str) -> ir.Function | str:
    """``fn`` reading and writing the vectors of ``param`` (``__global floatN *p``) one
    component at a time through a pointer to their scalars, or why it cannot.

    A buffer of ``N``-component vectors is a row-major matrix with one row per vector and one
    column per component (``N`` the storage width: a 3-component vector keeps its fourth,
    padding, column), so once the kernel reads ``p[e].y`` as ``p[N*e + 1]``, ``p[e]`` as
    ``(floatN)(p[N*e], ..., p[N*e + N-1])`` and ``p[e].xz`` as ``(float2)(p[N*e], p[N*e +
    2])``, and stores ``p[e] op= v;`` (or ``p[e].xz op= v;``) as ``v`` taken once, then stored
    component by component, the layout change of scalar elements applies to it unchanged
    (``C = N``: the structure of arrays). The result is the same kernel on the same bytes,
    provided no other argument aliases ``param`` (host fusion's alias table ensures it).

    Refused: an index that stores, calls a function that is not a work-item query, or reads
    ``param`` itself (it is evaluated once per component); a whole vector or several
    components stored other than by an assignment statement, incremented, or whose address
    is taken; any other use of the pointer.
    """
    if fn.body is None:
        return f"{fn.name} has no body"
    decl = next((p for p in fn.params if p.name == param), None)
    if decl is None or not isinstance(decl.type, PointerType) \
            or not isinstance(decl.type.pointee, VectorType):
        return f"{param} does not point to vectors"
    vector = decl.type.pointee
    scalars = dataclasses.replace(decl.type, pointee=vector.elem)
    rewriter = _Components(param, vector, scalars)
    try:
        body = rewriter.rewrite(indexed(fn, param).body)
    except _Refused as refused:
        return str(refused)
    for node in walk(body):
        if isinstance(node, ir.VarRef) and node.name == param and node.type != scalars:
            return f"{param} is used other than as p[e], p[e].x or p[e] = v (at {node.loc})"
        stored = node.target if isinstance(node, ir.Assign) \
            else node.operand if isinstance(node, ir.Unary) and node.op in _STORES else None
        while isinstance(stored, ir.Swizzle):
            stored = stored.base
        if stored is not None and id(stored) in rewriter.gathered:
            return f"several components of {param} are stored or have their address taken " \
                   f"in an expression at {node.loc}"
    params = tuple(dataclasses.replace(p, type=scalars) if p.name == param else p
                   for p in fn.params)
    return dataclasses.replace(fn, params=params, body=body)


class _Refused(Exception):
    pass


class _Components(Rewriter):
    """The rewrite of ``vector_components``; ``gathered`` holds the ids of the vector
    literals it made from loads, which must not end up stored to."""

    def __init__(self, param: str, vector: VectorType, pointer: PointerType):
        self.param = param
        self.vector = vector
        self.pointer = pointer
        self.temps = 0
        self.gathered: set[int] = set()

    def _element(self, e: Node) -> bool:
        return isinstance(e, ir.Index) and isinstance(e.base, ir.VarRef) \
            and e.base.name == self.param

    def _lanes(self, e: Node) -> tuple[ir.Index, tuple[int, ...]] | None:
        """The element and the components ``e`` names: ``p[e]`` (all) or ``p[e].xz``."""
        if self._element(e):
            assert isinstance(e, ir.Index)
            return e, tuple(range(self.vector.width))
        if isinstance(e, ir.Swizzle) and self._element(e.base):
            assert isinstance(e.base, ir.Index)
            return e.base, e.indices
        return None

    def _component(self, element: ir.Index, k: int) -> ir.Index:
        """``p[N*e + k]`` on the pointer to scalars."""
        index = self.rewrite(element.index)
        found = effects(index, Effects())
        if found.writes or found.memory or any(
                isinstance(n, ir.VarRef) and n.name == self.param for n in walk(index)) or any(
                isinstance(n, ir.Call) and n.name not in QUERIES for n in walk(index)):
            raise _Refused(f"the index of {self.param} at {element.loc} stores, calls or reads "
                           f"{self.param}: it cannot be evaluated once per component")
        if index.type != LONG:  # N*e + k in 64 bits: exact for every element index
            index = ir.Cast(LONG, index, loc=element.loc)
        width = self.vector.storage_width
        scaled = ir.Binary(LONG, "*", ir.IntLit(LONG, width), index, loc=element.loc)
        at = ir.Binary(LONG, "+", scaled, ir.IntLit(LONG, k), loc=element.loc) if k else scaled
        return ir.Index(self.vector.elem, ir.VarRef(self.pointer, self.param, loc=element.loc),
                        at, loc=element.loc)

    def _gather(self, e: ir.Expr, element: ir.Index, lanes: tuple[int, ...]) -> ir.Expr:
        """The components ``lanes`` of ``element`` loaded one by one, as ``e``'s value."""
        if len(lanes) == 1:
            return self._component(element, lanes[0])
        assert isinstance(e.type, VectorType)
        literal = ir.VectorLiteral(e.type, tuple(self._component(element, k) for k in lanes),
                                   loc=e.loc)
        self.gathered.add(id(literal))
        return literal

    def rewrite(self, node: Node) -> Any:
        if isinstance(node, ir.ExprStmt) and isinstance(node.expr, ir.Assign):
            lanes = self._lanes(node.expr.target)
            if lanes is not None and len(lanes[1]) > 1:
                return self._store(node.expr, *lanes)
        if isinstance(node, ir.Expr):
            lanes = self._lanes(node)
            if lanes is not None:
                return self._gather(node, *lanes)
        return super().rewrite(node)

    def _store(self, assign: ir.Assign, element: ir.Index, lanes: tuple[int, ...]) -> ir.Stmt:
        """``p[e].xz op= v;`` as ``{ T t = v; p[N*e] op= t.s0; p[N*e + 2] op= t.s1; }``."""
        name = VECTOR_TEMP.format(self.param, self.temps)
        self.temps += 1
        value = self.rewrite(assign.value)
        temp = ir.VarDecl(name, value.type, init=value, loc=assign.loc)
        stmts: list[ir.Stmt] = [ir.DeclStmt((temp,), loc=assign.loc)]
        for position, k in enumerate(lanes):
            part: ir.Expr = ir.VarRef(value.type, name, loc=assign.loc)
            if isinstance(value.type, VectorType):
                part = ir.Swizzle(value.type.elem, part, (position,), f"s{position:x}",
                                  loc=assign.loc)
            stmts.append(ir.ExprStmt(dataclasses.replace(
                assign, target=self._component(element, k), value=part), loc=assign.loc))
        return ir.Block(tuple(stmts), loc=assign.loc)


# ---------------------------------------------------------------- host-side shuffles


def _check(data: np.ndarray, rows: int, columns: int) -> None:
    if data.ndim != 1:
        raise ValueError(f"a layout shuffle takes a 1-D element array, not shape {data.shape}")
    if rows < 0 or columns <= 0 or rows * columns != data.size:
        raise ValueError(f"{data.size} elements are not {rows} rows of {columns} columns")


def to_transposed(data: np.ndarray, rows: int, columns: int,
                  out: np.ndarray | None = None) -> np.ndarray:
    """The elements of a row-major ``rows x columns`` matrix in the order of its transpose:
    element ``(r, c)`` moves from ``r*columns + c`` to ``c*rows + r``; written into ``out``
    (another array of as many elements) when given."""
    _check(data, rows, columns)
    target = _target(data, out)
    _copy_transposed(data.reshape(rows, columns), target.reshape(columns, rows))
    return target


def from_transposed(data: np.ndarray, rows: int, columns: int,
                    out: np.ndarray | None = None) -> np.ndarray:
    """The inverse of ``to_transposed``: the original row-major order back."""
    _check(data, rows, columns)
    target = _target(data, out)
    _copy_transposed(data.reshape(columns, rows), target.reshape(rows, columns))
    return target


def _target(data: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    if out is None:
        return np.empty_like(data)
    if out.shape != data.shape or out.dtype != data.dtype or out is data:
        raise ValueError("a layout shuffle writes another array of the same elements")
    return out


def _copy_transposed(source: np.ndarray, target: np.ndarray) -> None:
    """``target[:] = source.T``, one contiguous line of the source at a time along the shorter
    side: numpy's own copy of the transposed view walks a narrow matrix (4 columns of a
    million rows) element by element with a long stride, about 2.5 times slower."""
    if source.shape[0] <= source.shape[1]:
        for k in range(source.shape[0]):
            target[:, k] = source[k]
    else:
        for k in range(source.shape[1]):
            target[k] = source[:, k]
