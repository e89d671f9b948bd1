"""The C lowering of builtins, compiled with gcc and checked against numpy and exact references.

One translation unit per module holds every overload under test plus a test entry point per
overload (``t_<key>``: apply it to arrays), built once by a module-scoped fixture.
"""

from __future__ import annotations

import ctypes
import math
import subprocess
from collections.abc import Iterator, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ppcl.compiler import toolchain
from ppcl.compiler.codegen.c_builtins import (
    INCLUDE_DIR,
    TYPES_HEADER,
    c_builtin_definitions,
    c_builtin_name,
)
from ppcl.compiler.codegen.c_builtins_emit import c_type, storage_width
from ppcl.compiler.codegen.cstyle import CodegenError
from ppcl.compiler.ir import builtins as B
from ppcl.compiler.ir.types import (
    AddressSpace,
    PointerType,
    ScalarType,
    Type,
    VectorType,
    scalar_type_named,
    vector_type_named,
)

DTYPES: dict[str, Any] = {
    "char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
    "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64,
    "half": np.uint16, "float": np.float32, "double": np.float64,
}
INTS = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong")


def ty(spec: str) -> Type:
    """``"float4"``, ``"int"``, ``"*float4"`` (private pointer), ``"v*int"`` (volatile)."""
    if spec.startswith("v*"):
        return PointerType(ty(spec[2:]), AddressSpace.GLOBAL, volatile=True)
    if spec.startswith("c*"):
        return PointerType(ty(spec[2:]), AddressSpace.GLOBAL, const=True)
    if spec.startswith("*"):
        return PointerType(ty(spec[1:]), AddressSpace.PRIVATE)
    t = scalar_type_named(spec) or vector_type_named(spec)
    assert t is not None, spec
    return t


def ov(name: str, *specs: str) -> B.Overload:
    return B.resolve(name, [ty(s) for s in specs])


# ---------------------------------------------------------------- what the library holds

MATH1 = ("acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atanh", "atanpi", "cbrt",
         "ceil", "cos", "cosh", "cospi", "erfc", "erf", "exp", "exp2", "exp10", "expm1", "fabs",
         "floor", "lgamma", "log", "log2", "log10", "log1p", "logb", "rint", "round", "rsqrt", "sin",
         "sinh", "sinpi", "sqrt", "tan", "tanh", "tanpi", "tgamma", "trunc")
MATH2 = ("atan2", "atan2pi", "copysign", "fdim", "fmod", "hypot", "nextafter", "pow", "powr",
         "remainder", "maxmag", "minmag", "fmax", "fmin")
INT2 = ("abs_diff", "add_sat", "sub_sat", "hadd", "rhadd", "mul_hi", "rotate", "min", "max")
INT3 = ("mad_hi", "mad_sat", "clamp")
MODES = ("", "_rte", "_rtz", "_rtp", "_rtn")
HALF_STORES = [f"vstore_half{m}" for m in MODES]


def _wanted() -> Iterator[B.Overload]:
    for f in ("float", "double"):
        for name in MATH1:
            yield ov(name, f)
        for name in MATH2:
            yield ov(name, f, f)
        yield ov("fma", f, f, f)
        yield ov("mad", f, f, f)
        yield ov("pown", f, "int")
        yield ov("rootn", f, "int")
        yield ov("ldexp", f, "int")
        yield ov("ilogb", f)
        yield ov("nan", "uint" if f == "float" else "ulong")
        for name in ("fract", "modf", "sincos"):
            yield ov(name, f, "*" + f)
        for name in ("frexp", "lgamma_r"):
            yield ov(name, f, "*int")
        yield ov("remquo", f, f, "*int")
        for name in ("degrees", "radians", "sign"):
            yield ov(name, f)
        for name in ("step", "max", "min"):
            yield ov(name, f, f)
        for name in ("clamp", "mix", "smoothstep"):
            yield ov(name, f, f, f)
        for n in ("", "2", "3", "4"):
            yield ov("length", f + n)
            yield ov("normalize", f + n)
            yield ov("distance", f + n, f + n)
            yield ov("dot", f + n, f + n)
        yield ov("cross", f + "3", f + "3")
        yield ov("cross", f + "4", f + "4")
        for name in ("isequal", "isnotequal", "isless", "isordered", "isunordered"):
            yield ov(name, f, f)
            yield ov(name, f + "4", f + "4")
        for name in ("isnan", "isinf", "isfinite", "isnormal", "signbit"):
            yield ov(name, f)
            yield ov(name, f + "3")
    yield ov("sin", "float4")
    yield ov("fract", "float3", "*float3")
    yield ov("remquo", "double2", "double2", "*int2")
    yield ov("ldexp", "float4", "int")
    yield ov("pown", "double4", "int4")
    yield ov("clamp", "float4", "float", "float")
    yield ov("mix", "float4", "float4", "float")
    for name in ("native_sin", "native_exp", "native_rsqrt", "native_divide", "half_exp",
                 "half_powr", "native_recip", "half_recip"):
        yield ov(name, *(["float"] * (2 if name.endswith(("divide", "powr")) else 1)))
    for t in INTS:
        yield ov("abs", t)
        yield ov("clz", t)
        yield ov("popcount", t)
        for name in INT2:
            yield ov(name, t, t)
        for name in INT3:
            yield ov(name, t, t, t)
    for t in ("int", "uint"):
        yield ov("mul24", t, t)
        yield ov("mad24", t, t, t)
    for hi, lo in (("char", "uchar"), ("uchar", "uchar"), ("short", "ushort"),
                   ("ushort", "ushort"), ("int", "uint"), ("uint", "uint")):
        yield ov("upsample", hi, lo)
    yield ov("add_sat", "int4", "int4")
    yield ov("mul_hi", "long2", "long2")
    yield ov("clz", "uchar16", )
    yield ov("rotate", "ushort8", "ushort8")
    yield ov("clamp", "short4", "short", "short")
    for t in ("int4", "float4", "double2", "uchar16", "long3"):
        elem = vector_type_named(t)
        assert elem is not None
        size = elem.elem.bits
        for sel in ({8: "char", 16: "short", 32: "int", 64: "long"}[size],
                    {8: "uchar", 16: "ushort", 32: "uint", 64: "ulong"}[size]):
            yield ov("select", t, t, sel + t[len(elem.elem.name):])
        yield ov("bitselect", t, t, t)
    yield ov("select", "float", "float", "int")
    yield ov("bitselect", "double", "double", "double")
    for t in ("int4", "char16", "long3", "short"):
        yield ov("any", t)
        yield ov("all", t)
    yield ov("shuffle", "float4", "uint8")
    yield ov("shuffle", "char16", "uchar2")
    yield ov("shuffle2", "int4", "int4", "uint8")
    yield ov("shuffle2", "double2", "double2", "ulong4")
    for src in ("float", "double"):
        for dst in INTS:
            for sat in ("", "_sat"):
                for m in MODES:
                    yield ov(f"convert_{dst}{sat}{m}", src)
    for src in ("int", "uint", "long", "ulong", "short"):
        for dst in ("float", "double"):
            for m in MODES:
                yield ov(f"convert_{dst}{m}", src)
    for m in MODES:
        yield ov(f"convert_float{m}", "double")
        yield ov(f"convert_float4{m}", "double4")
    for src in INTS:
        for dst in INTS:
            yield ov(f"convert_{dst}_sat", src)
            yield ov(f"convert_{dst}", src)
    yield ov("convert_int4_sat_rte", "float4")
    yield ov("convert_uchar16_sat", "int16")
    yield ov("convert_float3", "int3")
    yield ov("convert_int8_rtn", "double8")
    yield ov("convert_ulong2_sat_rtp", "float2")
    yield ov("as_int", "float")
    yield ov("as_float4", "int4")
    yield ov("as_int4", "float3")
    yield ov("as_float3", "uint4")
    yield ov("as_char4", "int")
    for src in ("float", "double"):
        for m in HALF_STORES:
            yield ov(m, src, "ulong", "*half")


SPECIAL_C = """
void t_vload3(const float *p, long off, float *out) {{ ppcl_float3 v = {vload3}(off, p);
    memcpy(out, &v, 16); }}
void t_vstore3(const float *in, long off, float *p) {{ ppcl_float3 v; memcpy(&v, in, 16);
    {vstore3}(v, off, p); }}
void t_vload8c(const signed char *p, long off, signed char *out) {{
    ppcl_char8 v = {vload8c}(off, p); memcpy(out, &v, 8); }}
void t_vstore16d(const double *in, long off, double *p) {{ ppcl_double16 v; memcpy(&v, in, 128);
    {vstore16d}(v, off, p); }}
void t_vload_half4(const unsigned short *p, long off, float *out) {{
    ppcl_float4 v = {vload_half4}(off, p); memcpy(out, &v, 16); }}
void t_vloada_half3(const unsigned short *p, long off, float *out) {{
    ppcl_float3 v = {vloada_half3}(off, p); memcpy(out, &v, 16); }}
void t_vstorea_half3_rtz(const float *in, long off, unsigned short *p) {{ ppcl_float3 v;
    memcpy(&v, in, 16); {vstorea_half3_rtz}(v, off, p); }}
void t_vstore_half2_rtp(const double *in, long off, unsigned short *p) {{ ppcl_double2 v;
    memcpy(&v, in, 16); {vstore_half2_rtp}(v, off, p); }}
void t_vload_half(const unsigned short *p, long n, float *out) {{
    for (long k = 0; k < n; ++k) out[k] = {vload_half}(k, p); }}
int t_atomics(int *p, unsigned *u, float *f, long *l) {{
    int ok = 1;
    *p = 5;
    ok &= {atomic_add}(p, 3) == 5 && *p == 8;
    ok &= {atomic_sub}(p, 10) == 8 && *p == -2;
    ok &= {atomic_inc}(p) == -2 && *p == -1;
    ok &= {atomic_dec}(p) == -1 && *p == -2;
    ok &= {atomic_min}(p, -7) == -2 && *p == -7;
    ok &= {atomic_min}(p, 0) == -7 && *p == -7;
    ok &= {atomic_max}(p, 4) == -7 && *p == 4;
    ok &= {atomic_cmpxchg}(p, 4, 9) == 4 && *p == 9;
    ok &= {atomic_cmpxchg}(p, 4, 1) == 9 && *p == 9;
    ok &= {atomic_xchg}(p, 11) == 9 && *p == 11;
    ok &= {atomic_and}(p, 6) == 11 && *p == 2;
    ok &= {atomic_or}(p, 5) == 2 && *p == 7;
    ok &= {atomic_xor}(p, 1) == 7 && *p == 6;
    *u = 1;
    ok &= {atomic_max_u}(u, 0xffffffffu) == 1 && *u == 0xffffffffu;
    ok &= {atom_sub_u}(u, 0xfffffff0u) == 0xffffffffu && *u == 15;
    *f = 1.5f;
    ok &= {atomic_xchg_f}(f, 2.5f) == 1.5f && *f == 2.5f;
    *l = 1;
    ok &= {atom_add_l}(l, 1L << 40) == 1 && *l == (1L << 40) + 1;
    ok &= {atom_min_l}(l, -(1L << 50)) == (1L << 40) + 1 && *l == -(1L << 50);
    {mem_fence}(1); {read_mem_fence}(2); {write_mem_fence}(3);
    return ok;
}}
"""

