"""Kernels: arguments, work-group info and NDRange launches on a device.

Arguments are checked against the kernel's parameter types when set: buffers (or ``None``) for
``__global``/``__constant`` pointers, ``LocalMemory`` for ``__local`` pointers, and sized values
(numpy scalars, vector dtypes from ``ppcl.cltypes``, structured scalars) of the parameter's size
for everything else. A launch snapshots the arguments, so setting them again right after an
enqueue does not change the enqueued command. Checked values become the device interface's
argument values (``BufferArg``, ``LocalArg``, ``ValueArg``); a launch checks its NDRange and
hands the device's ``KernelLaunch`` to the queue.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ppcl.compiler.frontend import ParamInfo
from ppcl.devices.interface import (
    ArgValue,
    BufferArg,
    KernelCheckFailed,
    KernelFault,
    KernelLaunch,
    LocalArg,
    NDRange,
    ValueArg,
    pad3,
)
from ppcl.runtime.constants import (
    command_type,
    info_attributes,
    kernel_arg_access_qualifier,
    kernel_arg_address_qualifier,
    kernel_arg_info,
    kernel_arg_type_qualifier,
    kernel_info,
    kernel_work_group_info,
)
from ppcl.runtime.errors import ERROR_CODES, Error, KernelCheckError, is_integer, make_error
from ppcl.runtime.event import Event
from ppcl.runtime.handles import Handle
from ppcl.runtime.image import KERNEL_IMAGE_TYPES, Image, Sampler
from ppcl.runtime.memory import RELEASES, LocalMemory, MemoryObject
from ppcl.runtime.queue import CommandQueue, KernelTask, enqueue_no_work

if TYPE_CHECKING:
    from ppcl.runtime.platform import Device
    from ppcl.runtime.program import Program

LocalSize = tuple[int, int, int]
_SET_ARG = "clSetKernelArg"
_ENQUEUE = "clEnqueueNDRangeKernel"
_LAUNCH = command_type.NDRANGE_KERNEL


_ADDRESS_QUALIFIERS = {
    "global": kernel_arg_address_qualifier.GLOBAL,
    "local": kernel_arg_address_qualifier.LOCAL,
    "constant": kernel_arg_address_qualifier.CONSTANT,
    "private": kernel_arg_address_qualifier.PRIVATE,
}


def _converted(value: Any, dtype: np.dtype, described: str) -> Any:
    """``value`` (a Python number, or a tuple for a struct or vector dtype) as ``dtype``,
    the dtype ``set_scalar_arg_dtypes`` gave: a fraction for an integer and a number out of
    its range are refused rather than truncated or wrapped."""
    try:
        if dtype.kind in "iu" and isinstance(value, float) and not value.is_integer():
            raise ValueError(f"{value} is not an integer")
        converted = np.array(value, dtype) if isinstance(value, tuple | list) \
            else dtype.type(value)
    except (OverflowError, ValueError, TypeError) as error:
        raise make_error(_SET_ARG, "INVALID_ARG_VALUE",
                         f"{described} cannot take {value!r} as {dtype}: {error}") from None
    return converted

def _kind_matches(param: ParamInfo, dtype: np.dtype) -> bool:
    """Whether a numpy scalar kind can stand for ``param`` (signedness may differ)."""
    if param.element is None or dtype.kind in "V":
        return True
    if param.element == "float":
        return dtype.kind == "f"
    return dtype.kind in "iub"


_SCALARS = (np.number, np.bool_, type(None))  # values that cannot change in place
_REF = weakref.ref


def _call_record(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What a call keeps of its arguments to know them again: memory objects by weak
    reference, so that the record keeps none alive, and scalars; None when some argument is
    an object whose packed value can change in place."""
    record = []
    for a in args:
        entry = _record_entry(a)
        if entry is _UNRECORDED:
            return None
        record.append(entry)
    return tuple(record)


_UNRECORDED: Any = object()


def _record_entry(a: Any) -> Any:
    """What a call record keeps of one argument (``_call_record``): a memory object's weak
    reference, a scalar itself, or ``_UNRECORDED``."""
    if isinstance(a, MemoryObject):
        return _REF(a)
    if isinstance(a, _SCALARS):
        return a
    return _UNRECORDED


