"""Unroll-and-jam of a work-item loop around a per-work-item floating-point reduction.

A work-item that sums along its own row (``for (k = 0; k < cols; ++k) acc += A[row * cols + k]
* x[k];`` in a dense matrix-vector product) reads memory that strides across work-items, so the
work-item loop does not vectorize, and the ``k`` loop may not either: IEEE sums must be added
in order, and an in-order sum waits for the latency of each add. Running ``JAM_WIDTH``
work-items through the ``k`` loop together gives that many independent sums in flight, each
still added in its own order, so results do not change (gemv: 29 ms -> 10 ms on one thread).

A work-item body qualifies when it is::

    prefix   declarations with effect-free initializers, and `if (c) <exit>` with effect-free c
    loop     one `for` whose control is uniform, whose body writes only private variables and
             accumulates a float/double declared in the prefix
    suffix   anything without an exit

``transforms/schedule.py`` records the plan on the work-item loop; the printer
(``codegen/kernel_c.py``) runs the prefix of each of ``JAM_WIDTH`` consecutive
work-items, the loop once with their bodies one after another, then their suffixes. If any of
them exits in the prefix, that block of work-items runs one at a time instead, which is safe
because the prefix has no effects.
"""

from __future__ import annotations

from ppcl.compiler.analysis.effects import Effects, effects, is_effect_free
from ppcl.compiler.analysis.uniformity import const_int
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.types import ArrayType, ScalarType, StructType
from ppcl.compiler.ir.visit import Node, walk
from ppcl.compiler.ir.wgnodes import JamPlan, StridePlan

JAM_WIDTH = 4
_FLOATS = ("float", "double", "half")
_JUMPS = (ir.Break, ir.Continue, ir.Return, wg.WorkItemExit)


def _is_exit(s: ir.Stmt) -> bool:
    if isinstance(s, ir.Block) and len(s.stmts) == 1:
        s = s.stmts[0]
    return isinstance(s, wg.WorkItemExit)


def _names(node: Node) -> set[str]:
    return {n.name for n in walk(node) if isinstance(n, ir.VarRef)}


def plan_jam(loop: wg.WorkItemLoop, local_size: tuple[int, int, int],
             uniform: frozenset[str], params: frozenset[str]) -> JamPlan | str:
    """The jam plan for ``loop``, or why its body does not qualify.

    ``uniform``: variables the same for every work-item; ``params``: kernel arguments that the
    kernel never assigns."""
    if loop.mask is not None:
        return "masked work-item loop"
    if local_size[0] % JAM_WIDTH or local_size[0] == JAM_WIDTH:
        return f"local size {local_size[0]} along x is not {JAM_WIDTH} times 2 or more"
    if any(isinstance(n, wg.ContextRef | wg.MaskRef | wg.GroupEval) for n in walk(loop.body)):
        return "the body reads context arrays, masks or group evaluations"
    stmts = loop.body.stmts if isinstance(loop.body, ir.Block) else (loop.body,)
    fors = [i for i, s in enumerate(stmts) if isinstance(s, ir.For)]
    if not fors:
        return "no for loop in the body"
    if len(fors) > 1:
        return f"{len(fors)} for loops in the body, not one"
    at = fors[0]
    prefix, body_loop, suffix = stmts[:at], stmts[at], stmts[at + 1:]
    assert isinstance(body_loop, ir.For)
    carried: list[ir.VarDecl] = []
    for s in prefix:
        if isinstance(s, ir.DeclStmt):
            for d in s.decls:
                if isinstance(d.type, ArrayType | StructType) or d.volatile:
                    return f"prefix declares '{d.name}' as an aggregate or volatile"
                if d.init is not None and (isinstance(d.init, ir.InitList)
                                           or not is_effect_free(d.init)):
                    return f"the initializer of '{d.name}' in the prefix has effects"
                carried.append(d)
        elif isinstance(s, ir.If):
            if s.otherwise is not None or not _is_exit(s.then) or not is_effect_free(s.cond):
                return "an if in the prefix is not an effect-free exit"
        else:
            return "the prefix holds more than declarations and exits"
    if not _uniform_control(body_loop, uniform, params):
        return "the loop's control is not uniform"
    if any(isinstance(n, _JUMPS) for n in walk(body_loop.body)):
        return "the loop body jumps"
    names = {d.name for d in carried}
    if effects(body_loop.step, Effects()).writes & names:
        # the header runs once for all copies: their own counters would never change
        return "the loop's counter is declared in the prefix"
    eff = effects(body_loop.body, Effects())
    local = {d.name for n in walk(body_loop.body) if isinstance(n, ir.DeclStmt) for d in n.decls}
    if eff.memory or eff.address_taken or not eff.writes <= names | local:
        return "the loop body writes memory or variables it does not own"
    if not any(isinstance(n, ir.Assign) and isinstance(n.target, ir.VarRef)
               and n.target.name in names and isinstance(n.target.type, ScalarType)
               and n.target.type.name in _FLOATS for n in walk(body_loop.body)):
        return "no floating-point accumulator declared in the prefix"
    if any(_is_exit(n) or isinstance(n, wg.WorkItemExit) for s in suffix for n in walk(s)):
        return "the suffix exits"
    return JamPlan(prefix, body_loop, suffix, tuple(carried), JAM_WIDTH)