SPECIAL_OVERLOADS = {
    "vload3": ov("vload3", "ulong", "c*float"),
    "vstore3": ov("vstore3", "float3", "ulong", "*float"),
    "vload8c": ov("vload8", "ulong", "c*char"),
    "vstore16d": ov("vstore16", "double16", "ulong", "*double"),
    "vload_half": ov("vload_half", "ulong", "c*half"),
    "vload_half4": ov("vload_half4", "ulong", "c*half"),
    "vloada_half3": ov("vloada_half3", "ulong", "c*half"),
    "vstorea_half3_rtz": ov("vstorea_half3_rtz", "float3", "ulong", "*half"),
    "vstore_half2_rtp": ov("vstore_half2_rtp", "double2", "ulong", "*half"),
    "atomic_add": ov("atomic_add", "v*int", "int"),
    "atomic_sub": ov("atomic_sub", "v*int", "int"),
    "atomic_inc": ov("atomic_inc", "v*int"),
    "atomic_dec": ov("atomic_dec", "v*int"),
    "atomic_min": ov("atomic_min", "v*int", "int"),
    "atomic_max": ov("atomic_max", "v*int", "int"),
    "atomic_cmpxchg": ov("atomic_cmpxchg", "v*int", "int", "int"),
    "atomic_xchg": ov("atomic_xchg", "v*int", "int"),
    "atomic_and": ov("atomic_and", "v*int", "int"),
    "atomic_or": ov("atomic_or", "v*int", "int"),
    "atomic_xor": ov("atomic_xor", "v*int", "int"),
    "atomic_max_u": ov("atomic_max", "v*uint", "uint"),
    "atom_sub_u": ov("atom_sub", "v*uint", "uint"),
    "atomic_xchg_f": ov("atomic_xchg", "v*float", "float"),
    "atom_add_l": ov("atom_add", "v*long", "long"),
    "atom_min_l": ov("atom_min", "v*long", "long"),
    "mem_fence": ov("mem_fence", "uint"),
    "read_mem_fence": ov("read_mem_fence", "uint"),
    "write_mem_fence": ov("write_mem_fence", "uint"),
}


def _entry(o: B.Overload) -> str:
    """``void t_<key>(long n, R *r, const P0 *a0, ..., E *o2)``: apply ``o`` n times."""
    params = ["long n"]
    args = []
    if not isinstance(o.ret, type(None)) and str(o.ret) != "void":
        params.append(f"{c_type(o.ret)} *r")
    for i, p in enumerate(o.params):
        if isinstance(p, PointerType):
            if p.pointee == ty("half"):
                params.append(f"unsigned short *a{i}")
                args.append(f"a{i}")
            else:
                params.append(f"{c_type(p.pointee)} *a{i}")
                args.append(f"&a{i}[k]")
        else:
            params.append(f"const {c_type(p)} *a{i}")
            args.append(f"a{i}[k]" if str(p) != "ulong" or "vstore" not in o.name else "k")
    call = f"{c_builtin_name(o)}({', '.join(args)})"
    stmt = f"r[k] = {call};" if str(o.ret) != "void" else f"{call};"
    return f"void t_{o.key}({', '.join(params)}) {{\n    for (long k = 0; k < n; ++k) {stmt}\n}}\n"


class Lib:
    def __init__(self, path: Path, overloads: Sequence[B.Overload]) -> None:
        self.dll = ctypes.CDLL(str(path))
        self.keys = {o.key for o in overloads}

    def call(self, o: B.Overload, *inputs: object) -> list[np.ndarray]:
        """Apply ``o`` to the arrays ``inputs`` (one per non-pointer parameter); return the
        result array followed by the arrays written through pointer parameters."""
        assert o.key in self.keys, f"{o} is not in the test library"
        ins = list(inputs)
        n = len(np.asarray(ins[0]))
        keep: list[np.ndarray] = []
        results: list[np.ndarray] = []
        argv: list[object] = [ctypes.c_long(n)]
        if str(o.ret) != "void":
            r = _empty(o.ret, n)
            results.append(r)
            argv.append(ctypes.c_void_p(r.ctypes.data))
        for p in o.params:
            if isinstance(p, PointerType):
                if p.pointee == ty("half"):
                    out = np.zeros(n, np.uint16)
                else:
                    out = _empty(p.pointee, n)
                results.append(out)
                argv.append(ctypes.c_void_p(out.ctypes.data))
            elif "vstore" in o.name and str(p) == "ulong":
                argv.append(None)
            else:
                a = _array(p, ins.pop(0), n)
                keep.append(a)
                argv.append(ctypes.c_void_p(a.ctypes.data))
        getattr(self.dll, f"t_{o.key}")(*argv)
        return results


def _empty(t: Type, n: int) -> np.ndarray:
    elem = t.elem if isinstance(t, VectorType) else t
    assert isinstance(elem, ScalarType)
    shape = (n, storage_width(t)) if isinstance(t, VectorType) else (n,)
    return np.zeros(shape, DTYPES[elem.name])


def _array(t: Type, value: object, n: int) -> np.ndarray:
    elem = t.elem if isinstance(t, VectorType) else t
    assert isinstance(elem, ScalarType)
    a = np.asarray(value)
    if isinstance(t, VectorType) and a.shape[1] < storage_width(t):
        a = np.concatenate([a, np.zeros((n, storage_width(t) - a.shape[1]), a.dtype)], axis=1)
    if a.dtype != DTYPES[elem.name]:
        if elem.is_integer and a.dtype.kind in "iuO":
            a = np.array([int(v) % (1 << elem.bits) for v in a.ravel()], np.uint64).reshape(
                a.shape).astype(DTYPES[elem.name])
        else:
            a = a.astype(DTYPES[elem.name])
    return np.ascontiguousarray(a)


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Lib:
    overloads = list(dict.fromkeys(_wanted()))
    special = {k: c_builtin_name(o) for k, o in SPECIAL_OVERLOADS.items()}
    source = "\n".join([
        '#include "ppcl_types.h"',
        c_builtin_definitions(overloads + list(SPECIAL_OVERLOADS.values())),
        *(_entry(o) for o in overloads),
        SPECIAL_C.format(**special),
    ])
    tmp = tmp_path_factory.mktemp("c_builtins")
    (tmp / "lib.c").write_text(source)
    so = tmp / "lib.so"
    subprocess.run(
        ["gcc", "-O2", "-shared", "-fPIC", "-std=gnu11", "-ffp-contract=off", "-fno-math-errno",
         "-fno-trapping-math", "-Wall", "-Werror", "-Wno-unused-function", "-Wno-psabi",
         # gcc 13 takes a vector result filled lane by lane in a loop as maybe uninitialized
         "-Wno-maybe-uninitialized",
         "-I", str(INCLUDE_DIR), str(tmp / "lib.c"), "-o", str(so), "-lm"],
        check=True,
    )
    return Lib(so, overloads + list(SPECIAL_OVERLOADS.values()))


# ---------------------------------------------------------------- floating-point helpers


