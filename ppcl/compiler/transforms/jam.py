"""Unroll-and-jam of a work-item loop around a per-work-item floating-point reduction.

A work-item that sums along its own row (``for (k = 0; k < cols; ++k) acc += A[row * cols + k]
* x[k];`` in a dense matrix-vector product) reads memory that strides across work-items, so the
work-item loop does not vectorize, and the ``k`` loop may not either: IEEE sums must be added
in order, and an in-order sum waits for the latency of each add. Running ``JAM_WIDTH``
work-items through the ``k`` loop together gives that many independent sums in flight, each
still added in its own order, so results do not change (gemv: 29 ms -> 10 ms on one thread).

A work-item body qualifies when it is::

    prefix   declarations with effect-free initializers, and `if (c) <exit>` with effect-free c
    lead     statements without exits after the last of those (`c[i * n + j] *= beta;`)
    loop     one `for` whose control is uniform, whose body writes only private variables it
             owns and memory, and accumulates a float/double: a private one declared before
             the loop, or an element of memory at an address the loop does not move
             (`y[i] += A[i * n + j] * x[j];`, as published GPU code accumulates)
    suffix   anything without an exit

A loop counter declared in the prefix (`int j; for (j = 0; ...)`) is shared by the copies:
the loop's control is uniform, so every copy would count alike. Interleaving work-items'
iterations changes only the order of memory accesses between work-items, which OpenCL leaves
unordered without a barrier (the plain work-item loop is ``omp simd`` for the same reason);
each work-item's own accesses keep their order, so an accumulator in memory still sees its
own earlier values, and the out-of-order core overlaps the copies' load-add-store chains.

``transforms/schedule.py`` records the plan on the work-item loop; the printer
(``codegen/kernel_c.py``) runs the prefix of each of ``JAM_WIDTH`` consecutive
work-items, then their leads, the loop once with their bodies one after another, then their
suffixes. If any of them exits in the prefix, that block of work-items runs one at a time
instead, which is safe because the prefix has no effects.
"""

from __future__ import annotations

import dataclasses

from ppcl.compiler.analysis.effects import Effects, effects, is_effect_free, root_var
from ppcl.compiler.analysis.uniformity import const_int
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.types import ArrayType, PointerType, ScalarType, StructType
from ppcl.compiler.ir.visit import Node, Rewriter, declared_names, walk
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
    body_loop, suffix = stmts[at], stmts[at + 1:]
    assert isinstance(body_loop, ir.For)
    # the prefix: declarations without effects and exits; the lead: what follows it
    start = 0
    while start < at and _in_prefix(stmts[start]):
        start += 1
    prefix, lead = stmts[:start], stmts[start:at]
    carried: list[ir.VarDecl] = []
    for s in prefix:
        if isinstance(s, ir.DeclStmt):
            why = _carried_decls(s, carried)
            if why:
                return why
        elif isinstance(s, ir.If):
            if s.otherwise is not None or not _is_exit(s.then) or not is_effect_free(s.cond):
                return "an if in the prefix is not an effect-free exit"
    for s in lead:
        if isinstance(s, ir.DeclStmt):
            why = _carried_decls(s, carried, effect_free=False)
            if why:
                return why
        elif any(isinstance(n, _JUMPS) or _is_exit(n) for n in walk(s)):
            return "a statement before the loop jumps or exits"
    if not _uniform_control(body_loop, uniform, params):
        return "the loop's control is not uniform"
    if any(isinstance(n, _JUMPS) for n in walk(body_loop.body)):
        return "the loop body jumps"
    counters = effects(body_loop.step, Effects()).writes
    shared = [d for d in carried if d.name in counters]
    if any(d.init is not None and not is_effect_free(d.init) for d in shared):
        return "the loop's counter is declared in the prefix with an initializer with effects"
    # the header runs once for all copies, so a counter declared before it is shared
    carried = [d for d in carried if d.name not in counters]
    names = {d.name for d in carried}
    eff = effects(body_loop.body, Effects())
    local = declared_names(body_loop.body)
    if eff.address_taken or not eff.writes <= names | local:
        return "the loop body writes variables it does not own or takes an address"
    if any(isinstance(n, ir.Call) and (n.builtin is None or n.name in _ORDERED_CALLS)
           for n in walk(body_loop.body)):
        return "the loop body calls a function or printf"
    if not any(isinstance(n, ir.Assign) and isinstance(n.target, ir.VarRef)
               and n.target.name in names and _is_float(n.target.type)
               for n in walk(body_loop.body)) \
            and not _memory_accumulator(body_loop, counters | eff.writes):
        return "no floating-point accumulator declared before the loop or in memory"
    if any(_is_exit(n) or isinstance(n, wg.WorkItemExit) for s in suffix for n in walk(s)):
        return "the suffix exits"
    promoted = _promoted(body_loop, counters | eff.writes)
    if promoted is not None:
        body_loop, decl = promoted
        lead = (*lead, ir.DeclStmt((decl,), loc=body_loop.loc))
        carried.append(decl)
    return JamPlan(tuple(prefix), body_loop, suffix, tuple(carried), JAM_WIDTH, tuple(lead),
                   tuple(shared))


