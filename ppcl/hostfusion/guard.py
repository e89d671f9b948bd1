"""The empirical guard: each candidate is timed against the original on a shape's first launches.

A model can be wrong (a reuse distance says nothing of a gather the C compiler vectorizes), so
the candidates of a launch shape (kernel, device, NDRange, buffer sizes) are built in the
background while the original runs, then the launches of that shape take turns: original,
candidate 1, candidate 2, ..., ``ROUNDS`` times each after an untimed first launch of each
(which may pay what later ones do not: a GPU moving managed pages to itself, the first launch
of a module) and none while any candidate still builds (the compiler takes a core the launch
would have), every turn the user's own launch (all variants compute the same results). The
fastest is kept when it beats the original's best time by ``KEEP_BELOW``; otherwise the
original stays. A chosen candidate that keeps a buffer in another layout is then charged the
shuffles that other commands using the buffer cause (``keeper.py``), and dropped once they
cost more than it saves (``Trial.watch``). The choice is written to the cache
directory (``hostfusion/<key>.json``), so the next process with the same kernel and shape
starts with it and times nothing.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ppcl.compiler.cache import cache_dir, cache_key
from ppcl.devices.interface import BufferArg, KernelLaunch, ValueArg
from ppcl.hostfusion.keeper import keep
from ppcl.hostfusion.plan import Variant
from ppcl.runtime.memory import Kept

ROUNDS = 3
KEEP_BELOW = 0.97  # a candidate must take less than 97% of the original's time
# launches of a chosen layout after which the guard weighs what the program's transfers cost it
WATCH_LAUNCHES = 8
ORIGINAL = "original"


@dataclass
class Built:
    """A variant and its launch (None while it builds, or when building failed: ``error``)."""

    variant: Variant | None  # None: the original launch
    launch: KernelLaunch | None = None
    future: Future[Any] | None = None
    error: str = ""

    @property
    def label(self) -> str:
        return ORIGINAL if self.variant is None else self.variant.label


@dataclass
class Trial:
    """The guard's state for one launch shape."""

    key: str
    title: str
    built: list[Built]
    samples: list[list[int]] = field(default_factory=list)
    choice: int | None = None  # index into built once decided
    turn: int = 0
    warmed: set[int] = field(default_factory=set)  # variants whose untimed launch has run
    notes: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # the chosen layout's launches since the choice and the shuffles others caused (ns)
    watched: int = 0
    charged_ns: int = 0

    def __post_init__(self) -> None:
        self.samples = [[] for _ in self.built]

    def watch(self, index: int, charged_ns: int) -> bool:
        """A launch of the chosen variant ``index``, which keeps a buffer in another layout,
        and the time of the shuffles other commands (transfers, kernels that use the buffer as
        written) caused since the last one. A
        trial's launches come too close together to see how often a program reads its buffers
        back (a particle update of 16 steps between a copy in and a read back ran 2x slower
        with a layout its launches timed 1.7x faster): so the guard goes on weighing the chosen
        layout, and once its launches and their share of the shuffles cost more than the
        original, the original comes back. True when this changed the choice."""
        with self.lock:
            if self.choice != index or not self.samples[0] or not self.samples[index]:
                return False
            self.watched += 1
            if self.watched == 1:
                # the shuffle in follows the trial's last turn of the original (or, from a
                # stored choice, the program's first transfer): once, not at every launch
                charged_ns = 0
            self.charged_ns += charged_ns
            if self.watched < WATCH_LAUNCHES or not self.charged_ns:
                return False
            original = min(self.samples[0])
            kept = min(self.samples[index]) + self.charged_ns / self.watched
            if kept < KEEP_BELOW * original:
                return False
            self.notes.append(
                f"{self.built[index].label} dropped after {self.watched} launches: with the "
                f"shuffles the program's transfers cause ({self.charged_ns / 1e6:.3f} ms) a "
                f"launch costs {kept / 1e6:.3f} ms against the original's "
                f"{original / 1e6:.3f} ms")
            self.choice = 0
            return True

    def next_variant(self) -> int:
        """The variant the next launch runs (the chosen one, or the next in turn)."""
        if self.choice is not None:
            return self.choice
        with self.lock:
            ready = [i for i, b in enumerate(self.built)
                     if i == 0 or (b.launch is not None and not b.error)]
            waiting = [i for i in ready if len(self.samples[i]) < ROUNDS]
            if not waiting:
                return 0
            self.turn += 1
            return waiting[self.turn % len(waiting)]

    def record(self, index: int, nanoseconds: int) -> bool:
        """Add a timing; True when this decided the trial."""
        with self.lock:
            if self.choice is not None:
                return False
            if index not in self.warmed:  # the first launch of a variant is not a sample
                self.warmed.add(index)
                return False
            if _building[0]:
                # a launch run while a candidate compiles, this trial's or another kernel's,
                # shares the cores with the compiler (an original timed at 2.2 ms beside a
                # build, 1.1 ms after it; a molecular dynamics step's force kernel timed 2.37
                # ms beside the build of the next kernel's candidate and 1.34 alone, and kept a
                # layout that lost): not a sample
                return False
            self.samples[index].append(nanoseconds)
            complete = all(len(self.samples[i]) >= ROUNDS or (i and self.built[i].error)
                           for i in range(len(self.built)))
            if not complete:
                return False
            best = {i: min(s) for i, s in enumerate(self.samples) if s}
            winner = min(best, key=lambda i: best[i])
            self.choice = winner if best[winner] < KEEP_BELOW * best[0] else 0
            return True

    def timings(self) -> str:
        parts = []
        for b, s in zip(self.built, self.samples):
            parts.append(f"{b.label}: " + (f"{min(s) / 1e6:.3f} ms" if s else
                                            (b.error or "not timed")))
        return "; ".join(parts)


