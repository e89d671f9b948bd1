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


def _check(settings: Settings) -> Device:
    from ppcl.devices.check import CheckDevice

    return CheckDevice(collect=settings.check == "collect")


DEVICE_KINDS: dict[str, Callable[[Settings], Device]] = {
    "cpu": _cpu,
    "serial": _serial,
    "check": _check,
}

_made: dict[str, Device] = {}
_lock = threading.Lock()


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


def listed_devices(settings: Settings) -> list[Device]:
    """The devices ``settings.devices`` lists, in its order."""
    return [device_of_kind(kind, settings) for kind in settings.devices]
