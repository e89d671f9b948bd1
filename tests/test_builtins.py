import re

import pytest

from ppcl.compiler.ir import builtins
from ppcl.compiler.ir.builtins import (
    BUILTIN_CONSTANTS,
    FAMILIES,
    BuiltinError,
    Overload,
    all_overloads,
    is_builtin,
    lookup,
    overloads,
    resolve,
)
from ppcl.compiler.ir.types import (
    CHAR,
    DOUBLE,
    EVENT_T,
    FLOAT,
    HALF,
    INT,
    LONG,
    SHORT,
    SIZE_T,
    UCHAR,
    UINT,
    ULONG,
    USHORT,
    VOID,
    AddressSpace,
    EnumType,
    PointerType,
    ScalarType,
    Type,
    VectorType,
)

G, L, P, C = AddressSpace.GLOBAL, AddressSpace.LOCAL, AddressSpace.PRIVATE, AddressSpace.CONSTANT


def v(elem: ScalarType, n: int) -> VectorType:
    return VectorType(elem, n)


def key(name: str, *args: Type, literal: tuple[bool, ...] | None = None) -> str:
    return resolve(name, args, literal).key


def test_resolve_builds_the_table_once_and_memoises() -> None:
    # what made the first resolve slow was building the table per call; no wall time here
    builtins._table = None
    builtins._resolved.clear()
    first = resolve("clamp", [v(FLOAT, 4), FLOAT, FLOAT])
    table = builtins._table
    assert table is not None and len(builtins._resolved) == 1
    for _ in range(3):
        assert resolve("clamp", [v(FLOAT, 4), FLOAT, FLOAT]) is first
    assert builtins._table is table and len(builtins._resolved) == 1


@pytest.mark.parametrize(
    "name, args, expected",
    [
        ("sqrt", (FLOAT,), "sqrt__float"),
        ("sqrt", (v(DOUBLE, 8),), "sqrt__double8"),
        ("clamp", (v(FLOAT, 4), FLOAT, FLOAT), "clamp__float4_float_float"),
        ("clamp", (v(FLOAT, 4),) * 3, "clamp__float4_float4_float4"),
        ("clamp", (v(INT, 4), INT, INT), "clamp__int4_int_int"),
        ("fmin", (v(FLOAT, 4), FLOAT), "fmin__float4_float"),
        ("fmax", (v(DOUBLE, 2), DOUBLE), "fmax__double2_double"),
        ("mix", (v(FLOAT, 4), v(FLOAT, 4), FLOAT), "mix__float4_float4_float"),
        ("step", (FLOAT, v(FLOAT, 3)), "step__float_float3"),
        ("smoothstep", (FLOAT, FLOAT, v(FLOAT, 8)), "smoothstep__float_float_float8"),
        ("max", (v(UCHAR, 16), UCHAR), "max__uchar16_uchar"),
        ("max", (FLOAT, FLOAT), "max__float_float"),
        ("ldexp", (v(FLOAT, 4), INT), "ldexp__float4_int"),
        ("ldexp", (v(FLOAT, 4), v(INT, 4)), "ldexp__float4_int4"),
        ("pown", (DOUBLE, INT), "pown__double_int"),
        ("ilogb", (v(DOUBLE, 2),), "ilogb__double2"),
        ("nan", (v(ULONG, 4),), "nan__ulong4"),
        ("dot", (v(FLOAT, 3), v(FLOAT, 3)), "dot__float3_float3"),
        ("cross", (v(DOUBLE, 4), v(DOUBLE, 4)), "cross__double4_double4"),
        ("native_exp", (v(FLOAT, 8),), "native_exp__float8"),
        ("half_divide", (FLOAT, FLOAT), "half_divide__float_float"),
        ("get_global_id", (UINT,), "get_global_id__uint"),
        ("get_work_dim", (), "get_work_dim__void"),
        ("barrier", (UINT,), "barrier__uint"),
        ("mad24", (v(UINT, 2),) * 3, "mad24__uint2_uint2_uint2"),
        ("popcount", (ULONG,), "popcount__ulong"),
        ("any", (v(INT, 4),), "any__int4"),
        ("select", (v(FLOAT, 4), v(FLOAT, 4), v(INT, 4)), "select__float4_float4_int4"),
        ("select", (v(DOUBLE, 2), v(DOUBLE, 2), v(ULONG, 2)), "select__double2_double2_ulong2"),
        ("bitselect", (v(UINT, 4),) * 3, "bitselect__uint4_uint4_uint4"),
        ("shuffle", (v(FLOAT, 4), v(UINT, 8)), "shuffle__float4_uint8"),
        ("shuffle2", (v(CHAR, 16), v(CHAR, 16), v(UCHAR, 2)), "shuffle2__char16_char16_uchar2"),
        ("printf", (PointerType(CHAR, C, const=True), INT, FLOAT), "printf__ckchar_va"),
    ],
)
def test_exact_and_broadcast_matches(name: str, args: tuple[Type, ...], expected: str) -> None:
    assert key(name, *args) == expected


