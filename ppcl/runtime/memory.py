"""Memory objects: buffers (with sub-buffers), local-memory arguments and mapped regions.

A buffer's bytes are allocated by the context's first device (every ppcl device so far shares
host memory), or, with ``USE_HOST_PTR``, are the caller's own host buffer (zero copy). Kernels
get the address of those bytes.

A released memory object refuses every use (``CL_INVALID_MEM_OBJECT``), but its bytes go back to
the allocator only when nothing can still reach them: no sub-buffer of it is alive and no
enqueued command that uses it is pending (commands hold it with ``hold``/``unhold``). So the
allocator never hands out memory a queued command will still read or write.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ppcl.devices.interface import Allocation
from ppcl.runtime.constants import (
    constant_names,
    info_attributes,
    mem_flags,
    mem_info,
    mem_object_type,
)
from ppcl.runtime.context import Context
from ppcl.runtime.errors import integer_arg, make_error
from ppcl.runtime.handles import Handle

if TYPE_CHECKING:
    from ppcl.runtime.event import Event
    from ppcl.runtime.queue import CommandQueue

_ACCESS_FLAGS = mem_flags.READ_WRITE | mem_flags.WRITE_ONLY | mem_flags.READ_ONLY
_HOST_FLAGS = mem_flags.USE_HOST_PTR | mem_flags.ALLOC_HOST_PTR | mem_flags.COPY_HOST_PTR
_HOST_ACCESS_FLAGS = mem_flags.HOST_WRITE_ONLY | mem_flags.HOST_READ_ONLY | mem_flags.HOST_NO_ACCESS
# guards the counts that decide when released memory is freed (commands end on other threads)
_FREE_LOCK = threading.Lock()
# how many memory objects were released (or deleted) so far: a launch's steady way
# (kernel.py) checks that its arguments are alive by this count not having moved
RELEASES = [0]


def host_bytes(obj: Any, *, routine: str, writable: bool = False,
               what: str = "host buffer") -> np.ndarray:
    """A flat uint8 view of a contiguous host buffer (numpy array or buffer-protocol object);
    ``routine`` names the OpenCL call in the error when it is not one."""
    if isinstance(obj, np.ndarray):
        array = obj
    else:
        try:
            array = np.frombuffer(obj, dtype=np.uint8)
        except (TypeError, ValueError) as error:
            raise make_error(routine, "INVALID_HOST_PTR",
                             f"{what} does not expose a buffer: {error}") from error
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        raise make_error(routine, "INVALID_HOST_PTR",
                         f"{what} must be contiguous (use numpy.ascontiguousarray)")
    if writable and not array.flags.writeable:
        raise make_error(routine, "INVALID_HOST_PTR", f"{what} is read-only")
    flat = array.reshape(-1, order="A")
    if flat.dtype.itemsize == 0:
        return np.empty(0, dtype=np.uint8)
    return flat.view(np.uint8)


class Kept:
    """How many buffers ``ppcl.hostfusion`` keeps in another layout between its kernels. Each
    has a ``keeper`` whose ``restore(buffer, written)`` puts the original bytes back before a
    command that does not know the other layout runs (a transfer to or from the host, another
    kernel; the layout is charged those shuffles); while the count is 0 the queue skips the
    check."""

    count = 0


@info_attributes(mem_info, own=("context", "flags", "map_count", "size"))
class MemoryObject(Handle):
    """Base of memory objects: flags, size, context and the host view of the bytes."""

    _data: np.ndarray
    _address: int | None = None  # of ``_data``, once asked for
    keeper: Any = None  # see Kept

    def __init__(self, context: Context, flags: int, size: int) -> None:
        self.context = context
        self.flags = flags
        self.size = size
        self.hostbuf: Any = None
        self._allocation: Allocation | None = None
        self.map_count = 0
        self.released = False  # set by release(); every later use raises
        # the object owning the bytes: a sub-buffer's parent, None for itself (no reference
        # cycle, so dropping the last reference frees the bytes at once)
        self._root: MemoryObject | None = None
        self._holds = 0  # pending commands and live sub-buffers that use the root's bytes
        self._live_subs = 0  # sub-buffers of this object not yet released
        self._when_unused: Callable[[], None] | None = None  # run once the holds end

    def check_live(self, routine: str) -> None:
        """Raise ``CL_INVALID_MEM_OBJECT`` if the object was released."""
        if self.released:
            raise make_error(routine, "INVALID_MEM_OBJECT",
                             f"{self!r} was released and cannot be used any more")

    def check_host_access(self, routine: str, *, reads: bool, writes: bool) -> None:
        """Raise ``CL_INVALID_OPERATION`` for a host read (read, map for reading) of an object
        created ``HOST_WRITE_ONLY`` or ``HOST_NO_ACCESS``, or a host write of one created
        ``HOST_READ_ONLY`` or ``HOST_NO_ACCESS`` (OpenCL 1.2)."""
        refused = 0
        if reads:
            refused |= mem_flags.HOST_WRITE_ONLY | mem_flags.HOST_NO_ACCESS
        if writes:
            refused |= mem_flags.HOST_READ_ONLY | mem_flags.HOST_NO_ACCESS
        denied = self.flags & refused
        if denied:
            access = "read" if reads and not denied & mem_flags.HOST_READ_ONLY else "write"
            raise make_error(routine, "INVALID_OPERATION",
                             f"the host may not {access} {self!r}: it was created with "
                             f"{mem_flags.to_string(denied)}")

    def hold(self) -> None:
        """Keep the bytes allocated until ``unhold`` (a pending command that uses them)."""
        root = self._root if self._root is not None else self
        with _FREE_LOCK:
            root._holds += 1

    def unhold(self) -> None:
        root = self._root if self._root is not None else self
        idle: Callable[[], None] | None = None
        with _FREE_LOCK:
            root._holds -= 1
            allocation = root._take_allocation_if_unused()
            if not root._holds:
                idle, root._when_unused = root._when_unused, None
        if allocation is not None:
            allocation.release()
        if idle is not None:
            idle()

    def when_unused(self, action: Callable[[], None]) -> None:
        """Run ``action`` once no pending command holds the bytes (now, if none does): how a
        memory pool takes back a lent block only after the commands using it have run."""
        root = self._root if self._root is not None else self
        with _FREE_LOCK:
            if root._holds:
                root._when_unused = action
                return
        action()

    @property
    def unreachable(self) -> bool:
        """Whether no object the program holds can reach these bytes any more: released,
        and (for a buffer) no sub-buffer of it alive, since a live sub-buffer keeps its
        parent's bytes readable (OpenCL)."""
        return self.released and not self._live_subs

    def _take_allocation_if_unused(self) -> Allocation | None:
        """The allocation to free now, if released and unused (call with ``_FREE_LOCK``)."""
        if not self.released or self._holds:
            return None
        allocation, self._allocation = self._allocation, None
        return allocation

    @property
    def address(self) -> int:
        """Where the bytes start, as passed to kernels (``_data`` is set once, when the
        object is made, so the address is kept after its first use)."""
        address = self._address
        if address is None:
            address = self._address = int(self._data.ctypes.data)
        return address

    @property
    def offset(self) -> int:
        return 0


    @property
    def type(self) -> int:
        return mem_object_type.BUFFER

    def bytes_view(self) -> np.ndarray:
        """The uint8 view of the object's bytes (what kernels read and write)."""
        return self._data

    def get_info(self, param: int) -> Any:
        if param != mem_info.REFERENCE_COUNT:
            self.check_live("clGetMemObjectInfo")
        values: dict[int, Any] = {
            mem_info.TYPE: self.type,
            mem_info.FLAGS: self.flags,
            mem_info.SIZE: self.size,
            mem_info.HOST_PTR: self.hostbuf,
            mem_info.MAP_COUNT: self.map_count,
            mem_info.REFERENCE_COUNT: 0 if self.released else 1,
            mem_info.CONTEXT: self.context,
            mem_info.ASSOCIATED_MEMOBJECT: getattr(self, "parent", None),
            mem_info.OFFSET: self.offset,
        }
        if param not in values:
            raise make_error("clGetMemObjectInfo", "INVALID_VALUE", f"unknown mem_info {param}")
        return values[param]


    def release(self) -> None:
        """Release the object; its bytes are freed once no command or sub-buffer uses them."""
        if self.released:
            return
        root = self._root if self._root is not None else self
        with _FREE_LOCK:
            self.released = True
            RELEASES[0] += 1
            if root is not self:
                root._holds -= 1  # a sub-buffer's hold on its parent ends with it
                root._live_subs -= 1
            allocation = root._take_allocation_if_unused()
        if allocation is not None:
            allocation.release()

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # interpreter shutdown
            pass


