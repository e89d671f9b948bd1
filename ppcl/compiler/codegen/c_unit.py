"""The C translation unit of one kernel for the CPU backend.

Layout: ``ppcl_types.h``, the definitions of the builtins the program calls, the launch
descriptor, the program's records/typedefs/``__constant`` tables, helper functions, the group
function ``ppcl_group_<kernel>`` (``codegen/kernel_c.py``) and the entry point::

    void ppcl_run_<kernel>(void **args, const ppcl_launch *launch,
                           size_t first_group, size_t last_group, char *local_mem);

which runs the linear group range ``[first_group, last_group)`` (groups numbered x fastest).
``args[i]`` points at the bytes of argument ``i``: for a buffer, at the data pointer; for a
scalar, vector or struct, at its value; for a ``__local`` pointer argument, at a ``size_t``
offset into ``local_mem`` (one local block per executing thread; the kernel's own ``__local``
variables occupy its first ``local_mem_static_bytes``). A kernel scheduled to run rows of
groups (``FormedKernel.rows``) gets the rest of the chunk's row in one call.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ppcl.compiler.analysis.callgraph import WORKITEM_FUNCTIONS, helpers_using_workitems
from ppcl.compiler.codegen.c_builtins import TYPES_HEADER, c_builtin_definitions
from ppcl.compiler.codegen.c_printf import PRINTF_SUPPORT, format_table_comment
from ppcl.compiler.codegen.cstyle import INDENT
from ppcl.compiler.codegen.kernel_c import Formed, KernelPrinter
from ppcl.compiler.ir import builtins
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.printf_spec import PrintfFormat, printf_table
from ppcl.compiler.ir.types import (
    AddressSpace,
    ArrayType,
    ImageType,
    PointerType,
    Type,
    VectorType,
    component_layout,
)
from ppcl.compiler.ir.visit import Rewriter, walk
from ppcl.compiler.ir.wgnodes import FEW_LANES

_LOWERED_HERE = WORKITEM_FUNCTIONS + ("barrier", "work_group_barrier", "async_work_group_copy",
                                      "async_work_group_strided_copy", "wait_group_events",
                                      "printf")



class _StaticInit(Rewriter):
    """A program-scope initializer as C accepts it for a static object: vector literals and
    scalars widened to vectors (C compound literals, which are not constant expressions) become
    brace lists of their components."""

    def rewrite_Cast(self, e: ir.Cast) -> ir.Expr:
        if isinstance(e.type, VectorType) and not isinstance(e.operand.type, VectorType):
            return ir.InitList(e.type, (e.operand,) * e.type.width, loc=e.loc)  # a splat
        return e

    def rewrite_VectorLiteral(self, e: ir.VectorLiteral) -> ir.Expr:
        assert isinstance(e.type, VectorType)
        if len(e.elems) == 1 and not isinstance(e.elems[0].type, VectorType):
            return ir.InitList(e.type, e.elems * e.type.width, loc=e.loc)
        parts: list[ir.Expr] = []
        for elem in e.elems:
            inner = elem.operand if isinstance(elem, ir.Cast) and elem.implicit else elem
            if isinstance(inner, ir.InitList) and isinstance(inner.type, VectorType):
                parts.extend(inner.elems[:inner.type.width])
            else:
                parts.append(elem)
        return ir.InitList(e.type, tuple(parts), loc=e.loc)


PRELUDE = r"""
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdarg.h>
typedef size_t event_t;
typedef unsigned long sampler_t;
typedef struct ppcl_image *image1d_t, *image1d_buffer_t, *image1d_array_t, *image2d_t,
    *image2d_array_t, *image3d_t;
#define __read_only
#define __write_only
typedef struct ppcl_launch {
    size_t work_dim;
    size_t global_size[3];
    size_t global_offset[3];
    size_t local_size[3];
    size_t num_groups[3];
    size_t unsplit;  /* bit k: split loop k runs as formed (the dispatcher's choice) */
} ppcl_launch;
typedef struct ppcl_group {
    size_t group[3];
    size_t gbase[3];
    const ppcl_launch *launch;
} ppcl_group;
/* Integer division and remainder as OpenCL C defines them (the C dialect prints them for
 * divisors that are not constants): a zero divisor, or the most negative value divided by -1,
 * gives an unspecified value where C traps, here that of dividing by 1. S: scalars, whose
 * a conditional divisor; V: GCC vectors, whose comparisons give 0 or -1 per lane, a mask. */
#define PPCL_SDIV_S(op, T, n, d, min) ({ T __pn = (n); T __pd = (d); \
    __pd = __pd == 0 || (__pd == -1 && __pn == (min)) ? 1 : __pd; PPCL_DIV32_S(op, T); })
