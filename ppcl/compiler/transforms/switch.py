"""Switch lowering: a ``switch`` that work-group formation must split becomes ``if``s.

Work-group formation splits code at barriers and runs the statements around them in lock
step (``workgroup.py``); it knows blocks, ``if`` and loops, not the jumps of a ``switch`` to
its labels. A switch that holds a barrier or an async copy, or whose ``continue`` or
``return`` leaves it in a kernel with barriers (formation lifts those exits), is rewritten
here, before the uniformity analysis, into the shapes formation knows::

    switch (e) { case 1: A; case 2: B; break; default: C; }

becomes ::

    { T v = e;  int sel = v == 1 ? 0 : v == 2 ? 1 : 2;  int cont = 0;
      do { if (sel <= 0) { A }  if (sel <= 1) { B; break; }  if (sel <= 2) { C } } while (0);
      if (cont) continue; }

The statements after label ``i`` run when ``sel <= i`` and no ``break`` left before, which
is C's fall-through; a ``break`` of the switch leaves the one-trip ``do``, a ``continue`` of
the enclosing loop sets ``cont`` and leaves it, and the loop is continued after it. A variable
declared after one label and used after a later one is declared before the ``do``. Labels
must stand at the top level of the switch body, or in plain blocks there, which are opened
(``case 0: { A; case 1: B; }`` is ``case 0: A; case 1: B;``: locals have unique names in a
function, so a block's scope only hides names nothing else uses); a label nested in any other
statement (an ``if``, a loop: Duff's device) is a located error.

Pass name: ``switch``.
"""

from __future__ import annotations

import dataclasses

from ppcl.compiler.diagnostics import CompileError, Diagnostic, Loc, Severity
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import INT
from ppcl.compiler.ir.visit import Node, Rewriter, children, map_child_stmts, walk
from ppcl.compiler.transforms.workgroup import escapes, has_async, has_barrier

PASS_NAME = "switch"

_LOOPS = (ir.For, ir.While, ir.DoWhile)
_PREFIX = "__ppcl_sw"


def _error(loc: Loc, message: str) -> CompileError:
    diagnostic = Diagnostic(Severity.ERROR, message, loc)
    return CompileError([diagnostic], diagnostic.format())


def needs_lowering(s: ir.Switch, kernel_syncs: bool) -> bool:
    """Whether formation must split ``s``: it holds a barrier or an async copy, or it lets a
    ``continue`` or ``return`` out in a kernel that synchronizes."""
    if has_barrier(s) or has_async(s):
        return True
    return kernel_syncs and bool(escapes(s) & {"continue", "return"})


def _segments(s: ir.Switch) -> tuple[list[tuple[ir.Stmt, int]], list[list[ir.Stmt]]]:
    """The labels of ``s`` with the number of the segment each starts, and the segments (the
    statements after each label up to the next)."""
    labels: list[tuple[ir.Stmt, int]] = []
    segments: list[list[ir.Stmt]] = []
    for stmt in _open_label_blocks(s.body.stmts):
        if isinstance(stmt, ir.Case | ir.Default):
            labels.append((stmt, len(segments)))
            segments.append([])
        elif segments:
            segments[-1].append(stmt)
        else:
            # a label in it would be reached: dropping the statement would drop that code
            _check_no_nested_labels(stmt)
            if any(isinstance(n, ir.DeclStmt) for n in walk(stmt)):
                raise _error(stmt.loc, "a declaration before the first label of a switch "
                                       "that holds a barrier is not supported by ppcl")
        # other statements before the first label are never reached
    for segment in segments:
        for stmt in segment:
            _check_no_nested_labels(stmt)
    return labels, segments


def _open_label_blocks(stmts: tuple[ir.Stmt, ...]) -> list[ir.Stmt]:
    """``stmts`` with each plain block that holds a label of this switch replaced by its
    statements (opened in turn): a jump into a block is a jump to that point of the flat list."""
    out: list[ir.Stmt] = []
    for stmt in stmts:
        if isinstance(stmt, ir.Block) and _holds_label(stmt):
            out.extend(_open_label_blocks(stmt.stmts))
        else:
            out.append(stmt)
    return out


