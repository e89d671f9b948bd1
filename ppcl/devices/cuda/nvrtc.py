"""CUDA C++ to a cubin with NVRTC, through cupy's bindings, cached on disk like CPU kernels.

The key covers everything the cubin depends on: the translation unit, the header it includes,
the options, the GPU architecture and NVRTC's version (``compiler/cache.py`` adds ppcl's). An
entry is the cubin with the cache's checksum trailer, published atomically; the trailer is cut
off before the driver loads it. cupy is imported here, on the first build, never before.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ppcl.compiler import cache
from ppcl.compiler.codegen.cuda import HEADER

HEADER_PATH = Path(__file__).resolve().parents[2] / "compiler" / "codegen" / "include" / HEADER


class NVRTCError(RuntimeError):
    """NVRTC rejected a unit; ``log`` is its output."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log


@dataclass(frozen=True)
class Cubin:
    data: bytes
    log: str
    cached: bool


def _nvrtc():  # type: ignore[no-untyped-def]
    from cupy_backends.cuda.libs import nvrtc  # the optional extra ``ppcl[cuda]``

    return nvrtc


@functools.cache
def header_text() -> str:
    """The header every unit includes, read once per process (it was read twice per build)."""
    return HEADER_PATH.read_text(encoding="utf-8")


def nvrtc_version_tuple() -> tuple[int, int]:
    major, minor = _nvrtc().getVersion()
    return int(major), int(minor)


def nvrtc_version() -> str:
    major, minor = nvrtc_version_tuple()
    return f"{major}.{minor}"


def compile_unit(source: str, options: Sequence[str]) -> tuple[bytes, str]:
    """The cubin of ``source`` and NVRTC's log; raises :class:`NVRTCError`."""
    nvrtc = _nvrtc()
    header = header_text()
    program = nvrtc.createProgram(source, "ppcl_program.cu", [header.encode()],
                                  [HEADER.encode()])
    try:
        try:
            nvrtc.compileProgram(program, list(options))
        except nvrtc.NVRTCError as error:
            raise NVRTCError(f"NVRTC: {error}", nvrtc.getProgramLog(program)) from error
        return nvrtc.getCUBIN(program), nvrtc.getProgramLog(program)
    finally:
        nvrtc.destroyProgram(program)


_warm_up_lock = threading.Lock()
_warm_up: threading.Thread | None = None


def start_warm_up(options: Sequence[str], arch: str) -> None:
    """Compile an empty unit with the header once per process, on a thread of its own: the
    first NVRTC compile of a process pays NVRTC's start-up, 0.3-1.1 s on the GPU machine
    against 0.065 s for the same unit later, and a program that makes a context and then
    builds can have it done meanwhile. Not a daemon thread: a thread still in NVRTC when the
    interpreter shut down crashed the process."""
    global _warm_up
    with _warm_up_lock:
        if _warm_up is not None:
            return
        source = f'#include "{HEADER}"\n'
        all_options = [f"--gpu-architecture={arch}", *options]

        def run() -> None:
            try:
                compile_unit(source, all_options)
            except Exception:  # noqa: BLE001 - a warm-up may fail; the builds report errors
                pass

        _warm_up = threading.Thread(target=run, name="ppcl-nvrtc-warm-up", daemon=False)
        _warm_up.start()


def wait_for_warm_up() -> None:
    """Wait for the warm-up if one was started (a build waits too: NVRTC's start-up is paid
    once either way, and after the warm-up the build finds the header parsed, ``-pch``)."""
    thread = _warm_up
    if thread is not None and thread is not threading.current_thread():
        thread.join()


def _all_options(options: Sequence[str], arch: str) -> list[str]:
    return [f"--gpu-architecture={arch}", *options]


def _key(source: str, all_options: Sequence[str]) -> str:
    return cache.cache_key("cuda-cubin", source, header_text(), " ".join(all_options),
                           nvrtc_version())


def cubin_from_cache(source: str, options: Sequence[str], arch: str) -> Cubin | None:
    """The cubin of ``source`` for ``arch`` if the cache has it (nothing is compiled)."""
    hit = cache.lookup(_key(source, _all_options(options, arch)), want_log=True)
    if hit is None:
        return None
    data = hit.path.read_bytes()[:-cache.CHECKSUM_TRAILER_SIZE]
    return Cubin(data, hit.log or "", True)


def cached_cubin(source: str, options: Sequence[str], arch: str) -> Cubin:
    """The cubin of ``source`` for ``arch`` (``sm_90``), from the cache when it is there."""
    hit = cubin_from_cache(source, options, arch)
    if hit is not None:
        return hit
    all_options = _all_options(options, arch)
    key = _key(source, all_options)
    wait_for_warm_up()
    data, log = compile_unit(source, all_options)
    temp_source = cache.new_temp_source(key)
    temp_object = temp_source.with_suffix(cache.OBJECT_SUFFIX)
    temp_log = temp_source.with_suffix(cache.LOG_SUFFIX)
    try:
        cache.write_text(temp_source, source)
        cache.write_text(temp_log, log)
        temp_object.write_bytes(data)
        cache.seal_object(temp_object)
        cache.publish([(temp_source, cache.source_path(key)), (temp_log, cache.log_path(key)),
                       (temp_object, cache.object_path(key))])
    finally:
        for path in (temp_source, temp_object, temp_log):
            cache.discard(path)
    cache.remember(cache.object_path(key), log)
    return Cubin(data, log, False)
