"""printf printed by ppcl: kernels append records to a printf buffer and the device prints them
with its own formatter after the launch (``codegen/c_printf.py``, ``devices/printf_buffer.py``).
What C would print is computed with the C library's snprintf on the host, in the tests only."""

from __future__ import annotations

import ctypes
import re
from collections import Counter

import numpy as np
import pytest

import ppcl
import ppcl as cl
import ppcl.runtime.platform
from ppcl.compiler.codegen.c_printf import PRINTF_BUFFER_BYTES
from ppcl.compiler.ir.printf_spec import HEADER_BYTES
from ppcl.devices.cpu import CPUDevice
from tests.launch import build_kernel, run
from tests.test_cformat import c_snprintf

N, U, L, UL = -1234567, 3000000000, -(2**40) - 5, 2**63 + 11
F = float(np.float32(3.14159274))
D = -2.5e-7
C8, S16 = -100, -30000
INF, NAN = float("inf"), float("nan")

# (format, kernel arguments, the C library's arguments)
SCALAR_CASES = [
    ("%d %i %u %o %x %X", "n, n, n, n, n, n", [ctypes.c_int(N)] * 6),
    ("%#x %#o %#X %+d % d|%-12d|%012d|%.9d|%12.9d|", "n, n, n, n, n, n, n, n, n",
     [ctypes.c_int(N)] * 9),
    ("%u %x %#o %10u|%-10u|", "u, u, u, u, u", [ctypes.c_uint(U)] * 5),
    ("%.0d|%.0x|%#.0o|%5.0d|", "0, 0, 0, 0", [ctypes.c_int(0)] * 4),
    ("%hhd %hhu %hd %hu %hhx %hx", "n, n, n, n, n, n", [ctypes.c_int(N)] * 6),
    ("%hhd %hd %d %u", "c, s, c, s", [ctypes.c_int(C8), ctypes.c_int(S16), ctypes.c_int(C8),
                                      ctypes.c_uint(S16 % 2**32)]),
    ("%ld %li %lx %lo", "l, l, l, l", [ctypes.c_long(L)] * 4),
    ("%lu %lx %#lX %ld", "ul, ul, ul, ul", [ctypes.c_ulong(UL)] * 4),
    ("%c%c%c|%3c|%-3c|", "72, 105, c, 'x', 'y'",
     [ctypes.c_int(72), ctypes.c_int(105), ctypes.c_int(C8), ctypes.c_int(120),
      ctypes.c_int(121)]),
    ("%f %e %g %a %F %E %G %A", "f, f, f, f, f, f, f, f", [ctypes.c_double(F)] * 8),
    ("%.3f|%10.2e|%-12g|%+.0f|%#.0f|%#g|%08.3f|% e|%010.2e", "f, f, f, f, f, f, f, f, f",
     [ctypes.c_double(F)] * 9),
    ("%.15f %.17g %a %.3a %.0a %lf %le", "d, d, d, d, d, d, d", [ctypes.c_double(D)] * 7),
    ("%f %F %e %E %g %G %a %A|%5.1f|%-6f|%+f|%06f", "inf, inf, inf, inf, -inf, -inf, inf, "
     "inf, inf, inf, inf, -inf", [ctypes.c_double(INF)] * 4 + [ctypes.c_double(-INF)] * 2
     + [ctypes.c_double(INF)] * 5 + [ctypes.c_double(-INF)]),
    ("%f %E %g %5.2f|", "nan, nan, nan, nan", [ctypes.c_double(NAN)] * 4),
    ("%s|%10s|%-10s|%.2s|%5.1s|%s", '"abc", "abc", "abc", "abc", "abc", ""',
     [ctypes.c_char_p(b"abc")] * 5 + [ctypes.c_char_p(b"")]),
    ("100%% %d%%|%%d", "n", [ctypes.c_int(N)]),
    ("no conversions", "", []),
]

CONVERSIONS_KERNEL = """
__kernel void conversions(__global int *out, int n, uint u, long l, ulong ul, float f,
                          double d, char c, short s, float inf, float nan)
{
%s
    out[0] = 1;
}
"""


def _call(fmt: str, args: str) -> str:
    return f'    printf("{fmt}\\n"{", " if args else ""}{args});'


def test_scalar_conversions_print_what_c_prints(capfdbinary):
    source = CONVERSIONS_KERNEL % "\n".join(_call(f, a) for f, a, _ in SCALAR_CASES)
    run(source, "conversions", (1,), (1,), np.zeros(1, np.int32), np.int32(N), np.uint32(U),
        np.int64(L), np.uint64(UL), np.float32(F), np.float64(D), np.int8(C8),
        np.int16(S16), np.float32(INF), np.float32(NAN))
    expected = "".join(c_snprintf(f + "\n", *c_args) for f, _, c_args in SCALAR_CASES)
    assert capfdbinary.readouterr().out == expected.encode("latin-1")


