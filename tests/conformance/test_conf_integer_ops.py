"""Conformance, integer operations (OpenCL C 1.2 sections 6.3 and 6.12.3) for every integer
type, on 4-vectors and on scalars, compared with exact Python integer arithmetic: add_sat,
sub_sat, hadd, rhadd, mul_hi, mad_hi, mad_sat, mul24, mad24, clz, popcount, rotate, abs,
abs_diff, max, min, clamp, upsample, shifts (the right operand masked to the width of the left
operand's element type, of the promoted type for a scalar), and division and remainder with
negative operands and at the limits (division by zero and MIN / -1 excluded: undefined).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.launch import run

TYPES = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
         "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64}
COUNT = 256  # 4-vectors per type

# function -> (OpenCL expression over a, b, c (and d, a nonzero divisor), types it exists for)
FUNCTIONS: dict[str, tuple[str, Callable[[str], bool]]] = {
    "add_sat": ("add_sat({a}, {b})", lambda t: True),
    "sub_sat": ("sub_sat({a}, {b})", lambda t: True),
    "hadd": ("hadd({a}, {b})", lambda t: True),
    "rhadd": ("rhadd({a}, {b})", lambda t: True),
    "mul_hi": ("mul_hi({a}, {b})", lambda t: True),
    "mad_hi": ("mad_hi({a}, {b}, {c})", lambda t: True),
    "mad_sat": ("mad_sat({a}, {b}, {c})", lambda t: True),
    "clz": ("clz({a})", lambda t: True),
    "popcount": ("popcount({a})", lambda t: True),
    "rotate": ("rotate({a}, {b})", lambda t: True),
    "abs": ("abs({a})", lambda t: True),
    "abs_diff": ("abs_diff({a}, {b})", lambda t: True),
    "max": ("max({a}, {b})", lambda t: True),
    "min": ("min({a}, {b})", lambda t: True),
    "clamp": ("clamp({a}, min({b}, {c}), max({b}, {c}))", lambda t: True),
    "shl": ("{a} << {b}", lambda t: True),
    "shr": ("{a} >> {b}", lambda t: True),
    "div": ("{a} / {d}", lambda t: True),
    "rem": ("{a} % {d}", lambda t: True),
    "mul24": ("mul24({a24}, {b24})", lambda t: t in ("int", "uint")),
    "mad24": ("mad24({a24}, {b24}, {c})", lambda t: t in ("int", "uint")),
    "upsample": ("upsample({a}, {ub})", lambda t: t not in ("long", "ulong")),
}


def _info(type_name: str) -> tuple[int, bool, int, int]:
    info = np.iinfo(TYPES[type_name])
    return info.bits, info.min < 0, int(info.min), int(info.max)


def _wrap(v: int, bits: int, signed: bool) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def _unsigned(v: int, bits: int) -> int:
    return v & ((1 << bits) - 1)


def _reference(name: str, type_name: str, a: int, b: int, c: int, d: int, a24: int, b24: int,
               vector: bool) -> int:
    bits, signed, lo, hi = _info(type_name)

    def sat(v: int) -> int:
        return min(max(v, lo), hi)

    if name == "add_sat":
        return sat(a + b)
    if name == "sub_sat":
        return sat(a - b)
    if name == "hadd":
        return (a + b) >> 1
    if name == "rhadd":
        return (a + b + 1) >> 1
    if name == "mul_hi":
        return (a * b) >> bits
    if name == "mad_hi":
        return _wrap(((a * b) >> bits) + c, bits, signed)
    if name == "mad_sat":
        return sat(a * b + c)
    if name == "clz":
        return bits - _unsigned(a, bits).bit_length()
    if name == "popcount":
        return bin(_unsigned(a, bits)).count("1")
    if name == "rotate":
        u, n = _unsigned(a, bits), _unsigned(b, bits) % bits
        return _wrap((u << n) | (u >> (bits - n)), bits, signed)
    if name == "abs":
        return abs(a)
    if name == "abs_diff":
        return abs(a - b)
    if name == "max":
        return max(a, b)
    if name == "min":
        return min(a, b)
    if name == "clamp":
        return min(max(a, min(b, c)), max(b, c))
    if name in ("shl", "shr"):
        # a scalar operand is promoted to int first: the shift count is masked to its width
        width = bits if vector or bits >= 32 else 32
        n = _unsigned(b, 64) % width
        if name == "shl":
            return _wrap(a << n, bits, signed)
        return _wrap(a >> n, bits, signed)
    if name == "div":
        q = abs(a) // abs(d)
        return q if (a < 0) == (d < 0) else -q
    if name == "rem":
        r = abs(a) % abs(d)
        return r if a >= 0 else -r
    if name == "mul24":
        return _wrap(a24 * b24, bits, signed)
    if name == "mad24":
        return _wrap(a24 * b24 + c, bits, signed)
    if name == "upsample":
        return (a << bits) | _unsigned(b, bits)
    raise AssertionError(name)


def _names(type_name: str) -> list[str]:
    return [name for name, (_, exists) in FUNCTIONS.items() if exists(type_name)]


def _source(type_name: str) -> str:
    T = type_name
    U = T if T.startswith("u") else "u" + T
    stores = []
    vector_args = {k: k for k in ("a", "b", "c", "d", "a24", "b24", "ub")}
    scalar_args = {k: f"{k}.x" for k in vector_args}
    for k, name in enumerate(_names(type_name)):
        expr = FUNCTIONS[name][0]
        stores.append(f"    vstore4(convert_long4({expr.format(**vector_args)}), {k} * n + i, vec);")
        scalar = expr.format(**scalar_args)
        if name in ("shl", "shr"):  # the operands are promoted: keep the operand type
            scalar = f"({T})({scalar})"
        stores.append(f"    sca[{k} * n + i] = (long)({scalar});")
    body = "\n".join(stores)
    return f"""
