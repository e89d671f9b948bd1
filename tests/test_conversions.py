import pytest

from ppcl.compiler.ir.conversions import (
    CONVERSION,
    EXACT,
    PROMOTION,
    WIDENING,
    common_type,
    comparison_result,
    implicit_conversion_rank,
    integer_promote,
    is_floating_type,
    is_integer_type,
    promote,
    usual_arithmetic,
)
from ppcl.compiler.ir.types import (
    BOOL,
    CHAR,
    DOUBLE,
    FLOAT,
    HALF,
    INT,
    LONG,
    SHORT,
    UCHAR,
    UINT,
    ULONG,
    USHORT,
    VOID,
    AddressSpace,
    ArrayType,
    EnumType,
    Field,
    PointerType,
    ScalarType,
    StructType,
    Type,
    VectorType,
)


def v(elem: ScalarType, n: int) -> VectorType:
    return VectorType(elem, n)


G, L, P, C = AddressSpace.GLOBAL, AddressSpace.LOCAL, AddressSpace.PRIVATE, AddressSpace.CONSTANT


@pytest.mark.parametrize(
    "t, expected",
    [(BOOL, INT), (CHAR, INT), (UCHAR, INT), (SHORT, INT), (USHORT, INT), (INT, INT),
     (UINT, UINT), (LONG, LONG), (ULONG, ULONG), (FLOAT, FLOAT), (DOUBLE, DOUBLE)],
)
def test_integer_promote(t: ScalarType, expected: ScalarType) -> None:
    assert integer_promote(t) == expected


def test_vectors_are_not_promoted() -> None:
    assert promote(v(CHAR, 4)) == v(CHAR, 4)
    assert usual_arithmetic(v(CHAR, 4), v(CHAR, 4)) == v(CHAR, 4)
    assert promote(EnumType("e", (("A", 0),))) == INT


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (INT, UINT, UINT),
        (LONG, UINT, LONG),
        (UINT, LONG, LONG),
        (LONG, ULONG, ULONG),
        (CHAR, CHAR, INT),
        (UCHAR, SHORT, INT),
        (USHORT, USHORT, INT),
        (INT, ULONG, ULONG),
        (FLOAT, INT, FLOAT),
        (INT, FLOAT, FLOAT),
        (ULONG, FLOAT, FLOAT),
        (DOUBLE, FLOAT, DOUBLE),
        (HALF, FLOAT, FLOAT),
        (BOOL, BOOL, INT),
        (EnumType("e", (("A", 0),)), UINT, UINT),
        # vectors
        (v(FLOAT, 4), FLOAT, v(FLOAT, 4)),
        (FLOAT, v(FLOAT, 4), v(FLOAT, 4)),
        (v(FLOAT, 4), INT, v(FLOAT, 4)),
        (v(DOUBLE, 2), FLOAT, v(DOUBLE, 2)),
        (v(UCHAR, 4), INT, v(UCHAR, 4)),
        (v(INT, 4), LONG, v(INT, 4)),
        (v(UINT, 8), v(UINT, 8), v(UINT, 8)),
        (v(FLOAT, 4), v(INT, 4), None),
        (v(INT, 4), v(UINT, 4), None),
        (v(FLOAT, 4), v(FLOAT, 2), None),
        (v(INT, 4), FLOAT, None),
        (v(FLOAT, 4), DOUBLE, None),
        (PointerType(INT), INT, None),
    ],
)
def test_usual_arithmetic(a: Type, b: Type, expected: Type | None) -> None:
    assert usual_arithmetic(a, b) == expected


def test_common_type() -> None:
    s = StructType("s", (Field("x", INT),))
    assert common_type(s, s) == s
    assert common_type(CHAR, CHAR) == INT
    assert common_type(INT, DOUBLE) == DOUBLE


@pytest.mark.parametrize(
    "t, expected",
    [(INT, INT), (DOUBLE, INT), (FLOAT, INT), (ULONG, INT),
     (v(FLOAT, 4), v(INT, 4)), (v(DOUBLE, 2), v(LONG, 2)), (v(UCHAR, 16), v(CHAR, 16)),
     (v(HALF, 8), v(SHORT, 8)), (v(UINT, 3), v(INT, 3))],
)
def test_comparison_result(t: Type, expected: Type) -> None:
    assert comparison_result(t) == expected


def test_predicates() -> None:
    assert is_integer_type(v(UINT, 4)) and is_integer_type(BOOL)
    assert not is_integer_type(FLOAT) and not is_integer_type(PointerType(INT))
    assert is_floating_type(v(DOUBLE, 2)) and is_floating_type(HALF)
    assert not is_floating_type(INT)


@pytest.mark.parametrize(
    "src, dst, rank",
    [
        (INT, INT, EXACT),
        (v(FLOAT, 4), v(FLOAT, 4), EXACT),
        (CHAR, INT, PROMOTION),
        (USHORT, INT, PROMOTION),
        (BOOL, INT, PROMOTION),
        (FLOAT, DOUBLE, PROMOTION),
        (CHAR, UINT, CONVERSION),
        (INT, FLOAT, CONVERSION),
        (DOUBLE, FLOAT, CONVERSION),
        (INT, UINT, CONVERSION),
        (LONG, CHAR, CONVERSION),
        (EnumType("e", ()), INT, PROMOTION),
        (INT, EnumType("e", ()), CONVERSION),
        (FLOAT, v(FLOAT, 4), WIDENING),
        (INT, v(FLOAT, 4), WIDENING),
        (v(INT, 4), v(FLOAT, 4), None),
        (v(FLOAT, 4), v(FLOAT, 8), None),
        (v(FLOAT, 4), FLOAT, None),
        # pointers
        (PointerType(INT, G), PointerType(INT, G), EXACT),
        (PointerType(INT, G), PointerType(INT, G, const=True), CONVERSION),
        (PointerType(INT, L), PointerType(INT, L, volatile=True), CONVERSION),
        (PointerType(INT, G, const=True), PointerType(INT, G), None),
        (PointerType(INT, G), PointerType(INT, L), None),
        (PointerType(INT, C, const=True), PointerType(INT, G, const=True), None),
        (PointerType(INT, G), PointerType(UINT, G), None),
        (PointerType(INT, G), PointerType(VOID, G), CONVERSION),
        (PointerType(VOID, P), PointerType(FLOAT, P), CONVERSION),
        (PointerType(VOID, P), PointerType(FLOAT, G), None),
        (INT, PointerType(INT, G), None),
        (PointerType(INT, G), INT, None),
        # records and arrays
        (StructType("a", (Field("x", INT),)), StructType("b", (Field("x", INT),)), None),
        (StructType("a", (Field("x", INT),)), StructType("a", (Field("x", INT),)), EXACT),
        (ArrayType(INT, 4), PointerType(INT, P), None),
    ],
)
def test_implicit_conversion_rank(src: Type, dst: Type, rank: int | None) -> None:
    assert implicit_conversion_rank(src, dst) == rank
