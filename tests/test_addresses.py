"""Pointers to private variables read through as the variables (``transforms/addresses.py``),
as inlining leaves a helper's out-parameters, and work-item loops computing on ``float3``
split into scalars (``scalarize._three_lane_values``): which pointers go, which stay, what the
plans say, and results against numpy for helpers with vector and struct out-parameters."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from ppcl.compiler.frontend import compile_source
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import PointerType
from ppcl.compiler.ir.visit import walk
from ppcl.compiler.transforms.addresses import read_through_addresses
from ppcl.compiler.transforms.inline import inline_barrier_functions
from tests.launch import plan_text

mf = cl.mem_flags

SOURCE = """
typedef struct { float lo, hi; } span;

void stats(float4 a, float3 *mean, span *range, float *sum)
{
    *sum = a.x + a.y + a.z + a.w;
    mean->x = 0.5f * (a.x + a.y);
    mean->y = 0.5f * (a.y + a.z);
    mean->z = 0.5f * (a.z + a.w);
    range->lo = fmin(fmin(a.x, a.y), fmin(a.z, a.w));
    range->hi = fmax(fmax(a.x, a.y), fmax(a.z, a.w));
}

__kernel void summary(__global const float4 *in, __global float *out, int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float3 mean;
    span range;
    float sum;
    stats(in[i], &mean, &range, &sum);
    out[i] = sum + mean.x + 2.0f * mean.y + 3.0f * mean.z + range.hi - range.lo;
}

/* one of two variables: the pointer stays */
__kernel void either(__global const float *in, __global float *out, int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float a = in[i], b = -in[i];
    float *p = in[i] > 0.0f ? &a : &b;
    *p += 1.0f;
    out[i] = a - b;
}

/* momentum in float3, passed by value */
float3 flux(float3 m, float p) { return m * m.x + (float3)(p, 0.0f, 0.0f); }

__kernel void momentum(__global const float *v, __global float *out, int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float3 m = (float3)(v[i], v[i + n], v[i + 2 * n]);
    float3 f = flux(m, v[i + 3 * n]);
    out[i] = f.x + 2.0f * f.y + 3.0f * f.z;
}
"""


def _inlined(name: str) -> ir.Function:
    module = compile_source(SOURCE).module
    kernel = next(k for k in module.kernels if k.name == name)
    return inline_barrier_functions(module, kernel, small=True)


def _pointers(body: ir.Block) -> list[str]:
    return [d.name for n in walk(body) if isinstance(n, ir.DeclStmt) for d in n.decls
            if isinstance(d.type, PointerType)]


def test_out_parameters_of_an_inlined_helper_become_the_variables() -> None:
    kernel = _inlined("summary")
    assert kernel.body is not None and len(_pointers(kernel.body)) == 3
    body = read_through_addresses(kernel.body)
    assert _pointers(body) == []
    assert not any(isinstance(n, ir.Unary) and n.op == "&" for n in walk(body))


def test_a_pointer_to_one_of_two_variables_stays() -> None:
    kernel = _inlined("either")
    assert kernel.body is not None
    assert read_through_addresses(kernel.body) is kernel.body


@pytest.mark.parametrize("name", ["summary", "momentum"])
def test_float3_work_item_loops_are_split_into_scalars(name: str) -> None:
    text = plan_text(SOURCE, name, (64, 1, 1))
    assert "vectors of a work-item loop split into scalars" in text, text


@pytest.mark.parametrize("n", [64, 100, 7])
def test_helpers_with_out_parameters_match_numpy(n: int) -> None:
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SOURCE).build()
    rng = np.random.default_rng(n)
    a = rng.uniform(-1, 1, (n, 4)).astype(np.float32)
    v = rng.uniform(-1, 1, 4 * n).astype(np.float32)
    grid = -(-n // 32) * 32
    out = np.zeros(n, np.float32)
    out_buf = cl.Buffer(ctx, mf.READ_WRITE, out.nbytes)
    a_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    v_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=v)

    prg.summary(queue, (grid,), (32,), a_buf, out_buf, np.int32(n))
    cl.enqueue_copy(queue, out, out_buf)
    x = a.astype(np.float64)
    mean = 0.5 * (x[:, :3] + x[:, 1:])
    want = x.sum(1) + mean[:, 0] + 2 * mean[:, 1] + 3 * mean[:, 2] + x.max(1) - x.min(1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)

    prg.either(queue, (grid,), (32,), v_buf, out_buf, np.int32(n))
    cl.enqueue_copy(queue, out, out_buf)
    w = v[:n].astype(np.float64)
    np.testing.assert_allclose(out, np.where(w > 0, 2 * w + 1, 2 * w - 1), rtol=1e-5, atol=1e-6)

    prg.momentum(queue, (grid,), (32,), v_buf, out_buf, np.int32(n))
    cl.enqueue_copy(queue, out, out_buf)
    m = v.reshape(4, n).astype(np.float64)
    f = m[:3] * m[0] + np.stack([m[3], np.zeros(n), np.zeros(n)])
    np.testing.assert_allclose(out, f[0] + 2 * f[1] + 3 * f[2], rtol=1e-5, atol=1e-5)
