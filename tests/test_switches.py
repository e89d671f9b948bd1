"""Every documented switch tried as a new user would: the ``PPCL_*`` variables on an unmodified
program (run in a subprocess where the variable is read when ppcl is imported), their bad
values, their combinations, the ``PPCL_DEBUG`` topics, the build options and the command line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ppcl.cli import main
from ppcl.compiler.frontend.options import BuildOptionsError, parse_build_options
from ppcl.settings import SettingsError, read_settings
from tests.child_env import child_env

# an unmodified PyOpenCL-style program: two kernels, three rounds, one read back
PROGRAM = """
import numpy as np
import ppcl as cl
ctx = cl.create_some_context(interactive=False)
q = cl.CommandQueue(ctx)
n = 1024
a = np.arange(n, dtype=np.float32)
b = np.ones(n, dtype=np.float32)
mf = cl.mem_flags
A = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
B = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
C = cl.Buffer(ctx, mf.READ_WRITE, a.nbytes)
D = cl.Buffer(ctx, mf.READ_WRITE, a.nbytes)
prg = cl.Program(ctx, '''
__kernel void add(__global const float *a, __global const float *b, __global float *c) {
    int i = get_global_id(0); c[i] = a[i] + b[i]; }
__kernel void scale(__global const float *c, __global float *d, float s) {
    int i = get_global_id(0); d[i] = c[i] * s; }
''').build()
for _ in range(3):
    prg.add(q, (n,), (64,), A, B, C)
    prg.scale(q, (n,), (64,), C, D, np.float32(2))
