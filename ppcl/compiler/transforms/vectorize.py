"""Holistic vectorization: ``width`` consecutive work-items along dimension 0 become one.

PPOpenCL's holistic vectorization (section 3.3.3, Algorithm 4) merges work-items so that one
work-item computes with OpenCL vector types what ``width`` neighbours computed with scalars.
Lane ``k`` of the merged item ``g'`` is the original work-item
``offset + (g' - offset) * width + k``. A value that varies along x (``x`` = dimension 0)
becomes a vector of ``width`` lanes; a value uniform along x stays a scalar and is broadcast
where it meets a vector. Global accesses whose index has stride 1 along x become
``vloadN``/``vstoreN``; accesses with uniform index stay scalar; any other varying index
(strided, gathered) is built lane by lane (``(float4)(p[i.s0], p[i.s1], ...)``, and one
scalar store per lane).

The tail is exact: the merged kernel takes a trailing ``ulong`` parameter (``SIZE_PARAM``),
the original global size along 0. A merged item whose lanes all exist, and for which no lane
leaves through a top-level tail guard (``if (i >= n) return;``, or a final ``if (i < n) {..}``),
runs the vector code; any other runs the original body once per existing lane (a scalar loop,
``return`` becoming ``continue``). The vector path tests the guards only after the statements
before them, so those statements must not write memory (the scalar loop runs them again).

Refused, with a reason: control flow varying along x other than tail guards, barriers,
atomics, ``printf``, ``__local`` or private arrays, calls of user functions (inline first),
pointers varying along x, ``return`` inside a loop, explicit vector values varying along x
when ``width`` times their width passes 16 lanes (see ``explicit_width``).

Launch: the same offset, ``global'[0] = ceil(G0 / width)`` rounded up to a multiple of
``local'[0]``; if the kernel asks for its local id, group id, local size or group count along
0 (``VectorizeFacts.queries_group_x``), ``local'[0] = L0 / width`` and ``width`` must divide
``L0``; otherwise any local size.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ppcl.compiler.analysis.order import ExecutionOrder
from ppcl.compiler.analysis.uniformity import const_int
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import (
    INT,
    UINT,
    ULONG,
    AddressSpace,
    ArrayType,
    PointerType,
    ScalarType,
    Type,
    VectorType,
    VOID,
)
from ppcl.compiler.ir.visit import Rewriter, walk

SIZE_PARAM = "__ppcl_vector_size"  # trailing ulong param: the original global size along 0
_BASE = "__ppcl_base"  # the original global id of lane 0
_LANE = "__ppcl_lane"  # the lane of the scalar fallback loop
_MAX_LANES = 16
_HEX = "0123456789abcdef"

# builtins that OpenCL also defines component-wise on vectors (``gentype f(gentype...)``)
_ELEMENTWISE = frozenset("""
sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh sinpi cospi tanpi asinpi
acospi atanpi atan2pi exp exp2 exp10 expm1 log log2 log10 log1p logb sqrt rsqrt cbrt pow pown
powr rootn hypot fabs floor ceil round trunc rint fmin fmax fmod mad fma copysign fdim ldexp
erf erfc tgamma lgamma nextafter maxmag minmag remainder
native_sin native_cos native_tan native_exp native_exp2 native_exp10 native_log native_log2
native_log10 native_sqrt native_rsqrt native_recip native_powr native_divide
half_sin half_cos half_tan half_exp half_exp2 half_exp10 half_log half_log2 half_log10
half_sqrt half_rsqrt half_recip half_powr half_divide
min max clamp abs abs_diff add_sat sub_sat hadd rhadd mad_hi mul_hi mad_sat rotate clz popcount
mul24 mad24 mix step smoothstep sign degrees radians
""".split())
_X_QUERIES = frozenset(("get_global_id", "get_local_id", "get_group_id", "get_local_size",
                        "get_global_size", "get_num_groups", "get_global_offset",
                        "get_enqueued_local_size"))
_GROUP_X_QUERIES = frozenset(("get_local_id", "get_group_id", "get_local_size",
                              "get_num_groups", "get_enqueued_local_size"))
_REFUSED_CALLS = ("barrier", "work_group_", "sub_group_", "async_work_group", "wait_group",
                  "atomic_", "atom_", "printf", "get_global_linear_id", "get_local_linear_id",
                  "prefetch", "read_image", "write_image")


class Refused(Exception):
    """The kernel cannot be vectorized; the message says why."""


@dataclass(frozen=True)
class VectorizeFacts:
    kernel: str
    possible: bool
    reason: str                # why not, or what vectorizes (e.g. "2 contiguous loads, 1 contiguous store")
    registers_per_item: int    # estimate of live values per work-item (for the register bound)
    explicit_width: int        # widest explicit vector type used (1 if none)
    contiguous: int            # contiguous accesses along x
    gathers: int               # accesses that would be lane-by-lane
    # the kernel asks for its local id, group id, local size or group count along 0: the
    # merged launch must then use local'[0] = L0 / width with width dividing L0
    queries_group_x: bool = False


# ------------------------------------------------------------------ strides along x

VARY = None  # a value that varies along x with no known constant stride
Stride = int | None  # 0: uniform along x; k: lane k adds k * stride; None: varying


def _query(e: ir.Expr) -> tuple[str, int | None] | None:
    """(name, dimension) of a work-item query, through conversions."""
    while isinstance(e, ir.Cast):
        e = e.operand
    if isinstance(e, ir.Call) and e.builtin is not None and e.name in _X_QUERIES | {
            "get_global_linear_id", "get_local_linear_id"}:
        return e.name, const_int(e.args[0]) if e.args else None
    return None


def _is_int(t: Type) -> bool:
    return isinstance(t, ScalarType) and t.is_integer


def _join(a: Stride, b: Stride) -> Stride:
    return a if a == b else VARY


class Strides:
    """The stride along x of every private variable of a kernel body and of its expressions.

    A variable takes the join of the strides of every value assigned to it, iterated to a
    fixed point: ``i = gid0`` then ``i += 1`` keeps stride 1, ``s = 0`` then ``s += a[i]``
    is varying. Only integer values keep a stride; others are uniform or varying. Control
    flow is not looked at here: the vectorizer refuses control that varies along x, except
    tail guards, whose bodies run unconditionally in the vector path."""

    def __init__(self, body: ir.Stmt):
        self.vars: dict[str, Stride] = {}
        assignments: list[tuple[str, str, ir.Expr | None]] = []  # (var, op, value)
        for n in walk(body):
            if isinstance(n, ir.DeclStmt):
                for d in n.decls:
                    self.vars[d.name] = 0
                    if d.init is not None:
                        assignments.append((d.name, "=", d.init))
            elif isinstance(n, ir.Assign) and isinstance(n.target, ir.VarRef):
                assignments.append((n.target.name, n.op, n.value))
            elif isinstance(n, ir.Unary) and n.op in ("++", "--", "p++", "p--") \
                    and isinstance(n.operand, ir.VarRef):
                assignments.append((n.operand.name, "+=", None))
        for _ in range(50):
            new: dict[str, Stride] = {name: 0 for name in self.vars}
            seen: set[str] = set()
            for name, op, value in assignments:
                s = self._assigned(name, op, value)
                new[name] = s if name not in seen else _join(new[name], s)
                seen.add(name)
            if new == self.vars:
                return
            self.vars = new
        self.vars = {name: VARY for name in self.vars}  # no fixed point: assume the worst

    def _assigned(self, name: str, op: str, value: ir.Expr | None) -> Stride:
        old = self.vars.get(name, 0)
        s = 0 if value is None else self.of(value)
        if op == "=":
            return s
        if op in ("+=", "-=") and old is not VARY and s is not VARY:
            return old + s if op == "+=" else old - s
        return 0 if old == 0 and s == 0 else VARY

    def of(self, e: ir.Expr) -> Stride:
        s = self._of(e)
        if s not in (0, VARY) and not _is_int(e.type):
            return VARY
        return s

    def _of(self, e: ir.Expr) -> Stride:
        if isinstance(e, ir.IntLit | ir.FloatLit | ir.StringLit | ir.SizeOf | ir.VecStep):
            return 0
        if isinstance(e, ir.VarRef):
            return self.vars.get(e.name, 0)
        if isinstance(e, ir.Cast):
            return self.of(e.operand) if _is_int(e.type) else _flat(self.of(e.operand))
        if isinstance(e, ir.Unary):
            s = self.of(e.operand)
            if e.op == "-":
                return None if s is VARY else -s
            if e.op in ("+", "++", "--", "p++", "p--"):
                return s
            return _flat(s)
        if isinstance(e, ir.Binary):
            a, b = self.of(e.lhs), self.of(e.rhs)
            if a is VARY or b is VARY:
                return VARY
            if e.op == "+":
                return a + b
            if e.op == "-":
                return a - b
            if e.op == "*":
                ka, kb = const_int(e.lhs), const_int(e.rhs)
                if a == 0 and b == 0:
                    return 0
                if kb is not None:
                    return a * kb
                if ka is not None:
                    return b * ka
                return VARY
            if e.op == "<<" and const_int(e.rhs) is not None and b == 0:
                return a * (1 << const_int(e.rhs)) if 0 <= (const_int(e.rhs) or 0) < 32 else VARY
            return 0 if a == 0 and b == 0 else VARY
        if isinstance(e, ir.Call):
            q = _query(e)
            if q is not None:
                return 1 if q[0] in ("get_global_id", "get_local_id") and q[1] == 0 else (
                    0 if q[1] is not None else VARY)
            return 0 if all(self.of(a) == 0 for a in e.args) else VARY
        if isinstance(e, ir.Assign):
            if isinstance(e.target, ir.VarRef):
                return self.vars.get(e.target.name, 0)
            return self.of(e.value)
        return 0 if all(self.of(c) == 0 for c in _expr_children(e)) else VARY


def _flat(s: Stride) -> Stride:
    return 0 if s == 0 else VARY


def _expr_children(e: ir.Expr) -> list[ir.Expr]:
    from ppcl.compiler.ir.visit import children
    return [c for c in children(e) if isinstance(c, ir.Expr)]


# ------------------------------------------------------------------ node builders


def _vec(t: Type, width: int) -> VectorType:
    if not isinstance(t, ScalarType) or t.is_bool:
        raise Refused(f"values of type {t} varying along x")
    return VectorType(t, width)


def _call(name: str, args: tuple[ir.Expr, ...], t: Type) -> ir.Call:
    return ir.Call(t, name, args, builtin=name)


def _lane(v: ir.Expr, k: int) -> ir.Swizzle:
    assert isinstance(v.type, VectorType)
    return ir.Swizzle(v.type.elem, v, (k,), "s" + _HEX[k])


def _sint(size: int) -> ScalarType:
    return ScalarType({1: "char", 2: "short", 4: "int", 8: "long"}[size])


def _convert(v: ir.Expr, to: ScalarType) -> ir.Expr:
    """A vector converted component-wise (OpenCL has no implicit vector conversions)."""
    assert isinstance(v.type, VectorType)
    if v.type.elem == to:
        return v
    t = _vec(to, v.type.width)
    return _call(f"convert_{t}", (v,), t)


def _int(value: int, t: ScalarType = INT) -> ir.IntLit:
    return ir.IntLit(t, value)


def _ref(name: str, t: Type) -> ir.VarRef:
    return ir.VarRef(t, name)


def _query_call(name: str, dim: int = 0) -> ir.Call:
    return _call(name, (_int(dim, UINT),), ULONG)


def _offset() -> ir.Call:
    return _query_call("get_global_offset")


# ------------------------------------------------------------------ the vector path


@dataclass
class _Counts:
    contiguous_loads: int = 0
    contiguous_stores: int = 0
    uniform: int = 0
    gathers: int = 0
    scatters: int = 0


class _Vectorizer:
    """Rewrites a kernel body into its vector form; raises ``Refused``."""

    def __init__(self, fn: ir.Function, width: int, strides: Strides):
        self.width = width
        self.strides = strides
        self.counts = _Counts()
        self.vector_vars = {name for name, s in strides.vars.items() if s != 0}
        self.temps = 0

    # ---- expressions: (new expression, varies along x)

    def vector(self, e: ir.Expr) -> ir.Expr:
        """``e`` as a vector, broadcasting a uniform value."""
        new, varying = self.expr(e)
        return new if varying else self.broadcast(new)

    def broadcast(self, e: ir.Expr) -> ir.Expr:
        return ir.Cast(_vec(e.type, self.width), e)

    def expr(self, e: ir.Expr) -> tuple[ir.Expr, bool]:
        if isinstance(e, ir.IntLit | ir.FloatLit | ir.StringLit | ir.SizeOf | ir.VecStep):
            return e, False
        if isinstance(e, ir.VarRef):
            if e.name in self.vector_vars:
                return _ref(e.name, _vec(e.type, self.width)), True
            if isinstance(e.type, ArrayType):
                return e, False
            return e, False
        if isinstance(e, ir.Call):
            return self.call(e)
        if isinstance(e, ir.Cast):
            inner, varying = self.expr(e.operand)
            if not varying:
                return dataclasses.replace(e, operand=inner), False
            if isinstance(e.type, VectorType | PointerType) or not isinstance(e.type, ScalarType):
                raise Refused(f"conversion to {e.type} of a value varying along x")
            if e.type.is_bool:
                raise Refused("conversion to bool of a value varying along x")
            return _convert(inner, e.type), True
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
        if isinstance(e, ir.Swizzle | ir.Member | ir.VectorLiteral | ir.InitList | ir.Comma):
            parts = [self.expr(c) for c in _expr_children(e)]
            if any(v for _, v in parts):
                raise Refused(f"{type(e).__name__.lower()} of values varying along x "
                              "(explicit vector code is widened only when uniform)")
            return Rewriter().rewrite(e), False
        raise Refused(f"expression {type(e).__name__} is not vectorized")

    def call(self, e: ir.Call) -> tuple[ir.Expr, bool]:
        if e.builtin is None:
            raise Refused(f"call of user function {e.name} (inline it first)")
        q = _query(e)
        if q is not None:
            return self.query(e, q[0], q[1]), q[0] in ("get_global_id", "get_local_id") \
                and q[1] == 0
        parts = [self.expr(a) for a in e.args]
        args = tuple(new for new, _ in parts)
        if not any(v for _, v in parts):
            return dataclasses.replace(e, args=args), False
        if e.name == "select":
            a, b, c = (self.vector(x) for x in e.args)
            return self.select(c, b, a, e.type), True
        name = e.name
        if name.startswith(("convert_", "as_")) and len(e.args) == 1:
            head, _, tail = name.partition("_")
            rest = tail.split("_", 1)
            if isinstance(e.type, ScalarType) and rest[0] == e.type.name:
                suffix = "_" + rest[1] if len(rest) > 1 else ""
                t = _vec(e.type, self.width)
                return _call(f"{head}_{t}{suffix}", (self.vector(e.args[0]),), t), True
        if name not in _ELEMENTWISE or not isinstance(e.type, ScalarType):
            raise Refused(f"builtin {name} on values varying along x")
        wide = tuple(a if v else self.broadcast(a) for a, v in parts)
        return _call(name, wide, _vec(e.type, self.width)), True

    def query(self, e: ir.Call, name: str, dim: int | None) -> ir.Expr:
        if dim is None or name in ("get_global_linear_id", "get_local_linear_id"):
            raise Refused(f"{name} with a dimension not known at compile time")
        if dim != 0:
            return e
        t = _vec(ULONG, self.width)
        lanes = ir.VectorLiteral(t, tuple(_int(k, ULONG) for k in range(self.width)))
        lane0 = original_query(name, self.width, _int(0, UINT))
        if name in ("get_global_id", "get_local_id"):
            return ir.Binary(t, "+", ir.Cast(t, lane0), lanes)
        return lane0

    def unary(self, e: ir.Unary) -> tuple[ir.Expr, bool]:
        inner, varying = self.expr(e.operand)
        if not varying:
            return dataclasses.replace(e, operand=inner), False
        if e.op in ("*", "&"):
            raise Refused(f"unary {e.op} on a value varying along x")
        if e.op in ("++", "--", "p++", "p--") and not isinstance(e.operand, ir.VarRef):
            raise Refused("increment of memory at an address varying along x")
        t = _vec(e.type, self.width)
        if e.op == "!":
            mask = ir.Unary(_vec(_sint(inner.type.elem.size), self.width), "!", inner)  # type: ignore[union-attr]
            return self.truth(mask), True
        return ir.Unary(t, e.op, inner), True

    def truth(self, mask: ir.Expr) -> ir.Expr:
        """An OpenCL vector truth value (-1/0) as the scalar code's ``int`` 1/0."""
        negated = ir.Unary(mask.type, "-", mask)
        return _convert(negated, INT)

    def nonzero(self, v: ir.Expr, size: int) -> ir.Expr:
        """The -1/0 mask of ``v != 0`` with components of ``size`` bytes (for ``select``)."""
        assert isinstance(v.type, VectorType)
        zero: ir.Expr = ir.FloatLit(v.type.elem, 0.0) if v.type.elem.is_float \
            else _int(0, v.type.elem)
        mask = ir.Binary(_vec(_sint(v.type.elem.size), self.width), "!=", v,
                         ir.Cast(v.type, zero))
        return _convert(mask, _sint(size))

    def binary(self, e: ir.Binary) -> tuple[ir.Expr, bool]:
        (lhs, lv), (rhs, rv) = self.expr(e.lhs), self.expr(e.rhs)
        if not (lv or rv):
            return dataclasses.replace(e, lhs=lhs, rhs=rhs), False
        if isinstance(e.lhs.type, PointerType) or isinstance(e.rhs.type, PointerType):
            raise Refused("pointer arithmetic varying along x")
        if e.op in ("&&", "||"):
            if _touches_memory(e.rhs):
                raise Refused(f"{e.op} varying along x with a memory access on its right")
            a = self.nonzero(lhs if lv else self.broadcast(lhs), 4)
            b = self.nonzero(rhs if rv else self.broadcast(rhs), 4)
            op = "&" if e.op == "&&" else "|"
            return self.truth(ir.Binary(a.type, op, a, b)), True
        lhs = lhs if lv else self.broadcast(lhs)
        rhs = rhs if rv else self.broadcast(rhs)
        if e.op in ("<", ">", "<=", ">=", "==", "!="):
            elem = lhs.type.elem  # type: ignore[attr-defined]
            mask = ir.Binary(_vec(_sint(elem.size), self.width), e.op, lhs, rhs)
            return self.truth(mask), True
        if e.op in ("<<", ">>"):
            rhs = _convert(rhs, lhs.type.elem)  # type: ignore[attr-defined]
        return ir.Binary(_vec(e.type, self.width), e.op, lhs, rhs), True

    def select(self, cond: ir.Expr, then: ir.Expr, otherwise: ir.Expr, t: Type) -> ir.Expr:
        vt = _vec(t, self.width)
        mask = self.nonzero(cond, vt.elem.size)
        return _call("select", (otherwise, then, mask), vt)

    def conditional(self, e: ir.Conditional) -> tuple[ir.Expr, bool]:
        (c, cv), (a, av), (b, bv) = self.expr(e.cond), self.expr(e.then), self.expr(e.otherwise)
        if not (cv or av or bv):
            return dataclasses.replace(e, cond=c, then=a, otherwise=b), False
        a = a if av else self.broadcast(a)
        b = b if bv else self.broadcast(b)
        if not cv:
            return ir.Conditional(_vec(e.type, self.width), c, a, b), True
        if _touches_memory(e.then) or _touches_memory(e.otherwise):
            raise Refused("?: varying along x with a memory access in a branch")
        return self.select(c, a, b, e.type), True

    def address(self, e: ir.Index) -> tuple[ir.Expr, ir.Expr, Stride]:
        base, bv = self.expr(e.base)
        if bv or not isinstance(e.base.type, PointerType | ArrayType):
            raise Refused("memory access through a pointer varying along x")
        index, _ = self.expr(e.index)
        stride = self.strides.of(e.index)
        if stride != 0 and not (isinstance(e.type, ScalarType) and not e.type.is_bool
                                and e.type.name != "half"):
            raise Refused(f"access to {e.type} elements varying along x")
        return base, index, stride

    def load(self, e: ir.Index) -> tuple[ir.Expr, bool]:
        base, index, stride = self.address(e)
        if stride == 0:
            self.counts.uniform += 1
            return dataclasses.replace(e, base=base, index=index), False
        t = _vec(e.type, self.width)
        if stride == 1:
            self.counts.contiguous_loads += 1
            where = ir.Binary(base.type, "+", base, _lane(index, 0))
            return _call(f"vload{self.width}", (_int(0, ULONG), where), t), True
        self.counts.gathers += 1
        return ir.VectorLiteral(t, tuple(ir.Index(e.type, base, _lane(index, k))
                                         for k in range(self.width))), True

    def assign(self, e: ir.Assign) -> tuple[ir.Expr, bool]:
        if not isinstance(e.target, ir.VarRef):
            if isinstance(e.target, ir.Index):
                base, index, stride = self.address(e.target)
                value, vv = self.expr(e.value)
                if stride == 0 and not vv:
                    self.counts.uniform += 1
                    return dataclasses.replace(e, target=dataclasses.replace(
                        e.target, base=base, index=index), value=value), False
            raise Refused("a store varying along x inside an expression")
        value, vv = self.expr(e.value)
        if e.target.name not in self.vector_vars:
            if vv:
                raise Refused(f"{e.target.name}: a uniform variable given a varying value")
            return dataclasses.replace(e, value=value), False
        target = _ref(e.target.name, _vec(e.target.type, self.width))
        if not vv:
            value = self.broadcast(value)
        if e.op in ("<<=", ">>="):
            value = _convert(value, target.type.elem)
        return ir.Assign(target.type, e.op, target, value), True

    # ---- statements

    def store(self, s: ir.ExprStmt) -> tuple[ir.Stmt, ...] | None:
        """A statement that stores through an index varying along x, or None."""
        e = s.expr
        if not (isinstance(e, ir.Assign) and isinstance(e.target, ir.Index)):
            return None
        if self.strides.of(e.target.index) == 0 and self.strides.of(e.target.base) == 0:
            if self.strides.of(e.value) != 0:
                raise Refused("a value varying along x stored to an address uniform along x")
            return None
        base, index, stride = self.address(e.target)
        value = self.vector(e.value)
        t = _vec(e.target.type, self.width)
        if e.op != "=":
            old, _ = self.load(e.target)
            value = ir.Binary(t, e.op[:-1], old, value)
        if stride == 1:
            self.counts.contiguous_stores += 1
            where = ir.Binary(base.type, "+", base, _lane(index, 0))
            call = _call(f"vstore{self.width}", (value, _int(0, ULONG), where), VOID)
            return (ir.ExprStmt(call, loc=s.loc),)
        self.counts.scatters += 1
        self.temps += 1
        temp = f"__ppcl_v{self.temps}"
        stmts: list[ir.Stmt] = [ir.DeclStmt((ir.VarDecl(temp, t, init=value),))]
        for k in range(self.width):
            stmts.append(ir.ExprStmt(ir.Assign(e.target.type, "=", ir.Index(
                e.target.type, base, _lane(index, k)), _lane(_ref(temp, t), k))))
        return (ir.Block(tuple(stmts), loc=s.loc),)

    def stmt(self, s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.Block):
            out: list[ir.Stmt] = []
            for inner in s.stmts:
                out.append(self.stmt(inner))
            return dataclasses.replace(s, stmts=tuple(out))
        if isinstance(s, ir.ExprStmt):
            stored = self.store(s)
            if stored is not None:
                return stored[0]
            new, _ = self.expr(s.expr)
            return dataclasses.replace(s, expr=new)
        if isinstance(s, ir.DeclStmt):
            decls = []
            for d in s.decls:
                if d.space is not AddressSpace.PRIVATE or isinstance(d.type, ArrayType):
                    raise Refused(f"{d.name}: {d.space.value} or array variables")
                if d.name not in self.vector_vars:
                    if isinstance(d.type, PointerType) and d.init is not None:
                        pass
                    init = None if d.init is None else self.expr(d.init)[0]
                    decls.append(dataclasses.replace(d, init=init))
                    continue
                if isinstance(d.type, PointerType):
                    raise Refused(f"{d.name}: a pointer varying along x")
                t = _vec(d.type, self.width)
                init = None if d.init is None else self.vector(d.init)
                decls.append(dataclasses.replace(d, type=t, init=init))
            return dataclasses.replace(s, decls=tuple(decls))
        if isinstance(s, ir.If):
            cond = self.uniform_cond(s.cond, "if")
            return dataclasses.replace(s, cond=cond, then=self.stmt(s.then),
                                       otherwise=None if s.otherwise is None
                                       else self.stmt(s.otherwise))
        if isinstance(s, ir.For):
            cond = None if s.cond is None else self.uniform_cond(s.cond, "for")
            step = None if s.step is None else self.uniform_cond(s.step, "for step")
            init = None if s.init is None else self.stmt(s.init)
            return dataclasses.replace(s, init=init, cond=cond, step=step,
                                       body=self.stmt(s.body))
        if isinstance(s, ir.While | ir.DoWhile):
            cond = self.uniform_cond(s.cond, "loop")
            return dataclasses.replace(s, cond=cond, body=self.stmt(s.body))
        if isinstance(s, ir.Switch):
            expr = self.uniform_cond(s.expr, "switch")
            body = self.stmt(s.body)
            assert isinstance(body, ir.Block)
            return dataclasses.replace(s, expr=expr, body=body)
        if isinstance(s, ir.Return):
            if s.value is not None:
                raise Refused("return with a value")
            return s
        return s  # Break, Continue, Empty, Case, Default

    def uniform_cond(self, e: ir.Expr, what: str) -> ir.Expr:
        new, varying = self.expr(e)
        if varying:
            raise Refused(f"{what} whose condition varies along x")
        return new


