"""Tests for the C toolchain layer: find the compiler, build, load, report, fail clearly."""

from __future__ import annotations

import ctypes
import os
import stat
import sys
from pathlib import Path

import pytest

from ppcl.compiler import cache, toolchain
from ppcl.compiler.frontend.options import parse_build_options
from ppcl.compiler.toolchain import ToolchainError

ADD_ONE = "int add_one(int x) { return x + 1; }\n"

SCALE_LOOP = """
void scale(float *restrict a, const float *restrict b, int n)
{
    #pragma omp simd
    for (int i = 0; i < n; i++) a[i] = b[i] * 2.0f;
}
"""


# every test builds into its own empty cache with the default compiler (conftest.py)
pytestmark = pytest.mark.usefixtures("private_cache")


def test_find_compiler_has_identity() -> None:
    compiler = toolchain.find_compiler()
    assert compiler.argv
    assert compiler.identity
    assert compiler.family in ("gcc", "clang", "unknown")
    assert toolchain.find_compiler() is compiler


def test_cc_with_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    default = toolchain.find_compiler()
    monkeypatch.setenv("CC", f"{default.argv[0]} -DFROM_CC=41")
    compiler = toolchain.find_compiler()
    assert compiler.argv == (default.argv[0], "-DFROM_CC=41")
    library = toolchain.load(
        toolchain.compile_shared("int from_cc(void) { return FROM_CC + 1; }\n").path
    )
    assert library.from_cc() == 42


def test_compile_load_and_call() -> None:
    compiled = toolchain.compile_shared(ADD_ONE)
    assert compiled.path.is_file()
    assert not compiled.cached
    library = toolchain.load(compiled.path)
    library.add_one.restype = ctypes.c_int
    library.add_one.argtypes = [ctypes.c_int]
    assert library.add_one(41) == 42


def test_load_same_path_returns_same_handle() -> None:
    path = toolchain.compile_shared(ADD_ONE).path
    assert toolchain.load(path) is toolchain.load(str(path))


def test_float_array_kernel_through_ctypes() -> None:
    library = toolchain.build_library(SCALE_LOOP)
    n = 37
    source = (ctypes.c_float * n)(*[float(i) for i in range(n)])
    result = (ctypes.c_float * n)()
    library.scale(result, source, ctypes.c_int(n))
    assert list(result) == [2.0 * i for i in range(n)]


def test_compile_error_carries_stderr_line_and_kept_source() -> None:
    source = "int ok(void) { return 0; }\nint broken(void) { return undefined_name; }\n"
    with pytest.raises(ToolchainError) as caught:
        toolchain.compile_shared(source)
    error = caught.value
    assert "undefined_name" in error.stderr
    assert error.source_path is not None and error.source_path.is_file()
    assert error.source_path.read_text() == source
    message = str(error)
    assert f"{error.source_path}:2:" in message
    assert "undefined_name" in message
    assert str(error.source_path) in message
    leftovers = [p.name for p in cache.objects_dir().iterdir() if p.name.startswith(".tmp-")]
    assert leftovers == []


def test_missing_compiler_gives_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc")
    with pytest.raises(ToolchainError, match="no C compiler found.*install gcc or set CC"):
        toolchain.compile_shared(ADD_ONE)


def test_no_compiler_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(ToolchainError, match="no C compiler found"):
        toolchain.find_compiler()


