"""Delay and replay: the recorder an in-order queue hands its commands to.

``intercept`` records a non-blocking kernel launch or buffer transfer instead of running it,
and returns its event, which stays QUEUED; anything else (a blocking command, a map, an image
command, a marker, a command waiting on an event this recorder did not record, one using
``USE_HOST_PTR`` memory the host may look at any time) first flushes the recording, then runs
as it would without the overlay. ``flush`` (from ``finish``, from a wait, a status query, a
callback or profiling query on a recorded event) builds the task graph of the recording,
optimizes it (``optimize.py``) or takes the plan of the same graph from the cache (this
process's, else the one on disk, ``persist.py``), runs it wave by wave (``waves.py``:
consecutive independent steps; a concurrent wave's steps run at once on helper threads once
measured to pay, the others one after another), and completes every recorded event in queue
order: the tasks fused or removed complete with the task that stands for them. A failing task
fails its events, and every later one with ``CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST``, as
an in-order queue does (a later task of the same concurrent wave may have run by then; its
event reports the failure all the same).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from queue import SimpleQueue
from typing import Any

from ppcl.compiler.codegen.opencl import print_opencl
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.transforms.components import component_loads
from ppcl.devices.interface import BufferArg, LocalArg, ValueArg
from ppcl.overlay import persist
from ppcl.overlay.fuse import KernelFacts, fused_kernel, kernel_facts
from ppcl.overlay.graph import (
    Command,
    Node,
    Numbering,
    TaskGraph,
    add_edges,
    root_of,
    transfer_label,
)
from ppcl.overlay.narrow import narrow_indices
from ppcl.overlay.optimize import KernelInfo, build_graph, optimize
from ppcl.overlay.persist import GeneratedKernel, StoredPlan, StoredStep
from ppcl.overlay.waves import Footprint, Wave, concurrency, footprint, waves
from ppcl.runtime.constants import mem_flags
from ppcl.runtime.errors import ERROR_CODES, Error
from ppcl.runtime.event import COMPLETE, Event
from ppcl.runtime.memory import Buffer, MemoryObject
from ppcl.runtime.program import Program
from ppcl.runtime.queue import CommandQueue, KernelTask, TransferTask

_OUT_OF_RESOURCES = ERROR_CODES["OUT_OF_RESOURCES"]
_TASKS = (KernelTask, TransferTask)  # the commands a recorder may record
_WAIT_LIST_ERROR = ERROR_CODES["EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"]
MAX_RECORDED = 4096  # a recording this long is replayed, so memory held stays bounded
MAX_PLANS = 512  # plans (and shape histories) kept per process
# a replay gains nothing when it held one command (the program waits on every command) or its
# plan runs every command as recorded, one after another; after NO_GAIN_TO_PASS such replays in
# a row the queue lets its next commands pass unrecorded, at no cost but a counter:
# PASS_COMMANDS of them, twice as many each time recording again gained nothing, at most
# MOST_PASS_COMMANDS (then a changed pattern waits that long to be recorded)
NO_GAIN_TO_PASS = 4
PASS_COMMANDS = 2048
MOST_PASS_COMMANDS = 32768
# the queue counts passing commands down in blocks of at most this many, small integers, whose
# arithmetic allocates nothing (counting 2048 down directly measured 0.1 us a command)
PASS_BLOCK = 256
# a concurrent wave is timed over this many sequential replays before it is judged
TIMED_REPLAYS = 2
# ... and runs at once only when the time it saves exceeds this many times the handoff cost
# (the steps share the machine's cores and memory while they run at once)
PAYS_FACTOR = 2


@dataclass
class Step:
    """One step of a plan: run a recorded command's own closure, run a generated kernel in its
    members' place, or skip (a removed task)."""

    members: list[int]
    how: str  # action | generated | skip
    launch: Any = None  # the generated kernel's launch
    bindings: list[tuple[int, int]] | None = None  # per parameter: (command, argument)
    kernel: GeneratedKernel | None = None  # what the launch was built from


