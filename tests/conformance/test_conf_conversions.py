"""Conformance, conversions (OpenCL C 1.2 section 6.2.3) and reinterpretation (6.2.4).

``convert_<dst>[n][_sat][_rte|_rtz|_rtp|_rtn]`` for every pair of the ten scalar element types,
on 4-vectors (and scalars, default rounding), against exact Python arithmetic: integers wrap modulo 2^bits or saturate;
floating to integer rounds by the mode (default toward zero) and, with ``_sat``, clamps and
maps NaN to 0 (without ``_sat`` an out-of-range result is undefined and not compared);
integer and double to floating round by the mode (default to nearest even), with the overflow
rules of directed rounding. ``as_<type>`` reinterprets the bits, compared with numpy's ``view``.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
import pytest

from tests.launch import run

FP64 = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
TYPES = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
         "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64,
         "float": np.float32, "double": np.float64}
MODES = ["", "_rte", "_rtz", "_rtp", "_rtn"]
COUNT = 64  # 4-vectors per source type
FLOAT_FORMATS = {"float": (24, -126), "double": (53, -1022)}


def _is_float(t: str) -> bool:
    return t in ("float", "double")


def _variants(dst: str) -> list[tuple[bool, str]]:
    sats = [False] if _is_float(dst) else [False, True]
    return [(sat, mode) for sat in sats for mode in MODES]


def _source(src: str) -> str:
    params = ", ".join(f"__global {d} *o_{d}, __global {d} *s_{d}" for d in TYPES)
    lines = []
    scalar = []
    for dst in TYPES:
        for k, (sat, mode) in enumerate(_variants(dst)):
            suffix = f"{'_sat' if sat else ''}{mode}"
            lines.append(f"    vstore4(convert_{dst}4{suffix}(v), {k} * m + i, o_{dst});")
            if mode == "":  # the C casts (vectors use __builtin_convertvector)
                scalar.append(
                    f"        s_{dst}[{k} * 4 * m + 4 * i + c] = convert_{dst}{suffix}(s);")
    return FP64 + f"""
