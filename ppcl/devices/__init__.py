"""Devices the runtime drives, all through ``ppcl.devices.interface.Device``.

``DEVICE_KINDS`` is the table of devices ppcl can list: a new device is a module here and a
line in this table. ``PPCL_DEVICES`` (parsed by ``ppcl.settings``) picks which are listed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ppcl.devices.interface import Device
from ppcl.settings import Settings


def _cpu(settings: Settings) -> Device:
    from ppcl.devices.cpu import CPUDevice

    return CPUDevice(settings.threads)


def _serial(settings: Settings) -> Device:
    from ppcl.devices.serial import SerialDevice

    return SerialDevice()


def _cuda(settings: Settings) -> Device:
    return cuda_device(0)


def _check(settings: Settings) -> Device:
    from ppcl.devices.check import CheckDevice

    return CheckDevice(collect=settings.check == "collect")


DEVICE_KINDS: dict[str, Callable[[Settings], Device]] = {
    "cpu": _cpu,
    "serial": _serial,
    "cuda": _cuda,
    "check": _check,
}

_made: dict[str, Device] = {}
_lock = threading.RLock()  # cuda_device is reached from device_of_kind too


class UnknownDeviceError(ValueError):
    pass


def device_of_kind(kind: str, settings: Settings) -> Device:
    """The process-wide device of ``kind`` (made on first use)."""
    make = DEVICE_KINDS.get(kind)
    if make is None:
        raise UnknownDeviceError(f"PPCL_DEVICES names '{kind}', which is not a ppcl device "
                                 f"(known: {', '.join(DEVICE_KINDS)})")
    with _lock:
        device = _made.get(kind)
        if device is None:
            device = make(settings)
            _made[kind] = device
        return device


def cuda_device(ordinal: int) -> Device:
    """The process-wide device of GPU ``ordinal`` (made on first use)."""
    from ppcl.devices.cuda import gpu_count

    if ordinal >= gpu_count():
        raise UnknownDeviceError("PPCL_DEVICES names 'cuda', but there is no CUDA GPU here "
                                 "(the CUDA device needs an NVIDIA GPU, its driver and cupy: "
                                 "pip install ppcl[cuda])")
    key = f"cuda:{ordinal}"
    with _lock:
        device = _made.get(key)
        if device is None:
            from ppcl.devices.cuda.device import CUDADevice

            device = CUDADevice(ordinal)
            _made[key] = device
        return device


def gpu_devices() -> list[Device]:
    """One CUDA device per GPU; none where cupy, the driver or a GPU is missing."""
    from ppcl.devices.cuda import gpu_count

    return [cuda_device(ordinal) for ordinal in range(gpu_count())]


def vendor_devices() -> list[tuple[str, list[Device]]]:
    """``(platform name, devices)`` of the vendor OpenCL platforms pyopencl finds."""
    from ppcl.devices.vendor import vendor_platforms

    return vendor_platforms()


def listed_devices(settings: Settings) -> list[Device]:
    """The devices ``settings.devices`` lists, in its order."""
    return [device_of_kind(kind, settings) for kind in settings.devices]
