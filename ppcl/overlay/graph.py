"""The task graph of one recording: a node per kernel launch or buffer transfer, with the
buffers each reads and writes, and the edges those sets, the queue's order and the commands'
wait lists imply.

Buffers are numbered in the order the recording first touches them, so two recordings of the
same program step have the same graph whatever buffers they bind; the recorder's ``_shape`` is
that graph's identity, the key of the plan cache. A kernel's sets are its static ones
(``compiler/analysis/buffers.py``) bound to the buffers of the launch; a pointer argument bound
to no buffer (``None``) touches nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ppcl.devices.interface import BufferArg
from ppcl.runtime.constants import command_type
from ppcl.runtime.event import Event
from ppcl.runtime.memory import MemoryObject
from ppcl.runtime.queue import KernelTask, TransferTask


@dataclass
class Command:
    """One recorded command: its event, the closure that runs it, and what it is."""

    kind: int
    action: Any
    event: Event
    waits: list[Event]
    uses: tuple[MemoryObject, ...]
    task: KernelTask | TransferTask


@dataclass
class Node:
    """A task: one command, or after fusion several run as one generated kernel."""

    members: list[int]  # command indices, in queue order
    kind: str  # "kernel" or "transfer"
    label: str
    reads: set[int] = field(default_factory=set)  # buffer numbers
    writes: set[int] = field(default_factory=set)
    host: int | None = None  # a transfer's host array number
    status: str = "run"  # run | dead | redundant | fused
    covers: set[int] = field(default_factory=set)  # buffers a transfer writes whole
    wave: int | None = None  # the replay wave it runs in (waves.py), None when removed


@dataclass
class TaskGraph:
    """Nodes in queue order, the buffers' facts and the optimizations' notes."""

    nodes: list[Node]
    buffers: list[MemoryObject]
    released: set[int]  # buffer numbers released, and no sub-buffer alive, while recorded
    edges: set[tuple[int, int, str]]  # (from node, to node, why): raw, war, waw, order, event
    notes: list[str] = field(default_factory=list)  # every decision, with its reason
    before: str = ""  # the dot text of the graph before optimization
    concurrent: set[int] = field(default_factory=set)  # waves whose tasks run at once

    def to_dot(self, title: str = "overlay") -> str:
        """The graph as Graphviz text: removed tasks dashed, fused ones named together, each
        task with the wave it is replayed in (tasks of a concurrent wave run at once)."""
        lines = [f'digraph "{title}" {{', "  node [shape=box, fontname=monospace];"]
        for i, node in enumerate(self.nodes):
            style = ", style=dashed" if node.status != "run" else ""
            extra = f"\\n({node.status})" if node.status != "run" else ""
            if node.wave is not None and node.status == "run":
                at_once = ", concurrent" if node.wave in self.concurrent else ""
                extra += f"\\nwave {node.wave}{at_once}"
            lines.append(f'  n{i} [label="{node.label}{extra}"{style}];')
        for src, dst, why in sorted(self.edges):
            lines.append(f'  n{src} -> n{dst} [label="{why}"];')
        lines.append("}")
        return "\n".join(lines) + "\n"


def root_of(mem: MemoryObject) -> MemoryObject:
    """The memory object owning the bytes (a sub-buffer's parent)."""
    return mem._root or mem


class Numbering:
    """Numbers for buffers and host arrays, in order of first use."""

    def __init__(self) -> None:
        self.buffers: list[MemoryObject] = []
        self._buffer_ids: dict[int, int] = {}
        self._host_ids: dict[int, int] = {}

    def buffer(self, mem: MemoryObject) -> int:
        root = root_of(mem)
        number = self._buffer_ids.get(id(root))
        if number is None:
            number = self._buffer_ids[id(root)] = len(self.buffers)
            self.buffers.append(root)
        return number

    def host(self, array: Any) -> int:
        return self._host_ids.setdefault(id(array), len(self._host_ids))


def kernel_sets(task: KernelTask, params: Sequence[Any], numbers: Numbering,
                accesses: dict[str, Any]) -> tuple[set[int], set[int]]:
    """The buffers a launch reads and writes: the kernel's static sets bound to its args."""
    reads: set[int] = set()
    writes: set[int] = set()
    for param, arg in zip(params, task.args):
        if not isinstance(arg, BufferArg) or arg.owner is None:
            continue
        number = numbers.buffer(arg.owner)
        access = accesses.get(param.name)
        if access is None:  # an image or an unanalysed pointer: assume both
            reads.add(number)
            writes.add(number)
            continue
        if access.reads:
            reads.add(number)
        if access.writes:
            writes.add(number)
    return reads, writes


def add_edges(graph: TaskGraph, commands: Sequence[Command]) -> None:
    """Data edges (read after write, write after read, write after write) between live nodes,
    the queue's order between consecutive nodes and the wait lists' event edges."""
    owner: dict[int, int] = {}
    for i, node in enumerate(graph.nodes):
        for member in node.members:
            owner[id(commands[member].event)] = i
    live = [i for i, node in enumerate(graph.nodes) if node.status == "run"]
    for a_pos, a in enumerate(live):
        for b in live[a_pos + 1:]:
            na, nb = graph.nodes[a], graph.nodes[b]
            if na.writes & nb.reads:
                graph.edges.add((a, b, "raw"))
            elif na.reads & nb.writes:
                graph.edges.add((a, b, "war"))
            elif na.writes & nb.writes:
                graph.edges.add((a, b, "waw"))
    for a, b in zip(live, live[1:]):
        if not any(e[0] == a and e[1] == b for e in graph.edges):
            graph.edges.add((a, b, "order"))
    for i, node in enumerate(graph.nodes):
        for member in node.members:
            for event in commands[member].waits:
                src = owner.get(id(event))
                if src is not None and src != i:
                    graph.edges.add((src, i, "event"))


def transfer_label(kind: int) -> str:
    return command_type.to_string(kind, "<{}>").lower()
