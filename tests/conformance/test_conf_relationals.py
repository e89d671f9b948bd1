"""Conformance, relational functions (OpenCL C 1.2 section 6.12.6), compared with numpy:

- the comparisons isequal .. islessgreater, isordered, isunordered and the classifications
  isfinite, isinf, isnan, isnormal, signbit for float and double, scalar (true is 1) and
  vectors (true is -1, all bits set) of widths 2 to 16, with NaN, infinities, zeros of both
  signs and denormals among the points;
- any and all (the most significant bit of each component) for every signed integer type;
- bitselect for every element type, floats through their bits;
- select with signed and unsigned masks: for vectors the most significant bit of each
  component of the mask chooses, for scalars the mask being nonzero.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tests.launch import run

FP64 = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
FLOATS = {"float": (np.float32, np.int32), "double": (np.float64, np.int64)}
COMPARE = {
    "isequal": np.equal, "isnotequal": np.not_equal, "isgreater": np.greater,
    "isgreaterequal": np.greater_equal, "isless": np.less, "islessequal": np.less_equal,
    "islessgreater": lambda a, b: np.less(a, b) | np.greater(a, b),
    "isordered": lambda a, b: ~(np.isnan(a) | np.isnan(b)),
    "isunordered": lambda a, b: np.isnan(a) | np.isnan(b),
}
CLASSIFY = {
    "isfinite": np.isfinite, "isinf": np.isinf, "isnan": np.isnan,
    "isnormal": lambda a: np.isfinite(a) & (np.abs(a) >= np.finfo(a.dtype).tiny),
    "signbit": np.signbit,
}
NAMES = list(COMPARE) + list(CLASSIFY)
WIDTHS = [1, 2, 3, 4, 8, 16]
COUNT = 48  # vectors per width


def _float_source(T: str, n: int) -> str:
    I = "int" if n == 1 or T == "float" else "long"  # noqa: E741 - the type's OpenCL name
    V = T if n == 1 else f"{T}{n}"
    R = I if n == 1 else f"{I}{n}"
    load = (lambda a: f"{a}[i]") if n == 1 else (lambda a: f"vload{n}(i, {a})")
    store = (lambda v, k: f"out[{k} * m + i] = {v};") if n == 1 else \
        (lambda v, k: f"vstore{n}({v}, {k} * m + i, out);")
    lines = []
    for k, name in enumerate(NAMES):
        call = f"{name}(a, b)" if name in COMPARE else f"{name}(a)"
        lines.append("    " + store(f"({R})({call})", k))
    return (FP64 if T == "double" else "") + f"""
__kernel void rel(__global const {T} *x, __global const {T} *y, __global {I} *out)
{{
    size_t i = get_global_id(0), m = get_global_size(0);
    {V} a = {load("x")}, b = {load("y")};
{chr(10).join(lines)}
}}
"""


def _float_points(dtype: type, size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    info = np.finfo(dtype)
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, float(info.tiny),
                        float(info.tiny) / 4, -float(info.tiny) / 2, float(info.max), 2.0],
                       dtype=dtype)
    x = rng.choice(special, size).astype(dtype)
    y = rng.choice(special, size).astype(dtype)
    x[size // 2:] = rng.integers(-3, 4, size - size // 2)
    y[size // 2:] = rng.integers(-3, 4, size - size // 2)
    return x, y


@functools.cache
def _run_floats(type_name: str, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    dtype, itype = FLOATS[type_name]
    if n == 1:
        itype = np.int32
    size = COUNT * n
    x, y = _float_points(dtype, size, n)
    out = np.zeros(len(NAMES) * size, itype)
    run(_float_source(type_name, n), "rel", (COUNT,), None, x, y, out)
    return x, y, out.reshape(len(NAMES), size)


@pytest.mark.parametrize("type_name", list(FLOATS))
@pytest.mark.parametrize("n", WIDTHS)
def test_comparisons_and_classification(type_name: str, n: int) -> None:
    x, y, out = _run_floats(type_name, n)
    true = 1 if n == 1 else -1
    with np.errstate(invalid="ignore"):
        for k, name in enumerate(NAMES):
            want = COMPARE[name](x, y) if name in COMPARE else CLASSIFY[name](x)
            np.testing.assert_array_equal(out[k], np.where(want, true, 0),
                                          err_msg=f"{name} ({type_name}{n})")


INTS = {"char": np.int8, "short": np.int16, "int": np.int32, "long": np.int64}


@pytest.mark.parametrize("type_name", list(INTS))
def test_any_all_most_significant_bit(type_name: str) -> None:
    dtype = INTS[type_name]
    rng = np.random.default_rng(2)
    lines, results = [], []
    k = 0
    inputs = {}
    for n in WIDTHS:
        v = rng.integers(0, 4, size=(COUNT, n)).astype(dtype)  # never negative
        v[: COUNT // 2] = rng.choice(np.array([0, -1, 5, np.iinfo(dtype).min, 1], dtype),
                                     size=(COUNT // 2, n))
        v[COUNT // 2: COUNT // 2 + 2] = -1  # all set
        inputs[n] = v
        V = type_name if n == 1 else f"{type_name}{n}"
        load = f"x{n}[i]" if n == 1 else f"vload{n}(i, x{n})"
        lines.append(f"    {V} v{n} = {load};")
        lines.append(f"    out[{k} * m + i] = any(v{n});")
        lines.append(f"    out[{k + 1} * m + i] = all(v{n});")
        results.append((n, k))
        k += 2
    params = ", ".join(f"__global const {type_name} *x{n}" for n in WIDTHS)
    source = f"""
