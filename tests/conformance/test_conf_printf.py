"""Conformance of ``printf`` with OpenCL C 1.2 section 6.12.13: every conversion and vector
specifier with every length modifier, long values printed by value, ``%s`` of constant strings,
each work-item's output in one piece, output flushed when a launch completes (before
``finish`` and blocking waits return), the bounded buffer's overflow reported, and the buffer's
size as ``CL_DEVICE_PRINTF_BUFFER_SIZE`` reports it. What C prints is the C library's snprintf
on the host (``tests/test_cformat.py``), component by component for vectors."""

from __future__ import annotations

import ctypes
import itertools

import numpy as np
import pytest

import ppcl as cl
import ppcl.runtime.platform
from ppcl.compiler.ir.printf_spec import HEADER_BYTES
from ppcl.devices.cpu import CPUDevice
from tests.launch import build_kernel, run, serial_context
from tests.test_cformat import c_snprintf

# element type of each integer length modifier in a vector conversion (table 6.24)
_INT_ELEMENTS = {"hh": ("char", ctypes.c_int), "h": ("short", ctypes.c_int),
                 "hl": ("int", ctypes.c_int), "l": ("long", ctypes.c_long)}
_INT_VALUES = [-128, -1, 0, 1, 77, 127, 100, -100, 5, 6, 7, 8, 9, 10, 11, 12]
_FLOAT_VALUES = [0.5, -2.25, 1e10, 3.0, -0.0, 0.1, 7.75, 1e-3, 2.0, 4.0, 8.0, 16.0, 32.0,
                 64.0, 128.0, 256.0]


def _vector_cases() -> list[tuple[str, str, str, list[object]]]:
    """(format, OpenCL vector type, its literal, C arguments of its components)."""
    cases = []
    for (length, (elem, c_type)), conv, width in itertools.product(
            _INT_ELEMENTS.items(), "diouxX", (2, 3, 4, 8, 16)):
        signed = conv in "di"
        type_name = f"{'' if signed else 'u'}{elem}{width}"
        values = _INT_VALUES[:width]
        bits = 64 if length == "l" else {"hh": 8, "h": 16, "hl": 32}[length]
        stored = [v if signed else v % 2**bits for v in values]
        literal = f"({type_name})(" + ", ".join(str(v) for v in stored) + ")"
        scalar_length = {"hl": ""}.get(length, length)
        cases.append((f"%#v{width}{length}{conv}", type_name, literal,
                      [(f"%#{scalar_length}{conv}", c_type(v)) for v in stored]))
    for (length, elem), conv, width in itertools.product(
            (("hl", "float"), ("l", "double")), "fFeEgGaA", (2, 3, 4, 8, 16)):
        type_name = f"{elem}{width}"
        values = [float(np.float32(v)) if elem == "float" else v for v in _FLOAT_VALUES[:width]]
        literal = f"({type_name})(" + ", ".join(repr(v) + ("f" if elem == "float" else "")
                                                  for v in values) + ")"
        cases.append((f"%v{width}{length}{conv}", type_name, literal,
                      [(f"%{conv}", ctypes.c_double(v)) for v in values]))
    return cases


VECTOR_CASES = _vector_cases()


def test_every_vector_conversion_prints_what_c_prints_for_each_component(capfd):
    body = "\n".join(f'    {{ {t} v = {lit}; printf("{fmt}|\\n", v); }}'
                     for fmt, t, lit, _ in VECTOR_CASES)
    source = f"__kernel void vec(__global int *out)\n{{\n{body}\n    out[0] = 1;\n}}\n"
    run(source, "vec", (1,), (1,), np.zeros(1, np.int32))
    lines = capfd.readouterr().out.splitlines()
    assert len(lines) == len(VECTOR_CASES)
    for line, (fmt, _, _, components) in zip(lines, VECTOR_CASES, strict=True):
        expected = ",".join(c_snprintf(f, arg) for f, arg in components) + "|"
        assert line == expected, fmt


def test_issue_cases_print_their_values(capfd):
    """The conversions a public test set found printing wrong values: ``%v4hlx``, ``%v2hhd``,
    ``%v8hd``, ``%v16f``, and a long printed by value."""
    source = r"""
    __kernel void k(__global int *out, long l, ulong ul)
    {
        printf("%v2hhd|%v4hlx|%v8hd|%v16hlf\n", (char2)(-1, 127),
               (uint4)(0xdeadbeef, 1, 2, 0xffffffff), (short8)(1, -2, 3, -4, 5, -6, 7, -8),
               (float16)(0.5f));
        printf("%ld %lu %lx %li\n", l, ul, l, -l);
        out[0] = 1;
    }"""
    long_value, ulong_value = -(2**40) - 5, 2**63 + 11
    run(source, "k", (1,), (1,), np.zeros(1, np.int32), np.int64(long_value),
        np.uint64(ulong_value))
    first = "-1,127|deadbeef,1,2,ffffffff|1,-2,3,-4,5,-6,7,-8|" + ",".join(["0.500000"] * 16)
    second = c_snprintf("%ld %lu %lx %li", ctypes.c_long(long_value),
                        ctypes.c_ulong(ulong_value), ctypes.c_long(long_value),
                        ctypes.c_long(-long_value))
    assert capfd.readouterr().out == f"{first}\n{second}\n"


