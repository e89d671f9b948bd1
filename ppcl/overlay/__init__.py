"""The transparent command overlay (after Helium): delay, optimize, replay.

``enable(queue)`` (or ``PPCL_OVERLAY=1`` for every in-order queue a program creates) makes the
queue record its non-blocking kernel launches and buffer transfers instead of running them;
whatever makes the program look at a result (a blocking read or map, ``finish``, a wait on, or
a status, profiling or callback query of, a recorded event) replays the recording, optimized:
dead tasks and redundant transfers removed, consecutive kernels fused (vertically along
element-wise producer-consumer chains, horizontally when independent and sharing inputs), and
scalar arguments constant across replays specialized. Out-of-order queues are not recorded:
their commands pass through unchanged.

``graph()`` is the task graph of the last replay (``to_dot()`` after optimization, ``before``
the dot text before); ``PPCL_DEBUG=overlay`` prints every decision with its reason.

``over(pyopencl_context)`` gives a program written for pyopencl the overlay on that context's
devices (``vendor.py``): a ppcl context whose queues record, with fused kernels built by the
platform's own compiler.
"""

from __future__ import annotations

from ppcl.overlay.graph import TaskGraph
from ppcl.overlay.recorder import CACHE, Recorder
from ppcl.overlay.vendor import over, records
from ppcl.runtime.queue import CommandQueue, queue_hooks
from ppcl.settings import Settings, SettingsError, overlay_switch, read_settings

__all__ = ["CACHE", "TaskGraph", "disable", "enable", "graph", "over"]

try:
    _SETTINGS = read_settings()  # read once, when ppcl is imported
except SettingsError:  # a bad variable is reported where it is used (devices, a build)
    _SETTINGS = Settings(overlay=overlay_switch())
_last_graph: list[TaskGraph] = []


def _remember(graph: TaskGraph) -> None:
    _last_graph[:] = [graph]


def enable(queue: CommandQueue) -> bool:
    """Record ``queue``'s commands from now on; False (nothing changes) for an out-of-order
    queue, whose commands keep passing through."""
    if queue.out_of_order:
        return False
    if queue._overlay is None:
        queue._overlay = Recorder(queue, _SETTINGS.debug.shows("overlay"), _remember)
    return True


def disable(queue: CommandQueue) -> None:
    """Replay what is recorded and stop recording."""
    recorder = queue._overlay
    if recorder is not None:
        recorder.flush()
        queue._overlay = None
        queue._overlay_passes = 0
        recorder.passing = 0


def graph() -> TaskGraph | None:
    """The task graph of the last replay, or None before any."""
    return _last_graph[0] if _last_graph else None


def _on_new_queue(queue: CommandQueue) -> None:
    if _SETTINGS.overlay or records(queue.context):
        enable(queue)


queue_hooks.append(_on_new_queue)