_RANGE_QUERIES = ("get_global_size", "get_local_size", "get_num_groups")


def _uniform_expr(e: ir.Expr, uniform: frozenset[str], params: frozenset[str]) -> bool:
    """``e`` is arithmetic on literals, range sizes and variables the same for every work-item.
    Anything else (a load, a context array entry, a call) is not known to be uniform."""
    for n in walk(e):
        if isinstance(n, ir.Call):
            if n.builtin is None or n.name not in _RANGE_QUERIES:
                return False
        elif isinstance(n, ir.Unary):
            if n.op not in ("-", "+", "!", "~"):
                return False
        elif not isinstance(n, ir.IntLit | ir.FloatLit | ir.VarRef | ir.Binary | ir.Cast
                            | ir.Conditional):
            return False
    return _names(e) <= uniform | params


def _uniform_control(loop: ir.For, uniform: frozenset[str], params: frozenset[str]) -> bool:
    """The loop's init, condition and step compute only its counter, from uniform values."""
    values: list[ir.Expr] = []  # what init, condition and step read
    if isinstance(loop.init, ir.DeclStmt):
        counter = {d.name for d in loop.init.decls}
        values += [d.init for d in loop.init.decls if d.init is not None]
    elif isinstance(loop.init, ir.ExprStmt) and isinstance(loop.init.expr, ir.Assign):
        counter = effects(loop.init, Effects()).writes
        values.append(loop.init.expr.value)
    else:
        return False
    step = loop.step
    if isinstance(step, ir.Assign) and step.op in ("=", "+=", "-="):
        values.append(step.value)
    elif not (isinstance(step, ir.Unary) and step.op in ("++", "--", "p++", "p--")):
        return False
    if loop.cond is None or effects(step, Effects()).writes != counter:
        return False
    values.append(loop.cond)
    if not counter <= uniform or counter & effects(loop.body, Effects()).writes:
        return False
    return all(_uniform_expr(v, uniform | frozenset(counter), params) for v in values)


# ---------------------------------------------------------------- grid-stride loops in lock step


def _strip_casts(e: ir.Expr) -> ir.Expr:
    while isinstance(e, ir.Cast) and isinstance(e.type, ScalarType) and e.type.is_integer:
        e = e.operand
    return e


def _starts_at_x(e: ir.Expr, uniform: frozenset[str], params: frozenset[str]) -> bool:
    """``e`` is the work-item's id along x (global or local), plus a uniform term."""
    e = _strip_casts(e)
    if isinstance(e, ir.Call):
        return e.builtin is not None and e.name in ("get_global_id", "get_local_id") \
            and const_int(e.args[0]) == 0
    if isinstance(e, ir.Binary) and e.op == "+":
        return (_starts_at_x(e.lhs, uniform, params) and _uniform_expr(e.rhs, uniform, params)) \
            or (_starts_at_x(e.rhs, uniform, params) and _uniform_expr(e.lhs, uniform, params))
    return False


