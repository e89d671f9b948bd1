"""The optimizations of a recording, each a small function over its task graph.

``build_graph`` makes the graph of a recording; then, in order:

- :func:`remove_redundant_transfers`: a write of the same host array to the same range, a read
  of the same range into the same host array, or the same copy, with nothing between that
  touches either side, moves bytes already there;
- :func:`eliminate_dead_tasks`: a task whose every written buffer is dead after it (released by
  the program while recorded, or wholly overwritten by a transfer, before anything reads it);
- :func:`fuse_kernels`: consecutive kernels over the same NDRange merged: *vertical* when the
  later one reads what the earlier wrote, each at the work-item's own element (same canonical
  index, no halo), *horizontal* when they are independent and share an input;
- :func:`specialize`: scalar arguments equal to their values in the previous replay of the same
  graph become literals.

Every decision is noted on the graph with its reason (``PPCL_DEBUG=overlay`` prints them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ppcl.compiler.analysis.effects import is_effect_free
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import PointerType, Type
from ppcl.compiler.ir.visit import walk
from ppcl.devices.interface import BufferArg, ValueArg
from ppcl.overlay.fuse import (
    WORK_ITEM_FUNCTIONS,
    Forward,
    KernelFacts,
    Part,
    canonical_index,
    index_values,
    loads_of,
    pointwise_value,
    scalar_value,
    top_level_store,
)
from ppcl.overlay.graph import (
    Command,
    Node,
    Numbering,
    TaskGraph,
    add_edges,
    kernel_sets,
    root_of,
    transfer_label,
)
from ppcl.runtime.queue import KernelTask, TransferTask

# a consumer reading a point-wise producer's output at more distinct elements than this keeps
# reading it from memory: recomputing the grayscale value at the 8 neighbours of a 3x3 Sobel
# made that pipeline 1.6x slower on the CPU device than fusing without recomputation
MAX_RECOMPUTED_READS = 2


@dataclass
class KernelInfo:
    """A kernel node's fusion facts: its parts and, per buffer, the canonical indices of its
    accesses (None where one is not canonical or not a plain access)."""

    parts: list[Part]
    indices: dict[int, set[bytes] | None] = field(default_factory=dict)
    stored_by: dict[int, int] = field(default_factory=dict)  # buffer -> part storing it
    forwards: dict[int, Forward] = field(default_factory=dict)
    ndrange: Any = None
    refusal: str = ""
    covers: set[int] = field(default_factory=set)  # buffers every byte of which it stores
    pointwise: set[int] = field(default_factory=set)  # buffers stored point-wise (fuse.py)
    plain: dict[int, bool] = field(default_factory=dict)  # every access p[e], e effect-free
    recomputed: dict[int, bool] = field(default_factory=dict)  # buffer -> producer body kept
    # buffer -> the element type its parameter points to (None once fused parts disagree):
    # the same index in two kernels is the same element, and a stored value the value a load
    # sees, only when both view the buffer as the same type
    elements: dict[int, Type | None] = field(default_factory=dict)


def _transfer_ranges(task: TransferTask, numbers: Numbering) -> tuple[set[int], set[int]]:
    return ({numbers.buffer(m) for m, _, _ in task.reads},
            {numbers.buffer(m) for m, _, _ in task.writes})


def build_graph(commands: Sequence[Command], facts_of: Any,
                known: set[tuple[int, int]]) -> tuple[TaskGraph, list[KernelInfo | None]]:
    """The task graph of ``commands`` and the fusion facts of its kernel nodes; the values of
    the scalar arguments in ``known`` ((command, argument index) pairs) are used by the
    analyses, the others stand for any value."""
    numbers = Numbering()
    nodes: list[Node] = []
    infos: list[KernelInfo | None] = []
    for index, command in enumerate(commands):
        task = command.task
        if isinstance(task, KernelTask):
            facts: KernelFacts = facts_of(task.kernel)
            reads, writes = kernel_sets(task, facts.function.params, numbers, facts.accesses)
            info = _kernel_info(task, facts, numbers, {a for c, a in known if c == index})
            nodes.append(Node([index], "kernel", task.kernel.function_name, reads, writes,
                              covers=info.covers))
            infos.append(info)
        else:
            reads, writes = _transfer_ranges(task, numbers)
            host = numbers.host(task.host) if task.host is not None else None
            nodes.append(Node([index], "transfer", transfer_label(command.kind), reads, writes,
                              host))
            infos.append(None)
    released = {i for i, mem in enumerate(numbers.buffers) if mem.unreachable}
    graph = TaskGraph(nodes, numbers.buffers, released, set())
    return graph, infos


def _kernel_info(task: KernelTask, facts: KernelFacts, numbers: Numbering,
                 known: set[int]) -> KernelInfo:
    fn = facts.function
    values: dict[str, int | float] = {}
    buffers: list[int | None] = []
    refusal = facts.refusal
    seen: dict[int, str] = {}
    for index, (param, arg) in enumerate(zip(fn.params, task.args)):
        number = None
        if isinstance(arg, BufferArg) and arg.owner is not None:
            number = numbers.buffer(arg.owner)
            if root_of(arg.owner) is not arg.owner:
                refusal = refusal or f"binds a sub-buffer to '{param.name}'"
            if number in seen:
                refusal = refusal or f"binds one buffer to '{seen[number]}' and '{param.name}'"
            seen[number] = param.name
        elif isinstance(arg, ValueArg) and index in known:
            value = scalar_value(param, arg.data)
            if value is not None:
                values[param.name] = value
        buffers.append(number)
    info = KernelInfo([Part(facts, tuple(buffers), {})], ndrange=task.launch.ndrange,
                      refusal=refusal)
    for param, number in zip(fn.params, buffers):
        if number is None:
            continue
        info.elements[number] = param.type.pointee if isinstance(param.type, PointerType) \
            else None
        access = facts.accesses.get(param.name)
        info.plain[number] = access is not None and access.direct \
            and all(is_effect_free(e) for e in access.indices)
        if access is None or not access.direct:
            info.indices[number] = None
            continue
        if access.writes and not top_level_store(fn, param.name):
            info.indices[number] = None
            continue
        info.indices[number] = _addressed(access.indices, facts, values, task.launch.ndrange)
        if access.writes and info.indices[number] is not None and not refusal:
            if _stores_whole(access.indices[0], facts, values, task, param, numbers, number):
                info.covers.add(number)
                if _point_wise(facts, param.name, values, task.launch.ndrange):
                    info.pointwise.add(number)
        if access.writes:
            info.stored_by[number] = 0
    return info


def _addressed(indices: Sequence[ir.Expr], facts: KernelFacts, values: dict[str, int | float],
               ndrange: Any) -> set[bytes] | None:
    """The elements each access addresses, per work-item, as digests: two accesses written
    differently compare equal when they address the same element in every work-item."""
    digests: set[bytes] = set()
    dims = ndrange.work_dim
    for e in indices:
        canon = canonical_index(e, facts, values)
        if canon is None:
            return None
        addressed = index_values(canon, ndrange.global_size[:dims], ndrange.global_offset[:dims])
        if addressed is None:
            return None
        digests.add(hashlib.sha1(addressed.tobytes()).digest())
    return digests


def _point_wise(facts: KernelFacts, name: str, values: dict[str, int | float],
                ndrange: Any) -> bool:
    """Whether the value stored to ``name`` depends on the work-item only through loads of
    the very element stored, of buffers other than ``name`` (so it can be recomputed at any
    other element: those loads see the same values wherever they run)."""
    value = pointwise_value(facts, name)
    if value is None:
        return False
    store = next(e for e in facts.accesses[name].indices)
    own = _addressed([store], facts, values, ndrange)
    loads = loads_of(value)
    for load in loads:
        if not isinstance(load.base, ir.VarRef) or load.base.name not in facts.accesses:
            return False
        if load.base.name == name:
            return False  # updated in place: at another element it would load a new value
        if _addressed([load.index], facts, values, ndrange) != own:
            return False
    rest = [n for n in walk(value) if isinstance(n, ir.Call) and n.name in WORK_ITEM_FUNCTIONS]
    in_loads = [n for load in loads for n in walk(load.index) if isinstance(n, ir.Call)]
    return len(rest) == len(in_loads) and own is not None


def _stores_whole(index: ir.Expr, facts: KernelFacts, values: dict[str, int | float],
                  task: KernelTask, param: ir.Param, numbers: Numbering, number: int) -> bool:
    """Whether the kernel's one store to ``param`` writes every element of its buffer once."""
    pointee = param.type.pointee if isinstance(param.type, PointerType) else None
    size = numbers.buffers[number].size
    if pointee is None or not getattr(pointee, "size", 0) or size % pointee.size:
        return False
    canon = canonical_index(index, facts, values)
    ndrange = task.launch.ndrange
    dims = ndrange.work_dim
    addressed = None if canon is None else index_values(
        canon, ndrange.global_size[:dims], ndrange.global_offset[:dims])
    count = size // pointee.size
    return addressed is not None and addressed.size == count \
        and bool(np.array_equal(np.sort(addressed), np.arange(count)))


