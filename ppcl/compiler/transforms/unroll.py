"""Short counted loops over tables and private arrays unrolled, the arrays made scalars.

GPU-style kernels walk small fixed sets with a loop: the nine directions of a lattice-Boltzmann
cell (``for (q = 0; q < 9; q++) f[q] = src[q * n + cell - CX[q]];``), the taps of a filter, the
components of a record. On the CPU device such a loop inside the work-item loop keeps the
work-items from vectorizing: its private array (``f[9]``) becomes a context array strided by
its length when the loop moves out of the work-item loop, and each ``CX[q]`` is a load. Written
out with the counter as a constant, each table load is the table's value, each element of the
private array is a scalar, and the work-item loop around the copies is straight-line code that
vectorizes: a structure-of-arrays D2Q9 step ran in 7.1 ms as loops and 1.2 ms unrolled.

A ``for`` loop is unrolled when all of these hold (each decision goes to ``PPCL_DEBUG=plans``):

* its counter is an integer declared in its ``init`` with a constant value, compared in its
  condition with a constant and stepped by a constant, never written in its body;
* it runs at most ``MAX_TRIPS`` times and the copies hold at most ``MAX_NODES`` IR nodes;
* its body has no loop (inner loops are unrolled first, or the outer one stays), no barrier,
  and no ``break``, ``continue`` or ``return``;
* the counter indexes a private array or a table (a ``__constant`` array with a constant
  initializer, or a private one, see below): what unrolling removes, directly or through
  variables computed from it in the body;
* every buffer access in it is the same for all work-items or consecutive along x (a
  variable that only wraps around a range read as its initializer): where each work-item
  walks its own record (``dst[cell * 9 + q]``), the copies would gather and scatter across
  work-items, and the loop stays (unrolled, an array-of-structures step ran 1.5x slower).

A private array initialized with constants and never written afterwards, used only element by
element (filter weights, ``float k[3][3] = {{1, 2, 1}, ...};``), is a table too, of any number
of dimensions; once every element read has become its value, its declaration goes (a 3x3
filter with such weights ran 6x faster).

``#pragma unroll 1`` keeps a loop. Each copy is a block with its own names for the variables
it declares (the IR's names stay unique in the function). Afterwards a private array whose
every use is an element at a constant index (and whose address is never taken) becomes one
scalar per element.

Pass name: ``unroll`` (before ``workgroup``); the build option ``-ppcl-no-unroll`` turns it off.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

from ppcl.compiler.analysis.effects import Effects, effects
from ppcl.compiler.analysis.uniformity import Uniformity, analyze_kernel
from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.frontend.consteval import fold
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.conversions import wrap
from ppcl.compiler.ir.types import AddressSpace, ArrayType, PointerType, ScalarType, Type
from ppcl.compiler.ir.visit import Node, Renamer, Rewriter, map_child_stmts, walk
from ppcl.compiler.transforms.workgroup import (
    Access,
    element_address,
    escapes,
    has_barrier,
    memory_accesses,
    pointer_offsets,
    wrapped_vars,
)

__all__ = ["MAX_NODES", "MAX_TRIPS", "Unrolled", "constant_tables", "unroll_loops"]

MAX_TRIPS = 16
MAX_NODES = 1200  # IR nodes of all copies together

_LOOPS = (ir.For, ir.While, ir.DoWhile)


@dataclass(frozen=True)
class Unrolled:
    """The rewritten function and one line per decision, for ``PPCL_DEBUG=plans``."""

    function: ir.Function
    lines: tuple[str, ...] = ()
    loops: tuple[Loc, ...] = ()  # where the unrolled loops were written

    def notes(self) -> list[str]:
        return list(self.lines)


Tables = dict[str, tuple[ArrayType, ir.InitList]]


def constant_tables(module: ir.Module) -> Tables:
    """Program-scope ``__constant`` arrays of scalars (of any dimensions) whose initializer
    lists constant expressions (literals and operators on them): name -> (type, initializer)."""
    out: Tables = {}
    for top in module.decls:
        if isinstance(top, ir.GlobalVar) and top.decl.space is AddressSpace.CONSTANT:
            table = _table(top.decl)
            if table is not None:
                out[top.decl.name] = table
    return out


def private_tables(fn: ir.Function) -> Tables:
    """Private arrays of ``fn`` initialized with constants and never written afterwards, used
    only element by element (``float w[3][3] = {{1, 2, 1}, ...};``): tables too."""
    if fn.body is None:
        return {}
    out: Tables = {}
    for n in walk(fn.body):
        if isinstance(n, ir.VarDecl) and n.space is AddressSpace.PRIVATE:
            table = _table(n)
            if table is not None:
                out[n.name] = table
    if not out:
        return out
    eff = effects(fn.body, Effects())
    for name in eff.writes | eff.address_taken:
        out.pop(name, None)
    bases = {id(_chain_root(n)) for n in walk(fn.body) if isinstance(n, ir.Index)}
    for n in walk(fn.body):  # the array as a whole (passed to a function, sizeof): not a table
        if isinstance(n, ir.VarRef) and n.name in out and id(n) not in bases:
            out.pop(n.name)
    return out


def _table(decl: ir.VarDecl) -> tuple[ArrayType, ir.InitList] | None:
    t, init = decl.type, decl.init
    if not isinstance(t, ArrayType) or not isinstance(init, ir.InitList) or decl.volatile:
        return None
    return (t, init) if _constant_init(t, init) else None


def _constant_init(t: ArrayType, init: ir.InitList) -> bool:
    if t.length is not None and len(init.elems) > t.length:
        return False
    if isinstance(t.elem, ArrayType):
        elem = t.elem
        return all(isinstance(e, ir.InitList) and _constant_init(elem, e) for e in init.elems)
    return isinstance(t.elem, ScalarType) and all(_constant(e) for e in init.elems)


def _chain_root(e: ir.Index) -> ir.Expr:
    base = e.base
    while isinstance(base, ir.Index):
        base = base.base
    return base


def _constant(e: ir.Expr) -> bool:
    return all(isinstance(n, ir.IntLit | ir.FloatLit | ir.Binary | ir.Unary | ir.Cast)
               and not (isinstance(n, ir.Unary) and n.op in ("*", "&", "++", "--", "p++", "p--"))
               for n in walk(e))


@dataclass
class _Loop:
    """A counted loop's counter and the values it takes."""

    counter: ir.VarDecl
    values: list[int] = field(default_factory=list)


