"""The vector code of holistic vectorization: one statement of the original kernel rewritten
for ``width`` lanes (see ``transforms/vectorize.py`` for the whole transform).

A value varying along x of scalar type ``T`` becomes a ``T{width}`` whose component ``k`` is
lane ``k``'s value. One of explicit vector type ``Tn`` becomes a ``T{n*width}`` holding lane
``k``'s components at ``k*n .. k*n+n-1`` (the order of an array of ``Tn`` in memory, so
consecutive ``Tn`` elements load with one ``vload``). A value uniform along x stays as it was
and is replicated where it meets a varying one.

OpenCL's scalar and vector operators differ in one place: a comparison (and ``!``, ``&&``,
``||``) of scalars gives ``int`` 1 or 0, of vectors -1 or 0 in a signed type of the
operands' component size. Scalar comparisons therefore become ``-(a < b)`` converted to
``int{width}``; comparisons of explicit vectors already had the vector meaning and keep it.
Every rewrite raises ``Refused`` with a reason for what it does not handle.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ppcl.compiler.analysis.lanes import VARY, Stride, Strides, part_of, query
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.builtins import ELEMENTWISE
from ppcl.compiler.ir.types import (
    INT,
    UINT,
    ULONG,
    VECTOR_WIDTHS,
    VOID,
    AddressSpace,
    ArrayType,
    PointerType,
    ScalarType,
    Type,
    VectorType,
)
from ppcl.compiler.ir.visit import Node, Rewriter, children, walk

MAX_LANES = 16
BASE = "__ppcl_base"  # the original global id of lane 0
SIZE_PARAM = "__ppcl_vector_size"  # trailing ulong param: the original global size along 0
_HEX = "0123456789abcdef"

_PURE_PREFIXES = ("convert_", "as_", "get_")
_COMPARISONS = frozenset(("<", ">", "<=", ">=", "==", "!="))


class Refused(Exception):
    """The kernel cannot be vectorized; the message says why."""


# ------------------------------------------------------------------ node builders


def call(name: str, args: tuple[ir.Expr, ...], t: Type) -> ir.Call:
    return ir.Call(t, name, args, builtin=name)


def int_lit(value: int, t: ScalarType = INT) -> ir.IntLit:
    return ir.IntLit(t, value)


def ref(name: str, t: Type) -> ir.VarRef:
    return ir.VarRef(t, name)


def query_call(name: str, dim: int = 0) -> ir.Call:
    return call(name, (int_lit(dim, UINT),), ULONG)


def pick(v: ir.Expr, indices: list[int]) -> ir.Expr:
    """Components ``indices`` of the vector ``v`` (a swizzle in ``s`` notation)."""
    vt = v.type
    assert isinstance(vt, VectorType)
    if indices == list(range(vt.width)):
        return v
    if isinstance(v, ir.Cast) and v.implicit:  # printed without the cast, it would be a scalar
        v = dataclasses.replace(v, implicit=False)
    if len(indices) > 1 and len(indices) not in VECTOR_WIDTHS:
        raise Refused(f"{len(indices)} components of {vt} are not an OpenCL vector")
    t: Type = vt.elem if len(indices) == 1 else VectorType(vt.elem, len(indices))
    return ir.Swizzle(t, v, tuple(indices), "s" + "".join(_HEX[i] for i in indices))


def sint(size: int) -> ScalarType:
    return ScalarType({1: "char", 2: "short", 4: "int", 8: "long"}[size])


def convert(v: ir.Expr, to: ScalarType) -> ir.Expr:
    """A vector converted component-wise (OpenCL has no implicit vector conversions)."""
    assert isinstance(v.type, VectorType)
    if v.type.elem == to:
        return v
    t = VectorType(to, v.type.width)
    return call(f"convert_{t}", (v,), t)


def original_query(name: str, width: int, lane: ir.Expr) -> ir.Expr:
    """The ``ulong`` the original work-item of ``lane`` got from ``name(0)`` in the merged
    item (whose group, when it asks, has ``L0 / width`` items)."""
    w = int_lit(width, ULONG)
    if name == "get_global_id":
        return ir.Binary(ULONG, "+", ref(BASE, ULONG), ir.Cast(ULONG, lane))
    if name == "get_local_id":
        scaled = ir.Binary(ULONG, "*", query_call("get_local_id"), w)
        return ir.Binary(ULONG, "+", scaled, ir.Cast(ULONG, lane))
    if name in ("get_local_size", "get_enqueued_local_size"):
        return ir.Binary(ULONG, "*", query_call(name), w)
    if name == "get_global_size":
        return ref(SIZE_PARAM, ULONG)
    return query_call(name)  # group id, group count, offset: the same for every lane


def touches_memory(node: Node) -> bool:
    """Whether evaluating ``node`` may read or write memory, call a user function, or trap
    (an integer division): what must not run for lanes the original did not run it for."""
    for n in walk(node):
        if isinstance(n, ir.Index | ir.Assign) or (
                isinstance(n, ir.Unary) and n.op in ("*", "++", "--", "p++", "p--")):
            return True
        if isinstance(n, ir.Call) and not (n.builtin is not None and (
                n.name in ELEMENTWISE or n.name.startswith(_PURE_PREFIXES))):
            return True
        if isinstance(n, ir.Binary) and n.op in ("/", "%") and isinstance(
                n.type, ScalarType | VectorType) and not _is_float(n.type):
            return True
    return False


def _is_float(t: Type) -> bool:
    elem = t.elem if isinstance(t, VectorType) else t
    return isinstance(elem, ScalarType) and elem.is_float


@dataclass
class Counts:
    contiguous_loads: int = 0
    contiguous_stores: int = 0
    uniform: int = 0
    gathers: int = 0
    scatters: int = 0


class Vectorizer:
    """Rewrites statements of a kernel body into their vector form."""

    def __init__(self, width: int, strides: Strides):
        self.width = width
        self.strides = strides
        self.counts = Counts()
        self.vector_vars = {name for name, s in strides.vars.items() if s != 0}
        self.temps = 0

    # ---- types

    def wide(self, t: Type) -> VectorType:
        """The type of a varying value of original type ``t``."""
        if isinstance(t, ScalarType) and not t.is_bool:
            return VectorType(t, self.width)
        if isinstance(t, VectorType) and t.width != 3 and t.width * self.width <= MAX_LANES:
            return VectorType(t.elem, t.width * self.width)
        if isinstance(t, VectorType):
            raise Refused(f"{t} values varying along x do not fit {MAX_LANES} lanes "
                          f"{self.width} times")
        raise Refused(f"values of type {t} varying along x")

    def broadcast(self, e: ir.Expr) -> ir.Expr:
        """A uniform value given to every lane."""
        wide = self.wide(e.type)
        if isinstance(e, ir.Cast) and isinstance(e.operand.type, ScalarType):
            return ir.Cast(wide, ir.Cast(wide.elem, e.operand))  # a splat stays a splat
        if isinstance(e.type, VectorType):
            return pick(e, list(range(e.type.width)) * self.width)
        return ir.Cast(wide, e)

    def spread(self, new: ir.Expr, varying: bool, original: Type, n: int) -> ir.Expr:
        """An argument of a builtin whose result has ``n`` components per lane: a scalar
        argument next to vector ones (``fmin(float2, float)``) is repeated ``n`` times."""
        if not isinstance(original, ScalarType) or n == 1:
            return new if varying else self.broadcast(new)
        if not varying:
            return ir.Cast(VectorType(original, n * self.width), new)
        return pick(new, [k for k in range(self.width) for _ in range(n)])

    def vector(self, e: ir.Expr) -> ir.Expr:
        new, varying = self.expr(e)
        return new if varying else self.broadcast(new)

    def lane(self, v: ir.Expr, original: Type, k: int) -> ir.Expr:
        """Lane ``k`` of a varying value (its ``n`` components for an original ``Tn``)."""
        n = original.width if isinstance(original, VectorType) else 1
        return pick(v, list(range(k * n, k * n + n)))

    # ---- expressions: (new expression, varies along x)

    def expr(self, e: ir.Expr) -> tuple[ir.Expr, bool]:
        if isinstance(e, ir.IntLit | ir.FloatLit | ir.StringLit | ir.SizeOf | ir.VecStep):
            return e, False
        if isinstance(e, ir.VarRef):
            if e.name in self.vector_vars:
                return ref(e.name, self.wide(e.type)), True
            return e, False
        if isinstance(e, ir.Call):
            return self.call(e)
        if isinstance(e, ir.Cast):
            return self.cast(e)
        if isinstance(e, ir.Unary):
            return self.unary(e)
        if isinstance(e, ir.Binary):
            return self.binary(e)
        if isinstance(e, ir.Conditional):
            return self.conditional(e)
        if isinstance(e, ir.Index):
            return self.load(e)
        if isinstance(e, ir.Assign):
            return self.assign(e)
        if isinstance(e, ir.Swizzle):
            return self.swizzle(e)
        if isinstance(e, ir.VectorLiteral):
            return self.vector_literal(e)
        parts = [self.expr(c) for c in children(e) if isinstance(c, ir.Expr)]
        if any(v for _, v in parts):
            raise Refused(f"{type(e).__name__} of values varying along x")
        return e, False

    def cast(self, e: ir.Cast) -> tuple[ir.Expr, bool]:
        inner, varying = self.expr(e.operand)
        if not varying:
            return dataclasses.replace(e, operand=inner), False
        if isinstance(e.type, ScalarType) and not e.type.is_bool:
            return convert(inner, e.type), True
        if isinstance(e.type, VectorType) and isinstance(e.operand.type, ScalarType):
            # a varying scalar splat into Tn: each lane's value n times, then converted
            n = e.type.width
            self.wide(e.type)  # refuses what passes 16 lanes
            spread = pick(inner, [k for k in range(self.width) for _ in range(n)])
            return convert(spread, e.type.elem), True
        if isinstance(e.type, VectorType) and e.type == e.operand.type:
            return inner, True
        raise Refused(f"conversion to {e.type} of a value varying along x")

    def call(self, e: ir.Call) -> tuple[ir.Expr, bool]:
        if e.builtin is None:
            raise Refused(f"call of user function {e.name} (inline it first)")
        q = query(e)
        if q is not None:
            return self.query(e, q[0], q[1])
        if e.name.startswith(("vload", "vstore")):
            return self.vload_call(e)
        parts = [self.expr(a) for a in e.args]
        args = tuple(new for new, _ in parts)
        if not any(v for _, v in parts):
            return dataclasses.replace(e, args=args), False
        n = e.type.width if isinstance(e.type, VectorType) else 1
        wide_args = tuple(self.spread(a, v, old.type, n) for (a, v), old in zip(parts, e.args))
        if e.name == "select" and isinstance(e.type, ScalarType):
            # scalar select tests the condition for non-zero, vector select its top bit
            return self.select(wide_args[2], wide_args[1], wide_args[0], e.type), True
        head, _, tail = e.name.partition("_")
        if head in ("convert", "as") and len(e.args) == 1:
            target = tail.split("_", 1)
            if str(e.type) == target[0]:
                suffix = "_" + target[1] if len(target) > 1 else ""
                t = self.wide(e.type)
                return call(f"{head}_{t}{suffix}", wide_args, t), True
        if e.name not in ELEMENTWISE or any(
                isinstance(a.type, VectorType) and a.type.width != n for a in e.args):
            raise Refused(f"builtin {e.name} on values varying along x")
        return call(e.name, wide_args, self.wide(e.type)), True

    def query(self, e: ir.Call, name: str, dim: int | None) -> tuple[ir.Expr, bool]:
        if dim is None or name in ("get_global_linear_id", "get_local_linear_id"):
            raise Refused(f"{name} with a dimension not known at compile time")
        if dim != 0:
            return e, False
        lane0 = original_query(name, self.width, int_lit(0, UINT))
        if name not in ("get_global_id", "get_local_id"):
            return lane0, False
        t = VectorType(ULONG, self.width)
        lanes = ir.VectorLiteral(t, tuple(int_lit(k, ULONG) for k in range(self.width)))
        return ir.Binary(t, "+", ir.Cast(t, lane0), lanes), True

    def vload_call(self, e: ir.Call) -> tuple[ir.Expr, bool]:
        """``vloadN(i, p)`` / ``vstoreN(v, i, p)`` of explicit vector code: with ``i`` of
        stride 1 the lanes read or write one run of ``N * width`` elements."""
        offset, pointer = e.args[-2], e.args[-1]
        if self.strides.of(pointer) != 0:
            raise Refused(f"{e.name} through a pointer varying along x")
        stride = self.strides.of(offset)
        loads = e.name.startswith("vload")
        digits = e.name[5:] if loads else e.name[6:]
        n = int(digits) if digits.isdigit() else 0
        if stride == 0 and (loads or self.strides.of(e.args[0]) == 0):
            self.counts.uniform += 1
            return dataclasses.replace(e, args=tuple(self.scalar(a, e.name) for a in e.args)), False
        if stride == 0:
            raise Refused("a value varying along x stored to an address uniform along x")
        if n in (0, 3) or stride != 1:
            raise Refused(f"{e.name} at offsets not consecutive along x")
        index, _ = self.expr(offset)
        start = ir.Binary(pointer.type, "+", self.expr(pointer)[0], ir.Binary(
            ULONG, "*", ir.Cast(ULONG, pick(index, [0])), int_lit(n, ULONG)))
        wide = self.wide(VectorType(pointer.type.pointee, n))  # type: ignore[attr-defined]
        if loads:
            self.counts.contiguous_loads += 1
            return call(f"vload{wide.width}", (int_lit(0, ULONG), start), wide), True
        self.counts.contiguous_stores += 1
        value = self.vector(e.args[0])
        return call(f"vstore{wide.width}", (value, int_lit(0, ULONG), start), VOID), True

    def swizzle(self, e: ir.Swizzle) -> tuple[ir.Expr, bool]:
        base, varying = self.expr(e.base)
        if not varying:
            return dataclasses.replace(e, base=base), False
        n = e.base.type.width  # type: ignore[attr-defined]
        indices = [k * n + i for k in range(self.width) for i in e.indices]
        if len(indices) > MAX_LANES or len(e.indices) == 3:
            raise Refused(f"swizzle .{e.spelling} of {self.width} lanes passes {MAX_LANES}")
        return pick(base, indices), True

    def vector_literal(self, e: ir.VectorLiteral) -> tuple[ir.Expr, bool]:
        parts = [self.expr(x) for x in e.elems]
        if not any(v for _, v in parts):
            return dataclasses.replace(e, elems=tuple(p for p, _ in parts)), False
        assert isinstance(e.type, VectorType)
        if len(e.elems) == 1 and isinstance(e.elems[0].type, ScalarType):
            return self.cast(ir.Cast(e.type, e.elems[0]))
        comps: list[ir.Expr] = []
        for k in range(self.width):
            for (new, varying), old in zip(parts, e.elems):
                comps.append(self.lane(new, old.type, k) if varying else new)
        return ir.VectorLiteral(self.wide(e.type), tuple(comps)), True

    def unary(self, e: ir.Unary) -> tuple[ir.Expr, bool]:
        inner, varying = self.expr(e.operand)
        if not varying:
            if e.op in ("++", "--", "p++", "p--") and not isinstance(e.operand, ir.VarRef):
                raise Refused("increment of memory uniform along x (every lane would do it)")
            return dataclasses.replace(e, operand=inner), False
        if e.op in ("*", "&"):
            raise Refused(f"unary {e.op} on a value varying along x")
        if e.op in ("++", "--", "p++", "p--") and not isinstance(e.operand, ir.VarRef):
            raise Refused("increment of memory at an address varying along x")
        assert isinstance(inner.type, VectorType)
        if e.op == "!":
            mask = ir.Unary(VectorType(sint(inner.type.elem.size), inner.type.width), "!", inner)
            return (self.truth(mask) if isinstance(e.operand.type, ScalarType) else mask), True
        return ir.Unary(self.wide(e.type), e.op, inner), True

    def truth(self, mask: ir.Expr) -> ir.Expr:
        """A vector truth value (-1/0) as the scalar code's ``int`` 1/0."""
        return convert(ir.Unary(mask.type, "-", mask), INT)

    def nonzero(self, v: ir.Expr, size: int) -> ir.Expr:
        """The -1/0 mask of ``v != 0`` with components of ``size`` bytes (for ``select``)."""
        assert isinstance(v.type, VectorType)
        zero: ir.Expr = ir.FloatLit(v.type.elem, 0.0) if v.type.elem.is_float \
            else int_lit(0, v.type.elem)
        mask = ir.Binary(VectorType(sint(v.type.elem.size), v.type.width), "!=", v,
                         ir.Cast(v.type, zero))
        return convert(mask, sint(size))

    def binary(self, e: ir.Binary) -> tuple[ir.Expr, bool]:
        (lhs, lv), (rhs, rv) = self.expr(e.lhs), self.expr(e.rhs)
        if not (lv or rv):
            return dataclasses.replace(e, lhs=lhs, rhs=rhs), False
        if isinstance(e.lhs.type, PointerType) or isinstance(e.rhs.type, PointerType):
            raise Refused("pointer arithmetic varying along x")
        scalar = isinstance(e.lhs.type, ScalarType) and isinstance(e.rhs.type, ScalarType)
        if e.op in ("&&", "||"):
            if touches_memory(e.rhs):
                raise Refused(f"{e.op} varying along x with memory or division on its right")
            if not scalar:
                raise Refused(f"{e.op} of explicit vectors varying along x")
            a = self.nonzero(lhs if lv else self.broadcast(lhs), 4)
            b = self.nonzero(rhs if rv else self.broadcast(rhs), 4)
            return self.truth(ir.Binary(a.type, "&" if e.op == "&&" else "|", a, b)), True
        lhs = lhs if lv else self.broadcast(lhs)
        rhs = rhs if rv else self.broadcast(rhs)
        assert isinstance(lhs.type, VectorType) and isinstance(rhs.type, VectorType)
        if e.op in _COMPARISONS:
            mask = ir.Binary(VectorType(sint(lhs.type.elem.size), lhs.type.width), e.op, lhs, rhs)
            return (self.truth(mask) if scalar else mask), True
        if e.op in ("<<", ">>"):
            rhs = convert(rhs, lhs.type.elem)
        return ir.Binary(self.wide(e.type), e.op, lhs, rhs), True

    def select(self, cond: ir.Expr, then: ir.Expr, otherwise: ir.Expr, t: Type) -> ir.Expr:
        wide = self.wide(t)
        return call("select", (otherwise, then, self.nonzero(cond, wide.elem.size)), wide)

    def conditional(self, e: ir.Conditional) -> tuple[ir.Expr, bool]:
        (c, cv), (a, av), (b, bv) = self.expr(e.cond), self.expr(e.then), self.expr(e.otherwise)
        if not (cv or av or bv):
            return dataclasses.replace(e, cond=c, then=a, otherwise=b), False
        a = a if av else self.broadcast(a)
        b = b if bv else self.broadcast(b)
        if not cv:
            return ir.Conditional(self.wide(e.type), c, a, b), True
        if touches_memory(e.then) or touches_memory(e.otherwise):
            raise Refused("?: varying along x with memory or division in a branch")
        if not isinstance(e.cond.type, ScalarType) or not isinstance(e.type, ScalarType):
            raise Refused("?: on explicit vectors varying along x")
        return self.select(c, a, b, e.type), True

    def assign_part(self, e: ir.Assign, root: str) -> tuple[ir.Expr, bool]:
        """An assignment to a component or field of a private variable (``v.x = ...``)."""
        value, varying = self.expr(e.value)
        if root not in self.vector_vars:
            if varying:
                raise Refused(f"{root}: a uniform variable given a varying value")
            return dataclasses.replace(e, target=self.expr(e.target)[0], value=value), False
        if not (isinstance(e.target, ir.Swizzle) and isinstance(e.target.base, ir.VarRef)):
            raise Refused(f"assignment to a part of {root}, which varies along x")
        target, _ = self.swizzle(e.target)
        n = len(e.target.indices)
        if not varying:
            value = self.broadcast(value)
        if target.type != value.type or (n > 1 and len(set(e.target.indices)) < n):
            raise Refused(f"assignment to .{e.target.spelling} of {root}, which varies along x")
        return ir.Assign(target.type, e.op, target, value), True

    # ---- memory

    def address(self, e: ir.Index) -> tuple[ir.Expr, ir.Expr, Stride]:
        base, varying = self.expr(e.base)
        if varying or not isinstance(e.base.type, PointerType | ArrayType):
            raise Refused("memory access through a pointer varying along x")
        stride = self.strides.of(e.index)
        index = self.scalar(e.index, "index") if stride == 0 else self.expr(e.index)[0]
        if stride != 0 and not isinstance(e.type, ScalarType | VectorType):
            raise Refused(f"access to {e.type} elements varying along x")
        if stride != 0 and isinstance(e.type, ScalarType) and e.type.name == "half":
            raise Refused("half elements varying along x (vload_half instead)")
        return base, index, stride

    def start(self, base: ir.Expr, index: ir.Expr, elem: Type) -> ir.Expr:
        """Where lane 0's element starts, as a pointer to scalar components."""
        where: ir.Expr = ir.Binary(base.type, "+", base, pick(index, [0]))
        if isinstance(elem, VectorType):
            space = base.type.space if isinstance(base.type, PointerType) else AddressSpace.PRIVATE
            const = base.type.const if isinstance(base.type, PointerType) else False
            where = ir.Cast(PointerType(elem.elem, space, const=const), where)
        return where

    def load(self, e: ir.Index) -> tuple[ir.Expr, bool]:
        base, index, stride = self.address(e)
        if stride == 0:
            self.counts.uniform += 1
            return dataclasses.replace(e, base=base, index=index), False
        wide = self.wide(e.type)
        if stride == 1:
            self.counts.contiguous_loads += 1
            return call(f"vload{wide.width}", (int_lit(0, ULONG), self.start(base, index, e.type)),
                        wide), True
        self.counts.gathers += 1
        return ir.VectorLiteral(wide, tuple(ir.Index(e.type, base, pick(index, [k]))
                                            for k in range(self.width))), True

    def assign(self, e: ir.Assign) -> tuple[ir.Expr, bool]:
        if not isinstance(e.target, ir.VarRef):
            if isinstance(e.target, ir.Index) and e.op == "=":
                base, index, stride = self.address(e.target)
                value, varying = self.expr(e.value)
                if stride == 0 and not varying:
                    self.counts.uniform += 1
                    target = dataclasses.replace(e.target, base=base, index=index)
                    return dataclasses.replace(e, target=target, value=value), False
            root = part_of(e.target)
            if root is not None:
                return self.assign_part(e, root)
            if isinstance(e.target, ir.Index) and self.strides.of(e.value) == 0 \
                    and self.strides.of(e.target) == 0:
                raise Refused("a compound store uniform along x (every lane would do it)")
            raise Refused("a store varying along x inside an expression")
        if e.target.name not in self.vector_vars:
            return dataclasses.replace(e, value=self.scalar(e.value, e.target.name)), False
        value, varying = self.expr(e.value)
        wide = self.wide(e.target.type)
        if not varying:
            value = self.broadcast(value)
        if e.op in ("<<=", ">>="):
            value = convert(value, wide.elem)
        return ir.Assign(wide, e.op, ref(e.target.name, wide), value), True

    def store(self, s: ir.ExprStmt) -> ir.Stmt | None:
        """A statement storing through an index varying along x, rewritten; else None."""
        e = s.expr
        if not (isinstance(e, ir.Assign) and isinstance(e.target, ir.Index)):
            return None
        if self.strides.of(e.target.index) == 0 and self.strides.of(e.target.base) == 0:
            if self.strides.of(e.value) != 0:
                raise Refused("a value varying along x stored to an address uniform along x")
            return None
        base, index, stride = self.address(e.target)
        value = self.vector(e.value)
        wide = self.wide(e.target.type)
        if e.op != "=":
            old, _ = self.load(e.target)
            value = ir.Binary(wide, e.op[:-1], old, value)
        if stride == 1:
            self.counts.contiguous_stores += 1
            where = self.start(base, index, e.target.type)
            stored = call(f"vstore{wide.width}", (value, int_lit(0, ULONG), where), VOID)
            return ir.ExprStmt(stored, loc=s.loc)
        self.counts.scatters += 1
        self.temps += 1
        temp = f"__ppcl_v{self.temps}"
        stmts: list[ir.Stmt] = [ir.DeclStmt((ir.VarDecl(temp, wide, init=value),))]
        for k in range(self.width):
            lane_value = self.lane(ref(temp, wide), e.target.type, k)
            stmts.append(ir.ExprStmt(ir.Assign(e.target.type, "=", ir.Index(
                e.target.type, base, pick(index, [k])), lane_value)))
        return ir.Block(tuple(stmts), loc=s.loc)

    # ---- statements

    def stmt(self, s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.Block):
            return dataclasses.replace(s, stmts=tuple(self.stmt(inner) for inner in s.stmts))
        if isinstance(s, ir.ExprStmt):
            stored = self.store(s)
            if stored is not None:
                return stored
            return dataclasses.replace(s, expr=self.expr(s.expr)[0])
        if isinstance(s, ir.DeclStmt):
            return dataclasses.replace(s, decls=tuple(self.decl(d) for d in s.decls))
        if isinstance(s, ir.If):
            return dataclasses.replace(
                s, cond=self.uniform(s.cond, "if"), then=self.stmt(s.then),
                otherwise=None if s.otherwise is None else self.stmt(s.otherwise))
        if isinstance(s, ir.For):
            return dataclasses.replace(
                s, init=None if s.init is None else self.stmt(s.init),
                cond=None if s.cond is None else self.uniform(s.cond, "for"),
                step=None if s.step is None else self.uniform(s.step, "for step"),
                body=self.stmt(s.body))
        if isinstance(s, ir.While | ir.DoWhile):
            return dataclasses.replace(s, cond=self.uniform(s.cond, "loop"),
                                       body=self.stmt(s.body))
        if isinstance(s, ir.Switch):
            body = self.stmt(s.body)
            assert isinstance(body, ir.Block)
            return dataclasses.replace(s, expr=self.uniform(s.expr, "switch"), body=body)
        return s  # Return (uniform control), Break, Continue, Empty, Case, Default

    def decl(self, d: ir.VarDecl) -> ir.VarDecl:
        if d.space is not AddressSpace.PRIVATE or isinstance(d.type, ArrayType):
            raise Refused(f"{d.name}: {d.space.value} or array variables")
        if d.name not in self.vector_vars:
            return dataclasses.replace(d, init=None if d.init is None
                                       else self.scalar(d.init, d.name))
        if isinstance(d.type, PointerType):
            raise Refused(f"{d.name}: a pointer varying along x")
        init = None if d.init is None else self.vector(d.init)
        return dataclasses.replace(d, type=self.wide(d.type), init=init)

    def uniform(self, e: ir.Expr, what: str) -> ir.Expr:
        if self.strides.of(e) != 0:
            raise Refused(f"{what} whose condition varies along x")
        return self.scalar(e, what)

    def scalar(self, e: ir.Expr, what: str) -> ir.Expr:
        """``e``, which the stride analysis found uniform along x, as one scalar. Its vector
        form may still have lanes (``lid - lid``): they are all equal, so lane 0 serves."""
        new, varying = self.expr(e)
        if not varying:
            return new
        if self.strides.of(e) != 0:
            raise Refused(f"{what}: a value varying along x where one value is needed")
        if isinstance(e.type, VectorType):
            return pick(new, list(range(e.type.width)))
        return pick(new, [0])


class ScalarLanes(Rewriter):
    """The original body run for one lane of the fallback loop (``lane``, a ``uint``
    variable): queries along 0 give the original work-item's values, and ``return`` moves to
    the next lane (``continue`` of the lane loop; a ``return`` inside a loop is refused)."""

    def __init__(self, width: int, lane: str):
        self.width = width
        self.lane = lane

    def rewrite_Call(self, e: ir.Call) -> ir.Expr:
        q = query(e)
        if q is None or q[1] != 0:
            return e
        return ir.Cast(e.type, original_query(q[0], self.width, ref(self.lane, UINT)),
                       implicit=True)

    def rewrite_Return(self, s: ir.Return) -> ir.Stmt:
        return ir.Continue(loc=s.loc)


__all__ = ["VARY", "Counts", "Refused", "ScalarLanes", "Vectorizer", "touches_memory"]