class Buffer(MemoryObject):
    """``Buffer(ctx, flags, size=0, hostbuf=None)`` as in PyOpenCL."""

    def __init__(self, context: Context, flags: int, size: int = 0, hostbuf: Any = None) -> None:
        routine = "clCreateBuffer"
        if not isinstance(context, Context):
            raise make_error(routine, "INVALID_CONTEXT", f"{context!r} is not a Context")
        flags = integer_arg(routine, flags, "memory flags")
        size = integer_arg(routine, size, "buffer size")
        check_flags(flags, routine)
        uses_host = bool(flags & (mem_flags.USE_HOST_PTR | mem_flags.COPY_HOST_PTR))
        if hostbuf is not None and not uses_host:
            raise make_error(routine, "INVALID_HOST_PTR",
                             "hostbuf given without USE_HOST_PTR or COPY_HOST_PTR")
        if uses_host and hostbuf is None:
            raise make_error(routine, "INVALID_HOST_PTR",
                             "USE_HOST_PTR and COPY_HOST_PTR need a hostbuf")
        host = None
        if hostbuf is not None:
            host = host_bytes(hostbuf, routine=routine,
                              writable=bool(flags & mem_flags.USE_HOST_PTR)
                              and not flags & mem_flags.READ_ONLY)
            if size == 0:
                size = host.size
            elif size > host.size:
                raise make_error(routine, "INVALID_BUFFER_SIZE",
                                 f"size {size} is greater than the host buffer ({host.size} bytes)")
        if size <= 0:
            raise make_error(routine, "INVALID_BUFFER_SIZE", "a buffer needs a size above 0")
        device_limit = min(d.max_mem_alloc_size for d in context.devices)
        if size > device_limit:
            raise make_error(routine, "INVALID_BUFFER_SIZE",
                             f"size {size} exceeds max_mem_alloc_size {device_limit}")
        super().__init__(context, flags, size)
        self.parent: Buffer | None = None
        self._origin = 0
        if flags & mem_flags.USE_HOST_PTR:
            assert host is not None
            self.hostbuf = hostbuf
            self._data = host[:size]
            return
        try:
            self._allocation = context.devices[0].backend.allocate(size)
        except (MemoryError, ValueError) as error:
            raise make_error(routine, "MEM_OBJECT_ALLOCATION_FAILURE", str(error)) from error
        self._data = self._allocation.array
        if host is not None:
            self._data[:] = host[:size]

    @classmethod
    def _sub(cls, parent: Buffer, origin: int, size: int, flags: int) -> Buffer:
        routine = "clCreateSubBuffer"
        parent.check_live(routine)
        origin = integer_arg(routine, origin, "sub-buffer origin")
        size = integer_arg(routine, size, "sub-buffer size")
        flags = integer_arg(routine, flags, "sub-buffer flags")
        if parent.parent is not None:
            raise make_error(routine, "INVALID_MEM_OBJECT", "a sub-buffer cannot be split again")
        _check_sub_flags(parent.flags, flags, routine)
        if size == 0:
            raise make_error(routine, "INVALID_BUFFER_SIZE", "a sub-buffer needs a size above 0")
        if origin < 0 or size < 0 or origin + size > parent.size:
            raise make_error(routine, "INVALID_VALUE",
                             f"region [{origin}, {origin + size}) is outside the buffer "
                             f"of {parent.size} bytes")
        alignment = min(d.backend.info.mem_base_addr_align for d in parent.context.devices)
        if origin % alignment:
            raise make_error(routine, "MISALIGNED_SUB_BUFFER_OFFSET",
                             f"origin {origin} is not a multiple of {alignment} bytes "
                             "(the device's mem_base_addr_align)")
        sub = cls.__new__(cls)
        # the host pointer flags, and the access flags when none are given, are the parent's
        host_flags = parent.flags & _HOST_FLAGS
        access = flags & _ACCESS_FLAGS or parent.flags & _ACCESS_FLAGS
        host_access = flags & _HOST_ACCESS_FLAGS or parent.flags & _HOST_ACCESS_FLAGS
        MemoryObject.__init__(sub, parent.context,
                              (flags & ~(_ACCESS_FLAGS | _HOST_ACCESS_FLAGS)) | access
                              | host_access | host_flags, size)
        sub.parent = parent
        sub._origin = origin
        sub.hostbuf = parent.hostbuf
        sub._data = parent._data[origin:origin + size]
        sub._root = parent
        parent.hold()  # the parent's bytes stay while the sub-buffer lives (OpenCL)
        with _FREE_LOCK:
            parent._live_subs += 1
        return sub

    def get_sub_region(self, origin: int, size: int, flags: int = 0) -> Buffer:
        return Buffer._sub(self, origin, size, flags)

    def __getitem__(self, index: slice) -> Buffer:
        if not isinstance(index, slice):
            raise make_error("Buffer.__getitem__", "INVALID_VALUE",
                             f"a buffer is indexed by a slice of bytes (buf[start:stop]), "
                             f"not {index!r}")
        start, stop, step = index.indices(self.size)
        if step != 1:
            raise make_error("Buffer.__getitem__", "INVALID_VALUE",
                             f"a buffer slice must have step 1, not {step}")
        return self.get_sub_region(start, stop - start)

    @property
    def offset(self) -> int:
        return self._origin

    def get_host_array(self, shape: Any, dtype: Any, order: str = "C") -> np.ndarray:
        """The caller's host buffer (``USE_HOST_PTR``) seen as an array."""
        if not self.flags & mem_flags.USE_HOST_PTR:
            raise make_error("get_host_array", "INVALID_VALUE",
                             "only buffers created with USE_HOST_PTR have a host array")
        return np.ndarray(shape, dtype=dtype, buffer=self._data, order=order)  # type: ignore[call-overload,arg-type]

    def __repr__(self) -> str:
        return f"<ppcl.Buffer {self.size} bytes at 0x{id(self):x}>"


