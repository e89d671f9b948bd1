"""Conformance, math: every math builtin of OpenCL C 1.2 (section 6.12.2) against a 128-bit
``mpmath`` reference, within the ULP bounds of the specification's table (section 7.4) for
float and double, at special values (zeros, denormals, limits, infinities, NaN), random bit
patterns (huge arguments of the trigonometric functions, values near overflow) and points of
each function's domain. ``half_*`` have their own bound; with ``-cl-fast-relaxed-math`` the
relaxed bounds apply (the table of OpenCL 2.0 section 7.4, the first to write them down).

Each kernel evaluates a whole family of functions at thousands of points in one launch: work-item
``(i, f)`` applies function ``f`` to point ``i``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest
from conf_ulp import abs_error, flush_denormals, reference, sample, ulp_error, worst

from tests.launch import run

FP64 = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
POINTS = {"float": 2048, "double": 768}
# binary functions: every pair of 30 special values, then random pairs
BINARY_POINTS = {"float": 2048, "double": 1536}
DTYPES = {"float": np.float32, "double": np.float64}
mp = mpmath


def _finite(*args: float) -> bool:
    return all(math.isfinite(a) for a in args)


def _with_specials(mp_fn: Callable[..., Any], c_fn: Callable[..., Any] | None) -> Callable[..., Any]:
    """The reference: ``c_fn`` (numpy's float64 function, which follows C99 Annex F) where an
    argument is infinite, NaN or zero (mpmath has no signed zero), ``mp_fn`` elsewhere."""

    def fn(*args: float) -> Any:
        if c_fn is not None and (not _finite(*args) or 0 in args):
            with np.errstate(all="ignore"):
                return float(c_fn(*[np.float64(a) for a in args]))
        if any(math.isnan(a) for a in args):
            return None
        return mp_fn(*[mpmath.mpf(a) for a in args])

    return fn


def _real(fn: Callable[..., Any]) -> Callable[..., Any]:
    def real(*args: Any) -> Any:
        value = fn(*args)
        if isinstance(value, mpmath.mpc):
            return None if value.imag != 0 else value.real
        return value
    return real


def _cbrt(x: Any) -> Any:
    return mp.sign(x) * mp.cbrt(abs(x))


def _reduced(x: Any) -> Any:
    """``x`` minus the nearest even integer, exactly (``x`` is a float)."""
    return x - 2 * mp.nint(x / 2)


def _sinpi(x: Any) -> Any:
    return mp.sinpi(_reduced(x))


def _cospi(x: Any) -> Any:
    return mp.cospi(_reduced(x))


def _tanpi(x: Any) -> Any:
    r = _reduced(x)
    c = mp.cospi(r)
    return mp.inf * mp.sinpi(r) if c == 0 else mp.sinpi(r) / c


def _tgamma(x: Any) -> Any:
    if x == 0:
        return mp.inf
    if x < 0 and x == mp.floor(x):
        return None
    if x > 200:
        return mp.inf
    if x < -200:
        return mp.mpf(0)
    return mp.gamma(x)


def _log_any(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def log(x: Any) -> Any:
        if x < 0:
            return None
        if x == 0:
            return -mp.inf
        return fn(x)
    return log


def _atanh(x: Any) -> Any:
    if abs(x) > 1:
        return None
    if abs(x) == 1:
        return mp.inf * x
    return mp.atanh(x)


def _log1p(x: Any) -> Any:
    if x < -1:
        return None
    if x == -1:
        return -mp.inf
    return mp.log1p(x)


def _pow(x: Any, y: Any) -> Any:
    if x == 0:
        if y < 0:
            return mp.inf
        return mp.mpf(0) if y > 0 else mp.mpf(1)
    if x < 0 and y != mp.floor(y):
        return None
    return mp.power(x, y)


def _powr(x: Any, y: Any) -> Any:
    if x < 0:
        return None
    if x == 0:
        if y == 0:
            return None
        return mp.inf if y < 0 else mp.mpf(0)
    return mp.power(x, y)


def _c_powr(x: float, y: float) -> float:
    """powr's special values (OpenCL 1.2 section 7.5.1), which differ from pow's."""
    if math.isnan(x) or math.isnan(y) or x < 0:
        return math.nan
    if math.isinf(x):
        if y == 0:
            return math.nan
        return 0.0 if y < 0 else math.inf
    if x == 0:
        if y == 0:
            return math.nan
        return math.inf if y < 0 else 0.0
    if x == 1:
        return math.nan if math.isinf(y) else 1.0
    return float(np.power(np.float64(x), np.float64(y)))


def _ldexp(x: Any, n: Any) -> Any:
    return mp.ldexp(x, int(n))


def _rootn(x: Any, n: Any) -> Any:
    n = int(n)
    if n == 0:
        return None
    if x < 0 and n % 2 == 0:
        return None
    if x == 0:
        return mp.inf if n < 0 else mp.mpf(0)
    return mp.sign(x) * mp.power(abs(x), mp.mpf(1) / n)


def _c_rootn(x: float, n: float) -> float:
    n = int(n)
    if n == 0 or math.isnan(x) or (x < 0 and n % 2 == 0):
        return math.nan
    if x == 0:
        magnitude = math.inf if n < 0 else 0.0
        return math.copysign(magnitude, x) if n % 2 else magnitude
    if math.isinf(x):
        return math.copysign(0.0 if n < 0 else math.inf, x)
    return math.nan


def _pown(x: Any, n: Any) -> Any:
    n = int(n)
    if x == 0 and n < 0:
        return mp.inf
    return mp.power(x, n)


def _c_pown(x: float, n: float) -> float:
    with np.errstate(all="ignore"):
        return float(np.power(np.float64(x), np.float64(int(n))))


def _c_erfc(x: float) -> float:
    if math.isnan(x):
        return math.nan
    return 1.0 if x == 0 else 0.0 if x > 0 else 2.0


def _c_logb(x: float) -> float:
    if x == 0:
        return -math.inf
    return math.inf if math.isinf(x) else math.nan


def _c_tgamma(x: float) -> float:
    if x == 0:
        return math.copysign(math.inf, x)
    return math.inf if x == math.inf else math.nan


def _exact(c_fn: Callable[..., float]) -> Callable[..., Any]:
    """The reference of a function whose result is exact in the argument's format
    (``fmod``, ``remainder``): the C library's double function."""
    return lambda *args: c_fn(*args)


def _c_fmod(x: float, y: float) -> float:
    try:
        return math.fmod(x, y)
    except ValueError:
        return math.nan


def _odd_integer(y: float) -> bool:
    return math.isfinite(y) and y == math.floor(y) and math.fmod(y, 2) != 0


def _c_pow(x: float, y: float) -> float:
    """C99 pow's special values (Annex F.9.4.4)."""
    if x == 0 and not math.isnan(y):
        if y == 0:
            return 1.0
        magnitude = math.inf if y < 0 else 0.0
        return math.copysign(magnitude, x) if _odd_integer(y) else magnitude
    try:
        return math.pow(x, y)
    except ValueError:
        return math.nan
    except OverflowError:
        return math.inf


def _c_remainder(x: float, y: float) -> float:
    try:
        return math.remainder(x, y)
    except ValueError:
        return math.nan


def _maxmag(x: Any, y: Any) -> Any:
    if abs(x) > abs(y):
        return x
    if abs(y) > abs(x):
        return y
    return max(x, y)


def _minmag(x: Any, y: Any) -> Any:
    if abs(x) < abs(y):
        return x
    if abs(y) < abs(x):
        return y
    return min(x, y)


def _c_maxmag(x: float, y: float) -> float:
    if math.isnan(x):
        return y
    if math.isnan(y):
        return x
    if abs(x) != abs(y):
        return x if abs(x) > abs(y) else y
    return max(x, y)


def _c_minmag(x: float, y: float) -> float:
    if math.isnan(x):
        return y
    if math.isnan(y):
        return x
    if abs(x) != abs(y):
        return x if abs(x) < abs(y) else y
    return min(x, y)


def _fdim(x: Any, y: Any) -> Any:
    return x - y if x > y else mp.mpf(0)


def _hypot(x: Any, y: Any) -> Any:
    return mp.hypot(x, y)


def _rsqrt(x: Any) -> Any:
    if x < 0:
        return None
    if x == 0:
        return mp.inf
    return 1 / mp.sqrt(x)


def _logb(x: Any) -> Any:
    if x == 0:
        return -mp.inf
    return mp.floor(mp.log(abs(x), 2)) if abs(x) >= 1 else _floor_log2(abs(x))


def _floor_log2(x: Any) -> Any:
    e = mp.frexp(x)[1] - 1
    return mp.mpf(e)


def _rint(x: Any) -> Any:
    return mp.nint(x)  # ties to even


def _round(x: Any) -> Any:
    return mp.sign(x) * mp.floor(abs(x) + mp.mpf(0.5))


@dataclass(frozen=True)
class Fn:
    """A math builtin: its reference, the OpenCL ULP bounds for float and double, the domain
    of its random points, and whether it is odd (f(-0) = -0)."""

    name: str
    ref: Callable[..., Any]
    bound: tuple[float, float]
    domain: tuple[float, float] = (-100.0, 100.0)
    odd: bool = False


def _u(name: str, mp_fn: Callable[..., Any], c_fn: Any, bound: tuple[float, float],
       domain: tuple[float, float] = (-100.0, 100.0), odd: bool = False) -> Fn:
    return Fn(name, _with_specials(_real(mp_fn), c_fn), bound, domain, odd)


UNARY = [
    _u("acos", mp.acos, np.arccos, (4, 4), (-1, 1)),
    _u("acosh", mp.acosh, np.arccosh, (4, 4), (1, 1e6)),
    _u("acospi", lambda x: mp.acos(x) / mp.pi, lambda x: np.arccos(x) / np.pi, (5, 5), (-1, 1)),
    _u("asin", mp.asin, np.arcsin, (4, 4), (-1, 1), odd=True),
    _u("asinh", mp.asinh, np.arcsinh, (4, 4), odd=True),
    _u("asinpi", lambda x: mp.asin(x) / mp.pi, lambda x: np.arcsin(x) / np.pi, (5, 5), (-1, 1),
       odd=True),
    _u("atan", mp.atan, np.arctan, (5, 5), odd=True),
    _u("atanh", _atanh, np.arctanh, (5, 5), (-1, 1), odd=True),
    _u("atanpi", lambda x: mp.atan(x) / mp.pi, lambda x: np.arctan(x) / np.pi, (5, 5),
       odd=True),
    _u("cbrt", _cbrt, np.cbrt, (2, 2), odd=True),
    _u("ceil", mp.ceil, np.ceil, (0, 0), odd=True),
    _u("cos", mp.cos, np.cos, (4, 4), (-1e4, 1e4)),
    _u("cosh", mp.cosh, np.cosh, (4, 4), (-90, 90)),
    _u("cospi", _cospi, lambda x: 1.0 if x == 0 else np.nan, (4, 4), (-10, 10)),
    _u("erfc", lambda x: mp.mpf(0) if x > 40 else mp.erfc(x), _c_erfc, (16, 16), (-10, 30)),
    _u("erf", mp.erf, lambda x: x if x == 0 else np.sign(x), (16, 16), (-6, 6), odd=True),
    _u("exp", mp.exp, np.exp, (3, 3), (-750, 710)),
    _u("exp2", lambda x: mp.power(2, x), np.exp2, (3, 3), (-1080, 1030)),
    _u("exp10", lambda x: mp.power(10, x), lambda x: np.power(10.0, x), (3, 3), (-320, 310)),
    _u("expm1", mp.expm1, np.expm1, (3, 3), (-80, 710), odd=True),
    _u("fabs", abs, np.fabs, (0, 0)),
    _u("floor", mp.floor, np.floor, (0, 0), odd=True),
    _u("log", _log_any(mp.log), np.log, (3, 3), (0, 1e6)),
    _u("log2", _log_any(lambda x: mp.log(x, 2)), np.log2, (3, 3), (0, 1e6)),
    _u("log10", _log_any(mp.log10), np.log10, (3, 3), (0, 1e6)),
    _u("log1p", _log1p, np.log1p, (2, 2), (-1, 1e6), odd=True),
    _u("logb", _logb, _c_logb, (0, 0)),
    _u("rint", _rint, np.rint, (0, 0), (-1e7, 1e7), odd=True),
    _u("round", _round, np.trunc, (0, 0), (-1e7, 1e7), odd=True),
    _u("rsqrt", _rsqrt, lambda x: 1 / np.sqrt(x), (2, 2), (0, 1e10)),
    _u("sin", mp.sin, np.sin, (4, 4), (-1e4, 1e4), odd=True),
    _u("sinh", mp.sinh, np.sinh, (4, 4), (-90, 90), odd=True),
    _u("sinpi", _sinpi, lambda x: x if x == 0 else np.nan, (4, 4), (-10, 10), odd=True),
    _u("sqrt", _real(mp.sqrt), np.sqrt, (3, 0), (0, 1e10), odd=True),
    _u("tan", mp.tan, np.tan, (5, 5), (-1e4, 1e4), odd=True),
    _u("tanh", mp.tanh, np.tanh, (5, 5), (-20, 20), odd=True),
    _u("tanpi", _tanpi, lambda x: x if x == 0 else np.nan, (6, 6), (-10, 10), odd=True),
    _u("tgamma", _tgamma, _c_tgamma, (16, 16), (-40, 40)),
    _u("trunc", lambda x: mp.sign(x) * mp.floor(abs(x)), np.trunc, (0, 0), (-1e7, 1e7), odd=True),
]

BINARY = [
    Fn("atan2", _with_specials(mp.atan2, np.arctan2), (6, 6)),
    Fn("atan2pi", _with_specials(lambda y, x: mp.atan2(y, x) / mp.pi,
                                 lambda y, x: np.arctan2(y, x) / np.pi), (6, 6)),
    Fn("copysign", _with_specials(lambda x, y: abs(x) * mp.sign(y) if y != 0 else abs(x),
                                  np.copysign), (0, 0)),
    Fn("fdim", _with_specials(_fdim, lambda x, y: np.nan if np.isnan(x) or np.isnan(y)
                              else x - y if x > y else 0.0), (0, 0)),
    Fn("fmod", _exact(_c_fmod), (0, 0)),
    Fn("hypot", _with_specials(_hypot, np.hypot), (4, 4)),
    Fn("pow", _with_specials(_real(_pow), _c_pow), (16, 16), (-20, 20)),
    Fn("powr", _with_specials(_powr, _c_powr), (16, 16), (0, 20)),
    Fn("remainder", _exact(_c_remainder), (0, 0)),
    Fn("maxmag", _with_specials(_maxmag, _c_maxmag), (0, 0)),
    Fn("minmag", _with_specials(_minmag, _c_minmag), (0, 0)),
    Fn("fmax", _with_specials(max, np.fmax), (0, 0)),
    Fn("fmin", _with_specials(min, np.fmin), (0, 0)),
]
WITH_INT = [
    Fn("ldexp", _with_specials(_ldexp, lambda x, n: x), (0, 0)),
    Fn("pown", _with_specials(_pown, _c_pown), (16, 16), (-20, 20)),
    Fn("rootn", _with_specials(_rootn, _c_rootn), (16, 16), (-1e6, 1e6)),
]


def _source(type_name: str, kind: str, names: list[str]) -> str:
    T = type_name
    head = FP64 if T == "double" else ""
    arg = {"unary": "(a)", "binary": "(a, b)", "int": "(a, k)"}[kind]
    cases = "\n".join(f"    case {i}: r = {name}{arg}; break;" for i, name in enumerate(names))
    return head + f"""
__kernel void family(__global const {T} *x, __global const {T} *y, __global const int *n,
                     __global {T} *out, uint count)
{{
    size_t i = get_global_id(0) + get_global_id(1) * count;
    {T} a = x[i], b = y[i];
    int k = n[i];
    {T} r = 0;
    switch (get_global_id(1)) {{
{cases}
    }}
    out[i] = r;
}}
"""


def _unary_points(fn: Fn, dtype: Any, n: int, seed: int) -> np.ndarray:
    return sample(dtype, n, fn.domain[0], fn.domain[1], seed)


def _binary_points(fn: Fn, dtype: Any, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    picked = np.array([0.0, np.inf, np.nan, 1e-45 if dtype == np.float32 else 5e-324,
                       float(np.finfo(dtype).tiny), float(np.finfo(dtype).max), 0.5, 1.0, 1.5,
                       2.0, 3.0, 10.0, np.pi, 1e30, 88.5])
    specials = np.concatenate([picked, -picked]).astype(dtype)
    gx, gy = np.meshgrid(specials, specials)
    rest = n - gx.size
    x = np.concatenate([gx.ravel(), sample(dtype, rest, *fn.domain, seed + 1)])
    y = np.concatenate([gy.ravel(), sample(dtype, rest, *fn.domain, seed + 2)[::-1]])
    return x.astype(dtype), y.astype(dtype)


def _int_points(fn: Fn, dtype: Any, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = sample(dtype, n, *fn.domain, seed)
    if fn.name == "ldexp":
        k = rng.integers(-1200, 1200, size=n)
    else:
        k = rng.integers(-12, 13, size=n)
    k[:16] = [0, 1, -1, 2, -2, 3, -3, 5, 0, 1, -1, 2, -2, 3, -3, 7]
    # a quarter with large counts: ldexp to the limits, high powers and roots
    big = rng.choice([1000, 2**20 + 1, 2**30, 2**31 - 1, 99999], size=n // 4)
    k[16:16 + n // 4] = big * rng.choice([-1, 1], size=n // 4)
    if fn.name != "ldexp":  # near 1 for the high powers
        x[16:16 + n // 8] = (1 + rng.uniform(-1e-3, 1e-3, n // 8)).astype(dtype)
    return x, k.astype(np.int32)


@dataclass
class Family:
    names: list[str]
    x: np.ndarray
    y: np.ndarray
    k: np.ndarray
    got: np.ndarray


@functools.cache
def _family(type_name: str, kind: str, options: str = "") -> Family:
    dtype = DTYPES[type_name]
    n = (BINARY_POINTS if kind == "binary" else POINTS)[type_name]
    fns = {"unary": UNARY, "binary": BINARY, "int": WITH_INT}[kind]
    xs, ys, ks = [], [], []
    for index, fn in enumerate(fns):
        seed = 1000 * index + (7 if type_name == "double" else 0)
        if kind == "unary":
            x = _unary_points(fn, dtype, n, seed)
            y, k = np.zeros(n, dtype), np.zeros(n, np.int32)
        elif kind == "binary":
            x, y = _binary_points(fn, dtype, n, seed)
            k = np.zeros(n, np.int32)
        else:
            x, k = _int_points(fn, dtype, n, seed)
            y = np.zeros(n, dtype)
        xs.append(x)
        ys.append(y)
        ks.append(k)
    x, y, k = np.concatenate(xs), np.concatenate(ys), np.concatenate(ks)
    out = np.zeros_like(x)
    names = [fn.name for fn in fns]
    run(_source(type_name, kind, names), "family", (n, len(fns)), None, x, y, k, out,
        np.uint32(n), options=options)
    return Family(names, x, y, k, out)


def _slice(family: Family, name: str) -> tuple[np.ndarray, ...]:
    n = len(family.x) // len(family.names)
    f = family.names.index(name)
    part = slice(f * n, (f + 1) * n)
    return family.x[part], family.y[part], family.k[part], family.got[part]


_FNS = {"unary": UNARY, "binary": BINARY, "int": WITH_INT}


@functools.cache
def _family_reference(type_name: str, kind: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The reference at the points of function ``name`` (the same under every build option)."""
    x, y, k, _ = _slice(_family(type_name, kind), name)
    fn = next(f for f in _FNS[kind] if f.name == name)
    args = {"unary": (x,), "binary": (x, y), "int": (x, k.astype(np.float64))}[kind]
    return reference(fn.ref, *args)


def _check(fn: Fn, type_name: str, kind: str) -> None:
    x, y, k, got = _slice(_family(type_name, kind), fn.name)
    args = {"unary": (x,), "binary": (x, y), "int": (x, k.astype(np.float64))}[kind]
    ref = _family_reference(type_name, kind, fn.name)
    error = ulp_error(got, ref)
    # a bound of 0 means correctly rounded: within half an ulp
    bound = fn.bound[0 if type_name == "float" else 1] or 0.5
    assert error.max() <= bound, f"{fn.name}({type_name}): {worst(error, *args, got=got)}"
    if fn.odd:
        zeros = x == 0
        assert np.array_equal(np.signbit(got[zeros]), np.signbit(x[zeros])), \
            f"{fn.name}(-0) must be -0 and {fn.name}(+0) must be +0"


TYPES = ["float", "double"]


@pytest.mark.parametrize("type_name", TYPES)
@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.name)
def test_unary_within_ulp_bound(fn: Fn, type_name: str) -> None:
    _check(fn, type_name, "unary")


@pytest.mark.parametrize("type_name", TYPES)
@pytest.mark.parametrize("fn", BINARY, ids=lambda f: f.name)
def test_binary_within_ulp_bound(fn: Fn, type_name: str) -> None:
    _check(fn, type_name, "binary")


@pytest.mark.parametrize("type_name", TYPES)
@pytest.mark.parametrize("fn", WITH_INT, ids=lambda f: f.name)
def test_with_int_argument_within_ulp_bound(fn: Fn, type_name: str) -> None:
    _check(fn, type_name, "int")


# ------------------------------------------------------------ functions with a second result

def _outputs_source(T: str) -> str:

    return (FP64 if T == "double" else "") + f"""
__kernel void outputs(__global const {T} *x, __global const {T} *y, __global {T} *r,
                      __global int *q)
{{
    size_t i = get_global_id(0);
    size_t n = get_global_size(0);
    {T} a = x[i], b = y[i], p;
    int e;
    r[i] = fract(a, &p);          r[n + i] = p;
    r[2 * n + i] = modf(a, &p);   r[3 * n + i] = p;
    r[4 * n + i] = sincos(a, &p); r[5 * n + i] = p;
    r[6 * n + i] = frexp(a, &e);  q[i] = e;
    r[7 * n + i] = remquo(a, b, &e); q[n + i] = e;
    q[2 * n + i] = ilogb(a);
    r[8 * n + i] = lgamma_r(a, &e); q[3 * n + i] = e;
    r[9 * n + i] = a / b;
    r[10 * n + i] = 1 / b;
    r[11 * n + i] = mad(a, b, a);
    r[12 * n + i] = fma(a, b, a);
}}
"""


@functools.cache
def _outputs(type_name: str, options: str = "") -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                           np.ndarray]:
    dtype = DTYPES[type_name]
    x, y = _binary_points(Fn("outputs", abs, (0, 0), (-1e3, 1e3)), dtype,
                          BINARY_POINTS[type_name], 77)
    n = len(x)
    r = np.zeros(13 * n, dtype)
    q = np.zeros(4 * n, np.int32)
    run(_outputs_source(type_name), "outputs", (n,), None, x, y, r, q, options=options)
    return x, y, r.reshape(13, n), q.reshape(4, n)


def _c_fract(x: float) -> tuple[float, float]:
    if math.isnan(x):
        return x, x
    if math.isinf(x):
        return math.copysign(0.0, x), x
    fl = math.floor(x)
    return (x if x == 0 else min(x - fl, float(np.nextafter(1.0, 0.0)))), float(fl)


def _ilogb(x: float, type_name: str) -> int:
    if math.isnan(x) or math.isinf(x):
        return 2**31 - 1  # FP_ILOGNAN and INT_MAX, as OpenCL defines them
    if x == 0:
        return -(2**31)  # FP_ILOGB0 is INT_MIN
    return math.frexp(x)[1] - 1


@pytest.mark.parametrize("type_name", TYPES)
def test_fract_modf_frexp_ilogb_exact(type_name: str) -> None:
    dtype = DTYPES[type_name]
    x, _, r, q = _outputs(type_name)
    fract_ref = np.array([_c_fract(v) for v in x.tolist()], dtype=dtype)
    with np.errstate(invalid="ignore"):
        fract_ref[:, 0] = np.minimum(fract_ref[:, 0], np.nextafter(dtype(1), dtype(0)))
    np.testing.assert_array_equal(r[0], fract_ref[:, 0])
    np.testing.assert_array_equal(r[1], fract_ref[:, 1])
    frac, whole = np.modf(x)
    np.testing.assert_array_equal(r[2], frac)
    np.testing.assert_array_equal(r[3], whole)
    assert np.array_equal(np.signbit(r[2]), np.signbit(frac)), "modf keeps the sign of zero"
    mant, exp = np.frexp(x)
    np.testing.assert_array_equal(r[6], mant)
    finite = np.isfinite(x)
    np.testing.assert_array_equal(q[0][finite], exp[finite])
    np.testing.assert_array_equal(q[2], [_ilogb(v, type_name) for v in x.tolist()])


@pytest.mark.parametrize("type_name", TYPES)
def test_sincos_within_ulp_bound(type_name: str) -> None:
    x, _, r, _ = _outputs(type_name)
    for got, fn in ((r[4], mp.sin), (r[5], mp.cos)):
        ref = reference(_with_specials(fn, np.sin if fn is mp.sin else np.cos), x)
        error = ulp_error(got, ref)
        assert error.max() <= 4, f"sincos({type_name}): {worst(error, x, got=got)}"


@pytest.mark.parametrize("type_name", TYPES)
def test_remquo_remainder_and_quotient_bits(type_name: str) -> None:
    x, y, r, q = _outputs(type_name)
    ref = np.array([_c_remainder(a, b) for a, b in zip(x.tolist(), y.tolist())])
    np.testing.assert_array_equal(r[7], ref.astype(x.dtype))
    ok = np.isfinite(x) & np.isfinite(y) & (y != 0)
    for a, b, k in zip(x[ok].tolist(), y[ok].tolist(), q[1][ok].tolist()):
        quotient = (Fraction(a) - Fraction(_c_remainder(a, b))) / Fraction(b)  # exact
        low = abs(quotient.numerator) % 128
        want = -low if (a < 0) != (b < 0) else low
        assert k % 128 == want % 128 and (k < 0) == (want < 0) or low == 0 and k == 0, \
            f"remquo({a!r}, {b!r}): quotient bits {k}, want {want}"


@pytest.mark.parametrize("type_name", TYPES)
def test_lgamma_r_sign(type_name: str) -> None:
    x, _, r, q = _outputs(type_name)
    pick = np.isfinite(x) & (np.abs(x) < 30) & (x != np.floor(x))
    want = np.array([1 if mpmath.gamma(v) > 0 else -1 for v in x[pick].tolist()])
    np.testing.assert_array_equal(q[3][pick], want)
    ref = np.array([math.lgamma(v) for v in x[pick].tolist()])
    np.testing.assert_allclose(r[8][pick], ref, rtol=1e-4 if type_name == "float" else 1e-10,
                               atol=1e-5)


@pytest.mark.parametrize("type_name", TYPES)
def test_division_and_reciprocal(type_name: str) -> None:
    """x / y: 2.5 ulp for float, correctly rounded for double; 1 / x the same."""
    x, y, r, _ = _outputs(type_name)
    bound = 2.5 if type_name == "float" else 0.5
    for got, args in ((r[9], (x, y)), (r[10], (y,))):
        fn = (lambda a, b: a / b) if len(args) == 2 else (lambda b: 1 / b)
        c_fn = (lambda a, b: np.float64(a) / b) if len(args) == 2 else (lambda b: 1 / np.float64(b))
        ref = reference(_with_specials(fn, c_fn), *args)
        error = ulp_error(got, ref)
        assert error.max() <= bound, f"division ({type_name}): {worst(error, *args, got=got)}"


@pytest.mark.parametrize("type_name", TYPES)
def test_fma_correctly_rounded(type_name: str) -> None:
    x, y, r, _ = _outputs(type_name)
    ref = reference(_with_specials(lambda a, b: a * b + a, lambda a, b: a * b + a), x, y)
    error = ulp_error(r[12], ref)
    assert error.max() <= 0.5, f"fma ({type_name}): {worst(error, x, y, got=r[12])}"
    finite = np.isfinite(ref[0]) & (np.abs(ref[0]) < 1e30)
    # mad may be any value the implementation chooses; ppcl's is fma or a*b+c
    with np.errstate(all="ignore"):
        two_roundings = (x * y + x)[finite]
    assert np.all((r[11][finite] == r[12][finite]) | (r[11][finite] == two_roundings))


# ------------------------------------------------------------ special values of section 7.5.1

INF, NAN = math.inf, math.nan
EDGE_CASES = [
    ("acospi(1)", 0.0), ("asinpi(-0.0)", -0.0), ("atan2pi(0.0, -0.0)", 1.0),
    ("atan2pi(-0.0, -0.0)", -1.0), ("atan2pi(-0.0, 0.0)", -0.0), ("atan2pi(0.0, -2)", 1.0),
    ("atanpi(-INFINITY)", -0.5), ("cospi(2.5)", 0.0), ("cospi(-3.5)", 0.0),
    ("exp10(-INFINITY)", 0.0), ("exp10(INFINITY)", INF), ("fdim(1, NAN)", NAN),
    ("fmod(0.0, NAN)", NAN), ("fmod(-0.0, 3)", -0.0),
    ("pow(0.0, -INFINITY)", INF), ("pow(-0.0, -3)", -INF), ("pow(-1, INFINITY)", 1.0),
    ("pow(1, NAN)", 1.0), ("pow(NAN, 0)", 1.0), ("pow(-8, 1.0/3)", NAN),
    ("pown(NAN, 0)", 1.0), ("pown(-0.0, -3)", -INF), ("pown(-0.0, -2)", INF),
    ("pown(-0.0, 2)", 0.0), ("pown(-0.0, 3)", -0.0), ("pown(-2, 3)", -8.0),
    ("powr(2, 0.0)", 1.0), ("powr(0.0, -2)", INF), ("powr(-0.0, -INFINITY)", INF),
    ("powr(0.0, 3)", 0.0), ("powr(1, 5)", 1.0), ("powr(-2, 2)", NAN), ("powr(0.0, 0.0)", NAN),
    ("powr(INFINITY, 0.0)", NAN), ("powr(1, INFINITY)", NAN), ("powr(2, NAN)", NAN),
    ("rint(-0.5)", -0.0), ("rint(2.5)", 2.0), ("rint(-3.5)", -4.0),
    ("rootn(-0.0, -3)", -INF), ("rootn(-0.0, -2)", INF), ("rootn(-0.0, 2)", 0.0),
    ("rootn(-0.0, 3)", -0.0), ("rootn(-8, 2)", NAN), ("rootn(8, 0)", NAN), ("rootn(-8, 3)", -2.0),
    ("round(-0.4)", -0.0), ("round(2.5)", 3.0), ("round(-2.5)", -3.0),
    ("sinpi(-0.0)", -0.0), ("sinpi(3)", 0.0), ("sinpi(-3)", -0.0), ("sinpi(INFINITY)", NAN),
    ("tanpi(-0.0)", -0.0), ("tanpi(INFINITY)", NAN), ("tanpi(2)", 0.0), ("tanpi(-2)", -0.0),
    ("tanpi(3)", -0.0), ("tanpi(-3)", 0.0), ("tanpi(2.5)", INF), ("tanpi(3.5)", -INF),
    ("trunc(-0.7)", -0.0), ("ceil(-0.5)", -0.0), ("nextafter(-0.0, 1)", "denorm"),
    ("fmax(NAN, 2)", 2.0), ("fmin(3, NAN)", 3.0), ("fmax(-0.0, 0.0)", 0.0),
    ("fmax(0.0, -0.0)", 0.0), ("fmin(0.0, -0.0)", -0.0), ("fmin(-0.0, 0.0)", -0.0),
    ("maxmag(-0.0, 0.0)", 0.0), ("minmag(0.0, -0.0)", -0.0), ("ldexp(1, -2000)", 0.0),
    ("ldexp(1.5, 3)", 12.0), ("copysign(2, -0.0)", -2.0), ("logb(0.0)", -INF),
    ("log(-0.0)", -INF), ("log1p(-1)", -INF), ("exp(-INFINITY)", 0.0), ("expm1(-INFINITY)", -1.0),
    ("atanh(1)", INF), ("acosh(1)", 0.0), ("asinh(-0.0)", -0.0), ("tgamma(-0.0)", -INF),
    ("tgamma(-2)", NAN), ("hypot(INFINITY, NAN)", INF), ("cbrt(-27)", -3.0),
    ("sqrt(-0.0)", -0.0), ("rsqrt(4)", 0.5), ("erf(INFINITY)", 1.0), ("erfc(-INFINITY)", 2.0),
    ("maxmag(-3, 2)", -3.0), ("minmag(-3, 2)", 2.0), ("maxmag(-2, 2)", 2.0),
    ("minmag(-2, 2)", -2.0), ("remainder(5, 2)", 1.0), ("remainder(7, 2)", -1.0),
]


def _typed(expr: str, T: str) -> str:
    """``expr`` with its floating arguments cast to ``T`` (an int literal or a double constant
    would make the call ambiguous between the float and double overloads)."""
    name, args = expr[:-1].split("(", 1)
    parts = [a.strip() for a in args.split(",")]
    int_second = name in ("pown", "rootn", "ldexp")
    cast = [a if (int_second and i == 1) else f"({T})({a})" for i, a in enumerate(parts)]
    return f"{name}({', '.join(cast)})"


def _edge_source(T: str) -> str:
    lines = "\n".join(f"    r[{i}] = {_typed(expr, T)};" for i, (expr, _) in enumerate(EDGE_CASES))
    return (FP64 if T == "double" else "") + f"""
__kernel void edges(__global {T} *r)
{{
{lines}
}}
"""


@pytest.mark.parametrize("type_name", TYPES)
def test_special_values_of_the_specification(type_name: str) -> None:
    dtype = DTYPES[type_name]
    got = np.zeros(len(EDGE_CASES), dtype)
    run(_edge_source(type_name), "edges", (1,), None, got)
    wrong = []
    for (expr, want), value in zip(EDGE_CASES, got.tolist()):
        if want == "denorm":
            want = float(np.nextafter(dtype(0), dtype(1)))
        if math.isnan(want):
            ok = math.isnan(value)
        else:
            ok = value == want and math.copysign(1, value) == math.copysign(1, want)
        if not ok:
            wrong.append(f"{expr} = {value!r}, want {want!r}")
    assert not wrong, f"{type_name}: " + "; ".join(wrong)


# ------------------------------------------------------------ -cl-fast-relaxed-math

RELAXED = "-cl-fast-relaxed-math"
# Functions with an explicit relaxed bound (OpenCL 2.0 section 7.4, table 7.2; OpenCL 1.2 lets
# -cl-fast-relaxed-math lower the precision without writing the bounds down): an ulp bound, or
# ("abs", error, lo, hi) for an absolute error on [lo, hi] (ulps outside, where the table says
# "larger otherwise": there ppcl must still be finite and within the strict bound).
RELAXED_BOUNDS: dict[str, Any] = {
    "acos": 4096, "asin": 4096, "atan": 4096,
    "cos": ("abs", 2.0**-11, -math.pi, math.pi), "sin": ("abs", 2.0**-11, -math.pi, math.pi),
    "cospi": ("abs", 2.0**-11, -1, 1), "sinpi": ("abs", 2.0**-11, -1, 1),
    "log": ("abs", 2.0**-21, 0.5, 2), "log2": ("abs", 2.0**-21, 0.5, 2),
}


def _relaxed_bound(name: str, x: np.ndarray, strict: float) -> np.ndarray:
    """The ulp bound at each point (``exp`` and ``exp2``: 3 + floor(|2x|))."""
    if name in ("exp", "exp2"):
        return 3 + np.floor(np.abs(2 * x.astype(np.float64)))
    bound = RELAXED_BOUNDS.get(name, strict)
    return np.full(len(x), float(bound if not isinstance(bound, tuple) else strict))


@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.name)
def test_relaxed_math_within_relaxed_bound(fn: Fn) -> None:
    """Under -cl-fast-relaxed-math, on finite arguments with finite results (the option
    implies -cl-finite-math-only), float functions meet the relaxed bounds."""
    x, _, _, got = _slice(_family("float", "unary", RELAXED), fn.name)
    ref = _family_reference("float", "unary", fn.name)
    finite = np.isfinite(x) & np.isfinite(ref[0]) & (np.abs(ref[0]) < 1e38)
    if fn.name in ("cosh", "sinh", "tanh"):
        finite &= np.abs(x) <= 88
    x, got, ref = x[finite], got[finite], (ref[0][finite], ref[1][finite])
    strict = fn.bound[0] or 0.5
    bound = _relaxed_bound(fn.name, x, strict)
    absolute = RELAXED_BOUNDS.get(fn.name)
    if isinstance(absolute, tuple):
        _, limit, lo, hi = absolute
        inside = (x >= lo) & (x <= hi)
        error = abs_error(got[inside], (ref[0][inside], ref[1][inside]))
        assert error.max() <= limit, f"{fn.name}: {worst(error, x[inside], got=got[inside])}"
        x, got, ref, bound = x[~inside], got[~inside], (ref[0][~inside], ref[1][~inside]), \
            bound[~inside]
    error = ulp_error(got, ref, ftz=True)
    assert np.all(error <= bound), f"{fn.name} relaxed: {worst(error - bound, x, got=got)}"


# ------------------------------------------------------------ half_* and native_*

HALF = [  # name, reference, domain (the specification's for half_cos/sin/tan: |x| <= 2^16)
    ("cos", mp.cos, (-2.0**16, 2.0**16)), ("sin", mp.sin, (-2.0**16, 2.0**16)),
    ("tan", mp.tan, (-2.0**16, 2.0**16)), ("exp", mp.exp, (-80, 80)),
    ("exp2", lambda x: mp.power(2, x), (-120, 120)),
    ("exp10", lambda x: mp.power(10, x), (-35, 35)), ("log", mp.log, (1e-30, 1e30)),
    ("log2", lambda x: mp.log(x, 2), (1e-30, 1e30)), ("log10", mp.log10, (1e-30, 1e30)),
    ("recip", lambda x: 1 / x, (1e-30, 1e30)), ("rsqrt", lambda x: 1 / mp.sqrt(x), (1e-30, 1e30)),
    ("sqrt", mp.sqrt, (0, 1e30)),
]
HALF_ULP = 8192


@functools.cache
def _half_family(prefix: str, options: str = "") -> tuple[np.ndarray, np.ndarray]:
    n = 1024
    rng = np.random.default_rng(5)
    xs = []
    for _, _, (lo, hi) in HALF:
        uniform = rng.uniform(lo, hi, n // 2)
        if lo > 0:
            logs = np.exp(rng.uniform(np.log(lo), np.log(hi), n - n // 2))
        else:
            logs = rng.uniform(lo / 1000, hi / 1000, n - n // 2)
        xs.append(np.concatenate([uniform, logs]).astype(np.float32))
    x = np.concatenate(xs)
    out = np.zeros_like(x)
    names = [prefix + name for name, _, _ in HALF]
    run(_source("float", "unary", names), "family", (n, len(HALF)), None, x, np.zeros_like(x),
        np.zeros(len(x), np.int32), out, np.uint32(n), options=options)
    return x.reshape(len(HALF), n), out.reshape(len(HALF), n)


@pytest.mark.parametrize("index", range(len(HALF)), ids=[h[0] for h in HALF])
def test_half_functions_within_8192_ulp(index: int) -> None:
    name, fn, _ = HALF[index]
    x, got = (a[index] for a in _half_family("half_"))
    error = ulp_error(got, reference(fn, x), ftz=True)
    assert error.max() <= HALF_ULP, f"half_{name}: {worst(error, x, got=got)}"


@pytest.mark.parametrize("options", ["", RELAXED])
@pytest.mark.parametrize("index", range(len(HALF)), ids=[h[0] for h in HALF])
def test_native_functions_close_to_the_function(index: int, options: str) -> None:
    """native_* accuracy is implementation-defined; ppcl's are the precise functions or, under
    -cl-fast-relaxed-math, shorter formulas over them, within the half_* bound either way."""
    name, fn, _ = HALF[index]
    x, got = (a[index] for a in _half_family("native_", options))
    error = ulp_error(got, reference(fn, x), ftz=True)
    assert error.max() <= HALF_ULP, f"native_{name}: {worst(error, x, got=got)}"


@pytest.mark.parametrize("prefix", ["half_", "native_"])
def test_half_and_native_divide_and_powr(prefix: str) -> None:
    rng = np.random.default_rng(9)
    x = np.exp(rng.uniform(-20, 20, 512)).astype(np.float32)
    y = rng.uniform(-8, 8, 512).astype(np.float32)
    out = np.zeros(2 * len(x), np.float32)
    source = f"""
__kernel void k(__global const float *x, __global const float *y, __global float *out)
{{
    size_t i = get_global_id(0);
    out[i] = {prefix}divide(x[i], y[i]);
    out[get_global_size(0) + i] = {prefix}powr(x[i], y[i]);
}}
"""
    run(source, "k", (len(x),), None, x, y, out)
    division = ulp_error(out[:512], reference(lambda a, b: a / b, x, y), ftz=True)
    assert division.max() <= HALF_ULP, worst(division, x, y, got=out[:512])
    power = reference(lambda a, b: mp.power(a, b), x, y)
    fits = np.abs(power[0]) < 1e38
    error = ulp_error(out[512:][fits], (power[0][fits], power[1][fits]), ftz=True)
    assert error.max() <= HALF_ULP, worst(error, x[fits], y[fits], got=out[512:][fits])


# ------------------------------------------------------------ build options reach the C compiler

CONTRACT = """
__kernel void k(__global const float *a, __global const float *b, __global const float *c,
                __global float *out)
{
    size_t i = get_global_id(0);
    out[i] = a[i] * b[i] + c[i];
}
"""


def _has_fma() -> bool:
    try:
        with open("/proc/cpuinfo") as info:
            return any(" fma" in line for line in info if line.startswith("flags"))
    except OSError:
        return False


def test_default_build_is_not_contracted_and_mad_enable_may_fuse() -> None:
    """By default a*b+c rounds twice (-ffp-contract=off); -cl-mad-enable lets the C compiler
    fuse it (on a CPU with FMA, gcc does). The same source under both options in one session
    also shows that the options are part of the kernel cache's key."""
    rng = np.random.default_rng(3)
    a = (1 + rng.random(256) * 2.0**-12).astype(np.float32)
    b = (1 + rng.random(256) * 2.0**-12).astype(np.float32)
    c = (-a.astype(np.float64) * b).astype(np.float32)
    two_roundings = a * b + c
    fused = (a.astype(np.float64) * b + c).astype(np.float32)
    assert not np.array_equal(two_roundings, fused)
    plain = np.zeros(256, np.float32)
    run(CONTRACT, "k", (256,), None, a, b, c, plain)
    np.testing.assert_array_equal(plain, two_roundings)
    mad = np.zeros(256, np.float32)
    run(CONTRACT, "k", (256,), None, a, b, c, mad, options="-cl-mad-enable")
    assert np.all((mad == fused) | (mad == two_roundings))
    if _has_fma():
        np.testing.assert_array_equal(mad, fused)


def test_default_build_keeps_signed_zeros_nan_and_denormals() -> None:
    source = """
__kernel void k(__global const float *x, __global float *out, __global int *flags)
{
    size_t i = get_global_id(0);
    out[i] = x[i] * 0.5f;
    out[4 + i] = 0.0f - x[i];
    flags[i] = isnan(x[i] - x[i]);
}
"""
    x = np.array([2.0**-140, 0.0, np.inf, 1.0], np.float32)
    out = np.zeros(8, np.float32)
    flags = np.zeros(4, np.int32)
    run(source, "k", (4,), None, x, out, flags)
    assert out[0] == np.float32(2.0**-141), "denormals kept"
    assert np.signbit(out[5]) == np.False_ and out[5] == 0, "0 - (+0) is +0"
    np.testing.assert_array_equal(flags, [0, 0, 1, 0])


@pytest.mark.parametrize("option", ["-cl-denorms-are-zero", "-cl-finite-math-only",
                                    "-cl-no-signed-zeros", "-cl-unsafe-math-optimizations",
                                    "-cl-mad-enable"])
def test_math_options_keep_finite_results_within_bounds(option: str) -> None:
    """Each option alone keeps the strict bounds on finite values (only relaxed-math lowers
    them); with -cl-denorms-are-zero a denormal may come back as zero."""
    ftz = option == "-cl-denorms-are-zero"
    for fn in UNARY:
        xs, _, _, got = _slice(_family("float", "unary", option), fn.name)
        ref = _family_reference("float", "unary", fn.name)
        keep = np.isfinite(xs) & np.isfinite(ref[0]) & (np.abs(ref[0]) < 3e38)
        alt = None
        if ftz:  # the result for the flushed argument is accepted too
            alt = (ref[0].copy(), ref[1].copy())
            tiny = (np.abs(xs) < np.finfo(np.float32).tiny) & (xs != 0)
            alt[0][tiny], alt[1][tiny] = reference(fn.ref, flush_denormals(xs[tiny]))
        error = ulp_error(got, ref, ftz=ftz, alt=alt)[keep]
        assert error.max() <= (fn.bound[0] or 0.5), \
            f"{fn.name} with {option}: {worst(error, xs[keep], got=got[keep])}"


# ------------------------------------------------------------ vector forms

def _vector_source(type_name: str, kind: str, names: list[str], width: int) -> str:
    T, V = type_name, f"{type_name}{width}"
    arg = {"unary": "(a)", "binary": "(a, b)", "int": "(a, k)"}[kind]
    cases = "\n".join(f"    case {i}: r = {name}{arg}; break;" for i, name in enumerate(names))
    return (FP64 if T == "double" else "") + f"""
__kernel void family(__global const {T} *x, __global const {T} *y, __global const int *n,
                     __global {T} *out, uint count)
{{
    size_t i = get_global_id(0) + get_global_id(1) * count;
    {V} a = vload{width}(i, x), b = vload{width}(i, y);
    int{width} k = vload{width}(i, n);
    {V} r = 0;
    switch (get_global_id(1)) {{
{cases}
    }}
    vstore{width}(r, i, out);
}}
"""


@pytest.mark.parametrize("kind", ["unary", "binary", "int"])
@pytest.mark.parametrize("type_name, width", [("float", 4), ("double", 2), ("float", 16)])
def test_vector_forms_equal_the_scalar_function(type_name: str, width: int, kind: str) -> None:
    """Each component of a vector call is the scalar function of that component."""
    scalar = _family(type_name, kind)
    fns = _FNS[kind]
    n = len(scalar.x) // len(fns)
    out = np.zeros_like(scalar.x)
    run(_vector_source(type_name, kind, scalar.names, width), "family",
        (n // width, len(fns)), None, scalar.x, scalar.y, scalar.k, out,
        np.uint32(n // width))
    same = (out == scalar.got) | (np.isnan(out) & np.isnan(scalar.got))
    same &= (np.signbit(out) == np.signbit(scalar.got)) | np.isnan(out)
    if not same.all():
        i = int(np.argmin(same))
        name = scalar.names[i // n]
        raise AssertionError(f"{name}({type_name}{width}) component {scalar.x[i]!r}: "
                             f"{out[i]!r}, scalar {scalar.got[i]!r}")


@pytest.mark.parametrize("options, bound", [
    ("-cl-fast-relaxed-math", 2.5),
    ("-cl-fast-relaxed-math -cl-fp32-correctly-rounded-divide-sqrt", 0.5),
    ("-cl-fp32-correctly-rounded-divide-sqrt", 0.5),
])
def test_float_division_under_options(options: str, bound: float) -> None:
    """x / y within 2.5 ulp under relaxed math for |x|, |y| in [2^-62, 2^62]; correctly
    rounded with -cl-fp32-correctly-rounded-divide-sqrt."""
    x, y, r, _ = _outputs("float", options)
    ref = reference(lambda a, b: a / b, x, y)
    ranged = (np.abs(x) >= 2.0**-62) & (np.abs(x) <= 2.0**62)
    ranged &= (np.abs(y) >= 2.0**-62) & (np.abs(y) <= 2.0**62)
    error = ulp_error(r[9], ref)[ranged]
    assert error.max() <= bound, worst(error, x[ranged], y[ranged], got=r[9][ranged])


@pytest.mark.parametrize("type_name", TYPES)
def test_nextafter_exact(type_name: str) -> None:
    dtype = DTYPES[type_name]
    x, y = _binary_points(Fn("nextafter", abs, (0, 0)), dtype, BINARY_POINTS[type_name], 5)
    out = np.zeros_like(x)
    source = (FP64 if type_name == "double" else "") + f"""
__kernel void k(__global const {type_name} *x, __global const {type_name} *y,
                __global {type_name} *out)
{{ size_t i = get_global_id(0); out[i] = nextafter(x[i], y[i]); }}
"""
    run(source, "k", (len(x),), None, x, y, out)
    with np.errstate(over="ignore"):  # nextafter(max, inf) is inf
        want = np.nextafter(x, y)
    same = (out.view(_BITS[type_name]) == want.view(_BITS[type_name]))
    same |= np.isnan(out) & np.isnan(want)
    assert same.all(), worst((~same).astype(float), x, y, got=out)


_BITS = {"float": np.uint32, "double": np.uint64}
