"""The CPU backend's lowering of the image builtins (OpenCL 1.2 sections 6.12.14 and 8).

An image argument is a pointer to a ``struct ppcl_image`` the host fills in
(``ir.layout.IMAGE_DESCRIPTOR``, which ``runtime/image.py`` writes): the data pointer, the
extent of each addressed axis (an array's layers are its last axis), the byte pitch of each
axis, and the channel order, channel data type and channel count as the host API's ``CL_*``
codes. A sampler is its ``CLK_*`` bits (``ir.image_formats.SAMPLER_BITS``). The helpers are
always inlined, so a sampler known when the kernel is compiled (a program-scope constant)
folds its addressing and filtering branches away.

One support block does the work for every overload: ``__ppcl_img_axis`` turns one coordinate
into texel indices and a weight by the formulas of section 8.2 (for each addressing mode, with
nearest and linear filtering), ``__ppcl_img_texel`` reads a texel and converts it by section
8.3 (normalized integers, half, float, signed and unsigned integers; border color outside), and
``__ppcl_img_write`` converts and stores. An overload's own definition only spreads its
coordinate vector over the three axes.
"""

from __future__ import annotations

from collections.abc import Sequence

from ppcl.compiler.codegen.c_builtins_convert import define_from_half, define_to_half
from ppcl.compiler.codegen.c_builtins_emit import Emitter, define_overload
from ppcl.compiler.codegen.cstyle import CodegenError
from ppcl.compiler.ir.builtins import Overload
from ppcl.compiler.ir.image_formats import (
    ALPHA_BORDER_ORDERS,
    CHANNEL_ORDERS,
    CHANNEL_READ,
    CHANNEL_TYPES,
    CHANNEL_WRITE,
    SAMPLER_BITS,
)
from ppcl.compiler.ir.layout import IMAGE_DESCRIPTOR
from ppcl.compiler.ir.types import FLOAT, ImageType, VectorType, width_of

STRUCT = "struct ppcl_image"


def _struct() -> str:
    fields = "".join(f"    {ctype} {name}{f'[{count}]' if count > 1 else ''};\n"
                     for name, ctype, count in IMAGE_DESCRIPTOR)
    return f"{STRUCT} {{\n{fields}}};"


_O = {name: hex(code) for name, code in CHANNEL_ORDERS.items()}
_T = {name: hex(code) for name, code in CHANNEL_TYPES.items()}
def _read_cases() -> str:
    spelled = {"z": "0u", "o": "one"}
    lines = []
    for order, sources in CHANNEL_READ.items():
        parts = " ".join(f"r.u[{comp}] = {spelled.get(src, f'c.u[{src}]')};"
                         for comp, src in enumerate(sources))
        lines.append(f"    case {_O[order]}: {parts} break;")
    return "\n".join(lines)


def _write_cases() -> str:
    lines = []
    for order, sources in CHANNEL_WRITE.items():
        parts = " ".join(f"c.u[{n}] = v.u[{src}];" for n, src in enumerate(sources))
        lines.append(f"    case {_O[order]}: {parts} break;")
    return "\n".join(lines)


# section 8.3: channel type -> (C storage type, texel field, the value read from stored
# channel {s}); FLOAT and the 32-bit integer types are copied as they are
_DECODE = {
    "SNORM_INT8": ("signed char", "f", "fmaxf(-1.0f, (float){s} / 127.0f)"),
    "SNORM_INT16": ("short", "f", "fmaxf(-1.0f, (float){s} / 32767.0f)"),
    "UNORM_INT8": ("unsigned char", "f", "(float){s} / 255.0f"),
    "UNORM_INT16": ("unsigned short", "f", "(float){s} / 65535.0f"),
    "SIGNED_INT8": ("signed char", "i", "{s}"),
    "SIGNED_INT16": ("short", "i", "{s}"),
    "UNSIGNED_INT8": ("unsigned char", "u", "{s}"),
    "UNSIGNED_INT16": ("unsigned short", "u", "{s}"),
    "HALF_FLOAT": ("unsigned short", "f", "{half}({s})"),
}
# the value stored for component {v}: convert_<type>_sat_rte(v * scale) for normalized types,
# convert_<type>_sat(v) for integers, half rounded to nearest even
_ENCODE = {
    "SNORM_INT8": ("f", "__ppcl_img_sat({v} * 127.0f, -128, 127)"),
    "SNORM_INT16": ("f", "__ppcl_img_sat({v} * 32767.0f, -32768, 32767)"),
    "UNORM_INT8": ("f", "__ppcl_img_sat({v} * 255.0f, 0, 255)"),
    "UNORM_INT16": ("f", "__ppcl_img_sat({v} * 65535.0f, 0, 65535)"),
    "SIGNED_INT8": ("i", "__ppcl_img_clampi({v}, -128, 127)"),
    "SIGNED_INT16": ("i", "__ppcl_img_clampi({v}, -32768, 32767)"),
    "UNSIGNED_INT8": ("u", "({v} > 255u ? 255u : {v})"),
    "UNSIGNED_INT16": ("u", "({v} > 65535u ? 65535u : {v})"),
    "HALF_FLOAT": ("f", "{half}({v})"),
}


