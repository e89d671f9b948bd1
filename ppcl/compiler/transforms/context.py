"""Context variables: where each private variable of a formed kernel lives.

Work-group formation (``workgroup.py``) cuts a kernel into parallel regions; this module then
decides, for every private variable, how its value crosses from region to region. A variable
referenced in more than one region (or at group level) becomes a context array indexed by the
linear local id, or a group scalar when it is uniform and only written where every work-item
writes the same value once (see ``_group_scalars``). A variable whose one initializer is a pure
function of work-item ids and kernel arguments (``int lid = get_local_id(0);``) is instead
recomputed in every region that reads it: the compiler then sees ``lid`` as the loop counter,
not as a load from memory, and vectorizes accordingly (see ``_recomputable``). ``Variables``
makes these decisions and rewrites the formed body; ``_RefRewriter`` turns references to
context variables into ``ContextRef`` and their declarations into ``ContextInit``.

A private array in a context array is laid out element-major (``c[16][work-items]``) when
every use of it names one element (``c[i][j]``, never ``c`` or ``&c[i]`` as a pointer) at
indices the same for all work-items: a work-item loop over ``c[kk] += ...`` then reads and
writes consecutive floats for consecutive work-items and vectorizes, where the work-item-major
layout (``c[work-items][16]``) strides them by the array's length (Parboil's register-tiled
sgemm, 16 accumulators per work-item). An index that varies per work-item gathers in either
layout, and work-item-major keeps each work-item's array together; see ``context_layouts``.

A vector variable in a context array is laid out component-major the same way
(``z[2][work-items]`` for a ``float2``) when a region reads or writes its components one at a
time, as the regions ``scalarize.py`` splits into scalars do: the component ``z.x`` is then a
float of consecutive work-items, where in a ``float2[work-items]`` array gcc finds no vector
type for it and runs the work-item loop one work-item at a time (an escape-time loop on
complex numbers kept in ``float2``). Whole-vector reads and writes elsewhere are composed from
and split into the components; see ``vector_context_layouts``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ppcl.compiler.analysis import liveness
from ppcl.compiler.analysis.effects import Effects, effects, is_effect_free
from ppcl.compiler.analysis.uniformity import ID_QUERIES, Uniformity, const_int
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.types import (
    INT,
    AddressSpace,
    ArrayType,
    EnumType,
    PointerType,
    ScalarType,
    StructType,
    Type,
    VectorType,
    component_layout,
)
from ppcl.compiler.ir.visit import Node, Rewriter, children, declared_names, walk

_LOOPS = (ir.For, ir.While, ir.DoWhile)


def _pure_of(e: ir.Expr, names: set[str]) -> bool:
    """True when ``e`` only combines literals, the variables ``names`` and work-item id queries
    with operators: evaluating it again anywhere gives the same value and has no effect."""
    for n in walk(e):
        if isinstance(n, ir.Unary):
            if n.op not in ("-", "+", "!", "~"):
                return False
        elif isinstance(n, ir.VarRef):
            if n.name not in names:
                return False
        elif isinstance(n, ir.Call):
            if n.builtin is None or n.name not in ID_QUERIES:
                return False
        elif not isinstance(n, ir.IntLit | ir.FloatLit | ir.Binary | ir.Conditional | ir.Cast):
            return False
    return True


def _scalar_like(t: Type) -> bool:
    return isinstance(t, ScalarType | VectorType | PointerType | EnumType)


class Variables:
    """Decides where each private variable lives and rewrites the formed body accordingly."""

    def __init__(self, body: ir.Block, decls: dict[str, ir.VarDecl], params: dict[str, ir.Param],
                 uniformity: Uniformity | None):
        self.decls = decls
        self.params = params
        self.uni = uniformity
        self.temps: dict[str, Type] = {}
        # recomputed variables reading group-level variables steady where they are used
        self.recomputed_reads: dict[str, tuple[str, ...]] = {}
        whole = effects(body, Effects())
        written_params = {n for n in whole.writes | whole.address_taken if n in params}
        candidates = set(decls) | written_params
        live = liveness.live_across_regions(body, candidates)
        if any(_private_pointer(self.var_type(n)) for n in live):
            # a pointer carried from region to region may point into a variable referenced in
            # one region only (``float *q = &u[1];``): that variable must outlive its region
            live |= _pointed_to(body, whole) & set(decls)
        self.written_params = sorted(written_params)
        # a recomputed variable is declared again in every region that reads it, so it cannot
        # also be a group scalar assigned once at the top: the redeclaration would shadow it,
        # and a const one would be assigned (gcc: assignment of read-only variable)
        self.recomputed = self._recomputable(body, params, whole)
        self.group_scalars = self._group_scalars(
            body, live - written_params - set(self.recomputed), whole)
        self.context = {n for n in live | written_params
                        if n not in self.group_scalars and n not in self.recomputed}

    def var_type(self, name: str) -> Type:
        if name in self.decls:
            return self.decls[name].type
        return self.params[name].type

    # ------------------------------------------------------------ recomputed variables

    def _recomputable(self, body: ir.Block, params: dict[str, ir.Param],
                      whole: Effects) -> dict[str, ir.VarDecl]:
        """Variables declared once with a pure initializer over ids, unwritten arguments and
        other such variables, never written after, never referenced at group level: each
        region that reads one declares it again (``_redeclare``), in declaration order."""
        forms: dict[str, set[ir.VarDecl]] = {}  # an interchanged loop may be formed twice
        for n in walk(body):
            if isinstance(n, ir.DeclStmt):
                for d in n.decls:
                    forms.setdefault(d.name, set()).add(d)
        at_group = _group_level_refs(body)
        candidates = {name: d for name, d in self.decls.items()
                      if len(forms.get(name, ())) == 1 and d.init is not None
                      and isinstance(d.type, ScalarType) and not d.volatile
                      and name not in whole.writes and name not in whole.address_taken
                      and name not in at_group}
        fixed = {p for p in params if p not in whole.writes and p not in whole.address_taken}
        steady = _steady_in_scopes(body, set(candidates), self.decls, whole, at_group)
        changed = True
        while changed:
            changed = False
            for name, d in list(candidates.items()):
                assert d.init is not None
                if not _pure_of(d.init, fixed | set(candidates) | steady.get(name, set())):
                    del candidates[name]
                    changed = True
        order = {name: i for i, name in enumerate(self.decls)}
        # the group-level variables each one reads (for PPCL_DEBUG=plans)
        for name, d in candidates.items():
            assert d.init is not None
            read = sorted({n.name for n in walk(d.init) if isinstance(n, ir.VarRef)}
                          & steady.get(name, set()))
            if read:
                self.recomputed_reads[name] = tuple(read)
        return dict(sorted(candidates.items(), key=lambda item: order[item[0]]))

    def _redeclare(self, body: ir.Stmt) -> ir.Stmt:
        """``body`` of a work-item loop with the recomputed variables it reads but does not
        declare (and those their initializers read) declared first."""
        if not self.recomputed:
            return body
        declared = declared_names(body)
        needed = {n.name for n in walk(body) if isinstance(n, ir.VarRef)
                  and n.name in self.recomputed and n.name not in declared}
        pending = list(needed)
        while pending:
            decl = self.recomputed[pending.pop()]
            assert decl.init is not None
            for n in walk(decl.init):
                if isinstance(n, ir.VarRef) and n.name in self.recomputed \
                        and n.name not in needed and n.name not in declared:
                    needed.add(n.name)
                    pending.append(n.name)
        if not needed:
            return body
        decls = tuple(ir.DeclStmt((d,), loc=d.loc) for name, d in self.recomputed.items()
                      if name in needed)
        stmts = body.stmts if isinstance(body, ir.Block) else (body,)
        return ir.Block((*decls, *stmts), loc=body.loc)

    # ------------------------------------------------------------ group scalars

    def _group_scalars(self, body: ir.Block, live: set[str], whole: Effects) -> set[str]:
        if self.uni is None:
            return set()
        candidates = {n for n in live
                      if n in self.decls and self.uni.var(n).is_uniform
                      and n not in whole.address_taken and _scalar_like(self.decls[n].type)}
        region_writes: Effects = Effects()
        group_exprs: list[ir.Expr] = []
        self._collect(body, region_writes, group_exprs)
        candidates -= region_writes.writes
        changed = True
        while changed:
            changed = False
            for e in group_exprs:
                eff = effects(e, Effects())
                if eff.writes and (eff.memory or not eff.writes <= candidates):
                    if eff.writes & candidates:
                        candidates -= eff.writes
                        changed = True
        return candidates

    def _collect(self, node: Node, region_writes: Effects, group_exprs: list[ir.Expr]) -> None:
        """Writes inside regions other than pure declaration initializers, and every
        group-level expression."""
        if isinstance(node, wg.WorkItemLoop):
            for n in walk(node.body):
                if isinstance(n, ir.DeclStmt):
                    for d in n.decls:
                        if d.init is not None and not is_effect_free(d.init):
                            region_writes.writes.add(d.name)
                elif isinstance(n, ir.Assign | ir.Unary):
                    effects(n, region_writes)
            return
        if isinstance(node, ir.DeclStmt):
            for d in node.decls:
                if d.init is not None:
                    group_exprs.append(ir.Assign(d.type, "=", ir.VarRef(d.type, d.name), d.init))
            return
        if isinstance(node, wg.GroupCall):
            if node.target is not None:
                group_exprs.append(ir.Assign(node.target.type, "=", node.target,
                                             ir.IntLit(INT, 0)))
            return
        if isinstance(node, ir.Expr):
            group_exprs.append(node)
            return
        for child in children(node):
            self._collect(child, region_writes, group_exprs)

    # ------------------------------------------------------------ rewriting

    def rewrite(self, body: ir.Block) -> ir.Block:
        refs = _RefRewriter(self)
        stmts = list(self._group_stmts(body.stmts, refs))
        if self.written_params:
            inits = tuple(wg.ContextInit(n, ir.VarRef(self.var_type(n), n)) for n in self.written_params)
            stmts.insert(0, wg.WorkItemLoop(ir.Block(inits), simd=False))
        return ir.Block(tuple(stmts), loc=body.loc)

    def _group_stmts(self, stmts: tuple[ir.Stmt, ...], refs: _RefRewriter) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            out.extend(self._group_stmt(s, refs))
        return out

    def _group_block(self, s: ir.Stmt, refs: _RefRewriter) -> ir.Block:
        stmts = s.stmts if isinstance(s, ir.Block) else (s,)
        return ir.Block(tuple(self._group_stmts(stmts, refs)), loc=s.loc)

    def _group_expr(self, e: ir.Expr | None, refs: _RefRewriter, value_used: bool) -> ir.Expr | None:
        if e is None:
            return None
        eff = effects(e, Effects())
        rewritten = refs.rewrite(e)
        if not eff.writes and not eff.memory:
            return rewritten
        if not eff.memory and eff.writes <= self.group_scalars:
            return rewritten
        temp = None
        if value_used:
            temp = f"__ppcl_ge{len(self.temps)}"
            self.temps[temp] = e.type
        return wg.GroupEval(e.type, rewritten, temp, loc=e.loc)

    def _group_stmt(self, s: ir.Stmt, refs: _RefRewriter) -> list[ir.Stmt]:
        if isinstance(s, wg.WorkItemLoop):
            body = self._redeclare(refs.rewrite(s.body))
            return [dataclasses.replace(s, body=body, simd=self._simd_ok(s.body),
                                        serial_reduction=self._serial_reduction(s.body))]
        if isinstance(s, ir.Block):
            return [self._group_block(s, refs)]
        if isinstance(s, ir.If):
            cond = self._group_expr(s.cond, refs, True)
            assert cond is not None
            other = None if s.otherwise is None else self._group_block(s.otherwise, refs)
            return [ir.If(cond, self._group_block(s.then, refs), other, loc=s.loc)]
        if isinstance(s, ir.While):
            cond = self._group_expr(s.cond, refs, True)
            assert cond is not None
            return [ir.While(cond, self._group_block(s.body, refs), loc=s.loc)]
        if isinstance(s, ir.DoWhile):
            cond = self._group_expr(s.cond, refs, True)
            assert cond is not None
            return [ir.DoWhile(self._group_block(s.body, refs), cond, loc=s.loc)]
        if isinstance(s, ir.For):
            assert s.init is None
            return [ir.For(None, self._group_expr(s.cond, refs, True),
                           self._group_expr(s.step, refs, False),
                           self._group_block(s.body, refs), s.unroll, loc=s.loc)]
        if isinstance(s, ir.ExprStmt):
            e = self._group_expr(s.expr, refs, False)
            assert e is not None
            if isinstance(e, wg.GroupEval):
                return [wg.WorkItemLoop(ir.Block((ir.ExprStmt(e.expr, loc=s.loc),)), loc=s.loc)]
            return [ir.ExprStmt(e, loc=s.loc)]
        if isinstance(s, ir.DeclStmt):
            out: list[ir.Stmt] = []
            for d in s.decls:
                if d.space is AddressSpace.LOCAL or d.name in self.recomputed:
                    continue
                if d.name in self.group_scalars:
                    if d.init is not None:
                        target = ir.VarRef(d.type, d.name, loc=s.loc)
                        out.append(ir.ExprStmt(ir.Assign(d.type, "=", target, refs.rewrite(d.init)),
                                               loc=s.loc))
                    continue
                # a context variable declared at group level: every work-item initializes it
                decl = refs.rewrite(ir.DeclStmt((d,), loc=s.loc))
                out.append(wg.WorkItemLoop(ir.Block((decl,) if not isinstance(decl, tuple)
                                                    else decl), loc=s.loc))
            return out
        if isinstance(s, wg.GroupCall):
            call = refs.rewrite(s.call)
            call_target = None if s.target is None else refs.rewrite(s.target)
            return [wg.GroupCall(call, call_target, loc=s.loc)]
        return [s]

    def _serial_reduction(self, body: ir.Stmt) -> bool:
        if self.uni is None:
            return False
        uni = self.uni
        return varying_float_sum(body, lambda loop: uni.convergent(loop))

    def _simd_ok(self, body: ir.Stmt) -> bool:
        for n in walk(body):
            if isinstance(n, ir.Call):
                if n.builtin is None:
                    return False
                if any(n.name.startswith(p) for p in ("atom", "printf", "async", "barrier")):
                    return False
            if isinstance(n, ir.DeclStmt) and any(d.name in self.group_scalars for d in n.decls):
                return False
            if isinstance(n, (*_LOOPS, ir.Switch)) and any(
                    isinstance(x, wg.WorkItemExit) for x in walk(n)):
                return False  # the exit is a goto out of a nested loop
        return True


def varying_float_sum(body: ir.Stmt, counted: Callable[[ir.Stmt], bool]) -> bool:
    """Whether ``body`` accumulates into a private float (``+=``, ``-=``, ``*=``) inside a loop
    that ``counted`` does not find to run the same number of times in every lane: a sum gcc
    vectorizes across lanes only in order, slower than scalar code
    (``WorkItemLoop.serial_reduction``)."""
    return any(isinstance(loop, _LOOPS) and not counted(loop) and any(
        isinstance(n, ir.Assign) and n.op in ("+=", "-=", "*=")
        and isinstance(n.target, ir.VarRef) and isinstance(n.target.type, ScalarType)
        and n.target.type.is_float for n in walk(loop.body)) for loop in walk(body))


def context_layouts(body: ir.Block, arrays: dict[str, ArrayType],
                    uniformity: Uniformity | None) -> tuple[wg.ContextLayout, ...]:
    """The layout of each private array of ``arrays`` kept in a context array, decided from
    its uses in the formed ``body`` (before ``ContextRef`` replaces its references):
    element-major when every use names one element at indices uniform across the work-items,
    work-item-major otherwise (see the module's docstring)."""
    refusals: dict[str, str] = {}

    def refuse(name: str, reason: str) -> None:
        refusals.setdefault(name, reason)

    def scan(node: Node) -> None:
        if isinstance(node, ir.VarRef) and node.name in arrays:
            refuse(node.name, f"used as a whole (a pointer) at {node.loc}")
            return
        if isinstance(node, ir.Unary) and node.op == "&":
            root = _element_root(node.operand)
            if root is not None and root[0].name in arrays:
                refuse(root[0].name, f"the address of an element is taken at {node.loc}")
        element = _element_root(node) if isinstance(node, ir.Index) else None
        if element is not None and element[0].name in arrays:
            name = element[0].name
            for index in element[1]:
                if uniformity is not None and not uniformity.is_uniform(index):
                    refuse(name, f"indexed differently by each work-item at {index.loc}")
                scan(index)
            return
        for child in children(node):
            scan(child)

    scan(body)
    layouts = []
    for name in sorted(arrays):
        if uniformity is None:
            layouts.append(wg.ContextLayout(name, False, "no uniformity analysis"))
        elif name in refusals:
            layouts.append(wg.ContextLayout(name, False, refusals[name]))
        else:
            layouts.append(wg.ContextLayout(
                name, True, "every use names one element, at indices the same for all work-items"))
    return tuple(layouts)


def _element_root(e: ir.Expr) -> tuple[ir.VarRef, list[ir.Expr]] | None:
    """``(a, [i, j])`` when ``e`` is one element ``a[i][j]`` of private array variable ``a``
    (as many indices as ``a`` has dimensions), else None."""
    indices: list[ir.Expr] = []
    if isinstance(e.type, ArrayType):
        return None
    while isinstance(e, ir.Index) and isinstance(e.base.type, ArrayType):
        indices.append(e.index)
        e = e.base
    if not indices or not isinstance(e, ir.VarRef):
        return None
    return e, indices[::-1]


def _private_pointer(t: Type) -> bool:
    while isinstance(t, PointerType | ArrayType):
        if isinstance(t, PointerType) and t.space is AddressSpace.PRIVATE:
            return True
        t = t.pointee if isinstance(t, PointerType) else t.elem
    return False


def _pointed_to(body: ir.Block, whole: Effects) -> set[str]:
    """Private variables a pointer may point into: those whose address (or an element's) is
    taken, and arrays used as a whole (as a pointer to their first element)."""
    found = set(whole.address_taken)

    def scan(node: Node) -> None:
        if isinstance(node, ir.VarRef) and isinstance(node.type, ArrayType):
            found.add(node.name)
            return
        element = _element_root(node) if isinstance(node, ir.Index) else None
        if element is not None:  # one element, read or written in place
            for index in element[1]:
                scan(index)
            return
        for child in children(node):
            scan(child)

    scan(body)
    return found


def _decl_scopes(node: Node, scope: Node, out: dict[str, list[Node]]) -> None:
    """For each variable declared inside a work-item loop, the bodies of the innermost
    group-level loops around its declarations (the function body outside every loop): C's
    scoping keeps every use of the variable inside them."""
    if isinstance(node, wg.WorkItemLoop):
        for n in walk(node):
            if isinstance(n, ir.DeclStmt):
                for d in n.decls:
                    out.setdefault(d.name, []).append(scope)
        return
    if isinstance(node, _LOOPS):
        scope = node.body
    for child in children(node):
        _decl_scopes(child, scope, out)


def _steady_in_scopes(body: ir.Block, names: set[str], decls: dict[str, ir.VarDecl],
                      whole: Effects, at_group: set[str]) -> dict[str, set[str]]:
    """For each of ``names``, the private scalars of group level (``at_group``: declared for
    the whole function) that no statement changes where it is declared and used
    (``_decl_scopes``): an initializer reading them gives the same value anywhere in that
    scope. ``int row = (y + r) * w + x;`` in the body of an interchanged ``for (r ...)``
    reads the group's counter, which only the loop's step changes."""
    scopes: dict[str, list[Node]] = {}
    _decl_scopes(body, body, scopes)
    changed_in: dict[int, set[str]] = {}
    out: dict[str, set[str]] = {}
    plain = {n for n, d in decls.items() if isinstance(d.type, ScalarType) and not d.volatile
             and n not in whole.address_taken and n in at_group}
    for name in names:
        found = scopes.get(name)
        if not found:
            continue
        steady = set(plain)
        for scope in found:
            changed = changed_in.get(id(scope))
            if changed is None:
                scope_effects = effects(scope, Effects())
                changed = scope_effects.writes | scope_effects.address_taken | {
                    d.name for n in walk(scope) if isinstance(n, ir.DeclStmt)
                    for d in n.decls}
                changed_in[id(scope)] = changed
            steady -= changed
        out[name] = steady
    return out


def _group_level_refs(node: Node) -> set[str]:
    """Variables referenced outside every work-item loop."""
    if isinstance(node, wg.WorkItemLoop):
        return set()
    if isinstance(node, ir.VarRef):
        return {node.name}
    found: set[str] = set()
    for child in children(node):
        found |= _group_level_refs(child)
    return found


class _RefRewriter(Rewriter):
    def __init__(self, variables: Variables):
        self.vars = variables

    def rewrite_VarRef(self, e: ir.VarRef) -> ir.Expr:
        if e.name in self.vars.context:
            return wg.ContextRef(e.type, e.name, loc=e.loc)
        return e

    def rewrite_DeclStmt(self, s: ir.DeclStmt) -> ir.Stmt | tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        keep: list[ir.VarDecl] = []
        for d in s.decls:
            if d.space is AddressSpace.LOCAL:
                continue
            if d.name in self.vars.context:
                if keep:
                    out.append(ir.DeclStmt(tuple(keep), loc=s.loc))
                    keep = []
                if d.init is not None:
                    out.append(wg.ContextInit(d.name, d.init, loc=s.loc))
            elif d.name in self.vars.group_scalars:
                if keep:
                    out.append(ir.DeclStmt(tuple(keep), loc=s.loc))
                    keep = []
                if d.init is not None:
                    target = ir.VarRef(d.type, d.name, loc=s.loc)
                    out.append(ir.ExprStmt(ir.Assign(d.type, "=", target, d.init), loc=s.loc))
            else:
                keep.append(d)
        if keep:
            out.append(ir.DeclStmt(tuple(keep), loc=s.loc))
        if len(out) == 1:
            return out[0]
        if not out:
            return ir.Empty(loc=s.loc)
        return tuple(out)


def vector_context_layouts(body: ir.Block, context_vars: dict[str, Type],
                           decided: tuple[wg.ContextLayout, ...]) -> tuple[wg.ContextLayout, ...]:
    """The component-major layouts of the vector-typed context variables of the formed
    ``body`` (after ``scalarize.py``): chosen for a variable whose components are read or
    written one at a time somewhere (``z.x``, ``z[1]``), and used otherwise only as a whole
    value read or assigned; its address taken, a component chosen by a variable, or any write
    but an assignment of the whole value or of one component (an increment of the whole
    vector, a store or increment of several components at once) keep it as it is. A
    struct whose fields are all of one scalar type (``struct { float re, im; }``) is laid out
    field-major the same way unless its address is taken: its whole copies, which gcc splits
    into the fields, then read and write consecutive words of the work-items too."""
    taken = {layout.name for layout in decided}
    aggregates = {n: t for n, t in context_vars.items()
                  if n not in taken and component_layout(t) is not None}
    if not aggregates:
        return ()
    refusals: dict[str, str] = {}
    by_component: set[str] = {n for n, t in aggregates.items() if isinstance(t, StructType)}

    def named(e: ir.Expr) -> str | None:
        return e.name if isinstance(e, wg.ContextRef) and e.name in aggregates else None

    def written(target: ir.Expr, whole_ok: bool, loc: object) -> None:
        """Refuse the variable a write goes to unless it is the whole variable (``whole_ok``:
        an assignment, printed split into the components) or one component of it: a composed
        value is a C compound literal, an lvalue whose stores would be lost."""
        chain: list[ir.Expr] = []
        e = target
        while isinstance(e, ir.Swizzle) or (isinstance(e, ir.Member) and not e.arrow) or (
                isinstance(e, ir.Index) and isinstance(e.base.type, VectorType)):
            chain.append(e)
            e = e.base
        name = named(e)
        if name is None:
            return
        one = len(chain) == 1 and not (isinstance(chain[0], ir.Swizzle)
                                       and len(chain[0].indices) > 1)
        if not (one or (whole_ok and not chain)):
            refusals.setdefault(name, f"written other than whole or a component at a time at {loc}")

    def scan(node: Node) -> None:
        if isinstance(node, wg.GroupEval) and node.temp in aggregates:
            refusals.setdefault(node.temp, "a group-level value's temporary")
        if isinstance(node, ir.Unary) and node.op in ("++", "--", "p++", "p--"):
            written(node.operand, False, node.loc)
        if isinstance(node, ir.Assign):
            written(node.target, True, node.loc)
        if isinstance(node, ir.Unary) and node.op == "&":
            for ref in walk(node.operand):
                name = named(ref) if isinstance(ref, ir.Expr) else None
                if name is not None:
                    refusals.setdefault(name, f"its address is taken at {node.loc}")
        if isinstance(node, ir.Swizzle) and len(node.indices) == 1:
            name = named(node.base)
            if name is not None:
                by_component.add(name)
        if isinstance(node, ir.Index) and named(node.base) is not None:
            name = named(node.base) or ""
            if const_int(node.index) is None:
                refusals.setdefault(name, f"a component chosen by a variable at {node.loc}")
            else:
                by_component.add(name)
        for child in children(node):
            scan(child)

    scan(body)
    return tuple(
        wg.ContextLayout(name, True, "its fields are all of one scalar type"
                         if isinstance(aggregates[name], StructType)
                         else "its components are used one at a time", components=True)
        for name in sorted(aggregates) if name in by_component and name not in refusals)
