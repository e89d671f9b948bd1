"""Code generation: an OpenCL-level pattern expression as ppcl's typed IR.

``lower`` cuts the expression into kernels where a parallel map's result feeds another
computation at the top level (Lift's multi-kernel reductions; the value in between is a global
temporary), then builds one IR kernel per part. Inside a kernel every data-layout pattern is a
view (``views``), so nothing is copied for a split, join, transpose, slide or pad; a
computation whose result another one reads is kept in private memory, or in local memory under
``to_local`` (followed by a barrier). Maps become loops over the thread hierarchy (``global``:
one work-item per element, ``workgroup``: one group per element, ``local``: a loop strided by
the group's size, ``seq``: a loop), ``reduce_seq`` a loop over an accumulator, user functions a
call of their compiled C body or their traced operations as private variables. The result is an
``ir.Module`` that the runtime builds like a program from source.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import (
    INT,
    UINT,
    ULONG,
    VOID,
    AddressSpace,
    ArrayType,
    PointerType,
    ScalarType,
    Type,
    VectorType,
)
from ppcl.compiler.ir.visit import Rewriter
from ppcl.patterns import expr as px
from ppcl.patterns import views as vw
from ppcl.patterns.sizes import Size
from ppcl.patterns.types import ArrayT, DataType, PatternTypeError, TupleT, shape_of
from ppcl.patterns.userfun import Leaf, UserFun

MAX_ELEMENTS = 2**31 - 1
PREFIX = "pp_"  # generated names; program inputs may not start with it


@dataclass(frozen=True)
class BufferSpec:
    """One global buffer: ``count`` elements of the scalar ``dtype``."""

    name: str
    scalar: ScalarType
    count: int
    role: str  # "input", "temp" or "output"


@dataclass(frozen=True)
class KernelPlan:
    name: str
    args: tuple[str, ...]  # buffer names and scalar input names, in parameter order
    global_size: tuple[int, ...]
    local_size: tuple[int, ...]


@dataclass(frozen=True)
class Lowered:
    module: ir.Module
    kernels: tuple[KernelPlan, ...]
    buffers: tuple[BufferSpec, ...]
    scalars: tuple[tuple[str, ScalarType], ...]  # scalar inputs
    output_type: DataType


def leaf_types(t: DataType) -> tuple[Leaf, ...]:
    """The scalar or vector types stored for a value of type ``t`` (one buffer each)."""
    while isinstance(t, ArrayT):
        t = t.elem
    if isinstance(t, TupleT):
        return tuple(leaf for e in t.elems for leaf in leaf_types(e))
    return (t,)


def _scalar(t: Leaf) -> ScalarType:
    return t.elem if isinstance(t, VectorType) else t


def _leaf_names(name: str, t: DataType) -> tuple[str, ...]:
    leaves = leaf_types(t)
    return (name,) if len(leaves) == 1 else tuple(f"{name}_{k}" for k in range(len(leaves)))


def _lengths(t: DataType, sizes: dict[str, int]) -> tuple[int, ...]:
    lengths = tuple(s.evaluate(sizes) for s in shape_of(t))
    if math.prod(lengths) * max((leaf.size for leaf in leaf_types(t)), default=1) \
            > MAX_ELEMENTS:
        raise PatternTypeError(f"an array of {t} with {sizes} passes 2**31 elements")
    return lengths


def _leaf_shape(t: DataType, sizes: dict[str, int]) -> tuple[tuple[int, ...], Leaf]:
    """Shape in elements of the stored leaf (a vector counts as one)."""
    return _lengths(t, sizes), leaf_types(t)[0]


# ---------------------------------------------------------------------- stages

_LAYOUT = (px.Split, px.Join, px.Zip, px.Get, px.Transpose, px.Slide, px.Pad, px.Reorder,
           px.AsVector, px.AsScalar)
_OUTPUT_LAYOUT = (px.Split, px.Join, px.Transpose, px.AsScalar)


def stages(e: px.Expr) -> list[tuple[px.Param | None, px.Expr]]:
    """The kernels of ``e`` in order: each writes a temporary (``Param``) the later ones read,
    the last (``None``) writes the result."""
    found: list[tuple[px.Param | None, px.Expr]] = []

    def extract(x: px.Expr) -> px.Expr:
        if isinstance(x, px.Apply) and isinstance(x.fun, _OUTPUT_LAYOUT):
            return px.Apply(x.fun, (extract(x.args[0]),))
        if isinstance(x, px.Apply):
            return px.Apply(x.fun, tuple(hoist(a) for a in x.args))
        return x

    def hoist(a: px.Expr) -> px.Expr:
        if not isinstance(a, px.Apply) or not _parallel(a):
            return a
        if isinstance(a.fun, _LAYOUT):
            return px.Apply(a.fun, tuple(hoist(b) for b in a.args))
        inner = extract(a)
        if not _parallel(inner):  # what is left after hoisting runs in the reading kernel
            return inner
        temp = px.Param(px.fresh(PREFIX + "tmp"), a.type)
        found.append((temp, inner))
        return temp

    final = extract(e)
    return [*found, (None, final)]


def _parallel(e: px.Expr | px.Fun) -> bool:
    """Whether a map over work-items or groups is in ``e`` (then it needs a kernel)."""
    if isinstance(e, px.Map) and e.level in ("global", "workgroup"):
        return True
    if isinstance(e, px.Apply):
        return _parallel(e.fun) or any(_parallel(a) for a in e.args)
    if isinstance(e, px.Fun):
        return any(_parallel(v) for v in vars(e).values() if isinstance(v, px.Fun | px.Expr))
    return False


# ---------------------------------------------------------------------- kernels


class _Subst(Rewriter):
    def __init__(self, mapping: dict[str, ir.Expr]):
        self.mapping = mapping

    def rewrite_VarRef(self, e: ir.VarRef) -> ir.Expr:
        return self.mapping.get(e.name, e)


def _work_item(name: str, dim: int) -> ir.Expr:
    call = ir.Call(ULONG, name, (ir.IntLit(UINT, dim),), builtin=f"{name}__uint")
    return ir.Cast(INT, call)


def _literal(value: float | int, t: Leaf) -> ir.Expr:
    s = _scalar(t)
    lit: ir.Expr = ir.FloatLit(s, float(value)) if s.is_float else ir.IntLit(s, int(value))
    return lit if t == s else ir.Cast(t, lit, implicit=True)


def _convert(value: ir.Expr, to: Type) -> ir.Expr:
    return value if value.type == to else ir.Cast(to, value, implicit=True)


@dataclass
class _Kernel:
    """The state of one kernel under construction."""

    sizes: dict[str, int]
    functions: dict[str, ir.Function]
    local_size: int | None
    env: dict[str, vw.View] = field(default_factory=dict)
    stmts: list[ir.Stmt] = field(default_factory=list)
    local_decls: list[ir.Stmt] = field(default_factory=list)
    global_size: int | None = None
    group_local: int | None = None
    names: Iterator[int] = field(default_factory=itertools.count)
    traces: dict[tuple[UserFun, tuple[Leaf, ...]], object] = field(default_factory=dict)

    def name(self, hint: str = "v") -> str:
        return f"{PREFIX}{hint}{next(self.names)}"

    @contextmanager
    def block(self) -> Iterator[list[ir.Stmt]]:
        saved, self.stmts = self.stmts, []
        try:
            yield self.stmts
        finally:
            self.stmts = saved

    def declare(self, t: Type, init: ir.Expr | None = None, hint: str = "v",
                space: AddressSpace = AddressSpace.PRIVATE) -> ir.VarRef:
        name = self.name(hint)
        decl = ir.DeclStmt((ir.VarDecl(name, t, space, init=init),))
        (self.local_decls if space == AddressSpace.LOCAL else self.stmts).append(decl)
        return ir.VarRef(t, name)

    def assign(self, target: vw.Access, value: vw.Access) -> None:
        if isinstance(target, tuple):
            assert isinstance(value, tuple) and len(value) == len(target)
            for t, v in zip(target, value, strict=True):
                self.assign(t, v)
            return
        assert not isinstance(value, tuple)
        self.stmts.append(ir.ExprStmt(ir.Assign(target.type, "=", target,
                                                _convert(value, target.type))))

    # ------------------------------------------------------------------ views

    def length(self, t: DataType) -> int:
        if not isinstance(t, ArrayT):
            raise PatternTypeError(f"{t} is not an array")
        return t.length.evaluate(self.sizes)

    def view(self, e: px.Expr) -> vw.View:
        if isinstance(e, px.Param):
            if e.name not in self.env:
                raise PatternTypeError(f"parameter '{e.name}' is not bound in this kernel")
            return self.env[e.name]
        if isinstance(e, px.Value):
            if isinstance(e.type, ArrayT):
                raise PatternTypeError(f"an array constant {px.show(e)} is only a reduction's "
                                       "initial value")
            return vw.Scalar(_literal(e.value, e.type))
        assert isinstance(e, px.Apply)
        f, args = e.fun, e.args
        if isinstance(f, px.Zip):
            return vw.Zip(tuple(self.view(a) for a in args))
        if isinstance(f, _LAYOUT):
            return self._layout_view(f, args[0])
        if isinstance(f, px.Lambda):
            self._bind(f.params, args)
            return self.view(f.body)
        if isinstance(f, px.User):
            return vw.Scalar(self.call_user(f.fun, [self.value(a) for a in args]))
        return self.materialize(e)

    def _layout_view(self, f: px.Fun, arg: px.Expr) -> vw.View:
        inner = self.view(arg)
        t = arg.type
        match f:
            case px.Split(n):
                return vw.Split(n.evaluate(self.sizes), inner)
            case px.Join():
                assert isinstance(t, ArrayT)
                return vw.Join(self.length(t.elem), inner)
            case px.Get(index):
                return vw.Get(index, inner)
            case px.Transpose():
                return vw.Transpose(inner)
            case px.Slide(_, step):
                return vw.Slide(step, inner)
            case px.Pad(left, _):
                return vw.Pad(left, self.length(t), inner)
            case px.Reorder(stride):
                return vw.Reorder(stride, self.length(t), inner)
            case px.AsVector(width):
                return vw.AsVector(width, inner)
            case px.AsScalar():
                return vw.AsScalar(px.vector_width(_elem(t)), inner)
        raise PatternTypeError(f"no view for {px.show(f)}")

    def value(self, e: px.Expr) -> vw.Access:
        return self.view(e).access(())

    def _bind(self, params: tuple[px.Param, ...], args: Sequence[px.Expr]) -> None:
        for p, a in zip(params, args, strict=True):
            self.env[p.name] = self.view(a)

    def materialize(self, e: px.Expr, space: str = "private") -> vw.View:
        """A computed value kept in memory of its own, for the computation that reads it."""
        if isinstance(e, px.Apply) and isinstance(e.fun, px.ToMemory):
            return self.materialize(px.Apply(e.fun.f, e.args), e.fun.space)
        if isinstance(e, px.Apply) and isinstance(e.fun, px.Lambda):  # where its body says
            self._bind(e.fun.params, e.args)
            return self.materialize(e.fun.body, space)
        t = e.type
        if not isinstance(t, ArrayT):
            held = self._leaf_vars(t)
            self.emit(e, held)
            return held
        if space == "global":
            raise PatternTypeError("to_global inside a kernel: a global temporary is only "
                                   "made between kernels (at the top level)")
        shape, _ = _leaf_shape(t, self.sizes)
        address = AddressSpace.LOCAL if space == "local" else AddressSpace.PRIVATE
        parts = []
        for leaf in leaf_types(t):
            var = self.declare(ArrayType(leaf, math.prod(shape)), hint="m", space=address)
            parts.append(vw.Memory(var, shape, leaf))
        view: vw.View = parts[0] if len(parts) == 1 else vw.Tuple(tuple(parts))
        self.emit(e, view)
        if address == AddressSpace.LOCAL:
            fence = ir.IntLit(UINT, 1, "CLK_LOCAL_MEM_FENCE")
            self.stmts.append(ir.ExprStmt(ir.Call(VOID, "barrier", (fence,),
                                                  builtin="barrier__uint")))
        return view

    def _leaf_vars(self, t: DataType) -> vw.View:
        if isinstance(t, TupleT):
            return vw.Tuple(tuple(self._leaf_vars(e) for e in t.elems))
        assert isinstance(t, ScalarType | VectorType)
        return vw.Scalar(self.declare(t))

    # ------------------------------------------------------------------ computations

    def emit(self, e: px.Expr, out: vw.View) -> None:
        """Statements that compute ``e`` into ``out``."""
        if not isinstance(e, px.Apply):
            self._copy(e, out)
            return
        f, args = e.fun, e.args
        match f:
            case px.Join():
                self.emit(args[0], vw.Split(self.length(_elem(args[0].type)), out))
            case px.Split(n):
                self.emit(args[0], vw.Join(n.evaluate(self.sizes), out))
            case px.Transpose():
                self.emit(args[0], vw.Transpose(out))
            case px.AsScalar():
                self.emit(args[0], vw.AsVector(px.vector_width(_elem(args[0].type)), out))
            case px.ToMemory(g):
                self.emit(px.Apply(g, args), out)
            case px.Lambda(params, body):
                self._bind(params, args)
                self.emit(body, out)
            case px.User(u):
                self.assign(out.access(()), self.call_user(u, [self.value(a) for a in args]))
            case px.Map():
                self._map(f, args[0], out)
            case px.Reduce():
                self._reduce(f, args[0], out)
            case px.Iterate(n, g):
                value: px.Expr = args[0]
                for _ in range(n - 1):
                    step = px.instantiate(g, (value.type,))
                    held = px.Param(px.fresh(PREFIX + "it"), step.out_type((value.type,)))
                    self.env[held.name] = self.materialize(px.Apply(step, (value,)))
                    value = held
                self.emit(px.Apply(px.instantiate(g, (value.type,)), (value,)), out)
            case _:
                self._copy(e, out)

    def _copy(self, e: px.Expr, out: vw.View) -> None:
        """A value that is only a view, written out element by element."""
        source = self.view(e)
        t = e.type
        if not isinstance(t, ArrayT):
            self.assign(out.access(()), source.access(()))
            return
        self._nest(_lengths(t, self.sizes),
                   lambda idx: self.assign(out.access(idx), source.access(idx)))

    def _nest(self, shape: tuple[int, ...],
              body: Callable[[tuple[ir.Expr, ...]], None]) -> None:
        """A loop nest over ``shape`` around the statements ``body`` makes for an index."""
        indices = tuple(ir.VarRef(INT, self.name("c")) for _ in shape)
        with self.block() as stmts:
            body(indices)
        stmt: ir.Stmt = ir.Block(tuple(stmts))
        for index, length in reversed(list(zip(indices, shape, strict=True))):
            stmt = _for(index, vw.lit(0), vw.lit(length), vw.lit(1), stmt)
        self.stmts.append(stmt)

    def _map(self, m: px.Map, arg: px.Expr, out: vw.View) -> None:
        if m.level == "hl":
            raise PatternTypeError(f"{px.show(m)} has no level: lower it with the map-level "
                                   "rule (global, workgroup, local or seq) first")
        source = self.view(arg)
        n = self.length(arg.type)
        index = ir.VarRef(INT, self.name("i"))
        element = px.Param(px.fresh(PREFIX + "e"), _elem(arg.type))
        with self.block() as body:
            self.env[element.name] = vw.Indexed(source, index)
            self.emit(px.Apply(m.f, (element,)), vw.Indexed(out, index))
        block = ir.Block(tuple(body))
        if m.level == "seq":
            self.stmts.append(_for(index, vw.lit(0), vw.lit(n), vw.lit(1), block))
        elif m.level == "local":
            self.group_local = self.group_local or min(n, self.local_size or n)
            self.stmts.append(_for(index, _work_item("get_local_id", m.dim), vw.lit(n),
                                   _work_item("get_local_size", m.dim), block))
        else:
            if self.global_size is not None:
                raise PatternTypeError(f"a second {m.name} in one kernel: nest map_local or "
                                       "map_seq inside it")
            self.global_size = n
            what = "get_global_id" if m.level == "global" else "get_group_id"
            decl = ir.VarDecl(index.name, INT, init=_work_item(what, m.dim))
            self.stmts.append(ir.DeclStmt((decl,)))
            self.stmts.append(block)

    def _reduce(self, r: px.Reduce, arg: px.Expr, out: vw.View) -> None:
        if not r.seq:
            raise PatternTypeError(f"{px.show(r)} is not sequential: lower it with the "
                                   "reduce-seq rule (after splitting it across threads)")
        source = self.view(arg)
        n = self.length(arg.type)
        acc_param = px.Param(px.fresh(PREFIX + "acc"), r.init.type)
        acc = self._accumulator(r.init)
        self.env[acc_param.name] = acc
        element = px.Param(px.fresh(PREFIX + "e"), _elem(arg.type))
        index = ir.VarRef(INT, self.name("i"))
        with self.block() as body:
            self.env[element.name] = vw.Indexed(source, index)
            self.emit(px.Apply(r.f, (acc_param, element)), acc)
        self.stmts.append(_for(index, vw.lit(0), vw.lit(n), vw.lit(1), ir.Block(tuple(body))))
        self._copy(acc_param, vw.Indexed(out, vw.lit(0)))

    def _accumulator(self, init: px.Value) -> vw.View:
        """Private memory holding a reduction's accumulator, set to its initial value (an
        array accumulator is several independent ones: Lift's interleaved reduction)."""
        t = init.type
        if not isinstance(t, ArrayT):
            return vw.Scalar(self.declare(t, _literal(init.value, t), hint="acc"))
        shape, leaf = _leaf_shape(t, self.sizes)
        var = self.declare(ArrayType(leaf, math.prod(shape)), hint="acc")
        memory = vw.Memory(var, shape, leaf)
        self._nest(shape, lambda idx: self.assign(memory.access(idx),
                                                  _literal(init.value, leaf)))
        return memory

    # ------------------------------------------------------------------ user functions

    def call_user(self, u: UserFun, values: list[vw.Access]) -> vw.Access:
        if len(values) == 1 and isinstance(values[0], tuple) and u.arity > 1:
            values = list(values[0])
        leaves = [self._held(v) for v in values]
        types = tuple(v.type for v in leaves)
        for t in types:
            if not isinstance(t, ScalarType | VectorType):
                raise PatternTypeError(f"user function '{u.name}' applied to {t}")
        if u.body is not None:
            fname = u.mangled(types)  # type: ignore[arg-type]
            function = self.functions.get(fname)
            if function is None:
                function = u.c_function(types)  # type: ignore[arg-type]
                self.functions[fname] = function
            return self.declare(function.ret, ir.Call(function.ret, fname, tuple(leaves)))
        traced = u.traced(types)  # type: ignore[arg-type]
        mapping: dict[str, ir.Expr] = {f"%arg{k}": v for k, v in enumerate(leaves)}
        for placeholder, expr in traced.bindings:
            value = _Subst(mapping).rewrite(expr)
            mapping[placeholder] = self.declare(expr.type, value)
        results = tuple(_Subst(mapping).rewrite(r) for r in traced.results)
        return results[0] if len(results) == 1 else results

    def _held(self, value: vw.Access) -> ir.Expr:
        """An argument of a user function: a variable or literal as it is, anything else
        (a load) read once into a private variable."""
        assert not isinstance(value, tuple), "a tuple passed where a scalar is expected"
        if isinstance(value, ir.VarRef | ir.IntLit | ir.FloatLit):
            return value
        return self.declare(value.type, value)