def test_march_native_rejected_falls_back(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = toolchain.find_compiler().argv[0]
    wrapper = tmp_path / "picky-cc"
    wrapper.write_text(
        "#!/bin/sh\n"
        'for arg in "$@"; do\n'
        '  if [ "$arg" = "-march=native" ]; then\n'
        "    echo \"error: unsupported option '-march=native'\" >&2; exit 1\n"
        "  fi\n"
        "done\n"
        f'exec {real} "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("CC", str(wrapper))
    compiled = toolchain.compile_shared(ADD_ONE)
    assert toolchain.load(compiled.path).add_one(1) == 2
    # The fallback is remembered: the next build calls the compiler once, not twice.
    before = toolchain.compiler_invocations()
    toolchain.compile_shared(ADD_ONE + "// another\n")
    assert toolchain.compiler_invocations() == before + 1


RELAXED = toolchain.c_math_flags(parse_build_options("-cl-fast-relaxed-math"))


def test_default_flags_preserve_ieee_and_fast_math_relaxes() -> None:
    compiler = toolchain.find_compiler()
    strict = toolchain.compiler_flags(compiler)
    relaxed = toolchain.compiler_flags(compiler, math_flags=RELAXED)
    assert "-ffp-contract=off" in strict
    assert "-fassociative-math" not in strict
    assert "-fassociative-math" in relaxed
    assert "-march=native" in strict and "-fopenmp-simd" in strict


@pytest.mark.parametrize("options, present, absent", [
    ("", ["-ffp-contract=off"], ["-ffp-contract=fast", "-ffinite-math-only", "-ffast-math"]),
    ("-cl-mad-enable", ["-ffp-contract=fast"], ["-ffp-contract=off", "-fno-signed-zeros"]),
    ("-cl-no-signed-zeros", ["-ffp-contract=off", "-fno-signed-zeros"], ["-fassociative-math"]),
    ("-cl-finite-math-only", ["-ffp-contract=off", "-ffinite-math-only"], ["-fno-signed-zeros"]),
    ("-cl-unsafe-math-optimizations",
     ["-ffp-contract=fast", "-fno-signed-zeros", "-fassociative-math", "-freciprocal-math"],
     ["-ffinite-math-only"]),
    ("-cl-fast-relaxed-math",
     ["-ffp-contract=fast", "-fno-signed-zeros", "-fassociative-math", "-freciprocal-math",
      "-ffinite-math-only"], ["-ffast-math"]),
    ("-cl-denorms-are-zero", ["-ffp-contract=off"], ["-ffast-math", "-ffinite-math-only"]),
    ("-cl-fast-relaxed-math -cl-fp32-correctly-rounded-divide-sqrt",
     ["-fassociative-math", "-ffinite-math-only"], ["-freciprocal-math"]),
])
def test_each_math_option_adds_the_flags_that_realize_it(options: str, present: list[str],
                                                         absent: list[str]) -> None:
    flags = toolchain.c_math_flags(parse_build_options(options))
    assert all(flag in flags for flag in present), flags
    assert not any(flag in flags for flag in absent), flags


def test_fast_math_object_does_not_flush_denormals_in_this_process() -> None:
    library = toolchain.build_library("float half(float x) { return x * 0.5f; }\n",
                                      math_flags=RELAXED)
    assert library is not None
    tiny = 5e-324
    one = 1.0
    assert tiny * one != 0.0


def test_vector_report_mentions_vectorized_loop() -> None:
    compiler = toolchain.find_compiler()
    if compiler.family not in ("gcc", "clang"):
        pytest.skip("vectorization report flags are known for gcc and clang only")
    compiled = toolchain.compile_shared(SCALE_LOOP, want_vector_report=True)
    assert compiled.report is not None
    assert "vectorized" in compiled.report
    again = toolchain.compile_shared(SCALE_LOOP, want_vector_report=True)
    assert again.cached
    assert again.report == compiled.report


def test_cold_compile_is_one_call() -> None:
    before = toolchain.compiler_invocations()
    toolchain.compile_shared("int unique_cold(void) { return 7; }\n")
    assert toolchain.compiler_invocations() == before + 1


@pytest.mark.skipif(sys.platform != "linux", reason="ELF check")
def test_output_is_shared_object() -> None:
    path = toolchain.compile_shared(ADD_ONE).path
    assert path.read_bytes()[:4] == b"\x7fELF"
    assert os.access(path, os.R_OK)