# ---------------------------------------------------------------------- liveness


def dead_after(graph: TaskGraph, position: int, buffer: int) -> str:
    """Why ``buffer``'s bytes as they are after node ``position`` are never used ("" when they
    may be): no later node reads it before a transfer or kernel wholly overwrites it, and it
    is overwritten or released."""
    for j in range(position + 1, len(graph.nodes)):
        node = graph.nodes[j]
        if node.status != "run":
            continue
        if buffer in node.reads:
            return ""
        if buffer in node.covers:
            return f"overwritten whole by {node.label} #{j}"
    return "released" if buffer in graph.released else ""


def mark_covering(graph: TaskGraph, commands: Sequence[Command]) -> None:
    """Note on each transfer node the buffers it writes whole (offset 0, the buffer's size)."""
    for node in graph.nodes:
        task = commands[node.members[0]].task
        if not isinstance(task, TransferTask):
            continue  # a kernel's were set when its node was made
        covers = set()
        for mem, offset, size in task.writes:
            root = root_of(mem)
            if root is mem and offset == 0 and size == mem.size:
                covers.add(graph.buffers.index(root))
        node.covers = covers


# ---------------------------------------------------------------------- the passes


def remove_redundant_transfers(graph: TaskGraph, commands: Sequence[Command]) -> None:
    for i, node in enumerate(graph.nodes):
        if node.kind != "transfer" or node.status != "run":
            continue
        task = commands[node.members[0]].task
        assert isinstance(task, TransferTask)
        key = _transfer_key(task)
        for j in range(i - 1, -1, -1):
            earlier = graph.nodes[j]
            if earlier.status != "run":
                continue
            earlier_task = commands[earlier.members[0]].task
            if earlier.kind == "transfer" and isinstance(earlier_task, TransferTask) \
                    and _transfer_key(earlier_task) == key \
                    and commands[earlier.members[0]].kind == commands[node.members[0]].kind:
                node.status = "redundant"
                graph.notes.append(f"removed {node.label} #{i}: it moves the same bytes as "
                                   f"{earlier.label} #{j} and nothing between changed either side")
                break
            touched = node.reads | node.writes
            if earlier.writes & touched or (node.host is not None and earlier.host == node.host):
                break