@dataclass
class Plan:
    steps: list[Step]
    graph: TaskGraph
    keep: list[Program] = field(default_factory=list)  # the programs its key names by id
    waves: list[Wave] = field(default_factory=list)  # none: every step one after another


@dataclass
class Outcome:
    """How a step ran: its start and end (perf_counter_ns) or the error it raised."""

    start: int
    end: int
    error: BaseException | None = None


class Helpers:
    """Threads that run the steps of concurrent waves. Daemons: a step left running by Ctrl-C
    must not keep the interpreter from exiting."""

    def __init__(self) -> None:
        self.tasks: SimpleQueue[Callable[[], None]] = SimpleQueue()
        self.count = 0
        self.lock = threading.Lock()
        self._handoff_ns: int | None = None

    def submit(self, task: Callable[[], None], wanted: int) -> None:
        """Run ``task`` on a helper, with at least ``wanted`` helpers started."""
        with self.lock:
            while self.count < wanted:
                threading.Thread(target=self._serve, name=f"ppcl-overlay-{self.count}",
                                 daemon=True).start()
                self.count += 1
        self.tasks.put(task)

    def _serve(self) -> None:
        while True:
            self.tasks.get()()

    def handoff_ns(self) -> int:
        """What handing a step to a helper and learning that it ran costs (measured once)."""
        if self._handoff_ns is None:
            done = threading.Semaphore(0)
            times = []
            for _ in range(16):
                start = time.perf_counter_ns()
                self.submit(done.release, 1)
                done.acquire()
                times.append(time.perf_counter_ns() - start)
            self._handoff_ns = int(statistics.median(times))
        return self._handoff_ns


HELPERS = Helpers()


class Cache:
    """Plans by graph shape and specialization values; generated programs by their text. One
    per process: a replay of a known pattern costs no compilation; ``persist.py`` keeps both
    on disk for the next process."""

    def __init__(self) -> None:
        self.plans: dict[Any, Plan] = {}
        self.shapes: dict[Any, int] = {}  # each graph shape seen, by the number naming it
        self.numbers = itertools.count()
        # per shape number: the last replay's values, the slots that ever varied, and the key
        # of the plan for the same values again (None after the first replay)
        self.history: dict[int, tuple[tuple[bytes | None, ...], set[int], Any]] = {}
        self.programs: dict[tuple[str, str, Any], Program] = {}
        self.facts: dict[tuple[int, str], KernelFacts] = {}
        self.lock = threading.Lock()


CACHE = Cache()


