"""The overlay over another OpenCL platform, for programs written against pyopencl.

``over(pyopencl_context)`` returns a ppcl ``Context`` whose devices are that context's devices
driven through ppcl (``ppcl/devices/vendor``): programs pass ppcl's front end, the kernels the
overlay fuses and specializes are printed as OpenCL C and built by the platform's own compiler,
and buffers are host memory the platform maps around each launch. Every in-order queue made on
the returned context records and replays its commands (``record=False`` leaves that to
``enable``, unless ``PPCL_OVERLAY=1`` records every queue anyway). A pyopencl program switches with ``import ppcl as cl`` and
``ctx = cl.overlay.over(pyopencl.create_some_context())``; ``PPCL_VENDORS=1`` with
``PPCL_OVERLAY=1`` does the same for a program that picks a ``ppcl on <name>`` platform itself.

``target`` may also be a pyopencl device, a list of them, or a text matched (ignoring case)
against the names and vendors of pyopencl's platforms and the names of their devices, such as
``"pocl"`` or ``"Portable"``
(``""`` takes pyopencl's first platform).
"""

from __future__ import annotations

import importlib.util
import weakref
from collections.abc import Sequence
from typing import Any

from ppcl.devices.vendor.device import VendorDevice, supported
from ppcl.runtime.context import Context
from ppcl.runtime.errors import make_error
from ppcl.runtime.platform import Platform

ROUTINE = "ppcl.overlay.over"
# the ppcl platform made for each pyopencl context (by its address), so contexts made over it
# share devices, while any of them lives: its devices hold the pyopencl context, whose address
# cannot be reused meanwhile
_platforms: weakref.WeakValueDictionary[int, Platform] = weakref.WeakValueDictionary()
_recorded: weakref.WeakSet[Context] = weakref.WeakSet()


def over(target: Any, record: bool = True) -> Context:
    """A ppcl context on the devices of ``target`` (a pyopencl context, device, list of
    devices, or a platform or device name); its in-order queues record unless not ``record``.
    Raises ``ppcl.RuntimeError`` (DEVICE_NOT_FOUND) when pyopencl is not installed or nothing
    matches, ``ppcl.LogicError`` (INVALID_CONTEXT) for a ``target`` of another kind."""
    cl = _pyopencl()
    vendor_context = _vendor_context(cl, target)
    platform = _platforms.get(vendor_context.int_ptr)
    if platform is None:
        old = [d.name for d in vendor_context.devices if not supported(d)]
        if old:
            raise make_error(ROUTINE, "DEVICE_NOT_FOUND",
                             f"{', '.join(old)}: ppcl drives devices of OpenCL 1.2 and later")
        backends = [VendorDevice(cl, device, vendor_context) for device in vendor_context.devices]
        platform = Platform(f"ppcl on {vendor_context.devices[0].platform.name}",
                            lambda: list(backends))
        _platforms[vendor_context.int_ptr] = platform
    context = Context(platform.get_devices())
    if record:
        _recorded.add(context)
    return context


def records(context: Context) -> bool:
    """Whether queues made on ``context`` record (it came from ``over`` with ``record``)."""
    return context in _recorded


def _pyopencl() -> Any:
    if importlib.util.find_spec("pyopencl") is None:
        raise make_error(ROUTINE, "DEVICE_NOT_FOUND",
                         "pyopencl is not installed: the overlay over another OpenCL platform "
                         "drives it through pyopencl (pip install pyopencl, and the platform's "
                         "ICD, e.g. Debian's pocl-opencl-icd)")
    import pyopencl

    return pyopencl


def _vendor_context(cl: Any, target: Any) -> Any:
    if isinstance(target, cl.Context):
        return target
    if isinstance(target, cl.Device):
        return cl.Context([target])
    if isinstance(target, str):
        return cl.Context(_named_devices(cl, target))
    if isinstance(target, Sequence) and target and all(isinstance(d, cl.Device) for d in target):
        return cl.Context(list(target))
    raise make_error(ROUTINE, "INVALID_CONTEXT",
                     f"expected a pyopencl Context, Device, list of Devices or a platform or "
                     f"device name, got {type(target).__name__}")


def _named_devices(cl: Any, name: str) -> list[Any]:
    """The devices of the first platform whose name or vendor, or whose devices' names,
    contain ``name``: all of the platform's when the platform matches, else the matching
    ones."""
    try:
        platforms = cl.get_platforms()
    except cl.Error:  # an ICD loader with no platform behind it
        platforms = []
    seen: list[str] = []
    wanted = name.lower()
    for platform in platforms:
        try:
            devices = platform.get_devices()
        except cl.Error:
            continue
        if wanted in f"{platform.name} {platform.vendor}".lower():
            return list(devices)
        matching = [d for d in devices if wanted in d.name.lower()]
        if matching:
            return matching
        seen.extend(f"{platform.name}: {d.name.strip()}" for d in devices)
    found = "; ".join(seen) if seen else "none (is OCL_ICD_VENDORS set to the ICD folder?)"
    raise make_error(ROUTINE, "DEVICE_NOT_FOUND",
                     f"no OpenCL platform or device named like '{name}'; pyopencl finds: {found}")


__all__ = ["over", "records"]
