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

from ppcl.compiler.analysis.effects import is_effect_free
from ppcl.compiler.codegen.c import C_SCALAR_NAMES, c_identifier
from ppcl.compiler.codegen.c_builtins_convert import parse_convert_name
from ppcl.compiler.codegen.c_builtins_image import image_query, support_text
from ppcl.compiler.codegen.cstyle import (
    PREC_ASSIGN,
    PREC_POSTFIX,
    CodegenError,
    CStylePrinter,
    Dialect,
)
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.builtins import Overload, lookup
from ppcl.compiler.ir.printf_spec import Spec, canonical_literal, printf_format
from ppcl.compiler.ir.types import (
    AddressSpace,
    ImageType,
    PointerType,
    ScalarType,
    Type,
    VectorType,
    scalar_of,
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


def _lanes_ref(p: CStylePrinter, target: ir.Swizzle) -> str:
    """A reference to the lanes a swizzle of several components names, for a store or a
    step through it (``ppcl_lanes_ref``)."""
    indices, base = target.indices, target.base
    while isinstance(base, ir.Swizzle):  # v.odd.xy is lanes 1 and 3 of v
        indices, base = tuple(base.indices[i] for i in indices), base.base
    return f"ppcl_lanes_of<{', '.join(map(str, indices))}>({p.expr(base, PREC_ASSIGN)})"


def cuda_assign_swizzle(p: CStylePrinter, e: ir.Expr) -> str | None:
    """``v.xy op= x`` through a reference to the lanes; one lane is a plain subscript."""
    assert isinstance(e, ir.Assign) and isinstance(e.target, ir.Swizzle)
    if len(e.target.indices) == 1:
        return None
    return f"({_lanes_ref(p, e.target)} {e.op} {p.expr(e.value, PREC_ASSIGN)})"


def cuda_unary(p: CStylePrinter, e: ir.Expr) -> str | None:
    """``++v.xy`` and ``v.xy--`` through the reference to the lanes (``ppcl_lanes_ref``'s
    steps); a step of one lane is a plain subscript's."""
    assert isinstance(e, ir.Unary)
    target = e.operand
    if e.op not in ("++", "--", "p++", "p--") or not isinstance(target, ir.Swizzle) \
            or len(target.indices) == 1:
        return None
    lanes = _lanes_ref(p, target)
    return f"({lanes}{e.op[1:]})" if e.op.startswith("p") else f"({e.op}{lanes})"


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


def _contractible(t: Type) -> bool:
    elem = t.elem if isinstance(t, VectorType) else t
    return isinstance(elem, ScalarType) and elem.name in ("float", "double")


def _product(e: ir.Expr, t: Type) -> ir.Binary | None:
    return e if isinstance(e, ir.Binary) and e.op == "*" and e.type == t else None


def _fma(p: CStylePrinter, a: ir.Expr, b: ir.Expr, c: str, negate: bool = False) -> str:
    first = p.expr(a, PREC_ASSIGN)
    return f"ppcl_fma({'-(' + first + ')' if negate else first}, {p.expr(b, PREC_ASSIGN)}, {c})"


def cuda_binary(p: CStylePrinter, e: ir.Expr) -> str | None:
    """``a * b + c`` (and ``- c``, ``c -``) of floating types within one expression as one
    fused multiply-add: OpenCL C's FP_CONTRACT is on by default, and C99 lets it contract an
    expression. The unit is compiled with ``--fmad=false`` (``device.nvrtc_options``), since
    NVRTC would also contract across statements, which C does not allow: a product one
    statement stores and the next adds stays two roundings, as on the CPU device."""
    assert isinstance(e, ir.Binary)
    if e.op not in ("+", "-") or not _contractible(e.type):
        return None
    left, right = _product(e.lhs, e.type), _product(e.rhs, e.type)
    if left is not None:
        addend = p.expr(e.rhs, PREC_ASSIGN)
        return _fma(p, left.lhs, left.rhs, addend if e.op == "+" else f"-({addend})")
    if right is not None:
        return _fma(p, right.lhs, right.rhs, p.expr(e.lhs, PREC_ASSIGN), negate=e.op == "-")
    return None


def cuda_assign(p: CStylePrinter, e: ir.Expr) -> str | None:
    """``x += a * b`` (and ``-=``) as ``x = fma(a, b, x)`` where ``x`` has no effect to repeat
    (a variable, an element at an index without side effects): one expression, as above."""
    assert isinstance(e, ir.Assign)
    if e.op not in ("+=", "-=") or not _contractible(e.target.type) \
            or not is_effect_free(e.target) or isinstance(e.target, ir.Swizzle):
        return None
    product = _product(e.value, e.target.type)
    if product is None:
        return None
    target = p.expr(e.target, PREC_ASSIGN)
    return f"{target} = {_fma(p, product.lhs, product.rhs, target, negate=e.op == '-=')}"


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
            return _vector_printf(p, e)
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
    if ov.family == "image":
        return _image_call(ov, args)
    if name == "async_work_group_strided_copy":
        target = ov.params[0]
        to_global = isinstance(target, PointerType) and target.space is not AddressSpace.LOCAL
        return f"ppcl_{name}({args}, {'true' if to_global else 'false'})"
    return f"ppcl_{name}({args})"


def _component_spec(spec: Spec) -> str:
    """The C conversion printing one component of an OpenCL vector conversion: ``hl`` (which
    only a vector conversion has) is a 32-bit component, which C prints with no length; a
    float component reaches printf as a double, as any float argument does."""
    plain = spec.length == "hl" or spec.conversion in "fFeEgGaA"
    return str(dataclasses.replace(spec, vector=None, length=None if plain else spec.length))


# CUDA's printf takes at most 32 arguments after the format and ignores the rest
CUDA_PRINTF_ARGS = 32


def _vector_printf(p: CStylePrinter, e: ir.Call) -> str:
    """``printf`` with vector conversions (``%v4hlf``): CUDA's printf has none, so each becomes
    its components' conversions joined by commas (OpenCL 6.12.13.2) and the vector is bound
    once in a lambda, its components passed one by one. Past CUDA's 32 arguments the format
    is cut, between conversions, into several printf calls."""
    fmt = printf_format(e)
    values = list(e.args[1:])
    binds: list[str] = []
    pieces: list[tuple[str, list[str]]] = []  # (format text, its arguments)
    for piece in fmt.pieces:
        if isinstance(piece, str):
            pieces.append((canonical_literal(piece), []))
            continue
        if piece.conversion == "%":
            pieces.append(("%%", []))
            continue
        value = values.pop(0)
        if piece.vector is None:
            pieces.append((str(piece), [p.expr(value, PREC_ASSIGN)]))
            continue
        if str(scalar_of(value.type)) == "half":
            raise CodegenError("printf of half vectors is not supported on the CUDA device")
        bound = f"ppcl_pv{len(binds)}"
        binds.append(f"auto {bound} = {p.expr(value, PREC_ASSIGN)};")
        pieces.append((",".join([_component_spec(piece)] * piece.vector),
                       [f"{bound}[{i}]" for i in range(piece.vector)]))
    calls: list[tuple[str, list[str]]] = [("", [])]
    for text, args in pieces:
        if args and len(calls[-1][1]) + len(args) > CUDA_PRINTF_ARGS:
            calls.append(("", []))
        calls[-1] = (calls[-1][0] + text, calls[-1][1] + args)
    prints = " ".join("failed |= printf(" + ", ".join(['"' + text + '"', *args]) + ") < 0;"
                      for text, args in calls)
    return f"[&]() -> int {{ {' '.join(binds)} int failed = 0; {prints} return failed ? -1 : 0; }}()"


# ---------------------------------------------------------------- images

# read_image{f,i,ui}: the texel's field and the vector's element type
_TEXEL_FIELDS = {"f": ("f", "float"), "i": ("i", "int"), "ui": ("u", "unsigned int")}


def _image_call(ov: Overload, args: str) -> str:
    """An image builtin as a call of the image block's helpers (``image_block``); what the C
    backend fixes per overload (axes, layers, filtering) goes in as template arguments."""
    image = ov.params[0]
    assert isinstance(image, ImageType)
    name = ov.name
    if name.startswith("read_image"):
        suffix = name[len("read_image"):]
        if len(ov.params) == 3:  # through a sampler; only reads of floats filter
            layered = int(image.layer is not None)
            read = f"ppcl_img_read<{image.axes}, {layered}, {int(suffix == 'f')}>({args})"
        else:
            read = f"ppcl_img_read({args})"
        return f"ppcl_img_{suffix}({read})"
    if name.startswith("write_image"):
        return f"ppcl_img_write_{name[len('write_image'):]}({args})"
    value = image_query(name, image, f"({args})")
    if value is not None:
        return f"({value})"
    if name == "get_image_dim":
        assert isinstance(ov.ret, VectorType)
        return f"ppcl_img_dim<{image.axes}, {ov.ret.width}>({args})"
    raise CodegenError(f"image builtin '{name}' has no CUDA lowering")


def _image_helpers() -> str:
    """Reads, writes and ``get_image_dim`` over any coordinate type, on the shared support."""
    reads = "".join(f"""
__device__ __forceinline__ ppcl_vec<{elem}, 4> ppcl_img_{suffix}(ppcl_texel t) {{
    return ppcl_make<{elem}, 4>(t.{field}[0], t.{field}[1], t.{field}[2], t.{field}[3]);
}}
template <class C, class V> __device__ __forceinline__ void ppcl_img_write_{suffix}(struct ppcl_image *im, C c, V v) {{
    ppcl_texel t;
    for (int n = 0; n < 4; n++) t.{field}[n] = v[n];
    __ppcl_img_write(im, ppcl_img_ci(c, 0), ppcl_img_ci(c, 1), ppcl_img_ci(c, 2), t);
}}""" for suffix, (field, elem) in _TEXEL_FIELDS.items())
    return """
__device__ __forceinline__ float ppcl_img_cf(float c, int d) { return d == 0 ? c : 0.0f; }
__device__ __forceinline__ float ppcl_img_cf(int c, int d) { return d == 0 ? (float)c : 0.0f; }
template <class T, int N> __device__ __forceinline__ float ppcl_img_cf(ppcl_vec<T, N> c, int d) {
    return d < N ? (float)c[d] : 0.0f;
}
__device__ __forceinline__ long ppcl_img_ci(int c, int d) { return d == 0 ? (long)c : 0; }
template <class T, int N> __device__ __forceinline__ long ppcl_img_ci(ppcl_vec<T, N> c, int d) {
    return d < N ? (long)c[d] : 0;
}
template <int AXES, int LAYERED, int FILTER, class C>
__device__ __forceinline__ ppcl_texel ppcl_img_read(const struct ppcl_image *im, sampler_t smp, C c) {
    return __ppcl_img_sample(im, (unsigned int)smp, AXES, LAYERED, FILTER, ppcl_img_cf(c, 0),
                             ppcl_img_cf(c, 1), ppcl_img_cf(c, 2));
}
template <class C> __device__ __forceinline__ ppcl_texel ppcl_img_read(const struct ppcl_image *im, C c) {
    return __ppcl_img_texel(im, ppcl_img_ci(c, 0), ppcl_img_ci(c, 1), ppcl_img_ci(c, 2));
}
template <int AXES, int W> __device__ __forceinline__ ppcl_vec<int, W> ppcl_img_dim(const struct ppcl_image *im) {
    ppcl_vec<int, W> r = ppcl_splat<int, W>(0);
    for (int d = 0; d < AXES; d++) r[d] = (int)im->extent[d];
    return r;
}""" + reads + "\n"


def takes_images(module: ir.Module) -> bool:
    return any(isinstance(p.type, ImageType)
               for d in module.decls if isinstance(d, ir.Function) for p in d.params)


def image_block() -> str:
    """What a unit whose functions take images adds after the header: the C backend's image
    support (the descriptor, addressing, filtering and format conversions), printed as device
    functions, then the helpers the image builtins call."""
    return (support_text("static __device__ __forceinline__", "ppcl_half_to_float",
                         "ppcl_float_to_half<1>") + _image_helpers())


# ---------------------------------------------------------------- kernels


def cuda_kernel_params(p: CStylePrinter, f: ir.Function) -> list[str]:
    params = [f"const ppcl_ndrange {NDRANGE_PARAM}"]
    for param in f.params:
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
    unary=cuda_unary,
    conditional=cuda_conditional,
    assign_swizzle=cuda_assign_swizzle,
    binary=cuda_binary,
    assign=cuda_assign,
    kernel_params=cuda_kernel_params,
    kernel_prologue=cuda_kernel_prologue,
    masks_shift_count="scalar",  # C++ leaves counts out of range undefined, as C does
)

# a program that says ``#pragma OPENCL FP_CONTRACT OFF``: every product and sum rounded
CUDA_NO_CONTRACT = dataclasses.replace(CUDA, binary=None, assign=None)

_PRINTER = CStylePrinter(CUDA)
_PRINTER_NO_CONTRACT = CStylePrinter(CUDA_NO_CONTRACT)


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
    """The copy of kernel ``f`` whose buffer pointers are restrict, if it has two or more and
    takes no image (whose bytes may be a buffer's: the device cannot see that from the
    arguments)."""
    if sum(_global_pointer(p) for p in f.params) < 2 or any(
            isinstance(p.type, ImageType) for p in f.params):
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
    images = image_block() if takes_images(module) else ""
    module = _ForCUDA().rewrite(dataclasses.replace(module, decls=decls, extensions=()))
    printer = _PRINTER if module.fp_contract else _PRINTER_NO_CONTRACT
    return f'#include "{HEADER}"\n{images}\n' + printer.print(module)


def kernel_symbol(name: str, noalias: bool = False) -> str:
    """The name a kernel (or its ``__noalias`` copy) has in the compiled module."""
    return c_identifier(name + NOALIAS_SUFFIX if noalias else name)
