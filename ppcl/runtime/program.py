"""Programs: ``Program(ctx, source).build(options)``, ``Program(ctx, devices, binaries)``,
separate compile and link (``-create-library``), per-device build info and program info.

A build runs the front end once (its typed IR is kept, and shared between builds of the same
source and options in this process) and hands the IR to each device
(``ppcl.devices.interface.Device.build``); a device may compile a kernel when it is first
launched with a given shape, as the CPU device does (its work-group function is specialized
for the local size).

A program's binary (``program.binaries``) is the front end's result made self-describing
(``compiler/frontend/binary.py``): the typed IR and build options of an executable, the
preprocessed text of a compiled object or library, so ``Program(ctx, devices, binaries)``
rebuilds it without the source; bytes that are not such a binary are refused with
``CL_INVALID_BINARY`` and the reason.
"""

from __future__ import annotations

import dataclasses
import threading
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ppcl.compiler.diagnostics import SourceMap, format_all
from ppcl.compiler.frontend import (
    BinaryError,
    BuildOptions,
    BuildOptionsError,
    CompileError,
    FrontendResult,
    KernelSignature,
    ProgramBinary,
    compile_source,
    decode_binary,
    encode_binary,
    kernel_signatures,
    parse_build_options,
    preprocess_source,
)
from ppcl.compiler.frontend import binary as binary_kinds
from ppcl.devices.interface import DeviceBuildError, DeviceProgram, KernelLaunch, NDRange
from ppcl.runtime.constants import (
    build_status,
    constant_names,
    program_binary_type,
    program_build_info,
    program_info,
)
from ppcl.runtime.context import Context
from ppcl.runtime.errors import Error, make_error
from ppcl.runtime.handles import Handle
from ppcl.runtime.kernel import Kernel
from ppcl.runtime.platform import Platform
from ppcl.settings import Settings, SettingsError, read_settings

if TYPE_CHECKING:
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
    if not isinstance(options, Sequence) or not all(isinstance(o, str) for o in options):
        raise make_error("clBuildProgram", "INVALID_BUILD_OPTIONS",
                         f"build options are a string or a list of strings, not {options!r}")
    return " ".join(options)


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


_BINARY_TYPES = {binary_kinds.EXECUTABLE: program_binary_type.EXECUTABLE,
                 binary_kinds.COMPILED_OBJECT: program_binary_type.COMPILED_OBJECT,
                 binary_kinds.LIBRARY: program_binary_type.LIBRARY}
# options of clLinkProgram that are not build options
_LINK_ONLY_OPTIONS = ("-create-library", "-enable-link-options")


def _decoded_source(source: bytes | bytearray) -> str:
    try:
        return bytes(source).decode("utf-8")
    except UnicodeDecodeError as error:
        raise make_error("clCreateProgramWithSource", "INVALID_VALUE",
                         f"the program source is bytes that are not UTF-8 text: {error}") from None


