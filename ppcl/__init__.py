"""ppcl: a performance-portable OpenCL stack in Python.

``import ppcl as cl`` gives the PyOpenCL host API (platforms, contexts, queues, buffers,
programs, kernels, events) running on ppcl's own devices.
"""

import importlib as _importlib
import os as _os
from collections.abc import Callable as _Callable
from typing import TypeAlias as _TypeAlias

from ppcl import overlay  # noqa: E402  (installs itself on new queues when PPCL_OVERLAY=1)

if _os.environ.get("PPCL_HOSTFUSION"):
    # host fusion installs itself on new queues when PPCL_HOSTFUSION asks for it; imported
    # only then, so that an unmodified program gets it and others do not pay the import
    from ppcl import hostfusion  # noqa: F401,E402
# ``import pyopencl as cl`` makes ``cl.cltypes`` and ``cl.tools`` available, and programs use
# them without importing the submodules (``cl.cltypes.make_float4``,
# ``cl.tools.get_or_register_dtype``)
from ppcl import cltypes  # noqa: E402
from ppcl.runtime.constants import (  # noqa: E402
    addressing_mode,
    build_status,
    channel_order,
    channel_type,
    command_execution_status,
    command_queue_info,
    command_queue_properties,
    command_type,
    context_info,
    context_properties,
    device_exec_capabilities,
    device_fp_config,
    device_info,
    device_local_mem_type,
    device_mem_cache_type,
    device_type,
    event_info,
    filter_mode,
    image_info,
    kernel_arg_access_qualifier,
    kernel_arg_address_qualifier,
    kernel_arg_info,
    kernel_arg_type_qualifier,
    kernel_info,
    kernel_work_group_info,
    map_flags,
    mem_flags,
    mem_info,
    mem_migration_flags,
    mem_object_type,
    platform_info,
    profiling_info,
    program_binary_type,
    program_build_info,
    program_info,
    sampler_info,
    status_code,
)
from ppcl.runtime.context import Context, create_some_context  # noqa: E402
from ppcl.runtime.errors import (  # noqa: E402
    Error,
    KernelCheckError,
    LogicError,
    MemoryError,
    RuntimeError,
)
from ppcl.runtime.event import Event, UserEvent, wait_for_events  # noqa: E402
from ppcl.runtime.image import (  # noqa: E402
    Image,
    ImageFormat,
    Sampler,
    create_image,
    get_supported_image_formats,
    image_from_array,
)
from ppcl.runtime.image_transfer import (  # noqa: E402
    enqueue_copy,
    enqueue_copy_buffer_to_image,
    enqueue_copy_image,
    enqueue_copy_image_to_buffer,
    enqueue_fill_image,
    enqueue_map_image,
    enqueue_read_image,
    enqueue_write_image,
)
from ppcl.runtime.kernel import Kernel, enqueue_nd_range_kernel  # noqa: E402
from ppcl.runtime.memory import Buffer, LocalMemory, MemoryMap, MemoryObject  # noqa: E402
from ppcl.runtime.platform import Device, Platform, get_platforms  # noqa: E402
from ppcl.runtime.program import (  # noqa: E402
    CompilerWarning,
    Program,
    link_program,
    unload_platform_compiler,
)
from ppcl.runtime.queue import (  # noqa: E402
    CommandQueue,
    CommandQueueUsedAfterExit,
    enqueue_barrier,
    enqueue_marker,
)
from ppcl.runtime.transfer import (  # noqa: E402
    enqueue_copy_buffer,
    enqueue_copy_buffer_rect,
    enqueue_fill,
    enqueue_fill_buffer,
    enqueue_map_buffer,
    enqueue_migrate_mem_objects,
    enqueue_read_buffer,
    enqueue_read_buffer_rect,
    enqueue_write_buffer,
    enqueue_write_buffer_rect,
)
from ppcl.runtime.unsupported import unsupported as _unsupported  # noqa: E402
from ppcl.version import __version__

VERSION = tuple(int(part) for part in __version__.split("."))
VERSION_TEXT = __version__

# what the ``ctx_factory`` fixture of ``tools.pytest_generate_tests_for_pyopencl`` is, as
# PyOpenCL names it for the annotations of its users' tests
CtxFactory: _TypeAlias = _Callable[[], Context]


def get_cl_header_version() -> tuple[int, int]:
    """The OpenCL version ppcl implements, as PyOpenCL reports its headers' version."""
    return (1, 2)


def __getattr__(name: str) -> object:
    if name == "tools":
        # on first use: tools sits above the runtime, and modules under it import ppcl
        return _importlib.import_module("ppcl.tools")
    raise _unsupported("ppcl", name)


__all__ = [
    "Buffer", "CommandQueue", "CommandQueueUsedAfterExit", "CompilerWarning", "Context", "CtxFactory", "Device", "Error", "Event", "Kernel",
    "KernelCheckError", "LocalMemory", "LogicError", "MemoryError", "MemoryMap", "MemoryObject", "Platform",
    "Program", "RuntimeError", "UserEvent", "build_status", "command_execution_status",
    "command_queue_info", "command_queue_properties", "command_type", "context_info",
    "context_properties", "create_some_context", "device_exec_capabilities", "device_fp_config",
    "device_info", "device_local_mem_type", "device_mem_cache_type", "device_type",
    "enqueue_barrier", "enqueue_copy", "enqueue_copy_buffer", "enqueue_copy_buffer_rect",
    "enqueue_fill", "enqueue_fill_buffer", "enqueue_map_buffer", "enqueue_marker",
    "enqueue_migrate_mem_objects", "get_cl_header_version",
    "enqueue_nd_range_kernel", "enqueue_read_buffer", "enqueue_read_buffer_rect",
    "enqueue_write_buffer", "enqueue_write_buffer_rect", "event_info", "get_platforms",
    "kernel_arg_access_qualifier", "kernel_arg_address_qualifier", "kernel_arg_info",
    "kernel_arg_type_qualifier", "kernel_info", "kernel_work_group_info", "link_program",
    "map_flags", "mem_flags", "mem_info", "mem_migration_flags", "mem_object_type",
    "platform_info", "profiling_info", "program_binary_type", "program_build_info",
    "program_info", "status_code", "unload_platform_compiler", "wait_for_events",
    # images and samplers
    "Image", "ImageFormat", "Sampler", "addressing_mode", "channel_order", "channel_type",
    "enqueue_copy_buffer_to_image", "enqueue_copy_image", "enqueue_copy_image_to_buffer",
    "enqueue_fill_image", "enqueue_map_image", "enqueue_read_image", "enqueue_write_image",
    "filter_mode", "create_image", "get_supported_image_formats", "image_from_array", "image_info",
    "cltypes", "overlay", "sampler_info", "tools",
]
