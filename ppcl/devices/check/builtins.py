"""The builtins the checking device runs, in numpy, by OpenCL name (the front end resolved
the overload and converted the arguments; ``Call.type`` and the argument types say which).

A builtin missing here stops the launch with an error naming it (``Unsupported``), never a
silent skip.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import PointerType, ScalarType, Type, VectorType, scalar_of
from ppcl.devices.check import values as val
from ppcl.devices.check.values import Ptr, Unsupported

Impl = Callable[[Any, ir.Call, np.ndarray], Any]
TABLE: dict[str, Impl] = {}


def _args(interp: Any, call: ir.Call, mask: np.ndarray) -> list[Any]:
    """The argument values, scalars shaped to combine with vector arguments."""
    values = [interp.eval(a, mask) for a in call.args]
    if any(isinstance(a.type, VectorType) for a in call.args):
        values = [v[:, None] if isinstance(v, np.ndarray) and v.ndim == 1 else v
                  for v in values]
    return values


def _result(value: Any, t: Type) -> Any:
    dtype = val.dtype_of(t)
    value = np.asarray(value)
    if isinstance(t, VectorType) and value.ndim == 2 and value.shape[1] == 1:
        value = np.repeat(value, t.width, axis=1)
    return value.astype(dtype, copy=False)


def _elementwise(fn: Callable[..., Any]) -> Impl:
    def impl(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
        args = _args(interp, call, mask)
        with np.errstate(all="ignore"):
            return _result(fn(*args), call.type)
    return impl


def _float_math(fn: Callable[..., Any]) -> Impl:
    """A float function computed in double and rounded to the argument type (within the
    accuracy OpenCL allows for every function of the table)."""
    def impl(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
        args = _args(interp, call, mask)
        with np.errstate(all="ignore"):
            wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in args]
            return _result(fn(*wide), call.type)
    return impl


_MATH: dict[str, Callable[..., Any]] = {
    "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh,
    "atan": np.arctan, "atanh": np.arctanh, "cbrt": np.cbrt, "ceil": np.ceil, "cos": np.cos,
    "cosh": np.cosh, "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10.0, x),
    "expm1": np.expm1, "fabs": np.fabs, "floor": np.floor, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "rint": np.rint, "round": lambda x: np.copysign(
        np.floor(np.abs(x) + 0.5), x), "rsqrt": lambda x: 1.0 / np.sqrt(x), "sin": np.sin,
    "sinh": np.sinh, "sqrt": np.sqrt, "tan": np.tan, "tanh": np.tanh, "trunc": np.trunc,
    "acospi": lambda x: np.arccos(x) / np.pi, "asinpi": lambda x: np.arcsin(x) / np.pi,
    "atanpi": lambda x: np.arctan(x) / np.pi, "cospi": lambda x: _cospi(x),
    "sinpi": lambda x: _sinpi(x), "tanpi": lambda x: _tanpi(x),
    "atan2": np.arctan2, "atan2pi": lambda y, x: np.arctan2(y, x) / np.pi,
    "copysign": np.copysign,
    "fdim": lambda x, y: np.where(np.isnan(x) | np.isnan(y), np.nan, np.where(x > y, x - y, 0.0)),
    "fmod": np.fmod, "hypot": np.hypot, "pow": np.power, "powr": lambda x, y: _powr(x, y),
    "fmax": np.fmax, "fmin": np.fmin,
    "mad": lambda a, b, c: a * b + c, "recip": lambda x: 1.0 / x,
    "divide": lambda x, y: x / y,
    "maxmag": lambda x, y: np.where(np.abs(x) > np.abs(y), x,
                                    np.where(np.abs(y) > np.abs(x), y, np.fmax(x, y))),
    "minmag": lambda x, y: np.where(np.abs(x) < np.abs(y), x,
                                    np.where(np.abs(y) < np.abs(x), y, np.fmin(x, y))),
    "pown": lambda x, n: np.power(x, n.astype(np.float64)),
    "rootn": lambda x, n: _rootn(x, n),
    "ldexp": lambda x, n: np.ldexp(x, n.astype(np.int64)),
    "degrees": np.degrees, "radians": np.radians,
    "sign": lambda x: np.where(np.isnan(x), 0.0, np.where(x == 0, x, np.sign(x))),  # keeps -0
    "mix": lambda x, y, a: x + (y - x) * a,
    "step": lambda edge, x: np.where(x < edge, 0.0, 1.0),
    "smoothstep": lambda e0, e1, x: _smoothstep(e0, e1, x),
}


def _sinpi(x: Any) -> Any:
    """sin(pi x), reduced exactly by the period 2 first; a zero of x's sign at the integers,
    where sin of the rounded pi x is not zero (section 7.5.1)."""
    r = np.fmod(x, 2.0)
    return np.where(r == np.trunc(r), np.copysign(0.0, x), np.sin(np.pi * r))


def _cospi(x: Any) -> Any:
    """cos(pi x), reduced exactly by the period 2 first; +0 at n + 1/2 (section 7.5.1)."""
    r = np.fmod(np.abs(x), 2.0)
    return np.where(r - np.floor(r) == 0.5, 0.0, np.cos(np.pi * r))


def _tanpi(x: Any) -> Any:
    """tan(pi x), reduced exactly by the period 1 first. Section 7.5.1: at an integer n a
    zero, of n's sign for even n and of the other sign for odd n; at n + 1/2, +inf for even
    n and -inf for odd n."""
    r = np.fmod(x, 1.0)
    odd_whole = np.fmod(x, 2.0) != 0
    odd_half = np.fmod(x - 0.5, 2.0) != 0
    at_whole = np.copysign(0.0, np.where(odd_whole, -x, x))
    at_half = np.where(odd_half, -np.inf, np.inf)
    return np.where(r == 0, at_whole, np.where(np.abs(r) == 0.5, at_half, np.tan(np.pi * r)))


def _powr(x: Any, y: Any) -> Any:
    """pow for x >= 0 only (section 7.5.1): NaN for a negative x, for 0 ** 0, inf ** 0,
    1 ** inf and a NaN operand; a zero of either sign is +0 (powr(-0, -1) is +inf)."""
    r = np.power(np.where(x == 0, 0.0, x), y)
    undefined = ((x < 0) | ((x == 0) & (y == 0)) | (np.isposinf(x) & (y == 0))
                 | ((x == 1) & np.isinf(y)) | np.isnan(x) | np.isnan(y))
    return np.where(undefined, np.nan, r)


def _rootn(x: Any, n: Any) -> Any:
    """The n-th root: real for a negative x when n is odd (rootn(-8, 3) is -2), with x's
    sign; NaN for n = 0 and for a negative x and even n (section 7.5.1)."""
    wide = np.longdouble  # 1/n rounded to double would cost a double root tens of ulp
    n = n.astype(wide)
    odd = np.fmod(n, 2.0) != 0
    magnitude = np.power(np.abs(x).astype(wide), 1.0 / n).astype(np.float64)
    root = np.copysign(magnitude, np.where(odd, x, 1.0))
    return np.where((n == 0) | ((x < 0) & ~odd), np.nan, root)


def _smoothstep(e0: Any, e1: Any, x: Any) -> Any:
    t = np.clip((x - e0) / (e1 - e0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


for _name, _fn in _MATH.items():
    TABLE[_name] = _float_math(_fn)
    if _name in ("cos", "exp", "exp2", "exp10", "log", "log2", "log10", "recip", "rsqrt",
                 "sin", "sqrt", "tan", "divide", "powr"):
        TABLE["native_" + _name] = TABLE[_name]
        TABLE["half_" + _name] = TABLE[_name]


def _minmax(fn: Callable[..., Any]) -> Impl:
    def impl(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
        args = _args(interp, call, mask)
        elem = scalar_of(call.type)
        if elem is not None and elem.is_float:
            return _result(fn(*[a.astype(np.float64) for a in args]), call.type)
        return _result(fn(*args), call.type)
    return impl


# the next float of the argument's own type (its double neighbour would round back to x)
TABLE["nextafter"] = _elementwise(np.nextafter)
TABLE["max"] = _minmax(np.maximum)
TABLE["min"] = _minmax(np.minimum)
# float clamp is fmin(fmax(x, lo), hi) (OpenCL 1.2, 6.12.4): a NaN x gives lo, not NaN
TABLE["clamp"] = _minmax(lambda x, lo, hi: np.fmin(np.fmax(x, lo), hi))


def _abs(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    (x,) = _args(interp, call, mask)
    unsigned = val.dtype_of(call.type)
    return np.abs(x.astype(np.int64)).astype(unsigned) if x.dtype.itemsize < 8 else \
        np.where(x < 0, (~x.view(unsigned)) + 1, x.view(unsigned))


TABLE["abs"] = _abs
TABLE["abs_diff"] = _elementwise(
    lambda x, y: np.where(x > y, x - y, y - x))
TABLE["mul24"] = _elementwise(lambda x, y: x * y)
TABLE["mad24"] = _elementwise(lambda x, y, z: x * y + z)
TABLE["hadd"] = _elementwise(lambda x, y: (x >> 1) + (y >> 1) + (x & y & 1))
TABLE["rhadd"] = _elementwise(lambda x, y: (x >> 1) + (y >> 1) + ((x | y) & 1))


def _popcount(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    (x,) = _args(interp, call, mask)
    # the bits of the two's complement pattern: numpy counts those of |x| for a signed x
    return _result(np.bitwise_count(x.view(np.dtype(f"u{x.dtype.itemsize}"))), call.type)


TABLE["popcount"] = _popcount


def _clz(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    (x,) = _args(interp, call, mask)
    bits = x.dtype.itemsize * 8
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    count = np.full(u.shape, bits, np.int64)
    for b in range(bits):
        count = np.where((u >> np.uint64(b)) & np.uint64(1), bits - 1 - b, count)
    return _result(count, call.type)


TABLE["clz"] = _clz


def _rotate(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    x, n = _args(interp, call, mask)
    bits = x.dtype.itemsize * 8
    udt = np.dtype(f"u{x.dtype.itemsize}")
    u = x.view(udt)
    s = (n.astype(np.int64) % bits).astype(udt)
    left = u << s
    right = np.where(s == 0, 0, u >> ((bits - s.astype(np.int64)) % bits).astype(udt))
    return (left | right).astype(udt).view(x.dtype)


TABLE["rotate"] = _rotate


def _saturating(op: Callable[[Any, Any], Any]) -> Impl:
    def impl(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
        x, y = _args(interp, call, mask)
        info = np.iinfo(x.dtype)
        if x.dtype.itemsize == 8:
            wide = op(x.astype(object), y.astype(object))
            return np.array(np.clip(wide, info.min, info.max), dtype=x.dtype)
        return _result(np.clip(op(x.astype(np.int64), y.astype(np.int64)), info.min, info.max),
                       call.type)
    return impl


TABLE["add_sat"] = _saturating(lambda a, b: a + b)
TABLE["sub_sat"] = _saturating(lambda a, b: a - b)


def _mul_hi(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    x, y = _args(interp, call, mask)
    bits = x.dtype.itemsize * 8
    if bits == 64:
        wide = (x.astype(object) * y.astype(object)) >> 64
        return np.array(wide, dtype=object).astype(x.dtype)
    return _result((x.astype(np.int64) * y.astype(np.int64)) >> bits, call.type)


TABLE["mul_hi"] = _mul_hi


def _mad_hi(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    hi = _mul_hi(interp, ir.Call(call.type, "mul_hi", call.args[:2], "mul_hi", loc=call.loc),
                 mask)
    c = interp.eval(call.args[2], mask)
    with np.errstate(all="ignore"):
        return (hi + c).astype(hi.dtype)


def _mad_sat(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    x, y, z = _args(interp, call, mask)
    info = np.iinfo(x.dtype)
    wide = x.astype(object) * y.astype(object) + z.astype(object)
    return np.array(np.clip(wide, int(info.min), int(info.max))).astype(x.dtype)


TABLE["mad_hi"] = _mad_hi
TABLE["mad_sat"] = _mad_sat


def _shuffle(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    values = [interp.eval(a, mask) for a in call.args]
    *sources, selector = values
    table = np.concatenate(sources, axis=1)
    width = sources[0].shape[1]
    count = len(sources) * (4 if width == 3 else width)
    picks = (selector.astype(np.int64) & (count - 1)) % table.shape[1]
    return np.take_along_axis(table, picks, axis=1)


TABLE["shuffle"] = _shuffle
TABLE["shuffle2"] = _shuffle


def _upsample(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    hi, lo = _args(interp, call, mask)
    bits = lo.dtype.itemsize * 8
    dtype = val.dtype_of(call.type)
    return (hi.astype(dtype) << dtype.type(bits)) | lo.astype(dtype)


TABLE["upsample"] = _upsample


# ---------------------------------------------------------------- geometric


def _dot_of(a: Any, b: Any) -> Any:
    if a.ndim == 1:
        return a * b
    return (a.astype(np.float64) * b).sum(axis=1)


def _length(a: Any, hypot: bool = False) -> Any:
    """sqrt of the sum of squares, scaled by a power of two first so that no square of a
    double overflows or underflows, as the CPU device's length does. ``hypot`` (its double
    length): infinite with an infinite element even beside a NaN, as C's hypot; its float
    length sums the squares in double, where the NaN wins."""
    if a.ndim == 1:
        return np.abs(a)
    scaled, scale = _scaled(a)
    norm = scale * np.sqrt((scaled ** 2).sum(axis=1))
    if not hypot:
        return norm
    return np.where(np.isinf(a).any(axis=1), np.inf, norm)


def _scaled(a: Any) -> tuple[Any, Any]:
    """The rows of ``a`` divided by a power of two near their largest magnitude (exact), and
    that power: squares of the scaled elements neither overflow nor underflow."""
    largest = np.abs(a).max(axis=1)
    _, exponent = np.frexp(np.where(np.isfinite(largest) & (largest > 0), largest, 1.0))
    scale = np.ldexp(1.0, exponent - 1)
    return a / scale[:, None], scale


def _geometric(fn: Callable[..., Any]) -> Impl:
    """A geometric function computed in double, told whether its elements are doubles."""
    def impl(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
        args = _args(interp, call, mask)
        double = val.dtype_of(call.args[0].type) == np.float64
        with np.errstate(all="ignore"):
            return _result(fn(*[a.astype(np.float64) for a in args], double), call.type)
    return impl


def _normalize(a: Any) -> Any:
    """``a`` over its length (section 6.12.5): a zero vector stays zero, any NaN element
    makes every element NaN, and with an infinite element the infinite elements become
    +-1 and the others 0 * v[i] before the division."""
    if a.ndim == 1:
        return np.where((a == 0) | np.isnan(a), a, np.copysign(1.0, a))
    infinite = np.isinf(a).any(axis=1, keepdims=True)
    a = np.where(infinite, np.where(np.isinf(a), np.copysign(1.0, a), 0.0 * a), a)
    scaled, _ = _scaled(a)
    norm = np.sqrt((scaled ** 2).sum(axis=1))[:, None]
    unit = np.where(norm == 0, a, scaled / np.where(norm == 0, 1, norm))
    return np.where(np.isnan(a).any(axis=1, keepdims=True), np.nan, unit)


TABLE["dot"] = _elementwise(_dot_of)
TABLE["length"] = _geometric(_length)
TABLE["fast_length"] = TABLE["length"]
TABLE["distance"] = _geometric(lambda a, b, double: _length(a - b, double))
TABLE["fast_distance"] = TABLE["distance"]


TABLE["normalize"] = _float_math(_normalize)
TABLE["fast_normalize"] = TABLE["normalize"]


def _cross(a: Any, b: Any) -> Any:
    out = np.zeros_like(a)
    out[:, :3] = np.cross(a[:, :3], b[:, :3])
    return out


TABLE["cross"] = _float_math(_cross)


# ---------------------------------------------------------------- relational


def _relation(fn: Callable[..., Any]) -> Impl:
    def impl(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
        args = _args(interp, call, mask)
        with np.errstate(all="ignore"):
            return val.vector_truth(fn(*args), call.type)
    return impl


_RELATIONS: dict[str, Callable[..., Any]] = {
    "isequal": np.equal, "isnotequal": np.not_equal, "isgreater": np.greater,
    "isgreaterequal": np.greater_equal, "isless": np.less, "islessequal": np.less_equal,
    "isordered": lambda x, y: ~(np.isnan(x) | np.isnan(y)),
    "isunordered": lambda x, y: np.isnan(x) | np.isnan(y),
    "isfinite": np.isfinite, "isinf": np.isinf, "isnan": np.isnan, "signbit": np.signbit,
    "isnormal": lambda x: np.isfinite(x) & (np.abs(x) >= np.finfo(x.dtype).tiny),
}
for _name, _relation_fn in _RELATIONS.items():
    TABLE[_name] = _relation(_relation_fn)


def _any_all(reduce: Callable[..., Any]) -> Impl:
    def impl(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
        (x,) = [interp.eval(a, mask) for a in call.args]
        top = x < 0
        return reduce(top, axis=1).astype(np.int32) if top.ndim == 2 else top.astype(np.int32)
    return impl


TABLE["any"] = _any_all(np.any)
TABLE["all"] = _any_all(np.all)


def _select(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    a, b, c = _args(interp, call, mask)
    if isinstance(call.type, VectorType):
        chosen = c < 0 if c.dtype.kind == "i" else (c >> (c.dtype.itemsize * 8 - 1)) != 0
    else:
        chosen = c != 0
    return _result(np.where(chosen, b, a), call.type)


TABLE["select"] = _select


def _bitselect(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    a, b, c = _args(interp, call, mask)
    dtype = val.dtype_of(call.type)
    bits = np.dtype(f"u{dtype.itemsize}")
    a, b, c = (np.ascontiguousarray(x.astype(dtype)).view(bits) for x in (a, b, c))
    return ((a & ~c) | (b & c)).view(dtype)


TABLE["bitselect"] = _bitselect


# ---------------------------------------------------------------- work-items


def _dimension(interp: Any, call: ir.Call, mask: np.ndarray) -> np.ndarray:
    dim = interp.eval(call.args[0], mask).astype(np.int64)
    return dim


def _per_lane(table: str, default: int) -> Impl:
    def impl(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
        lanes = interp.lanes
        dim = _dimension(interp, call, mask)
        source = getattr(lanes, table)
        padded = np.concatenate([source, np.full((lanes.count, 1), default, np.int64)], axis=1)
        return padded[lanes.index, np.where((dim >= 0) & (dim < 3), dim, 3)].astype(np.uint64)
    return impl


def _per_launch(field: str, default: int) -> Impl:
    def impl(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
        nd = interp.lanes.ndrange
        if field == "num_groups":
            values = nd.num_groups
        else:
            values = getattr(nd, field)
        dim = _dimension(interp, call, mask)
        table = np.array(list(values) + [default], np.uint64)
        return table[np.where((dim >= 0) & (dim < 3), dim, 3)]
    return impl


TABLE["get_global_id"] = _per_lane("global_id", 0)
TABLE["get_local_id"] = _per_lane("local_id", 0)
TABLE["get_group_id"] = _per_lane("group_id", 0)
TABLE["get_global_size"] = _per_launch("global_size", 1)
TABLE["get_local_size"] = _per_launch("local_size", 1)
TABLE["get_num_groups"] = _per_launch("num_groups", 1)
TABLE["get_global_offset"] = _per_launch("global_offset", 0)


def _work_dim(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    return np.full(len(mask), interp.lanes.ndrange.work_dim, np.uint32)


TABLE["get_work_dim"] = _work_dim


def _barrier(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    interp.barrier(call.loc, mask)
    return None


TABLE["barrier"] = _barrier
TABLE["work_group_barrier"] = _barrier


def _fence(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    return None


for _name in ("mem_fence", "read_mem_fence", "write_mem_fence"):
    TABLE[_name] = _fence


# ---------------------------------------------------------------- conversions


def _rounding_mode(name: str) -> str:
    """``"_rte"``, ``"_rtz"``, ``"_rtp"``, ``"_rtn"`` or ``""`` (the default) from a builtin name."""
    return next((m for m in ("_rte", "_rtz", "_rtp", "_rtn") if name.endswith(m)), "")


def _exceeds(rounded: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where ``rounded`` is above and where below ``x``, compared exactly (a 64-bit integer
    does not convert to double exactly, so integers compare as Python integers; an integer
    rounds to a finite float of every width OpenCL has)."""
    if x.dtype.kind == "f":
        wide = rounded.astype(np.float64)
        return wide > x, wide < x
    exact = np.array([int(r) for r in rounded.ravel()], dtype=object).reshape(rounded.shape)
    ints = x.astype(object)
    return (exact > ints).astype(bool), (exact < ints).astype(bool)


