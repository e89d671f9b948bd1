"""What the host side needs to know of a kernel, read off the typed IR once.

The runtime checks ``set_arg`` values and answers ``get_arg_info`` and
``get_work_group_info`` from a :class:`KernelSignature`; it never walks the IR itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.layout import align_up, static_local_layout
from ppcl.compiler.ir.types import (
    SAMPLER_T,
    AddressSpace,
    ImageType,
    PointerType,
    ScalarType,
    StructType,
    Type,
    VectorType,
    is_tagless_record_name,
    scalar_of,
)
from ppcl.compiler.ir.visit import walk


@dataclass(frozen=True)
class ParamInfo:
    """One kernel parameter as the host sees it.

    ``kind``: ``buffer`` (a ``__global``/``__constant`` pointer), ``local`` (a ``__local``
    pointer, given a size at launch), ``image`` (an image, ``access`` says how the kernel
    uses it), ``sampler`` or ``value`` (passed by value, ``size`` bytes).
    ``element``: ``float`` or ``int`` for scalar and vector values (the numpy kinds that may
    stand for it), None for structs and pointers.
    """

    name: str
    kind: str
    type_name: str
    address_space: str  # global, local, constant or private
    size: int
    element: str | None = None
    arithmetic: bool = False  # a scalar or vector value
    const: bool = False
    volatile: bool = False
    restrict: bool = False
    access: str = "none"  # read_only or write_only for images


@dataclass(frozen=True)
class KernelSignature:
    name: str
    params: tuple[ParamInfo, ...]
    reqd_work_group_size: tuple[int, int, int] | None
    static_local_bytes: int  # the kernel's own __local variables, laid out
    private_bytes: int = 0  # a work-item's parameters and private variables, each aligned
    attributes: str = ""  # CL_KERNEL_ATTRIBUTES: the kernel's attributes, space separated


def attribute_text(attrs: ir.KernelAttrs) -> str:
    """The attributes of a kernel as ``clGetKernelInfo(CL_KERNEL_ATTRIBUTES)`` gives them:
    each as written inside ``__attribute__((...))`` without whitespace, space separated."""
    written: list[str] = []
    if attrs.reqd_work_group_size is not None:
        written.append("reqd_work_group_size({},{},{})".format(*attrs.reqd_work_group_size))
    if attrs.work_group_size_hint is not None:
        written.append("work_group_size_hint({},{},{})".format(*attrs.work_group_size_hint))
    if attrs.vec_type_hint is not None:
        written.append(f"vec_type_hint({attrs.vec_type_hint})")
    return " ".join(written)


def _param(p: ir.Param, record_names: dict[str, str]) -> ParamInfo:
    t = p.type
    if isinstance(t, PointerType):
        space = t.space.name.lower()
        return ParamInfo(p.name, "local" if space == "local" else "buffer",
                         p.type_name or f"{_spelling(t.pointee, record_names)}*", space, t.size,
                         const=t.const, volatile=t.volatile, restrict=t.restrict)
    if isinstance(t, ImageType):
        return ParamInfo(p.name, "image", t.name, "global", t.size, access=t.access)
    if t == SAMPLER_T:
        return ParamInfo(p.name, "sampler", t.name, "private", t.size)
    elem = scalar_of(t)
    element = None if elem is None else ("float" if elem.is_float else "int")
    return ParamInfo(p.name, "value", p.type_name or _spelling(t, record_names), "private",
                     t.size, element,
                     arithmetic=isinstance(t, ScalarType | VectorType))


def _spelling(t: Type, record_names: dict[str, str]) -> str:
    """How a program names ``t``: an anonymous record by the typedef naming it."""
    if isinstance(t, StructType) and t.name in record_names:
        return record_names[t.name]
    return str(t)


def anonymous_record_names(module: ir.Module) -> dict[str, str]:
    """Generated name of each anonymous struct or union -> the first typedef naming it
    (``typedef struct {...} S;``), the name the program knows it by."""
    names: dict[str, str] = {}
    for decl in module.decls:
        if isinstance(decl, ir.TypeDef) and isinstance(decl.type, StructType) \
                and is_tagless_record_name(decl.type.name):
            names.setdefault(decl.type.name, decl.name)
    return names


def kernel_signature(function: ir.Function,
                     record_names: dict[str, str] | None = None) -> KernelSignature:
    static_bytes = 0
    private = sum(align_up(p.type.size, p.type.align) for p in function.params)
    if function.body is not None:
        static_bytes = static_local_layout(function.body)[1]
        private += sum(align_up(d.type.size, d.type.align) for n in walk(function.body)
                       if isinstance(n, ir.DeclStmt) for d in n.decls
                       if d.space is AddressSpace.PRIVATE)
    names = record_names or {}
    return KernelSignature(function.name, tuple(_param(p, names) for p in function.params),
                           function.attrs.reqd_work_group_size, static_bytes, private,
                           attribute_text(function.attrs))


def kernel_signatures(module: ir.Module) -> dict[str, KernelSignature]:
    """The signature of every kernel of ``module``, by name, in source order."""
    names = anonymous_record_names(module)
    return {k.name: kernel_signature(k, names) for k in module.kernels}
