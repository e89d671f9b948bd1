"""OpenCL C: the dialect whose spellings are the IR's own, used to hand kernels to vendor
compilers and to show programs to people."""

from __future__ import annotations

from ppcl.compiler.codegen.cstyle import CStylePrinter, Dialect

OPENCL = Dialect(name="opencl")

_PRINTER = CStylePrinter(OPENCL)


def print_opencl(node: object) -> str:
    """OpenCL C text of a module, top-level declaration, statement, expression or type."""
    return _PRINTER.print(node)
