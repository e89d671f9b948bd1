"""Every program in tests/invalid must fail to compile with its first error at the line:col
named on its first line (``// EXPECT: line:col: description``) and a message containing the
fragment listed here (the description in the file is documentation only)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ppcl.compiler.diagnostics import CompileError
from ppcl.compiler.frontend import compile_source

INVALID_DIR = Path(__file__).parent / "invalid"

MESSAGES: dict[str, str] = {
    "array_index_non_array.cl": "subscripted value of type 'float' is not an array or pointer",
    "assign_to_const_variable.cl": "cannot assign to a const-qualified variable 'limit'",
    "break_outside_loop.cl": "'break' statement not in loop or switch statement",
    "builtin_clamp_mismatched_types.cl": "no matching overload for builtin 'clamp'",
    "call_non_function.cl": "called object of type 'float' is not a function",
    "direct_recursion.cl": "recursive call is not allowed in OpenCL C: 'factorial' -> 'factorial'",
    "duplicate_swizzle_lvalue.cl": "'.xx' assigns a component twice",
    "float_modulo_operands.cl": "invalid operands to binary '%' ('float' and 'float')",
    "global_to_local_pointer.cl": "points to __global but '__local float *' points to __local",
    "goto_unsupported.cl": "'goto' is not supported by ppcl",
    "helper_wrong_arg_count.cl": "function 'lerp3' takes 3 arguments, but 2 were given",
    "invalid_numeric_swizzle.cl": "invalid vector component 'G' in '.sG'",
    "kernel_non_void_return.cl": "kernel function 'compute' must return void",
    "kernel_pointer_no_address_space.cl":
        "kernel pointer argument 'p' must point to __global, __constant or __local memory",
    "local_variable_initializer.cl": "__local variable 'count' cannot have an initializer",
    "member_of_non_struct.cl": "member reference '.count' on a value of type 'int'",
    "missing_semicolon.cl": "expected ';'",
    "mixed_swizzle_sets.cl": "invalid vector component 's' in '.xs1'",
    "mutual_recursion.cl": "mutual recursion is not allowed in OpenCL C",
    "no_matching_builtin_dot_int.cl": "no matching overload for builtin 'dot' with (int, int)",
    "opencl_2_linear_id.cl": "'get_local_linear_id' is an OpenCL C 2.0 function; ppcl "
                             "implements OpenCL C 1.2 (use (get_local_id(2) * get_local_size(1)",
    "opencl_2_work_group_reduce.cl":
        "'work_group_reduce_add' is an OpenCL C 2.0 function; ppcl implements OpenCL C 1.2",
    "parameter_without_type.cl": "parameter 'n' of 'square' has no type (OpenCL C has no implicit int)",
    "pointer_to_pointer_kernel_arg.cl": "kernel parameter 'rows' cannot be a pointer to a pointer",
    "program_scope_non_constant.cl":
        "program scope variable 'global_scale' must be declared in the __constant address space",
    "return_value_in_void_function.cl": "void function 'store_twice' should not return a value",
    "sizeof_void.cl": "invalid application of 'sizeof'",
    "struct_after_type_specifier.cl": "cannot combine 'union pad' with the type 'float' before it",
    "struct_unknown_field.cl": "no member named 'velocity' in 'Particle'",
    "swizzle_out_of_range.cl": "vector component '.z' is out of range for 'float2'",
    "too_many_args_helper.cl": "function 'square' takes 1 argument, but 2 were given",
    "type_keyword_as_name.cl": "'half' is a type keyword of OpenCL C and cannot be declared",
    "undeclared_function_call.cl": "implicit declaration of function 'smoothing_filter'",
    "undeclared_identifier.cl": "use of undeclared identifier 'scale_factor'",
    "unknown_type_name.cl": "unknown type name 'vec4'",
    "variable_length_array.cl": "variable length arrays are not supported",
    "vector_implicit_conversion.cl": "expected 'float4' but got 'int4'",
    "vector_literal_too_few.cl": "too few components in vector literal of 'float4': expected 4, got 2",
    "vector_to_scalar_assignment.cl": "expected 'int' but got 'float4'",
    "write_to_constant.cl": "cannot write to __constant memory",
}

_EXPECT_RE = re.compile(r"//\s*EXPECT:\s*(\d+):(\d+):")

FILES = sorted(p.name for p in INVALID_DIR.glob("*.cl"))


@pytest.mark.parametrize("name", FILES)
def test_invalid_program_is_rejected_at_expected_location(name: str) -> None:
    path = INVALID_DIR / name
    source = path.read_text(encoding="utf-8")
    match = _EXPECT_RE.search(source.splitlines()[0])
    assert match, f"{name}: first line must be '// EXPECT: line:col: description'"
    with pytest.raises(CompileError) as info:
        compile_source(source, str(path))
    errors = [d for d in info.value.diagnostics if d.severity.value == "error"]
    assert errors, info.value.log
    first = errors[0]
    assert (first.loc.line, first.loc.col) == (int(match[1]), int(match[2])), info.value.log
    fragment = MESSAGES.get(name)
    assert fragment is not None, f"record the expected message of {name} in MESSAGES"
    assert fragment in first.message, info.value.log
    # the log quotes the source line with a caret
    assert "^" in info.value.log


def test_every_invalid_program_has_a_message_fragment() -> None:
    missing = [name for name in FILES if name not in MESSAGES]
    assert not missing, f"add expected message fragments for {missing}"


@pytest.mark.parametrize(("source", "col", "message"), [
    # pycparser read the struct as a typedef name and the build ended in an AttributeError
    ("void struct s;\n", 13, "cannot combine 'struct s' with the type 'void' before it"),
    ("__kernel void k(__global int *o, int enum e) { }\n", 38,
     "cannot combine 'enum e' with the type 'int' before it"),
    ("void f(int struct s);\n", 19, "cannot combine 'struct s' with the type 'int' before it"),
    # a wide or C11-prefixed string went into the C as '""ab"' and failed there; u'b' was
    # reported as an "invalid character literal" without saying why
    ("__kernel void k(__global int *o) { o[0] = u'b'; }\n", 43,
     "character literal prefix 'u' is C11, not OpenCL C 1.2"),
    ("__kernel void k(__global int *o) { o[0] = sizeof(L\"ab\"); }\n", 50,
     "string literal prefix 'L' is not supported"),
    ("__constant char s[] = u8\"hi\";\n", 23, "string literal prefix 'u8' is not supported"),
])
def test_misplaced_struct_and_prefixed_literals_are_located(source: str, col: int,
                                                            message: str) -> None:
    with pytest.raises(CompileError) as info:
        compile_source(source, "k.cl")
    assert f"k.cl:1:{col}: error: {message}" in info.value.log


@pytest.mark.parametrize(("source", "at", "message"), [
    ("struct s { int a; int; };\n", "1:19",
     "declaration does not declare anything (a member needs a name)"),
    ("struct s { int a; struct t { int b; }; };\n", "1:26",
     "declaration does not declare anything (a member needs a name)"),
    ("struct s { int a; union { int a; float f; }; };\n", "1:25", "duplicate member 'a'"),
    ("typedef struct { union { float f; int i; }; } V;\n__constant V v = {.i = 1};\n", "2:24",
     "designator '.i' names a member of an anonymous struct or union"),
])
def test_nameless_members_other_than_anonymous_records_are_located(source: str, at: str,
                                                                   message: str) -> None:
    # a nameless member that is not an anonymous struct or union ended in "unsupported
    # declarator (IdentifierType)"
    with pytest.raises(CompileError) as info:
        compile_source(source, "k.cl")
    assert f"k.cl:{at}: error: {message}" in info.value.log
