"""Host and kernel optimized together (after PPOpenCL): coarsening, data layout and holistic
vectorization, decided per device at enqueue time from what the program does.

``enable(queue)`` (or ``PPCL_HOSTFUSION=1`` for every queue a program creates) lets the
queue's kernel launches be rewritten. At the first launch of a shape (kernel, device, NDRange,
buffer sizes) the plan (``plan.py``) asks the analyses and the device's execution-order model
(``model.py``) which rewrites should pay: a coarsened kernel over a smaller NDRange, a kernel
reading a buffer in the transposed layout (the buffer shuffled on the way in and back on the
way out, ``keeper.py``; only buffers the trace's alias table, ``aliases.py``, shows flowing
through this kernel alone), a vectorized kernel. The guard (``guard.py``) builds them in the
background, times them against the original on the next launches and keeps the fastest only
when it is faster; the choice is cached on disk. ``PPCL_HOSTFUSION=force`` applies the model's
choice without timing (tests). ``PPCL_DEBUG=hostfusion`` prints every decision and reason;
``decisions()`` returns them and ``ppcl explain`` shows the model's view of a kernel.

An out-of-order queue, a kernel with printf, and a queue recorded by the overlay launch their
kernels as written.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ppcl.compiler.analysis.callgraph import reaching
from ppcl.compiler.codegen.opencl import print_opencl
from ppcl.hostfusion.aliases import AliasTable
from ppcl.hostfusion.guard import (
    ORIGINAL,
    ROUNDS,
    Built,
    Trial,
    _on_decision,
    decision_key,
    load_choice,
    runner,
    start_build,
    store_choice,
    stored_choices,
    wait_for_builds,
)
from ppcl.hostfusion.model import execution_order
from ppcl.hostfusion.plan import Candidates, Variant, build_variant, kernel_function, plan
from ppcl.runtime.program import Program
from ppcl.runtime.queue import CommandQueue, queue_hooks
from ppcl.settings import Settings, SettingsError, hostfusion_switch, read_settings

__all__ = ["Decision", "decisions", "disable", "enable", "stored_choices", "wait_for_builds"]

try:
    _SETTINGS = read_settings()  # read once, when ppcl is imported
except SettingsError:  # a bad variable is reported where it is used (devices, a build)
    _SETTINGS = Settings(hostfusion=hostfusion_switch())
_DEBUG = _SETTINGS.debug.shows("hostfusion")


@dataclass
class Decision:
    """What host fusion decided for one launch shape."""

    title: str
    model: str
    candidates: list[str]
    notes: list[str]
    trial: Trial | None = None
    choice: str = ORIGINAL
    source: str = "measured"  # measured, cached, forced, or none (no candidate)
    kept: dict[str, str] = field(default_factory=dict)  # buffer -> why no layout was planned
    variants: list[Variant] = field(default_factory=list)

    def describe(self) -> str:
        lines = [f"hostfusion: {self.title}", f"  model: {self.model}"]
        lines += [f"  not applied: {note}" for note in self.notes]
        lines += [f"  candidate: {label}" for label in self.candidates]
        if self.variants:  # the first candidate holds every rewrite the model proposes
            lines += [f"  why {r.kind} {r.what}: {r.reason}" for r in self.variants[0].rewrites]
        if self.timing:
            lines.append(f"  choice (timing): {ORIGINAL} until the guard has timed each "
                         f"candidate's launches {ROUNDS} times, then the fastest")
            return "\n".join(lines)
        if self.trial is not None and self.trial.choice is not None:
            lines.append(f"  timings: {self.trial.timings()}")
            lines += [f"  {note}" for note in self.trial.notes]
        lines.append(f"  choice ({self.source}): {self.choice}")
        lines += [f"  layout of {line}" for line in self.layouts()]
        return "\n".join(lines)

    @property
    def timing(self) -> bool:
        """Whether the guard is still timing the candidates (no choice yet)."""
        return self.trial is not None and self.trial.choice is None

    def layouts(self) -> list[str]:
        """Each buffer's layout under the choice, and why it is not another."""
        chosen = next((v for v in self.variants if v.label == self.choice), None)
        planned = {r.param: r for v in self.variants for r in v.rewrites if r.kind == "layout"}
        moved = {r.param: r for r in chosen.rewrites if r.kind == "layout"} if chosen else {}
        lines = [f"{name}: as written ({why})" for name, why in self.kept.items()]
        for name, rewrite in planned.items():
            if name in moved:
                lines.append(f"{name}: {rewrite.layout}, chosen ({self.source})")
            elif self.source == "cached":
                lines.append(f"{name}: as written (the stored choice)")
            else:
                lines.append(f"{name}: as written (no candidate storing it as "
                             f"{rewrite.layout} was faster)")
        return lines


