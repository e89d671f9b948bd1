"""Parsing of OpenCL build-option strings."""

import pytest

from ppcl.compiler.frontend.options import BuildOptionsError, parse_build_options


def test_empty_string_gives_defaults() -> None:
    options = parse_build_options("")
    assert options.defines == ()
    assert options.include_dirs == ()
    assert options.cl_std is None
    assert options.opencl_c_version == 120
    assert not options.fast_relaxed_math
    assert parse_build_options(None) == options


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("-D X", (("X", None),)),
        ("-DX", (("X", None),)),
        ("-D X=1", (("X", "1"),)),
        ("-DX=val", (("X", "val"),)),
        ("-DX=", (("X", ""),)),
        ("-D 'S=a b'", (("S", "a b"),)),
        ('-D"F(x)=((x)*2)"', (("F(x)", "((x)*2)"),)),
        ("-DA -DB=2", (("A", None), ("B", "2"))),
    ],
)
def test_define_forms(text: str, expected: tuple[tuple[str, str | None], ...]) -> None:
    assert parse_build_options(text).defines == expected


def test_defines_and_undefines_keep_their_order() -> None:
    options = parse_build_options("-DA=1 -U A -DB -UB -DA=2")
    assert options.undefines == ("A", "B")
    assert options.macro_actions == (
        ("D", "A", "1"),
        ("U", "A", None),
        ("D", "B", None),
        ("U", "B", None),
        ("D", "A", "2"),
    )


def test_include_dirs_in_both_forms_and_quoted() -> None:
    options = parse_build_options('-I inc -Iother -I "with space"')
    assert options.include_dirs == ("inc", "other", "with space")


@pytest.mark.parametrize("std", ["CL1.0", "CL1.1", "CL1.2", "CL2.0", "CL3.0"])
def test_cl_std_accepted(std: str) -> None:
    options = parse_build_options(f"-cl-std={std}")
    assert options.cl_std == std
    assert options.opencl_c_version == int(std[2]) * 100 + int(std[4]) * 10


@pytest.mark.parametrize("std", ["CL1.3", "CL2.1", "cl1.2", "CLC++", ""])
def test_cl_std_rejected(std: str) -> None:
    with pytest.raises(BuildOptionsError, match="^CL_INVALID_BUILD_OPTIONS:.*-cl-std"):
        parse_build_options(f"-cl-std={std}")


@pytest.mark.parametrize(
    ("flag", "field"),
    [
        ("-cl-mad-enable", "mad_enable"),
        ("-cl-no-signed-zeros", "no_signed_zeros"),
        ("-cl-finite-math-only", "finite_math_only"),
        ("-cl-denorms-are-zero", "denorms_are_zero"),
        ("-cl-single-precision-constant", "single_precision_constant"),
        ("-cl-fp32-correctly-rounded-divide-sqrt", "fp32_correctly_rounded_divide_sqrt"),
        ("-cl-opt-disable", "opt_disable"),
        ("-cl-strict-aliasing", "strict_aliasing"),
        ("-cl-uniform-work-group-size", "uniform_work_group_size"),
        ("-cl-no-subgroup-ifp", "no_subgroup_ifp"),
        ("-cl-kernel-arg-info", "kernel_arg_info"),
        ("-w", "warnings_disabled"),
        ("-Werror", "werror"),
        ("-g", "debug"),
    ],
)
def test_flags(flag: str, field: str) -> None:
    assert getattr(parse_build_options(flag), field) is True
    assert getattr(parse_build_options(""), field) is False


def test_fast_relaxed_math_implies_the_spec_flags() -> None:
    options = parse_build_options("-cl-fast-relaxed-math")
    assert options.fast_relaxed_math
    assert options.unsafe_math_optimizations
    assert options.finite_math_only
    assert options.no_signed_zeros
    assert options.mad_enable


def test_unsafe_math_implies_mad_and_no_signed_zeros() -> None:
    options = parse_build_options("-cl-unsafe-math-optimizations")
    assert options.no_signed_zeros and options.mad_enable
    assert not options.finite_math_only and not options.fast_relaxed_math


@pytest.mark.parametrize("text", ["-O3", "-cl-fast-math", "--foo", "bare", "-cl-std"])
def test_unknown_option_names_the_option(text: str) -> None:
    with pytest.raises(BuildOptionsError) as info:
        parse_build_options(f"-DX {text}")
    message = str(info.value)
    assert message.startswith("CL_INVALID_BUILD_OPTIONS:")
    assert text in message
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("text", ["-D", "-I", "-U", "-DX -I"])
def test_missing_argument(text: str) -> None:
    with pytest.raises(BuildOptionsError, match="^CL_INVALID_BUILD_OPTIONS: missing argument"):
        parse_build_options(text)


def test_unbalanced_quote_is_rejected() -> None:
    with pytest.raises(BuildOptionsError, match="^CL_INVALID_BUILD_OPTIONS:"):
        parse_build_options('-D "X')


def test_canonical_round_trips_and_ignores_spelling() -> None:
    a = parse_build_options('-D X -DY=2 -I "a b" -cl-fast-relaxed-math -w -cl-std=CL1.2')
    b = parse_build_options(
        "-DX  -D Y=2 -I'a b' -cl-std=CL1.2 -w -cl-fast-relaxed-math -cl-mad-enable"
    )
    assert a == b
    assert a.canonical() == b.canonical()
    assert parse_build_options(a.canonical()) == a
    assert a.raw != b.raw


def test_canonical_keeps_define_order() -> None:
    assert parse_build_options("-DA -UA").canonical() != parse_build_options("-UA -DA").canonical()


def test_options_are_frozen_and_hashable() -> None:
    options = parse_build_options("-DX")
    with pytest.raises(AttributeError):
        options.debug = True  # type: ignore[misc]
    assert hash(options) == hash(parse_build_options("-D X"))