out = np.empty_like(a)
cl.enqueue_copy(q, out, D)
q.finish()
assert np.array_equal(out, (a + b) * 2)
print("program ok on", ctx.devices[0].name)
"""

STENCIL = """__kernel void stencil(__global const float *in, __global float *out, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x > 0 && x < w - 1 && y < h) out[y*w + x] = in[y*w + x - 1] + in[y*w + x + 1];
}
"""


def _environment(extra: dict[str, str]) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PPCL_", "PYOPENCL_")) or key == "PPCL_CACHE_DIR"}
    return child_env(extra, base=env)


def _run(args: list[str], extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          env=_environment(extra), timeout=300, check=False)


def _program(extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _run(["-c", PROGRAM], extra)


# ---------------------------------------------------------------- bad values


@pytest.mark.parametrize("name, value", [
    ("PPCL_VERIFY", "maybe"), ("PPCL_VENDORS", "2"), ("PPCL_VENDORS", "yes please"),
    ("PPCL_COMPILER_OUTPUT", "x"), ("PYOPENCL_COMPILER_OUTPUT", "x"),
])
def test_a_switch_with_a_bad_value_is_an_error_naming_it(name, value):
    # these were read as "anything but 1 is off" (or "anything but 0 is on"): a typo was a
    # silent ignore
    with pytest.raises(SettingsError, match=f"{name}=.*use 1 .* or 0"):
        read_settings({name: value})


@pytest.mark.parametrize("name", ["PPCL_VERIFY", "PPCL_VENDORS", "PPCL_COMPILER_OUTPUT"])
def test_the_switches_read_1_and_0(name):
    field = {"PPCL_VERIFY": lambda s: s.debug.verify, "PPCL_VENDORS": lambda s: s.vendors,
             "PPCL_COMPILER_OUTPUT": lambda s: s.compiler_output}[name]
    assert field(read_settings({name: "1"})) is True
    assert field(read_settings({name: "0"})) is False
    assert field(read_settings({})) is False


def test_a_bad_hostfusion_value_names_force_among_the_accepted():
    with pytest.raises(SettingsError, match="PPCL_HOSTFUSION='2'.*force"):
        read_settings({"PPCL_HOSTFUSION": "2"})


@pytest.mark.parametrize("name", ["PPCL_OVERLAY", "PPCL_HOSTFUSION"])
def test_a_bad_import_time_switch_is_one_clear_error(name):
    # both modules read their switch when ppcl is imported; a bad value raised there, twice
    # chained ("During handling of the above exception..."), before the program ran a line
    result = _program({name: "2"})
    assert result.returncode == 1
    assert f"SettingsError: {name}='2'" in result.stderr
    assert "During handling" not in result.stderr
    imported = _run(["-c", "import ppcl; print('imported')"], {name: "2"})
    assert imported.returncode == 0 and "imported" in imported.stdout


# ---------------------------------------------------------------- PPCL_DEBUG topics


@pytest.mark.cpu_device  # the CPU device's C compiler runs
def test_debug_cc_prints_the_command_and_the_report(monkeypatch, capsys, tmp_path):
    # the topic printed nothing: the compiler's report was only asked for by tests
    import numpy as np

    import ppcl as cl

    monkeypatch.setenv("PPCL_DEBUG", "cc")
    monkeypatch.setenv("PPCL_CACHE_DIR", str(tmp_path))
    ctx = cl.Context(cl.get_platforms()[0].get_devices()[:1])
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, "__kernel void twice(__global float *a) "
                          "{ a[get_global_id(0)] *= 2.0f; }").build()
    a = np.arange(64, dtype=np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
    prg.twice(queue, (64,), (16,), buf)
    cl.enqueue_copy(queue, a, buf)
    assert a[3] == 6
    err = capsys.readouterr().err
    assert "// ppcl cc twice (built in" in err
    assert " -O3 " in err and ".c\n" in err


def test_debug_hostfusion_shows_a_shape_still_being_timed():
    # the decision was printed only once the guard had timed every candidate: a program that
    # ended sooner (three launches a shape here) printed nothing at all
    result = _program({"PPCL_HOSTFUSION": "1", "PPCL_DEVICES": "check",
                       "PPCL_DEBUG": "hostfusion"})
    assert result.returncode == 0, result.stderr
    assert "hostfusion: add global (1024,) local (64,)" in result.stderr
    assert "  candidate: vectorize" in result.stderr
    assert "  choice (timing): original until the guard has timed" in result.stderr


def test_debug_hostfusion_says_the_overlay_has_the_launches():
    # with PPCL_OVERLAY=1 too, host fusion left every launch alone without a word
    result = _program({"PPCL_HOSTFUSION": "1", "PPCL_OVERLAY": "1",
                       "PPCL_DEBUG": "overlay,hostfusion"})
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("hostfusion: the queue records for the overlay") == 1
    assert "overlay: fused add #4 with scale #5, vertical" in result.stderr


def test_overlay_on_the_checking_device():
    result = _program({"PPCL_OVERLAY": "1", "PPCL_DEVICES": "check", "PPCL_DEBUG": "overlay"})
    assert result.returncode == 0, result.stderr
    assert "program ok on ppcl checking device" in result.stdout
    assert "overlay: fused add #4 with scale #5" in result.stderr


# ---------------------------------------------------------------- command line


def test_python_m_ppcl_is_the_command():
    result = _run(["-m", "ppcl", "--help"], {})
    assert result.returncode == 0, result.stderr
    assert "{build,explain,info,bench,fuzz}" in result.stdout


@pytest.mark.parametrize("extra, message", [
    ({"PPCL_OVERLAY": "2"}, "ppcl: error: PPCL_OVERLAY='2'"),
    ({"PPCL_THREADS": "0"}, "ppcl: error: PPCL_THREADS='0'"),
    ({"PPCL_DEVICES": "gpu"}, "ppcl: error: clGetDeviceIDs failed: CL_DEVICE_NOT_AVAILABLE - "
                              "PPCL_DEVICES names 'gpu'"),
])
def test_the_command_reports_a_bad_environment_without_a_traceback(extra, message):
    result = _run(["-m", "ppcl.cli", "info"], extra)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_build_reads_the_environment(monkeypatch, capsys, tmp_path):
    # ppcl build ignored PPCL_SPLIT and PPCL_DEBUG (a bad PPCL_DEBUG too)
    src = tmp_path / "stencil.cl"
    src.write_text(STENCIL)
    assert main(["build", str(src), "--emit", "c", "--options=-ppcl-no-split"]) == 0
    unsplit = capsys.readouterr().out
    assert main(["build", str(src), "--emit", "c"]) == 0
    assert capsys.readouterr().out != unsplit
    monkeypatch.setenv("PPCL_SPLIT", "0")
    monkeypatch.setenv("PPCL_DEBUG", "passes")
    assert main(["build", str(src), "--emit", "c"]) == 0
    captured = capsys.readouterr()
    assert captured.out == unsplit
    assert "// ppcl IR after pass workgroup" in captured.err
    monkeypatch.setenv("PPCL_DEBUG", "bogus")
    assert main(["build", str(src), "--emit", "ir"]) == 1
    assert "ppcl: error: PPCL_DEBUG='bogus': unknown topic" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--local", "0"], "--local 0: give one to three positive numbers"),
    (["--local", "32,8,1,1"], "--local 32,8,1,1: give one to three positive numbers"),
    (["--local", "abc"], "--local abc: give one to three positive numbers"),
    (["--local", "32,4", "--global", "30,4"], "--global 30,4 is not a multiple of --local"),
    (["--local", "32,4", "--arg", "w"], "--arg w: write NAME=NUMBER"),
    (["--local", "32,4", "--global", "64,4", "--arg", "width=64"],
     "--arg width: no kernel of .* has such a scalar argument \\(its scalar arguments: h, w\\)"),
])
def test_explain_refuses_sizes_and_arguments_it_cannot_use(capsys, tmp_path, args, message):
    # a zero or four-dimensional local size, a global size that is not a multiple, and an
    # argument no kernel has were taken silently
    src = tmp_path / "stencil.cl"
    src.write_text(STENCIL)
    assert main(["explain", str(src), *args]) == 1
    import re

    assert re.search("ppcl: error: " + message, capsys.readouterr().err)


def test_explain_help_names_host_fusion(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "host fusion" in capsys.readouterr().out


def test_fuzz_help_names_the_json_argument_as_its_text_does(capsys):
    # the help read "--json JSON  write a summary to FILE"
    with pytest.raises(SystemExit):
        main(["fuzz", "--help"])
    assert "--json FILE" in capsys.readouterr().out


# ---------------------------------------------------------------- build options


@pytest.mark.parametrize("options, message", [
    ("-ppcl-bogus", "unknown option '-ppcl-bogus' \\(the -ppcl-\\* options: -ppcl-no-split, "
     "-ppcl-no-unroll, -ppcl-no-selects, -ppcl-no-masked-loops, -ppcl-no-scalarize\\)"),
    ("-cl-bogus", "unknown option '-cl-bogus' \\(the -cl-\\* options: -cl-std=, "
                  "-cl-fast-relaxed-math"),
    ("-cl-std", "'-cl-std' needs a version, e.g. -cl-std=CL1.2 \\(accepted: CL1.0"),
])
def test_an_unknown_option_lists_its_family(options, message):
    with pytest.raises(BuildOptionsError, match=message):
        parse_build_options(options)
