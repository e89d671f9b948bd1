"""The signatures of the OpenCL C 1.2 builtin functions, family by family.

``Overload`` is one signature and ``type_code`` spells its parameter types in the overload's
key. The fixed families (work-item, math, integer, common, geometric, relational, vector data,
synchronization and async copies, atomics, shuffles, printf) are written out by one builder;
``convert_*`` and ``as_*`` overloads are many (thousands) and each name has its own small set,
so they are generated per name. Nothing here caches, looks up or resolves: ``builtins`` keeps
the table built from these signatures and answers queries over it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ppcl.compiler.ir.conversions import signed_integer_of_size, unsigned_integer_of_size
from ppcl.compiler.ir.types import (
    CHAR,
    DOUBLE,
    EVENT_T,
    FLOAT,
    HALF,
    IMAGE_GEOMETRY,
    INT,
    INTEGER_TYPES,
    LONG,
    SAMPLER_T,
    SHORT,
    SIZE_T,
    UINT,
    ULONG,
    VOID,
    AddressSpace,
    ImageType,
    OpaqueType,
    PointerType,
    ScalarType,
    Type,
    VectorType,
    VoidType,
    scalar_type_named,
    vector_or_scalar,
    vector_type_named,
)

FAMILIES = (
    "workitem", "math", "native", "integer", "common", "geometric", "relational", "vload",
    "vstore", "sync", "async", "atomic", "convert", "reinterpret", "shuffle", "printf", "image",
)

_SPACE_CODES = {
    AddressSpace.GLOBAL: "g",
    AddressSpace.LOCAL: "l",
    AddressSpace.PRIVATE: "p",
    AddressSpace.CONSTANT: "k",
}


def type_code(t: Type) -> str:
    """The mangled spelling of a parameter type in an overload key.

    Scalars, vectors and opaque types are spelled by name (``float4``, ``event_t``). A pointer is
    spelled ``[c][v]<space><pointee>``: ``c`` for a const pointee, ``v`` for a volatile one, then
    the address space (``g`` global, ``l`` local, ``p`` private, ``k`` constant), then the pointee
    code: ``cgfloat`` is ``const __global float *``, ``vlint`` is ``volatile __local int *``."""
    if isinstance(t, PointerType):
        quals = ("c" if t.const else "") + ("v" if t.volatile else "")
        return quals + _SPACE_CODES[t.space] + type_code(t.pointee)
    if isinstance(t, ImageType):
        return ("ro_" if t.access == "read_only" else "wo_") + t.name
    if isinstance(t, (ScalarType, VectorType, OpaqueType, VoidType)):
        return str(t)
    raise ValueError(f"type '{t}' cannot appear in a builtin signature")


@dataclass(frozen=True)
class Overload:
    """One signature of a builtin function."""

    name: str  # OpenCL name, e.g. "clamp"
    ret: Type
    params: tuple[Type, ...]
    family: str
    variadic: bool = False
    pointer_out: tuple[int, ...] = ()  # indices of pointer parameters written through

    @property
    def key(self) -> str:
        """Unique, C-identifier-safe name of this overload: ``<name>__<p1>_<p2>...`` with
        ``type_code`` spellings, ``void`` for no parameters and a trailing ``_va`` when variadic:
        ``clamp__float4_float_float``, ``vload4__ulong_cgfloat``, ``get_work_dim__void``,
        ``printf__ckchar_va``."""
        params = "_".join(type_code(p) for p in self.params) or "void"
        return f"{self.name}__{params}{'_va' if self.variadic else ''}"

    @property
    def signature(self) -> str:
        params = [str(p) for p in self.params] + (["..."] if self.variadic else [])
        return f"{self.ret} {self.name}({', '.join(params)})"

    def __str__(self) -> str:
        return self.signature


# ---------------------------------------------------------------- building the table

WIDTHS = (1, 2, 3, 4, 8, 16)
VECTOR_ONLY = (2, 3, 4, 8, 16)
FLOATS = (FLOAT, DOUBLE)
ELEMENTS = INTEGER_TYPES + FLOATS  # element types of OpenCL gentypes (half excluded)
_SPACES_OUT = (AddressSpace.GLOBAL, AddressSpace.LOCAL, AddressSpace.PRIVATE)
_SPACES_ALL = (AddressSpace.GLOBAL, AddressSpace.LOCAL, AddressSpace.CONSTANT, AddressSpace.PRIVATE)
_ROUNDING = ("", "_rte", "_rtz", "_rtp", "_rtn")

_vec_cache: dict[tuple[ScalarType, int], Type] = {}


def _vt(elem: ScalarType, width: int) -> Type:
    t = _vec_cache.get((elem, width))
    if t is None:
        t = vector_or_scalar(elem, width)
        _vec_cache[(elem, width)] = t
    return t


def _ptr(pointee: Type, space: AddressSpace, const: bool = False, volatile: bool = False) -> Type:
    return PointerType(pointee, space, const=const, volatile=volatile)




class _Builder:
    def __init__(self) -> None:
        self.by_name: dict[str, list[Overload]] = {}

    def add(
        self,
        name: str,
        ret: Type,
        params: tuple[Type, ...],
        family: str,
        *,
        variadic: bool = False,
        pointer_out: tuple[int, ...] = (),
    ) -> None:
        self.by_name.setdefault(name, []).append(
            Overload(name, ret, params, family, variadic, pointer_out)
        )


def _workitem(b: _Builder) -> None:
    b.add("get_work_dim", UINT, (), "workitem")
    for name in ("get_global_size", "get_global_id", "get_local_size", "get_local_id",
                 "get_num_groups", "get_group_id", "get_global_offset"):
        b.add(name, SIZE_T, (UINT,), "workitem")


_MATH1 = (
    "acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atanh", "atanpi", "cbrt",
    "ceil", "cos", "cosh", "cospi", "erfc", "erf", "exp", "exp2", "exp10", "expm1", "fabs",
    "floor", "lgamma", "log", "log2", "log10", "log1p", "logb", "rint", "round", "rsqrt", "sin",
    "sinh", "sinpi", "sqrt", "tan", "tanh", "tanpi", "tgamma", "trunc",
)
_MATH2 = (
    "atan2", "atan2pi", "copysign", "fdim", "fmod", "hypot", "nextafter", "pow", "powr",
    "remainder", "maxmag", "minmag",
)
_FAST1 = ("cos", "exp", "exp2", "exp10", "log", "log2", "log10", "recip", "rsqrt", "sin", "sqrt",
          "tan")
_FAST2 = ("divide", "powr")


def _math(b: _Builder) -> None:
    for elem in FLOATS:
        for n in WIDTHS:
            g = _vt(elem, n)
            i = _vt(INT, n)
            for name in _MATH1:
                b.add(name, g, (g,), "math")
            for name in _MATH2:
                b.add(name, g, (g, g), "math")
            for name in ("fmax", "fmin"):
                b.add(name, g, (g, g), "math")
                if n > 1:
                    b.add(name, g, (g, elem), "math")
            b.add("fma", g, (g, g, g), "math")
            b.add("mad", g, (g, g, g), "math")
            b.add("ilogb", i, (g,), "math")
            b.add("ldexp", g, (g, i), "math")
            if n > 1:
                b.add("ldexp", g, (g, INT), "math")
            b.add("pown", g, (g, i), "math")
            b.add("rootn", g, (g, i), "math")
            b.add("nan", g, (_vt(UINT if elem == FLOAT else ULONG, n),), "math")
            for space in _SPACES_OUT:
                gp = _ptr(g, space)
                ip = _ptr(i, space)
                b.add("fract", g, (g, gp), "math", pointer_out=(1,))
                b.add("modf", g, (g, gp), "math", pointer_out=(1,))
                b.add("sincos", g, (g, gp), "math", pointer_out=(1,))
                b.add("frexp", g, (g, ip), "math", pointer_out=(1,))
                b.add("lgamma_r", g, (g, ip), "math", pointer_out=(1,))
                b.add("remquo", g, (g, g, ip), "math", pointer_out=(2,))
    for n in WIDTHS:
        g = _vt(FLOAT, n)
        for prefix in ("half_", "native_"):
            for name in _FAST1:
                b.add(prefix + name, g, (g,), "native")
            for name in _FAST2:
                b.add(prefix + name, g, (g, g), "native")


_UPSAMPLE = (
    (CHAR, ScalarType("uchar"), SHORT),
    (ScalarType("uchar"), ScalarType("uchar"), ScalarType("ushort")),
    (SHORT, ScalarType("ushort"), INT),
    (ScalarType("ushort"), ScalarType("ushort"), UINT),
    (INT, UINT, LONG),
    (UINT, UINT, ULONG),
)


def _integer(b: _Builder) -> None:
    for elem in INTEGER_TYPES:
        for n in WIDTHS:
            g = _vt(elem, n)
            u = _vt(elem.with_signedness(False), n)
            b.add("abs", u, (g,), "integer")
            b.add("abs_diff", u, (g, g), "integer")
            for name in ("add_sat", "hadd", "rhadd", "max", "min", "mul_hi", "rotate", "sub_sat"):
                b.add(name, g, (g, g), "integer")
            for name in ("clamp", "mad_hi", "mad_sat"):
                b.add(name, g, (g, g, g), "integer")
            for name in ("clz", "popcount"):
                b.add(name, g, (g,), "integer")
            if n > 1:
                b.add("max", g, (g, elem), "integer")
                b.add("min", g, (g, elem), "integer")
                b.add("clamp", g, (g, elem, elem), "integer")
    for hi, lo, res in _UPSAMPLE:
        for n in WIDTHS:
            b.add("upsample", _vt(res, n), (_vt(hi, n), _vt(lo, n)), "integer")
    for elem in (INT, UINT):
        for n in WIDTHS:
            g = _vt(elem, n)
            b.add("mad24", g, (g, g, g), "integer")
            b.add("mul24", g, (g, g), "integer")


def _common(b: _Builder) -> None:
    for elem in FLOATS:
        for n in WIDTHS:
            g = _vt(elem, n)
            b.add("clamp", g, (g, g, g), "common")
            for name in ("degrees", "radians", "sign"):
                b.add(name, g, (g,), "common")
            b.add("max", g, (g, g), "common")
            b.add("min", g, (g, g), "common")
            b.add("mix", g, (g, g, g), "common")
            b.add("step", g, (g, g), "common")
            b.add("smoothstep", g, (g, g, g), "common")
            if n > 1:
                b.add("clamp", g, (g, elem, elem), "common")
                b.add("max", g, (g, elem), "common")
                b.add("min", g, (g, elem), "common")
                b.add("mix", g, (g, g, elem), "common")
                b.add("step", g, (elem, g), "common")
                b.add("smoothstep", g, (elem, elem, g), "common")


def _geometric(b: _Builder) -> None:
    for elem in FLOATS:
        for n in (1, 2, 3, 4):
            g = _vt(elem, n)
            b.add("dot", elem, (g, g), "geometric")
            b.add("distance", elem, (g, g), "geometric")
            b.add("length", elem, (g,), "geometric")
            b.add("normalize", g, (g,), "geometric")
            if n in (3, 4):
                b.add("cross", g, (g, g), "geometric")
            if elem == FLOAT:
                b.add("fast_distance", elem, (g, g), "geometric")
                b.add("fast_length", elem, (g,), "geometric")
                b.add("fast_normalize", g, (g,), "geometric")


# the relational builtins: a vector's component is -1 where the scalar builtin gives 1
RELATIONAL_BINARY = ("isequal", "isnotequal", "isgreater", "isgreaterequal", "isless",
                     "islessequal", "islessgreater", "isordered", "isunordered")
RELATIONAL_UNARY = ("isfinite", "isinf", "isnan", "isnormal", "signbit")


def _relational(b: _Builder) -> None:
    for elem in FLOATS:
        for n in WIDTHS:
            g = _vt(elem, n)
            r = INT if n == 1 else _vt(signed_integer_of_size(elem.size), n)
            for name in RELATIONAL_BINARY:
                b.add(name, r, (g, g), "relational")
            for name in RELATIONAL_UNARY:
                b.add(name, r, (g,), "relational")
    for elem in (CHAR, SHORT, INT, LONG):
        for n in WIDTHS:
            b.add("any", INT, (_vt(elem, n),), "relational")
            b.add("all", INT, (_vt(elem, n),), "relational")
    for elem in ELEMENTS:
        for n in WIDTHS:
            g = _vt(elem, n)
            b.add("bitselect", g, (g, g, g), "relational")
            for sel in (signed_integer_of_size(elem.size), unsigned_integer_of_size(elem.size)):
                b.add("select", g, (g, g, _vt(sel, n)), "relational")


def _vector_data(b: _Builder) -> None:
    for elem in ELEMENTS:
        for n in VECTOR_ONLY:
            v = _vt(elem, n)
            for space in _SPACES_ALL:
                b.add(f"vload{n}", v, (SIZE_T, _ptr(elem, space, const=True)), "vload")
            for space in _SPACES_OUT:
                b.add(f"vstore{n}", VOID, (v, SIZE_T, _ptr(elem, space)), "vstore",
                      pointer_out=(2,))
    for space in _SPACES_ALL:
        half_in = _ptr(HALF, space, const=True)
        b.add("vload_half", FLOAT, (SIZE_T, half_in), "vload")
        b.add("vloada_half", FLOAT, (SIZE_T, half_in), "vload")  # clang's, as vload_half
        for n in VECTOR_ONLY:
            b.add(f"vload_half{n}", _vt(FLOAT, n), (SIZE_T, half_in), "vload")
            b.add(f"vloada_half{n}", _vt(FLOAT, n), (SIZE_T, half_in), "vload")
    for space in _SPACES_OUT:
        half_out = _ptr(HALF, space)
        for mode in _ROUNDING:
            for elem in FLOATS:
                for prefix in ("vstore_half", "vstorea_half"):
                    b.add(f"{prefix}{mode}", VOID, (elem, SIZE_T, half_out), "vstore",
                          pointer_out=(2,))
                for n in VECTOR_ONLY:
                    data = _vt(elem, n)
                    for prefix in ("vstore_half", "vstorea_half"):
                        b.add(f"{prefix}{n}{mode}", VOID, (data, SIZE_T, half_out), "vstore",
                              pointer_out=(2,))


def _sync_and_async(b: _Builder) -> None:
    for name in ("barrier", "mem_fence", "read_mem_fence", "write_mem_fence"):
        b.add(name, VOID, (UINT,), "sync")
    g_, l_ = AddressSpace.GLOBAL, AddressSpace.LOCAL
    for elem in ELEMENTS:
        for n in WIDTHS:
            g = _vt(elem, n)
            for dst, src in ((l_, g_), (g_, l_)):
                dst_p = _ptr(g, dst)
                src_p = _ptr(g, src, const=True)
                b.add("async_work_group_copy", EVENT_T, (dst_p, src_p, SIZE_T, EVENT_T), "async",
                      pointer_out=(0,))
                b.add("async_work_group_strided_copy", EVENT_T,
                      (dst_p, src_p, SIZE_T, SIZE_T, EVENT_T), "async", pointer_out=(0,))
            b.add("prefetch", VOID, (_ptr(g, g_, const=True), SIZE_T), "async")
    b.add("wait_group_events", VOID, (INT, _ptr(EVENT_T, AddressSpace.PRIVATE)), "async")


_ATOMIC2 = ("add", "sub", "xchg", "min", "max", "and", "or", "xor")


def _atomics(b: _Builder) -> None:
    for space in (AddressSpace.GLOBAL, AddressSpace.LOCAL):
        for elem in (INT, UINT, LONG, ULONG):
            p = _ptr(elem, space, volatile=True)
            prefixes = ("atom_",) if elem.size == 8 else ("atomic_", "atom_")
            for prefix in prefixes:
                for op in _ATOMIC2:
                    b.add(prefix + op, elem, (p, elem), "atomic", pointer_out=(0,))
                b.add(prefix + "inc", elem, (p,), "atomic", pointer_out=(0,))
                b.add(prefix + "dec", elem, (p,), "atomic", pointer_out=(0,))
                b.add(prefix + "cmpxchg", elem, (p, elem, elem), "atomic", pointer_out=(0,))
        b.add("atomic_xchg", FLOAT, (_ptr(FLOAT, space, volatile=True), FLOAT), "atomic",
              pointer_out=(0,))


def _shuffles(b: _Builder) -> None:
    for elem in ELEMENTS:
        mask_elem = unsigned_integer_of_size(elem.size)
        for m in (2, 4, 8, 16):
            x = _vt(elem, m)
            for n in (2, 4, 8, 16):
                mask = _vt(mask_elem, n)
                b.add("shuffle", _vt(elem, n), (x, mask), "shuffle")
                b.add("shuffle2", _vt(elem, n), (x, x, mask), "shuffle")


def _printf(b: _Builder) -> None:
    fmt = _ptr(CHAR, AddressSpace.CONSTANT, const=True)
    b.add("printf", INT, (fmt,), "printf", variadic=True)


_READS = (("read_imagef", FLOAT), ("read_imagei", INT), ("read_imageui", UINT))
_WRITES = (("write_imagef", FLOAT), ("write_imagei", INT), ("write_imageui", UINT))


def _images(b: _Builder) -> None:
    """Section 6.12.14: reads (with a sampler at float or int coordinates, or without one at
    int coordinates), writes at int coordinates, and the queries, for every image type."""
    for name in IMAGE_GEOMETRY:
        ro, wo = ImageType(name, "read_only"), ImageType(name, "write_only")
        n = ro.coord_width
        for fname, elem in _READS:
            ret = _vt(elem, 4)
            if name != "image1d_buffer_t":  # a buffer image is read without a sampler only
                b.add(fname, ret, (ro, SAMPLER_T, _vt(FLOAT, n)), "image")
                b.add(fname, ret, (ro, SAMPLER_T, _vt(INT, n)), "image")
            b.add(fname, ret, (ro, _vt(INT, n)), "image")
        for fname, elem in _WRITES:
            b.add(fname, VOID, (wo, _vt(INT, n), _vt(elem, 4)), "image")
        for image in (ro, wo):
            for query in ("get_image_width", "get_image_channel_data_type",
                          "get_image_channel_order"):
                b.add(query, INT, (image,), "image")
            if ro.axes >= 2:
                b.add("get_image_height", INT, (image,), "image")
                b.add("get_image_dim", _vt(INT, 4 if ro.axes == 3 else 2), (image,), "image")
            if ro.axes == 3:
                b.add("get_image_depth", INT, (image,), "image")
            if ro.layer is not None:
                b.add("get_image_array_size", SIZE_T, (image,), "image")


_FIXED_FAMILIES: tuple[Callable[[_Builder], None], ...] = (
    _workitem, _math, _integer, _common, _geometric, _relational, _vector_data, _sync_and_async,
    _atomics, _shuffles, _printf, _images,
)


def fixed_signatures() -> dict[str, tuple[Overload, ...]]:
    """Every overload of every builtin other than ``convert_*`` and ``as_*``, by name; built
    afresh on each call (``builtins`` keeps the one table)."""
    b = _Builder()
    for family in _FIXED_FAMILIES:
        family(b)
    return {name: tuple(ovs) for name, ovs in b.by_name.items()}

# ---------------------------------------------------------------- convert_* and as_*

_CONVERT_RE = re.compile(
    r"convert_(?P<elem>[a-z]+?)(?P<width>2|3|4|8|16)?(?P<sat>_sat)?(?P<mode>_rte|_rtz|_rtp|_rtn)?"
)
_AS_RE = re.compile(r"as_(?P<type>[a-z]+(?:2|3|4|8|16)?)")


def convert_overloads(name: str) -> tuple[Overload, ...]:
    m = _CONVERT_RE.fullmatch(name)
    if m is None:
        return ()
    dst = scalar_type_named(m["elem"])
    if dst is None or dst not in ELEMENTS:
        return ()
    if m["sat"] and not dst.is_integer:
        return ()  # saturation is only defined for integer destinations
    width = int(m["width"] or 1)
    ret = _vt(dst, width)
    return tuple(Overload(name, ret, (_vt(src, width),), "convert") for src in ELEMENTS)


def _storage_size(t: Type) -> int:
    return t.size  # 3-component vectors have the size of 4-component ones


def as_overloads(name: str) -> tuple[Overload, ...]:
    m = _AS_RE.fullmatch(name)
    if m is None:
        return ()
    ret: Type | None = scalar_type_named(m["type"]) or vector_type_named(m["type"])
    if ret is None:
        return ()
    ret_elem = ret.elem if isinstance(ret, VectorType) else ret
    if not isinstance(ret_elem, ScalarType) or ret_elem not in ELEMENTS:
        return ()
    size = _storage_size(ret)
    sources = [_vt(e, n) for e in ELEMENTS for n in WIDTHS if _storage_size(_vt(e, n)) == size]
    return tuple(Overload(name, ret, (src,), "reinterpret") for src in sources)


def convert_names() -> Iterator[str]:
    for dst in ELEMENTS:
        for n in WIDTHS:
            suffix = "" if n == 1 else str(n)
            for sat in ("", "_sat") if dst.is_integer else ("",):
                for mode in _ROUNDING:
                    yield f"convert_{dst}{suffix}{sat}{mode}"


def as_names() -> Iterator[str]:
    for elem in ELEMENTS:
        for n in WIDTHS:
            yield f"as_{_vt(elem, n)}"
