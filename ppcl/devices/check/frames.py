"""The control state of the checking device's interpreter: a function's frame (its values,
the variables living in memory, the lanes that returned) and a loop's break/continue masks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import ArrayType, PointerType, StructType


@dataclass
class Loop:
    broken: np.ndarray
    continued: np.ndarray
    is_switch: bool = False


@dataclass
class Frame:
    function: ir.Function
    vars: dict[str, Any]
    memory: dict[str, int]  # variables living in memory: name -> region id
    uninit: dict[str, np.ndarray]  # scalars declared without a value: lanes that set them
    returned: np.ndarray
    ret: Any = None
    loops: list[Loop] = field(default_factory=list)
    regions: list[int] = field(default_factory=list)


def memory_names(function: ir.Function) -> frozenset[str]:
    """Variables that live in memory: arrays, structs, and those whose address is taken."""
    names: set[str] = set()

    def root(e: ir.Expr) -> None:
        while isinstance(e, (ir.Index, ir.Member, ir.Swizzle)):
            if isinstance(e, ir.Index) and isinstance(e.base.type, PointerType):
                return
            if isinstance(e, ir.Member) and e.arrow:
                return
            e = e.base
        if isinstance(e, ir.VarRef):
            names.add(e.name)

    def visit(node: Any) -> None:
        if isinstance(node, ir.Unary) and node.op == "&":
            root(node.operand)
        if isinstance(node, ir.VarDecl) and isinstance(node.type, (ArrayType, StructType)):
            names.add(node.name)
        if isinstance(node, tuple):
            for item in node:
                visit(item)
            return
        if isinstance(node, (ir.Expr, ir.Stmt)):
            for name in node.__dataclass_fields__:
                if name not in ("type", "loc"):
                    visit(getattr(node, name))

    visit(function.body)
    for p in function.params:
        if isinstance(p.type, StructType):
            names.add(p.name)
    return frozenset(names)