__kernel void ops(__global const {T} *x, __global const {T} *y, __global const {T} *z,
                  __global const {T} *w, __global const {T} *x24, __global const {T} *y24,
                  __global long *vec, __global long *sca)
{{
    size_t i = get_global_id(0), n = get_global_size(0);
    {T}4 a = vload4(i, x), b = vload4(i, y), c = vload4(i, z), d = vload4(i, w);
    {T}4 a24 = vload4(i, x24), b24 = vload4(i, y24);
    {U}4 ub = as_{U}4(b);
{body}
}}
"""


def _inputs(type_name: str) -> dict[str, np.ndarray]:
    dtype = TYPES[type_name]
    bits, signed, lo, hi = _info(type_name)
    rng = np.random.default_rng(bits * 2 + signed)
    size = 4 * COUNT
    edges = [0, 1, lo, hi, lo + 1, hi - 1, 2, 3] + ([-1, -2] if signed else [hi >> 1, 7])

    def values() -> list[int]:
        out = [int(v) for v in rng.integers(lo, hi, size=size, dtype=dtype, endpoint=True)]
        small = [int(v) for v in rng.integers(max(lo, -100), 100, size=size // 4)]
        out[: size // 4] = small
        return out

    x, y, z = values(), values(), values()
    grid = [(p, q) for p in edges for q in edges]
    for k, (p, q) in enumerate(grid):
        x[size // 4 + k], y[size // 4 + k] = p, q
    shifts = [int(v) for v in rng.integers(0, 2 * bits + 40, size=size // 8)]
    y[size // 2: size // 2 + len(shifts)] = [min(s, hi) for s in shifts]
    d = [v if v != 0 and not (signed and v == -1) else 3 for v in y]
    d[:4] = [-7 if signed else 9, 7, -1 if signed else 1, hi]
    x[:4] = [-20 if signed else 20, -20 if signed else 20, 5, lo]
    span = (1 << 23) if signed else 0
    x24 = [int(v) for v in rng.integers(-span, (1 << 23 if signed else 1 << 24) - 1, size=size)]
    y24 = [int(v) for v in rng.integers(-span, (1 << 23 if signed else 1 << 24) - 1, size=size)]
    if bits != 32:
        x24, y24 = [0] * size, [0] * size
    return {k: np.array(v, dtype=dtype) for k, v in
            {"x": x, "y": y, "z": z, "w": d, "x24": x24, "y24": y24}.items()}


@functools.cache
def _run(type_name: str) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    inputs = _inputs(type_name)
    names = _names(type_name)
    size = 4 * COUNT
    vec = np.zeros(len(names) * size, np.int64)
    sca = np.zeros(len(names) * COUNT, np.int64)
    run(_source(type_name), "ops", (COUNT,), None, inputs["x"], inputs["y"], inputs["z"],
        inputs["w"], inputs["x24"], inputs["y24"], vec, sca)
    return inputs, vec.reshape(len(names), size), sca.reshape(len(names), COUNT)


@pytest.mark.parametrize("type_name", list(TYPES))
def test_integer_functions_exact(type_name: str) -> None:
    inputs, vec, sca = _run(type_name)
    cols = {k: [int(v) for v in a.tolist()] for k, a in inputs.items()}
    wrong: list[str] = []
    for k, name in enumerate(_names(type_name)):
        for i in range(4 * COUNT):
            args: Any = (cols["x"][i], cols["y"][i], cols["z"][i], cols["w"][i], cols["x24"][i],
                         cols["y24"][i])
            want = _reference(name, type_name, *args, vector=True)
            if _wrap(int(vec[k, i]), 64, True) != _wrap(want, 64, True):
                wrong.append(f"{name}{args[:3]} = {int(vec[k, i])}, want {want}")
                break
            if i % 4 == 0:
                scalar = _reference(name, type_name, *args, vector=False)
                if _wrap(int(sca[k, i // 4]), 64, True) != _wrap(scalar, 64, True):
                    wrong.append(f"scalar {name}{args[:3]} = {int(sca[k, i // 4])}, "
                                 f"want {scalar}")
                    break
    assert not wrong, f"{type_name}: " + "; ".join(wrong)
