"""The device interface: the serial device and a device defined here plug into the runtime
without any change under ppcl/runtime."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

import numpy as np
import pytest

import ppcl as cl
from ppcl import devices
from ppcl.compiler.frontend.options import BuildOptions
from ppcl.compiler.ir import nodes as ir
from ppcl.devices.cpu import CPUDevice
from ppcl.devices.interface import (
    ArgValue,
    BufferArg,
    Device,
    DeviceProgram,
    KernelLaunch,
    LocalArg,
    NDRange,
    ValueArg,
)
from ppcl.devices.serial import SerialDevice
from ppcl.runtime.platform import Device as RuntimeDevice
from ppcl.settings import Debug, read_settings

SOURCE = """
__kernel void scale(__global float *x, float a) { x[get_global_id(0)] *= a; }

__kernel void group_sum(__global const float *x, __global float *out, __local float *tmp)
{
    size_t lid = get_local_id(0), n = get_local_size(0);
    tmp[lid] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = n / 2; s > 0; s /= 2) {
        if (lid < s)
            tmp[lid] += tmp[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = tmp[0];
}
"""


def _context(backend: Device) -> cl.Context:
    return cl.Context(devices=[RuntimeDevice(cl.get_platforms()[0], backend)])


def _run_both_kernels(ctx: cl.Context) -> None:
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SOURCE).build()
    x = np.arange(1024, dtype=np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
    prg.scale(queue, (1024,), (64,), buf, np.float32(2.0))
    out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 16 * 4)
    prg.group_sum(queue, (1024,), (64,), buf, out, cl.LocalMemory(64 * 4))
    sums = np.empty(16, np.float32)
    cl.enqueue_copy(queue, sums, out)
    np.testing.assert_allclose(sums, (2 * x).reshape(16, 64).sum(axis=1))


def test_serial_device_runs_kernels_in_the_launching_thread() -> None:
    device = SerialDevice()
    assert device.info.threads == 1 and device.info.name.startswith("serial-")
    assert device.pool.threads == 1  # a pool of one thread: the launching one
    ctx = _context(device)
    assert ctx.devices[0].max_compute_units == 1
    _run_both_kernels(ctx)


def test_serial_device_listed_by_the_environment() -> None:
    script = ("import ppcl; print(';'.join(d.name.split('-')[0] "
              "for d in ppcl.get_platforms()[0].get_devices()))")
    env = {**os.environ, "PPCL_DEVICES": "cpu,serial"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert out.strip() == "cpu;serial"


def test_unknown_device_kind_is_an_opencl_error() -> None:
    script = "import ppcl; ppcl.get_platforms()[0].get_devices()"
    env = {**os.environ, "PPCL_DEVICES": "quantum"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env)
    assert result.returncode != 0
    assert "CL_DEVICE_NOT_AVAILABLE" in result.stderr and "quantum" in result.stderr


class _CountingProgram(DeviceProgram):
    def __init__(self, inner: DeviceProgram, seen: list[tuple[str, NDRange]]) -> None:
        self.inner = inner
        self.seen = seen

    def prepare(self, kernel_name: str, ndrange: NDRange) -> KernelLaunch:
        self.seen.append((kernel_name, ndrange))
        return self.inner.prepare(kernel_name, ndrange)


class CountingDevice(Device):
    """A device written against the interface alone: it records what the runtime asks of it
    and lets a one-thread CPU device do the work."""

    def __init__(self) -> None:
        self.inner = CPUDevice(threads=1)
        self.info = self.inner.info
        self.prepared: list[tuple[str, NDRange]] = []
        self.allocations = 0
        self.submitted = 0

    def build(self, module: ir.Module, options: BuildOptions, debug: Debug) -> DeviceProgram:
        return _CountingProgram(self.inner.build(module, options, debug), self.prepared)

    def default_local_size(self, global_size: tuple[int, int, int],
                           work_dim: int) -> tuple[int, int, int]:
        return self.inner.default_local_size(global_size, work_dim)

    def allocate(self, nbytes: int):  # type: ignore[no-untyped-def]
        self.allocations += 1
        return self.inner.allocate(nbytes)

    def submit(self, task: Callable[[], None]) -> None:
        self.submitted += 1
        self.inner.submit(task)


def test_a_device_defined_outside_ppcl_plugs_in(monkeypatch: pytest.MonkeyPatch) -> None:
    counting = CountingDevice()
    ctx = _context(counting)
    _run_both_kernels(ctx)
    assert [name for name, _ in counting.prepared] == ["scale", "group_sum"]
    assert counting.prepared[0][1] == NDRange(1, (1024, 1, 1), (64, 1, 1), (0, 0, 0))
    assert counting.allocations == 2
    # an out-of-order queue hands its commands to the device's executor
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64)
    user = cl.UserEvent(ctx)
    cl.enqueue_fill_buffer(queue, buf, np.float32(1), 0, 64, wait_for=[user])
    user.set_status(cl.command_execution_status.COMPLETE)
    queue.finish()
    assert counting.submitted >= 1
    # and it can be listed by name like the built-in ones
    monkeypatch.setitem(devices.DEVICE_KINDS, "counting", lambda settings: counting)
    monkeypatch.setenv("PPCL_DEVICES", "counting")
    assert devices.listed_devices(read_settings()) == [counting]


def test_argument_values_reach_the_device_as_interface_values() -> None:
    counting = CountingDevice()
    ctx = _context(counting)
    prg = cl.Program(ctx, SOURCE).build()
    kernel = prg.group_sum
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 256)
    kernel.set_args(buf, None, cl.LocalMemory(32))
    values: tuple[ArgValue, ...] = tuple(a for a in kernel._args if a is not None)
    assert values[0] == BufferArg(buf.address, buf)
    assert values[1] == BufferArg(0)
    assert values[2] == LocalArg(32)
    scale = prg.scale
    scale.set_arg(1, np.float32(0.5))
    assert scale._args[1] == ValueArg(np.float32(0.5).tobytes())


def test_an_unusable_debug_setting_fails_the_build_with_its_name(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = cl.create_some_context(interactive=False)
    monkeypatch.setenv("PPCL_DEBUG", "everything")
    with pytest.raises(cl.Error, match="BUILD_PROGRAM_FAILURE.*PPCL_DEBUG"):
        cl.Program(ctx, SOURCE).build()