def original_query(name: str, width: int, lane: ir.Expr) -> ir.Expr:
    """The value the original work-item of ``lane`` got from ``name(0)`` in the merged item
    (a ``ulong``)."""
    w = _int(width, ULONG)
    if name == "get_global_id":
        return ir.Binary(ULONG, "+", _ref(_BASE, ULONG), ir.Cast(ULONG, lane))
    if name == "get_local_id":
        scaled = ir.Binary(ULONG, "*", _query_call("get_local_id"), w)
        return ir.Binary(ULONG, "+", scaled, ir.Cast(ULONG, lane))
    if name in ("get_local_size", "get_enqueued_local_size"):
        return ir.Binary(ULONG, "*", _query_call(name), w)
    if name == "get_global_size":
        return _ref(SIZE_PARAM, ULONG)
    return _query_call(name)  # group id, group count, offset: the same for every lane


class _ScalarLanes(Rewriter):
    """The original body run for the fallback lane ``_LANE``: queries along 0 give the
    original work-item's values, ``return`` moves to the next lane."""

    def __init__(self, width: int):
        self.width = width

    def rewrite_Call(self, e: ir.Call) -> ir.Expr:
        q = _query(e)
        if q is None or q[1] != 0:
            return e
        return ir.Cast(e.type, original_query(q[0], self.width, _ref(_LANE, UINT)),
                       implicit=True)

    def rewrite_Return(self, s: ir.Return) -> ir.Stmt:
        return ir.Continue(loc=s.loc)