@info_attributes(kernel_info, own=("context", "function_name", "program"))
class Kernel(Handle):
    """``Kernel(program, name)``, or ``program.name``: one kernel with its argument values."""

    def __init__(self, program: Program, name: str) -> None:
        if not hasattr(program, "_kernel_signature"):
            raise make_error("clCreateKernel", "INVALID_PROGRAM", f"{program!r} is not a Program")
        self.program = program
        self.function_name = name
        self.context = program.context
        self._signature = program._kernel_signature(name)
        self._params: tuple[ParamInfo, ...] = self._signature.params
        self._args: list[ArgValue | None] = [None] * len(self._params)
        self._arg_values: tuple[ArgValue, ...] | None = None  # all set: what launches pass
        # weak references to the memory objects among them: a kernel keeps no argument alive
        # (as OpenCL's clSetKernelArg), a launch keeps its own until it completes
        self._arg_buffers: tuple[weakref.ref[MemoryObject], ...] = ()
        # (queue, arguments, RELEASES, global size, local size, launch) of the last launch
        # run the direct way: the same launch again skips its checks (enqueue_nd_range_kernel)
        self._steady: tuple[Any, ...] | None = None
        self._scalar_dtypes: list[np.dtype | None] | None = None
        # per argument, the numpy scalar type whose values ``_pack`` last accepted: a value of
        # that type packs to its own bytes without the checks again
        self._value_types: list[type | None] = [None] * len(self._params)
        self._launches = program._launches_of(name)
        # the launch and argument tuple whose local memory was last found to fit the device
        self._local_checked: tuple[KernelLaunch | None, tuple[ArgValue, ...] | None] = \
            (None, None)
        # without __local arguments the local memory a launch needs depends on the launch alone
        self._local_args = any(param.kind == "local" for param in self._params)
        # the arguments of the last call, memory objects as weak references (_same_call_args)
        self._last_call_args: tuple[Any, ...] | None = None
        # host fusion's note of the launches it leaves as written (``ppcl.hostfusion``): one
        # with the note's ``hook``, ``launch`` and ``args`` goes to the device without a call
        self._hostfusion_passes: Any = None

    @property
    def num_args(self) -> int:
        return len(self._params)

    @property
    def reqd_work_group_size(self) -> tuple[int, int, int] | None:
        return self._signature.reqd_work_group_size

    # ------------------------------------------------------------------ arguments

    def set_scalar_arg_dtypes(self, arg_types: Sequence[Any]) -> None:
        """As PyOpenCL: let plain Python numbers through for the listed (non-None) dtypes."""
        dtypes = arg_types
        if len(dtypes) != self.num_args:
            raise make_error("set_scalar_arg_dtypes", "INVALID_KERNEL_ARGS",
                             f"{len(dtypes)} dtypes for {self.num_args} arguments")
        self._scalar_dtypes = [None if d is None else np.dtype(d) for d in dtypes]

    def _describe(self, index: int) -> str:
        param = self._params[index]
        return f"argument {index} ('{param.name}' of type '{param.type_name}') of kernel " \
               f"'{self.function_name}'"

    def set_arg(self, index: int, value: Any) -> None:
        if not is_integer(index) or not 0 <= index < self.num_args:
            raise make_error(_SET_ARG, "INVALID_ARG_INDEX",
                             f"kernel '{self.function_name}' has {self.num_args} arguments, "
                             f"not an argument {index}")
        old = self._args[index]
        new = self._repack(index, value, old)
        if new is not old:
            self._args[index] = new
            self._arg_values = None
        self._last_call_args = None

    def set_args(self, *args: Any) -> None:
        if len(args) != self.num_args:
            raise make_error(_SET_ARG, "INVALID_KERNEL_ARGS",
                             f"kernel '{self.function_name}' takes {self.num_args} arguments, "
                             f"{len(args)} given")
        old = packed = self._args
        for index, value in enumerate(args):
            prev = old[index]
            new = self._repack(index, value, prev)
            if new is not prev:
                if packed is old:  # the arguments set stay as they are if a later one fails
                    packed = list(old)
                packed[index] = new
        if packed is not old:
            self._args = packed
            self._arg_values = None  # unchanged values keep the tuple the device keyed on
        self._last_call_args = None  # a call passing the last call's objects sets them again

    def _repack(self, index: int, value: Any, old: ArgValue | None) -> ArgValue:
        """``_pack(index, value)``, but the argument already set when ``value`` packs to the
        same: the same live buffer, a numpy scalar of an accepted type with the same bytes, or
        local memory of the same size."""
        if type(value) is self._value_types[index]:
            data: bytes = value.tobytes()  # type: ignore[attr-defined]  # a numpy scalar
            if len(data) == self._params[index].size:
                if isinstance(old, ValueArg) and old.data == data:
                    return old
                return ValueArg(data)
        elif isinstance(old, BufferArg) and old.ref is not None and old.ref() is value \
                and not value.released:
            return old
        elif isinstance(old, LocalArg) and isinstance(value, LocalMemory) \
                and old.nbytes == value.size:
            return old
        return self._pack(index, value)

    def _pack(self, index: int, value: Any) -> ArgValue:
        param = self._params[index]
        if param.kind == "local":
            if not isinstance(value, LocalMemory):
                raise make_error(_SET_ARG, "INVALID_ARG_VALUE",
                                 f"{self._describe(index)} is a __local pointer: pass "
                                 f"LocalMemory(nbytes), not {type(value).__name__}")
            return LocalArg(value.size)
        if param.kind == "buffer":
            if value is None:
                return BufferArg(0)
            if not isinstance(value, MemoryObject) or isinstance(value, Image):
                raise make_error(_SET_ARG, "INVALID_MEM_OBJECT",
                                 f"{self._describe(index)} is a pointer: pass a Buffer (or None),"
                                 f" not {type(value).__name__}")
            value.check_live(_SET_ARG)
            if value.context is not self.context:
                raise make_error(_SET_ARG, "INVALID_MEM_OBJECT",
                                 f"{self._describe(index)}: the buffer belongs to another context")
            return BufferArg(value.address, value)
        if param.kind == "image":
            return self._image_arg(index, param, value)
        if param.kind == "sampler":
            if not isinstance(value, Sampler):
                raise make_error(_SET_ARG, "INVALID_SAMPLER",
                                 f"{self._describe(index)} is a sampler: pass a Sampler, not "
                                 f"{type(value).__name__}")
            return ValueArg(np.uint64(value.bits).tobytes())
        return ValueArg(self._value_bytes(index, param, value))

    def _image_arg(self, index: int, param: ParamInfo, value: Any) -> BufferArg:
        if not isinstance(value, Image):
            raise make_error(_SET_ARG, "INVALID_MEM_OBJECT",
                             f"{self._describe(index)} is an image: pass an Image, not "
                             f"{type(value).__name__}")
        value.check_live(_SET_ARG)
        if value.context is not self.context:
            raise make_error(_SET_ARG, "INVALID_MEM_OBJECT",
                             f"{self._describe(index)}: the image belongs to another context")
        if KERNEL_IMAGE_TYPES[param.type_name] != value.image_type:
            raise make_error(_SET_ARG, "INVALID_ARG_VALUE",
                             f"{self._describe(index)} got {value!r}")
        return BufferArg(value.descriptor_address, value)

    def _value_bytes(self, index: int, param: ParamInfo, value: Any) -> bytes:
        size = param.size
        dtype = self._scalar_dtypes[index] if self._scalar_dtypes else None
        if dtype is not None and isinstance(value, tuple | list):  # a struct or vector
            value = _converted(value, dtype, self._describe(index))
        if isinstance(value, bool | int | float) and not isinstance(value, np.generic):
            if dtype is None:
                example = "np.float32(1.5)" if param.element == "float" else "np.int32(5)"
                raise make_error(_SET_ARG, "INVALID_ARG_VALUE",
                                 f"{self._describe(index)} got a Python {type(value).__name__}, "
                                 f"which has no size: use numpy scalars (e.g. {example}) or "
                                 "set_scalar_arg_dtypes")
            value = _converted(value, dtype, self._describe(index))
        if isinstance(value, MemoryObject | LocalMemory) or value is None:
            raise make_error(_SET_ARG, "INVALID_ARG_VALUE",
                             f"{self._describe(index)} is passed by value: pass a numpy scalar, "
                             f"not {type(value).__name__}")
        if isinstance(value, bytes | bytearray | memoryview):
            data = bytes(value)
        else:
            array = np.asarray(value)
            if param.arithmetic and array.dtype.kind in "OUS":
                raise make_error(_SET_ARG, "INVALID_ARG_VALUE",
                                 f"{self._describe(index)} cannot take {type(value).__name__}")
            if not _kind_matches(param, array.dtype):
                raise make_error(_SET_ARG, "INVALID_ARG_VALUE",
                                 f"{self._describe(index)} got a value of dtype {array.dtype}")
            data = array.tobytes()
        if len(data) != size:
            raise make_error(_SET_ARG, "INVALID_ARG_SIZE",
                             f"{self._describe(index)} takes {size} bytes, got {len(data)} bytes")
        if isinstance(value, np.generic):
            self._value_types[index] = type(value)
        return data

    # ------------------------------------------------------------------ launching

    def capture_call(self, output_file: Any, queue: CommandQueue, global_size: Sequence[int],
                     local_size: Sequence[int] | None, *args: Any, **kwargs: Any) -> None:
        """Write this call, made as ``__call__`` takes it, to ``output_file`` (a path or a
        text file) as a Python program repeating it, without running it (as PyOpenCL's)."""
        from ppcl.runtime.capture import capture_call  # transfers sit above kernels
        capture_call(self, output_file, queue, global_size, local_size, *args, **kwargs)

    def __call__(self, queue: CommandQueue, global_size: Sequence[int],
                 local_size: Sequence[int] | None, *args: Any,
                 global_offset: Sequence[int] | None = None,
                 wait_for: Sequence[Event] | None = None, g_times_l: bool = False,
                 allow_empty_ndrange: bool = False) -> Event:
        if args:
            last = self._last_call_args
            if last is None or len(last) != len(args):
                self._set_call_args(args)
            else:
                # each argument the very object passed last time (``_call_record``): the
                # arguments set stay as they are. The loop is here rather than in a function
                # of its own, and indexes ``args`` rather than zip both: the call, or the zip
                # object, would cost twice the loop over one argument
                i = 0
                for b in last:
                    a = args[i]
                    if a is not b and (type(b) is not _REF or b() is not a):
                        self._set_changed_call_args(args, last, i)
                        break
                    i += 1
        elif self.num_args:
            self.set_args()  # raises: the call passed no arguments
        return enqueue_nd_range_kernel(queue, self, global_size, local_size, global_offset,
                                       wait_for, g_times_l, allow_empty_ndrange)

    def _set_call_args(self, args: tuple[Any, ...]) -> None:
        self.set_args(*args)
        self._last_call_args = _call_record(args)

    def _set_changed_call_args(self, args: tuple[Any, ...], last: tuple[Any, ...],
                               first: int) -> None:
        """``_set_call_args`` for a call whose arguments before ``first`` are the objects of
        the last call (``last``, its record): only those that are not are packed again. A
        host loop passing a new scalar at every launch (a column index) packs that one alone,
        and while no buffer changes the buffers' references stay as they are."""
        old = self._args
        packed = list(old)
        record: list[Any] | None = list(last)
        changed = buffers_changed = False
        for index in range(first, len(args)):
            a, b = args[index], last[index]
            if a is b or (type(b) is _REF and b() is a):
                continue
            prev = old[index]
            new = self._repack(index, a, prev)  # raises before anything is set
            if new is not prev:
                packed[index] = new
                changed = True
                buffers_changed = buffers_changed or isinstance(prev, BufferArg) \
                    or isinstance(new, BufferArg)
            if record is None:
                continue
            entry = _record_entry(a)
            if entry is _UNRECORDED:
                record = None  # its packed value can change in place: no record
            else:
                record[index] = entry
        if changed:
            self._args = packed
            if buffers_changed or self._arg_values is None:
                self._arg_values = None
            else:  # the same buffers: their references (``_arg_buffers``) stay
                self._arg_values = cast("tuple[ArgValue, ...]", tuple(packed))
        self._last_call_args = None if record is None else tuple(record)

    # ------------------------------------------------------------------ info

    def get_info(self, param: int) -> Any:
        values: dict[int, Any] = {
            kernel_info.FUNCTION_NAME: self.function_name,
            kernel_info.NUM_ARGS: self.num_args,
            kernel_info.REFERENCE_COUNT: 1,
            kernel_info.CONTEXT: self.context,
            kernel_info.PROGRAM: self.program,
            kernel_info.ATTRIBUTES: self._signature.attributes,
        }
        if param not in values:
            raise make_error("clGetKernelInfo", "INVALID_VALUE", f"unknown kernel_info {param}")
        return values[param]

    def get_work_group_info(self, param: int, device: Device) -> Any:
        if device not in self.program.devices:
            raise make_error("clGetKernelWorkGroupInfo", "INVALID_DEVICE",
                             f"{device!r} is not a device of the kernel's program")
        reqd = self.reqd_work_group_size
        local_args = sum(a.nbytes for a in self._args if isinstance(a, LocalArg))
        values: dict[int, Any] = {
            kernel_work_group_info.WORK_GROUP_SIZE:
                reqd[0] * reqd[1] * reqd[2] if reqd else device.max_work_group_size,
            kernel_work_group_info.COMPILE_WORK_GROUP_SIZE: list(reqd or (0, 0, 0)),
            kernel_work_group_info.LOCAL_MEM_SIZE: self._signature.static_local_bytes + local_args,
            kernel_work_group_info.PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
                device.preferred_vector_width_float,
            kernel_work_group_info.PRIVATE_MEM_SIZE: self._signature.private_bytes,
        }
        if param not in values:
            raise make_error("clGetKernelWorkGroupInfo", "INVALID_VALUE",
                             f"unknown kernel_work_group_info {param}")
        return values[param]

    def get_arg_info(self, index: int, param: int) -> Any:
        """What OpenCL says of argument ``index``: the address and access qualifiers and the
        type qualifiers always; its name and type name only when the program was built with
        ``-cl-kernel-arg-info`` (else ``CL_KERNEL_ARG_INFO_NOT_AVAILABLE``, as OpenCL 1.2
        allows and pocl answers)."""
        if not 0 <= index < self.num_args:
            raise make_error("clGetKernelArgInfo", "INVALID_ARG_INDEX", f"no argument {index}")
        if param in (kernel_arg_info.NAME, kernel_arg_info.TYPE_NAME) \
                and not self.program._build_options.kernel_arg_info:
            raise make_error("clGetKernelArgInfo", "KERNEL_ARG_INFO_NOT_AVAILABLE",
                             f"the {'name' if param == kernel_arg_info.NAME else 'type name'} "
                             f"of argument {index} of kernel '{self.function_name}': argument "
                             "names and types are kept only when the program is built with "
                             "-cl-kernel-arg-info")
        p = self._params[index]
        quals = kernel_arg_type_qualifier.NONE
        # a __constant pointee is const, as OpenCL reports it
        quals |= kernel_arg_type_qualifier.CONST \
            if p.const or p.address_space == "constant" else 0
        quals |= kernel_arg_type_qualifier.VOLATILE if p.volatile else 0
        quals |= kernel_arg_type_qualifier.RESTRICT if p.restrict else 0
        values: dict[int, Any] = {
            kernel_arg_info.ADDRESS_QUALIFIER: _ADDRESS_QUALIFIERS[p.address_space],
            kernel_arg_info.ACCESS_QUALIFIER: getattr(kernel_arg_access_qualifier,
                                                      p.access.upper()),
            kernel_arg_info.TYPE_NAME: p.type_name,
            kernel_arg_info.TYPE_QUALIFIER: quals,
            kernel_arg_info.NAME: p.name,
        }
        if param not in values:
            raise make_error("clGetKernelArgInfo", "INVALID_VALUE", f"unknown kernel_arg_info {param}")
        return values[param]


    def clone(self) -> Kernel:
        """A new kernel of the same function with the arguments set on this one, as
        ``clCloneKernel``; setting arguments on either leaves the other as it is."""
        twin = Kernel(self.program, self.function_name)
        twin._args = list(self._args)
        twin._scalar_dtypes = self._scalar_dtypes
        twin._value_types = list(self._value_types)
        return twin


    def __repr__(self) -> str:
        return f"<ppcl.Kernel '{self.function_name}' at 0x{id(self):x}>"


