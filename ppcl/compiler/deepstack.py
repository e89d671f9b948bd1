"""Running a pure compiler stage on a thread with a large stack and a raised recursion limit.

The parser, the semantic analysis and the kernel passes are recursive over the program's
nesting, and Python's default limit (1000 frames on an 8 MiB stack) stops at about 80
parentheses or a 300-term sum. ``run_deep_if_needed`` runs a stage on the caller's thread and,
only if that runs out of recursion, again on a thread sized for the front end's limits
(``frontend/limits.py``), so ordinary programs pay nothing for it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

# Enough frames for the front end's limits (about 15 frames a bracket in the parser, 5 a tree level
# in the analysis), and a stack that holds them.
_RECURSION_LIMIT = 60_000
_STACK_BYTES = 512 * 1024 * 1024

_T = TypeVar("_T")

_deep_lock = threading.Lock()
_deep_thread = threading.local()
_deep_runs = 0
_saved_limit = 0


def _raise_limit() -> None:
    global _deep_runs, _saved_limit
    with _deep_lock:
        if _deep_runs == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, _RECURSION_LIMIT))
        _deep_runs += 1


def _restore_limit() -> None:
    global _deep_runs
    with _deep_lock:
        _deep_runs -= 1
        if _deep_runs == 0:
            sys.setrecursionlimit(_saved_limit)


def run_deep(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """``fn(*args, **kwargs)`` on a thread with a large stack and a raised recursion limit;
    its result is returned and its exception raised in the caller."""
    outcome: dict[str, Any] = {}

    def body() -> None:
        _deep_thread.active = True
        try:
            outcome["result"] = fn(*args, **kwargs)
        except BaseException as exc:  # re-raised in the calling thread
            outcome["error"] = exc

    # The recursion limit is per process: it stays raised while any deep run is going on.
    _raise_limit()
    try:
        with _deep_lock:
            previous = threading.stack_size(_STACK_BYTES)
            try:
                thread = threading.Thread(target=body, name="ppcl-frontend")
                thread.start()
            finally:
                threading.stack_size(previous)
        thread.join()
    finally:
        _restore_limit()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]  # type: ignore[no-any-return]


def on_deep_stack() -> bool:
    """True on the thread of a ``run_deep``: running out of recursion there is final."""
    return bool(getattr(_deep_thread, "active", False))


def run_deep_if_needed(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """``fn(*args, **kwargs)`` on this thread, and again through ``run_deep`` if it ran out of
    recursion: ordinary programs pay nothing for the deep stack (a thread with one costs about
    1 ms to start). ``fn`` must have no effect outside its result, so it can run twice."""
    try:
        return fn(*args, **kwargs)
    except RecursionError:
        return run_deep(fn, *args, **kwargs)
