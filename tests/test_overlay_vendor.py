"""The overlay over another OpenCL platform through pyopencl (``ppcl.overlay.over``), tried on
pocl where pyopencl and pocl are installed. Each case runs in a process of its own, since an
ICD loader reads its vendors once; the entry point's errors are checked here."""

from __future__ import annotations

import functools
import importlib.util
import pathlib
import subprocess
import sys

import pytest

import ppcl as cl
from ppcl.overlay import vendor
from tests.child_env import child_env

ROOT = pathlib.Path(__file__).resolve().parent.parent
VENDORS = "/etc/OpenCL/vendors"
has_pyopencl = importlib.util.find_spec("pyopencl") is not None
needs_pyopencl = pytest.mark.skipif(not has_pyopencl, reason="pyopencl is not installed")


def _env(extra: dict[str, str]) -> dict[str, str]:
    return child_env({"OCL_ICD_VENDORS": VENDORS, **extra})


@functools.cache
def _platform_found() -> bool:
    if not has_pyopencl or not pathlib.Path(VENDORS).is_dir():
        return False
    probe = "import pyopencl\ntry:\n    print(len(pyopencl.get_platforms()))\n" \
            "except pyopencl.Error:\n    print(0)\n"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            env=_env({}), timeout=120, check=False)
    return result.stdout.strip() not in ("", "0")


def _need_platform() -> None:
    """Skip a test that runs programs over pyopencl where pyopencl finds no OpenCL platform
    to run them on."""
    if not _platform_found():
        pytest.skip("pyopencl finds no OpenCL platform (pocl not installed?)")


def _run(program: str, extra: dict[str, str] | None = None) -> str:
    _need_platform()
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            env=_env(extra or {}), timeout=600, check=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result.stdout


SOURCE = r'''
SOURCE = """
__kernel void gray(__global const float4 *rgb, __global float *g, int w)
{
    int i = get_global_id(1) * w + get_global_id(0);
    g[i] = 0.299f * rgb[i].x + 0.587f * rgb[i].y + 0.114f * rgb[i].z;
}
__kernel void dx(__global const float *g, __global float *out, int w)
{
    int x = get_global_id(0), y = get_global_id(1);
    int xl = max(x - 1, 0), xr = min(x + 1, w - 1);
    out[y * w + x] = g[y * w + xr] - g[y * w + xl];
}
__kernel void scale(__global const float *a, __global float *b, float s)
{
    int i = get_global_id(1) * get_global_size(0) + get_global_id(0);
    b[i] = a[i] * s;
}
__kernel void mag(__global const float *a, __global const float *b, __global float *m, int w)
{
    int i = get_global_id(1) * w + get_global_id(0);
    m[i] = sqrt(a[i] * a[i] + b[i] * b[i]);
}
"""


def pipeline(ctx, queue, prg, rgb, w, h):
    """gray, a gradient and a scaled copy of it (both read gray: horizontal), their magnitude
    (vertical), temporaries released: what the overlay fuses."""
    mf = cl.mem_flags
    src = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=rgb)
    g, gx, gs, m = (cl.Buffer(ctx, mf.READ_WRITE, w * h * 4) for _ in range(4))
    prg.gray(queue, (w, h), None, src, g, np.int32(w))
    prg.dx(queue, (w, h), None, g, gx, np.int32(w))
    prg.scale(queue, (w, h), None, g, gs, np.float32(0.5))
    prg.mag(queue, (w, h), None, gx, gs, m, np.int32(w))
    for buf in (g, gx, gs):
        buf.release()
    out = np.empty(w * h, np.float32)
    cl.enqueue_copy(queue, out, m)
    return out
'''

