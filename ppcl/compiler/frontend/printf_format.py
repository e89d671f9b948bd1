"""The ``printf`` format of OpenCL C 1.2 (section 6.12.13), checked against the arguments.

A conversion is ``%[flags][width][.precision][vector][length]conversion``: flags ``-+ #0``,
decimal width and precision, a vector specifier ``v2 v3 v4 v8 v16``, a length modifier ``hh h
hl l`` and one of ``d i o u x X f F e E g G a A c s p``; ``%%`` prints a percent sign. The
front end checks every call before code is generated, so what the device's formatter prints
is a format whose conversions match their arguments: a mismatch is an error located at the
argument, worded as clang words it. An integer of another width or signedness than a scalar
integer conversion names (``%lx`` of a ``uint``, ``%d`` of a ``long``) is clang's warning
instead: the value is converted to the type the conversion reads, as published kernels rely on
(debug macros whose dead branches print an array's elements with every length modifier).
``%s`` takes a string literal only (OpenCL C 1.2 allows no other), ``%n`` is refused.

The format is checked as the C compiler will read it, escapes decoded (``"\\x25d"`` is
``%d``), and handed on spelled canonically (``canonical_literal``), so that the record
layout (``ir/printf_spec.py``), which reads the format text again, sees exactly the
conversions checked here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import types as T
from ppcl.compiler.ir.printf_spec import CONVERSION, FormatError, canonical_literal, decode

_INTEGER = "diouxXc"
_FLOATING = "fFeEgGaA"
_SIGNED = "di"

# length modifier -> the integer element types a vector conversion takes (OpenCL C 1.2 table
# 6.24); no modifier: 32-bit elements, as ``%v4d`` is read by implementations that accept it
_VECTOR_INTEGERS = {"hh": ("char", "uchar"), "h": ("short", "ushort"), "hl": ("int", "uint"),
                    "l": ("long", "ulong"), None: ("int", "uint")}
_VECTOR_FLOATS = {"h": ("half",), "hl": ("float",), "l": ("double",), None: ("float", "double")}
# the scalar types a promoted integer argument may have under each length modifier
_SCALAR_INTEGERS = {None: ("bool", "char", "uchar", "short", "ushort", "int", "uint"),
                    "hh": ("bool", "char", "uchar", "short", "ushort", "int", "uint"),
                    "h": ("bool", "char", "uchar", "short", "ushort", "int", "uint"),
                    "l": ("long", "ulong")}
_C_INTEGER_NAMES = {(None, True): "int", ("hh", True): "char", ("h", True): "short",
                    ("l", True): "long", (None, False): "unsigned int",
                    ("hh", False): "unsigned char", ("h", False): "unsigned short",
                    ("l", False): "unsigned long"}


@dataclass(frozen=True)
class Conversion:
    """One ``%`` conversion: its text and where it starts in the literal's spelling."""

    text: str
    spelled_at: int  # offset in the spelling between the quotes
    flags: str
    precision: str | None
    vector: int | None
    length: str | None
    conversion: str


def conversions(text: str, offsets: list[int]) -> tuple[list[Conversion], tuple[int, str] | None]:
    """The conversions of a decoded format, and the first malformed one as (spelling offset,
    message), if any."""
    found: list[Conversion] = []
    i = 0
    while True:
        i = text.find("%", i)
        if i < 0:
            return found, None
        m = CONVERSION.match(text, i)
        if m is None:
            return found, (offsets[i], _malformed(text, i))
        if m.group("conversion") == "%" and m.group(0) != "%%":
            return found, (offsets[i], "'%%' takes no flags, width, precision or modifiers")
        vector = m.group("vector")
        found.append(Conversion(m.group(0), offsets[i], m.group("flags"), m.group("precision"),
                                int(vector[1:]) if vector else None, m.group("length"),
                                m.group("conversion")))
        i = m.end()


def _malformed(text: str, i: int) -> str:
    rest = re.match(r"%[-+ #0]*[0-9]*(?:\.[0-9]*)?(?:v[0-9]*)?(?:hh|hl|h|ll|l|j|z|t|L)?(.)?",
                    text[i:])
    assert rest is not None
    spec = rest.group(1)
    if spec is None:
        return "incomplete format specifier"
    if spec == "n":
        return "'%n' specifier not supported in OpenCL C"
    if spec == "*" or "*" in text[i:i + len(rest.group(0))]:
        return "'*' field width or precision is not supported in OpenCL C printf"
    if rest.group(0)[1:].find("v") >= 0 and not re.search(r"v(16|2|3|4|8)", rest.group(0)):
        return "invalid vector specifier: the vector length must be 2, 3, 4, 8 or 16"
    if spec.isprintable() and not spec.isspace():
        return f"invalid conversion specifier '{spec}'"
    return "invalid conversion specifier"


def _scalar_name(t: T.Type) -> str | None:
    return t.name if isinstance(t, T.ScalarType) else None