def _elem(t: DataType) -> DataType:
    if not isinstance(t, ArrayT):
        raise PatternTypeError(f"{t} is not an array")
    return t.elem


def _for(index: ir.VarRef, start: ir.Expr, stop: ir.Expr, step: ir.Expr,
         body: ir.Stmt) -> ir.For:
    init = ir.DeclStmt((ir.VarDecl(index.name, INT, init=start),))
    cond = ir.Binary(INT, "<", index, stop)
    advance: ir.Expr = ir.Unary(INT, "p++", index) if vw._is_lit(step, 1) \
        else ir.Assign(INT, "+=", index, step)
    return ir.For(init, cond, advance, body)


# ---------------------------------------------------------------------- the program


def _memory(name: str, t: DataType, sizes: dict[str, int], const: bool) -> vw.View:
    shape = _lengths(t, sizes)
    parts: list[vw.View] = []
    for leaf_name, leaf in zip(_leaf_names(name, t), leaf_types(t), strict=True):
        pointer = PointerType(leaf, AddressSpace.GLOBAL, const=const, restrict=True)
        parts.append(vw.Memory(ir.VarRef(pointer, leaf_name), shape, leaf))
    return parts[0] if len(parts) == 1 else vw.Tuple(tuple(parts))


def _params(name: str, t: DataType, const: bool) -> list[ir.Param]:
    return [ir.Param(leaf_name, PointerType(leaf, AddressSpace.GLOBAL, const=const,
                                            restrict=True))
            for leaf_name, leaf in zip(_leaf_names(name, t), leaf_types(t), strict=True)]


