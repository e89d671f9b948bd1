"""Vendor OpenCL platforms through ppcl (``PPCL_VENDORS=1``), tried on pocl where pyopencl and
pocl are installed; each case runs in a process of its own, since an ICD loader reads its
vendors once."""

from __future__ import annotations

import ast
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

from tests.child_env import child_env

# the ICD directory: the system's, or OCL_ICD_VENDORS where it names another (on the GPU
# machine, NVIDIA's driver: a GPU driver copies buffers between host and device)
VENDORS = os.environ.get("OCL_ICD_VENDORS", "/etc/OpenCL/vendors")
needs_pocl = pytest.mark.skipif(
    importlib.util.find_spec("pyopencl") is None or not pathlib.Path(VENDORS).is_dir(),
    reason="pyopencl or an OpenCL ICD is not installed")

PROGRAM = r'''
import numpy as np
import ppcl as cl

platforms = cl.get_platforms()
print([p.name for p in platforms])
vendor = [p for p in platforms if p.name.startswith("ppcl on ")]
ctx = cl.Context(vendor[0].get_devices())
queue = cl.CommandQueue(ctx)
prg = cl.Program(ctx, """
#define SCALE 2.0f
__kernel void k(__global const float *x, __global float *y, __local float *s, float a) {
    size_t i = get_global_id(0);
    s[get_local_id(0)] = x[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    y[i] = a * SCALE * s[get_local_id(0)] + y[i];
}""").build()
x = np.arange(1024, dtype=np.float32)
y = np.ones(1024, dtype=np.float32)
mf = cl.mem_flags
bx = cl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf=x)
by = cl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf=y)
prg.k(queue, (1024,), (64,), bx, by, cl.LocalMemory(256), np.float32(1))
out = np.empty_like(y)
cl.enqueue_copy(queue, out, by)
assert np.array_equal(out, 2 * x + 1), out[:8]
# the host writes the buffer between launches: the next launch reads what it wrote
cl.enqueue_copy(queue, by, np.full_like(y, 3))
prg.k(queue, (1024,), (64,), bx, by, cl.LocalMemory(256), np.float32(1))
cl.enqueue_copy(queue, out, by)
assert np.array_equal(out, 2 * x + 3), out[:8]
cl.enqueue_copy(queue, by, y)
prg.k(queue, (1024,), (64,), bx, by, cl.LocalMemory(256), np.float32(1))
cl.enqueue_copy(queue, out, by)
assert np.array_equal(out, 2 * x + 1), out[:8]
prg.k(queue, (128,), None, bx, by.get_sub_region(512, 512), cl.LocalMemory(256), np.float32(0.5))
cl.enqueue_copy(queue, out, by)
assert np.array_equal(out[128:256], 2 * x[128:256] + 1 + x[:128]), out[128:136]
try:
    cl.Program(ctx, "__kernel void bad(__global int *a) { a[0] = undeclared; }").build()
except cl.RuntimeError as error:
    print("diagnostic:", " | ".join(str(error).splitlines()))
print("vendor ok")
'''


def _run(env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = child_env({"OCL_ICD_VENDORS": VENDORS, **env_extra})
    return subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          env=env, timeout=300, check=False)


@needs_pocl
def test_a_vendor_platform_runs_programs_through_ppcl():
    result = _run({"PPCL_VENDORS": "1"})
    if "ppcl on " not in result.stdout and "IndexError" in result.stderr:
        pytest.skip("pyopencl found no OpenCL platform")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "vendor ok" in result.stdout
    diagnostic = [line for line in result.stdout.splitlines() if line.startswith("diagnostic")]
    assert diagnostic and "undeclared" in diagnostic[0]  # ppcl's front end reports it


@needs_pocl
def test_vendor_platforms_are_listed_only_when_asked():
    result = _run({"PPCL_VENDORS": "0"})
    assert result.stdout, result.stderr[-3000:]
    names = ast.literal_eval(result.stdout.splitlines()[0])  # ppcl CUDA follows where GPUs are
    assert names[0] == "ppcl" and not [n for n in names if n.startswith("ppcl on ")], names


@pytest.mark.parametrize(("version", "expected"), [
    ("OpenCL 3.0 CUDA", (3, 0)), ("OpenCL 1.2 pocl 3.1", (1, 2)), ("OpenCL 1.1 ", (1, 1)),
    ("OpenCL", (0, 0)), ("OpenCL x.y", (0, 0))])
def test_vendor_devices_of_opencl_1_2_and_later_are_driven(version, expected):
    """A launch hands the host's bytes to the device with WRITE_INVALIDATE_REGION maps
    (OpenCL 1.2): older devices are not listed."""
    from types import SimpleNamespace

    from ppcl.devices.vendor.device import opencl_version, supported

    device = SimpleNamespace(version=version)
    assert opencl_version(device) == expected
    assert supported(device) == (expected >= (1, 2))
