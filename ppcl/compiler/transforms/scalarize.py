"""Vector-typed private values split into scalars inside hot work-item loops.

gcc vectorizes a work-item loop only when its statements are scalar: a ``float4`` temporary or a
``float4`` load (``ppcl_float4 q = pos[j];``) stops it ("no vectype for stmt"). A kernel written
with OpenCL vectors, such as n-body on ``float4`` positions, then runs one work-item at a time.
This pass rewrites the body of a work-item loop so that every vector-typed private variable
declared in it becomes one scalar per component, and every statement that computes a vector
(declaration, assignment to a variable, a context array entry or memory) becomes one statement
per component. Vector values then only exist in memory, read and written a component at a time,
and the work-item loop vectorizes along work-items (the vectors' layout is what the work-item
loop strides over).

Regions inside a group-level loop are rewritten: they run once per iteration of an
interchanged or barrier loop, which is where the time goes. So is any other region that loads
or stores a vector element of ``char`` or ``short`` components (RGBA ``uchar4`` pixels): gcc
has no vector type for such an element, so that region runs one work-item at a time whatever
else it does; and any region calling an element-wise builtin on vectors (``fmin(a[i], b[i])``
on ``float4``), whose overload's lane loop gcc does not vectorize back. An element-wise builtin (``ir.builtins.ELEMENTWISE`` but ``select``, and every
``convert_``) gives component ``i`` as the scalar builtin of its arguments' components, the
function each component of the vector overload calls; a component of a vector element in
memory becomes a scalar access (``transforms/components.py``), and so does a vector read or
written through a cast pointer (``*(float8 *)&x[8 * k]``). Comparisons, ``!``, ``&&``, ``||``,
``select``, ``?:`` on a vector condition, the relational builtins, ``any`` and ``all`` take
their component forms (-1 where true). A region with a vector construct that has no
component form here (a call of another builtin returning a vector) is left as it was.

Pass name: part of ``workgroup``.
"""

from __future__ import annotations

import dataclasses

from ppcl.compiler.analysis.effects import is_effect_free
from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.builtin_signatures import RELATIONAL_BINARY, RELATIONAL_UNARY
from ppcl.compiler.ir.builtins import ELEMENTWISE, BuiltinError, resolve
from ppcl.compiler.ir.types import (
    INT,
    SIZE_T,
    UINT,
    AddressSpace,
    PointerType,
    ScalarType,
    VectorType,
)
from ppcl.compiler.ir.visit import Node, Rewriter, children, map_child_stmts, walk
from ppcl.compiler.transforms.components import (
    component,
    elementwise_lane,
    geometric_by_lanes,
    normalize_lane,
    wrapped_lane,
)

_ELEMENTWISE = frozenset(("+", "-", "*", "/"))


class _Unsupported(Exception):
    """A vector construct without a component form: the region is kept as it is."""


def _lvalue_uses(body: Node) -> set[str]:
    """Variables whose address is taken, that are incremented or whose components are
    selected by a variable subscript (kept as vectors)."""
    names: set[str] = set()
    for n in walk(body):
        if isinstance(n, ir.Unary) and n.op in ("&", "++", "--", "p++", "p--"):
            names |= {r.name for r in walk(n.operand) if isinstance(r, ir.VarRef)}
        elif isinstance(n, ir.Index) and isinstance(n.base.type, VectorType):
            names |= {r.name for r in walk(n.base) if isinstance(r, ir.VarRef)}
    return names


