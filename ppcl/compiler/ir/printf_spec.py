"""The conversion syntax of OpenCL C 1.2's ``printf`` (section 6.12.13.2), one definition for
the front end's format check, the C backend's lowering and the device's printing; and the
record a ``printf`` call writes.

ppcl prints with its own formatter, never the C library's: a call appends a record to the
kernel's printf buffer, and the device prints the records after the launch. A record is a
16-byte header (``uint32`` format id, ``uint32`` record size in bytes, ``uint64`` the printing
work-item's global linear id, by which the device keeps each work-item's output in one piece)
and one 8-byte slot per printed value: an integer as a 64-bit integer (the conversion's length modifier applies when it
is printed, as C's printf applies it to the promoted argument), a floating value as a
``double``, a pointer as its address, a vector as one slot per component. The format id indexes
the kernel's table of ``PrintfFormat`` (``printf_table``), which holds the format and the
string literals that ``%s`` prints (OpenCL C 1.2 allows no other strings), so that no record
carries text and nothing of the format is decided at run time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.visit import walk

# %[flags][width][.precision][vector specifier][length modifier]conversion
CONVERSION = re.compile(
    r"%(?P<flags>[-+ #0]*)(?P<width>[0-9]*)(?P<precision>\.[0-9]*)?"
    r"(?P<vector>v(?:16|2|3|4|8))?(?P<length>hh|hl|h|l)?(?P<conversion>[diouxXfFeEgGaAcsp%])")

HEADER_BYTES = 16
SLOT_BYTES = 8

_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "?": "?", "a": "\a",
                   "b": "\b", "f": "\f", "r": "\r", "v": "\v"}


class FormatError(Exception):
    """A string literal whose escapes cannot be decoded."""


_SPELLED_ESCAPES = {"\n": "\\n", "\t": "\\t", "\\": "\\\\", '"': '\\"'}


def canonical_literal(text: str) -> str:
    """The spelling between quotes of a string literal holding the bytes ``text`` (characters
    of code 0-255, as ``decode`` gives them): printable ASCII as itself, the rest as escapes
    (octal, three digits, so no following digit joins them)."""
    out: list[str] = []
    for c in text:
        if c in _SPELLED_ESCAPES:
            out.append(_SPELLED_ESCAPES[c])
        elif " " <= c <= "~":
            out.append(c)
        else:
            out += [f"\\{byte:03o}" for byte in c.encode("latin-1")]
    return "".join(out)


def decode(spelling: str) -> tuple[str, list[int]]:
    """The bytes of a string literal spelled ``spelling``, as characters of code 0-255 (escapes
    decoded, other characters as their UTF-8 bytes), and for each byte the offset of the
    spelling it comes from."""
    chars: list[str] = []
    offsets: list[int] = []
    i = 0
    while i < len(spelling):
        start = i
        c = spelling[i]
        if c != "\\":  # a character of the source: its UTF-8 bytes, as a C compiler stores it
            utf8 = c.encode("utf-8", "surrogateescape")
            chars += [chr(b) for b in utf8]
            offsets += [start] * len(utf8)
            i += 1
            continue
        if i + 1 >= len(spelling):
            raise FormatError("string literal ends in a lone backslash")
        c = spelling[i + 1]
        if c in _SIMPLE_ESCAPES:
            chars.append(_SIMPLE_ESCAPES[c])
            i += 2
        elif c in "01234567":
            digits = re.match(r"[0-7]{1,3}", spelling[i + 1:])
            assert digits is not None
            chars.append(chr(int(digits.group(0), 8) & 0xFF))
            i += 1 + len(digits.group(0))
        elif c == "x":
            digits = re.match(r"[0-9a-fA-F]+", spelling[i + 2:])
            if digits is None:
                raise FormatError("\\x used with no following hex digits")
            value = int(digits.group(0), 16)
            if value > 0xFF:
                raise FormatError("hex escape sequence out of range")
            chars.append(chr(value))
            i += 2 + len(digits.group(0))
        else:  # an unknown escape stands for the character, as C compilers read it
            chars.append(c)
            i += 2
        offsets.append(start)
    return "".join(chars), offsets


@dataclass(frozen=True)
class Spec:
    """One conversion of a format, parsed: ``%[flags][width][.precision][vN][length]conv``."""

    flags: str
    width: int | None
    precision: int | None  # ``%.f`` is precision 0
    vector: int | None
    length: str | None
    conversion: str

    def __str__(self) -> str:
        width = "" if self.width is None else str(self.width)
        precision = "" if self.precision is None else f".{self.precision}"
        vector = "" if self.vector is None else f"v{self.vector}"
        return f"%{self.flags}{width}{precision}{vector}{self.length or ''}{self.conversion}"

    @property
    def slots(self) -> int:
        """The 8-byte slots of a record that the conversion prints."""
        if self.conversion in "s%":
            return 0
        return self.vector or 1


def parse_spec(m: re.Match[str]) -> Spec:
    precision = m["precision"]
    return Spec(m["flags"], int(m["width"]) if m["width"] else None,
                None if precision is None else int(precision[1:] or "0"),
                int(m["vector"][1:]) if m["vector"] else None, m["length"], m["conversion"])


@dataclass(frozen=True)
class PrintfFormat:
    """What one ``printf`` call prints: the decoded format in pieces (text, conversions) and
    the decoded string literals of its ``%s`` conversions, in order. Text is characters of
    code 0-255, one per byte the C compiler would have stored."""

    pieces: tuple[str | Spec, ...]
    strings: tuple[str, ...]

    def __str__(self) -> str:
        return "".join(str(p) for p in self.pieces)

    @property
    def slots(self) -> int:
        return sum(p.slots for p in self.pieces if isinstance(p, Spec))

    @property
    def record_bytes(self) -> int:
        return HEADER_BYTES + SLOT_BYTES * self.slots


def format_literal(e: ir.Call) -> ir.StringLit | None:
    """The format literal of a ``printf`` call (under the casts the front end may add)."""
    fmt = e.args[0] if e.args else None
    while isinstance(fmt, ir.Cast):
        fmt = fmt.operand
    return fmt if isinstance(fmt, ir.StringLit) else None


def printf_format(e: ir.Call) -> PrintfFormat:
    """The format of a ``printf`` call the front end has checked (``frontend/printf_format.py``):
    a literal format whose conversions match the arguments, ``%s`` arguments literals."""
    literal = format_literal(e)
    if literal is None:
        raise ValueError("printf format is not a string literal")
    text = decode(literal.value)[0]
    pieces: list[str | Spec] = []
    strings: list[str] = []
    values = list(e.args[1:])
    pos = 0
    for m in CONVERSION.finditer(text):
        if m.start() > pos:
            pieces.append(text[pos:m.start()])
        pos = m.end()
        spec = parse_spec(m)
        pieces.append(spec)
        if spec.conversion == "%":
            continue
        if not values:
            raise ValueError(f"printf conversion {m.group(0)} has no argument")
        value = values.pop(0)
        if spec.conversion == "s":
            if not isinstance(value, ir.StringLit):
                raise ValueError("printf %s takes a string literal")
            strings.append(decode(value.value)[0])
    if pos < len(text):
        pieces.append(text[pos:])
    return PrintfFormat(tuple(pieces), tuple(strings))


def printf_table(roots: Iterable[ir.Stmt]) -> tuple[PrintfFormat, ...]:
    """The formats of the ``printf`` calls under ``roots``, each once, in the order first met:
    index ``i`` is the format id that records of format ``i`` carry."""
    table: dict[PrintfFormat, None] = {}
    for root in roots:
        for n in walk(root):
            if isinstance(n, ir.Call) and n.builtin is not None and n.name == "printf":
                table.setdefault(printf_format(n), None)
    return tuple(table)