#define PPCL_UDIV_S(op, T, n, d, min) ({ T __pn = (n); T __pd = (d); \
    __pd = __pd == 0 ? 1 : __pd; PPCL_DIV32_S(op, T); })
#define PPCL_SDIV_V(op, T, n, d, min) ({ T __pn = (n); T __pd = (d); \
    T __pm = (T)((__pd == 0) | ((__pn == (min)) & (__pd == -1))); \
    __pd = (__pd & ~__pm) | (__pm & 1); PPCL_DIV32_V(op, T); })
#define PPCL_UDIV_V(op, T, n, d, min) ({ T __pn = (n); T __pd = (d); \
    __pd = __pd | ((T)(__pd == 0) & 1); PPCL_DIV32_V(op, T); })
/* __pn op __pd, for a divisor that is neither 0 nor -1 with the most negative dividend. Up to
 * 32 bits a lane, the quotient is that of the two as doubles, truncated: exact, since the
 * double quotient is rounded once and never across an integer (a non-integer n / d is at least
 * 1 / |d| from the nearest integer, more than half an ulp of it). x86 divides vectors of
 * doubles and no vectors of integers, so a loop dividing by a divisor that differs from one
 * work-item to the next vectorizes. (1 op 1) is 1 for a quotient and 0 for a remainder. Not
 * where the build lets the C compiler divide by multiplying with a reciprocal, which is not
 * exact. */
#ifdef __RECIPROCAL_MATH__
#define PPCL_DIV32_S(op, T) (__pn op __pd)
#define PPCL_DIV32_V(op, T) (__pn op __pd)
#else
#define PPCL_DIV32_S(op, T) __builtin_choose_expr(sizeof(T) <= 4, \
    ({ T __pq = (T)((double)__pn / (double)__pd); (1 op 1) ? __pq : (T)(__pn - __pq * __pd); }), \
    __pn op __pd)
#define PPCL_DIV32_V(op, T) __builtin_choose_expr(sizeof(__pn[0]) == 4, \
    ({ typedef double __ppcl_dv \
           __attribute__((vector_size(sizeof(double) * (sizeof(T) / sizeof(__pn[0]))))); \
       T __pq = __builtin_convertvector(__builtin_convertvector(__pn, __ppcl_dv) \
                                        / __builtin_convertvector(__pd, __ppcl_dv), T); \
       (1 op 1) ? __pq : __pn - __pq * __pd; }), \
    __pn op __pd)
#endif
/* Whether any of the n bytes at p is not zero: a lane mask with a lane set, or a block of
   lanes whose guard's flags are not all zero bits (transforms/skip.py); a word at a time. */
