"""Inlining of the helper functions that contain a barrier, and of small ones.

OpenCL C lets a kernel call a function that calls ``barrier`` (directly or through further
calls). Work-group formation splits only the kernel's own body at barriers, so every call of
such a function is inlined into the kernel first, as pocl does by inlining everything.

A call may sit anywhere in an expression. It is hoisted into statements that run before the
expression: operands evaluated before it (left to right) that read memory or have side effects
are saved in temporaries first, the arguments initialize fresh copies of the parameters, and the
call's value becomes a fresh result variable. A call in a loop condition or step is evaluated
inside the loop, every iteration, with ``continue`` still reaching the condition or step. A call
on the lazily evaluated side of ``&&``, ``||`` or ``?:`` is a located compile error: its barrier
would be reached by only some work-items.

``return`` in an inlined body assigns the result variable and leaves the body: through a
``do { ... } while (0)`` when no return is inside a loop or switch of the callee, otherwise
through a ``done`` flag that guards the statements after a possible return and breaks out of
loops and switches.

Small helpers (``SMALL_STATEMENTS``) are inlined too, as pocl inlines every function, so that
the plans see through them: a loop calling a function is not interchanged, and an index
computed by a helper (``A[at(row, k, n)]``) is no affine access to the analyses. A naive sgemm
written with such helpers ran at 0.7 GFLOP/s (pocl 0.8), 35-38 inlined. Their calls stay
calls where inlining would change the shape of the code around them: on the lazy side of
``&&``, ``||`` and ``?:``, and in a loop's condition or step. A callee with one ``return``, at
its end, is inlined in line with its result defined once by the returned value.

Local names are made unique by a suffix ``__inl<N>``. The front end rejects recursion and
``__local`` declarations outside kernels, so inlining terminates and moves no local memory.

Pass name: ``inline``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ppcl.compiler.analysis.callgraph import reaching, user_calls
from ppcl.compiler.diagnostics import CompileError, Diagnostic, Loc, Severity
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import INT, VOID, ArrayType, Type, VoidType, indexes_in_place
from ppcl.compiler.ir.visit import Node, Renamer, children, walk

PASS_NAME = "inline"
SUFFIX = "__inl"

_BARRIERS = ("barrier", "work_group_barrier")
_LOOPS = (ir.For, ir.While, ir.DoWhile)
_LVALUE_OPS = ("&", "++", "--", "p++", "p--")


def _error(loc: Loc, message: str) -> CompileError:
    diagnostic = Diagnostic(Severity.ERROR, message, loc)
    return CompileError([diagnostic], diagnostic.format())


# ---------------------------------------------------------------- which functions


def barrier_functions(module: ir.Module) -> frozenset[str]:
    """The functions that reach a barrier, directly or through the functions they call."""
    return reaching(module, lambda call: call.name in _BARRIERS)


def calls_barrier_functions(module: ir.Module, kernel: ir.Function) -> bool:
    if kernel.body is None:
        return False
    return bool(user_calls(kernel.body) & barrier_functions(module))


# ---------------------------------------------------------------- small IR helpers


def _not(e: ir.Expr) -> ir.Expr:
    return ir.Unary(INT, "!", e, loc=e.loc)


def _assign(name: str, t: Type, value: ir.Expr, loc: Loc) -> ir.Stmt:
    return ir.ExprStmt(ir.Assign(t, "=", ir.VarRef(t, name, loc=loc), value, loc=loc), loc=loc)


def _decl(name: str, t: Type, init: ir.Expr | None, loc: Loc) -> ir.DeclStmt:
    return ir.DeclStmt((ir.VarDecl(name, t, init=init, loc=loc),), loc=loc)


def _block(stmts: list[ir.Stmt], loc: Loc) -> ir.Stmt:
    return stmts[0] if len(stmts) == 1 else ir.Block(tuple(stmts), loc=loc)


def _stmts_of(s: ir.Stmt) -> tuple[ir.Stmt, ...]:
    return s.stmts if isinstance(s, ir.Block) else (s,)


def _void_value(loc: Loc) -> ir.Expr:
    """The value of an inlined void call: ``(void)0``."""
    return ir.Cast(VOID, ir.IntLit(INT, 0, loc=loc), loc=loc)


def _discardable(e: ir.Expr) -> bool:
    """An expression statement that does nothing (the leftover of an inlined call)."""
    if isinstance(e, ir.VarRef | ir.IntLit):
        return True
    return isinstance(e, ir.Cast) and isinstance(e.type, VoidType) and _discardable(e.operand)


def _stable(e: ir.Expr) -> bool:
    """Values a call cannot change: constants and private variables (a helper reaches the
    kernel's variables only through pointers, which C leaves unordered anyway)."""
    if isinstance(e, ir.IntLit | ir.FloatLit | ir.StringLit | ir.SizeOf | ir.VecStep | ir.VarRef):
        return True
    if isinstance(e, ir.Cast | ir.Swizzle) or (isinstance(e, ir.Unary) and e.op in "+-!~"):
        return _stable(e.operand if isinstance(e, ir.Cast | ir.Unary) else e.base)
    if isinstance(e, ir.Member) and not e.arrow:
        return _stable(e.base)
    return isinstance(e, ir.Binary) and _stable(e.lhs) and _stable(e.rhs)


def _has_return(s: ir.Stmt) -> bool:
    return any(isinstance(n, ir.Return) for n in walk(s))


def _return_in_loop_or_switch(s: ir.Stmt, inside: bool = False) -> bool:
    if isinstance(s, ir.Return):
        return inside
    nested = inside or isinstance(s, (*_LOOPS, ir.Switch))
    return any(_return_in_loop_or_switch(c, nested) for c in children(s) if isinstance(c, ir.Stmt))


def exits(s: ir.Stmt, kind: type[ir.Break] | type[ir.Continue]) -> bool:
    """Whether ``s`` holds a ``break``/``continue`` that leaves ``s`` itself."""
    if isinstance(s, kind):
        return True
    if isinstance(s, _LOOPS) or (kind is ir.Break and isinstance(s, ir.Switch)):
        return False
    return any(exits(c, kind) for c in children(s) if isinstance(c, ir.Stmt))


def _replace_breaks(s: ir.Stmt, make: Callable[[Loc], ir.Stmt]) -> ir.Stmt:
    """``s`` with every ``break`` that leaves it replaced by ``make(loc)``."""
    if isinstance(s, ir.Break):
        return make(s.loc)
    if isinstance(s, (*_LOOPS, ir.Switch)) or not exits(s, ir.Break):
        return s
    if isinstance(s, ir.Block):
        return ir.Block(tuple(_replace_breaks(c, make) for c in s.stmts), loc=s.loc)
    if isinstance(s, ir.If):
        other = None if s.otherwise is None else _replace_breaks(s.otherwise, make)
        return ir.If(s.cond, _replace_breaks(s.then, make), other, loc=s.loc)
    return s


# ---------------------------------------------------------------- the inliner


class _Inliner:
    def __init__(self, module: ir.Module, kernel: ir.Function, targets: frozenset[str],
                 required: frozenset[str]):
        assert kernel.body is not None
        self.module = module
        self.targets = targets | required
        self.required = required  # inlined everywhere: the functions that reach a barrier
        self.used: set[str] = {p.name for p in kernel.params}
        self.used |= {d.name for n in walk(kernel.body) if isinstance(n, ir.DeclStmt)
                      for d in n.decls}
        self.used |= {d.decl.name for d in module.decls if isinstance(d, ir.GlobalVar)}
        self.counter = 0

    # ------------------------------------------------------------ names

    def _suffix(self, names: list[str]) -> str:
        while any(f"{n}{SUFFIX}{self.counter}" in self.used for n in names):
            self.counter += 1
        suffix = f"{SUFFIX}{self.counter}"
        self.counter += 1
        self.used |= {n + suffix for n in names}
        return suffix

    def fresh(self, base: str) -> str:
        return base + self._suffix([base])

    # ------------------------------------------------------------ queries

    def is_target(self, node: Node) -> bool:
        return isinstance(node, ir.Call) and node.builtin is None and node.name in self.targets

    def has_required(self, node: Node) -> bool:
        """A call of a function that reaches a barrier inside ``node``."""
        if isinstance(node, ir.Call) and node.builtin is None and node.name in self.required:
            return True
        if isinstance(node, ir.SizeOf | ir.VecStep):
            return False
        return any(self.has_required(c) for c in children(node))

    def has_call(self, node: Node) -> bool:
        """A call to inline inside ``node`` (operands of sizeof and vec_step are not run). A
        call of a function without a barrier stays a call where inlining would change the
        shape of the code around it: on the lazy side of ``&&``, ``||`` and ``?:``, and in a
        loop's condition or step (the plans read counted loops)."""
        if self.is_target(node):
            return True
        if isinstance(node, ir.SizeOf | ir.VecStep):
            return False
        if isinstance(node, ir.Binary) and node.op in ("&&", "||"):
            return self.has_call(node.lhs) or self.has_required(node.rhs)
        if isinstance(node, ir.Conditional):
            return self.has_call(node.cond) or self.has_required(node.then) \
                or self.has_required(node.otherwise)
        if isinstance(node, ir.While | ir.DoWhile):
            return self.has_call(node.body) or self.has_required(node.cond)
        if isinstance(node, ir.For):
            return any(self.has_call(c) for c in (node.init, node.body) if c is not None) \
                or any(self.has_required(c) for c in (node.cond, node.step) if c is not None)
        return any(self.has_call(c) for c in children(node))

    # ------------------------------------------------------------ statements

    def stmts(self, stmts: tuple[ir.Stmt, ...] | list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def sub(self, s: ir.Stmt) -> ir.Stmt:
        return _block(self.stmt(s), s.loc)

    def stmt(self, s: ir.Stmt) -> list[ir.Stmt]:
        if not self.has_call(s):
            return [s]
        loc = s.loc
        if isinstance(s, ir.Block):
            return [ir.Block(tuple(self.stmts(s.stmts)), loc=loc)]
        if isinstance(s, ir.ExprStmt):
            pre: list[ir.Stmt] = []
            e = self.expr(s.expr, pre)
            if not _discardable(e):
                pre.append(ir.ExprStmt(e, loc=loc))
            return pre
        if isinstance(s, ir.DeclStmt):
            return self.decl_stmt(s)
        if isinstance(s, ir.If):
            pre = []
            cond = self.expr(s.cond, pre)
            other = None if s.otherwise is None else self.sub(s.otherwise)
            return [*pre, ir.If(cond, self.sub(s.then), other, loc=loc)]
        if isinstance(s, ir.While):
            body = self.sub(s.body)
            if not self.has_required(s.cond):
                return [ir.While(s.cond, body, loc=loc)]
            head = self.loop_test(s.cond)
            return [ir.For(None, None, None, ir.Block((*head, body), loc=loc), loc=loc)]
        if isinstance(s, ir.DoWhile):
            body = self.sub(s.body)
            if not self.has_required(s.cond):
                return [ir.DoWhile(body, s.cond, loc=loc)]
            iteration = self.then_continue_to(body, self.loop_test(s.cond))
            return [ir.For(None, None, None, ir.Block(tuple(iteration), loc=loc), loc=loc)]
        if isinstance(s, ir.For):
            return self.for_stmt(s)
        if isinstance(s, ir.Switch):
            pre = []
            value = self.expr(s.expr, pre)
            body = ir.Block(tuple(self.stmts(s.body.stmts)), loc=s.body.loc)
            return [*pre, ir.Switch(value, body, loc=loc)]
        if isinstance(s, ir.Return) and s.value is not None:
            pre = []
            value = self.expr(s.value, pre)
            kept = None if isinstance(value.type, VoidType) else value
            return [*pre, ir.Return(kept, loc=loc)]
        raise _error(loc, f"cannot inline a call in a {type(s).__name__} statement")

    def decl_stmt(self, s: ir.DeclStmt) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        run: list[ir.VarDecl] = []
        for d in s.decls:
            if d.init is None or not self.has_call(d.init):
                run.append(d)
                continue
            if run:
                out.append(ir.DeclStmt(tuple(run), loc=s.loc))
                run = []
            pre: list[ir.Stmt] = []
            init = self.expr(d.init, pre)
            out += pre
            out.append(ir.DeclStmt((dataclasses.replace(d, init=init),), loc=s.loc))
        if run:
            out.append(ir.DeclStmt(tuple(run), loc=s.loc))
        return out

    def loop_test(self, cond: ir.Expr) -> list[ir.Stmt]:
        """``pre; if (!cond) break;``: the condition with its calls, as loop statements."""
        pre: list[ir.Stmt] = []
        value = self.expr(cond, pre)
        return [*pre, ir.If(_not(value), ir.Break(loc=cond.loc), loc=cond.loc)]

    def then_continue_to(self, body: ir.Stmt, after: list[ir.Stmt]) -> list[ir.Stmt]:
        """One iteration: ``body`` then ``after``, where a ``continue`` of the body must still
        run ``after``: the body goes in a ``do { } while (0)`` (its ``continue`` leaves it),
        and its ``break`` sets a flag that breaks the loop."""
        if not exits(body, ir.Continue):
            return [body, *after]
        loc = body.loc
        out: list[ir.Stmt] = []
        flag = None
        if exits(body, ir.Break):
            name = flag = self.fresh("brk")
            out.append(_decl(name, INT, ir.IntLit(INT, 0, loc=loc), loc))

            def set_flag(where: Loc) -> ir.Stmt:
                return ir.Block((_assign(name, INT, ir.IntLit(INT, 1, loc=where), where),
                                 ir.Break(loc=where)), loc=where)

            body = _replace_breaks(body, set_flag)
        out.append(ir.DoWhile(body, ir.IntLit(INT, 0, loc=loc), loc=loc))
        if flag is not None:
            out.append(ir.If(ir.VarRef(INT, flag, loc=loc), ir.Break(loc=loc), loc=loc))
        return out + after

    def for_stmt(self, s: ir.For) -> list[ir.Stmt]:
        loc = s.loc
        before: list[ir.Stmt] = []
        init = s.init
        if init is not None and self.has_call(init):
            before = self.stmt(init)
            init = None
        body = self.sub(s.body)
        cond_call = s.cond is not None and self.has_required(s.cond)
        step_call = s.step is not None and self.has_required(s.step)
        if not cond_call and not step_call:
            loop: ir.Stmt = ir.For(init, s.cond, s.step, body, s.unroll, loc=loc)
        else:
            cond = None if cond_call else s.cond
            step = None if step_call else s.step
            head = self.loop_test(s.cond) if cond_call and s.cond is not None else []
            iteration = [*head, body]
            if step_call and s.step is not None:
                pre: list[ir.Stmt] = []
                value = self.expr(s.step, pre)
                if not _discardable(value):
                    pre.append(ir.ExprStmt(value, loc=s.step.loc))
                iteration = [*head, *self.then_continue_to(body, pre)]
            loop = ir.For(init, cond, step, ir.Block(tuple(iteration), loc=loc), loc=loc)
        if before:
            return [ir.Block((*before, loop), loc=loc)]
        return [loop]

    # ------------------------------------------------------------ expressions

    def expr(self, e: ir.Expr, pre: list[ir.Stmt], lvalue: bool = False) -> ir.Expr:
        """``e`` without calls to inline; the statements that compute them go to ``pre``."""
        if not self.has_call(e):
            return e
        if isinstance(e, ir.Call) and self.is_target(e):
            args = self.operands(e, [("args", i, False) for i in range(len(e.args))], pre)
            return self.call(args, pre)
        if isinstance(e, ir.Binary) and e.op in ("&&", "||"):
            if self.has_required(e.rhs):
                raise self.lazy_error(e.rhs, f"the right operand of '{e.op}'")
            return dataclasses.replace(e, lhs=self.expr(e.lhs, pre))
        if isinstance(e, ir.Conditional):
            for branch in (e.then, e.otherwise):
                if self.has_required(branch):
                    raise self.lazy_error(branch, "a branch of the conditional operator '?:'")
            return dataclasses.replace(e, cond=self.expr(e.cond, pre))
        if isinstance(e, ir.Comma):
            return self.comma(e, pre)
        return self.operands(e, self.slots(e, lvalue), pre)

    def lazy_error(self, operand: ir.Expr, where: str) -> CompileError:
        call = next(n for n in walk(operand)
                    if isinstance(n, ir.Call) and n.builtin is None and n.name in self.required)
        assert isinstance(call, ir.Call)
        return _error(call.loc, f"call of '{call.name}', which contains a barrier, in {where} is "
                                "not supported: only some work-items would reach the barrier")

    def comma(self, e: ir.Comma, pre: list[ir.Stmt]) -> ir.Expr:
        last = max(i for i, x in enumerate(e.exprs) if self.has_call(x))
        for x in e.exprs[:last]:
            value = self.expr(x, pre)
            if not _discardable(value):
                pre.append(ir.ExprStmt(value, loc=x.loc))
        value = self.expr(e.exprs[last], pre)
        rest = e.exprs[last + 1:]
        if not rest:
            return value
        return dataclasses.replace(e, exprs=(value, *rest))

    @staticmethod
    def slots(e: ir.Expr, lvalue: bool) -> list[tuple[str, int | None, bool]]:
        """The operands of ``e`` in evaluation order: (field, index in a tuple field, whether
        the operand designates an object rather than a value)."""
        out: list[tuple[str, int | None, bool]] = []
        for f in dataclasses.fields(e):
            value = getattr(e, f.name)
            if f.name in ("type", "loc") or isinstance(e, ir.SizeOf | ir.VecStep):
                continue
            if isinstance(value, ir.Expr):
                designates = indexes_in_place(value.type)
                if isinstance(e, ir.Assign) and f.name == "target":
                    designates = True
                elif isinstance(e, ir.Unary) and e.op in _LVALUE_OPS:
                    designates = True
                elif isinstance(e, ir.Member) and not e.arrow:
                    designates = True
                elif isinstance(e, ir.Swizzle):
                    designates = lvalue
                out.append((f.name, None, designates))
            elif isinstance(value, tuple):
                out += [(f.name, i, False) for i, item in enumerate(value)
                        if isinstance(item, ir.Expr)]
        return out

    def operands(self, e: ir.Expr, slots: list[tuple[str, int | None, bool]],
                 pre: list[ir.Stmt]) -> ir.Expr:
        """Hoists the calls out of the operands of ``e``, left to right; before each call, the
        operands already evaluated are saved so that the call cannot change them."""
        values: list[ir.Expr] = []
        for name, index, _ in slots:
            field_value = getattr(e, name)
            values.append(field_value if index is None else field_value[index])
        for k, (_, _, designates) in enumerate(slots):
            if not self.has_call(values[k]):
                continue
            for j in range(k):
                values[j] = self.stabilize(values[j], slots[j][2], pre)
            values[k] = self.expr(values[k], pre, designates)
        changes: dict[str, object] = {}
        for (name, index, _), value in zip(slots, values):
            if index is None:
                changes[name] = value
            else:
                items = list(changes.get(name, getattr(e, name)))  # type: ignore[call-overload]
                items[index] = value
                changes[name] = tuple(items)
        return dataclasses.replace(e, **changes)  # type: ignore[arg-type]

    def stabilize(self, e: ir.Expr, designates: bool, pre: list[ir.Stmt]) -> ir.Expr:
        """``e`` evaluated now: a value goes to a temporary; for an object, the values that
        locate it (indices, pointers) do."""
        if _stable(e):
            return e
        if designates:
            if isinstance(e, ir.Index):
                base = self.stabilize(e.base, indexes_in_place(e.base.type), pre)
                return dataclasses.replace(e, base=base, index=self.stabilize(e.index, False, pre))
            if isinstance(e, ir.Member):
                return dataclasses.replace(e, base=self.stabilize(e.base, not e.arrow, pre))
            if isinstance(e, ir.Swizzle):
                return dataclasses.replace(e, base=self.stabilize(e.base, True, pre))
            if isinstance(e, ir.Unary) and e.op == "*":
                return dataclasses.replace(e, operand=self.stabilize(e.operand, False, pre))
        if isinstance(e.type, ArrayType | VoidType):
            return e
        name = self.fresh("tmp")
        pre.append(_decl(name, e.type, e, e.loc))
        return ir.VarRef(e.type, name, loc=e.loc)

    # ------------------------------------------------------------ one call

    def call(self, call: ir.Expr, pre: list[ir.Stmt]) -> ir.Expr:
        """Inlines ``call`` (its arguments free of calls to inline) at the end of ``pre``;
        returns its value."""
        assert isinstance(call, ir.Call)
        callee = self.module.function(call.name)
        assert callee is not None and callee.body is not None
        loc = call.loc
        locals_ = [p.name for p in callee.params]
        locals_ += [d.name for n in walk(callee.body) if isinstance(n, ir.DeclStmt) for d in n.decls]
        base = callee.name
        suffix = self._suffix([*locals_, base + "_result", base + "_done"])
        body = Renamer({n: n + suffix for n in locals_}).rewrite(callee.body)
        assert isinstance(body, ir.Block)
        result = None if isinstance(callee.ret, VoidType) else base + "_result" + suffix
        inner: list[ir.Stmt] = []
        for p, arg in zip(callee.params, call.args):
            decl = ir.VarDecl(p.name + suffix, p.type, const=p.const, volatile=p.volatile,
                              init=arg, loc=p.loc)
            inner.append(ir.DeclStmt((decl,), loc=loc))
        stmts = body.stmts
        if result is not None and stmts and isinstance(stmts[-1], ir.Return) \
                and stmts[-1].value is not None and not any(_has_return(x) for x in stmts[:-1]):
            # one return, at the end: the statements in line (their names are unique) and the
            # result defined once by the returned value, as the analyses read a variable best
            pre += self.stmts([*inner, *stmts[:-1]])
            value = self.expr(stmts[-1].value, pre)
            if value.type != callee.ret:
                value = ir.Cast(callee.ret, value, True, loc=value.loc)
            pre.append(_decl(result, callee.ret, value, loc))
            return ir.VarRef(callee.ret, result, loc=loc)
        if result is not None:
            pre.append(_decl(result, callee.ret, None, loc))
        inner += _Returns(result, callee.ret, base + "_done" + suffix).body(body.stmts)
        # the inlined body may call further functions with barriers
        pre.append(ir.Block(tuple(self.stmts(inner)), loc=loc))
        if result is None:
            return _void_value(loc)
        return ir.VarRef(callee.ret, result, loc=loc)


class _Returns:
    """Turns the ``return`` statements of an inlined body into assignments and exits."""

    def __init__(self, result: str | None, ret: Type, done: str):
        self.result = result
        self.ret = ret
        self.done = done

    def set_result(self, s: ir.Return) -> list[ir.Stmt]:
        if self.result is None or s.value is None:
            return []
        return [_assign(self.result, self.ret, s.value, s.loc)]

    def body(self, stmts: tuple[ir.Stmt, ...]) -> list[ir.Stmt]:
        if not any(_has_return(s) for s in stmts):
            return list(stmts)
        last = stmts[-1]
        if isinstance(last, ir.Return) and not any(_has_return(s) for s in stmts[:-1]):
            return [*stmts[:-1], *self.set_result(last)]
        loc = stmts[0].loc
        if not any(_return_in_loop_or_switch(s) for s in stmts):
            block = ir.Block(tuple(self.exit_by_break(s) for s in stmts), loc=loc)
            return [ir.DoWhile(block, ir.IntLit(INT, 0, loc=loc), loc=loc)]
        flag = _decl(self.done, INT, ir.IntLit(INT, 0, loc=loc), loc)
        return [flag, *self.flag_block(stmts, 0)]

    def exit_by_break(self, s: ir.Stmt) -> ir.Stmt:
        """``return v`` -> ``{ result = v; break; }`` (no return is inside a loop or switch)."""
        if isinstance(s, ir.Return):
            return ir.Block((*self.set_result(s), ir.Break(loc=s.loc)), loc=s.loc)
        if isinstance(s, ir.Block):
            return ir.Block(tuple(self.exit_by_break(c) for c in s.stmts), loc=s.loc)
        if isinstance(s, ir.If):
            other = None if s.otherwise is None else self.exit_by_break(s.otherwise)
            return ir.If(s.cond, self.exit_by_break(s.then), other, loc=s.loc)
        return s

    def flag_block(self, stmts: tuple[ir.Stmt, ...], depth: int) -> list[ir.Stmt]:
        """Statements at ``depth`` loops/switches inside the callee. At depth 0 the
        statements after a possible return run under ``if (!done)``; deeper, a return
        breaks out and each loop or switch that holds one breaks further when done."""
        out: list[ir.Stmt] = []
        for i, s in enumerate(stmts):
            if not _has_return(s):
                out.append(s)
                continue
            out += self.flag_stmt(s, depth)
            rest = stmts[i + 1:]
            if rest and depth == 0:
                loc = rest[0].loc
                guarded = ir.Block(tuple(self.flag_block(rest, depth)), loc=loc)
                out.append(ir.If(_not(ir.VarRef(INT, self.done, loc=loc)), guarded, loc=loc))
            elif rest:
                out += self.flag_block(rest, depth)
            break
        return out

    def flag_stmt(self, s: ir.Stmt, depth: int) -> list[ir.Stmt]:
        loc = s.loc
        if isinstance(s, ir.Return):
            out = [*self.set_result(s), _assign(self.done, INT, ir.IntLit(INT, 1, loc=loc), loc)]
            if depth > 0:
                out.append(ir.Break(loc=loc))
            return [ir.Block(tuple(out), loc=loc)]
        if isinstance(s, ir.Block):
            return [ir.Block(tuple(self.flag_block(s.stmts, depth)), loc=loc)]
        if isinstance(s, ir.If):
            then = _block(self.flag_block(_stmts_of(s.then), depth), s.then.loc)
            other = None
            if s.otherwise is not None:
                other = _block(self.flag_block(_stmts_of(s.otherwise), depth), s.otherwise.loc)
            return [ir.If(s.cond, then, other, loc=loc)]
        if isinstance(s, (*_LOOPS, ir.Switch)):
            inner = ir.Block(tuple(self.flag_block(_stmts_of(s.body), depth + 1)), loc=s.body.loc)
            out = [dataclasses.replace(s, body=inner)]
            if depth > 0:
                out.append(ir.If(ir.VarRef(INT, self.done, loc=loc), ir.Break(loc=loc), loc=loc))
            return out
        return [s]


# ---------------------------------------------------------------- the pass


SMALL_STATEMENTS = 200  # a function of at most this many statements is inlined where it can be


def small_functions(module: ir.Module) -> frozenset[str]:
    """The functions of at most ``SMALL_STATEMENTS`` statements."""
    return frozenset(f.name for f in module.functions if not f.is_kernel
                     and sum(isinstance(n, ir.Stmt) for n in walk(f.body)) <= SMALL_STATEMENTS)


def inline_barrier_functions(module: ir.Module, kernel: ir.Function,
                             small: bool = False) -> ir.Function:
    """``kernel`` with every call of a function that reaches a barrier inlined, however deep;
    with ``small``, also the calls of small functions (``small_functions``) except where that
    would change the shape of the code around them (see ``_Inliner.has_call``)."""
    required = barrier_functions(module)
    targets = small_functions(module) if small else frozenset()
    if kernel.body is None or not (required or targets):
        return kernel
    inliner = _Inliner(module, kernel, targets, required)
    body = kernel.body
    while inliner.has_call(body):
        body = ir.Block(tuple(inliner.stmts(body.stmts)), loc=body.loc)
    return dataclasses.replace(kernel, body=body)