class _Scalarizer(Rewriter):
    def __init__(self, names: dict[str, VectorType], counter: list[int], fast: bool = False):
        self.names = names  # scalarized variable -> its vector type
        self.counter = counter
        self.fast = fast  # -cl-fast-relaxed-math: length and distance sum in float

    # ------------------------------------------------------------ components

    def part(self, name: str, i: int) -> str:
        return f"{name}__s{i}"

    def comp(self, e: ir.Expr, i: int) -> ir.Expr:
        """Component ``i`` of the vector expression ``e`` as a scalar expression."""
        t = e.type
        assert isinstance(t, VectorType)
        if i >= t.width:  # the undefined fourth lane of a 3-vector (``v.hi``, ``v.odd``)
            raise _Unsupported
        elem = t.elem
        if isinstance(e, ir.VarRef) and e.name in self.names:
            return ir.VarRef(elem, self.part(e.name, i), loc=e.loc)
        if isinstance(e, ir.VarRef | wg.ContextRef | ir.Index) and is_effect_free(e):
            return self.element(self.rewrite(e), i)
        masked = self.mask_lane(e, i)
        if masked is not None:
            return masked
        if isinstance(e, ir.Call):
            loaded = self.loaded(e, i)
            return loaded if loaded is not None else self.call(e, i)
        through = self.through_pointer(e, i)
        if through is not None:
            return through
        arithmetic = elementwise_lane(e, i, self.comp)
        if arithmetic is not None:
            return arithmetic
        if isinstance(e, ir.Swizzle) and isinstance(e.base.type, VectorType):
            return self.comp(e.base, e.indices[i])
        if isinstance(e, ir.Cast) and not isinstance(e.operand.type, VectorType):
            if not is_effect_free(e.operand):
                raise _Unsupported
            scalar = self.rewrite(e.operand)
            return scalar if scalar.type == elem else ir.Cast(elem, scalar, True, loc=e.loc)
        if isinstance(e, ir.Cast) and e.operand.type == t:
            return self.comp(e.operand, i)
        if isinstance(e, ir.VectorLiteral):
            if len(e.elems) == 1 and not isinstance(e.elems[0].type, VectorType):
                return self._scalar_elem(e.elems[0], elem)
            offset = 0
            for part in e.elems:
                width = part.type.width if isinstance(part.type, VectorType) else 1
                if offset <= i < offset + width:
                    if isinstance(part.type, VectorType):
                        return self.comp(part, i - offset)
                    return self._scalar_elem(part, elem)
                offset += width
        raise _Unsupported

    def operand(self, e: ir.Expr, i: int, elem: ScalarType) -> ir.Expr:
        """Component ``i`` of a vector operand, or a scalar operand as it is (converted to
        ``elem``): OpenCL widens a scalar operand of a vector operator to every component."""
        if isinstance(e.type, VectorType):
            return self.comp(e, i)
        return self._scalar_elem(e, elem)

    def mask_lane(self, e: ir.Expr, i: int) -> ir.Expr | None:
        """Component ``i`` of a vector comparison, logical or bitwise operator, ``select`` or
        ``?:``, as scalar C computes it; None for other expressions.

        OpenCL's vector comparisons and ``!``, ``&&``, ``||`` give -1 where true and 0 where
        false (``-(a_i > b_i)``), and ``select`` and ``?:`` on a vector condition take the
        component whose condition has its most significant bit set. A region comparing
        vectors (``int8 m = d > 0.0f; select(c, 1.0f - c, m)``) used to keep its vectors."""
        t = e.type
        assert isinstance(t, VectorType)
        elem = t.elem
        if isinstance(e, ir.Binary) and e.op in _COMPARISONS | {"&&", "||"}:
            vector = e.lhs.type if isinstance(e.lhs.type, VectorType) else e.rhs.type
            assert isinstance(vector, VectorType)
            lhs = self.operand(e.lhs, i, vector.elem)
            rhs = self.operand(e.rhs, i, vector.elem)
            if e.op in ("&&", "||"):  # both sides are evaluated: they are free of effects
                lhs, rhs = _compared_with_zero(lhs, "!="), _compared_with_zero(rhs, "!=")
            return _all_ones_if(ir.Binary(INT, e.op, lhs, rhs, loc=e.loc), elem)
        if isinstance(e, ir.Unary) and e.op == "!":
            return _all_ones_if(_compared_with_zero(self.comp(e.operand, i), "=="), elem)
        if isinstance(e, ir.Binary) and e.op in ("&", "|", "^") and elem.is_integer:
            return wrapped_lane(elem, e.op, (self.operand(e.lhs, i, elem),
                                             self.operand(e.rhs, i, elem)), e.loc)
        if isinstance(e, ir.Binary) and e.op in ("<<", ">>") and elem.is_integer:
            # OpenCL takes a lane's count modulo its width in bits (8 for uchar)
            count = ir.Binary(elem, "&", self.operand(e.rhs, i, elem),
                              ir.IntLit(elem, elem.bits - 1, loc=e.loc), loc=e.loc)
            value = self.comp(e.lhs, i)
            if elem.size >= 4:
                return ir.Binary(elem, e.op, value, count, loc=e.loc)
            # in uint: a negative char shifted left is undefined in C's int
            wide = (ir.Cast(UINT, value, loc=e.loc), ir.Cast(UINT, count, loc=e.loc))
            return ir.Cast(elem, ir.Binary(UINT, e.op, *wide, loc=e.loc), loc=e.loc)
        if isinstance(e, ir.Unary) and e.op == "~" and elem.is_integer:
            return wrapped_lane(elem, "~", (self.comp(e.operand, i),), e.loc)
        if isinstance(e, ir.Call) and e.builtin is not None and e.name in _RELATIONAL \
                and isinstance(e.args[0].type, VectorType):
            lanes = tuple(self.comp(a, i) for a in e.args)
            return _all_ones_if(_scalar_call(e.name, lanes, e.loc), elem)
        if isinstance(e, ir.Call) and e.builtin is not None and e.name == "select" \
                and all(isinstance(a.type, VectorType) for a in e.args):
            otherwise, then, cond = e.args
            return ir.Conditional(elem, self.msb_set(cond, i), self.comp(then, i),
                                  self.comp(otherwise, i), loc=e.loc)
        if isinstance(e, ir.Conditional):
            if isinstance(e.cond.type, VectorType):
                cond = self.msb_set(e.cond, i)
            elif is_effect_free(e.cond):  # evaluated once per component
                cond = self.rewrite(e.cond)
            else:
                raise _Unsupported
            return ir.Conditional(elem, cond, self.operand(e.then, i, elem),
                                  self.operand(e.otherwise, i, elem), loc=e.loc)
        return None

    def msb_set(self, cond: ir.Expr, i: int) -> ir.Expr:
        """Whether component ``i`` of the integer vector ``cond`` has its most significant
        bit set: the comparison itself where ``cond`` is one (its -1 has it, its 0 not)."""
        t = cond.type
        assert isinstance(t, VectorType)
        if isinstance(cond, ir.Binary) and cond.op in _COMPARISONS:
            lane = self.comp(cond, i)
            assert isinstance(lane, ir.Unary | ir.Cast)
            return _comparison_of(lane)
        value = self.comp(cond, i)
        if t.elem.is_signed:
            return ir.Binary(INT, "<", value, ir.IntLit(t.elem, 0, loc=cond.loc), loc=cond.loc)
        top = ir.IntLit(t.elem, 1 << (t.elem.bits - 1), loc=cond.loc)
        return ir.Binary(INT, "!=", ir.Binary(t.elem, "&", value, top, loc=cond.loc),
                         ir.IntLit(t.elem, 0, loc=cond.loc), loc=cond.loc)

    def through_pointer(self, e: ir.Expr, i: int) -> ir.Expr | None:
        """Component ``i`` of ``*(float8 *)p``, a vector read or written through a pointer to
        its components cast to the vector's (``*(__global float8 *)&x[8 * k]``), as the
        scalar ``p[i]`` (``x[8 * k + i]``); None for other expressions."""
        t = e.type
        if not (isinstance(e, ir.Unary) and e.op == "*" and isinstance(t, VectorType)
                and isinstance(e.operand, ir.Cast)):
            return None
        inner = e.operand.operand
        if not (isinstance(inner.type, PointerType) and inner.type.pointee == t.elem
                and is_effect_free(inner)):
            return None
        pointer = self.rewrite(inner)
        if isinstance(pointer, ir.Unary) and pointer.op == "&" \
                and isinstance(pointer.operand, ir.Index):  # &x[k] + i is &x[k + i]
            at = pointer.operand
            index = ir.Binary(at.index.type, "+", at.index,
                              ir.IntLit(at.index.type, i, loc=e.loc), loc=e.loc)
            return ir.Index(t.elem, at.base, index, loc=e.loc)
        return ir.Index(t.elem, pointer, ir.IntLit(INT, i, loc=e.loc), loc=e.loc)

    def element(self, e: ir.Expr, i: int) -> ir.Expr:
        """Component ``i`` of a vector value read in place (a variable, a context array entry,
        an element in memory, accessed as a scalar there)."""
        assert isinstance(e.type, VectorType)
        scalar = component(e, i) if isinstance(e, ir.Index) else None
        if scalar is not None:
            return scalar
        return ir.Swizzle(e.type.elem, e, (i,), f"s{i:x}", loc=e.loc)

    def call(self, e: ir.Call, i: int) -> ir.Expr:
        """Component ``i`` of an element-wise builtin: the scalar builtin of the vector
        arguments' components and the scalar arguments (``fmin(v, 1.0f)``)."""
        t = e.type
        assert isinstance(t, VectorType)
        name = _scalar_builtin(e)
        if name is None:
            raise _Unsupported
        args: list[ir.Expr] = []
        for a in e.args:
            if isinstance(a.type, VectorType):
                if a.type.width != t.width:
                    raise _Unsupported
                args.append(self.comp(a, i))
            elif isinstance(a.type, ScalarType):
                args.append(self._scalar_elem(a, a.type))
            else:
                raise _Unsupported
        try:
            overload = resolve(name, [a.type for a in args])
        except BuiltinError:
            raise _Unsupported from None
        if overload.ret != t.elem or overload.variadic:
            raise _Unsupported
        converted = tuple(a if a.type == p else ir.Cast(p, a, True, loc=a.loc)
                          for a, p in zip(args, overload.params))
        return ir.Call(t.elem, name, converted, builtin=overload.key, loc=e.loc)

    def _offset(self, e: ir.Call, width: int, k: int) -> ir.Expr:
        """``offset * width + k``, the element index of component ``k`` of ``vloadN``'s or
        ``vstoreN``'s ``offset`` (its second to last argument)."""
        offset = e.args[-2]
        if not is_effect_free(offset) or not is_effect_free(e.args[-1]):
            raise _Unsupported
        scaled = ir.Binary(SIZE_T, "*", self.rewrite(offset), ir.IntLit(SIZE_T, width),
                           loc=e.loc)
        return ir.Binary(SIZE_T, "+", scaled, ir.IntLit(SIZE_T, k), loc=e.loc)

    def loaded(self, e: ir.Call, i: int) -> ir.Expr | None:
        """Component ``i`` of ``vloadN(o, p)`` (``p[o * N + i]``), of ``vload_halfN(o, p)``
        (``vload_half(o * N + i, p)``) or of ``cross(a, b)`` (its products of components, as
        its C lowering computes them); None for other calls."""
        t = e.type
        assert isinstance(t, VectorType)
        if e.builtin is None:
            return None
        width = _unaligned_width(e.name, "vload")
        if width is not None:
            pointer = self.rewrite(e.args[1])
            return ir.Index(t.elem, pointer, self._offset(e, width, i), loc=e.loc)
        width = _unaligned_width(e.name, "vload_half")
        if width is not None:
            index = self._offset(e, width, i)
            pointer = self.rewrite(e.args[1])
            return _scalar_call("vload_half", (index, pointer), e.loc)
        normalized = normalize_lane(e, i, self.comp, self.fast)
        if normalized is not None:
            return normalized
        if e.name == "cross":
            if i == 3:
                return ir.FloatLit(t.elem, 0.0, loc=e.loc)
            a, b = e.args
            j, k = (i + 1) % 3, (i + 2) % 3
            left = ir.Binary(t.elem, "*", self.comp(a, j), self.comp(b, k), loc=e.loc)
            right = ir.Binary(t.elem, "*", self.comp(a, k), self.comp(b, j), loc=e.loc)
            return ir.Binary(t.elem, "-", left, right, loc=e.loc)
        return None

    def stored(self, e: ir.Call, loc: Loc) -> ir.Stmt | None:
        """``vstoreN(v, o, p)`` or ``vstore_halfN[_mode](v, o, p)`` as a store per component,
        every component computed first (it may read what the stores write); None for other
        calls."""
        if e.builtin is None or not isinstance(e.args[0].type, VectorType):
            return None
        width = _unaligned_width(e.name, "vstore")
        half = None
        if width is None:
            rest = e.name[len("vstore_half"):] if e.name.startswith("vstore_half") else ""
            digits = rest.split("_")[0]
            if not digits.isdigit():
                return None
            width, half = int(digits), "vstore_half" + rest[len(digits):]
        temps: list[ir.Stmt] = []
        stores: list[ir.Stmt] = []
        pointer = self.rewrite(e.args[2])
        for k in range(width):
            self.counter[0] += 1
            name = f"__ppcl_sv{self.counter[0]}"
            value = self.comp(e.args[0], k)
            temps.append(ir.DeclStmt((ir.VarDecl(name, value.type, init=value, loc=loc),),
                                     loc=loc))
            ref = ir.VarRef(value.type, name, loc=loc)
            index = self._offset(e, width, k)
            if half is None:
                target = ir.Index(value.type, pointer, index, loc=loc)
                stores.append(ir.ExprStmt(ir.Assign(value.type, "=", target, ref), loc=loc))
            else:
                stores.append(ir.ExprStmt(_scalar_call(half, (ref, index, pointer), loc),
                                          loc=loc))
        return ir.Block((*temps, *stores), loc=loc)

    def _scalar_elem(self, e: ir.Expr, elem: ScalarType) -> ir.Expr:
        if not is_effect_free(e):
            raise _Unsupported
        scalar = self.rewrite(e)
        return scalar if scalar.type == elem else ir.Cast(elem, scalar, True, loc=e.loc)

    # ------------------------------------------------------------ rvalues kept as they are

    def rewrite_Swizzle(self, e: ir.Swizzle) -> ir.Expr:
        if len(e.indices) == 1 and isinstance(e.base.type, VectorType):
            try:
                return self.comp(e.base, e.indices[0])
            except _Unsupported:
                pass
        return dataclasses.replace(e, base=self.rewrite(e.base))

    def rewrite_Assign(self, e: ir.Assign) -> ir.Expr:
        """An assignment inside an expression to a whole (or part of a) split vector: its
        target was rebuilt as a vector literal, and storing into that would be lost."""
        target = e.target
        while isinstance(target, ir.Swizzle | ir.Index | ir.Member):
            target = target.base
        if isinstance(target, ir.VectorLiteral):
            raise _Unsupported
        return e

    def rewrite_Call(self, e: ir.Call) -> ir.Expr:
        """``dot``, ``length`` and ``distance`` of vectors by their components, as their C
        lowering computes them (``components.geometric_by_lanes``); ``any`` and ``all`` of
        an integer vector by its components' top bits."""
        if e.builtin is not None and e.name in ("any", "all") and len(e.args) == 1 \
                and isinstance(e.args[0].type, VectorType):
            try:
                v = e.args[0]
                assert isinstance(v.type, VectorType)
                tops = [self.msb_set(v, i) for i in range(v.type.width)]
            except _Unsupported:
                return e
            joined = tops[0]
            for top in tops[1:]:
                joined = ir.Binary(INT, "||" if e.name == "any" else "&&", joined, top,
                                   loc=e.loc)
            return joined if e.type == INT else ir.Cast(e.type, joined, True, loc=e.loc)
        written = geometric_by_lanes(e, self.comp, self.fast)
        return e if written is None else written

    def rewrite_VarRef(self, e: ir.VarRef) -> ir.Expr:
        t = self.names.get(e.name)
        if t is None:
            return e
        # a whole scalarized vector where no component form applies: rebuild it
        return ir.VectorLiteral(t, tuple(self.comp(e, i) for i in range(t.width)), loc=e.loc)

    # ------------------------------------------------------------ statements

    def statement(self, s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.Block):
            return ir.Block(tuple(self.statement(c) for c in s.stmts), loc=s.loc)
        if isinstance(s, ir.DeclStmt):
            return self.declaration(s)
        if isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.Assign) and isinstance(
                s.expr.type, VectorType):
            return self.assignment(s.expr, s.loc)
        if isinstance(s, ir.If):
            other = None if s.otherwise is None else self.statement(s.otherwise)
            return ir.If(self.rewrite(s.cond), self.statement(s.then), other, loc=s.loc)
        if isinstance(s, ir.For):
            init = None if s.init is None else self.statement(s.init)
            cond = None if s.cond is None else self.rewrite(s.cond)
            step = None if s.step is None else self.rewrite(s.step)
            return ir.For(init, cond, step, self.statement(s.body), s.unroll, loc=s.loc)
        if isinstance(s, ir.While):
            return ir.While(self.rewrite(s.cond), self.statement(s.body), loc=s.loc)
        if isinstance(s, ir.DoWhile):
            return ir.DoWhile(self.statement(s.body), self.rewrite(s.cond), loc=s.loc)
        if isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.Call):
            stores = self.stored(s.expr, s.loc)
            if stores is not None:
                return stores
        if isinstance(s, ir.ExprStmt):
            return ir.ExprStmt(self.rewrite(s.expr), loc=s.loc)
        if isinstance(s, ir.Switch):
            raise _Unsupported
        result = self.rewrite(s)
        assert isinstance(result, ir.Stmt)
        return result

    def declaration(self, s: ir.DeclStmt) -> ir.Stmt:
        """One declaration statement still (a block would end the variables' scope)."""
        out: list[ir.VarDecl] = []
        for d in s.decls:
            t = self.names.get(d.name)
            if t is None:
                init = None if d.init is None else self.rewrite(d.init)
                out.append(dataclasses.replace(d, init=init))
                continue
            if isinstance(d.init, ir.InitList):
                raise _Unsupported
            for i in range(t.width):
                init = None if d.init is None else self.comp(d.init, i)
                out.append(ir.VarDecl(self.part(d.name, i), t.elem, init=init, loc=d.loc))
        return ir.DeclStmt(tuple(out), loc=s.loc)

    def targets(self, target: ir.Expr, width: int) -> list[ir.Expr]:
        if isinstance(target, ir.VarRef) and target.name in self.names:
            return [self.comp(target, i) for i in range(width)]
        if isinstance(target, ir.Swizzle) and isinstance(target.base, ir.VarRef) \
                and target.base.name in self.names:
            return [self.comp(target.base, k) for k in target.indices]
        if isinstance(target, ir.VarRef | wg.ContextRef | ir.Index) and is_effect_free(target):
            return [self.element(self.rewrite(target), i) for i in range(width)]
        through = [self.through_pointer(target, i) for i in range(width)]
        if all(through):
            return [c for c in through if c is not None]
        # components of a context array entry or of memory (``acc.xyz += s * r.xyz``)
        if isinstance(target, ir.Swizzle) and isinstance(target.base, wg.ContextRef | ir.Index) \
                and isinstance(target.base.type, VectorType) and is_effect_free(target.base):
            base = self.rewrite(target.base)
            return [self.element(base, k) for k in target.indices]
        raise _Unsupported

    def assignment(self, e: ir.Assign, loc: Loc) -> ir.Stmt:
        t = e.type
        assert isinstance(t, VectorType)
        bitwise = e.op[:-1] in ("&", "|", "^") and t.elem.is_integer
        if e.op[:-1] not in _ELEMENTWISE and e.op != "=" and not bitwise:
            raise _Unsupported  # shifts keep their vector form
        targets = self.targets(e.target, t.width)
        # every component of the value first: it may read the target
        temps: list[ir.Stmt] = []
        stores: list[ir.Stmt] = []
        for i, target in enumerate(targets):
            self.counter[0] += 1
            name = f"__ppcl_sv{self.counter[0]}"
            value = self.comp(e.value, i)
            temps.append(ir.DeclStmt((ir.VarDecl(name, value.type, init=value, loc=loc),),
                                     loc=loc))
            ref: ir.Expr = ir.VarRef(value.type, name, loc=loc)
            op = e.op
            if op != "=" and t.elem.is_integer and t.elem.size < 4:
                # a char or short lane wraps: target = (elem)(target op value), not C's
                # compound assignment, whose operation is in int
                ref, op = wrapped_lane(t.elem, op[:-1], (target, ref), loc), "="
            stores.append(ir.ExprStmt(ir.Assign(target.type, op, target, ref), loc=loc))
        return ir.Block((*temps, *stores), loc=loc)


