"""printf for the C backend: a record appended to the kernel's printf buffer, never a call of
the C library.

A call stores its format id, the global linear id of the work-item printing and its values
(``ir/printf_spec.py`` defines the record); the
device reads the buffer after the launch and prints the records with ppcl's own formatter
(``devices/printf_buffer.py``). The buffer and its counters are symbols the unit exports, so
the entry point's signature is that of a kernel without printf. Space is reserved with an
atomic compare-and-swap on ``ppcl_printf_used``, so work-groups running on several threads
never share bytes, and ``ppcl_printf_used`` is always the end of the last whole record; a
record that does not fit is dropped and counted in ``ppcl_printf_dropped``.
"""

from __future__ import annotations

from collections.abc import Callable

from ppcl.compiler.codegen.cstyle import PREC_ASSIGN, CodegenError, CStylePrinter
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.printf_spec import (
    HEADER_BYTES,
    PrintfFormat,
    canonical_literal,
    printf_format,
)
from ppcl.compiler.ir.types import PointerType, Type, scalar_of, width_of

# OpenCL 1.2 asks a full-profile device for at least 1 MB (CL_DEVICE_PRINTF_BUFFER_SIZE)
PRINTF_BUFFER_BYTES = 1 << 20

PRINTF_SUPPORT = f"""
#define PPCL_PRINTF_CAPACITY ((size_t){PRINTF_BUFFER_BYTES})""" + r"""
char ppcl_printf_buffer[PPCL_PRINTF_CAPACITY] __attribute__((aligned(8)));
size_t ppcl_printf_used;
size_t ppcl_printf_dropped;
const size_t ppcl_printf_capacity = PPCL_PRINTF_CAPACITY;
typedef union ppcl_printf_slot {
    long long i;
    unsigned long long u;
    double f;
} ppcl_printf_slot;
static int ppcl_printf_record(uint32_t format, uint32_t size, uint64_t item,
                              const ppcl_printf_slot *slots)
{
    size_t at = __atomic_load_n(&ppcl_printf_used, __ATOMIC_RELAXED);
    do {
        if (size > PPCL_PRINTF_CAPACITY - at) {
            __atomic_fetch_add(&ppcl_printf_dropped, 1, __ATOMIC_RELAXED);
            return -1;
        }
    } while (!__atomic_compare_exchange_n(&ppcl_printf_used, &at, at + size, 1,
                                          __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    const uint32_t header[2] = {format, size};
    memcpy(ppcl_printf_buffer + at, header, sizeof header);
    memcpy(ppcl_printf_buffer + at + sizeof header, &item, sizeof item);
    if (size > sizeof header + sizeof item) {
        memcpy(ppcl_printf_buffer + at + sizeof header + sizeof item, slots,
               size - sizeof header - sizeof item);
    }
    return 0;
}
"""


def _quoted(text: str) -> str:
    """``text`` (bytes as characters 0-255) as a C string literal that can sit in a comment."""
    return '"' + canonical_literal(text).replace("*/", "*\\/") + '"'


def format_table_comment(formats: tuple[PrintfFormat, ...]) -> str:
    """The unit's format table as a C comment, one line per format id with the strings its
    ``%s`` conversions print, for readers of the C (``PPCL_DEBUG=c``): the records carry only
    the ids."""
    lines = ["/* printf formats, by the id their records carry:"]
    for i, fmt in enumerate(formats):
        lines.append(f"   {i}: " + " ".join(_quoted(t) for t in (str(fmt), *fmt.strings)))
    return "\n".join(lines) + " */"


def _slot(t: Type, value: str) -> str:
    """The initializer of the record slot holding ``value`` of OpenCL type ``t``."""
    if isinstance(t, PointerType):
        return f"{{.u = (unsigned long long)(uintptr_t)({value})}}"
    elem = scalar_of(t)
    if elem is None:  # refused by the front end's checks
        raise CodegenError(f"printf cannot print a value of type '{t}'")
    if elem.is_float:
        return f"{{.f = (double)({value})}}"
    if elem.is_signed or elem.is_bool:
        return f"{{.i = (long long)({value})}}"
    return f"{{.u = (unsigned long long)({value})}}"


def lower_printf(p: CStylePrinter, e: ir.Call, format_ids: dict[PrintfFormat, int],
                 keeps_type: Callable[[ir.Expr], bool], work_item: str) -> str:
    """The C of the OpenCL ``printf`` call ``e``: an expression of type ``int`` (0, or -1 when
    the buffer is full) appending the call's record. ``format_ids``: the unit's format table
    (``printf_table``); ``keeps_type``: whether an argument is printed wider than its OpenCL
    type, so that it needs converting to that type first; ``work_item``: the C of the calling
    work-item's global linear id. A vector argument is evaluated once,
    into a temporary, and stored one component per slot."""
    fmt = printf_format(e)
    format_id = format_ids[fmt]
    temps: list[str] = []
    slots: list[str] = []
    for value in e.args[1:]:
        if isinstance(value, ir.StringLit):
            continue  # the format table holds it
        text = p.expr(value, PREC_ASSIGN)
        if keeps_type(value):
            text = f"({p.type_name(value.type)})({text})"
        width = width_of(value.type)
        if width == 1:
            slots.append(_slot(value.type, text))
            continue
        temp = f"__pf{len(temps)}"
        temps.append(f"{p.declaration(value.type, temp)} = {text};")
        elem = scalar_of(value.type)
        assert elem is not None
        slots += [_slot(elem, f"{temp}[{k}]") for k in range(width)]
    if len(slots) != fmt.slots:  # refused by the front end's checks
        raise CodegenError(f"printf format takes {fmt.slots} values, the call passes "
                           f"{len(slots)}")
    size = HEADER_BYTES + 8 * len(slots)
    array = "(const ppcl_printf_slot[]){" + ", ".join(slots) + "}" if slots else "0"
    call = f"ppcl_printf_record({format_id}u, {size}u, (uint64_t)({work_item}), {array})"
    if not temps:
        return call
    return "({ " + " ".join(temps) + " " + call + "; })"