def test_results_of_integer_and_relational_functions() -> None:
    assert resolve("abs", [INT]).ret == UINT
    assert resolve("abs", [v(CHAR, 4)]).ret == v(UCHAR, 4)
    assert resolve("abs_diff", [LONG, LONG]).ret == ULONG
    assert resolve("upsample", [CHAR, UCHAR]).ret == SHORT
    assert resolve("upsample", [v(UCHAR, 4), v(UCHAR, 4)]).ret == v(USHORT, 4)
    assert resolve("upsample", [v(INT, 2), v(UINT, 2)]).ret == v(LONG, 2)
    assert resolve("isequal", [FLOAT, FLOAT]).ret == INT
    assert resolve("isequal", [DOUBLE, DOUBLE]).ret == INT
    assert resolve("isnan", [v(DOUBLE, 4)]).ret == v(LONG, 4)
    assert resolve("signbit", [v(FLOAT, 16)]).ret == v(INT, 16)
    assert resolve("length", [v(FLOAT, 4)]).ret == FLOAT
    assert resolve("get_local_size", [UINT]).ret == SIZE_T
    assert resolve("get_work_dim", []).ret == UINT


def test_implicit_scalar_conversions() -> None:
    assert key("max", SHORT, SHORT) == "max__short_short"
    assert key("get_global_id", INT) == "get_global_id__uint"
    assert key("clamp", v(UCHAR, 4), INT, INT) == "clamp__uchar4_uchar_uchar"
    assert key("fmax", FLOAT, INT) == "fmax__float_float"
    assert key("abs", EnumType("e", ())) == "abs__int"


def test_scalars_widen_to_vector_parameters_as_clang_splats_them() -> None:
    # clang accepts pow(float4, float) and friends by splatting the scalar
    assert key("pow", v(FLOAT, 4), FLOAT) == "pow__float4_float4"
    assert key("copysign", FLOAT, v(FLOAT, 4)) == "copysign__float4_float4"
    assert key("fmin", FLOAT, v(FLOAT, 4)) == "fmin__float4_float4"
    assert key("dot", v(FLOAT, 4), FLOAT) == "dot__float4_float4"
    assert key("rotate", v(UINT, 4), INT, literal=(False, True)) == "rotate__uint4_uint4"
    # a (vector, scalar) overload beats splatting the scalar
    assert key("fmax", v(FLOAT, 4), FLOAT) == "fmax__float4_float"
    assert key("clamp", v(FLOAT, 4), FLOAT, FLOAT) == "clamp__float4_float_float"
    # all scalars: the scalar overload, never a splat
    assert key("pow", FLOAT, FLOAT) == "pow__float_float"
    # cross has no scalar form and two vector ones: splatting both scalars is ambiguous
    with pytest.raises(BuiltinError) as err:
        resolve("cross", [FLOAT, FLOAT])
    assert err.value.kind == "ambiguous"


def test_no_conversions_between_vector_types() -> None:
    with pytest.raises(BuiltinError) as err:
        resolve("sqrt", [v(INT, 4)])
    assert err.value.kind == "no_match"
    with pytest.raises(BuiltinError):
        resolve("select", [v(FLOAT, 4), v(FLOAT, 4), v(SHORT, 4)])
    with pytest.raises(BuiltinError):
        resolve("shuffle", [v(FLOAT, 4), v(INT, 4)])


