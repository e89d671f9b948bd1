"""Shared by the conformance tests: pocl through pyopencl, where it is installed, to compare
with."""

from __future__ import annotations

import os
from typing import Any

import pytest


@pytest.fixture(scope="module")
def pocl() -> Any:
    """(pyopencl, context, queue) on pocl's CPU device, or None where it is not installed."""
    if os.path.isdir("/etc/OpenCL/vendors"):
        os.environ.setdefault("OCL_ICD_VENDORS", "/etc/OpenCL/vendors")
    try:
        import pyopencl
        platforms = [p for p in pyopencl.get_platforms() if "portable" in p.name.lower()]
    except Exception:  # no pyopencl, no ICD loader, no platform
        return None
    if not platforms:
        return None
    device = platforms[0].get_devices()[0]
    if not device.image_support:
        return None
    context = pyopencl.Context([device])
    return pyopencl, context, pyopencl.CommandQueue(context)