# (format, declaration of v, components, the scalar conversion each component prints with)
VECTOR_CASES = [
    ("%v4f", "float4 v = (float4)(1.5f, -2.0f, 0.1f, 1e10f);",
     [ctypes.c_double(float(np.float32(x))) for x in (1.5, -2.0, 0.1, 1e10)], "%f"),
    ("%8.2v4hlf", "float4 v = (float4)(1.5f, -2.0f, 0.1f, 1e10f);",
     [ctypes.c_double(float(np.float32(x))) for x in (1.5, -2.0, 0.1, 1e10)], "%8.2f"),
    ("%v2hld", "int2 v = (int2)(-7, 2147483647);", [ctypes.c_int(-7), ctypes.c_int(2**31 - 1)],
     "%d"),
    ("%+v3hd", "short3 v = (short3)(-3, 0, 32767);", [ctypes.c_int(x) for x in (-3, 0, 32767)],
     "%+hd"),
    ("%#v4hhx", "uchar4 v = (uchar4)(0, 1, 128, 255);",
     [ctypes.c_int(x) for x in (0, 1, 128, 255)], "%#hhx"),
    ("%v2lu", "ulong2 v = (ulong2)(0, 18446744073709551615UL);",
     [ctypes.c_ulong(0), ctypes.c_ulong(2**64 - 1)], "%lu"),
    ("%.3v2la", "double2 v = (double2)(0.1, -3.0);", [ctypes.c_double(0.1),
                                                     ctypes.c_double(-3.0)], "%.3a"),
    ("%v8hhd", "char8 v = (char8)(-128, -1, 0, 1, 2, 3, 4, 127);",
     [ctypes.c_int(x) for x in (-128, -1, 0, 1, 2, 3, 4, 127)], "%hhd"),
]


@pytest.mark.parametrize(("fmt", "decl", "components", "scalar"), VECTOR_CASES)
def test_vector_conversions_print_their_components_separated_by_commas(fmt, decl, components,
                                                                       scalar, capfd):
    source = ("__kernel void vec(__global int *out)\n{\n"
              f"    {decl}\n    printf(\"<{fmt}>\\n\", v);\n    out[0] = 1;\n}}\n")
    run(source, "vec", (1,), (1,), np.zeros(1, np.int32))
    expected = "<" + ",".join(c_snprintf(scalar, c) for c in components) + ">\n"
    assert capfd.readouterr().out == expected


def test_a_vector_argument_is_evaluated_once(capfd):
    source = """
    int4 next(__global int *count) { *count += 1; return (int4)(*count); }
    __kernel void once(__global int *count)
    {
        printf("%v4hld\\n", next(count));
    }"""
    count = np.zeros(1, np.int32)
    run(source, "once", (1,), (1,), count)
    assert count[0] == 1
    assert capfd.readouterr().out == "1,1,1,1\n"


def test_a_work_item_prints_its_lines_in_order(capfd):
    source = """
    __kernel void steps(__global int *out)
    {
        int i = get_global_id(0);
        for (int j = 0; j < 5; j++)
            printf("item %d step %d\\n", i, j);
        printf("item %d done\\n", i);
        out[i] = i;
    }"""
    run(source, "steps", (8,), (4,), np.zeros(8, np.int32))
    lines = capfd.readouterr().out.splitlines()
    assert len(lines) == 8 * 6
    for i in range(8):
        mine = [line for line in lines if line.startswith(f"item {i} ")]
        assert mine == [f"item {i} step {j}" for j in range(5)] + [f"item {i} done"]


def test_printf_in_a_helper_function_and_printf_with_no_values(capfd):
    source = """
    void report(int x) { printf("helper %d\\n", x); }
    __kernel void k(__global int *out)
    {
        printf("start\\n");
        report(get_global_id(0) * 10);
        out[get_global_id(0)] = 1;
    }"""
    run(source, "k", (2,), (1,), np.zeros(2, np.int32))
    assert capfd.readouterr().out == "start\nhelper 0\nstart\nhelper 10\n"


def test_text_is_written_as_the_bytes_of_the_literal(capfdbinary):
    source = ('__kernel void k(__global int *out)\n{\n'
              '    printf("%c|\\303\\251|%s|é\\n", 200, "\\xff");\n    out[0] = 1;\n}\n')
    run(source, "k", (1,), (1,), np.zeros(1, np.int32))
    assert capfdbinary.readouterr().out == b"\xc8|\xc3\xa9|\xff|\xc3\xa9\n"


def test_capsys_sees_the_output(capsys):
    source = '__kernel void k(__global int *out) { printf("seen %d\\n", 5); out[0] = 1; }'
    run(source, "k", (1,), (1,), np.zeros(1, np.int32))
    assert capsys.readouterr().out == "seen 5\n"


@pytest.fixture(scope="module")
def threaded_context() -> cl.Context:
    """A context on the threaded CPU device with four threads, whatever the machine has."""
    device = ppcl.runtime.platform.Device(cl.get_platforms()[0], CPUDevice(threads=4))
    return cl.Context([device])


