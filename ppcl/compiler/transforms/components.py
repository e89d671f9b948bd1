"""Vector elements a kernel loads only to take components, loaded a component at a time.

``float4 p = convert_float4(rgb[i]); g[i] = 0.299f * p.x + 0.587f * p.y + 0.114f * p.z;`` loads
a ``uchar4`` as one vector. On the CPU device the work-item loop then does not vectorize (gcc
has no vector type for a vector of ``uchar4``: "no vectype for stmt"), so a colour conversion
runs one work-item at a time, 2.7x slower than the same kernel written with component loads.
When a private vector variable is defined once, as a buffer element or an element-wise
conversion of one, and every use of it takes one component, each use can load that component
instead: ``(float)((__global const uchar *)(rgb + i))[0]``. The values are the same (a
conversion without ``_sat`` or a rounding suffix is the C conversion of each component; the
element is read from a buffer the kernel never stores to, at an index whose variables never
change), and gcc vectorizes the strided scalar loads along the work-items.

Whether another parameter is bound to the same buffer is known only at a launch. The overlay
knows it (``same_buffer``) and applies this to the kernels it generates (``recorder.py``); the
CPU pipeline (pass ``components``) does not, so there the load also moves only where no store
to memory, no call with effects and no barrier can come between the definition and its last
use (a store through another parameter would otherwise be seen by the later loads). A
component taken straight from an element (``convert_float4(rgb[i]).x``, ``p[i].s1 = v``) is the
same access at the same place, so it always becomes a scalar access (``component``, which the
scalarizer also uses for the components it splits off).

``dot(a, b)`` and float ``length(a)`` of such vectors (variables or elements) are first written
out by components, in the order and precision their C lowering computes them (``a.x * b.x +
a.y * b.y + ...`` in the element type; ``length`` as the square root of the sum of squares in
double, rounded to float once), so they do not count as whole uses: a kernel normalizing or
measuring one vector per work-item then vectorizes, where the whole ``float4`` load kept it
scalar. A vector defined once as element-wise ``+``, ``-``, ``*`` of such elements and of
scalars (``float4 d = p[i + 1] - p[i];``) is a candidate the same way: each component taken
from it is that arithmetic on the elements' components (``p[i + 1].x - p[i].x``), the same
value, with the same checks on the loads.

Pass name: ``components`` (before ``workgroup``); ``PPCL_DEBUG=plans`` names every candidate
variable and why it was or was not rewritten.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ppcl.compiler.analysis.buffers import buffer_accesses, single_definitions
from ppcl.compiler.analysis.effects import Effects, effects, is_effect_free
from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import (
    DOUBLE,
    FLOAT,
    INT,
    UINT,
    AddressSpace,
    PointerType,
    ScalarType,
    VectorType,
)
from ppcl.compiler.ir.visit import Node, Rewriter, walk

__all__ = ["ComponentLoads", "component", "component_loads", "elementwise_lane",
           "geometric_by_lanes", "normalize_lane", "wrapped_lane"]

_MEMORY = (AddressSpace.GLOBAL, AddressSpace.CONSTANT)
_ORDERING = frozenset(("barrier", "work_group_barrier", "mem_fence", "read_mem_fence",
                       "write_mem_fence"))


@dataclass(frozen=True)
class ComponentLoads:
    """The rewritten function, the variables rewritten (and a count of components taken
    straight from elements), and each candidate variable kept with the reason."""

    function: ir.Function
    taken: tuple[str, ...] = ()
    kept: tuple[tuple[str, str], ...] = ()

    def notes(self) -> list[str]:
        """One line per decision, for ``PPCL_DEBUG=plans``."""
        lines = [f"component loads: {name}" for name in self.taken]
        return lines + [f"no component loads for {name}: {why}" for name, why in self.kept]


def component(element: ir.Index, i: int) -> ir.Index | None:
    """Component ``i`` of the vector element ``element`` (``p[e]`` with ``p`` a pointer to
    vectors in memory) as a scalar access ``((T *)(p + e))[i]`` (the element's own address,
    so no index arithmetic can overflow), or None for other elements. The index must be free
    of effects (it is not evaluated any more often)."""
    pointer = element.base.type
    if not isinstance(pointer, PointerType) or not isinstance(pointer.pointee, VectorType) \
            or pointer.space not in (*_MEMORY, AddressSpace.LOCAL):
        return None
    vector = pointer.pointee
    scalar = PointerType(vector.elem, pointer.space, const=pointer.const,
                         volatile=pointer.volatile)
    address = ir.Binary(pointer, "+", element.base, element.index, loc=element.loc)
    return ir.Index(vector.elem, ir.Cast(scalar, address), ir.IntLit(INT, i), loc=element.loc)


def _element_load(e: ir.Expr, pointers: dict[str, PointerType]) -> ir.Index | None:
    """``e`` when it loads a vector element of a buffer parameter at an index free of effects."""
    if not isinstance(e, ir.Index) or not isinstance(e.base, ir.VarRef):
        return None
    pointer = pointers.get(e.base.name)
    if pointer is None or not isinstance(pointer.pointee, VectorType) or pointer.volatile:
        return None
    return e if is_effect_free(e.index) else None


_TREE_OPS = frozenset(("+", "-", "*"))  # a definition taken by components


def _tree_loads(e: ir.Expr, pointers: dict[str, PointerType]) -> list[ir.Index] | None:
    """The element loads of ``e`` when it is element-wise ``+``, ``-``, ``*`` of vector
    elements (``_element_load``, or a conversion of one with C's rounding) and of scalars
    splatted to vectors (literals and variables); None for anything else."""
    if isinstance(e, ir.Binary) and e.op in _TREE_OPS and isinstance(e.type, VectorType):
        lhs, rhs = _tree_loads(e.lhs, pointers), _tree_loads(e.rhs, pointers)
        return None if lhs is None or rhs is None else lhs + rhs
    if isinstance(e, ir.Cast) and isinstance(e.type, VectorType) \
            and not isinstance(e.operand.type, VectorType) \
            and isinstance(e.operand, ir.VarRef | ir.FloatLit | ir.IntLit):
        return []
    load = _element_load(e.args[0] if _conversion(e) and isinstance(e, ir.Call) else e,
                         pointers)
    return None if load is None else [load]


def elementwise_lane(e: ir.Expr, i: int,
                     lane: Callable[[ir.Expr, int], ir.Expr]) -> ir.Expr | None:
    """Component ``i`` of element-wise vector arithmetic (``+ - * /``, unary ``+ -``) as the
    same scalar arithmetic on ``lane(operand, i)``, component ``i`` of each operand; None for
    any other expression. The scalarizer and the component loads share it."""
    t = e.type
    if not isinstance(t, VectorType):
        return None
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*", "/"):
        return wrapped_lane(t.elem, e.op, (lane(e.lhs, i), lane(e.rhs, i)), e.loc)
    if isinstance(e, ir.Unary) and e.op in ("+", "-"):
        return wrapped_lane(t.elem, e.op, (lane(e.operand, i),), e.loc)
    return None


def wrapped_lane(elem: ScalarType, op: str, operands: tuple[ir.Expr, ...], loc: Loc
                 ) -> ir.Expr:
    """``op`` on scalar components of type ``elem``, with the result a vector's component
    has: C promotes a ``char`` or ``short`` operand to ``int``, where ``(x + y) / 2`` of two
    ``uchar`` components does not wrap at 256 as a ``uchar4`` lane does, and ``~x`` is
    negative. Such an operation is computed in ``int`` (``uint`` for unsigned elements, where
    a product of two ``ushort`` overflows ``int``) and converted back to ``elem``."""
    if not elem.is_integer or elem.size >= 4:
        if len(operands) == 1:
            return ir.Unary(elem, op, operands[0], loc=loc)
        return ir.Binary(elem, op, operands[0], operands[1], loc=loc)
    wide = UINT if not elem.is_signed else INT
    widened = tuple(ir.Cast(wide, o, loc=loc) for o in operands)  # printed: C's own is int
    value: ir.Expr = (ir.Unary(wide, op, widened[0], loc=loc) if len(widened) == 1
                      else ir.Binary(wide, op, widened[0], widened[1], loc=loc))
    return ir.Cast(elem, value, loc=loc)  # printed, as the truncation it is


def _tree_component(e: ir.Expr, i: int) -> ir.Expr:
    """Component ``i`` of an element-wise tree (``_tree_loads``), the arithmetic on the
    components: ``(a - b * 2.0f).x`` is ``a.x - b.x * 2.0f``."""
    arithmetic = elementwise_lane(e, i, _tree_component)
    if arithmetic is not None:
        return arithmetic
    assert isinstance(e.type, VectorType)
    if isinstance(e, ir.Cast) and not isinstance(e.operand.type, VectorType):  # a splat
        op = e.operand
        return op if op.type == e.type.elem else ir.Cast(e.type.elem, op, loc=e.loc)
    if isinstance(e, ir.Call):  # a conversion of an element: the component converted
        return ir.Cast(e.type.elem, _tree_component(e.args[0], i), loc=e.loc)
    return _take(e, i)


def _conversion(e: ir.Expr) -> bool:
    """An element-wise conversion with C's rounding (no ``_sat``, no rounding suffix)."""
    return isinstance(e, ir.Call) and e.builtin is not None and e.name.startswith("convert_") \
        and "_sat" not in e.name and "_rt" not in e.name and len(e.args) == 1 \
        and isinstance(e.type, VectorType)


def _orders_memory(node: Node) -> bool:
    """A store to memory, a call with effects, or a barrier or fence."""
    return effects(node, Effects()).memory or any(
        isinstance(n, ir.Call) and n.builtin is not None and n.name in _ORDERING
        for n in walk(node))


def _uses(node: Node, name: str) -> bool:
    return any(isinstance(n, ir.VarRef) and n.name == name for n in walk(node))


def _loads_before_stores(s: ir.Stmt) -> bool:
    """``s`` reads everything before it writes: no store or ordering at all, or one
    assignment whose value and target address neither store nor order memory."""
    if not _orders_memory(s):
        return True
    if not isinstance(s, ir.ExprStmt) or not isinstance(s.expr, ir.Assign):
        return False
    target = s.expr.target
    parts = [s.expr.value] + [n for n in walk(target) if n is not target
                              and isinstance(n, ir.Expr)]
    return not any(_orders_memory(p) for p in parts)


def _nothing_stored_before_uses(body: ir.Block, name: str) -> bool:
    """No store to memory, call with effects or barrier between the declaration of ``name``
    and its last use: loads moved to the uses read what the declaration read."""
    for block in walk(body):
        if not isinstance(block, ir.Block):
            continue
        for k, s in enumerate(block.stmts):
            if isinstance(s, ir.DeclStmt) and any(d.name == name for d in s.decls):
                later = block.stmts[k + 1:]
                last = max((j for j, t in enumerate(later) if _uses(t, name)), default=-1)
                if _orders_memory(s) or any(_orders_memory(t) for t in later[:last]):
                    return False
                return last < 0 or _loads_before_stores(later[last])
    return False  # not declared in a block (a for loop's initializer): not judged


class _Components(Rewriter):
    def __init__(self, loads: dict[str, tuple[ir.Index, ir.Expr | None]],
                 trees: dict[str, ir.Expr]) -> None:
        self.loads = loads  # variable -> (element load, conversion around it or None)
        self.trees = trees  # variable -> its element-wise definition (``_tree_loads``)
        self.count = 0  # components taken straight from a load (no variable)

    def rewrite_Swizzle(self, e: ir.Swizzle) -> ir.Expr:
        if len(e.indices) != 1:
            return e
        if isinstance(e.base, ir.VarRef) and e.base.name in self.trees:
            value = self.rewrite(_tree_component(self.trees[e.base.name], e.indices[0]))
            assert isinstance(value, ir.Expr)
            return value
        if isinstance(e.base, ir.VarRef) and e.base.name in self.loads:
            load, conversion = self.loads[e.base.name]
            return self._component(e, load, conversion)
        conversion = e.base if _conversion(e.base) else None
        inner = conversion.args[0] if isinstance(conversion, ir.Call) else e.base
        if not isinstance(inner, ir.Index) or not is_effect_free(inner.index):
            return e
        value = self._component(e, inner, conversion)
        if value is e:
            return e
        self.count += 1
        return value

    def _component(self, e: ir.Swizzle, load: ir.Index, conversion: ir.Expr | None
                   ) -> ir.Expr:
        value: ir.Expr | None = component(load, e.indices[0])
        if value is None:
            return e
        if conversion is not None:
            assert isinstance(conversion.type, VectorType)
            value = ir.Cast(conversion.type.elem, value)
        return value

    def rewrite_DeclStmt(self, s: ir.DeclStmt) -> object:
        kept = tuple(d for d in s.decls if d.name not in self.loads and d.name not in self.trees)
        if len(kept) == len(s.decls):
            return s
        return ir.DeclStmt(kept, loc=s.loc) if kept else ()


def _take(v: ir.Expr, i: int) -> ir.Swizzle:
    """Component ``i`` of the vector ``v``, spelled as the source would (``x``... ``s8``)."""
    assert isinstance(v.type, VectorType)
    return ir.Swizzle(v.type.elem, v, (i,), "xyzw"[i] if i < 4 else f"s{i:x}", loc=v.loc)


class _Geometric(Rewriter):
    """``dot`` and float ``length`` of vectors that ``loadable`` accepts written out by
    components, exactly as ``codegen/c_builtins`` computes them."""

    def __init__(self, loadable: set[str], pointers: dict[str, PointerType]) -> None:
        self.loadable = loadable
        self.pointers = pointers
        self.count = 0

    def _operand(self, e: ir.Expr) -> bool:
        if isinstance(e, ir.VarRef):
            return e.name in self.loadable
        return _element_load(e, self.pointers) is not None

    def rewrite_Call(self, e: ir.Call) -> ir.Expr:
        if e.builtin is None or e.name not in ("dot", "length") \
                or not all(self._operand(a) for a in e.args):
            return e
        written = geometric_by_lanes(e, _take)
        if written is None:
            return e
        self.count += 1
        return written


def geometric_by_lanes(e: ir.Call, lane: Callable[[ir.Expr, int], ir.Expr],
                       fast: bool = False) -> ir.Expr | None:
    """``dot(a, b)`` of float or double vectors, float ``length(a)`` and ``distance(a, b)``
    written out by components (``lane(v, i)``: component ``i`` of ``v``), exactly as
    ``codegen/c_builtins`` computes them: the products summed in order in the element type;
    the squares of the components (of ``a - b``, subtracted in float) summed in double, its
    square root rounded to float once. None for other calls, vectors of more than 4, and
    ``length`` and ``distance`` under ``-cl-fast-relaxed-math`` (``fast``), which sums in
    float."""
    if e.builtin is None or e.name not in ("dot", "length", "distance"):
        return None
    t = e.args[0].type
    if not isinstance(t, VectorType) or t.width > 4:
        return None
    if e.name == "dot":
        if t.elem not in (FLOAT, DOUBLE):
            return None
        a, b = e.args
        total: ir.Expr | None = None
        for i in range(t.width):
            term = ir.Binary(t.elem, "*", lane(a, i), lane(b, i), loc=e.loc)
            total = term if total is None else ir.Binary(t.elem, "+", total, term, loc=e.loc)
        return total
    if t.elem != FLOAT or fast:
        return None
    squares: ir.Expr | None = None
    for i in range(t.width):
        part = lane(e.args[0], i)
        if e.name == "distance":
            part = ir.Binary(FLOAT, "-", part, lane(e.args[1], i), loc=e.loc)
        c = ir.Cast(DOUBLE, part, loc=e.loc)
        term = ir.Binary(DOUBLE, "*", c, c, loc=e.loc)
        squares = term if squares is None else ir.Binary(DOUBLE, "+", squares, term, loc=e.loc)
    assert squares is not None
    root = ir.Call(DOUBLE, "sqrt", (squares,), builtin="sqrt__double", loc=e.loc)
    return ir.Cast(FLOAT, root, loc=e.loc)


def normalize_lane(e: ir.Call, i: int, lane: Callable[[ir.Expr, int], ir.Expr],
                   fast: bool = False) -> ir.Expr | None:
    """Component ``i`` of float ``normalize(p)`` of a vector of up to 4 written out by
    components (``lane(p, j)``) as ``codegen/c_builtins`` computes it, by selects: where a
    component is infinite, the infinite ones become +-1 and the others 0 * themselves; the
    squares summed in double; ``p`` itself where that sum is 0, else each component divided
    by its square root in double and rounded once. None for other calls and under
    ``-cl-fast-relaxed-math`` (``fast``), whose form differs."""
    if e.builtin is None or e.name != "normalize" or fast:
        return None
    t = e.args[0].type
    if not isinstance(t, VectorType) or t.elem != FLOAT or t.width > 4:
        return None
    p = e.args[0]
    loc = e.loc
    parts = [lane(p, j) for j in range(t.width)]

    def call(ret: ScalarType, name: str, key: str, *args: ir.Expr) -> ir.Call:
        return ir.Call(ret, name, args, builtin=key, loc=loc)

    def infinite(x: ir.Expr) -> ir.Expr:
        return call(INT, "isinf", "isinf__float", x)

    any_inf: ir.Expr = infinite(parts[0])
    for x in parts[1:]:
        any_inf = ir.Binary(INT, "|", any_inf, infinite(x), loc=loc)

    def q(x: ir.Expr) -> ir.Expr:
        one = call(FLOAT, "copysign", "copysign__float_float", ir.FloatLit(FLOAT, 1.0), x)
        zero_times = ir.Binary(FLOAT, "*", ir.FloatLit(FLOAT, 0.0), x, loc=loc)
        scaled = ir.Conditional(FLOAT, infinite(x), one, zero_times, loc=loc)
        return ir.Conditional(FLOAT, any_inf, scaled, x, loc=loc)

    squares: ir.Expr | None = None
    for x in parts:
        c = ir.Cast(DOUBLE, q(x), loc=loc)
        term = ir.Binary(DOUBLE, "*", c, c, loc=loc)
        squares = term if squares is None else ir.Binary(DOUBLE, "+", squares, term, loc=loc)
    assert squares is not None
    length = call(DOUBLE, "sqrt", "sqrt__double", squares)
    divided = ir.Cast(FLOAT, ir.Binary(DOUBLE, "/", ir.Cast(DOUBLE, q(parts[i]), loc=loc),
                                       length, loc=loc), loc=loc)
    zero = ir.Binary(INT, "==", squares, ir.FloatLit(DOUBLE, 0.0), loc=loc)
    return ir.Conditional(FLOAT, zero, parts[i], divided, loc=loc)


def _buffer(load: ir.Index) -> str:
    assert isinstance(load.base, ir.VarRef)
    return load.base.name


def _whole_uses(body: ir.Block, names: set[str]) -> set[str]:
    """The names some use of which is not one component (``p.x``)."""
    refs: dict[str, int] = dict.fromkeys(names, 0)
    single: dict[str, int] = dict.fromkeys(names, 0)
    for n in walk(body):
        if isinstance(n, ir.VarRef) and n.name in refs:
            refs[n.name] += 1
        elif isinstance(n, ir.Swizzle) and isinstance(n.base, ir.VarRef) \
                and n.base.name in single and len(n.indices) == 1:
            single[n.base.name] += 1
    return {name for name in names if refs[name] != single[name]}


def component_loads(fn: ir.Function, same_buffer: Sequence[set[str]] | None = None
                    ) -> ComponentLoads:
    """``fn`` with such vector variables, and components taken straight from such an element
    (``convert_float4(rgb[i]).x``, as a recomputed producer's value reads), replaced by
    component loads. ``same_buffer`` groups the parameters bound to one buffer (a store
    through one of them counts for all); None when the bindings are not known, where any
    two parameters may be one buffer."""
    if fn.body is None:
        return ComponentLoads(fn)
    pointers = {p.name: p.type for p in fn.params if isinstance(p.type, PointerType)
                and p.type.space in _MEMORY}
    accesses = buffer_accesses(fn)
    stored = {name for name, access in accesses.items() if access.writes}
    for group in same_buffer or ():
        if group & stored:
            stored |= group
    written = effects(fn.body, Effects())
    definitions = single_definitions(fn)
    unchanged = set(definitions) | {p.name for p in fn.params if p.name not in written.writes}
    loads: dict[str, tuple[ir.Index, ir.Expr | None]] = {}
    trees: dict[str, ir.Expr] = {}
    kept: dict[str, str] = {}
    for name, init in definitions.items():
        if not isinstance(init.type, VectorType):
            continue
        conversion = init if _conversion(init) else None
        load = _element_load(conversion.args[0] if isinstance(conversion, ir.Call) else init,
                             pointers)
        elements = [load] if load is not None else _tree_loads(init, pointers)
        if not elements:
            continue
        read = walk(init) if load is None else walk(load.index)
        changing = sorted({n.name for n in read
                           if isinstance(n, ir.VarRef) and n.name not in unchanged
                           and n.name not in pointers})
        written_buffers = sorted({_buffer(e) for e in elements} & stored)
        if written_buffers:
            kept[name] = f"its buffer {written_buffers[0]} is written by the kernel"
        elif changing:
            what = "index reads" if load is not None else "value reads"
            kept[name] = f"its {what} {', '.join(changing)}, which the kernel changes"
        elif same_buffer is None and not _nothing_stored_before_uses(fn.body, name):
            kept[name] = "a store, call or barrier may come between its load and a use " \
                "(another parameter may be the same buffer)"
        elif load is not None:
            loads[name] = (load, conversion)
        else:
            trees[name] = init
    geometric = _Geometric(set(loads) | set(trees), pointers)
    body = geometric.rewrite(fn.body)
    assert isinstance(body, ir.Block)
    for name in sorted(_whole_uses(body, set(loads) | set(trees))):
        kept[name] = "used whole, not one component at a time"
        loads.pop(name, None)
        trees.pop(name, None)
    components = _Components(loads, trees)
    body = components.rewrite(body)
    assert isinstance(body, ir.Block)
    taken = [f"{name} (elements of {_buffer(loads[name][0])} loaded as components)"
             for name in sorted(loads)]
    taken += [f"{name} (element-wise arithmetic of elements, taken by components)"
              for name in sorted(trees)]
    taken += [f"{components.count} component(s) taken from loaded elements"] \
        * bool(components.count)
    taken += [f"{geometric.count} dot or length call(s) written out by components"] \
        * bool(geometric.count)
    function = dataclasses.replace(fn, body=body) if taken else fn
    return ComponentLoads(function, tuple(taken), tuple(sorted(kept.items())))
