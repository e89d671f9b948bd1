"""The exact math builtins written from the bits of a float or double (``c_builtins_bits.py``):
bit for bit what glibc's functions give (or, for ``fract``, ``sign``, ``remquo``, ``ilogb``
of a NaN and the select-built ``fmin``/``fmax``, what ppcl's earlier lowering gave, computed
in a wider type for ``remquo``), NaN payloads and out parameters included, through a vectorized
loop as a work-item loop calls them and through the 8-wide vector overloads; and that a
work-item loop calling each of them vectorizes.

Every float with ``--run-slow`` (every 251st without) for the one-argument float functions;
every pair of a set of special values and a million random bit-pattern pairs for the
two-argument ones; random bit patterns for double. The library is built by the CPU device's
own compile (``toolchain.compile_shared``: -O3 -march=native -fopenmp-simd), and the float
remainders once more without FMA.
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass

import numpy as np
import pytest
from test_c_builtins import ov
from test_workgroup import _work_item_loops_vectorized

from ppcl.compiler import toolchain
from ppcl.compiler.codegen.c_builtins import TYPES_HEADER, c_builtin_definitions, c_builtin_name
from ppcl.compiler.ir import builtins as B


@dataclass(frozen=True)
class Case:
    """One overload under test: its scalar and 8-wide vector argument types, and the reference
    as a C expression over ``x``, ``y`` (and ``&oref`` for the out parameter)."""

    key: str
    name: str
    elem: str  # float or double
    second: str  # "", the second argument's scalar type ("float", "int"), or "*int"...
    ref: str
    vector_scalar_int: bool = False  # ldexp(float8, int): one int for every lane

    @property
    def out(self) -> str:
        return self.second[1:] if self.second.startswith("*") else ""

    @property
    def third(self) -> str:
        return "*int" if self.name == "remquo" else ""


def _cases() -> list[Case]:
    cases = []
    for t, f in (("float", "f"), ("double", "")):
        cases += [
            Case(f"ilogb_{t}", "ilogb", t, "", f"isnan(x) ? INT_MAX : g_ilogb{f}(x)"),
            Case(f"logb_{t}", "logb", t, "", f"g_logb{f}(x)"),
            Case(f"frexp_{t}", "frexp", t, "*int", f"g_frexp{f}(x, &oref)"),
            Case(f"modf_{t}", "modf", t, f"*{t}", f"g_modf{f}(x, &oref)"),
            Case(f"fract_{t}", "fract", t, f"*{t}", f"ref_fract_{t}(x, &oref)"),
            Case(f"sign_{t}", "sign", t, "", f"ref_sign_{t}(x)"),
            Case(f"ldexp_{t}", "ldexp", t, "int", f"g_ldexp{f}(x, y)"),
            Case(f"ldexp_{t}_scalar_int", "ldexp", t, "int", f"g_ldexp{f}(x, y)",
                 vector_scalar_int=True),
            Case(f"fdim_{t}", "fdim", t, t, f"g_fdim{f}(x, y)"),
            Case(f"nextafter_{t}", "nextafter", t, t, f"g_nextafter{f}(x, y)"),
            Case(f"copysign_{t}", "copysign", t, t, f"g_copysign{f}(x, y)"),
            Case(f"fmin_{t}", "fmin", t, t, f"ref_fmin_{t}(x, y)"),
            Case(f"fmax_{t}", "fmax", t, t, f"ref_fmax_{t}(x, y)"),
        ]
    cases += [
        Case("fmod_float", "fmod", "float", "float", "g_fmodf(x, y)"),
        Case("remainder_float", "remainder", "float", "float", "g_remainderf(x, y)"),
        Case("remquo_float", "remquo", "float", "float", "ref_remquo(x, y, &oref)"),
        Case("remquo_double", "remquo", "double", "double", "ref_remquo_double(x, y, &oref)"),
    ]
    return cases


CASES = {c.key: c for c in _cases()}
ONE_ARGUMENT = [k for k, c in CASES.items() if c.second in ("", "*int", f"*{c.elem}")]
TWO_ARGUMENTS = [k for k in CASES if k not in ONE_ARGUMENT]

REFERENCES_C = """
#include <limits.h>
/* glibc's functions through pointers, so that gcc neither folds nor expands them inline */
#define PPCL_T_LIBM(T, name, params) static T (*volatile g_##name) params = name;
PPCL_T_LIBM(int, ilogbf, (float)) PPCL_T_LIBM(int, ilogb, (double))
PPCL_T_LIBM(float, logbf, (float)) PPCL_T_LIBM(double, logb, (double))
PPCL_T_LIBM(float, frexpf, (float, int *)) PPCL_T_LIBM(double, frexp, (double, int *))
PPCL_T_LIBM(float, modff, (float, float *)) PPCL_T_LIBM(double, modf, (double, double *))
PPCL_T_LIBM(float, ldexpf, (float, int)) PPCL_T_LIBM(double, ldexp, (double, int))
PPCL_T_LIBM(float, fdimf, (float, float)) PPCL_T_LIBM(double, fdim, (double, double))
PPCL_T_LIBM(float, nextafterf, (float, float)) PPCL_T_LIBM(double, nextafter, (double, double))
PPCL_T_LIBM(float, copysignf, (float, float)) PPCL_T_LIBM(double, copysign, (double, double))
PPCL_T_LIBM(float, fmodf, (float, float)) PPCL_T_LIBM(float, remainderf, (float, float))
PPCL_T_LIBM(float, floorf, (float)) PPCL_T_LIBM(double, floor, (double))
PPCL_T_LIBM(float, fminf, (float, float)) PPCL_T_LIBM(double, fmin, (double, double))
PPCL_T_LIBM(double, fmod, (double, double)) PPCL_T_LIBM(double, remainder, (double, double))
PPCL_T_LIBM(double, rint, (double))