def round_to_float(x: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    """Integer or float values rounded to the float ``dtype`` with an OpenCL rounding mode:
    numpy rounds to nearest; a directed mode steps the result one ulp back where it lies on
    the wrong side of the exact value."""
    with np.errstate(all="ignore"):
        y = x.astype(dtype)
        if mode in ("", "_rte"):
            return y
        above, below = _exceeds(y, x)
        if mode == "_rtz":
            step, toward = np.where(x > 0, above, below), 0.0
        elif mode == "_rtp":
            step, toward = below, np.inf
        else:
            step, toward = above, -np.inf
        return np.where(step, np.nextafter(y, dtype.type(toward)), y).astype(dtype)


def _convert(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    (x,) = [interp.eval(a, mask) for a in call.args]
    source = call.args[0].type
    target = call.type
    name = call.name
    src = scalar_of(source)
    dst = scalar_of(target)
    assert src is not None and dst is not None
    if src.is_float and dst.is_integer:
        integral = {"_rte": np.rint, "_rtz": np.trunc, "_rtp": np.ceil, "_rtn": np.floor}
        x = integral[_rounding_mode(name) or "_rtz"](x)
    if dst.is_float and src != dst:
        x = round_to_float(x, val.dtype_of(target), _rounding_mode(name))
    if "_sat" in name and dst.is_integer:
        info = np.iinfo(val.DTYPES[dst.name])
        if src.is_float:
            x = np.nan_to_num(x.astype(np.float64), nan=0.0)
            x = np.clip(x, float(info.min), float(info.max))
            return val.float_to_int(x, val.DTYPES[dst.name])
        lo = max(int(info.min), int(np.iinfo(x.dtype).min))
        hi = min(int(info.max), int(np.iinfo(x.dtype).max))
        x = np.clip(x, x.dtype.type(lo), x.dtype.type(hi))
    return val.convert(x, source, target)


def _reinterpret(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    (x,) = [interp.eval(a, mask) for a in call.args]
    dtype = val.dtype_of(call.type)
    raw = np.ascontiguousarray(x)
    if isinstance(call.args[0].type, VectorType) and call.args[0].type.width == 3:
        raw = np.concatenate([raw, np.zeros((len(raw), 1), raw.dtype)], axis=1)
    out = raw.view(dtype).reshape(len(raw), -1)
    if isinstance(call.type, VectorType):
        return np.ascontiguousarray(out[:, :call.type.width])
    return out.reshape(len(raw))


# ---------------------------------------------------------------- vector data


def _vload(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    offset = interp.eval(call.args[0], mask).astype(np.int64)
    ptr = interp.eval(call.args[1], mask)
    t = call.type
    assert isinstance(t, VectorType) and isinstance(ptr, Ptr)
    esize = t.elem.size
    at = Ptr(ptr.region, ptr.offset + offset * t.width * esize)
    return _load_elements(interp, at, t.elem, t.width, mask, call.loc)


def _load_elements(interp: Any, ptr: Ptr, elem: ScalarType, width: int, mask: np.ndarray,
                   loc: Any) -> Any:
    cols = [interp.load(Ptr(ptr.region, ptr.offset + i * elem.size), elem, mask, loc)
            for i in range(width)]
    return np.stack(cols, axis=1)


def _vstore(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    data = interp.eval(call.args[0], mask)
    offset = interp.eval(call.args[1], mask).astype(np.int64)
    ptr = interp.eval(call.args[2], mask)
    t = call.args[0].type
    assert isinstance(t, VectorType) and isinstance(ptr, Ptr)
    esize = t.elem.size
    base = ptr.offset + offset * t.width * esize
    for i in range(t.width):
        interp.store(Ptr(ptr.region, base + i * esize), t.elem, data[:, i], mask, call.loc)
    return None


# ---------------------------------------------------------------- atomics


def _atomic(op: str) -> Impl:
    """An atomic read-modify-write: the lanes go in lane order (their return values are the
    old values that order gives), and are exempt from race tracking among themselves."""
    def impl(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
        ptr = interp.eval(call.args[0], mask)
        operands = [interp.eval(a, mask) for a in call.args[1:]]
        t = call.args[0].type
        assert isinstance(t, PointerType) and isinstance(ptr, Ptr)
        return interp.atomic(ptr, t.pointee, op, operands, mask, call.loc)
    return impl


ATOMIC_OPS = ("add", "sub", "xchg", "inc", "dec", "min", "max", "and", "or", "xor",
              "cmpxchg")
for _op in ATOMIC_OPS:
    TABLE["atomic_" + _op] = _atomic(_op)
    TABLE["atom_" + _op] = _atomic(_op)


# ---------------------------------------------------------------- out-pointer math


def _with_output(compute: Callable[[Any], tuple[Any, Any]]) -> Impl:
    """A math builtin returning one value and storing another through its pointer."""
    def impl(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
        x = interp.eval(call.args[0], mask)
        ptr = interp.eval(call.args[-1], mask)
        pointer = call.args[-1].type
        assert isinstance(pointer, PointerType) and isinstance(ptr, Ptr)
        with np.errstate(all="ignore"):
            result, stored = compute(x)
        interp.store(ptr, pointer.pointee, np.asarray(stored).astype(
            val.dtype_of(pointer.pointee)), mask, call.loc)
        return _result(result, call.type)
    return impl


def _fract(x: Any) -> tuple[Any, Any]:
    """fmin(x - floor(x), the float below 1); a zero or an infinity gives a zero of its sign
    (OpenCL 1.2, 7.5.1: fract(-0) and fract(-inf) are -0)."""
    floor = np.floor(x)
    top = np.nextafter(x.dtype.type(1), x.dtype.type(0))
    signed_zero = (x == 0) | np.isinf(x)
    return np.where(signed_zero, np.copysign(x.dtype.type(0), x),
                    np.minimum(x - floor, top)), floor


TABLE["sincos"] = _with_output(lambda x: (np.sin(x.astype(np.float64)),
                                          np.cos(x.astype(np.float64))))
TABLE["fract"] = _with_output(_fract)
TABLE["modf"] = _with_output(np.modf)  # C's modf: the fraction keeps the sign of x
TABLE["frexp"] = _with_output(lambda x: np.frexp(x))


def _per_element(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A Python ``math`` function over arrays; a domain or range error gives NaN."""
    def safe(*args: float) -> float:
        try:
            return fn(*args)
        except (ValueError, OverflowError):
            return math.nan
    return np.vectorize(safe, otypes=[np.float64])


def _tgamma(x: float) -> float:
    if math.isinf(x):
        return x if x > 0 else math.nan
    if x == 0:
        return math.copysign(math.inf, x)
    if x < 0 and x == math.floor(x):
        return math.nan
    try:
        return math.gamma(x)
    except OverflowError:  # beyond double: gamma's sign alternates below zero
        return math.inf if x > 0 or math.floor(x) % 2 else 0.0


def _lgamma(x: float) -> float:
    if math.isinf(x):
        return math.inf
    if x <= 0 and x == math.floor(x):
        return math.inf
    try:
        return math.lgamma(x)
    except OverflowError:
        return math.inf


def _gamma_sign(x: Any) -> Any:
    """lgamma_r's sign: that of gamma(x) (-1 for -0), and 1 at the negative poles, for NaN
    and for infinities (glibc's choice, which the CPU device's lgamma_r makes too)."""
    with np.errstate(invalid="ignore"):
        between_poles = (x < 0) & np.isfinite(x) & (x != np.floor(x)) & (np.floor(x) % 2 == 1)
    negative = between_poles | ((x == 0) & np.signbit(x))
    return np.where(negative, -1, 1).astype(np.int32)


def _logb(x: Any) -> Any:
    _, exponent = np.frexp(x)
    finite = np.where(x == 0, -np.inf, (exponent - 1).astype(x.dtype))
    return np.where(np.isfinite(x), finite, np.abs(x))


def _ilogb(x: Any) -> Any:
    """FP_ILOGB0 (INT_MIN) for 0, FP_ILOGBNAN (INT_MAX) for NaN and INT_MAX for infinities."""
    _, exponent = np.frexp(np.where(np.isfinite(x), x, 1))
    info = np.iinfo(np.int32)
    return np.where(x == 0, info.min, np.where(np.isfinite(x), exponent - 1, info.max))


def _nan(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    (code,) = [interp.eval(a, mask) for a in call.args]
    if code.dtype.itemsize == 4:
        return (code.astype(np.uint32) | np.uint32(0x7FC00000)).view(np.float32)
    return (code.astype(np.uint64) | np.uint64(0x7FF8000000000000)).view(np.float64)


def _remquo_one(x: float, y: float) -> tuple[float, int]:
    """C's remquo: the remainder, and the sign and low 7 bits of the quotient rounded to
    nearest even (exact, through fractions)."""
    if not (math.isfinite(x) and y != 0) or math.isnan(y):
        return math.nan, 0
    if math.isinf(y):
        return x, 0
    quotient = Fraction(x) / Fraction(y)
    n = round(quotient)
    bits = (abs(n) & 127) * (1 if quotient >= 0 else -1)
    return math.remainder(x, y), bits


def _remquo(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    x, y = [interp.eval(a, mask) for a in call.args[:2]]
    ptr = interp.eval(call.args[2], mask)
    pointer = call.args[2].type
    assert isinstance(pointer, PointerType) and isinstance(ptr, Ptr)
    pairs = [_remquo_one(float(a), float(b)) for a, b in zip(x.ravel(), y.ravel())]
    rem = np.array([r for r, _ in pairs], np.float64).reshape(x.shape)
    quo = np.array([q for _, q in pairs], np.int32).reshape(x.shape)
    interp.store(ptr, pointer.pointee, quo, mask, call.loc)
    return _result(rem, call.type)


def _two_sum(x: Any, y: Any) -> tuple[Any, Any]:
    """Knuth's TwoSum: s = x + y rounded, and the error, s + error == x + y exactly."""
    s = x + y
    back = s - x
    return s, (x - (s - back)) + (y - back)


def _two_product(x: Any, y: Any) -> tuple[Any, Any]:
    """Dekker's product of doubles: p = x * y rounded, and the error, exact while neither
    the operands' split overflows nor the error underflows."""
    def split(v: Any) -> tuple[Any, Any]:
        t = v * 134217729.0  # 2**27 + 1
        high = t - (t - v)
        return high, v - high
    p = x * y
    xh, xl = split(x)
    yh, yl = split(y)
    return p, ((xh * yh - p) + xh * yl + xl * yh) + xl * yl


def _odd_sum(x: Any, y: Any) -> Any:
    """x + y in double rounded to odd: an inexact sum takes the neighbour whose last bit is
    1, so a later rounding to nearest at fewer bits is the one of the exact sum."""
    s, error = _two_sum(x, y)
    even = (s.view(np.int64) & 1) == 0
    toward = np.where(error > 0, np.inf, -np.inf)
    return np.where((error != 0) & even, np.nextafter(s, toward), s)


def _fma_exact(x: float, y: float, z: float) -> float:
    try:
        return float(Fraction(x) * Fraction(y) + Fraction(z))
    except OverflowError:
        return math.copysign(math.inf, x * y)


def _fma(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    """fma rounds a * b + c once (0 ulp in OpenCL), where a * b + c in numpy rounds twice.
    A float product is exact in double, and the double sum rounded to odd then to float is
    the exact sum rounded (Boldo and Melquiond); a double fma adds Dekker's product and its
    error the same way, with fractions where that could overflow or underflow. Zeros and
    non-finite operands take IEEE arithmetic, which is exact there."""
    a, b, c = np.broadcast_arrays(*_args(interp, call, mask))
    with np.errstate(all="ignore"):
        plain = a * b + c
        finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
        simple = ~finite | (a == 0) | (b == 0) | (c == 0)
        if a.dtype == np.float32:
            wide = [v.astype(np.float64) for v in (a, b, c)]
            fused = _odd_sum(wide[0] * wide[1], wide[2]).astype(np.float32)
            return _result(np.where(simple, plain, fused), call.type)
        high, low = _two_product(a, b)
        head, tail = _two_sum(c, high)
        fused = head + _odd_sum(tail, low)
        big, tiny = 2.0 ** 995, 2.0 ** -900
        extreme = ~simple & ((np.abs(a) > big) | (np.abs(b) > big) | (np.abs(c) > big)
                             | (np.abs(high) > big) | (np.abs(high) < tiny))
        out = np.where(simple, plain, fused)
        for index in zip(*np.nonzero(extreme)):
            out[index] = _fma_exact(float(a[index]), float(b[index]), float(c[index]))
    return _result(out, call.type)


TABLE["fma"] = _fma
TABLE["erf"] = _float_math(_per_element(math.erf))
TABLE["erfc"] = _float_math(_per_element(math.erfc))
TABLE["tgamma"] = _float_math(_per_element(_tgamma))
TABLE["lgamma"] = _float_math(_per_element(_lgamma))
TABLE["lgamma_r"] = _with_output(lambda x: (_per_element(_lgamma)(x.astype(np.float64)),
                                            _gamma_sign(x)))
TABLE["remainder"] = _float_math(_per_element(math.remainder))
TABLE["logb"] = _elementwise(_logb)
TABLE["ilogb"] = _elementwise(_ilogb)
TABLE["nan"] = _nan
TABLE["remquo"] = _remquo
TABLE["islessgreater"] = _relation(lambda x, y: (x < y) | (x > y))


# ---------------------------------------------------------------- half storage


def _vload_half(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    from ppcl.compiler.ir.types import USHORT

    offset = interp.eval(call.args[0], mask).astype(np.int64)
    ptr = interp.eval(call.args[1], mask)
    assert isinstance(ptr, Ptr)
    width = call.type.width if isinstance(call.type, VectorType) else 1
    step = (4 if width == 3 and call.name.startswith("vloada") else width) * 2
    base = ptr.offset + offset * step
    cols = [interp.load(Ptr(ptr.region, base + 2 * i), USHORT, mask, call.loc)
            for i in range(width)]
    halves = np.stack(cols, axis=1).view(np.float16).astype(np.float32)
    return halves[:, 0] if width == 1 else halves


def to_half(x: Any, mode: str) -> np.ndarray:
    """Float or double values rounded to half with an OpenCL rounding mode."""
    return round_to_float(np.asarray(x, np.float64), np.dtype(np.float16), mode)


def _vstore_half(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    from ppcl.compiler.ir.types import USHORT

    data = interp.eval(call.args[0], mask)
    offset = interp.eval(call.args[1], mask).astype(np.int64)
    ptr = interp.eval(call.args[2], mask)
    assert isinstance(ptr, Ptr)
    halves = to_half(data, _rounding_mode(call.name)).view(np.uint16)
    if halves.ndim == 1:
        halves = halves[:, None]
    width = halves.shape[1]
    step = (4 if width == 3 and call.name.startswith("vstorea") else width) * 2
    base = ptr.offset + offset * step
    for i in range(width):
        interp.store(Ptr(ptr.region, base + 2 * i), USHORT, halves[:, i], mask, call.loc)
    return None


# ---------------------------------------------------------------- async copies


def _async_copy(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    """``async_work_group_(strided_)copy``: every work-item of a group passes the same
    arguments; each group's copy is made by its work-items, element k by the k-th (mod the
    group size), and is complete at ``wait_group_events`` (which ends the barrier interval)."""
    strided = call.name.endswith("strided_copy")
    dst = interp.eval(call.args[0], mask)
    src = interp.eval(call.args[1], mask)
    count = interp.eval(call.args[2], mask)
    stride = interp.eval(call.args[3], mask) if strided else None
    target = call.args[0].type
    assert isinstance(target, PointerType) and isinstance(dst, Ptr) and isinstance(src, Ptr)
    from_global = target.space.name == "LOCAL"
    size = target.pointee.size
    lanes = interp.lanes
    n = len(mask)
    for group in np.unique(lanes.slot[mask]):
        members = np.nonzero(mask & (lanes.slot == group))[0]
        first = int(members[0])
        total = int(count[first])
        step = int(stride[first]) if stride is not None else 1
        dst_region = dst.region if isinstance(dst.region, int) else int(dst.region[first])
        src_region = src.region if isinstance(src.region, int) else int(src.region[first])
        for start in range(0, total, len(members)):
            doing = members[:total - start]
            active = np.zeros(n, np.bool_)
            active[doing] = True
            element = np.zeros(n, np.int64)
            element[doing] = start + np.arange(len(doing))
            src_at = element * (step if from_global else 1) * size + int(src.offset[first])
            dst_at = element * (1 if from_global else step) * size + int(dst.offset[first])
            value = interp.load(Ptr(src_region, src_at), target.pointee, active, call.loc)
            interp.store(Ptr(dst_region, dst_at), target.pointee, value, active, call.loc)
    return np.zeros(n, np.uint64)


def _wait_group_events(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    interp.barrier(call.loc, mask)
    return None


def _printf(interp: Any, call: ir.Call, mask: np.ndarray) -> Any:
    """``printf``: the active work-items' lines, in work-item order, through ppcl's own C
    conversions (as the CPU device prints them)."""
    from ppcl.compiler.ir.printf_spec import printf_format
    from ppcl.devices.cformat import render
    from ppcl.devices.printf_buffer import write_output

    fmt = printf_format(call)
    columns: list[np.ndarray] = []
    for arg in call.args[1:]:
        if isinstance(arg, ir.StringLit):
            continue
        value = interp.eval(arg, mask)
        if isinstance(value, Ptr):
            columns.append(value.offset.astype(np.uint64))
            continue
        parts = [value] if value.ndim == 1 else [value[:, k] for k in range(value.shape[1])]
        for part in parts:
            if part.dtype.kind == "f":
                columns.append(part.astype(np.float64).view(np.uint64))
            elif part.dtype.kind in "ib":
                columns.append(part.astype(np.int64).view(np.uint64))
            else:
                columns.append(part.astype(np.uint64))
    lanes = np.nonzero(mask)[0]
    table = np.stack(columns, axis=1) if columns else np.zeros((len(mask), 0), np.uint64)
    write_output("".join(render(fmt, [int(v) for v in table[lane]]) for lane in lanes))
    return np.zeros(len(mask), np.int32)


TABLE["printf"] = _printf
TABLE["async_work_group_copy"] = _async_copy
TABLE["async_work_group_strided_copy"] = _async_copy
TABLE["wait_group_events"] = _wait_group_events
TABLE["prefetch"] = _fence


def atomic_apply(op: str, old: Any, operands: list[Any]) -> Any:
    """The value an atomic operation stores, given the old value."""
    with np.errstate(all="ignore"):
        if op == "add":
            return old + operands[0]
        if op == "sub":
            return old - operands[0]
        if op == "xchg":
            return operands[0]
        if op == "inc":
            return old + old.dtype.type(1)
        if op == "dec":
            return old - old.dtype.type(1)
        if op == "min":
            return min(old, operands[0])
        if op == "max":
            return max(old, operands[0])
        if op == "and":
            return old & operands[0]
        if op == "or":
            return old | operands[0]
        if op == "xor":
            return old ^ operands[0]
        if op == "cmpxchg":
            return operands[1] if old == operands[0] else old
    raise Unsupported(f"the atomic operation '{op}'")


def lookup(name: str) -> Impl | None:
    """The implementation of builtin ``name`` (``convert_*``/``as_*`` included), or None."""
    impl = TABLE.get(name)
    if impl is not None:
        return impl
    if name.startswith("convert_"):
        return _convert
    if name.startswith("as_"):
        return _reinterpret
    if name.startswith("vload") and name[5:] in ("2", "3", "4", "8", "16"):
        return _vload
    if name.startswith("vstore") and name[6:] in ("2", "3", "4", "8", "16"):
        return _vstore
    if name.startswith(("vload_half", "vloada_half")):
        return _vload_half
    if name.startswith(("vstore_half", "vstorea_half")):
        return _vstore_half
    return None


class BuiltinTable(dict[str, Impl]):
    """``TABLE`` with the generated names (``convert_*``, ``as_*``, ``vloadN``) on lookup."""

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return lookup(name) or default


def unsupported_builtins(module: ir.Module, kernel: ir.Function) -> list[tuple[str, Any]]:
    """The builtins a kernel (and the functions it calls) uses that this device does not
    implement, each with the location of its first call."""
    found: dict[str, Any] = {}
    functions = {f.name: f for f in module.functions}
    seen: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, tuple):
            for item in node:
                visit(item)
            return
        if isinstance(node, ir.Call):
            if node.builtin is not None and lookup(node.name) is None:
                found.setdefault(node.name, node.loc)
            elif node.builtin is None and node.name not in seen:
                seen.add(node.name)
                callee = functions.get(node.name)
                if callee is not None:
                    visit(callee.body)
        if isinstance(node, (ir.Expr, ir.Stmt)):
            for name in node.__dataclass_fields__:
                if name not in ("type", "loc"):
                    visit(getattr(node, name))

    visit(kernel.body)
    return list(found.items())