def _counted(s: ir.For) -> _Loop | None:
    """The counter of ``for (int c = a; c OP b; c += k)`` with constant ``a``, ``b``, ``k`` and
    the values it takes (None past ``MAX_TRIPS`` or in any other shape)."""
    if not isinstance(s.init, ir.DeclStmt) or len(s.init.decls) != 1 or s.cond is None \
            or s.step is None:
        return None
    decl = s.init.decls[0]
    if not isinstance(decl.type, ScalarType) or not decl.type.is_integer or decl.init is None:
        return None
    start = fold(decl.init)
    cond = s.cond
    if start is None or not isinstance(cond, ir.Binary) \
            or cond.op not in ("<", "<=", ">", ">=", "!=") or not _is_ref(cond.lhs, decl.name):
        return None
    bound = fold(cond.rhs)
    step = _step(s.step, decl.name)
    if bound is None or not step:
        return None
    loop = _Loop(decl)
    value = start
    compared = cond.lhs.type  # the comparison's type: an unsigned one compares -1 as its maximum
    while True:
        if value != wrap(value, decl.type):
            return None  # the counter would wrap around its type: leave that to the loop
        if not _holds(cond.op, wrap(value, compared), wrap(bound, compared)):
            return loop
        if len(loop.values) == MAX_TRIPS:
            return None
        loop.values.append(value)
        value += step


def _is_ref(e: ir.Expr, name: str) -> bool:
    while isinstance(e, ir.Cast) and e.implicit:
        e = e.operand
    return isinstance(e, ir.VarRef) and e.name == name


def _step(e: ir.Expr, name: str) -> int:
    """The constant a step expression adds to the counter ``name`` (0: not such a step)."""
    if isinstance(e, ir.Unary) and e.op in ("++", "p++", "--", "p--") \
            and _is_ref(e.operand, name):
        return 1 if "+" in e.op else -1
    if isinstance(e, ir.Assign) and e.op in ("+=", "-=") and _is_ref(e.target, name):
        k = fold(e.value)
        if k is not None:
            return k if e.op == "+=" else -k
    return 0


def _holds(op: str, a: int, b: int) -> bool:
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "!=": a != b}[op]