static inline int ppcl_any(const void *p, size_t n)
{
    const unsigned char *bytes = (const unsigned char *)p;
    unsigned long any = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        unsigned long word;
        memcpy(&word, bytes + i, sizeof word);
        any |= word;
    }
    for (; i < n; i++) {
        any |= bytes[i];
    }
    return any != 0;
}
/* Whether at most one in PPCL_FEW_LANES of the n lanes of a mask is set. */
#define PPCL_FEW_LANES FEW_LANES_VALUE
static inline int ppcl_few(const int *mask, size_t n)
{
    int set = 0;
    for (size_t i = 0; i < n; i++) {
        set += mask[i] != 0;
    }
    return (size_t)set * PPCL_FEW_LANES <= n;
}
static inline int ppcl_all(const int *mask, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!mask[i]) {
            return 0;
        }
    }
    return 1;
}
""".replace("FEW_LANES_VALUE", str(FEW_LANES))


@dataclass(frozen=True)
class ArgKind:
    """How argument ``index`` is passed: ``buffer``, ``local`` (a size_t offset), ``value``."""

    name: str
    kind: str
    type: Type
    size: int  # bytes of the value for ``value`` arguments



@dataclass(frozen=True)
class CUnit:
    """A printed translation unit: its text, its entry point and how arguments are passed."""

    source: str
    entry: str
    arg_kinds: tuple[ArgKind, ...]
    printf_formats: tuple[PrintfFormat, ...]  # the records' format table; empty: no printf

    @property
    def uses_printf(self) -> bool:
        return bool(self.printf_formats)


def _lanes_innermost(t: Type, items: int) -> Type:
    """Array type ``t`` (``T[n][m]``) with a dimension of ``items`` work-items added inside
    its innermost one (``T[n][m][items]``): an element-major context array."""
    if not isinstance(t, ArrayType):
        return ArrayType(t, items)
    return dataclasses.replace(t, elem=_lanes_innermost(t.elem, items))


def _components_outermost(t: Type, items: int) -> ArrayType:
    """``T[n][items]`` for a vector of ``n`` components of ``T`` or a struct of ``n`` fields of
    type ``T`` (``component_layout``): a component-major context array."""
    layout = component_layout(t)
    assert layout is not None, f"{t} laid out component-major"
    elem, n = layout
    return ArrayType(ArrayType(elem, items), n)


def _used_overloads(bodies: list[ir.Block | None]) -> list[builtins.Overload]:
    """The builtin overloads the bodies call (a formed body's passes may call builtins the
    kernel as written does not)."""
    keys: dict[str, None] = {}
    for body in bodies:
        if body is None:
            continue
        for n in walk(body):
            if isinstance(n, ir.Call) and n.builtin is not None and n.name not in _LOWERED_HERE:
                keys.setdefault(n.builtin, None)
    return [builtins.lookup(k) for k in keys]



def _arg_kind(p: ir.Param) -> ArgKind:
    t = p.type
    if isinstance(t, PointerType):
        kind = "local" if t.space is AddressSpace.LOCAL else "buffer"
        return ArgKind(p.name, kind, t, 8)
    if isinstance(t, ImageType):
        return ArgKind(p.name, "buffer", t, 8)  # the address of the image's descriptor
    return ArgKind(p.name, "value", t, t.size)



def print_c_unit(module: ir.Module, formed: Formed, *, zero_offset: bool, fast_math: bool,
                 narrow_ids: bool = True) -> CUnit:
    """The C translation unit of one formed and scheduled kernel (see the module docstring)."""
    kernel = formed.function
    name = kernel.name
    wi_helpers = helpers_using_workitems(module)
    p = KernelPrinter(formed, zero_offset, wi_helpers, narrow_ids)
    ls = formed.local_size
    items = ls[0] * ls[1] * ls[2]

    # helpers and top-level declarations
    top: list[str] = []
    helpers = [f for f in module.functions if not f.is_kernel]
    printf_formats = printf_table([*(f.body for f in helpers if f.body is not None),
                                   formed.body])
    p.printf_ids = {f: i for i, f in enumerate(printf_formats)}
    for d in module.decls:
        if isinstance(d, ir.TypeDef | ir.RecordDef | ir.EnumDef):
            top += p.top_level(d)
        elif isinstance(d, ir.GlobalVar):
            init = None if d.decl.init is None else _StaticInit().rewrite(d.decl.init)
            decl = dataclasses.replace(d.decl, const=True, space=AddressSpace.PRIVATE,
                                       init=init)
            top.append("static " + p.var_decls([decl]) + ";")
    p.in_helper = True
    headers = {}
    for f in helpers:
        hidden = ", const ppcl_group *__G, size_t __lx, size_t __ly, size_t __lz" \
            if f.name in wi_helpers else ""
        params = ", ".join(p.param(q) for q in f.params) or ("" if hidden else "void")
        if hidden and not f.params:
            hidden = hidden[2:]
        header = f"{p.name(f.name)}({params}{hidden})"
        headers[f.name] = "static inline " + p.declaration(f.ret, header)
        top.append(headers[f.name] + ";")
    for f in helpers:
        assert f.body is not None
        top += [headers[f.name], "{"] + p.stmts(f.body.stmts, 1) + ["}"]
    p.in_helper = False

    # the group function
    param_texts = [p.param(q) for q in kernel.params]
    turned_off = [*([] if formed.vectorize else ['"no-tree-loop-vectorize"']),
                  *(['"no-tree-pre"'] if formed.no_pre else [])]
    attribute = f"__attribute__((optimize({', '.join(turned_off)}))) " if turned_off else ""
    group = [f"{attribute}static void ppcl_group_{name}("
             + ", ".join([*param_texts, "const ppcl_launch *__L", "size_t __grp0", "size_t __grp1",
                          "size_t __grp2", "char *__lm", *(["size_t __nrow"] if p.rows else [])])
             + ")", "{"]
    g = INDENT
    group.append(g + "const size_t __lx = 0, __ly = 0, __lz = 0, __lid = 0;")
    group.append(g + "(void)__lx; (void)__ly; (void)__lz; (void)__lid; (void)__lm; (void)__L;")
    for dim in range(3):
        offset = "" if zero_offset else f" + __L->global_offset[{dim}]"
        group.append(g + f"const size_t __gb{dim} = __grp{dim} * {ls[dim]}{offset}; (void)__gb{dim};")
    # the launch's sizes as locals: a store through a char pointer (a uchar buffer, a vector
    # component) may alias the descriptor, and gcc would load them again in every work-item,
    # which leaves no address affine in the work-item loop's counter
    group.append(g + "const size_t __gs0 = __L->global_size[0], __gs1 = __L->global_size[1], "
                 "__gs2 = __L->global_size[2]; (void)__gs0; (void)__gs1; (void)__gs2;")
    group.append(g + "const size_t __ng0 = __L->num_groups[0], __ng1 = __L->num_groups[1], "
                 "__ng2 = __L->num_groups[2]; (void)__ng0; (void)__ng1; (void)__ng2;")
    group.append(g + "const ppcl_group __G_value = {{__grp0, __grp1, __grp2}, {__gb0, __gb1, __gb2}, __L};")
    group.append(g + "const ppcl_group *__G = &__G_value; (void)__G;")
    for v in formed.local_vars:
        group.append(g + p.declaration(PointerType(v.type), f"__lm_{v.name}")
                     + f" = (void *)(__lm + {v.offset});")
    for cname, t in formed.context_vars.items():
        place = formed.context_offsets.get(cname)
        # work-item-major T[LS][n], or element-major T[n][LS] (``ContextLayout``)
        # a vector's components or a struct's fields as T[n][LS] (component-major)
        whole = _components_outermost(t, items) if cname in formed.component_major \
            else _lanes_innermost(t, items) if cname in formed.element_major \
            else ArrayType(t, items)
        assert isinstance(whole, ArrayType)
        if place is None:
            group.append(g + p.declaration(whole, f"__ctx_{cname}")
                         + " __attribute__((aligned(64)));")
        else:  # too large for the stack: in the thread's block (ir/layout.py)
            group.append(g + p.declaration(PointerType(whole.elem), f"restrict __ctx_{cname}")
                         + f" = (void *)(__lm + {place});")
    for mask in formed.masks:
        group.append(g + f"int {mask}[{items}];")  # 32-bit lanes: vectorize beside 32-bit data
    for sname, t in formed.group_scalars.items():
        group.append(g + p.declaration(t, p.name(sname)) + ";")
    group += p.stmts(formed.body.stmts, 1)
    group.append("}")

    # the entry point
    kinds = tuple(_arg_kind(q) for q in kernel.params)
    run = [f"void ppcl_run_{name}(void **args, const ppcl_launch *launch, size_t first_group, "
           "size_t last_group, char *local_mem)", "{"]
    for i, (q, kind) in enumerate(zip(kernel.params, kinds)):
        arg_decl = p.declaration(q.type, f"a{i}")
        if kind.kind == "local":
            run.append(g + f"{arg_decl} = (void *)(local_mem + *(const size_t *)args[{i}]);")
        else:
            run.append(g + f"{arg_decl}; memcpy((void *)&a{i}, args[{i}], sizeof a{i});")
    run.append(g + "const size_t n0 = launch->num_groups[0], n1 = launch->num_groups[1];")
    call_args = [f"a{i}" for i in range(len(kernel.params))]
    if p.rows:  # the rest of the chunk's current row of groups along dimension 0, in one call
        run.append(g + "for (size_t g = first_group; g < last_group; ) {")
        run.append(g * 2 + "size_t row = n0 - g % n0;")
        run.append(g * 2 + "if (row > last_group - g) row = last_group - g;")
        run.append(g * 2 + f"ppcl_group_{name}(" + ", ".join(
            [*call_args, "launch", "g % n0", "(g / n0) % n1", "g / (n0 * n1)", "local_mem",
             "row"]) + ");")
        run.append(g * 2 + "g += row;")
    else:
        run.append(g + "for (size_t g = first_group; g < last_group; g++) {")
        run.append(g * 2 + f"ppcl_group_{name}(" + ", ".join(
            [*call_args, "launch", "g % n0", "(g / n0) % n1", "g / (n0 * n1)", "local_mem"])
            + ");")
    run.append(g + "}")
    run.append("}")

    builtin_defs = c_builtin_definitions(
        _used_overloads([*(f.body for f in helpers), kernel.body, formed.body]),
        fast_math=fast_math)
    parts = [TYPES_HEADER.read_text(encoding="utf-8"), PRELUDE]
    if printf_formats:
        parts += [PRINTF_SUPPORT, format_table_comment(printf_formats)]
    parts += [builtin_defs, "\n".join(top), "\n".join(group), "\n".join(run)]
    source = "\n".join(parts) + "\n"
    return CUnit(source, f"ppcl_run_{name}", kinds, printf_formats)
