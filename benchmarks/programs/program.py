"""What a program of the second suite is: OpenCL source, sizes, inputs, a host function and a
numpy reference.

The host function ``run(cl, ctx, queue, data)`` is written against PyOpenCL's API only, so the
same function drives ``cl = ppcl`` and ``cl = pyopencl``. ``data`` (a ``Data``) holds what does
not change between runs: the built program, one buffer per input array (created once from the
host arrays) and the size. A program that changes a buffer in place copies its input into it
again at the start of ``run``, so that every run computes the same thing; ``run`` ends with the
results read back to the host, which also waits for the queue.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Size = Mapping[str, int]
Arrays = dict[str, np.ndarray]
Result = tuple[np.ndarray, ...]


class Data:
    """A program built for one context, its buffers and its host inputs."""

    def __init__(self, cl: Any, ctx: Any, program: Program, size: Size, inputs: Arrays) -> None:
        mf = cl.mem_flags
        self.cl = cl
        self.size = size
        self.host = inputs
        self.prg = cl.Program(ctx, program.source).build(options=program.build_options)
        self.buf = {name: cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=array)
                    for name, array in inputs.items()}
        self._kernels: dict[str, Any] = {}

    def restore(self, queue: Any, *names: str) -> None:
        """Copy the host inputs ``names`` into their buffers again, for a program that changes
        them in place."""
        for name in names:
            self.cl.enqueue_copy(queue, self.buf[name], self.host[name])

    def read(self, queue: Any, *names: str) -> Result:
        """The buffers ``names`` read back to the host, each shaped as its input (the copies
        block, so this also waits for the queue)."""
        results = tuple(np.empty_like(self.host[name]) for name in names)
        for name, result in zip(names, results):
            self.cl.enqueue_copy(queue, result, self.buf[name])
        return results

    def kernel(self, name: str) -> Any:
        """The kernel ``name``, retrieved once: a retrieval makes a new kernel object."""
        if name not in self._kernels:
            self._kernels[name] = getattr(self.prg, name)
        return self._kernels[name]


HostFunction = Callable[[Any, Any, Any, Data], Result]


@dataclass(frozen=True)
class Program:
    """One benchmark program: what it computes, at which sizes, and how it is checked.

    ``tolerance`` bounds the largest absolute difference from the reference, relative to the
    reference's largest magnitude (per output array)."""

    name: str
    summary: str
    source: str
    sizes: Mapping[str, Size]  # "small" (tests) and "default" (the suite)
    inputs: Callable[[Size, np.random.Generator], Arrays]
    run: HostFunction
    reference: Callable[[Size, Arrays], Result]
    tolerance: float = 1e-4
    build_options: str = ""
    seed: int = field(default=2024)

    def make_inputs(self, size: Size) -> Arrays:
        return self.inputs(size, np.random.default_rng(self.seed))


def describe_size(size: Size) -> str:
    return " ".join(f"{key}={value}" for key, value in size.items())


def compare(program: Program, result: Result, expected: Result) -> str | None:
    """None when ``result`` matches ``expected`` within the program's tolerance, else why not."""
    if len(result) != len(expected):
        return f"{len(result)} outputs, expected {len(expected)}"
    for index, (got, want) in enumerate(zip(result, expected)):
        if got.shape != want.shape:
            return f"output {index}: shape {got.shape}, expected {want.shape}"
        if not np.all(np.isfinite(got)):
            return f"output {index}: {np.count_nonzero(~np.isfinite(got))} values not finite"
        scale = float(np.max(np.abs(want))) if want.size else 0.0
        error = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
        if error > program.tolerance * max(scale, 1e-30):
            worst = np.unravel_index(int(np.argmax(np.abs(got.astype(np.float64) - want))),
                                     want.shape)
            return (f"output {index}: largest difference {error:.3g} at {tuple(map(int, worst))}"
                    f" (got {got[worst]!r}, expected {want[worst]!r}), allowed "
                    f"{program.tolerance:g} x {scale:.3g}")
    return None


def round_up(value: int, multiple: int) -> int:
    """The smallest multiple of ``multiple`` not below ``value`` (global sizes of guarded
    kernels)."""
    return (value + multiple - 1) // multiple * multiple
