"""One walker and one rewriter for every IR node.

``children(node)`` yields the IR nodes directly inside a node (expressions, statements,
declarations) in source order. ``Rewriter`` rebuilds a tree bottom-up: override
``rewrite_<NodeClass>`` to replace nodes of one class; unchanged subtrees are shared, not copied.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ppcl.compiler.ir import nodes as ir

Node = Any  # an IR node: Expr, Stmt, Param, Function, top-level declaration or Module
N = TypeVar("N")

_NODE_BASES = (ir.Expr, ir.Stmt, ir.Param, ir.Function, ir.TypeDef, ir.RecordDef, ir.EnumDef,
               ir.GlobalVar, ir.Module)


def is_node(value: object) -> bool:
    return isinstance(value, _NODE_BASES)


def _node_fields(node: Node) -> tuple[str, ...]:
    return _fields_of(type(node))


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields_of(cls: type) -> tuple[str, ...]:
    """The fields of a node class that may hold nodes, looked up once per class (every walk
    asks for every node: a program of 20,000 statements is walked some thirty times)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls)
                                     if f.name not in ("loc", "type"))
    return names


def _child_list(node: Node) -> list[Node]:
    found: list[Node] = []
    for name in _fields_of(type(node)):
        value = getattr(node, name)
        if isinstance(value, _NODE_BASES):
            found.append(value)
        elif isinstance(value, tuple):
            found.extend(item for item in value if isinstance(item, _NODE_BASES))
    return found


def children(node: Node) -> Iterator[Node]:
    return iter(_child_list(node))


def walk(node: Node) -> Iterator[Node]:
    """Every node of the tree, parents before children, in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        found = _child_list(current)
        found.reverse()
        stack.extend(found)


def find_all(node: Node, cls: type[N]) -> list[N]:
    return [n for n in walk(node) if isinstance(n, cls)]


def declared_names(node: Node) -> set[str]:
    """The variables declared anywhere in ``node`` (the front end gives every declaration of a
    function its own name)."""
    return {d.name for n in walk(node) if isinstance(n, ir.DeclStmt) for d in n.decls}


def contains(node: Node, predicate: Callable[[Node], bool]) -> bool:
    return any(predicate(n) for n in walk(node))


class Rewriter:
    """Bottom-up rebuilding of a tree.

    ``rewrite(node)`` first rewrites the children, rebuilds the node if any child changed, then
    calls ``rewrite_<ClassName>(node)`` if defined. A hook returns the replacement node; for
    statements inside a block it may return a tuple of statements, which is spliced in.
    """

    def rewrite(self, node: Node) -> Any:
        rebuilt = self.rewrite_children(node)
        hook = getattr(self, "rewrite_" + type(rebuilt).__name__, None)
        if hook is None:
            return rebuilt
        return hook(rebuilt)

    def rewrite_children(self, node: Node) -> Node:
        changes: dict[str, Any] = {}
        for name in _node_fields(node):
            value = getattr(node, name)
            if is_node(value):
                new = self.rewrite(value)
                if isinstance(new, tuple):
                    new = ir.Block(new, loc=value.loc)
                if new is not value:
                    changes[name] = new
            elif isinstance(value, tuple) and any(is_node(item) for item in value):
                items: list[Any] = []
                changed = False
                for item in value:
                    if not is_node(item):
                        items.append(item)
                        continue
                    new = self.rewrite(item)
                    if isinstance(new, tuple):
                        items.extend(new)
                        changed = True
                    else:
                        items.append(new)
                        changed = changed or new is not item
                if changed:
                    changes[name] = tuple(items)
        if not changes:
            return node
        return dataclasses.replace(node, **changes)


class Renamer(Rewriter):
    """Renames the variables in ``names``: their references and their declarations."""

    def __init__(self, names: dict[str, str]):
        self.names = names

    def rewrite_VarRef(self, e: ir.VarRef) -> ir.Expr:
        new = self.names.get(e.name)
        return e if new is None else dataclasses.replace(e, name=new)

    def rewrite_VarDecl(self, d: ir.VarDecl) -> ir.VarDecl:
        new = self.names.get(d.name)
        return d if new is None else dataclasses.replace(d, name=new)


def child_stmts(s: ir.Stmt) -> list[ir.Stmt]:
    """The statements directly inside ``s`` (a loop's init and body, an ``if``'s branches)."""
    if isinstance(s, ir.Block):
        return list(s.stmts)
    if isinstance(s, ir.If):
        return [s.then] + ([s.otherwise] if s.otherwise is not None else [])
    if isinstance(s, ir.For):
        return ([s.init] if s.init is not None else []) + [s.body]
    if isinstance(s, ir.While | ir.DoWhile | ir.Switch):
        return [s.body]
    return []


def map_child_stmts(s: ir.Stmt, fn: Callable[[ir.Stmt], ir.Stmt]) -> ir.Stmt:
    """``s`` with ``fn`` applied to each statement held in one of its fields (alone or in a
    tuple of statements); expressions are kept."""
    changes: dict[str, object] = {}
    for f in dataclasses.fields(s):
        value = getattr(s, f.name)
        if isinstance(value, ir.Stmt):
            changes[f.name] = fn(value)
        elif isinstance(value, tuple) and value and isinstance(value[0], ir.Stmt):
            changes[f.name] = tuple(fn(v) for v in value)
    return dataclasses.replace(s, **changes)  # type: ignore[arg-type]


_END = object()  # closes a node or a tuple in ``fingerprint``'s stack
_ALL_FIELDS: dict[type, tuple[str, ...]] = {}


def fingerprint(node: Node) -> str:
    """A digest of every field of a tree, nodes and the values they hold (names, types,
    locations), computed with a stack of its own: ``repr`` of a deep tree (a sum of thousands
    of terms) runs out of the interpreter's C recursion, which Python 3.12 does not let a
    program raise, even on a thread with a deep stack."""
    parts: list[str] = []
    stack: list[Any] = [node]
    while stack:
        value = stack.pop()
        if value is _END:
            parts.append(")")
        elif isinstance(value, _NODE_BASES):
            cls = type(value)
            names = _ALL_FIELDS.get(cls)
            if names is None:
                names = _ALL_FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
            parts.append(cls.__name__ + "(")
            stack.append(_END)
            stack.extend([getattr(value, name) for name in reversed(names)])
        elif isinstance(value, tuple | list):
            parts.append("[")
            stack.append(_END)
            stack.extend(reversed(value))
        else:
            parts.append(repr(value))
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