def ulp_distance(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Distance in units in the last place between arrays of one float dtype; 0 where both are
    NaN, a huge number where only one is."""
    itype = np.int32 if got.dtype == np.float32 else np.int64
    lo = np.iinfo(itype).min

    def ordered(a: np.ndarray) -> np.ndarray:
        i = a.view(itype).astype(object)
        return np.where(i < 0, lo - i, i)

    d = np.abs(ordered(got) - ordered(ref)).astype(np.float64)
    both_nan = np.isnan(got) & np.isnan(ref)
    one_nan = np.isnan(got) ^ np.isnan(ref)
    d[both_nan] = 0
    d[one_nan] = np.inf
    return d


def assert_ulps(got: np.ndarray, ref: np.ndarray, limit: float, x: object = None) -> None:
    with np.errstate(over="ignore"):
        ref = ref.astype(got.dtype)
    d = ulp_distance(got, ref)
    bad = d > limit
    assert not bad.any(), (
        f"{int(bad.sum())} results off by more than {limit} ulp, first: "
        f"x={np.asarray(x)[bad][:4] if x is not None else ''} got={got[bad][:4]} "
        f"ref={ref.astype(got.dtype)[bad][:4]} ulps={d[bad][:4]}")


def edge_values(dtype: type) -> np.ndarray:
    info = np.finfo(dtype)
    tiny = info.smallest_subnormal
    vals = [0.0, -0.0, tiny, -tiny, 3 * tiny, info.tiny, -info.tiny, info.tiny / 2, 1.0, -1.0,
            0.5, -0.5, 2.0, 0.25, 0.75, 1.5, 3.0, 10.0, -10.0, 100.0, 1e-5, 1e5, -1e5,
            float(info.max), -float(info.max), math.inf, -math.inf, math.nan,
            1e30 if dtype == np.float32 else 1e300, -1e30 if dtype == np.float32 else -1e300]
    rng = np.random.default_rng(1)
    mag = 10.0 ** rng.uniform(-8, 8, 300)
    signs = rng.choice([-1.0, 1.0], 300)
    return np.concatenate([np.array(vals), mag * signs, rng.uniform(-4, 4, 200)]).astype(dtype)


def _ld(x: np.ndarray) -> np.ndarray:
    return x.astype(np.longdouble)


def _pi_reduce(x: np.ndarray) -> np.ndarray:
    return np.fmod(_ld(x), np.longdouble(2))


PI_L = np.longdouble("3.14159265358979323846264338327950288")

MATH1_REFS: dict[str, tuple[Any, int, int]] = {
    # name: (reference on long double, float ulps, double ulps)
    "acos": (np.arccos, 4, 4), "acosh": (np.arccosh, 4, 4), "asin": (np.arcsin, 4, 4),
    "asinh": (np.arcsinh, 4, 4), "atan": (np.arctan, 5, 5), "atanh": (np.arctanh, 5, 5),
    "acospi": (lambda x: np.arccos(x) / PI_L, 5, 5),
    "asinpi": (lambda x: np.arcsin(x) / PI_L, 5, 5),
    "atanpi": (lambda x: np.arctan(x) / PI_L, 5, 5),
    "cbrt": (np.cbrt, 2, 2), "ceil": (np.ceil, 0, 0), "cos": (np.cos, 4, 4),
    "cosh": (np.cosh, 4, 4), "exp": (np.exp, 3, 3), "exp2": (np.exp2, 3, 3),
    "exp10": (lambda x: np.power(np.longdouble(10), x), 3, 3), "expm1": (np.expm1, 3, 3),
    "fabs": (np.fabs, 0, 0), "floor": (np.floor, 0, 0), "log": (np.log, 3, 3),
    "log2": (np.log2, 3, 3), "log10": (np.log10, 3, 3), "log1p": (np.log1p, 2, 2),
    "rint": (np.rint, 0, 0), "trunc": (np.trunc, 0, 0), "sin": (np.sin, 4, 4),
    "sinh": (np.sinh, 4, 4), "sqrt": (np.sqrt, 0, 0), "tan": (np.tan, 5, 5),
    "tanh": (np.tanh, 5, 5), "rsqrt": (lambda x: 1 / np.sqrt(x), 2, 2),
    "sinpi": (lambda x: np.sin(PI_L * _pi_reduce(x)), 4, 4),
    "cospi": (lambda x: np.cos(PI_L * _pi_reduce(x)), 4, 4),
    "tanpi": (lambda x: np.tan(PI_L * _pi_reduce(x)), 6, 6),
}


def _pi_exact_points(x: np.ndarray) -> np.ndarray:
    """Arguments where sinpi/cospi/tanpi have exact values (2x an integer, or not finite)."""
    with np.errstate(all="ignore"):
        return ~np.isfinite(x) | (np.floor(_ld(x) * 2) == _ld(x) * 2)


# ---------------------------------------------------------------- math


@pytest.mark.parametrize("fty", ["float", "double"])
@pytest.mark.parametrize("name", sorted(MATH1_REFS))
def test_math1_within_ulps(lib: Lib, name: str, fty: str) -> None:
    ref_fn, float_ulps, double_ulps = MATH1_REFS[name]
    dtype = DTYPES[fty]
    x = edge_values(dtype)
    if name.endswith("pi") and name in ("sinpi", "cospi", "tanpi"):
        x = x[~_pi_exact_points(x)]
    (got,) = lib.call(ov(name, fty), x)
    with np.errstate(all="ignore"):
        ref = ref_fn(_ld(x))
    # the long double reference rounded to double may be off by one (double rounding)
    exact = name in ("ceil", "floor", "trunc", "rint", "fabs")
    limit = float_ulps if fty == "float" else double_ulps + (0 if exact else 1)
    assert_ulps(got, ref, limit, x)


@pytest.mark.parametrize("fty", ["float", "double"])
@pytest.mark.parametrize("name", ["erf", "erfc", "tgamma", "lgamma", "logb", "round"])
def test_math1_against_python(lib: Lib, name: str, fty: str) -> None:
    dtype = DTYPES[fty]
    x = edge_values(dtype)
    x = x[np.isfinite(x) & (np.abs(x) < 170)]
    fn = {"erf": math.erf, "erfc": math.erfc, "tgamma": math.gamma, "lgamma": math.lgamma,
          "logb": lambda v: float(math.frexp(v)[1] - 1) if v else -math.inf,
          "round": lambda v: float(math.copysign(math.floor(abs(v) + 0.5), v))}[name]

    def safe(v: float) -> float:
        try:
            return fn(v)
        except (ValueError, OverflowError):
            return math.nan if name != "tgamma" else math.copysign(math.inf, v)

    ref = np.array([safe(float(v)) for v in x])
    (got,) = lib.call(ov(name, fty), x)
    keep = ~((name in ("tgamma", "lgamma")) & (x <= 0) & (np.floor(x) == x))
    if name == "lgamma":  # no ULP bound in the specification (and Python's own is rough)
        assert np.allclose(got[keep], ref[keep], rtol=1e-5, atol=1e-6, equal_nan=True)
        return
    assert_ulps(got[keep], ref[keep], 16, x[keep])


def test_signed_zeros_and_specials(lib: Lib) -> None:
    def one(name: str, fty: str, v: float, *more: float) -> float:
        args = [np.array([v], DTYPES[fty])] + [np.array([m], DTYPES[fty]) for m in more]
        return float(lib.call(ov(name, *([fty] * (1 + len(more)))), *args)[0][0])

    for fty in ("float", "double"):
        for name in ("sin", "tan", "asin", "atan", "sinh", "tanh", "asinh", "atanh", "sinpi",
                     "tanpi", "asinpi", "atanpi", "expm1", "log1p", "cbrt", "sqrt", "trunc",
                     "ceil", "rint", "round", "erf"):
            r = one(name, fty, -0.0)
            assert r == 0 and math.copysign(1, r) < 0, (name, fty)
        assert math.copysign(1, one("sinpi", fty, -1.0)) < 0
        assert math.copysign(1, one("sinpi", fty, 2.0)) > 0
        assert one("sinpi", fty, 0.5) == 1.0 and one("sinpi", fty, -1.5) == 1.0
        assert one("cospi", fty, 0.5) == 0 and math.copysign(1, one("cospi", fty, 0.5)) > 0
        assert one("cospi", fty, -1.0) == -1.0 and one("cospi", fty, 1e30) == 1.0
        assert one("tanpi", fty, 0.5) == math.inf and one("tanpi", fty, 1.5) == -math.inf
        assert math.copysign(1, one("tanpi", fty, 1.0)) < 0
        assert math.copysign(1, one("tanpi", fty, 2.0)) > 0
        assert math.isnan(one("sinpi", fty, math.inf)) and math.isnan(one("cospi", fty, -math.inf))
        assert one("rsqrt", fty, -0.0) == -math.inf and one("rsqrt", fty, math.inf) == 0
        assert math.isnan(one("rsqrt", fty, -1.0))
        assert one("atan2pi", fty, 0.0, -0.0) == 1.0 and one("atan2pi", fty, -0.0, -0.0) == -1.0
        assert one("acospi", fty, -1.0) == 1.0
        assert one("exp10", fty, 2.0) == 100.0 and one("exp10", fty, -math.inf) == 0
        assert one("log", fty, 0.0) == -math.inf and math.isnan(one("log", fty, -1.0))
        assert one("fmax", fty, math.nan, 1.0) == 1.0 and one("fmin", fty, 2.0, math.nan) == 2.0
        assert one("maxmag", fty, -3.0, 2.0) == -3.0 and one("minmag", fty, -3.0, 2.0) == 2.0
        assert one("maxmag", fty, -2.0, 2.0) == 2.0 and one("minmag", fty, -2.0, 2.0) == -2.0
        # powr: only positive bases; the special cases of §7.5.1
        assert math.isnan(one("powr", fty, -2.0, 2.0))
        assert math.isnan(one("powr", fty, 0.0, 0.0)) and math.isnan(one("powr", fty, math.inf, 0.0))
        assert math.isnan(one("powr", fty, 1.0, math.inf))
        assert one("powr", fty, 0.0, -1.0) == math.inf and one("powr", fty, -0.0, 3.0) == 0
        assert one("powr", fty, 1.0, 5.0) == 1.0 and one("powr", fty, math.inf, -1.0) == 0
        assert one("powr", fty, 2.0, 10.0) == 1024.0
        assert one("pow", fty, -2.0, 3.0) == -8.0 and one("pow", fty, math.nan, 0.0) == 1.0
        assert one("nextafter", fty, 0.0, 1.0) == float(np.finfo(DTYPES[fty]).smallest_subnormal)
        assert one("fdim", fty, 1.0, 3.0) == 0 and one("hypot", fty, 3.0, 4.0) == 5.0
        assert one("hypot", fty, math.inf, math.nan) == math.inf


@pytest.mark.parametrize("fty", ["float", "double"])
@pytest.mark.parametrize("name", ["atan2", "atan2pi", "hypot", "pow", "powr", "fmod", "remainder",
                                  "copysign", "fdim", "nextafter", "fmax", "fmin"])
def test_math2_within_ulps(lib: Lib, name: str, fty: str) -> None:
    dtype = DTYPES[fty]
    rng = np.random.default_rng(2)
    e = edge_values(dtype)
    x = np.concatenate([np.repeat(e[:30], 30), rng.choice(e, 600)]).astype(dtype)
    y = np.concatenate([np.tile(e[:30], 30), rng.choice(e, 600)]).astype(dtype)
    if name in ("pow", "powr"):
        x = np.abs(x) if name == "powr" else x
        y = np.where(np.abs(y) > 200, y / 1e6, y).astype(dtype)
    refs: dict[str, tuple[Any, int]] = {
        "atan2": (np.arctan2, 6), "atan2pi": (lambda a, b: np.arctan2(a, b) / PI_L, 6),
        "hypot": (np.hypot, 4), "pow": (np.power, 16), "powr": (np.power, 16),
        "fmod": (np.fmod, 0), "remainder": (None, 0), "copysign": (np.copysign, 0),
        "fdim": (lambda a, b: np.where(np.isnan(a) | np.isnan(b), np.nan, np.where(a > b, a - b, 0)),
                 0),
        "nextafter": (None, 0), "fmax": (np.fmax, 0), "fmin": (np.fmin, 0),
    }
    ref_fn, limit = refs[name]
    (got,) = lib.call(ov(name, fty, fty), x, y)
    with np.errstate(all="ignore"):
        if name == "remainder":
            ref = np.array([math.remainder(a, b) if np.isfinite(a) and b != 0 and not np.isnan(b)
                            else math.nan for a, b in zip(x.tolist(), y.tolist())])
        elif name == "nextafter":
            ref = np.nextafter(x, y)
        else:
            ref = ref_fn(_ld(x), _ld(y))
    if name == "powr":
        special = (x == 0) | np.isinf(x) | (x == 1) | np.isnan(x) | np.isnan(y)
        x, y, got, ref = x[~special], y[~special], got[~special], ref[~special]
    assert_ulps(got, ref, limit + (1 if limit and fty == "double" else 0), np.stack([x, y], 1))


@pytest.mark.parametrize("fty", ["float", "double"])
def test_fma_mad_ldexp_pown_rootn_ilogb_nan(lib: Lib, fty: str) -> None:
    dtype = DTYPES[fty]
    a = np.array([1.0, 2.0, -3.0, 0.1, np.finfo(dtype).eps], dtype)
    b = np.array([3.0, 0.5, 7.0, 10.0, np.finfo(dtype).eps], dtype)
    c = np.array([1.0, -1.0, 21.0, -1.0, -0.0], dtype)
    (got,) = lib.call(ov("fma", fty, fty, fty), a, b, c)
    exact = [Fraction(float(p)) * Fraction(float(q)) + Fraction(float(r)) for p, q, r in zip(a, b, c)]
    assert got.tolist() == [float(dtype(float(v))) for v in exact]
    (got,) = lib.call(ov("mad", fty, fty, fty), a[:4], b[:4], c[:4])
    assert_ulps(got, a[:4] * b[:4] + c[:4], 1)

    x = np.array([1.0, 1.5, -3.0, np.finfo(dtype).tiny, math.inf, 0.0], dtype)
    k = np.array([3, -1, 10, -5, -2, 7], np.int32)
    (got,) = lib.call(ov("ldexp", fty, "int"), x, k)
    assert got.tolist() == np.ldexp(x, k).tolist()

    x = np.array([2.0, -2.0, 0.0, -0.0, 10.0, math.nan, 1.5, 0.5], dtype)
    n = np.array([10, 3, -1, -3, -2, 0, 0, 7], np.int32)
    (got,) = lib.call(ov("pown", fty, "int"), x, n)
    assert got[:5].tolist() == [1024.0, -8.0, math.inf, -math.inf, 0.01 if fty == "double"
                                else float(np.float32(0.01))]
    assert got[5] == 1.0 and got[6] == 1.0 and got[7] == 0.5 ** 7

    x = np.array([8.0, -8.0, -8.0, 16.0, 0.0, -0.0, -0.0, 2.0, 1e300 if fty == "double" else 1e30,
                  7.0], dtype)
    n = np.array([3, 3, 2, -4, -2, -3, 4, 0, 7, 5], np.int32)
    (got,) = lib.call(ov("rootn", fty, "int"), x, n)
    assert got[:2].tolist() == [2.0, -2.0] and math.isnan(got[2]) and got[3] == 0.5
    assert got[4] == math.inf and got[5] == -math.inf
    assert got[6] == 0 and math.copysign(1, got[6]) > 0 and math.isnan(got[7])
    with np.errstate(all="ignore"):
        ref = np.power(_ld(x[8:]), np.longdouble(1) / _ld(n[8:].astype(np.float64)))
    assert_ulps(got[8:], ref, 2)

    x = np.array([0.0, math.inf, math.nan, 1.0, 3.0, np.finfo(dtype).smallest_subnormal], dtype)
    (got,) = lib.call(ov("ilogb", fty), x)
    low = -149 if fty == "float" else -1074
    assert got.tolist() == [-(2**31), 2**31 - 1, 2**31 - 1, 0, 1, low]

    code_t = "uint" if fty == "float" else "ulong"
    (got,) = lib.call(ov("nan", code_t), np.array([0, 5], DTYPES[code_t]))
    assert np.isnan(got).all()
    bits = got.view(np.uint32 if fty == "float" else np.uint64)
    assert int(bits[1]) & 0xFF == 5


@pytest.mark.parametrize("fty", ["float", "double"])
def test_out_parameter_functions(lib: Lib, fty: str) -> None:
    dtype = DTYPES[fty]
    x = np.array([1.25, -1.25, -0.0, math.inf, -math.inf, math.nan, -1e-30, 3.0], dtype)
    frac, ip = lib.call(ov("fract", fty, "*" + fty), x)
    assert frac[:2].tolist() == [0.25, 0.75] and ip[:2].tolist() == [1.0, -2.0]
    assert frac[2] == 0 and math.copysign(1, frac[2]) < 0
    assert frac[3] == 0 and ip[3] == math.inf and ip[4] == -math.inf
    assert math.isnan(frac[5]) and math.isnan(ip[5])
    assert 0 <= frac[6] < 1 and frac[6] == np.nextafter(dtype(1), dtype(0)) and ip[6] == -1
    frac, ip = lib.call(ov("modf", fty, "*" + fty), x)
    ref_f, ref_i = np.modf(x)
    assert np.array_equal(frac, ref_f, equal_nan=True) and np.array_equal(ip, ref_i, equal_nan=True)
    s, c = lib.call(ov("sincos", fty, "*" + fty), x[:3])
    assert s.tolist() == np.sin(x[:3]).tolist() and c.tolist() == np.cos(x[:3]).tolist()
    m, e = lib.call(ov("frexp", fty, "*int"), np.array([8.0, -0.75, 0.0], dtype))
    assert m.tolist() == [0.5, -0.75, 0.0] and e.tolist() == [4, 0, 0]
    r, sign = lib.call(ov("lgamma_r", fty, "*int"), np.array([-0.5, 3.0, 0.5], dtype))
    assert sign.tolist() == [-1, 1, 1]
    assert_ulps(r, np.array([math.lgamma(-0.5), math.log(2), math.lgamma(0.5)]), 16)


def _remquo_ref(x: float, y: float) -> tuple[float, int]:
    q = Fraction(x) / Fraction(y)
    n = round(q)  # Python rounds half to even, as remainder does
    return math.remainder(x, y), (abs(n) & 127) * (1 if q >= 0 else -1)


@pytest.mark.parametrize("fty", ["float", "double"])
def test_remquo_seven_quotient_bits(lib: Lib, fty: str) -> None:
    dtype = DTYPES[fty]
    rng = np.random.default_rng(3)
    x = np.concatenate([[5.0, -5.0, 7.5, 1000.0, -1000.5, 1e30, 3.0, 2.5, 1e-40 if fty == "double"
                         else 3e-39], rng.uniform(-1e4, 1e4, 300)]).astype(dtype)
    y = np.concatenate([[2.0, 2.0, 1.0, 3.0, 7.0, 3.3, 2.0, 1.0, 1e-42 if fty == "double" else
                         1e-44], rng.uniform(-50, 50, 300)]).astype(dtype)
    r, quo = lib.call(ov("remquo", fty, fty, "*int"), x, y)
    for xv, yv, rv, qv in zip(x.tolist(), y.tolist(), r.tolist(), quo.tolist()):
        rr, qq = _remquo_ref(xv, yv)
        assert rv == rr and qv == qq, (xv, yv, rv, qv, rr, qq)
    r, quo = lib.call(ov("remquo", fty, fty, "*int"), np.array([math.inf, 1.0], dtype),
                      np.array([1.0, 0.0], dtype))
    assert np.isnan(r).all()


def test_vector_math_is_elementwise(lib: Lib) -> None:
    x = np.random.default_rng(4).uniform(-10, 10, (50, 4)).astype(np.float32)
    (got,) = lib.call(ov("sin", "float4"), x)
    (ref,) = lib.call(ov("sin", "float"), x.ravel())
    assert np.array_equal(got, ref.reshape(50, 4))
    x3 = np.array([[1.25, -0.5, 2.75]], np.float32)
    frac, ip = lib.call(ov("fract", "float3", "*float3"), x3)
    assert frac[0, :3].tolist() == [0.25, 0.5, 0.75] and ip[0, :3].tolist() == [1, -1, 2]
    r, q = lib.call(ov("remquo", "double2", "double2", "*int2"), np.array([[5.0, 7.0]]),
                    np.array([[2.0, -2.0]]))
    assert r[0].tolist() == [1.0, -1.0] and q[0].tolist() == [2, -4]
    (got,) = lib.call(ov("ldexp", "float4", "int"), np.ones((1, 4), np.float32),
                      np.array([3], np.int32))
    assert got[0].tolist() == [8.0] * 4
    (got,) = lib.call(ov("pown", "double4", "int4"), np.full((1, 4), 2.0),
                      np.array([[0, 1, -1, 10]], np.int32))
    assert got[0].tolist() == [1.0, 2.0, 0.5, 1024.0]


def test_native_and_half_functions(lib: Lib) -> None:
    x = np.array([0.5, 1.0, 2.0, 4.0], np.float32)
    assert_ulps(lib.call(ov("native_sin", "float"), x)[0], np.sin(_ld(x)), 4)
    assert_ulps(lib.call(ov("native_exp", "float"), x)[0], np.exp(_ld(x)), 4)
    assert_ulps(lib.call(ov("half_exp", "float"), x)[0], np.exp(_ld(x)), 4)
    assert_ulps(lib.call(ov("native_rsqrt", "float"), x)[0], 1 / np.sqrt(_ld(x)), 2)
    assert lib.call(ov("native_divide", "float", "float"), x, x)[0].tolist() == [1.0] * 4
    assert lib.call(ov("native_recip", "float"), x)[0].tolist() == [2.0, 1.0, 0.5, 0.25]
    assert lib.call(ov("half_recip", "float"), x)[0].tolist() == [2.0, 1.0, 0.5, 0.25]
    assert lib.call(ov("half_powr", "float", "float"), x, x)[0].tolist() == [
        float(np.float32(0.5 ** 0.5)), 1.0, 4.0, 256.0]


def test_fast_math_definitions_compile(tmp_path: Path) -> None:
    overloads = [ov(n, "float4") for n in ("native_exp10", "native_log10", "normalize", "length",
                                           "fast_normalize", "sin")]
    overloads += [ov("native_powr", "float", "float"), ov("distance", "float3", "float3")]
    src = '#include "ppcl_types.h"\n' + c_builtin_definitions(overloads, fast_math=True)
    (tmp_path / "f.c").write_text(src)
    subprocess.run(["gcc", "-O1", "-c", "-std=gnu11", "-Wall", "-Werror", "-Wno-unused-function",
                    "-Wno-psabi", "-I", str(INCLUDE_DIR), str(tmp_path / "f.c"), "-o",
                    str(tmp_path / "f.o")], check=True)


def test_definitions_only_what_is_asked(lib: Lib) -> None:
    text = c_builtin_definitions([ov("sin", "float4"), ov("sin", "float"), ov("sin", "float4")])
    assert text.count(f"{c_builtin_name(ov('sin', 'float4'))}(") == 1
    assert "cos" not in text and "__ppcl_s_sin_float_float" in text
    with pytest.raises(CodegenError):
        c_builtin_definitions([ov("get_global_id", "uint")])


# ---------------------------------------------------------------- every float: exp and log

EXP_LOG_FLOAT = ("exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p")
EXP_LOG_CHECK_C = """
double exp10(double);  /* glibc's, declared here: it needs _GNU_SOURCE */

/* |got - ref| in ulps of the float format at ref; a float inf counts as 2^128 beside a finite
   ref, a true inf or NaN of ref must be met exactly, and so must the sign of a zero */
static double ppcl_t_ulps(float got, double ref) {
    if (isnan(ref)) return isnan(got) ? 0.0 : INFINITY;
    if (isinf(ref)) return got == ref ? 0.0 : INFINITY;
    if (isnan(got)) return INFINITY;
    if (got == 0.0f && ref == 0.0 && signbit(got) != signbit(ref)) return INFINITY;
    double g = isinf(got) ? copysign(0x1p128, got) : (double)got;
    int e;
    frexp(ref, &e);  /* |ref| in [2^(e-1), 2^e) */
    int ulp_exp = e - 24 < -149 ? -149 : e - 24;
    return fabs(g - ref) / ldexp(1.0, ulp_exp);
}

#define PPCL_T_BLOCK 4096
/* Check the float overload against the double function ref on the bit patterns lo, lo + step,
   ... below hi, through a vectorizable loop as a work-item loop calls it and through the
   float8 overload; return the largest error in ulps, count the results that are not the
   double reference rounded to float, and report the first lane where float8 differs. */
#define PPCL_T_CHECK(name, scalar, vec8, ref)                                                 \\
double t_check_##name(unsigned long lo, unsigned long hi, unsigned long step,              \\
                      long *misrounded, float *worst_x, long *vector_mismatch) {          \\
    static __thread float x[PPCL_T_BLOCK], y[PPCL_T_BLOCK];                                \\
    double worst = 0.0;                                                                    \\
    for (unsigned long b = lo; b < hi; b += PPCL_T_BLOCK * step) {                          \\
        int n = 0;                                                                         \\
        for (unsigned long v = b; v < hi && n < PPCL_T_BLOCK; v += step)                    \\
            x[n++] = __ppcl_bits_float((unsigned int)v);                                   \\
        _Pragma("omp simd")                                                                \\
        for (int i = 0; i < n; ++i) y[i] = scalar(x[i]);                                   \\
        for (int i = 0; i + 8 <= n; i += 8) {                                              \\
            ppcl_float8 v8, r8;                                                            \\
            memcpy(&v8, &x[i], sizeof v8);                                                 \\
            r8 = vec8(v8);                                                                 \\
            for (int j = 0; j < 8; ++j)                                                    \\
                if (__ppcl_float_bits(r8[j]) != __ppcl_float_bits(y[i + j])) ++*vector_mismatch; \\
        }                                                                                  \\
        for (int i = 0; i < n; ++i) {                                                      \\
            double r = ref((double)x[i]);                                                  \\
            if (__ppcl_float_bits((float)r) == __ppcl_float_bits(y[i])) continue;          \\
            double u = ppcl_t_ulps(y[i], r);                                               \\
            if (!isnan(y[i]) || !isnan(r)) ++*misrounded;                                  \\
            if (u > worst) { worst = u; *worst_x = x[i]; }                                 \\
        }                                                                                  \\
    }                                                                                      \\
    return worst;                                                                          \\
}
"""


class CheckedFloatLib:
    """Float builtins compiled with a ``PPCL_T_CHECK`` checker per function (``source``) by the
    CPU device's own compile (``toolchain.compile_shared``: -O3 -march=native -fopenmp-simd, no
    contraction); the libraries of the exp/log, trigonometric and inverse functions' tests."""

    def __init__(self, source: str) -> None:
        self.dll = toolchain.load(toolchain.compile_shared(source).path)

    def check(self, name: str, lo: int, hi: int, step: int = 1) -> tuple[float, int, float]:
        """(largest error in ulps, results not correctly rounded, an argument of the largest
        error) over the float bit patterns lo, lo + step, ... below hi."""
        fn = getattr(self.dll, f"t_check_{name}")
        fn.restype = ctypes.c_double
        misrounded, vector_mismatch = ctypes.c_long(0), ctypes.c_long(0)
        worst_x = ctypes.c_float(0)
        worst = fn(ctypes.c_ulong(lo), ctypes.c_ulong(hi), ctypes.c_ulong(step),
                   ctypes.byref(misrounded), ctypes.byref(worst_x), ctypes.byref(vector_mismatch))
        assert vector_mismatch.value == 0, f"{name}: float8 and scalar results differ"
        return worst, misrounded.value, worst_x.value