_ORDERED_CALLS = ("printf",)


def _in_prefix(s: ir.Stmt) -> bool:
    """A declaration (its initializer is checked later) or an ``if``, which must be an exit."""
    if isinstance(s, ir.DeclStmt):
        return all(d.init is None or (not isinstance(d.init, ir.InitList)
                                      and is_effect_free(d.init)) for d in s.decls)
    return isinstance(s, ir.If)


def _is_float(t: object) -> bool:
    return isinstance(t, ScalarType) and t.name in _FLOATS


def _carried_decls(s: ir.DeclStmt, carried: list[ir.VarDecl], effect_free: bool = True) -> str:
    """Adds the declarations of ``s`` to ``carried``; why they cannot be copied, or ""."""
    for d in s.decls:
        if isinstance(d.type, ArrayType | StructType) or d.volatile:
            return f"'{d.name}' before the loop is an aggregate or volatile"
        if d.init is not None and (isinstance(d.init, ir.InitList)
                                   or (effect_free and not is_effect_free(d.init))):
            return f"the initializer of '{d.name}' in the prefix has effects"
        carried.append(d)
    return ""


def _accumulators(loop: ir.For, moved: set[str]) -> list[ir.Expr]:
    """The floats in memory the loop body updates at addresses the loop does not move,
    ``p[e] += v`` or ``p[e] = p[e] + v``: chains of dependent adds through memory."""
    found: list[ir.Expr] = []
    for n in walk(loop.body):
        if not (isinstance(n, ir.Assign) and _is_float(n.type)):
            continue
        target = n.target
        if not (isinstance(target, ir.Index) or (isinstance(target, ir.Unary) and target.op == "*")):
            continue
        if _names(target) & moved or any(isinstance(m, ir.Call) for m in walk(target)):
            continue
        if (n.op != "=" or any(m == target for m in walk(n.value))) and target not in found:
            found.append(target)
    return found


def _memory_accumulator(loop: ir.For, moved: set[str]) -> bool:
    return bool(_accumulators(loop, moved))


ACCUMULATOR = "__ppcl_acc"


class _Promote(Rewriter):
    """Reads of ``target`` as the private ``acc``; each assignment to it also stores ``acc``."""

    def __init__(self, target: ir.Expr, acc: ir.VarRef):
        self.target = target
        self.acc = acc

    def rewrite(self, node: Node) -> object:
        if isinstance(node, ir.Expr) and node == self.target:
            return self.acc
        return super().rewrite(node)

    def rewrite_ExprStmt(self, s: ir.ExprStmt) -> object:
        e = s.expr
        if isinstance(e, ir.Assign) and e.target == self.acc:
            store = ir.Assign(self.target.type, "=", self.target, self.acc, loc=e.loc)
            return (s, ir.ExprStmt(store, loc=s.loc))
        return s


def _promoted(loop: ir.For, moved: set[str]) -> tuple[ir.For, ir.VarDecl] | None:
    """The loop with its one accumulator in memory kept in a private variable as well, and
    that variable's declaration (loading the element before the loop), or None.

    Every update still stores the element, so memory holds what it held before; only its
    loads go: the element changes in no other way while the loop runs when every store of
    the body is an update of it as a statement (another work-item's store to it would be a
    data race). gcc cannot tell that the jammed copies' elements differ, and reloads each
    after the other copies' stores: the add then waits for a store to reach a load."""
    targets = _accumulators(loop, moved)
    if len(targets) != 1:
        return None
    target = targets[0]
    for n in walk(loop.body):
        if isinstance(n, ir.Unary) and n.op in ("++", "--", "p++", "p--") \
                and root_var(n.operand) is None:
            return None
        if isinstance(n, ir.Call) and (n.builtin is None
                                       or any(isinstance(a.type, PointerType) for a in n.args)):
            return None
        if isinstance(n, ir.Assign) and root_var(n.target) is None and n.target != target:
            return None
        if isinstance(n, ir.Assign) and n.target == target and not any(
                isinstance(st, ir.ExprStmt) and st.expr is n for st in walk(loop.body)):
            return None  # an update inside an expression: no statement to store after
    acc = ir.VarRef(target.type, ACCUMULATOR, loc=target.loc)
    body = _Promote(target, acc).rewrite(loop.body)
    if isinstance(body, tuple):  # a body of one update: the update and its store
        body = ir.Block(body, loc=loop.body.loc)
    assert isinstance(body, ir.Stmt)
    decl = ir.VarDecl(ACCUMULATOR, target.type, init=target, loc=loop.loc)
    return dataclasses.replace(loop, body=body), decl


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
    local = declared_names(f.body)
    if not eff.writes <= local:
        return "the loop body writes variables declared outside it"
    return StridePlan(f, var, end, step.value)