def _decode_cases(from_half: str) -> str:
    lines = []
    for kind, (ctype, field, value) in _DECODE.items():
        read = value.replace("{s}", f"((const {ctype} *)p)[n]").replace("{half}", from_half)
        lines.append(f"    case {_T[kind]}: for (int n = 0; n < channels; n++) "
                     f"c->{field}[n] = {read}; break;")
    return "\n".join(lines)


def _encode_cases(to_half: str) -> str:
    lines = []
    for kind, (field, value) in _ENCODE.items():
        ctype = _DECODE[kind][0]
        stored = value.replace("{v}", f"c.{field}[n]").replace("{half}", to_half)
        lines.append(f"    case {_T[kind]}: for (int n = 0; n < channels; n++) "
                     f"(({ctype} *)p)[n] = ({ctype}){stored}; break;")
    return "\n".join(lines)


C_QUALIFIER = "static inline __attribute__((always_inline))"


def support_text(qualifier: str, from_half: str, to_half: str) -> str:
    """The descriptor struct and the shared reading, sampling and writing functions, each
    declared with ``qualifier``; ``from_half`` and ``to_half`` name the functions converting a
    half's bits to a float and a float to a half's bits rounded to nearest even. The C backend
    and the CUDA dialect print the same text."""
    alpha_border = " || ".join(f"im->order == {_O[o]}" for o in ALPHA_BORDER_ORDERS)
    bits = SAMPLER_BITS
    repeat, mirror = bits["CLK_ADDRESS_REPEAT"], bits["CLK_ADDRESS_MIRRORED_REPEAT"]
    edge, clamp = bits["CLK_ADDRESS_CLAMP_TO_EDGE"], bits["CLK_ADDRESS_CLAMP"]
    linear = bits["CLK_FILTER_LINEAR"]
    is_int = f"(im->type >= {_T['SIGNED_INT8']} && im->type <= {_T['UNSIGNED_INT32']})"

    return f"""
{_struct()}
typedef union {{ float f[4]; int i[4]; unsigned int u[4]; }} ppcl_texel;
{qualifier} void __ppcl_img_border(const {STRUCT} *im, ppcl_texel *r)
{{
    r->u[0] = r->u[1] = r->u[2] = 0u;
    r->u[3] = ({alpha_border}) ? 0u : ({is_int} ? 1u : 0x3f800000u);
}}
/* section 8.3: the channels of the texel at p as floats (normalized integer, half and
   float types) or as integers (signed and unsigned integer types) */
{qualifier} void __ppcl_img_channels(const {STRUCT} *im, const char *p, ppcl_texel *c)
{{
    int channels = im->channels;
    switch (im->type) {{
{_decode_cases(from_half)}
    default:  /* float and 32-bit integers */
        for (int b = 0; b < 4 * channels; b++) ((char *)c)[b] = p[b];
        break;
    }}
}}
/* the texel at (i, j, k) as (r, g, b, a); the border color outside the image */
{qualifier} ppcl_texel __ppcl_img_texel(const {STRUCT} *im, long i, long j, long k)
{{
    ppcl_texel c = {{{{0}}}}, r;
    if (i < 0 || j < 0 || k < 0 || (size_t)i >= im->extent[0] || (size_t)j >= im->extent[1]
            || (size_t)k >= im->extent[2]) {{
        __ppcl_img_border(im, &r);
        return r;
    }}
    __ppcl_img_channels(im, im->data + i * im->pitch[0] + j * im->pitch[1] + k * im->pitch[2], &c);
    unsigned int one = {is_int} ? 1u : 0x3f800000u;
    (void)one;
    switch (im->order) {{
{_read_cases()}
    default: r = c; break;
    }}
    return r;
}}
{qualifier} long __ppcl_img_floor(float u)
{{
    if (!(u > -1e9f)) u = -1e9f;  /* NaN and far outside: any index outside the image */
    if (u > 1e9f) u = 1e9f;
    return (long)floorf(u);
}}
/* section 8.2: the texel indices i0, i1 and the weight a of coordinate s on an axis of n texels */
{qualifier} void __ppcl_img_axis(float s, long n, unsigned int smp, long *i0, long *i1, float *a)
{{
    int norm = smp & 1, mode = smp & 0xe;
    float u;
    if (norm && mode == {repeat}) u = (s - floorf(s)) * (float)n;
    else if (norm && mode == {mirror}) u = fabsf(s - 2.0f * rintf(0.5f * s)) * (float)n;
    else u = norm ? s * (float)n : s;
    if (!(smp & {linear})) {{
        long i = __ppcl_img_floor(u);
        if (norm && mode == {repeat}) {{ if (i > n - 1) i -= n; }}
        else if (norm && mode == {mirror}) {{ if (i > n - 1) i = n - 1; }}
        else if (mode == {edge}) i = i < 0 ? 0 : (i > n - 1 ? n - 1 : i);
        else if (mode == {clamp}) i = i < -1 ? -1 : (i > n ? n : i);
        *i0 = *i1 = i;
        *a = 0.0f;
        return;
    }}
    float t = u - 0.5f;
    long i = __ppcl_img_floor(t), j = i + 1;
    *a = t - floorf(t);
    if (*a != *a) *a = 0.0f;  /* +-inf and NaN: the texel at i alone, not NaN weights */
    if (norm && mode == {repeat}) {{ if (i < 0) i += n; if (j > n - 1) j -= n; }}
    else if (norm && mode == {mirror}) {{ if (i < 0) i = 0; if (j > n - 1) j = n - 1; }}
    else if (mode == {edge}) {{
        i = i < 0 ? 0 : (i > n - 1 ? n - 1 : i);
        j = j < 0 ? 0 : (j > n - 1 ? n - 1 : j);
    }} else if (mode == {clamp}) {{
        i = i < -1 ? -1 : (i > n ? n : i);
        j = j < -1 ? -1 : (j > n ? n : j);
    }}
    *i0 = i;
    *i1 = j;
}}
/* a read through a sampler: `axes` coordinates addressed and filtered, then the layer of an
   array (rounded and clamped); linear filtering only where `filter` (reads of floats) */
{qualifier} ppcl_texel __ppcl_img_sample(const {STRUCT} *im, unsigned int smp, int axes,
                                           int layered, int filter, float x, float y, float z)
{{
    const float s[3] = {{x, y, z}};
    long i0[3] = {{0, 0, 0}}, i1[3] = {{0, 0, 0}};
    float a[3] = {{0.0f, 0.0f, 0.0f}};
    if (!filter) smp &= ~{linear}u;
    for (int d = 0; d < axes; d++) __ppcl_img_axis(s[d], (long)im->extent[d], smp, &i0[d], &i1[d], &a[d]);
    if (layered) {{
        long top = (long)im->extent[axes] - 1;
        float l = rintf(s[axes]);
        long k = !(l > 0.0f) ? 0 : (l > (float)top ? top : (long)l);
        i0[axes] = i1[axes] = k;
    }}
    if (!(smp & {linear})) return __ppcl_img_texel(im, i0[0], i0[1], i0[2]);
    ppcl_texel r = {{{{0.0f, 0.0f, 0.0f, 0.0f}}}};
    for (int corner = 0; corner < (1 << axes); corner++) {{
        float w = 1.0f;
        long at[3] = {{i0[0], i0[1], i0[2]}};
        for (int d = 0; d < axes; d++) {{
            int high = (corner >> d) & 1;
            w *= high ? a[d] : 1.0f - a[d];
            if (high) at[d] = i1[d];
        }}
        ppcl_texel t = __ppcl_img_texel(im, at[0], at[1], at[2]);
        for (int n = 0; n < 4; n++) r.f[n] += w * t.f[n];
    }}
    return r;
}}
{qualifier} long __ppcl_img_sat(float x, long lo, long hi)
{{
    if (x != x) return 0;
    if (x <= (float)lo) return lo;
    if (x >= (float)hi) return hi;
    return (long)rintf(x);
}}
{qualifier} long __ppcl_img_clampi(long x, long lo, long hi)
{{
    return x < lo ? lo : (x > hi ? hi : x);
}}
/* section 8.3.1: (r, g, b, a) converted to the channel type and stored at (i, j, k); a write
   outside the image does nothing */
{qualifier} void __ppcl_img_write(const {STRUCT} *im, long i, long j, long k, ppcl_texel v)
{{
    if (i < 0 || j < 0 || k < 0 || (size_t)i >= im->extent[0] || (size_t)j >= im->extent[1]
            || (size_t)k >= im->extent[2]) return;
    char *p = im->data + i * im->pitch[0] + j * im->pitch[1] + k * im->pitch[2];
    ppcl_texel c = v;
    switch (im->order) {{
{_write_cases()}
    default: break;
    }}
    int channels = im->channels;
    switch (im->type) {{
{_encode_cases(to_half)}
    default:  /* float and 32-bit integers */
        for (int b = 0; b < 4 * channels; b++) p[b] = ((const char *)&c)[b];
        break;
    }}
}}
"""


