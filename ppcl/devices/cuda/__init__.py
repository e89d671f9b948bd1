"""The CUDA device (NVIDIA GPUs), listed only where the optional extra ``ppcl[cuda]`` (cupy,
whose NVRTC bindings compile the kernels) imports and the driver finds a GPU.

Nothing here imports cupy or loads the driver until asked: ``gpu_count()`` is what the device
table and the platform list call, and it answers 0 on a machine without either.
"""

from __future__ import annotations

import importlib.util

from ppcl.devices.cuda.driver import device_count


def bindings_installed() -> bool:
    """Whether cupy's NVRTC bindings can be imported (without importing them)."""
    try:
        return importlib.util.find_spec("cupy_backends") is not None
    except (ImportError, ValueError):
        return False


def gpu_count() -> int:
    """The GPUs the CUDA device can run on: 0 without cupy, the driver or a GPU."""
    if not bindings_installed():
        return 0
    return device_count()


__all__ = ["bindings_installed", "gpu_count"]
