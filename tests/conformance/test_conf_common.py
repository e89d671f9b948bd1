"""Conformance, common functions (OpenCL C 1.2 section 6.12.4): clamp, degrees, max, min, mix,
radians, step, smoothstep and sign, for float and double, on vectors (float4, double4) and the
forms with a scalar argument (``clamp(v, s, s)``, ``max(v, s)``, ``mix(v, v, s)``,
``step(s, v)``, ``smoothstep(s, s, v)``), compared with numpy.

Bounds: degrees and radians 2 ulp; clamp, max, min, step and sign exact; mix and smoothstep
are implementation-defined in the specification, and checked against their defining formulas
within a few ulps of the operands.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from conf_ulp import reference, ulp_error, worst

from tests.launch import run

FP64 = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
DTYPES = {"float": np.float32, "double": np.float64}
COUNT = 1024  # vectors of 4
OUTPUTS = ["clamp", "clamp_s", "degrees", "max", "max_s", "min", "min_s", "mix", "mix_s",
           "radians", "step", "step_s", "smoothstep", "smoothstep_s", "sign"]


def _source(T: str) -> str:
    V = f"{T}4"
    lines = {
        "clamp": "clamp(a, lo, hi)", "clamp_s": f"clamp(a, ({T})-1.5, ({T})2.5)",
        "degrees": "degrees(a)", "max": "max(a, b)", "max_s": f"max(a, ({T})0.5)",
        "min": "min(a, b)", "min_s": f"min(a, ({T})0.5)", "mix": "mix(a, b, t)",
        "mix_s": f"mix(a, b, ({T})0.25)", "radians": "radians(a)", "step": "step(b, a)",
        "step_s": f"step(({T})0.5, a)", "smoothstep": "smoothstep(lo, hi, a)",
        "smoothstep_s": f"smoothstep(({T})-1, ({T})2, a)", "sign": "sign(a)",
    }
    stores = "\n".join(f"    vstore4({lines[name]}, {k} * n + i, out);"
                       for k, name in enumerate(OUTPUTS))
    return (FP64 if T == "double" else "") + f"""
