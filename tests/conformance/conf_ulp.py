"""Distance in ULPs between device results and a higher-precision reference, with the rules of
the OpenCL 1.2 specification (section 7.4).

A reference is kept as a double-double pair ``(hi, lo)`` of float64 arrays (``hi`` the value
rounded to double, ``lo`` the rest), computed with ``mpmath`` at 128 bits, so the distance of a
``double`` result is measured to far below one of its ULPs. The ULP of a real ``r`` is the
spacing of the format at ``r`` (``2**(floor(log2|r|) - p + 1)``, never below the spacing of
the denormals). The rules:

- a NaN reference wants a NaN (any payload); a NaN result for a non-NaN reference fails;
- an infinite reference, or one that rounds to infinity in the format, wants that infinity; an
  infinite result for a finite reference fails;
- with denormals off (``ftz``), a reference below the smallest normal may come back as a zero
  of either sign, and the result for flushed denormal inputs is accepted as well (pass the
  reference at the flushed inputs as ``alt``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np

REF_PREC = 128
FAIL = np.inf


def _format(dtype: Any) -> tuple[int, int, float]:
    """(precision in bits, minimum normal exponent, largest finite) of float32 or float64."""
    info = np.finfo(dtype)
    return info.nmant + 1, info.minexp, float(info.max)


def reference(fn: Callable[..., Any], *args: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``fn`` (on mpmath numbers, returning an mpf, a float or None for NaN) at every point of
    the float arrays ``args``, as a double-double pair."""
    n = len(args[0])
    hi = np.empty(n)
    lo = np.zeros(n)
    with mpmath.workprec(REF_PREC):
        for i in range(n):
            point = [a[i].item() for a in args]
            try:
                value = fn(*point)
            except (ZeroDivisionError, ValueError, OverflowError):
                value = None
            if value is None:
                hi[i] = np.nan
                continue
            if isinstance(value, mpmath.mpc):
                value = value.real if value.imag == 0 else None
                if value is None:
                    hi[i] = np.nan
                    continue
            v = mpmath.mpf(value)
            if mpmath.isnan(v):
                hi[i] = np.nan
            elif mpmath.isinf(v):
                hi[i] = np.inf if v > 0 else -np.inf
            else:
                h = float(v) if abs(v) < mpmath.mpf(2) ** 1024 else float(mpmath.sign(v)) * np.inf
                hi[i] = h
                if np.isfinite(h):
                    lo[i] = float(v - h)
    return hi, lo


def ulp_error(got: np.ndarray, ref: tuple[np.ndarray, np.ndarray], *, ftz: bool = False,
              alt: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The error of each result of ``got`` (float32 or float64) in ULPs of the reference; 0
    where the special-value rules are met, ``inf`` where they are broken."""
    error = _ulp_error(got, ref, ftz)
    if alt is not None:
        error = np.minimum(error, _ulp_error(got, alt, ftz))
    return error


def _ulp_error(got: np.ndarray, ref: tuple[np.ndarray, np.ndarray], ftz: bool) -> np.ndarray:
    precision, min_exp, largest = _format(got.dtype)
    hi, lo = ref
    g = got.astype(np.float64)
    with np.errstate(all="ignore"):
        magnitude = np.abs(hi)
        exponent = np.frexp(magnitude)[1] - 1
        exponent = np.maximum(exponent, min_exp)
        ulp = np.ldexp(1.0, exponent - precision + 1)
        # the reference rounds to infinity beyond the largest finite value plus half an ulp
        overflow = magnitude >= largest + np.ldexp(1.0, np.frexp(largest)[1] - precision - 1)
        error = np.abs((g - hi) - lo) / ulp
    nan_ref = np.isnan(hi)
    inf_ref = np.isinf(hi) | overflow
    out = np.where(nan_ref, np.where(np.isnan(g), 0.0, FAIL), error)
    want_inf = np.where(hi > 0, np.inf, -np.inf)
    out = np.where(~nan_ref & inf_ref, np.where(g == want_inf, 0.0, FAIL), out)
    out = np.where(~nan_ref & ~inf_ref & (np.isnan(g) | np.isinf(g)), FAIL, out)
    if ftz:
        tiny = ~nan_ref & (magnitude < np.ldexp(1.0, min_exp - 1))
        out = np.where(tiny & (g == 0), 0.0, out)
    return out


def abs_error(got: np.ndarray, ref: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Absolute error of finite results against finite references (the relaxed bounds of
    ``sin``/``cos``/``log`` are absolute on part of their domain); ``inf`` where a NaN or
    infinity appears on one side only."""
    hi, lo = ref
    g = got.astype(np.float64)
    with np.errstate(all="ignore"):
        error = np.abs((g - hi) - lo)
    special = ~np.isfinite(hi) | ~np.isfinite(g)
    same = (np.isnan(hi) & np.isnan(g)) | (hi == g)
    return np.where(special, np.where(same, 0.0, FAIL), error)


def worst(error: np.ndarray, *args: np.ndarray, got: np.ndarray | None = None) -> str:
    """The point of the largest error, for an assertion message."""
    i = int(np.argmax(error))
    point = ", ".join(f"{a[i]!r} ({float(a[i]).hex()})" for a in args)
    result = "" if got is None else f" -> {got[i]!r} ({float(got[i]).hex()})"
    return f"{error[i]:.3g} ulp at ({point}){result}"


def special_values(dtype: Any) -> np.ndarray:
    """Zeros, denormals, normal limits, infinities, NaN, small integers, halves and values
    near pi of both signs."""
    info = np.finfo(dtype)
    tiny_denorm = np.nextafter(dtype(0), dtype(1))
    values = [0.0, np.inf, np.nan, float(tiny_denorm), float(info.tiny),
              float(info.tiny - tiny_denorm), float(info.max), float(info.eps), 0.5, 1.0,
              1.5, 2.0, 3.0, 10.0, 0.25, 0.75, np.pi, np.pi / 2, np.pi / 4, 100.0, 1e10,
              1e30, 88.5, 709.5, 1 - float(info.epsneg), 1 + float(info.eps)]
    magnitudes = np.array(values, dtype=dtype)
    return np.concatenate([magnitudes, -magnitudes])


def sample(dtype: Any, n: int, lo: float, hi: float, seed: int) -> np.ndarray:
    """``n`` points: the special values, random bit patterns (every exponent equally likely),
    uniform points of ``[lo, hi]`` and log-uniform magnitudes within it."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    specials = special_values(dtype.type)
    rest = n - len(specials)
    bits_type = np.uint32 if dtype.itemsize == 4 else np.uint64
    bits = rng.integers(0, np.iinfo(bits_type).max, size=rest // 3, dtype=bits_type,
                        endpoint=True).view(dtype)
    bits = bits[~np.isnan(bits)]
    uniform = rng.uniform(lo, hi, size=rest // 3).astype(dtype)
    top = max(abs(lo), abs(hi), 1e-30)
    exponents = rng.uniform(np.log2(top) - 40, np.log2(top), size=rest - 2 * (rest // 3))
    signs = rng.choice([-1.0, 1.0] if lo < 0 else [1.0], size=len(exponents))
    logs = (signs * np.exp2(exponents)).astype(dtype)
    out = np.concatenate([specials, bits, uniform, logs]).astype(dtype)
    return out[:n] if len(out) >= n else np.resize(out, n)


def flush_denormals(x: np.ndarray) -> np.ndarray:
    """``x`` with denormals replaced by zeros of their sign."""
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros_like(x), x), x).astype(x.dtype)

