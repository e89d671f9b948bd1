"""Pass infrastructure: pipelines as text, options, errors, verification and debug output
between passes, the constant-folding pass, and the passes of a kernel build
(``compiler/pipeline.py``)."""

from __future__ import annotations

import dataclasses
import io
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from ppcl.compiler.analysis.verify import VerificationError
from ppcl.compiler.codegen.cstyle import CStylePrinter
from ppcl.compiler.codegen.irprint import print_ir
from ppcl.compiler.codegen.opencl import OPENCL
from ppcl.compiler.frontend import compile_source
from ppcl.compiler.frontend.options import parse_build_options
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import types as T
from ppcl.compiler.ir.visit import Rewriter, find_all, fingerprint
from ppcl.compiler.passes import (
    FoldConstants,
    Pass,
    Pipeline,
    PipelineError,
    get_pass,
    register,
    registered_passes,
)
from ppcl.compiler.pipeline import CPU_PIPELINE, KernelSpec, kernel_ir, lower_kernel
from ppcl.settings import Debug

VERIFY = Debug(verify=True)

KERNEL_DIR = Path(__file__).parent / "kernels"
FILES = sorted(p.name for p in KERNEL_DIR.glob("*.cl"))


@dataclass(frozen=True)
class _SampleOptions:
    count: int = 1
    simd: bool = False
    mode: str = "fast"
    local_size: tuple[int, int, int] = (1, 1, 1)
    dims: tuple[int, ...] = ()
    limit: int | None = None


@register
class _SamplePass(Pass):
    """Every kind of option; changes nothing."""

    name = "test-sample"
    Options = _SampleOptions

    def run(self, module: ir.Module) -> ir.Module:
        return module


class _FloatsToDouble(Rewriter):
    def rewrite_FloatLit(self, e: ir.FloatLit) -> ir.Expr:
        return dataclasses.replace(e, type=T.DOUBLE)


@register
class _BreakingPass(Pass):
    """Retypes float literals without conversions: invalid IR."""

    name = "test-break-types"

    def run(self, module: ir.Module) -> ir.Module:
        result: ir.Module = _FloatsToDouble().rewrite(module)
        return result


def kernel_module(body: str, params: str = "__global long *out") -> ir.Module:
    return compile_source(f"__kernel void k({params}) {{ {body} }}", "t.cl").module


# ---------------------------------------------------------------- text round trip


@pytest.mark.parametrize("text", [
    "",
    "verify",
    "fold-constants,verify",
    "test-sample{count=3}",
    "test-sample{local_size=8x8x1,simd=true,mode=exact,count=-2}",
    "verify,test-sample{dims=0},fold-constants",
    "test-sample{dims=0x1x2,limit=none}",
    "test-sample{limit=16},test-sample",
])
def test_pipeline_text_round_trip(text: str) -> None:
    pipeline = Pipeline.parse(text)
    assert str(pipeline) == text
    assert Pipeline.parse(str(pipeline)) == pipeline


def test_pipeline_parse_reads_options_by_type() -> None:
    pipeline = Pipeline.parse(" test-sample { count = 0x10 , local_size=8x4x2 , simd=true } ")
    (stage,) = pipeline.passes
    assert isinstance(stage, _SamplePass)
    assert stage.options == _SampleOptions(count=16, simd=True, local_size=(8, 4, 2))
    assert str(pipeline) == "test-sample{count=16,local_size=8x4x2,simd=true}"


def test_passes_built_in_code_print_like_parsed_ones() -> None:
    by_name = _SamplePass(local_size=(8, 8, 1), simd=True)
    by_value = _SamplePass(_SampleOptions(simd=True, local_size=(8, 8, 1)))
    assert str(by_name) == "test-sample{local_size=8x8x1,simd=true}"
    assert str(by_value) == "test-sample{simd=true,local_size=8x8x1}"
    assert by_name == by_value
    assert str(Pipeline((by_name, FoldConstants()))) == \
        "test-sample{local_size=8x8x1,simd=true},fold-constants"


def test_registry() -> None:
    passes = registered_passes()
    assert {"verify", "fold-constants"} <= set(passes)
    assert get_pass("fold-constants") is FoldConstants

    class Other(Pass):
        name = "verify"

    with pytest.raises(ValueError, match="already registered"):
        register(Other)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(("text", "message"), [
    ("nope", r"unknown pass 'nope' \(known passes: .*fold-constants.*verify"),
    ("verify,fold-constant", r"column 8: unknown pass 'fold-constant'"),
    ("verify{x=1}", r"pass 'verify' has no option 'x' \(options: none\)"),
    ("test-sample{cout=1}", r"has no option 'cout' \(options: count, dims, limit"),
    ("test-sample{count=many}", r"option 'count' of pass 'test-sample' expects an integer, "
                                r"got 'many'"),
    ("test-sample{simd=1}", r"option 'simd' of pass 'test-sample' expects true or false"),
    ("test-sample{local_size=8x8}", r"expects 3 integers \(like 8x8x8\), got '8x8'"),
    ("test-sample{dims=ax1}", r"expects integers separated by 'x'"),
    ("test-sample{count=1,count=2}", r"option 'count' of pass 'test-sample' is given twice"),
    ("verify{", r"column 8: expected an option name"),
    ("test-sample{count}", r"expected '='"),
    ("test-sample{count=1", r"column 20: expected ',' or '}' after option 'count'"),
    ("verify,,fold-constants", r"column 8: expected a pass name"),
    ("verify fold-constants", r"expected ',', found 'f'"),
])
def test_bad_pipeline_text(text: str, message: str) -> None:
    with pytest.raises(PipelineError, match=message):
        Pipeline.parse(text)


