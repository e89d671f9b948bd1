"""The OpenCL C preprocessor: options, includes, predefined macros, pragmas and line mapping."""

import importlib
from pathlib import Path

import pytest
from pycparserext.ext_c_parser import OpenCLCParser

from ppcl.compiler.diagnostics import Diagnostics, Loc, Severity
from ppcl.compiler.frontend.options import parse_build_options
from ppcl.compiler.frontend.preprocess import PreprocessedSource, preprocess


def run(
    source: str,
    options: str = "",
    filename: str = "k.cl",
    **kwargs: object,
) -> tuple[PreprocessedSource, Diagnostics]:
    diagnostics = Diagnostics()
    result = preprocess(source, filename, parse_build_options(options), diagnostics, **kwargs)  # type: ignore[arg-type]
    return result, diagnostics


def code_lines(result: PreprocessedSource) -> list[str]:
    """Non-blank output lines without markers, whitespace collapsed (padding keeps columns)."""
    return [
        " ".join(line.split())
        for line in result.text.splitlines()
        if line.strip() and not line.startswith("#line")
    ]


def value_of(expression: str, options: str = "", **kwargs: object) -> str:
    result, diagnostics = run(f"int v = {expression};\n", options, **kwargs)
    assert not diagnostics.items, diagnostics.format()
    return code_lines(result)[0].removeprefix("int v = ").removesuffix(";").strip()


def test_defines_and_undefines_apply_in_order() -> None:
    assert value_of("A", "-DA=1 -UA -DA=2") == "2"
    assert value_of("A", "-DA=1 -DA=2 -UA") == "A"
    assert value_of("A", "-DA") == "1"
    assert value_of("F(3)", "-D'F(x)=((x)+1)'") == "((3)+1)"


@pytest.mark.parametrize(
    ("macro", "options", "expected"),
    [
        ("__OPENCL_VERSION__", "", "120"),
        ("__OPENCL_C_VERSION__", "", "120"),
        ("__OPENCL_C_VERSION__", "-cl-std=CL1.1", "110"),
        ("__OPENCL_C_VERSION__", "-cl-std=CL2.0", "200"),
        ("CL_VERSION_1_0", "", "100"),
        ("CL_VERSION_1_1", "", "110"),
        ("CL_VERSION_1_2", "", "120"),
        # named under -cl-std=CL1.2 too, as clang does: an undefined name would be 0 in #if
        ("CL_VERSION_2_0", "", "200"),
        ("CL_VERSION_3_0", "-cl-std=CL1.1", "300"),
        # undefined: the device has the full profile (pocl's clang defines none either)
        ("__EMBEDDED_PROFILE__", "", "__EMBEDDED_PROFILE__"),
        ("__ENDIAN_LITTLE__", "", "1"),
        ("FP_FAST_FMA", "", "1"),
        ("FP_FAST_FMAF", "", "1"),
        ("cl_khr_fp64", "", "1"),
        ("cl_khr_global_int32_base_atomics", "", "1"),
        ("cl_khr_byte_addressable_store", "", "1"),
        ("__IMAGE_SUPPORT__", "", "1"),
        ("__FAST_RELAXED_MATH__", "", "__FAST_RELAXED_MATH__"),
        ("__FAST_RELAXED_MATH__", "-cl-fast-relaxed-math", "1"),
        ("NULL", "", "((void*)0)"),
        ("vec_step(float4)", "", "__ppcl_vec_step(sizeof(float4))"),
        ("__FILE__", "", '"k.cl"'),
        ("__LINE__", "", "1"),
    ],
)
def test_predefined_macros(macro: str, options: str, expected: str) -> None:
    assert value_of(macro, options) == expected


def test_image_support_and_fp64_switches() -> None:
    assert value_of("__IMAGE_SUPPORT__", image_support=True) == "1"
    assert value_of("cl_khr_fp64", fp64=False) == "cl_khr_fp64"


def test_kernel_exec_expands_to_attributes() -> None:
    text = value_of("__kernel_exec(64, float4)")
    assert "work_group_size_hint(64, 1, 1)" in text and "vec_type_hint(float4)" in text


