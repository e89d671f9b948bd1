"""Typing rules of OpenCL C 1.2 for conversions: promotions, the usual arithmetic conversions
(with OpenCL's vector rules, §6.2.6 and §6.3), comparison results and the ranks of implicit
conversions used by assignment, argument passing and builtin overload resolution.

Everything here is a pure function of ``ir.types`` values.
"""

from __future__ import annotations

from typing import TypeVar

from ppcl.compiler.ir.types import (
    DOUBLE,
    FLOAT,
    INT,
    SAMPLER_T,
    EnumType,
    PointerType,
    ScalarType,
    Type,
    VectorType,
    VoidType,
    scalar_of,
)

# Ranks of implicit conversions, lower is better (like C++'s exact / promotion / conversion).
EXACT = 0
PROMOTION = 1
CONVERSION = 2
WIDENING = 3  # arithmetic scalar -> vector (splat), worse than any scalar conversion


_C = TypeVar("_C")


def best_ranked(viable: list[tuple[_C, tuple[int, ...]]]) -> list[tuple[_C, tuple[int, ...]]]:
    """The candidates of an overload resolution that no other candidate beats: one beats
    another when its conversion ranks are no worse for every argument and better for one
    (C++'s rule, which clang applies to OpenCL builtins and ``overloadable`` functions)."""
    def better(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
        return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))

    return [c for c in viable if not any(better(o[1], c[1]) for o in viable if o is not c)]


def element_type(t: Type) -> ScalarType | None:
    """The scalar of a scalar or vector arithmetic type (enums count as int); None otherwise."""
    return scalar_of(t)


def is_arithmetic_scalar(t: Type) -> bool:
    return isinstance(t, (ScalarType, EnumType))


def is_integer_type(t: Type) -> bool:
    """An integer scalar or vector (bool and enums included)."""
    elem = scalar_of(t)
    return elem is not None and elem.is_integer


def is_floating_type(t: Type) -> bool:
    """A floating scalar or vector (half, float, double)."""
    elem = scalar_of(t)
    return elem is not None and elem.is_float


def is_signed_integer_type(t: Type) -> bool:
    elem = scalar_of(t)
    return elem is not None and elem.is_integer and elem.is_signed


def is_unsigned_integer_type(t: Type) -> bool:
    elem = scalar_of(t)
    return elem is not None and elem.is_integer and not elem.is_signed


def integer_promote(t: ScalarType) -> ScalarType:
    """C integer promotion of a scalar: types of lower rank than int become int."""
    if t.is_integer and t.rank < INT.rank:
        return INT
    return t


def promote(t: Type) -> Type:
    """Integer promotion on any type: scalars promote, enums become int, vectors stay as they are
    (OpenCL does not promote vector elements: char4 + char4 is a char4)."""
    if isinstance(t, EnumType):
        return INT
    if isinstance(t, ScalarType):
        return integer_promote(t)
    return t


def _scalar_arithmetic(a: ScalarType, b: ScalarType) -> ScalarType:
    """C99 §6.3.1.8 for two arithmetic scalars."""
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a if a.rank >= b.rank else b
        return a if a.is_float else b
    a = integer_promote(a)
    b = integer_promote(b)
    if a == b:
        return a
    if a.is_signed == b.is_signed:
        return a if a.rank >= b.rank else b
    unsigned, signed = (a, b) if not a.is_signed else (b, a)
    if unsigned.rank >= signed.rank:
        return unsigned
    if signed.size > unsigned.size:
        return signed  # the signed type represents every value of the unsigned one
    return signed.with_signedness(False)


def scalar_converts_to_element(scalar: ScalarType, elem: ScalarType) -> bool:
    """Whether ``scalar`` may be converted to a vector's element type in ``vector op scalar``.

    Integer scalars convert to any element type. A floating scalar converts only to a floating
    element of equal or higher rank (clang rejects ``int4 + 1.0f`` and ``float4 + 1.0``)."""
    if scalar.is_integer:
        return True
    return elem.is_float and elem.rank >= scalar.rank


