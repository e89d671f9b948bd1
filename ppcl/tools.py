"""Helpers from ``pyopencl.tools``: test fixtures over ppcl's devices, allocators, memory pool.

``pytest_generate_tests_for_pyopencl`` parametrizes tests taking ``ctx_factory``, ``device`` or
``platform`` over the devices chosen by ``PPCL_TEST`` (or ``PYOPENCL_TEST``), e.g. ``0:0``.
``MemoryPool`` keeps released buffers in bins of rounded sizes and hands them out again.
``dtype_to_ctype``, ``get_or_register_dtype`` and ``match_dtype_to_c_struct`` map numpy dtypes
to OpenCL C names and struct layouts; ``VectorArg``/``ScalarArg``/``parse_arg_list`` describe
the arguments of generated kernels; ``COMPLEX_HEADER`` is the ``cfloat_t`` helper set of
PyOpenCL's complex header.
"""

from __future__ import annotations

import abc
import gc
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ppcl as cl
from ppcl import cltypes
from ppcl.compiler.frontend.headers import complex_header
from ppcl.runtime.memory import Buffer, MemoryObject
from ppcl.runtime.unsupported import unsupported
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

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = (args, frozenset(kwargs.items())) if kwargs else args
        if key not in cache:
            cache[key] = func(*args, **kwargs)
        return cache[key]

    wrapper.__name__ = getattr(func, "__name__", "memoized")
    wrapper.__doc__ = func.__doc__
    return wrapper


# PyOpenCL's other name for it: kernels built for a context are memoized on it
context_dependent_memoize = first_arg_dependent_memoize


def bitlog2(n: int) -> int:
    """The position of the highest set bit of ``n`` (0 for 0 and 1), as PyOpenCL's."""
    return max(int(n).bit_length() - 1, 0)


def clear_first_arg_caches() -> None:
    for cache in _first_arg_caches:
        cache.clear()


# ---------------------------------------------------------------------- allocators


class AllocatorBase:
    """Makes buffers of a given size: ``allocator(size) -> Buffer``."""

    def __init__(self, context: cl.Context, mem_flags: int = cl.mem_flags.READ_WRITE) -> None:
        self.context = context
        self.mem_flags = mem_flags

    def __call__(self, size: int) -> Buffer | None:
        """A new buffer of ``size`` bytes; None for 0, as PyOpenCL's allocators answer (an
        OpenCL buffer cannot be empty)."""
        if size == 0:
            return None
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

    def bin_number(self, size: int) -> int:
        """PyOpenCL's number of the bin serving ``size`` bytes: the bin size's leading bits
        and how far they are shifted, so that ``bin_number(alloc_size(n)) == n``. As in
        ``allocate``, 0 bytes take the bin of 1."""
        bits = self.leading_bits_in_bin_id + 1
        rounded = self.bin_size(max(1, size))
        shift = max(0, rounded.bit_length() - bits)
        return (shift << bits) | (rounded >> shift)

    def alloc_size(self, bin_number: int) -> int:
        """The bytes each buffer of bin ``bin_number`` holds (at least any size it serves)."""
        bits = self.leading_bits_in_bin_id + 1
        return (bin_number & ((1 << bits) - 1)) << (bin_number >> bits)

    def allocate(self, size: int) -> PooledBuffer:
        bin_size = self.bin_size(max(1, size))
        with self._lock:
            held = self._bins.get(bin_size)
            block = held.pop() if held else None
        if block is None:
            block = self.allocator(bin_size)
            if block is None:  # bin_size is at least 1: the allocator gave no memory
                raise cl.MemoryError("MemoryPool.allocate", -4,
                                     f"the allocator returned no buffer for {bin_size} bytes")
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


# ---------------------------------------------------------------------- dtypes and C names

_DTYPE_TO_CTYPE: dict[np.dtype, str] = {}
_CTYPE_TO_DTYPE: dict[str, np.dtype] = {}


def get_or_register_dtype(c_names: str | list[str], dtype: Any = None) -> np.dtype:
    """The dtype registered under ``c_names`` (one name or several); with ``dtype`` given,
    register it under them first (the first name is the one ``dtype_to_ctype`` prints)."""
    names = [c_names] if isinstance(c_names, str) else list(c_names)
    if dtype is None:
        for name in names:
            if name in _CTYPE_TO_DTYPE:
                return _CTYPE_TO_DTYPE[name]
        raise TypeError(f"no dtype registered under {names}")
    dtype = np.dtype(dtype)
    known = _DTYPE_TO_CTYPE.get(dtype)
    if known is not None and known not in names and dtype.kind != "V":
        raise RuntimeError(f"dtype {dtype} is already registered as '{known}'")
    for name in names:  # as PyOpenCL: a name keeps the one dtype it was registered with
        taken = _CTYPE_TO_DTYPE.get(name)
        if taken is not None and taken != dtype:
            raise RuntimeError(f"name '{name}' is already registered to a different dtype "
                               f"({taken}, not {dtype})")
    _DTYPE_TO_CTYPE.setdefault(dtype, names[0])
    for name in names:
        _CTYPE_TO_DTYPE.setdefault(name, dtype)
    return dtype


