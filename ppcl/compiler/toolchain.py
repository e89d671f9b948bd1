"""The system C compiler: find it, build generated C into a shared object, load it.

One compiler call per build: the source is written to a temp file in the cache directory and
the compiler links the ``.so`` directly next to it (``-shared``), which is then moved into place
atomically (see ``cache.py``). Invoking gcc on a tiny file costs about 30 ms, almost all of it
process start-up of the driver, cc1 and the linker, so a cache hit must never call it.

Default flags keep IEEE semantics (``-ffp-contract=off``: no contraction into FMA, no
reassociation); only ``-fno-math-errno`` and ``-fno-trapping-math`` are added, which do not
change results because OpenCL has neither errno nor floating-point traps. Each OpenCL math
option (``-cl-mad-enable``, ``-cl-fast-relaxed-math``...) adds the individual flags that realize
it (``c_math_flags``), never ``-ffast-math`` itself: GCC before 13 links ``crtfastmath.o`` into a
shared object built with ``-ffast-math``, and loading it turns on flush-to-zero for the whole
process, numpy included.
"""

from __future__ import annotations

import ctypes
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
import weakref
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ppcl.compiler import cache
from ppcl.compiler.frontend.options import BuildOptions

FALLBACK_COMPILERS = ("gcc", "clang", "cc")
# What every "no working compiler" message tells the user to do.
FIX_COMPILER = "install gcc or set CC to a C compiler (e.g. CC=gcc or CC=clang)"

BASE_FLAGS = (
    "-O3",
    "-march=native",
    "-fopenmp-simd",
    "-fPIC",
    "-shared",
    "-std=gnu11",
    "-pipe",
    "-g0",
    "-fno-strict-aliasing",
    "-fno-math-errno",
    "-fno-trapping-math",
)
MARCH_NATIVE = "-march=native"
IEEE_FLAGS = ("-ffp-contract=off",)
# The C compiler flags that realize each OpenCL math build option (a BuildOptions field, after
# the implications the specification writes: -cl-fast-relaxed-math sets the other four).
# -cl-denorms-are-zero is a permission to flush denormals that ppcl does not take: flushing
# needs the MXCSR of the calling thread, which numpy shares.
MATH_OPTION_FLAGS: dict[str, tuple[str, ...]] = {
    "mad_enable": ("-ffp-contract=fast",),
    "no_signed_zeros": ("-fno-signed-zeros",),
    "unsafe_math_optimizations": ("-fassociative-math", "-freciprocal-math"),
    "finite_math_only": ("-ffinite-math-only",),
    "fast_relaxed_math": ("-fcx-limited-range",),
}
VECTOR_REPORT_FLAGS = {
    "gcc": ("-fopt-info-vec-optimized",),
    "clang": ("-Rpass=loop-vectorize",),
}

# The compiler's messages are parsed (vectorization report, -march rejection), so keep them in
# one language.
_COMPILER_ENV = {**os.environ, "LC_ALL": "C", "LANG": "C"}


class ToolchainError(RuntimeError):
    """The C compiler is missing or rejected a source; ``stderr`` holds its messages."""

    def __init__(self, message: str, *, stderr: str = "", source_path: Path | None = None):
        super().__init__(message)
        self.stderr = stderr
        self.source_path = source_path


@dataclass(frozen=True)
class Compiler:
    """A C compiler command line and what identifies its output.

    ``identity`` is the first line of ``--version`` and the resolved executable path; it goes
    into every cache key, so upgrading or switching the compiler never reuses stale objects.
    ``family`` is ``gcc``, ``clang`` or ``unknown`` and selects flag spellings.
    """

    argv: tuple[str, ...]
    identity: str
    family: str


@dataclass(frozen=True)
class CompiledObject:
    """A shared object in the cache; ``report`` is the compiler's diagnostics when asked for."""

    path: Path
    key: str
    report: str | None
    cached: bool
    compile_seconds: float
    command: str = ""  # the compiler and its flags, without the source and output paths


_lock = threading.Lock()
_resolved_argv: dict[tuple[str, str], tuple[str, ...]] = {}
_compilers: dict[tuple[str, ...], Compiler] = {}
_march_native_rejected: set[str] = set()
_libraries: weakref.WeakValueDictionary[str, ctypes.CDLL] = weakref.WeakValueDictionary()
_invocations = 0


def compiler_invocations() -> int:
    """How many times this process has run the compiler on a source (for tests and timing)."""
    return _invocations


