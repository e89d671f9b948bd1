"""Estimated cost of a statement per work-item, in abstract operations.

1 per operator, cast or work-item query, 4 per memory access or builtin call, 20 per helper
call; an ``if`` costs its condition and its costlier branch; a loop costs its trip count times
one iteration, the trip count read from ``for (i = a; i < b; i += c)`` with literal bounds,
else ``DEFAULT_TRIPS``. Thread coarsening (``transforms/coarsen.py``) weighs the work it shares
with it.
"""

from __future__ import annotations

from ppcl.compiler.analysis.uniformity import ID_QUERIES, const_int
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import indexes_in_place
from ppcl.compiler.ir.visit import walk

COST_OP = 1
COST_MEMORY = 4
COST_BUILTIN = 4
COST_HELPER = 20
DEFAULT_TRIPS = 16


def is_pointer_access(e: ir.Expr) -> bool:
    """``p[i]``, ``*p`` or ``p->f``: an access to memory (not to a private array or vector)."""
    if isinstance(e, ir.Index):
        return not indexes_in_place(e.base.type)
    if isinstance(e, ir.Unary):
        return e.op == "*"
    if isinstance(e, ir.Member):
        return e.arrow
    return False



def _expr_cost(e: ir.Expr | None) -> int:
    if e is None:
        return 0
    total = 0
    for n in walk(e):
        if isinstance(n, ir.Call):
            if n.builtin is None:
                total += COST_HELPER
            elif n.name in ID_QUERIES:
                total += COST_OP
            else:
                total += COST_BUILTIN
        elif is_pointer_access(n):
            total += COST_MEMORY
        elif isinstance(n, ir.Binary | ir.Unary | ir.Assign | ir.Conditional | ir.Index
                        | ir.Swizzle | ir.Member):
            total += COST_OP
        elif isinstance(n, ir.Cast) and not n.implicit:
            total += COST_OP
    return total


def _trips(s: ir.For) -> int:
    """Trip count of ``for (i = a; i < b; i++ / i += c)`` with literal a, b, c, else
    ``DEFAULT_TRIPS``."""
    start: int | None = None
    var: str | None = None
    if isinstance(s.init, ir.DeclStmt) and len(s.init.decls) == 1 and s.init.decls[0].init:
        var, start = s.init.decls[0].name, const_int(s.init.decls[0].init)
    elif isinstance(s.init, ir.ExprStmt) and isinstance(s.init.expr, ir.Assign) \
            and s.init.expr.op == "=" and isinstance(s.init.expr.target, ir.VarRef):
        var, start = s.init.expr.target.name, const_int(s.init.expr.value)
    cond, step = s.cond, s.step
    if var is None or start is None or not isinstance(cond, ir.Binary) or step is None:
        return DEFAULT_TRIPS
    if not (_refers_to(cond.lhs, var) and cond.op in ("<", "<=")):
        return DEFAULT_TRIPS
    end = const_int(cond.rhs)
    stride: int | None = None
    if isinstance(step, ir.Unary) and step.op in ("++", "p++") and _refers_to(step.operand, var):
        stride = 1
    elif isinstance(step, ir.Assign) and step.op == "+=" and _refers_to(step.target, var):
        stride = const_int(step.value)
    if end is None or stride is None or stride <= 0:
        return DEFAULT_TRIPS
    end += cond.op == "<="
    return max(0, -(-(end - start) // stride))


def _refers_to(e: ir.Expr, name: str) -> bool:
    while isinstance(e, ir.Cast):
        e = e.operand
    return isinstance(e, ir.VarRef) and e.name == name


def expr_cost(e: ir.Expr | None) -> int:
    """The estimated cost of evaluating ``e`` once."""
    return _expr_cost(e)


def loop_trips(s: ir.For | ir.While | ir.DoWhile) -> int:
    """The trip count the estimates assume for a loop."""
    return _trips(s) if isinstance(s, ir.For) else DEFAULT_TRIPS


def stmt_cost(s: ir.Stmt | None) -> int:
    if s is None:
        return 0
    if isinstance(s, ir.Block):
        return sum(stmt_cost(x) for x in s.stmts)
    if isinstance(s, ir.Switch):
        return _expr_cost(s.expr) + stmt_cost(s.body)
    if isinstance(s, ir.DeclStmt):
        return sum(_expr_cost(d.init) + (d.init is not None) for d in s.decls)
    if isinstance(s, ir.ExprStmt):
        return _expr_cost(s.expr)
    if isinstance(s, ir.If):
        return _expr_cost(s.cond) + max(stmt_cost(s.then), stmt_cost(s.otherwise))
    if isinstance(s, ir.For):
        per_trip = _expr_cost(s.cond) + stmt_cost(s.body) + _expr_cost(s.step)
        return stmt_cost(s.init) + _trips(s) * per_trip
    if isinstance(s, ir.While | ir.DoWhile):
        return DEFAULT_TRIPS * (_expr_cost(s.cond) + stmt_cost(s.body))
    if isinstance(s, ir.Return):
        return _expr_cost(s.value)
    return 0
