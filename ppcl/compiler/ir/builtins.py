"""The typing table of the OpenCL C 1.2 builtin functions, with overload resolution.

One table of signatures, shared by every backend: each backend lowers the resolved ``Overload``
(by its ``key``) in its own way, so nothing here knows about C, CUDA or OpenCL spellings.

The signatures themselves are written out in ``builtin_signatures``; here the table is built
from them on first use and cached, ``convert_*`` and ``as_*`` overloads are generated per name
when asked for, and calls are resolved against it.

Overload resolution follows clang's overloadable OpenCL builtins: a candidate is viable when
every argument converts implicitly to its parameter (``conversions.implicit_conversion_rank``:
no conversions between vector types, but a scalar widens to a vector parameter as clang's
vector splat does, so ``pow(v, 2.2f)`` calls ``pow(float4, float4)``); the best candidate is
no worse for every argument and better for one. Widening ranks below every scalar conversion,
so a (vector, scalar) overload such as ``fmax(float4, float)`` wins over splatting; where clang
picks one candidate this order picks the same one. One extension: when that leaves
several candidates and some arguments are integer literals, a literal converting to another
scalar type counts as exact among those, so ``max(n_uint, 1)`` picks ``max(uint, uint)`` and
``clamp(x_float, 0, 1)`` picks ``clamp(float, float, float)`` (clang reports both as ambiguous).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal

from ppcl.compiler.ir.builtin_signatures import (
    FAMILIES,
    Overload,
    as_names,
    as_overloads,
    convert_names,
    convert_overloads,
    fixed_signatures,
    type_code,
)
from ppcl.compiler.ir.conversions import (
    CONVERSION,
    EXACT,
    best_ranked,
    implicit_conversion_rank,
    is_floating_type,
)
from ppcl.compiler.ir.image_formats import CHANNEL_ORDERS, CHANNEL_TYPES, SAMPLER_BITS
from ppcl.compiler.ir.types import DOUBLE, EVENT_T, FLOAT, INT, LONG, UINT, ULONG, ScalarType, Type

__all__ = [
    "BUILTIN_CONSTANTS",
    "ELEMENTWISE",
    "FAMILIES",
    "BuiltinError",
    "Overload",
    "all_overloads",
    "builtin_names",
    "is_builtin",
    "lookup",
    "overloads",
    "resolve",
    "table_size",
    "type_code",
]


class BuiltinError(Exception):
    """A call of a builtin that matches no overload, or several equally well."""

    def __init__(
        self,
        kind: Literal["no_match", "ambiguous"],
        message: str,
        candidates: tuple[Overload, ...] = (),
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.candidates = candidates


# ---------------------------------------------------------------- the table

_table: dict[str, tuple[Overload, ...]] | None = None


def _fixed_table() -> dict[str, tuple[Overload, ...]]:
    global _table
    if _table is None:
        _table = fixed_signatures()
    return _table


_generated: dict[str, tuple[Overload, ...]] = {}


def _generated_overloads(name: str) -> tuple[Overload, ...]:
    ovs = _generated.get(name)
    if ovs is None:
        if name.startswith("convert_"):
            ovs = convert_overloads(name)
        elif name.startswith("as_"):
            ovs = as_overloads(name)
        else:
            ovs = ()
        _generated[name] = ovs
    return ovs


# ---------------------------------------------------------------- public queries


def overloads(name: str) -> tuple[Overload, ...]:
    """Every overload of the builtin ``name``; empty when ``name`` is not a builtin."""
    ovs = _fixed_table().get(name)
    if ovs is not None:
        return ovs
    return _generated_overloads(name)


def is_builtin(name: str) -> bool:
    return bool(overloads(name))


def builtin_names() -> Iterator[str]:
    """Every builtin name, ``convert_*`` and ``as_*`` included."""
    yield from _fixed_table()
    yield from convert_names()
    yield from as_names()


def all_overloads() -> Iterator[Overload]:
    for name in builtin_names():
        yield from overloads(name)


def table_size() -> int:
    """Number of overloads in the whole table (generating every ``convert_*`` and ``as_*``)."""
    return sum(1 for _ in all_overloads())


_by_key: dict[str, dict[str, Overload]] = {}


def lookup(key: str) -> Overload:
    """The overload with the given ``Overload.key``; KeyError when there is none."""
    name, sep, _ = key.partition("__")
    keyed = _by_key.get(name)
    if keyed is None:
        keyed = {ov.key: ov for ov in overloads(name)} if sep else {}
        _by_key[name] = keyed
    ov = keyed.get(key)
    if ov is None:
        raise KeyError(f"no builtin overload with key {key!r}")
    return ov


# builtins that OpenCL also defines component-wise on vectors (``gentype f(gentype...)``);
# ``select`` among them tests a vector condition's top bit, a scalar one for non-zero
ELEMENTWISE = frozenset("""
sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh sinpi cospi tanpi asinpi
acospi atanpi atan2pi exp exp2 exp10 expm1 log log2 log10 log1p logb sqrt rsqrt cbrt pow pown
powr rootn hypot fabs floor ceil round trunc rint fmin fmax fmod mad fma copysign fdim ldexp
erf erfc tgamma lgamma nextafter maxmag minmag remainder
native_sin native_cos native_tan native_exp native_exp2 native_exp10 native_log native_log2
native_log10 native_sqrt native_rsqrt native_recip native_powr native_divide
half_sin half_cos half_tan half_exp half_exp2 half_exp10 half_log half_log2 half_log10
half_sqrt half_rsqrt half_recip half_powr half_divide
min max clamp abs abs_diff add_sat sub_sat hadd rhadd mad_hi mul_hi mad_sat rotate clz popcount
mul24 mad24 mix step smoothstep sign degrees radians select
""".split())


# ---------------------------------------------------------------- overload resolution

_Ranks = tuple[int, ...]


def _arg_ranks(ov: Overload, args: Sequence[Type], literal: Sequence[bool]) -> _Ranks | None:
    if len(args) < len(ov.params) or (len(args) > len(ov.params) and not ov.variadic):
        return None
    ranks: list[int] = []
    for i, (arg, param) in enumerate(zip(args, ov.params)):
        rank = implicit_conversion_rank(arg, param)
        if rank is None and param == EVENT_T and i < len(literal) and literal[i]:
            rank = CONVERSION  # async copies take a literal 0 for "no event to wait for"
        if rank is None:
            return None
        if ov.family == "reinterpret" and rank != EXACT:
            return None  # as_* reinterprets bits: the sizes must match without conversions
        if ov.family == "geometric" and not is_floating_type(arg):
            return None  # geometric functions take floating vectors; dot(int, int) is an error
        ranks.append(rank)
    return tuple(ranks)


def _literal_ranks(
    ov: Overload, ranks: _Ranks, args: Sequence[Type], literal: Sequence[bool]
) -> _Ranks:
    """Ranks where an integer literal converting to an arithmetic scalar parameter counts as
    exact (the literal's value, not its type ``int``, is what the call means)."""
    adjusted = list(ranks)
    for i, (arg, param) in enumerate(zip(args, ov.params)):
        if (
            i < len(literal) and literal[i] and adjusted[i] <= CONVERSION
            and isinstance(arg, ScalarType) and arg.is_integer and isinstance(param, ScalarType)
        ):
            adjusted[i] = EXACT
    return tuple(adjusted)


def _describe_args(args: Sequence[Type]) -> str:
    return "(" + ", ".join(str(a) for a in args) + ")"


def _candidate_list(cands: Sequence[Overload], limit: int = 6) -> str:
    shown = "; ".join(c.signature for c in cands[:limit])
    more = f"; and {len(cands) - limit} more" if len(cands) > limit else ""
    return shown + more


def _no_match(name: str, args: Sequence[Type]) -> BuiltinError:
    all_ovs = overloads(name)
    if not all_ovs:
        return BuiltinError("no_match", f"'{name}' is not a builtin function")
    same_arity = [o for o in all_ovs if len(o.params) == len(args)] or list(all_ovs)
    message = (
        f"no matching overload for builtin '{name}' with {_describe_args(args)}; "
        f"candidates: {_candidate_list(same_arity)}"
    )
    return BuiltinError("no_match", message, tuple(same_arity))


_resolved: dict[tuple[str, tuple[Type, ...], tuple[bool, ...]], Overload | BuiltinError] = {}


def _resolve_uncached(name: str, args: tuple[Type, ...], literal: tuple[bool, ...]) -> Overload:
    viable: list[tuple[Overload, _Ranks]] = []
    for ov in overloads(name):
        ranks = _arg_ranks(ov, args, literal)
        if ranks is not None:
            viable.append((ov, ranks))
    if not viable:
        raise _no_match(name, args)
    best = best_ranked(viable)
    if len(best) > 1 and any(literal):
        relaxed = [(ov, _literal_ranks(ov, ranks, args, literal)) for ov, ranks in best]
        narrowed = best_ranked(relaxed)
        if len(narrowed) == 1:
            best = narrowed
    if len(best) == 1:
        return best[0][0]
    cands = tuple(ov for ov, _ in best)
    message = (
        f"call to builtin '{name}' with {_describe_args(args)} is ambiguous; "
        f"candidates: {_candidate_list(cands)}"
    )
    raise BuiltinError("ambiguous", message, cands)


def resolve(
    name: str, args: Sequence[Type], arg_is_int_literal: Sequence[bool] | None = None
) -> Overload:
    """The overload of builtin ``name`` that a call with arguments of types ``args`` calls.

    ``arg_is_int_literal[i]`` tells that argument ``i`` is an integer literal (see the module
    documentation); an integer literal is also accepted for an ``event_t`` parameter, where the
    caller checks that it is 0. Array arguments must already be decayed to pointers.
    Raises BuiltinError."""
    literal = tuple(arg_is_int_literal) if arg_is_int_literal is not None else ()
    if not any(literal):
        literal = ()
    memo_key = (name, tuple(args), literal)
    hit = _resolved.get(memo_key)
    if hit is None:
        try:
            hit = _resolve_uncached(name, memo_key[1], literal)
        except BuiltinError as err:
            hit = err
        _resolved[memo_key] = hit
    if isinstance(hit, BuiltinError):
        raise BuiltinError(hit.kind, hit.message, hit.candidates)
    return hit


# ---------------------------------------------------------------- constants

_FLT_MAX = float.fromhex("0x1.fffffep127")
_FLT_MIN = float.fromhex("0x1.0p-126")
_FLT_EPSILON = float.fromhex("0x1.0p-23")
_DBL_MAX = float.fromhex("0x1.fffffffffffffp1023")
_DBL_MIN = float.fromhex("0x1.0p-1022")
_DBL_EPSILON = float.fromhex("0x1.0p-52")
_INF = float("inf")

_MATH_CONSTANTS = {
    "M_E": 2.718281828459045, "M_LOG2E": 1.4426950408889634, "M_LOG10E": 0.4342944819032518,
    "M_LN2": 0.6931471805599453, "M_LN10": 2.302585092994046, "M_PI": 3.141592653589793,
    "M_PI_2": 1.5707963267948966, "M_PI_4": 0.7853981633974483, "M_1_PI": 0.3183098861837907,
    "M_2_PI": 0.6366197723675814, "M_2_SQRTPI": 1.1283791670955126,
    "M_SQRT2": 1.4142135623730951, "M_SQRT1_2": 0.7071067811865476,
}

BUILTIN_CONSTANTS: dict[str, tuple[Type, int | float]] = {
    # cl_mem_fence_flags (§6.12.8)
    "CLK_LOCAL_MEM_FENCE": (UINT, 1),
    "CLK_GLOBAL_MEM_FENCE": (UINT, 2),
    # §6.12.2 math macros
    "MAXFLOAT": (FLOAT, _FLT_MAX),
    "HUGE_VALF": (FLOAT, _INF),
    "HUGE_VAL": (DOUBLE, _INF),
    "INFINITY": (FLOAT, _INF),
    "NAN": (FLOAT, float("nan")),
    "FP_ILOGB0": (INT, -(2**31)),
    "FP_ILOGBNAN": (INT, 2**31 - 1),
    # float.h limits (§6.12.2, table 6.7)
    "FLT_DIG": (INT, 6),
    "FLT_MANT_DIG": (INT, 24),
    "FLT_MAX_10_EXP": (INT, 38),
    "FLT_MAX_EXP": (INT, 128),
    "FLT_MIN_10_EXP": (INT, -37),
    "FLT_MIN_EXP": (INT, -125),
    "FLT_RADIX": (INT, 2),
    "FLT_MAX": (FLOAT, _FLT_MAX),
    "FLT_MIN": (FLOAT, _FLT_MIN),
    "FLT_EPSILON": (FLOAT, _FLT_EPSILON),
    "DBL_DIG": (INT, 15),
    "DBL_MANT_DIG": (INT, 53),
    "DBL_MAX_10_EXP": (INT, 308),
    "DBL_MAX_EXP": (INT, 1024),
    "DBL_MIN_10_EXP": (INT, -307),
    "DBL_MIN_EXP": (INT, -1021),
    "DBL_RADIX": (INT, 2),  # not in table 6.7, but the OpenCL C headers define it
    "DBL_MAX": (DOUBLE, _DBL_MAX),
    "DBL_MIN": (DOUBLE, _DBL_MIN),
    "DBL_EPSILON": (DOUBLE, _DBL_EPSILON),
    # limits.h (§6.12.3, table 6.10)
    "CHAR_BIT": (INT, 8),
    "CHAR_MAX": (INT, 127),
    "CHAR_MIN": (INT, -128),
    "SCHAR_MAX": (INT, 127),
    "SCHAR_MIN": (INT, -128),
    "UCHAR_MAX": (INT, 255),
    "SHRT_MAX": (INT, 32767),
    "SHRT_MIN": (INT, -32768),
    "USHRT_MAX": (INT, 65535),
    "INT_MAX": (INT, 2**31 - 1),
    "INT_MIN": (INT, -(2**31)),
    "UINT_MAX": (UINT, 2**32 - 1),
    "LONG_MAX": (LONG, 2**63 - 1),
    "LONG_MIN": (LONG, -(2**63)),
    "ULONG_MAX": (ULONG, 2**64 - 1),
}
# §6.12.14.1 sampler bits and §6.12.14.5 channel orders and data types
for _name, _bits in SAMPLER_BITS.items():
    BUILTIN_CONSTANTS[_name] = (INT, _bits)
for _name, _code in {**CHANNEL_ORDERS, **CHANNEL_TYPES}.items():
    BUILTIN_CONSTANTS["CLK_" + _name] = (INT, _code)
for _name, _value in _MATH_CONSTANTS.items():
    BUILTIN_CONSTANTS[_name] = (DOUBLE, _value)
    BUILTIN_CONSTANTS[_name + "_F"] = (FLOAT, _value)


if __name__ == "__main__":
    import time

    start = time.perf_counter()
    _fixed_table()
    built = time.perf_counter() - start
    print(f"fixed table: {sum(len(v) for v in _fixed_table().values())} overloads "
          f"in {built * 1000:.1f} ms")
    print(f"whole table (convert_* and as_* generated): {table_size()} overloads")
