"""The oracle for transforms: a kernel on the CPU device against the checking device.

``compare_devices(source, name, make_args, shapes)`` runs kernel ``name`` of ``source`` once
per launch shape on the CPU device (compiled C, every transform of its pipeline) and on the
checking device (the IR interpreted with OpenCL C's semantics, every access checked), with the
same random inputs, and compares every buffer afterwards: integers exactly, floats within a
tolerance (the C compiler may contract ``a * b + c``). A finding of the checking device fails
too, so a kernel under test must be free of bugs at every shape it is given.

``make_args(shape, rng)`` returns the kernel's arguments for one shape: numpy arrays for
``__global`` pointers (copied to a fresh buffer on each device), ``LocalMem(nbytes)`` for
``__local`` pointers, numpy scalars for values. ``awkward_shapes`` gives launch shapes that
transforms get wrong: one work-item, groups of one, odd and prime sizes, a single group,
sizes that are not multiples of a vector width, and a global offset (local sizes are always
given: the devices choose different ones for ``None``, and kernels may depend on it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import ppcl as cl
import ppcl.runtime.platform
from ppcl.devices.check import CheckDevice
from ppcl.devices.cpu import CPUDevice


@dataclass(frozen=True)
class LocalMem:
    """A ``__local`` pointer argument of ``nbytes`` bytes."""

    nbytes: int


@dataclass(frozen=True)
class Shape:
    """One launch: global size, local size (None: the device picks) and global offset."""

    global_size: tuple[int, ...]
    local_size: tuple[int, ...]
    offset: tuple[int, ...] | None = None


MakeArgs = Callable[["Shape", np.random.Generator], Sequence[Any]]


@functools.cache
def cpu_context() -> cl.Context:
    """A context on the threaded CPU device, shared by the test session."""
    return cl.Context([ppcl.runtime.platform.Device(cl.get_platforms()[0], CPUDevice(2))])


@functools.cache
def check_context() -> cl.Context:
    """A context on the checking device (raising at each launch), shared by the session."""
    return cl.Context([ppcl.runtime.platform.Device(cl.get_platforms()[0], CheckDevice())])


@functools.cache
def _queue(context: cl.Context) -> cl.CommandQueue:
    return cl.CommandQueue(context)


@functools.cache
def _program(context: cl.Context, source: str, options: str) -> cl.Program:
    return cl.Program(context, source).build(options)


def random_array(dtype: Any, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` random values of ``dtype``: floats in [-1, 1), integers in [-50, 50) (or
    [0, 100) when unsigned)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (rng.random(count) * 2.0 - 1.0).astype(dtype)
    low = 0 if dtype.kind == "u" else -50
    return rng.integers(low, low + 100, count).astype(dtype)


def launch(context: cl.Context, source: str, name: str, shape: Shape, args: Sequence[Any],
           options: str = "") -> list[np.ndarray]:
    """Run the kernel once on ``context``'s device; the arrays of its buffers afterwards (in
    argument order). Raises the device's error (``cl.KernelCheckError`` on the checking
    device)."""
    queue = _queue(context)
    kernel = getattr(_program(context, source, options), name)
    values: list[Any] = []
    buffers: list[tuple[np.ndarray, cl.Buffer]] = []
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    for arg in args:
        if isinstance(arg, np.ndarray):
            buffer = cl.Buffer(context, flags, hostbuf=arg.copy())
            buffers.append((arg, buffer))
            values.append(buffer)
        elif isinstance(arg, LocalMem):
            values.append(cl.LocalMemory(arg.nbytes))
        else:
            values.append(arg)
    kernel(queue, shape.global_size, shape.local_size, *values, global_offset=shape.offset)
    results = []
    for array, buffer in buffers:
        out = np.empty_like(array)
        cl.enqueue_copy(queue, out, buffer)
        results.append(out)
    queue.finish()
    return results


def awkward_shapes(dims: int = 1, largest: int = 67) -> list[Shape]:
    """Launch shapes that break transforms (see the module docstring), in ``dims``
    dimensions, none above ``largest`` work-items per dimension."""
    if dims == 1:
        sizes = [((1,), (1,)), ((7,), (7,)), ((13,), (1,)), ((largest,), (largest,)),
                 ((60,), (12,)), ((64,), (16,)), ((36,), (4,)), ((30,), (10,))]
        shapes = [Shape(g, loc) for g, loc in sizes]
        shapes.append(Shape((24,), (8,), (5,)))
        return shapes
    if dims == 2:
        sizes2 = [((1, 1), (1, 1)), ((7, 3), (7, 3)), ((12, 10), (4, 5)), ((16, 8), (8, 8)),
                  ((9, 6), (3, 1)), ((5, 13), (5, 1))]
        shapes = [Shape(g, loc) for g, loc in sizes2]
        shapes.append(Shape((8, 6), (4, 3), (2, 1)))
        return shapes
    sizes3 = [((1, 1, 1), (1, 1, 1)), ((4, 3, 2), (2, 3, 1)), ((6, 5, 3), (3, 5, 3)),
              ((8, 4, 4), (4, 2, 2))]
    return [Shape(g, loc) for g, loc in sizes3]


def compare_devices(source: str, name: str, make_args: MakeArgs, shapes: Sequence[Shape],
                    *, options: str = "", seed: int = 0, rtol: float = 1e-5,
                    atol: float = 1e-5) -> int:
    """Run ``name`` at every shape on the CPU and checking devices and compare every buffer;
    raises AssertionError naming the shape, the argument and the first difference. Returns
    the number of launches compared."""
    rng = np.random.default_rng(seed)
    for shape in shapes:
        args = list(make_args(shape, rng))
        expected = launch(check_context(), source, name, shape, args, options)
        got = launch(cpu_context(), source, name, shape, args, options)
        buffer_args = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
        for index, want, have in zip(buffer_args, expected, got):
            compare_buffers(name, shape, index, want, have, rtol, atol)
    return len(shapes)


def compare_buffers(name: str, shape: Shape, index: int, want: np.ndarray, have: np.ndarray,
                    rtol: float, atol: float) -> None:
    """Raise AssertionError at the first element where ``have`` (the CPU device's buffer)
    and ``want`` (the checking device's) differ."""
    if want.dtype.kind == "f":
        close = np.isclose(have, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        close = have == want
    if close.all():
        return
    where = np.argwhere(~close)[0]
    at = tuple(int(i) for i in where)
    raise AssertionError(
        f"kernel '{name}' at {shape}: argument {index} differs at {at}: the CPU device gives "
        f"{have[at]!r}, the checking device {want[at]!r} ({int((~close).sum())} elements "
        "differ)")