@dataclass
class _Shape:
    """One launch shape: its decision and the runs of its variants."""

    decision: Decision
    trial: Trial | None
    runs: list[Any] = field(default_factory=list)  # index -> run function (built lazily)
    # index -> the timed run function of the trial: one per variant, so that the launches it
    # times reuse their packed arguments as the original's do
    timed: dict[int, Any] = field(default_factory=dict)
    columns: list[tuple[int, int]] = field(default_factory=list)  # (scalar arg, value) needs


class _State:
    def __init__(self) -> None:
        self.aliases = AliasTable()
        self.shapes: dict[Any, _Shape] = {}
        self.lock = threading.Lock()


_STATE = _State()


class _Rewritten:
    __slots__ = ("run", "keeps_layout", "uses")

    def __init__(self, run: Any, keeps_layout: bool) -> None:
        self.run = run
        self.keeps_layout = keeps_layout
        self.uses: tuple[Any, ...] = ()


class _Passes:
    """A kernel's launches that host fusion has settled: a launch with this hook and launch
    shape, and the same argument tuple or buffers already seen with it, goes to the device at
    the cost of a few comparisons (no alias-table entry, no shape lookup), as written or as the
    variant the guard chose (``current``: its ``_Rewritten``, None for the kernel as written;
    only variants that keep no buffer in another layout and take no column count from a
    scalar). Two buffer tuples are kept, for a program that swaps two buffers between
    launches."""

    __slots__ = ("hook", "launch", "args", "buffers", "rewrites", "current")
    KEPT = 2

    def __init__(self, hook: HostFusion, launch: Any, args: tuple[Any, ...]) -> None:
        self.hook = hook
        self.launch = launch
        self.args = args
        self.buffers: list[tuple[Any, ...]] = []
        self.rewrites: list[_Rewritten | None] = []
        self.current: _Rewritten | None = None

    @staticmethod
    def note(hook: HostFusion, kernel: Any, launch: Any, args: tuple[Any, ...],
             rewritten: _Rewritten | None = None) -> None:
        passes = kernel._hostfusion_passes
        if passes is None or passes.hook is not hook or passes.launch is not launch:
            passes = kernel._hostfusion_passes = _Passes(hook, launch, args)
        passes.args = args
        passes.current = rewritten
        buffers = kernel._arg_buffers
        if buffers in passes.buffers:
            passes.rewrites[passes.buffers.index(buffers)] = rewritten
        else:
            passes.buffers = [buffers, *passes.buffers[:_Passes.KEPT - 1]]
            passes.rewrites = [rewritten, *passes.rewrites[:_Passes.KEPT - 1]]

    def seen(self, kernel: Any, args: tuple[Any, ...]) -> bool:
        """Whether the launch's buffers are one of the kept tuples (then ``current`` is what
        runs, and ``args`` pass until they change)."""
        try:
            index = self.buffers.index(kernel._arg_buffers)
        except ValueError:
            return False
        self.args = args
        self.current = self.rewrites[index]
        return True