def _register_builtin_dtypes() -> None:
    pairs: list[tuple[str | list[str], Any]] = [("char", np.int8), (["unsigned char", "uchar"], np.uint8), ("short", np.int16),
             (["unsigned short", "ushort"], np.uint16), ("int", np.int32),
             (["unsigned int", "uint", "unsigned"], np.uint32), ("long", np.int64),
             (["unsigned long", "ulong"], np.uint64), ("float", np.float32),
             ("double", np.float64), ("half", np.float16), ("bool", np.bool_),
             ("cfloat_t", np.complex64), ("cdouble_t", np.complex128)]
    for names, dtype in pairs:
        get_or_register_dtype(names, dtype)
    for base_name, base in cltypes.SCALAR_TYPES.items():
        for count in cltypes.VECTOR_COUNTS:
            get_or_register_dtype(f"{base_name}{count}", cltypes.vec_types[np.dtype(base), count])


def dtype_to_ctype(dtype: Any) -> str:
    """The OpenCL C name of a dtype (``float32`` -> ``float``, ``complex64`` -> ``cfloat_t``)."""
    if dtype is None:
        raise ValueError("dtype may not be None")
    dtype = np.dtype(dtype)
    try:
        return _DTYPE_TO_CTYPE[dtype]
    except KeyError:
        raise ValueError(f"unable to map dtype '{dtype}': register it with "
                         "get_or_register_dtype") from None


def ctype_to_dtype(c_name: str) -> np.dtype:
    """The dtype of an OpenCL C type name (qualifiers and spacing ignored)."""
    words = [w for w in c_name.replace("*", " ").split()
             if w not in ("const", "volatile", "restrict", "__global", "global", "__constant",
                          "constant", "__local", "local", "__private", "private")]
    name = " ".join(words)
    if name.startswith("struct "):
        name = name[len("struct "):]
    try:
        return _CTYPE_TO_DTYPE[name]
    except KeyError:
        raise ValueError(f"unknown C type '{c_name}': register it with "
                         "get_or_register_dtype") from None


def _c_alignment(dtype: np.dtype) -> int:
    # a vector first: its dtype has fields too (s0, s1, ...), whose alignment is the element's
    if dtype in cltypes.vec_type_to_scalar_and_count:
        return dtype.itemsize  # OpenCL vectors align to their size (a 3-vector's is 4 elements)
    if dtype.fields:
        return max(_c_alignment(field[0]) for field in dtype.fields.values())
    if dtype.subdtype is not None:
        return _c_alignment(dtype.subdtype[0])
    return dtype.itemsize


def match_dtype_to_c_struct(device: Any, name: str, dtype: Any,
                            context: Any = None) -> tuple[np.dtype, str]:
    """The dtype padded as OpenCL C lays out ``struct name`` on ``device`` (natural alignment
    of each field, size rounded to the largest alignment) and the C declaration of the struct,
    as in ``pyopencl.tools``."""
    dtype = np.dtype(dtype)
    if dtype.fields is None:
        raise ValueError("match_dtype_to_c_struct needs a structured dtype")
    names, formats, offsets, c_fields = [], [], [], []
    position = 0
    for field_name in dtype.names or ():
        field_dtype = dtype.fields[field_name][0]
        align = _c_alignment(field_dtype)
        position = (position + align - 1) // align * align
        names.append(field_name)
        formats.append(field_dtype)
        offsets.append(position)
        if field_dtype.subdtype is not None:
            base, shape = field_dtype.subdtype
            dims = "".join(f"[{d}]" for d in shape)
            c_fields.append(f"  {dtype_to_ctype(base)} {field_name}{dims};")
        else:
            c_fields.append(f"  {dtype_to_ctype(field_dtype)} {field_name};")
        position += field_dtype.itemsize
    align = _c_alignment(dtype)
    itemsize = (position + align - 1) // align * align
    padded = np.dtype({"names": names, "formats": formats, "offsets": offsets,
                       "itemsize": itemsize})
    c_decl = "typedef struct {\n" + "\n".join(c_fields) + f"\n}} {name};\n"
    return padded, c_decl


