"""Kernels called as functions get a plain function copy of their own.

OpenCL C 1.2 lets a kernel (or any function) call a kernel as an ordinary function. A kernel is
compiled as a whole NDRange's entry (a group function on the CPU, ``__global__`` in CUDA), which
no code can call, so every kernel that is called gets a copy that is not a kernel, named
``__ppcl_kernel_<name>``, and the calls go to the copy. The copy is declared where the kernel
is first declared (its prototype, or its definition), so a printer that keeps the program's
order declares it before its callers.

A called kernel that declares ``__local`` variables is an error at the call: its local memory
exists once per work-group of its own launch, and a function cannot declare any (clang leaves
such a call undefined).
"""

from __future__ import annotations

import dataclasses

from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import AddressSpace
from ppcl.compiler.ir.visit import Rewriter, walk

PREFIX = "__ppcl_kernel_"


class _Redirect(Rewriter):
    def __init__(self, called: frozenset[str]) -> None:
        self.called = called

    def rewrite_Call(self, e: ir.Call) -> ir.Expr:
        if e.builtin is None and e.name in self.called:
            return dataclasses.replace(e, name=PREFIX + e.name)
        return e


def _declares_local(f: ir.Function) -> bool:
    return any(isinstance(n, ir.VarDecl) and n.space is AddressSpace.LOCAL
               for n in walk(f.body)) if f.body is not None else False


def kernels_as_functions(module: ir.Module) -> tuple[ir.Module, list[tuple[Loc, str]]]:
    """``module`` with a function copy of every kernel some function calls, the calls going
    to it; and the errors (location, message) of calls to kernels that cannot be copied."""
    kernels = {f.name: f for f in module.functions if f.is_kernel}
    calls = [(n, f) for f in module.functions if f.body is not None for n in walk(f.body)
             if isinstance(n, ir.Call) and n.builtin is None and n.name in kernels]
    if not calls:
        return module, []
    errors = [(call.loc, f"kernel '{call.name}' declares __local variables and cannot be "
                         "called from a function or another kernel")
              for call, _ in calls if _declares_local(kernels[call.name])]
    called = frozenset(call.name for call, _ in calls)
    redirect = _Redirect(called)
    decls: list[ir.TopLevel] = []
    copied: set[str] = set()
    for d in module.decls:
        if isinstance(d, ir.Function) and d.is_kernel and d.name in called \
                and d.name not in copied:
            copied.add(d.name)
            kernel = kernels[d.name]
            decls.append(ir.Function(PREFIX + d.name, kernel.ret, kernel.params,
                                     None if kernel.body is None else redirect.rewrite(kernel.body),
                                     loc=kernel.loc))
        if isinstance(d, ir.Function) and d.body is not None:
            d = dataclasses.replace(d, body=redirect.rewrite(d.body))
        decls.append(d)
    return dataclasses.replace(module, decls=tuple(decls)), errors