def _dependents(body: ir.Stmt, counter: str) -> set[str]:
    """The counter and the variables the body computes from it (to a fixed point)."""
    deps = {counter}
    changed = True
    while changed:
        changed = False
        for n in walk(body):
            if isinstance(n, ir.VarDecl) and n.init is not None and n.name not in deps \
                    and _mentions(n.init, deps):
                deps.add(n.name)
                changed = True
            elif isinstance(n, ir.Assign):
                root = _root(n.target)
                if root is not None and root not in deps and _mentions(n.value, deps):
                    deps.add(root)
                    changed = True
    return deps


def _mentions(e: Node, names: set[str]) -> bool:
    return any(isinstance(n, ir.VarRef) and n.name in names for n in walk(e))


def _root(e: ir.Expr) -> str | None:
    while isinstance(e, ir.Index | ir.Member | ir.Swizzle):
        e = e.base
    return e.name if isinstance(e, ir.VarRef) else None


class _Unroller:
    def __init__(self, module: ir.Module, fn: ir.Function):
        self.module = module
        self.fn = fn
        # every name a copy's fresh variable must not take: the function's, and the
        # program-scope ones it could shadow
        self.names = {n.name for n in walk(fn) if isinstance(n, ir.VarDecl | ir.Param)}
        self.names |= {d.decl.name for d in module.decls if isinstance(d, ir.GlobalVar)}
        self.private_arrays = {n.name for n in walk(fn.body) if isinstance(n, ir.VarDecl)
                               and isinstance(n.type, ArrayType)
                               and n.space is AddressSpace.PRIVATE}
        self.lines: list[str] = []
        self.unrolled: list[Loc] = []
        self.origin: dict[str, str] = {}  # the name of a copy's variable -> the name written

    # computed once a loop is counted: most kernels have none, and a build pays for neither
    @functools.cached_property
    def uni(self) -> Uniformity:
        return analyze_kernel(self.module, self.fn)

    @functools.cached_property
    def offsets(self) -> dict[str, ir.Expr]:
        """The function's private pointers into its arguments (``pointer_offsets``)."""
        return pointer_offsets(self.fn, frozenset(p.name for p in self.fn.params))

    @functools.cached_property
    def tables(self) -> Tables:
        """The program's constant tables the function does not shadow, and its own."""
        local = {n.name for n in walk(self.fn) if isinstance(n, ir.VarDecl | ir.Param)}
        tables = {name: value for name, value in constant_tables(self.module).items()
                  if name not in local}
        tables.update(private_tables(self.fn))
        return tables

    def stmt(self, s: ir.Stmt) -> ir.Stmt:
        """``s`` with its loops unrolled where the rules allow, inner loops first."""
        s = map_child_stmts(s, self.stmt)
        return self._loop(s) if isinstance(s, ir.For) else s

    def _loop(self, s: ir.For) -> ir.Stmt:
        where = f"for loop at {s.loc}"
        loop = _counted(s)
        if loop is None:
            return s
        name = loop.counter.name
        why = self._refusal(s, name, len(loop.values))
        if why is not None:
            self.lines.append(f"{where}: not unrolled: {why}")
            return s
        copies = []
        declared = [n.name for n in walk(s.body) if isinstance(n, ir.VarDecl)]
        for value in loop.values:
            renames = {d: self._fresh(d) for d in declared}
            body = Renamer(renames).rewrite(s.body) if renames else s.body
            body = _Fold({name: ir.IntLit(loop.counter.type, value, loc=s.loc)},
                         self.tables).rewrite(body)
            copies.append(body if isinstance(body, ir.Block) else ir.Block((body,), loc=s.loc))
        used = sorted({root.name for n in walk(s.body) if isinstance(n, ir.Index)
                       for root in (_chain_root(n),) if isinstance(root, ir.VarRef)
                       and (root.name in self.tables or root.name in self.private_arrays)})
        self.unrolled.append(s.loc)
        self.lines.append(f"{where}: unrolled {len(loop.values)} times: {name} indexes "
                          + ", ".join(used))
        return ir.Block(tuple(copies), loc=s.loc)

    def _refusal(self, s: ir.For, name: str, trips: int) -> str | None:
        if s.unroll == 1:
            return "#pragma unroll 1"
        if any(isinstance(n, _LOOPS) for n in walk(s.body)):
            return "a loop in its body"
        if has_barrier(s.body):
            return "a barrier in its body"
        if escapes(s.body):
            return "break, continue or return in its body"
        eff = effects(s.body, Effects())
        if name in eff.writes | eff.address_taken:
            return f"its body writes {name}"
        size = sum(1 for _ in walk(s.body)) * trips
        if size > MAX_NODES:
            return f"{trips} copies of its body would be {size} IR nodes (at most {MAX_NODES})"
        deps = _dependents(s.body, name)
        indexed = [n for n in walk(s.body) if isinstance(n, ir.Index) and _mentions(n.index, deps)]
        roots = [_chain_root(n) for n in indexed]
        if not any(isinstance(r, ir.VarRef) and (r.name in self.tables
                                                 or r.name in self.private_arrays)
                   for r in roots):
            return f"{name} indexes no private array or constant table"
        strided = self._strided(s.body)
        if strided is not None:
            return (f"{strided} is strided across work-items (each work-item walks its own "
                    "record: gathers once unrolled)")
        return None

    def _strided(self, body: ir.Stmt) -> str | None:
        """A buffer the body accesses at addresses neither the same for all work-items nor
        consecutive along x (``src[cell * 9 + q]``), by name; None when there is none. A
        variable that only wraps around a range reads as its initializer (``wrapped_vars``)."""
        wrapped = wrapped_vars(body, self.uni)
        for access in memory_accesses(body):
            if not isinstance(access.base.type, PointerType):
                continue  # a private or __local array
            address, base = access.address, access.base
            if wrapped:
                address = _Fold(wrapped, {}).rewrite(address)
            if self.origin:  # the copies of an inner loop: the analysis knows the names
                address = Renamer(self.origin).rewrite(address)
                base = Renamer(self.origin).rewrite(base)
            element = element_address(Access(address, base, access.store), self.uni,
                                      self.offsets)
            if element is None:
                return _show(access.base)
            shape = self.uni.expr(element)
            if not shape.is_uniform and not shape.consecutive_in(0):
                return _show(access.base)
        return None

    def _fresh(self, name: str) -> str:
        k = 1
        while f"{name}_{k}" in self.names:
            k += 1
        fresh = f"{name}_{k}"
        self.names.add(fresh)
        self.origin[fresh] = self.origin.get(name, name)
        return fresh