def test_constant_strings_chars_pointers_and_percent(capfd):
    source = r"""
    __kernel void k(__global int *out)
    {
        printf("[%s][%-6s][%6s][%.3s][%c%c][%%]\n", "ppcl", "ab", "ab", "abcdef", 'o', 'k');
        printf("%p %p\n", (void *)0, out);
        out[0] = 1;
    }"""
    out = np.zeros(1, np.int32)
    run(source, "k", (1,), (1,), out)
    lines = capfd.readouterr().out.splitlines()
    assert lines[0] == "[ppcl][ab    ][    ab][abc][ok][%]"
    null, address = lines[1].split()
    assert null == "(nil)" and int(address, 16) != 0


def test_hex_float_conversions(capfd):
    values = [1.0, 0.1, -3.14159, 1e-310, 2.0**-1074, 65504.0]
    calls = "\n".join(f'        printf("%a %A %.2a %#.0a\\n", {v!r}, {v!r}, {v!r}, {v!r});'
                      for v in values)
    source = f"__kernel void k(__global int *out)\n{{\n{calls}\n        out[0] = 1;\n}}\n"
    run(source, "k", (1,), (1,), np.zeros(1, np.int32))
    expected = "".join(c_snprintf("%a %A %.2a %#.0a\n", *[ctypes.c_double(v)] * 4)
                       for v in values)
    assert capfd.readouterr().out == expected


@pytest.fixture(scope="module")
def threaded_context() -> cl.Context:
    """The threaded CPU device with four threads, whatever the machine has."""
    device = ppcl.runtime.platform.Device(cl.get_platforms()[0], CPUDevice(threads=4))
    return cl.Context([device])


PIECES_KERNEL = r"""
void note(int step) { printf("  step %d of item %d\n", step, (int)get_global_id(0)); }
__kernel void pieces(__global int *out)
{
    __local int shared[16];
    int i = get_global_id(0);
    printf("item %d begins\n", i);
    note(1);
    shared[get_local_id(0)] = i;
    barrier(CLK_LOCAL_MEM_FENCE);
    note(2);
    printf("item %d ends with %d\n", i, shared[15 - get_local_id(0)]);
    out[i] = 1;
}
"""


def test_each_work_item_prints_in_one_piece_across_barriers_and_threads(threaded_context,
                                                                        capfd):
    queue = cl.CommandQueue(threaded_context)
    prg = cl.Program(threaded_context, PIECES_KERNEL).build()
    n = 512
    out = cl.Buffer(threaded_context, cl.mem_flags.READ_WRITE, 4 * n)
    prg.pieces(queue, (n,), (16,), out)
    queue.finish()
    expected = "".join(
        f"item {i} begins\n  step 1 of item {i}\n  step 2 of item {i}\n"
        f"item {i} ends with {i // 16 * 16 + 15 - i % 16}\n" for i in range(n))
    assert capfd.readouterr().out == expected


def test_a_2d_kernel_that_prints_runs_as_rows_and_prints_per_work_item(capfd):
    source = r"""
    __kernel void grid(__global int *out)
    {
        int x = get_global_id(0), y = get_global_id(1);
        printf("(%d,%d)", x, y);
        printf(";\n");
        out[y * 8 + x] = 1;
    }"""
    kernel = build_kernel(source, "grid", local_size=(4, 2))
    assert "__nrow" in kernel.c_source  # the rows plan is no longer refused for printf
    run(source, "grid", (8, 4), (4, 2), np.zeros(32, np.int32))
    expected = "".join(f"({x},{y});\n" for y in range(4) for x in range(8))
    assert capfd.readouterr().out == expected


def test_output_is_flushed_when_a_blocking_wait_returns(capfd):
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, r"""
    __kernel void say(int tag) { if (get_global_id(0) == 0) printf("launch %d\n", tag); }
    """).build()
    event = prg.say(queue, (4,), None, np.int32(1))
    event.wait()
    assert capfd.readouterr().out == "launch 1\n"
    for tag in range(2, 6):
        prg.say(queue, (4,), None, np.int32(tag))
    queue.finish()
    assert capfd.readouterr().out == "".join(f"launch {t}\n" for t in range(2, 6))


