"""Pattern expressions lowered by rules, generated as IR, built by the runtime like any program
and run on the device: the results equal numpy's and the interpreter's; layout patterns are
views (no copies in the generated code)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ppcl as cl
from ppcl.compiler.analysis.verify import verify
from ppcl.compiler.codegen.opencl import print_opencl
from ppcl.compiler.frontend import compile_module
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import FLOAT, INT
from ppcl.compiler.ir.visit import find_all
from ppcl.patterns import codegen, interp, run
from ppcl.patterns import derive as d
from ppcl.patterns import dsl as p
from ppcl.patterns import rules as r
from ppcl.patterns.types import ArrayT, PatternTypeError, array, shape_of
from ppcl.patterns.userfun import UserFun
from ppcl.runtime.errors import Error

SIZES = {"scal": {"N": 4096}, "asum": {"N": 4096}, "dot": {"N": 4096},
         "gemv": {"M": 64, "N": 128}, "black_scholes": {"N": 2048}}


def _data(problem: d.Problem, sizes: dict[str, int], rng: np.random.Generator
          ) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for param in problem.inputs:
        if isinstance(param.type, ArrayT):
            shape = [s.evaluate(sizes) for s in shape_of(param.type)]
            data[param.name] = (0.5 + 10 * rng.random(shape)).astype(np.float32)
            if param.name in ("x", "y"):
                data[param.name] -= np.float32(5.0)
        else:
            data[param.name] = {"a": 2.5, "rate": 0.02, "volatility": 0.3}[param.name]
    return data


def _numpy(name: str, data: dict[str, Any]) -> list[np.ndarray]:
    f64 = {k: v.astype(np.float64) if isinstance(v, np.ndarray) else v for k, v in data.items()}
    if name == "scal":
        return [f64["a"] * f64["x"]]
    if name == "asum":
        return [np.array([np.abs(f64["x"]).sum()])]
    if name == "dot":
        return [np.array([np.dot(f64["x"], f64["y"])])]
    if name == "gemv":
        return [f64["A"] @ f64["x"]]
    call, put = d.black_scholes_fun.run(f64["spot"], f64["strike"], f64["years"], f64["rate"],
                                        f64["volatility"])
    return [call, put]


@pytest.mark.parametrize("name", list(d.PROBLEMS))
@pytest.mark.parametrize(("chunk", "width", "interleave"),
                         [(16, 1, 1), (64, 4, 4), (128, 8, 2), (64, 16, 1)])
def test_problems_equal_numpy(ctx: cl.Context, queue: cl.CommandQueue, name: str, chunk: int,
                              width: int, interleave: int) -> None:
    problem = d.PROBLEMS[name]()
    sizes = SIZES[name]
    if name == "gemv":
        chunk //= 16
    lowered_expr = d.derive(problem.expr, problem.derivation(chunk, width, interleave))
    lowered = codegen.lower(lowered_expr, problem.inputs, sizes, 8, name)
    assert verify(lowered.module) == []
    data = _data(problem, sizes, np.random.default_rng(chunk + width))
    got = run.Runnable(ctx, lowered).run(queue, data)
    for g, want in zip(got, _numpy(name, data), strict=True):
        np.testing.assert_allclose(g, want, rtol=2e-4, atol=2e-3 * max(1.0, np.abs(want).max()))


def test_black_scholes_is_one_kernel_of_vector_loads(ctx: cl.Context) -> None:
    problem = d.black_scholes()
    lowered = codegen.lower(d.derive(problem.expr, problem.derivation(64, 8, 1)), problem.inputs,
                            {"N": 2048})
    assert len(lowered.kernels) == 1
    text = print_opencl(lowered.module)
    assert "float8" in text and "select(" in text
    assert [b.name for b in lowered.buffers if b.role == "output"] == ["out_0", "out_1"]


def test_reductions_split_into_kernels_at_parallel_maps() -> None:
    problem = d.asum()
    lowered = codegen.lower(d.derive(problem.expr, problem.derivation(64, 4, 1)), problem.inputs,
                            {"N": 4096})
    assert [k.global_size for k in lowered.kernels] == [(16,), (1,)]
    assert [b.role for b in lowered.buffers] == ["input", "temp", "output"]


def _device_equals_interpreter(ctx: cl.Context, queue: cl.CommandQueue, e: Any,
                               inputs: list[Any], data: dict[str, np.ndarray]) -> str:
    lowered = codegen.lower(e, inputs, {})
    assert verify(lowered.module) == []
    (got,) = run.Runnable(ctx, lowered).run(queue, data)
    want = interp.evaluate(e, {k: interp.from_numpy(v, next(i.type for i in inputs
                                                             if i.name == k))
                               for k, v in data.items()})
    np.testing.assert_array_equal(got, np.array(want).ravel())
    return print_opencl(lowered.module)


inc = UserFun.trace("inc", [INT], INT, lambda v: v + 1)
iadd = UserFun.trace("iadd", [INT, INT], INT, lambda a, b: a + b)


def test_views_transpose_slide_pad_reorder(ctx: cl.Context, queue: cl.CommandQueue) -> None:
    m = p.param("m", array(array(INT, 8), 4))
    data = {"m": np.arange(32, dtype=np.int32).reshape(4, 8)}
    transposed = p.map_global(p.map_seq(inc))(p.transpose()(m))
    text = _device_equals_interpreter(ctx, queue, transposed, [m], data)
    assert "m[" in text and text.count("for (") == 1  # no copy loop: an index, not an array

    x = p.param("x", array(INT, 16))
    xs = {"x": np.arange(16, dtype=np.int32) * 3}
    window_sums = p.join()(p.map_global(p.reduce_seq(iadd, 0))(p.slide(3, 1)(p.pad(1, 1)(x))))
    _device_equals_interpreter(ctx, queue, window_sums, [x], xs)
    reordered = p.map_global(inc)(p.reorder(4)(x))
    _device_equals_interpreter(ctx, queue, reordered, [x], xs)


def test_workgroup_local_memory_and_iterate(ctx: cl.Context, queue: cl.CommandQueue) -> None:
    x = p.param("x", array(INT, 64))
    e = p.join()(p.map_workgroup(lambda row: p.map_local(inc)(
        p.to_local(p.map_local(inc))(row)))(p.split(16)(x)))
    text = _device_equals_interpreter(ctx, queue, e, [x], {"x": np.arange(64, dtype=np.int32)})
    assert "__local int" in text and "barrier(" in text
    it = p.map_global(p.iterate(3, p.map_seq(inc)))(p.split(8)(x))
    _device_equals_interpreter(ctx, queue, p.join()(it), [x], {"x": np.arange(64, dtype=np.int32)})


def test_c_user_function_runs(ctx: cl.Context, queue: cl.CommandQueue) -> None:
    axpb = UserFun.c("axpb", [("a", FLOAT), ("b", FLOAT)], FLOAT, "return 2.0f * a + b;",
                     py=lambda a, b: 2.0 * a + b)
    x, y = p.param("x", array(FLOAT, 256)), p.param("y", array(FLOAT, 256))
    e = r.rewrite(p.map(axpb)(p.zip(x, y)), r.Vectorize(4))
    e = r.rewrite(r.rewrite(e, r.SplitJoin(8)), r.MapToLevel("global"))
    e = r.rewrite_all(e, r.MapToLevel("seq"))
    lowered = codegen.lower(e, [x, y], {})
    assert any(f.name == "uf_axpb_float4_float4" for f in lowered.module.functions)
    xs, ys = np.arange(256, dtype=np.float32), np.ones(256, np.float32)
    (got,) = run.Runnable(ctx, lowered).run(queue, {"x": xs, "y": ys})
    np.testing.assert_array_equal(got, 2 * xs + ys)


def test_lowering_refuses_high_level_patterns() -> None:
    x = p.param("x", array(FLOAT, 16))
    with pytest.raises(PatternTypeError, match="has no level"):
        codegen.lower(p.map(d.absolute)(x), [x], {})
    with pytest.raises(PatternTypeError, match="not sequential"):
        codegen.lower(p.reduce(d.add, 0.0)(x), [x], {})
    with pytest.raises(PatternTypeError, match="input name 'pp_x'"):
        codegen.lower(p.map_global(d.absolute)(x), [p.param("pp_x", x.type)], {})
    transposed = p.param("t", array(array(FLOAT, 4), 4))
    with pytest.raises(PatternTypeError, match="not consecutive in memory"):
        codegen.lower(p.map_global(p.map_seq(d.absolute))(p.map_seq(p.as_vector(4))(
            p.transpose()(transposed))), [transposed], {})


def test_program_from_an_ir_module(ctx: cl.Context) -> None:
    x = p.param("x", array(FLOAT, 16))
    lowered = codegen.lower(p.map_global(d.absolute)(x), [x], {})
    program = cl.Program(ctx, compile_module(lowered.module)).build()
    assert program.kernel_names == "pattern_0"
    assert find_all(lowered.module, ir.For) == []
    with pytest.raises(Error, match="INVALID_OPERATION"):
        cl.Program(ctx, compile_module(lowered.module)).compile()
    with pytest.raises(ValueError, match="at least one kernel"):
        compile_module(ir.Module(()))


def test_to_global_between_kernels(ctx: cl.Context, queue: cl.CommandQueue) -> None:
    x = p.param("x", array(INT, 64))
    partial = p.to_global(p.map_global(p.reduce_seq(iadd, 0)))(p.split(8)(x))
    e = p.reduce_seq(iadd, 0)(p.join()(partial))
    lowered = codegen.lower(e, [x], {})
    assert [k.global_size for k in lowered.kernels] == [(8,), (1,)]
    (got,) = run.Runnable(ctx, lowered).run(queue, {"x": np.arange(64, dtype=np.int32)})
    assert got.tolist() == [sum(range(64))]
    inner = p.map_workgroup(lambda row: p.map_local(inc)(p.to_global(p.map_local(inc))(row)))
    with pytest.raises(PatternTypeError, match="to_global inside a kernel"):
        codegen.lower(p.join()(inner(p.split(8)(x))), [x], {})


def test_printed_kernels_are_opencl_c_the_front_end_accepts() -> None:
    from ppcl.compiler.frontend import compile_source

    for name, make in d.PROBLEMS.items():
        problem = make()
        chunk = 2 if name == "gemv" else 64
        lowered = codegen.lower(d.derive(problem.expr, problem.derivation(chunk, 8, 2)),
                                problem.inputs, SIZES[name])
        text = print_opencl(lowered.module)
        reparsed = compile_source(text, f"<{name}>").module
        assert [k.name for k in reparsed.kernels] == [k.name for k in lowered.module.kernels]
        assert print_opencl(reparsed) == text


def test_scal_kernel_golden() -> None:
    problem = d.scal()
    lowered = codegen.lower(d.derive(problem.expr, problem.derivation(256, 4, 1)),
                            problem.inputs, {"N": 4096})
    assert print_opencl(lowered.module) == """\