def _show(e: ir.Expr) -> str:
    return e.name if isinstance(e, ir.VarRef) else "a buffer"


class _Fold(Rewriter):
    """The counter as a constant, and a table's element at constant indices (any number of
    dimensions) as its value."""

    def __init__(self, values: dict[str, ir.Expr], tables: Tables):
        self.values = values
        self.tables = tables

    def rewrite_VarRef(self, e: ir.VarRef) -> ir.Expr:
        return self.values.get(e.name, e)

    def rewrite_Index(self, e: ir.Index) -> ir.Expr:
        root = _chain_root(e)
        if not (isinstance(root, ir.VarRef) and root.name in self.tables):
            return e
        indices: list[ir.Expr] = []
        node: ir.Expr = e
        while isinstance(node, ir.Index):
            indices.insert(0, node.index)
            node = node.base
        t, init = self.tables[root.name]
        value: ir.Expr | None = init
        for index in indices:
            k = fold(index)
            length = len(init.elems) if t.length is None else t.length
            if k is None or not 0 <= k < length:
                return e
            if not isinstance(value, ir.InitList):
                return e
            value = value.elems[k] if k < len(value.elems) else None  # left out: zero
            if isinstance(t.elem, ArrayType):
                t = t.elem
                init = value if isinstance(value, ir.InitList) else ir.InitList(t, ())
                value = init
        if isinstance(value, ir.InitList):
            return e  # a row of a table, not an element
        if value is None:
            return _zero(e.type, e.loc)
        return value if value.type == e.type else ir.Cast(e.type, value, loc=e.loc)


def _zero(t: Type, loc: Loc) -> ir.Expr:
    if isinstance(t, ScalarType) and t.is_integer:
        return ir.IntLit(t, 0, loc=loc)
    return ir.FloatLit(t, 0.0, loc=loc)


class _DropDecls(Rewriter):
    """The declarations of ``names`` left out."""

    def __init__(self, names: set[str]):
        self.names = names

    def rewrite_Block(self, b: ir.Block) -> ir.Block:
        stmts: list[ir.Stmt] = []
        for s in b.stmts:
            if isinstance(s, ir.DeclStmt) and any(d.name in self.names for d in s.decls):
                decls = tuple(d for d in s.decls if d.name not in self.names)
                if decls:
                    stmts.append(dataclasses.replace(s, decls=decls))
                continue
            stmts.append(s)
        return b if len(stmts) == len(b.stmts) and all(
            x is y for x, y in zip(stmts, b.stmts)) else dataclasses.replace(b, stmts=tuple(stmts))