def test_bad_options_in_code() -> None:
    with pytest.raises(PipelineError, match="pass 'test-sample' has no option 'nope'"):
        _SamplePass(nope=1)
    with pytest.raises(PipelineError, match="cannot spell option value 'a b'"):
        str(_SamplePass(mode="a b"))


# ---------------------------------------------------------------- running


def test_run_verifies_after_every_pass() -> None:
    module = kernel_module("out[0] = (long)(2.0f * 3.0f);")
    pipeline = Pipeline.parse("fold-constants,test-break-types")
    assert pipeline.run(module) is not None  # no verification asked: the IR goes through
    with pytest.raises(VerificationError, match="after pass 'test-break-types'") as info:
        pipeline.run(module, VERIFY)
    assert all(p.startswith("t.cl:1:") for p in info.value.problems)


def test_verify_pass_checks_where_it_stands() -> None:
    module = kernel_module("out[0] = (long)(2.0f * 3.0f);")
    with pytest.raises(VerificationError, match="at pass 'verify'"):
        Pipeline.parse("test-break-types,verify").run(module)


def test_invalid_input_is_reported_before_the_first_pass() -> None:
    module = kernel_module("out[0] = 1;")
    broken = Pipeline.parse("test-break-types").run(
        kernel_module("out[0] = (long)(2.0f * 3.0f);"))
    with pytest.raises(VerificationError, match="given to pipeline 'fold-constants'"):
        Pipeline.parse("fold-constants").run(broken, VERIFY)
    assert Pipeline.parse("fold-constants").run(module, VERIFY) is not None


def test_debug_output_names_each_pass_with_its_time() -> None:
    module = kernel_module("out[0] = 2 * 21;")
    stream = io.StringIO()
    pipeline = Pipeline.parse("fold-constants,test-sample{count=2},verify")
    pipeline.run(module, Debug(frozenset({"passes", "time"}), verify=True), stream)
    text = stream.getvalue()
    assert "ppcl pipeline: fold-constants,test-sample{count=2},verify" in text
    for stage in ("fold-constants", "test-sample{count=2}", "verify"):
        assert re.search(rf"ppcl pass {re.escape(stage)}: \d+\.\d+ ms", text), stage
    assert "out[0] = 42L;" in text  # the IR after folding


def test_debug_topics_choose_what_is_shown(capsys: pytest.CaptureFixture[str]) -> None:
    module = kernel_module("out[0] = 1;")
    Pipeline.parse("verify,fold-constants").run(module, Debug(frozenset({"time"})))
    err = capsys.readouterr().err
    assert re.search(r"ppcl pass verify: \d+\.\d+ ms", err)
    assert re.search(r"ppcl pass fold-constants: \d+\.\d+ ms", err)
    assert "out[0]" not in err  # the IR is the topic 'passes'
    Pipeline.parse("verify").run(module)
    assert capsys.readouterr().err == ""


