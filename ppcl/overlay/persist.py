"""The overlay's plans and generated programs on disk, so that a new process replays a pattern
an earlier one optimized with no analysis and no front-end build.

Two kinds of entry live under the kernel cache root (``compiler/cache.py``'s ``cache_dir``):

- ``overlay/programs/<key>.bin``: a generated program's binary (``Program.binaries``: the typed
  IR and build options, sealed by a sha256 trailer), keyed by the printed OpenCL text, the
  build options and the device. Loading it costs a checksum and an unpickle (about 1 ms) where
  a build from the text parses it again (about 20 ms).
- ``overlay/plans/<key>.json``: a plan (which command runs how, which generated kernel stands
  for which commands, and the task graph shown by ``ppcl.overlay.graph()``), keyed by a stable
  form of the recording's shape: kernels by a hash of their program's printed IR and options
  (never ``id()``), NDRanges, buffers by number, transfers, released buffers, sizes; plus the
  specialized values, the device and a hash of the code that makes plans, so a plan made by
  other code is never taken. The first line is the sha256 of the rest.

A damaged, truncated, foreign or stale entry is ignored (and removed): the caller then plans and
builds as if it were absent. Every file is written under a unique temporary name and moved into
place, so concurrent processes see a complete entry or none; an unwritable cache only costs
the next process the work again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import weakref
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ppcl.compiler.cache import cache_dir, cache_key
from ppcl.compiler.codegen.opencl import print_opencl
from ppcl.overlay.graph import Node, TaskGraph
from ppcl.runtime.errors import Error
from ppcl.runtime.program import Program

PLAN_FORMAT = 1
# the code a stored plan depends on: the overlay itself, the analyses and the IR it reads
_PLAN_CODE = ("overlay", "compiler/analysis", "compiler/ir")
_code_digest: list[str] = []
_identities: weakref.WeakKeyDictionary[Program, tuple[Any, str]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


@dataclass(frozen=True)
class GeneratedKernel:
    """What a plan needs to rebuild a generated kernel: its text, options, name and range."""

    source: str
    options: str
    name: str
    ndrange: Any  # devices.interface.NDRange


@dataclass(frozen=True)
class StoredStep:
    members: list[int]
    how: str  # action | generated | skip
    kernel: GeneratedKernel | None = None
    bindings: list[tuple[int, int]] | None = None


@dataclass(frozen=True)
class StoredPlan:
    steps: list[StoredStep]
    graph: TaskGraph


# ---------------------------------------------------------------------- keys


def program_identity(program: Program) -> str:
    """A hash of what a program's kernels compute: its printed IR (so included headers and
    ``-D`` macros count, whatever text it came from) and its build options. Kept per program
    while its module stays the same."""
    with _lock:
        known = _identities.get(program)
    if known is not None and known[0] is program._module:
        return known[1]
    digest = hashlib.sha256()
    digest.update(print_opencl(program._module).encode())
    digest.update(b"\0" + program._options.encode())
    identity = digest.hexdigest()
    with _lock:
        _identities[program] = (program._module, identity)
    return identity


def device_identity(device: Any) -> str:
    return f"{type(device).__name__}:{device.name}"


def _plan_code_digest() -> str:
    """A hash of the source files plans depend on, so a changed optimizer never replays a plan
    an older one made (read once per process)."""
    with _lock:
        if _code_digest:
            return _code_digest[0]
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for folder in _PLAN_CODE:
        for path in sorted((root / folder).glob("*.py")):
            digest.update(path.name.encode() + b"\0")
            digest.update(path.read_bytes())
    with _lock:
        _code_digest[:] = [digest.hexdigest()]
    return _code_digest[0]


def plan_key(shape: Any, specialized: Any, device: Any) -> str:
    """The disk key of a plan: ``shape`` and ``specialized`` must hold only plain values
    (numbers, strings, bytes, tuples, frozensets, NDRanges) whose ``repr`` is the same in
    every process."""
    return cache_key("overlay-plan", str(PLAN_FORMAT), _plan_code_digest(),
                     device_identity(device), repr(shape), repr(_sorted(specialized)))


def _sorted(value: Any) -> Any:
    """``value`` with sets as sorted tuples, so its ``repr`` does not depend on hashing."""
    if isinstance(value, frozenset | set):
        return tuple(sorted(value))
    if isinstance(value, tuple):
        return tuple(_sorted(v) for v in value)
    return value


def program_key(source: str, options: str, device: Any) -> str:
    """The disk key of a generated program; the code hash is in it because the binary holds
    the IR's classes as this code defines them."""
    return cache_key("overlay-program", _plan_code_digest(),
                     hashlib.sha256(source.encode()).hexdigest(), options, device_identity(device))


def _folder(kind: str) -> Path:
    return cache_dir() / "overlay" / kind


# ---------------------------------------------------------------------- files