def _holds_label(s: ir.Stmt) -> bool:
    """Whether a ``case`` or ``default`` of the switch around ``s`` stands in ``s`` (those of
    a nested switch are its own)."""
    for child in children(s):
        if isinstance(child, ir.Switch) or not isinstance(child, ir.Stmt):
            continue
        if isinstance(child, ir.Case | ir.Default) or _holds_label(child):
            return True
    return False


def _check_no_nested_labels(s: ir.Stmt) -> None:
    for child in children(s):
        if isinstance(child, ir.Switch) or not isinstance(child, ir.Stmt):
            continue
        if isinstance(child, ir.Case | ir.Default):
            raise _error(child.loc, "a case label nested in a statement (other than a "
                                    "block) of a switch that holds a barrier is not "
                                    "supported by ppcl")
        _check_no_nested_labels(child)


def _shared_across_labels(segments: list[list[ir.Stmt]]) -> dict[str, ir.VarDecl]:
    """The variables declared in one segment and used in a later one (C lets a case reach a
    variable declared after an earlier label). Each segment becomes the body of an ``if``,
    so these are declared before the segments instead (locals have unique names in a
    function, so moving a declaration names nothing else)."""
    shared: dict[str, ir.VarDecl] = {}
    for i, segment in enumerate(segments):
        declared = {d.name: d for stmt in segment if isinstance(stmt, ir.DeclStmt)
                    for d in stmt.decls}
        used = {n.name for later in segments[i + 1:] for stmt in later for n in walk(stmt)
                if isinstance(n, ir.VarRef)}
        for name in declared.keys() & used:
            decl = declared[name]
            if isinstance(decl.init, ir.InitList | ir.StringLit):
                raise _error(decl.loc, f"'{name}' is used after a later case label of a "
                                       "switch that holds a barrier and is initialized with "
                                       "a braced list; ppcl needs it declared before the "
                                       "switch")
            shared[name] = decl
    return shared


def _hoisted(decl: ir.VarDecl) -> ir.VarDecl:
    """``decl`` declared before the switch: no initializer (it runs where the declaration
    stood) and not const (that initializer is an assignment now)."""
    return dataclasses.replace(decl, init=None, const=False)


def _declarations_as_assignments(segment: list[ir.Stmt],
                                 shared: dict[str, ir.VarDecl]) -> list[ir.Stmt]:
    """``segment`` with the declarations of ``shared`` variables turned into assignments of
    their initializers (none where they have none)."""
    out: list[ir.Stmt] = []
    for stmt in segment:
        if not isinstance(stmt, ir.DeclStmt) or not any(d.name in shared for d in stmt.decls):
            out.append(stmt)
            continue
        for d in stmt.decls:
            if d.name not in shared:
                out.append(ir.DeclStmt((d,), loc=stmt.loc))
            elif d.init is not None:
                target = ir.VarRef(d.type, d.name, loc=d.loc)
                out.append(ir.ExprStmt(ir.Assign(d.type, "=", target, d.init, loc=d.loc),
                                       loc=d.loc))
    return out


def _continues_to_flag(s: ir.Stmt, flag: str) -> ir.Stmt:
    """``s`` with every ``continue`` leaving it replaced by ``flag = 1; break;``; after a
    nested switch that lets one out, ``if (flag) break;`` carries the break on."""
    if isinstance(s, ir.Continue):
        return ir.Block((_set(flag, s.loc), ir.Break(loc=s.loc)), loc=s.loc)
    if isinstance(s, _LOOPS) or "continue" not in escapes(s):
        return s
    if isinstance(s, ir.Switch):
        body = ir.Block(tuple(_continues_to_flag(c, flag) for c in s.body.stmts), loc=s.body.loc)
        again = ir.If(_ref(flag, s.loc), ir.Break(loc=s.loc), loc=s.loc)
        return ir.Block((dataclasses.replace(s, body=body), again), loc=s.loc)
    return map_child_stmts(s, lambda c: _continues_to_flag(c, flag))