@pytest.mark.parametrize("space", [G, L, C, P])
def test_vload_in_every_address_space(space: AddressSpace) -> None:
    code = {G: "g", L: "l", C: "k", P: "p"}[space]
    assert key("vload4", SIZE_T, PointerType(FLOAT, space, const=True)) == f"vload4__ulong_c{code}float"
    assert resolve("vload4", [INT, PointerType(FLOAT, space)]).ret == v(FLOAT, 4)
    assert resolve("vload_half", [SIZE_T, PointerType(HALF, space, const=True)]).ret == FLOAT
    assert resolve("vloada_half3", [SIZE_T, PointerType(HALF, space)]).ret == v(FLOAT, 3)


def test_vstore() -> None:
    ov = resolve("vstore3", [v(INT, 3), SIZE_T, PointerType(INT, G)])
    assert ov.key == "vstore3__int3_ulong_gint" and ov.ret == VOID and ov.pointer_out == (2,)
    with pytest.raises(BuiltinError):
        resolve("vstore4", [v(FLOAT, 4), SIZE_T, PointerType(FLOAT, C)])
    with pytest.raises(BuiltinError):
        resolve("vstore4", [v(FLOAT, 4), SIZE_T, PointerType(FLOAT, G, const=True)])
    assert is_builtin("vstore_half4_rtz") and is_builtin("vstorea_half16_rtn")
    assert key("vstore_half_rte", DOUBLE, SIZE_T, PointerType(HALF, L)) == (
        "vstore_half_rte__double_ulong_lhalf"
    )


@pytest.mark.parametrize("space", [G, L])
@pytest.mark.parametrize("elem", [INT, UINT])
def test_atomics(space: AddressSpace, elem: ScalarType) -> None:
    volatile_ptr = PointerType(elem, space, volatile=True)
    plain_ptr = PointerType(elem, space)
    for ptr in (volatile_ptr, plain_ptr):
        ov = resolve("atomic_add", [ptr, elem])
        assert ov.ret == elem and ov.params[0] == volatile_ptr and ov.pointer_out == (0,)
        assert resolve("atomic_inc", [ptr]).ret == elem
        assert resolve("atomic_cmpxchg", [ptr, elem, elem]).ret == elem
        assert resolve("atom_xor", [ptr, elem]).ret == elem
    # a literal operand converts to the pointee type
    assert resolve("atomic_add", [plain_ptr, INT], [False, True]).ret == elem


def test_atomic_errors_and_float_xchg() -> None:
    assert resolve("atomic_xchg", [PointerType(FLOAT, G), FLOAT]).ret == FLOAT
    assert resolve("atom_add", [PointerType(LONG, G), LONG]).ret == LONG
    with pytest.raises(BuiltinError):
        resolve("atomic_add", [PointerType(INT, P), INT])
    with pytest.raises(BuiltinError):
        resolve("atomic_add", [PointerType(FLOAT, G), FLOAT])
    with pytest.raises(BuiltinError):
        resolve("atomic_add", [PointerType(LONG, G), LONG])


@pytest.mark.parametrize("space", [G, L, P])
def test_pointer_out_arguments(space: AddressSpace) -> None:
    ov = resolve("sincos", [v(FLOAT, 4), PointerType(v(FLOAT, 4), space)])
    assert ov.ret == v(FLOAT, 4) and ov.pointer_out == (1,)
    assert resolve("frexp", [DOUBLE, PointerType(INT, space)]).ret == DOUBLE
    assert resolve("remquo", [FLOAT, FLOAT, PointerType(INT, space)]).pointer_out == (2,)
    assert resolve("lgamma_r", [v(DOUBLE, 2), PointerType(v(INT, 2), space)]).ret == v(DOUBLE, 2)
    assert resolve("modf", [FLOAT, PointerType(FLOAT, space)]).ret == FLOAT
    assert resolve("fract", [FLOAT, PointerType(FLOAT, space)]).ret == FLOAT


def test_pointer_out_rejects_constant_and_wrong_pointee() -> None:
    with pytest.raises(BuiltinError):
        resolve("sincos", [FLOAT, PointerType(FLOAT, C)])
    with pytest.raises(BuiltinError):
        resolve("sincos", [FLOAT, PointerType(INT, P)])
    with pytest.raises(BuiltinError):
        resolve("sincos", [v(FLOAT, 4), PointerType(FLOAT, P)])