__kernel void k({params}, __global int *out)
{{
    size_t i = get_global_id(0), m = get_global_size(0);
{chr(10).join(lines)}
}}
"""
    out = np.zeros(k * COUNT, np.int32)
    run(source, "k", (COUNT,), None, *[inputs[n].ravel() for n in WIDTHS], out)
    out = out.reshape(k, COUNT)
    for n, row in results:
        negative = inputs[n] < 0
        np.testing.assert_array_equal(out[row], negative.any(axis=1), err_msg=f"any {n}")
        np.testing.assert_array_equal(out[row + 1], negative.all(axis=1), err_msg=f"all {n}")


SELECT_TYPES = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
                "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64,
                "float": np.float32, "double": np.float64}


def _same_size_ints(dtype: type) -> tuple[type, type]:
    size = np.dtype(dtype).itemsize
    return ({1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[size],
            {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size])


@pytest.mark.parametrize("type_name", list(SELECT_TYPES))
def test_bitselect_and_select(type_name: str) -> None:
    dtype = SELECT_TYPES[type_name]
    signed, unsigned = _same_size_ints(dtype)
    sname = {np.int8: "char", np.int16: "short", np.int32: "int", np.int64: "long"}[signed]
    rng = np.random.default_rng(7)
    size = 4 * COUNT
    bits = np.iinfo(unsigned)
    a = rng.integers(0, bits.max, size, dtype=unsigned, endpoint=True).view(dtype)
    b = rng.integers(0, bits.max, size, dtype=unsigned, endpoint=True).view(dtype)
    c = rng.integers(0, bits.max, size, dtype=unsigned, endpoint=True).view(dtype)
    mask = rng.choice(np.array([0, -1, 1, -2, np.iinfo(signed).min, np.iinfo(signed).max],
                               signed), size)
    head = FP64 if type_name == "double" else ""
    source = head + f"""
__kernel void k(__global const {type_name} *a, __global const {type_name} *b,
                __global const {type_name} *c, __global const {sname} *s,
                __global {type_name} *out)
{{
    size_t i = get_global_id(0), m = get_global_size(0);
    {type_name}4 va = vload4(i, a), vb = vload4(i, b), vc = vload4(i, c);
    {sname}4 vs = vload4(i, s);
    vstore4(bitselect(va, vb, vc), i, out);
    vstore4(select(va, vb, vs), m + i, out);
    vstore4(select(va, vb, as_u{sname}4(vs)), 2 * m + i, out);
    for (int k = 0; k < 4; ++k) {{
        out[12 * m + 4 * i + k] = select(a[4 * i + k], b[4 * i + k], s[4 * i + k]);
        out[16 * m + 4 * i + k] = bitselect(a[4 * i + k], b[4 * i + k], c[4 * i + k]);
    }}
}}
"""
    out = np.zeros(5 * size, dtype)
    run(source, "k", (COUNT,), None, a, b, c, mask, out)
    ua, ub, uc = a.view(unsigned), b.view(unsigned), c.view(unsigned)
    bitsel = ((ua & ~uc) | (ub & uc)).view(dtype)
    o = out.view(unsigned)
    np.testing.assert_array_equal(o[:size], bitsel.view(unsigned))
    by_msb = np.where(mask < 0, ub, ua)
    np.testing.assert_array_equal(o[size:2 * size], by_msb)
    np.testing.assert_array_equal(o[2 * size:3 * size], by_msb)
    np.testing.assert_array_equal(o[3 * size:4 * size], np.where(mask != 0, ub, ua))
    np.testing.assert_array_equal(o[4 * size:], bitsel.view(unsigned))