def usual_arithmetic(a: Type, b: Type) -> Type | None:
    """The common type of a binary arithmetic operator, or None when the operands do not
    combine (no implicit conversion between vector types; see ``scalar_converts_to_element``)."""
    a_scalar = INT if isinstance(a, EnumType) else a
    b_scalar = INT if isinstance(b, EnumType) else b
    if isinstance(a_scalar, ScalarType) and isinstance(b_scalar, ScalarType):
        return _scalar_arithmetic(a_scalar, b_scalar)
    if isinstance(a_scalar, VectorType) and isinstance(b_scalar, VectorType):
        return a_scalar if a_scalar == b_scalar else None
    if isinstance(a_scalar, VectorType) and isinstance(b_scalar, ScalarType):
        return a_scalar if scalar_converts_to_element(b_scalar, a_scalar.elem) else None
    if isinstance(a_scalar, ScalarType) and isinstance(b_scalar, VectorType):
        return b_scalar if scalar_converts_to_element(a_scalar, b_scalar.elem) else None
    return None


def common_type(a: Type, b: Type) -> Type | None:
    """Common type of the two arms of ``?:`` and of arithmetic: the usual arithmetic conversions
    for arithmetic types, the type itself when both are the same, else None."""
    if a == b:
        return promote(a) if is_arithmetic_scalar(a) else a
    return usual_arithmetic(a, b)


def signed_integer_of_size(size: int) -> ScalarType:
    """The signed integer scalar with ``size`` bytes (1, 2, 4 or 8)."""
    names = {1: "char", 2: "short", 4: "int", 8: "long"}
    if size not in names:
        raise ValueError(f"no integer type of {size} bytes")
    return ScalarType(names[size])


def unsigned_integer_of_size(size: int) -> ScalarType:
    return signed_integer_of_size(size).with_signedness(False)


def comparison_result(t: Type) -> Type:
    """Type of a comparison or logical operator on operands of type ``t`` (already converted):
    int for scalars, the signed integer vector of the same width and element size for vectors
    (float4 -> int4, double2 -> long2, uchar16 -> char16); vector results are -1 for true."""
    if isinstance(t, VectorType):
        return VectorType(signed_integer_of_size(t.elem.size), t.width)
    return INT


def _pointer_conversion_rank(src: PointerType, dst: PointerType) -> int | None:
    if src.space != dst.space:
        return None
    if (src.const and not dst.const) or (src.volatile and not dst.volatile):
        return None  # dropping qualifiers is not implicit
    same_quals = src.const == dst.const and src.volatile == dst.volatile
    if src.pointee == dst.pointee:
        return EXACT if same_quals else CONVERSION
    if isinstance(src.pointee, VoidType) or isinstance(dst.pointee, VoidType):
        return CONVERSION
    return None


def implicit_conversion_rank(src: Type, dst: Type) -> int | None:
    """Rank of the implicit conversion of a value of type ``src`` to ``dst`` (assignment,
    initialization, argument passing): EXACT (0), PROMOTION (1: integer promotion,
    float -> double), CONVERSION (2: other arithmetic scalar conversions, adding const/volatile
    to a pointee, void pointers in the same address space), WIDENING (3: arithmetic scalar to
    vector), or None when not allowed.

    Arrays must be decayed to pointers by the caller; a literal ``0`` converting to a pointer
    is also the caller's business."""
    if src == dst:
        return EXACT
    if is_arithmetic_scalar(src) and is_arithmetic_scalar(dst):
        src_s = INT if isinstance(src, EnumType) else src
        dst_s = INT if isinstance(dst, EnumType) else dst
        assert isinstance(src_s, ScalarType) and isinstance(dst_s, ScalarType)
        if isinstance(dst, EnumType):
            return CONVERSION  # int or another enum into an enum: allowed in C, never preferred
        if src_s == dst_s:
            return PROMOTION  # an enum used as int
        if src_s.is_integer and dst_s == integer_promote(src_s):
            return PROMOTION
        if src_s == FLOAT and dst_s == DOUBLE:
            return PROMOTION
        return CONVERSION
    if is_arithmetic_scalar(src) and isinstance(dst, VectorType):
        return WIDENING
    if isinstance(src, PointerType) and isinstance(dst, PointerType):
        return _pointer_conversion_rank(src, dst)
    if dst == SAMPLER_T and isinstance(src, ScalarType) and src.is_integer:
        return CONVERSION  # a sampler is initialized from its CLK_* bits
    return None


def is_assignable(src: Type, dst: Type) -> bool:
    return implicit_conversion_rank(src, dst) is not None


def wrap(value: int, t: Type) -> int:
    """``value`` converted to the integer type ``t`` (modular for every width, as C does)."""
    if isinstance(t, EnumType):
        t = INT
    if not isinstance(t, ScalarType) or not t.is_integer:
        return value
    if t.is_bool:
        return 1 if value else 0
    bits = t.bits
    value &= (1 << bits) - 1
    if t.is_signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value