def assert_within_half_ulp(lib: CheckedFloatLib, name: str, step: int) -> None:
    """Every ``step``-th float: the double result is about 2^-45 off, so rounding it misses
    only where the true value lies that close to half an ulp: a few floats, by a hair."""
    worst, misrounded, at = lib.check(name, 0, 1 << 32, step)
    assert worst <= 0.501, f"{name}: {worst} ulp at {at!r}"
    assert misrounded <= (1 << 32) // step // 100_000, (name, misrounded)


class ExpLogLib(CheckedFloatLib):
    """The float exp/log builtins with a checker per function."""

    def __init__(self) -> None:
        names = {n: (ov(n, "float"), ov(n, "float8")) for n in EXP_LOG_FLOAT}
        checks = [f"PPCL_T_CHECK({n}, {c_builtin_name(s)}, {c_builtin_name(v)}, {n})"
                  for n, (s, v) in names.items()]
        super().__init__("\n".join([TYPES_HEADER.read_text(encoding="utf-8"),
                                     c_builtin_definitions([o for pair in names.values()
                                                            for o in pair]),
                                     EXP_LOG_CHECK_C, *checks]))


@pytest.fixture(scope="module")
def explog() -> ExpLogLib:
    return ExpLogLib()


EXP_LOG_SPECIALS = np.array(
    [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, -math.nan, 1e-45, -1e-45, 1.1754942e-38,
     2.0, 10.0, 0.5, 88.72283, 88.72284, -87.33654, -103.27893, -103.97208, -104.0, -149.0,
     -150.0, 127.99999, 128.0, 38.53184, 38.53185, -45.0, 3.4028235e38, -3.4028235e38,
     -0.99999994, -1.0000001, 1e-10, -1e-10, 2.9802322e-08, -2.9802322e-08], np.float32)


