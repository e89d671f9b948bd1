"""Uniformity (divergence) analysis of a kernel across its work-group.

Every value of a kernel is classified as

* ``UNIFORM``: the same for every work-item of a group (kernel arguments, group ids, sizes,
  constants and what is computed from them under uniform control);
* ``AFFINE``: ``uniform + sum_d stride_d * local_id(d)``, with the stride per dimension known
  when it is a compile-time constant (``get_global_id(0)`` is affine with stride 1 in dim 0:
  consecutive work-items touch consecutive elements);
* ``VARYING``: anything else (atomics, loads through varying addresses, values assigned under
  varying control).

Variables take the join of every assignment to them, iterated to a fixed point. Control is
counted in divergence levels: each branch or loop whose condition varies, and each varying
``break``/``continue``/``return`` before a statement, adds one. An assignment at a deeper level
than the variable's declaration makes the variable varying (some work-items skip it); one at
the declaration's own level does not, since every work-item that can read the variable ran it.
So a loop counter declared after a varying early ``return`` is uniform among the work-items
still running.

For a statement that branches or loops, ``control_uniform`` tells whether every work-item of
the group takes the same path through it, which is what lets the work-group compiler run a
barrier inside it in lock step without per-work-item bookkeeping. ``convergent`` is the weaker
property that every work-item reaching it takes the same path (its trip count is uniform among
them), which is enough to move a barrier-free loop out of the work-item loop under a mask.
The analysis is conservative: VARYING is always safe.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ppcl.compiler.analysis.callgraph import builtin_family, reaching
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import indexes_in_place
from ppcl.compiler.ir.visit import children, declared_names, walk


class Kind(enum.IntEnum):
    UNIFORM = 0
    AFFINE = 1
    VARYING = 2


Strides = tuple[int | None, int | None, int | None]


@dataclass(frozen=True)
class Shape:
    kind: Kind
    # for AFFINE: the coefficient of local_id(d); 0 = independent of dim d, None = unknown
    strides: Strides = (0, 0, 0)

    @property
    def is_uniform(self) -> bool:
        return self.kind is Kind.UNIFORM

    def consecutive_in(self, dim: int) -> bool:
        return self.kind is Kind.AFFINE and self.strides[dim] == 1


UNIFORM = Shape(Kind.UNIFORM)
VARYING = Shape(Kind.VARYING, (None, None, None))


def affine_in(dim: int, stride: int | None = 1) -> Shape:
    strides: list[int | None] = [0, 0, 0]
    strides[dim] = stride
    return Shape(Kind.AFFINE, (strides[0], strides[1], strides[2]))


def join(a: Shape, b: Shape) -> Shape:
    """The shape of a value that may be either ``a`` or ``b`` (a merge of assignments)."""
    if a == b:
        return a
    if a.kind is Kind.VARYING or b.kind is Kind.VARYING:
        return VARYING
    # two different uniform/affine values merged per work-item: no longer affine in general
    if a.kind is Kind.UNIFORM and b.kind is Kind.UNIFORM:
        return UNIFORM
    return VARYING


def _add(a: Shape, b: Shape) -> Shape:
    if Kind.VARYING in (a.kind, b.kind):
        return VARYING
    if a.kind is Kind.UNIFORM:
        return b
    if b.kind is Kind.UNIFORM:
        return a
    strides = tuple(None if x is None or y is None else x + y for x, y in zip(a.strides, b.strides))
    return Shape(Kind.AFFINE, strides)  # type: ignore[arg-type]


def _neg(a: Shape) -> Shape:
    if a.kind is not Kind.AFFINE:
        return a
    return Shape(Kind.AFFINE, tuple(None if s is None else -s for s in a.strides))  # type: ignore[arg-type]


def _scale(a: Shape, factor: int | None) -> Shape:
    if a.kind is not Kind.AFFINE:
        return a
    return Shape(Kind.AFFINE, tuple(  # type: ignore[arg-type]
        0 if s == 0 else None if s is None or factor is None else s * factor for s in a.strides))


def _all_uniform(shapes: list[Shape]) -> Shape:
    return UNIFORM if all(s.is_uniform for s in shapes) else VARYING


_ID_BUILTINS = {"get_local_id", "get_global_id"}
_UNIFORM_WORKITEM = {"get_group_id", "get_local_size", "get_global_size", "get_num_groups",
                     "get_global_offset", "get_work_dim"}
# every work-item query: pure, its only argument a dimension
ID_QUERIES = frozenset(_ID_BUILTINS | _UNIFORM_WORKITEM)
_VARYING_FAMILIES = {"atomic"}
_LOOPS = (ir.For, ir.While, ir.DoWhile)


def const_int(e: ir.Expr) -> int | None:
    """The value of an integer literal, through any conversions; None for anything else."""
    while isinstance(e, ir.Cast):
        e = e.operand
    if isinstance(e, ir.IntLit):
        return e.value
    return None


class Uniformity:
    """The result of ``analyze_kernel``; queries are cheap after construction."""

    def __init__(self, module: ir.Module, kernel: ir.Function,
                 local_size: tuple[int, int, int] | None = None):
        self.module = module
        self.kernel = kernel
        # dimensions along which a group holds one work-item: ids along them are uniform
        self._single = frozenset(d for d in range(3) if local_size is not None
                                 and local_size[d] == 1)
        self._vars: dict[str, Shape] = {}
        self._params = {p.name for p in kernel.params}
        self._varying_helpers: frozenset[str] | None = None
        # statements (by id) executed under varying control
        self._varying_control: set[int] = set()
        # If/loop statements (by id) that every work-item traverses the same way
        self._uniform_control: dict[int, bool] = {}
        # If/loop statements (by id) that every work-item reaching them traverses the same way
        self._convergent: set[int] = set()
        # divergence level of each variable's declaration (parameters: 0)
        self._decl_level: dict[str, int] = {}
        self._solve()

    # ------------------------------------------------------------ queries

    def var(self, name: str) -> Shape:
        if name in self._params:
            return UNIFORM
        return self._vars.get(name, UNIFORM)

    @property
    def varying_vars(self) -> frozenset[str]:
        return frozenset(n for n, s in self._vars.items() if not s.is_uniform)

    def is_uniform(self, e: ir.Expr) -> bool:
        return self.expr(e).is_uniform

    def control_uniform(self, stmt: ir.Stmt) -> bool:
        """True when every work-item of the group reaches ``stmt`` together and takes the same
        path through it (its condition, trip count and every exit from it are uniform)."""
        return self._uniform_control.get(id(stmt), False)

    def convergent(self, stmt: ir.Stmt) -> bool:
        """True when every work-item that reaches ``stmt`` takes the same path through it
        (``control_uniform`` without the requirement that all of them reach it)."""
        return id(stmt) in self._convergent

    def declared_level(self, name: str) -> int:
        """Divergence level of ``name``'s declaration: 0 when every work-item runs it."""
        return self._decl_level.get(name, 0)

    def under_varying_control(self, stmt: ir.Stmt) -> bool:
        return id(stmt) in self._varying_control

    def expr(self, e: ir.Expr) -> Shape:
        if isinstance(e, ir.IntLit | ir.FloatLit | ir.StringLit | ir.SizeOf | ir.VecStep):
            return UNIFORM
        if isinstance(e, ir.VarRef):
            return self.var(e.name)
        if isinstance(e, ir.Cast):
            inner = self.expr(e.operand)
            return inner if inner.kind is not Kind.AFFINE or _is_integerish(e) else VARYING
        if isinstance(e, ir.Binary):
            return self._binary(e)
        if isinstance(e, ir.Unary):
            operand = self.expr(e.operand)
            if e.op == "-":
                return _neg(operand)
            if e.op == "+":
                return operand
            if e.op in ("*",):  # load through a pointer
                return UNIFORM if operand.is_uniform else VARYING
            return UNIFORM if operand.is_uniform else VARYING
        if isinstance(e, ir.Index):
            return _all_uniform([self.expr(e.base), self.expr(e.index)])
        if isinstance(e, ir.Call):
            return self._call(e)
        if isinstance(e, ir.Assign):
            return self.expr(e.value) if e.op == "=" else _all_uniform(
                [self.expr(e.target), self.expr(e.value)])
        parts = [self.expr(c) for c in children(e) if isinstance(c, ir.Expr)]
        return _all_uniform(parts)

    # ------------------------------------------------------------ expressions

    def _binary(self, e: ir.Binary) -> Shape:
        lhs, rhs = self.expr(e.lhs), self.expr(e.rhs)
        if lhs.is_uniform and rhs.is_uniform:
            return UNIFORM
        if not _is_integerish(e):
            return VARYING
        if e.op == "+":
            return _add(lhs, rhs)
        if e.op == "-":
            return _add(lhs, _neg(rhs))
        if e.op == "*":
            if lhs.kind is Kind.AFFINE and rhs.is_uniform:
                return _scale(lhs, const_int(e.rhs))
            if rhs.kind is Kind.AFFINE and lhs.is_uniform:
                return _scale(rhs, const_int(e.lhs))
        if e.op == "<<" and lhs.kind is Kind.AFFINE and rhs.is_uniform:
            shift = const_int(e.rhs)
            return _scale(lhs, None if shift is None else 1 << shift)
        return VARYING

    def _call(self, call: ir.Call) -> Shape:
        args = [self.expr(a) for a in call.args]
        if call.builtin is not None:
            if call.name in _ID_BUILTINS:
                dim = const_int(call.args[0]) if call.args else None
                if dim is None or not 0 <= dim <= 2:
                    return VARYING
                if dim in self._single:
                    return UNIFORM
                return affine_in(dim)
            if call.name in _UNIFORM_WORKITEM:
                return _all_uniform(args)
            if builtin_family(call) in _VARYING_FAMILIES:
                return VARYING
            return _all_uniform(args)
        if self._helper_is_varying(call.name):
            return VARYING
        return _all_uniform(args)

    def _helper_is_varying(self, name: str) -> bool:
        """A helper's result can differ across work-items with uniform arguments when it reads
        work-item ids or uses atomics, itself or through what it calls."""
        if self._varying_helpers is None:
            self._varying_helpers = reaching(
                self.module,
                lambda call: call.name in _ID_BUILTINS or builtin_family(call) in _VARYING_FAMILIES)
        return name in self._varying_helpers or self.module.function(name) is None

    # ------------------------------------------------------------ fixed point over statements

    def _solve(self) -> None:
        body = self.kernel.body
        if body is None:
            return
        for _ in range(64):
            before = dict(self._vars)
            self._varying_control.clear()
            self._uniform_control.clear()
            self._convergent.clear()
            self._stmt(body, level=0)
            if self._vars == before:
                return
        # did not settle (should not happen: shapes only move up a finite lattice)
        for name in self._vars:
            self._vars[name] = VARYING

    def _assign_var(self, name: str, shape: Shape, level: int) -> None:
        """Join ``shape`` into ``name``; an assignment at a divergence level deeper than the
        declaration's makes it varying (work-items that skipped it keep another value)."""
        if name in self._params:
            # a parameter is a private copy per work-item once written
            self._params.discard(name)
            self._vars[name] = UNIFORM
        if level > self._decl_level.get(name, 0):
            shape = VARYING
        old = self._vars.get(name)
        self._vars[name] = shape if old is None else join(old, shape)

    def _declare(self, name: str, shape: Shape, level: int) -> None:
        self._decl_level[name] = level
        self._assign_var(name, shape, level)

    def _effects(self, e: ir.Expr, level: int) -> None:
        """Record the assignments an expression performs."""
        for node in walk(e):
            if isinstance(node, ir.Assign):
                root = _root_var(node.target)
                if root is None:
                    continue
                if isinstance(node.target, ir.VarRef):
                    value = self.expr(node.value) if node.op == "=" else _compound(
                        node.op, self.expr(node.target), self.expr(node.value))
                else:  # element, field or component store: the whole variable joins
                    value = _all_uniform([self.expr(node.value)] + [
                        self.expr(c) for c in walk(node.target)
                        if isinstance(c, ir.Expr) and c is not node.target
                        and not isinstance(c, ir.VarRef)])
                    value = join(self.var(root), value)
                self._assign_var(root, value, level)
            elif isinstance(node, ir.Unary) and node.op in ("++", "--", "p++", "p--"):
                root = _root_var(node.operand)
                if root is not None:
                    self._assign_var(root, self.var(root), level)
            elif isinstance(node, ir.Unary) and node.op == "&":
                root = _root_var(node.operand)
                if root is not None:  # written through a pointer we do not track
                    self._assign_var(root, VARYING, level)
            elif isinstance(node, ir.Call) and node.builtin is not None:
                # builtins that write through pointer arguments (sincos, fract, ...)
                for arg in node.args:
                    inner = arg
                    while isinstance(inner, ir.Cast):
                        inner = inner.operand
                    if isinstance(inner, ir.Unary) and inner.op == "&":
                        root = _root_var(inner.operand)
                        if root is not None:
                            self._assign_var(root, VARYING, level)

    def _stmt(self, s: ir.Stmt, level: int) -> bool:
        """Analyse ``s`` at divergence ``level``; return True when some work-items may leave
        ``s`` early in a varying way (a varying break/continue/return inside), which puts
        what follows one level deeper."""
        if level:
            self._varying_control.add(id(s))
        if isinstance(s, ir.Block):
            extra = 0
            for item in s.stmts:
                if self._stmt(item, level + extra):
                    extra = 1
            return bool(extra)
        if isinstance(s, ir.DeclStmt):
            for d in s.decls:
                if d.init is not None:
                    self._effects(d.init, level)
                    shape = self.expr(d.init) if not isinstance(d.init, ir.InitList) else \
                        _all_uniform([self.expr(x) for x in walk(d.init)
                                      if isinstance(x, ir.Expr) and x is not d.init])
                    self._declare(d.name, shape, level)
                else:
                    self._declare(d.name, UNIFORM, level)
            return False
        if isinstance(s, ir.ExprStmt):
            self._effects(s.expr, level)
            return False
        if isinstance(s, ir.If):
            self._effects(s.cond, level)
            split = not self.is_uniform(s.cond)
            inner = level + split
            diverged = self._stmt(s.then, inner)
            if s.otherwise is not None:
                diverged = self._stmt(s.otherwise, inner) or diverged
            self._record_control(s, not split and not diverged, level)
            return diverged or (split and _has_exit(s, in_switch=False))
        if isinstance(s, _LOOPS):
            return self._loop(s, level)
        if isinstance(s, ir.Switch):
            self._effects(s.expr, level)
            split = not self.is_uniform(s.expr)
            diverged = self._stmt(s.body, level + split)
            self._record_control(s, not split and not diverged, level)
            return diverged or (split and _has_exit(s.body, in_switch=True))
        if isinstance(s, ir.Return):
            if s.value is not None:
                self._effects(s.value, level)
            return level > 0
        if isinstance(s, ir.Break | ir.Continue):
            return level > 0
        return False

    def _record_control(self, s: ir.Stmt, same_path: bool, level: int) -> None:
        self._uniform_control[id(s)] = same_path and level == 0
        if same_path:
            self._convergent.add(id(s))

    def _loop(self, s: ir.For | ir.While | ir.DoWhile, level: int) -> bool:
        if isinstance(s, ir.For) and s.init is not None:
            self._stmt(s.init, level)
        cond = s.cond if not isinstance(s, ir.For) else s.cond
        step = s.step if isinstance(s, ir.For) else None
        # loop-carried values: analyse the body twice so updates feed back into the condition
        split = False
        diverged = False
        for _ in range(2):
            if cond is not None:
                self._effects(cond, level + split)
                split = split or not self.is_uniform(cond)
            diverged = self._stmt(s.body, level + split)
            if step is not None:
                self._effects(step, level + (split or diverged))
            if diverged:
                # some work-items leave or skip iterations: the trip count varies, so
                # everything the loop assigns is varying
                split = True
        same_path = not split and not diverged
        self._record_control(s, same_path, level)
        if not same_path:
            # a variable declared in the body lives one iteration: every work-item running an
            # iteration starts it afresh, so it is no value carried by a trip count that varies
            # (the counter of an inner loop over shared coefficients stays uniform)
            for name in _assigned_vars(s) - declared_names(s.body):
                self._assign_var(name, VARYING, level + 1)
        # a varying return inside leaves the loop's code after it divergent; breaks do not
        # escape the loop
        return _has_return(s) and not same_path