_BUILDER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ppcl-hostfusion")
_building = [0]  # background builds submitted and not finished, of every trial
_building_lock = threading.Lock()


def start_build(built: Built, build: Callable[[], KernelLaunch], background: bool) -> None:
    """Build ``built``'s launch now or in the background; a failure becomes ``error``."""
    def work() -> None:
        try:
            built.launch = build()
        except Exception as error:  # a candidate that does not build is dropped, not fatal
            built.error = f"not built ({type(error).__name__}: {str(error).splitlines()[0]})"

    def in_background() -> None:
        try:
            work()
        finally:
            with _building_lock:
                _building[0] -= 1
    if background:
        with _building_lock:
            _building[0] += 1
        built.future = _BUILDER.submit(in_background)
    else:
        work()


def wait_for_builds() -> None:
    """Block until every background build has finished (tests, benchmarks)."""
    _BUILDER.submit(lambda: None).result()


def runner(built: Built, trial: Trial, index: int, timed: bool,
           original: KernelLaunch) -> Callable[[Sequence[Any]], None]:
    """The run function of variant ``index``: shadows in, trailing arguments added, timed while
    the trial lasts and the variant's launch runs the code it keeps (``settled``: not a GPU's
    quickly compiled first module)."""
    variant = built.variant
    if variant is None:
        def run_original(args: Sequence[Any]) -> None:
            start = time.perf_counter_ns()
            original.run(args)
            if timed and original.settled:
                _recorded(trial, index, time.perf_counter_ns() - start)
        return run_original
    launch = built.launch
    assert launch is not None
    layouts = [r for r in variant.rewrites if r.kind == "layout"]
    extras = tuple(ValueArg(np.uint64(v).tobytes()) for v in variant.extras)
    moved = {r.arg for r in layouts}
    # the arguments with the extras, kept for the next launch of the same argument values: a
    # device packs a launch's arguments anew for every other tuple (a GPU launch took 15 us
    # longer, more than a vectorized saxpy saves)
    composed: list[Any] = [None, None]

    def run_variant(args: Sequence[Any]) -> None:
        if not layouts:
            if composed[0] is not args:
                composed[0], composed[1] = args, tuple(args) + extras
            if Kept.count:
                _restore_kept(args, ())
            start = time.perf_counter_ns()
            launch.run(composed[1])
            if timed and launch.settled:
                _recorded(trial, index, time.perf_counter_ns() - start)
            return
        new = list(args)
        keepers = []
        for r in layouts:
            mem = args[r.arg].owner
            keeper = keep(mem, r.dtype, r.rows, r.columns)
            shadow = keeper.prepare(mem)
            new[r.arg] = BufferArg(shadow.address, shadow)
            keepers.append((keeper, r.writes))
        _restore_kept(args, moved)
        start = time.perf_counter_ns()
        launch.run(tuple(new) + extras)
        kernel_ns = time.perf_counter_ns() - start
        # the shuffles other commands caused (see keeper.py); while the trial lasts, its own
        # turns of the original shuffle the buffer back and forth, so only the launch is timed
        charged = sum(keeper.take_charge() for keeper, _writes in keepers)
        for keeper, writes in keepers:
            if writes:
                keeper.written_by_kernel()
        if timed and launch.settled:
            _recorded(trial, index, kernel_ns)
        elif not timed and trial.watch(index, charged):
            for call in _on_decision:
                call(trial)
    return run_variant


def _restore_kept(args: Sequence[Any], moved: set[int] | tuple[()]) -> None:
    """Buffers other kernels keep in another layout come back, but for the ``moved`` ones."""
    for i, arg in enumerate(args):
        owner = getattr(arg, "owner", None)
        if owner is not None and i not in moved and owner.keeper is not None:
            owner.keeper.restore(owner, True)


_on_decision: list[Callable[[Trial], None]] = []


def _recorded(trial: Trial, index: int, nanoseconds: int) -> None:
    if trial.record(index, nanoseconds):
        for call in _on_decision:
            call(trial)


def decision_key(*parts: str) -> str:
    return cache_key("hostfusion", *parts)


def _path(key: str) -> Path:
    return cache_dir() / "hostfusion" / f"{key}.json"


def load_choice(key: str) -> dict[str, Any] | None:
    """The decision a previous process stored for ``key``, or None."""
    try:
        with open(_path(key), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("choice"), str) else None


def store_choice(trial: Trial) -> None:
    """Write the trial's choice atomically (a damaged or unwritable cache only costs a retrial)."""
    assert trial.choice is not None
    data = {"title": trial.title, "choice": trial.built[trial.choice].label,
            "timings": {b.label: (min(s) if s else None)
                        for b, s in zip(trial.built, trial.samples)}}
    path = _path(trial.key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        temp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(temp, path)
    except OSError:
        pass


def stored_choices(kernel_name: str) -> list[dict[str, Any]]:
    """Every stored decision about a kernel named ``kernel_name`` (for ``ppcl explain``)."""
    folder = cache_dir() / "hostfusion"
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        data = load_choice(path.stem)
        if data is not None and str(data.get("title", "")).startswith(kernel_name + " "):
            found.append(data)
    return found
