"""A launch with too few work-groups for the CPU device's pool runs in smaller groups when the
kernel cannot tell its grouping (``cut_groups``, ``grouping_observed``): the results are those
of the groups enqueued, a kernel that can tell keeps its groups, and ``PPCL_DEBUG=plans`` says
which happened and why."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ppcl as cl
from ppcl.compiler.analysis.callgraph import grouping_observed, work_item_loops
from ppcl.compiler.frontend import compile_source
from ppcl.devices.cpu.device import MIN_CUT_WIDTH, cut_groups
from ppcl.devices.interface import NDRange
from tests.child_env import child_env
from tests.test_native_pool import _context


def _nd(global_size: tuple[int, ...], local_size: tuple[int, ...]) -> NDRange:
    dims = len(global_size)
    pad = (1,) * (3 - dims)
    return NDRange(dims, (*global_size, *pad), (*local_size, *pad), (0, 0, 0))


@pytest.mark.parametrize("global_size, local_size, threads, expect", [
    ((768,), (256,), 16, (16,)),        # three groups of a triangle: 48 groups of 16
    ((768,), (256,), 2, (64,)),         # 12 groups for 2 threads
    ((4096,), (256,), 16, (64,)),       # 64 groups
    ((4096,), (256,), 2, (256,)),       # 16 groups are enough for 2 threads
    ((768,), (256,), 1, (256,)),        # one thread: nothing to share
    ((512, 16), (32, 8), 16, (32, 4)),  # y first: 16 x 4 groups
    ((64, 8), (32, 8), 16, (16, 1)),    # then x, not below MIN_CUT_WIDTH
    ((251,), (251,), 8, (251,)),        # a prime: no smaller divisor of 16 items or more
    ((3900,), (195,), 16, (65,)),       # 195 = 3 * 5 * 13: 60 groups of 65
])
def test_cut_groups_divides_the_local_size(global_size: tuple[int, ...],
                                           local_size: tuple[int, ...], threads: int,
                                           expect: tuple[int, ...]) -> None:
    nd = _nd(global_size, local_size)
    cut = cut_groups(nd, threads)
    dims = len(global_size)
    assert cut.local_size[:dims] == expect
    assert cut.global_size == nd.global_size and cut.global_offset == nd.global_offset
    for d in range(3):
        assert nd.local_size[d] % cut.local_size[d] == 0
        assert cut.global_size[d] % cut.local_size[d] == 0
    if cut.local_size != nd.local_size:
        assert cut.local_size[0] >= min(MIN_CUT_WIDTH, nd.local_size[0])


# three spellings of a kernel that sees only global ids, then kernels that can tell
INVISIBLE = {
    "global id": """
        __kernel void k(__global float *y, int n) {
            int i = get_global_id(0);
            if (i < n) y[i] = 2.0f * y[i];
        }""",
    "global size loop and a helper": """
        float twice(float v) { return 2.0f * v; }
        __kernel void k(__global float *y, int n) {
            for (int i = get_global_id(0); i < n; i += get_global_size(0))
                y[i] = twice(y[i]);
        }""",
    "global atomics and a private array": """
        __kernel void k(__global float *y, __global int *count, int n) {
            float t[4];
            size_t i = get_global_id(0);
            for (int j = 0; j < 4; j++) t[j] = (float)j;
            if (i < n) { y[i] += t[i % 4]; atomic_inc(count); }
        }""",
}
VISIBLE = {
    "local id": ("__kernel void k(__global int *y) { y[get_global_id(0)] = get_local_id(0); }",
                 "it calls get_local_id"),
    "group id in a helper": ("""
        int group(void) { return get_group_id(0); }
        __kernel void k(__global int *y) { y[get_global_id(0)] = group(); }""",
                             "it calls get_group_id"),
    "local size": ("__kernel void k(__global int *y) { y[0] = get_local_size(0); }",
                   "it calls get_local_size"),
    "group count": ("__kernel void k(__global int *y) { y[0] = get_num_groups(0); }",
                    "it calls get_num_groups"),
    "barrier": ("""__kernel void k(__global int *y) {
                       y[get_global_id(0)] = 1; barrier(CLK_GLOBAL_MEM_FENCE); }""",
                "it calls barrier"),
    "local variable": ("""__kernel void k(__global int *y) {
                              __local int s; s = 1; y[get_global_id(0)] = 1; }""",
                       "it declares __local 's'"),
    "local argument": ("__kernel void k(__global int *y, __local int *s) { y[0] = 1; }",
                       "its argument 's' is __local memory"),
    "required size": ("""__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
                         void k(__global int *y) { y[get_global_id(0)] = 1; }""",
                      "it requires a work-group size"),
}


@pytest.mark.parametrize("name", sorted(INVISIBLE))
def test_kernels_that_see_only_global_ids_cannot_tell_their_grouping(name: str) -> None:
    module = compile_source(textwrap.dedent(INVISIBLE[name]), "<test>").module
    assert grouping_observed(module, "k") is None


@pytest.mark.parametrize("name", sorted(VISIBLE))
def test_kernels_that_can_tell_their_grouping_say_how(name: str) -> None:
    source, why = VISIBLE[name]
    module = compile_source(textwrap.dedent(source), "<test>").module
    reason = grouping_observed(module, "k")
    assert reason is not None and reason.startswith(why), reason


@pytest.mark.parametrize("body, loops", [
    ("for (int k = 0; k < n; k++) s += y[k];", True),
    ("int k = 0; while (k < n) s += y[k++];", True),
    ("s = walk(y, n);", True),  # a do loop in a helper
    ("s = n > 0 ? y[0] : 0.0f;", False),
])
def test_work_item_loops_finds_loops_in_kernels_and_helpers(body: str, loops: bool) -> None:
    source = f"""
        float walk(__global const float *y, int n) {{
            float s = 0.0f; int k = 0;
            do {{ s += y[k]; }} while (++k < n);
            return s;
        }}
        __kernel void k(__global float *y, int n) {{
            float s = 0.0f;
            {body}
            y[get_global_id(0)] = s;
        }}"""
    module = compile_source(textwrap.dedent(source), "<test>").module
    assert work_item_loops(module, "k") is loops


TRIANGLE = """
__kernel void rows(__global const float *a, __global float *out, int m)
{
    int j = get_global_id(0);
    if (j >= m)
        return;
    float s = 0.0f;
    for (int k = j; k < m; k++)
        s += a[k];
    out[j] = s;
}
__kernel void scale(__global float *out)
{
    out[get_global_id(0)] *= 2.0f;
}
__kernel void groups(__global int *out)
{
    out[get_global_id(0)] = get_group_id(0) * 1000 + get_local_id(0);
}
"""


@pytest.mark.parametrize("threads", [1, 3, 16])
@pytest.mark.parametrize("m", [700, 768, 1])
def test_a_triangle_in_three_groups_gives_the_same_sums_on_any_pool(threads: int,
                                                                   m: int) -> None:
    ctx = _context(threads)
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, TRIANGLE).build()
    rng = np.random.default_rng(m)
    a = rng.random(m, dtype=np.float32)
    global_size = -(-m // 256) * 256
    mf = cl.mem_flags
    a_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    out_buf = cl.Buffer(ctx, mf.READ_WRITE, global_size * 4)
    prg.rows(queue, (global_size,), (256,), a_buf, out_buf, np.int32(m))
    got = np.empty(global_size, np.float32)
    cl.enqueue_copy(queue, got, out_buf)
    expected = np.array([np.sum(a[j:], dtype=np.float32) for j in range(m)])
    np.testing.assert_allclose(got[:m], expected, rtol=1e-5)


@pytest.mark.parametrize("threads", [2, 16])
def test_a_kernel_reading_its_group_id_keeps_its_groups(threads: int) -> None:
    ctx = _context(threads)
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, TRIANGLE).build()
    out_buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 768 * 4)
    prg.groups(queue, (768,), (256,), out_buf)
    got = np.empty(768, np.int32)
    cl.enqueue_copy(queue, got, out_buf)
    ids = np.arange(768)
    np.testing.assert_array_equal(got, (ids // 256) * 1000 + ids % 256)


@pytest.mark.cpu_device  # the child process's default device is the CPU device
def test_plans_say_which_launches_run_in_smaller_groups() -> None:
    script = textwrap.dedent(f"""
        import numpy as np, ppcl as cl
        ctx = cl.create_some_context(interactive=False)
        queue = cl.CommandQueue(ctx)
        prg = cl.Program(ctx, {TRIANGLE!r}).build()
        a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 768 * 4)
        out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 768 * 4)
        prg.rows(queue, (768,), (256,), a, out, np.int32(768))
        prg.groups(queue, (768,), (256,), out)
        prg.scale(queue, (768,), (256,), a)
        queue.finish()
        """)
    env = child_env({"PPCL_DEBUG": "plans", "PPCL_THREADS": "4"})
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert ("// ppcl plan rows: launch (768,) / (256,) runs in groups of (32,) "
            "(24 groups for 4 threads, not 3): the kernel cannot tell its grouping") \
        in done.stderr, done.stderr
    assert ("// ppcl plan groups: launch (768,) / (256,) keeps its 3 groups on 4 threads: "
            "it calls get_group_id at") in done.stderr, done.stderr
    assert ("// ppcl plan scale: launch (768,) / (256,) keeps its 3 groups on 4 threads: "
            "a work-item runs no loop") in done.stderr, done.stderr