@pytest.mark.parametrize("name", EXP_LOG_FLOAT)
def test_float_exp_log_special_values_exact(explog: ExpLogLib, name: str) -> None:
    """Zeros (with their sign), infinities, NaN, arguments outside the domain, the edges of
    overflow and underflow: each exactly what the double function rounded to float gives."""
    for bits in EXP_LOG_SPECIALS.view(np.uint32).tolist():
        worst, misrounded, _ = explog.check(name, bits, bits + 1)
        assert misrounded == 0 and worst == 0, (name, np.uint32(bits).view(np.float32))


@pytest.mark.parametrize("name", EXP_LOG_FLOAT)
def test_float_exp_log_sampled_floats_correctly_rounded(explog: ExpLogLib, name: str) -> None:
    """Every 251st float bit pattern (17 million, all binades and sign bits, NaNs included)."""
    assert_within_half_ulp(explog, name, 251)


@pytest.mark.slow
@pytest.mark.parametrize("name", EXP_LOG_FLOAT)
def test_float_exp_log_every_float_correctly_rounded(explog: ExpLogLib, name: str) -> None:
    """All 2^32 float bit patterns (about a minute per function; ``--run-slow``)."""
    assert_within_half_ulp(explog, name, 1)


POW_SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5,
                         np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e38, -3e38, 16777216.0,
                         16777217.0, -16777215.0, 2147483648.0, 1.0000001, 0.99999994, 127.5,
                         -149.0, 128.0], dtype=np.float32)


def test_float_pow_is_correctly_rounded_and_keeps_c99_special_cases(lib: Lib) -> None:
    """Float pow computes 2^(y log2|x|) in double and fixes C99 F.9.4.4's cases by selects
    (it vectorizes; glibc's powf is a call): every pair of special values as numpy's double pow
    rounded to float, bit for bit, and random pairs within an ulp of it (OpenCL allows 16)."""
    x = np.repeat(POW_SPECIALS, len(POW_SPECIALS))
    y = np.tile(POW_SPECIALS, len(POW_SPECIALS))
    (got,) = lib.call(ov("pow", "float", "float"), x, y)
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    same = (got.view(np.uint32) == ref.view(np.uint32)) | (np.isnan(got) & np.isnan(ref))
    assert same.all(), [(a, b, g, r) for a, b, g, r, ok in zip(x, y, got, ref, same) if not ok]
    rng = np.random.default_rng(7)
    n = 200_000
    x = (rng.choice([-1.0, 1.0], n) * np.exp2(rng.uniform(-30, 30, n))).astype(np.float32)
    y = rng.uniform(-6, 6, n).astype(np.float32)
    y[::3] = np.rint(y[::3])  # integer exponents, where negative bases have results
    (got,) = lib.call(ov("pow", "float", "float"), x, y)
    with np.errstate(all="ignore"):
        exact = np.power(x.astype(np.float64), y.astype(np.float64))
    assert_ulps(got, exact, 1, np.stack([x, y], 1))
    with np.errstate(over="ignore"):
        rounded = exact.astype(np.float32)
    finite = np.isfinite(rounded) & (rounded != 0)
    # correctly rounded but for a handful of results lying within 2^-40 of a midpoint
    assert np.count_nonzero(got[finite] != rounded[finite]) <= 5


# ---------------------------------------------------------------- integer functions


def _limits(t: str) -> tuple[int, int]:
    info = np.iinfo(DTYPES[t])
    return int(info.min), int(info.max)


def _wrap(v: int, t: str) -> int:
    lo, hi = _limits(t)
    v %= 1 << (np.dtype(DTYPES[t]).itemsize * 8)
    return v - (hi - lo + 1) if v > hi else v