def _transfer_key(task: TransferTask) -> tuple[Any, ...]:
    return (tuple((id(m), o, s) for m, o, s in task.reads),
            tuple((id(m), o, s) for m, o, s in task.writes), id(task.host))


def eliminate_dead_tasks(graph: TaskGraph, infos: Sequence[KernelInfo | None]) -> None:
    for i in range(len(graph.nodes) - 1, -1, -1):
        node = graph.nodes[i]
        if node.status != "run" or not node.writes:
            continue  # a read into host memory writes no buffer: never dead
        info = infos[i]
        if info is not None and any(part.facts.prints for part in info.parts):
            continue  # its output is seen whatever becomes of the buffers it writes
        dead = {b: dead_after(graph, i, b) for b in node.writes}
        if not all(dead.values()):
            continue
        node.status = "dead"
        why = ", ".join(f"buffer {b} ({reason})" for b, reason in sorted(dead.items()))
        graph.notes.append(f"eliminated {node.label} #{i}: nobody reads what it writes: {why}")


def _shared_inputs(a: Node, b: Node) -> set[int]:
    return a.reads & b.reads


def fuse_kernels(graph: TaskGraph, infos: list[KernelInfo | None]) -> None:
    """Merge consecutive live kernel nodes until no pair merges (see the module docstring)."""
    for recompute in (False, True):  # merges that recompute a halo only after the others
        changed = True
        while changed:
            changed = False
            live = [i for i, n in enumerate(graph.nodes) if n.status == "run"]
            for a, b in zip(live, live[1:]):
                reason = _fusion(graph, infos, a, b, recompute)
                if reason is None:
                    continue
                _merge(graph, infos, a, b, reason)
                changed = True
                break


def _fusion(graph: TaskGraph, infos: Sequence[KernelInfo | None], a: int, b: int,
            recompute: bool) -> str | None:
    """Why nodes ``a`` and ``b`` fuse, or None when they do not."""
    na, nb = graph.nodes[a], graph.nodes[b]
    ia, ib = infos[a], infos[b]
    if ia is None or ib is None or ia.refusal or ib.refusal or ia.ndrange != ib.ndrange:
        return None
    if nb.writes & (na.reads | na.writes):
        return None  # the later kernel overwrites what the earlier one uses
    flow = na.writes & nb.reads
    if not flow:
        shared = _shared_inputs(na, nb)
        if not shared:
            return None
        return f"horizontal: independent, same NDRange, sharing buffer(s) {sorted(shared)}"
    own = True
    for buffer in flow:
        sa, sb = ia.indices.get(buffer), ib.indices.get(buffer)
        if buffer not in ia.stored_by:
            return None
        element = ia.elements.get(buffer)
        if element is None or element != ib.elements.get(buffer):
            return None  # the buffer seen as another type: other bytes, another value
        if sa is None or sb is None or len(sa) != 1 or sa != sb:
            own = False  # not the work-item's own element (a halo, or unknown)
    if own:
        return f"vertical: reads buffer(s) {sorted(flow)} at the element the producer wrote"
    if not recompute or len(flow) != 1:
        return None
    (buffer,) = flow
    reads = ib.indices.get(buffer)
    if len(ia.parts) == 1 and buffer in ia.pointwise \
            and na.writes == {buffer} and ib.plain.get(buffer, False) \
            and reads is not None and len(reads) <= MAX_RECOMPUTED_READS:
        return (f"vertical with recomputation: reads buffer {buffer} around its own element, "
                "and the producer's value there is a point-wise function of loads")
    return None


