"""The checking device: kernels run by interpreting the typed IR, with every access checked.

It is the oracle of the project (DESIGN.md, decision 8) and a bug finder for users: select it
with ``PPCL_DEVICES=check`` and an unmodified program runs on it. Each launch runs its
work-groups in order (``interp.py``): kernels without barriers and ``__local`` memory many
groups per numpy step, the others one group at a time. What it finds (``findings.py``) is
raised at the launch as ``KernelCheckFailed`` (the runtime's ``ppcl.KernelCheckError``); with
``PPCL_CHECK=collect`` launches go on and every finding is raised at ``finish``.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ppcl.compiler.frontend.options import BuildOptions
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.layout import static_local_layout
from ppcl.compiler.ir.types import AddressSpace, PointerType, scalar_of
from ppcl.devices.check import memory as mem
from ppcl.devices.check import values as val
from ppcl.devices.check.builtins import BuiltinTable, unsupported_builtins
from ppcl.devices.check.findings import FindingLog, summary
from ppcl.devices.check.interp import Interpreter, local_object
from ppcl.devices.check.lanes import Lanes
from ppcl.devices.check.values import Ptr, Unsupported
from ppcl.devices.cpu.args import local_bytes
from ppcl.devices.cpu.device import HostDevice, host_device_info
from ppcl.devices.cpu.probe import probe_cpu
from ppcl.devices.host_memory import Allocation as HostAllocation
from ppcl.devices.interface import (
    Allocation,
    ArgValue,
    BufferArg,
    DeviceBuildError,
    DeviceProgram,
    KernelCheckFailed,
    KernelFault,
    KernelLaunch,
    LocalArg,
    NDRange,
)
from ppcl.settings import Debug

# lanes one numpy step runs: many groups at once (their __local objects side by side);
# fewer when groups have barriers or __local memory, whose objects grow with the batch
BATCH_LANES = 1 << 16
GROUPED_BATCH_LANES = 1 << 14
_BUILTINS = BuiltinTable()


def _calls(module: ir.Module, kernel: ir.Function, names: frozenset[str]) -> bool:
    """Whether the kernel, or a function it calls, calls one of ``names``."""
    functions = {f.name: f for f in module.functions}
    seen: set[str] = set()

    def visit(node: Any) -> bool:
        if isinstance(node, tuple):
            return any(visit(item) for item in node)
        if isinstance(node, ir.Call):
            if node.name in names:
                return True
            if node.builtin is None and node.name not in seen:
                seen.add(node.name)
                callee = functions.get(node.name)
                if callee is not None and visit(callee.body):
                    return True
        if isinstance(node, ir.VarDecl) and node.space is AddressSpace.LOCAL and \
                "__local" in names:
            return True
        if isinstance(node, (ir.Expr, ir.Stmt)):
            return any(visit(getattr(node, name)) for name in node.__dataclass_fields__
                       if name not in ("type", "loc"))
        return False

    return visit(kernel.body)


class CheckLaunch(KernelLaunch):
    """One kernel over one NDRange, interpreted with checks."""

    def __init__(self, device: CheckDevice, module: ir.Module, kernel: ir.Function,
                 ndrange: NDRange) -> None:
        self.device = device
        self.module = module
        self.kernel = kernel
        self.ndrange = ndrange
        # the kernel's own __local variables, laid out as the CPU device lays them out, so a
        # launch that needs more local memory than the device has fails here as it does there
        self.static_local_bytes = static_local_layout(kernel.body)[1] \
            if kernel.body is not None else 0
        grouped = any(isinstance(p.type, PointerType) and p.type.space is AddressSpace.LOCAL
                      for p in kernel.params) or \
            _calls(module, kernel, frozenset({"barrier", "work_group_barrier", "__local"}))
        local = ndrange.local_size
        per_group = local[0] * local[1] * local[2]
        lanes = GROUPED_BATCH_LANES if grouped else BATCH_LANES
        self.groups_per_batch = max(1, lanes // per_group)

    def local_bytes(self, args: Sequence[ArgValue]) -> int:
        return local_bytes(args, self.static_local_bytes)

    def run(self, args: Sequence[ArgValue]) -> None:
        device = self.device
        log = device.collected if device.collect else FindingLog()
        regions: list[mem.Region | None] = []
        interp = Interpreter(self.module, self.kernel, log, regions, device.collect, _BUILTINS)
        params, local_args = self._arguments(args, regions)
        total = self.ndrange.group_count
        first = 0
        try:
            constants_ready = False
            while first < total:
                groups = min(self.groups_per_batch, total - first)
                lanes = Lanes(self.ndrange, first, groups)
                values = {name: val.broadcast(value, lanes.count) if not isinstance(value, Ptr)
                          else Ptr(value.region, np.zeros(lanes.count, np.int64))
                          for name, value in params.items()}
                for name, nbytes, granule in local_args:
                    regions.append(local_object(name, nbytes, granule, lanes))
                    values[name] = Ptr(len(regions) - 1, np.zeros(lanes.count, np.int64))
                if not constants_ready:
                    self._constants(interp, lanes)
                    constants_ready = True
                interp.group_locals = {}
                interp.run_batch(lanes, values, [])
                for rid in list(interp.group_locals.values()):
                    regions[rid] = None
                first += groups
                if interp.found and not device.collect:
                    break
        except Unsupported as error:
            raise KernelFault(f"the checking device cannot run kernel '{self.kernel.name}': "
                              f"{error} is not supported") from None
        except (KernelFault, KernelCheckFailed):
            raise
        except Exception as error:  # an interpreter bug: say so, keep the traceback
            raise KernelFault(f"internal error of the checking device running kernel "
                              f"'{self.kernel.name}' ({type(error).__name__}: {error}); a ppcl "
                              "bug, please report it with this kernel") from error
        if not device.collect and log:
            findings = log.findings()
            raise KernelCheckFailed(summary(findings), findings)

    def _constants(self, interp: Interpreter, lanes: Lanes) -> None:
        """Program-scope ``__constant`` variables, as regions of their own."""
        interp.lanes = lanes
        for decl in self.module.decls:
            if not isinstance(decl, ir.GlobalVar):
                continue
            d = decl.decl
            size = d.type.size
            region = mem.Region(d.name, "constant", np.zeros(size + 16, np.uint8), 0, size,
                                _element(d.type))
            interp.regions.append(region)
            rid = len(interp.regions) - 1
            interp.globals[d.name] = rid
            if d.init is not None:
                one = np.zeros(lanes.count, np.bool_)
                one[0] = True
                interp.frame = interp._new_frame(self.kernel, lanes.count)
                interp.epochs = np.zeros(lanes.count, np.int64)
                interp.initialize(Ptr(rid, np.zeros(lanes.count, np.int64)), d.type, d.init,
                                  one)

    def _arguments(self, args: Sequence[ArgValue], regions: list[mem.Region | None]
                   ) -> tuple[dict[str, Any], list[tuple[str, int, int]]]:
        params: dict[str, Any] = {}
        local_args: list[tuple[str, int, int]] = []
        shadows: dict[tuple[int, int], mem.Shadow] = {}
        for p, arg in zip(self.kernel.params, args):
            if isinstance(arg, LocalArg):
                local_args.append((p.name, arg.nbytes, _element(p.type)))
                continue
            if isinstance(arg, BufferArg):
                if arg.address == 0:
                    params[p.name] = Ptr(-1, np.zeros(1, np.int64))
                    continue
                allocation = self.device.allocation_at(arg.address)
                if allocation is None:
                    raise KernelFault(f"argument '{p.name}' of kernel '{self.kernel.name}' "
                                      "is not memory of the checking device")
                base = arg.address - allocation.address
                size = getattr(arg.owner, "size", len(allocation.array) - base)
                granule = _element(p.type)
                assert isinstance(p.type, PointerType)
                space = "constant" if p.type.space is AddressSpace.CONSTANT else "global"
                shadow = None
                if space == "global":
                    key = (allocation.address, granule)
                    shadow = shadows.get(key)
                    if shadow is None:
                        shadow = mem.Shadow(len(allocation.array), granule)
                        shadows[key] = shadow
                regions.append(mem.Region(p.name, space, allocation.array, base, size, granule,
                                          shadow=shadow, owner=arg.owner))
                params[p.name] = Ptr(len(regions) - 1, np.zeros(1, np.int64))
                continue
            params[p.name] = val.from_bytes(p.type, arg.data, 1)
        return params, local_args


def _element(t: Any) -> int:
    while hasattr(t, "pointee") or hasattr(t, "elem") and not hasattr(t, "width"):
        t = t.pointee if hasattr(t, "pointee") else t.elem
    elem = scalar_of(t)
    if elem is not None:
        return elem.size
    try:
        return int(t.size)
    except TypeError:
        return 1


class CheckProgram(DeviceProgram):
    def __init__(self, device: CheckDevice, module: ir.Module) -> None:
        self.device = device
        self.module = module
        self._launches: dict[tuple[str, NDRange], CheckLaunch] = {}

    def prepare(self, kernel_name: str, ndrange: NDRange) -> CheckLaunch:
        key = (kernel_name, ndrange)
        launch = self._launches.get(key)
        if launch is not None:
            return launch
        kernel = next((k for k in self.module.kernels if k.name == kernel_name), None)
        if kernel is None:
            raise DeviceBuildError(f"no kernel '{kernel_name}' in the program")
        missing = unsupported_builtins(self.module, kernel)
        if missing:
            name, loc = missing[0]
            raise DeviceBuildError(f"{loc}: the checking device does not implement the builtin "
                                   f"'{name}' (kernel '{kernel_name}')")
        launch = CheckLaunch(self.device, self.module, kernel, ndrange)
        self._launches[key] = launch
        return launch


class CheckDevice(HostDevice):
    """The checking device (see the module docstring); ``collect`` keeps findings for
    ``finish`` instead of raising them at the launch."""

    def __init__(self, collect: bool = False) -> None:
        # the checking device holds kernels to OpenCL 1.2's memory model: no consistency
        # between the work-groups of one launch, whatever the host's threads would give
        super().__init__(replace(host_device_info(probe_cpu(), "ppcl checking device", 1),
                                 fenced_writes_cross_groups=False))
        self.collect = collect
        self.collected = FindingLog()
        self._starts: list[int] = []
        self._allocations: dict[int, HostAllocation] = {}
        self._lock = threading.Lock()

    def build(self, module: ir.Module, options: BuildOptions, debug: Debug) -> CheckProgram:
        return CheckProgram(self, module)

    def allocate(self, nbytes: int) -> Allocation:
        allocation = _TrackedAllocation(self, self.allocator.allocate(nbytes))
        with self._lock:
            bisect.insort(self._starts, allocation.address)
            self._allocations[allocation.address] = allocation.inner
        return allocation

    def forget(self, address: int) -> None:
        with self._lock:
            index = bisect.bisect_left(self._starts, address)
            if index < len(self._starts) and self._starts[index] == address:
                self._starts.pop(index)
                self._allocations.pop(address, None)

    def allocation_at(self, address: int) -> HostAllocation | None:
        """The allocation holding ``address`` (a buffer or a sub-buffer's start)."""
        with self._lock:
            index = bisect.bisect_right(self._starts, address) - 1
            if index < 0:
                return None
            allocation = self._allocations[self._starts[index]]
        if address < allocation.address + max(1, len(allocation.array)):
            return allocation
        return None

    collects_failures = True

    def collected_failure(self) -> KernelCheckFailed | None:
        if not self.collected:
            return None
        findings = self.collected.take()
        return KernelCheckFailed(summary(findings), findings)


class _TrackedAllocation(Allocation):
    """An allocation the device can find again by address (kernel arguments are addresses)."""

    def __init__(self, device: CheckDevice, inner: HostAllocation) -> None:
        self.device = device
        self.inner = inner
        self.array = inner.array
        self.address = inner.address

    def release(self) -> None:
        self.device.forget(self.address)
        self.inner.release()
