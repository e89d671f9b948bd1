"""printf for the C backend: OpenCL's vector conversions spelled out, output buffered.

OpenCL's ``%v4f`` prints a vector's components separated by commas; C's printf has no such
conversion, so each component becomes an argument of its own. Output goes to a per-thread
buffer (``PRINTF_SUPPORT``) that the entry point flushes after each chunk of work-groups, so
lines of concurrently running groups do not interleave.
"""

from __future__ import annotations

from collections.abc import Callable

from ppcl.compiler.codegen.cstyle import PREC_ASSIGN, PREC_POSTFIX, CodegenError, CStylePrinter
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.printf_spec import CONVERSION
from ppcl.compiler.ir.types import scalar_of, width_of

PRINTF_SUPPORT = r"""
static _Thread_local char ppcl_printf_buffer[1 << 16];
static _Thread_local size_t ppcl_printf_used;
static void ppcl_printf_flush(void)
{
    if (ppcl_printf_used == 0) {
        return;
    }
    fwrite(ppcl_printf_buffer, 1, ppcl_printf_used, stdout);
    fflush(stdout);
    ppcl_printf_used = 0;
}
static int ppcl_printf(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    char line[4096];
    int n = vsnprintf(line, sizeof line, format, ap);
    va_end(ap);
    if (n < 0) {
        return -1;
    }
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (ppcl_printf_used + len > sizeof ppcl_printf_buffer) {
        ppcl_printf_flush();
    }
    memcpy(ppcl_printf_buffer + ppcl_printf_used, line, len);
    ppcl_printf_used += len;
    return 0;
}
"""

def lower_printf(p: CStylePrinter, e: ir.Call, keeps_type: Callable[[ir.Expr], bool]) -> str:
    """The C call of the OpenCL ``printf`` call ``e``. ``keeps_type``: whether an argument is
    printed wider than its OpenCL type, so that it needs an explicit conversion (a variadic
    argument keeps its C type). The format is read with the front end's grammar
    (``ir/printf_spec.py``); the front end has checked every call against it and spelled the
    format canonically (no escape stands for a ``%``)."""
    fmt_expr = e.args[0]
    while isinstance(fmt_expr, ir.Cast):
        fmt_expr = fmt_expr.operand
    if not isinstance(fmt_expr, ir.StringLit):  # refused by the front end's checks
        raise CodegenError("printf format is not a string literal")
    values = list(e.args[1:])
    out_args: list[str] = []
    pieces: list[str] = []
    pos = 0
    text = fmt_expr.value
    for m in CONVERSION.finditer(text):
        pieces.append(text[pos:m.start()])
        pos = m.end()
        flags = m["flags"] + m["width"] + (m["precision"] or "")
        vec, conv = m["vector"], m["conversion"]
        if conv == "%":
            pieces.append("%%")
            continue
        if not values:  # refused by the front end's checks
            raise CodegenError(f"printf conversion {m.group(0)} has no argument")
        value = values.pop(0)
        if vec is None:
            pieces.append(m.group(0))
            if keeps_type(value):
                out_args.append(f"({p.type_name(value.type)})({p.expr(value, PREC_ASSIGN)})")
            else:
                out_args.append(p.expr(value, PREC_ASSIGN))
            continue
        width = int(vec[1:])
        elem = scalar_of(value.type)
        if conv in "fFeEgGaA":
            spec, cast = f"%{flags}{conv}", "double"
        elif conv in "di":
            spec, cast = f"%{flags}ll{conv}", "long long"
        else:
            spec, cast = f"%{flags}ll{conv}", "unsigned long long"
        temp = p.expr(value, PREC_POSTFIX)
        if elem is None or width_of(value.type) != width:  # refused by the front end's checks
            raise CodegenError(f"printf conversion {m.group(0)} takes a {width}-component "
                               f"vector, not '{value.type}'")
        comps = [f"({cast}){temp}[{k}]" for k in range(width)]
        pieces.append(",".join([spec] * width))
        out_args += comps
    pieces.append(text[pos:])
    fmt = "".join(pieces)
    return "ppcl_printf(" + ", ".join([f'"{fmt}"', *out_args]) + ")"