class HostFusion:
    """The hook a queue calls at every command (``observe``) and kernel launch (``launch``)."""

    def __init__(self, queue: CommandQueue, mode: str) -> None:
        self.queue = queue
        self.mode = mode  # on or force
        self.order = execution_order(queue.device)
        self.left_to_overlay = False  # said once that the overlay has the launches

    def observe(self, kind: int, uses: Sequence[Any], task: Any) -> None:
        if uses:  # (not called for launches: ``launch`` sees their buffers)
            _STATE.aliases.observe(kind, uses, task)

    def launch(self, kernel: Any, launch: Any, args: tuple[Any, ...]) -> _Rewritten | None:
        if self.queue._overlay is not None:
            if _DEBUG and not self.left_to_overlay:
                print("hostfusion: the queue records for the overlay (PPCL_OVERLAY); its "
                      "launches are left to the overlay's fusion and specialization",
                      file=sys.stderr)
            self.left_to_overlay = True
            return None
        passes = kernel._hostfusion_passes  # (the same arguments pass in enqueue)
        if passes is not None and passes.hook is self and passes.launch is launch \
                and passes.seen(kernel, args):  # other scalars, buffers seen before
            return passes.current
        _STATE.aliases.launched(kernel, args, kernel._params)
        sizes = tuple(a.owner.size if getattr(a, "owner", None) is not None else -1
                      for a in args)
        key = (id(kernel.program), kernel.function_name, launch.ndrange, sizes,
               self.queue.device)
        shape = _STATE.shapes.get(key)
        if shape is None:
            with _STATE.lock:
                shape = _STATE.shapes.get(key)
                if shape is None:
                    shape = _STATE.shapes[key] = self._new_shape(kernel, launch, args)
        trial = shape.trial
        if trial is None:
            _Passes.note(self, kernel, launch, args)
            return None
        index = trial.next_variant()
        for arg_index, value in shape.columns:  # a layout's column count comes from a scalar
            if index and int.from_bytes(args[arg_index].data[:8], "little",
                                        signed=True) != value:
                index = 0
        built = trial.built[index]
        if index and (built.launch is None or built.error):
            return None  # a stored choice still building (or failing): the kernel as written
        if trial.choice is None:  # still timing
            timed = shape.timed.get(index)
            if timed is None:
                timed = shape.timed[index] = runner(built, trial, index, True, launch)
            return _Rewritten(timed, _moves(built))
        if index == 0:
            _abandon(trial, args)
            _Passes.note(self, kernel, launch, args)
            return None
        run = shape.runs[index]
        if run is None:
            run = shape.runs[index] = runner(built, trial, index, False, launch)
        rewritten = _Rewritten(run, _moves(built))
        if not rewritten.keeps_layout and not shape.columns:
            _Passes.note(self, kernel, launch, args, rewritten)
        return rewritten

    def _new_shape(self, kernel: Any, launch: Any, args: tuple[Any, ...]) -> _Shape:
        ndrange = launch.ndrange
        dims = ndrange.work_dim
        title = (f"{kernel.function_name} global {ndrange.global_size[:dims]} local "
                 f"{ndrange.local_size[:dims]}")
        decision = Decision(title, self.order.describe(), [], [])
        fn = kernel_function(kernel.program, kernel.function_name)
        if kernel.program._module is None or _has_printf(kernel):
            decision.notes.append("the kernel prints: its output order would change")
            decision.source = "none"
            return self._finish(_Shape(decision, None))
        try:
            candidates = plan(kernel.program._module, fn, ndrange, args, self.order,
                              _STATE.aliases, kernel)
        except Exception as error:  # an analysis that fails leaves the launch as written
            candidates = Candidates(notes=[f"analysis failed: {type(error).__name__}: {error}"])
        decision.notes = candidates.notes
        decision.kept = candidates.kept
        combos = candidates.variants()
        if not combos:
            decision.source = "none"
            return self._finish(_Shape(decision, None))
        variants = [build_variant(fn, combo, ndrange, f"{kernel.function_name}__hf{i}")
                    for i, combo in enumerate(combos)]
        decision.candidates = [v.label for v in variants]
        decision.variants = variants
        source = print_opencl(kernel.program._module.with_only_kernel(fn))
        key = decision_key(source, kernel.program._options, repr(ndrange), repr(
            [a.owner.size if getattr(a, "owner", None) is not None else None for a in args]),
            str(self.queue.device.name), str(self.queue.device.backend.info.threads))
        built = [Built(None)] + [Built(v) for v in variants]
        trial = Trial(key, title, built)
        decision.trial = trial
        shape = _Shape(decision, trial, [None] * len(built))
        shape.columns = sorted({(r.columns_arg, r.columns) for v in variants
                                for r in v.rewrites if r.kind == "layout" and r.columns_arg >= 0})
        stored = load_choice(key) if self.mode == "on" else None
        if stored is not None:
            labels = [b.label for b in built]
            if stored["choice"] in labels:
                index = labels.index(stored["choice"])
                trial.built = [built[0]] if index == 0 else [built[0], built[index]]
                # the stored times, so that the guard goes on weighing a stored layout against
                # the shuffles this run's commands cause (``Trial.watch``)
                timings = stored.get("timings", {})
                trial.samples = [[t] if isinstance(t := timings.get(b.label), int) else []
                                 for b in trial.built]
                trial.choice = len(trial.built) - 1
                decision.choice, decision.source = stored["choice"], "cached"
                if index:  # built in the background: the original runs until it is ready
                    self._build(kernel, trial.built[1], background=True)
                shape.runs = [None] * len(trial.built)
                return self._finish(shape)
        forced = self.mode == "force"
        for b in built[1:]:
            self._build(kernel, b, background=not forced)
        if forced:
            first = next((i for i, b in enumerate(built) if i and not b.error), 0)
            trial.choice = first
            decision.choice, decision.source = built[first].label, "forced"
            decision.notes += [b.error for b in built[1:] if b.error]
        return self._finish(shape)

    def _build(self, kernel: Any, built: Built, background: bool) -> None:
        variant = built.variant
        assert variant is not None
        context, options, device = kernel.context, kernel.program._options, self.queue.device
        module = kernel.program._module.with_only_kernel(variant.function)

        def build() -> Any:
            program = Program(context, print_opencl(module)).build(options)
            launch = program._prepare_launch(variant.function.name, device, variant.ndrange)
            launch.settle()  # the guard times a candidate once it runs the code it keeps
            return launch
        start_build(built, build, background)

    def _finish(self, shape: _Shape) -> _Shape:
        _DECISIONS.append(shape.decision)
        del _DECISIONS[:-MAX_DECISIONS]
        if _DEBUG:  # a timed shape is described again with its timings once decided
            print(shape.decision.describe(), file=sys.stderr)
        return shape