_COMPARISONS = frozenset(("<", ">", "<=", ">=", "==", "!="))
_RELATIONAL = frozenset(RELATIONAL_BINARY + RELATIONAL_UNARY)


def _all_ones_if(truth: ir.Expr, elem: ScalarType) -> ir.Expr:
    """``-(elem)truth``: -1 (all bits set) where the scalar ``truth`` (0 or 1) holds, as a
    component of a vector comparison is."""
    value = truth if elem == INT else ir.Cast(elem, truth, True, loc=truth.loc)
    return ir.Unary(elem, "-", value, loc=truth.loc)


def _comparison_of(lane: ir.Expr) -> ir.Expr:
    """The scalar comparison inside ``_all_ones_if``'s result."""
    assert isinstance(lane, ir.Unary)
    inner = lane.operand
    return inner.operand if isinstance(inner, ir.Cast) else inner


def _compared_with_zero(e: ir.Expr, op: str) -> ir.Expr:
    """``e != 0`` or ``e == 0`` for a scalar ``e`` of any arithmetic type."""
    t = e.type
    assert isinstance(t, ScalarType)
    zero = ir.IntLit(t, 0, loc=e.loc) if t.is_integer else ir.FloatLit(t, 0.0, loc=e.loc)
    return ir.Binary(INT, op, e, zero, loc=e.loc)


