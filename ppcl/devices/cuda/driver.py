"""The CUDA driver API through ctypes: the few calls the CUDA device makes.

``libcuda`` comes with the NVIDIA driver, so it is there wherever a GPU is; a launch is one
foreign call with no wrapper layer between (the empty-launch latency is what ctypes costs).
Every call is checked: a failure raises :class:`CUDAError` naming the call and the driver's
error name (``CUDA_ERROR_ILLEGAL_ADDRESS``).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import Any

CUDA_SUCCESS = 0
# Errors of a kernel that ran and faulted; the context cannot be used again afterwards.
KERNEL_FAULTS = {700: "illegal address", 715: "illegal instruction", 716: "misaligned address",
                 717: "invalid address space", 719: "launch failure"}

# CUdevice_attribute values used by the device's description
ATTRIBUTES = {
    "max_threads_per_block": 1,
    "max_block_dim_x": 2, "max_block_dim_y": 3, "max_block_dim_z": 4,
    "max_shared_memory_per_block": 8,
    "clock_rate_khz": 13,
    "multiprocessor_count": 16,
    "l2_cache_size": 38,
    "compute_capability_major": 75,
    "compute_capability_minor": 76,
    "concurrent_managed_access": 89,
}
FUNC_MAX_THREADS_PER_BLOCK = 0
FUNC_SHARED_SIZE_BYTES = 1
FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
MEM_ATTACH_GLOBAL = 1
LIMIT_PRINTF_FIFO_SIZE = 1  # CUlimit: bytes of the buffer device-side printf writes into
CTX_SCHED_SPIN = 1  # a waiting host thread spins: a launch's wait ends microseconds sooner
STREAM_NON_BLOCKING = 1

_SIGNATURES: dict[str, list[Any]] = {
    "cuInit": [ctypes.c_uint],
    "cuDriverGetVersion": [ctypes.POINTER(ctypes.c_int)],
    "cuDeviceGetCount": [ctypes.POINTER(ctypes.c_int)],
    "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
    "cuDeviceGetName": [ctypes.c_char_p, ctypes.c_int, ctypes.c_int],
    "cuDeviceGetAttribute": [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int],
    "cuDeviceTotalMem_v2": [ctypes.POINTER(ctypes.c_size_t), ctypes.c_int],
    "cuDevicePrimaryCtxRetain": [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int],
    "cuDevicePrimaryCtxGetState": [ctypes.c_int, ctypes.POINTER(ctypes.c_uint),
                                   ctypes.POINTER(ctypes.c_int)],
    "cuDevicePrimaryCtxSetFlags_v2": [ctypes.c_int, ctypes.c_uint],
    "cuCtxSetCurrent": [ctypes.c_void_p],
    "cuCtxGetLimit": [ctypes.POINTER(ctypes.c_size_t), ctypes.c_int],
    "cuMemGetInfo_v2": [ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)],
    "cuMemAllocManaged": [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t, ctypes.c_uint],
    "cuMemFree_v2": [ctypes.c_uint64],
    "cuMemcpyAsync": [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p],
    "cuMemsetD8Async": [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t, ctypes.c_void_p],
    "cuMemsetD32Async": [ctypes.c_uint64, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p],
    "cuStreamCreate": [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint],
    "cuStreamSynchronize": [ctypes.c_void_p],
    "cuModuleLoadData": [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p],
    "cuModuleGetFunction": [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p],
    "cuFuncGetAttribute": [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_void_p],
    "cuFuncSetAttribute": [ctypes.c_void_p, ctypes.c_int, ctypes.c_int],
    "cuLaunchKernel": [ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                       ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                       ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p],
    "cuGetErrorName": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
}


class CUDAError(RuntimeError):
    """A driver call that failed; ``code`` is the CUresult."""

    def __init__(self, call: str, code: int, name: str) -> None:
        super().__init__(f"{call} failed: {name} ({code})")
        self.call = call
        self.code = code
        self.name = name


class Driver:
    """The loaded ``libcuda`` with checked calls (``driver.cuInit(0)``)."""

    def __init__(self, library: ctypes.CDLL) -> None:
        self._lib = library
        for name, argtypes in _SIGNATURES.items():
            function = getattr(library, name)
            function.argtypes = argtypes
            function.restype = ctypes.c_int

    def error_name(self, code: int) -> str:
        text = ctypes.c_char_p()
        if self._lib.cuGetErrorName(code, ctypes.byref(text)) != CUDA_SUCCESS or not text.value:
            return "CUDA_ERROR_UNKNOWN"
        return text.value.decode()

    def raw(self, name: str) -> Callable[..., int]:
        """The unchecked function of ctypes values, converted by no argtypes (for the launch
        path, which makes its arguments once and checks the result itself)."""
        function = getattr(ctypes.CDLL(self._lib._name), name)
        function.restype = ctypes.c_int
        raw: Callable[..., int] = function
        return raw

    def __getattr__(self, name: str) -> Callable[..., None]:
        function = getattr(self._lib, name)

        def checked(*args: Any) -> None:
            code = function(*args)
            if code != CUDA_SUCCESS:
                raise CUDAError(name, code, self.error_name(code))

        return checked


_driver: Driver | None = None
_driver_error: str | None = None
_lock = threading.Lock()


def load_driver() -> Driver | None:
    """The initialized driver, or None where there is no NVIDIA driver (the reason is kept
    for ``driver_unavailable_reason``)."""
    global _driver, _driver_error
    with _lock:
        if _driver is not None or _driver_error is not None:
            return _driver
        try:
            library = ctypes.CDLL("libcuda.so.1")
            driver = Driver(library)
            driver.cuInit(0)
        except (OSError, AttributeError, CUDAError) as error:
            _driver_error = str(error)
            return None
        _driver = driver
        return driver


def driver_unavailable_reason() -> str | None:
    return _driver_error


def device_count() -> int:
    """The number of CUDA GPUs; 0 where there is no driver or no GPU."""
    driver = load_driver()
    if driver is None:
        return 0
    count = ctypes.c_int()
    try:
        driver.cuDeviceGetCount(ctypes.byref(count))
    except CUDAError:
        return 0
    return count.value
