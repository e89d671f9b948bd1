"""IR-level fusion and specialization of recorded kernels.

A *part* is one original kernel with the arguments of one launch. :func:`fusable` says whether
a kernel can be a part at all (no barrier, no ``__local`` memory, no ``return``, nothing but
plain ``p[e]`` accesses to the buffers fusion forwards). :func:`canonical_index` puts an index
expression in a form comparable across kernels: private variables defined once are replaced by
their definition, integer scalar arguments by their values; what remains must be built from
work-item functions, literals and arithmetic.

:func:`fused_kernel` inlines the bodies of the parts, in order, into one new kernel: each part's
variables and parameters renamed apart, the value a part stores to a forwarded buffer kept in a
private variable that the later parts read instead of loading it again, the store itself kept
only when the buffer is read after the fused kernel or escapes. Scalar arguments constant across
replays become literals (specialization). The result is an ordinary IR function, printed as
OpenCL C and built through the normal pipeline by the caller.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ppcl.compiler.analysis.buffers import ParamAccess, buffer_accesses, single_definitions
from ppcl.compiler.analysis.callgraph import WORKITEM_FUNCTIONS, reaching, user_calls
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import AddressSpace, PointerType, ScalarType
from ppcl.compiler.ir.visit import Node, Renamer, Rewriter, children, find_all, walk

WORK_ITEM_FUNCTIONS = frozenset(WORKITEM_FUNCTIONS)


INTEGER_FUNCTIONS = frozenset({"min", "max", "clamp"})  # evaluated by index_values too


@dataclass(frozen=True)
class KernelFacts:
    """What fusion needs to know of one original kernel, computed once per kernel."""

    function: ir.Function
    accesses: dict[str, ParamAccess]
    definitions: dict[str, ir.Expr]
    refusal: str  # why the kernel cannot be fused ("" when it can)
    prints: bool = False  # calls printf, itself or through a helper: never a dead task


# calls a fused kernel cannot hold: they order or show the work-items of one original launch
_UNFUSABLE_CALLS = ("barrier", "mem_fence", "read_mem_fence", "write_mem_fence", "printf")


def kernel_facts(function: ir.Function, module: ir.Module | None = None) -> KernelFacts:
    """The facts of kernel ``function``; ``module`` (its program's) lets the helpers it calls
    count: a helper that reaches a barrier or printf refuses fusion as the call itself does."""
    helpers: dict[str, frozenset[str]] = {name: frozenset() for name in _UNFUSABLE_CALLS}
    if module is not None:
        helpers = {name: reaching(module, _calls_named(name)) for name in _UNFUSABLE_CALLS}
    refusal = _refusal(function) or _helper_refusal(function, helpers)
    prints = any(isinstance(n, ir.Call) and n.name == "printf" for n in walk(function.body)) \
        or bool(user_calls(function.body) & helpers["printf"])
    return KernelFacts(function, buffer_accesses(function), single_definitions(function),
                       refusal, prints)


def _calls_named(name: str) -> Callable[[ir.Call], bool]:
    return lambda call: call.name == name


def _helper_refusal(fn: ir.Function, helpers: dict[str, frozenset[str]]) -> str:
    called = user_calls(fn.body)
    for name, reached in helpers.items():
        for helper in sorted(called & reached):
            return f"calls {helper}, which calls {name}"
    return ""


def _refusal(fn: ir.Function) -> str:
    if fn.body is None:
        return "has no body"
    for p in fn.params:
        if isinstance(p.type, PointerType) and p.type.space == AddressSpace.LOCAL:
            return f"takes __local memory ('{p.name}')"
        if not isinstance(p.type, PointerType | ScalarType):
            return f"takes a parameter of type {p.type} ('{p.name}')"
    for node in walk(fn.body):
        if isinstance(node, ir.Return):
            return "returns early"
        if isinstance(node, ir.Call) and node.name in _UNFUSABLE_CALLS:
            return f"calls {node.name}"
        if isinstance(node, ir.VarDecl) and node.space == AddressSpace.LOCAL:
            return f"declares __local '{node.name}'"
    return ""


NUMPY_SCALARS = {name: np.dtype(t) for name, t in (
    ("bool", np.bool_), ("char", np.int8), ("uchar", np.uint8), ("short", np.int16),
    ("ushort", np.uint16), ("int", np.int32), ("uint", np.uint32), ("long", np.int64),
    ("ulong", np.uint64), ("float", np.float32), ("double", np.float64))}
"""The numpy dtype of a scalar parameter or cast type, by its OpenCL C name."""


def scalar_value(param: ir.Param, data: bytes) -> int | float | None:
    """The value of a scalar argument's bytes, for a scalar parameter type."""
    if not isinstance(param.type, ScalarType) or param.type.name in ("half", "bool"):
        return None
    dtype = NUMPY_SCALARS[param.type.name]
    value = np.frombuffer(data, dtype=dtype)[0]
    return float(value) if dtype.kind == "f" else int(value)


def literal(param: ir.Param, value: int | float) -> ir.Expr:
    """The literal a specialized scalar parameter is replaced with."""
    if isinstance(value, float):
        return ir.FloatLit(param.type, value)
    return ir.IntLit(param.type, value)


class _Substitute(Rewriter):
    """Variables replaced by expressions (definitions, argument values)."""

    def __init__(self, values: dict[str, ir.Expr]) -> None:
        self.values = values

    def rewrite_VarRef(self, e: ir.VarRef) -> ir.Expr:
        value = self.values.get(e.name)
        return e if value is None else value


def canonical_index(e: ir.Expr, facts: KernelFacts, values: dict[str, int | float]) -> ir.Expr | None:
    """``e`` with single definitions and integer arguments substituted, or None when it
    depends on anything else (a loop variable, memory, a float)."""
    for _ in range(16):  # definitions of definitions, up to a depth that real kernels keep
        names = {n.name for n in walk(e) if isinstance(n, ir.VarRef)}
        if not names:
            break
        subst: dict[str, ir.Expr] = {}
        for name in names:
            if name in facts.definitions:
                subst[name] = facts.definitions[name]
            elif isinstance(values.get(name), int):
                param = next(p for p in facts.function.params if p.name == name)
                subst[name] = ir.IntLit(param.type, int(values[name]))
            else:
                return None
        e = _Substitute(subst).rewrite(e)
    else:
        return None
    for node in walk(e):
        if isinstance(node, ir.Call) and node.name not in WORK_ITEM_FUNCTIONS \
                and node.name not in INTEGER_FUNCTIONS:
            return None
        if isinstance(node, ir.Index | ir.Assign | ir.VarRef | ir.FloatLit):
            return None
        if isinstance(node, ir.Unary) and node.op in ("++", "--", "p++", "p--", "*", "&"):
            return None
    return _Plain().rewrite(e)


class _Plain(Rewriter):
    """Literal spellings dropped, so ``0x10`` and ``16`` compare equal."""

    def rewrite_IntLit(self, e: ir.IntLit) -> ir.Expr:
        return e if e.text is None else dataclasses.replace(e, text=None)


@dataclass(frozen=True)
class Part:
    """One kernel inside a fused kernel: its facts and, per parameter, the bound buffer
    number (None for scalars and unbound pointers)."""

    facts: KernelFacts
    buffers: tuple[int | None, ...]
    specialized: dict[str, int | float]  # scalar parameters replaced by these values


@dataclass(frozen=True)
class Forward:
    """A buffer whose element a part stores and later parts read: kept in a private variable;
    the store stays when ``keep_store``."""

    buffer: int
    keep_store: bool


def _stores_to(stmt: Node, name: str) -> bool:
    return isinstance(stmt, ir.Assign) and isinstance(stmt.target, ir.Index) \
        and isinstance(stmt.target.base, ir.VarRef) and stmt.target.base.name == name


def top_level_store(fn: ir.Function, name: str) -> bool:
    """Whether the kernel stores to ``name`` exactly once, as a statement of its outermost
    block (so every work-item stores, and later parts can read the stored value)."""
    if fn.body is None:
        return False
    total = sum(1 for n in walk(fn.body) if _stores_to(n, name))
    top = sum(1 for s in fn.body.stmts if isinstance(s, ir.ExprStmt) and _stores_to(s.expr, name))
    return total == top == 1


def pointwise_value(facts: KernelFacts, name: str) -> ir.Expr | None:
    """The value a kernel stores to ``name``, as an expression of its parameters only, when its
    body is declarations of values defined once followed by that one store (a point-wise
    producer, such as a colour conversion): then the value at another element is this
    expression with every load's index replaced by that element's. None otherwise; the caller
    checks that each load reads the element the kernel stores."""
    fn = facts.function
    if fn.body is None or not fn.body.stmts:
        return None
    *decls, last = fn.body.stmts
    if not (isinstance(last, ir.ExprStmt) and _stores_to(last.expr, name)):
        return None
    for decl in decls:
        if not isinstance(decl, ir.DeclStmt) \
                or any(v.name not in facts.definitions for v in decl.decls):
            return None
    assert isinstance(last.expr, ir.Assign)
    value = last.expr.value
    for _ in range(16):
        names = {n.name for n in walk(value) if isinstance(n, ir.VarRef)
                 and n.name in facts.definitions}
        if not names:
            return value
        value = _Substitute({n: facts.definitions[n] for n in names}).rewrite(value)
    return None


def loads_of(value: ir.Expr) -> list[ir.Index]:
    """The loads of a point-wise value (outermost indexings only)."""
    loads: list[ir.Index] = []

    def visit(node: Node) -> None:
        if isinstance(node, ir.Index):
            loads.append(node)
            return
        for child in children(node):
            visit(child)

    visit(value)
    return loads


class _AtElement(Rewriter):
    """Every load of a point-wise value made to read element ``index``."""

    def __init__(self, index: ir.Expr) -> None:
        self.index = index

    def rewrite(self, node: Node) -> object:
        if isinstance(node, ir.Index):
            return dataclasses.replace(node, index=self.index)
        return super().rewrite(node)


class _Recompute(Rewriter):
    """In a consumer part: a load of a recomputed buffer becomes the producer's value there."""

    def __init__(self, pointer_buffers: dict[str, int], values: dict[int, ir.Expr]) -> None:
        self.pointer_buffers = pointer_buffers
        self.values = values

    def rewrite_Index(self, e: ir.Index) -> ir.Expr:
        if isinstance(e.base, ir.VarRef):
            number = self.pointer_buffers.get(e.base.name)
            if number is not None and number in self.values:
                value = _AtElement(e.index).rewrite(self.values[number])
                assert isinstance(value, ir.Expr)
                return value
        return e


def part_names(fn: ir.Function) -> set[str]:
    names = {p.name for p in fn.params}
    if fn.body is not None:
        names |= {d.name for d in find_all(fn.body, ir.VarDecl)}
    return names


class _Forwarder(Rewriter):
    """In one part: reads of forwarded buffers become the private variable; stores to them set
    it (and store too, when kept)."""

    def __init__(self, pointer_buffers: dict[str, int], forwards: dict[int, Forward],
                 variables: dict[int, str], stores: bool) -> None:
        self.pointer_buffers = pointer_buffers
        self.forwards = forwards
        self.variables = variables
        self.stores = stores  # this part is the one that stores the forwarded buffers

    def _forwarded(self, e: ir.Expr) -> int | None:
        if isinstance(e, ir.Index) and isinstance(e.base, ir.VarRef):
            number = self.pointer_buffers.get(e.base.name)
            if number is not None and number in self.forwards:
                return number
        return None

    def rewrite(self, node: Node) -> object:
        if isinstance(node, ir.ExprStmt) and isinstance(node.expr, ir.Assign) and self.stores:
            number = self._forwarded(node.expr.target)
            if number is not None:
                value = super().rewrite(node.expr.value)
                var = ir.VarRef(node.expr.target.type, self.variables[number])
                stmts: list[ir.Stmt] = [ir.ExprStmt(ir.Assign(var.type, "=", var, value))]
                if self.forwards[number].keep_store:
                    target = super().rewrite(node.expr.target)
                    stmts.append(ir.ExprStmt(ir.Assign(var.type, "=", target, var)))
                return tuple(stmts)
        if isinstance(node, ir.Index) and not self.stores:
            number = self._forwarded(node)
            if number is not None:
                return ir.VarRef(node.type, self.variables[number])
        return super().rewrite(node)


def fused_kernel(name: str, parts: Sequence[Part], forwards: dict[int, Forward],
                 stores: dict[int, int], recomputed: dict[int, bool] | None = None,
                 ) -> tuple[ir.Function, list[tuple[int, int]]]:
    """The fused kernel and, per its parameter, (part, argument index) that binds it.
    ``stores[b]`` is the part that stores forwarded or recomputed buffer ``b``; a recomputed
    buffer's later loads evaluate its producer's point-wise value at the element loaded, and the
    producer's own body runs only when ``recomputed[b]`` (its store is still needed)."""
    params: list[ir.Param] = []
    bindings: list[tuple[int, int]] = []
    body: list[ir.Stmt] = []
    variables = {b: f"__fwd{b}" for b in forwards}
    declared: set[int] = set()
    recomputed = recomputed or {}
    point_values: dict[int, ir.Expr] = {}
    for k, part in enumerate(parts):
        fn = part.facts.function
        rename = {n: f"p{k}_{n}" for n in part_names(fn)}
        values = {rename[p]: literal(next(q for q in fn.params if q.name == p), v)
                  for p, v in part.specialized.items()}
        renamed = Renamer(rename).rewrite(fn.body)
        renamed = _Substitute(values).rewrite(renamed)
        pointers = {rename[p.name]: b for p, b in zip(fn.params, part.buffers) if b is not None}
        if point_values:
            renamed = _Recompute(pointers, point_values).rewrite(renamed)
        skip_body = False
        for b, keep in recomputed.items():
            if stores[b] == k:
                param = next(p for p, pb in zip(fn.params, part.buffers) if pb == b)
                value = pointwise_value(part.facts, param.name)
                assert value is not None
                value = _Substitute(values).rewrite(Renamer(rename).rewrite(value))
                point_values[b] = value
                skip_body = not keep
        pointer_buffers = {rename[p.name]: b for p, b in zip(fn.params, part.buffers)
                           if b is not None}
        for b in forwards:
            if stores[b] == k and b not in declared:
                pointee = next(p.type.pointee for p, pb in zip(fn.params, part.buffers)
                               if pb == b and isinstance(p.type, PointerType))
                body.append(ir.DeclStmt((ir.VarDecl(variables[b], pointee),)))
                declared.add(b)
        mine = {b: f for b, f in forwards.items() if stores[b] == k}
        theirs = {b: f for b, f in forwards.items() if stores[b] < k}
        renamed = _Forwarder(pointer_buffers, mine, variables, stores=True).rewrite(renamed)
        renamed = _Forwarder(pointer_buffers, theirs, variables, stores=False).rewrite(renamed)
        assert isinstance(renamed, ir.Stmt)
        if not skip_body:
            body.append(renamed)
        for index, p in enumerate(fn.params):
            if p.name in part.specialized:
                continue
            ptype = p.type
            if isinstance(ptype, PointerType) and ptype.restrict:
                ptype = dataclasses.replace(ptype, restrict=False)  # buffers may repeat
            params.append(ir.Param(rename[p.name], ptype, p.const, p.volatile))
            bindings.append((k, index))
    function = ir.Function(name, parts[0].facts.function.ret, tuple(params), ir.Block(tuple(body)),
                           is_kernel=True)
    return function, bindings


def element_type(fn: ir.Function, param_name: str) -> object:
    param = next(p for p in fn.params if p.name == param_name)
    return param.type.pointee if isinstance(param.type, PointerType) else None


_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "<<": np.left_shift,
           ">>": np.right_shift, "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor,
           "<": np.less, ">": np.greater, "<=": np.less_equal, ">=": np.greater_equal,
           "==": np.equal, "!=": np.not_equal}


