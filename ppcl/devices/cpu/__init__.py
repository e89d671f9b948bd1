"""The threaded CPU device: compile driver (``build``), argument layout (``args``), the
work-group pool (``pool``), the host probe (``probe``) and the device itself (``device``)."""

from ppcl.devices.cpu.device import CPUDevice, CPUProgram, choose_local_size
from ppcl.devices.cpu.pool import LOCAL_MEM_ALIGN, WorkGroupPool
from ppcl.devices.cpu.probe import CPUInfo, configured_threads, probe_cpu

__all__ = ["LOCAL_MEM_ALIGN", "CPUDevice", "CPUInfo", "CPUProgram", "WorkGroupPool",
           "choose_local_size", "configured_threads", "probe_cpu"]