def _scalar_builtin(e: ir.Call) -> str | None:
    """The scalar builtin each component of a call of an element-wise vector builtin calls,
    or None: ``convert_float4_sat`` -> ``convert_float_sat``, ``hypot`` -> ``hypot``."""
    if e.builtin is None or not isinstance(e.type, VectorType):
        return None
    if e.name.startswith("convert_") and len(e.args) == 1:
        rest = e.name[len("convert_"):]
        vector = str(e.type)
        return f"convert_{e.type.elem}{rest[len(vector):]}" if rest.startswith(vector) else None
    return e.name if e.name in ELEMENTWISE and e.name != "select" else None


def _unaligned_width(name: str, prefix: str) -> int | None:
    """N of ``vloadN``/``vstoreN``/``vload_halfN`` (``prefix`` and digits, nothing after),
    or None: the aligned ``vloada_halfN`` and ``vstorea_halfN`` lay ``3`` out as 4."""
    rest = name[len(prefix):] if name.startswith(prefix) else ""
    return int(rest) if rest.isdigit() else None


def _scalar_call(name: str, args: tuple[ir.Expr, ...], loc: Loc) -> ir.Call:
    """A call of the scalar builtin ``name``, its arguments converted to the overload's."""
    try:
        overload = resolve(name, [a.type for a in args])
    except BuiltinError:
        raise _Unsupported from None
    converted = tuple(a if a.type == p else ir.Cast(p, a, True, loc=a.loc)
                      for a, p in zip(args, overload.params))
    return ir.Call(overload.ret, name, converted, builtin=overload.key, loc=loc)