def test_include_relative_to_the_source_then_include_dirs(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "inc").mkdir()
    (tmp_path / "src" / "local.h").write_text("#pragma once\n#define LOCAL 1\n")
    (tmp_path / "inc" / "other.h").write_text("#define OTHER 2\n")
    (tmp_path / "inc" / "local.h").write_text("#define LOCAL 99\n")
    kernel = tmp_path / "src" / "k.cl"
    source = '#include "local.h"\n#include "local.h"\n#include <other.h>\nint v = LOCAL + OTHER;\n'
    kernel.write_text(source)
    result, diagnostics = run(source, f"-I {tmp_path / 'inc'}", filename=str(kernel))
    assert not diagnostics.items, diagnostics.format()
    assert code_lines(result) == ["int v = 1 + 2 ;"]
    assert result.includes == [str(tmp_path / "src" / "local.h"), str(tmp_path / "inc" / "other.h")]
    assert str(tmp_path / "inc" / "other.h") in diagnostics.sources.files


def test_extra_headers_take_priority(tmp_path: Path) -> None:
    (tmp_path / "h.h").write_text("#define H 99\n")
    headers = {"h.h": '#define H 3\n#include "g.h"\n', "g.h": "int g;\n"}
    result, diagnostics = run(
        '#include "h.h"\nint v = H;\n', f"-I{tmp_path}", extra_headers=headers
    )
    assert not diagnostics.items, diagnostics.format()
    assert code_lines(result) == ["int g;", "int v = 3;"]
    assert result.includes == ["h.h", "g.h"]


def test_missing_include_is_a_located_error() -> None:
    _, diagnostics = run('int a;\n#include  "nope.h"\n')
    [error] = diagnostics.errors
    assert error.message == "'nope.h' file not found"
    assert error.loc == Loc("k.cl", 2, 11)
    assert error.format(diagnostics.sources).endswith('#include  "nope.h"\n          ^')


def test_error_and_warning_directives_are_located() -> None:
    _, diagnostics = run("int a;\n  #error stop here\n#warning careful\n")
    error, warning = diagnostics.items
    assert (error.severity, error.message, error.loc) == (
        Severity.ERROR,
        "stop here",
        Loc("k.cl", 2, 4),
    )
    assert (warning.severity, warning.message, warning.loc) == (
        Severity.WARNING,
        "careful",
        Loc("k.cl", 3, 2),
    )


def test_error_and_warning_after_a_line_directive_use_its_numbering() -> None:
    """#error and #warning report the line and file a #line directive gives, as the front
    end's own diagnostics after it do; they kept the physical line."""
    source = 'int a;\n#line 124 "gen/name.cl"\n#error stop\n#line 40\n#warning careful\n#bogus\n'
    _, diagnostics = run(source)
    error, warning, unknown = diagnostics.items
    assert (error.message, error.loc) == ("stop", Loc("gen/name.cl", 124, 2))
    assert (warning.message, warning.loc) == ("careful", Loc("gen/name.cl", 40, 2))
    assert unknown.loc == Loc("gen/name.cl", 41, 2)


def test_error_inside_header_names_the_header() -> None:
    headers = {"h.h": "int ok;\n\n#error bad header\n"}
    _, diagnostics = run('int a;\n#include "h.h"\n', extra_headers=headers)
    [error] = diagnostics.errors
    assert error.loc == Loc("h.h", 3, 2)
    assert "h.h:3:2: error: bad header\n#error bad header" in diagnostics.format()


def test_unknown_directive_and_unterminated_if_are_errors() -> None:
    _, diagnostics = run("#foo\n#ifdef X\nint a;\n")
    messages = [(d.loc.line, d.message) for d in diagnostics.errors]
    assert (1, "invalid preprocessing directive '#foo'") in messages
    assert any(line == 2 and "Unterminated" in message for line, message in messages)


def test_pragmas_are_recorded_and_removed() -> None:
    source = (
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
        "#pragma OPENCL EXTENSION cl_khr_byte_addressable_store : disable\n"
        "#pragma OPENCL EXTENSION cl_foo_bar : enable\n"
        "#pragma OPENCL FP_CONTRACT OFF\n"
        "void f(void) {\n"
        "    #pragma unroll 4\n"
        "    for (;;) {}\n"
        "}\n"
    )
    result, diagnostics = run(source)
    assert "pragma" not in result.text
    assert result.extensions == {"cl_khr_fp64": True, "cl_khr_byte_addressable_store": False}
    assert result.fp_contract is False
    assert result.pragmas == [(Loc("k.cl", 6, 6), "unroll 4")]
    [warning] = diagnostics.items
    assert warning.severity is Severity.WARNING and "cl_foo_bar" in warning.message
    assert warning.loc.line == 3


