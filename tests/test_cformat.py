"""ppcl's own printf conversions (``devices/cformat.py``) against the C library's snprintf,
which serves here, in the tests only, as the oracle of what C prints."""

from __future__ import annotations

import ctypes
import itertools
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppcl.compiler.ir.printf_spec import CONVERSION, PrintfFormat, Spec, parse_spec
from ppcl.devices import cformat

_LIBC = ctypes.CDLL(None)


def c_snprintf(fmt: str, *args: object) -> str:
    """What the C library prints for ``fmt`` (bytes as characters 0-255)."""
    size = 4096
    buffer = ctypes.create_string_buffer(size)
    n = _LIBC.snprintf(buffer, size, fmt.encode("latin-1"), *args)
    assert 0 <= n < size
    return buffer.raw[:n].decode("latin-1")


def spec(text: str) -> Spec:
    m = CONVERSION.fullmatch(text)
    assert m is not None, text
    return parse_spec(m)


def bits_of(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


FLAGS = ["", "-", "+", " ", "#", "0", "-+", "+0", " 0", "#0", "-#", "+#0"]
WIDTHS = ["", "1", "9", "24"]
PRECISIONS = ["", ".", ".0", ".1", ".3", ".12", ".20"]
INTEGERS = [0, 1, -1, 7, 255, 300, -300, 65535, 70000, 2**31 - 1, -2**31, 2**40 + 5, -2**63,
            2**64 - 1]
FLOATS = [0.0, -0.0, 1.0, -1.5, 0.1, 2.5, 0.5, 1 / 3, 123456.789, 1e-5, 1e21, 9.9999996,
          5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 255.9375, math.inf,
          -math.inf, math.nan, -math.nan]


@pytest.mark.parametrize(("conversion", "length"),
                         [*itertools.product("diouxX", [None, "hh", "h", "l"]), ("c", None)])
def test_integer_conversions_print_as_c_prints_them(conversion, length):
    for flags, width, precision in itertools.product(FLAGS, WIDTHS, PRECISIONS):
        text = f"%{flags}{width}{precision}{length or ''}{conversion}"
        for value in INTEGERS:
            arg = ctypes.c_long(value - 2**64 if value >= 2**63 else value) if length == "l" \
                else ctypes.c_int((value + 2**31) % 2**32 - 2**31)
            assert cformat.convert(spec(text), value % 2**64) == c_snprintf(text, arg), \
                (text, value)


@pytest.mark.parametrize("conversion", list("fFeEgGaA"))
def test_floating_conversions_print_as_c_prints_them(conversion):
    for flags, width, precision in itertools.product(FLAGS, WIDTHS, PRECISIONS):
        text = f"%{flags}{width}{precision}{conversion}"
        for value in FLOATS:
            assert cformat.convert(spec(text), bits_of(value)) \
                == c_snprintf(text, ctypes.c_double(value)), (text, value)


@settings(max_examples=400, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True),
       st.sampled_from(list("fFeEgGaA")), st.sampled_from(FLAGS),
       st.sampled_from(["", ".0", ".1", ".2", ".6", ".13", ".17"]))
def test_any_double_prints_as_c_prints_it(value, conversion, flags, precision):
    text = f"%{flags}{precision}{conversion}"
    assert cformat.convert(spec(text), bits_of(value)) \
        == c_snprintf(text, ctypes.c_double(value))


@settings(max_examples=200, deadline=None)
@given(st.integers(-2**63, 2**64 - 1), st.sampled_from(list("diouxX")),
       st.sampled_from([None, "hh", "h", "l"]), st.sampled_from(FLAGS))
def test_any_integer_prints_as_c_prints_it(value, conversion, length, flags):
    text = f"%{flags}5.2{length or ''}{conversion}"
    arg = ctypes.c_ulong(value % 2**64) if length == "l" else ctypes.c_uint(value % 2**32)
    assert cformat.convert(spec(text), value % 2**64) == c_snprintf(text, arg)


def test_hexadecimal_floats_round_as_glibc_does():
    for value, text, expected in [(1.5, "%.0a", "0x2p+0"), (2.5, "%.0a", "0x1p+1"),
                                  (3.0, "%a", "0x1.8p+1"), (0.0, "%a", "0x0p+0"),
                                  (5e-324, "%a", "0x0.0000000000001p-1022"),
                                  (1.0, "%#a", "0x1.p+0"), (-1.0, "%A", "-0X1P+0")]:
        assert cformat.convert(spec(text), bits_of(value)) == expected
        assert c_snprintf(text, ctypes.c_double(value)) == expected


def test_infinities_and_nans_are_spelled_as_c_spells_them():
    assert cformat.convert(spec("%f"), bits_of(math.inf)) == "inf"
    assert cformat.convert(spec("%f"), bits_of(-math.inf)) == "-inf"
    assert cformat.convert(spec("%E"), bits_of(math.nan)) == "NAN"
    assert cformat.convert(spec("%06f"), bits_of(math.inf)) == "   inf"


@pytest.mark.parametrize(("flags", "width", "precision"),
                         itertools.product(FLAGS, WIDTHS, PRECISIONS))
def test_strings_print_as_c_prints_them(flags, width, precision):
    text = f"%{flags}{width}{precision}s"
    assert cformat.convert_string(spec(text), "hello world") \
        == c_snprintf(text, ctypes.c_char_p(b"hello world"))


@pytest.mark.parametrize(("flags", "width"), itertools.product(FLAGS, WIDTHS))
def test_pointers_print_as_glibc_prints_them(flags, width):
    text = f"%{flags}{width}p"
    for address in (0, 16, 0x7F001234ABCD):
        assert cformat.convert(spec(text), address) \
            == c_snprintf(text, ctypes.c_void_p(address)), (text, address)


def test_a_record_renders_text_conversions_strings_and_vector_components():
    fmt = PrintfFormat(("a=", spec("%d"), " v=", spec("%5.1v3f"), " ", spec("%s"), " ",
                        spec("%%"), spec("%v2hhx"), "\n"), ("lit",))
    slots = [2**64 - 7, bits_of(1.0), bits_of(-2.25), bits_of(1e3), 0x1FF, 0x10]
    assert cformat.render(fmt, slots) == "a=-7 v=  1.0, -2.2,1000.0 lit %ff,10\n"
