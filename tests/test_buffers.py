"""The pointer parameters a kernel reads and writes (``analysis/buffers.py``), as the command
overlay orders and removes commands by them."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from ppcl.compiler.analysis.buffers import buffer_accesses
from ppcl.compiler.frontend import compile_source

ATOMIC = """
__kernel void count(__global int *bins, __global const int *keys) {
    atomic_add(&bins[keys[get_global_id(0)]], 1);
}"""


@pytest.mark.parametrize("source, name", [
    (ATOMIC, "bins"),
    ("__kernel void k(__global float *p) {"
     " __global float *q = &p[get_global_id(0)]; *q = 2.0f; }", "p"),
    ("__kernel void k(__global float *p) { vstore2((float2)(1.0f), 0, &p[2]); }", "p"),
], ids=["atomic", "pointer to an element", "vstore"])
def test_an_element_whose_address_is_taken_counts_as_written(source, name):
    (fn,) = compile_source(source).module.functions
    access = buffer_accesses(fn)[name]
    assert access.reads and access.writes and not access.direct


def test_a_const_element_whose_address_is_taken_is_only_read():
    source = ("__kernel void k(__global const float *p, __global float *out) {"
              " out[0] = vload2(0, &p[2]).y; }")
    (fn,) = compile_source(source).module.functions
    access = buffer_accesses(fn)["p"]
    assert access.reads and not access.writes


@pytest.mark.parametrize("body", [
    "((__global float *)p)[get_global_id(0)] = 0.0f;",
    "__global float *w = (__global float *)p; w[1] = 0.0f;",
    "*(__global float *)&p[3] = 0.0f;",
], ids=["cast", "cast into a variable", "cast of an element's address"])
def test_a_const_pointer_cast_to_non_const_counts_as_written(body):
    source = f"__kernel void k(__global const float *p) {{ {body} }}"
    (fn,) = compile_source(source).module.functions
    access = buffer_accesses(fn)["p"]
    assert access.writes and not access.direct


def test_the_overlay_keeps_a_write_after_a_kernel_writing_through_a_cast(ctx):
    # the kernel writes 'a' through a cast away of const: writing the same data into it
    # again is not redundant
    prg = cl.Program(ctx, """
        __kernel void clear(__global const float *a, __global float *b) {
            int i = get_global_id(0);
            b[i] = a[i];
            ((__global float *)a)[i] = 0.0f;
        }""").build()
    queue = cl.CommandQueue(ctx)
    cl.overlay.enable(queue)
    host = np.arange(64, dtype=np.float32)
    a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, host.nbytes)
    b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, host.nbytes)
    cl.enqueue_copy(queue, a, host, is_blocking=False)
    prg.clear(queue, (64,), None, a, b)
    cl.enqueue_copy(queue, a, host, is_blocking=False)
    out = np.empty_like(host)
    cl.enqueue_copy(queue, out, a)
    np.testing.assert_array_equal(out, host)


def test_the_overlay_keeps_a_copy_after_an_atomic_kernel(ctx):
    # the atomics write 'bins': copying the same data into it again is not redundant
    queue = cl.CommandQueue(ctx)
    assert cl.overlay.enable(queue)
    try:
        prg = cl.Program(ctx, ATOMIC).build()
        zeros = np.zeros(4, np.int32)
        keys = np.array([0, 1, 1, 3, 3, 3, 2, 3], np.int32)
        bins = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, zeros.nbytes)
        kbuf = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=keys)
        cl.enqueue_copy(queue, bins, zeros, is_blocking=False)
        prg.count(queue, (8,), None, bins, kbuf)
        cl.enqueue_copy(queue, bins, zeros, is_blocking=False)
        prg.count(queue, (4,), None, bins, kbuf)
        out = np.empty(4, np.int32)
        cl.enqueue_copy(queue, out, bins)
        np.testing.assert_array_equal(out, np.bincount(keys[:4], minlength=4))
    finally:
        cl.overlay.disable(queue)
