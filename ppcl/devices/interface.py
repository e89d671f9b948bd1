"""The one interface between the runtime and a device.

The runtime (``ppcl/runtime``) keeps OpenCL's semantics and checks: argument types, NDRange
validation, events and queues. Everything a device does differently lives behind this
interface:

- ``info``: what the device is (a :class:`DeviceInfo`; the runtime maps it to ``device_info``);
- memory: ``allocate`` host-visible memory, ``transfer``/``fill`` bytes between views of it,
  ``map`` being a view (devices with memory of their own will add staging here);
- programs: ``build`` takes the front end's IR module, the parsed build options and the debug
  settings and returns a :class:`DeviceProgram`, whose ``prepare`` gives the
  :class:`KernelLaunch` of one kernel for one NDRange shape (compiled on first use);
- launches: ``KernelLaunch.run(args)`` runs the whole NDRange and returns when it is done;
  the queue calls it inside a command, so its completion reaches the command's event;
- ``submit``: runs a command asynchronously (out-of-order queues, waits on events);
- ``default_local_size``: the group size for a launch whose host passes ``None``.

A new device is a module under ``ppcl/devices`` implementing :class:`Device`, listed in the
table of ``ppcl/devices/__init__.py``; nothing under ``ppcl/runtime`` changes.
"""

from __future__ import annotations

import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ppcl.compiler.diagnostics import Diagnostic
from ppcl.compiler.frontend.options import BuildOptions
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.layout import Size3, pad3
from ppcl.settings import Debug

__all__ = ["Allocation", "ArgValue", "BufferArg", "Device", "DeviceBuildError", "DeviceInfo",
           "DeviceProgram", "KernelCheckFailed", "KernelFault", "KernelLaunch", "LocalArg", "NDRange", "Size3", "ValueArg", "pad3"]