# ---------------------------------------------------------------------- NDRange


def _as_tuple(values: Any, what: str) -> tuple[int, ...]:
    """The entries of a size or offset argument (one integer or a sequence of them) as ints;
    anything that is not an integer raises ``CL_INVALID_VALUE`` naming the entry."""
    if is_integer(values):
        return (int(values),)
    try:
        entries = tuple(values)
    except TypeError:
        raise make_error(_ENQUEUE, "INVALID_VALUE",
                         f"the {what} {values!r} is neither an integer nor a sequence of "
                         "integers") from None
    for index, entry in enumerate(entries):
        if not is_integer(entry):
            raise make_error(_ENQUEUE, "INVALID_VALUE",
                             f"entry {index} of the {what} is {entry!r} "
                             f"({type(entry).__name__}), not an integer: {values!r}")
    return tuple(int(entry) for entry in entries)


def _check_global_range(global_tuple: tuple[int, ...], offset_tuple: tuple[int, ...],
                        address_bits: int) -> None:
    """Sizes and offsets within what the device's ``size_t`` holds (the specification's
    CL_INVALID_GLOBAL_WORK_SIZE and CL_INVALID_GLOBAL_OFFSET), so no work-item id wraps."""
    limit = 1 << address_bits
    for index, size in enumerate(global_tuple):
        if size == 0:  # OpenCL 1.2 refuses it; 2.1 made it a no-op, PyOpenCL's option does
            raise make_error(_ENQUEUE, "INVALID_GLOBAL_WORK_SIZE",
                             f"global size {global_tuple}: entry {index} is 0, and an OpenCL 1.2 "
                             "device launches no empty NDRange; skip the launch or pass "
                             "allow_empty_ndrange=True to get an event for no work")
        if size < 0:
            raise make_error(_ENQUEUE, "INVALID_GLOBAL_WORK_SIZE",
                             f"global size {global_tuple}: entry {index} is {size}, "
                             "not above 0")
        if size >= limit:
            raise make_error(_ENQUEUE, "INVALID_GLOBAL_WORK_SIZE",
                             f"global size {global_tuple}: entry {index} is {size}, which "
                             f"does not fit the device's {address_bits}-bit size_t")
    for index, (size, offset) in enumerate(zip(global_tuple, offset_tuple)):
        if offset < 0:
            raise make_error(_ENQUEUE, "INVALID_GLOBAL_OFFSET",
                             f"global offset {offset_tuple}: entry {index} is {offset}, "
                             "which is negative")
        if size + offset > limit - 1:
            raise make_error(_ENQUEUE, "INVALID_GLOBAL_OFFSET",
                             f"global offset {offset_tuple}: entry {index} ({offset}) plus "
                             f"the global size {size} exceeds the device's {address_bits}-bit "
                             "size_t")