/* ppcl's lowering of fract and sign before they were written from bits (C library calls) */
#define PPCL_T_FRACT(T, f, below_one)                                                        \\
static T ref_fract_##T(T x, T *ip) {                                                         \\
    if (isnan(x)) { *ip = x; return x; }                                                     \\
    if (isinf(x)) { *ip = x; return copysign##f(0.0, x); }                                   \\
    T fl = g_floor##f(x);                                                                    \\
    *ip = fl;                                                                                \\
    if (x == 0.0) return x;                                                                  \\
    return g_fmin##f(x - fl, below_one);                                                     \\
}                                                                                            \\
static T ref_fmin_##T(T x, T y) {  /* IEEE 754-2019 minimumNumber, -0 below +0 */          \\
    if (isnan(y)) return x;  /* also where both are NaN */                                  \\
    if (isnan(x)) return y;                                                                  \\
    if (x == y) return signbit(x) ? x : y;                                                   \\
    return x < y ? x : y;                                                                    \\
}                                                                                            \\
static T ref_fmax_##T(T x, T y) {                                                            \\
    if (isnan(y)) return x;  /* also where both are NaN */                                  \\
    if (isnan(x)) return y;                                                                  \\
    if (x == y) return signbit(x) ? y : x;                                                   \\
    return x > y ? x : y;                                                                    \\
}                                                                                            \\
static T ref_sign_##T(T x) {                                                                 \\
    if (x > 0.0) return 1.0;                                                                 \\
    if (x < 0.0) return -1.0;                                                                \\
    return isnan(x) ? 0.0 : x;                                                               \\
}
PPCL_T_FRACT(float, f, 0x1.fffffep-1f)
PPCL_T_FRACT(double, , 0x1.fffffffffffffp-1)

/* remquo as ppcl lowered it before, over glibc's fmod and remainder, but in double: in float,
   128 |y| and m - rm overflowed for |y| above FLT_MAX / 128 (all exact in double) */