__kernel void common(__global const {T} *x, __global const {T} *y, __global const {T} *u,
                     __global {T} *out)
{{
    size_t i = get_global_id(0), n = get_global_size(0);
    {V} a = vload4(i, x), b = vload4(i, y), t = vload4(i, u);
    {V} lo = min(b, t * 4 - 2), hi = max(b, t * 4 - 2);
{stores}
}}
"""


@functools.cache
def _run(type_name: str) -> dict[str, np.ndarray]:
    dtype = DTYPES[type_name]
    rng = np.random.default_rng(4)
    size = 4 * COUNT
    x = rng.uniform(-4, 4, size)
    x[:16] = [0.0, -0.0, 0.5, -1.5, 2.5, 1e30, -1e30, np.inf, -np.inf, 1e-40, -1e-40, 1.0, -1.0,
              3.0, -2.0, 2.0]
    x[16:64] = np.exp2(rng.uniform(-100, 100, 48)) * rng.choice([-1, 1], 48)
    y = rng.uniform(-4, 4, size)
    y[:4] = [0.0, 0.5, 0.5, -1.5]  # equal to x: step's edge, max/min ties
    y[2] = 0.5
    t = rng.uniform(0, 1, size)
    x, y, t = (v.astype(dtype) for v in (x, y, t))
    out = np.zeros(len(OUTPUTS) * size, dtype)
    run(_source(type_name), "common", (COUNT,), None, x, y, t, out)
    result = {name: out[k * size:(k + 1) * size] for k, name in enumerate(OUTPUTS)}
    result.update(x=x, y=y, t=t)
    return result


TYPES = ["float", "double"]


@pytest.mark.parametrize("type_name", TYPES)
def test_clamp_max_min_exact(type_name: str) -> None:
    r = _run(type_name)
    x, y, t = r["x"], r["y"], r["t"]
    lo, hi = np.minimum(y, t * 4 - 2), np.maximum(y, t * 4 - 2)
    np.testing.assert_array_equal(r["clamp"], np.minimum(np.maximum(x, lo), hi))
    np.testing.assert_array_equal(r["clamp_s"], np.clip(x, -1.5, 2.5))
    np.testing.assert_array_equal(r["max"], np.where(x < y, y, x))
    np.testing.assert_array_equal(r["min"], np.where(y < x, y, x))
    np.testing.assert_array_equal(r["max_s"], np.maximum(x, 0.5))
    np.testing.assert_array_equal(r["min_s"], np.minimum(x, 0.5))


@pytest.mark.parametrize("type_name", TYPES)
def test_degrees_radians_within_2_ulp(type_name: str) -> None:
    import mpmath

    r = _run(type_name)
    x = r["x"]
    degrees = ulp_error(r["degrees"], reference(lambda v: v * 180 / mpmath.pi, x))
    assert degrees.max() <= 2, worst(degrees, x, got=r["degrees"])
    radians = ulp_error(r["radians"], reference(lambda v: v * mpmath.pi / 180, x))
    assert radians.max() <= 2, worst(radians, x, got=r["radians"])


@pytest.mark.parametrize("type_name", TYPES)
def test_step_and_sign_exact(type_name: str) -> None:
    r = _run(type_name)
    x, y = r["x"], r["y"]
    np.testing.assert_array_equal(r["step"], np.where(x < y, 0.0, 1.0))
    np.testing.assert_array_equal(r["step_s"], np.where(x < 0.5, 0.0, 1.0))
    want = np.where(x > 0, 1.0, np.where(x < 0, -1.0, x)).astype(x.dtype)
    np.testing.assert_array_equal(r["sign"], want)
    assert np.signbit(r["sign"][1]) and not np.signbit(r["sign"][0]), "sign(-0) is -0"


@pytest.mark.parametrize("type_name", TYPES)
def test_sign_of_nan_is_zero(type_name: str) -> None:
    dtype = DTYPES[type_name]
    x = np.array([np.nan, -np.nan, 1, -1], dtype)
    out = np.full(4, 7, dtype)
    source = (FP64 if type_name == "double" else "") + f"""
__kernel void k(__global const {type_name} *x, __global {type_name} *out)
{{ out[get_global_id(0)] = sign(x[get_global_id(0)]); }}
"""
    run(source, "k", (4,), None, x, out)
    np.testing.assert_array_equal(out, [0, 0, 1, -1])


@pytest.mark.parametrize("type_name", TYPES)
@np.errstate(invalid="ignore")  # the infinite points give NaN in the formulas; not compared
def test_mix_and_smoothstep_formulas(type_name: str) -> None:
    r = _run(type_name)
    x, y, t = (r[k].astype(np.float64) for k in ("x", "y", "t"))
    usual = np.abs(x) < 1e6
    eps = float(np.finfo(DTYPES[type_name]).eps)
    scale = np.maximum(np.abs(x), np.abs(y))
    mix = x + (y - x) * t
    assert np.all(np.abs(r["mix"] - mix)[usual] <= 4 * eps * scale[usual])
    mix_s = x + (y - x) * 0.25
    assert np.all(np.abs(r["mix_s"] - mix_s)[usual] <= 4 * eps * scale[usual])
    lo, hi = np.minimum(y, t * 4 - 2), np.maximum(y, t * 4 - 2)
    proper = usual & (hi - lo > 1e-3)
    s = np.clip((x - lo) / (hi - lo), 0, 1)
    smooth = s * s * (3 - 2 * s)
    assert np.all(np.abs(r["smoothstep"] - smooth)[proper] <= 64 * eps)
    s = np.clip((x + 1) / 3, 0, 1)
    assert np.all(np.abs(r["smoothstep_s"] - s * s * (3 - 2 * s))[usual] <= 64 * eps)
    assert np.all((r["smoothstep"] >= 0) & (r["smoothstep"] <= 1) | ~proper)
