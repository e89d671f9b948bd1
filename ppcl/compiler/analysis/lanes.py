"""How the values of a kernel change from one work-item to the next along dimension 0.

Holistic vectorization (``transforms/vectorize.py``) puts ``width`` consecutive work-items
along dimension 0 (``x``) into the lanes of one. What it can do with a value depends on its
stride along x: lane ``k`` of a value with stride ``s`` is lane 0's value plus ``k * s``.

* stride 0: uniform along x (arguments, ``get_global_id(1)``, a load through a uniform
  address): one scalar serves every lane;
* a known integer stride: ``get_global_id(0)`` has stride 1, ``2 * i + y * w`` stride 2; an
  index of stride 1 addresses consecutive elements, so one vector load reads them;
* ``VARY``: anything else (loads through varying addresses, products of varying values).

A variable takes the join of the strides of every value assigned to it, iterated to a fixed
point: ``i = gid0`` then ``i += 1`` keeps stride 1, ``s = 0`` then ``s += a[i]`` is varying.
Only integer values keep a stride; others are uniform or varying. Control flow is not looked
at: the vectorizer refuses control that varies along x except tail guards, whose bodies it
runs only when every lane takes them. Unlike ``uniformity.py`` (uniform across the whole
work-group), a value computed from ``get_global_id(1)`` or loaded through it is uniform here.
"""

from __future__ import annotations

from ppcl.compiler.analysis.uniformity import const_int
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import ScalarType, Type
from ppcl.compiler.ir.visit import children, walk

VARY = None  # varying along x with no known constant stride
Stride = int | None

ID_QUERIES = frozenset(("get_global_id", "get_local_id", "get_group_id", "get_local_size",
                        "get_global_size", "get_num_groups", "get_global_offset",
                        "get_enqueued_local_size", "get_global_linear_id",
                        "get_local_linear_id"))
_INCREMENTS = ("++", "--", "p++", "p--")


def query(e: ir.Expr) -> tuple[str, int | None] | None:
    """``(name, dimension)`` of a work-item query, through conversions; the dimension is None
    when it is not a literal (or the query takes none)."""
    while isinstance(e, ir.Cast):
        e = e.operand
    if isinstance(e, ir.Call) and e.builtin is not None and e.name in ID_QUERIES:
        return e.name, const_int(e.args[0]) if e.args else None
    return None


def part_of(target: ir.Expr) -> str | None:
    """The private variable whose component or field ``target`` is (``v.x``, ``s.f.y``)."""
    while isinstance(target, ir.Swizzle) or (isinstance(target, ir.Member) and not target.arrow):
        target = target.base
    return target.name if isinstance(target, ir.VarRef) else None


def _is_int(t: Type) -> bool:
    return isinstance(t, ScalarType) and t.is_integer


def _join(a: Stride, b: Stride) -> Stride:
    return a if a == b else VARY


def _flat(s: Stride) -> Stride:
    return 0 if s == 0 else VARY


class Strides:
    """The stride along x of the private variables of ``body`` and of its expressions."""

    def __init__(self, body: ir.Stmt):
        self.vars: dict[str, Stride] = {}
        assignments: list[tuple[str, str, ir.Expr | None]] = []  # (variable, op, value)
        for n in walk(body):
            if isinstance(n, ir.DeclStmt):
                for d in n.decls:
                    self.vars[d.name] = 0
                    if d.init is not None:
                        assignments.append((d.name, "=", d.init))
            elif isinstance(n, ir.Assign) and isinstance(n.target, ir.VarRef):
                assignments.append((n.target.name, n.op, n.value))
            elif isinstance(n, ir.Assign) and part_of(n.target) is not None:
                assignments.append((part_of(n.target) or "", "part", n.value))
            elif isinstance(n, ir.Unary) and n.op in _INCREMENTS and isinstance(n.operand, ir.VarRef):
                assignments.append((n.operand.name, "+=", None))
            elif isinstance(n, ir.Unary) and n.op == "&" and isinstance(n.operand, ir.VarRef):
                assignments.append((n.operand.name, "&", None))  # written through a pointer
        for _ in range(64):
            new: dict[str, Stride] = dict.fromkeys(self.vars, 0)
            seen: set[str] = set()
            for name, op, value in assignments:
                s = self._assigned(name, op, value)
                new[name] = _join(new[name], s) if name in seen else s
                seen.add(name)
            if new == self.vars:
                return
            self.vars = new
        self.vars = dict.fromkeys(self.vars, VARY)  # no fixed point: assume the worst

    def _assigned(self, name: str, op: str, value: ir.Expr | None) -> Stride:
        if op == "&":
            return VARY
        old = self.vars.get(name, 0)
        s = 0 if value is None else self.of(value)
        if op == "part":  # one component or field: the rest keeps its value
            return 0 if old == 0 and s == 0 else VARY
        if op == "=":
            return s
        if op in ("+=", "-=") and old is not VARY and s is not VARY:
            return old + s if op == "+=" else old - s
        return 0 if old == 0 and s == 0 else VARY

    def of(self, e: ir.Expr) -> Stride:
        s = self._of(e)
        if s not in (0, VARY) and not _is_int(e.type):
            return VARY
        return s

    def _of(self, e: ir.Expr) -> Stride:
        if isinstance(e, ir.IntLit | ir.FloatLit | ir.StringLit | ir.SizeOf | ir.VecStep):
            return 0
        if isinstance(e, ir.VarRef):
            return self.vars.get(e.name, 0)
        if isinstance(e, ir.Cast):
            # a conversion to 8 or 16 bits wraps within a few lanes: no stride survives it
            # (ids and indices are taken to fit 32 bits, as in ``transforms/widen.py``)
            keeps = _is_int(e.type) and e.type.size >= 4  # type: ignore[attr-defined]
            return self.of(e.operand) if keeps else _flat(self.of(e.operand))
        if isinstance(e, ir.Unary):
            s = self.of(e.operand)
            if e.op == "-":
                return VARY if s is VARY else -s
            return s if e.op in ("+",) + _INCREMENTS else _flat(s)
        if isinstance(e, ir.Binary):
            return self._binary(e)
        if isinstance(e, ir.Call):
            q = query(e)
            if q is not None:
                if q[1] is None:
                    return VARY
                return 1 if q[0] in ("get_global_id", "get_local_id") and q[1] == 0 else 0
        if isinstance(e, ir.Assign) and isinstance(e.target, ir.VarRef):
            return self.vars.get(e.target.name, 0)
        parts = [self.of(c) for c in children(e) if isinstance(c, ir.Expr)]
        return 0 if all(s == 0 for s in parts) else VARY

    def _binary(self, e: ir.Binary) -> Stride:
        a, b = self.of(e.lhs), self.of(e.rhs)
        if a is VARY or b is VARY:
            return VARY
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        if a == 0 and b == 0:
            return 0
        if e.op == "*":
            ka, kb = const_int(e.lhs), const_int(e.rhs)
            if kb is not None:
                return a * kb
            if ka is not None:
                return b * ka
        if e.op == "<<":
            count = const_int(e.rhs)
            if count is not None and 0 <= count < 32:
                return a << count
        return VARY