def _free_params(e: px.Expr) -> set[str]:
    names: set[str] = set()

    def walk(x: px.Expr | px.Fun) -> None:
        if isinstance(x, px.Param):
            names.add(x.name)
            return
        if isinstance(x, px.Apply):
            walk(x.fun)
            for a in x.args:
                walk(a)
            return
        if isinstance(x, px.Fun):
            for value in vars(x).values():
                if isinstance(value, px.Fun | px.Expr):
                    walk(value)
    walk(e)
    return names


def lower(e: px.Expr, inputs: Sequence[px.Param], sizes: dict[str, int],
          local_size: int | None = None, name: str = "pattern") -> Lowered:
    """The kernels of ``e`` over the program inputs ``inputs`` for concrete ``sizes``."""
    for p in inputs:
        if p.name.startswith(PREFIX) or not p.name.isidentifier():
            raise PatternTypeError(f"input name '{p.name}': use an identifier not starting "
                                   f"with '{PREFIX}'")
    functions: dict[str, ir.Function] = {}
    kernels: list[ir.Function] = []
    plans: list[KernelPlan] = []
    buffers: list[BufferSpec] = []
    scalars: list[tuple[str, ScalarType]] = []
    temps: list[px.Param] = []
    for p in inputs:
        if isinstance(p.type, ArrayT):
            count = math.prod(_lengths(p.type, sizes))
            for leaf_name, leaf in zip(_leaf_names(p.name, p.type), leaf_types(p.type),
                                       strict=True):
                buffers.append(BufferSpec(leaf_name, _scalar(leaf),
                                          count * (leaf.width if isinstance(leaf, VectorType)
                                                   else 1), "input"))
        elif isinstance(p.type, ScalarType):
            scalars.append((p.name, p.type))
        else:
            raise PatternTypeError(f"input '{p.name}' of type {p.type}: inputs are arrays "
                                   "or scalars")
    for k, (temp, body) in enumerate(stages(e)):
        state = _Kernel(dict(sizes), functions, local_size)
        params: list[ir.Param] = []
        args: list[str] = []
        used = _free_params(body)
        for p in inputs:
            if p.name not in used:
                continue
            if isinstance(p.type, ArrayT):
                state.env[p.name] = _memory(p.name, p.type, sizes, const=True)
                params += _params(p.name, p.type, const=True)
            else:
                assert isinstance(p.type, ScalarType)
                state.env[p.name] = vw.Scalar(ir.VarRef(p.type, p.name))
                params.append(ir.Param(p.name, p.type))
        for earlier in temps:
            if earlier.name in used:
                state.env[earlier.name] = _memory(earlier.name, earlier.type, sizes, const=True)
                params += _params(earlier.name, earlier.type, const=True)
        out_name = temp.name if temp is not None else "out"
        out_type = body.type
        if temp is not None:
            temps.append(temp)
        count = math.prod(_lengths(out_type, sizes)) if isinstance(out_type, ArrayT) else 1
        for leaf_name, leaf in zip(_leaf_names(out_name, out_type), leaf_types(out_type),
                                   strict=True):
            width = leaf.width if isinstance(leaf, VectorType) else 1
            buffers.append(BufferSpec(leaf_name, _scalar(leaf), count * width,
                                      "temp" if temp is not None else "output"))
        out_view = _memory(out_name, out_type if isinstance(out_type, ArrayT)
                           else ArrayT(out_type, Size.of(1)), sizes, const=False)
        if not isinstance(out_type, ArrayT):
            out_view = vw.Indexed(out_view, vw.lit(0))
        params += _params(out_name, out_type, const=False)
        state.emit(body, out_view)
        args = [p.name for p in params]
        kname = f"{name}_{k}"
        kernels.append(ir.Function(kname, VOID, tuple(params),
                                   ir.Block(tuple(state.local_decls + state.stmts)),
                                   is_kernel=True))
        plans.append(_launch(kname, tuple(args), state))
    module = ir.Module(tuple(functions.values()) + tuple(kernels))
    return Lowered(module, tuple(plans), tuple(buffers), tuple(scalars), e.type)


def _launch(name: str, args: tuple[str, ...], state: _Kernel) -> KernelPlan:
    if state.global_size is None:
        return KernelPlan(name, args, (1,), (1,))
    if state.group_local is not None:  # map_workgroup over map_local
        local = state.group_local
        return KernelPlan(name, args, (state.global_size * local,), (local,))
    n = state.global_size
    local = math.gcd(n, state.local_size or 64)
    return KernelPlan(name, args, (n,), (local,))
