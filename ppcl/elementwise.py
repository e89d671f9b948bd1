"""``pyopencl.elementwise``: kernels that apply an operation at every index ``i`` of arrays.

``ElementwiseKernel(ctx, "float a, float *x, float *y, float *z", "z[i] = a*x[i] + y[i]")``
generates an OpenCL C kernel from a template and builds it with ppcl's ``Program``. One
work-item runs one index, in groups of ``GROUP``: on a CPU the compiler runs a group as one
vectorized loop over consecutive indices. The launch covers the indices exactly (a second
launch of groups of one takes the last ``n % GROUP``), so the kernel checks no bounds. Each
array argument carries its offset (``x__offset``, in elements), so views with an offset work as
arguments. Built kernels are cached per context and source, so calling the same generated
kernel again costs no build."""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

import ppcl as cl
from ppcl import cltypes
from ppcl.runtime.errors import integer_arg, make_error
from ppcl.runtime.queue import enqueue_no_work
from ppcl.tools import Argument, ScalarArg, VectorArg, complex_preamble, parse_arg_list

_programs: weakref.WeakKeyDictionary[cl.Context, dict[tuple[str, str, str], cl.Kernel]] = \
    weakref.WeakKeyDictionary()


def build_kernel(context: cl.Context, source: str, name: str, options: Any = None) -> cl.Kernel:
    """The kernel ``name`` of ``source`` built for ``context``, from the cache when the same
    source and options were built before."""
    per_context = _programs.setdefault(context, {})
    key = (source, name, str(options))
    kernel = per_context.get(key)
    if kernel is None:
        program = cl.Program(context, source).build(options=options)
        kernel = getattr(program, name)
        per_context[key] = kernel
    return kernel


def is_gpu(device: cl.Device) -> bool:
    return bool(device.type & cl.device_type.GPU)


GROUP = 256
"""Work-items per group of the generated kernels: on a CPU the compiler runs a group's
work-items as one vectorized loop, so consecutive indices in a group make contiguous vectors."""


def split_range(n: int) -> tuple[int, int]:
    """(indices run by groups of ``GROUP``, indices left for groups of one)."""
    main = n // GROUP * GROUP
    return main, n - main


def declarators(args: Sequence[Argument]) -> tuple[list[str], list[str]]:
    """The parameter list of ``args`` (an array gets its base pointer and an element offset)
    and the statements that point each array name at its first element."""
    params: list[str] = []
    prelude: list[str] = []
    for arg in args:
        if isinstance(arg, VectorArg):
            ctype = arg.declarator().rsplit("*", 1)[0].strip()
            params.append(f"{ctype} *{arg.name}__base, long {arg.name}__offset")
            prelude.append(f"{ctype} *{arg.name} = {arg.name}__base + {arg.name}__offset;")
        else:
            params.append(arg.declarator())
    return params, prelude


def scalar_value(dtype: np.dtype, value: Any) -> Any:
    """``value`` as a kernel argument of ``dtype`` (complex numbers as their float2 layout)."""
    if dtype.kind == "c":
        parts = np.array([complex(value).real, complex(value).imag],
                         dtype=np.float32 if dtype.itemsize == 8 else np.float64)
        return parts.tobytes()
    return dtype.type(value)


def arrays_and_queue(specs: Sequence[Argument], args: Sequence[Any],
                     queue: cl.CommandQueue | None, routine: str,
                     fallback: Any = None) -> tuple[list[Any], cl.CommandQueue]:
    """The array arguments of a call and the queue it runs on: ``queue``, or that of its
    first array carrying one (or of ``fallback``, e.g. an ``out`` array), as PyOpenCL picks
    it."""
    arrays = [v for a, v in zip(specs, args) if isinstance(a, VectorArg)
              and hasattr(v, "base_data")]
    if queue is None:
        queue = next((v.queue for v in arrays if v.queue is not None), None)
        if queue is None and fallback is not None:
            queue = fallback.queue
    if queue is None:
        raise make_error(routine, "INVALID_COMMAND_QUEUE",
                         "no queue given and no array argument carries one")
    return arrays, queue


def completed(event: cl.Event) -> bool:
    """Whether ``event`` completed successfully (a failed one stays in an array's events, so
    that the commands after it fail too, as in PyOpenCL)."""
    return event.is_done and event.command_execution_status == cl.command_execution_status.COMPLETE