def _ndrange(queue: CommandQueue, kernel: Kernel, global_work_size: Any,
             local_work_size: Any, global_work_offset: Any, g_times_l: bool) -> NDRange:
    """Check a launch shape and resolve it (the device picks a local size left to it)."""
    global_tuple = _as_tuple(global_work_size, "global size")
    dims = len(global_tuple)
    if not 1 <= dims <= 3:
        raise make_error(_ENQUEUE, "INVALID_WORK_DIMENSION",
                         f"work dimension {dims}: the global size needs 1 to 3 entries")
    local_tuple = _as_tuple(local_work_size, "local size") \
        if local_work_size is not None else None
    if local_tuple is not None and len(local_tuple) != dims:
        raise make_error(_ENQUEUE, "INVALID_WORK_DIMENSION" if len(local_tuple) > 3
                         else "INVALID_WORK_GROUP_SIZE",
                         f"local size {local_tuple} and global size {global_tuple} differ in rank")
    if g_times_l and local_tuple is not None:
        global_tuple = tuple(g * size for g, size in zip(global_tuple, local_tuple))
    offset_tuple = (0,) * dims
    if global_work_offset is not None:
        offset_tuple = _as_tuple(global_work_offset, "global offset")
        if len(offset_tuple) != dims:
            raise make_error(_ENQUEUE, "INVALID_GLOBAL_OFFSET",
                             f"global offset {global_work_offset} does not have {dims} entries")
    device = queue.device
    _check_global_range(global_tuple, offset_tuple, device.address_bits)
    global3 = pad3(global_tuple, 1)
    offset3 = pad3(offset_tuple, 0)

    max_group = device.max_work_group_size
    max_items = tuple(device.max_work_item_sizes)
    reqd = kernel.reqd_work_group_size
    if local_tuple is None:
        if reqd is not None:
            local3 = pad3(reqd, 1)
        else:
            local3 = device.backend.default_local_size(global3, dims)
    else:
        local3 = pad3(local_tuple, 1)
        _check_local_size(kernel, global3, local3, max_group, max_items, reqd)
    if reqd is not None and local3 != pad3(reqd, 1):
        raise make_error(_ENQUEUE, "INVALID_WORK_GROUP_SIZE",
                         f"kernel '{kernel.function_name}' requires the work-group size "
                         f"{tuple(reqd)} (reqd_work_group_size), launched with {local3}")
    if any(g % size for g, size in zip(global3, local3)):
        if reqd is not None:
            # OpenCL 1.2 has no non-uniform work-groups: the last group cannot be smaller
            raise make_error(_ENQUEUE, "INVALID_WORK_GROUP_SIZE",
                             f"kernel '{kernel.function_name}' requires the work-group size "
                             f"{tuple(reqd)} (reqd_work_group_size), which does not divide "
                             f"the global size {global3}; the device has no non-uniform "
                             "work-groups")
        raise make_error(_ENQUEUE, "INVALID_WORK_GROUP_SIZE",
                         f"the local size {local3} does not divide the global size {global3}")
    return NDRange(dims, global3, local3, offset3)


