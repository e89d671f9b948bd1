"""CUDA C++, the language of the CUDA device: the front end's IR printed for NVRTC or nvcc.

Only the dialect table and its hooks live here; the OpenCL side of the language -- vector types
``ppcl_vec<T, N>`` and their operators, work-item functions, the builtin library as
``ppcl_<name>`` device functions, atomics -- is the header ``include/ppcl_cuda.h`` that every
unit includes. A work-item is a CUDA thread and a work-group a block, so the kernel needs no
work-group formation: ``barrier`` is ``__syncthreads()`` and ``__local`` variables are
``__shared__``. Pointers are CUDA's generic pointers, whatever space they point into.

A kernel's first parameter is the launch's ``ppcl_ndrange`` (global offset, work dimension), and
each ``__local`` pointer parameter is passed as an ``unsigned int`` offset into the block's
dynamic shared memory (``ppcl_dynamic_local``), the host adding up the sizes the program set.

A kernel with two or more ``__global``/``__constant`` pointers is printed a second time as
``<name>__noalias``, every such pointer ``__restrict__`` (so loads of data it only reads may go
through the read-only cache): the device launches that copy when the buffers of a launch do not
overlap, which it knows from the argument values and OpenCL's compiler cannot assume.
"""

from __future__ import annotations

import dataclasses

from ppcl.compiler.codegen.c import C_SCALAR_NAMES, c_identifier
from ppcl.compiler.codegen.c_builtins_convert import parse_convert_name
from ppcl.compiler.codegen.cstyle import (
    PREC_ASSIGN,
    PREC_POSTFIX,
    CodegenError,
    CStylePrinter,
    Dialect,
)
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.builtins import lookup
from ppcl.compiler.ir.types import (
    AddressSpace,
    OpaqueType,
    PointerType,
    ScalarType,
    Type,
    VectorType,
    width_of,
)
from ppcl.compiler.ir.visit import Rewriter

HEADER = "ppcl_cuda.h"
NDRANGE_PARAM = "ppcl_nd_arg"
LOCAL_OFFSET_PREFIX = "ppcl_local_"
NOALIAS_SUFFIX = "__noalias"
_ROUNDING_MODES = {"": 0, "rte": 1, "rtz": 2, "rtp": 3, "rtn": 4}

CUDA_SCALAR_NAMES: dict[str, str] = {**C_SCALAR_NAMES, "bool": "bool", "half": "unsigned short"}


def cuda_vector_name(t: VectorType) -> str:
    return f"ppcl_vec<{CUDA_SCALAR_NAMES[t.elem.name]}, {t.width}>"


def _elem_name(t: Type) -> str:
    elem = t.elem if isinstance(t, VectorType) else t
    assert isinstance(elem, ScalarType)
    return CUDA_SCALAR_NAMES[elem.name]


def is_local_pointer(p: ir.Param) -> bool:
    """Whether a kernel parameter is a ``__local`` pointer (passed as an offset)."""
    return isinstance(p.type, PointerType) and p.type.space is AddressSpace.LOCAL


# ---------------------------------------------------------------- expression hooks


def cuda_vector_literal(p: CStylePrinter, e: ir.Expr) -> str | None:
    assert isinstance(e, ir.VectorLiteral) and isinstance(e.type, VectorType)
    elem, width = _elem_name(e.type), e.type.width
    if len(e.elems) == 1 and width_of(e.elems[0].type) == 1:
        return f"ppcl_splat<{elem}, {width}>(({elem}){p.expr(e.elems[0], PREC_POSTFIX)})"
    return f"ppcl_make<{elem}, {width}>({p.args(e.elems)})"


def cuda_swizzle(p: CStylePrinter, e: ir.Expr) -> str | None:
    assert isinstance(e, ir.Swizzle)
    base = p.expr(e.base, PREC_POSTFIX)
    if len(e.indices) == 1:
        return f"{base}[{e.indices[0]}]"
    return f"ppcl_swizzle<{', '.join(map(str, e.indices))}>({p.expr(e.base, PREC_ASSIGN)})"


def cuda_assign_swizzle(p: CStylePrinter, e: ir.Expr) -> str | None:
    """``v.xy op= x`` through a reference to the lanes; one lane is a plain subscript."""
    assert isinstance(e, ir.Assign) and isinstance(e.target, ir.Swizzle)
    target = e.target
    if len(target.indices) == 1:
        return None
    indices, base = target.indices, target.base
    while isinstance(base, ir.Swizzle):  # v.odd.xy is lanes 1 and 3 of v
        indices, base = tuple(base.indices[i] for i in indices), base.base
    lanes = ", ".join(map(str, indices))
    return (f"(ppcl_lanes_of<{lanes}>({p.expr(base, PREC_ASSIGN)}) {e.op} "
            f"{p.expr(e.value, PREC_ASSIGN)})")