class Program(Handle):
    """An OpenCL program: source text (or a binary), its build options, status, log and
    kernels.

    ``Program(context, source)`` or, as PyOpenCL spells clCreateProgramWithBinary,
    ``Program(context, devices, binaries)`` with one binary per device. ``source`` may also be
    the front end's result for a module built as IR (``compile_module``, used by
    ``ppcl.patterns``): its build skips the front end."""

    def __init__(self, context: Context, source: str | Sequence[Device] | FrontendResult,
                 binaries: Sequence[bytes] | None = None) -> None:
        if not isinstance(context, Context):
            raise make_error("clCreateProgramWithSource", "INVALID_CONTEXT",
                             f"{context!r} is not a Context")
        if binaries is None and isinstance(source, bytes | bytearray):
            source = _decoded_source(source)  # PyOpenCL takes source as bytes too
        self.context = context
        self.filename = "<source>"
        self._loaded: ProgramBinary | None = None  # what the binaries held
        self._devices: list[Device] = list(context.devices)
        self._targets: set[Device] = set()  # the devices of the last build, compile or link
        self._binaries: bytes | None = None  # the binary of the built program, made once
        self._loaded_bytes = b""  # the binary the program was made from
        self._prebuilt: FrontendResult | None = None  # a module built as IR, not from text
        if isinstance(source, FrontendResult):
            self._prebuilt = source
            source = ""
        if binaries is None:
            if not isinstance(source, str):
                raise make_error("clCreateProgramWithSource", "INVALID_VALUE",
                                 "Program(context, source) takes OpenCL C text; a program "
                                 "from binaries is Program(context, devices, binaries)")
            self.source = source
        else:
            self.source = ""
            self._loaded = self._load_binaries(context, source, binaries)
        self._status = build_status.NONE
        self._binary_type = program_binary_type.NONE
        self._options = ""
        self._log = ""
        self._headers: dict[str, str] = {}
        self._module: Any = None  # the front end's IR module, handed to devices
        self._sources = SourceMap()  # the text the module came from (none from binaries)
        self._build_options = BuildOptions()
        self._settings = Settings()
        self._kernels: dict[str, KernelSignature] = {}
        self._device_programs: dict[Device, DeviceProgram] = {}
        # per kernel name, the checked launches by the shape a host passes (see _launches_of)
        self._launch_caches: dict[str, dict[Any, KernelLaunch]] = {}
        self._device_lock = threading.Lock()
        self._preprocessed_text = ""
        if self._loaded is not None:
            self._binary_type = _BINARY_TYPES[self._loaded.kind]
            self._preprocessed_text = self._loaded.text

    def _load_binaries(self, context: Context, devices: Any,
                       binaries: Sequence[bytes]) -> ProgramBinary:
        """The program the binaries hold (each device's is checked; ppcl's devices all build
        from the same IR, so the first is used)."""
        routine = "clCreateProgramWithBinary"
        if isinstance(devices, str) or not isinstance(devices, Sequence):
            raise make_error(routine, "INVALID_VALUE", "Program(context, devices, binaries) "
                             "takes a list of devices")
        devices = list(devices)
        if not devices or len(devices) != len(binaries):
            raise make_error(routine, "INVALID_VALUE",
                             f"{len(devices)} devices and {len(binaries)} binaries: give one "
                             "binary per device")
        for device in devices:
            if device not in context.devices:
                raise make_error(routine, "INVALID_DEVICE",
                                 f"{device!r} is not a device of the context")
        loaded = []
        for index, data in enumerate(binaries):
            if not isinstance(data, bytes | bytearray | memoryview):
                raise make_error(routine, "INVALID_VALUE",
                                 f"binary {index} is a {type(data).__name__}, not bytes")
            try:
                loaded.append(decode_binary(bytes(data)))
            except BinaryError as error:
                raise make_error(routine, "INVALID_BINARY",
                                 f"binary {index} (for {devices[index]!r}): {error}") from error
        self._devices = devices
        self._loaded_bytes = bytes(binaries[0])
        return loaded[0]

    @property
    def devices(self) -> list[Device]:
        """The devices the program is for."""
        return list(self._devices)

    def _check_device(self, routine: str, device: Device) -> None:
        if device not in self._devices:
            raise make_error(routine, "INVALID_DEVICE",
                             f"{device!r} is not a device of the program")

    def _target(self, routine: str, devices: Sequence[Device] | None) -> list[Device]:
        """The devices a build, compile or link is for: ``devices`` checked, or all of the
        program's."""
        if not devices:
            return list(self._devices)
        for device in devices:
            self._check_device(routine, device)
        return list(devices)

    # ------------------------------------------------------------------ building

    def _run_frontend(self, options: str, headers: dict[str, str], routine: str,
                      devices: Sequence[Device] | None, source: str | None = None) -> None:
        targets = self._target(routine, devices)
        device = targets[0]
        self._targets = set(targets)
        self._binaries = None
        self._options = options
        self._headers = headers
        self._status = build_status.IN_PROGRESS
        try:
            self._settings = read_settings()
            result, signatures = _frontend(self.source if source is None else source,
                                           options, headers, self.filename)
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
        self._sources = result.sources
        self._build_options = result.options
        self._kernels = signatures
        self._device_programs = {}
        self._launch_caches = {}
        self._status = build_status.SUCCESS
        _show_log(result.log, device, self._settings)

    def build(self, options: str | Sequence[str] | None = None,
              devices: Sequence[Device] | None = None, cache_dir: str | None = None) -> Program:
        """Compile the source (or load the binaries) for the program's devices; returns
        ``self`` as PyOpenCL does."""
        if self._loaded is not None:
            self._build_loaded(devices)
        elif self._prebuilt is not None:
            self._build_prebuilt(self._prebuilt, _option_string(options), devices)
        else:
            self._run_frontend(_option_string(options), {}, "clBuildProgram", devices)
        self._build_for_devices("clBuildProgram", devices)
        self._binary_type = program_binary_type.EXECUTABLE
        return self

    def _build_loaded(self, devices: Sequence[Device] | None) -> None:
        """The program of the binaries made executable: an executable's IR as it is, a
        compiled object's or library's text through the front end (a link of one unit)."""
        loaded = self._loaded
        assert loaded is not None
        if loaded.kind != binary_kinds.EXECUTABLE:
            self.filename = "<binary>"
            self._run_frontend(loaded.options, {}, "clBuildProgram", devices, loaded.text)
            return
        assert loaded.module is not None and loaded.build_options is not None
        self._targets = set(self._target("clBuildProgram", devices))
        self._settings = read_settings()
        self._module = loaded.module
        self._sources = SourceMap()
        self._build_options = loaded.build_options
        self._kernels = kernel_signatures(loaded.module)
        self._log = loaded.log
        self._options = loaded.options
        self._device_programs = {}
        self._launch_caches = {}
        self._status = build_status.SUCCESS

    def _build_prebuilt(self, result: FrontendResult, options: str,
                        devices: Sequence[Device] | None) -> None:
        """A program whose IR module was built directly: the front end's work is done, so the
        build takes its module and kernel signatures (options given to the build apply on top
        of the module's)."""
        self._targets = set(self._target("clBuildProgram", devices))
        self._binaries = None
        self._settings = read_settings()
        self._module = result.module
        self._sources = result.sources
        try:
            self._build_options = parse_build_options(options) if options else result.options
        except BuildOptionsError as error:
            self._status = build_status.ERROR
            self._log = str(error)
            raise make_error("clBuildProgram", "INVALID_BUILD_OPTIONS", str(error)) from error
        self._kernels = kernel_signatures(result.module)
        self._log = result.log
        self._options = options
        self._device_programs = {}
        self._launch_caches = {}
        self._status = build_status.SUCCESS

    def _build_for_devices(self, routine: str, devices: Sequence[Device] | None) -> None:
        """Each device's program now, so what a device's compiler rejects (its C compiler on
        the CPU device) fails the build, not the first launch."""
        for device in list(devices) if devices else self.context.devices:
            try:
                self._device_program(device)
            except DeviceBuildError as error:
                self._status = build_status.ERROR
                self._log = self._device_log(error)
                raise make_error(routine, "BUILD_PROGRAM_FAILURE",
                                 f"\n\nBuild on {device!r}:\n\n{self._log}") from error

    def _device_log(self, error: DeviceBuildError) -> str:
        """A device's build failure as the build log shows it: the kernel compiler's located
        errors quote the program's lines with a caret, as the front end's do."""
        if error.diagnostics:
            return f"{error}\n{format_all(error.diagnostics, self._sources)}"
        return f"{error}\n{error.log}"

    def compile(self, options: str | Sequence[str] | None = None,
                devices: Sequence[Device] | None = None,
                headers: Sequence[tuple[str, Program]] | None = None) -> Program:
        """Compile to an object for ``link_program``; ``headers`` are (include name, Program).

        The unit is checked as a whole (its errors fail the compile with
        ``CL_COMPILE_PROGRAM_FAILURE``), except that a function it declares may be defined by
        another unit; the object is its preprocessed text, which ``link_program`` joins with
        the others and builds as one program.
        """
        if self._prebuilt is not None:
            raise make_error("clCompileProgram", "INVALID_OPERATION",
                             "a program made from an IR module has no source to compile "
                             "separately; build it")
        targets = self._target("clCompileProgram", devices)
        device = targets[0]
        self._targets = set(targets)
        self._binaries = None
        self._options = _option_string(options)
        self._headers = {name: program.source for name, program in (headers or [])}
        try:
            self._preprocessed_text = self._preprocessed()
            log = compile_source(self.source, self.filename, self._options,
                                 headers=self._headers or None, separate_unit=True).log
        except BuildOptionsError as error:
            self._status = build_status.ERROR
            self._log = str(error)
            raise make_error("clCompileProgram", "INVALID_BUILD_OPTIONS", str(error)) from error
        except CompileError as error:
            self._status = build_status.ERROR
            self._log = error.log
            raise make_error("clCompileProgram", "COMPILE_PROGRAM_FAILURE",
                             f"\n\nBuild on {device!r}:\n\n{error.log}") from error
        self._log = log
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

    def _launches_of(self, name: str) -> dict[Any, KernelLaunch]:
        """The launches of kernel ``name`` by the shape a host passes, shared by every
        ``Kernel`` of that name (``prg.name(...)`` makes a new one each call, as in PyOpenCL,
        and would otherwise check its NDRange and look up the device's launch every time)."""
        cache = self._launch_caches.get(name)
        if cache is None:
            cache = self._launch_caches.setdefault(name, {})
        return cache

    def _device_program(self, device: Device) -> DeviceProgram:
        """The program built for ``device`` (each device builds from the same IR once)."""
        program = self._device_programs.get(device)
        if program is None:
            with self._device_lock:
                program = self._device_programs.get(device)
                if program is None:
                    options = self._build_options
                    if not self._settings.split:  # PPCL_SPLIT=0: as if -ppcl-no-split
                        options = dataclasses.replace(options, no_split=True)
                    program = device.backend.build(self._module, options, self._settings.debug)
                    self._device_programs[device] = program
        return program

    def _prepare_launch(self, name: str, device: Device, ndrange: NDRange) -> KernelLaunch:
        """The device's launch of kernel ``name`` over ``ndrange`` (compiling it if needed)."""
        try:
            return self._device_program(device).prepare(name, ndrange)
        except DeviceBuildError as error:
            raise make_error("clEnqueueNDRangeKernel", "BUILD_PROGRAM_FAILURE",
                             f"kernel '{name}' for local size {ndrange.local_size}: "
                             f"{self._device_log(error)}") from error

    def all_kernels(self) -> list[Kernel]:

        if self._status != build_status.SUCCESS:
            raise make_error("clCreateKernelsInProgram", "INVALID_PROGRAM_EXECUTABLE",
                             "the program has not been built")
        return [Kernel(self, name) for name in self._kernels]

    @property
    def kernel_names(self) -> str:
        return ";".join(self._kernels)

    def __getattr__(self, name: str) -> Any:
        """A program info by its lower-case name (``program.binaries``), else the kernel of
        that name, as PyOpenCL looks them up."""
        if name.startswith("_"):
            # Private and special names are the object's own (copy and pickle probe them,
            # perhaps before __init__ ran); a kernel whose name starts with an underscore,
            # as generated code often names them, is still found, as PyOpenCL finds it.
            if name not in self.__dict__.get("_kernels", ()):
                raise AttributeError(name)
            return Kernel(self, name)
        info = constant_names(program_info).get(name.upper())
        if info is not None:
            return self.get_info(info)
        try:
            return Kernel(self, name)
        except Error as error:
            raise AttributeError(f"'Program' object has no attribute '{name}': {error}") from None

    # ------------------------------------------------------------------ info

    def get_build_info(self, device: Device, param: int) -> Any:
        """What the last build, compile or link did on ``device``: a device it was not for
        reports no build (``build_status.NONE``), as OpenCL asks."""
        self._check_device("clGetProgramBuildInfo", device)
        built = device in self._targets
        values: dict[int, Any] = {
            program_build_info.STATUS: self._status if built else build_status.NONE,
            program_build_info.OPTIONS: self._options if built else "",
            program_build_info.LOG: self._log if built else "",
            program_build_info.BINARY_TYPE: self._binary_type
            if built or self._loaded is not None else program_binary_type.NONE,
        }
        if param not in values:
            raise make_error("clGetProgramBuildInfo", "INVALID_VALUE",
                             f"unknown program_build_info {param}")
        return values[param]

    def _binary(self) -> bytes:
        """The binary of the program as built, compiled or linked; the binary it was made
        from before it is built; empty otherwise."""
        if self._binaries is not None:
            return self._binaries
        if self._status != build_status.SUCCESS:
            return self._loaded_bytes
        if self._binary_type == program_binary_type.EXECUTABLE:
            program = ProgramBinary(binary_kinds.EXECUTABLE, self._options, self._log,
                                    self._module, self._build_options)
        else:
            kind = binary_kinds.LIBRARY if self._binary_type == program_binary_type.LIBRARY \
                else binary_kinds.COMPILED_OBJECT
            program = ProgramBinary(kind, self._options, self._log,
                                    text=self._preprocessed_text)
        self._binaries = encode_binary(program)
        return self._binaries

    def _device_binaries(self) -> list[bytes]:
        """One binary per device of the program; empty for a device not built for."""
        binary = self._binary()
        built = self._targets if self._status == build_status.SUCCESS else set(self._devices)
        return [binary if device in built else b"" for device in self._devices]

    def get_info(self, param: int) -> Any:
        if param in (program_info.BINARY_SIZES, program_info.BINARIES):
            binaries = self._device_binaries()
            return binaries if param == program_info.BINARIES else [len(b) for b in binaries]
        values: dict[int, Any] = {
            program_info.REFERENCE_COUNT: 1,
            program_info.CONTEXT: self.context,
            program_info.NUM_DEVICES: len(self._devices),
            program_info.DEVICES: list(self._devices),
            program_info.SOURCE: self.source,
            program_info.NUM_KERNELS: len(self._kernels),
            program_info.KERNEL_NAMES: self.kernel_names,
        }
        if param not in values:
            raise make_error("clGetProgramInfo", "INVALID_VALUE", f"unknown program_info {param}")
        return values[param]


    def __repr__(self) -> str:
        return f"<ppcl.Program at 0x{id(self):x}>"