static float ref_remquo(float x, float y, int *quo) {
    double ax = fabs((double)x), ay = fabs((double)y);
    if (isnan(x) || isnan(y) || isinf(x) || ay == 0.0) { *quo = 0; return NAN; }
    double m = g_fmod(ax, 128.0 * ay);
    double rm = g_remainder(m, ay);
    int k = (int)g_rint((m - rm) / ay) & 127;
    *quo = ((x < 0.0f) != (y < 0.0f)) ? -k : k;
    return g_remainderf(x, y);
}

/* double remquo in long double, whose range holds 128 |y| and m - rm (61 bits) exactly */
PPCL_T_LIBM(long double, fmodl, (long double, long double))
PPCL_T_LIBM(long double, remainderl, (long double, long double))
static double ref_remquo_double(double x, double y, int *quo) {
    long double ax = fabsl(x), ay = fabsl(y);
    if (isnan(x) || isnan(y) || isinf(x) || ay == 0.0L) { *quo = 0; return NAN; }
    long double m = g_fmodl(ax, 128.0L * ay);
    long double rm = g_remainderl(m, ay);
    int k = (int)rintl((m - rm) / ay) & 127;
    *quo = ((x < 0.0) != (y < 0.0)) ? -k : k;
    return g_remainder(x, y);
}
"""

CHECK_C = """
/* Run {key} on n arguments (x from a, or the float bit patterns lo, lo + step, ...; y from b,
   or yconst) in a vectorizable loop and through the 8-wide overload; count the results (and
   out values) whose bits differ from the reference, and note the first such argument. */