def index_values(e: ir.Expr, global_size: Sequence[int], offset: Sequence[int]) -> np.ndarray | None:
    """The value of a canonical index for every work-item of an NDRange (int64, in work-item
    order), so indices written differently compare by what they address; None for what this
    evaluator does not know (a division by a work-item value, min/max of ids)."""
    grids = list(np.meshgrid(*(np.arange(o, o + g, dtype=np.int64) for g, o in
                          zip(global_size, offset)), indexing="ij"))
    try:
        with np.errstate(all="ignore"):
            value = _evaluate(e, grids, global_size)
    except (KeyError, ValueError, ZeroDivisionError):
        return None
    return np.broadcast_to(np.asarray(value, dtype=np.int64), grids[0].shape).reshape(-1)


def _evaluate(e: ir.Expr, grids: list[np.ndarray], global_size: Sequence[int]) -> np.ndarray:
    if isinstance(e, ir.IntLit):
        return np.int64(e.value)  # type: ignore[return-value]
    if isinstance(e, ir.Cast):
        value = _evaluate(e.operand, grids, global_size)
        target = NUMPY_SCALARS.get(e.type.name) if isinstance(e.type, ScalarType) else None
        if target is None or target.kind == "f":
            raise ValueError("cast to a non-integer type")
        return np.asarray(value).astype(target).astype(np.int64)
    if isinstance(e, ir.Call) and e.name in INTEGER_FUNCTIONS:
        args = [_evaluate(a, grids, global_size) for a in e.args]
        if e.name == "min":
            return np.minimum(args[0], args[1])
        if e.name == "max":
            return np.maximum(args[0], args[1])
        return np.minimum(np.maximum(args[0], args[1]), args[2])
    if isinstance(e, ir.Call):
        dim = int(_evaluate(e.args[0], grids, global_size)) if len(e.args) == 1 else -1
        if not 0 <= dim < 3:
            raise ValueError("work-item function of an unknown dimension")
        if e.name == "get_global_id":
            return grids[dim] if dim < len(grids) else np.int64(0)  # type: ignore[return-value]
        if e.name == "get_global_size":
            return np.int64(global_size[dim] if dim < len(global_size) else 1)  # type: ignore[return-value]
        raise ValueError(f"{e.name} is not evaluated")
    if isinstance(e, ir.Binary):
        lhs = _evaluate(e.lhs, grids, global_size)
        rhs = _evaluate(e.rhs, grids, global_size)
        if e.op in _BINARY:
            return _BINARY[e.op](lhs, rhs).astype(np.int64)
        if e.op in ("/", "%") and np.all(rhs != 0):
            quotient = np.trunc(np.divide(lhs, rhs)).astype(np.int64)
            return quotient if e.op == "/" else lhs - quotient * rhs
        raise ValueError(f"operator {e.op}")
    if isinstance(e, ir.Unary) and e.op in ("-", "+", "~"):
        value = _evaluate(e.operand, grids, global_size)
        return {"-": np.negative, "+": np.positive, "~": np.invert}[e.op](value)
    if isinstance(e, ir.Conditional):
        return np.where(_evaluate(e.cond, grids, global_size) != 0,
                        _evaluate(e.then, grids, global_size),
                        _evaluate(e.otherwise, grids, global_size))
    raise ValueError(f"{type(e).__name__} is not evaluated")