def _is_integerish(e: ir.Expr) -> bool:
    from ppcl.compiler.ir.types import PointerType, ScalarType

    t = e.type
    return isinstance(t, PointerType) or (isinstance(t, ScalarType) and t.is_integer)


def _compound(op: str, old: Shape, value: Shape) -> Shape:
    if old.is_uniform and value.is_uniform:
        return UNIFORM
    if op in ("+=", "-=") and value.is_uniform:
        return old
    return VARYING


def _root_var(e: ir.Expr) -> str | None:
    """The variable an lvalue stores into, when it is a variable (not memory behind a pointer)."""
    while True:
        if isinstance(e, ir.VarRef):
            return e.name
        if isinstance(e, ir.Swizzle):
            e = e.base
        elif isinstance(e, ir.Member) and not e.arrow:
            e = e.base
        elif isinstance(e, ir.Index):
            if not indexes_in_place(e.base.type):
                return None
            e = e.base
        elif isinstance(e, ir.Cast):
            e = e.operand
        else:
            return None


def _assigned_vars(s: ir.Stmt) -> set[str]:
    names: set[str] = set()
    for node in walk(s):
        if isinstance(node, ir.Assign):
            root = _root_var(node.target)
        elif isinstance(node, ir.Unary) and node.op in ("++", "--", "p++", "p--"):
            root = _root_var(node.operand)
        else:
            continue
        if root is not None:
            names.add(root)
    for node in walk(s):
        if isinstance(node, ir.DeclStmt):
            names.update(d.name for d in node.decls)
    return names


def _has_return(s: ir.Stmt) -> bool:
    return any(isinstance(n, ir.Return) for n in walk(s))


def _has_exit(s: ir.Stmt, in_switch: bool) -> bool:
    """Does ``s`` contain a return, or a break/continue that leaves ``s`` itself? Inside a
    switch body (``in_switch``) a break only ends the switch."""

    def visit(node: ir.Stmt, in_loop: bool, in_switch: bool) -> bool:
        if isinstance(node, ir.Return):
            return True
        if isinstance(node, ir.Break):
            return not in_loop and not in_switch
        if isinstance(node, ir.Continue):
            return not in_loop
        for child in children(node):
            if not isinstance(child, ir.Stmt):
                continue
            if visit(child, in_loop or isinstance(node, _LOOPS), in_switch or isinstance(node, ir.Switch)):
                return True
        return False

    return visit(s, False, in_switch)


def analyze_kernel(module: ir.Module, kernel: ir.Function,
                   local_size: tuple[int, int, int] | None = None) -> Uniformity:
    """The uniformity of ``kernel``'s values; ``local_size``, when the work-group's shape is
    known, makes the ids along a dimension of one work-item uniform."""
    return Uniformity(module, kernel, local_size)