__kernel void conv(__global const {src} *x, {params})
{{
    size_t i = get_global_id(0), m = get_global_size(0);
    {src}4 v = vload4(i, x);
{chr(10).join(lines)}
    for (int c = 0; c < 4; ++c) {{
        {src} s = x[4 * i + c];
{chr(10).join(scalar)}
    }}
}}
"""


def _points(src: str) -> np.ndarray:
    dtype = TYPES[src]
    rng = np.random.default_rng(len(src) * 31 + dtype().itemsize)
    size = 4 * COUNT
    if _is_float(src):
        edges = [0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 127.5, 128.0, -128.5, -129.0,
                 255.5, 256.0, 32767.5, 65535.5, 2.0**31 - 0.5, 2.0**31, -(2.0**31) - 1,
                 2.0**32, 2.0**32 - 1, 2.0**63, -(2.0**63), 2.0**64, 1e30, -1e30, np.inf,
                 -np.inf, np.nan, 1e-40, -1e-40, 16777217.0, 0.3, -0.7, 1e300, 1e-310,
                 3.4028235677973366e38, 3.4028235e38 * 1.0000001, 1.4e-45, 7e-46]
        values = rng.choice([-1, 1], size) * np.exp2(rng.uniform(-30, 70, size))
        values[: size // 4] = rng.uniform(-300, 300, size // 4)
        values[size // 4: size // 4 + len(edges)] = edges
        with np.errstate(over="ignore"):
            return values.astype(dtype)
    info = np.iinfo(dtype)
    edges = [0, 1, -1, info.min, info.max, info.min + 1, info.max - 1, 127, 128, -128, -129,
             255, 256, 32767, 32768, 65535, 65536, 2**24 + 1, 2**24 + 3, 2**31 - 1, 2**31,
             2**32 - 1, 2**53 + 1, 2**63 - 1, 2**62 + 2**40 + 1, 2**25 - 1]
    values = rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)
    fitting = [e for e in edges if info.min <= e <= info.max]
    values[: len(fitting)] = fitting
    return values


@functools.cache
def _run(src: str) -> dict[str, np.ndarray]:
    x = _points(src)
    outs = {dst: np.zeros(len(_variants(dst)) * len(x), TYPES[dst]) for dst in TYPES}
    scalars = {dst: np.zeros(len(_variants(dst)) * len(x), TYPES[dst]) for dst in TYPES}
    run(_source(src), "conv", (COUNT,), None, x,
        *[a for dst in TYPES for a in (outs[dst], scalars[dst])])
    result = {"x": x, **{d: o.reshape(len(_variants(d)), len(x)) for d, o in outs.items()}}
    result.update({f"scalar {d}": o.reshape(len(_variants(d)), len(x))
                   for d, o in scalars.items()})
    return result


def _round_integer(value: Fraction, mode: str) -> int:
    """``value`` rounded to an integer by the mode (default: toward zero)."""
    floor = value.numerator // value.denominator
    if floor == value:
        return floor
    if mode in ("", "_rtz"):
        return floor if value > 0 else floor + 1
    if mode == "_rtp":
        return floor + 1
    if mode == "_rtn":
        return floor
    twice = 2 * (value - floor)  # _rte
    if twice != 1:
        return floor + (1 if twice > 1 else 0)
    return floor if floor % 2 == 0 else floor + 1


def _round_float(value: Fraction, dst: str, mode: str) -> float:
    """``value`` rounded to ``dst`` by the mode (default: to nearest even)."""
    precision, emin = FLOAT_FORMATS[dst]
    largest = (2 - Fraction(2) ** (1 - precision)) * Fraction(2) ** (-emin + 1)
    if value == 0:
        return 0.0
    sign = 1 if value > 0 else -1
    a = abs(value)
    exponent = max(a.numerator.bit_length() - a.denominator.bit_length(), emin)
    while Fraction(2) ** exponent > a and exponent > emin:
        exponent -= 1
    while Fraction(2) ** (exponent + 1) <= a:
        exponent += 1
    quantum = Fraction(2) ** (exponent - precision + 1)
    magnitude_mode = {"": "_rte", "_rte": "_rte", "_rtz": "_rtz",
                      "_rtp": "_rtp" if sign > 0 else "_rtn",
                      "_rtn": "_rtn" if sign > 0 else "_rtp"}[mode]
    steps = _round_integer(a / quantum, magnitude_mode)
    result = steps * quantum
    if result > largest:
        toward_infinity = magnitude_mode in ("_rte", "_rtp")
        return sign * (float("inf") if toward_infinity else float(largest))
    return sign * float(result)


def _expected(value: float | int, dst: str, sat: bool, mode: str) -> float | int | None:
    """The converted value, or None where the result is undefined."""
    if _is_float(dst):
        if isinstance(value, float) and (value != value or value == 0 or
                                         value in (float("inf"), float("-inf"))):
            return value  # NaN, infinities and zeros of either sign stay
        return _round_float(Fraction(value), dst, mode)
    info = np.iinfo(TYPES[dst])
    lo, hi = int(info.min), int(info.max)
    if isinstance(value, float):
        if value != value:
            return 0 if sat else None
        if value in (float("inf"), float("-inf")):
            return (hi if value > 0 else lo) if sat else None
        rounded = _round_integer(Fraction(value), mode)
    else:
        rounded = value
    if sat:
        return min(max(rounded, lo), hi)
    if isinstance(value, float):
        return rounded if lo <= rounded <= hi else None
    return (rounded - lo) % (hi - lo + 1) + lo  # wraps modulo 2^bits


@pytest.mark.parametrize("src", list(TYPES))
def test_convert_every_destination_saturation_and_rounding(src: str) -> None:
    r = _run(src)
    values = [float(v) if _is_float(src) else int(v) for v in r["x"].tolist()]
    wrong = []
    for dst in TYPES:
        for k, (sat, mode) in enumerate(_variants(dst)):
            vector, scalar = r[dst][k].tolist(), r[f"scalar {dst}"][k].tolist()
            for value, result, alone in zip(values, vector, scalar):
                want = _expected(value, dst, sat, mode)
                if want is None:
                    continue
                if mode == "" and not (alone == result or alone != alone and result != result):
                    name = f"convert_{dst}{'_sat' if sat else ''}{mode}"
                    wrong.append(f"scalar {name}(({src}){value!r}) = {alone!r}, "
                                 f"vector {result!r}")
                    break
                same = (want != want and result != result) or (
                    want == result and (not _is_float(dst) or np.signbit(want) ==
                                        np.signbit(result) or want != 0))
                if not same:
                    name = f"convert_{dst}{'_sat' if sat else ''}{mode}"
                    wrong.append(f"{name}(({src}){value!r}) = {result!r}, want {want!r}")
                    break
    assert not wrong, "; ".join(wrong[:8])


REINTERPRET = [("float", "int"), ("int", "float"), ("double", "ulong"), ("long", "double"),
               ("uint", "uchar4"), ("float", "short2"), ("double", "float2"),
               ("ulong", "ushort4"), ("int4", "float4"), ("char16", "double2"),
               ("short8", "int4"), ("float2", "long")]


def _numpy_type(name: str) -> tuple[type, int]:
    base = name.rstrip("0123456789")
    width = int(name[len(base):] or 1)
    return TYPES[base], width


@pytest.mark.parametrize("src, dst", REINTERPRET, ids=[f"{s}-{d}" for s, d in REINTERPRET])
def test_as_type_reinterprets_bits(src: str, dst: str) -> None:
    sdt, sw = _numpy_type(src)
    ddt, dw = _numpy_type(dst)
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 256, 64 * np.dtype(sdt).itemsize * sw, dtype=np.uint8)
    x = raw.view(sdt)
    out = np.zeros(len(raw) // np.dtype(ddt).itemsize, ddt)
    load = "x[i]" if sw == 1 else f"vload{sw}(i, x)"
    store = "out[i] = r;" if dw == 1 else f"vstore{dw}(r, i, out);"
    sbase, dbase = src.rstrip("0123456789"), dst.rstrip("0123456789")
    source = FP64 + f"""
__kernel void k(__global const {sbase} *x, __global {dbase} *out)
{{
    size_t i = get_global_id(0);
    {src} v = {load};
    {dst} r = as_{dst}(v);
    {store}
}}
"""
    run(source, "k", (64,), None, x, out)
    np.testing.assert_array_equal(out.view(np.uint8), raw)