long t_check_{key}(long n, const {T} *a, const {Y} *b, unsigned long lo, unsigned long step,
                   {Y} yconst, long *first_bad) {{
    static __thread {T} x[PPCL_T_BLOCK];
    static __thread {Y} y[PPCL_T_BLOCK];
    static __thread {R} r[PPCL_T_BLOCK], rv[PPCL_T_BLOCK];
    static __thread {O} o[PPCL_T_BLOCK], ov[PPCL_T_BLOCK];
    long bad = 0;
    for (long b0 = 0; b0 < n; b0 += PPCL_T_BLOCK) {{
        int m = n - b0 < PPCL_T_BLOCK ? (int)(n - b0) : PPCL_T_BLOCK;
        for (int i = 0; i < m; ++i) {{
            x[i] = a ? a[b0 + i] : __ppcl_bits_float((unsigned int)(lo + (b0 + i) * step));
            y[i] = b ? b[b0 + i] : yconst;
            o[i] = 0;
        }}
        _Pragma("omp simd")
        for (int i = 0; i < m; ++i) r[i] = {scalar_call};
        for (int i = 0; i + 8 <= m; i += 8) {{
            {TV} xv; {YV} yv; {OV} outv = {{0}}; {RV} res;
            memcpy(&xv, &x[i], sizeof xv);
            memcpy(&yv, &y[i], sizeof yv);
            res = {vector_call};
            memcpy(&rv[i], &res, sizeof res);
            memcpy(&ov[i], &outv, sizeof outv);
            (void)yv; (void)outv;
        }}
        for (int i = m & ~7; i < m; ++i) {{ rv[i] = r[i]; ov[i] = o[i]; }}
        for (int i = 0; i < m; ++i) {{
            {O} oref = 0;
            {Y} yy = y[i];
            {T} xx = x[i];
            {R} ref;
            {{ {T} x = xx; {Y} y = yy; (void)y; ref = {ref}; }}
            int same = !memcmp(&r[i], &ref, sizeof ref) && !memcmp(&rv[i], &ref, sizeof ref)
                && !memcmp(&o[i], &oref, sizeof oref) && !memcmp(&ov[i], &oref, sizeof oref);
            if (!same && bad++ == 0) *first_bad = b0 + i;
        }}
    }}
    return bad;
}}
"""

CTYPES = {"float": ctypes.c_float, "double": ctypes.c_double, "int": ctypes.c_int}
NP = {"float": np.float32, "double": np.float64, "int": np.int32}


def _case_c(c: Case) -> tuple[str, list[B.Overload]]:
    t = c.elem
    y = c.second if c.second and not c.second.startswith("*") else "int"
    out = c.out or "int"
    ret = "int" if c.name == "ilogb" else t
    scalar_specs = [t] + ([c.second] if c.second else []) + ([c.third] if c.third else [])
    vec_second = {"": [], "int": ["int" if c.vector_scalar_int else "int8"],
                  t: [f"{t}8"]}.get(c.second, [f"*{c.out}8"])
    if c.name == "remquo":
        vec_second = [f"{t}8"]
    vector_specs = [f"{t}8"] + vec_second + (["*int8"] if c.third else [])
    s_ov, v_ov = ov(c.name, *scalar_specs), ov(c.name, *vector_specs)
    s_args, v_args = ["x[i]"], ["xv"]
    if c.second and not c.second.startswith("*"):
        s_args.append("y[i]")
        v_args.append("y[i]" if c.vector_scalar_int else "yv")
    if c.out or c.third:
        s_args.append("&o[i]")
        v_args.append("&outv")
    text = CHECK_C.format(
        key=c.key, T=t, Y=y, R=ret, O=out, TV=f"ppcl_{t}8", YV=f"ppcl_{y}8",
        OV=f"ppcl_{out}8", RV=f"ppcl_{ret}8",
        scalar_call=f"{c_builtin_name(s_ov)}({', '.join(s_args)})",
        vector_call=f"{c_builtin_name(v_ov)}({', '.join(v_args)})", ref=c.ref)
    return text, [s_ov, v_ov]


class BitsLib:
    """A check function per case (``t_check_<key>``) in one library, built with ``flags``
    after the device's own."""

    def __init__(self, keys: list[str], flags: tuple[str, ...] = ()) -> None:
        texts, overloads = [], []
        for c in (CASES[k] for k in keys):
            text, ovs = _case_c(c)
            texts.append(text)
            overloads += ovs
        source = "\n".join([TYPES_HEADER.read_text(encoding="utf-8"),
                            c_builtin_definitions(list(dict.fromkeys(overloads))),
                            "#define PPCL_T_BLOCK 4096", REFERENCES_C, *texts])
        self.source = source
        self.dll = toolchain.load(toolchain.compile_shared(source, extra_flags=flags).path)

    def check(self, key: str, x: np.ndarray | None = None, y: np.ndarray | None = None,
              lo: int = 0, hi: int = 0, step: int = 1, yconst: int = 0) -> tuple[int, str]:
        """(mismatches, the first mismatching argument) over x (and y), or the float bit
        patterns lo, lo + step, ... below hi."""
        c = CASES[key]
        fn = getattr(self.dll, f"t_check_{key}")
        fn.restype = ctypes.c_long
        ytype = c.second if c.second and not c.second.startswith("*") else "int"
        first = ctypes.c_long(-1)
        n = len(x) if x is not None else (hi - lo + step - 1) // step
        if x is not None:
            x = np.ascontiguousarray(x, NP[c.elem])
        if y is not None:
            y = np.ascontiguousarray(y, NP[ytype])
        bad = fn(ctypes.c_long(n), x.ctypes.data_as(ctypes.c_void_p) if x is not None else None,
                 y.ctypes.data_as(ctypes.c_void_p) if y is not None else None,
                 ctypes.c_ulong(lo), ctypes.c_ulong(step), CTYPES[ytype](yconst),
                 ctypes.byref(first))
        if not bad:
            return 0, ""
        i = first.value
        if x is not None:
            at = f"x={x[i]!r} ({x[i:i + 1].view(np.uint32 if c.elem == 'float' else np.uint64)[0]:#x})"
            if y is not None:
                at += f" y={y[i]!r}"
        else:
            at = f"bits={lo + i * step:#x}"
        return bad, at


REMAINDERS = ["fmod_float", "remainder_float", "remquo_float"]


