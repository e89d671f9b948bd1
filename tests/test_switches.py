"""Every documented switch tried as a new user would: the ``PPCL_*`` variables on an unmodified
program (run in a subprocess where the variable is read when ppcl is imported), their bad
values, their combinations, the ``PPCL_DEBUG`` topics, the build options and the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ppcl.settings import SettingsError, read_settings

ROOT = Path(__file__).resolve().parent.parent

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
    return {**env, "PYTHONPATH": str(ROOT), **extra}


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
