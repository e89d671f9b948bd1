"""Conformance, geometric functions (OpenCL C 1.2 section 6.12.5): dot, cross, distance,
length, normalize and the fast_* variants, for float and double, widths 1 to 4, against an
mpmath reference within the specification's bounds:

- dot: absolute error max*max*(2n-1)*eps, for width n and largest component magnitude max;
- cross: absolute error max*max*3*eps per component;
- length: 0.25 + 0.5n ulp; distance: 2.5 + 2n ulp; normalize: 2 + n ulp per component;
- fast_length, fast_distance, fast_normalize (float only): 8192 ulp (half_sqrt's bound).

Points include components spread over many binades, large ones (length must not overflow for
components near FLT_MAX / sqrt(2)), tiny ones (no underflow to zero) and zero vectors.
"""

from __future__ import annotations

import functools
from typing import Any

import mpmath
import numpy as np
import pytest
from conf_ulp import reference, ulp_error, worst

from tests.launch import run

FP64 = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
DTYPES = {"float": np.float32, "double": np.float64}
COUNT = 512


def _vector(T: str, n: int) -> str:
    return T if n == 1 else f"{T}{n}"


def _load(T: str, n: int, array: str) -> str:
    return f"{array}[i]" if n == 1 else f"vload{n}(i, {array})"


def _store(T: str, n: int, value: str, array: str) -> str:
    return f"{array}[i] = {value};" if n == 1 else f"vstore{n}({value}, i, {array});"


def _source(T: str, n: int) -> str:
    V = _vector(T, n)
    fast = T == "float"
    body = f"""
    {V} a = {_load(T, n, "x")}, b = {_load(T, n, "y")};
    s[i * 6 + 0] = dot(a, b);
    s[i * 6 + 1] = length(a);
    s[i * 6 + 2] = distance(a, b);
    {_store(T, n, "normalize(a)", "nrm")}
"""
    if fast:
        body += f"""
    s[i * 6 + 3] = fast_length(a);
    s[i * 6 + 4] = fast_distance(a, b);
    {_store(T, n, "fast_normalize(a)", "fnrm")}
"""
    if n in (3, 4):
        body += f"    {_store(T, n, 'cross(a, b)', 'crs')}\n"
    return (FP64 if T == "double" else "") + f"""
__kernel void geo(__global const {T} *x, __global const {T} *y, __global {T} *s,
                  __global {T} *nrm, __global {T} *fnrm, __global {T} *crs)
{{
    size_t i = get_global_id(0);
{body}}}
"""