def _requested_argv() -> tuple[str, ...]:
    """The compiler command line from ``$CC`` or PATH; memoised per (CC, PATH) value."""
    cc = os.environ.get("CC", "").strip()
    search_path = os.environ.get("PATH", "")
    with _lock:
        known = _resolved_argv.get((cc, search_path))
    if known is not None:
        return known
    argv = _search_argv(cc)
    with _lock:
        _resolved_argv[(cc, search_path)] = argv
    return argv


def _search_argv(cc: str) -> tuple[str, ...]:
    if cc:
        try:
            argv = tuple(shlex.split(cc))
        except ValueError as error:
            raise ToolchainError(f"no C compiler found: CC={cc!r} cannot be split into words "
                                 f"({error}); {FIX_COMPILER}") from error
        if shutil.which(argv[0]) is None:
            raise ToolchainError(
                f"no C compiler found: CC={cc!r} is not an executable; {FIX_COMPILER}"
            )
        return argv
    for name in FALLBACK_COMPILERS:
        if shutil.which(name) is not None:
            return (name,)
    raise ToolchainError(f"no C compiler found on PATH (tried gcc, clang, cc); {FIX_COMPILER}")


def _identify(argv: tuple[str, ...]) -> Compiler:
    resolved = shutil.which(argv[0])
    if resolved is None:  # removed since $CC or PATH was searched
        raise ToolchainError(f"no C compiler found: {argv[0]!r} is gone; {FIX_COMPILER}")
    resolved = os.path.realpath(resolved)
    try:
        result = subprocess.run(
            [*argv, "--version"], capture_output=True, text=True, env=_COMPILER_ENV, check=False
        )
    except OSError as error:
        raise ToolchainError(
            f"no C compiler found: cannot run {argv[0]!r}: {error}; {FIX_COMPILER}"
        ) from error
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines:
        raise ToolchainError(
            f"no C compiler found: {shlex.join(argv)} --version failed; {FIX_COMPILER}",
            stderr=result.stderr,
        )
    version = lines[0].strip()
    if "clang" in version.lower():
        family = "clang"
    elif "gcc" in version.lower() or "Free Software Foundation" in result.stdout:
        family = "gcc"
    else:
        family = "unknown"
    return Compiler(argv=argv, identity=f"{version} ({resolved})", family=family)


def find_compiler() -> Compiler:
    """``$CC`` (may carry arguments) if set, else the first of gcc, clang, cc on PATH.

    The ``--version`` call that identifies a compiler runs once per process per command line.
    """
    argv = _requested_argv()
    with _lock:
        known = _compilers.get(argv)
    if known is not None:
        return known
    compiler = _identify(argv)
    with _lock:
        _compilers.setdefault(argv, compiler)
        return _compilers[argv]


def c_math_flags(options: BuildOptions) -> tuple[str, ...]:
    """The floating-point flags of the C compile for a program built with ``options``."""
    flags: list[str] = [] if options.mad_enable else list(IEEE_FLAGS)
    for option, spelled in MATH_OPTION_FLAGS.items():
        if getattr(options, option):
            flags += spelled
    if options.fp32_correctly_rounded_divide_sqrt:
        # division and sqrt are correctly rounded unless a division becomes a multiplication
        flags = [flag for flag in flags if flag != "-freciprocal-math"]
    return tuple(flags)


def compiler_flags(
    compiler: Compiler,
    *,
    math_flags: Sequence[str] = IEEE_FLAGS,
    extra_flags: Sequence[str] = (),
    want_vector_report: bool = False,
) -> tuple[str, ...]:
    """The flags a build asks for (before any fallback for options the compiler rejects)."""
    flags = list(BASE_FLAGS)
    flags += math_flags
    if want_vector_report:
        flags += VECTOR_REPORT_FLAGS.get(compiler.family, ())
    flags += extra_flags
    return tuple(flags)


def _effective_flags(compiler: Compiler, flags: tuple[str, ...]) -> tuple[str, ...]:
    if compiler.identity in _march_native_rejected:
        return tuple(flag for flag in flags if flag != MARCH_NATIVE)
    return flags


def _rejects_march_native(stderr: str) -> bool:
    return "march" in stderr and "native" in stderr


def _run_compiler(
    compiler: Compiler, flags: tuple[str, ...], source: Path, output: Path
) -> subprocess.CompletedProcess[str]:
    global _invocations
    _invocations += 1
    argv = [*compiler.argv, *flags, str(source), "-o", str(output)]
    try:
        return subprocess.run(argv, capture_output=True, text=True, env=_COMPILER_ENV, check=False)
    except OSError as error:
        raise ToolchainError(
            f"cannot run the C compiler {compiler.argv[0]!r}: {error}; {FIX_COMPILER}"
        ) from error


