"""Work-group formation: a kernel written for one work-item becomes code for a whole group.

The kernel body is split at barriers into parallel regions, each wrapped in a ``WorkItemLoop``.
A barrier inside an ``if`` or loop whose control is provably uniform (``control_uniform``) runs
in lock step: the statement stays at group level and its condition is evaluated once, as
work-item 0 sees it. Anything else that contains a barrier runs in lock step with activity
masks (one ``char`` per work-item): an ``if`` splits the current mask into then/else masks, a
loop keeps a loop mask and a per-iteration body mask and stops when no work-item is active, and
``break``/``continue``/``return`` clear the masks of the leaving work-item up to their target.
The masked mode is correct for every valid kernel, so correctness never rests on the analysis.

After formation, each private variable referenced in more than one region (or at group level)
becomes a context array, a group scalar or a value recomputed in every region that reads it;
``context.py`` decides which and rewrites the formed body.

Pass name: ``workgroup``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from ppcl.compiler.analysis.affine import table_bounds
from ppcl.compiler.analysis.callgraph import arithmetic_helpers, builtin_family
from ppcl.compiler.analysis.effects import ASYNC_COPIES, is_effect_free, write_counts, written_vars
from ppcl.compiler.analysis.uniformity import (
    ID_QUERIES,
    VARYING,
    Kind,
    Shape,
    Uniformity,
    const_int,
)
from ppcl.compiler.diagnostics import CompileError, Diagnostic, Loc, Severity
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.layout import context_block_layout, static_local_layout
from ppcl.compiler.ir.types import (
    CHAR,
    INT,
    LONG,
    AddressSpace,
    ArrayType,
    PointerType,
    ScalarType,
    Type,
)
from ppcl.compiler.ir.visit import Node, Renamer, Rewriter, children, map_child_stmts, walk
from ppcl.compiler.transforms.context import Variables, context_layouts
from ppcl.compiler.transforms.inline import calls_barrier_functions
from ppcl.compiler.transforms.jam import plan_stride

PASS_NAME = "workgroup"

_LOOPS = (ir.For, ir.While, ir.DoWhile)
ROW_STREAMS = ("its accesses consecutive along x stay in place while one it moves strides "
               "across work-items (each work-item streams its own row)")
# builtins whose calls are ordered side effects across work-items (no simd, no group scalars)
_EFFECT_FAMILIES = ("atomic", "printf", "async", "sync")


@dataclass(frozen=True)
class LocalVar:
    name: str
    type: Type
    offset: int


@dataclass(frozen=True)
class LoopDecision:
    """What formation decided for one loop of the kernel: interchanged with the work-item
    loop (it runs at group level, the work-items inside its body), or why not."""

    loc: Loc
    kind: str  # for, while, do
    interchanged: bool
    reason: str = ""  # why not, when not interchanged
    lockstep: bool = False  # a barrier in it: it runs at group level in lock step
    # its trip count varies per work-item: it runs at group level under a loop mask
    masked: bool = False
    # not interchanged because each work-item streams its own row (``ROW_STREAMS``)
    streams_rows: bool = False


@dataclass(frozen=True)
class FormedKernel:
    """A kernel after work-group formation; ``body`` is group-level code."""

    function: ir.Function
    body: ir.Block
    local_size: tuple[int, int, int]
    context_vars: dict[str, Type]
    group_scalars: dict[str, Type]
    masks: tuple[str, ...]
    local_vars: tuple[LocalVar, ...]
    local_static_bytes: int
    # context arrays too large for a thread's stack, at these offsets of the group's block
    # (``ir/layout.context_block_layout``), which then takes ``block_bytes`` before the
    # ``__local`` arguments; without them ``block_bytes`` is ``local_static_bytes``
    context_offsets: dict[str, int] = field(default_factory=dict)
    block_bytes: int = 0
    interchanged: int = 0
    notes: tuple[str, ...] = field(default=())
    recomputed: tuple[str, ...] = ()  # redeclared in each region that reads them
    uniform_vars: frozenset[str] = frozenset()  # the same for every work-item (by analysis)
    # decisions of transforms/schedule.py, which the printer follows
    rows: bool = False  # the group function runs a row of groups along x (``runs_rows``)
    vectorize: bool = True  # False: gcc's loop vectorizer is turned off for the group function
    no_pre: bool = False  # True: so is gcc's tree PRE (``schedule.simd_vector_privates``)
    widened: frozenset[str] = frozenset()  # int variables declared 64 bits wide
    wide_positions: frozenset[ir.Expr] = frozenset()  # group positions read 64 bits wide
    plans: tuple[str, ...] = ()  # one line per work-item loop: the plan chosen and why
    loops: tuple[LoopDecision, ...] = ()  # per loop of the kernel, in source order
    loop_plans: tuple[wg.LoopPlan, ...] = ()  # per loop: the plan that fired, why no other
    # the layout of each private array among the context variables (``context.py``)
    context_layouts: tuple[wg.ContextLayout, ...] = ()
    # the ``__constant`` integer tables the kernel reads: name -> (least, largest value), a
    # bound of every load from them (``analysis/affine.table_bounds``)
    tables: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def element_major(self) -> frozenset[str]:
        """The context arrays laid out ``[elements][work-items]``."""
        return frozenset(layout.name for layout in self.context_layouts if layout.element_major)

    @property
    def component_major(self) -> frozenset[str]:
        """The vector (and struct) context arrays laid out ``[components][work-items]``."""
        return frozenset(layout.name for layout in self.context_layouts if layout.components)


class _NeedMasked(Exception):
    """A construct formed in uniform lock step turned out to need masks (an exit that cannot
    be lifted to group level); the nearest uniform construct re-forms itself masked."""


def _error(loc: Loc, message: str) -> CompileError:
    diagnostic = Diagnostic(Severity.ERROR, message, loc)
    return CompileError([diagnostic], diagnostic.format())


# ---------------------------------------------------------------- syntactic queries


def _is_builtin_call(node: Node, names: tuple[str, ...]) -> bool:
    return isinstance(node, ir.Call) and node.builtin is not None and node.name in names


def wrapped_vars(body: ir.Stmt, uni: Uniformity) -> dict[str, ir.Expr]:
    """Integer variables declared in ``body`` with a value and afterwards only moved back
    into a range: every other write is ``v += k;`` or ``v -= k;``, ``k`` uniform, alone in
    the then-branch of an ``if`` (without else) whose condition reads ``v``, as periodic
    boundaries wrap a neighbor's coordinate (``xs = x - dx; if (xs < 0) xs += nx;``). By name,
    with their initializers: an address through one is consecutive along x wherever the
    initializer is, but at the few work-items where it wraps. (A performance guess for the
    loop order, never relied on for correctness.)"""
    inits: dict[str, ir.Expr] = {}
    wraps: dict[str, int] = {}
    for node in walk(body):
        if isinstance(node, ir.VarDecl) and node.init is not None \
                and isinstance(node.type, ScalarType) and node.type.is_integer:
            inits[node.name] = node.init
        if isinstance(node, ir.If) and node.otherwise is None:
            then = node.then.stmts[0] if isinstance(node.then, ir.Block) \
                and len(node.then.stmts) == 1 else node.then
            if isinstance(then, ir.ExprStmt) and isinstance(then.expr, ir.Assign) \
                    and then.expr.op in ("+=", "-=") and isinstance(then.expr.target, ir.VarRef) \
                    and uni.expr(then.expr.value).is_uniform \
                    and any(isinstance(n, ir.VarRef) and n.name == then.expr.target.name
                            for n in walk(node.cond)):
                wraps[then.expr.target.name] = wraps.get(then.expr.target.name, 0) + 1
    counts = write_counts(body)
    return {name: init for name, init in inits.items()
            if name in wraps and counts.get(name, 0) == wraps[name]
            and sum(1 for n in walk(body) if isinstance(n, ir.VarDecl) and n.name == name) == 1}


class _Substitute(Rewriter):
    def __init__(self, values: dict[str, ir.Expr]):
        self.values = values

    def rewrite_VarRef(self, e: ir.VarRef) -> ir.Expr:
        return self.values.get(e.name, e)


_VECTOR_ACCESS = re.compile(r"(vload|vstore)(a?_half)?(\d*)(_rt[enpz])?$")


class Access(NamedTuple):
    """One access to memory: the index (``p[i]``: ``i``; ``*q``: ``q``; ``vloadN(k, p)``:
    ``k``, in units of its N-element vectors), what it indexes, and whether it stores."""

    address: ir.Expr
    base: ir.Expr
    store: bool


def memory_accesses(body: Node) -> list[Access]:
    """Every element access of ``body`` (buffers, ``__local`` and private arrays) and every
    ``vloadN``/``vstoreN`` (and half forms), in the order they are written: the accesses whose
    shapes along the local ids decide an interchange, an unroll or a branch-free choice. A loop
    streaming rows through ``vload4`` was interchanged when its vector loads went unseen,
    gathering a float4 per work-item at every step."""
    stored: set[int] = set()
    for n in walk(body):
        if isinstance(n, ir.Assign):
            stored.add(id(n.target))
        elif isinstance(n, ir.Unary) and n.op in ("++", "--", "p++", "p--"):
            stored.add(id(n.operand))
    out: list[Access] = []
    for n in walk(body):
        if isinstance(n, ir.Index):
            out.append(Access(n.index, n.base, id(n) in stored))
        elif isinstance(n, ir.Unary) and n.op == "*":
            out.append(Access(n.operand, n.operand, id(n) in stored))
        elif isinstance(n, ir.Call) and n.builtin is not None:
            m = _VECTOR_ACCESS.match(n.name)
            if m is not None:
                load = m.group(1) == "vload"
                out.append(Access(n.args[0] if load else n.args[1],
                                  n.args[1] if load else n.args[2], not load))
    return out


def pointer_offsets(body: Node, params: frozenset[str]) -> dict[str, ir.Expr]:
    """Private pointers declared once into a pointer argument at an integer offset and never
    written after (``p = in + lid * chunk``, ``p = &in[k]``): by name, the offset."""
    counts = write_counts(body)
    out: dict[str, ir.Expr] = {}
    for n in walk(body):
        if not isinstance(n, ir.VarDecl) or not isinstance(n.type, PointerType) \
                or n.init is None or counts.get(n.name, 0):
            continue
        init = n.init
        while isinstance(init, ir.Cast) and isinstance(init.operand.type, PointerType):
            init = init.operand
        base: ir.Expr | None = None
        offset: ir.Expr | None = None
        if isinstance(init, ir.Binary) and init.op == "+":
            base, offset = (init.lhs, init.rhs) if isinstance(init.lhs.type, PointerType) \
                else (init.rhs, init.lhs)
        elif isinstance(init, ir.Unary) and init.op == "&" and isinstance(init.operand, ir.Index):
            base, offset = init.operand.base, init.operand.index
        if isinstance(base, ir.VarRef) and base.name in params and offset is not None \
                and isinstance(offset.type, ScalarType) and offset.type.is_integer:
            out[n.name] = offset
    return out


def element_address(access: Access, uni: Uniformity,
                    offsets: Mapping[str, ir.Expr]) -> ir.Expr | None:
    """The index of the element ``access`` reaches, counted from the buffer argument: its own
    index, plus the offset of a private pointer it goes through (``pointer_offsets``); None
    through any other pointer that varies per work-item, whose elements no index tells apart.
    ``p[i]`` with ``p = in + lid * chunk`` strides by ``chunk`` along x, not by 0."""
    base, address = access.base, access.address
    if isinstance(address.type, PointerType):  # ``*q``: the pointer is the address
        if isinstance(address, ir.VarRef) and address.name in offsets:
            return offsets[address.name]
        return address
    if not isinstance(base, ir.VarRef) or not isinstance(base.type, PointerType):
        return address
    offset = offsets.get(base.name)
    if offset is not None:
        return ir.Binary(LONG, "+", offset, address, loc=address.loc)
    return address if uni.expr(base).is_uniform else None


def memory_addresses(body: Node) -> list[ir.Expr]:
    """The indices of ``memory_accesses``."""
    return [a.address for a in memory_accesses(body)]


def counted_vars(loop: ir.For | ir.While | ir.DoWhile) -> frozenset[str]:
    """The variables ``loop`` only steps by constants (``k++``, ``k += 4``, ``k = k - 1``):
    counters along which an access walks consecutive addresses."""
    steps: dict[str, bool] = {}

    def step_of(e: ir.Expr) -> tuple[str, bool] | None:
        if isinstance(e, ir.Unary) and e.op in ("++", "--", "p++", "p--") \
                and isinstance(e.operand, ir.VarRef):
            return e.operand.name, True
        if not isinstance(e, ir.Assign) or not isinstance(e.target, ir.VarRef):
            return None
        name = e.target.name
        if e.op in ("+=", "-="):
            return name, const_int(e.value) is not None
        value = e.value
        while isinstance(value, ir.Cast):
            value = value.operand
        counted = e.op == "=" and isinstance(value, ir.Binary) and value.op in ("+", "-") \
            and isinstance(value.lhs, ir.VarRef) and value.lhs.name == name \
            and const_int(value.rhs) is not None
        return name, counted

    for n in walk(loop):
        found = step_of(n) if isinstance(n, ir.Expr) else None
        if found is not None:
            steps[found[0]] = steps.get(found[0], True) and found[1]
        elif isinstance(n, ir.Unary) and n.op == "&" and isinstance(n.operand, ir.VarRef):
            steps[n.operand.name] = False
    return frozenset(name for name, counted in steps.items() if counted)


def has_barrier(node: Node) -> bool:
    return any(_is_builtin_call(n, ("barrier", "work_group_barrier")) for n in walk(node))


def has_async(node: Node) -> bool:
    return any(_is_builtin_call(n, ASYNC_COPIES) for n in walk(node))


def escapes(s: ir.Stmt) -> set[str]:
    """The kinds of exits (``break``, ``continue``, ``return``) that leave ``s``."""
    found: set[str] = set()

    def visit(node: Node, in_loop: bool, in_switch: bool) -> None:
        if isinstance(node, ir.Return):
            found.add("return")
        elif isinstance(node, ir.Break):
            if not in_loop and not in_switch:
                found.add("break")
        elif isinstance(node, ir.Continue):
            if not in_loop:
                found.add("continue")
        if not isinstance(node, ir.Stmt):
            return
        for child in children(node):
            if isinstance(child, ir.Stmt):
                visit(child, in_loop or isinstance(node, _LOOPS),
                      in_switch or isinstance(node, ir.Switch))

    visit(s, False, False)
    return found


SHORT_TRIPS = 8  # a counted loop gcc unrolls whole, so the work-item loop around it vectorizes


def _short_counted(s: ir.Stmt) -> int | None:
    """The trip count of ``for (int c = a; c < b; c += k)`` (or ``<=``, ``>``, ``>=``, with
    ``c++`` or ``c--``) with constant ``a``, ``b`` and ``k``, when it is at most
    ``SHORT_TRIPS`` and nothing in the body writes ``c`` or leaves the loop early; else None.
    Every work-item runs it the same number of times (a hand-unrolled group of steps inside a
    loop whose own trip count varies)."""
    if not isinstance(s, ir.For) or not isinstance(s.init, ir.DeclStmt) \
            or len(s.init.decls) != 1 or not isinstance(s.cond, ir.Binary) or s.step is None:
        return None
    counter = s.init.decls[0]
    start = const_int(counter.init) if counter.init is not None else None
    cond = s.cond
    bound = const_int(cond.rhs)
    if start is None or bound is None or not (isinstance(cond.lhs, ir.VarRef)
                                              and cond.lhs.name == counter.name):
        return None
    step = s.step
    if isinstance(step, ir.Unary) and step.op in ("++", "p++", "--", "p--") \
            and isinstance(step.operand, ir.VarRef) and step.operand.name == counter.name:
        k: int | None = 1 if "+" in step.op else -1
    elif isinstance(step, ir.Assign) and step.op in ("+=", "-=") \
            and isinstance(step.target, ir.VarRef) and step.target.name == counter.name:
        k = const_int(step.value)
        k = None if k is None else (k if step.op == "+=" else -k)
    else:
        return None
    if not k or counter.name in written_vars(s.body) or any(
            isinstance(n, ir.Break | ir.Continue | ir.Return) for n in walk(s.body)):
        return None
    last = {"<": bound - 1, "<=": bound, ">": bound + 1, ">=": bound}.get(cond.op)
    if last is None or (k > 0) != (cond.op in ("<", "<=")):
        return None
    trips = max(0, (last - start) // k + 1)
    return trips if trips <= SHORT_TRIPS else None


def _branch_loops(s: ir.If) -> list[ir.Stmt]:
    """The loops in the branches of ``s`` that no other loop holds (through blocks and
    ``if`` statements only)."""
    found: list[ir.Stmt] = []
    pending: list[ir.Stmt | None] = [s.then, s.otherwise]
    while pending:
        c = pending.pop()
        if isinstance(c, _LOOPS):
            found.append(c)
        elif isinstance(c, ir.Block):
            pending.extend(c.stmts)
        elif isinstance(c, ir.If):
            pending += [c.then, c.otherwise]
    return found


# ---------------------------------------------------------------- phase 1: structure


class _Former:
    """Builds group-level code; statements without barriers go to regions unchanged except
    for the exits that leave a region (lowered to mask updates and ``WorkItemExit``)."""

    def __init__(self, uniformity: Uniformity | None, has_return: bool,
                 local_size: tuple[int, int, int] = (1, 1, 1),
                 params: frozenset[str] = frozenset(), masking: bool = True,
                 helpers: frozenset[str] = frozenset(),
                 offsets: dict[str, ir.Expr] | None = None):
        self.uni = uniformity
        # private pointers into a buffer at a fixed offset (``pointer_offsets``)
        self.offsets = offsets or {}
        self.helpers = helpers  # helper functions a masked loop may call (arithmetic only)
        self.masking = masking  # varying loops may run under a loop mask (masked_refusal)
        self.params = params
        self.local_size = local_size
        self.interchanged = 0
        self.mask_names: list[str] = []
        self.fn_mask: str | None = self._new_mask("m_fn") if has_return else None
        # mask stack, outermost first: (kind, name), kind in fn/loop/body/if
        self.masks: list[tuple[str, str]] = [("fn", self.fn_mask)] if self.fn_mask else []
        self.guard: str | None = None  # mask of the work-items active here; None: all
        self.loops: list[str] = []  # group-level loops, innermost last: "lockstep" / "masked"
        self.lockstep_depth = 0
        self.lowered_return = False
        self.in_masked_copy = False  # forming the partial-mask copy of an interchanged loop
        self.formed_twice = 0  # forming either copy of an interchanged loop under a mask
        self.refusals: dict[int, str] = {}  # loop (by id) -> why it was not interchanged
        self.interchanged_loops: set[int] = set()
        self.masked_loops: set[int] = set()  # varying loops run by the group under masks
        self.mask_refusals: dict[int, str | None] = {}  # loop (by id) -> ``masked_refusal``

    def _new_mask(self, prefix: str) -> str:
        name = f"__ppcl_{prefix}{len(self.mask_names)}"
        self.mask_names.append(name)
        return name

    def _uniform(self, s: ir.Stmt) -> bool:
        if self.uni is None:
            return False
        if self.guard is None:
            if self.formed_twice and not self.in_masked_copy:
                # the copy of an interchanged loop for every work-item active: a loop that
                # all of them reach alike there moves out too (a nested loop after an early
                # return; a varying branch still re-forms the outer loop masked)
                return self.uni.control_uniform(s) or self._interchangeable(s)
            return self.uni.control_uniform(s)
        return self._interchangeable(s)

    # ------------------------------------------------------------ blocks and regions

    def _structural(self, s: ir.Stmt) -> bool:
        if has_barrier(s):
            return True
        if self._interchangeable(s):
            return True
        if self._masked_moves(s):
            return True
        if isinstance(s, ir.If) and any(self._mask_refusal(n) is None for n in _branch_loops(s)):
            # a varying branch (``if (x < w && y < h) { ... }``) holding a loop that runs
            # under a loop mask: formed as a masked ``if`` so the loop still leaves
            return True
        if isinstance(s, ir.If) and self.uni is not None and self.uni.convergent(s) and any(
                self._structural(c) for branch in (s.then, s.otherwise) if branch is not None
                for c in (branch.stmts if isinstance(branch, ir.Block) else (branch,))):
            # a branch the work-items that reach it take alike, holding a loop that moves out
            # of the work-item loop: formed as a masked ``if`` so the loop still moves out
            return True
        if self.guard is not None:
            return False
        if has_async(s):
            return True
        exits = escapes(s)
        if self.loops and self.loops[-1] == "lockstep" and exits & {"break", "continue"}:
            return True
        if "return" in exits:
            if self.lockstep_depth > 0:
                return True
            if isinstance(s, ir.Return):
                return True
            if isinstance(s, ir.Block):
                return any(self._structural(c) for c in s.stmts)
            return isinstance(s, ir.If) and self._uniform(s)
        return False

    def _interchangeable(self, s: ir.Stmt) -> bool:
        refusal = self.interchange_refusal(s)
        if refusal is not None and isinstance(s, _LOOPS):
            self.refusals[id(s)] = refusal
        return refusal is None

    def interchange_refusal(self, s: ir.Stmt, under_mask: bool | None = None) -> str | None:
        """Why loop ``s`` does not move out of the work-item loop, None when it does.

        Horizontal inner-loop parallelization: a barrier-free loop with uniform control,
        no exits and a memory access consecutive in local id 0 moves out of the work-item
        loop (it runs in lock step like a barrier loop), so the work-item loop inside its body
        vectorizes across work-items; its accumulators become context arrays.

        Under a mask (after a varying early ``return``, say) the loop must be ``convergent``
        and its control computable at group level even when no work-item is active: only
        arguments, its own counters and variables every work-item assigned, no memory.
        (``guard`` may still be None here while the return sits in the pending run of
        statements; the region cut before the loop puts the function mask in place.)
        ``under_mask`` asks as if it were under one (the mask of a masked loop's steps, before
        they are formed); None: as the loop sits now."""
        if self.uni is None:
            return "no uniformity analysis"
        if not isinstance(s, _LOOPS):
            return "not a loop"
        if self.local_size[0] <= 1:
            return "local size 1 along x"
        if escapes(s):
            return "break, continue or return leaves it"
        if has_async(s):
            return "async copies in it"
        masked = self.guard is not None if under_mask is None else under_mask
        if not (not masked and self.uni.control_uniform(s)) and not (
                self.uni.convergent(s) and self._group_computable(s)):
            return "its trip count is not the same for the work-items that reach it"
        for n in walk(s):
            if isinstance(n, ir.Call) and (n.builtin is None or n.name.startswith(("atom", "printf"))):
                return "it calls a function, an atomic or printf"
        uni = self.uni
        wrapped = wrapped_vars(s.body, uni)
        shapes = [self._address_shape(a, wrapped) for a in memory_accesses(s.body)]
        if any(shape.consecutive_in(0) for shape in shapes):
            return self._row_stream_refusal(s, wrapped)
        # Per-work-item arithmetic on data every work-item reads alike (all-pairs n-body):
        # every access is a broadcast along local id 0, and some private value varies.
        if any(shape.kind is Kind.VARYING or shape.strides[0] != 0 for shape in shapes):
            return "no memory access in it is consecutive along x, and some are not broadcasts"
        if any(isinstance(n, ir.Index) and isinstance(n.base.type, ArrayType)
               and not uni.expr(n.index).is_uniform for n in walk(s.body)):
            # a private array would become a context array strided by its length; indexed
            # alike by all work-items it is laid out element-major (``context_layouts``)
            return "it indexes an array at an index that varies per work-item"
        if not any(not uni.var(name).is_uniform for name in written_vars(s.body)):
            return "it computes nothing per work-item"
        return None

    def _masked_moves(self, s: ir.Stmt) -> bool:
        """Whether loop ``s`` leaves the work-item loop to run under a loop mask
        (``masked_refusal``); why not is kept with the interchange's refusal."""
        refusal = self._mask_refusal(s)
        if refusal is None:
            self.masked_loops.add(id(s))
            return True
        if refusal and id(s) in self.refusals and "not masked" not in self.refusals[id(s)]:
            self.refusals[id(s)] += f"; not masked: {refusal}"
        return False

    def _mask_refusal(self, s: ir.Stmt) -> str | None:
        """``masked_refusal`` of a loop whose trip count varies per work-item, where it sits
        now; "" where a mask has nothing to gain (not such a loop, or masked loops off). The
        loop's own answer is kept: formation asks again for every statement around it."""
        if not isinstance(s, _LOOPS) or not self.masking or self.uni is None \
                or self.uni.control_uniform(s) or self.uni.convergent(s):
            return ""  # the work-items that reach it run it alike: no mask to gain
        if "masked" in self.loops or self.in_masked_copy or self.formed_twice or (
                self.lockstep_depth and not self.loops):
            return "inside a loop that runs at group level under a mask"
        if id(s) not in self.mask_refusals:
            self.mask_refusals[id(s)] = self.masked_refusal(s)
        return self.mask_refusals[id(s)]

    def masked_refusal(self, s: ir.For | ir.While | ir.DoWhile) -> str | None:
        """Why a loop whose trip count varies per work-item stays inside the work-item loop,
        None when the group runs it under a mask.

        Each work-item alone runs such a loop one step after another, each step waiting for
        the last (an escape-time fractal's recurrence, a per-element Newton iteration), and
        gcc vectorizes nothing around it. Run under a loop mask, as formation runs a loop
        with a barrier, every step is a work-item loop over the lanes still active: the
        lanes' steps are independent and vectorize, at the price of the lanes waiting for the
        group's longest trip. Taken when the loop is barrier-free, at the top level of the
        kernel's structure or in its branches (formed as a masked ``if`` then) or in a loop
        running in lock step without a mask (``_mask_refusal``), holds no inner loop but a
        short counted one (``_short_counted``) or one running in lock step under the step's
        mask (``_inner_lock_step_refusal``), no atomic, array index or call other than of
        builtins and ``arithmetic_helpers``,
        no memory access in it follows one of its counters (``counted_vars``) but those
        consecutive along x or the same for all work-items (other gathers are taken), it is
        no grid-stride loop, and it computes something per work-item."""
        uni = self.uni
        if uni is None:
            return "no uniformity analysis"
        if self.local_size[0] < 8:
            return "local size along x under 8"
        if has_barrier(s) or has_async(s) or "return" in escapes(s):
            return "a barrier, an async copy or a return in it"
        for n in walk(s.body):
            if isinstance(n, _LOOPS) and _short_counted(n) is None:
                inner = self._inner_lock_step_refusal(n)
                if inner is not None:
                    return ("a loop in its body that is neither a short counted loop nor one "
                            f"running in lock step ({inner})")
        if isinstance(s, ir.For):
            names = {n.name for n in walk(s) if isinstance(n, ir.VarRef)}
            uniform = frozenset(n for n in names if uni.var(n).is_uniform)
            alone = wg.WorkItemLoop(ir.Block((s,), loc=s.loc), loc=s.loc)
            if not isinstance(plan_stride(alone, uniform, self.params - written_vars(s)), str):
                return "a grid-stride loop (its work-item loop runs it in lock step)"
        for n in walk(s):
            if isinstance(n, ir.Call) and (n.name not in self.helpers if n.builtin is None
                                           else builtin_family(n) in _EFFECT_FAMILIES):
                return "it calls a function that touches memory, an atomic or printf"
            if isinstance(n, ir.Index) and isinstance(n.base.type, ArrayType):
                return "it indexes an array (private, __local or a program-scope table)"
        wrapped = wrapped_vars(s.body, uni)
        walking = counted_vars(s)
        for access in memory_accesses(s):
            address = access.address
            shape = self._address_shape(access, wrapped)
            if shape.consecutive_in(0) or (shape.kind is not Kind.VARYING
                                           and shape.strides[0] == 0):
                continue
            counter = next((n.name for n in walk(address)
                            if isinstance(n, ir.VarRef) and n.name in walking), None)
            if counter is not None:
                # each work-item streams its own run (a CSR row): the loop as written reads
                # consecutive words, the masked steps would gather them across the lanes
                # (a sparse matrix-vector product 1.7 -> 5.9 ms)
                return (f"a memory access in it follows its counter '{counter}', a run of "
                        "its own for each work-item")
        if all(uni.var(name).is_uniform for name in written_vars(s)):
            return "it computes nothing per work-item"
        return None

    def _inner_lock_step_refusal(self, loop: ir.For | ir.While | ir.DoWhile) -> str | None:
        """Why a loop inside a masked loop's body would not run in lock step there (under the
        body's mask: ``interchange_refusal`` with a guard), None when it would: then its steps
        are work-item loops of their own (a Horner loop over shared coefficients in a
        per-element Newton iteration)."""
        if not isinstance(loop, ir.For) or any(isinstance(n, _LOOPS) for n in walk(loop.body)):
            return "not a for loop without loops inside"
        return self.interchange_refusal(loop, under_mask=True)

    def _address_shape(self, access: Access, wrapped: dict[str, ir.Expr]) -> Shape:
        """The shape along the local ids of the element ``access`` reaches
        (``element_address``), a wrapped variable read as its initializer (``wrapped_vars``):
        consecutive but where it wraps."""
        assert self.uni is not None
        address = element_address(access, self.uni, self.offsets)
        if address is None:
            return VARYING
        if wrapped and any(isinstance(n, ir.VarRef) and n.name in wrapped
                           for n in walk(address)):
            address = _Substitute(wrapped).rewrite(address)
        return self.uni.expr(address)

    def _row_stream_refusal(self, s: ir.For | ir.While | ir.DoWhile,
                            wrapped: dict[str, ir.Expr]) -> str | None:
        """Why a loop whose accesses consecutive along x do not move with it stays in the
        work-item loop, None when it moves out.

        When every access consecutive along x is at an address the loop does not change (an
        accumulator such as ``y[i] += A[i * n + j] * x[j]``) and some access the loop moves
        strides across work-items (``A[i * n + j]``, a row per work-item), the interchanged
        loop would gather that access one element per work-item at every step, a cache line
        for each, while each work-item alone streams along its row. A power-of-two row
        length puts all those lines in a few cache sets, which then miss at every step."""
        assert self.uni is not None
        moved = written_vars(s)
        steps_consecutive = False
        steps_strided = False
        for access in memory_accesses(s.body):
            address = access.address
            if not any(isinstance(v, ir.VarRef) and v.name in moved for v in walk(address)):
                continue  # the same element at every step of the loop
            shape = self._address_shape(access, wrapped)
            if shape.consecutive_in(0):
                steps_consecutive = True
            elif shape.kind is Kind.VARYING or shape.strides[0] != 0:
                steps_strided = True
        if steps_strided and not steps_consecutive:
            return ROW_STREAMS
        return None

    def _group_computable(self, s: ir.For | ir.While | ir.DoWhile) -> bool:
        assert self.uni is not None
        control: list[Node] = [s.cond] if s.cond is not None else []
        own: set[str] = set()
        if isinstance(s, ir.For):
            control += [n for n in (s.init, s.step) if n is not None]
            if isinstance(s.init, ir.DeclStmt):
                own = {d.name for d in s.init.decls}
        for part in control:
            for n in walk(part):
                if isinstance(n, ir.VarRef):
                    if n.name not in own and self.uni.declared_level(n.name) > 0:
                        return False
                elif isinstance(n, ir.Index | ir.Member) or (
                        isinstance(n, ir.Unary) and n.op in ("*", "&")):
                    return False
                elif isinstance(n, ir.Call) and n.name not in ID_QUERIES:
                    return False
        return True

    def block(self, stmts: tuple[ir.Stmt, ...] | list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        run: list[ir.Stmt] = []
        for s in stmts:
            if not self._structural(s):
                run.append(s)
                continue
            if run:
                out.extend(self._run(run))
                run = []
            out.extend(self.stmt(s))
            self._after_return_at_top()
        if run:
            out.extend(self._run(run))
        return out

    def _run(self, run: list[ir.Stmt]) -> list[ir.Stmt]:
        """The region of a run of statements, with the updates of uniform variables that end
        it moved after it, to group level (a scan's ``offset *= 2`` after its guarded step):
        every work-item would compute the same value, and the variable stays one group scalar
        instead of a copy per work-item."""
        tail: list[ir.Stmt] = []
        while run and self._group_update(run[-1]):
            tail.insert(0, run.pop())
        return ([self.region(run)] if run else []) + tail

    def _group_update(self, s: ir.Stmt) -> bool:
        """Whether ``s`` assigns or steps a uniform local scalar, from uniform values without
        other effects, where every work-item of the group runs it."""
        if self.guard is not None or self.uni is None or not isinstance(s, ir.ExprStmt):
            return False
        e = s.expr
        if isinstance(e, ir.Assign):
            target, value = e.target, e.value
        elif isinstance(e, ir.Unary) and e.op in ("++", "--", "p++", "p--"):
            target, value = e.operand, None
        else:
            return False
        if not isinstance(target, ir.VarRef) or target.name in self.params \
                or not isinstance(target.type, ScalarType) \
                or not self.uni.var(target.name).is_uniform:
            return False
        return value is None or (self.uni.expr(value).is_uniform and is_effect_free(value))

    def _after_return_at_top(self) -> None:
        if self.lowered_return and self.lockstep_depth == 0 and self.guard is None:
            self.guard = self.fn_mask

    def region(self, stmts: list[ir.Stmt]) -> wg.WorkItemLoop:
        body = ir.Block(tuple(self._lower_exits(s, False, False) for s in stmts),
                        loc=stmts[0].loc)
        loop = wg.WorkItemLoop(body, mask=self.guard, loc=stmts[0].loc)
        self._after_return_at_top()
        return loop

    def _clear(self, upto_kind: str | None, loc: Loc) -> ir.Stmt:
        """Clear the masks from the innermost up to the nearest of kind ``upto_kind``
        (None: every mask), then leave the region."""
        cleared: list[ir.Stmt] = []
        for kind, name in reversed(self.masks):
            cleared.append(wg.MaskSet(name, 0, loc=loc))
            if kind == upto_kind:
                break
        return ir.Block((*cleared, wg.WorkItemExit(loc=loc)), loc=loc)

    def _lower_exits(self, s: ir.Stmt, in_loop: bool, in_switch: bool) -> ir.Stmt:
        if isinstance(s, ir.Return):
            if self.lockstep_depth > 0 and self.guard is None:
                raise _NeedMasked
            self.lowered_return = True
            return self._clear(None, s.loc) if self.fn_mask else wg.WorkItemExit(loc=s.loc)
        if isinstance(s, ir.Break | ir.Continue):
            leaves = not in_loop and (isinstance(s, ir.Continue) or not in_switch)
            if not leaves:
                return s
            if not self.loops or self.loops[-1] != "masked":
                raise _NeedMasked
            return self._clear("loop" if isinstance(s, ir.Break) else "body", s.loc)
        if not escapes(s):
            return s
        inner_loop = in_loop or isinstance(s, _LOOPS)
        inner_switch = in_switch or isinstance(s, ir.Switch)
        return map_child_stmts(s, lambda c: self._lower_exits(c, inner_loop, inner_switch))

    # ------------------------------------------------------------ structural statements

    def stmt(self, s: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(s, ir.Block):
            return self.block(s.stmts)
        if isinstance(s, ir.ExprStmt):
            return self._expr_stmt(s)
        if isinstance(s, ir.DeclStmt):
            return self._decl_stmt(s)
        if isinstance(s, ir.Break | ir.Continue | ir.Return):
            return [s]
        if isinstance(s, ir.Switch):
            raise _error(s.loc, "barrier inside a switch statement is not supported")
        if isinstance(s, ir.If | ir.For | ir.While | ir.DoWhile):
            if self._uniform(s):
                saved = self._save()
                try:
                    return self._lockstep(s)
                except _NeedMasked:
                    self._restore(saved)
            if self.guard is None and self.lockstep_depth > 0 and not has_barrier(s) and not (
                    id(s) in self.masked_loops and not escapes(s)):
                # an exit that must reach a group-level loop: only the enclosing one can help
                raise _NeedMasked
            return self._masked(s)
        raise _error(s.loc, f"unsupported statement around a barrier: {type(s).__name__}")

    def _save(self) -> tuple[object, ...]:
        return (list(self.masks), self.guard, list(self.loops), self.lockstep_depth,
                self.lowered_return)

    def _restore(self, saved: tuple[object, ...]) -> None:
        masks, guard, loops, depth, lowered = saved
        self.masks = list(masks)  # type: ignore[call-overload]
        self.guard = guard  # type: ignore[assignment]
        self.loops = list(loops)  # type: ignore[call-overload]
        self.lockstep_depth = depth  # type: ignore[assignment]
        self.lowered_return = lowered  # type: ignore[assignment]

    def _expr_stmt(self, s: ir.ExprStmt) -> list[ir.Stmt]:
        e = s.expr
        if _is_builtin_call(e, ("barrier", "work_group_barrier")):
            return []
        if self.guard is None and isinstance(e, ir.Call) and _is_builtin_call(e, ASYNC_COPIES):
            return [wg.GroupCall(e, None, loc=s.loc)]
        if (self.guard is None and isinstance(e, ir.Assign) and e.op == "="
                and isinstance(e.value, ir.Call) and _is_builtin_call(e.value, ASYNC_COPIES)):
            return [wg.GroupCall(e.value, e.target, loc=s.loc)]
        if has_barrier(e):
            raise _error(s.loc, "barrier must be called as a statement of its own")
        return [self.region([s])]

    def _decl_stmt(self, s: ir.DeclStmt) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for d in s.decls:
            init = d.init
            if self.guard is None and isinstance(init, ir.Call) and _is_builtin_call(init, ASYNC_COPIES):
                out.append(ir.DeclStmt((dataclasses.replace(d, init=None),), loc=s.loc))
                out.append(wg.GroupCall(init, ir.VarRef(d.type, d.name, loc=s.loc), loc=s.loc))
            else:
                out.append(self.region([ir.DeclStmt((d,), loc=s.loc)]))
        return out

    def _lockstep(self, s: ir.If | ir.For | ir.While | ir.DoWhile) -> list[ir.Stmt]:
        if isinstance(s, _LOOPS) and not has_barrier(s) and not has_async(s):
            self.interchanged += 1
            self.interchanged_loops.add(id(s))
            if self.guard is not None and not self.in_masked_copy:
                return [self._interchange_under_mask(s, self.guard)]
        return self._lockstep_formed(s)

    def _interchange_under_mask(self, s: ir.For | ir.While | ir.DoWhile, guard: str) -> ir.Stmt:
        """An interchanged loop under a mask, formed twice: the mask cannot change inside it
        (it has no exits), so when every work-item is active, as in all groups away from the
        edges of the range, its work-item loops run without testing the mask and vectorize."""
        self.guard = None
        self.formed_twice += 1  # no masked loop in either copy: they must stay alike
        try:
            full = self._lockstep_formed(s)
        finally:
            self.guard = guard
        self.in_masked_copy = True  # nested loops are formed once, masked, to keep the two
        try:                        # copies region for region alike (see liveness)
            partial = self._lockstep_formed(s)
        finally:
            self.in_masked_copy = False
            self.formed_twice -= 1
        return ir.If(wg.MaskAll(INT, guard, loc=s.loc), ir.Block(tuple(full), loc=s.loc),
                     ir.Block(tuple(partial), loc=s.loc), loc=s.loc)

    def _lockstep_formed(self, s: ir.If | ir.For | ir.While | ir.DoWhile) -> list[ir.Stmt]:
        self.lockstep_depth += 1
        try:
            if isinstance(s, ir.If):
                then = ir.Block(tuple(self.stmt_as_block(s.then)), loc=s.then.loc)
                other = None
                if s.otherwise is not None:
                    other = ir.Block(tuple(self.stmt_as_block(s.otherwise)), loc=s.otherwise.loc)
                return [ir.If(s.cond, then, other, loc=s.loc)]
            self.loops.append("lockstep")
            body = ir.Block(tuple(self.stmt_as_block(s.body)), loc=s.body.loc)
            self.loops.pop()
            if isinstance(s, ir.While):
                return [ir.While(s.cond, body, loc=s.loc)]
            if isinstance(s, ir.DoWhile):
                return [ir.DoWhile(body, s.cond, loc=s.loc)]
            out: list[ir.Stmt] = []
            if s.init is not None:
                out.append(s.init)  # group level; phase 2 decides scalar or per work-item
            out.append(ir.For(None, s.cond, s.step, body, s.unroll, loc=s.loc))
            return [ir.Block(tuple(out), loc=s.loc)] if len(out) > 1 else out
        finally:
            self.lockstep_depth -= 1

    def stmt_as_block(self, s: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(s, ir.Block):
            return self.block(s.stmts)
        return self.block((s,))

    # ------------------------------------------------------------ masked lock step

    def _mask_split(self, cond: ir.Expr, then_mask: str, else_mask: str, loc: Loc) -> ir.Stmt:
        choose = ir.If(cond, ir.Block((wg.MaskSet(then_mask, 1, loc=loc),), loc=loc),
                       ir.Block((wg.MaskSet(else_mask, 1, loc=loc),), loc=loc), loc=loc)
        body: list[ir.Stmt] = [wg.MaskSet(then_mask, 0, loc=loc), wg.MaskSet(else_mask, 0, loc=loc)]
        if self.guard is None:
            body.append(choose)
        else:
            body.append(ir.If(wg.MaskRef(CHAR, self.guard, loc=loc), choose, loc=loc))
        return wg.WorkItemLoop(ir.Block(tuple(body), loc=loc), loc=loc)

    def _masked(self, s: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(s, ir.If):
            return self._masked_if(s)
        assert isinstance(s, ir.For | ir.While | ir.DoWhile)
        return self._masked_loop(s)

    def _masked_if(self, s: ir.If) -> list[ir.Stmt]:
        loc = s.loc
        then_mask, else_mask = self._new_mask("m_then"), self._new_mask("m_else")
        out: list[ir.Stmt] = [self._mask_split(s.cond, then_mask, else_mask, loc)]
        saved_guard = self.guard
        for mask, branch in ((then_mask, s.then), (else_mask, s.otherwise)):
            if branch is None:
                continue
            self.masks.append(("if", mask))
            self.guard = mask
            body = self.stmt_as_block(branch)
            self.masks.pop()
            self.guard = saved_guard
            out.append(ir.If(wg.MaskAny(INT, mask, loc=loc), ir.Block(tuple(body), loc=loc),
                             loc=loc))
        return out

    def _masked_loop(self, s: ir.For | ir.While | ir.DoWhile) -> list[ir.Stmt]:
        loc = s.loc
        out: list[ir.Stmt] = []
        if isinstance(s, ir.For) and s.init is not None:
            out.append(self.region([s.init]))
        loop_mask, body_mask = self._new_mask("m_loop"), self._new_mask("m_body")
        if self.guard is None:
            out.append(wg.MaskFill(loop_mask, 1, loc=loc))
        else:
            out.append(wg.MaskCopy(loop_mask, self.guard, loc=loc))
        # a barrier-free loop taken for its vectorized steps (``masked_refusal``)
        vectorized = id(s) in self.masked_loops

        def test(cond: ir.Expr) -> list[ir.Stmt]:
            if vectorized:
                # every lane's mask stored, the test evaluated where it is set: no masked
                # store for the next step's loads to wait on (a third of Newton's time)
                lane = wg.MaskRef(INT, loop_mask, loc=loc)
                keep = ir.Assign(INT, "=", lane, ir.Binary(INT, "&&", lane, cond, loc=loc),
                                 loc=loc)
                update: ir.Stmt = wg.WorkItemLoop(ir.Block((ir.ExprStmt(keep, loc=loc),),
                                                           loc=loc), loc=loc)
            else:
                not_cond = ir.Unary(INT, "!", cond, loc=cond.loc)
                clear = ir.If(not_cond, ir.Block((wg.MaskSet(loop_mask, 0, loc=loc),),
                                                 loc=loc), loc=loc)
                update = wg.WorkItemLoop(ir.Block((clear,), loc=loc), mask=loop_mask, loc=loc)
            stop = ir.If(ir.Unary(INT, "!", wg.MaskAny(INT, loop_mask, loc=loc), loc=loc),
                         ir.Block((ir.Break(loc=loc),), loc=loc), loc=loc)
            return [update, stop]

        iteration: list[ir.Stmt] = []
        if vectorized:
            # once few lanes are left (a whole step over the group costs about what each of
            # a sixteenth of its lanes costs alone), each finishes the loop alone: at the top
            # of an iteration, where every lane left is about to run the loop's test (or the
            # first step of a ``do``), so the rest is the loop as written
            iteration.append(ir.If(wg.MaskFew(INT, loop_mask, loc=loc),
                                   ir.Block((ir.Break(loc=loc),), loc=loc), loc=loc))
        if isinstance(s, ir.While):
            iteration += test(s.cond)
        elif isinstance(s, ir.For):
            if s.cond is not None:
                iteration += test(s.cond)
            else:
                iteration += test(ir.IntLit(INT, 1, loc=loc))
        iteration.append(wg.MaskCopy(body_mask, loop_mask, loc=loc))
        saved_guard = self.guard
        self.masks += [("loop", loop_mask), ("body", body_mask)]
        self.loops.append("masked")
        self.guard = body_mask
        iteration += self.stmt_as_block(s.body)
        self.guard = saved_guard
        self.loops.pop()
        del self.masks[-2:]
        if isinstance(s, ir.For) and s.step is not None:
            step = ir.ExprStmt(s.step, loc=s.step.loc)
            iteration.append(wg.WorkItemLoop(ir.Block((step,), loc=loc), mask=loop_mask, loc=loc))
        if isinstance(s, ir.DoWhile):
            iteration += test(s.cond)
        out.append(ir.For(None, None, None, ir.Block(tuple(iteration), loc=loc), loc=loc))
        if vectorized:
            rest = dataclasses.replace(s, init=None) if isinstance(s, ir.For) else s
            # the counters of inner loops, which the steps above run at group level, are
            # locals of their own in the loop as written
            counters = {d.name for n in walk(rest.body) if isinstance(n, ir.For)
                        and isinstance(n.init, ir.DeclStmt) for d in n.init.decls}
            if counters:
                renamed = Renamer({c: f"{c}__alone" for c in counters}).rewrite(rest)
                assert isinstance(renamed, ir.For | ir.While | ir.DoWhile)
                rest = renamed
            self.guard = loop_mask
            out.append(self.region([rest]))
            self.guard = saved_guard
        return out

    def function_body(self, body: ir.Block) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        if self.fn_mask is not None:
            out.append(wg.MaskFill(self.fn_mask, 1, loc=body.loc))
        return out + self.block(body.stmts)


# ---------------------------------------------------------------- the pass


def _local_vars(body: ir.Block) -> tuple[tuple[LocalVar, ...], int]:
    placed, total = static_local_layout(body)
    return tuple(LocalVar(name, t, offset) for name, t, offset in placed), total


def _group_setup(body: ir.Block, names: frozenset[str]) -> tuple[ir.Stmt, ...]:
    """The leading declarations of ``body`` that declare only ``names``."""
    count = 0
    for s in body.stmts:
        if not isinstance(s, ir.DeclStmt) or any(d.name not in names for d in s.decls):
            break
        count += 1
    return body.stmts[:count]


def form_workgroup(module: ir.Module, kernel: ir.Function, local_size: tuple[int, int, int],
                   uniformity: Uniformity | None = None,
                   group_setup: frozenset[str] = frozenset(), *,
                   masked_loops: bool = True) -> FormedKernel:
    """Work-group formation of ``kernel`` for a fixed local size. Helpers that reach a barrier
    are inlined before (``transforms/inline.py``), vector temporaries scalarized after
    (``transforms/scalarize.py``): see the ``inline`` and ``scalarize`` passes.
    ``group_setup`` names variables a pass declared at the start of the kernel with values the
    same for the whole group (``magicdiv.py``'s magic numbers): those declarations run once,
    at group level, before the first work-item loop. ``masked_loops``: a loop whose trip
    count varies per work-item may run under a loop mask (``_Former.masked_refusal``)."""
    assert not calls_barrier_functions(module, kernel), "inline barrier helpers first"
    assert kernel.body is not None
    whole_body = kernel.body
    setup = _group_setup(whole_body, group_setup)
    body = dataclasses.replace(whole_body, stmts=whole_body.stmts[len(setup):])
    has_return = any(isinstance(n, ir.Return) for n in walk(body))
    helpers = arithmetic_helpers(module) if masked_loops else frozenset()
    offsets = pointer_offsets(body, frozenset(p.name for p in kernel.params))
    probe = _Former(uniformity, False, local_size, masking=masked_loops, helpers=helpers,
                    offsets=offsets)
    structured = has_barrier(body) or has_async(body) or any(
        probe._interchangeable(n) or probe._masked_moves(n) for n in walk(body)
        if isinstance(n, ir.Stmt))
    former = _Former(uniformity, has_return and structured, local_size,
                     frozenset(p.name for p in kernel.params), masking=masked_loops,
                     helpers=helpers, offsets=offsets)
    if structured:
        group = ir.Block(tuple(former.function_body(body)), loc=body.loc)
    else:
        group = ir.Block((former.region(list(body.stmts)),), loc=body.loc) if body.stmts else body
    group = dataclasses.replace(group, stmts=setup + group.stmts)
    body = whole_body
    decls = {d.name: d for n in walk(body) if isinstance(n, ir.DeclStmt) for d in n.decls
             if d.space is not AddressSpace.LOCAL}
    params = {p.name: p for p in kernel.params}
    variables = Variables(group, decls, params, uniformity)
    context = {n: variables.var_type(n) for n in sorted(variables.context)}
    layouts = context_layouts(group, {n: t for n, t in context.items()
                                      if isinstance(t, ArrayType)}, uniformity)
    rewritten = variables.rewrite(group)
    context.update(variables.temps)
    scalars = {n: variables.var_type(n) for n in sorted(variables.group_scalars)}
    local_vars, local_bytes = _local_vars(body)
    items = local_size[0] * local_size[1] * local_size[2]
    in_block, block_bytes = context_block_layout(
        [(name, t.size) for name, t in context.items()], local_bytes, items)
    loops = tuple(_loop_decision(loop, probe, former) for loop in walk(body)
                  if isinstance(loop, _LOOPS))
    return FormedKernel(
        function=kernel,
        body=rewritten,
        local_size=local_size,
        context_vars=context,
        group_scalars=scalars,
        masks=tuple(former.mask_names),
        local_vars=local_vars,
        local_static_bytes=local_bytes,
        context_offsets=in_block,
        block_bytes=block_bytes,
        interchanged=former.interchanged,
        recomputed=tuple(variables.recomputed),
        plans=tuple(f"'{name}' recomputed in each region that reads it: the group's "
                    f"{', '.join(repr(r) for r in reads)} cannot change where it is used"
                    for name, reads in variables.recomputed_reads.items()),
        uniform_vars=frozenset(n for n in decls if uniformity is not None
                               and uniformity.var(n).is_uniform),
        loops=loops,
        context_layouts=layouts,
        tables={n: b for n, b in table_bounds(module).items()
                if n not in params and n not in decls},
    )


_LOOP_KINDS = {ir.For: "for", ir.While: "while", ir.DoWhile: "do"}


def _loop_decision(loop: ir.For | ir.While | ir.DoWhile, probe: _Former,
                   former: _Former) -> LoopDecision:
    kind = _LOOP_KINDS[type(loop)]
    if id(loop) in former.interchanged_loops:
        return LoopDecision(loop.loc, kind, True)
    if id(loop) in former.masked_loops:
        return LoopDecision(loop.loc, kind, False, "its trip count varies per work-item",
                            masked=True)
    if has_barrier(loop):
        return LoopDecision(loop.loc, kind, False, "a barrier in it", lockstep=True)
    else:
        reason = former.refusals.get(id(loop)) or probe.refusals.get(id(loop)) \
            or "inside a statement that runs per work-item"
    return LoopDecision(loop.loc, kind, False, reason, streams_rows=reason == ROW_STREAMS)