def _arg_values(kernel: Kernel) -> tuple[ArgValue, ...]:
    """The current arguments as one tuple, kept while they stay the same (the device may keep
    what it derived from the tuple, such as packed arguments, for as long)."""
    values = kernel._arg_values
    if values is not None:
        return values
    if None in kernel._args:
        missing = [i for i, a in enumerate(kernel._args) if a is None]
        raise make_error(_ENQUEUE, "INVALID_KERNEL_ARGS",
                         f"kernel '{kernel.function_name}': arguments {missing} are not set "
                         f"({kernel.num_args} expected)")
    values = cast("tuple[ArgValue, ...]", tuple(kernel._args))  # none is None (checked above)
    kernel._arg_buffers = tuple([a.ref for a in values
                                 if isinstance(a, BufferArg) and a.ref is not None])
    kernel._arg_values = values
    return values


def enqueue_nd_range_kernel(queue: CommandQueue, kernel: Kernel, global_work_size: Sequence[int],
                            local_work_size: Sequence[int] | None,
                            global_work_offset: Sequence[int] | None = None,
                            wait_for: Sequence[Event] | None = None, g_times_l: bool = False,
                            allow_empty_ndrange: bool = False) -> Event:
    """Launch ``kernel`` over the NDRange; the arguments are those set at this moment.

    ``g_times_l`` and ``allow_empty_ndrange`` may be passed by position, as in PyOpenCL (and
    ``Kernel.__call__`` does: a call by keyword costs more)."""
    try:
        steady = kernel._steady
    except AttributeError:  # not a Kernel: the checks below say so
        steady = None
    if steady is not None and steady[0] is queue and wait_for is None \
            and steady[1] is kernel._arg_values and steady[2] == RELEASES[0] \
            and type(global_work_size) is tuple and steady[3] == global_work_size \
            and (local_work_size is None or type(local_work_size) is tuple) \
            and steady[4] == local_work_size \
            and global_work_offset is None and not g_times_l and queue._hostfusion is None:
        # the launch before was this one, run the direct way, and none of its memory objects
        # can have been released since (no object was): what is checked below holds again
        launch = steady[5]
        event = queue._run_direct(_LAUNCH, launch.run, steady[1], launch, _launch_failure)
        if event is not None:
            return event
    try:  # one test for a launch's hot path; _launch_objects_error tells which is wrong
        same_context = queue.context is kernel.context
    except AttributeError:
        same_context = False
    if not same_context:
        raise _launch_objects_error(queue, kernel)
    try:
        key: Any = (global_work_size, local_work_size, global_work_offset, g_times_l,
                    queue.device)
        launch = kernel._launches.get(key)
    except TypeError:  # lists are not hashable: no launch cache for them
        key, launch = None, None
    if launch is None:
        try:
            ndrange = _ndrange(queue, kernel, global_work_size, local_work_size,
                               global_work_offset, g_times_l)
        except Error as error:
            if allow_empty_ndrange and error.code == ERROR_CODES["INVALID_GLOBAL_WORK_SIZE"] \
                    and 0 in _as_tuple(global_work_size, "global size"):
                return enqueue_no_work(queue, wait_for, routine=_ENQUEUE)
            raise
        launch = kernel.program._prepare_launch(kernel.function_name, queue.device, ndrange)
        if key is not None:
            kernel._launches[key] = launch
    args = kernel._arg_values
    if args is None:
        args = _arg_values(kernel)
    releases = RELEASES[0]  # read before the objects are checked
    # the memory objects the launch keeps alive until it completes
    buffers: list[MemoryObject] = []
    for ref in kernel._arg_buffers:
        mem = ref()
        if mem is None or mem.released:
            raise _released_argument(kernel, ref)
        buffers.append(mem)
    checked_launch, checked_args = kernel._local_checked
    if launch is not checked_launch or (args is not checked_args and kernel._local_args):
        local_bytes = launch.local_bytes(args)
        if local_bytes > queue.device.local_mem_size:
            raise make_error(_ENQUEUE, "OUT_OF_RESOURCES",
                             f"kernel '{kernel.function_name}' needs {local_bytes} bytes of "
                             f"local memory; the device has {queue.device.local_mem_size}")
        kernel._local_checked = (launch, args)  # the same launch and arguments fit again
    run = launch.run
    hook = queue._hostfusion
    passes = kernel._hostfusion_passes
    # host fusion settled this very launch, as written or on the variant it chose
    # (``current``): it needs to see it no more than a launch on a queue without host fusion
    passed = hook is not None and passes is not None and passes.args is args \
        and passes.launch is launch and passes.hook is hook
    if wait_for is None and (hook is None or passed):
        chosen = passes.current if passed else None
        event = queue._run_direct(_LAUNCH, run if chosen is None else chosen.run, args,
                                  launch, _launch_failure, passed)
        if event is not None:
            if hook is None and key is not None and global_work_offset is None \
                    and not g_times_l and type(global_work_size) is tuple \
                    and (local_work_size is None or type(local_work_size) is tuple):
                # tuples only: a numpy array of sizes compares element by element
                kernel._steady = (queue, args, releases, global_work_size, local_work_size,
                                  launch)
            return event
    keeps_layout = False
    if hook is not None:  # host fusion may run a rewritten kernel instead
        rewritten = passes.current if passed else hook.launch(kernel, launch, args)
        if rewritten is not None:
            run, keeps_layout = rewritten.run, rewritten.keeps_layout
            buffers += rewritten.uses
        if wait_for is None and not keeps_layout and not passed:
            # host fusion has seen the launch: it runs the direct way as well
            event = queue._run_direct(_LAUNCH, run, args, launch, _launch_failure, True)
            if event is not None:
                return event

    def action() -> None:
        _run_launch(run, args, launch)  # args keeps the argument objects alive until it ran

    # the overlay's description of the launch, made only for a queue whose overlay looks at it
    task = (KernelTask(kernel, args, launch)
            if queue._overlay is not None and queue._overlay_passes <= 0 else None)
    return queue._enqueue(command_type.NDRANGE_KERNEL, action, wait_for, routine=_ENQUEUE,
                          uses=buffers, task=task, keeps_layout=keeps_layout)