def dtype_to_c_struct(device: Any, dtype: Any) -> str:
    """The C declaration of a registered record dtype under its registered name, as in
    ``pyopencl.tools``; empty for other dtypes (vector types are built in)."""
    dtype = np.dtype(dtype)
    if dtype.fields is None or dtype in cltypes.vec_type_to_scalar_and_count:
        return ""
    return match_dtype_to_c_struct(device, dtype_to_ctype(dtype), dtype)[1]


def struct_preamble(dtypes: Any) -> str:
    """The declarations of the registered record dtypes among ``dtypes``, for kernels ppcl
    writes itself (copies, fills, take) over arrays of structs: their source names the
    registered type, which OpenCL C needs declared. Unregistered ones are left out."""
    decls: list[str] = []
    for dtype in dict.fromkeys(np.dtype(d) for d in dtypes):
        try:
            decl = dtype_to_c_struct(None, dtype)
        except ValueError:
            continue
        if decl and decl not in decls:
            decls.append(decl)
    return "".join(decls)


# ---------------------------------------------------------------------- kernel arguments


class Argument(abc.ABC):
    """One argument of a generated kernel: its dtype and name."""

    def __init__(self, dtype: Any, name: str) -> None:
        self.dtype = np.dtype(dtype)
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.dtype}, '{self.name}')"

    @abc.abstractmethod
    def declarator(self) -> str:
        ...


class VectorArg(Argument):
    """A ``__global`` pointer argument, passed as an Array (its offset travels along)."""

    def __init__(self, dtype: Any, name: str, with_offset: bool = True) -> None:
        super().__init__(dtype, name)
        self.with_offset = with_offset

    def declarator(self) -> str:
        return f"__global {dtype_to_ctype(self.dtype)} *{self.name}"


class ScalarArg(Argument):
    """An argument passed by value."""

    def declarator(self) -> str:
        return f"{dtype_to_ctype(self.dtype)} {self.name}"


def parse_c_arg(c_arg: str, with_offset: bool = False) -> Argument:
    """One C declarator (``"__global float *x"``, ``"const int n"``) as an argument."""
    text = c_arg.strip()
    stars = text.count("*")
    head, _, name = text.replace("*", " ").rpartition(" ")
    if not head or not name.isidentifier():
        raise ValueError(f"cannot parse the argument '{text}'")
    dtype = ctype_to_dtype(head)
    return VectorArg(dtype, name) if stars else ScalarArg(dtype, name)


def parse_arg_list(arguments: str | Sequence[str | Argument],
                   with_offset: bool = False) -> list[Argument]:
    """``"float *x, const int n"``, or a list of such declarators or of VectorArg/ScalarArg,
    as a list of arguments. Vector arguments carry their offset here whatever
    ``with_offset`` says (PyOpenCL's switch for older generated kernels)."""
    pieces = arguments.split(",") if isinstance(arguments, str) else list(arguments)
    return [parse_c_arg(piece) if isinstance(piece, str) else piece
            for piece in pieces if not isinstance(piece, str) or piece.strip()]


def get_arg_list_scalar_arg_dtypes(arg_types: Sequence[Argument]) -> list[np.dtype | None]:
    """The ``set_scalar_arg_dtypes`` list of a generated kernel over ``arg_types``: None for
    a buffer, followed by the int64 offset of a vector argument that carries one."""
    result: list[np.dtype | None] = []
    for arg in arg_types:
        if isinstance(arg, VectorArg):
            result.append(None)
            if arg.with_offset:
                result.append(np.dtype(np.int64))
        else:
            result.append(arg.dtype)
    return result


COMPLEX_HEADER = complex_header("float")
"""The complex helpers of PyOpenCL's ``pyopencl-complex.h`` for ``cfloat_t`` (a ``float2``
holding the real and imaginary parts, the layout of numpy's complex64); guarded, so a kernel
whose arguments and whose expression both need it may take it twice, and a preamble may also
``#include <pyopencl-complex.h>``."""

COMPLEX_DOUBLE_HEADER = complex_header("double")


def complex_preamble(dtypes: Any) -> str:
    """The complex header a kernel over ``dtypes`` needs (empty when none is complex)."""
    kinds = {np.dtype(d) for d in dtypes}
    text = ""
    if np.dtype(np.complex64) in kinds or np.dtype(np.complex128) in kinds:
        text += COMPLEX_HEADER
    if np.dtype(np.complex128) in kinds:
        text += COMPLEX_DOUBLE_HEADER
    return text


_register_builtin_dtypes()


def get_cl_header_version() -> tuple[int, int]:
    """As ``ppcl.get_cl_header_version()`` (PyOpenCL has it in both places)."""
    return cl.get_cl_header_version()


def __getattr__(name: str) -> Any:
    raise unsupported("ppcl.tools", name)
