"""Reassigned variables split into one variable per value: a top-level ``v = e;`` that does not
read ``v`` starts a new variable ``v__N``, declared there with ``e``.

GPU-first kernels reuse their index variables for a second phase: a tiled transpose computes
``xIndex``, ``yIndex`` and ``index_in`` from the group and local ids, loads a tile, waits at the
barrier, then assigns the same variables the output's indices. Each value alone is a pure
function of ids and arguments, which work-group formation computes again in every region that
reads it (``context._recomputable``); a variable with two values is neither, so it becomes a
context array, and every access through it gathers or scatters (a 4096x2048 transpose 2.4x
slower than with the second values named apart, as was measured).

Only the kernel body's own statement list is cut, at assignments that are statements of it
(not under a branch or in a loop): its statements run in order once per work-item, so no value
of ``v`` assigned before such an assignment can be read after it. Every reference between one
cut and the next, at any depth, names the same new variable. A variable whose address is taken,
a parameter, a volatile or a non-scalar is left as it is.
"""

from __future__ import annotations

import dataclasses

from ppcl.compiler.analysis.effects import Effects, effects
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import ScalarType
from ppcl.compiler.ir.visit import Rewriter, declared_names, walk


class _Rename(Rewriter):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def rewrite_VarRef(self, e: ir.VarRef) -> ir.Expr:
        return dataclasses.replace(e, name=self.new) if e.name == self.old else e


def _cut(s: ir.Stmt, name: str) -> ir.Expr | None:
    """The value of ``s`` when it is ``name = value;`` with a value not reading ``name``."""
    if not isinstance(s, ir.ExprStmt) or not isinstance(s.expr, ir.Assign):
        return None
    e = s.expr
    if e.op != "=" or not isinstance(e.target, ir.VarRef) or e.target.name != name:
        return None
    if any(isinstance(n, ir.VarRef) and n.name == name for n in walk(e.value)):
        return None
    return e.value


def _candidates(stmts: tuple[ir.Stmt, ...], whole: Effects) -> dict[str, ir.VarDecl]:
    """Scalars declared by the statements themselves that some later statement reassigns."""
    found: dict[str, ir.VarDecl] = {}
    for s in stmts:
        if isinstance(s, ir.DeclStmt):
            for d in s.decls:
                if isinstance(d.type, ScalarType) and not d.volatile and not d.const \
                        and d.name not in whole.address_taken:
                    found[d.name] = d
    return {name: d for name, d in found.items()
            if any(_cut(s, name) is not None for s in stmts)}


def split_live_ranges(kernel: ir.Function) -> tuple[ir.Function, tuple[str, ...]]:
    """``kernel`` with its reassigned variables split (see the module docstring), and a line
    per split variable for ``PPCL_DEBUG=plans``."""
    body = kernel.body
    if body is None:
        return kernel, ()
    stmts = body.stmts
    whole = effects(body, Effects())
    candidates = _candidates(stmts, whole)
    if not candidates:
        return kernel, ()
    taken = declared_names(body) | {p.name for p in kernel.params}
    notes: list[str] = []
    for name, decl in candidates.items():
        out: list[ir.Stmt] = []
        current = name
        lines: list[str] = []
        for s in stmts:
            value = _cut(s, name)
            if value is not None:
                n = 2
                while f"{name}__{n}" in taken:
                    n += 1
                current = f"{name}__{n}"
                taken.add(current)
                if value.type != decl.type:
                    value = ir.Cast(decl.type, value, implicit=True, loc=value.loc)
                new = ir.VarDecl(current, decl.type, init=value, loc=s.loc)
                out.append(ir.DeclStmt((new,), loc=s.loc))
                lines.append(f"{s.loc.line}")
                continue
            out.append(s if current == name else _Rename(name, current).rewrite(s))
        stmts = tuple(out)
        notes.append(f"'{name}' reassigned at line{'s' if len(lines) > 1 else ''} "
                     f"{', '.join(lines)}: a new variable from each, one value each")
    return dataclasses.replace(kernel, body=dataclasses.replace(body, stmts=stmts)), \
        tuple(notes)
