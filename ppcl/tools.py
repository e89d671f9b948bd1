"""Helpers from ``pyopencl.tools``: test fixtures over ppcl's devices, allocators, memory pool.

``pytest_generate_tests_for_pyopencl`` parametrizes tests taking ``ctx_factory``, ``device`` or
``platform`` over the devices chosen by ``PPCL_TEST`` (or ``PYOPENCL_TEST``), e.g. ``0:0``.
``MemoryPool`` keeps released buffers in bins of rounded sizes and hands them out again.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from typing import Any

import ppcl as cl
from ppcl.runtime.memory import Buffer, MemoryObject
from ppcl.settings import read_settings


class _ContextFactory:
    """Makes a fresh context on one device (the ``ctx_factory`` test fixture)."""

    def __init__(self, device: cl.Device) -> None:
        self.device = device

    def __call__(self) -> cl.Context:
        gc.collect()
        return cl.Context([self.device])

    def __str__(self) -> str:
        return f"<context factory for <ppcl.Device '{self.device.name.strip()}' on " \
               f"'{self.device.platform.name.strip()}'>>"


def _find(objs: list[Any], identifier: str) -> Any:
    identifier = identifier.strip()
    if identifier.isdigit():
        index = int(identifier)
        if index >= len(objs):
            raise RuntimeError(f"object '{identifier}' not found")
        return objs[index]
    for obj in objs:
        if identifier.lower() in f"{obj.name} {obj.vendor}".lower():
            return obj
    raise RuntimeError(f"object '{identifier}' not found")


def get_test_platforms_and_devices(
        plat_dev_string: str | None = None) -> list[tuple[cl.Platform, list[cl.Device]]]:
    """Parse ``"0:0,1;ppcl:cpu"`` style selections (default: every device)."""
    if plat_dev_string is None:
        plat_dev_string = read_settings().test
    if not plat_dev_string:
        return [(platform, platform.get_devices()) for platform in cl.get_platforms()]
    result: list[tuple[cl.Platform, list[cl.Device]]] = []
    for entry in plat_dev_string.split(";"):
        parts = entry.split(":")
        if len(parts) > 2:
            raise RuntimeError("invalid syntax of PPCL_TEST / PYOPENCL_TEST")
        platform = _find(cl.get_platforms(), parts[0])
        devices = platform.get_devices()
        if len(parts) == 2:
            devices = [_find(devices, d) for d in parts[1].split(",")]
        result.append((platform, devices))
    return result


def get_pyopencl_fixture_arg_names(metafunc: Any,
                                   extra_arg_names: list[str] | None = None) -> list[str]:
    supported = ["platform", "device", "ctx_factory", "ctx_getter", *(extra_arg_names or [])]
    return [name for name in supported if name in metafunc.fixturenames]


def get_pyopencl_fixture_arg_values() -> tuple[list[dict[str, Any]], Callable[[Any], str]]:
    values: list[dict[str, Any]] = []
    for platform, devices in get_test_platforms_and_devices():
        for device in devices:
            values.append({"platform": platform, "device": device,
                           "ctx_factory": _ContextFactory(device),
                           "ctx_getter": _ContextFactory(device)})

    def idfn(value: Any) -> str:
        if isinstance(value, cl.Platform):
            return f"<ppcl.Platform '{value.name}'>"
        if isinstance(value, cl.Device):
            return f"<ppcl.Device '{value.name}'>"
        return str(value)

    return values, idfn


def pytest_generate_tests_for_pyopencl(metafunc: Any) -> None:
    """Use as ``from ppcl.tools import pytest_generate_tests_for_pyopencl as
    pytest_generate_tests`` to run tests taking ``ctx_factory``/``device``/``platform`` on
    every selected device."""
    names = get_pyopencl_fixture_arg_names(metafunc)
    if not names:
        return
    values, idfn = get_pyopencl_fixture_arg_values()
    metafunc.parametrize(names, [tuple(v[n] for n in names) for v in values], ids=idfn)


_first_arg_caches: list[dict[Any, Any]] = []


def first_arg_dependent_memoize(func: Callable[..., Any]) -> Callable[..., Any]:
    """Memoize ``func`` on all its arguments, cleared by ``clear_first_arg_caches``."""
    cache: dict[Any, Any] = {}
    _first_arg_caches.append(cache)

    def wrapper(*args: Any) -> Any:
        if args not in cache:
            cache[args] = func(*args)
        return cache[args]

    wrapper.__name__ = getattr(func, "__name__", "memoized")
    wrapper.__doc__ = func.__doc__
    return wrapper


def clear_first_arg_caches() -> None:
    for cache in _first_arg_caches:
        cache.clear()


# ---------------------------------------------------------------------- allocators


class AllocatorBase:
    """Makes buffers of a given size: ``allocator(size) -> Buffer``."""

    def __init__(self, context: cl.Context, mem_flags: int = cl.mem_flags.READ_WRITE) -> None:
        self.context = context
        self.mem_flags = mem_flags

    def __call__(self, size: int) -> Buffer:
        if size == 0:
            raise cl.LogicError("allocator", -61, "zero-size allocation")
        return Buffer(self.context, self.mem_flags, size)


class DeferredAllocator(AllocatorBase):
    """Allocates when called (memory is committed when first touched, as OpenCL defers it)."""


class ImmediateAllocator(AllocatorBase):
    """Allocates when called, for a queue's context (``ImmediateAllocator(queue)``)."""

    def __init__(self, queue: cl.CommandQueue, mem_flags: int = cl.mem_flags.READ_WRITE) -> None:
        super().__init__(queue.context, mem_flags)
        self.queue = queue


