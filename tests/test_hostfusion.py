"""Host fusion end to end: the alias table, buffers kept transposed, the guard and its cache.

The transforms have their own tests (test_coarsen, test_layout, test_vectorize); these run
whole host programs with host fusion on and check that every result, every buffer read back,
and every other kernel's view of a kept buffer are those of the program run as written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence

import numpy as np
import pytest

import ppcl as cl
from ppcl import hostfusion
from ppcl.devices.interface import ArgValue, KernelLaunch, NDRange
from ppcl.hostfusion import guard
from ppcl.hostfusion.aliases import AliasTable
from ppcl.runtime.memory import Kept
from ppcl.settings import SettingsError, parse_hostfusion

mf = cl.mem_flags

# GPU-style: each work-item (x, y) recomputes a per-column coefficient (uniform along y)
SETUP = """
__kernel void scale(__global const float *params, __global const float *in,
                    __global float *out, int width, int height) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height) return;
    float p = params[x];
    float c = 0.0f;
    for (int k = 0; k < 48; k++) c = c * p + (float)(k % 7) * 0.125f;
    out[y * width + x] = in[y * width + x] * c;
}
"""

# GPU code reading an array of 4-float structures: lane i reads p[4*i + c], a stride of 4
# along the vectorized dimension, which the model reads better as structure-of-arrays
STRUCTS = """
__kernel void norm(__global const float *p, __global float *out, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    out[i] = p[4 * i] * p[4 * i] + p[4 * i + 1] * p[4 * i + 1] + p[4 * i + 2] - p[4 * i + 3];
}
__kernel void bump(__global float *p, int total) {
    int i = get_global_id(0);
    if (i < total) p[i] = p[i] * 0.5f + 1.0f;
}
"""

# a buffer used by two kernels, for the alias table
NEIGHBORS = """
__kernel void gather(__global const float *value, __global const int *neigh,
                     __global float *out, int atoms, int count) {
    int i = get_global_id(0);
    if (i >= atoms) return;
    float sum = 0.0f;
    for (int j = 0; j < count; j++) sum += value[neigh[j * atoms + i]];
    out[i] = sum;
}
"""


@pytest.fixture()
def context() -> cl.Context:
    return cl.Context(cl.get_platforms()[0].get_devices()[:1])


def _setup_run(context: cl.Context, mode: str | None, width: int, height: int,
               launches: int) -> tuple[np.ndarray, cl.CommandQueue]:
    queue = cl.CommandQueue(context)
    if mode is not None:
        assert hostfusion.enable(queue, mode)
    rng = np.random.default_rng(width * height)
    params = rng.uniform(-1, 1, width).astype(np.float32)
    data = rng.uniform(-1, 1, width * height).astype(np.float32)
    program = cl.Program(context, SETUP).build()
    d_params = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=params)
    d_in = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=data)
    d_out = cl.Buffer(context, mf.WRITE_ONLY, data.nbytes)
    gsize = (-(-width // 16) * 16, -(-height // 16) * 16)
    for _ in range(launches):
        program.scale(queue, gsize, (16, 16), d_params, d_in, d_out, np.int32(width),
                      np.int32(height))
        guard.wait_for_builds()
    out = np.empty_like(data)
    cl.enqueue_copy(queue, out, d_out)
    return out, queue


@pytest.mark.parametrize("width,height", [(37, 45), (64, 64), (5, 130)])
def test_forced_coarsening_computes_the_same(context: cl.Context, width: int,
                                             height: int) -> None:
    expected, _ = _setup_run(context, None, width, height, 1)
    got, _ = _setup_run(context, "force", width, height, 2)
    np.testing.assert_array_equal(got, expected)
    decision = hostfusion.decisions()[-1]
    assert decision.title.startswith("scale ")
    assert decision.source == "forced"
    assert "coarsen dimension 1" in decision.choice, decision.describe()


def test_guard_times_and_stores_its_choice(context: cl.Context) -> None:
    expected, _ = _setup_run(context, None, 200, 64, 1)
    # turns enough for the original and up to five candidates: a GPU's model offers three
    # here (coarsening, vectorization and both), a CPU's fewer
    got, _ = _setup_run(context, "on", 200, 64, 2 + guard.ROUNDS * 6)
    np.testing.assert_array_equal(got, expected)
    decision = hostfusion.decisions()[-1]
    assert decision.source == "measured", decision.describe()
    trial = decision.trial
    assert trial is not None and trial.choice is not None
    assert all(len(s) >= guard.ROUNDS for b, s in zip(trial.built, trial.samples)
               if not b.error)
    stored = guard.load_choice(trial.key)
    assert stored is not None and stored["choice"] == decision.choice
    # a new process (here: forgotten shapes) starts from the stored choice and times nothing
    hostfusion._STATE.shapes.clear()
    again, _ = _setup_run(context, "on", 200, 64, 1)
    np.testing.assert_array_equal(again, expected)
    cached = hostfusion.decisions()[-1]
    assert cached.source == "cached"
    # with the stored times, which the guard weighs the shuffles of this run against
    assert cached.trial is not None
    assert [s for s in cached.trial.samples if s] == [
        [stored["timings"][b.label]] for b in cached.trial.built
        if stored["timings"].get(b.label) is not None]


def _norm(p: np.ndarray) -> np.ndarray:
    return p[:, 0] * p[:, 0] + p[:, 1] * p[:, 1] + p[:, 2] - p[:, 3]


def _assert_computed(context: cl.Context, got: np.ndarray, want: np.ndarray) -> None:
    """Bit for bit on a CPU device; within an ulp or two on a GPU, which contracts ``a * b + c``
    into one fma (OpenCL allows it by default) where numpy rounds the product first."""
    if context.devices[0].type & cl.device_type.GPU:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    else:
        np.testing.assert_array_equal(got, want)


class _Norms:
    """``n`` random structures in a buffer and the norm kernel, on a queue whose host fusion
    is forced: its first launch keeps ``p`` transposed."""

    def __init__(self, context: cl.Context, n: int, seed: int) -> None:
        self.n = n
        self.structs = np.random.default_rng(seed).uniform(-1, 1, (n, 4)).astype(np.float32)
        self.queue = cl.CommandQueue(context)
        hostfusion.enable(self.queue, "force")
        self.program = cl.Program(context, STRUCTS).build()
        self.d_p = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=self.structs)
        self.d_out = cl.Buffer(context, mf.WRITE_ONLY, n * 4)

    def norm(self) -> None:
        self.program.norm(self.queue, (-(-self.n // 16) * 16,), (16,), self.d_p, self.d_out,
                          np.int32(self.n))

    def bump(self) -> None:
        size = self.structs.size
        self.program.bump(self.queue, (size,), None, self.d_p, np.int32(size))


@pytest.mark.parametrize("n", [60, 250])
def test_transposed_buffer_reads_back_and_is_restored(context: cl.Context, n: int) -> None:
    setup = _Norms(context, n, n)
    structs, queue, d_p, d_out = setup.structs, setup.queue, setup.d_p, setup.d_out
    setup.norm()
    out = np.empty(n, np.float32)
    cl.enqueue_copy(queue, out, d_out)
    _assert_computed(context, out, _norm(structs))
    decision = hostfusion.decisions()[-1]
    assert decision.title.startswith("norm ")
    assert "layout p" in decision.choice, decision.describe()
    assert d_p.keeper is not None and Kept.count > 0
    # the buffer reads back as written, and a kernel that was not rewritten sees it so too
    back = np.empty_like(structs)
    cl.enqueue_copy(queue, back, d_p)
    np.testing.assert_array_equal(back, structs)
    setup.bump()
    bumped = structs * np.float32(0.5) + np.float32(1.0)
    cl.enqueue_copy(queue, back, d_p)
    np.testing.assert_array_equal(back, bumped)
    # and the rewritten kernel, launched again, reads the bumped structures (shuffled anew)
    setup.norm()
    cl.enqueue_copy(queue, out, d_out)
    _assert_computed(context, out, _norm(bumped))


def test_another_kernel_reading_a_kept_buffer_charges_the_layout(context: cl.Context) -> None:
    """A kernel that uses a transposed buffer as written has it shuffled back, and the next
    rewritten launch has it shuffled in again: both shuffles are charged to the layout, which
    the guard weighs (a molecular dynamics step whose force buffer one kernel kept transposed
    and the next read as written ran 0.92x of host fusion off)."""
    setup = _Norms(context, 250, 5)
    setup.norm()
    keeper = setup.d_p.keeper
    assert keeper is not None, hostfusion.decisions()[-1].describe()
    keeper.take_charge()
    setup.bump()
    # norm only reads the buffer, so its bytes were current; bump's write left the shadow
    # stale, and the shuffle in before the next rewritten launch counts
    assert keeper.charge_prepare
    keeper.prepare(setup.d_p)
    assert keeper.charged_ns > 0
    setup.norm()
    out = np.empty(setup.n, np.float32)
    cl.enqueue_copy(setup.queue, out, setup.d_out)
    _assert_computed(context, out, _norm(setup.structs * np.float32(0.5) + np.float32(1.0)))


DRIFT = """
__kernel void drift(__global float *p, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float x = p[4 * i], v = p[4 * i + 1];
    p[4 * i] = x + 0.5f * v;
    p[4 * i + 1] = v * p[4 * i + 2] + p[4 * i + 3];
}
"""


def _drift(p: np.ndarray) -> np.ndarray:
    q = p.copy()
    q[:, 0] = p[:, 0] + np.float32(0.5) * p[:, 1]
    q[:, 1] = p[:, 1] * p[:, 2] + p[:, 3]
    return q


def test_a_map_sees_and_changes_a_buffer_kept_transposed(context: cl.Context) -> None:
    """A rewritten kernel updates its buffer in the transposed copy: a map must see (and
    write) the buffer as the program wrote it, as a read does."""
    n = 256
    structs = np.random.default_rng(9).uniform(-1, 1, (n, 4)).astype(np.float32)
    queue = cl.CommandQueue(context)
    hostfusion.enable(queue, "force")
    program = cl.Program(context, DRIFT).build()
    d_p = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=structs)
    program.drift(queue, (n,), None, d_p, np.int32(n))
    assert "layout p" in hostfusion.decisions()[-1].choice
    program.drift(queue, (n,), None, d_p, np.int32(n))
    expected = _drift(_drift(structs))
    mapped, _ = cl.enqueue_map_buffer(queue, d_p, cl.map_flags.READ | cl.map_flags.WRITE, 0,
                                      (n, 4), np.float32)
    # within rounding: a GPU contracts v * p[2] + p[3] into one fma; stale bytes (the layout
    # not restored) would differ in whole values
    np.testing.assert_allclose(mapped, expected, rtol=1e-6, atol=1e-6)
    mapped[:, 3] = 1.0
    expected[:, 3] = 1.0
    mapped.base.release()
    program.drift(queue, (n,), None, d_p, np.int32(n))
    back = np.empty_like(structs)
    cl.enqueue_copy(queue, back, d_p)
    np.testing.assert_allclose(back, _drift(expected), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(back[:, 3], 1.0)  # the write through the map was kept


# float4 pixels, AoS: each lane reads two components of its pixel again and again, which the
# model reads better as structure of arrays; the frame's other buffer is only written
PIXELS = """
__kernel void glow(__global float4 *px, __global float *out, int n, float k) {
    int i = get_global_id(0);
    if (i >= n) return;
    float l = px[i].x;
    for (int j = 0; j < 4; j++) l = l * k + 0.5f * px[i].y;
    px[i].w = l;
    out[i] = l + px[i].z;
}
"""


@pytest.mark.parametrize("n", [61, 250])
def test_vector_buffer_as_structure_of_arrays(context: cl.Context, n: int) -> None:
    rng = np.random.default_rng(n)
    pixels = rng.uniform(-1, 1, (n, 4)).astype(np.float32)
    queue = cl.CommandQueue(context)
    hostfusion.enable(queue, "force")
    program = cl.Program(context, PIXELS).build()
    d_px = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=pixels)
    d_out = cl.Buffer(context, mf.WRITE_ONLY, n * 4)
    reference = cl.CommandQueue(context)
    hostfusion.disable(reference)
    plain = cl.Program(context, PIXELS).build()
    r_px = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=pixels)
    r_out = cl.Buffer(context, mf.WRITE_ONLY, n * 4)
    for _ in range(2):  # the second launch reads what the first wrote, still transposed
        program.glow(queue, (-(-n // 16) * 16,), (16,), d_px, d_out, np.int32(n),
                     np.float32(0.5))
        plain.glow(reference, (-(-n // 16) * 16,), (16,), r_px, r_out, np.int32(n),
                   np.float32(0.5))
    decision = hostfusion.decisions()[-1]
    assert "layout px" in decision.choice and "float4 components" in decision.choice, \
        decision.describe()
    assert d_px.keeper is not None
    described = decision.describe()
    assert "layout of px: structure of arrays (4 arrays of " in described, described
    assert "layout of out: as written (no access of out has a row stride" in described, \
        described
    for device, host in ((d_px, r_px), (d_out, r_out)):
        got, want = np.empty(device.size // 4, np.float32), np.empty(host.size // 4, np.float32)
        cl.enqueue_copy(queue, got, device)
        cl.enqueue_copy(reference, want, host)
        np.testing.assert_array_equal(got, want)


# a time step on 4-float cells with periodic neighbors (an opaque row: the wrapped index),
# the host swapping its two buffers at every launch
PERIODIC_STEP = """
__kernel void step(__global const float *src, __global float *dst, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    int left = i - 1, right = i + 1;
    if (left < 0) left += n;
    if (right >= n) right -= n;
    dst[4 * i] = 0.5f * src[4 * i] + 0.25f * (src[4 * left] + src[4 * right]);
    dst[4 * i + 1] = src[4 * i + 1] + 0.125f * src[4 * right + 2];
    dst[4 * i + 2] = src[4 * left + 2] * 0.75f + src[4 * i + 3];
    dst[4 * i + 3] = src[4 * i + 3];
}
"""


@pytest.mark.parametrize("n", [61, 256])
def test_swapped_buffers_keep_their_layout_together(context: cl.Context, n: int) -> None:
    """Both buffers of a ping-pong are planned in the same layout: each passes through the
    kernel as source and as destination, stays transposed between launches and is shuffled
    once in and once out."""
    cells = np.random.default_rng(n).uniform(-1, 1, (n, 4)).astype(np.float32)
    results = []
    for mode in (None, "force"):
        queue = cl.CommandQueue(context)
        if mode is None:
            hostfusion.disable(queue)
        else:
            hostfusion.enable(queue, mode)
        program = cl.Program(context, PERIODIC_STEP).build()
        a = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=cells)
        b = cl.Buffer(context, mf.READ_WRITE, cells.nbytes)
        src, dst = a, b
        for _ in range(7):
            program.step(queue, (-(-n // 16) * 16,), (16,), src, dst, np.int32(n))
            src, dst = dst, src
        if mode is not None:
            decision = hostfusion.decisions()[-1]
            assert "layout src" in decision.choice and "layout dst" in decision.choice, \
                decision.describe()
            assert a.keeper is not None and b.keeper is not None
            assert a.keeper.shuffles + b.keeper.shuffles <= 2, (a.keeper.shuffles,
                                                                b.keeper.shuffles)
        out = np.empty_like(cells)
        cl.enqueue_copy(queue, out, src)
        results.append(out)
    np.testing.assert_array_equal(results[1], results[0])


def test_alias_table_partners_share_a_buffer(context: cl.Context) -> None:
    table = AliasTable()
    program = cl.Program(context, PERIODIC_STEP).build()
    kernel = program.step
    buffer = cl.Buffer(context, mf.READ_WRITE, 64)
    table.trace(buffer).kernels.update({(id(program), "step", 0), (id(program), "step", 1)})
    alone, why = table.exclusive(buffer, kernel, 0)
    assert not alone and "step (argument 1)" in why
    assert table.exclusive(buffer, kernel, 0, (1,))[0]


def test_alias_table_says_why_a_buffer_is_shared(context: cl.Context) -> None:
    table = AliasTable()
    program = cl.Program(context, NEIGHBORS).build()
    kernel = program.gather
    data = np.zeros(64, np.int32)
    in_place = cl.Buffer(context, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=data)
    alone, why = table.exclusive(in_place, kernel, 1)
    assert not alone and "USE_HOST_PTR" in why
    copied = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data)
    assert table.exclusive(copied, kernel, 1)[0]
    table.trace(copied).kernels.add((id(program), "bump", 0))
    alone, why = table.exclusive(copied, kernel, 1)
    assert not alone and "bump" in why
    parent = cl.Buffer(context, mf.READ_WRITE, 4096)
    sub = parent.get_sub_region(0, 1024)
    assert "sub-buffer" in table.exclusive(sub, kernel, 1)[1]


# the naive matrix product: nothing but `col` is uniform along y at the top level; the load
# of B inside the loop is, and coarsening with jam shares it between rows
SGEMM = """
__kernel void sgemm(int n, __global const float *A, __global const float *B,
                    __global float *C) {
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < n; k++) acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
}
"""


@pytest.mark.parametrize("n", [64, 80])
def test_forced_jam_of_a_naive_matrix_product(context: cl.Context, n: int) -> None:
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    results = []
    for mode in (None, "force"):
        queue = cl.CommandQueue(context)
        if mode is not None:
            assert hostfusion.enable(queue, mode)
        program = cl.Program(context, SGEMM).build()
        d_a = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        d_b = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
        d_c = cl.Buffer(context, mf.WRITE_ONLY, a.nbytes)
        for _ in range(2):
            # groups of 16 x 16: a GPU's model keeps a warp a group up to factor 8
            program.sgemm(queue, (n, n), (16, 16), np.int32(n), d_a, d_b, d_c)
            guard.wait_for_builds()
        c = np.empty_like(a)
        cl.enqueue_copy(queue, c, d_c)
        results.append(c)
    # the same operations in the same order for every element
    np.testing.assert_array_equal(results[1], results[0])
    decision = hostfusion.decisions()[-1]
    assert decision.source == "forced"
    assert "coarsen dimension 1" in decision.choice and "with jam" in decision.choice, \
        decision.describe()  # alone or with vectorization: the first candidate holds all
    assert "jam: the loop at" in decision.describe()


def test_the_switch_parses() -> None:
    assert parse_hostfusion("") == "off"
    assert parse_hostfusion("1") == "on"
    assert parse_hostfusion("force") == "force"
    with pytest.raises(SettingsError, match="PPCL_HOSTFUSION"):
        parse_hostfusion("sometimes")


@pytest.mark.parametrize("value, installed", [("1", True), ("force", True), ("0", False)])
def test_the_variable_reaches_an_unmodified_program(value: str, installed: bool,
                                                     tmp_path) -> None:
    # a program that only imports ppcl: PPCL_HOSTFUSION alone must install host fusion
    program = ("import sys, ppcl as cl\n"
               "queue = cl.CommandQueue(cl.create_some_context(interactive=False))\n"
               "print(queue._hostfusion is not None, 'ppcl.hostfusion' in sys.modules)\n")
    env = {**os.environ, "PPCL_HOSTFUSION": value, "PPCL_CACHE_DIR": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                         text=True, check=True, timeout=120)
    assert run.stdout.split()[0] == str(installed)


def test_out_of_order_queues_are_left_alone(context: cl.Context) -> None:
    queue = cl.CommandQueue(
        context, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    assert not hostfusion.enable(queue)


# a ping-pong step host fusion leaves alone on every device: no row stride for a layout, and the
# barrier over a __local tile rules out coarsening and vectorizing (a GPU's model vectorizes
# the same step written without it)
PINGPONG = """
__kernel void relax(__global const float *src, __global float *dst, int n, float s) {
    __local float tile[16];
    int i = get_global_id(0), l = get_local_id(0);
    tile[l] = i < n ? src[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    float scaled = tile[l] * s;  /* its own statement: rounded as numpy rounds, on a GPU too */
    if (i < n) dst[i] = scaled + 1.0f;
}
"""


def test_launches_left_alone_still_see_new_buffers(context: cl.Context) -> None:
    n = 53
    queue = cl.CommandQueue(context)
    assert hostfusion.enable(queue)
    program = cl.Program(context, PINGPONG).build()
    kernel = program.relax
    start = np.random.default_rng(n).uniform(-1, 1, n).astype(np.float32)
    buffers = [cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=start),
               cl.Buffer(context, mf.READ_WRITE, start.nbytes)]
    expected = start.copy()
    for step in range(7):  # the buffers swap and the scale changes at every launch
        scale = np.float32(0.5 + step / 8)
        kernel(queue, (64,), (16,), buffers[0], buffers[1], np.int32(n), scale)
        expected = expected * scale + np.float32(1.0)
        buffers.reverse()
    decision = hostfusion.decisions()[-1]
    assert decision.title.startswith("relax ") and decision.source == "none", \
        decision.describe()
    assert kernel._hostfusion_passes is not None
    # a buffer the kernel has not had before is entered in the alias table, so another
    # kernel's layout change sees that this one shares it
    fresh = cl.Buffer(context, mf.READ_WRITE, start.nbytes)
    kernel(queue, (64,), (16,), buffers[0], fresh, np.int32(n), np.float32(2.0))
    expected = expected * np.float32(2.0) + np.float32(1.0)
    entry = hostfusion._STATE.aliases.trace(fresh)
    assert (id(program), "relax", 1) in entry.kernels
    out = np.empty_like(start)
    cl.enqueue_copy(queue, out, fresh)
    np.testing.assert_array_equal(out, expected)


def test_a_launch_left_alone_runs_as_on_a_queue_without_host_fusion(context: cl.Context,
                                                                     monkeypatch) -> None:
    """Once host fusion has left a launch as written, the same launch again takes the direct
    way (no command closure, no hooks): on the GPU it had cost 8-18 us a launch more."""
    n = 64
    queue = cl.CommandQueue(context)
    assert hostfusion.enable(queue)
    kernel = cl.Program(context, PINGPONG).build().relax
    data = np.arange(n, dtype=np.float32)
    src = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=data)
    dst = cl.Buffer(context, mf.READ_WRITE, data.nbytes)
    kernel(queue, (n,), (16,), src, dst, np.int32(n), np.float32(2.0))
    assert hostfusion.decisions()[-1].source == "none"
    # buffers an earlier test left in another layout (a GPU's model keeps some) would send every
    # launch of the process the long way: the queue checks one process-wide count
    monkeypatch.setattr(Kept, "count", 0)
    enqueued = []
    original = queue._enqueue
    monkeypatch.setattr(queue, "_enqueue", lambda *a, **k: enqueued.append(a) or original(*a, **k))
    for scale in (3.0, 3.0, 3.0):
        kernel(queue, (n,), (16,), src, dst, np.int32(n), np.float32(scale))
    # the first launch with the new scale passes host fusion's hook, the others not; all of
    # them run the direct way
    assert not enqueued
    assert kernel._hostfusion_passes.args is kernel._arg_values
    out = np.empty_like(data)
    cl.enqueue_copy(queue, out, dst)
    np.testing.assert_array_equal(out, data * np.float32(3.0) + np.float32(1.0))


def test_a_chosen_variant_runs_the_direct_way(context: cl.Context, monkeypatch) -> None:
    """Once the guard has chosen a variant for a launch, the same launch again runs that
    variant the direct way (no alias-table entry, no shape lookup, no command closure): on
    the GPU the long way had cost more than a vectorized saxpy saves. Buffers that swap and
    scalars that change still reach the variant."""
    width, height = 37, 45
    queue = cl.CommandQueue(context)
    assert hostfusion.enable(queue, "force")
    kernel = cl.Program(context, SETUP).build().scale
    rng = np.random.default_rng(7)
    params = rng.uniform(-1, 1, width).astype(np.float32)
    data = rng.uniform(-1, 1, width * height).astype(np.float32)
    d_params = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=params)
    ping = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data)
    pong = cl.Buffer(context, mf.READ_WRITE, data.nbytes)
    gsize = (48, 48)
    kernel(queue, gsize, (16, 16), d_params, ping, pong, np.int32(width),
                  np.int32(height))
    decision = hostfusion.decisions()[-1]
    assert decision.source == "forced" and "coarsen" in decision.choice, decision.describe()
    monkeypatch.setattr(Kept, "count", 0)  # (see the test above)
    enqueued = []
    original = queue._enqueue
    monkeypatch.setattr(queue, "_enqueue", lambda *a, **k: enqueued.append(a) or original(*a, **k))
    ran = []
    monkeypatch.setattr(hostfusion._STATE.aliases, "launched",
                        lambda *a: ran.append(a))
    buffers = [pong, ping]
    for _ in range(4):  # the buffers swap at every launch: two tuples, both kept
        kernel(queue, gsize, (16, 16), d_params, buffers[0], buffers[1],
                      np.int32(width), np.int32(height))
        buffers.reverse()
    assert len(ran) == 1  # the swapped tuple, once; then both pass
    assert not enqueued
    for _ in range(3):
        kernel(queue, gsize, (16, 16), d_params, buffers[0], buffers[1],
                      np.int32(width), np.int32(height))
        buffers.reverse()
    assert len(ran) == 1 and not enqueued
    out = np.empty_like(data)
    cl.enqueue_copy(queue, out, buffers[0])
    expected = data.copy()
    x = np.arange(width)
    c = np.zeros(width, np.float32)
    for k in range(48):
        c = (c * params + np.float32(k % 7) * np.float32(0.125)).astype(np.float32)
    for _ in range(8):
        expected = (expected.reshape(height, width) * c[x]).astype(np.float32).ravel()
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_the_first_launch_of_each_variant_is_not_a_sample() -> None:
    trial = guard.Trial("key", "title", [guard.Built(None)])
    assert not trial.record(0, 10_000_000)  # a cold first launch
    assert trial.samples == [[]]
    decided = [trial.record(0, 1000 + i) for i in range(guard.ROUNDS)]
    assert trial.samples == [[1000 + i for i in range(guard.ROUNDS)]]
    assert decided[-1] and trial.choice == 0


def test_no_sample_is_taken_while_a_candidate_builds() -> None:
    """A launch of the original run beside a candidate's compilation shares the cores with
    the compiler: timed then, the original looked twice as slow as it is and a slower layout
    won. Samples start once every build has finished, another kernel's too (the next kernel
    of a time step starts its candidates' builds while the first one's trial runs)."""
    import threading
    trial = guard.Trial("key", "title", [guard.Built(None), guard.Built(None)])
    other = guard.Built(None)
    release = threading.Event()

    def build() -> KernelLaunch:
        release.wait(30)
        raise RuntimeError("not needed")
    guard.start_build(other, build, background=True)  # another trial's candidate
    assert not trial.record(0, 10_000_000)  # untimed first launch
    for _ in range(guard.ROUNDS):
        assert not trial.record(0, 2_200_000)  # beside the build
    assert trial.samples == [[], []]
    release.set()
    guard.wait_for_builds()
    assert other.error.startswith("not built (RuntimeError")
    for i in range(guard.ROUNDS):
        trial.record(0, 1_100_000 + i)
    assert trial.samples[0] == [1_100_000 + i for i in range(guard.ROUNDS)]
    assert trial.choice is None  # the candidate has no samples yet


def test_a_chosen_layout_whose_transfers_cost_more_than_it_saves_is_dropped() -> None:
    """The chosen layout's launches saved 0.1 ms each over the original's 0.24 ms, but the
    program reads the buffer back every few launches, and the shuffles those transfers cause
    cost more: after ``WATCH_LAUNCHES`` launches the original comes back, with the reason."""
    trial = guard.Trial("key", "title", [guard.Built(None), guard.Built(None)])
    trial.samples = [[240_000, 250_000], [140_000, 150_000]]
    trial.choice = 1
    changed = [trial.watch(1, 1_500_000 if n % 8 == 7 else 0)
               for n in range(guard.WATCH_LAUNCHES)]
    assert changed == [False] * (guard.WATCH_LAUNCHES - 1) + [True]
    assert trial.choice == 0
    assert "dropped after 8 launches" in trial.notes[-1], trial.notes
    assert not trial.watch(1, 0)  # no longer the choice: nothing more to weigh


def test_a_chosen_layout_the_transfers_do_not_undo_stays() -> None:
    trial = guard.Trial("key", "title", [guard.Built(None), guard.Built(None)])
    trial.samples = [[240_000], [140_000]]
    trial.choice = 1
    # a long time-step loop: one shuffle of 0.5 ms in 64 launches is 8 us a launch
    changed = [trial.watch(1, 500_000 if n == 0 else 0) for n in range(64)]
    assert not any(changed) and trial.choice == 1 and not trial.notes
    # a stored choice (nothing timed in this process) is not second-guessed
    cached = guard.Trial("key", "title", [guard.Built(None), guard.Built(None)])
    cached.choice = 1
    assert not any(cached.watch(1, 10_000_000) for _ in range(16))


class _Tiered(KernelLaunch):
    """A launch whose device has not loaded the code it keeps until ``settled`` is set."""

    ndrange = NDRange(1, (1, 1, 1), (1, 1, 1), (0, 0, 0))
    static_local_bytes = 0

    def __init__(self) -> None:
        self.runs = 0
        self.ready = False

    def local_bytes(self, args: Sequence[ArgValue]) -> int:
        return 0

    def run(self, args: Sequence[ArgValue]) -> None:
        self.runs += 1

    @property
    def settled(self) -> bool:
        return self.ready


def test_launches_of_a_quickly_compiled_first_module_are_not_samples() -> None:
    """A GPU's first module is compiled quickly and its optimized successor loaded later:
    the guard times a variant only once its launch runs the code it keeps."""
    launch = _Tiered()
    trial = guard.Trial("key", "title", [guard.Built(None)])
    run = guard.runner(trial.built[0], trial, 0, True, launch)
    for _ in range(3):
        run(())
    assert launch.runs == 3 and not trial.warmed and trial.samples == [[]]
    launch.ready = True
    for _ in range(1 + guard.ROUNDS):
        run(())
    assert len(trial.samples[0]) == guard.ROUNDS and trial.choice == 0