def expected_type(c: Conversion) -> str:
    """The argument type a conversion specifies, in clang's words."""
    if c.vector is not None:
        if c.conversion in _FLOATING:
            elem = {"h": "half", "hl": "float", "l": "double", None: "float"}[c.length]
        else:
            elem = {"hh": "char", "h": "short", "hl": "int", "l": "long", None: "int"}[c.length]
            if c.conversion not in _SIGNED:
                elem = "u" + elem
        return f"{elem}{c.vector}"
    if c.conversion in _FLOATING:
        return "double"
    if c.conversion == "c":
        return "int"
    if c.conversion == "s":
        return "char *"
    if c.conversion == "p":
        return "void *"
    return _C_INTEGER_NAMES[(c.length, c.conversion in _SIGNED)]


def _length_problem(c: Conversion) -> str | None:
    """Why a length modifier cannot go with the conversion, if it cannot."""
    if c.length is None:
        return None
    if c.vector is None and c.length == "hl":
        return "length modifier 'hl' is only allowed with a vector specifier"
    if c.conversion in "csp" or (c.vector is None and c.conversion in _FLOATING
                                 and c.length != "l"):
        return (f"length modifier '{c.length}' results in undefined behavior or no effect with "
                f"'{c.conversion}' conversion specifier")
    if c.vector is not None and c.conversion in _FLOATING and c.length == "hh":
        return "length modifier 'hh' cannot be used with a floating-point vector conversion"
    return None


def integer_reading(c: Conversion, arg: ir.Expr) -> str | None:
    """The scalar type a scalar integer conversion reads, where ``arg`` is a scalar integer
    of another width or signedness (clang's -Wformat warning, not an error); else None."""
    if c.vector is not None or c.conversion not in _INTEGER:
        return None
    if _scalar_name(arg.type) not in _SCALAR_INTEGERS[None] + _SCALAR_INTEGERS["l"]:
        return None
    signed = c.conversion in _SIGNED or c.conversion == "c"
    base = "long" if c.length == "l" else "int"
    return base if signed else "u" + base


def _matches(c: Conversion, arg: ir.Expr) -> bool:
    t = arg.type
    if c.vector is not None:
        if not isinstance(t, T.VectorType) or t.width != c.vector:
            return False
        allowed = (_VECTOR_FLOATS if c.conversion in _FLOATING else _VECTOR_INTEGERS)[c.length]
        return t.elem.name in allowed
    if c.conversion in _FLOATING:
        return _scalar_name(t) in ("float", "double")
    if c.conversion == "s":
        return isinstance(arg, ir.StringLit)
    if c.conversion == "p":
        return isinstance(t, T.PointerType)
    if c.conversion == "c":
        return _scalar_name(t) in _SCALAR_INTEGERS[None]
    return _scalar_name(t) in _SCALAR_INTEGERS[c.length]


def check_printf(fmt: ir.Expr, args: list[ir.Expr], call_loc: Loc,
                 error: Callable[[Loc, str], None], warning: Callable[[Loc, str], None],
                 readings: dict[int, str]) -> str | None:
    """Check a ``printf`` call of format ``fmt`` and arguments ``args``; report problems
    through ``error`` and ``warning``. Returns the canonical spelling of the format (see the
    module docstring), or None when the call was reported. ``readings`` receives, per index
    of an integer argument the format reads at another width or signedness, the scalar type
    the argument is to be converted to."""
    if not isinstance(fmt, ir.StringLit):
        error(fmt.loc, "format string is not a string literal (OpenCL C 1.2 printf takes a "
                       "literal format)")
        return None
    try:
        text, offsets = decode(fmt.value)
    except FormatError as exc:
        error(fmt.loc, str(exc))
        return None

    def at(offset: int) -> Loc:
        if fmt.loc.line <= 0:
            return fmt.loc
        return Loc(fmt.loc.file, fmt.loc.line, fmt.loc.col + 1 + offset)

    found, malformed = conversions(text, offsets)
    if malformed is not None:
        error(at(malformed[0]), malformed[1])
        return None
    ok = True
    values = [c for c in found if c.conversion != "%"]
    for i, c in enumerate(values):
        problem = _length_problem(c)
        if problem is not None:
            error(at(c.spelled_at), problem)
            ok = False
            continue
        if i >= len(args):
            error(at(c.spelled_at), "more '%' conversions than data arguments")
            return None
        arg = args[i]
        if c.conversion == "s" and isinstance(arg.type, T.PointerType) \
                and not isinstance(arg, ir.StringLit):
            error(arg.loc, "'%s' takes only a string literal in OpenCL C 1.2")
            ok = False
        elif not _matches(c, arg):
            message = (f"format specifies type '{expected_type(c)}' but the argument has "
                       f"type '{arg.type}'")
            reading = integer_reading(c, arg)
            if reading is None:
                error(arg.loc, message)
                ok = False
            else:
                warning(arg.loc, f"{message}; the value is converted to '{reading}'")
                readings[i] = reading
    if len(args) > len(values):
        error(args[len(values)].loc, "data argument not used by format string")
        ok = False
    return canonical_literal(text) if ok else None