# ------------------------------------------------------------------ checks and structure


def _touches_memory(e: ir.Node) -> bool:
    return any(isinstance(n, ir.Index | ir.Assign | ir.Call) or
               (isinstance(n, ir.Unary) and n.op in ("*", "++", "--", "p++", "p--"))
               for n in walk(e))


def _writes_memory(s: ir.Node) -> bool:
    for n in walk(s):
        if isinstance(n, ir.Assign) and not isinstance(n.target, ir.VarRef):
            return True
        if isinstance(n, ir.Unary) and n.op in ("++", "--", "p++", "p--") \
                and not isinstance(n.operand, ir.VarRef):
            return True
        if isinstance(n, ir.Call) and (n.builtin is None or n.name.startswith("vstore")):
            return True
    return False


def _check(fn: ir.Function) -> None:
    if fn.body is None or not fn.is_kernel:
        raise Refused(f"{fn.name} is not a kernel with a body")
    for n in walk(fn.body):
        if isinstance(n, ir.Call) and n.name.startswith(_REFUSED_CALLS):
            raise Refused(f"{n.name} ({'a barrier' if n.name == 'barrier' else 'not per lane'})")
        if isinstance(n, ir.For | ir.While | ir.DoWhile) and any(
                isinstance(r, ir.Return) for r in walk(n)):
            raise Refused("return inside a loop")
    for p in fn.params:
        if p.name == SIZE_PARAM:
            raise Refused(f"the kernel already has a parameter {SIZE_PARAM}")