def _int_samples(t: str, n: int = 120) -> np.ndarray:
    lo, hi = _limits(t)
    edges = [lo, lo + 1, -1 if lo else 1, 0, 1, 2, hi - 1, hi, hi // 2, lo // 2, 7, 3]
    rng = np.random.default_rng(5)
    rand = [int(v) for v in rng.integers(lo, hi, n, dtype=DTYPES[t], endpoint=True)]
    return np.array([_wrap(v, t) for v in edges] + rand, dtype=DTYPES[t])


INT_REFS = {
    "abs_diff": lambda x, y, b, s: abs(x - y),
    "add_sat": lambda x, y, b, s: min(max(x + y, s[0]), s[1]),
    "sub_sat": lambda x, y, b, s: min(max(x - y, s[0]), s[1]),
    "hadd": lambda x, y, b, s: (x + y) >> 1,
    "rhadd": lambda x, y, b, s: (x + y + 1) >> 1,
    "mul_hi": lambda x, y, b, s: (x * y) >> b,
    "rotate": lambda x, y, b, s: ((x % (1 << b)) << (y % b) | (x % (1 << b)) >> (b - y % b)),
    "min": lambda x, y, b, s: min(x, y),
    "max": lambda x, y, b, s: max(x, y),
}


@pytest.mark.parametrize("t", INTS)
def test_integer_functions(lib: Lib, t: str) -> None:
    bits = np.dtype(DTYPES[t]).itemsize * 8
    lims = _limits(t)
    rng = np.random.default_rng(6)
    x = _int_samples(t)
    y = np.concatenate([x[:12][::-1], rng.permutation(x[12:])])
    z = rng.permutation(x)
    xs, ys, zs = ([int(v) for v in a] for a in (x, y, z))
    for name, ref in INT_REFS.items():
        (got,) = lib.call(ov(name, t, t), x, y)
        expect = [_wrap(ref(a, b, bits, lims), t if name != "abs_diff" else "u" + t.lstrip("u"))
                  for a, b in zip(xs, ys)]
        assert [int(v) for v in got] == expect, name
    (got,) = lib.call(ov("abs", t), x)
    assert [int(v) for v in got] == [abs(v) for v in xs]
    (got,) = lib.call(ov("clz", t), x)
    assert [int(v) for v in got] == [bits - (v % (1 << bits)).bit_length() for v in xs]
    (got,) = lib.call(ov("popcount", t), x)
    assert [int(v) for v in got] == [bin(v % (1 << bits)).count("1") for v in xs]
    (got,) = lib.call(ov("mad_hi", t, t, t), x, y, z)
    assert [int(v) for v in got] == [_wrap(((a * b) >> bits) + c, t) for a, b, c in zip(xs, ys, zs)]
    (got,) = lib.call(ov("mad_sat", t, t, t), x, y, z)
    assert [int(v) for v in got] == [min(max(a * b + c, lims[0]), lims[1])
                                     for a, b, c in zip(xs, ys, zs)]
    lo = np.minimum(y, z)
    hi = np.maximum(y, z)
    (got,) = lib.call(ov("clamp", t, t, t), x, lo, hi)
    assert got.tolist() == np.minimum(np.maximum(x, lo), hi).tolist()


def test_integer_edge_cases(lib: Lib) -> None:
    def one(name: str, t: str, *args: int) -> int:
        arrays = [np.array([a], DTYPES[t]) for a in args]
        return int(lib.call(ov(name, *([t] * len(args))), *arrays)[0][0])

    assert one("abs", "int", -(2**31)) == 2**31
    assert one("abs", "long", -(2**63)) == 2**63
    assert one("abs", "char", -128) == 128
    assert one("add_sat", "int", 2**31 - 1, 1) == 2**31 - 1
    assert one("add_sat", "long", -(2**63), -1) == -(2**63)
    assert one("add_sat", "ulong", 2**64 - 1, 5) == 2**64 - 1
    assert one("sub_sat", "uint", 3, 5) == 0
    assert one("sub_sat", "long", 2**62, -(2**63)) == 2**63 - 1
    assert one("mul_hi", "long", -(2**63), -(2**63)) == 2**62
    assert one("mul_hi", "ulong", 2**64 - 1, 2**64 - 1) == 2**64 - 2
    assert one("clz", "int", 0) == 32 and one("clz", "uchar", 0) == 8 and one("clz", "long", 0) == 64
    assert one("clz", "short", -1) == 0 and one("clz", "ulong", 1) == 63
    assert one("rotate", "uint", 0x80000001, 32) == 0x80000001
    assert one("rotate", "uint", 0x80000001, 33) == 0x00000003
    assert one("rotate", "char", 0x41, -1) == _wrap(0xA0, "char")
    assert one("hadd", "int", 2**31 - 1, 2**31 - 1) == 2**31 - 1
    assert one("rhadd", "uint", 2**32 - 1, 2**32 - 2) == 2**32 - 1
    assert one("mad_sat", "ulong", 2**63, 4, 1) == 2**64 - 1
    assert one("mad_sat", "long", 2**62, -4, -1) == -(2**63)
    assert one("mul24", "int", -(2**23), 3) == -3 * 2**23
    assert one("mad24", "uint", 2**23, 2**9, 7) == 7
    (got,) = lib.call(ov("upsample", "int", "uint"), np.array([-1], np.int32),
                      np.array([5], np.uint32))
    assert int(got[0]) == -(2**32) + 5
    (got,) = lib.call(ov("upsample", "uchar", "uchar"), np.array([0x12], np.uint8),
                      np.array([0x34], np.uint8))
    assert int(got[0]) == 0x1234


def test_integer_vectors(lib: Lib) -> None:
    a = np.array([[2**31 - 1, -(2**31), 5, -5]], np.int32)
    b = np.array([[1, -1, 7, -7]], np.int32)
    assert lib.call(ov("add_sat", "int4", "int4"), a, b)[0].tolist() == [
        [2**31 - 1, -(2**31), 12, -12]]
    (got,) = lib.call(ov("mul_hi", "long2", "long2"), np.array([[2**62, -3]], np.int64),
                      np.array([[8, 2**63 - 1]], np.int64))
    assert got.tolist() == [[2, ((-3) * (2**63 - 1)) >> 64]]
    x = np.arange(16, dtype=np.uint8).reshape(1, 16)
    assert lib.call(ov("clz", "uchar16"), x)[0][0].tolist() == [8 - int(v).bit_length() for v in range(16)]
    (got,) = lib.call(ov("rotate", "ushort8", "ushort8"), np.full((1, 8), 0x8001, np.uint16),
                      np.arange(8, dtype=np.uint16).reshape(1, 8) * 17)
    assert got[0].tolist() == [((0x8001 << (k * 17 % 16)) | (0x8001 >> (16 - k * 17 % 16))) & 0xFFFF
                               for k in range(8)]
    (got,) = lib.call(ov("clamp", "short4", "short", "short"), np.array([[-9, 0, 9, 3]], np.int16),
                      np.array([-2], np.int16), np.array([4], np.int16))
    assert got[0].tolist() == [-2, 0, 4, 3]


# ---------------------------------------------------------------- conversions


def _round(v: Fraction, mode: str) -> int:
    if mode in ("", "_rtz"):
        return math.trunc(v)
    if mode == "_rtp":
        return math.ceil(v)
    if mode == "_rtn":
        return math.floor(v)
    return round(v)  # half to even


@pytest.mark.parametrize("src", ["float", "double"])
def test_float_to_int_conversions(lib: Lib, src: str) -> None:
    x = np.array([0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1.7, -1.7, 127.4, 127.6, -128.6,
                  255.5, 256.0, -129.0, 32767.5, 65535.7, 2147483647.0, 2147483648.0,
                  -2147483649.0, 4294967295.0, 4294967296.0, 9.3e18, -9.3e18, 1.9e19, 1e30,
                  -1e30, math.inf, -math.inf, math.nan, 1e-30, -1e-30], DTYPES[src])
    for dst in INTS:
        lo, hi = _limits(dst)
        for mode in MODES:
            (got,) = lib.call(ov(f"convert_{dst}_sat{mode}", src), x)
            expect = []
            for v in x.tolist():
                if math.isnan(v):
                    expect.append(0)
                elif math.isinf(v):
                    expect.append(hi if v > 0 else lo)
                else:
                    expect.append(min(max(_round(Fraction(v), mode), lo), hi))
            assert [int(g) for g in got] == expect, (dst, mode)
            (got,) = lib.call(ov(f"convert_{dst}{mode}", src), x)
            for g, v in zip(got.tolist(), x.tolist()):
                if math.isfinite(v) and lo <= _round(Fraction(v), mode) <= hi:
                    assert g == _round(Fraction(v), mode), (dst, mode, v)


def _int_to_float_ref(v: int, mant: int, mode: str) -> float:
    """Round the integer ``v`` to ``mant`` significant bits by ``mode``, exactly."""
    n = abs(v).bit_length()
    if n <= mant:
        return float(v)
    shift = n - mant
    q, r = divmod(abs(v), 1 << shift)
    half = 1 << (shift - 1)
    up = {"": r > half or (r == half and q & 1), "_rte": r > half or (r == half and q & 1),
          "_rtz": False, "_rtp": r > 0 and v > 0, "_rtn": r > 0 and v < 0}[mode]
    return math.copysign(float((q + up) << shift), v)


def test_int_to_float_conversions(lib: Lib) -> None:
    rng = np.random.default_rng(7)
    for src in ("int", "uint", "long", "ulong", "short"):
        x = _int_samples(src, 300)
        x = np.concatenate([x, np.array([(1 << 24) + 1, (1 << 24) + 3, (1 << 53) + 1], np.int64)
                            .astype(DTYPES[src]), rng.integers(0, 1 << 30, 20).astype(DTYPES[src])])
        for dst, mant in (("float", 24), ("double", 53)):
            for mode in MODES:
                (got,) = lib.call(ov(f"convert_{dst}{mode}", src), x)
                expect = [_int_to_float_ref(int(v), mant, mode) for v in x]
                assert got.tolist() == [float(DTYPES[dst](e)) for e in expect], (src, dst, mode)


def _to_float_by_mode(v: float, mode: str, dtype: type) -> float:
    """Round the double ``v`` to ``dtype`` by ``mode`` (exact comparisons in Fraction)."""
    with np.errstate(over="ignore"):
        near = dtype(v)
    if not math.isfinite(v) or mode in ("", "_rte"):
        return float(near)
    exact = Fraction(v)
    got = float(near)
    if math.isinf(got):
        too_far = mode == "_rtz" or (mode == "_rtp" and got < 0) or (mode == "_rtn" and got > 0)
        return float(np.nextafter(near, dtype(0))) if too_far else got
    r = Fraction(got)
    if mode == "_rtz" and abs(r) > abs(exact):
        return float(np.nextafter(near, dtype(0)))
    if mode == "_rtp" and r < exact:
        with np.errstate(over="ignore"):
            return float(np.nextafter(near, dtype(math.inf)))
    if mode == "_rtn" and r > exact:
        return float(np.nextafter(near, dtype(-math.inf)))
    return got


def test_double_to_float_conversions(lib: Lib) -> None:
    rng = np.random.default_rng(8)
    x = np.concatenate([[0.0, -0.0, 1.0 + 2**-30, -(1.0 + 2**-30), 1e300, -1e300, 3.4028235e38,
                         3.4028236e38, 1e-300, -1e-300, 1e-45, 7e-46, 2**-149 * 1.5, math.inf,
                         -math.inf, math.nan, 0.1, -0.1], rng.standard_normal(200) * 1e3,
                        rng.standard_normal(50) * 1e-40])
    for mode in MODES:
        (got,) = lib.call(ov(f"convert_float{mode}", "double"), x)
        expect = np.array([_to_float_by_mode(float(v), mode, np.float32) for v in x], np.float32)
        assert np.array_equal(got, expect, equal_nan=True), mode
        assert (np.signbit(got) == np.signbit(expect)).all()
        (got4,) = lib.call(ov(f"convert_float4{mode}", "double4"), x[:200].reshape(50, 4))
        assert np.array_equal(got4, expect[:200].reshape(50, 4), equal_nan=True), mode


def test_int_to_int_conversions(lib: Lib) -> None:
    for src in INTS:
        x = _int_samples(src, 40)
        for dst in INTS:
            lo, hi = _limits(dst)
            (got,) = lib.call(ov(f"convert_{dst}_sat", src), x)
            assert [int(v) for v in got] == [min(max(int(v), lo), hi) for v in x], (src, dst)
            (got,) = lib.call(ov(f"convert_{dst}", src), x)
            assert [int(v) for v in got] == [_wrap(int(v), dst) for v in x], (src, dst)


def test_vector_conversions(lib: Lib) -> None:
    (got,) = lib.call(ov("convert_int4_sat_rte", "float4"),
                      np.array([[2.5, -3.5, math.nan, 3e9]], np.float32))
    assert got.tolist() == [[2, -4, 0, 2**31 - 1]]
    (got,) = lib.call(ov("convert_uchar16_sat", "int16"), np.arange(-100, 380, 30).reshape(1, 16))
    assert got[0].tolist() == [min(max(v, 0), 255) for v in range(-100, 380, 30)]
    (got,) = lib.call(ov("convert_float3", "int3"), np.array([[1, -2, 16777217]], np.int32))
    assert got[0, :3].tolist() == [1.0, -2.0, 16777216.0]
    (got,) = lib.call(ov("convert_int8_rtn", "double8"), np.linspace(-2, 2, 8).reshape(1, 8))
    assert got[0].tolist() == [math.floor(v) for v in np.linspace(-2, 2, 8)]
    (got,) = lib.call(ov("convert_ulong2_sat_rtp", "float2"), np.array([[-0.5, 1e20]], np.float32))
    assert got[0].tolist() == [0, 2**64 - 1]


def test_reinterpret(lib: Lib) -> None:
    (got,) = lib.call(ov("as_int", "float"), np.array([1.0, -0.0], np.float32))
    assert got.tolist() == [0x3F800000, -(2**31)]
    x = np.array([[1.0, 2.0, 3.0, 4.0]], np.float32)
    (got,) = lib.call(ov("as_float4", "int4"), x.view(np.int32))
    assert np.array_equal(got, x)
    (got,) = lib.call(ov("as_int4", "float3"), x)
    assert got[0, :3].tolist() == x.view(np.int32)[0, :3].tolist()
    (got,) = lib.call(ov("as_float3", "uint4"), x.view(np.uint32))
    assert got[0, :3].tolist() == [1.0, 2.0, 3.0]
    (got,) = lib.call(ov("as_char4", "int"), np.array([0x04030201], np.int32))
    assert got[0].tolist() == [1, 2, 3, 4]


# ---------------------------------------------------------------- half loads and stores


def _half_by_mode(v: float, mode: str) -> int:
    with np.errstate(over="ignore"):
        near = np.float16(v)  # numpy rounds to nearest even, from double directly
    bits = int(np.array([near]).view(np.uint16)[0])
    if math.isnan(v) or mode in ("", "_rte"):
        return bits
    exact = Fraction(v) if math.isfinite(v) else None
    got = float(near)
    if exact is None:
        return bits
    toward_zero = np.nextafter(near, np.float16(0))
    if math.isinf(got):
        too_far = mode == "_rtz" or (mode == "_rtp" and got < 0) or (mode == "_rtn" and got > 0)
        return int(np.array([toward_zero]).view(np.uint16)[0]) if too_far else bits
    r = Fraction(got)
    step = None
    if mode == "_rtz" and abs(r) > abs(exact):
        step = toward_zero
    elif mode == "_rtp" and r < exact:
        step = np.nextafter(near, np.float16(math.inf))
    elif mode == "_rtn" and r > exact:
        step = np.nextafter(near, np.float16(-math.inf))
    if step is None:
        return bits
    return int(np.array([step], np.float16).view(np.uint16)[0])


@pytest.mark.parametrize("src", ["float", "double"])
def test_vstore_half_rounding_modes(lib: Lib, src: str) -> None:
    rng = np.random.default_rng(9)
    specials = [0.0, -0.0, 1.0, -1.0, 65504.0, 65519.0, 65520.0, 65535.0, 70000.0, -70000.0,
                1e10, -1e10, 2**-24, 2**-25, 2**-25 * 1.5, 2**-26, -(2**-25), 2**-14,
                2**-14 - 2**-25, 6.1e-5, 1e-10, -1e-10, 1e-40, 1 + 2**-11, 1 + 3 * 2**-11,
                1 + 2**-11 + 2**-30, math.inf, -math.inf, math.nan, 0.1, -0.1, 1e-300]
    x = np.concatenate([specials, rng.standard_normal(400) * 100,
                        rng.standard_normal(200) * 1e-5, np.exp(rng.uniform(-20, 12, 200))])
    x = x.astype(DTYPES[src])
    for name in HALF_STORES:
        mode = name[len("vstore_half"):]
        (got,) = lib.call(ov(name, src, "ulong", "*half"), x)
        expect = [_half_by_mode(float(v), mode) for v in x]
        bad = [(float(v), hex(int(g)), hex(e)) for v, g, e in zip(x, got, expect) if int(g) != e
               and not (math.isnan(float(v)) and (int(g) & 0x7C00) == 0x7C00 and int(g) & 0x3FF)]
        assert not bad, (name, bad[:5])


def test_vload_half_every_pattern(lib: Lib) -> None:
    bits = np.arange(65536, dtype=np.uint16)
    got = np.zeros(65536, np.float32)
    lib.dll.t_vload_half(ctypes.c_void_p(bits.ctypes.data), ctypes.c_long(65536),
                         ctypes.c_void_p(got.ctypes.data))
    ref = bits.view(np.float16).astype(np.float32)
    assert np.array_equal(got, ref, equal_nan=True)
    assert (np.signbit(got) == np.signbit(ref)).all()


def test_vector_loads_and_stores(lib: Lib) -> None:
    data = np.arange(40, dtype=np.float32)
    buf = np.zeros(41 * 4, np.uint8)
    buf[1:161] = data.view(np.uint8)
    out = np.zeros(4, np.float32)
    base = buf.ctypes.data + 1  # an unaligned float pointer
    lib.dll.t_vload3(ctypes.c_void_p(base), ctypes.c_long(2), ctypes.c_void_p(out.ctypes.data))
    assert out[:3].tolist() == [6.0, 7.0, 8.0]
    src = np.array([100.0, 101.0, 102.0, 999.0], np.float32)
    lib.dll.t_vstore3(ctypes.c_void_p(src.ctypes.data), ctypes.c_long(1), ctypes.c_void_p(base))
    back = buf[1:161].copy().view(np.float32)
    assert back[:7].tolist() == [0, 1, 2, 100, 101, 102, 6]
    chars = np.arange(64, dtype=np.int8)
    out8 = np.zeros(8, np.int8)
    lib.dll.t_vload8c(ctypes.c_void_p(chars.ctypes.data + 3), ctypes.c_long(1),
                      ctypes.c_void_p(out8.ctypes.data))
    assert out8.tolist() == list(range(11, 19))
    d16 = np.arange(16, dtype=np.float64)
    dst = np.zeros(48, np.float64)
    lib.dll.t_vstore16d(ctypes.c_void_p(d16.ctypes.data), ctypes.c_long(2),
                        ctypes.c_void_p(dst.ctypes.data))
    assert dst[32:].tolist() == d16.tolist() and not dst[:32].any()
    halves = np.arange(16, dtype=np.float16)
    outf = np.zeros(4, np.float32)
    lib.dll.t_vload_half4(ctypes.c_void_p(halves.ctypes.data), ctypes.c_long(1),
                          ctypes.c_void_p(outf.ctypes.data))
    assert outf.tolist() == [4, 5, 6, 7]
    lib.dll.t_vloada_half3(ctypes.c_void_p(halves.ctypes.data), ctypes.c_long(2),
                           ctypes.c_void_p(outf.ctypes.data))
    assert outf[:3].tolist() == [8, 9, 10]  # vloada_half3 strides by 4
    hdst = np.zeros(12, np.uint16)
    f3 = np.array([1.0 + 2**-11 + 2**-20, -2.0, 3.0, 0.0], np.float32)
    lib.dll.t_vstorea_half3_rtz(ctypes.c_void_p(f3.ctypes.data), ctypes.c_long(1),
                                ctypes.c_void_p(hdst.ctypes.data))
    assert hdst.view(np.float16)[4:8].tolist() == [1.0, -2.0, 3.0, 0.0]
    d2 = np.array([1.0 + 2**-20, -1.0 - 2**-20])
    lib.dll.t_vstore_half2_rtp(ctypes.c_void_p(d2.ctypes.data), ctypes.c_long(0),
                               ctypes.c_void_p(hdst.ctypes.data))
    assert hdst.view(np.float16)[:2].tolist() == [1.0 + 2**-10, -1.0]


# ---------------------------------------------------------------- relational, select, shuffle


@pytest.mark.parametrize("fty", ["float", "double"])
def test_relational(lib: Lib, fty: str) -> None:
    dtype = DTYPES[fty]
    x = np.array([1.0, math.nan, 2.0, -0.0], dtype)
    y = np.array([1.0, 1.0, math.nan, 0.0], dtype)
    ops = {"isequal": x == y, "isnotequal": x != y, "isless": x < y,
           "isordered": ~(np.isnan(x) | np.isnan(y)), "isunordered": np.isnan(x) | np.isnan(y)}
    with np.errstate(invalid="ignore"):
        for name, ref in ops.items():
            (got,) = lib.call(ov(name, fty, fty), x, y)
            assert got.tolist() == ref.astype(int).tolist(), name
            (got4,) = lib.call(ov(name, fty + "4", fty + "4"), x.reshape(1, 4), y.reshape(1, 4))
            assert got4[0].tolist() == (-ref.astype(int)).tolist(), name
    v = np.array([math.inf, -math.nan, 1e-310 if fty == "double" else 1e-40, -0.0, 1.0], dtype)
    classify = {"isnan": np.isnan(v), "isinf": np.isinf(v), "isfinite": np.isfinite(v),
                "isnormal": np.isfinite(v) & (np.abs(v) >= np.finfo(dtype).tiny),
                "signbit": np.signbit(v)}
    for name, ref in classify.items():
        (got,) = lib.call(ov(name, fty), v)
        assert got.tolist() == ref.astype(int).tolist(), name
        (got3,) = lib.call(ov(name, fty + "3"), v[:3].reshape(1, 3))
        assert got3[0, :3].tolist() == (-ref[:3].astype(int)).tolist(), name


def test_any_all(lib: Lib) -> None:
    (got,) = lib.call(ov("any", "int4"), np.array([[0, 1, 2, 3], [0, 0, -1, 0]], np.int32))
    assert got.tolist() == [0, 1]
    (got,) = lib.call(ov("all", "int4"), np.array([[-1, -2, -3, 4], [-1, -1, -1, -5]], np.int32))
    assert got.tolist() == [0, 1]
    c = np.full((2, 16), -1, np.int8)
    c[1, 15] = 127
    assert lib.call(ov("all", "char16"), c)[0].tolist() == [1, 0]
    # a 3-vector ignores its padding lane
    (got,) = lib.call(ov("all", "long3"), np.array([[-1, -1, -1, 0]], np.int64))
    assert got.tolist() == [1]
    assert lib.call(ov("any", "long3"), np.array([[0, 0, 0, -1]], np.int64))[0].tolist() == [0]
    assert lib.call(ov("any", "short"), np.array([-5, 5], np.int16))[0].tolist() == [1, 0]


def test_select_bitselect(lib: Lib) -> None:
    rng = np.random.default_rng(10)
    for t, dtype, width in (("int4", np.int32, 4), ("float4", np.float32, 4),
                            ("double2", np.float64, 2), ("uchar16", np.uint8, 16),
                            ("long3", np.int64, 4)):
        a = rng.integers(-100, 100, (8, width)).astype(dtype)
        b = rng.integers(-100, 100, (8, width)).astype(dtype)
        size = np.dtype(dtype).itemsize * 8
        for sel in ("", "u"):
            sel_t = {8: "char", 16: "short", 32: "int", 64: "long"}[size]
            sel_t = ("u" + sel_t if sel else sel_t) + t.rstrip("0123456789")[len(t.rstrip(
                "0123456789")):] + t[len(t.rstrip("0123456789")):]
            c = rng.integers(0, 2**size, (8, width), dtype=np.uint64 if size == 64 else np.int64)
            c = c.astype(DTYPES[sel_t.rstrip("0123456789")])
            (got,) = lib.call(ov("select", t, t, sel_t), a, b, c)
            msb = (c.view(np.uint8 if size == 8 else {16: np.uint16, 32: np.uint32,
                                                      64: np.uint64}[size]) >> (size - 1)) != 0
            real = 3 if t == "long3" else width
            assert np.array_equal(got[:, :real], np.where(msb, b, a)[:, :real]), (t, sel_t)
        ibits = {8: np.uint8, 32: np.uint32, 64: np.uint64}[size]
        cb = rng.integers(0, 2**63, (8, width), dtype=np.uint64).astype(ibits)
        (got,) = lib.call(ov("bitselect", t, t, t), a, b, cb.view(dtype))
        ref = (a.view(ibits) & ~cb) | (b.view(ibits) & cb)
        real = 3 if t == "long3" else width
        assert np.array_equal(got.view(ibits)[:, :real], ref[:, :real]), t
    (got,) = lib.call(ov("select", "float", "float", "int"), np.array([1.0, 1.0], np.float32),
                      np.array([2.0, 2.0], np.float32), np.array([0, 5], np.int32))
    assert got.tolist() == [1.0, 2.0]
    (got,) = lib.call(ov("bitselect", "double", "double", "double"), np.array([1.0]),
                      np.array([-1.0]), np.array([-0.0]))
    assert got.tolist() == [-1.0]


def test_shuffle(lib: Lib) -> None:
    x = np.array([[10.0, 11.0, 12.0, 13.0]], np.float32)
    mask = np.array([[3, 2, 1, 0, 4, 5, 7, 0xFFFFFFFF]], np.uint32)
    (got,) = lib.call(ov("shuffle", "float4", "uint8"), x, mask)
    assert got[0].tolist() == [13, 12, 11, 10, 10, 11, 13, 13]
    c = np.arange(16, dtype=np.int8).reshape(1, 16)
    (got,) = lib.call(ov("shuffle", "char16", "uchar2"), c, np.array([[15, 33]], np.uint8))
    assert got[0].tolist() == [15, 1]
    a = np.array([[0, 1, 2, 3]], np.int32)
    b = np.array([[4, 5, 6, 7]], np.int32)
    (got,) = lib.call(ov("shuffle2", "int4", "int4", "uint8"), a, b,
                      np.array([[7, 0, 4, 3, 8, 15, 9, 12]], np.uint32))
    assert got[0].tolist() == [7, 0, 4, 3, 0, 7, 1, 4]
    (got,) = lib.call(ov("shuffle2", "double2", "double2", "ulong4"), np.array([[1.0, 2.0]]),
                      np.array([[3.0, 4.0]]), np.array([[3, 2, 1, 4]], np.uint64))
    assert got[0].tolist() == [4.0, 3.0, 2.0, 1.0]


# ---------------------------------------------------------------- common and geometric


@pytest.mark.parametrize("fty", ["float", "double"])
def test_common_functions(lib: Lib, fty: str) -> None:
    dtype = DTYPES[fty]

    def call(name: str, *cols: Sequence[float]) -> list[float]:
        arrays = [np.array(c, dtype) for c in cols]
        return lib.call(ov(name, *([fty] * len(cols))), *arrays)[0].tolist()

    assert call("clamp", [5.0, -5.0, 0.5], [0.0] * 3, [1.0] * 3) == [1.0, 0.0, 0.5]
    assert call("degrees", [math.pi]) == [float(dtype(180.0))]
    assert_ulps(np.array(call("radians", [180.0]), dtype), np.array([math.pi]), 1)
    assert call("mix", [0.0, 2.0], [10.0, 4.0], [0.25, 0.5]) == [2.5, 3.0]
    assert call("step", [1.0, 1.0], [0.5, 1.0]) == [0.0, 1.0]
    assert call("smoothstep", [0.0] * 3, [1.0] * 3, [-1.0, 0.5, 2.0]) == [0.0, 0.5, 1.0]
    got = call("sign", [3.0, -2.0, 0.0, -0.0, math.nan])
    assert got[:4] == [1.0, -1.0, 0.0, 0.0] and math.copysign(1, got[3]) < 0 and got[4] == 0
    assert call("max", [1.0, 5.0], [2.0, 3.0]) == [2.0, 5.0]
    assert call("min", [1.0, 5.0], [2.0, 3.0]) == [1.0, 3.0]
    (got4,) = lib.call(ov("clamp", "float4", "float", "float"),
                       np.array([[-2.0, 0.5, 2.0, 1.0]], np.float32), np.array([0.0], np.float32),
                       np.array([1.0], np.float32))
    assert got4[0].tolist() == [0.0, 0.5, 1.0, 1.0]
    (got4,) = lib.call(ov("mix", "float4", "float4", "float"), np.zeros((1, 4), np.float32),
                       np.full((1, 4), 8.0, np.float32), np.array([0.25], np.float32))
    assert got4[0].tolist() == [2.0] * 4


@pytest.mark.parametrize("fty", ["float", "double"])
def test_float_clamp_is_fmin_of_fmax_bit_for_bit(lib: Lib, fty: str) -> None:
    """clamp of floats is written as selects (the C library's fminf/fmaxf kept loops around it
    scalar); it is still fmin(fmax(x, lo), hi) of ppcl's own fmax and fmin, NaNs and signed
    zeros included, over every triple of edge values."""
    dtype = DTYPES[fty]
    e = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0, np.inf, -np.inf, np.nan, 1e-30],
                 dtype)
    x, lo, hi = (a.reshape(-1) for a in np.meshgrid(e, e, e, indexing="ij"))
    (got,) = lib.call(ov("clamp", fty, fty, fty), x, lo, hi)
    (inner,) = lib.call(ov("fmax", fty, fty), x, lo)
    (want,) = lib.call(ov("fmin", fty, fty), inner, hi)
    bits = np.uint32 if fty == "float" else np.uint64
    same = (got.view(bits) == want.view(bits)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), list(zip(x[~same], lo[~same], hi[~same], got[~same], want[~same]))[:5]