def _ref(name: str, loc: Loc) -> ir.VarRef:
    return ir.VarRef(INT, name, loc=loc)


def _set(name: str, loc: Loc) -> ir.Stmt:
    return ir.ExprStmt(ir.Assign(INT, "=", _ref(name, loc), ir.IntLit(INT, 1, loc=loc), loc=loc),
                       loc=loc)


def _selector(value: ir.VarRef, labels: list[tuple[ir.Stmt, int]], count: int,
              loc: Loc) -> ir.Expr:
    """The number of the segment the switch jumps to: its case's, else the default's, else
    ``count`` (past every segment)."""
    chosen: ir.Expr = ir.IntLit(INT, count, loc=loc)
    for label, segment in labels:
        if isinstance(label, ir.Default):
            chosen = ir.IntLit(INT, segment, loc=loc)
    for label, segment in reversed(labels):
        if not isinstance(label, ir.Case):
            continue
        test = ir.Binary(INT, "==", value, ir.IntLit(value.type, label.value, loc=loc), loc=loc)
        chosen = ir.Conditional(INT, test, ir.IntLit(INT, segment, loc=loc), chosen, loc=loc)
    return chosen


def lower_switch(s: ir.Switch, number: int) -> ir.Stmt:
    """``s`` as a one-trip ``do`` of guarded segments (see the module's description)."""
    loc = s.loc
    labels, segments = _segments(s)
    shared = _shared_across_labels(segments)
    segments = [_declarations_as_assignments(segment, shared) for segment in segments]
    name, sel, cont = f"{_PREFIX}{number}", f"{_PREFIX}{number}_sel", f"{_PREFIX}{number}_cont"
    value = ir.VarRef(s.expr.type, name, loc=loc)
    decls = [ir.VarDecl(name, s.expr.type, init=s.expr, loc=loc),
             ir.VarDecl(sel, INT, init=_selector(value, labels, len(segments), loc), loc=loc)]
    leaves_by_continue = "continue" in escapes(s)
    if leaves_by_continue:
        decls.append(ir.VarDecl(cont, INT, init=ir.IntLit(INT, 0, loc=loc), loc=loc))
    guarded: list[ir.Stmt] = []
    for i, segment in enumerate(segments):
        if not segment:
            continue
        body: ir.Stmt = ir.Block(tuple(segment), loc=segment[0].loc)
        if leaves_by_continue:
            body = _continues_to_flag(body, cont)
        test = ir.Binary(INT, "<=", ir.VarRef(INT, sel, loc=loc), ir.IntLit(INT, i, loc=loc),
                         loc=loc)
        guarded.append(ir.If(test, body, loc=segment[0].loc))
    once = ir.DoWhile(ir.Block(tuple(guarded), loc=s.body.loc), ir.IntLit(INT, 0, loc=loc),
                      loc=loc)
    decls += [_hoisted(d) for d in shared.values()]
    out: list[ir.Stmt] = [ir.DeclStmt((d,), loc=loc) for d in decls]
    out.append(once)
    if leaves_by_continue:
        out.append(ir.If(_ref(cont, loc), ir.Continue(loc=loc), loc=loc))
    return ir.Block(tuple(out), loc=loc)


class _SwitchLowering(Rewriter):
    def __init__(self, kernel_syncs: bool):
        self.kernel_syncs = kernel_syncs
        self.count = 0

    def rewrite_Switch(self, s: ir.Switch) -> ir.Stmt:
        if not needs_lowering(s, self.kernel_syncs):
            return s
        self.count += 1
        return lower_switch(s, self.count)


def lower_switches(kernel: ir.Function) -> ir.Function:
    """``kernel`` with every switch that formation must split lowered (inner ones first)."""
    assert kernel.body is not None
    body: Node = kernel.body
    if not any(isinstance(n, ir.Switch) for n in walk(body)):
        return kernel
    syncs = has_barrier(body) or has_async(body)
    lowered: ir.Function = _SwitchLowering(syncs).rewrite(kernel)
    return lowered