ITEMS_KERNEL = """
__kernel void items(__global int *out, int tag)
{
    int i = get_global_id(0);
    out[i] = printf("tag %d item %d of %d\\n", tag, i, (int)get_global_size(0));
}
"""


def test_every_work_item_of_a_threaded_launch_is_printed(threaded_context, capfd):
    queue = cl.CommandQueue(threaded_context)
    prg = cl.Program(threaded_context, ITEMS_KERNEL).build()
    n = 4096
    out = cl.Buffer(threaded_context, cl.mem_flags.READ_WRITE, 4 * n)
    prg.items(queue, (n,), (16,), out, np.int32(1))
    queue.finish()
    lines = capfd.readouterr().out.splitlines()
    assert sorted(lines) == sorted(f"tag 1 item {i} of {n}" for i in range(n))
    result = np.empty(n, np.int32)
    cl.enqueue_copy(queue, result, out)
    assert (result == 0).all()  # printf returns 0 when its record was kept


def test_launches_on_an_out_of_order_queue_print_their_records_together(threaded_context,
                                                                        capfd):
    queue = cl.CommandQueue(
        threaded_context, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    prg = cl.Program(threaded_context, ITEMS_KERNEL).build()
    n, launches = 256, 8
    buffers = [cl.Buffer(threaded_context, cl.mem_flags.READ_WRITE, 4 * n)
               for _ in range(launches)]
    for tag, out in enumerate(buffers):
        prg.items(queue, (n,), (16,), out, np.int32(tag))
    queue.finish()
    tags = [int(line.split()[1]) for line in capfd.readouterr().out.splitlines()]
    assert Counter(tags) == {tag: n for tag in range(launches)}
    runs = [tag for k, tag in enumerate(tags) if k == 0 or tags[k - 1] != tag]
    assert sorted(runs) == list(range(launches))  # one block of lines per launch


def test_a_full_buffer_drops_records_with_a_warning_and_empties_for_the_next_launch(capfd):
    record = HEADER_BYTES + 3 * 8  # header and three values
    n = (PRINTF_BUFFER_BYTES // record + 1000) // 64 * 64
    source = ITEMS_KERNEL
    out = np.ones(n, np.int32)
    run(source, "items", (n,), (64,), out, np.int32(7))
    captured = capfd.readouterr()
    kept = PRINTF_BUFFER_BYTES // record
    assert len(captured.out.splitlines()) == kept
    assert (out == 0).sum() == kept and (out == -1).sum() == n - kept
    assert f"({PRINTF_BUFFER_BYTES} bytes)" in captured.err
    assert f"{n - kept} printf calls not printed" in captured.err
    small = np.ones(4, np.int32)
    run(source, "items", (4,), (4,), small, np.int32(8))
    captured = capfd.readouterr()
    assert captured.out == "".join(f"tag 8 item {i} of 4\n" for i in range(4))
    assert captured.err == ""


_LIBC_OUTPUT = re.compile(r"(?<![\w])(printf|fprintf|sprintf|snprintf|vsnprintf|vprintf|vfprintf"
                          r"|fwrite|fputs|puts|putchar|fflush)\s*\(")


def test_the_generated_c_calls_no_output_function_of_the_c_library():
    source = """
    __kernel void k(__global int *out, float f)
    {
        float4 v = (float4)(f);
        printf("%d %f %s %v4f %p %%\\n", out[0], f, "x", v, out);
        out[0] = printf("again %d\\n", 1);
    }"""
    k = build_kernel(source, "k", local_size=(4,))
    code = re.sub(r"/\*.*?\*/", "", k.c_source, flags=re.S)
    assert _LIBC_OUTPUT.findall(code) == []
    assert "ppcl_printf_record(" in code
    assert "%d" not in code  # the formats are the device's, the C has their ids
    formats = k.generated.printf_formats
    assert len(formats) == 2 and formats[0].strings == ("x",)
    assert '   0: "%d %f %s %v4f %p %%\\n" "x"\n   1: "again %d\\n" */' in k.c_source


def test_a_kernel_without_printf_has_no_printf_buffer():
    k = build_kernel("__kernel void k(__global int *out) { out[0] = 1; }", "k")
    assert "ppcl_printf" not in k.c_source
    assert k.printf is None and k.generated.printf_formats == ()


def test_repeated_formats_share_one_entry_of_the_table():
    source = """
    __kernel void k(__global int *out)
    {
        printf("%d\\n", 1);
        printf("%d\\n", out[0]);
        printf("%d %s\\n", 2, "a");
        printf("%d %s\\n", 3, "b");
    }"""
    formats = build_kernel(source, "k").generated.printf_formats
    assert [f.strings for f in formats] == [(), ("a",), ("b",)]


def test_a_format_that_closes_a_c_comment_builds_and_prints(capfd):
    source = ('__kernel void k(__global int *out)\n{\n'
              '    printf("*/ %s /*\\n", "*/");\n    out[0] = 1;\n}\n')
    run(source, "k", (1,), (1,), np.zeros(1, np.int32))
    assert capfd.readouterr().out == "*/ */ /*\n"