def wait_list(arrays: Iterable[Any], wait_for: Sequence[cl.Event] | None = None
              ) -> list[cl.Event] | None:
    """``wait_for`` and the events of ``arrays`` (``Array.events``) not yet completed: what a
    command that reads or writes the arrays waits for, so that an out-of-order queue, or
    another queue, orders it after their earlier commands. None when there is nothing to wait
    for, which keeps a launch on its fast path."""
    waits = list(wait_for or ())
    seen = {id(event) for event in waits}
    for array in arrays:
        for event in getattr(array, "events", ()):
            if id(event) not in seen and not completed(event):
                seen.add(id(event))
                waits.append(event)
    return waits or None


def record_event(event: cl.Event, arrays: Iterable[Any]) -> cl.Event:
    """Make ``event`` the one event of each of ``arrays`` (those it read too, so that a later
    write of one waits for the read); returns ``event``. The command waited for the arrays'
    events (``wait_list`` of the same arrays), so its event stands for them: the lists stay
    short without waiting for anything (a failed event fails the commands after it, and so
    stays represented). A completed event stays too, as in PyOpenCL, where ``a.events[-1]``
    is the command that made ``a`` (its profile, its status); ``wait_list`` skips it."""
    for array in arrays:
        events = getattr(array, "events", None)
        if events is not None:
            events[:] = [event]
    return event


_COMPLEX_AS_VECTOR = {np.dtype(np.complex64): cltypes.float2,
                      np.dtype(np.complex128): cltypes.double2}


def same_elements(array_dtype: np.dtype, declared: np.dtype) -> bool:
    """Whether an array of ``array_dtype`` holds the elements a kernel declares as ``declared``:
    the same dtype, integers (or booleans) of the same size that differ in signedness (a
    ``uint8`` array of flags read as ``char``, as C reads them and as PyOpenCL, which checks
    nothing, passes them), or a numpy complex array read as ``float2``/``double2`` (real and
    imaginary parts, the layout PyOpenCL's complex examples rely on)."""
    if array_dtype == declared or _COMPLEX_AS_VECTOR.get(array_dtype) == declared:
        return True
    return (array_dtype.kind in "iub" and declared.kind in "iub"
            and array_dtype.itemsize == declared.itemsize)