def _explicit_width(fn: ir.Function) -> int:
    widest = 1
    types: list[Type] = [p.type for p in fn.params]
    assert fn.body is not None
    for n in walk(fn.body):
        if isinstance(n, ir.Expr):
            types.append(n.type)
        elif isinstance(n, ir.DeclStmt):
            types.extend(d.type for d in n.decls)
    for t in types:
        while isinstance(t, PointerType | ArrayType):
            t = t.pointee if isinstance(t, PointerType) else t.elem
        if isinstance(t, VectorType):
            widest = max(widest, t.width)
    return widest


def _is_return(s: ir.Stmt) -> bool:
    if isinstance(s, ir.Block) and len(s.stmts) == 1:
        s = s.stmts[0]
    return isinstance(s, ir.Return) and s.value is None


def _segments(body: ir.Block, strides: Strides) -> list[tuple[ir.Expr | None, list[ir.Stmt]]]:
    """The top level split at tail guards: [(None, S0), (exit condition 1, S1), ...]; lanes
    for which an exit condition holds leave the kernel there."""
    stmts = list(body.stmts)
    while stmts and (isinstance(stmts[-1], ir.Empty) or _is_return(stmts[-1])):
        stmts.pop()
    segments: list[tuple[ir.Expr | None, list[ir.Stmt]]] = [(None, [])]
    for i, s in enumerate(stmts):
        if isinstance(s, ir.If) and strides.of(s.cond) != 0:
            if s.otherwise is None and _is_return(s.then):
                segments.append((s.cond, []))
                continue
            if s.otherwise is None and i == len(stmts) - 1:
                exit_cond = ir.Unary(INT, "!", s.cond)
                inner = list(s.then.stmts) if isinstance(s.then, ir.Block) else [s.then]
                segments.append((exit_cond, inner))
                continue
            raise Refused("an if whose condition varies along x (only tail guards are kept)")
        segments[-1][1].append(s)
    for _, stmts_before in segments[:-1]:
        if any(_writes_memory(s) for s in stmts_before):
            raise Refused("memory written before a tail guard")
    for cond, _ in segments[1:]:
        assert cond is not None
        if _touches_memory(cond):
            raise Refused("a tail guard that reads memory")
    return segments


