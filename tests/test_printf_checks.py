"""printf checked at build time (``frontend/printf_format.py``): every conversion of the format
against its argument, as clang checks it, so that the device prints only checked records."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from ppcl.compiler.diagnostics import CompileError
from ppcl.compiler.frontend import compile_source
from ppcl.compiler.frontend.printf_format import canonical_literal, decode
from tests.launch import run


def kernel(call: str, decls: str = "") -> str:
    return ("__kernel void k(__global int *out, float f, int n)\n{\n"
            f"    {decls}\n    {call};\n    out[0] = n;\n}}\n")


def errors_of(source: str) -> list[str]:
    with pytest.raises(CompileError) as info:
        compile_source(source, "t.cl")
    return [f"{d.loc.line}:{d.loc.col}: {d.message}" for d in info.value.diagnostics
            if d.severity.value == "error"]


@pytest.mark.parametrize(("call", "decls", "message"), [
    ('printf("%s", 12345)', "", "4:18: format specifies type 'char *' but the argument has "
                                "type 'int'"),
    ('printf("%d", f)', "", "format specifies type 'int' but the argument has type 'float'"),
    ('printf("%f", n)', "", "format specifies type 'double' but the argument has type 'int'"),
    ('printf("%d %d", n)', "", "4:16: more '%' conversions than data arguments"),
    ('printf("%d", n, n)', "", "data argument not used by format string"),
    ('printf("x", n)', "", "data argument not used by format string"),
    ('printf("%n", &n)', "", "4:13: '%n' specifier not supported in OpenCL C"),
    ('printf("%k", n)', "", "invalid conversion specifier 'k'"),
    ('printf("%", n)', "", "incomplete format specifier"),
    ('printf("%*d", n, n)', "", "'*' field width or precision is not supported"),
    ('printf("%lld", 1L)', "", "invalid conversion specifier"),
    ('printf("%ld", f)', "", "format specifies type 'long' but the argument has type 'float'"),
    ('printf("%p", n)', "", "format specifies type 'void *' but the argument has type 'int'"),
    ('printf("%v4f", f)', "", "format specifies type 'float4' but the argument has type "
                              "'float'"),
    ('printf("%v2hlf", v)', "float4 v = 1.0f;", "format specifies type 'float2' but the "
                                                "argument has type 'float4'"),
    ('printf("%v4hhd", v)', "int4 v = 1;", "format specifies type 'char4' but the argument "
                                           "has type 'int4'"),
    ('printf("%f", v)', "float4 v = 1.0f;", "format specifies type 'double' but the argument "
                                            "has type 'float4'"),
    ('printf("%v5d", n)', "", "invalid vector specifier"),
    ('printf("%hld", n)', "", "length modifier 'hl' is only allowed with a vector specifier"),
    ('printf("%hs", "a")', "", "length modifier 'h' results in undefined behavior"),
    ('printf("%s", p)', "__constant char *p = 0;", "'%s' takes only a string literal"),
    ('printf("%s", n ? "a" : "b")', "", "'%s' takes only a string literal"),
    ('printf("\\x25s", n)', "", "format specifies type 'char *' but the argument has type "
                                "'int'"),
    ('printf("%5%", n)', "", "'%%' takes no flags"),
])
def test_a_format_that_does_not_match_its_arguments_is_a_located_error(call, decls, message):
    errors = errors_of(kernel(call, decls))
    assert any(message in e for e in errors), errors


@pytest.mark.parametrize(("call", "message"), [
    ('printf("%ld", n)', "format specifies type 'long' but the argument has type 'int'; the "
                         "value is converted to 'long'"),
    ('printf("%d", 1L)', "format specifies type 'int' but the argument has type 'long'"),
    ('printf("%u", get_global_id(0))',
     "format specifies type 'unsigned int' but the argument has type 'ulong'"),
])
def test_an_integer_of_another_width_is_a_warning_as_in_clang(call, message):
    log = compile_source(kernel(call), "t.cl").log
    assert "warning: " + message in log, log


def test_an_integer_of_another_width_prints_converted_to_what_the_format_reads(capfd):
    # a debug macro's branches print one array with every length modifier; the branch that
    # runs reads each element at its own width, the others only have to build
    source = ('__kernel void k(__global int *out, int n)\n{\n'
              '    uint u = 0xfffffffeu; long big = 0x100000007L; short s = -3;\n'
              '    if (n == 8)\n'
              '        printf("%016lx|", u);\n'
              '    printf("%lx %lu %ld %d %x %u %hhx %c|\\n", u, u, s, big, big, s, 0x1ff, 0x141);\n'
              '    out[0] = 1;\n}\n')
    out = np.zeros(1, np.int32)
    run(source, "k", (1,), (1,), out, np.int32(8))
    text = capfd.readouterr().out
    assert text == "00000000fffffffe|fffffffe 4294967294 -3 7 7 4294967293 ff A|\n", text


def test_a_format_that_is_not_a_literal_is_an_error():
    errors = errors_of("__constant char fmt[] = \"%d\";\n"
                       "__kernel void k(int n)\n{\n    printf(fmt, n);\n}\n")
    assert any("format string is not a string literal" in e for e in errors), errors


@pytest.mark.parametrize(("call", "decls"), [
    ('printf("%d %i %o %u %x %X %c|", n, n, n, n, n, n, 65)', ""),
    ('printf("%hhd %hd %ld %lu %%|", (char)1, (short)2, 3L, 4UL)', ""),
    ('printf("%-+ #08.3f %e %E %g %G %a %A %F|", f, f, f, f, f, f, f, f)', ""),
    ('printf("%s %10.2s|", "ab", "cd")', ""),
    ('printf("%p|", out)', ""),
    ('printf("%v4hlf %v4f %v2hhd %v3hd %v4hld %v2ld %v4d|", a, a, c, s, i, l, i)',
     "float4 a = 1.0f; char2 c = 1; short3 s = 2; int4 i = 3; long2 l = 4;"),
    ('printf("%.f %5d|", f, n)', ""),
])
def test_formats_that_match_their_arguments_build(call, decls):
    compile_source(kernel(call, decls), "t.cl")


def test_the_error_is_raised_by_program_build():
    ctx = cl.Context(cl.get_platforms()[0].get_devices())
    program = cl.Program(ctx, kernel('printf("%s", 12345)'))
    with pytest.raises(cl.RuntimeError) as info:
        program.build()
    text = str(info.value)
    assert "CL_BUILD_PROGRAM_FAILURE" in text
    assert "format specifies type 'char *' but the argument has type 'int'" in text


def test_escapes_of_the_format_are_checked_and_printed_as_checked(capfd):
    source = ('__kernel void k(__global int *out)\n{\n'
              '    printf("\\x25i\\t%s\\045c\\n", 7, "q\\"\\101", 66);\n    out[0] = 1;\n}\n')
    out = np.zeros(1, np.int32)
    run(source, "k", (1,), (1,), out)
    assert capfd.readouterr().out == '7\tq"AB\n'


def test_decoding_and_canonical_spelling():
    assert decode(r"a\x25i\n\101\\") == ("a%i\nA\\", [0, 1, 5, 6, 8, 12])
    assert decode("é\\351") == ("\xc3\xa9\xe9", [0, 0, 1])  # the bytes a C compiler stores
    assert canonical_literal("a%d\n\"\\\x01\xc3\xa9") == 'a%d\\n\\"\\\\\\001\\303\\251'


def test_checked_formats_print_as_c_prints_them(capfd):
    source = ('__kernel void k(__global int *out, float f)\n{\n'
              '    printf("a%d" "b%s" "\\n", 1, "x" "y");\n'
              '    printf("%5.1f|%v2hld|%c|%%|%.3s\\n", f, (int2)(3, 4), \'Z\', "abcdef");\n'
              '    out[0] = 1;\n}\n')
    run(source, "k", (1,), (1,), np.zeros(1, np.int32), np.float32(2.25))
    assert capfd.readouterr().out == "a1bxy\n  2.2|3,4|Z|%|abc\n"