def _launch_objects_error(queue: Any, kernel: Any) -> Error:
    """The error of a launch whose queue and kernel are not of one context: either is not
    what it should be, or they belong to different contexts."""
    if not hasattr(kernel, "context"):
        return make_error(_ENQUEUE, "INVALID_KERNEL", f"{kernel!r} is not a Kernel")
    if not isinstance(queue, CommandQueue):
        return make_error(_ENQUEUE, "INVALID_COMMAND_QUEUE",
                          f"{queue!r} is not a CommandQueue (the first argument of a kernel "
                          "call is the queue)")
    return make_error(_ENQUEUE, "INVALID_CONTEXT", "kernel and queue have different contexts")


def _released_argument(kernel: Kernel, ref: weakref.ref[MemoryObject]) -> Error:
    """CL_INVALID_MEM_OBJECT for a launch whose argument (``ref``) was released, or deleted,
    after it was set."""
    index = next(i for i, a in enumerate(kernel._args)
                 if isinstance(a, BufferArg) and a.ref is ref)
    mem = ref()
    if mem is None:
        what = ("was deleted after it was set (a kernel keeps no reference to its arguments: "
                "keep one while launches use it)")
    else:
        what = f"is {mem!r}, which was released after it was set"
    return make_error(_ENQUEUE, "INVALID_MEM_OBJECT", f"{kernel._describe(index)} {what}")