def test_fp64_pragma_without_fp64_warns() -> None:
    result, diagnostics = run("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n", fp64=False)
    assert result.extensions == {}
    assert diagnostics.items and "cl_khr_fp64" in diagnostics.items[0].message


SOURCE_WITH_HEADER = """\
#define N 16
/* a comment
   over lines */ #include "h.h"
__kernel void f(__global float *a) {
\tint i = get_global_id(0);   /* c */ int j = 3;



    a[i] = N + i; // tail
    a[i] += 1 + \\
            2;
}
"""

HEADER = "// header\n\nfloat helper(float x) { return x; }\n"


def test_line_map_and_parser_coords_follow_includes() -> None:
    result, diagnostics = run(SOURCE_WITH_HEADER, extra_headers={"h.h": HEADER})
    assert not diagnostics.items, diagnostics.format()
    out = result.text.splitlines()
    assert len(out) == len(result.line_map)
    for index, line in enumerate(out, start=1):
        if not line.strip() or line.startswith("#line"):
            continue
        file, lineno = result.line_map[index - 1]
        original = (HEADER if file == "h.h" else SOURCE_WITH_HEADER).splitlines()[lineno - 1]
        first = line.split()[0]
        assert first in original, (index, line, original)

    ast = OpenCLCParser().parse(result.text, "k.cl")
    helper, kernel = ast.ext
    assert (helper.coord.file, helper.coord.line, helper.coord.column) == ("h.h", 3, 7)
    assert (kernel.coord.file, kernel.coord.line) == ("k.cl", 4)
    decl_i, decl_j, assign, add = kernel.body.block_items
    assert (decl_i.coord.line, decl_i.coord.column) == (5, 6)
    assert (decl_j.coord.line, decl_j.coord.column) == (5, 42)
    assert (assign.coord.line, assign.coord.column) == (9, 5)
    assert (add.coord.line, add.coord.column) == (10, 5)
    assert (add.rvalue.right.coord.line, add.rvalue.right.coord.column) == (11, 13)


def test_columns_are_preserved_without_macros() -> None:
    source = "int  a =   1;\n\t float /* x */ b\t= 2.0f ;\n"
    result, _ = run(source)
    for index, line in enumerate(result.text.splitlines(), start=1):
        if line.startswith("#line"):
            continue
        file, lineno = result.line_map[index - 1]
        original = source.replace("/* x */", "       ").splitlines()[lineno - 1]
        assert line == original.rstrip()


def test_locate_maps_macro_expansions_to_the_macro_name() -> None:
    source = "#define LONG_VALUE 123456789\nint v = LONG_VALUE + x;\n"
    result, _ = run(source)
    out_line = next(i for i, line in enumerate(result.text.splitlines(), 1) if "int v" in line)
    text = result.text.splitlines()[out_line - 1]
    assert result.locate(out_line, text.index("123") + 1) == Loc("k.cl", 2, 9)
    assert result.locate(out_line, text.index("x") + 1) == Loc("k.cl", 2, 22)
    assert result.locate(out_line, 1) == Loc("k.cl", 2, 1)


def test_line_directive_in_source_renames_lines() -> None:
    result, _ = run('int a;\n#line 100 "gen.cl"\nint b;\n#line 7\nint c;\n')
    ast = OpenCLCParser().parse(result.text, "k.cl")
    coords = [(d.coord.file, d.coord.line) for d in ast.ext]
    assert coords == [("k.cl", 1), ("gen.cl", 100), ("gen.cl", 7)]


def test_line_directive_renames_line_and_file_macros() -> None:
    """__LINE__ and __FILE__ after a #line directive are the line and file it gives, as in
    clang: __LINE__ was the physical line (36 where pocl says 110)."""
    source = ('#define HERE __LINE__\nint a = __LINE__;\n#line 100 "gen.cl"\n'
              'int b = __LINE__; int c = HERE;\nchar d[] = __FILE__;\n#line 7\nint e = __LINE__;\n')
    result, diagnostics = run(source)
    assert not diagnostics.errors
    text = "".join(result.text.split())
    for expected in ("inta=2;", "intb=100;intc=100;", 'chard[]="gen.cl";', "inte=7;"):
        assert expected in text, text