def test_the_device_reports_a_full_profile_printf_buffer():
    device = cl.create_some_context(interactive=False).devices[0]
    size = device.get_info(cl.device_info.PRINTF_BUFFER_SIZE)
    assert size == device.printf_buffer_size and size >= 1 << 20  # full profile: 1 MB


def test_the_device_reports_the_printf_buffer_it_has(capfd):
    """The serial device, which ``run`` launches on, keeps as many records as its reported
    size holds and says how many calls it dropped."""
    device = serial_context().devices[0]
    size = device.get_info(cl.device_info.PRINTF_BUFFER_SIZE)
    assert size == device.printf_buffer_size and size >= 1 << 20  # full profile: 1 MB
    record = HEADER_BYTES + 8  # header and one value
    per_item = 64
    n = (size // record // per_item + 16) // 16 * 16  # more work-items than the buffer holds
    source = r"""
    __kernel void flood(__global int *out)
    {
        int kept = 0;
        for (int k = 0; k < 64; k++)
            kept += printf("%d\n", k) == 0;
        out[get_global_id(0)] = kept;
    }"""
    out = np.zeros(n, np.int32)
    run(source, "flood", (n,), (16,), out)
    captured = capfd.readouterr()
    kept = size // record
    assert len(captured.out.splitlines()) == kept == out.sum()
    dropped = n * per_item - kept
    assert "kernel 'flood'" in captured.err and f"{dropped} printf calls not printed" \
        in captured.err


POCL_KERNEL = r"""
__kernel void k(long l, ulong ul, int n, float f)
{
    printf("%d|%5d|%-5d|%05d|%+d|% d|%.3d|%x|%X|%#x|%o|%#o|%u|%i|%c|%hhd|%hd|%hhu|%hx\n",
           n, n, n, n, n, n, n, n, n, n, n, n, n, n, 65, n, n, n, n);
    printf("%ld|%lu|%lx|%lX|%lo|%20ld|%-20lu|\n", l, ul, l, l, ul, l, ul);
    printf("%f|%e|%g|%E|%G|%F|%10.3f|%-10.2e|%+.0f|%#.0f|%a|%A|%.1a\n",
           f, f, f, f, f, f, f, f, f, f, f, f, f);
    printf("%v2hhd|%v2hhx|%v3hd|%v4hlu|%v4hlx|%v2ld|%v2lx|%v8hlf|%v4hle|%v4hlg\n",
           (char2)(-3, 100), (uchar2)(255, 16), (short3)(-1, 0, 32767),
           (uint4)(1, 2, 3, 4000000000u), (uint4)(10, 11, 12, 13), (long2)(-1, 1L << 50),
           (ulong2)(255, 256), (float8)(1.5f), (float4)(1e-3f, 2.0f, 3.5f, -4.0f),
           (float4)(1e-5f, 123456789.0f, 0.5f, 100.0f));
    printf("%s|%10s|%-10s|%.2s|%s|%%|%c%c\n", "hello", "hi", "hi", "hello", "", 'o', 'k');
}
"""
POCL_ARGS = "np.int64(-(2**40) - 5), np.uint64(2**63 + 11), np.int32(-1234), np.float32(3.14159)"
POCL_SCRIPT = f"""
import numpy as np, pyopencl as cl
ctx = cl.Context([next(p for p in cl.get_platforms()
                      if "Portable" in p.name).get_devices()[0]])  # pocl, not another driver
queue = cl.CommandQueue(ctx)
cl.Program(ctx, {POCL_KERNEL!r}).build().k(queue, (1,), None, {POCL_ARGS})
queue.finish()
"""


def test_output_matches_pocl(capfd):
    """The same kernel through pyopencl on pocl, where installed (formats where pocl prints
    what C prints: not ``%.Ns`` with a width, ``%p`` of null, doubles, or ``%v..a``)."""
    import os
    import subprocess
    import sys

    pytest.importorskip("pyopencl")
    env = dict(os.environ, OCL_ICD_VENDORS=os.environ.get("OCL_ICD_VENDORS",
                                                          "/etc/OpenCL/vendors"))
    done = subprocess.run([sys.executable, "-c", POCL_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    if done.returncode != 0:
        pytest.skip(f"pyopencl with pocl does not run here: {done.stderr.strip()[-200:]}")
    run(POCL_KERNEL, "k", (1,), (1,), np.int64(-(2**40) - 5), np.uint64(2**63 + 11),
        np.int32(-1234), np.float32(3.14159))
    assert capfd.readouterr().out == done.stdout