def _is_counter(e: ir.Expr, name: str) -> bool:
    return isinstance(e, ir.VarRef) and e.name == name


def _compared_as_counter(side: ir.Expr, counter: ScalarType, start: ir.Expr) -> str:
    """Why the counter's side of the condition, ``side`` (the counter under integer casts),
    may compare differently from the counter itself as the 64-bit lock-step counter, or ""
    when it does not: a cast narrower than the counter wraps, and an unsigned one makes a
    negative counter large, which a start at the bare id along x (never below zero, and the
    step is positive) rules out."""
    casts = []
    while isinstance(side, ir.Cast):
        assert isinstance(side.type, ScalarType)
        casts.append(side.type)
        side = side.operand
    if any(c.size < counter.size for c in casts):
        return "the condition narrows the counter"
    bare = _strip_casts(start)
    at_id = isinstance(bare, ir.Call) and _starts_at_x(bare, frozenset(), frozenset())
    if any(not c.is_signed for c in casts) and not at_id:
        return "the condition compares the counter unsigned and it may start below zero"
    return ""


def plan_stride(loop: wg.WorkItemLoop, uniform: frozenset[str],
                params: frozenset[str]) -> StridePlan | str:
    """The lock-step plan for a work-item loop whose body is one grid-stride loop, or why the
    loop is not one."""
    if loop.mask is not None:
        return "masked work-item loop"
    stmts = [s for s in (loop.body.stmts if isinstance(loop.body, ir.Block) else (loop.body,))
             if not isinstance(s, ir.Empty)]
    if len(stmts) != 1 or not isinstance(stmts[0], ir.For):
        return "the body is not one for loop"
    f = stmts[0]
    if not isinstance(f.init, ir.DeclStmt) or len(f.init.decls) != 1:
        return "the loop does not declare one counter"
    var = f.init.decls[0]
    t = var.type
    # narrower counters would wrap where the 64-bit lock-step counter does not
    if not (isinstance(t, ScalarType) and t.is_integer and t.is_signed and t.size >= 4) \
            or var.init is None:
        return f"counter '{var.name}' is not a signed integer of 32 bits or more with a start"
    if not _starts_at_x(var.init, uniform, params):
        return f"counter '{var.name}' does not start at the id along x plus a uniform value"
    cond, step = f.cond, f.step
    if not isinstance(cond, ir.Binary) or not isinstance(step, ir.Assign) or step.op != "+=":
        return "the loop is not 'i < end; i += step'"
    if not (isinstance(step.target, ir.VarRef) and step.target.name == var.name
            and _uniform_expr(step.value, uniform, params)):
        return "the step is not a uniform increment of the counter"
    lhs, rhs, op = cond.lhs, cond.rhs, cond.op
    if _is_counter(_strip_casts(rhs), var.name):
        lhs, rhs, op = rhs, lhs, {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
    # the bound keeps its casts: the lock-step loop compares with the value the loop sees
    if not (_is_counter(_strip_casts(lhs), var.name) and op in ("<", "<=")
            and _uniform_expr(rhs, uniform, params)):
        return "the condition is not the counter below a uniform bound"
    why = _compared_as_counter(lhs, t, var.init)
    if why:
        return why
    end = rhs if op == "<" else ir.Binary(rhs.type, "+", rhs, ir.IntLit(rhs.type, 1))
    if any(isinstance(n, _JUMPS) for n in walk(f.body)):
        return "the loop body jumps"
    eff = effects(f.body, Effects())
    local = {d.name for n in walk(f.body) if isinstance(n, ir.DeclStmt) for d in n.decls}
    if not eff.writes <= local:
        return "the loop body writes variables declared outside it"
    return StridePlan(f, var, end, step.value)
