"""C's printf conversions, written in Python: what ppcl prints for a kernel's ``printf``.

The conversions of C99 (7.19.6.1) as glibc prints them: ``d i o u x X c s p f F e E g G a A
%``, the flags ``- + space # 0``, width and precision, the length modifiers ``hh h l`` (and
OpenCL's ``hl``), and OpenCL's vector conversions (``%v4f``: the components printed alike,
separated by commas, OpenCL C 1.2 section 6.12.13.2). Infinities and NaNs print as ``inf``
``-inf`` ``nan`` (``INF``... for the upper-case conversions; ``-nan`` when the sign bit is
set, as glibc prints it), the ``0`` flag padding them with spaces; ``%a`` prints the leading
hexadecimal digit glibc prints (``0x1.8p+1``, subnormals ``0x0.…p-1022``), rounded to
nearest, ties to even, when a precision asks for fewer digits.

Text is a ``str`` of characters 0-255, one per byte (``ir/printf_spec.py``); integers arrive
as the 64-bit pattern of the record's slot, floating values as Python floats.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

from ppcl.compiler.ir.printf_spec import PrintfFormat, Spec

FLOATING = "fFeEgGaA"
_BITS = {"hh": 8, "h": 16, None: 32, "hl": 32, "l": 64}
_MASK64 = (1 << 64) - 1


def render(fmt: PrintfFormat, slots: Sequence[int]) -> str:
    """The text one record of format ``fmt`` prints; ``slots``: its 8-byte slots as unsigned
    64-bit integers."""
    out: list[str] = []
    strings = iter(fmt.strings)
    at = 0
    for piece in fmt.pieces:
        if isinstance(piece, str):
            out.append(piece)
        elif piece.conversion == "%":
            out.append("%")
        elif piece.conversion == "s":
            out.append(convert_string(piece, next(strings)))
        else:
            count = piece.vector or 1
            values = slots[at:at + count]
            at += count
            out.append(",".join(convert(piece, v) for v in values))
    return "".join(out)


def convert(spec: Spec, slot: int) -> str:
    """One value of a conversion other than ``%s`` and ``%%``, from its slot's bits."""
    c = spec.conversion
    if c in FLOATING:
        return convert_float(spec, struct.unpack("<d", struct.pack("<Q", slot & _MASK64))[0])
    if c == "c":
        return _pad(spec, "", chr(slot & 0xFF), zeros=False)
    if c == "p":
        return convert_pointer(spec, slot & _MASK64)
    return convert_int(spec, slot)


def _pad(spec: Spec, prefix: str, body: str, zeros: bool) -> str:
    """``prefix`` (sign, ``0x``) and ``body`` padded to the width: on the right with ``-``,
    with zeros between prefix and body when ``zeros``, else with spaces on the left."""
    width = spec.width or 0
    fill = width - len(prefix) - len(body)
    if fill <= 0:
        return prefix + body
    if "-" in spec.flags:
        return prefix + body + " " * fill
    if zeros:
        return prefix + "0" * fill + body
    return " " * fill + prefix + body


def convert_int(spec: Spec, slot: int) -> str:
    """``d i o u x X``: the promoted value converted to the length modifier's type, as C's
    printf reads it (``%hhd`` of 300 prints 44)."""
    bits = _BITS[spec.length]
    value = slot & ((1 << bits) - 1)
    signed = spec.conversion in "di"
    if signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    magnitude = abs(value)
    c = spec.conversion
    if c == "o":
        digits = format(magnitude, "o")
    elif c in "xX":
        digits = format(magnitude, c)
    else:
        digits = str(magnitude)
    if spec.precision is not None:
        digits = "" if spec.precision == 0 and magnitude == 0 else digits.zfill(spec.precision)
    prefix = ""
    if "#" in spec.flags:
        if c == "o" and not digits.startswith("0"):
            digits = "0" + digits
        elif c in "xX" and magnitude != 0:
            prefix = "0" + c
    if signed:
        prefix = _sign(spec, value < 0) + prefix
    zeros = "0" in spec.flags and spec.precision is None
    return _pad(spec, prefix, digits, zeros)


def _sign(spec: Spec, negative: bool) -> str:
    if negative:
        return "-"
    if "+" in spec.flags:
        return "+"
    if " " in spec.flags:
        return " "
    return ""


def convert_float(spec: Spec, x: float) -> str:
    """``f F e E g G a A`` of a double."""
    c = spec.conversion
    sign = _sign(spec, math.copysign(1.0, x) < 0)
    if math.isnan(x) or math.isinf(x):
        body = "nan" if math.isnan(x) else "inf"
        return _pad(spec, sign, body.upper() if c in "FEGA" else body, zeros=False)
    if c in "aA":
        body = hex_float(abs(x), spec.precision, "#" in spec.flags)
        if c == "A":
            body = body.upper()
        return _pad(spec, sign + body[:2], body[2:], "0" in spec.flags)
    precision = 6 if spec.precision is None else spec.precision
    alternate = "#" if "#" in spec.flags else ""
    body = f"%{alternate}.{precision}{c}" % abs(x)
    return _pad(spec, sign, body, "0" in spec.flags)


def hex_float(x: float, precision: int | None, alternate: bool) -> str:
    """``%a`` of a non-negative finite double, as glibc prints it: ``0x1.8p+1``."""
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    biased = bits >> 52
    fraction = bits & ((1 << 52) - 1)
    if biased == 0:
        lead, exponent = 0, (-1022 if fraction else 0)
    else:
        lead, exponent = 1, biased - 1023
    if precision is None:
        digits = format(fraction, "013x").rstrip("0")
    elif precision >= 13:
        digits = format(fraction, "013x") + "0" * (precision - 13)
    else:
        shift = 4 * (13 - precision)
        mantissa = (lead << 52) | fraction
        kept, rest = mantissa >> shift, mantissa & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        if rest > half or (rest == half and kept & 1):
            kept += 1
        lead = kept >> (4 * precision)
        digits = format(kept & ((1 << (4 * precision)) - 1), f"0{precision}x") \
            if precision else ""
    point = "." if digits or alternate else ""
    return f"0x{lead:x}{point}{digits}p{exponent:+d}"


def convert_string(spec: Spec, text: str) -> str:
    """``%s``: the precision cuts the string, the width pads it with spaces."""
    if spec.precision is not None:
        text = text[:spec.precision]
    return _pad(spec, "", text, zeros=False)


def convert_pointer(spec: Spec, address: int) -> str:
    """``%p`` as glibc prints it: ``0x`` and lower-case hexadecimal (the sign flags and the
    ``0`` flag apply as to a signed conversion), ``(nil)`` for null."""
    if address == 0:
        return _pad(spec, "", "(nil)", zeros=False)
    return _pad(spec, _sign(spec, False) + "0x", format(address, "x"), "0" in spec.flags)