def _lane_call(body: Node) -> str | None:
    """The first ``vloadN``, ``vstoreN``, ``vload_halfN``, ``vstore_halfN`` or ``cross``, or
    ``dot``, ``length``, ``distance`` or ``normalize`` of vectors, that ``body`` calls: the overloads move
    their lanes one at a time, so the region runs one work-item at a time
    (``vload3``/``cross``/``vstore3`` 7x slower than pocl, ``distance`` 1.5x)."""
    for n in walk(body):
        if not isinstance(n, ir.Call) or n.builtin is None:
            continue
        name = n.name
        if name in ("dot", "length", "distance", "normalize") \
                and isinstance(n.args[0].type, VectorType):
            return name
        if name == "cross" or any(_unaligned_width(name, p) is not None
                                  for p in ("vload", "vstore", "vload_half")):
            return name
        if name.startswith("vstore_half") and name[len("vstore_half"):].split("_")[0].isdigit():
            return name
    return None


def _narrow_vector_elements(body: Node) -> bool:
    """``body`` loads or stores a vector element of ``char`` or ``short`` components."""
    return any(isinstance(n, ir.Index) and isinstance(n.type, VectorType)
               and n.type.elem.size <= 2 for n in walk(body))


def _three_lane_values(body: Node) -> bool:
    """``body`` computes on ``float3``-like vectors (three components in four lanes): gcc finds
    no vector type for them across work-items ("no vectype") and runs the loop one work-item at
    a time (a CFD flux's ``float3`` momentum, 1.3x slower than pocl)."""
    return any(isinstance(n, ir.Expr) and isinstance(n.type, VectorType) and n.type.width == 3
               for n in walk(body))


