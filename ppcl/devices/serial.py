"""The serial CPU device: every work-group of a launch runs in the thread that launches it.

It is the CPU device with a pool of one thread, which runs a launch's groups in the caller's
thread, in group order, each thread with its own local block. That makes runs deterministic
(atomics, printf and races happen in one order), which tests and bug hunts want; pocl's
"basic" device plays the same part. List it with ``PPCL_DEVICES=serial`` (or ``cpu,serial``).
"""

from __future__ import annotations

from ppcl.devices.cpu.device import CPUDevice


class SerialDevice(CPUDevice):
    """The host processor, one work-group after another in the launching thread."""

    concurrent_launches = False  # runs stay deterministic: one launch at a time

    def __init__(self) -> None:
        super().__init__(threads=1, kind="serial")
