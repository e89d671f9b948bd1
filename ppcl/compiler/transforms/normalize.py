"""Normalization: the equivalent shapes of a kernel made one, before the plans are decided.

The plans of the CPU device (interchange in ``workgroup.py``, jam and grid-stride in
``jam.py``, rows in ``schedule.py``) are decided from properties of the IR: uniformity,
strides, effects. They read loops and guards in one spelling, so this pass rewrites the other
spellings a kernel may use for the same code into that one, before work-group formation:

* **guards**: a kernel body that ends in ``if (c) { body }`` becomes ``if (!c) return; body``,
  the early return the plans read as a work-item's exit; ``!c`` is pushed through ``&&``,
  ``||``, ``!`` and integer comparisons, so both spellings give the same IR;
* **counted loops**: ``while (c) { body; step; }`` whose last statement steps an integer that
  ``c`` reads becomes ``for (; c; step) body``; a ``for`` whose counter is declared before it
  and read nowhere else gets the declaration as its ``init`` (``int k; for (k = 0; ...)`` too);
  ``int i = i0; do { body; i += s; } while (i < n);`` with a constant ``s > 0`` becomes
  ``for (int i = i0; i < (n > i0 ? n : i0 + 1); i += s) body`` (the first iteration always
  runs);
* **launch constants in loop control**: a variable that is never written and holds a value
  the same for the whole launch (``const int stride = get_global_size(0);``) is read in a
  loop's control as its value, and its declaration goes when nothing else reads it, so that
  ``i += stride`` and ``i += get_global_size(0)`` are one loop;
* **divisions by powers of two**: an unsigned ``x / d`` or ``x % d`` whose divisor is
  ``1 << s`` or a variable defined once as such becomes ``x >> s`` or ``x & (d - 1)``
  (``transforms/pow2div.py``);
* **pointer walks**: a pointer declared as ``base`` before a counted loop (counter ``k`` from
  ``k0`` by 1), advanced by ``p++`` or ``p += s`` at the end of each iteration, read in it only
  as ``*p`` or ``p[j]`` and nowhere after, becomes index arithmetic:
  ``base[(k - k0) * s + j]``, with ``A + off`` as base read as ``A[off + ...]``;
* **addresses of private variables**: a pointer declared as ``&v`` and only read through
  (``*p``, ``p->f``), as inlining leaves a helper's out-parameter, is ``v``
  (``transforms/addresses.py``).

Each rewrite keeps the meaning of every valid kernel and applies only where that is plain from
the IR: no ``continue`` that would skip a moved step, no barrier under a guard, values moved
past other statements only when those do not write what they read and they read no memory.

Pass name: ``normalize`` (options ``guards``, ``loops``, ``pointers``, ``divisions``: each
kind on or off).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence

from ppcl.compiler.analysis.effects import Effects, effects, is_effect_free
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.conversions import usual_arithmetic
from ppcl.compiler.ir.types import INT, AddressSpace, PointerType, ScalarType, Type
from ppcl.compiler.ir.visit import Node, Rewriter, declared_names, walk
from ppcl.compiler.transforms.addresses import read_through_addresses
from ppcl.compiler.transforms.pow2div import power_of_two_divisions

PASS_NAME = "normalize"

_LOOPS = (ir.For, ir.While, ir.DoWhile)
_FLIPPED = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}
_BARRIERS = ("barrier", "work_group_barrier")


# ---------------------------------------------------------------- facts read from the IR


def _refs(node: Node) -> Counter[str]:
    return Counter(n.name for n in walk(node) if isinstance(n, ir.VarRef))


def _has_barrier(node: Node) -> bool:
    return any(isinstance(n, ir.Call) and n.builtin is not None and n.name in _BARRIERS
               for n in walk(node))


def _last_decl(stmts: list[ir.Stmt], i: int, name: str) -> tuple[int, ir.VarDecl] | None:
    """The last declaration of ``name`` among ``stmts[:i]``, with its index."""
    for j in range(i - 1, -1, -1):
        s = stmts[j]
        if isinstance(s, ir.DeclStmt):
            for d in s.decls:
                if d.name == name:
                    return j, d
    return None


def _reads_no_memory(e: ir.Expr) -> bool:
    """``e`` has no effects and reads no memory: evaluated later or again, it gives the same
    value as long as the variables it reads keep theirs."""
    if not is_effect_free(e):
        return False
    for n in walk(e):
        if isinstance(n, ir.Index | ir.Member) or (isinstance(n, ir.Unary) and n.op == "*"):
            return False
        if isinstance(n, ir.Call) and (n.builtin is None or any(
                isinstance(a.type, PointerType) for a in n.args)):
            return False
    return True


def _continues(body: ir.Stmt) -> bool:
    """Whether a ``continue`` in ``body`` belongs to the loop whose body it is."""

    def visit(node: Node) -> bool:
        if isinstance(node, ir.Continue):
            return True
        if isinstance(node, _LOOPS):
            return False
        return any(visit(c) for c in _child_stmts(node))

    return visit(body)


def _child_stmts(node: Node) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, ir.Stmt):
            out.append(value)
        elif isinstance(value, tuple):
            out += [v for v in value if isinstance(v, ir.Stmt)]
    return out


def _integer(t: Type) -> bool:
    return isinstance(t, ScalarType) and t.is_integer


def _stepped_var(step: ir.Expr | None) -> str | None:
    """The integer variable a loop step ``i++``, ``--i``, ``i += e``, ``i -= e`` or ``i = e``
    writes."""
    if isinstance(step, ir.Unary) and step.op in ("++", "--", "p++", "p--"):
        target = step.operand
    elif isinstance(step, ir.Assign) and step.op in ("=", "+=", "-="):
        target = step.target
    else:
        return None
    if isinstance(target, ir.VarRef) and _integer(target.type):
        return target.name
    return None


def _unit_step(step: ir.Expr | None, counter: str) -> int | None:
    """The constant amount ``step`` adds to ``counter`` (``i++``, ``i += 4``), or None."""
    if _stepped_var(step) != counter:
        return None
    if isinstance(step, ir.Unary):
        return 1 if step.op in ("++", "p++") else -1
    assert isinstance(step, ir.Assign)
    value = step.value
    while isinstance(value, ir.Cast) and value.implicit and _integer(value.type):
        value = value.operand
    if step.op in ("+=", "-=") and isinstance(value, ir.IntLit):
        return value.value if step.op == "+=" else -value.value
    return None


def _strip_implicit(e: ir.Expr) -> ir.Expr:
    while isinstance(e, ir.Cast) and e.implicit:
        e = e.operand
    return e


def _body_stmts(s: ir.Stmt) -> tuple[ir.Stmt, ...]:
    return s.stmts if isinstance(s, ir.Block) else (s,)


# ---------------------------------------------------------------- guards


def negated(cond: ir.Expr) -> ir.Expr:
    """A condition true exactly when ``cond`` is false (both read as conditions): ``!`` pushed
    through ``&&``, ``||``, ``!`` and comparisons of integers or pointers (not of floats, where
    a NaN makes ``!(a < b)`` differ from ``a >= b``)."""
    if isinstance(cond, ir.Unary) and cond.op == "!":
        return cond.operand
    if isinstance(cond, ir.Binary):
        if cond.op in ("&&", "||"):
            return dataclasses.replace(cond, op="||" if cond.op == "&&" else "&&",
                                       lhs=negated(cond.lhs), rhs=negated(cond.rhs))
        if cond.op in _FLIPPED and all(_integer(x.type) or isinstance(x.type, PointerType)
                                       for x in (cond.lhs, cond.rhs)):
            return dataclasses.replace(cond, op=_FLIPPED[cond.op])
    return ir.Unary(INT, "!", cond, loc=cond.loc)


def without_not(cond: ir.Expr) -> ir.Expr:
    """``cond`` (read as a condition) with ``!`` pushed into ``&&``, ``||`` and comparisons:
    ``!(i < n && j < m)`` reads as ``i >= n || j >= m``."""
    if isinstance(cond, ir.Unary) and cond.op == "!":
        inner = negated(cond.operand)
        return inner if isinstance(inner, ir.Unary) and inner.op == "!" else without_not(inner)
    if isinstance(cond, ir.Binary) and cond.op in ("&&", "||"):
        return dataclasses.replace(cond, lhs=without_not(cond.lhs), rhs=without_not(cond.rhs))
    return cond


def _early_return(s: ir.Stmt) -> ir.Stmt:
    """``if (c) return;`` (``return`` alone or in a block) spelled one way, ``!`` pushed
    into ``c``; any other statement as it is."""
    if not isinstance(s, ir.If) or s.otherwise is not None:
        return s
    then = _body_stmts(s.then)
    if len(then) != 1 or not isinstance(then[0], ir.Return) or then[0].value is not None:
        return s
    return ir.If(without_not(s.cond), ir.Return(loc=then[0].loc), loc=s.loc)


def early_returns(stmts: Sequence[ir.Stmt]) -> tuple[ir.Stmt, ...]:
    """A kernel body with its enclosing guards as early returns: ``...; if (c) { body }`` at
    the end becomes ``...; if (!c) return; body``, again for guards nested in ``body``.
    A guard around a barrier or after one stays: the early return would move the barrier out
    of it, or make every work-item of the kernel carry an activity mask from its start, for
    no plan that runs across a barrier."""
    out = [_early_return(s) for s in stmts]
    while out and isinstance(out[-1], ir.Return) and out[-1].value is None:
        out.pop()  # a return at the end of a void function does nothing
    if not out:
        return tuple(out)
    last = out[-1]
    if isinstance(last, ir.Block):  # names are unique per function: no scope to keep
        return early_returns(out[:-1] + list(last.stmts))
    if not isinstance(last, ir.If) or last.otherwise is not None or _has_barrier(last.then) \
            or any(_has_barrier(s) for s in out[:-1]):
        return tuple(out)
    guard = ir.If(without_not(negated(last.cond)), ir.Return(loc=last.loc), loc=last.loc)
    then = last.then.stmts if isinstance(last.then, ir.Block) else (last.then,)
    return early_returns([*out[:-1], guard, *then])


# ---------------------------------------------------------------- launch constants

_LAUNCH_QUERIES = ("get_global_size", "get_local_size", "get_num_groups", "get_work_dim")


def launch_constants(kernel: ir.Function) -> dict[str, ir.Expr]:
    """The variables of ``kernel`` never written after their declaration whose value is the
    same for every work-item of a launch: literals, arguments the kernel never writes and
    range sizes, combined by operators. Each maps to its initializer."""
    assert kernel.body is not None
    whole = effects(kernel.body, Effects())
    fixed = whole.writes | whole.address_taken
    decls = {d.name: d for n in walk(kernel.body) if isinstance(n, ir.DeclStmt)
             for d in n.decls}
    known = {p.name for p in kernel.params} - fixed
    found: dict[str, ir.Expr] = {}
    changed = True
    while changed:
        changed = False
        for name, d in decls.items():
            if name in found or name in fixed or d.volatile or d.init is None \
                    or not isinstance(d.type, ScalarType) or d.space is not AddressSpace.PRIVATE:
                continue
            if launch_value(d.init, known | set(found)):
                found[name] = d.init
                changed = True
    return found


def launch_value(e: ir.Expr, known: set[str]) -> bool:
    """Whether ``e`` reads only literals, range sizes and the variables ``known``, combined
    by operators: the same value for every work-item of a launch."""
    for n in walk(e):
        if isinstance(n, ir.Call):
            if n.builtin is None or n.name not in _LAUNCH_QUERIES \
                    or not all(isinstance(_strip_implicit(a), ir.IntLit) for a in n.args):
                return False
        elif isinstance(n, ir.VarRef):
            if n.name not in known:
                return False
        elif isinstance(n, ir.Unary):
            if n.op not in ("-", "+", "!", "~"):
                return False
        elif not isinstance(n, ir.IntLit | ir.FloatLit | ir.Binary | ir.Cast | ir.Conditional):
            return False
    return True


class _Substitute(Rewriter):
    def __init__(self, values: dict[str, ir.Expr]):
        self.values = values

    def rewrite_VarRef(self, e: ir.VarRef) -> ir.Expr:
        value = self.values.get(e.name)
        return e if value is None else self.rewrite(value)


def substitute(e: ir.Expr, values: dict[str, ir.Expr]) -> ir.Expr:
    """``e`` with each variable of ``values`` read as its value, recursively."""
    result: ir.Expr = _Substitute(values).rewrite(e)
    return result


# ---------------------------------------------------------------- counted loops


def _split_step(loop: ir.While | ir.DoWhile) -> tuple[tuple[ir.Stmt, ...], ir.Expr] | None:
    """The body of a loop without its last statement, and that statement's expression when it
    steps an integer the condition reads and no ``continue`` of the loop would skip it."""
    stmts = _body_stmts(loop.body)
    if not stmts or not isinstance(stmts[-1], ir.ExprStmt):
        return None
    step = stmts[-1].expr
    var = _stepped_var(step)
    if var is None or var not in _refs(loop.cond) or _continues(loop.body):
        return None
    declared = declared_names(loop.body)
    if set(_refs(step)) & declared:
        return None  # Euclid's ``q = r`` with ``r`` declared in the body: out of the step's scope
    return stmts[:-1], step


class _Loops(Rewriter):
    """Counted ``while`` and ``do`` loops as ``for`` loops, counters declared in them, pointer
    walks as index arithmetic (see the module docstring)."""

    def __init__(self, function_body: ir.Block, loops: bool, pointers: bool,
                 constants: dict[str, ir.Expr]):
        self.refs = _refs(function_body)
        self.constants = constants
        self.substitute = _Substitute(constants)
        whole = effects(function_body, Effects())
        self.address_taken = whole.address_taken
        self.loops = loops
        self.pointers = pointers

    def rewrite_While(self, s: ir.While) -> ir.Stmt:
        if not self.loops:
            return s
        split = _split_step(s)
        if split is None:
            return s
        body, step = split
        return self.rewrite_For(ir.For(None, s.cond, step, ir.Block(body, loc=s.body.loc),
                                       loc=s.loc))

    def rewrite_For(self, s: ir.For) -> ir.For:
        """Launch constants in the loop's condition and step read as their values."""
        if not self.loops or not self.constants:
            return s
        cond = None if s.cond is None else self.substitute.rewrite(s.cond)
        step = None if s.step is None else self.substitute.rewrite(s.step)
        if cond is s.cond and step is s.step:
            return s
        before = _refs(ir.ExprStmt(s.cond)) if s.cond is not None else Counter[str]()
        before += _refs(ir.ExprStmt(s.step)) if s.step is not None else Counter[str]()
        after = _refs(ir.ExprStmt(cond)) if cond is not None else Counter[str]()
        after += _refs(ir.ExprStmt(step)) if step is not None else Counter[str]()
        for name in before.keys() | after.keys():
            self.refs[name] += after[name] - before[name]
        return dataclasses.replace(s, cond=cond, step=step)

    def rewrite_Block(self, b: ir.Block) -> ir.Block:
        stmts = list(b.stmts)
        for i in range(len(stmts)):
            s = stmts[i]
            if self.loops and isinstance(s, ir.DoWhile):
                stmts[i] = self._do_loop(stmts, i)
            elif self.loops and isinstance(s, ir.For) and s.init is None:
                stmts[i] = self._declare_counter(stmts, i)
            elif self.loops and isinstance(s, ir.For) and isinstance(s.init, ir.ExprStmt):
                stmts[i] = self._declare_assigned_counter(stmts, i)
            if self.pointers and isinstance(stmts[i], ir.For):
                stmts[i] = self._pointer_walks(stmts, i)
        stmts = [self._unread_constants_dropped(s) for s in stmts]
        stmts = [s for s in stmts if not (isinstance(s, ir.DeclStmt) and not s.decls)]
        if all(x is y for x, y in zip(stmts, b.stmts)) and len(stmts) == len(b.stmts):
            return b
        # references moved or copied (a walk's base read at each use): the counts that later
        # moves of declarations in enclosing blocks check
        before, after = _refs(b), _refs(ir.Block(tuple(stmts)))
        for name in before.keys() | after.keys():
            self.refs[name] += after[name] - before[name]
        return dataclasses.replace(b, stmts=tuple(stmts))

    def _unread_constants_dropped(self, s: ir.Stmt) -> ir.Stmt:
        if not isinstance(s, ir.DeclStmt):
            return s
        kept = tuple(d for d in s.decls if d.name not in self.constants or self.refs[d.name])
        return s if len(kept) == len(s.decls) else dataclasses.replace(s, decls=kept)

    # ------------------------------------------------------------ moving a declaration

    def _movable_decl(self, stmts: list[ir.Stmt], i: int,
                      name: str) -> tuple[int, ir.VarDecl] | None:
        """The declaration of ``name`` among ``stmts[:i]`` when it may move to ``stmts[i]``:
        its initializer reads no memory, nothing between writes what it reads, and every
        reference to ``name`` is in ``stmts[i]``."""
        if name in self.address_taken or _refs(stmts[i])[name] != self.refs[name]:
            return None
        found = _last_decl(stmts, i, name)
        if found is None:
            return None
        j, d = found
        if d.init is None or d.volatile or isinstance(d.init, ir.InitList) \
                or not _reads_no_memory(d.init):
            return None
        between = effects(ir.Block(tuple(stmts[j + 1:i])), Effects())
        if set(_refs(d.init)) & (between.writes | self.address_taken):
            return None
        return j, d

    def _take_decl(self, stmts: list[ir.Stmt], j: int, d: ir.VarDecl) -> None:
        s = stmts[j]
        assert isinstance(s, ir.DeclStmt)
        stmts[j] = dataclasses.replace(s, decls=tuple(x for x in s.decls if x is not d))

    def _declare_counter(self, stmts: list[ir.Stmt], i: int) -> ir.Stmt:
        """``int k = k0; ... for (; c; k++)`` with ``k`` read nowhere else: ``for (int k = k0;
        c; k++)``."""
        loop = stmts[i]
        assert isinstance(loop, ir.For)
        counter = _stepped_var(loop.step)
        if counter is None:
            return loop
        found = self._movable_decl(stmts, i, counter)
        if found is None:
            return loop
        j, d = found
        self._take_decl(stmts, j, d)
        return dataclasses.replace(loop, init=ir.DeclStmt((d,), loc=d.loc))

    def _declare_assigned_counter(self, stmts: list[ir.Stmt], i: int) -> ir.Stmt:
        """``int k; ... for (k = k0; c; k++)`` with ``k`` read nowhere else (PolyBench's
        spelling): ``for (int k = k0; c; k++)``, ``k0`` evaluated where it was."""
        loop = stmts[i]
        assert isinstance(loop, ir.For) and isinstance(loop.init, ir.ExprStmt)
        init = loop.init.expr
        counter = _stepped_var(loop.step)
        if counter is None or not isinstance(init, ir.Assign) or init.op != "=" \
                or not isinstance(init.target, ir.VarRef) or init.target.name != counter \
                or counter in self.address_taken \
                or _refs(stmts[i])[counter] != self.refs[counter]:
            return loop
        found = _last_decl(stmts, i, counter)
        if found is None:
            return loop
        j, d = found
        if d.init is not None or d.volatile or d.type != init.target.type:
            return loop
        self._take_decl(stmts, j, d)
        decl = dataclasses.replace(d, init=init.value)
        return dataclasses.replace(loop, init=ir.DeclStmt((decl,), loc=loop.init.loc))

    def _do_loop(self, stmts: list[ir.Stmt], i: int) -> ir.Stmt:
        """``int i = i0; do { body; i += s; } while (i < n);`` with a constant ``s > 0`` and
        ``n`` unchanged by the loop: ``for (int i = i0; i < max(n, i0 + 1); i += s) body``
        (``<=``: ``max(n, i0)``). The first test of the ``for`` passes, as the ``do`` skips
        it; after it the counter is past ``i0`` and the two bounds agree."""
        loop = stmts[i]
        assert isinstance(loop, ir.DoWhile)
        split = _split_step(loop)
        if split is None:
            return loop
        body, step = split
        counter = _stepped_var(step)
        assert counter is not None
        amount = _unit_step(step, counter)
        cond = loop.cond
        if amount is None or amount <= 0 or not isinstance(cond, ir.Binary) \
                or cond.op not in ("<", "<=") or not isinstance(cond.lhs, ir.VarRef) \
                or cond.lhs.name != counter or cond.rhs.type != cond.lhs.type:
            return loop
        t = cond.lhs.type
        assert isinstance(t, ScalarType)
        if not t.is_signed:  # an unsigned counter may wrap, where the bound would not
            return loop
        bound = cond.rhs
        written = effects(loop.body, Effects()).writes
        if not _reads_no_memory(bound) or set(_refs(bound)) & (written | self.address_taken):
            return loop
        found = self._movable_decl(stmts, i, counter)
        if found is None:
            return loop
        j, d = found
        assert d.init is not None
        start = d.init
        if start.type != t or set(_refs(start)) & written:
            return loop
        loc = cond.loc
        if cond.op == "<" and isinstance(start, ir.IntLit):
            at_least: ir.Expr = ir.IntLit(t, start.value + 1, loc=loc)
            beyond = ir.Binary(INT, ">", bound, start, loc=loc)
        elif cond.op == "<":
            at_least = ir.Binary(t, "+", start, ir.IntLit(t, 1, loc=loc), loc=loc)
            beyond = ir.Binary(INT, ">", bound, start, loc=loc)
        else:
            at_least = start
            beyond = ir.Binary(INT, ">=", bound, start, loc=loc)
        new_bound = ir.Conditional(t, beyond, bound, at_least, loc=loc)
        self._take_decl(stmts, j, d)
        return ir.For(ir.DeclStmt((d,), loc=d.loc), dataclasses.replace(cond, rhs=new_bound),
                      step, ir.Block(body, loc=loop.body.loc), loc=loop.loc)

    # ------------------------------------------------------------ pointer walks

    def _pointer_walks(self, stmts: list[ir.Stmt], i: int) -> ir.Stmt:
        loop = stmts[i]
        assert isinstance(loop, ir.For)
        if not isinstance(loop.init, ir.DeclStmt) or len(loop.init.decls) != 1:
            return loop
        counter = loop.init.decls[0]
        start = counter.init
        if start is None or _unit_step(loop.step, counter.name) != 1 \
                or not _integer(counter.type) or not _reads_no_memory(start):
            return loop
        if counter.name in effects(loop.body, Effects()).writes or _continues(loop.body):
            return loop
        written = effects(loop, Effects()).writes  # the step's counter included
        if set(_refs(start)) & written:
            return loop
        body = list(_body_stmts(loop.body))
        changed = False
        while body and isinstance(body[-1], ir.ExprStmt):
            walked = self._walk(stmts, i, loop, body[-1].expr, body[:-1], counter, written)
            if walked is None:
                break
            body = walked
            changed = True
        if not changed:
            return loop
        return dataclasses.replace(loop, body=ir.Block(tuple(body), loc=loop.body.loc))

    def _walk(self, stmts: list[ir.Stmt], i: int, loop: ir.For, update: ir.Expr,
              body: list[ir.Stmt], counter: ir.VarDecl,
              written: set[str]) -> list[ir.Stmt] | None:
        """``body`` with the pointer that ``update`` advances read as index arithmetic, or
        None when ``update`` is not such a walk."""
        if isinstance(update, ir.Unary) and update.op in ("++", "p++"):
            target, stride = update.operand, None
        elif isinstance(update, ir.Assign) and update.op == "+=" and _integer(update.value.type):
            target, stride = update.target, update.value
        else:
            return None
        if not isinstance(target, ir.VarRef) or not isinstance(target.type, PointerType):
            return None
        p = target.name
        if stride is not None and (not _reads_no_memory(stride)
                                   or set(_refs(stride)) & (written | self.address_taken)):
            return None
        block = ir.Block(tuple(body))
        if p in effects(block, Effects()).writes:
            return None
        # every read of p in the body is *p or p[j]; the update is the other reference
        derefs = [n for n in walk(block) if _accessed_pointer(n) == p]
        if _refs(block)[p] != len(derefs):
            return None
        found = self._movable_decl(stmts, i, p)
        if found is None:
            return None
        j, d = found
        assert d.init is not None
        if set(_refs(d.init)) & written:
            return None
        assert counter.init is not None
        position = _offset(counter, stride, loop.loc)
        rewriter = _Walked(p, d.init, position)
        new_body = [rewriter.rewrite(s) for s in body]
        self._take_decl(stmts, j, d)
        return new_body