class PooledBuffer(Buffer):
    """A buffer lent by a ``MemoryPool``; ``release()`` (or garbage collection) returns it."""

    _pool: MemoryPool | None
    _block: Buffer | None
    _bin: int

    @classmethod
    def _lend(cls, pool: MemoryPool, block: Buffer, size: int, bin_size: int) -> PooledBuffer:
        lent = cls.__new__(cls)
        MemoryObject.__init__(lent, block.context, block.flags, size)
        lent.parent = None
        lent._origin = 0
        lent._data = block.bytes_view()[:size]
        lent._root = block  # commands pending on the lent buffer hold the block
        lent._pool = pool
        lent._block = block
        lent._bin = bin_size
        return lent

    def release(self) -> None:
        pool, block = self._pool, self._block
        self._pool = self._block = None
        self.released = True  # later uses raise CL_INVALID_MEM_OBJECT
        if pool is not None and block is not None:
            bin_size = self._bin
            # lent again only once the commands queued on it have run
            block.when_unused(lambda: pool._give_back(bin_size, block))


class MemoryPool:
    """Reuses buffers: a request is rounded up to its bin size (the top
    ``leading_bits_in_bin_id + 1`` bits of the size kept) and served from freed buffers of the
    same bin when there are any."""

    def __init__(self, allocator: AllocatorBase, leading_bits_in_bin_id: int = 4) -> None:
        self.allocator = allocator
        self.leading_bits_in_bin_id = leading_bits_in_bin_id
        self._bins: dict[int, list[Buffer]] = {}
        self._lock = threading.Lock()
        self._holding = True
        self.active_blocks = 0
        self.active_bytes = 0
        self.managed_bytes = 0

    def bin_size(self, size: int) -> int:
        shift = max(0, size.bit_length() - (self.leading_bits_in_bin_id + 1))
        return ((size + (1 << shift) - 1) >> shift) << shift

    def allocate(self, size: int) -> PooledBuffer:
        bin_size = self.bin_size(max(1, size))
        with self._lock:
            held = self._bins.get(bin_size)
            block = held.pop() if held else None
        if block is None:
            block = self.allocator(bin_size)
            self.managed_bytes += bin_size
        self.active_blocks += 1
        self.active_bytes += bin_size
        return PooledBuffer._lend(self, block, max(1, size), bin_size)

    __call__ = allocate

    def _give_back(self, bin_size: int, block: Buffer) -> None:
        self.active_blocks -= 1
        self.active_bytes -= bin_size
        with self._lock:
            if self._holding:
                self._bins.setdefault(bin_size, []).append(block)
                return
        self.managed_bytes -= bin_size
        block.release()

    @property
    def held_blocks(self) -> int:
        with self._lock:
            return sum(len(blocks) for blocks in self._bins.values())

    def free_held(self) -> None:
        with self._lock:
            bins, self._bins = self._bins, {}
        for bin_size, blocks in bins.items():
            for block in blocks:
                self.managed_bytes -= bin_size
                block.release()

    def stop_holding(self) -> None:
        self._holding = False
        self.free_held()