def cuda_cast(p: CStylePrinter, e: ir.Expr) -> str | None:
    """A scalar becoming a vector is a splat, a vector becoming another vector type keeps its
    bytes; every other implicit conversion that changes the
    type is written out, since C++ converts less implicitly than C (``void *``, enums) and
    overloads of the header must see the argument types the front end resolved."""
    assert isinstance(e, ir.Cast)
    if isinstance(e.type, VectorType) and width_of(e.operand.type) == 1:
        elem = _elem_name(e.type)
        return f"ppcl_splat<{elem}, {e.type.width}>(({elem}){p.expr(e.operand, PREC_POSTFIX)})"
    if isinstance(e.type, VectorType) and e.type != e.operand.type:
        # between vectors (made by passes: OpenCL C has no vector casts) the C backend's
        # vector extension keeps the bytes; so does ppcl_as (ppcl_vec has no conversions)
        return f"ppcl_as<{p.type_name(e.type)}>({p.expr(e.operand, PREC_ASSIGN)})"
    if e.implicit and e.type != e.operand.type and not isinstance(e.type, VectorType):
        return f"(({p.type_name(e.type)}){p.expr(e.operand, PREC_POSTFIX)})"
    return None


def cuda_conditional(p: CStylePrinter, e: ir.Expr) -> str | None:
    """A vector condition chooses per component, as ``select`` does (OpenCL 6.3.i)."""
    assert isinstance(e, ir.Conditional)
    if not isinstance(e.cond.type, VectorType):
        return None
    return f"ppcl_select({p.args((e.otherwise, e.then, e.cond))})"


def cuda_vec_step(p: CStylePrinter, e: ir.Expr) -> str | None:
    assert isinstance(e, ir.VecStep)
    return str(e.value)


def _width_suffix(name: str, prefix: str) -> tuple[int, str]:
    """``vstore_half4_rtz`` after ``vstore_half`` -> (4, "rtz")."""
    rest = name[len(prefix):]
    digits = "".join(ch for ch in rest.split("_")[0] if ch.isdigit())
    mode = rest.split("_")[1] if "_" in rest else ""
    return int(digits or "1"), mode


def cuda_call(p: CStylePrinter, e: ir.Expr) -> str | None:
    """Builtins call the header's ``ppcl_<name>``; the families whose result type is not a
    function of the argument types name it as a template argument."""
    assert isinstance(e, ir.Call)
    if e.builtin is None:
        return None
    ov = lookup(e.builtin)
    name, args = ov.name, p.args(e.args)
    if ov.family == "printf":
        if any(isinstance(a.type, VectorType) for a in e.args):
            raise CodegenError("printf of vector values is not supported on the CUDA device")
        # CUDA's printf returns the number of arguments it parsed, OpenCL's 0 on success
        return f"(printf({args}) < 0 ? -1 : 0)"
    if ov.family == "reinterpret":
        return f"ppcl_as<{p.type_name(e.type)}>({args})"
    if name.startswith("convert_"):
        sat, mode = parse_convert_name(name)
        sat_text = "true" if sat else "false"
        return f"ppcl_convert<{_elem_name(e.type)}, {sat_text}, {_ROUNDING_MODES[mode]}>({args})"
    if ov.family == "vload":
        prefix = "vloada_half" if name.startswith("vloada_half") else (
            "vload_half" if name.startswith("vload_half") else "vload")
        width, _ = _width_suffix(name, prefix)
        template = "ppcl_vload" if prefix == "vload" else "ppcl_vload_half"
        return f"{template}<{width}>({args})"
    if ov.family == "vstore":
        if name.startswith(("vstore_half", "vstorea_half")):
            prefix = "vstorea_half" if name.startswith("vstorea_half") else "vstore_half"
            width, mode = _width_suffix(name, prefix)
            return f"ppcl_vstore_half<{width}, {_ROUNDING_MODES[mode]}>({args})"
        width, _ = _width_suffix(name, "vstore")
        return f"ppcl_vstore<{width}>({args})"
    if ov.family == "shuffle":
        return f"ppcl_{name}<{p.type_name(e.type)}>({args})"
    if name == "async_work_group_strided_copy":
        target = ov.params[0]
        to_global = isinstance(target, PointerType) and target.space is not AddressSpace.LOCAL
        return f"ppcl_{name}({args}, {'true' if to_global else 'false'})"
    return f"ppcl_{name}({args})"


# ---------------------------------------------------------------- kernels