def _accessed_pointer(n: Node) -> str | None:
    """The pointer variable ``p`` when ``n`` is ``*p`` or ``p[j]``."""
    if isinstance(n, ir.Unary) and n.op == "*":
        inner = _strip_implicit(n.operand)
    elif isinstance(n, ir.Index):
        inner = _strip_implicit(n.base)
    else:
        return None
    return inner.name if isinstance(inner, ir.VarRef) else None


def _arith(op: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    """``a op b`` on integers, converted as C converts them."""
    t = usual_arithmetic(a.type, b.type)
    assert t is not None
    if a.type != t:
        a = ir.Cast(t, a, True, loc=a.loc)
    if b.type != t:
        b = ir.Cast(t, b, True, loc=b.loc)
    return ir.Binary(t, op, a, b, loc=a.loc)


def _offset(counter: ir.VarDecl, stride: ir.Expr | None, loc: object) -> ir.Expr:
    """How far a walk has gone at the current iteration: ``(k - k0) * s`` in elements."""
    assert counter.init is not None
    k: ir.Expr = ir.VarRef(counter.type, counter.name, loc=counter.loc)
    start = _strip_implicit(counter.init)
    if not (isinstance(start, ir.IntLit) and start.value == 0):
        k = _arith("-", k, counter.init)
    if stride is None or (isinstance(_strip_implicit(stride), ir.IntLit)
                          and _strip_implicit(stride).value == 1):  # type: ignore[attr-defined]
        return k
    return _arith("*", k, stride)


class _Walked(Rewriter):
    """``*p`` and ``p[j]`` as ``base[pos]`` and ``base[pos + j]``; ``base`` written ``A + off``
    as ``A[off + pos]``."""

    def __init__(self, name: str, base: ir.Expr, position: ir.Expr):
        self.name = name
        self.base = _strip_implicit(base)
        self.position = position

    def _element(self, like: ir.Expr, extra: ir.Expr | None) -> ir.Expr:
        index = self.position if extra is None else _arith("+", self.position, extra)
        base = self.base
        if isinstance(base, ir.Binary) and base.op == "+" and isinstance(base.lhs.type, PointerType) \
                and _integer(base.rhs.type):
            index = _arith("+", base.rhs, index)
            base = base.lhs
        return ir.Index(like.type, base, index, loc=like.loc)

    def _is_p(self, e: ir.Expr) -> bool:
        e = _strip_implicit(e)
        return isinstance(e, ir.VarRef) and e.name == self.name

    def rewrite_Unary(self, e: ir.Unary) -> ir.Expr:
        if e.op == "*" and self._is_p(e.operand):
            return self._element(e, None)
        return e

    def rewrite_Index(self, e: ir.Index) -> ir.Expr:
        if self._is_p(e.base):
            return self._element(e, e.index)
        return e


# ---------------------------------------------------------------- the pass


def normalize(kernel: ir.Function, *, guards: bool = True, loops: bool = True,
              pointers: bool = True, divisions: bool = True) -> ir.Function:
    """``kernel`` with its equivalent shapes made one (see the module docstring)."""
    if divisions:
        kernel = power_of_two_divisions(kernel)
    body = kernel.body
    if body is None:
        return kernel
    if guards:  # first: the body of a guard joins the block that declares its counters
        stmts = early_returns(body.stmts)
        if stmts != body.stmts:
            body = dataclasses.replace(body, stmts=stmts)
    if pointers:
        body = read_through_addresses(body)
    if loops or pointers:
        constants = launch_constants(kernel) if loops else {}
        body = _Loops(body, loops, pointers, constants).rewrite(body)
    if body is kernel.body:
        return kernel
    return dataclasses.replace(kernel, body=body)