OVER = r'''
import numpy as np
import pyopencl
import ppcl as cl
from ppcl.overlay import CACHE
''' + SOURCE + r'''
QUEUED = cl.command_execution_status.QUEUED
vendor_ctx = pyopencl.create_some_context(interactive=False)
ctx = cl.overlay.over(vendor_ctx)
assert ctx.devices[0].platform.name.startswith("ppcl on "), ctx.devices
assert cl.overlay.over(vendor_ctx).devices == ctx.devices  # one set of devices per context
assert cl.overlay.over(vendor_ctx.devices[0]).devices[0].name == ctx.devices[0].name
assert cl.overlay.over(list(vendor_ctx.devices)).devices[0].name == ctx.devices[0].name
prg = cl.Program(ctx, SOURCE).build()

# queues on the context record; out-of-order ones and those of record=False pass through
queue = cl.CommandQueue(ctx)
a = np.arange(1000, dtype=np.float32)
abuf = cl.Buffer(ctx, cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
bbuf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, a.nbytes)
first = prg.scale(queue, (1000, 1), None, abuf, bbuf, np.float32(3))
second = prg.scale(queue, (1000, 1), None, bbuf, bbuf, np.float32(2))
assert first._status == second._status == QUEUED  # recorded
out = np.empty_like(a)
cl.enqueue_copy(queue, out, bbuf)
assert np.array_equal(out, a * 6), out[:4]
ooo = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
assert ooo._overlay is None
plain_ctx = cl.overlay.over(vendor_ctx, record=False)
assert cl.CommandQueue(plain_ctx)._overlay is None

# kernels on a program's own host memory (USE_HOST_PTR) pass through and see it
host = np.ones(1000, np.float32)
hbuf = cl.Buffer(ctx, cl.mem_flags.USE_HOST_PTR, hostbuf=host)
prg.scale(queue, (1000, 1), None, abuf, hbuf, np.float32(2)).wait()
assert np.array_equal(host, 2 * a), host[:4]

# fused (horizontally, then vertically) and specialized kernels, built by the vendor's
# compiler, against the same commands run unrecorded, on awkward sizes
rng = np.random.default_rng(3)
plain = cl.CommandQueue(ctx)
cl.overlay.disable(plain)
for w, h in ((37, 23), (64, 1), (129, 17)):
    rgb = rng.random((w * h, 4), dtype=np.float32)
    expected = pipeline(ctx, plain, prg, rgb, w, h)
    for replay in range(2):
        got = pipeline(ctx, queue, prg, rgb, w, h)
        assert np.array_equal(got, expected), (w, h, np.abs(got - expected).max())
        notes = " | ".join(cl.overlay.graph().notes)
        assert "horizontal" in notes and "vertical" in notes, notes
        if replay:
            assert "specialized" in notes, notes
assert any(device is ctx.devices[0] for _, _, device in CACHE.programs)

# a platform nobody has
try:
    cl.overlay.over("no such platform")
except cl.RuntimeError as error:
    assert "DEVICE_NOT_FOUND" in str(error) and vendor_ctx.devices[0].platform.name in str(error)
else:
    raise AssertionError("over() of an unknown name must fail")
print("over ok")
'''

SWITCHES = r'''
import numpy as np
import ppcl as cl
''' + SOURCE + r'''
vendor = [p for p in cl.get_platforms() if p.name.startswith("ppcl on ")]
ctx = cl.Context(vendor[0].get_devices())
queue = cl.CommandQueue(ctx)
plain = cl.CommandQueue(ctx)
assert queue._overlay is not None  # PPCL_OVERLAY=1 records every in-order queue
cl.overlay.disable(plain)
prg = cl.Program(ctx, SOURCE).build()
rgb = np.random.default_rng(5).random((45 * 31, 4), dtype=np.float32)
assert np.array_equal(pipeline(ctx, queue, prg, rgb, 45, 31), pipeline(ctx, plain, prg, rgb, 45, 31))
assert "vertical" in " | ".join(cl.overlay.graph().notes)
print("switches ok")
'''


def test_over_a_pyopencl_context_records_fuses_and_specializes():
    assert "over ok" in _run(OVER)


def test_vendors_and_overlay_switches_record_an_unmodified_program():
    assert "switches ok" in _run(SWITCHES, {"PPCL_VENDORS": "1", "PPCL_OVERLAY": "1"})


def test_the_overlay_tests_pass_on_a_vendor_device():
    """The semantics and fusion tests of the CPU device, on pocl (``PPCL_CTX`` picks it); a
    kernel that faults would take pocl's process down, so that one case is left out."""
    _need_platform()
    tests = [str(ROOT / "tests" / name) for name in ("test_overlay.py", "test_overlay_fusion.py")]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not faulting",
         *tests], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600,
        check=False, env=_env({"PPCL_VENDORS": "1", "PPCL_CTX": "ppcl on:"}))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout


def test_over_without_pyopencl_says_so(monkeypatch):
    monkeypatch.setattr(vendor.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(cl.RuntimeError, match="DEVICE_NOT_FOUND.*pyopencl is not installed"):
        cl.overlay.over("pocl")


@needs_pyopencl
def test_over_rejects_what_is_not_a_pyopencl_context():
    with pytest.raises(cl.LogicError, match="INVALID_CONTEXT.*got int"):
        cl.overlay.over(42)
    with pytest.raises(cl.LogicError, match="INVALID_CONTEXT"):
        cl.overlay.over([])


def test_the_benchmark_runs_its_programs_on_a_vendor_platform_with_equal_results():
    _need_platform()
    command = [sys.executable, "-m", "benchmarks.overlay", "--size", "64", "--operands", "3"]
    result = subprocess.run([*command, "--vendor"], capture_output=True, text=True, cwd=ROOT,
                            env=_env({}), timeout=600, check=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    rows = [line for line in result.stdout.splitlines() if "identical:" in line]
    assert len(rows) == 6 and all(row.endswith("identical: True") for row in rows), rows
    missing = subprocess.run([*command, "--vendor", "no such platform"], capture_output=True,
                             text=True, cwd=ROOT, env=_env({}), timeout=120, check=False)
    assert missing.returncode == 0 and missing.stdout.startswith("skipped: "), missing.stdout