def _support(e: Emitter) -> str:
    from_half = define_from_half(e)
    to_half = define_to_half(e, FLOAT, "rte")
    return e.define("__ppcl_image_support", lambda: support_text(C_QUALIFIER, from_half, to_half))


_FIELD = {"f": "f", "i": "i", "ui": "u"}
_RET_TYPE = {"f": "ppcl_float4", "i": "ppcl_int4", "ui": "ppcl_uint4"}


def _coords(ov: Overload, index: int, names: Sequence[str], *, as_float: bool) -> list[str]:
    """The three axis coordinates of coordinate argument ``index`` (0 past its components)."""
    coord = ov.params[index]
    n = width_of(coord)
    zero = "0.0f" if as_float else "0"
    cast = "(float)" if as_float else "(long)"
    parts = [names[index] if n == 1 else f"{names[index]}[{d}]" for d in range(n)]
    parts = [cast + p for p in parts[:3]]
    return (parts + [zero, zero, zero])[:3]


def lower_image(e: Emitter, ov: Overload) -> str:
    image = ov.params[0]
    if not isinstance(image, ImageType):
        raise CodegenError(f"builtin '{ov.name}' takes no image")
    _support(e)
    name = ov.name
    if name.startswith("read_image"):
        suffix = name[len("read_image"):]
        field, ret = _FIELD[suffix], _RET_TYPE[suffix]
        if len(ov.params) == 3:  # through a sampler
            x, y, z = _coords(ov, 2, ["a0", "a1", "a2"], as_float=True)
            layered = int(image.layer is not None)
            call = (f"__ppcl_img_sample(a0, (unsigned int)a1, {image.axes}, {layered}, "
                    f"{int(suffix == 'f')}, {x}, {y}, {z})")
        else:
            x, y, z = _coords(ov, 1, ["a0", "a1"], as_float=False)
            call = f"__ppcl_img_texel(a0, {x}, {y}, {z})"
        return define_overload(e, ov, lambda a: (
            f"ppcl_texel t = {call};\n"
            f"{ret} r = {{t.{field}[0], t.{field}[1], t.{field}[2], t.{field}[3]}};\n"
            "return r;"))
    if name.startswith("write_image"):
        suffix = name[len("write_image"):]
        field = _FIELD[suffix]
        x, y, z = _coords(ov, 1, ["a0", "a1", "a2"], as_float=False)
        return define_overload(e, ov, lambda a: (
            "ppcl_texel t;\n"
            + "".join(f"t.{field}[{n}] = a2[{n}];\n" for n in range(4))
            + f"__ppcl_img_write(a0, {x}, {y}, {z}, t);"))
    return define_overload(e, ov, lambda a: _query(ov, image))


