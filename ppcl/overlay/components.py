"""Vector elements a generated kernel loads only to take components, loaded a component at a time.

``float4 p = convert_float4(rgb[i]); g[i] = 0.299f * p.x + 0.587f * p.y + 0.114f * p.z;`` loads
a ``uchar4`` as one vector. On the CPU device the work-item loop then does not vectorize (gcc
has no vector type for a vector of ``uchar4``: "no vectype for stmt"), so a colour conversion
runs one work-item at a time, 2.7x slower than the same kernel written with component loads.
When a private vector variable is defined once, as a buffer element or an element-wise
conversion of one, and every use of it takes one component, each use can load that component
instead: ``(float)((__global const uchar *)rgb)[4 * i + 0]``. The values are the same (a
conversion without ``_sat`` or a rounding suffix is the C conversion of each component; the
element is read from a buffer the kernel never stores to, at an index whose variables never
change), and gcc vectorizes the strided scalar loads along the work-items.

The overlay applies this to the kernels it generates (``recorder.py``); the decision is noted
in ``PPCL_DEBUG=overlay`` output.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ppcl.compiler.analysis.buffers import single_definitions
from ppcl.compiler.analysis.effects import Effects, effects, is_effect_free
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import INT, AddressSpace, PointerType, VectorType
from ppcl.compiler.ir.visit import Rewriter, walk

_MEMORY = (AddressSpace.GLOBAL, AddressSpace.CONSTANT)


def _element_load(e: ir.Expr, stored: set[str], pointers: dict[str, PointerType]
                  ) -> ir.Index | None:
    """``e`` when it loads a vector element of a buffer parameter the kernel never stores to."""
    if not isinstance(e, ir.Index) or not isinstance(e.base, ir.VarRef):
        return None
    pointer = pointers.get(e.base.name)
    if pointer is None or e.base.name in stored or not isinstance(pointer.pointee, VectorType):
        return None
    return e if is_effect_free(e.index) else None


def _conversion(e: ir.Expr) -> bool:
    """An element-wise conversion with C's rounding (no ``_sat``, no rounding suffix)."""
    return isinstance(e, ir.Call) and e.builtin is not None and e.name.startswith("convert_") \
        and "_sat" not in e.name and "_rt" not in e.name and len(e.args) == 1 \
        and isinstance(e.type, VectorType)


class _Components(Rewriter):
    def __init__(self, loads: dict[str, tuple[ir.Index, ir.Expr | None]],
                 pointers: dict[str, PointerType], stored: set[str]) -> None:
        self.loads = loads  # variable -> (element load, conversion around it or None)
        self.pointers = pointers
        self.stored = stored
        self.count = 0  # components taken straight from a load (no variable)

    def rewrite_Swizzle(self, e: ir.Swizzle) -> ir.Expr:
        if len(e.indices) != 1:
            return e
        if isinstance(e.base, ir.VarRef) and e.base.name in self.loads:
            load, conversion = self.loads[e.base.name]
            return self._component(e, load, conversion)
        conversion = e.base if _conversion(e.base) else None
        inner = conversion.args[0] if isinstance(conversion, ir.Call) else e.base
        direct = _element_load(inner, self.stored, self.pointers)
        if direct is None:
            return e
        self.count += 1
        return self._component(e, direct, conversion)

    def _component(self, e: ir.Swizzle, load: ir.Index, conversion: ir.Expr | None) -> ir.Expr:
        assert isinstance(load.base, ir.VarRef)
        pointer = self.pointers[load.base.name]
        vector = pointer.pointee
        assert isinstance(vector, VectorType)
        scalar = PointerType(vector.elem, pointer.space, const=True)
        stride = ir.IntLit(INT, vector.storage_width)
        index = ir.Binary(INT, "+", ir.Binary(INT, "*", stride, load.index),
                          ir.IntLit(INT, e.indices[0]))
        value: ir.Expr = ir.Index(vector.elem, ir.Cast(scalar, load.base), index)
        if conversion is not None:
            assert isinstance(conversion.type, VectorType)
            value = ir.Cast(conversion.type.elem, value)
        return value

    def rewrite_DeclStmt(self, s: ir.DeclStmt) -> object:
        kept = tuple(d for d in s.decls if d.name not in self.loads)
        if len(kept) == len(s.decls):
            return s
        return ir.DeclStmt(kept, loc=s.loc) if kept else ()


def component_loads(fn: ir.Function, same_buffer: Sequence[set[str]] = ()
                    ) -> tuple[ir.Function, list[str]]:
    """``fn`` with such vector variables, and components taken straight from such an element
    (``convert_float4(rgb[i]).x``, as a recomputed producer's value reads), replaced by
    component loads; and what was replaced, for the debug output. ``same_buffer`` groups the
    parameters bound to one buffer: a store through one of them counts for all."""
    if fn.body is None:
        return fn, []
    pointers = {p.name: p.type for p in fn.params if isinstance(p.type, PointerType)
                and p.type.space in _MEMORY}
    targets = [n.target if isinstance(n, ir.Assign) else n.operand for n in walk(fn.body)
               if isinstance(n, ir.Assign)
               or (isinstance(n, ir.Unary) and n.op in ("++", "--", "p++", "p--"))]
    stored = {t.base.name for t in targets
              if isinstance(t, ir.Index) and isinstance(t.base, ir.VarRef)}
    for group in same_buffer:
        if group & stored:
            stored |= group
    written = effects(fn.body, Effects())
    definitions = single_definitions(fn)
    unchanged = set(definitions) | {p.name for p in fn.params if p.name not in written.writes}
    loads: dict[str, tuple[ir.Index, ir.Expr | None]] = {}
    for name, init in definitions.items():
        conversion = init if _conversion(init) else None
        load = _element_load(conversion.args[0] if isinstance(conversion, ir.Call) else init,
                             stored, pointers)
        if load is None or not isinstance(init.type, VectorType):
            continue
        if any(isinstance(n, ir.VarRef) and n.name not in unchanged for n in walk(load.index)):
            continue
        loads[name] = (load, conversion)
    # every use must take one component: count the variable's references and those uses
    refs: dict[str, int] = dict.fromkeys(loads, 0)
    single: dict[str, int] = dict.fromkeys(loads, 0)
    for n in walk(fn.body):
        if isinstance(n, ir.VarRef) and n.name in refs:
            refs[n.name] += 1
        elif isinstance(n, ir.Swizzle) and isinstance(n.base, ir.VarRef) \
                and n.base.name in single and len(n.indices) == 1:
            single[n.base.name] += 1
    loads = {name: load for name, load in loads.items() if refs[name] == single[name]}
    components = _Components(loads, pointers, stored)
    body = components.rewrite(fn.body)
    assert isinstance(body, ir.Block)
    taken = sorted(loads) + [f"{components.count} component(s) of loaded elements"] \
        * bool(components.count)
    if not taken:
        return fn, []
    return dataclasses.replace(fn, body=body), taken