@pytest.mark.parametrize("fty", ["float", "double"])
def test_geometric_functions(lib: Lib, fty: str) -> None:
    dtype = DTYPES[fty]
    big = 1e30 if fty == "float" else 1e300
    small = 1e-30 if fty == "float" else 1e-300
    p = np.array([[3 * big, 4 * big, 0.0, 0.0], [3 * small, 0.0, 4 * small, 0.0],
                  [1.0, 2.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0]], dtype)
    (length,) = lib.call(ov("length", fty + "3"), p)
    assert_ulps(length, np.array([5 * big, 5 * small, 3.0, 0.0]), 3)
    (norm,) = lib.call(ov("normalize", fty + "3"), p)
    expect = np.array([[0.6, 0.8, 0.0], [0.6, 0.0, 0.8], [1 / 3, 2 / 3, 2 / 3], [0, 0, 0]])
    assert_ulps(norm[:, :3].ravel(), expect.ravel(), 3)
    (norm,) = lib.call(ov("normalize", fty + "2"), np.array([[math.inf, 5.0], [-math.inf,
                                                                               math.inf]], dtype))
    assert norm[0].tolist() == [1.0, 0.0] and np.allclose(norm[1], [-(0.5**0.5), 0.5**0.5])
    (dist,) = lib.call(ov("distance", fty + "4", fty + "4"), p, np.zeros_like(p))
    assert_ulps(dist, np.array([5 * big, 5 * small, 3.0, 0.0]), 3)
    (dot,) = lib.call(ov("dot", fty + "4", fty + "4"), p[2:3], p[2:3])
    assert dot.tolist() == [9.0]
    (n1,) = lib.call(ov("normalize", fty), np.array([-3.0, 0.0, 2.0], dtype))
    assert n1.tolist() == [-1.0, 0.0, 1.0]
    (l1,) = lib.call(ov("length", fty), np.array([-3.0], dtype))
    assert l1.tolist() == [3.0]
    a = np.array([[1.0, 0.0, 0.0, 9.0]], dtype)
    b = np.array([[0.0, 1.0, 0.0, 9.0]], dtype)
    (c3,) = lib.call(ov("cross", fty + "3", fty + "3"), a, b)
    assert c3[0, :3].tolist() == [0.0, 0.0, 1.0]
    (c4,) = lib.call(ov("cross", fty + "4", fty + "4"), a, b)
    assert c4[0].tolist() == [0.0, 0.0, 1.0, 0.0]