def test_conditional_blocks_and_gaps_keep_lines() -> None:
    source = (
        "#if 0\nint skipped;\n#endif\n"
        + "\n" * 20
        + "int x;\n#ifdef __OPENCL_VERSION__\nint y;\n#endif\n"
    )
    result, _ = run(source)
    ast = OpenCLCParser().parse(result.text, "k.cl")
    assert [(d.name, d.coord.line) for d in ast.ext] == [("x", 24), ("y", 26)]


def test_source_without_directives_skips_pcpp_but_keeps_columns():
    pp_module = importlib.import_module("ppcl.compiler.frontend.preprocess")

    src = '/* head */ __kernel void f(__global int *a) { // tail\n    a[0] = 1; /* x\n y */ a[1] = 2; }\n'
    options = parse_build_options("")
    assert pp_module._needs_no_preprocessing(src, pp_module._predefined(options, False, True), options)
    result = preprocess(src, "fast.cl", options, Diagnostics())
    lines = result.text.splitlines()
    assert lines[0] == '#line 1 "fast.cl"'
    assert lines[1].index("__kernel") == src.index("__kernel")
    assert "/*" not in result.text and "//" not in result.text
    assert lines[3].index("a[1]") == src.splitlines()[2].index("a[1]")
    assert result.locate(3, 5) == Loc("fast.cl", 2, 5)


def test_macro_use_or_directive_takes_the_full_preprocessor():
    pp_module = importlib.import_module("ppcl.compiler.frontend.preprocess")

    options = parse_build_options("")
    macros = pp_module._predefined(options, False, True)
    assert not pp_module._needs_no_preprocessing("int x = CL_VERSION_1_2;", macros, options)
    assert not pp_module._needs_no_preprocessing("#define A 1\nint x = A;", macros, options)
    assert not pp_module._needs_no_preprocessing("int x = 1;", macros, parse_build_options("-DX=1"))


@pytest.mark.parametrize(
    ("source", "line", "col", "message"),
    [
        ("#define\n", 1, 2, "macro name missing"),
        ("#undef\n", 1, 2, "macro name missing"),
        ("#ifdef\n#endif\n", 1, 2, "macro name missing"),
        ("#ifndef\n#endif\n", 1, 2, "macro name missing"),
        ("#ifndef G\n#define\n#endif\n", 2, 2, "macro name missing"),
        ("#define 5 x\n", 1, 9, "macro name must be an identifier"),
        ("#undef 5\n", 1, 8, "macro name must be an identifier"),
        ("#ifdef 5\n#endif\n", 1, 8, "macro name must be an identifier"),
        ("#if\n#endif\n", 1, 2, "#if with no expression"),
        ("int x;\n#if 0\n#elif\n#endif\n", 3, 2, "#elif with no expression"),
        ("#if !\n#endif\n", 1, 2, "expected value in #if expression"),
        ("#if !defined\n#endif\n", 1, 2, "expected value in #if expression"),
        ("#if !defined(\n#endif\n", 1, 2, "expected value in #if expression"),
        ("#include\n", 1, 2, 'expected "FILENAME" or <FILENAME> after #include'),
        ("#line 0\n", 1, 7, "#line number must be between 1 and 2147483647"),
        ("#line 99999999999999999999\n", 1, 7, "#line number must be between 1 and 2147483647"),
        ("#line 0x10\n", 1, 2, "#line directive requires a line number and an optional file name"),
    ],
)
def test_directive_missing_or_bad_operand_is_located(source, line, col, message) -> None:
    # pcpp indexed these operands unchecked: the build ended in an IndexError (or, for #line,
    # a ValueError or diagnostics at line 0)
    _, diagnostics = run(source + "int y;\n")
    assert [(d.loc, d.message) for d in diagnostics.errors] == [(Loc("k.cl", line, col), message)]


def test_directives_without_operands_in_skipped_code_are_ignored() -> None:
    source = "#if 0\n#define\n#undef\n#include\n#ifdef\n#endif\n#if\n#endif\n#endif\nint y;\n"
    result, diagnostics = run(source)
    assert not diagnostics.items, diagnostics.format()
    assert code_lines(result) == ["int y;"]


