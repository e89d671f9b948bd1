"""Programs: ``Program(ctx, source).build(options)``, separate compile and link, build info.

A build runs the front end once (its typed IR is kept, and shared between builds of the same
source and options in this process) and hands the IR to each device
(``ppcl.devices.interface.Device.build``); a device may compile a kernel when it is first
launched with a given shape, as the CPU device does (its work-group function is specialized
for the local size).
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ppcl.compiler.frontend import (
    BuildOptions,
    BuildOptionsError,
    CompileError,
    KernelSignature,
    compile_source,
    kernel_signatures,
    parse_build_options,
    preprocess_source,
)
from ppcl.devices.interface import DeviceBuildError, DeviceProgram, KernelLaunch, NDRange
from ppcl.runtime.constants import (
    build_status,
    program_binary_type,
    program_build_info,
    program_info,
)
from ppcl.runtime.errors import make_error
from ppcl.settings import Settings, SettingsError, read_settings

if TYPE_CHECKING:
    from ppcl.runtime.context import Context
    from ppcl.runtime.kernel import Kernel
    from ppcl.runtime.platform import Device

_FRONTEND_CACHE_SIZE = 64
_frontend_cache: OrderedDict[tuple[str, str, tuple[tuple[str, str], ...]], Any] = OrderedDict()
_frontend_lock = threading.Lock()


class CompilerWarning(UserWarning):
    """A non-empty build log, shown when ``PPCL_COMPILER_OUTPUT=1`` (or PyOpenCL's variable)."""


def _option_string(options: str | Sequence[str] | None) -> str:
    if options is None:
        return ""
    if isinstance(options, str):
        return options
    return " ".join(str(o) for o in options)


def _frontend(source: str, options: str, headers: dict[str, str],
              filename: str) -> tuple[Any, dict[str, KernelSignature]]:
    """The front end's result and the kernels' signatures, shared by every build of the same
    source, options and headers in this process."""
    key = (source, options, tuple(sorted(headers.items())))
    with _frontend_lock:
        if key in _frontend_cache:
            _frontend_cache.move_to_end(key)
            return _frontend_cache[key]
    compiled = compile_source(source, filename, options, headers=headers or None)
    result = (compiled, kernel_signatures(compiled.module))
    with _frontend_lock:
        _frontend_cache[key] = result
        while len(_frontend_cache) > _FRONTEND_CACHE_SIZE:
            _frontend_cache.popitem(last=False)
    return result


def _show_log(log: str, device: Device, settings: Settings) -> None:
    if not log.strip():
        return
    if settings.compiler_output:
        warnings.warn(f"Built kernel on {device!r} with a non-empty log:\n{log}",
                      CompilerWarning, stacklevel=3)


class Program:
    """An OpenCL program: source text, its build options, status, log and kernels."""

    def __init__(self, context: Context, source: str | Sequence[Any],
                 binaries: Sequence[bytes] | None = None) -> None:
        if not isinstance(source, str) or binaries is not None:
            raise make_error("clCreateProgramWithBinary", "INVALID_BINARY",
                             "ppcl builds programs from OpenCL C source only")
        self.context = context
        self.source = source
        self.filename = "<source>"
        self._status = build_status.NONE
        self._binary_type = program_binary_type.NONE
        self._options = ""
        self._log = ""
        self._headers: dict[str, str] = {}
        self._module: Any = None  # the front end's IR module, handed to devices
        self._build_options = BuildOptions()
        self._settings = Settings()
        self._kernels: dict[str, KernelSignature] = {}
        self._device_programs: dict[Device, DeviceProgram] = {}
        self._device_lock = threading.Lock()
        self._preprocessed_text = ""

    # ------------------------------------------------------------------ building

    def _run_frontend(self, options: str, headers: dict[str, str], routine: str,
                      devices: Sequence[Device] | None) -> None:
        device = (list(devices) if devices else self.context.devices)[0]
        self._options = options
        self._headers = headers
        self._status = build_status.IN_PROGRESS
        try:
            self._settings = read_settings()
            result, signatures = _frontend(self.source, options, headers, self.filename)
        except BuildOptionsError as error:
            self._status = build_status.ERROR
            self._log = str(error)
            raise make_error(routine, "INVALID_BUILD_OPTIONS", str(error)) from error
        except SettingsError as error:  # PPCL_DEBUG changed to a value ppcl cannot use
            self._status = build_status.ERROR
            self._log = str(error)
            raise make_error(routine, "BUILD_PROGRAM_FAILURE", str(error)) from error
        except CompileError as error:
            self._status = build_status.ERROR
            self._log = error.log
            failure = "COMPILE_PROGRAM_FAILURE" if routine == "clCompileProgram" \
                else "BUILD_PROGRAM_FAILURE"
            raise make_error(routine, failure,
                             f"\n\nBuild on {device!r}:\n\n{error.log}") from error
        self._log = result.log
        self._module = result.module
        self._build_options = result.options
        self._kernels = signatures
        self._device_programs = {}
        self._status = build_status.SUCCESS
        _show_log(result.log, device, self._settings)

    def build(self, options: str | Sequence[str] | None = None,
              devices: Sequence[Device] | None = None, cache_dir: str | None = None) -> Program:
        """Compile the source for the context's devices; returns ``self`` as PyOpenCL does."""
        self._run_frontend(_option_string(options), {}, "clBuildProgram", devices)
        self._build_for_devices("clBuildProgram", devices)
        self._binary_type = program_binary_type.EXECUTABLE
        return self

    def _build_for_devices(self, routine: str, devices: Sequence[Device] | None) -> None:
        """Each device's program now, so what a device's compiler rejects (its C compiler on
        the CPU device) fails the build, not the first launch."""
        for device in list(devices) if devices else self.context.devices:
            try:
                self._device_program(device)
            except DeviceBuildError as error:
                self._status = build_status.ERROR
                self._log = f"{error}\n{error.log}"
                raise make_error(routine, "BUILD_PROGRAM_FAILURE",
                                 f"\n\nBuild on {device!r}:\n\n{self._log}") from error

    def compile(self, options: str | Sequence[str] | None = None,
                devices: Sequence[Device] | None = None,
                headers: Sequence[tuple[str, Program]] | None = None) -> Program:
        """Compile to an object for ``link_program``; ``headers`` are (include name, Program).

        An object may call functions that another object defines, so compiling preprocesses
        the unit (reporting include and macro errors) and the semantic checks run at link time,
        over the linked program.
        """
        device = (list(devices) if devices else self.context.devices)[0]
        self._options = _option_string(options)
        self._headers = {name: program.source for name, program in (headers or [])}
        try:
            self._preprocessed_text = self._preprocessed()
        except BuildOptionsError as error:
            self._status = build_status.ERROR
            self._log = str(error)
            raise make_error("clCompileProgram", "INVALID_BUILD_OPTIONS", str(error)) from error
        except CompileError as error:
            self._status = build_status.ERROR
            self._log = error.log
            raise make_error("clCompileProgram", "COMPILE_PROGRAM_FAILURE",
                             f"\n\nBuild on {device!r}:\n\n{error.log}") from error
        self._log = ""
        self._status = build_status.SUCCESS
        self._binary_type = program_binary_type.COMPILED_OBJECT
        return self

    def _preprocessed(self) -> str:
        return preprocess_source(self.source, self.filename, parse_build_options(self._options),
                                 self._headers)

    # ------------------------------------------------------------------ kernels

    def _kernel_signature(self, name: str) -> KernelSignature:
        if self._status != build_status.SUCCESS or self._module is None:
            raise make_error("clCreateKernel", "INVALID_PROGRAM_EXECUTABLE",
                             "the program has not been built")
        signature = self._kernels.get(name)
        if signature is None:
            known = ", ".join(sorted(self._kernels)) or "none"
            raise make_error("clCreateKernel", "INVALID_KERNEL_NAME",
                             f"no kernel named '{name}' (kernels: {known})")
        return signature

    def _device_program(self, device: Device) -> DeviceProgram:
        """The program built for ``device`` (each device builds from the same IR once)."""
        program = self._device_programs.get(device)
        if program is None:
            with self._device_lock:
                program = self._device_programs.get(device)
                if program is None:
                    program = device.backend.build(self._module, self._build_options,
                                                   self._settings.debug)
                    self._device_programs[device] = program
        return program

    def _prepare_launch(self, name: str, device: Device, ndrange: NDRange) -> KernelLaunch:
        """The device's launch of kernel ``name`` over ``ndrange`` (compiling it if needed)."""
        try:
            return self._device_program(device).prepare(name, ndrange)
        except DeviceBuildError as error:
            raise make_error("clEnqueueNDRangeKernel", "BUILD_PROGRAM_FAILURE",
                             f"kernel '{name}' for local size {ndrange.local_size}: "
                             f"{error}\n{error.log}") from error

    def all_kernels(self) -> list[Kernel]:
        from ppcl.runtime.kernel import Kernel

        if self._status != build_status.SUCCESS:
            raise make_error("clCreateKernelsInProgram", "INVALID_PROGRAM_EXECUTABLE",
                             "the program has not been built")
        return [Kernel(self, name) for name in self._kernels]

    @property
    def kernel_names(self) -> str:
        return ";".join(self._kernels)

    def __getattr__(self, name: str) -> Kernel:
        if name.startswith("_"):
            raise AttributeError(name)
        from ppcl.runtime.errors import Error
        from ppcl.runtime.kernel import Kernel

        try:
            return Kernel(self, name)
        except Error as error:
            raise AttributeError(f"'Program' object has no attribute '{name}': {error}") from None

    # ------------------------------------------------------------------ info

    def get_build_info(self, device: Device, param: int) -> Any:
        values: dict[int, Any] = {
            program_build_info.STATUS: self._status,
            program_build_info.OPTIONS: self._options,
            program_build_info.LOG: self._log,
            program_build_info.BINARY_TYPE: self._binary_type,
        }
        if param not in values:
            raise make_error("clGetProgramBuildInfo", "INVALID_VALUE",
                             f"unknown program_build_info {param}")
        return values[param]

    def get_info(self, param: int) -> Any:
        values: dict[int, Any] = {
            program_info.REFERENCE_COUNT: 1,
            program_info.CONTEXT: self.context,
            program_info.NUM_DEVICES: len(self.context.devices),
            program_info.DEVICES: list(self.context.devices),
            program_info.SOURCE: self.source,
            program_info.BINARY_SIZES: [0] * len(self.context.devices),
            program_info.BINARIES: [b""] * len(self.context.devices),
            program_info.NUM_KERNELS: len(self._kernels),
            program_info.KERNEL_NAMES: self.kernel_names,
        }
        if param not in values:
            raise make_error("clGetProgramInfo", "INVALID_VALUE", f"unknown program_info {param}")
        return values[param]

    @property
    def int_ptr(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<ppcl.Program at 0x{id(self):x}>"


def link_program(context: Context, programs: Sequence[Program],
                 options: str | Sequence[str] | None = None,
                 devices: Sequence[Device] | None = None) -> Program:
    """Link compiled programs into one executable program.

    Each unit is preprocessed with its own options and headers; the texts (which carry line
    markers naming the original files) are joined and built as one program.
    """
    for program in programs:
        if program._binary_type != program_binary_type.COMPILED_OBJECT:
            raise make_error("clLinkProgram", "INVALID_PROGRAM",
                             "link_program takes programs made by Program.compile")
    text = "\n".join(program._preprocessed_text for program in programs)
    linked = Program(context, text)
    linked.filename = "<linked>"
    try:
        linked.build(options, devices)
    except Exception as error:
        from ppcl.runtime.errors import Error

        if isinstance(error, Error) and error.code == -11:
            raise make_error("clLinkProgram", "LINK_PROGRAM_FAILURE", str(error)) from error
        raise
    return linked