def _vector_path(fn: ir.Function, width: int) -> tuple[ir.Block, _Vectorizer]:
    _check(fn)
    assert fn.body is not None
    strides = Strides(fn.body)
    v = _Vectorizer(fn, width, strides)
    segments = _segments(fn.body, strides)
    inner: list[ir.Stmt] = [ir.Return()]
    for cond, stmts in reversed(segments):
        body = [v.stmt(s) for s in stmts] + inner
        if cond is None:
            inner = body
            continue
        exits = v.nonzero(v.vector(cond), 4)
        leave = _call("any", (exits,), INT)
        inner = [ir.If(ir.Unary(INT, "!", leave), ir.Block(tuple(body)))]
    return ir.Block(tuple(inner)), v


def _queries_group_x(fn: ir.Function) -> bool:
    assert fn.body is not None
    for n in walk(fn.body):
        if isinstance(n, ir.Call) and n.builtin is not None:
            q = _query(n)
            if q is not None and q[0] in _GROUP_X_QUERIES and q[1] in (0, None):
                return True
    return False


# ------------------------------------------------------------------ public interface


def vectorize_facts(fn: ir.Function) -> VectorizeFacts:
    """What holistic vectorization of ``fn`` would do, or why it cannot (a dry run of
    ``vectorize`` at 4 lanes, so the two agree)."""
    try:
        explicit = _explicit_width(fn) if fn.body is not None else 1
        _, v = _vector_path(fn, 4)
    except Refused as refused:
        return VectorizeFacts(fn.name, False, str(refused), 0,
                              explicit if fn.body is not None else 1, 0, 0)
    c = v.counts
    parts = [f"{c.contiguous_loads} contiguous loads", f"{c.contiguous_stores} contiguous stores"]
    if c.gathers or c.scatters:
        parts.append(f"{c.gathers} gathered loads, {c.scatters} scattered stores (lane by lane)")
    if c.uniform:
        parts.append(f"{c.uniform} uniform accesses")
    # live values: every variable that becomes a vector, plus one per contiguous access in
    # flight (a crude bound, like the paper's register count per work-item)
    registers = max(1, len(v.vector_vars) + c.contiguous_loads + c.gathers)
    return VectorizeFacts(fn.name, True, ", ".join(parts), registers, explicit,
                          c.contiguous_loads + c.contiguous_stores, c.gathers + c.scatters,
                          _queries_group_x(fn))