def _vector_builtin_call(body: Node) -> str | None:
    """The first element-wise builtin ``body`` calls on vectors (``fmin(a[i], b[i])``), or
    None: its C overload runs the scalar function lane by lane, which gcc's straight-line
    vectorizer rarely turns back into vector code (a branch per lane where the scalar function
    has selects), so such a region ran one work-item at a time, each lane on its own (a
    ``float4`` ``fmin`` 20x slower than split into scalars; ``convert_uchar4_sat`` 3.7x slower
    than pocl)."""
    return next((n.name for n in walk(body) if isinstance(n, ir.Call)
                 and _scalar_builtin(n) is not None and not _plain_conversion(n.name)), None)


def _plain_conversion(name: str) -> bool:
    """A ``convert_`` without saturation or a rounding mode: one ``__builtin_convertvector``
    in C, which vectorizes as it is (saturating and rounding ones convert lane by lane)."""
    return name.startswith("convert_") and "_sat" not in name and "_rt" not in name


def scalarize_region(body: ir.Stmt, counter: list[int], fast: bool = False) -> ir.Stmt:
    """``body`` of one work-item loop with its vector private variables split, or ``body``
    unchanged when some vector construct in it has no component form."""
    kept = _lvalue_uses(body)
    names = {d.name: d.type for n in walk(body) if isinstance(n, ir.DeclStmt) for d in n.decls
             if isinstance(d.type, VectorType) and d.space is AddressSpace.PRIVATE
             and not d.volatile and d.name not in kept}
    vector_work = names or _lane_call(body) is not None or any(
        isinstance(n, ir.Assign) and isinstance(n.type, VectorType) for n in walk(body))
    if not vector_work:
        return body
    try:
        return _Scalarizer(names, counter, fast).statement(body)
    except _Unsupported:
        return body