@pytest.fixture(scope="module")
def bits() -> BitsLib:
    return BitsLib(list(CASES))


@pytest.fixture(scope="module")
def bits_no_fma() -> BitsLib:
    """The float remainders where the target has no FMA: 10 steps of 28 quotient bits."""
    return BitsLib(REMAINDERS, ("-mno-fma",))


def specials(elem: str) -> np.ndarray:
    """Zeros of both signs, subnormals, the smallest and largest normals, infinities, NaNs
    (quiet, signalling, with payloads, negative), 1, powers of two and their neighbours."""
    dt, it = (np.float32, np.uint32) if elem == "float" else (np.float64, np.uint64)
    info = np.finfo(dt)
    mant = 23 if elem == "float" else 52
    nans = ([0x7fc00000, 0xffc00000, 0x7f800001, 0x7fc12345, 0xff812345] if elem == "float" else
            [0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001, 0x7ff8123456789abc,
             0xfff0123456789abc])
    vals = [0.0, 1.0, 0.5, 1.5, 2.0, 3.0, 7.0, 10.0, 0.1, 1.0 / 3.0, float(info.tiny),
            float(info.max), float(info.smallest_subnormal), 3 * float(info.smallest_subnormal),
            float(info.tiny) / 2, float(info.tiny) - float(info.smallest_subnormal), math.inf,
            float(info.eps), 1 - float(info.epsneg), 1 + float(info.eps)]
    exps = range(int(info.minexp) - mant, int(info.maxexp), 7)
    vals += [math.ldexp(1.0, e) for e in exps] + [math.ldexp(1.5, e) for e in exps[:-1]]
    a = np.array(vals, dt)
    a = np.concatenate([a, -a, np.array(nans, it).view(dt)])
    return np.unique(a.view(it)).view(dt)


INT_SPECIALS = np.array([0, 1, -1, 2, -2, 3, -3, 23, -23, 24, -24, 52, -52, 126, -126, 127, -127,
                         128, -128, 149, -149, 150, -150, 151, -151, 254, -254, 277, -277, 300,
                         -300, 301, -301, 1000, -1000, 1022, -1022, 1023, -1023, 1024, -1024, 1074,
                         -1074, 1075, -1075, 2046, -2046, 2098, -2098, 2200, -2200, 2201, -2201,
                         1 << 20, -(1 << 20), 2**31 - 1, -(2**31)], np.int32)