def _write(path: Path, data: bytes) -> None:
    """``data`` as ``path``, atomically; an unwritable cache is left as it is."""
    temp = path.with_name(f".tmp-{os.getpid()}-{threading.get_ident()}-{path.name}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temp.write_bytes(data)
        os.replace(temp, path)
    except OSError:
        temp.unlink(missing_ok=True)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _drop(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


# ---------------------------------------------------------------------- programs


def load_program(context: Any, source: str, options: str, device: Any) -> tuple[Program | None, str]:
    """The generated program stored for ``source``, built from its binary, and what happened
    (``"disk"``, ``"absent"`` or why a stored one was ignored)."""
    path = _folder("programs") / (program_key(source, options, device) + ".bin")
    data = _read(path)
    if data is None:
        return None, "absent"
    try:
        program = Program(context, [device], [data]).build()
    except Error as error:  # CL_INVALID_BINARY names the damage
        _drop(path)
        return None, f"ignored {path.name} ({error})"
    return program, "disk"


def store_program(program: Program, source: str, options: str, device: Any) -> None:
    path = _folder("programs") / (program_key(source, options, device) + ".bin")
    _write(path, program._binary())


# ---------------------------------------------------------------------- plans


def load_plan(key: str, commands: int) -> tuple[StoredPlan | None, str]:
    """The plan stored under ``key`` for a recording of ``commands`` commands, and what
    happened (``"disk"``, ``"absent"`` or why a stored one was ignored)."""
    path = _folder("plans") / (key + ".json")
    data = _read(path)
    if data is None:
        return None, "absent"
    head, _, body = data.partition(b"\n")
    if head.decode("ascii", "replace") != hashlib.sha256(body).hexdigest():
        _drop(path)
        return None, f"ignored {path.name} (does not match its checksum)"
    try:
        plan = _plan_from(json.loads(body), commands)
    except (ValueError, TypeError, KeyError) as error:
        _drop(path)
        return None, f"ignored {path.name} ({error})"
    return plan, "disk"


def store_plan(key: str, plan: StoredPlan) -> None:
    body = json.dumps({"format": PLAN_FORMAT,
                       "steps": [_step_json(step) for step in plan.steps],
                       "graph": _graph_json(plan.graph)}, separators=(",", ":")).encode()
    _write(_folder("plans") / (key + ".json"),
           hashlib.sha256(body).hexdigest().encode() + b"\n" + body)


def _step_json(step: StoredStep) -> dict[str, Any]:
    data: dict[str, Any] = {"members": step.members, "how": step.how}
    if step.kernel is not None:
        ndrange = step.kernel.ndrange
        data["kernel"] = {"source": step.kernel.source, "options": step.kernel.options,
                          "name": step.kernel.name,
                          "ndrange": [ndrange.work_dim, list(ndrange.global_size),
                                      list(ndrange.local_size), list(ndrange.global_offset)]}
        data["bindings"] = step.bindings
    return data


def _graph_json(graph: TaskGraph) -> dict[str, Any]:
    return {"nodes": [{k: sorted(v) if isinstance(v, set) else v
                       for k, v in asdict(node).items()} for node in graph.nodes],
            "released": sorted(graph.released), "edges": sorted(graph.edges),
            "notes": graph.notes, "before": graph.before}


def _plan_from(data: Any, commands: int) -> StoredPlan:
    """The plan ``data`` describes, checked against a recording of ``commands`` commands:
    every command in exactly one step, in queue order (raises ValueError where not)."""
    from ppcl.devices.interface import NDRange

    if data.get("format") != PLAN_FORMAT:
        raise ValueError(f"format {data.get('format')!r}, not {PLAN_FORMAT}")
    steps = []
    seen: list[int] = []
    for item in data["steps"]:
        members = [int(m) for m in item["members"]]
        how = item["how"]
        seen.extend(members)
        if how in ("action", "skip"):
            if how == "action" and len(members) != 1:
                raise ValueError("an action step of several commands")
            steps.append(StoredStep(members, how))
            continue
        if how != "generated":
            raise ValueError(f"a step of kind {how!r}")
        kernel = item["kernel"]
        work_dim, global_size, local_size, offset = kernel["ndrange"]
        ndrange = NDRange(int(work_dim), _size3(global_size), _size3(local_size), _size3(offset))
        bindings = [(int(c), int(a)) for c, a in item["bindings"]]
        if any(c not in members for c, _ in bindings):
            raise ValueError("a binding to a command outside its step")
        steps.append(StoredStep(members, how, GeneratedKernel(
            str(kernel["source"]), str(kernel["options"]), str(kernel["name"]), ndrange),
            bindings))
    if sorted(seen) != list(range(commands)):
        raise ValueError(f"the plan covers commands {sorted(seen)}, not 0..{commands - 1}")
    return StoredPlan(steps, _graph_from(data["graph"]))


def _size3(value: Any) -> tuple[int, int, int]:
    if len(value) != 3:
        raise ValueError(f"a size of {len(value)} entries")
    return int(value[0]), int(value[1]), int(value[2])


def _graph_from(data: Any) -> TaskGraph:
    nodes = [Node(members=list(n["members"]), kind=n["kind"], label=n["label"],
                  reads=set(n["reads"]), writes=set(n["writes"]), host=n["host"],
                  status=n["status"], covers=set(n["covers"])) for n in data["nodes"]]
    return TaskGraph(nodes, [], set(data["released"]),
                     {(int(a), int(b), str(why)) for a, b, why in data["edges"]},
                     list(data["notes"]), str(data["before"]))
