"""Vendor OpenCL platforms through pyopencl, listed by ppcl when ``PPCL_VENDORS=1``: programs
go through ppcl's front end and reach the vendor's compiler as printed OpenCL C. Devices of
OpenCL 1.2 and later are listed (``device.supported``)."""

from __future__ import annotations

import importlib.util
import threading
from typing import Any

from ppcl.devices.interface import Device

_platforms: list[tuple[str, list[Device]]] | None = None
_lock = threading.Lock()


def _vendor_platforms() -> list[Any]:
    if importlib.util.find_spec("pyopencl") is None:
        return []
    import pyopencl

    try:
        return list(pyopencl.get_platforms())
    except pyopencl.Error:  # an ICD loader with no platform behind it
        return []


def vendor_platforms() -> list[tuple[str, list[Device]]]:
    """``(platform name, its devices)`` of every OpenCL platform pyopencl finds (made once)."""
    global _platforms
    with _lock:
        if _platforms is None:
            found: list[tuple[str, list[Device]]] = []
            for platform in _vendor_platforms():
                import pyopencl

                from ppcl.devices.vendor.device import VendorDevice, supported

                devices: list[Device] = [VendorDevice(pyopencl, device)
                                         for device in platform.get_devices()
                                         if supported(device)]
                if devices:
                    found.append((platform.name, devices))
            _platforms = found
        return _platforms


__all__ = ["vendor_platforms"]
