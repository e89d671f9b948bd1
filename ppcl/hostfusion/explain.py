"""What host fusion's analyses say of a kernel, for ``ppcl explain``: the device's execution
order, per dimension whether coarsening may merge work-items and what it would share, per
buffer parameter whether its layout may be transposed and the reuse distances of both layouts
(when a launch shape is given), whether the kernel vectorizes, and the guard's stored choices.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ppcl.compiler.analysis.order import ExecutionOrder
from ppcl.compiler.analysis.reuse import better_layout
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import PointerType
from ppcl.compiler.transforms import coarsen as coarsening
from ppcl.compiler.transforms import layout as layouts
from ppcl.compiler.transforms import vectorize as vectorizing
from ppcl.hostfusion.guard import stored_choices


def explain_kernel(fn: ir.Function, order: ExecutionOrder,
                   global_size: tuple[int, int, int] | None, local_size: tuple[int, int, int],
                   values: Mapping[str, int]) -> Iterator[str]:
    yield f"host fusion model: {order.describe()}"
    for dim in coarsening.coarsen_facts(fn).dims:
        verdict = "coarsenable" if dim.coarsenable else "not coarsenable"
        yield (f"coarsen dimension {dim.dim}: {verdict}: {dim.reason} (shares "
               f"{dim.shared_cost} of {dim.total_cost} per work-item)")
    for param in fn.params:
        if not isinstance(param.type, PointerType):
            continue
        facts = layouts.transposable(fn, param.name)
        if isinstance(facts, str):
            yield f"layout of {param.name}: not transposable: {facts}"
            continue
        yield f"layout of {param.name}: transposable, {facts.accesses} accesses"
        if global_size is not None:
            try:
                transposed, reason = better_layout(fn, param.name, order, global_size,
                                                   local_size, values, facts)
            except ValueError as error:  # a size the launch's --arg values do not give
                yield f"  reuse distances not computed: {error} (give it with --arg)"
                continue
            yield f"  {'transpose' if transposed else 'keep'}: {reason}"
    vector = vectorizing.vectorize_facts(fn)
    if vector.possible:
        width, why = vectorizing.choose_width(vector, order, 4)
        yield f"vectorize: possible ({vector.reason}); width {width}: {why}"
    else:
        yield f"vectorize: not possible: {vector.reason}"
    for stored in stored_choices(fn.name):
        yield f"guard's stored choice for {stored['title']}: {stored['choice']}"