def _check_sub_flags(parent: int, flags: int, routine: str) -> None:
    """A sub-buffer's flags as OpenCL allows them: no host pointer flags, and no access its
    parent does not grant."""
    check_flags(flags, routine)
    if flags & _HOST_FLAGS:
        raise make_error(routine, "INVALID_VALUE",
                         "a sub-buffer takes its host pointer flags from its parent: "
                         "USE_HOST_PTR, ALLOC_HOST_PTR and COPY_HOST_PTR are not allowed")
    for kinds, owner in ((_ACCESS_FLAGS, "kernel"), (_HOST_ACCESS_FLAGS, "host")):
        access = flags & kinds
        for only in (mem_flags.READ_ONLY, mem_flags.WRITE_ONLY, mem_flags.HOST_READ_ONLY,
                     mem_flags.HOST_WRITE_ONLY, mem_flags.HOST_NO_ACCESS):
            if only & kinds and parent & only and access and access != only:
                raise make_error(routine, "INVALID_VALUE",
                                 f"the parent buffer is {mem_flags.to_string(only)}; a "
                                 f"sub-buffer cannot grant more {owner} access")


def check_flags(flags: int, routine: str) -> None:
    access = flags & _ACCESS_FLAGS
    if access & (access - 1):
        raise make_error(routine, "INVALID_VALUE",
                         "READ_WRITE, READ_ONLY and WRITE_ONLY exclude each other")
    host_access = flags & _HOST_ACCESS_FLAGS
    if host_access & (host_access - 1):
        raise make_error(routine, "INVALID_VALUE",
                         "HOST_WRITE_ONLY, HOST_READ_ONLY and HOST_NO_ACCESS exclude each other")
    if flags & mem_flags.USE_HOST_PTR and flags & (mem_flags.COPY_HOST_PTR
                                                  | mem_flags.ALLOC_HOST_PTR):
        raise make_error(routine, "INVALID_VALUE",
                         "USE_HOST_PTR excludes COPY_HOST_PTR and ALLOC_HOST_PTR")
    known = sum(constant_names(mem_flags).values())
    if flags & ~known:
        raise make_error(routine, "INVALID_VALUE", f"unknown memory flags {flags:#x}")


