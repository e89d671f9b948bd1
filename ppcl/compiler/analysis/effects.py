"""What a piece of IR writes: private variables (by name), whether any variable has its address
taken, and whether it touches memory through pointers or calls with effects.

Work-group formation asks this to decide where variables live; the vector scalarizer asks
whether an expression may be evaluated more than once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import PointerType, ScalarType, indexes_in_place
from ppcl.compiler.ir.visit import Node, walk

ASYNC_COPIES = ("async_work_group_copy", "async_work_group_strided_copy")


def root_var(e: ir.Expr) -> str | None:
    """The private variable an lvalue designates (or part of), None for memory via pointers."""
    while True:
        if isinstance(e, ir.VarRef):
            return e.name
        if isinstance(e, ir.Member) and not e.arrow:
            e = e.base
        elif isinstance(e, ir.Swizzle):
            e = e.base
        elif isinstance(e, ir.Index) and indexes_in_place(e.base.type):
            e = e.base
        else:
            return None


@dataclass
class Effects:
    writes: set[str] = field(default_factory=set)
    address_taken: set[str] = field(default_factory=set)
    memory: bool = False  # stores through pointers, impure calls


def effects(node: Node, out: Effects) -> Effects:
    for n in walk(node):
        target: ir.Expr | None = None
        if isinstance(n, ir.Assign):
            target = n.target
        elif isinstance(n, ir.Unary) and n.op in ("++", "--", "p++", "p--"):
            target = n.operand
        elif isinstance(n, ir.Unary) and n.op == "&":
            root = root_var(n.operand)
            if root is not None:
                out.address_taken.add(root)
        elif isinstance(n, ir.Call):
            if n.builtin is None or n.name in ASYNC_COPIES or n.name == "printf":
                out.memory = True
            elif any(isinstance(a.type, PointerType) for a in n.args):
                out.memory = True
        if target is not None:
            root = root_var(target)
            if root is None:
                out.memory = True
            else:
                out.writes.add(root)
    return out


def written_vars(node: Node) -> set[str]:
    return effects(node, Effects()).writes


def write_counts(node: Node) -> dict[str, int]:
    """How many assignments, increments, decrements and address-takings of each variable
    named whole (``v = ...``, ``v++``, ``&v``) ``node`` holds."""
    counts: dict[str, int] = {}
    for n in walk(node):
        target = n.target if isinstance(n, ir.Assign) else n.operand \
            if isinstance(n, ir.Unary) and n.op in ("++", "--", "p++", "p--", "&") else None
        if isinstance(target, ir.VarRef):
            counts[target.name] = counts.get(target.name, 0) + 1
    return counts


def unwritten_int_params(params: tuple[ir.Param, ...], body: Node) -> frozenset[str]:
    """The integer scalar parameters ``body`` never assigns: the same value in every lane."""
    written = written_vars(body)
    return frozenset(p.name for p in params if isinstance(p.type, ScalarType)
                     and p.type.is_integer and p.name not in written)


def is_effect_free(e: ir.Expr) -> bool:
    eff = effects(e, Effects())
    return not eff.writes and not eff.memory