def _link_options(programs: Sequence[Program],
                  options: str | Sequence[str] | None) -> tuple[str, bool]:
    """The build options of a link (``-cl-kernel-arg-info`` kept when a unit was compiled with
    it) and whether it makes a library (``-create-library``)."""
    words = _option_string(options).split()
    library = "-create-library" in words
    kept = [w for w in words if w not in _LINK_ONLY_OPTIONS]
    try:
        parsed = parse_build_options(" ".join(kept))
    except BuildOptionsError as error:
        raise make_error("clLinkProgram", "INVALID_LINKER_OPTIONS", str(error)) from error
    if not parsed.kernel_arg_info and any(
            "-cl-kernel-arg-info" in p._options.split() for p in programs):
        kept.append("-cl-kernel-arg-info")
    return " ".join(kept), library


def link_program(context: Context, programs: Sequence[Program],
                 options: str | Sequence[str] | None = None,
                 devices: Sequence[Device] | None = None) -> Program:
    """Link compiled programs and libraries into one executable program, or with
    ``-create-library`` into a library that later links take.

    Each unit is preprocessed with its own options and headers; the texts (which carry line
    markers naming the original files) are joined and built as one program, so what one unit
    calls and no unit defines fails the link (``CL_LINK_PROGRAM_FAILURE``, with the log).
    """
    if not programs:
        raise make_error("clLinkProgram", "INVALID_VALUE", "no programs to link")
    for index, program in enumerate(programs):
        loaded = program._loaded is not None and program._status == build_status.NONE
        if (program._status != build_status.SUCCESS and not loaded) or program._binary_type \
                not in (program_binary_type.COMPILED_OBJECT, program_binary_type.LIBRARY):
            raise make_error("clLinkProgram", "INVALID_PROGRAM",
                             f"program {index} is not a compiled object or library: "
                             "link_program takes programs made by Program.compile, "
                             "link_program(..., '-create-library') or their binaries")
    build_options, library = _link_options(programs, options)
    text = "\n".join(program._preprocessed_text for program in programs)
    linked = Program(context, text)
    linked.filename = "<linked>"
    if library:
        targets = linked._target("clLinkProgram", devices)
        linked._targets = set(targets)
        linked._options = _option_string(options)
        linked._preprocessed_text = text
        linked._status = build_status.SUCCESS
        linked._binary_type = program_binary_type.LIBRARY
        return linked
    try:
        linked.build(build_options, devices)
    except Exception as error:
        from ppcl.runtime.errors import Error

        if isinstance(error, Error) and error.code == -11:
            raise make_error("clLinkProgram", "LINK_PROGRAM_FAILURE",
                             error.what.what()) from error
        raise
    return linked


def unload_platform_compiler(platform: Platform) -> None:
    """``clUnloadPlatformCompiler`` (OpenCL 1.2): the platform's compiler may let go of what it
    holds; a later build brings it back. ppcl's front end drops its cache of translated
    program sources."""
    if not isinstance(platform, Platform):
        raise make_error("clUnloadPlatformCompiler", "INVALID_PLATFORM",
                         f"{platform!r} is not a platform")
    with _frontend_lock:
        _frontend_cache.clear()