class DeviceBuildError(RuntimeError):
    """A kernel the device cannot compile; ``log`` is the compiler's output to show, and
    ``diagnostics`` the kernel compiler's located errors behind it, which the runtime prints
    with the program's source lines."""

    def __init__(self, message: str, log: str = "",
                 diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(message)
        self.log = log
        self.diagnostics = tuple(diagnostics)


class KernelFault(RuntimeError):
    """A launch that stopped because its kernel code faulted (an access outside valid memory,
    an integer division by zero): the process goes on, the command fails."""


class KernelCheckFailed(RuntimeError):
    """A device that checks kernels (``devices/check``) found bugs in one: ``findings`` lists
    them (structured, each with its class and source location), the message summarizes."""

    def __init__(self, message: str, findings: Sequence[Any]) -> None:
        super().__init__(message)
        self.findings = list(findings)


@dataclass(frozen=True)
class DeviceInfo:
    """What a device is, in the terms OpenCL's ``clGetDeviceInfo`` asks for."""

    name: str
    vendor: str
    kind: str  # cpu, gpu or accelerator
    compute_units: int
    clock_mhz: int
    max_work_group_size: int
    max_work_item_sizes: Size3
    local_mem_size: int
    global_mem_size: int
    max_mem_alloc_size: int
    global_mem_cache_size: int
    cache_line: int
    vector_bytes: int  # the width of the native vector registers
    mem_base_addr_align: int  # bytes
    host_unified_memory: bool = True
    extensions: tuple[str, ...] = ()
    threads: int = 1  # threads a launch runs on
    printf_buffer_size: int = 0  # bytes of printf records one launch can hold
    # whether a global write, a mem_fence and an atomic make the write seen by the other
    # work-groups of the same launch: more than OpenCL 1.2 promises (section 3.3.1, no
    # consistency between work-groups), which a CPU's coherent threads give
    fenced_writes_cross_groups: bool = False


@dataclass(frozen=True)
class NDRange:
    """A checked launch shape: three entries each, the unused dimensions 1 (offsets 0)."""

    work_dim: int
    global_size: Size3
    local_size: Size3
    global_offset: Size3

    @property
    def num_groups(self) -> Size3:
        g, loc = self.global_size, self.local_size
        return g[0] // loc[0], g[1] // loc[1], g[2] // loc[2]

    @property
    def group_count(self) -> int:
        n = self.num_groups
        return n[0] * n[1] * n[2]


class _BufferArgFields(NamedTuple):
    address: int
    ref: Any  # a weak reference to the owner, or None (NULL)


class BufferArg(_BufferArgFields):
    """A ``__global``/``__constant`` pointer: ``BufferArg(address, owner)``, the address of
    the bytes (0 for NULL) and the object that owns them (a memory object).

    The owner is held weakly (``owner`` is None once it is gone): an argument left set on a
    kernel, or kept by a device with its packed arguments, must not keep a buffer the program
    deleted, as OpenCL's ``clSetKernelArg`` keeps no reference. Whoever runs a launch keeps
    its owners alive until it completes (the runtime: a command holds the memory objects it
    uses)."""

    __slots__ = ()

    def __new__(cls, address: int, owner: Any = None) -> BufferArg:
        return tuple.__new__(cls, (address, None if owner is None else weakref.ref(owner)))

    @property
    def owner(self) -> Any:
        ref = self.ref
        return None if ref is None else ref()


class LocalArg(NamedTuple):
    """A ``__local`` pointer argument of ``nbytes`` bytes per work-group."""

    nbytes: int


class ValueArg(NamedTuple):
    """An argument passed by value: its bytes."""

    data: bytes


ArgValue = BufferArg | LocalArg | ValueArg


class KernelLaunch(ABC):
    """One kernel compiled for one NDRange shape, ready to run with arguments."""

    ndrange: NDRange
    static_local_bytes: int

    @abstractmethod
    def local_bytes(self, args: Sequence[ArgValue]) -> int:
        """The bytes of local memory one work-group needs with these arguments."""

    @abstractmethod
    def run(self, args: Sequence[ArgValue]) -> None:
        """Run every work-group; return when all have run. ``args`` is one tuple per set of
        argument values: a device may keep what it derived from it while it is the same."""

    @property
    def settled(self) -> bool:
        """Whether the launch runs the code it keeps: a device that loads a quickly compiled
        module first and an optimized one later says False until then, so that a launch timed
        meanwhile (host fusion's guard) is not taken for the kernel's speed."""
        return True

    def settle(self) -> None:  # noqa: B027 - most devices are settled from the start
        """Wait until ``settled`` (a thread that built the launch to be timed may)."""


class DeviceProgram(ABC):
    """A program built for one device from the front end's IR."""

    @abstractmethod
    def prepare(self, kernel_name: str, ndrange: NDRange) -> KernelLaunch:
        """The launch of ``kernel_name`` over ``ndrange``; raises :class:`DeviceBuildError`."""


class Allocation(ABC):
    """Device memory that the host can see as bytes."""

    array: np.ndarray  # uint8, the allocation's bytes
    address: int  # where they start, as kernels see it

    @abstractmethod
    def release(self) -> None:
        """Give the memory back; the allocation must not be used afterwards."""


class Device(ABC):
    """A device the runtime drives (see the module docstring)."""

    info: DeviceInfo
    # whether launches from several host threads may run at the same time (each on its own
    # thread, none waiting for another): what the overlay's parallel replay needs
    concurrent_launches: bool = False

    # ------------------------------------------------------------------ programs

    @abstractmethod
    def build(self, module: ir.Module, options: BuildOptions,
              debug: Debug) -> DeviceProgram:
        """The program for ``module``; kernels may compile lazily, at ``prepare``."""

    def context_created(self) -> None:
        """A context holding this device was made: a device may do what its first build
        needs once (a compiler's start-up), as a vendor's driver loads its compiler when a
        context is made."""
        return None

    @abstractmethod
    def default_local_size(self, global_size: Size3, work_dim: int) -> Size3:
        """The local size for a launch whose host passes ``None``."""

    # ------------------------------------------------------------------ memory

    @abstractmethod
    def allocate(self, nbytes: int) -> Allocation:
        """``nbytes`` of memory, aligned to ``info.mem_base_addr_align``; raises MemoryError."""

    def bytes_in_use(self) -> int | None:
        """Bytes of this device's allocations not yet released; None where the device does
        not count them."""
        return None

    def transfer(self, target: np.ndarray, source: np.ndarray) -> None:
        """Copy the bytes of ``source`` to ``target`` (views of the same shape, either of
        which may be device memory)."""
        target[...] = source

    def fill(self, target: np.ndarray, pattern: np.ndarray) -> None:
        """Repeat ``pattern`` (uint8, one row) over the rows of ``target``."""
        target[...] = pattern

    def map(self, allocation_view: np.ndarray) -> np.ndarray:
        """A host view of device memory (the memory itself for host-visible devices)."""
        return allocation_view

    # ------------------------------------------------------------------ commands

    @abstractmethod
    def submit(self, task: Callable[[], None]) -> None:
        """Run ``task`` asynchronously, on a thread of the device's command executor."""

    # whether ``collected_failure`` may return something: a queue's ``finish`` asks only then
    collects_failures = False

    def collected_failure(self) -> KernelCheckFailed | None:
        """Kernel bugs a checking device collected since the last call (its collect mode
        reports them at ``finish``); None for every other device."""
        return None