def test_atomics_and_fences(lib: Lib) -> None:
    i = np.zeros(1, np.int32)
    u = np.zeros(1, np.uint32)
    f = np.zeros(1, np.float32)
    q = np.zeros(1, np.int64)
    ok = lib.dll.t_atomics(*(ctypes.c_void_p(a.ctypes.data) for a in (i, u, f, q)))
    assert ok == 1


SMOOTHSTEP = """
__kernel void ramp(__global const float *x, __global float *y)
{
    int i = get_global_id(0);
    y[i] = smoothstep(-1.0f, 2.0f, x[i]);
}
"""


def test_smoothstep_clamps_by_selects_and_its_loop_vectorizes() -> None:
    """smoothstep's clamp was fminf(fmaxf(...)), C library calls that kept the work-item
    loop scalar; by selects, as clamp is, it vectorizes and gives the same values."""
    from tests.launch import build_kernel, run

    kernel = build_kernel(SMOOTHSTEP, "ramp", local_size=(32,), want_vector_report=True)
    assert "loop vectorized" in kernel.vector_report, kernel.vector_report
    x = np.linspace(-3.0, 4.0, 64, dtype=np.float32)
    y = np.zeros_like(x)
    run(SMOOTHSTEP, "ramp", (64,), (32,), x, y)
    t = np.clip((x - np.float32(-1.0)) / np.float32(3.0), 0.0, 1.0).astype(np.float32)
    np.testing.assert_array_equal(y, t * t * (np.float32(3.0) - np.float32(2.0) * t))


def test_double_reduction_modulo_two_is_fmod_bit_for_bit() -> None:
    """The double sinpi/cospi helpers reduce x by ``copysign(x - 2 trunc(x / 2), x)`` instead
    of calling fmod(x, 2): the same bits for every finite double (random bit patterns,
    denormals, odd and even integers around 2^52 and 2^53, signed zeros)."""
    rng = np.random.default_rng(2)
    bits = rng.integers(0, 2**64, 1 << 20, dtype=np.uint64)
    x = bits.view(np.float64)
    edges = np.array([0.0, -0.0, 5e-324, -5e-324, 3 * 5e-324, 1.0, -1.0, 2.0, -2.0, 3.0, 1.5,
                      2.0**52 + 1, -(2.0**52 + 1), 2.0**53, 2.0**53 + 2, 1.7976931348623157e308,
                      -1.7976931348623157e308, 2.0 - 2.0**-52, 2.2250738585072014e-308])
    x = np.concatenate([edges, x[np.isfinite(x)]])
    with np.errstate(all="ignore"):
        reduced = np.copysign(x - 2.0 * np.trunc(0.5 * x), x)
    np.testing.assert_array_equal(reduced.view(np.uint64), np.fmod(x, 2.0).view(np.uint64))
