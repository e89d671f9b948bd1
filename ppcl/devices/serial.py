"""The serial CPU device: every work-group of a launch runs in the thread that launches it.

It shares the CPU device's compile path and host memory, but has no pool: a launch is one
loop over its groups in the caller's thread, in group order. That makes runs deterministic
(atomics, printf and races happen in one order), which tests and bug hunts want; pocl's
"basic" device plays the same part. List it with ``PPCL_DEVICES=serial`` (or ``cpu,serial``).
"""

from __future__ import annotations

import ctypes

from ppcl.compiler.frontend.options import BuildOptions
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.layout import align_up
from ppcl.devices.cpu.device import CPUProgram, HostDevice, host_device_info
from ppcl.devices.cpu.pool import LOCAL_MEM_ALIGN, ChunkRunner
from ppcl.devices.cpu.probe import probe_cpu
from ppcl.settings import Debug


class SerialDevice(HostDevice):
    """The host processor, one work-group after another in the launching thread."""

    def __init__(self) -> None:
        cpu = probe_cpu()
        super().__init__(host_device_info(cpu, f"serial-{cpu.model}", 1))

    def run_groups(self, run_chunk: ChunkRunner, num_groups: int, local_bytes: int) -> None:
        # one block per launch: launches from several Python threads must not share one
        block = ctypes.create_string_buffer(local_bytes + LOCAL_MEM_ALIGN) if local_bytes \
            else None
        address = 0
        if block is not None:
            base = ctypes.addressof(block)
            address = align_up(base, LOCAL_MEM_ALIGN)
        run_chunk(0, num_groups, address)

    def build(self, module: ir.Module, options: BuildOptions, debug: Debug) -> CPUProgram:
        return CPUProgram(module, options, debug, self.run_groups)
