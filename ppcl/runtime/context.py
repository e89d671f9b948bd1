"""Contexts and ``create_some_context``.

``create_some_context`` follows PyOpenCL: ``PPCL_CTX`` (or ``PYOPENCL_CTX``) chooses
``"platform:device"`` by index or by a substring of the name; otherwise, with one choice or
without a terminal, the first device is taken; it only asks on an interactive terminal when
there is more than one device to choose from.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from ppcl.runtime.constants import (
    constant_names,
    context_info,
    context_properties,
    info_attributes,
)
from ppcl.runtime.errors import make_error
from ppcl.runtime.handles import Handle
from ppcl.runtime.platform import Device, Platform, get_platforms
from ppcl.settings import read_settings


@info_attributes(context_info, own=("devices", "properties"))
class Context(Handle):
    """A set of devices sharing memory objects and programs."""

    def __init__(self, devices: Sequence[Device] | None = None,
                 properties: Sequence[tuple[int, Any]] | None = None,
                 dev_type: int | None = None) -> None:
        platform = _platform_from_properties(properties)
        if devices is None:
            devices = platform.get_devices(dev_type) if dev_type is not None else \
                platform.get_devices()
            if not devices:
                raise make_error("clCreateContextFromType", "DEVICE_NOT_FOUND",
                                 f"no device of type {dev_type} on platform '{platform.name}'")
        if isinstance(devices, Device):
            raise make_error("clCreateContext", "INVALID_VALUE",
                             "devices is a list of devices: Context([device])")
        devices = list(devices)
        if not devices:
            raise make_error("clCreateContext", "INVALID_VALUE", "no devices given")
        for device in devices:
            if not isinstance(device, Device):
                raise make_error("clCreateContext", "INVALID_DEVICE",
                                 f"{device!r} is not a ppcl Device")
        self.devices = devices
        self.properties = list(properties or [])
        for device in devices:
            device.backend.context_created()

    def get_info(self, param: int) -> Any:
        values: dict[int, Any] = {
            context_info.REFERENCE_COUNT: 1,
            context_info.DEVICES: list(self.devices),
            context_info.PROPERTIES: list(self.properties),
            context_info.NUM_DEVICES: len(self.devices),
        }
        if param not in values:
            raise make_error("clGetContextInfo", "INVALID_VALUE", f"unknown context_info {param}")
        return values[param]


    @property
    def num_devices(self) -> int:
        return len(self.devices)

    def _get_cl_version(self) -> tuple[int, int]:
        """The OpenCL version of the context's platform, as PyOpenCL's."""
        return self.devices[0].platform._get_cl_version()


    def __repr__(self) -> str:
        names = ", ".join(d.name for d in self.devices)
        return f"<ppcl.Context on {names} at 0x{id(self):x}>"


def _platform_from_properties(properties: Sequence[tuple[int, Any]] | None) -> Platform:
    known = set(constant_names(context_properties).values())
    for entry in properties or ():
        if not isinstance(entry, tuple | list) or len(entry) != 2 or entry[0] not in known:
            raise make_error("clCreateContext", "INVALID_PROPERTY",
                             f"context property {entry!r}: properties are (key, value) pairs "
                             "with a cl.context_properties key")
        key, value = entry
        if key == context_properties.PLATFORM:
            if not isinstance(value, Platform):
                raise make_error("clCreateContext", "INVALID_PLATFORM", f"{value!r}")
            return value
    return get_platforms()[0]


def _pick(choices: Sequence[Any], answer: str, what: str) -> Any:
    answer = answer.strip()
    if not answer:
        return choices[0]
    if answer.isdigit():
        index = int(answer)
        if 0 <= index < len(choices):
            return choices[index]
        raise make_error("create_some_context", "INVALID_VALUE",
                         f"{what} index {index} out of range (0..{len(choices) - 1})")
    for choice in choices:
        if answer.lower() in choice.name.lower():
            return choice
    raise make_error("create_some_context", "INVALID_VALUE", f"no {what} matching '{answer}'")


def _ask(prompt: str, choices: Sequence[Any]) -> str:
    print(prompt)
    for index, choice in enumerate(choices):
        print(f"[{index}] {choice!r}")
    return input("Choice [0]: ")


def create_some_context(interactive: bool | None = None,
                        answers: Sequence[str] | None = None) -> Context:
    """A context on a device chosen by the environment, ``answers`` or the user."""
    if answers is None:
        spec = read_settings().ctx
        answers = spec.split(":") if spec else []
    answers = list(answers)
    if interactive is None:
        interactive = sys.stdin is not None and sys.stdin.isatty()
    platforms = get_platforms()
    if answers:
        platform = _pick(platforms, answers.pop(0), "platform")
    elif interactive and len(platforms) > 1:
        platform = _pick(platforms, _ask("Choose platform:", platforms), "platform")
    else:
        platform = platforms[0]
    devices = platform.get_devices()
    if answers:
        device = _pick(devices, answers.pop(0), "device")
    elif interactive and len(devices) > 1:
        device = _pick(devices, _ask("Choose device:", devices), "device")
    else:
        device = devices[0]
    return Context([device])