def _merge(graph: TaskGraph, infos: list[KernelInfo | None], a: int, b: int, reason: str) -> None:
    na, nb = graph.nodes[a], graph.nodes[b]
    ia, ib = infos[a], infos[b]
    assert ia is not None and ib is not None
    offset = len(ia.parts)
    flow = na.writes & nb.reads
    for buffer in flow:
        if "recomputation" in reason:
            ia.recomputed[buffer] = True
        else:
            ia.forwards[buffer] = Forward(buffer, keep_store=True)
    for buffer, part in ib.stored_by.items():
        ia.stored_by.setdefault(buffer, part + offset)
    for buffer, forward in ib.forwards.items():
        ia.forwards.setdefault(buffer, forward)
    for buffer, keep in ib.recomputed.items():
        ia.recomputed.setdefault(buffer, keep)
    for buffer, element in ib.elements.items():
        seen = ia.elements.get(buffer, element)
        ia.elements[buffer] = element if seen == element else None
    for buffer, plain in ib.plain.items():
        ia.plain[buffer] = ia.plain.get(buffer, True) and plain
    ia.pointwise.clear()  # a fused kernel is not point-wise
    for buffer, canon in ib.indices.items():
        mine = ia.indices.get(buffer, set())
        ia.indices[buffer] = None if mine is None or canon is None else mine | canon
    ia.parts.extend(ib.parts)
    graph.notes.append(f"fused {na.label} #{a} with {nb.label} #{b}, {reason}")
    na.members.extend(nb.members)
    na.label = f"{na.label}+{nb.label}"
    na.reads |= nb.reads - flow  # the later part reads those from the forwarded value
    na.writes |= nb.writes
    na.covers |= nb.covers
    nb.status = "fused"
    infos[b] = None


def drop_dead_stores(graph: TaskGraph, infos: Sequence[KernelInfo | None]) -> None:
    """A forwarded buffer's store is dropped when its bytes are dead after the fused kernel."""
    for i, info in enumerate(infos):
        if info is None:
            continue
        for buffer in list(info.recomputed):
            reason = dead_after(graph, i, buffer)
            if reason:
                info.recomputed[buffer] = False
                graph.notes.append(f"dropped the producer of buffer {buffer} in "
                                   f"{graph.nodes[i].label} #{i}: its values are recomputed "
                                   f"where read, then {reason}")
        for buffer in list(info.forwards):
            reason = dead_after(graph, i, buffer)
            if reason:
                info.forwards[buffer] = Forward(buffer, keep_store=False)
                graph.notes.append(f"dropped the store of buffer {buffer} in "
                                   f"{graph.nodes[i].label} #{i}: read only inside the fused "
                                   f"kernel, then {reason}")


def specialize(graph: TaskGraph, infos: Sequence[KernelInfo | None], commands: Sequence[Command],
               constant: set[tuple[int, int]]) -> None:
    """Scalar arguments (command, argument index) in ``constant`` become literals."""
    for i, info in enumerate(infos):
        if info is None:
            continue
        node = graph.nodes[i]
        for k, (member, part) in enumerate(zip(node.members, info.parts)):
            task = commands[member].task
            assert isinstance(task, KernelTask)
            values: dict[str, int | float] = {}
            for index, (param, arg) in enumerate(zip(part.facts.function.params, task.args)):
                if (member, index) in constant and isinstance(arg, ValueArg):
                    value = scalar_value(param, arg.data)
                    if value is not None:
                        values[param.name] = value
            if values:
                info.parts[k] = Part(part.facts, part.buffers, values)
                shown = ", ".join(f"{n}={v!r}" for n, v in sorted(values.items()))
                graph.notes.append(f"specialized {task.kernel.function_name} (command "
                                   f"{member}) on {shown}: equal in the previous replay")


def optimize(graph: TaskGraph, infos: list[KernelInfo | None], commands: Sequence[Command],
             constant: set[tuple[int, int]]) -> None:
    mark_covering(graph, commands)
    remove_redundant_transfers(graph, commands)
    eliminate_dead_tasks(graph, infos)
    fuse_kernels(graph, infos)
    drop_dead_stores(graph, infos)
    specialize(graph, infos, commands, constant)
    add_edges(graph, commands)