class _Scalars(Rewriter):
    """Private arrays used only element by element at constant indices, as scalars."""

    def __init__(self, arrays: dict[str, list[str]]):
        self.arrays = arrays

    def rewrite_Index(self, e: ir.Index) -> ir.Expr:
        if isinstance(e.base, ir.VarRef) and e.base.name in self.arrays:
            k = fold(e.index)
            assert k is not None
            return ir.VarRef(e.type, self.arrays[e.base.name][k], loc=e.loc)
        return e

    def rewrite_DeclStmt(self, s: ir.DeclStmt) -> ir.Stmt:
        decls: list[ir.VarDecl] = []
        for d in s.decls:
            names = self.arrays.get(d.name)
            if names is None:
                decls.append(d)
                continue
            assert isinstance(d.type, ArrayType)
            inits: list[ir.Expr | None] = [None] * len(names)
            if isinstance(d.init, ir.InitList):
                for k, v in enumerate(d.init.elems):
                    inits[k] = v
                inits = [_zero(d.type.elem, d.loc) if v is None else v for v in inits]
            decls += [ir.VarDecl(n, d.type.elem, d.space, d.const, d.volatile, init, loc=d.loc)
                      for n, init in zip(names, inits, strict=True)]
        return dataclasses.replace(s, decls=tuple(decls))


def _scalar_arrays(fn: ir.Function, names: set[str]) -> dict[str, list[str]]:
    """The private arrays every use of which is an element at a constant index within its
    length: name -> the names of its element scalars."""
    candidates: dict[str, ir.VarDecl] = {}
    for n in walk(fn.body):
        if isinstance(n, ir.VarDecl) and isinstance(n.type, ArrayType) \
                and n.space is AddressSpace.PRIVATE and isinstance(n.type.elem, ScalarType) \
                and n.type.length is not None and n.type.length <= MAX_TRIPS \
                and not n.volatile and (n.init is None or isinstance(n.init, ir.InitList)):
            candidates[n.name] = n
    if not candidates:
        return {}
    elements: set[int] = set()
    for n in walk(fn.body):
        if isinstance(n, ir.Index) and isinstance(n.base, ir.VarRef) \
                and n.base.name in candidates:
            k = fold(n.index)
            length = candidates[n.base.name].type.length  # type: ignore[attr-defined]
            if k is None or not 0 <= k < length:
                candidates.pop(n.base.name)
                if not candidates:
                    return {}
            elements.add(id(n.base))
    for n in walk(fn.body):  # any other use: the array as a whole (an address, a copy)
        if isinstance(n, ir.VarRef) and n.name in candidates and id(n) not in elements:
            candidates.pop(n.name)
    out: dict[str, list[str]] = {}
    for name, decl in candidates.items():
        length = decl.type.length  # type: ignore[attr-defined]
        scalars = []
        for k in range(length):
            fresh, j = f"{name}_{k}", 0
            while fresh in names:
                j += 1
                fresh = f"{name}_{k}_{j}"
            names.add(fresh)
            scalars.append(fresh)
        out[name] = scalars
    return out


def unroll_loops(module: ir.Module, fn: ir.Function) -> Unrolled:
    """``fn`` with its short counted loops over tables and private arrays unrolled."""
    if fn.body is None:
        return Unrolled(fn)
    unroller = _Unroller(module, fn)
    body = unroller.stmt(fn.body)
    if not unroller.unrolled:
        return Unrolled(fn, tuple(unroller.lines))
    assert isinstance(body, ir.Block)
    fn = dataclasses.replace(fn, body=body)
    lines = list(unroller.lines)
    read = {n.name for n in walk(body) if isinstance(n, ir.VarRef)}
    folded = set(private_tables(fn)) - read  # every element became its value
    if folded:
        fn = _DropDecls(folded).rewrite(fn)
        lines += [f"private table {name}: every element read became its value"
                  for name in sorted(folded)]
    arrays = _scalar_arrays(fn, unroller.names)
    if arrays:
        fn = _Scalars(arrays).rewrite(fn)
        lines += [f"private array {name} as {len(s)} scalars" for name, s in arrays.items()]
    return Unrolled(fn, tuple(lines), tuple(unroller.unrolled))
