"""Building and launching lowered patterns through the runtime, as any program is.

``Runnable`` holds the program built from the generated IR module (``compile_module``, then
``Program``), the buffers of the inputs, temporaries and outputs, and the kernels in order;
``run`` copies inputs in, launches every kernel and returns the outputs as numpy arrays
(one per leaf of a tuple result). ``launch`` alone reruns the kernels on the buffers in place,
which is what a benchmark times. ``given=True`` leaves the inputs and outputs to the caller:
``enqueue`` then launches the kernels on buffers it is handed (an array's own, for
``ppcl.array``), the temporaries still the Runnable's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ppcl.compiler.frontend import compile_module
from ppcl.compiler.ir.types import ScalarType
from ppcl.patterns import expr as px
from ppcl.patterns.codegen import Lowered, lower
from ppcl.runtime.constants import mem_flags
from ppcl.runtime.context import Context
from ppcl.runtime.event import Event
from ppcl.runtime.memory import Buffer
from ppcl.runtime.program import Program
from ppcl.runtime.queue import CommandQueue
from ppcl.runtime.transfer import enqueue_copy

_DTYPES = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
           "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64,
           "float": np.float32, "double": np.float64}


def dtype_of(t: ScalarType) -> np.dtype[Any]:
    if t.name not in _DTYPES:
        raise TypeError(f"no numpy type for {t}")
    return np.dtype(_DTYPES[t.name])


class Runnable:
    """A lowered expression built for the devices of ``context``."""

    def __init__(self, context: Context, lowered: Lowered, options: str = "",
                 given: bool = False) -> None:
        self.context = context
        self.lowered = lowered
        self.program = Program(context, compile_module(lowered.module, options)).build()
        self.kernels = [(self.program.__getattr__(plan.name), plan) for plan in lowered.kernels]
        self.buffers = {spec.name: Buffer(context, mem_flags.READ_WRITE,
                                          max(spec.count, 1) * dtype_of(spec.scalar).itemsize)
                        for spec in lowered.buffers if not given or spec.role == "temp"}
        self.scalars: dict[str, Any] = {}
        # per kernel, each argument either the Runnable's buffer or the name of one given
        self._plans = [(kernel, plan.global_size, plan.local_size,
                        tuple(self.buffers.get(a, a) for a in plan.args))
                       for kernel, plan in self.kernels]

    def enqueue(self, queue: CommandQueue, given: dict[str, Any],
                wait_for: Sequence[Event] | None = None) -> Event:
        """Enqueue every kernel, the inputs, outputs and scalars taken from ``given`` by name
        (buffers of at least the counts the lowering says, numpy scalars of its types), without
        waiting; the last kernel's event, which waits for the ones before."""
        event: Event | None = None
        for kernel, global_size, local_size, sources in self._plans:
            args = [given[a] if isinstance(a, str) else a for a in sources]
            event = kernel(queue, global_size, local_size, *args, wait_for=wait_for)
            wait_for = [event]  # each kernel reads the last one's results, in any queue
        assert event is not None
        return event

    def set_inputs(self, queue: CommandQueue, inputs: dict[str, Any]) -> None:
        for spec in self.lowered.buffers:
            if spec.role != "input":
                continue
            if spec.name not in inputs:
                raise KeyError(f"no value for input array '{spec.name}'")
            data = np.ascontiguousarray(inputs[spec.name], dtype=dtype_of(spec.scalar))
            if data.size != spec.count:
                raise ValueError(f"input '{spec.name}' has {data.size} elements, the "
                                 f"expression's type says {spec.count}")
            enqueue_copy(queue, self.buffers[spec.name], data)
        for name, t in self.lowered.scalars:
            if name not in inputs:
                raise KeyError(f"no value for scalar input '{name}'")
            self.scalars[name] = dtype_of(t).type(inputs[name])
        queue.finish()

    def launch(self, queue: CommandQueue) -> None:
        for kernel, plan in self.kernels:
            args = [self.buffers[a] if a in self.buffers else self.scalars[a] for a in plan.args]
            kernel(queue, plan.global_size, plan.local_size, *args)
        queue.finish()

    def outputs(self, queue: CommandQueue) -> list[np.ndarray]:
        results = []
        for spec in self.lowered.buffers:
            if spec.role == "output":
                host = np.empty(spec.count, dtype_of(spec.scalar))
                enqueue_copy(queue, host, self.buffers[spec.name])
                results.append(host)
        queue.finish()
        return results

    def run(self, queue: CommandQueue, inputs: dict[str, Any]) -> list[np.ndarray]:
        self.set_inputs(queue, inputs)
        self.launch(queue)
        return self.outputs(queue)


def build(context: Context, e: px.Expr, inputs: Sequence[px.Param], sizes: dict[str, int],
          local_size: int | None = None, name: str = "pattern") -> Runnable:
    """``e`` lowered for ``sizes`` and built for the context's devices."""
    return Runnable(context, lower(e, inputs, sizes, local_size, name))
