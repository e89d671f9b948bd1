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

Explicit vector code is widened: a ``float2`` varying along x becomes a ``float{2*width}``
(see ``vector_code.py``), as long as that stays within 16 lanes; ``VectorizeFacts.explicit_width``
reports the widest explicit vector type (Algorithm 4's ExpFactor) and ``choose_width``
divides by it.

The tail is exact: the merged kernel takes a trailing ``ulong`` parameter (``SIZE_PARAM``),
the original global size along 0. A merged item whose lanes all exist, and for which no lane
leaves through a top-level tail guard (``if (c) return;`` with ``c`` varying along x, or a
final ``if (c) {..}``), runs the vector code; any other runs the original body once per
existing lane (a scalar loop, ``return`` becoming ``continue``): the simplest exact approach.
The vector path tests a guard where it stands, so the statements before it must not write
memory (the scalar loop runs them again). A guard may read memory: every lane reaching it
evaluated it in the original too.

Refused, with a reason: other control flow varying along x, barriers and fences, atomics,
``printf``, images, ``__local`` or private arrays, calls of user functions (inline first),
pointers varying along x, ``return`` inside a loop, stores of a varying value to a uniform
address or compound stores to one (every lane would do them), ``?:``/``&&``/``||`` varying
along x with memory accesses or integer division where the original skipped them, builtins
that are not component-wise (``dot``, ``vload_half``...), 3-component vectors, explicit
vectors that would pass 16 lanes.

Launch: the same offset, ``global'[0] = ceil(G0 / width)`` rounded up to a multiple of
``local'[0]``; if the kernel asks for its local id, group id, local size or group count along
0 (``VectorizeFacts.queries_group_x``), ``local'[0] = L0 / width`` and ``width`` must divide
``L0``; otherwise any local size.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ppcl.compiler.analysis.lanes import Strides, query
from ppcl.compiler.analysis.order import ExecutionOrder
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import INT, UINT, ULONG, ArrayType, PointerType, Type, VectorType
from ppcl.compiler.ir.visit import Node, walk
from ppcl.compiler.transforms.vector_code import (
    BASE,
    MAX_LANES,
    SIZE_PARAM,
    Refused,
    ScalarLanes,
    Vectorizer,
    call,
    int_lit,
    query_call,
    ref,
)

_LANE = "__ppcl_lane"  # the lane of the scalar fallback loop
_GROUP_X_QUERIES = frozenset(("get_local_id", "get_group_id", "get_local_size",
                              "get_num_groups", "get_enqueued_local_size"))
_REFUSED_CALLS = ("barrier", "work_group_", "sub_group_", "async_work_group", "wait_group",
                  "atomic_", "atom_", "printf", "get_global_linear_id", "get_local_linear_id",
                  "prefetch", "read_image", "write_image", "mem_fence", "read_mem_fence",
                  "write_mem_fence")

__all__ = ["SIZE_PARAM", "Refused", "VectorizeFacts", "choose_width", "vectorize",
           "vectorize_facts"]


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


# ------------------------------------------------------------------ checks and structure


def _writes_memory(s: Node) -> bool:
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
    # every lane reaching a guard evaluated its condition in the original too, so it may
    # read memory or divide; it must not write (the scalar loop evaluates it again)
    for cond, _ in segments[1:]:
        assert cond is not None
        if _writes_memory(cond):
            raise Refused("a tail guard that writes memory")
    return segments


def _vector_path(fn: ir.Function, width: int) -> tuple[ir.Block, Vectorizer, int]:
    _check(fn)
    assert fn.body is not None
    strides = Strides(fn.body)
    v = Vectorizer(width, strides)
    segments = _segments(fn.body, strides)
    inner: list[ir.Stmt] = [ir.Return()]
    for cond, stmts in reversed(segments):
        body = [v.stmt(s) for s in stmts] + inner
        if cond is None:
            inner = body
            continue
        exits = v.nonzero(v.vector(cond), 4)
        leave = call("any", (exits,), INT)
        inner = [ir.If(ir.Unary(INT, "!", leave), ir.Block(tuple(body)))]
    return ir.Block(tuple(inner)), v, len(segments) - 1


def _queries_group_x(fn: ir.Function) -> bool:
    assert fn.body is not None
    for n in walk(fn.body):
        if isinstance(n, ir.Call) and n.builtin is not None:
            q = query(n)
            if q is not None and q[0] in _GROUP_X_QUERIES and q[1] in (0, None):
                return True
    return False


# ------------------------------------------------------------------ public interface


def vectorize_facts(fn: ir.Function) -> VectorizeFacts:
    """What holistic vectorization of ``fn`` would do, or why it cannot (a dry run of
    ``vectorize`` at 2 lanes, so the two agree; explicit vectors varying along x may allow
    only narrower widths, which ``choose_width`` accounts for)."""
    try:
        explicit = _explicit_width(fn) if fn.body is not None else 1
        _, v, guards = _vector_path(fn, 2)
    except Refused as refused:
        return VectorizeFacts(fn.name, False, str(refused), 0,
                              explicit if fn.body is not None else 1, 0, 0)
    c = v.counts
    parts = [_count(c.contiguous_loads, "contiguous load"),
             _count(c.contiguous_stores, "contiguous store")]
    if c.gathers or c.scatters:
        parts.append(f"{_count(c.gathers, 'gathered load')}, "
                     f"{_count(c.scatters, 'scattered store')} (lane by lane)")
    if c.uniform:
        parts.append(_count(c.uniform, "uniform access"))
    if guards:
        parts.append(f"{_count(guards, 'tail guard')} (vectors with a lane leaving run the "
                     "scalar loop)")
    # live values: every variable that becomes a vector, plus one per contiguous access in
    # flight (a crude bound, like the paper's register count per work-item)
    registers = max(1, len(v.vector_vars) + c.contiguous_loads + c.gathers)
    return VectorizeFacts(fn.name, True, ", ".join(parts), registers, explicit,
                          c.contiguous_loads + c.contiguous_stores, c.gathers + c.scatters,
                          _queries_group_x(fn))


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "es" if what.endswith("s") else "s")


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
    width = min(width, MAX_LANES // facts.explicit_width)
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
    vector_body, _, _ = _vector_path(fn, width)
    assert fn.body is not None
    offset = query_call("get_global_offset")
    start = ir.Binary(ULONG, "-", query_call("get_global_id"), offset)
    base = ir.Binary(ULONG, "+", offset, ir.Binary(ULONG, "*", start, int_lit(width, ULONG)))
    end = ir.Binary(ULONG, "+", offset, ref(SIZE_PARAM, ULONG))
    last = ir.Binary(ULONG, "+", ref(BASE, ULONG), int_lit(width, ULONG))
    full = ir.Binary(INT, "<=", last, end)
    lane_body = ScalarLanes(width, _LANE).rewrite(fn.body)
    lane = ref(_LANE, UINT)
    exists = ir.Binary(INT, "<", ir.Binary(ULONG, "+", ref(BASE, ULONG), ir.Cast(ULONG, lane)),
                       end)
    fallback = ir.For(
        ir.DeclStmt((ir.VarDecl(_LANE, UINT, init=int_lit(0, UINT)),)),
        ir.Binary(INT, "<", lane, int_lit(width, UINT)),
        ir.Unary(UINT, "p++", lane),
        ir.Block((ir.If(ir.Unary(INT, "!", exists), ir.Continue()), lane_body)))
    body = ir.Block((
        ir.DeclStmt((ir.VarDecl(BASE, ULONG, init=base),)),
        ir.If(full, vector_body),
        fallback,
    ), loc=fn.body.loc)
    params = fn.params + (ir.Param(SIZE_PARAM, ULONG),)
    return dataclasses.replace(fn, name=name, params=params, body=body,
                               attrs=_merged_attrs(fn, width))


def _merged_attrs(fn: ir.Function, width: int) -> ir.KernelAttrs:
    """The attributes of the merged kernel. A required group size stays required, narrower
    along 0, where the kernel asks for its position in the group (the launch contract);
    elsewhere any group size will do, so it is dropped. Hints no longer describe the code."""
    reqd = fn.attrs.reqd_work_group_size
    if reqd is None or not _queries_group_x(fn):
        return ir.KernelAttrs()
    if reqd[0] % width:
        raise Refused(f"reqd_work_group_size {reqd[0]} along 0 is not a multiple of {width}")
    return ir.KernelAttrs(reqd_work_group_size=(reqd[0] // width, reqd[1], reqd[2]))
