"""The data layout change of PPOpenCL (Section 3.3.2, Algorithm 3): a kernel that reads a
buffer as a row-major ``R x C`` matrix, rewritten to read its transpose, and the host-side
shuffles between the two layouts.

``analysis.layout.transposable`` says whether (and with which ``C``) a buffer can be
transposed; ``transpose`` rewrites every access ``p[r*C + c]`` to ``p[c*R + r]``, with ``R``
passed in a trailing ``ulong`` argument (``ROWS_PARAM``) so one compiled kernel serves every
size. The new index is computed in 64-bit arithmetic from ``r`` and ``c`` as the analysis split
them (no division). ``to_transposed`` and ``from_transposed`` are the shuffles the host runs
before and after the kernel (the paper's ``shuffle()``); ``analysis.reuse.better_layout``
decides whether the change pays on a device.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ppcl.compiler.analysis.affine import Poly
from ppcl.compiler.analysis.layout import (
    QUERIES,
    Symbols,
    TransposeFacts,
    decompose,
    indexed,
    is_site,
    site_poly,
    symbols_of,
    transposable,
)
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import UINT, ULONG, PointerType
from ppcl.compiler.ir.visit import Node, Rewriter

__all__ = ["ROWS_PARAM", "TransposeFacts", "from_transposed", "to_transposed", "transposable",
           "transpose"]

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
    rewriter = _Transposer(facts.param, columns, rows, symbols_of(fn), scalars)
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
        poly = site_poly(site, self.syms)
        split = None if poly is None else decompose(poly, self.columns)
        if split is None:  # transposable() accepted every access, so this is a misuse
            raise ValueError(f"the access of {self.param} at {site.loc} does not split as "
                             "r*C + c")
        row, col = split
        index = _build(col * Poly.var(_ROWS) + row, self.syms, self.rows)
        base = ir.VarRef(self.pointer, self.param, loc=site.loc)
        return ir.Index(self.pointer.pointee, base, dataclasses.replace(index, loc=site.loc),
                        loc=site.loc)


_ROWS = "\0rows"  # R's name inside a polynomial; no identifier can take it


def _atom(name: str, syms: Symbols, rows: ir.Expr) -> ir.Expr:
    """A name of a polynomial as a ulong expression."""
    if name == _ROWS:
        return rows
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


# ---------------------------------------------------------------- host-side shuffles


def _check(data: np.ndarray, rows: int, columns: int) -> None:
    if data.ndim != 1:
        raise ValueError(f"a layout shuffle takes a 1-D element array, not shape {data.shape}")
    if rows < 0 or columns <= 0 or rows * columns != data.size:
        raise ValueError(f"{data.size} elements are not {rows} rows of {columns} columns")


def to_transposed(data: np.ndarray, rows: int, columns: int) -> np.ndarray:
    """The elements of a row-major ``rows x columns`` matrix in the order of its transpose:
    element ``(r, c)`` moves from ``r*columns + c`` to ``c*rows + r``."""
    _check(data, rows, columns)
    return np.ascontiguousarray(data.reshape(rows, columns).T).reshape(-1)


def from_transposed(data: np.ndarray, rows: int, columns: int) -> np.ndarray:
    """The inverse of ``to_transposed``: the original row-major order back."""
    _check(data, rows, columns)
    return np.ascontiguousarray(data.reshape(columns, rows).T).reshape(-1)
