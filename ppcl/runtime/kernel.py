"""Kernels: arguments, work-group info and NDRange launches on the CPU device.

Arguments are checked against the kernel's parameter types when set: buffers (or ``None``) for
``__global``/``__constant`` pointers, ``LocalMemory`` for ``__local`` pointers, and sized values
(numpy scalars, vector dtypes from ``ppcl.cltypes``, structured scalars) of the parameter's size
for everything else. A launch snapshots the arguments, so setting them again right after an
enqueue does not change the enqueued command.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ppcl.compiler import cpu
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import (
    AddressSpace,
    PointerType,
    ScalarType,
    Type,
    VectorType,
    scalar_of,
)
from ppcl.compiler.ir.visit import walk
from ppcl.compiler.transforms.workgroup import LOCAL_ALIGN
from ppcl.runtime.constants import (
    command_type,
    kernel_arg_access_qualifier,
    kernel_arg_address_qualifier,
    kernel_arg_info,
    kernel_arg_type_qualifier,
    kernel_info,
    kernel_work_group_info,
)
from ppcl.runtime.errors import ERROR_CODES, Error, make_error
from ppcl.runtime.event import Event
from ppcl.runtime.memory import LocalMemory, MemoryObject

if TYPE_CHECKING:
    from ppcl.runtime.platform import Device
    from ppcl.runtime.program import Program
    from ppcl.runtime.queue import CommandQueue

LocalSize = tuple[int, int, int]
PREFERRED_GROUP_ITEMS = 256
_SET_ARG = "clSetKernelArg"
_ENQUEUE = "clEnqueueNDRangeKernel"


class _Arg:
    """One set argument: how it is passed, the ctypes holder of its bytes and what it keeps."""

    __slots__ = ("kind", "holder", "address", "value", "local_size")

    def __init__(self, kind: str, holder: Any, value: Any, local_size: int = 0) -> None:
        self.kind = kind
        self.holder = holder
        self.address = ctypes.addressof(holder) if holder is not None else 0
        self.value = value
        self.local_size = local_size


def _address_space_qualifier(space: AddressSpace) -> int:
    return {
        AddressSpace.GLOBAL: kernel_arg_address_qualifier.GLOBAL,
        AddressSpace.LOCAL: kernel_arg_address_qualifier.LOCAL,
        AddressSpace.CONSTANT: kernel_arg_address_qualifier.CONSTANT,
        AddressSpace.PRIVATE: kernel_arg_address_qualifier.PRIVATE,
    }[space]


def _kind_matches(param: Type, dtype: np.dtype) -> bool:
    """Whether a numpy scalar kind can stand for ``param`` (signedness may differ)."""
    elem = scalar_of(param)
    if elem is None or dtype.kind in "V":
        return True
    if elem.is_float:
        return dtype.kind == "f"
    return dtype.kind in "iub"


class Kernel:
    """``Kernel(program, name)``, or ``program.name``: one kernel with its argument values."""

    def __init__(self, program: Program, name: str) -> None:
        self.program = program
        self.function_name = name
        self.context = program.context
        self._function = program._kernel_function(name)
        self._params: tuple[ir.Param, ...] = self._function.params
        self._args: list[_Arg | None] = [None] * len(self._params)
        self._scalar_dtypes: list[np.dtype | None] | None = None
        self._local_static: int | None = None
        self._args_version = 0
        self._packed: tuple[Any, Any, int, tuple[Any, ...]] | None = None
        self._plans: dict[Any, _Plan] = {}
        self._last_call_args: tuple[Any, ...] | None = None

    @property
    def num_args(self) -> int:
        return len(self._params)

    @property
    def reqd_work_group_size(self) -> tuple[int, int, int] | None:
        return self._function.attrs.reqd_work_group_size

    # ------------------------------------------------------------------ arguments

    def set_scalar_arg_dtypes(self, dtypes: Sequence[Any]) -> None:
        """As PyOpenCL: let plain Python numbers through for the listed (non-None) dtypes."""
        if len(dtypes) != self.num_args:
            raise make_error("set_scalar_arg_dtypes", "INVALID_KERNEL_ARGS",
                             f"{len(dtypes)} dtypes for {self.num_args} arguments")
        self._scalar_dtypes = [None if d is None else np.dtype(d) for d in dtypes]

    def _describe(self, index: int) -> str:
        param = self._params[index]
        return f"argument {index} ('{param.name}' of type '{param.type}') of kernel " \
               f"'{self.function_name}'"

    def set_arg(self, index: int, value: Any) -> None:
        if not 0 <= index < self.num_args:
            raise make_error(_SET_ARG, "INVALID_ARG_INDEX",
                             f"kernel '{self.function_name}' has {self.num_args} arguments, "
                             f"not an argument {index}")
        self._args[index] = self._pack(index, value)
        self._args_version += 1
        self._last_call_args = None

    def set_args(self, *args: Any) -> None:
        if len(args) != self.num_args:
            raise make_error(_SET_ARG, "INVALID_KERNEL_ARGS",
                             f"kernel '{self.function_name}' takes {self.num_args} arguments, "
                             f"{len(args)} given")
        packed: list[_Arg | None] = [self._pack(index, value)
                                     for index, value in enumerate(args)]
        self._args = packed
        self._args_version += 1

    def _pack(self, index: int, value: Any) -> _Arg:
        param_type = self._params[index].type
        if isinstance(param_type, PointerType):
            if param_type.space is AddressSpace.LOCAL:
                if not isinstance(value, LocalMemory):
                    raise make_error(_SET_ARG, "INVALID_ARG_VALUE",
                                     f"{self._describe(index)} is a __local pointer: pass "
                                     f"LocalMemory(nbytes), not {type(value).__name__}")
                return _Arg("local", None, value, value.size)
            if value is None:
                return _Arg("buffer", ctypes.c_void_p(0), None)
            if not isinstance(value, MemoryObject):
                raise make_error(_SET_ARG, "INVALID_MEM_OBJECT",
                                 f"{self._describe(index)} is a pointer: pass a Buffer (or None),"
                                 f" not {type(value).__name__}")
            if value.context is not self.context:
                raise make_error(_SET_ARG, "INVALID_MEM_OBJECT",
                                 f"{self._describe(index)}: the buffer belongs to another context")
            return _Arg("buffer", ctypes.c_void_p(value.address), value)
        return _Arg("value", self._value_holder(index, param_type, value), None)

    def _value_holder(self, index: int, param_type: Type, value: Any) -> Any:
        size = param_type.size
        if isinstance(value, bool | int | float) and not isinstance(value, np.generic):
            dtype = self._scalar_dtypes[index] if self._scalar_dtypes else None
            if dtype is None:
                example = "np.float32(1.5)" if isinstance(param_type, ScalarType) \
                    and param_type.is_float else "np.int32(5)"
                raise make_error(_SET_ARG, "INVALID_ARG_VALUE",
                                 f"{self._describe(index)} got a Python {type(value).__name__}, "
                                 f"which has no size: use numpy scalars (e.g. {example}) or "
                                 "set_scalar_arg_dtypes")
            value = dtype.type(value)
        if isinstance(value, MemoryObject | LocalMemory) or value is None:
            raise make_error(_SET_ARG, "INVALID_ARG_VALUE",
                             f"{self._describe(index)} is passed by value: pass a numpy scalar, "
                             f"not {type(value).__name__}")
        if isinstance(value, bytes | bytearray | memoryview):
            data = bytes(value)
        else:
            array = np.asarray(value)
            if isinstance(param_type, ScalarType | VectorType) and array.dtype.kind in "OUS":
                raise make_error(_SET_ARG, "INVALID_ARG_VALUE",
                                 f"{self._describe(index)} cannot take {type(value).__name__}")
            if not _kind_matches(param_type, array.dtype):
                raise make_error(_SET_ARG, "INVALID_ARG_VALUE",
                                 f"{self._describe(index)} got a value of dtype {array.dtype}")
            data = array.tobytes()
        if len(data) != size:
            raise make_error(_SET_ARG, "INVALID_ARG_SIZE",
                             f"{self._describe(index)} takes {size} bytes, got {len(data)} bytes")
        return ctypes.create_string_buffer(data, size)

    # ------------------------------------------------------------------ launching

    def __call__(self, queue: CommandQueue, global_size: Sequence[int],
                 local_size: Sequence[int] | None, *args: Any,
                 global_offset: Sequence[int] | None = None,
                 wait_for: Sequence[Event] | None = None, g_times_l: bool = False,
                 allow_empty_ndrange: bool = False) -> Event:
        if args:
            last = self._last_call_args
            if last is None or len(last) != len(args) or \
                    any(a is not b for a, b in zip(args, last)):
                self.set_args(*args)
                # reuse is only safe for arguments that cannot change in place
                if all(a is None or isinstance(a, MemoryObject | np.number | np.bool_)
                       for a in args):
                    self._last_call_args = args
        elif self.num_args:
            self.set_args()  # raises: the call passed no arguments
        return enqueue_nd_range_kernel(queue, self, global_size, local_size, global_offset,
                                       wait_for, g_times_l=g_times_l,
                                       allow_empty_ndrange=allow_empty_ndrange)

    def _static_local_bytes(self) -> int:
        if self._local_static is None:
            total = 0
            for node in walk(self._function):
                if isinstance(node, ir.VarDecl) and node.space is AddressSpace.LOCAL:
                    total = (total + LOCAL_ALIGN - 1) // LOCAL_ALIGN * LOCAL_ALIGN
                    total += node.type.size
            self._local_static = total
        return self._local_static

    # ------------------------------------------------------------------ info

    def get_info(self, param: int) -> Any:
        attributes = ""
        if self.reqd_work_group_size is not None:
            attributes = "reqd_work_group_size({},{},{})".format(*self.reqd_work_group_size)
        values: dict[int, Any] = {
            kernel_info.FUNCTION_NAME: self.function_name,
            kernel_info.NUM_ARGS: self.num_args,
            kernel_info.REFERENCE_COUNT: 1,
            kernel_info.CONTEXT: self.context,
            kernel_info.PROGRAM: self.program,
            kernel_info.ATTRIBUTES: attributes,
        }
        if param not in values:
            raise make_error("clGetKernelInfo", "INVALID_VALUE", f"unknown kernel_info {param}")
        return values[param]

    def get_work_group_info(self, param: int, device: Device) -> Any:
        reqd = self.reqd_work_group_size
        local_args = sum(a.local_size for a in self._args if a is not None and a.kind == "local")
        values: dict[int, Any] = {
            kernel_work_group_info.WORK_GROUP_SIZE:
                reqd[0] * reqd[1] * reqd[2] if reqd else device.max_work_group_size,
            kernel_work_group_info.COMPILE_WORK_GROUP_SIZE: list(reqd or (0, 0, 0)),
            kernel_work_group_info.LOCAL_MEM_SIZE: self._static_local_bytes() + local_args,
            kernel_work_group_info.PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
                device.preferred_vector_width_float,
            kernel_work_group_info.PRIVATE_MEM_SIZE: 0,
        }
        if param not in values:
            raise make_error("clGetKernelWorkGroupInfo", "INVALID_VALUE",
                             f"unknown kernel_work_group_info {param}")
        return values[param]

    def get_arg_info(self, index: int, param: int) -> Any:
        if not 0 <= index < self.num_args:
            raise make_error("clGetKernelArgInfo", "INVALID_ARG_INDEX", f"no argument {index}")
        p = self._params[index]
        t = p.type
        space = t.space if isinstance(t, PointerType) else AddressSpace.PRIVATE
        quals = kernel_arg_type_qualifier.NONE
        if isinstance(t, PointerType):
            quals |= kernel_arg_type_qualifier.CONST if t.const else 0
            quals |= kernel_arg_type_qualifier.VOLATILE if t.volatile else 0
            quals |= kernel_arg_type_qualifier.RESTRICT if t.restrict else 0
        type_name = f"{t.pointee}*" if isinstance(t, PointerType) else str(t)
        values: dict[int, Any] = {
            kernel_arg_info.ADDRESS_QUALIFIER: _address_space_qualifier(space),
            kernel_arg_info.ACCESS_QUALIFIER: kernel_arg_access_qualifier.NONE,
            kernel_arg_info.TYPE_NAME: type_name,
            kernel_arg_info.TYPE_QUALIFIER: quals,
            kernel_arg_info.NAME: p.name,
        }
        if param not in values:
            raise make_error("clGetKernelArgInfo", "INVALID_VALUE", f"unknown kernel_arg_info {param}")
        return values[param]

    @property
    def int_ptr(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<ppcl.Kernel '{self.function_name}' at 0x{id(self):x}>"


# ---------------------------------------------------------------------- NDRange


def _largest_divisor(n: int, limit: int) -> int:
    """The largest divisor of ``n`` not above ``limit``, preferring multiples of 16, then 8."""
    best = {16: 0, 8: 0, 1: 1}
    for d in range(1, min(n, limit) + 1):
        if n % d == 0:
            for multiple in (16, 8, 1):
                if d % multiple == 0:
                    best[multiple] = d
    return best[16] or best[8] or best[1]


@functools.lru_cache(maxsize=1024)
def choose_local_size(global_size: LocalSize, dims: int, max_group: int,
                      max_items: tuple[int, int, int], threads: int) -> LocalSize:
    """A local size for ``local_size=None``: divisors of the global size, dimension 0 first,
    up to ``PREFERRED_GROUP_ITEMS`` items, leaving at least one group per thread when the
    NDRange is large enough (pocl chooses the same way)."""
    total = global_size[0] * global_size[1] * global_size[2]
    budget = min(max_group, PREFERRED_GROUP_ITEMS, max(1, total // max(1, threads)))
    local = [1, 1, 1]
    for d in range(dims):
        limit = min(budget, max_items[d])
        local[d] = _largest_divisor(global_size[d], limit) if limit > 1 else 1
        budget //= local[d]
    return local[0], local[1], local[2]


def _triple(values: Sequence[int], fill: int) -> LocalSize:
    padded = [int(v) for v in values] + [fill] * (3 - len(values))
    return padded[0], padded[1], padded[2]


def _as_tuple(values: Any) -> tuple[int, ...]:
    if isinstance(values, int | np.integer):
        return (int(values),)
    return tuple(int(v) for v in values)


class _Plan:
    """What a launch shape resolves to: sizes, the compiled kernel and the launch descriptor
    (read-only for the C code, so one descriptor serves every launch of the shape)."""

    __slots__ = ("local3", "compiled", "launch", "launch_ref", "num_groups", "run_groups")

    def __init__(self, queue: CommandQueue, compiled: cpu.CompiledKernel, dims: int,
                 global3: LocalSize, local3: LocalSize, offset3: LocalSize) -> None:
        self.local3 = local3
        self.compiled = compiled
        launch = cpu.LaunchDescriptor()
        launch.work_dim = dims
        for d in range(3):
            launch.global_size[d] = global3[d]
            launch.global_offset[d] = offset3[d]
            launch.local_size[d] = local3[d]
            launch.num_groups[d] = global3[d] // local3[d]
        self.launch = launch
        self.launch_ref = ctypes.byref(launch)
        self.num_groups = launch.num_groups[0] * launch.num_groups[1] * launch.num_groups[2]
        self.run_groups = queue.device.backend.run_groups


def _make_plan(queue: CommandQueue, kernel: Kernel, global_work_size: Any,
               local_work_size: Any, global_work_offset: Any, g_times_l: bool) -> _Plan:
    """Check a launch shape and resolve it."""
    global_tuple = _as_tuple(global_work_size)
    dims = len(global_tuple)
    if not 1 <= dims <= 3:
        raise make_error(_ENQUEUE, "INVALID_WORK_DIMENSION",
                         f"work dimension {dims}: the global size needs 1 to 3 entries")
    local_tuple = _as_tuple(local_work_size) if local_work_size is not None else None
    if local_tuple is not None and len(local_tuple) != dims:
        raise make_error(_ENQUEUE, "INVALID_WORK_DIMENSION" if len(local_tuple) > 3
                         else "INVALID_WORK_GROUP_SIZE",
                         f"local size {local_tuple} and global size {global_tuple} differ in rank")
    if g_times_l and local_tuple is not None:
        global_tuple = tuple(g * size for g, size in zip(global_tuple, local_tuple))
    global3 = _triple(global_tuple, 1)
    offset3 = (0, 0, 0)
    if global_work_offset is not None:
        offset_tuple = _as_tuple(global_work_offset)
        if len(offset_tuple) != dims:
            raise make_error(_ENQUEUE, "INVALID_GLOBAL_OFFSET",
                             f"global offset {global_work_offset} does not have {dims} entries")
        offset3 = _triple(offset_tuple, 0)
    if min(global3) <= 0:
        raise make_error(_ENQUEUE, "INVALID_GLOBAL_WORK_SIZE",
                         f"global size {global_tuple} has an entry that is not above 0")

    device = queue.device
    max_group = device.max_work_group_size
    max_items = tuple(device.max_work_item_sizes)
    reqd = kernel.reqd_work_group_size
    if local_tuple is None:
        if reqd is not None:
            local3 = _triple(reqd, 1)
        else:
            local3 = choose_local_size(global3, dims, max_group,
                                       (max_items[0], max_items[1], max_items[2]),
                                       device.backend.threads)
    else:
        local3 = _triple(local_tuple, 1)
        _check_local_size(kernel, global3, local3, max_group, max_items, reqd)
    if reqd is not None and local3 != _triple(reqd, 1):
        raise make_error(_ENQUEUE, "INVALID_WORK_GROUP_SIZE",
                         f"kernel '{kernel.function_name}' requires the work-group size "
                         f"{tuple(reqd)} (reqd_work_group_size), launched with {local3}")
    if any(g % size for g, size in zip(global3, local3)):
        raise make_error(_ENQUEUE, "INVALID_WORK_GROUP_SIZE",
                         f"the local size {local3} does not divide the global size {global3}")
    compiled = kernel.program._compiled_kernel(kernel.function_name, local3,
                                                offset3 == (0, 0, 0),
                                                cpu.ids_fit_in_int(global3, offset3))
    return _Plan(queue, compiled, dims, global3, local3, offset3)


def _pack_arguments(kernel: Kernel, plan: _Plan) -> tuple[Any, int, tuple[Any, ...]]:
    """The ``void **`` array of the current arguments, the local-memory block size and the
    objects the array refers to; reused while the arguments stay the same."""
    key = (kernel._args_version, plan.compiled.local_mem_static_bytes)
    packed = kernel._packed
    if packed is not None and packed[0] == key:
        return packed[1], packed[2], packed[3]
    missing = [i for i, a in enumerate(kernel._args) if a is None]
    if missing:
        raise make_error(_ENQUEUE, "INVALID_KERNEL_ARGS",
                         f"kernel '{kernel.function_name}': arguments {missing} are not set "
                         f"({kernel.num_args} expected)")
    local_bytes = plan.compiled.local_mem_static_bytes
    holders: list[Any] = list(kernel._args)
    addresses: list[int] = []
    for arg in kernel._args:
        assert arg is not None
        if arg.kind == "local":
            local_bytes = (local_bytes + LOCAL_ALIGN - 1) // LOCAL_ALIGN * LOCAL_ALIGN
            holder = ctypes.c_size_t(local_bytes)
            holders.append(holder)
            addresses.append(ctypes.addressof(holder))
            local_bytes += arg.local_size
        else:
            addresses.append(arg.address)
    argv = (ctypes.c_void_p * max(1, len(addresses)))(*addresses)
    kept = tuple(holders)
    kernel._packed = (key, argv, local_bytes, kept)
    return argv, local_bytes, kept


def enqueue_nd_range_kernel(queue: CommandQueue, kernel: Kernel, global_work_size: Sequence[int],
                            local_work_size: Sequence[int] | None,
                            global_work_offset: Sequence[int] | None = None,
                            wait_for: Sequence[Event] | None = None, *, g_times_l: bool = False,
                            allow_empty_ndrange: bool = False) -> Event:
    """Launch ``kernel`` over the NDRange; the arguments are those set at this moment."""
    if kernel.context is not queue.context:
        raise make_error(_ENQUEUE, "INVALID_CONTEXT", "kernel and queue have different contexts")
    try:
        key: Any = (global_work_size, local_work_size, global_work_offset, g_times_l,
                    queue.device)
        plan = kernel._plans.get(key)
    except TypeError:  # lists are not hashable: no plan cache for them
        key, plan = None, None
    if plan is None:
        try:
            plan = _make_plan(queue, kernel, global_work_size, local_work_size,
                              global_work_offset, g_times_l)
        except Error as error:
            if allow_empty_ndrange and error.code == ERROR_CODES["INVALID_GLOBAL_WORK_SIZE"] \
                    and 0 in _as_tuple(global_work_size):
                return queue._enqueue(command_type.MARKER, lambda: None, wait_for,
                                      routine=_ENQUEUE)
            raise
        if key is not None:
            kernel._plans[key] = plan
    argv, local_bytes, kept = _pack_arguments(kernel, plan)
    if local_bytes > queue.device.local_mem_size:
        raise make_error(_ENQUEUE, "OUT_OF_RESOURCES",
                         f"kernel '{kernel.function_name}' needs {local_bytes} bytes of local "
                         f"memory; the device has {queue.device.local_mem_size}")
    entry = plan.compiled.entry
    launch_ref = plan.launch_ref
    run_groups = plan.run_groups
    num_groups = plan.num_groups

    def run_chunk(first: int, last: int, local_address: int) -> None:
        entry(argv, launch_ref, first, last, local_address)

    def action(_arguments: tuple[Any, ...] = kept) -> None:
        # _arguments keeps the argument objects alive until the command has run
        run_groups(run_chunk, num_groups, local_bytes)

    return queue._enqueue(command_type.NDRANGE_KERNEL, action, wait_for, routine=_ENQUEUE)


def _check_local_size(kernel: Kernel, global3: LocalSize, local3: LocalSize, max_group: int,
                      max_items: tuple[int, ...], reqd: tuple[int, int, int] | None) -> None:
    if min(local3) <= 0:
        raise make_error(_ENQUEUE, "INVALID_WORK_GROUP_SIZE",
                         f"local size {local3} has an entry that is not above 0")
    items = local3[0] * local3[1] * local3[2]
    if items > max_group:
        raise make_error(_ENQUEUE, "INVALID_WORK_GROUP_SIZE",
                         f"local size {local3} has {items} work-items; the device allows "
                         f"{max_group} (max_work_group_size)")
    for d in range(3):
        if local3[d] > max_items[d]:
            raise make_error(_ENQUEUE, "INVALID_WORK_ITEM_SIZE",
                             f"local size {local3[d]} in dimension {d} exceeds "
                             f"max_work_item_sizes[{d}] = {max_items[d]}")
