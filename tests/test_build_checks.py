"""What the C compiler rejects fails ``Program.build()``, not the first launch: the CPU device
has the compiler check every kernel's generated C at build time (one run, remembered in the
cache), and a missing or broken compiler is reported there too."""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import pytest

import ppcl as cl
from ppcl.compiler import toolchain

pytestmark = [pytest.mark.usefixtures("private_cache"), pytest.mark.cpu_device]

SOURCE = """
__kernel void first(__global float *x) { x[get_global_id(0)] += 1.0f; }

__kernel void second(__global float *x)
{
    x[get_global_id(0)] *= 2.0f;
}
"""


def _compiler(tmp_path: Path, syntax_check: str) -> Path:
    """A C compiler that logs each run and answers ``-fsyntax-only`` runs with the shell
    text ``syntax_check``; every other run is the real compiler's."""
    real = toolchain.find_compiler().argv[0]
    script = tmp_path / "cc-under-test"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {tmp_path / "runs.log"}\n'
        'for arg in "$@"; do\n'
        '  if [ "$arg" = "-fsyntax-only" ]; then\n'
        f"    {syntax_check}\n"
        "  fi\n"
        "done\n"
        f'exec {real} "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def _runs(tmp_path: Path) -> list[str]:
    log = tmp_path / "runs.log"
    return log.read_text().splitlines() if log.exists() else []


def test_generated_c_the_compiler_rejects_fails_build_with_the_kernel_location(
        ctx: cl.Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the second unit of the check is the second kernel's C
    rejecting = ('for f in "$@"; do case "$f" in *unit1.c) '
                 'echo "$f:7:5: error: assignment of read-only variable" >&2; exit 1;; '
                 'esac; done')
    monkeypatch.setenv("CC", str(_compiler(tmp_path, rejecting)))
    program = cl.Program(ctx, SOURCE)
    with pytest.raises(cl.Error, match="BUILD_PROGRAM_FAILURE") as info:
        program.build()
    message = str(info.value)
    assert ":4:15: the C compiler rejected the code ppcl generated for kernel 'second'" in message
    assert "<C of second>:7:5: error: assignment of read-only variable" in message
    assert "assignment of read-only" in program.get_build_info(
        ctx.devices[0], cl.program_build_info.LOG)


def test_a_broken_compiler_fails_build(ctx: cl.Context, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "false")
    with pytest.raises(cl.Error, match="(?s)BUILD_PROGRAM_FAILURE.*C compiler"):
        cl.Program(ctx, SOURCE).build()


def test_a_passing_check_is_remembered_and_kernels_still_run(
        ctx: cl.Context, queue: cl.CommandQueue, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", str(_compiler(tmp_path, ":")))
    cl.Program(ctx, SOURCE).build()
    checks = [run for run in _runs(tmp_path) if "-fsyntax-only" in run]
    assert len(checks) == 2  # one run a kernel
    program = cl.Program(ctx, SOURCE).build()
    assert [run for run in _runs(tmp_path) if "-fsyntax-only" in run] == checks
    x = np.ones(64, np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
    program.first(queue, (64,), None, buf)
    program.second(queue, (64,), None, buf)
    cl.enqueue_copy(queue, x, buf)
    assert (x == 4.0).all()


BARRIER_IN_A_COMMA = """
__kernel void k(__global int *a) {
    __local int s[16];
    s[get_local_id(0)] = 1;
    (barrier(CLK_LOCAL_MEM_FENCE), a[get_global_id(0)] = s[0]);
}
"""


def test_the_kernel_compilers_errors_quote_the_line_with_a_caret(ctx: cl.Context) -> None:
    program = cl.Program(ctx, BARRIER_IN_A_COMMA)
    with pytest.raises(cl.Error, match="BUILD_PROGRAM_FAILURE") as info:
        program.build()
    quoted = ("<source>:5:6: error: barrier must be called as a statement of its own\n"
              "    (barrier(CLK_LOCAL_MEM_FENCE), a[get_global_id(0)] = s[0]);\n"
              "     ^")
    assert quoted in str(info.value)
    assert quoted in program.get_build_info(ctx.devices[0], cl.program_build_info.LOG)