def test_async_copies() -> None:
    local = PointerType(v(FLOAT, 4), L)
    glob = PointerType(v(FLOAT, 4), G)
    ov = resolve("async_work_group_copy", [local, glob, SIZE_T, EVENT_T])
    assert ov.ret == EVENT_T and ov.pointer_out == (0,)
    assert resolve("async_work_group_copy", [glob, local, INT, INT], [False, False, False, True])
    assert resolve("async_work_group_strided_copy", [local, glob, SIZE_T, SIZE_T, EVENT_T])
    with pytest.raises(BuiltinError):
        resolve("async_work_group_copy", [local, local, SIZE_T, EVENT_T])
    assert resolve("wait_group_events", [INT, PointerType(EVENT_T, P)]).ret == VOID
    assert resolve("prefetch", [PointerType(INT, G), SIZE_T]).ret == VOID


def test_convert_names() -> None:
    assert is_builtin("convert_int4_sat_rte")
    assert is_builtin("convert_float")
    assert is_builtin("convert_uchar16_rtz")
    assert not is_builtin("convert_float_sat")
    assert not is_builtin("convert_double4_sat_rtn")
    assert not is_builtin("convert_int5")
    assert not is_builtin("convert_bool")
    assert not is_builtin("convert_int4_rte_sat")
    assert resolve("convert_int4_sat_rte", [v(FLOAT, 4)]).ret == v(INT, 4)
    assert resolve("convert_float", [ULONG]).family == "convert"
    with pytest.raises(BuiltinError):
        resolve("convert_int4", [v(FLOAT, 8)])
    with pytest.raises(BuiltinError):
        resolve("convert_int4", [FLOAT])


def test_as_size_checks() -> None:
    assert resolve("as_float", [UINT]).ret == FLOAT
    assert resolve("as_int4", [v(FLOAT, 4)]).ret == v(INT, 4)
    assert resolve("as_int4", [v(UCHAR, 16)]).ret == v(INT, 4)
    assert resolve("as_float4", [v(INT, 3)]).ret == v(FLOAT, 4)  # 3-wide counts as 4
    assert resolve("as_uint3", [v(FLOAT, 4)]).ret == v(UINT, 3)
    assert resolve("as_double", [v(FLOAT, 2)]).ret == DOUBLE
    for bad in ([DOUBLE], [v(FLOAT, 2)], [UCHAR], [v(FLOAT, 8)]):
        with pytest.raises(BuiltinError):
            resolve("as_int", bad)
    assert not is_builtin("as_bool") and not is_builtin("as_float5")


def test_ambiguous_calls() -> None:
    for name, args in (("sqrt", [INT]), ("max", [INT, UINT]), ("sqrt", [CHAR])):
        with pytest.raises(BuiltinError) as err:
            resolve(name, args)
        assert err.value.kind == "ambiguous"
        assert f"'{name}'" in err.value.message and "ambiguous" in err.value.message
    with pytest.raises(BuiltinError) as err:
        resolve("sqrt", [INT])
    assert {c.signature for c in err.value.candidates} == {"float sqrt(float)", "double sqrt(double)"}
    assert "(int)" in err.value.message


def test_integer_literals_break_ties() -> None:
    assert key("max", UINT, INT, literal=(False, True)) == "max__uint_uint"
    assert key("min", ULONG, INT, literal=(False, True)) == "min__ulong_ulong"
    assert key("max", INT, INT, literal=(True, True)) == "max__int_int"
    assert key("clamp", FLOAT, INT, INT, literal=(False, True, True)) == "clamp__float_float_float"
    with pytest.raises(BuiltinError):
        resolve("max", [INT, UINT], [False, False])


def test_calls_from_the_kernel_corpus() -> None:
    lit = True
    assert key("mad24", UINT, UINT, INT, literal=(False, False, lit)) == "mad24__uint_uint_uint"
    assert key("select", INT, INT, INT, literal=(lit, lit, False)) == "select__int_int_int"
    assert key("clamp", INT, INT, INT, literal=(False, lit, False)) == "clamp__int_int_int"
    assert key("wait_group_events", INT, PointerType(EVENT_T, P), literal=(lit, False)) == (
        "wait_group_events__int_pevent_t"
    )
    assert key("atom_add", PointerType(INT, L), INT) == "atom_add__vlint_int"
    assert key("vstore_half", FLOAT, INT, PointerType(HALF, G)) == "vstore_half__float_ulong_ghalf"
    assert key("printf", PointerType(CHAR, C), PointerType(CHAR, C), INT) == "printf__ckchar_va"
    with pytest.raises(BuiltinError) as err:
        resolve("clamp", [v(FLOAT, 4), v(INT, 4), v(INT, 4)])
    assert err.value.message.startswith(
        "no matching overload for builtin 'clamp' with (float4, int4, int4)"
    )