def compile_shared(
    c_source: str,
    *,
    math_flags: Sequence[str] = IEEE_FLAGS,
    extra_flags: Sequence[str] = (),
    want_vector_report: bool = False,
    specialization: str = "",
    key_parts: Sequence[str] = (),
) -> CompiledObject:
    """Build ``c_source`` into a shared object through the cache and return where it is.

    ``specialization`` (e.g. the local size baked into the code) and ``key_parts`` (e.g. the
    OpenCL source and build options the C came from) only enter the cache key. With
    ``want_vector_report`` the compiler's vectorization messages are returned in ``report``
    (also on a cache hit: they are stored with the entry).
    """
    compiler = find_compiler()
    flags = compiler_flags(
        compiler,
        math_flags=math_flags,
        extra_flags=extra_flags,
        want_vector_report=want_vector_report,
    )
    key = cache.cache_key(
        c_source, shlex.join(flags), shlex.join(compiler.argv), compiler.identity,
        specialization, *key_parts,
    )  # fmt: skip
    hit = cache.lookup(key, want_log=want_vector_report)
    if hit is not None:
        compiled = CompiledObject(hit.path, key, hit.log, cached=True, compile_seconds=0.0)
    else:
        try:
            compiled = _build(compiler, flags, c_source, key, keep_log=want_vector_report)
        except cache.CacheError as error:
            raise ToolchainError(str(error)) from error
    # the command as run: after a build, without the flags the compiler rejected (-march=native)
    return replace(compiled, command=shlex.join([*compiler.argv,
                                                 *_effective_flags(compiler, flags)]))


def _build(
    compiler: Compiler, flags: tuple[str, ...], c_source: str, key: str, *, keep_log: bool
) -> CompiledObject:
    temp_source = cache.new_temp_source(key)
    temp_object = temp_source.with_suffix(cache.OBJECT_SUFFIX)
    temp_log = temp_source.with_suffix(cache.LOG_SUFFIX)
    final_source = cache.source_path(key)
    final_object = cache.object_path(key)
    log: str | None = None
    try:
        cache.write_text(temp_source, c_source)
        start = time.perf_counter()
        effective = _effective_flags(compiler, flags)
        result = _run_compiler(compiler, effective, temp_source, temp_object)
        if (
            result.returncode != 0
            and MARCH_NATIVE in effective
            and _rejects_march_native(result.stderr)
        ):
            with _lock:
                _march_native_rejected.add(compiler.identity)
            effective = _effective_flags(compiler, flags)
            result = _run_compiler(compiler, effective, temp_source, temp_object)
        seconds = time.perf_counter() - start
        # Messages name the temp file; point them at the file that is kept instead.
        stderr = result.stderr.replace(str(temp_source), str(final_source))
        if result.returncode != 0:
            cache.publish([(temp_source, final_source)])
            raise ToolchainError(
                f"C compiler failed ({shlex.join([*compiler.argv, *effective])}); "
                f"source kept at {final_source}:\n{stderr}",
                stderr=stderr,
                source_path=final_source,
            )
        _check_output(compiler, effective, temp_object)
        cache.seal_object(temp_object)
        moves = [(temp_source, final_source), (temp_object, final_object)]
        if keep_log:
            log = stderr
            cache.write_text(temp_log, stderr)
            moves.insert(0, (temp_log, cache.log_path(key)))
        cache.publish(moves)
    finally:
        for leftover in (temp_source, temp_object, temp_log):
            cache.discard(leftover)
    cache.remember(final_object, log)
    return CompiledObject(final_object, key, log, cached=False, compile_seconds=seconds)


def _check_output(compiler: Compiler, flags: tuple[str, ...], output: Path) -> None:
    """A command that exits 0 without writing an object (``CC=echo``) is not a C compiler."""
    try:
        size = output.stat().st_size
    except OSError:
        size = 0
    if size == 0:
        raise ToolchainError(
            f"the C compiler {shlex.join([*compiler.argv, *flags])} reported success but wrote "
            f"no shared object to {output}; it is not a working C compiler: {FIX_COMPILER}"
        )


def load(path: Path | str) -> ctypes.CDLL:
    """Load a shared object; while it is loaded, every caller gets the same handle.

    It is unloaded once nothing holds it: ctypes function pointers hold the library they
    come from, so whoever runs native code of it (a launch, through its compiled kernel)
    keeps it loaded until that code has returned. Programs built and dropped one after
    another (a different source each) then leave no library behind.
    """
    name = os.path.abspath(path)
    with _lock:
        library = _libraries.get(name)
        if library is not None:
            return library
        try:
            library = ctypes.CDLL(name)
        except OSError as error:
            raise ToolchainError(
                f"cannot load the compiled kernel {name}: {error}; remove the file to have "
                "it rebuilt"
            ) from error
        _unload_when_unused(library)
        _libraries[name] = library
        return library


