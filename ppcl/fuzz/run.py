"""Running one generated program on several devices and comparing what they computed.

A target is a device reached through a PyOpenCL-style module: ppcl's CPU device, ppcl's checking
device (both from a platform of ppcl's own, whatever ``PPCL_DEVICES`` says) and, when pyopencl
and pocl are installed, pocl. The first target is the reference. The outcome of a program is
the first of: a build failure, a crash (any error while running), a finding of the checking
device, a mismatch of the output buffers against the reference, or ok.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from ppcl.fuzz.generate import FuzzProgram
from ppcl.runtime.errors import KernelCheckError

OUTCOMES = ("ok", "build", "crash", "finding", "mismatch")
# the start values of generate.ATOMIC_COUNTERS: the identity of each operation (xor: any)
_ACC_START = np.array([0, 0x5A5A5A5A, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0], dtype=np.uint32)


@dataclass(frozen=True)
class Outcome:
    """What happened to a program: ``kind`` is one of ``OUTCOMES``; ``target`` the device
    it happened on (for a mismatch, the one that differs from the reference)."""

    kind: str
    target: str = ""
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.kind != "ok"

    def same_failure(self, other: Outcome) -> bool:
        """Whether ``other`` is this failure again (what the reducer keeps)."""
        if self.kind != other.kind or self.target != other.target:
            return False
        if self.kind in ("build", "crash", "finding"):
            return _first_line(self.detail) == _first_line(other.detail)
        return True


def _first_line(text: str) -> str:
    """What went wrong, without the positions and numbers that change as the program shrinks:
    the first compiler diagnostic (``<source>:7:5: error: ...``) or else the first line."""
    lines = text.splitlines() or [""]
    chosen = next((line for line in lines if " error: " in line), lines[0])
    if " error: " in chosen:
        chosen = chosen.split(" error: ", 1)[1]
    return "".join(c for c in chosen if not c.isdigit()).strip()


@dataclass
class Target:
    """One device and the PyOpenCL-style module that drives it."""

    name: str
    cl: ModuleType
    context: Any
    queue: Any

    def run(self, program: FuzzProgram, data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cl = self.cl
        mf = cl.mem_flags
        built = cl.Program(self.context, program.source).build()
        out = cl.Buffer(self.context, mf.READ_WRITE, data.nbytes)
        source = cl.Buffer(self.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=data)
        acc = cl.Buffer(self.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=_ACC_START)
        built.fuzz(self.queue, (program.global_size,), (program.local_size,), out, source,
                   np.uint32(data.size), acc)
        got, counters = np.empty_like(data), np.empty_like(_ACC_START)
        cl.enqueue_copy(self.queue, got, out)
        cl.enqueue_copy(self.queue, counters, acc)
        self.queue.finish()
        return got, counters


def ppcl_targets(kinds: tuple[str, ...] = ("cpu", "check")) -> list[Target]:
    """ppcl's devices of these kinds, on a platform of the fuzzer's own."""
    import ppcl
    from ppcl.devices import device_of_kind
    from ppcl.runtime.platform import Platform
    from ppcl.settings import read_settings

    settings = read_settings()
    platform = Platform("ppcl fuzz", backends=lambda: [device_of_kind(k, settings)
                                                       for k in kinds])
    targets = []
    for kind, device in zip(kinds, platform.get_devices()):
        context = ppcl.Context([device])
        targets.append(Target(f"ppcl-{kind}", ppcl, context, ppcl.CommandQueue(context)))
    return targets


def pocl_target() -> Target | None:
    """pocl through pyopencl, or None where either is missing."""
    try:
        import pyopencl
    except ImportError:
        return None
    try:
        platforms = pyopencl.get_platforms()
    except Exception:  # noqa: BLE001 - no ICD loader or no platform: no pocl column
        return None
    for platform in platforms:
        if "portable" in platform.name.lower() or "pocl" in platform.name.lower():
            devices = platform.get_devices()
            if devices:
                context = pyopencl.Context(devices[:1])
                return Target("pocl", pyopencl, context, pyopencl.CommandQueue(context))
    return None


def input_data(program: FuzzProgram) -> np.ndarray:
    rng = np.random.default_rng(program.seed)
    return rng.integers(0, 1 << 32, program.global_size, dtype=np.uint32)


def _failure_kind(error: BaseException) -> str:
    text = str(error)
    if isinstance(error, KernelCheckError):
        return "finding"
    if "BUILD_PROGRAM_FAILURE" in text or "COMPILE_PROGRAM_FAILURE" in text:
        return "build"
    return "crash"


def run_program(program: FuzzProgram, targets: list[Target]) -> Outcome:
    """The outcome of ``program`` on ``targets`` (the first is the reference)."""
    data = input_data(program)
    results: list[tuple[Target, tuple[np.ndarray, np.ndarray]]] = []
    for target in targets:
        try:
            results.append((target, target.run(program, data)))
        except Exception as error:  # noqa: BLE001 - every failure of a device is an outcome
            return Outcome(_failure_kind(error), target.name,
                           f"{type(error).__name__}: {error}")
    reference_target, (ref_out, ref_acc) = results[0]
    for target, (out, acc) in results[1:]:
        for what, mine, theirs in (("out", ref_out, out), ("acc", ref_acc, acc)):
            if not np.array_equal(mine, theirs):
                index = int(np.flatnonzero(mine != theirs)[0])
                return Outcome("mismatch", target.name,
                               f"{what}[{index}]: {reference_target.name} {mine[index]:#x}, "
                               f"{target.name} {theirs[index]:#x}")
    return Outcome("ok")


Runner = Callable[[FuzzProgram], Outcome]