# a scalar image query over the descriptor {im}; {layer} is the axis of an array's layers
_QUERIES = {
    "get_image_width": "(int){im}->extent[0]",
    "get_image_height": "(int){im}->extent[1]",
    "get_image_depth": "(int){im}->extent[2]",
    "get_image_array_size": "{im}->extent[{layer}]",
    "get_image_channel_data_type": "{im}->type",
    "get_image_channel_order": "{im}->order",
}


def image_query(name: str, image: ImageType, im: str) -> str | None:
    """A scalar image query as a C expression over the descriptor pointer ``im`` (an operand
    that binds as a postfix expression), or None for ``get_image_dim`` and other builtins; the
    C and CUDA printers both use it."""
    template = _QUERIES.get(name)
    return None if template is None else template.format(im=im, layer=image.layer)


def _query(ov: Overload, image: ImageType) -> str:
    value = image_query(ov.name, image, "a0")
    if value is not None:
        return f"return {value};"
    if ov.name == "get_image_dim":
        assert isinstance(ov.ret, VectorType)
        parts = [f"(int)a0->extent[{d}]" for d in range(image.axes)]
        parts += ["0"] * (ov.ret.width - len(parts))
        return f"ppcl_int{ov.ret.width} r = {{{', '.join(parts)}}};\nreturn r;"
    raise CodegenError(f"image builtin '{ov.name}' has no C lowering")