def test_no_match_messages() -> None:
    with pytest.raises(BuiltinError) as err:
        resolve("dot", [INT, INT])
    assert err.value.kind == "no_match"
    assert "(int, int)" in err.value.message and "float dot(float, float)" in err.value.message
    with pytest.raises(BuiltinError) as err:
        resolve("normalize", [v(INT, 4)])
    assert err.value.kind == "no_match" and "(int4)" in err.value.message
    assert "float4 normalize(float4)" in err.value.message
    with pytest.raises(BuiltinError) as err:
        resolve("sqrt", [FLOAT, FLOAT])
    assert err.value.kind == "no_match"
    with pytest.raises(BuiltinError) as err:
        resolve("no_such_function", [INT])
    assert "not a builtin" in err.value.message
    # the memoised error is raised again
    with pytest.raises(BuiltinError):
        resolve("dot", [INT, INT])


def test_names() -> None:
    for name in ("get_global_id", "acospi", "half_recip", "native_powr", "rhadd", "upsample",
                 "fast_normalize", "isunordered", "vload16", "vload_half8", "vstore_half_rtp",
                 "mem_fence", "async_work_group_strided_copy", "atom_cmpxchg", "shuffle2",
                 "printf", "as_ulong16", "convert_char3_sat"):
        assert is_builtin(name), name
    for name in ("vec_step", "native_fma", "half_fabs", "vload1", "vload_half1", "atomic_nand"):
        assert not is_builtin(name), name
    assert overloads("nope") == ()


def test_keys_unique_and_identifier_safe() -> None:
    seen: dict[str, Overload] = {}
    for ov in all_overloads():
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ov.key), ov.key
        assert ov.key not in seen, (ov, seen.get(ov.key))
        assert ov.family in FAMILIES
        seen[ov.key] = ov
    assert len(seen) > 9000
    assert lookup("clamp__float4_float_float").params == (v(FLOAT, 4), FLOAT, FLOAT)
    assert lookup("vload4__ulong_cgfloat").ret == v(FLOAT, 4)
    assert lookup("convert_int4_sat_rte__float4").ret == v(INT, 4)
    assert lookup(resolve("atomic_add", [PointerType(INT, L), INT]).key).name == "atomic_add"
    with pytest.raises(KeyError):
        lookup("clamp__int4_float_float")


def test_constants() -> None:
    assert BUILTIN_CONSTANTS["CLK_LOCAL_MEM_FENCE"] == (UINT, 1)
    assert BUILTIN_CONSTANTS["CLK_GLOBAL_MEM_FENCE"] == (UINT, 2)
    assert BUILTIN_CONSTANTS["INT_MIN"] == (INT, -(2**31))
    assert BUILTIN_CONSTANTS["UINT_MAX"] == (UINT, 0xFFFFFFFF)
    assert BUILTIN_CONSTANTS["FLT_EPSILON"] == (FLOAT, 2.0**-23)
    assert BUILTIN_CONSTANTS["M_PI_F"][0] == FLOAT and BUILTIN_CONSTANTS["M_PI"][0] == DOUBLE
    assert BUILTIN_CONSTANTS["M_SQRT2_F"][1] == pytest.approx(2**0.5)
    for name in ("MAXFLOAT", "HUGE_VALF", "INFINITY", "NAN", "FLT_MAX", "FLT_MIN", "DBL_MAX",
                 "DBL_MIN", "DBL_EPSILON", "INT_MAX", "CHAR_BIT", "LONG_MAX", "LONG_MIN",
                 "ULONG_MAX", "M_E_F", "M_1_PI", "M_2_SQRTPI_F", "M_LOG10E"):
        assert name in BUILTIN_CONSTANTS