__kernel void pattern_0(__global const float *restrict x, float a, __global float *restrict out)
{
    int pp_i0 = (int)get_global_id(0u);
    {
        for (int pp_i1 = 0; pp_i1 < 256; pp_i1++) {
            float4 pp_v2 = *(__global float4 *)&x[(pp_i0 * 256 + pp_i1) * 4];
            float4 pp_v3 = a * pp_v2;
            *(__global float4 *)&out[(pp_i0 * 256 + pp_i1) * 4] = pp_v3;
        }
    }
}
"""


def test_work_group_tree_reduction_by_iterate(ctx: cl.Context, queue: cl.CommandQueue) -> None:
    """Lift's GPU reduction: each group copies its chunk to local memory, then halves it three
    times (an iterate whose function is retyped for each length), every step in local memory
    behind a barrier."""
    ident = UserFun.trace("id", [INT], INT, lambda v: v)
    x = p.param("x", array(INT, 64))
    halve = p.to_local(lambda a: p.join()(p.map_local(p.reduce_seq(iadd, 0))(p.split(2)(a))))
    e = p.join()(p.map_workgroup(lambda chunk: p.iterate(3, halve)(
        p.to_local(p.map_local(ident))(chunk)))(p.split(16)(x)))
    assert e.type == array(INT, 8)
    text = _device_equals_interpreter(ctx, queue, e, [x], {"x": np.arange(64, dtype=np.int32)})
    assert text.count("barrier(") == 3 and text.count("__local int") == 3