def scalarize_hot_regions(body: ir.Block, fast: bool = False
                          ) -> tuple[ir.Block, tuple[str, ...]]:
    """Every vectorizable work-item loop inside a group-level loop, with vector elements of
    ``char`` or ``short`` components, calling an element-wise builtin on vectors, or
    computing on 3-component vectors, scalarized; and a line for the plans per loop split
    (``PPCL_DEBUG=plans``)."""
    counter = [0]
    notes: list[str] = []

    def visit(node: ir.Stmt, in_loop: bool) -> ir.Stmt:
        if isinstance(node, wg.WorkItemLoop):
            if not node.simd:
                return node
            called = _vector_builtin_call(node.body) or _lane_call(node.body)
            why = ("inside a group-level loop" if in_loop
                   else "it loads or stores vectors of char or short components"
                   if _narrow_vector_elements(node.body)
                   else f"it calls {called} on vectors" if called
                   else "it computes on 3-component vectors"
                   if _three_lane_values(node.body) else None)
            if why is None:
                return node
            region = scalarize_region(node.body, counter, fast)
            if region is not node.body:
                notes.append(f"scalarize: vectors of a work-item loop split into scalars ({why})")
            return dataclasses.replace(node, body=region)
        if not any(isinstance(c, ir.Stmt) for c in children(node)):
            return node
        inner = in_loop or isinstance(node, ir.For | ir.While | ir.DoWhile)
        return map_child_stmts(node, lambda c: visit(c, inner))

    result = visit(body, False)
    assert isinstance(result, ir.Block)
    return result, tuple(notes)