def cuda_kernel_params(p: CStylePrinter, f: ir.Function) -> list[str]:
    params = [f"const ppcl_ndrange {NDRANGE_PARAM}"]
    for param in f.params:
        if isinstance(param.type, OpaqueType):  # images and samplers
            raise CodegenError(f"{f.loc}: kernel '{f.name}' takes an argument of type {param.type} "
                               f"('{param.name}'); the CUDA device has no images yet")
        if is_local_pointer(param):
            params.append(f"unsigned int {LOCAL_OFFSET_PREFIX}{param.name}")
        else:
            params.append(p.param(param))
    return params


def cuda_kernel_prologue(p: CStylePrinter, f: ir.Function) -> list[str]:
    # Every thread stores the same bytes, so no barrier is needed before they are read.
    lines = [f"ppcl_nd = {NDRANGE_PARAM};"]
    for param in f.params:
        if is_local_pointer(param):
            lines.append(f"{p.param(param)} = ({p.type_name(param.type)})"
                         f"(ppcl_dynamic_local + {LOCAL_OFFSET_PREFIX}{param.name});")
    return lines


CUDA = Dialect(
    name="cuda",
    kernel_qualifier='extern "C" __global__',
    address_spaces={
        AddressSpace.PRIVATE: "",
        AddressSpace.GLOBAL: "",
        AddressSpace.LOCAL: "__shared__",
        AddressSpace.CONSTANT: "__constant__",
    },
    pointee_spaces={space: "" for space in AddressSpace},
    function_qualifier="__device__",
    scalar_names=CUDA_SCALAR_NAMES,
    vector_type=cuda_vector_name,
    restrict="__restrict__",
    inline="inline",
    kernel_attributes=False,
    infinity="__int_as_float(0x7f800000)",
    nan="__int_as_float(0x7fc00000)",
    identifier=c_identifier,
    constant_names=False,
    vector_literal=cuda_vector_literal,
    swizzle=cuda_swizzle,
    cast=cuda_cast,
    call=cuda_call,
    vec_step=cuda_vec_step,
    conditional=cuda_conditional,
    assign_swizzle=cuda_assign_swizzle,
    kernel_params=cuda_kernel_params,
    kernel_prologue=cuda_kernel_prologue,
    masks_shift_count="scalar",  # C++ leaves counts out of range undefined, as C does
)

_PRINTER = CStylePrinter(CUDA)


def print_cuda(node: object) -> str:
    """CUDA C++ text of a module, declaration, statement, expression or type."""
    return _PRINTER.print(node)


class _ForCUDA(Rewriter):
    """``__constant`` variables of a kernel's body as ``const`` ones, since CUDA has
    ``__constant__`` at file scope only. (Builtin constants print as their values by the
    dialect's ``constant_names``.)"""

    def rewrite_DeclStmt(self, s: ir.DeclStmt) -> ir.DeclStmt:
        if not any(d.space is AddressSpace.CONSTANT for d in s.decls):
            return s
        return dataclasses.replace(s, decls=tuple(
            dataclasses.replace(d, space=AddressSpace.PRIVATE, const=True)
            if d.space is AddressSpace.CONSTANT else d for d in s.decls))


def _global_pointer(p: ir.Param) -> bool:
    return isinstance(p.type, PointerType) and p.type.space in (AddressSpace.GLOBAL,
                                                                 AddressSpace.CONSTANT)


def _restricted(p: ir.Param) -> ir.Param:
    assert isinstance(p.type, PointerType)
    return dataclasses.replace(p, type=dataclasses.replace(p.type, restrict=True))


def noalias_variant(f: ir.Function) -> ir.Function | None:
    """The copy of kernel ``f`` whose buffer pointers are restrict, if it has two or more."""
    if sum(_global_pointer(p) for p in f.params) < 2:
        return None
    params = tuple(_restricted(p) if _global_pointer(p) else p for p in f.params)
    return dataclasses.replace(f, name=f.name + NOALIAS_SUFFIX, params=params)


def cuda_unit(module: ir.Module, noalias: bool = True) -> str:
    """The translation unit of a program: the header, then the module (OpenCL's extension
    pragmas mean nothing to CUDA and are left out), then the ``__noalias`` copies of its
    kernels when ``noalias``."""
    decls = module.decls
    if noalias:
        variants = (noalias_variant(k) for k in module.kernels)
        decls += tuple(v for v in variants if v is not None)
    module = _ForCUDA().rewrite(dataclasses.replace(module, decls=decls, extensions=()))
    return f'#include "{HEADER}"\n\n' + print_cuda(module)


def kernel_symbol(name: str, noalias: bool = False) -> str:
    """The name a kernel (or its ``__noalias`` copy) has in the compiled module."""
    return c_identifier(name + NOALIAS_SUFFIX if noalias else name)