def choose_width(facts: VectorizeFacts, order: ExecutionOrder,
                 element_bytes: int) -> tuple[int, str]:
    """Algorithm 4: the SIMD width over the element size, bounded by the registers a
    work-item may use, divided by the explicit vector width; 1 means do not vectorize."""
    if not facts.possible:
        return 1, f"not vectorizable: {facts.reason}"
    if order.vectorizes_items and facts.explicit_width == 1:
        return 1, "the device's compiler already vectorizes across work-items"
    simd = max(1, order.vector_bytes // max(1, element_bytes))
    by_registers = max(1, order.registers // max(1, facts.registers_per_item))
    width = min(simd, by_registers) // facts.explicit_width
    width = min(width, _MAX_LANES // facts.explicit_width)
    if width < 2:
        return 1, (f"{simd} lanes of {element_bytes} bytes, {by_registers} by registers, "
                   f"explicit width {facts.explicit_width}: nothing to gain")
    width = 1 << (width.bit_length() - 1)  # OpenCL vector widths are powers of two
    return width, (f"{width} lanes: {order.vector_bytes}-byte vectors of {element_bytes}-byte "
                   f"elements, {order.registers} registers / {facts.registers_per_item} per item, "
                   f"explicit width {facts.explicit_width}")


def vectorize(fn: ir.Function, width: int, name: str) -> ir.Function:
    """The kernel ``fn`` with ``width`` consecutive work-items along 0 merged into one
    (see the module docstring for the launch); raises ``Refused`` with the reason."""
    if width not in (2, 4, 8, 16):
        raise Refused(f"width {width} is not an OpenCL vector width of 2 to 16")
    if _explicit_width(fn) > 1 and _explicit_width(fn) * width > _MAX_LANES:
        raise Refused(f"explicit vectors of {_explicit_width(fn)} times {width} lanes pass 16")
    vector_body, _ = _vector_path(fn, width)
    assert fn.body is not None
    size = _ref(SIZE_PARAM, ULONG)
    start = ir.Binary(ULONG, "-", _query_call("get_global_id"), _offset())
    base = ir.Binary(ULONG, "+", _offset(), ir.Binary(ULONG, "*", start, _int(width, ULONG)))
    end = ir.Binary(ULONG, "+", _offset(), size)
    full = ir.Binary(INT, "<=", ir.Binary(ULONG, "+", _ref(_BASE, ULONG), _int(width, ULONG)),
                     end)
    lane_body = _ScalarLanes(width).rewrite(fn.body)
    lane = _ref(_LANE, UINT)
    exists = ir.Binary(INT, "<", ir.Binary(ULONG, "+", _ref(_BASE, ULONG), ir.Cast(ULONG, lane)),
                       end)
    fallback = ir.For(
        ir.DeclStmt((ir.VarDecl(_LANE, UINT, init=_int(0, UINT)),)),
        ir.Binary(INT, "<", lane, _int(width, UINT)),
        ir.Unary(UINT, "p++", lane),
        ir.Block((ir.If(ir.Unary(INT, "!", exists), ir.Continue()), lane_body)))
    body = ir.Block((
        ir.DeclStmt((ir.VarDecl(_BASE, ULONG, init=base),)),
        ir.If(full, vector_body),
        fallback,
    ), loc=fn.body.loc)
    params = fn.params + (ir.Param(SIZE_PARAM, ULONG),)
    return dataclasses.replace(fn, name=name, params=params, body=body)
