"""Inputs that once killed the front end with a RecursionError or a hang: each now compiles or
gets a located diagnostic. Inputs that could exhaust the interpreter are compiled in a child
process, whose stderr and exit status are checked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from launch import run

from ppcl.compiler.frontend import CompileError, compile_source
from ppcl.compiler.frontend.limits import (
    MAX_BRACKET_DEPTH,
    MAX_EXPANSION_TOKENS,
    MAX_INCLUDE_DEPTH,
    MAX_TREE_DEPTH,
)
from tests.child_env import child_env

ROOT = Path(__file__).resolve().parent.parent

# Compiles the source read from stdin (with HEADERS and OPTIONS) and prints the build log to stderr: exit status 1
# for a CompileError, 0 for a build that succeeds, anything else for a crash.
_CHILD = """
import sys
from ppcl.compiler.frontend import CompileError, compile_source
source, headers, options = sys.stdin.read(), {headers!r}, {options!r}
try:
    compile_source(source, "k.cl", options, headers=headers or None)
except CompileError as exc:
    print(exc.log, file=sys.stderr)
    sys.exit(1)
"""


def _compile_in_child(source: str, headers: dict[str, str] | None = None,
                      options: str = "", cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = child_env()
    code = _CHILD.format(headers=headers or {}, options=options)
    return subprocess.run([sys.executable, "-c", code], input=source, capture_output=True,
                          text=True, timeout=60, env=env, cwd=cwd)


def _kernel(expr: str) -> str:
    return f"__kernel void f(__global int *out, int a) {{\n  out[0] = {expr};\n}}\n"


@pytest.mark.parametrize("char", ["@", "`", "\u00e9"])
def test_stray_character_is_located(char):
    done = _compile_in_child(_kernel(f"a {char} 1"))
    assert done.returncode == 1, done.stderr
    assert f"k.cl:2:14: error: unexpected character '{char}'" in done.stderr
    assert "RecursionError" not in done.stderr
    assert done.stderr.splitlines()[1:3] == [f"  out[0] = a {char} 1;", " " * 13 + "^"]


@pytest.mark.parametrize("source, line, col", [
    ("}\n" + _kernel("a"), 1, 1),
    (_kernel("a") + "\n  }\n", 5, 3),
    ("#define END }\n" + _kernel("a") + "END\n", 5, 1),
])
def test_a_brace_closing_nothing_is_located(source, line, col):
    # pycparser asserts that every '}' closes a scope: the compile ended in a bare
    # AssertionError without a location
    with pytest.raises(CompileError) as info:
        compile_source(source, "k.cl")
    assert f"k.cl:{line}:{col}: error: '}}' closes nothing" in str(info.value)


def test_non_ascii_identifier_after_preprocessing_is_located():
    source = "#define ONE 1\n" + _kernel("ONE + \u00e9t\u00e9")
    done = _compile_in_child(source)
    assert done.returncode == 1, done.stderr
    assert "k.cl:3:18: error: unexpected character '\u00e9'" in done.stderr


def test_long_flat_sum_compiles():
    result = compile_source(_kernel("+".join(["a"] * 1000)))
    assert [k.name for k in result.module.kernels] == ["f"]


def test_deep_parentheses_compile():
    result = compile_source(_kernel("(" * 300 + "a" + ")" * 300))
    assert [k.name for k in result.module.kernels] == ["f"]


def test_deep_parentheses_run():
    out = np.zeros(1, np.int32)
    run(_kernel("(" * 300 + "a + 1" + ")" * 300), "f", (1,), (1,), out, np.int32(41))
    assert out[0] == 42


@pytest.mark.parametrize("terms", [200, 1000])
def test_long_sum_runs(terms):
    out = np.zeros(1, np.int32)
    run(_kernel("+".join(["a"] * terms)), "f", (1,), (1,), out, np.int32(3))
    assert out[0] == 3 * terms


def test_parentheses_past_the_limit_are_located():
    depth = MAX_BRACKET_DEPTH + 500
    done = _compile_in_child(_kernel("(" * depth + "a" + ")" * depth))
    assert done.returncode == 1, done.stderr
    # The function body's brace is the first level; the error is at the parenthesis past the limit.
    assert f"k.cl:2:{11 + MAX_BRACKET_DEPTH}: error: expression nests deeper than " \
           f"{MAX_BRACKET_DEPTH}" in done.stderr
    assert "RecursionError" not in done.stderr


def test_sum_past_the_limit_is_located():
    done = _compile_in_child(_kernel("+".join(["a"] * (MAX_TREE_DEPTH + 100))))
    assert done.returncode == 1, done.stderr
    assert f"error: the program nests deeper than {MAX_TREE_DEPTH} levels here" in done.stderr
    assert done.stderr.startswith("k.cl:2:")
    assert "RecursionError" not in done.stderr


def test_include_loop_through_headers_names_the_chain():
    headers = {"loop.h": '#include "loop.h"\nint q;\n'}
    done = _compile_in_child('#include "loop.h"\n' + _kernel("a"), headers)
    assert done.returncode == 1, done.stderr
    assert f"loop.h:1:10: error: #include nested deeper than {MAX_INCLUDE_DEPTH}: " \
           "k.cl -> loop.h -> loop.h" in done.stderr
    assert "RecursionError" not in done.stderr


def test_include_loop_through_include_directories(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "a.h").write_text('#include "b.h"\n')
    (tmp_path / "inc" / "b.h").write_text('#include "a.h"\n')
    done = _compile_in_child('#include "a.h"\n' + _kernel("a"), options=f"-I {tmp_path / 'inc'}")
    assert done.returncode == 1, done.stderr
    assert f"error: #include nested deeper than {MAX_INCLUDE_DEPTH}" in done.stderr
    assert "a.h -> " in done.stderr and "b.h -> " in done.stderr
    assert "RecursionError" not in done.stderr


def test_self_doubling_macro_stops_quickly_at_its_use():
    defines = ["#define A0 a"] + [f"#define A{i} A{i - 1} + A{i - 1}" for i in range(1, 21)]
    source = "\n".join(defines) + "\n" + _kernel("A20")
    done = _compile_in_child(source)  # its timeout catches an expansion that never ends
    assert done.returncode == 1, done.stderr
    assert f"k.cl:23:12: error: expansion of macro 'A20' is too large (more than " \
           f"{MAX_EXPANSION_TOKENS} tokens)" in done.stderr
    assert done.stderr.splitlines()[1:3] == ["  out[0] = A20;", " " * 11 + "^"]


def test_many_lines_of_nested_macro_uses_are_each_counted_on_their_own():
    # a hash round written as macros over macros: each use is a few thousand tokens,
    # the run of lines pcpp expands in one call was counted past the limit
    defines = ["#define T0(x) ((x) ^ ((x) >> 3))"] + [
        f"#define T{i}(x) T0(T{i - 1}(x))" for i in range(1, 9)]
    lines = "\n".join("  v = T8(v) + 1u;" for _ in range(12))
    source = "\n".join(defines) + ("\n__kernel void f(__global uint *out)\n{\n"
                                   "  uint v = out[0];\n" + lines + "\n  out[0] = v;\n}\n")
    out = np.array([0x9e3779b9], np.uint32)
    run(source, "f", (1,), (1,), out)
    v = 0x9e3779b9
    for _ in range(12):
        for _ in range(9):
            v ^= v >> 3
        v = (v + 1) & 0xFFFFFFFF
    assert int(out[0]) == v


def test_a_self_doubling_macro_in_an_argument_stops_quickly():
    defines = ["#define A0 a", "#define ID(x) x"] + [
        f"#define A{i} A{i - 1} + A{i - 1}" for i in range(1, 21)]
    source = "\n".join(defines) + "\n" + _kernel("ID(A20)")
    done = _compile_in_child(source)
    assert done.returncode == 1, done.stderr
    assert "is too large (more than" in done.stderr


def test_statements_nested_past_the_deep_stack_are_located():
    source = "__kernel void f(__global int *out, int a) {\n" + "if (a) " * 20000 + "out[0] = a;\n}\n"
    done = _compile_in_child(source)
    assert done.returncode == 1, done.stderr
    assert "error: program nests too deeply to parse" in done.stderr
    assert done.stderr.startswith("k.cl:2:")
    assert "RecursionError" not in done.stderr


@pytest.mark.parametrize("head", ["", "#define X 1\n"])
def test_unterminated_comment_is_named(head):
    # the message was pycparser's "comments are not supported, see https://github.com/..."
    source = head + "__kernel void f(__global int *o) { o[0] = 1; } /* never closed\n"
    with pytest.raises(CompileError) as info:
        compile_source(source, "k.cl")
    line = head.count("\n") + 1
    assert f"k.cl:{line}:48: error: unterminated /* comment" in info.value.log
