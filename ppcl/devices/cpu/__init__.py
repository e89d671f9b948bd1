"""The threaded CPU device: compile driver (``build``), argument layout (``args``), the native
work-group pool (``native`` over ``runtime.c``), the host probe (``probe``) and the device
itself (``device``)."""

from ppcl.devices.cpu.device import CPUDevice, CPUProgram, choose_local_size
from ppcl.devices.cpu.native import NativePool
from ppcl.devices.cpu.probe import CPUInfo, configured_threads, probe_cpu

__all__ = ["CPUDevice", "CPUInfo", "CPUProgram", "NativePool", "choose_local_size",
           "configured_threads", "probe_cpu"]
