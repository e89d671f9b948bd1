"""Device characteristics, as ``pyopencl.characterize`` reports them, for ppcl devices.

Code written for PyOpenCL asks these questions to pick work-group sizes or to work around
driver bugs; ppcl's answers describe its CPU device, the SIMD group of its CUDA device (and say
that it is not pocl, and has none of the bugs the PyOpenCL helpers test for).
"""

from __future__ import annotations

from typing import Any

import ppcl as cl


class CLCharacterizationWarning(UserWarning):
    pass


def has_double_support(dev: cl.Device) -> bool:
    return "cl_khr_fp64" in dev.extensions.split()


def has_amd_double_support(dev: cl.Device) -> bool:
    return "cl_amd_fp64" in dev.extensions.split()


def reasonable_work_group_size_multiple(dev: cl.Device, ctx: cl.Context | None = None) -> int:
    """The work-group size multiple the device prefers (its float vector width)."""
    return int(dev.preferred_vector_width_float)


def nv_compute_capability(dev: cl.Device) -> tuple[int, int] | None:
    return None


def usable_local_mem_size(dev: cl.Device, nargs: int | None = None) -> int:
    return int(dev.local_mem_size)


def simultaneous_work_items_on_local_access(dev: cl.Device) -> int:
    """Work-items of a group run one after another on a CPU core (vectorized loops aside)."""
    return 1


def local_memory_access_granularity(dev: cl.Device) -> int:
    """Bytes of one local-memory access: local memory is ordinary cached memory here."""
    return 4


def local_memory_bank_count(dev: cl.Device) -> int:
    return 1


def why_not_local_access_conflict_free(dev: cl.Device, itemsize: int, array_shape: Any,
                                       array_stored_shape: Any = None) -> tuple[int, str | None]:
    """No banks, no conflicts: ``(1, None)`` as for a conflict-free access."""
    return 1, None


def get_fast_inaccurate_build_options(dev: cl.Device) -> list[str]:
    return ["-cl-mad-enable", "-cl-fast-relaxed-math", "-cl-no-signed-zeros"]


NVIDIA_WARP = 32  # threads of a warp, which run in lock step on an NVIDIA GPU


def get_simd_group_size(dev: cl.Device, type_size: int) -> int | None:
    """Work-items executed across SIMD lanes implicitly, as PyOpenCL answers: a warp on an
    NVIDIA GPU (the CUDA device), 1 on a CPU (vectorization of work-item loops is the
    compiler's business, not the caller's)."""
    if dev.type & cl.device_type.GPU and "nvidia" in dev.vendor.lower():
        return NVIDIA_WARP
    if dev.type & cl.device_type.CPU:
        return 1
    return None


def get_pocl_version(platform: cl.Platform, fallback_value: Any = None) -> tuple[int, int] | None:
    """ppcl is not pocl."""
    if platform.name != "Portable Computing Language":
        return None
    return fallback_value


def has_struct_arg_count_bug(dev: cl.Device, ctx: cl.Context | None = None) -> bool | str:
    return False


def has_coarse_grain_buffer_svm(dev: cl.Device) -> bool:
    return False


def has_fine_grain_buffer_svm(dev: cl.Device) -> bool:
    return False


def has_fine_grain_system_svm(dev: cl.Device) -> bool:
    return False


def has_fine_grain_buffer_svm_atomics(dev: cl.Device) -> bool:
    return False


def has_fine_grain_system_svm_atomics(dev: cl.Device) -> bool:
    return False


def has_src_build_cache(dev: cl.Device) -> bool | None:
    """Compiled kernels are cached on disk (``PPCL_CACHE_DIR``)."""
    return True