def array_args(args: Sequence[Argument], values: Sequence[Any], routine: str) -> list[Any]:
    """The kernel argument values for ``values`` (arrays as buffer and element offset)."""
    if len(values) != len(args):
        raise make_error(routine, "INVALID_KERNEL_ARGS",
                         f"the kernel takes {len(args)} arguments, got {len(values)}")
    result: list[Any] = []
    for arg, value in zip(args, values):
        if isinstance(arg, VectorArg):
            if isinstance(value, cl.MemoryObject):
                result += [value, np.int64(0)]
                continue
            if not hasattr(value, "base_data"):
                raise make_error(routine, "INVALID_ARG_VALUE",
                                 f"argument '{arg.name}' is an array: pass a ppcl.array.Array"
                                 f" or a Buffer, not {type(value).__name__}")
            if not same_elements(value.dtype, arg.dtype):
                raise make_error(routine, "INVALID_ARG_VALUE",
                                 f"argument '{arg.name}' has dtype {value.dtype}, the kernel "
                                 f"declares {arg.dtype}")
            if not value.flags.forc:
                # the kernel indexes the buffer from the view's offset with unit stride: a
                # strided view would be read as its base's consecutive elements
                raise make_error(routine, "INVALID_VALUE",
                                 f"{routine} needs contiguous arrays: argument '{arg.name}' is "
                                 f"a view with strides {value.strides}; copy it first (.copy())")
            result += [value.base_data, np.int64(value.offset // value.dtype.itemsize)]
        else:
            result.append(scalar_value(arg.dtype, value))
    return result


class ElementwiseKernel:
    """``pyopencl.elementwise.ElementwiseKernel``: ``operation`` runs for every ``i`` below
    the size of the first array argument (or over ``range``/``slice`` when given)."""

    def __init__(self, context: cl.Context, arguments: str | list[Argument], operation: str,
                 name: str = "elwise_kernel", options: Any = None, preamble: str = "",
                 loop_prep: str = "", after_loop: str = "", auto_preamble: bool = True) -> None:
        self.context = context
        # False leaves out the complex header, as PyOpenCL's does: the preamble includes it
        self.auto_preamble = auto_preamble
        self.args = parse_arg_list(arguments)
        self.operation = operation
        self.name = name
        self.options = options
        self.preamble = preamble
        self.loop_prep = loop_prep
        self.after_loop = after_loop
        self._built: dict[bool, cl.Kernel] = {}  # by ``ranged``: no source text per launch

    def source(self, ranged: bool) -> str:
        """One work-item per index ``i``: no bounds check, since launches cover exact ranges
        (a check in every work-item costs the vectorized loop a third of its speed). As in
        PyOpenCL, the operation sees ``n`` (or ``start``, ``stop``, ``step`` over a range) and
        may skip an index with ``PYOPENCL_ELWISE_CONTINUE``."""
        params, prelude = declarators(self.args)
        if ranged:
            params += ["long start", "long stop", "long step"]
            index = "long i = start + (long)get_global_id(0) * step;"
        else:
            params.append("long n")
            index = "long i = get_global_id(0);"
        header = complex_preamble(a.dtype for a in self.args) if self.auto_preamble else ""
        return (f"{header}\n{self.preamble}\n"
                "#define PYOPENCL_ELWISE_CONTINUE return\n"
                f"__kernel void {self.name}({', '.join(params)})\n{{\n  "
                + "\n  ".join(prelude)
                + f"\n  {self.loop_prep};\n  {index}\n  {{ {self.operation}; }}\n"
                f"  {self.after_loop};\n}}\n")

    def get_kernel(self, ranged: bool = False) -> cl.Kernel:
        kernel = self._built.get(ranged)
        if kernel is None:
            kernel = build_kernel(self.context, self.source(ranged), self.name, self.options)
            self._built[ranged] = kernel
        return kernel

    def __call__(self, *args: Any, range: slice | None = None,  # noqa: A002 - PyOpenCL's name
                 slice: slice | None = None, queue: cl.CommandQueue | None = None,  # noqa: A002
                 wait_for: Sequence[cl.Event] | None = None, **kwargs: Any) -> cl.Event:
        routine = "ElementwiseKernel"
        values = array_args(self.args, args, routine)  # first: it names a wrong argument
        arrays, queue = arrays_and_queue(self.args, args, queue, routine)
        if range is not None and slice is not None:
            raise make_error(routine, "INVALID_VALUE", "give range or slice, not both")
        if slice is not None:
            if not arrays:
                raise make_error(routine, "INVALID_VALUE", "slice needs an array argument")
            range = _slice_range(slice, arrays[0].size)
        if range is not None:
            start, step, count = range_indices(range, routine)
        else:
            if not arrays:
                raise make_error(routine, "INVALID_VALUE",
                                 "without an array argument, give range=slice(...)")
            count, start, step = arrays[0].size, 0, 1
        ranged = (start, step) if range is not None else None
        return record_event(self.launch(queue, values, count, ranged, wait_list(arrays, wait_for)),
                         arrays)

    def launch(self, queue: cl.CommandQueue, values: list[Any], count: int,
               ranged: tuple[int, int] | None = None,
               wait_for: Sequence[cl.Event] | None = None) -> cl.Event:
        """Enqueue the kernel over ``count`` indices on prepared argument values."""
        kernel = self.get_kernel(ranged is not None)
        if ranged is not None:
            start, step = ranged
            values = [*values, np.int64(start), np.int64(start + count * step), np.int64(step)]
        else:
            values = [*values, np.int64(count)]
        main, tail = split_range(count)
        event = None
        if main:
            event = kernel(queue, (main,), (GROUP,), *values, wait_for=wait_for)
            wait_for = [event]  # the tail's event stands for both, in an out-of-order queue too
        if tail:
            event = kernel(queue, (tail,), (1,), *values, global_offset=(main,),
                           wait_for=wait_for)
        return event if event is not None else enqueue_no_work(queue, wait_for)


def range_indices(index: slice, routine: str) -> tuple[int, int, int]:
    """(first index, step, count) of a ``range=slice(start, stop, step)`` argument: ``stop``
    is needed (there is no length to take it from), ``step`` may not be 0 (it was taken for
    1), and each is an integer."""
    if not isinstance(index, slice) or index.stop is None:
        raise make_error(routine, "INVALID_VALUE",
                         f"range={index!r}: give slice(start, stop[, step]) with a stop")
    start = 0 if index.start is None else integer_arg(routine, index.start, "range start")
    stop = integer_arg(routine, index.stop, "range stop")
    step = 1 if index.step is None else integer_arg(routine, index.step, "range step")
    if step == 0:
        raise make_error(routine, "INVALID_VALUE", "range step 0")
    return start, step, max(0, -(-(stop - start) // step))


def _slice_range(index: slice, size: int) -> slice:
    return type(index)(*index.indices(size))


__all__ = ["ElementwiseKernel", "ScalarArg", "VectorArg"]