def _run_launch(run: Any, args: tuple[ArgValue, ...], launch: KernelLaunch) -> None:
    """Run a launch, its device's failures as the OpenCL errors a program sees."""
    try:
        run(args)
    except (KernelCheckFailed, KernelFault) as failure:
        raise _launch_error(failure, launch) from None


def _launch_failure(error: BaseException, launch: KernelLaunch) -> BaseException:
    """The error a launch's hot path reports for ``error`` (``CommandQueue._run_direct``):
    a device's failure to run ``launch`` as the OpenCL error, anything else as it is."""
    if isinstance(error, KernelCheckFailed | KernelFault):
        return _launch_error(error, launch)
    return error


def _launch_error(failure: KernelCheckFailed | KernelFault, launch: KernelLaunch) -> Error:
    """The OpenCL error a program sees for a device's failure to run ``launch``."""
    if isinstance(failure, KernelCheckFailed):
        return KernelCheckError(_ENQUEUE, f"{failure} (launch: {_launch_text(launch.ndrange)})",
                                failure.findings)
    return make_error(_ENQUEUE, "OUT_OF_RESOURCES",
                      f"{failure} (launch: {_launch_text(launch.ndrange)}); to find the "
                      "access, run the program with PPCL_DEVICES=check (the checking "
                      "device reports it with its source line)")


def _launch_text(ndrange: NDRange) -> str:
    """The shape of a launch as a user wrote it: only the dimensions it has."""
    dims = ndrange.work_dim
    text = (f"global size {ndrange.global_size[:dims]}, local size "
            f"{ndrange.local_size[:dims]}")
    if any(ndrange.global_offset):
        text += f", offset {ndrange.global_offset[:dims]}"
    return text


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
