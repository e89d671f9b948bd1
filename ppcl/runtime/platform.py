"""Platforms and devices: ``get_platforms()``, ``Platform.get_devices()``, device info.

ppcl's first platform lists the devices ``PPCL_DEVICES`` names (default: the threaded CPU
device), each behind ``ppcl.devices.interface.Device``; where cupy imports and the NVIDIA driver
finds GPUs, a second platform, ``ppcl CUDA``, lists one CUDA device per GPU; with
``PPCL_VENDORS=1``, every OpenCL platform pyopencl finds follows as ``ppcl on <name>``. Info is read as attributes (``dev.max_work_group_size``) or with ``get_info(device_info.X)``, as in
PyOpenCL.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

from ppcl.devices import UnknownDeviceError, gpu_devices, listed_devices, vendor_devices
from ppcl.devices import interface as device_interface
from ppcl.runtime.constants import (
    LATER_QUERIES,
    command_queue_properties,
    constant_names,
    device_exec_capabilities,
    device_fp_config,
    device_info,
    device_local_mem_type,
    device_mem_cache_type,
    platform_info,
)
from ppcl.runtime.constants import (
    device_type as _device_type,
)
from ppcl.runtime.errors import is_integer, make_error
from ppcl.runtime.handles import Handle
from ppcl.runtime.unsupported import unsupported
from ppcl.settings import SettingsError, read_settings
from ppcl.version import __version__

PLATFORM_NAME = "ppcl"
CUDA_PLATFORM_NAME = "ppcl CUDA"
PLATFORM_VENDOR = "The ppcl project"
OPENCL_VERSION = f"OpenCL 1.2 ppcl {__version__}"
_DEVICE_TYPES = {"cpu": _device_type.CPU, "gpu": _device_type.GPU,
                 "accelerator": _device_type.ACCELERATOR}
_FP_CONFIG = (device_fp_config.DENORM | device_fp_config.INF_NAN
              | device_fp_config.ROUND_TO_NEAREST | device_fp_config.ROUND_TO_ZERO
              | device_fp_config.ROUND_TO_INF | device_fp_config.FMA
              | device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT)


def cl_version(text: str) -> tuple[int, int]:
    """(major, minor) of an ``OpenCL <major>.<minor> <rest>`` version string."""
    match = re.match(r"OpenCL (\d+)\.(\d+)", text)
    if match is None:
        raise make_error("_get_cl_version", "INVALID_VALUE",
                         f"version {text!r} is not 'OpenCL <major>.<minor> ...'")
    return int(match.group(1)), int(match.group(2))


class Platform(Handle):
    """The ppcl platform."""

    def __init__(self, name: str = PLATFORM_NAME,
                 backends: Callable[[], list[device_interface.Device]] | None = None) -> None:
        self._devices: list[Device] | None = None
        self._backends = backends or (lambda: listed_devices(read_settings()))
        self.name = name
        self.vendor = PLATFORM_VENDOR
        self.version = OPENCL_VERSION
        self.profile = "FULL_PROFILE"
        self.extensions = "cl_khr_icd"

    def get_info(self, param: int) -> Any:
        values = {
            platform_info.PROFILE: self.profile,
            platform_info.VERSION: self.version,
            platform_info.NAME: self.name,
            platform_info.VENDOR: self.vendor,
            platform_info.EXTENSIONS: self.extensions,
        }
        if param not in values:
            raise _unanswered("clGetPlatformInfo", platform_info, param)
        return values[param]

    def _all_devices(self) -> list[Device]:
        if self._devices is None:
            try:
                backends = self._backends()
            except (SettingsError, UnknownDeviceError) as error:
                raise make_error("clGetDeviceIDs", "DEVICE_NOT_AVAILABLE", str(error)) from error
            self._devices = [Device(self, backend) for backend in backends]
        return self._devices

    def get_devices(self, device_type: int = _device_type.ALL) -> list[Device]:
        """The platform's devices of ``device_type``; an empty list when it has none.

        clGetDeviceIDs answers CL_DEVICE_NOT_FOUND there, but PyOpenCL returns ``[]``, and
        programs rely on it: ``[p.get_devices(device_type.GPU) for p in get_platforms()]``
        is the usual way to look for a GPU and fall back to the CPU.
        """
        if not is_integer(device_type):
            raise make_error("clGetDeviceIDs", "INVALID_DEVICE_TYPE",
                             f"device_type {device_type!r}: pass a cl.device_type value")
        return [d for d in self._all_devices()
                if device_type in (_device_type.ALL, _device_type.DEFAULT)
                or d.type & device_type]

    def _get_cl_version(self) -> tuple[int, int]:
        """(major, minor) of the platform's version string, as PyOpenCL's: its test suites
        and libraries written for it compare it with ``(1, 2)`` or ``(2, 0)`` before using a
        feature."""
        return cl_version(self.version)


    def __repr__(self) -> str:
        return f"<ppcl.Platform '{self.name}' at 0x{id(self):x}>"


class Device(Handle):
    """An OpenCL device; attributes are the lower-case ``device_info`` names."""

    def __init__(self, platform: Platform, backend: device_interface.Device) -> None:
        self.backend = backend
        self._platform = platform
        self._info = self._describe(platform, backend)
        # plain attributes, so reading dev.max_work_group_size costs a dict lookup
        for name, code in constant_names(device_info).items():
            attribute = name.lower()
            if code in self._info and not hasattr(type(self), attribute):
                self.__dict__[attribute] = self._info[code]

    @staticmethod
    def _describe(platform: Platform, backend: device_interface.Device) -> dict[int, Any]:
        dev = backend.info
        vector = dev.vector_bytes
        info: dict[int, Any] = {
            device_info.TYPE: _DEVICE_TYPES[dev.kind],
            device_info.VENDOR_ID: 0,
            device_info.MAX_COMPUTE_UNITS: dev.compute_units,
            device_info.MAX_WORK_ITEM_DIMENSIONS: 3,
            device_info.MAX_WORK_GROUP_SIZE: dev.max_work_group_size,
            device_info.MAX_WORK_ITEM_SIZES: list(dev.max_work_item_sizes),
            device_info.MAX_CLOCK_FREQUENCY: dev.clock_mhz,
            device_info.ADDRESS_BITS: 64,
            device_info.MAX_READ_IMAGE_ARGS: 128,
            device_info.MAX_WRITE_IMAGE_ARGS: 64,
            device_info.MAX_MEM_ALLOC_SIZE: dev.max_mem_alloc_size,
            device_info.IMAGE2D_MAX_WIDTH: 16384,
            device_info.IMAGE2D_MAX_HEIGHT: 16384,
            device_info.IMAGE3D_MAX_WIDTH: 2048,
            device_info.IMAGE3D_MAX_HEIGHT: 2048,
            device_info.IMAGE3D_MAX_DEPTH: 2048,
            device_info.IMAGE_SUPPORT: True,
            device_info.MAX_PARAMETER_SIZE: 1024,
            device_info.MAX_SAMPLERS: 16,
            device_info.MEM_BASE_ADDR_ALIGN: dev.mem_base_addr_align * 8,
            device_info.MIN_DATA_TYPE_ALIGN_SIZE: 128,
            device_info.SINGLE_FP_CONFIG: _FP_CONFIG,
            device_info.DOUBLE_FP_CONFIG: _FP_CONFIG,
            device_info.GLOBAL_MEM_CACHE_TYPE: device_mem_cache_type.READ_WRITE_CACHE,
            device_info.GLOBAL_MEM_CACHELINE_SIZE: dev.cache_line,
            device_info.GLOBAL_MEM_CACHE_SIZE: dev.global_mem_cache_size,
            device_info.GLOBAL_MEM_SIZE: dev.global_mem_size,
            device_info.MAX_CONSTANT_BUFFER_SIZE: dev.local_mem_size,
            device_info.MAX_CONSTANT_ARGS: 8,
            device_info.LOCAL_MEM_TYPE: device_local_mem_type.GLOBAL,
            device_info.LOCAL_MEM_SIZE: dev.local_mem_size,
            device_info.ERROR_CORRECTION_SUPPORT: 0,
            device_info.PROFILING_TIMER_RESOLUTION: 1,
            device_info.ENDIAN_LITTLE: 1,
            device_info.AVAILABLE: 1,
            device_info.COMPILER_AVAILABLE: 1,
            device_info.LINKER_AVAILABLE: 1,
            device_info.EXECUTION_CAPABILITIES: device_exec_capabilities.KERNEL,
            device_info.QUEUE_PROPERTIES: (command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
                                           | command_queue_properties.PROFILING_ENABLE),
            device_info.NAME: dev.name,
            device_info.VENDOR: dev.vendor,
            device_info.DRIVER_VERSION: __version__,
            device_info.PROFILE: "FULL_PROFILE",
            device_info.VERSION: OPENCL_VERSION,
            device_info.OPENCL_C_VERSION: f"OpenCL C 1.2 ppcl {__version__}",
            device_info.EXTENSIONS: " ".join(dev.extensions),
            device_info.PLATFORM: platform,
            device_info.HOST_UNIFIED_MEMORY: int(dev.host_unified_memory),
            device_info.BUILT_IN_KERNELS: "",
            device_info.IMAGE_MAX_BUFFER_SIZE: 1 << 27,
            device_info.IMAGE_MAX_ARRAY_SIZE: 2048,
            device_info.PARENT_DEVICE: None,
            device_info.PARTITION_MAX_SUB_DEVICES: 0,
            device_info.PARTITION_PROPERTIES: [],
            device_info.PARTITION_AFFINITY_DOMAIN: 0,
            device_info.PARTITION_TYPE: [],
            device_info.REFERENCE_COUNT: 1,
            device_info.PREFERRED_INTEROP_USER_SYNC: 1,
            device_info.PRINTF_BUFFER_SIZE: dev.printf_buffer_size,
        }
        for name, size in (("CHAR", 1), ("SHORT", 2), ("INT", 4), ("LONG", 8), ("FLOAT", 4),
                           ("DOUBLE", 8)):
            width = max(1, vector // size)
            info[getattr(device_info, f"PREFERRED_VECTOR_WIDTH_{name}")] = width
            info[getattr(device_info, f"NATIVE_VECTOR_WIDTH_{name}")] = width
        info[device_info.PREFERRED_VECTOR_WIDTH_HALF] = 0
        info[device_info.NATIVE_VECTOR_WIDTH_HALF] = 0
        return info

    def get_info(self, param: int) -> Any:
        if param not in self._info:
            raise _unanswered("clGetDeviceInfo", device_info, param)
        return self._info[param]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        code = constant_names(device_info).get(name.upper())
        if code in LATER_QUERIES[device_info]:  # as PyOpenCL, whose attributes query
            raise _unanswered("clGetDeviceInfo", device_info, code)
        if code is None or code not in self._info:
            raise unsupported("Device", name)
        return self._info[code]

    @property
    def platform(self) -> Platform:
        return self._platform


    @property
    def hashable_model_and_version_identifier(self) -> tuple[str, ...]:
        return ("v1", self.vendor, self.name, self.version, self.driver_version)

    @property
    def persistent_unique_id(self) -> tuple[str, ...]:
        """PyOpenCL's older name of ``hashable_model_and_version_identifier``, deprecated
        there with the same warning."""
        warnings.warn("Device.persistent_unique_id is deprecated. Use "
                      "Device.hashable_model_and_version_identifier instead.",
                      DeprecationWarning, stacklevel=2)
        return self.hashable_model_and_version_identifier

    def __repr__(self) -> str:
        return f"<ppcl.Device '{self.name}' on '{self._platform.name}' at 0x{id(self):x}>"


def _unanswered(routine: str, info: type, param: int) -> Exception:
    """CL_INVALID_VALUE for an info query ppcl does not answer: one OpenCL added after 1.2,
    the version ppcl reports, or an unknown code."""
    since = LATER_QUERIES[info].get(param)
    if since is None:
        return make_error(routine, "INVALID_VALUE", f"unknown {info.__name__} {param}")
    name = next(n for n, code in constant_names(info).items() if code == param)
    return make_error(routine, "INVALID_VALUE",
                      f"{info.__name__}.{name} is a query of OpenCL {since}; "
                      f"ppcl implements and reports OpenCL 1.2 ('{OPENCL_VERSION}'), "
                      "which does not have it")


_platforms: list[Platform] = []


def _listing(devices: list[device_interface.Device]
             ) -> Callable[[], list[device_interface.Device]]:
    return lambda: devices


def get_platforms() -> list[Platform]:
    if not _platforms:
        _platforms.append(Platform())
        if gpu_devices():
            _platforms.append(Platform(CUDA_PLATFORM_NAME, gpu_devices))
        if read_settings().vendors:
            for name, devices in vendor_devices():
                _platforms.append(Platform(f"ppcl on {name}", _listing(devices)))
    return list(_platforms)