def _unload_when_unused(library: ctypes.CDLL) -> None:
    """dlclose ``library``'s handle once the object is collected (each ``CDLL`` is one
    dlopen, so a path loaded again meanwhile stays loaded); not at exit, where threads of
    the process may still run its code."""
    import _ctypes

    close = getattr(_ctypes, "dlclose", None)
    if close is None:  # not a POSIX loader: the library stays loaded
        return
    weakref.finalize(library, close, library._handle).atexit = False


def build_library(
    c_source: str,
    *,
    math_flags: Sequence[str] = IEEE_FLAGS,
    extra_flags: Sequence[str] = (),
    specialization: str = "",
    key_parts: Sequence[str] = (),
) -> ctypes.CDLL:
    """``compile_shared`` then ``load``: the usual way a backend gets a callable library."""
    compiled = compile_shared(
        c_source,
        math_flags=math_flags,
        extra_flags=extra_flags,
        specialization=specialization,
        key_parts=key_parts,
    )
    return load(compiled.path)


SYNTAX_FLAGS = ("-fsyntax-only", "-std=gnu11", "-march=native", "-fopenmp-simd")
CHECKED_SUFFIX = ".checked"
CHECKS_AT_ONCE = max(1, os.cpu_count() or 1)


def _start_check(compiler: Compiler, path: Path) -> subprocess.Popen[str]:
    argv = [*compiler.argv, *_effective_flags(compiler, SYNTAX_FLAGS), str(path)]
    try:
        return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, env=_COMPILER_ENV)
    except OSError as error:
        raise ToolchainError(
            f"cannot run the C compiler {compiler.argv[0]!r}: {error}; {FIX_COMPILER}"
        ) from error


def _finish_check(compiler: Compiler, path: Path, run: subprocess.Popen[str]) -> str | None:
    """The compiler's messages if it rejected ``path``, else None (retrying once without
    ``-march=native`` when that is what it rejected)."""
    _, stderr = run.communicate()
    if run.returncode != 0 and MARCH_NATIVE in _effective_flags(compiler, SYNTAX_FLAGS) \
            and _rejects_march_native(stderr):
        with _lock:
            _march_native_rejected.add(compiler.identity)
        _, stderr = (run := _start_check(compiler, path)).communicate()
    return stderr if run.returncode != 0 else None


def _check_key(key_parts: Sequence[str]) -> tuple[Compiler, str]:
    compiler = find_compiler()
    key = cache.cache_key("c-check", *key_parts, shlex.join(compiler.argv), compiler.identity)
    return compiler, key


def _check_marker(key: str) -> Path:
    return cache.objects_dir() / f"{key}{CHECKED_SUFFIX}"


def checked(key_parts: Sequence[str]) -> bool:
    """Whether sources made from ``key_parts`` passed the check (``remember_check``) with
    this compiler."""
    return _check_marker(_check_key(key_parts)[1]).exists()


def remember_check(key_parts: Sequence[str]) -> None:
    """Note in the cache that the sources made from ``key_parts`` passed ``check_sources``."""
    key = _check_key(key_parts)[1]
    try:
        temp = cache.new_temp_source(key)
        cache.publish([(temp, _check_marker(key))])
    except (OSError, cache.CacheError):
        pass  # only a shortcut for the next build


def check_sources(sources: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Have the C compiler check every ``(name, c_source)`` without building it; returns
    ``(name, messages)`` of each it rejects. Each source is checked as soon as ``sources``
    yields it, so the compiler runs while the next one is made."""
    compiler = find_compiler()
    rejected = []
    running: deque[tuple[str, Path, subprocess.Popen[str]]] = deque()

    def finish_oldest() -> None:
        name, path, run = running.popleft()
        messages = _finish_check(compiler, path, run)
        if messages is not None:
            rejected.append((name, messages.replace(str(path), f"<C of {name}>")))

    with tempfile.TemporaryDirectory(prefix="ppcl-check-") as directory:
        for index, (name, source) in enumerate(sources):
            path = Path(directory) / f"unit{index}.c"
            path.write_text(source)
            if len(running) >= CHECKS_AT_ONCE:  # a program of many kernels: not all at once
                finish_oldest()
            running.append((name, path, _start_check(compiler, path)))
        while running:
            finish_oldest()
    return rejected