class LocalMemory:
    """A ``__local`` kernel argument of ``size`` bytes."""

    def __init__(self, size: int) -> None:
        size = integer_arg("LocalMemory", size, "local memory size")
        if size <= 0:
            raise make_error("LocalMemory", "INVALID_ARG_SIZE", "local memory size must be above 0")
        self.size = int(size)

    def __repr__(self) -> str:
        return f"<ppcl.LocalMemory {self.size} bytes>"


class MemoryMap:
    """The region of a mapped buffer; the mapped array's ``base``. ``release()`` unmaps it, and
    so does dropping the mapped array without it, as in PyOpenCL (else the buffer's bytes
    stayed held, mapped, for good)."""

    def __init__(self, queue: CommandQueue, buffer: MemoryObject, view: np.ndarray) -> None:
        self._queue = queue
        self._buffer = buffer
        self._view = view
        self._released = False
        self._held = False  # the buffer's bytes are held for the mapping
        self._counted = False  # the map command ran: the buffer's map count includes it
        self.__array_interface__ = view.__array_interface__

    def enqueue(self, kind: int, wait_for: Sequence[Event] | None, blocking: bool,
                routine: str) -> Event:
        """Enqueue the map command (of ``kind``); the bytes stay allocated until the region
        is unmapped."""
        # uses: a buffer host fusion keeps in another layout gets its bytes back before the map
        event = self._queue._enqueue(kind, self._count, wait_for, blocking=blocking,
                                     routine=routine, uses=(self._buffer,))
        self._buffer.hold()
        self._held = True
        return event

    def _count(self) -> None:  # the map command (it keeps the mapping alive until it ran)
        self._buffer.map_count += 1
        self._counted = True

    def __del__(self) -> None:
        if self._released or not self._held:
            return
        self._released = True
        try:
            if self._counted:
                self._buffer.map_count -= 1
            self._buffer.unhold()
        except Exception:  # interpreter shutdown
            pass

    def release(self, queue: CommandQueue | None = None,
                wait_for: list[Event] | None = None) -> Event:
        from ppcl.runtime.constants import command_type

        if self._released:
            raise make_error("clEnqueueUnmapMemObject", "INVALID_VALUE",
                             "the region was already unmapped")
        self._released = True
        buffer = self._buffer

        def unmap() -> None:
            buffer.map_count -= 1
            buffer.unhold()  # held since the map was enqueued

        return (queue or self._queue)._enqueue(command_type.UNMAP_MEM_OBJECT, unmap, wait_for,
                                                routine="clEnqueueUnmapMemObject",
                                                uses=(buffer,))

    def __enter__(self) -> MemoryMap:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if not self._released:
            self.release().wait()