class Recorder:
    """The overlay of one in-order queue."""

    def __init__(self, queue: CommandQueue, debug: bool,
                 on_graph: Callable[[TaskGraph], None]) -> None:
        self.queue = queue
        self.debug = debug
        self.on_graph = on_graph
        self.commands: list[Command] = []
        # the memory objects the recorded commands use, each held once until the replay ran
        self.held: dict[int, MemoryObject] = {}
        self.lock = threading.RLock()
        self.no_gain = 0  # consecutive replays that gained nothing
        self.next_pass = PASS_COMMANDS  # how many commands the next passing lets through
        self.passing = 0  # commands still to pass, beyond those the queue counts down now

    # ------------------------------------------------------------------ delay

    def intercept(self, kind: int, action: Any, waits: Sequence[Event], blocking: bool,
                  uses: Sequence[Any], task: Any) -> Event | None:
        with self.lock:
            if self.passing and not self.commands:  # hand the queue the next block to count
                block = min(self.passing, PASS_BLOCK)
                self.passing -= block
                self.queue._overlay_passes = block - 1  # this command is one of them
                return None
            if self.queue._overlay_passes > 0:  # another thread passed its check meanwhile
                return None
            if not self._recordable(waits, blocking, uses, task):
                self.flush()
                return None
            event = Event(self.queue.context, self.queue, kind)
            event._flush = self.flush
            held = self.held
            for mem in uses:
                if id(mem) not in held:
                    mem.hold()
                    held[id(mem)] = mem
            self.commands.append(Command(kind, action, event, list(waits), tuple(uses), task))
            if len(self.commands) >= MAX_RECORDED:
                self.flush()
            return event

    def _recordable(self, waits: Sequence[Event], blocking: bool, uses: Sequence[Any],
                    task: Any) -> bool:
        if blocking or not isinstance(task, _TASKS):
            return False
        last = self.queue._last
        if last is not None and not last.is_done:
            return False  # a command run without the overlay is still pending
        for event in waits:
            if event._status != COMPLETE and event._flush != self.flush:
                return False  # neither done nor recorded here
        for mem in uses:
            if type(mem) is not Buffer or mem.flags & mem_flags.USE_HOST_PTR:
                return False
        return True

    # ------------------------------------------------------------------ replay

    def flush(self) -> None:
        with self.lock:
            commands, self.commands = self.commands, []
            if not commands:
                return
            held, self.held = self.held, {}
            for command in commands:
                command.event._flush = None
            if len(commands) == 1 and _unchangeable(commands[0]):
                # its plan is known without a look-up: the command as recorded
                self.on_graph(_lone_graph(commands[0]))
                self._run(AS_RECORDED, commands, held.values())
                self._learn(False)
                return
            plan = self._plan(commands)
            self._run(plan, commands, held.values())
            self._learn(len(commands) > 1 and not _as_recorded(plan))

    def _learn(self, gained: bool) -> None:
        """Count a replay that gained nothing; after NO_GAIN_TO_PASS in a row, let the next
        commands pass (only with nothing recorded: a callback of the replay may have recorded
        more, which must run before any command passes)."""
        if gained:
            self.no_gain = 0
            self.next_pass = PASS_COMMANDS
            return
        self.no_gain += 1
        if self.no_gain < NO_GAIN_TO_PASS or self.commands:
            return
        self.no_gain = 0
        self.passing = self.next_pass
        self._say(f"overlay: {NO_GAIN_TO_PASS} replays in a row gained nothing (one command "
                  f"each, or run as recorded): the next {self.next_pass} commands run without "
                  "delay")
        self.next_pass = min(2 * self.next_pass, MOST_PASS_COMMANDS)

    def _run(self, plan: Plan, commands: list[Command], held: Iterable[MemoryObject]) -> None:
        """Run the plan wave by wave, complete the events in queue order and let go of the
        memory objects ``held`` for the commands; an interrupt (Ctrl-C) fails the rest and
        reaches the caller, as it does from a command run in the enqueuing thread."""
        failed = 0
        interrupt: BaseException | None = None
        for number, wave in enumerate(plan.waves
                                      or [Wave(list(range(len(plan.steps))), False, "")]):
            steps = [plan.steps[i] for i in wave.steps]
            at_once = None
            if wave.concurrent and wave.pays and not failed:
                at_once = self._run_at_once(steps, commands, wave.threads)
            times: list[int] = []
            for k, step in enumerate(steps):
                events = [commands[i].event for i in step.members]
                if failed:
                    for event in events:
                        event._complete(_WAIT_LIST_ERROR)
                    continue
                outcome = at_once[k] if at_once is not None else _attempt(step, commands)
                if outcome.error is not None:
                    error = outcome.error
                    failed = error.code if isinstance(error, Error) else _OUT_OF_RESOURCES
                    for event in events:
                        event._complete(failed, error)
                    if not isinstance(error, Exception):
                        interrupt = error
                    continue
                for event in events:
                    event._set_times_complete(outcome.start, outcome.start, outcome.end)
                if step.how != "skip":
                    times.append(outcome.end - outcome.start)
            if wave.concurrent and not failed:
                self._judge(number, wave, times, plan.graph)
        for mem in held:
            mem.unhold()
        if interrupt is not None:
            raise interrupt

    def _run_at_once(self, steps: list[Step], commands: list[Command],
                     threads: int) -> list[Outcome]:
        """Run a concurrent wave's steps: the first running one in this thread, the other
        running ones on helpers. Ctrl-C while the helpers run leaves them to finish and fails
        the steps not done."""
        outcomes: list[Outcome | None] = [None] * len(steps)
        running = [k for k, step in enumerate(steps) if step.how != "skip"]
        done = threading.Semaphore(0)

        def attempt(k: int) -> None:
            outcomes[k] = _attempt(steps[k], commands)
            done.release()

        helpers = min(len(running), threads) - 1
        for k in running[1:]:  # more steps than threads wait for a helper
            HELPERS.submit(functools.partial(attempt, k), helpers)
        for k, step in enumerate(steps):
            if k not in running[1:]:
                outcomes[k] = _attempt(step, commands)
        mine = outcomes[running[0]] if running else None
        stopped: BaseException | None = None
        if mine is not None and mine.error is not None and not isinstance(mine.error, Exception):
            stopped = mine.error  # interrupted: do not wait for the others
        else:
            try:
                for _ in running[1:]:
                    done.acquire()
            except BaseException as error:
                stopped = error
        now = time.perf_counter_ns()
        return [o if o is not None else Outcome(now, now, stopped) for o in outcomes]

    def _judge(self, number: int, wave: Wave, times: list[int], graph: TaskGraph) -> None:
        """Decide, after every replay of a concurrent wave, whether running its steps at once
        saves more than handing them to helpers costs, from each step's lesser time in the last
        two replays (the plan serves every value of the arguments not specialized, so the
        steps' times may change from one replay to the next)."""
        fastest = times if not wave.fastest else [min(a, b) for a, b in zip(wave.fastest, times)]
        wave.fastest = times
        wave.timed += 1
        if wave.timed < TIMED_REPLAYS or not fastest:
            return
        # at once, the wave lasts at least its longest step and its total over the threads
        saved = sum(fastest) - max(max(fastest), sum(fastest) // wave.threads)
        cost = HELPERS.handoff_ns() * (len(fastest) - 1)
        pays = saved > PAYS_FACTOR * cost
        if pays != wave.pays:
            verdict = "runs its tasks at once" if pays else "runs its tasks one after another"
            self._say(f"overlay: wave {number} {verdict}: at once it would save "
                      f"{saved / 1e3:.0f} us, handing tasks to helpers costs {cost / 1e3:.0f} "
                      f"us ({wave.reason})")
        wave.pays = pays
        if pays:
            graph.concurrent.add(number)
        else:
            graph.concurrent.discard(number)

    # ------------------------------------------------------------------ planning

    def _plan(self, commands: list[Command]) -> Plan:
        shape, values = _shape(commands)
        with CACHE.lock:
            number = CACHE.shapes.get(shape)  # the shape hashed once, then named by a number
            if number is None:
                number = CACHE.shapes[shape] = next(CACHE.numbers)
                if len(CACHE.shapes) > MAX_PLANS:
                    del CACHE.shapes[next(iter(CACHE.shapes))]
            previous = CACHE.history.get(number)
            if previous is not None and previous[2] is not None and previous[0] == values:
                key = previous[2]  # the values of the last replay: nothing varied anew
            else:
                if previous is None:
                    varied: set[int] = set()
                    constant: set[int] = set()
                    # nothing specialized yet, but the analyses see every value (an index
                    # compared, a store found to cover its buffer): the plan serves these
                    known = {i for i in range(len(values)) if values[i] is not None}
                else:
                    last_values, varied, _ = previous
                    varied = varied | {i for i, (a, b) in enumerate(zip(values, last_values))
                                       if a != b}
                    constant = {i for i in range(len(values))
                                if values[i] is not None and i not in varied}
                    known = constant
                key = (number, tuple(values[i] for i in sorted(known)), frozenset(constant),
                       frozenset(known))
                # the key serves a replay with the same values only once a replay before
                # this one decided which values vary
                CACHE.history[number] = (values, varied, None if previous is None else key)
            plan = CACHE.plans.get(key)
        if plan is not None:
            self.on_graph(plan.graph)
            return plan
        disk_key = self._disk_key(commands, key)
        plan = self._stored_plan(disk_key, commands)
        if plan is None:
            try:
                plan = self._new_plan(commands, set(key[2]), set(key[3]))
            except Exception as error:  # never fail a program for an optimization: run it as is
                self._say(f"overlay: optimization skipped ({type(error).__name__}: {error})")
                plan = Plan([Step([i], "action") for i in range(len(commands))],
                            TaskGraph([], [], set(), set()))
            else:
                if disk_key is not None:
                    persist.store_plan(disk_key, StoredPlan(
                        [StoredStep(s.members, s.how, s.kernel, s.bindings) for s in plan.steps],
                        plan.graph))
        plan.keep = [c.task.kernel.program for c in commands if isinstance(c.task, KernelTask)]
        with CACHE.lock:
            CACHE.plans[key] = plan
            if len(CACHE.plans) > MAX_PLANS:  # the oldest first: dicts keep insertion order
                del CACHE.plans[next(iter(CACHE.plans))]
            if len(CACHE.history) > MAX_PLANS:
                del CACHE.history[next(iter(CACHE.history))]
        self.on_graph(plan.graph)
        return plan

    def _disk_key(self, commands: list[Command], key: Any) -> str | None:
        """The key of the plan on disk: the shape with programs named by what they compute,
        not by id(), and the same specialization; None where it cannot be made."""
        try:
            shape, _ = _shape(commands, persist.program_identity)
            return persist.plan_key(shape, key[1:], self.queue.device)
        except Exception as error:  # the cache is an optimization: plan as if it were absent
            self._say(f"overlay: no disk key ({type(error).__name__}: {error})")
            return None

    def _stored_plan(self, disk_key: str | None, commands: list[Command]) -> Plan | None:
        """The plan an earlier process stored for this recording, its generated kernels
        loaded; None if there is none or it does not fit (then it is planned anew)."""
        if disk_key is None:
            return None
        stored, how = persist.load_plan(disk_key, len(commands))
        if stored is None:
            if how != "absent":
                self._say(f"overlay: stored plan {how}")
            return None
        try:
            steps = []
            for step in stored.steps:
                launch = None
                if step.kernel is not None:
                    for c, a in step.bindings or []:
                        task = commands[c].task
                        if not isinstance(task, KernelTask) or a >= len(task.args):
                            raise ValueError(f"binding ({c}, {a}) names no kernel argument")
                    program = self._program(step.kernel)
                    signature = program._kernels[step.kernel.name]
                    if len(signature.params) != len(step.bindings or []):
                        raise ValueError(f"{step.kernel.name} takes {len(signature.params)} "
                                         f"arguments, the plan binds {len(step.bindings or [])}")
                    launch = program._prepare_launch(step.kernel.name, self.queue.device,
                                                     step.kernel.ndrange)
                steps.append(Step(step.members, step.how, launch, step.bindings, step.kernel))
        except Exception as error:
            self._say(f"overlay: stored plan {disk_key[:12]} ignored "
                      f"({type(error).__name__}: {error})")
            return None
        self._say(f"overlay: plan {disk_key[:12]} from disk ({len(steps)} steps)")
        return Plan(steps, stored.graph, waves=self._waves(steps, stored.graph, commands))

    def _new_plan(self, commands: list[Command], constant_slots: set[int],
                  known_slots: set[int]) -> Plan:
        """The plan of ``commands``: the scalar arguments in ``constant_slots`` specialized,
        and only those in ``known_slots`` seen by the analyses (the plan is reused for any
        value of the others, so no decision may rest on them)."""
        slots = _value_slots(commands)
        graph, infos = build_graph(commands, _facts,
                                   {(c, a) for c, a, slot in slots if slot in known_slots})
        add_edges(graph, commands)
        before = graph.to_dot("before")
        graph.edges.clear()
        constant = {pair for pair in slots if pair[2] in constant_slots}
        optimize(graph, infos, commands, {(c, a) for c, a, _ in constant})
        graph.before = before
        steps: list[Step] = []
        for i, node in enumerate(graph.nodes):
            if node.status in ("dead", "redundant"):
                steps.append(Step(node.members, "skip"))
            elif node.status == "fused":
                continue
            else:
                info = infos[i]
                if info is None or (len(info.parts) == 1 and not info.parts[0].specialized):
                    steps.append(Step(node.members, "action"))
                else:
                    steps.append(self._generated(node.members, info, commands, graph))
        plan_waves = self._waves(steps, graph, commands)
        for note in graph.notes:
            self._say(f"overlay: {note}")
        graph.buffers = []  # a cached plan must not keep the program's buffers alive
        return Plan(steps, graph, waves=plan_waves)

    def _waves(self, steps: list[Step], graph: TaskGraph, commands: list[Command]) -> list[Wave]:
        """The plan's waves (``waves.py``), each numbered on its graph nodes and noted."""
        numbers = Numbering()
        prints: list[Footprint] = [footprint(step.members, commands, numbers, _accesses,
                                             step.how != "skip") for step in steps]
        node_of = {node.members[0]: node for node in graph.nodes if node.status == "run"}
        labels = [node_of[step.members[0]].label if step.members[0] in node_of else "removed"
                  for step in steps]
        backend = self.queue.device.backend
        threads = backend.info.threads if backend.concurrent_launches else 1
        result: list[Wave] = []
        for number, indices in enumerate(waves(prints)):
            concurrent, reason = concurrency([prints[i] for i in indices],
                                             [labels[i] for i in indices], threads)
            result.append(Wave(indices, concurrent, reason, threads=threads))
            for i in indices:
                node = node_of.get(steps[i].members[0])
                if node is not None:
                    node.wave = number
            if concurrent:
                graph.concurrent.add(number)
            if reason != "one task":
                how = "may run at once" if concurrent else "runs one after another"
                shown = ", ".join(labels[i] for i in indices if steps[i].how != "skip")
                graph.notes.append(f"wave {number} ({shown}) {how}: {reason}")
        return result

    def _generated(self, members: list[int], info: KernelInfo, commands: list[Command],
                   graph: TaskGraph) -> Step:
        first = commands[members[0]].task
        assert isinstance(first, KernelTask)
        name = "__ovl_" + "_".join(commands[m].task.kernel.function_name  # type: ignore[union-attr]
                                   for m in members)[:80]
        function, bindings = fused_kernel(name, info.parts, info.forwards, info.stored_by,
                                          info.recomputed)
        ndrange = info.ndrange
        dims = ndrange.work_dim
        body, narrowed = narrow_indices(function.body, ndrange.global_size[:dims],
                                        ndrange.global_offset[:dims])
        if narrowed:
            function = dataclasses.replace(function, body=body)
            graph.notes.append(f"narrowed {narrowed} size_t index expression(s) of {name} to "
                               "int: every value fits in int over its NDRange")
        split = component_loads(function, _same_buffer(function, [
            commands[members[part]].task.args[arg]  # type: ignore[union-attr]
            for part, arg in bindings]))
        function = split.function
        if split.taken:
            graph.notes.append(f"component loads in {name} for {', '.join(split.taken)}: "
                               "vector elements of buffers it does not write, only components "
                               "used")
        program = first.kernel.program
        module = program._module.with_only_kernel(function)
        kernel = GeneratedKernel(print_opencl(module), program._options, name, info.ndrange)
        launch = self._program(kernel)._prepare_launch(name, self.queue.device, info.ndrange)
        return Step(members, "generated", launch,
                    [(members[part], arg) for part, arg in bindings], kernel)

    def _program(self, kernel: GeneratedKernel) -> Program:
        """The program of a generated kernel: from this process's cache, else from its binary
        on disk, else built from its text (and stored for the next process)."""
        device = self.queue.device
        key = (kernel.source, kernel.options, device)
        with CACHE.lock:
            built = CACHE.programs.get(key)
        if built is None:
            built, how = persist.load_program(self.queue.context, kernel.source,
                                              kernel.options, device)
            if built is None:
                if how != "absent":
                    self._say(f"overlay: stored program of {kernel.name} {how}")
                built = Program(self.queue.context, kernel.source).build(kernel.options)
                persist.store_program(built, kernel.source, kernel.options, device)
                self._say(f"overlay: {kernel.name} built from source")
            else:
                self._say(f"overlay: {kernel.name} from its binary on disk")
            with CACHE.lock:
                CACHE.programs[key] = built
        return built

    def _say(self, text: str) -> None:
        if self.debug:
            print(text, file=sys.stderr)


# the plan of one command no optimization could change (``_unchangeable``), run without
# planning: its graph (``_lone_graph``) is not analysed
AS_RECORDED = Plan([Step([0], "action")], TaskGraph([], [], set(), set()),
                   waves=[Wave([0], False, "one task")])


def _unchangeable(command: Command) -> bool:
    """Whether a recording of ``command`` alone would be planned as recorded, one action:
    with no other command nothing fuses, no transfer repeats another, and a command is dead
    only when a buffer it writes is unreachable; a launch is changed (specialized) only for
    its scalar arguments."""
    for mem in command.uses:
        if root_of(mem).unreachable:
            return False
    task = command.task
    return type(task) is not KernelTask or not any(type(arg) is ValueArg for arg in task.args)


def _lone_graph(command: Command) -> TaskGraph:
    """The graph of a replay of ``command`` alone, run as recorded without planning: one node,
    its buffers not analysed (a kernel's accesses cost far more than the replay)."""
    task = command.task
    if type(task) is KernelTask:
        node = Node([0], "kernel", task.kernel.function_name, wave=0)
    else:
        node = Node([0], "transfer", transfer_label(command.kind), wave=0)
    return TaskGraph([node], [], set(), set(), notes=[
        f"{node.label} alone, nothing to fuse, remove or specialize: run as recorded"])


def _as_recorded(plan: Plan) -> bool:
    """Whether ``plan`` runs every recorded command as it is, one after another: nothing
    removed, fused or specialized, and no wave that runs, or may yet be judged to run, at
    once."""
    return (all(step.how == "action" and len(step.members) == 1 for step in plan.steps)
            and not any(wave.concurrent and wave.pays is not False for wave in plan.waves))


def _attempt(step: Step, commands: Sequence[Command]) -> Outcome:
    """Run one step; whatever it raises (Ctrl-C included) is its outcome."""
    start = time.perf_counter_ns()
    try:
        if step.how == "action":
            commands[step.members[0]].action()
        elif step.how == "generated":
            assert step.bindings is not None
            step.launch.run(_bound(commands, step.bindings))
    except BaseException as error:
        return Outcome(start, start, error)
    return Outcome(start, time.perf_counter_ns())


def _same_buffer(function: ir.Function, args: Sequence[Any]) -> list[set[str]]:
    """The parameters of a generated kernel bound to the same buffer (by the buffer owning the
    bytes, so sub-buffers of one buffer are one group), as groups of names."""
    groups: dict[int, set[str]] = {}
    for param, arg in zip(function.params, args):
        if isinstance(arg, BufferArg) and arg.owner is not None:
            groups.setdefault(id(root_of(arg.owner)), set()).add(param.name)
    return [names for names in groups.values() if len(names) > 1]


def _bound(commands: Sequence[Command], bindings: list[tuple[int, int]]) -> tuple[Any, ...]:
    """The arguments of a generated kernel: per parameter, a recorded launch's argument (the
    plan binds launches only)."""
    return tuple([commands[c].task.args[a] for c, a in bindings])  # type: ignore[union-attr]


def _facts(kernel: Any) -> KernelFacts:
    key = (id(kernel.program), kernel.function_name)
    facts = CACHE.facts.get(key)
    if facts is None or not any(d is facts.function for d in kernel.program._module.decls):
        function = next(d for d in kernel.program._module.decls
                        if isinstance(d, ir.Function) and d.is_kernel
                        and d.name == kernel.function_name)
        facts = CACHE.facts[key] = kernel_facts(function, kernel.program._module)
    return facts


def _accesses(kernel: Any) -> tuple[Sequence[ir.Param], dict[str, Any]]:
    facts = _facts(kernel)
    return facts.function.params, facts.accesses


def _value_slots(commands: Sequence[Command]) -> list[tuple[int, int, int]]:
    """(command, argument index, slot) of every scalar argument, slots numbered in order."""
    slots: list[tuple[int, int, int]] = []
    for c, command in enumerate(commands):
        task = command.task
        if isinstance(task, KernelTask):
            for a, arg in enumerate(task.args):
                if isinstance(arg, ValueArg):
                    slots.append((c, a, len(slots)))
    return slots


def _shape(commands: Sequence[Command], program_id: Callable[[Program], Any] = id
           ) -> tuple[Any, tuple[bytes | None, ...]]:
    """The identity of a recording's graph (kernels, NDRanges, buffers by number with the bytes
    of their root each spans, transfers with the bytes they move in their root buffers, which
    buffers are released, which recorded commands each waits on) and its scalar argument values
    in slot order; kernels are named by ``program_id`` of their program and their function
    name. One flat tuple, each argument and range led by a tag, so that it is built and hashed
    without a tuple per argument (it is made at every replay)."""
    numbers = Numbering()
    buffer = numbers.buffer
    parts: list[Any] = []
    values: list[bytes | None] = []
    recorded = ({id(command.event): i for i, command in enumerate(commands)}
                if any(command.waits for command in commands) else {})
    for command in commands:
        task = command.task
        if type(task) is KernelTask:
            ndrange = task.launch.ndrange
            parts += ("k", program_id(task.kernel.program), task.kernel.function_name,
                      ndrange.work_dim, ndrange.global_size, ndrange.local_size,
                      ndrange.global_offset)
            for arg in task.args:
                kind = type(arg)
                if kind is BufferArg:
                    owner = arg.owner
                    if owner is None:
                        parts.append("null")
                    else:
                        parts += ("buf", buffer(owner), owner.offset, owner.size)
                elif kind is ValueArg:
                    parts += ("value", len(arg.data))
                    values.append(arg.data)
                elif kind is LocalArg:
                    parts += ("local", arg.nbytes)
                else:
                    parts += ("other", kind.__name__)
        else:
            assert isinstance(task, TransferTask)
            parts += ("t", command.kind)
            for tag, ranges in (("read", task.reads), ("write", task.writes)):
                for mem, offset, size in ranges:
                    parts += (tag, buffer(mem), mem.offset + offset, size)
            parts.append(None if task.host is None else numbers.host(task.host))
        if command.waits:
            waits = [recorded[id(e)] for e in command.waits if id(e) in recorded]
            if waits:
                parts += ("waits", len(waits), *waits)
    parts += [mem.unreachable for mem in numbers.buffers]
    parts += [mem.size for mem in numbers.buffers]
    return tuple(parts), tuple(values)