def random_bits(elem: str, n: int, seed: int) -> np.ndarray:
    """Random bit patterns, half of them with exponents drawn uniformly, so that subnormals,
    infinities and NaNs come up (a quarter of these near the bottom of the range)."""
    rng = np.random.default_rng(seed)
    if elem == "float":
        u = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        e = rng.integers(0, 256, n // 2).astype(np.uint32)
        e[: n // 8] = rng.integers(0, 30, n // 8)
        u[: n // 2] = (u[: n // 2] & np.uint32(0x807fffff)) | (e << np.uint32(23))
        return u.view(np.float32)
    u = rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
    e = rng.integers(0, 2048, n // 2).astype(np.uint64)
    e[: n // 8] = rng.integers(0, 60, n // 8)
    u[: n // 2] = (u[: n // 2] & np.uint64(0x800fffffffffffff)) | (e << np.uint64(52))
    return u.view(np.float64)


def _assert_same(bits: BitsLib, key: str, **kw: object) -> None:
    bad, at = bits.check(key, **kw)  # type: ignore[arg-type]
    assert bad == 0, f"{key}: {bad} results differ from the reference, first at {at}"


# ---------------------------------------------------------------- one argument


@pytest.mark.parametrize("key", [k for k in ONE_ARGUMENT if CASES[k].elem == "float"])
def test_float_sampled_floats_bit_exact(bits: BitsLib, key: str) -> None:
    """Every 251st float bit pattern (all binades, both signs, subnormals, NaNs)."""
    _assert_same(bits, key, lo=0, hi=1 << 32, step=251)


@pytest.mark.slow
@pytest.mark.parametrize("key", [k for k in ONE_ARGUMENT if CASES[k].elem == "float"])
def test_float_every_float_bit_exact(bits: BitsLib, key: str) -> None:
    """All 2^32 float bit patterns (``--run-slow``)."""
    _assert_same(bits, key, lo=0, hi=1 << 32, step=1)


@pytest.mark.parametrize("key", [k for k in ONE_ARGUMENT if CASES[k].elem == "double"])
def test_double_random_patterns_bit_exact(bits: BitsLib, key: str) -> None:
    x = np.concatenate([specials("double"), random_bits("double", 1 << 20, 3)])
    _assert_same(bits, key, x=x)


# ---------------------------------------------------------------- two arguments


def _pairs(c: Case) -> tuple[np.ndarray, np.ndarray]:
    s = specials(c.elem)
    if c.second == "int":
        return np.repeat(s, len(INT_SPECIALS)), np.tile(INT_SPECIALS, len(s))
    return np.repeat(s, len(s)), np.tile(s, len(s))


def _random_pairs(c: Case, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    x = random_bits(c.elem, n, seed)
    rng = np.random.default_rng(seed + 1)
    if c.second != "int":
        return x, random_bits(c.elem, n, seed + 2)
    lim = 400 if c.elem == "float" else 2300
    y = rng.integers(-lim, lim, n).astype(np.int32)
    y[::16] = rng.integers(-(2**31), 2**31, len(y[::16]), dtype=np.int64).astype(np.int32)
    return x, y


def _uniform_lanes(y: np.ndarray, c: Case) -> np.ndarray:
    """For ldexp(float8, int): one int per 8 lanes, as the overload takes it."""
    if not c.vector_scalar_int:
        return y
    return np.repeat(y[::8], 8)[: len(y)]


@pytest.mark.parametrize("key", TWO_ARGUMENTS)
def test_every_pair_of_special_values_bit_exact(bits: BitsLib, key: str) -> None:
    c = CASES[key]
    x, y = _pairs(c)
    if c.vector_scalar_int:  # one int for all of x, padded to whole runs of 8 lanes
        s = specials(c.elem)
        s = np.concatenate([s, s[: (-len(s)) % 8]])
        x, y = np.tile(s, len(INT_SPECIALS)), np.repeat(INT_SPECIALS, len(s))
    _assert_same(bits, key, x=x, y=y)


@pytest.mark.parametrize("key", TWO_ARGUMENTS)
def test_random_pairs_bit_exact(bits: BitsLib, key: str) -> None:
    """A million random bit-pattern pairs."""
    c = CASES[key]
    x, y = _random_pairs(c, 1 << 20, 11)
    _assert_same(bits, key, x=x, y=_uniform_lanes(y, c))


def _near_multiples(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 1 << 20
    ey = rng.integers(-149, 60, n)
    y = (rng.uniform(1, 2, n) * np.exp2(ey)).astype(np.float32)
    k = np.floor(np.exp2(rng.uniform(0, 40, n)))
    k[::4] = np.floor(rng.uniform(0, 300, n // 4)) + 0.5  # halves: ties of remainder
    # half of them shifted far up: quotients of up to 276 bits ending in those of k
    k[1::2] *= np.exp2(rng.integers(0, np.maximum(86 - ey[1::2], 1)))
    x = (y.astype(np.float64) * k).astype(np.float32)
    steps = rng.integers(-3, 4, n).astype(np.int32)
    x = (x.view(np.int32) + steps).view(np.float32)
    x[1::2] = -x[1::2]
    y[2::3] = -y[2::3]
    return x, y


@pytest.mark.parametrize("key", REMAINDERS)
def test_float_remainders_near_multiples_bit_exact(bits: BitsLib, key: str) -> None:
    """x within a few ulps of an integer multiple of y (quotients up to 2^40, exponents up
    to 200 apart), where an estimated quotient is most often one off, and exact halves for
    the ties of remainder."""
    x, y = _near_multiples(5)
    _assert_same(bits, key, x=x, y=y)


@pytest.mark.parametrize("key", REMAINDERS)
def test_float_remainders_without_fma_bit_exact(bits_no_fma: BitsLib, key: str) -> None:
    """The same pairs, special and random ones through the steps that take an exact product
    instead of a fused multiply-add."""
    c = CASES[key]
    for x, y in (_near_multiples(6), _pairs(c), _random_pairs(c, 1 << 20, 13)):
        _assert_same(bits_no_fma, key, x=x, y=y)


def test_ldexp_sampled_floats_by_each_special_int_bit_exact(bits: BitsLib) -> None:
    """Every 251st float times 2^n for n around the edges of the exponent range."""
    for n in (-300, -278, -277, -150, -149, -127, -24, -1, 1, 24, 127, 150, 254, 277, 300, 301):
        _assert_same(bits, "ldexp_float", lo=0, hi=1 << 32, step=251 * 7, yconst=n)


# ---------------------------------------------------------------- vectorization

KERNEL = """
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void k(__global const T *a, __global const T *b, __global const int *n,
                __global T *o) {{
    int i = get_global_id(0);
    T x = a[i], y = b[i];
    int k = n[i];
    {body}
}}
"""

# o[i] from x, y (of type T) and k (int), and numpy's value of it where numpy has the function
CALLS = {
    "ilogb": ("o[i] = (T)ilogb(x);", lambda x, y, k: np.frexp(x)[1] - 1.0),
    "logb": ("o[i] = logb(x);", lambda x, y, k: np.frexp(x)[1] - 1.0),
    "ldexp": ("o[i] = ldexp(x, k);", lambda x, y, k: np.ldexp(x, k)),
    "ldexp_literal": ("o[i] = ldexp(x, 3);", lambda x, y, k: np.ldexp(x, 3)),
    "frexp": ("int e; T m = frexp(x, &e); o[i] = m + e;",
              lambda x, y, k: np.frexp(x)[0] + np.frexp(x)[1]),
    "modf": ("T w; T f = modf(x, &w); o[i] = f + 2 * w;",
             lambda x, y, k: np.modf(x)[0] + 2 * np.modf(x)[1]),
    "fract": ("T w; T f = fract(x, &w); o[i] = f + 2 * w;",
              lambda x, y, k: (x - np.floor(x)) + 2 * np.floor(x)),
    "fdim": ("o[i] = fdim(x, y);", lambda x, y, k: np.maximum(x - y, 0)),
    "nextafter": ("o[i] = nextafter(x, y);", lambda x, y, k: np.nextafter(x, y)),
    "sign": ("o[i] = sign(x - y);", lambda x, y, k: np.sign(x - y)),
    "copysign": ("o[i] = copysign(x, y - 5);", lambda x, y, k: np.copysign(x, y - 5)),
    "fmin": ("o[i] = fmin(x, y) + fmax(x, y);", lambda x, y, k: x + y),
    "clamp": ("o[i] = clamp(x, -y, y);", lambda x, y, k: np.clip(x, -y, y)),
    "fmod": ("o[i] = fmod(x, y);", lambda x, y, k: np.fmod(x, y)),
    "remainder": ("o[i] = remainder(x, y);", None),
    "remquo": ("int q; T r = remquo(x, y, &q); o[i] = r + q;", None),
}
FLOAT_ONLY = ("fmod", "remainder", "remquo")


@pytest.mark.parametrize("elem", ["float", "double"])
@pytest.mark.parametrize("call", list(CALLS))
def test_work_item_loop_calling_it_is_vectorized(call: str, elem: str) -> None:
    """A work-item loop calling each function vectorizes (glibc's calls and the early returns
    of the earlier lowering kept it scalar), and gives numpy's values."""
    from launch import build_kernel, run
    from test_workgroup import _work_item_loops_vectorized

    body, ref = CALLS[call]
    source = KERNEL.format(body=body).replace("T", elem)
    kern = build_kernel(source, "k", local_size=(64,), want_vector_report=True)
    # double fmod, remainder and remquo stay C library calls (no wider type to reduce in):
    # no vectorized loop is claimed for them, their values are checked all the same
    if elem != "double" or call not in FLOAT_ONLY:
        assert _work_item_loops_vectorized(kern), kern.vector_report  # type: ignore[attr-defined]
    rng = np.random.default_rng(2)
    dt = NP[elem]
    x = rng.uniform(-100, 100, 256).astype(dt)
    y = rng.uniform(0.1, 10, 256).astype(dt)
    k = rng.integers(-10, 10, 256).astype(np.int32)
    out = np.zeros_like(x)
    run(source, "k", (256,), (64,), x, y, k, out)
    if ref is not None:
        np.testing.assert_array_equal(out, ref(x, y, k).astype(dt))


# the vector overloads, per lane an int or one int for all: each work-item's lanes computed as
# one vector operation (gcc's SLP; the work-item loop over vector values is not a loop gcc
# vectorizes, with or without a call), or, where the scalarize pass splits the region, the
# work-item loop vectorized over scalar lanes. Not yet for double ilogb and frexp, whose lanes gcc's
# SLP leaves scalar (it reports no reason; their work-item loops over scalars do vectorize).
VECTOR_CALLS = {
    "ldexp_int4": ("vstore4(ldexp(vload4(i, a), vload4(i, n)), i, o);",
                   lambda x, k: np.ldexp(x, k)),
    "ldexp_int": ("vstore4(ldexp(vload4(i, a), k), i, o);",
                  lambda x, k: np.ldexp(x, np.repeat(k[:64], 4))),
    "ilogb": ("vstore4(convert_T4(ilogb(vload4(i, a))), i, o);",
              lambda x, k: np.frexp(x)[1] - 1.0),
    "frexp": ("int4 e; T4 m = frexp(vload4(i, a), &e); vstore4(m + convert_T4(e), i, o);",
              lambda x, k: np.frexp(x)[0] + np.frexp(x)[1]),
}


@pytest.mark.parametrize("elem", ["float", "double"])
@pytest.mark.parametrize("call", list(VECTOR_CALLS))
def test_vector_overloads_are_vectorized(call: str, elem: str) -> None:
    import re

    if elem == "double" and call in ("ilogb", "frexp"):
        pytest.skip("gcc's SLP leaves the lanes of double ilogb and frexp scalar")
    from launch import build_kernel, run

    body, ref = VECTOR_CALLS[call]
    source = KERNEL.format(body=body).replace("T", elem)
    kern = build_kernel(source, "k", local_size=(64,), want_vector_report=True)
    # the report's line of the lanes of the inlined overload lies in its definition
    lines = kern.c_source.splitlines()
    first = next(n for n, line in enumerate(lines)
                 if re.match(rf"static inline ppcl_\w+ __ppcl_{call[:5]}__{elem}4", line)) + 1
    last = next(n for n in range(first, len(lines)) if lines[n] == "}") + 1
    done = [int(m.group(1)) for m in re.finditer(r":(\d+):\d+: optimized: .*vectorized",
                                                 kern.vector_report)]  # type: ignore[attr-defined]
    # or the work-item loop itself, where the region is split into scalars (ldexp is
    # element-wise: transforms/scalarize.py)
    assert any(first <= d <= last for d in done) or _work_item_loops_vectorized(kern), \
        kern.vector_report  # type: ignore[attr-defined]
    assert "ldexpf(" not in kern.c_source and "ilogbf(" not in kern.c_source
    rng = np.random.default_rng(4)
    dt = NP[elem]
    x = rng.uniform(-100, 100, 256).astype(dt)
    k = rng.integers(-10, 10, 256).astype(np.int32)
    out = np.zeros_like(x)
    run(source, "k", (64,), (64,), x, x, k, out)
    np.testing.assert_array_equal(out, ref(x, k).astype(dt))
