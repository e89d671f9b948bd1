"""The OpenCL C front end: preprocess -> parse -> semantic analysis -> typed IR.

``compile_source`` runs the three stages over one program source and returns the IR module
with the build log (warnings), or raises ``CompileError`` carrying every diagnostic, formatted
with the source line and a caret. This module is the front end's entry for the runtime: build
options, preprocessing alone (for ``clCompileProgram``), the kernels' host-side signatures and
program binaries (``binary.py``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ppcl.compiler.deepstack import run_deep_if_needed
from ppcl.compiler.diagnostics import CompileError, Diagnostics, Loc, SourceMap
from ppcl.compiler.frontend.binary import BinaryError, ProgramBinary, decode_binary, encode_binary
from ppcl.compiler.frontend.limits import (
    MAX_BRACKET_DEPTH,
    MAX_TREE_DEPTH,
    too_deep_bracket,
    too_deep_node,
)
from ppcl.compiler.frontend.options import BuildOptions, BuildOptionsError, parse_build_options
from ppcl.compiler.frontend.parse import parse_with_tokens
from ppcl.compiler.frontend.preprocess import PreprocessedSource, preprocess
from ppcl.compiler.frontend.sema import analyze
from ppcl.compiler.frontend.signature import KernelSignature, ParamInfo, kernel_signatures
from ppcl.compiler.ir import image_formats
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.layout import IMAGE_DESCRIPTOR

__all__ = ["IMAGE_DESCRIPTOR", "BinaryError", "BuildOptions", "BuildOptionsError",
           "CompileError", "FrontendResult", "KernelSignature", "ParamInfo", "ProgramBinary",
           "check_file", "compile_module", "compile_source", "decode_binary", "encode_binary", "image_formats",
           "kernel_signatures", "parse_build_options", "prepare", "preprocess_source"]


@dataclass
class FrontendResult:
    module: ir.Module
    log: str  # warnings, formatted like a compiler's output; empty when there are none
    options: BuildOptions
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    # the text of every file the build read, for the kernel compiler's errors to quote
    sources: SourceMap = field(default_factory=SourceMap)


def _locator(pre: PreprocessedSource) -> Callable[[str, int, int], Loc]:
    """Map (file, line, col) of parser coordinates (original file and line thanks to the line
    markers) to the original column, undoing column shifts of macro expansions."""
    first_output_line: dict[tuple[str, int], int] = {}
    for out_line, origin in enumerate(pre.line_map, start=1):
        first_output_line.setdefault(origin, out_line)

    def locate(file: str, line: int, col: int) -> Loc:
        out_line = first_output_line.get((file, line))
        if out_line is None:
            return Loc(file, line, col)
        return pre.locate(out_line, col)

    return locate


def compile_source(source: str, filename: str = "<source>", options: str | BuildOptions = "",
                   *, headers: dict[str, str] | None = None, fp64: bool = True,
                   separate_unit: bool = False) -> FrontendResult:
    """Front end of one program build; raises ``CompileError`` when the source has errors.
    ``separate_unit``: a unit of ``clCompileProgram``, whose declared functions another unit
    may define.

    A source that runs the caller's thread out of recursion (a long sum, deep parentheses) is
    compiled again on a deep stack (see ``limits``), up to the limits documented there."""
    return run_deep_if_needed(_compile_source, source, filename, options, headers=headers,
                              fp64=fp64, separate_unit=separate_unit)


def _compile_source(source: str, filename: str, options: str | BuildOptions,
                    *, headers: dict[str, str] | None, fp64: bool,
                    separate_unit: bool = False) -> FrontendResult:
    opts = options if isinstance(options, BuildOptions) else parse_build_options(options)
    diagnostics = Diagnostics(werror=opts.werror, warnings_enabled=not opts.warnings_disabled)
    diagnostics.sources.add(filename, source)
    timings: dict[str, float] = {}

    start = time.perf_counter()
    pre = preprocess(source, filename, opts, diagnostics, extra_headers=headers, fp64=fp64)
    timings["preprocess"] = time.perf_counter() - start
    diagnostics.raise_if_errors()

    bracket = too_deep_bracket(pre.text)
    if bracket is not None:
        diagnostics.error(pre.locate(*bracket), f"expression nests deeper than {MAX_BRACKET_DEPTH}")
        diagnostics.raise_if_errors()

    locate = _locator(pre)
    start = time.perf_counter()
    ast, tokens = parse_with_tokens(pre.text, filename, diagnostics, locate)
    timings["parse"] = time.perf_counter() - start
    diagnostics.raise_if_errors()
    assert ast is not None
    deep = too_deep_node(ast)
    if deep is not None:
        diagnostics.error(locate(deep.file, deep.line, deep.column or 1),
                          f"the program nests deeper than {MAX_TREE_DEPTH} levels here (each "
                          "operand of a long expression and each 'else if' of a chain is a "
                          "level)")
        diagnostics.raise_if_errors()

    start = time.perf_counter()
    module = analyze(ast, diagnostics, filename=filename, tokens=tokens, fp64=fp64,
                     cl_version=opts.opencl_c_version, extensions=pre.extensions,
                     single_precision_constant=opts.single_precision_constant, locate=locate,
                     pragmas=pre.pragmas, separate_unit=separate_unit)
    timings["sema"] = time.perf_counter() - start
    diagnostics.raise_if_errors()
    if pre.fp_contract is False:
        module = dataclasses.replace(module, fp_contract=False)
    return FrontendResult(module, diagnostics.format(), opts, timings, diagnostics.sources)


_PREPARED = False
_WARM_KERNEL = """__kernel void warm(__global float4 *a, int n) {
    size_t i = get_global_id(0);
    if (i < (size_t)n) a[i] = sqrt(a[i]) + (float4)(convert_float(get_local_id(0)));
}"""


def prepare() -> None:
    """Make what the first build of a process makes once (the builtin table, the parser's and
    the preprocessor's set-up: 20-30 ms, half of a small program's front end) by compiling a
    small kernel, at most once per process; a device whose compiler starts on a thread of its
    own calls it meanwhile (``CUDADevice.context_created``)."""
    global _PREPARED
    if not _PREPARED:
        _PREPARED = True
        compile_source(_WARM_KERNEL, "<prepare>")


def compile_module(module: ir.Module, options: str | BuildOptions = "") -> FrontendResult:
    """The front end's result for a module built directly as IR (by ``ppcl.patterns``), so
    that a program is made from it as from source: the same devices build it, with the same
    options; the module is taken as it is (its builder keeps the IR's invariants)."""
    opts = options if isinstance(options, BuildOptions) else parse_build_options(options)
    if not module.kernels:
        raise ValueError("an IR module handed to the runtime needs at least one kernel")
    return FrontendResult(module, "", opts)


def check_file(path: str, options: str | BuildOptions = "", *, fp64: bool = True) -> FrontendResult:
    """``compile_source`` over the text of a file."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    return compile_source(source, path, options, fp64=fp64)


def preprocess_source(source: str, filename: str, options: str | BuildOptions,
                      headers: dict[str, str] | None = None) -> str:
    """The preprocessed text of one unit (with line markers); raises ``CompileError``."""
    return run_deep_if_needed(_preprocess_source, source, filename, options, headers)


def _preprocess_source(source: str, filename: str, options: str | BuildOptions,
                       headers: dict[str, str] | None) -> str:
    opts = options if isinstance(options, BuildOptions) else parse_build_options(options)
    diagnostics = Diagnostics()
    diagnostics.sources.add(filename, source)
    result = preprocess(source, filename, opts, diagnostics, extra_headers=headers or None)
    diagnostics.raise_if_errors()
    return result.text