def test_the_environment_is_not_read(monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PPCL_DEBUG", "1")
    Pipeline.parse("verify").run(kernel_module("out[0] = 1;"))
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------- fold-constants


def folded_body(body: str, params: str = "__global long *out") -> str:
    module = Pipeline.parse("fold-constants").run(kernel_module(body, params), VERIFY)
    return print_ir(module)


def test_fold_integer_expressions() -> None:
    text = folded_body("int x = 4 * 16 - 1; out[0] = x + (1 << 3) + -(7 / 2) + (3 > 2 ? 5 : 6);"
                       " out[1] = (char)300; out[2] = sizeof(float4) * 2;")
    assert "int x = 63;" in text
    assert "x + 8 + -3 + 5" in text
    assert "out[1] = 44L;" in text
    assert "out[2] = 32L;" in text  # sizeof * 2 is a ulong, stored as long


def test_fold_leaves_what_opencl_computes_differently() -> None:
    text = folded_body("out[0] = 1 << 33; out[1] = (bool)0.5f; out[2] = (int)1.5f + 1;")
    assert "1 << 33" in text  # OpenCL masks the count: 1 << 1
    assert "(bool)0.5f" in text
    assert "(int)1.5f + 1" in text


def test_fold_leaves_non_constant_and_non_integer_expressions() -> None:
    text = folded_body("out[0] = n * 2 + 1; f[0] = 2.0f * 3.0f; out[1] = 0 && n;",
                       "__global long *out, __global float *f, int n")
    assert "n * 2 + 1" in text
    assert "2.0f * 3.0f" in text
    assert "0 && n" in text


@pytest.mark.parametrize("name", FILES)
def test_fold_constants_over_the_corpus(name: str) -> None:
    path = KERNEL_DIR / name
    module = compile_source(path.read_text(encoding="utf-8"), str(path)).module
    folded = Pipeline.parse("fold-constants").run(module, VERIFY)
    assert not [e for e in find_all(folded, ir.Binary)
                if isinstance(e.lhs, ir.IntLit) and isinstance(e.rhs, ir.IntLit)
                and e.op not in ("<<", ">>") and e.rhs.value != 0]
    source = CStylePrinter(OPENCL).print(folded)
    compile_source(source, name)  # the folded program is still valid OpenCL C


# ---------------------------------------------------------------- the passes of a kernel build

REDUCE = """
__kernel void reduce(__global const float *in, __global float *out, __local float *tmp) {
    size_t lid = get_local_id(0);
    tmp[lid] = in[get_global_id(0)];
    for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < s)
            tmp[lid] += tmp[lid + s];
    }
    if (lid == 0)
        out[get_group_id(0)] = tmp[0];
}
"""


def test_the_cpu_pipeline_is_declared_as_text() -> None:
    assert str(CPU_PIPELINE) == ("inline,switch,normalize,unroll,selects,magicdiv,components,"
                                 "workgroup,scalarize,schedule,split,skip,sink")
    assert Pipeline.parse(str(CPU_PIPELINE)) == CPU_PIPELINE
    assert str(Pipeline.parse("inline,workgroup{uniformity=false}")) \
        == "inline,workgroup{uniformity=false}"


def test_kernel_passes_verify_and_show_each_stage() -> None:
    module = compile_source(REDUCE).module
    stream = io.StringIO()
    debug = Debug(frozenset({"passes", "time", "plans"}), verify=True)
    result = kernel_ir(module, "reduce", KernelSpec((8, 1, 1)), parse_build_options(""),
                       debug, stream=stream)
    assert result.formed is not None and result.formed.plans
    text = stream.getvalue()
    for stage in ("inline", "workgroup", "scalarize", "schedule"):
        assert re.search(rf"ppcl pass {stage}: \d+\.\d+ ms", text), stage
    assert "workitems" in text  # the formed kernel's dump
    assert "// ppcl plan reduce: work-item loop 1:" in text


def test_lower_kernel_records_its_pipeline_and_prints_c_on_request() -> None:
    module = compile_source(REDUCE).module
    stream = io.StringIO()
    generated = lower_kernel(module, "reduce", KernelSpec((8, 1, 1)), parse_build_options(""),
                             Debug(frozenset({"c"})), stream=stream)
    assert generated.pipeline == str(CPU_PIPELINE)
    assert generated.entry == "ppcl_run_reduce"
    assert stream.getvalue() == generated.source


def test_passes_after_formation_need_it() -> None:
    module = compile_source(REDUCE).module
    with pytest.raises(PipelineError, match="pass 'schedule' needs a formed kernel"):
        kernel_ir(module, "reduce", KernelSpec((8, 1, 1)), parse_build_options(""),
                  pipeline=Pipeline.parse("inline,schedule"))


def test_constant_folding_runs_on_a_kernel_before_formation() -> None:
    module = compile_source("__kernel void k(__global long *out) { out[0] = 2 * 21; }").module
    pipeline = Pipeline.parse("fold-constants,inline,workgroup,schedule")
    result = kernel_ir(module, "k", KernelSpec((4, 1, 1)), parse_build_options(""), VERIFY,
                       pipeline=pipeline)
    assert result.formed is not None and "42" in result.dump()


def test_fingerprint_of_a_deep_module_needs_no_recursion():
    """The CPU device keys its build check by the module's fingerprint. It was ``repr``, which
    on Python 3.12 ran out of C recursion on a sum of 4000 terms even on a deep stack."""
    import sys

    def source(last: str) -> str:
        terms = " + ".join(f"in[{k % 8}]" for k in range(3999))
        return ("__kernel void wide(__global int *in, __global int *out) "
                f"{{ out[0] = {terms} + {last}; }}")

    deep = compile_source(source("in[7]"), "wide.cl").module
    again = compile_source(source("in[7]"), "wide.cl").module
    other = compile_source(source("in[6]"), "wide.cl").module
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100)  # far below the tree's depth
    try:
        same, differs = fingerprint(deep) == fingerprint(again), fingerprint(deep) != fingerprint(other)
    finally:
        sys.setrecursionlimit(limit)
    assert same and differs