MAX_DECISIONS = 256
_DECISIONS: list[Decision] = []


def _decided(trial: Trial) -> None:
    """A trial ended: remember the choice, on disk too, and say it."""
    for decision in _DECISIONS:
        if decision.trial is trial:
            decision.choice = trial.built[trial.choice or 0].label
            decision.source = "measured"
            if _DEBUG:
                print(decision.describe(), file=sys.stderr)
    store_choice(trial)


_on_decision.append(_decided)


def _abandon(trial: Trial, args: tuple[Any, ...]) -> None:
    """The original won: buffers a timed candidate kept transposed go back and stay so."""
    for built in trial.built[1:]:
        for r in built.variant.rewrites if built.variant is not None else ():
            owner = getattr(args[r.arg], "owner", None) if r.kind == "layout" else None
            if owner is not None and owner.keeper is not None:
                owner.keeper.abandoned = True


def _moves(built: Built) -> bool:
    """Whether the variant reads a buffer in another layout (it then keeps the layout)."""
    return built.variant is not None and any(r.kind == "layout" for r in built.variant.rewrites)


def _has_printf(kernel: Any) -> bool:
    found = reaching(kernel.program._module, lambda call: call.name == "printf")
    return kernel.function_name in found


def enable(queue: CommandQueue, mode: str = "on") -> bool:
    """Let host fusion rewrite ``queue``'s kernel launches from now on (``mode`` ``force``: the
    model's choice without timing); False, nothing changed, for an out-of-order queue."""
    if queue.out_of_order:
        return False
    queue._hostfusion = HostFusion(queue, mode)
    return True


def disable(queue: CommandQueue) -> None:
    """Launch ``queue``'s kernels as written from now on (kept buffers come back as they are
    used)."""
    queue._hostfusion = None


def decisions() -> list[Decision]:
    """The decisions of this process, the latest last."""
    return list(_DECISIONS)


if _SETTINGS.hostfusion != "off":
    queue_hooks.append(lambda queue: enable(queue, _SETTINGS.hostfusion))
