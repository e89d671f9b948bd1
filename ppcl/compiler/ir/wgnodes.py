"""IR nodes that exist only after work-group formation (``transforms/workgroup.py``).

A formed kernel body is "group-level" code: it runs once per work-group. Per-work-item code
sits inside ``WorkItemLoop`` nodes, which iterate over every local id (z, y, x; x innermost).
Group-level code sees the local ids of work-item 0, so a uniform value read at group level is
read from work-item 0's copy.

Per-work-item state that crosses work-item loops lives in context arrays (one entry per
linear local id, ``ContextRef``; a private array's entries may instead be laid out element
first, ``ContextLayout``); activity masks are ``char`` arrays of the same length.

The plans a work-item loop may carry (``JamPlan``, ``StridePlan``) are decided by
``transforms/schedule.py`` and only printed by codegen. They hold parts of the loop's body
again, so they are not children of the loop: walkers and rewriters do not enter them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import Type


@dataclass(frozen=True)
class JamPlan:
    """Unroll-and-jam of ``width`` work-items through one loop (see ``transforms/jam.py``): the
    work-item body is ``prefix``, ``lead``, ``loop``, ``suffix``; ``carried`` are the
    declarations of prefix and lead, one copy per jammed work-item; ``shared`` those the
    copies share (the loop's counter, declared before it), declared once."""

    prefix: tuple[ir.Stmt, ...]
    loop: ir.For
    suffix: tuple[ir.Stmt, ...]
    carried: tuple[ir.VarDecl, ...]
    width: int
    lead: tuple[ir.Stmt, ...] = ()  # after the prefix's exits, with effects: no exit in it
    shared: tuple[ir.VarDecl, ...] = ()


@dataclass(frozen=True)
class StridePlan:
    """``for (T i = <id along x> + u; i < end; i += step)`` run by all work-items in lock step:
    iteration ``t`` of every work-item, then iteration ``t + 1``. With ``step`` uniform and
    positive, the work-items still active at an iteration are those with ``x < end - i(x=0)``,
    a prefix of the work-item loop (see ``transforms/jam.py``)."""

    loop: ir.For
    var: ir.VarDecl
    end: ir.Expr  # the bound, made exclusive
    step: ir.Expr


@dataclass(frozen=True)
class SkipPlan:
    """Blocks of ``width`` lanes along x that run no lane, skipped at once
    (``transforms/skip.py``). Every lane leaves the body where ``load``, an element at unit
    stride along x, is zero and the comparisons ``bounds`` before it in the guard are false.
    A block whose ``bounds`` are false at its first and its last lane (they are affine in x:
    false between) and whose elements of ``load`` are all zero bits runs no lane. ``prefix``:
    the declarations before the guard, without effects, evaluated again at those two lanes."""

    prefix: tuple[ir.Stmt, ...]
    bounds: tuple[ir.Expr, ...]
    load: ir.Index
    width: int


@dataclass(frozen=True)
class SinkPlan:
    """A store of a uniform value to a uniform address under the lanes' own conditions
    (``*over = 1`` where a lane changed something), the only access through its pointer in
    the work-item loop, run once after the loop where some lane reached it
    (``transforms/sink.py``). The printer runs that copy of the loop where ``disjoint``, a
    group-level test, shows that no other access of the loop touches the stored bytes: each
    ``(pointer, lowest, highest)`` of ``others`` is a buffer the loop reads or writes between
    those indices (``long``, at group level); elsewhere it runs the loop as formed."""

    store: ir.ExprStmt  # the statement in the loop's body (the same object)
    target: ir.Expr
    others: tuple[tuple[ir.Expr, ir.Expr, ir.Expr], ...]


@dataclass(frozen=True)
class LoopPlan:
    """The plan that fired for one loop of the kernel, and why the others did not, decided by
    formation and ``transforms/schedule.py`` (``PPCL_DEBUG=plans`` prints it).

    ``plan``: ``interchange`` (the loop runs at group level with work-item loops inside its
    body), ``jam`` or ``grid-stride`` (the plan of the work-item loop it sits in is about this
    loop), ``lock step`` (a barrier in it), ``masked lock step`` (its trip count varies per
    work-item: it runs at group level under a loop mask), ``rows`` or ``plain`` (the
    work-item loop runs its work-items one after another, each running this loop). ``work_item_loop``: the number
    of the work-item loop it runs in (as ``FormedKernel.plans`` counts them), None at group
    level. ``why_not``: one short reason per plan that did not fire."""

    loc: Loc
    kind: str  # for, while, do
    plan: str
    work_item_loop: int | None = None
    why_not: tuple[tuple[str, str], ...] = ()  # (plan, reason)

    def line(self) -> str:
        where = "" if self.work_item_loop is None else f" in work-item loop {self.work_item_loop}"
        others = "; ".join(f"no {plan}: {reason}" for plan, reason in self.why_not)
        return f"{self.kind} loop at {self.loc}: {self.plan}{where}" + (
            f" ({others})" if others else "")


@dataclass(frozen=True)
class WorkItemLoop(ir.Stmt):
    """Runs ``body`` for every work-item of the group, in linear local id order.

    ``mask``: the name of an activity mask; only work-items whose entry is non-zero run.
    ``serial_reduction``: the body accumulates floats in a loop whose trip count varies
    between work-items, so the work-item loop cannot vectorize and the inner loop could only
    as an in-order (slower than scalar) reduction.
    ``simd``: the innermost loop may carry ``#pragma omp simd`` (no calls with side effects
    ordered across work-items, no group scalars written).
    ``plan``: how the printer runs the work-items (``transforms/schedule.py``); None: one after
    another, the plain loop.
    """

    body: ir.Stmt
    mask: str | None = None
    simd: bool = False
    serial_reduction: bool = False  # a floating-point sum in a loop whose trip count varies
    plan: JamPlan | StridePlan | None = None
    # a group-level int: when it holds, no lane of the group passes the guard the whole body
    # sits under, and the group skips the loop (``transforms/split.py``, ``empty_test``)
    empty: ir.Expr | None = None
    # bounds on the global id along x (inclusive) that every lane passing the guard the whole
    # body sits under meets, over the row's global ids along y and z (a triangle's ``j <= i``):
    # each row of lanes along x runs only the lanes between them (``transforms/split.py``,
    # ``row_bounds``)
    clip_lower: tuple[ir.Expr, ...] = ()
    clip_upper: tuple[ir.Expr, ...] = ()
    # blocks of lanes whose guard reads zero at unit stride, skipped at once
    # (``transforms/skip.py``); like ``plan``, not a child of the loop
    skip: SkipPlan | None = None
    # a uniform store run once after the loop (``transforms/sink.py``); not a child either
    sink: SinkPlan | None = None


@dataclass(frozen=True)
class SplitLoop(ir.Stmt):
    """A work-item loop split along x by ``transforms/split.py`` (input space splitting).

    At group level: when ``test`` holds (the group's lanes along y and z all lie in the
    subdomain), the lanes whose global id along x lies between every ``lower`` and every
    ``upper`` bound (inclusive, absolute global ids) run ``fast``, a copy of the loop without
    the guards, clamps and bounds that are decided on that subdomain; the lanes before and
    after them, and every lane of a group where ``test`` fails, run ``guarded``, the loop as
    formed. ``reason``: what the split removes, for ``PPCL_DEBUG=plans``."""

    guarded: WorkItemLoop
    fast: WorkItemLoop
    test: ir.Expr
    lower: tuple[ir.Expr, ...]
    upper: tuple[ir.Expr, ...]
    reason: str = ""
    # the dispatcher's data: which bit of the launch's ``unsplit`` mask runs this loop as
    # formed, and the costs it weighs (None: no choice, the split always runs)
    index: int = 0
    score: SplitScore | None = None
    # as ``WorkItemLoop.empty``, for the whole split loop (its copies carry none)
    empty: ir.Expr | None = None
    # (below, above): every lane before (after) the fast range fails the guard the whole body
    # sits under, so no loop runs for those lanes when the fast copy runs
    edges_fail: tuple[bool, bool] = (False, False)


Terms = tuple[tuple[tuple[str, ...], int], ...]  # a polynomial: (names of a monomial, coeff)


@dataclass(frozen=True)
class SplitScore:
    """The parametric cost of the two subkernels of a ``SplitLoop`` (``transforms/split_score.py``
    builds and evaluates it): with ``N`` lanes in the launch, ``F`` lanes in the bounding box of
    the fast subdomain and ``R`` rows of lanes along x in the groups that run the split,

        split   = fast * F + guarded * (N - F) + row * R
        guarded = guarded * N

    and the launch runs the cheaper. ``fast``, ``guarded``: the cost of one lane of each copy
    from its accesses (uniform and consecutive cheap, strided and divergent dear, masked dearer);
    ``row``: the lanes at the edges of the fast range that run one at a time. The box: lanes along
    x from the largest of ``x_lows`` to the smallest of ``x_highs``, group bases along y and z
    (``y_lows``..) likewise, where every ``tests`` entry is ``>= 0``; every polynomial is over
    the launch's sizes (``gsize0``, ``offset0``..) and the scalar arguments."""

    fast: int
    guarded: int
    row: int
    tests: tuple[Terms, ...]
    x_lows: tuple[Terms, ...]
    x_highs: tuple[Terms, ...]
    y_lows: tuple[Terms, ...]
    y_highs: tuple[Terms, ...]
    z_lows: tuple[Terms, ...]
    z_highs: tuple[Terms, ...]
    local_size: tuple[int, int, int]
    rows: bool  # the loop runs a row of groups: one set of x loops per row, not per group


@dataclass(frozen=True)
class WorkItemExit(ir.Stmt):
    """Ends the current work-item's run of the enclosing ``WorkItemLoop`` body."""


@dataclass(frozen=True)
class ContextDecl(ir.Stmt):
    """A group-level array of ``type`` with one entry per work-item (a context array)."""

    name: str
    type: Type


@dataclass(frozen=True)
class ContextLayout:
    """How the context array of private array ``name`` is laid out (``transforms/context.py``
    decides, ``PPCL_DEBUG=plans`` prints it). Work-item-major: ``name[work-items][n]``, each
    work-item's array contiguous. Element-major: ``name[n][work-items]``, the work-items'
    copies of each element contiguous, so that an element indexed alike by all work-items is
    read and written at consecutive addresses by consecutive work-items and the work-item
    loop vectorizes. ``reason``: why this layout. ``components``: the variable is a vector
    (or a struct of fields of one scalar type) and its element-major layout is
    component-major, ``name[components][work-items]`` (``name[fields][work-items]``)."""

    name: str
    element_major: bool
    reason: str
    components: bool = False

    def line(self) -> str:
        layout = "work-item-major" if not self.element_major else \
            "component-major" if self.components else "element-major"
        return f"context array {self.name}: {layout} ({self.reason})"


@dataclass(frozen=True)
class ContextRef(ir.Expr):
    """The current work-item's entry of context array ``name`` (an lvalue of ``type``)."""

    name: str


@dataclass(frozen=True)
class ContextInit(ir.Stmt):
    """``name[lid] = init`` for a context variable declared with an initializer."""

    name: str
    init: ir.Expr


@dataclass(frozen=True)
class MaskDecl(ir.Stmt):
    """A group-level activity mask: one ``char`` per work-item."""

    name: str


@dataclass(frozen=True)
class MaskFill(ir.Stmt):
    """Group level: every entry of ``name`` becomes ``value`` (0 or 1)."""

    name: str
    value: int


@dataclass(frozen=True)
class MaskCopy(ir.Stmt):
    """Group level: ``dst`` becomes a copy of ``src``."""

    dst: str
    src: str


@dataclass(frozen=True)
class MaskSet(ir.Stmt):
    """Per work-item: ``name[lid] = value`` (value is 0 or 1)."""

    name: str
    value: int


@dataclass(frozen=True)
class MaskRef(ir.Expr):
    """Per work-item: ``name[lid]``."""

    name: str


@dataclass(frozen=True)
class MaskAny(ir.Expr):
    """Group level: whether any entry of mask ``name`` is set."""

    name: str


@dataclass(frozen=True)
class MaskFew(ir.Expr):
    """Group level: whether at most one in ``FEW_LANES`` entries of mask ``name`` is set (a
    masked loop's lanes then finish one by one: ``transforms/workgroup.py``)."""

    name: str


FEW_LANES = 16


@dataclass(frozen=True)
class MaskAll(ir.Expr):
    """Group level: whether every entry of mask ``name`` is set."""

    name: str


@dataclass(frozen=True)
class GroupEval(ir.Expr):
    """Group level: evaluate ``expr`` for every work-item (it has side effects on per-work-item
    state) and yield work-item 0's value, kept in context array ``temp`` (None: value unused)."""

    expr: ir.Expr
    temp: str | None = None


@dataclass(frozen=True)
class GroupCall(ir.Stmt):
    """A builtin executed once by the whole group (async copies), arguments evaluated as
    work-item 0 sees them; ``target`` receives the result (an lvalue) when not None."""

    call: ir.Call
    target: ir.Expr | None = None


@dataclass(frozen=True)
class LocalVarDecl(ir.Stmt):
    """A ``__local`` variable placed at ``offset`` in the group's local-memory block."""

    name: str
    type: Type
    offset: int