def _points(dtype: Any, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """COUNT vectors of width n: random components over +-2^40 binades, rows scaled near the
    overflow and underflow limits, and zero rows."""
    rng = np.random.default_rng(seed)
    shape = (COUNT, n)
    big = float(np.finfo(dtype).max) / 4
    tiny = float(np.finfo(dtype).tiny) * 4

    def make() -> np.ndarray:
        v = rng.choice([-1.0, 1.0], size=shape) * np.exp2(rng.uniform(-40, 40, size=shape))
        v[: COUNT // 8] = rng.uniform(-1, 1, size=(COUNT // 8, n)) * big
        v[COUNT // 8: COUNT // 4] = rng.uniform(-1, 1, size=(COUNT // 8, n)) * tiny
        v[COUNT // 4: COUNT // 4 + 4] = 0.0
        v[COUNT // 4 + 4: COUNT // 2] = rng.uniform(-10, 10, size=(COUNT // 4 - 4, n))
        return v.astype(dtype)

    return make(), make()


@functools.cache
def _run(type_name: str, n: int) -> dict[str, np.ndarray]:
    dtype = DTYPES[type_name]
    x, y = _points(dtype, n, 10 * n + (1 if type_name == "double" else 0))
    s = np.zeros(COUNT * 6, dtype)
    nrm = np.zeros(COUNT * n, dtype)
    fnrm = np.zeros(COUNT * n, dtype)
    crs = np.zeros(COUNT * n, dtype)
    run(_source(type_name, n), "geo", (COUNT,), None, x.ravel(), y.ravel(), s, nrm, fnrm, crs)
    s = s.reshape(COUNT, 6)
    return {"x": x, "y": y, "dot": s[:, 0], "length": s[:, 1], "distance": s[:, 2],
            "fast_length": s[:, 3], "fast_distance": s[:, 4], "normalize": nrm.reshape(x.shape),
            "fast_normalize": fnrm.reshape(x.shape), "cross": crs.reshape(x.shape)}


def _mp_rows(fn: Any, *arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``fn`` of each row (lists of mpf) as a double-double reference."""
    rows = np.arange(len(arrays[0]), dtype=np.float64)
    return reference(lambda i: fn(*[[mpmath.mpf(float(c)) for c in a[int(i)]] for a in arrays]),
                     rows)


def _norm(v: list[Any]) -> Any:
    return mpmath.sqrt(mpmath.fsum(c * c for c in v))


def _smallest(type_name: str) -> float:
    dtype = DTYPES[type_name]
    return float(np.nextafter(dtype(0), dtype(1)))


CASES = [(t, n) for t in ("float", "double") for n in (1, 2, 3, 4)]


@pytest.mark.parametrize("type_name, n", CASES)
def test_length_and_distance_ulp(type_name: str, n: int) -> None:
    r = _run(type_name, n)
    length = ulp_error(r["length"], _mp_rows(_norm, r["x"]))
    assert length.max() <= 0.25 + 0.5 * n, f"length: {worst(length, r['length'], got=r['length'])}"
    with np.errstate(over="ignore"):
        finite = np.all(np.isfinite(r["x"].astype(np.float64) - r["y"]), axis=1)
    distance = ulp_error(r["distance"], _mp_rows(lambda a, b: _norm([p - q for p, q in zip(a, b)]),
                                                  r["x"], r["y"]))
    assert distance.max() <= 2.5 + 2 * n, f"distance: {worst(distance, r['distance'])}"
    assert finite.any()


@pytest.mark.parametrize("type_name, n", CASES)
@np.errstate(over="ignore", invalid="ignore")  # rows near the limits overflow in the reference
def test_dot_absolute_error(type_name: str, n: int) -> None:
    r = _run(type_name, n)
    x, y = r["x"].astype(np.float64), r["y"].astype(np.float64)
    biggest = np.maximum(np.abs(x).max(axis=1), np.abs(y).max(axis=1))
    eps = float(np.finfo(DTYPES[type_name]).eps)
    # plus the rounding of each product below the normal range, which is absolute
    tolerance = biggest * biggest * (2 * n - 1) * eps + n * _smallest(type_name)
    ref = _mp_rows(lambda a, b: mpmath.fsum(p * q for p, q in zip(a, b)), r["x"], r["y"])
    fits = np.abs(ref[0]) < float(np.finfo(DTYPES[type_name]).max) / 2
    error = np.abs((r["dot"].astype(np.float64) - ref[0]) - ref[1])
    assert np.all(error[fits] <= tolerance[fits]), worst((error - tolerance)[fits], r["dot"][fits])


@pytest.mark.parametrize("type_name, n", CASES)
def test_normalize_ulp(type_name: str, n: int) -> None:
    r = _run(type_name, n)
    x = r["x"]
    for k in range(n):
        ref = _mp_rows(lambda a, k=k: a[k] / _norm(a) if any(a) else a[k], x)
        error = ulp_error(r["normalize"][:, k], ref)
        assert error.max() <= 2 + n, f"normalize component {k}: {worst(error, x[:, k])}"
    zero = ~x.any(axis=1)
    np.testing.assert_array_equal(r["normalize"][zero], x[zero])


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_fast_geometric_within_8192_ulp(n: int) -> None:
    r = _run("float", n)
    x, y = r["x"], r["y"]
    # fast_* may overflow or underflow in the sum of squares: test the usual magnitudes
    usual = np.all((np.abs(x) < 1e15) & ((np.abs(x) > 1e-15) | (x == 0)), axis=1)
    usual &= np.all((np.abs(y) < 1e15) & ((np.abs(y) > 1e-15) | (y == 0)), axis=1)
    length = ulp_error(r["fast_length"], _mp_rows(_norm, x))[usual]
    assert length.max() <= 8192
    distance = ulp_error(r["fast_distance"],
                         _mp_rows(lambda a, b: _norm([p - q for p, q in zip(a, b)]), x, y))
    assert distance[usual].max() <= 8192
    for k in range(n):
        ref = _mp_rows(lambda a, k=k: a[k] / _norm(a) if any(a) else a[k], x)
        error = ulp_error(r["fast_normalize"][:, k], ref, ftz=True)[usual]
        assert error.max() <= 8192, f"fast_normalize component {k}"


@pytest.mark.parametrize("type_name, n", [(t, n) for t in ("float", "double") for n in (3, 4)])
@np.errstate(over="ignore", invalid="ignore")
def test_cross_absolute_error(type_name: str, n: int) -> None:
    r = _run(type_name, n)
    x, y = r["x"].astype(np.float64), r["y"].astype(np.float64)
    usual = np.all(np.abs(x) < 1e15, axis=1) & np.all(np.abs(y) < 1e15, axis=1)
    want = np.cross(x[:, :3].astype(np.longdouble), y[:, :3].astype(np.longdouble))
    biggest = np.maximum(np.abs(x[:, :3]).max(axis=1), np.abs(y[:, :3]).max(axis=1))
    eps = float(np.finfo(DTYPES[type_name]).eps)
    tolerance = (biggest * biggest * 3 * eps + 2 * _smallest(type_name))[:, None]
    error = np.abs(r["cross"][:, :3].astype(np.longdouble) - want).astype(np.float64)
    assert np.all(error[usual] <= tolerance[usual])
    if n == 4:
        np.testing.assert_array_equal(r["cross"][:, 3], 0)
