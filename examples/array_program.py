#!/usr/bin/env python
"""A PyOpenCL array program: arrays, ElementwiseKernel, ReductionKernel, a scan, clmath and
clrandom. It runs unchanged on PyOpenCL: replace ``ppcl`` by ``pyopencl`` in the imports."""

import numpy as np

import ppcl as cl
import ppcl.array as cl_array
import ppcl.clmath as clmath
import ppcl.clrandom as clrandom
from ppcl.elementwise import ElementwiseKernel
from ppcl.reduction import ReductionKernel
from ppcl.scan import ExclusiveScanKernel, InclusiveScanKernel

ctx = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(ctx)
n = 100000

rng = np.random.default_rng(0)
x_np = rng.random(n).astype(np.float32)
y_np = rng.random(n).astype(np.float32)
x = cl_array.to_device(queue, x_np)
y = cl_array.to_device(queue, y_np)


def report(name, got, want, rtol=1e-5):
    error = float(np.max(np.abs(np.asarray(got) - want)) / np.max(np.abs(want)))
    print(f"{name:28} {'ok' if error <= rtol else 'WRONG'} (error {error:.1e} of the largest)")


# arrays: arithmetic with scalars, views (PyOpenCL takes contiguous ones), reductions
report("2*x + y/3 - 1", (2 * x + y / 3 - 1).get(), 2 * x_np + y_np / 3 - 1)
report("x[1000:2000] * y[:1000]", (x[1000:2000] * y[:1000]).get(), x_np[1000:2000] * y_np[:1000])
report("sum(x)", cl_array.sum(x).get(), x_np.sum(dtype=np.float32), 1e-4)
report("dot(x, y)", cl_array.dot(x, y).get(), np.dot(x_np, y_np), 1e-4)
report("max(x)", cl_array.max(x).get(), x_np.max())

# clmath
report("sin(x)**2 + cos(x)**2", (clmath.sin(x) ** 2 + clmath.cos(x) ** 2).get(),
       np.ones(n, np.float32), 1e-6)
report("exp(log(y)) - sqrt(y*y)", (clmath.exp(clmath.log(y)) - clmath.sqrt(y * y)).get()
       + 1, np.ones(n, np.float32), 1e-6)

# complex64
c_np = (x_np + 1j * y_np).astype(np.complex64)
c = cl_array.to_device(queue, c_np)
report("c * c.conj() + c", (c * c.conj() + c).get(), c_np * c_np.conj() + c_np)

# ElementwiseKernel
lin_comb = ElementwiseKernel(ctx, "float a, float *x, float b, float *y, float *z",
                             "z[i] = a*x[i] + b*y[i]", "lin_comb")
z = cl_array.empty_like(x)
lin_comb(np.float32(5), x, np.float32(6), y, z)
report("ElementwiseKernel lin_comb", z.get(), 5 * x_np + 6 * y_np)

# ReductionKernel
dot = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b",
                      map_expr="x[i]*y[i]", arguments="__global float *x, __global float *y")
report("ReductionKernel dot", dot(x, y).get(), np.dot(x_np, y_np), 1e-4)
norm_max = ReductionKernel(ctx, np.float32, neutral="-INFINITY", reduce_expr="fmax(a, b)",
                           map_expr="fabs(x[i] - y[i])",
                           arguments="__global float *x, __global float *y")
report("ReductionKernel max |x-y|", norm_max(x, y).get(), np.abs(x_np - y_np).max())

# scans
counts_np = rng.integers(0, 10, n).astype(np.int32)
counts = cl_array.to_device(queue, counts_np)
inclusive = InclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")
report("InclusiveScanKernel", inclusive(counts.copy()).get(), np.cumsum(counts_np))
exclusive = ExclusiveScanKernel(ctx, np.int32, "a+b", "0")
report("ExclusiveScanKernel", exclusive(counts.copy()).get(),
       np.cumsum(counts_np) - counts_np)

# clrandom
r = clrandom.rand(queue, (n,), np.float32)
r_np = r.get()
print(f"{'clrandom.rand':28} {'ok' if 0 <= r_np.min() and r_np.max() < 1 and abs(r_np.mean() - 0.5) < 0.01 else 'WRONG'}"
      f" (mean {r_np.mean():.3f})")