@pytest.mark.parametrize(("condition", "message"), [
    ("1 / 0", "division by zero in preprocessor expression '1 / 0'"),
    ("(", "invalid preprocessor expression '('"),
    ("1.5", "invalid preprocessor expression '1.5'"),
])
def test_if_expression_errors_do_not_quote_python(condition, message) -> None:
    # pcpp's message quoted the Python exception: "due to ZeroDivisionError('division by zero')"
    _, diagnostics = run(f"int x;\n#if {condition}\n#endif\n")
    assert [(d.loc, d.message) for d in diagnostics.errors] == [(Loc("k.cl", 2, 1), message)]


def test_backslash_newline_inside_a_token_joins_it() -> None:
    # C splices lines before forming tokens: 'va\<newline>lue' is one identifier, in the text
    # and in a macro's body; pcpp spliced only between tokens and made two of them. The lines
    # after the splice keep their numbers.
    source = ('#include "split.h"\nint va\\\nlue = 12\\\n34;\n'
              "int k = TWICE(value);\nint line = __LINE__;\n")
    result, diagnostics = run(source, extra_headers={"split.h": "#define TWICE(x) dou\\\nble(x)\n"})
    assert not diagnostics.items, diagnostics.format()
    lines = [line.replace(" ", "") for line in code_lines(result)]
    assert lines == ["intvalue=1234;", "intk=double(value);", "intline=6;"]


@pytest.mark.parametrize("body", ["#define N 3\nint a = N;\n", "int a = 3;\n"])
def test_utf8_byte_order_mark_is_skipped(body: str) -> None:
    # a file saved with a byte order mark, which clang skips; the build stopped at
    # "unexpected character '\ufeff'"
    result, diagnostics = run("\ufeff" + body)
    assert not diagnostics.items, diagnostics.format()
    assert [line.replace(" ", "") for line in code_lines(result)] == ["inta=3;"]


@pytest.mark.parametrize(
    "condition",
    [
        "defined(__LINE__)",
        "defined __FILE__",
        "defined(INT_MAX) && defined(M_PI_F) && defined(CLK_LOCAL_MEM_FENCE)",
        "defined(MAXFLOAT) && defined(HUGE_VALF) && defined(NAN) && defined(DBL_RADIX)",
        "CHAR_BIT == 8 && INT_MAX == 2147483647 && FLT_RADIX == 2",
        "INT_MIN < 0 && LONG_MAX > INT_MAX && UINT_MAX == 0xffffffff",
        "CLK_GLOBAL_MEM_FENCE == 2 && DBL_MANT_DIG == 53",
    ],
)
def test_builtin_macros_are_defined_in_conditions(condition: str) -> None:
    """__LINE__ and the macros of the OpenCL C headers (limits, math constants, fence flags),
    which the front end resolves as names, are defined for #if, #ifdef and defined(); they
    were unknown identifiers there, so '#if CHAR_BIT == 8' took the #else branch."""
    source = f"#if {condition}\nint yes;\n#else\nint no;\n#endif\n"
    result, diagnostics = run(source)
    assert not diagnostics.items, diagnostics.format()
    assert code_lines(result) == ["int yes;"]


def test_undef_removes_a_builtin_macro() -> None:
    source = ("#ifdef __LINE__\nint line;\n#endif\n#undef M_PI_F\n#ifndef M_PI_F\nint gone;\n"
              "#endif\n#if defined(M_PI)\nint kept;\n#endif\n")
    result, diagnostics = run(source, "-UCHAR_BIT")
    assert not diagnostics.items, diagnostics.format()
    assert code_lines(result) == ["int line;", "int gone;", "int kept;"]
    result, _ = run("#if CHAR_BIT\nint bits;\n#endif\n", "-UCHAR_BIT")
    assert code_lines(result) == []


def test_a_floating_builtin_macro_in_an_if_is_an_error() -> None:
    """FLT_MAX and M_PI_F are floating literals in the OpenCL C headers, which an #if cannot
    evaluate: an error at the directive, not a silent 0 that takes the #else branch."""
    _, diagnostics = run("#if FLT_MAX > 1\nint big;\n#endif\n")
    assert diagnostics.has_errors
    assert "'FLT_MAX' is a floating constant" in diagnostics.format()
    assert ":1:" in diagnostics.format()
    result, diagnostics = run("#ifdef FLT_MAX\nint defined_still;\n#endif\n")
    assert not diagnostics.items and code_lines(result) == ["int defined_still;"]
