"""ppcl.array reductions through the patterns (``ppcl.array_patterns``) against numpy and
against the ReductionKernel route: every reduction and dtype the patterns take, lengths around
the derivations' blocks, lazy chains, the route shown by ``PPCL_DEBUG=array``, and the
exploration of a long array read back from its cache by a second process."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import ppcl
import ppcl.array as cla
from ppcl import array_patterns
from ppcl.patterns.run import Runnable

DTYPES = [np.float32, np.float64, np.int32]
# one element, shorter than a vector, a few vectors, a block of the one-work-item derivation
# and one past it, and past ONE_ITEM_BELOW with a tail
SIZES = [1, 7, 32, 4099, array_patterns.ONE_ITEM_BELOW + 37]


@pytest.fixture(autouse=True)
def patterns_route(monkeypatch):
    monkeypatch.setenv("PPCL_ARRAY_PATTERNS", "1")


def test_the_route_is_off_unless_asked_for(queue, monkeypatch):
    monkeypatch.delenv("PPCL_ARRAY_PATTERNS")
    x = cla.to_device(queue, np.arange(100, dtype=np.float32))
    why = array_patterns.plan(abs(x)._node(), "sum", x.dtype, x.size, queue)
    assert isinstance(why, str) and "PPCL_ARRAY_PATTERNS=1" in why
    assert float(abs(x).sum()) == 4950.0
    monkeypatch.setenv("PPCL_ARRAY_PATTERNS", "maybe")
    with pytest.raises(Exception, match="PPCL_ARRAY_PATTERNS"):
        x.sum()


def values(dtype, n, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "i":
        return rng.integers(-1000, 1000, size=n).astype(dtype)
    return (rng.random(n) * 4 - 2).astype(dtype)


def strided(queue, h):
    """A device view of ``h`` with stride 2 (the ReductionKernel route)."""
    wide = np.zeros(2 * h.size, h.dtype)
    wide[::2] = h
    return cla.to_device(queue, wide)[::2]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_reductions_match_numpy_on_both_routes(queue, dtype, n):
    hs = [values(dtype, n, seed) for seed in range(4)]
    magnitude = [np.abs(h.astype(np.float64)) for h in hs]
    for route in ("patterns", "reduction kernel"):
        make = (lambda h: cla.to_device(queue, h)) if route == "patterns" else \
            (lambda h: strided(queue, h))
        a, b, c, d = (make(h) for h in hs)
        ha, hb, hc, hd = hs
        scale = (0.5 if np.dtype(dtype).kind == "f" else 3)
        cases = [
            (a.sum(), ha.sum(dtype=dtype), magnitude[0].sum()),
            (abs(a).sum(), np.abs(ha).sum(dtype=dtype), magnitude[0].sum()),
            (cla.dot(a, b), np.dot(ha, hb), (magnitude[0] * magnitude[1]).sum()),
            (cla.vdot(a, b), np.vdot(ha, hb), (magnitude[0] * magnitude[1]).sum()),
            (a.max(), ha.max(), 0),
            (a.min(), ha.min(), 0),
            ((((a * b + c) * d - a) * scale).sum(),
             ((((ha * hb + hc) * hd - ha) * dtype(scale)).sum(dtype=dtype)),
             ((magnitude[0] * magnitude[1] + magnitude[2]) * magnitude[3]
              + magnitude[0]).sum() * 2),
            (cla.max(cla.maximum(a, b) - c), np.max(np.maximum(ha, hb) - hc), 0),
        ]
        for got, want, size in cases:
            result = got.get()
            assert result.dtype == np.dtype(dtype)
            if np.dtype(dtype).kind == "i":
                assert result == want, route
            else:
                bound = 4 * np.finfo(dtype).eps * (size + abs(float(want)))
                assert abs(float(result) - float(want)) <= bound, (route, result, want)


def test_integer_sums_wrap_as_int32_exactly(queue):
    h = np.full((1 << 12) + 3, 2**30, np.int32)
    h[::3] = -7
    assert cla.to_device(queue, h).sum().get() == h.sum(dtype=np.int32)


def test_scalars_are_arguments_not_constants(queue):
    h = values(np.float32, 5000, 1)
    x = cla.to_device(queue, h)
    for s in (0.5, 2.0, -3.0):
        want = (h.astype(np.float64) * s - 1).sum()
        got = float((x * np.float32(s) - 1).sum())
        assert abs(got - want) <= 1e-5 * np.abs(h).sum() * 3
    forms = [key for key in array_patterns._forms if key.show() == "((x0 * s0) - s1)"]
    assert len(forms) == 1  # one shape, whatever the scalars' values


def test_contiguous_views_with_an_aligned_offset_take_the_patterns(queue):
    h = values(np.int32, 3000, 2)
    x = cla.to_device(queue, h)
    assert x[256:].sum().get() == h[256:].sum()  # 1024 bytes in: a sub-buffer
    assert x[3:].sum().get() == h[3:].sum()  # misaligned: the other route
    form = array_patterns.plan(x[256:]._node(), "sum", x.dtype, x[256:].size, queue)
    assert not isinstance(form, str)
    why = array_patterns.plan(x[3:]._node(), "sum", x.dtype, x[3:].size, queue)
    assert isinstance(why, str) and "offset" in why


def test_the_patterns_wait_for_the_arrays_events(ctx, queue):
    """A reduction through the patterns waits for the array's events: here a write held by a
    user event on another queue, which an in-order queue knows nothing of."""
    other = ppcl.CommandQueue(ctx)
    h = values(np.int32, 3000, 3)
    x = cla.zeros(other, h.shape, np.int32)
    x.finish()
    gate = ppcl.UserEvent(ctx)
    x.add_event(ppcl.enqueue_copy(other, x.data, h, is_blocking=False, wait_for=[gate]))
    assert not isinstance(array_patterns.plan(x._node(), "sum", x.dtype, x.size, queue), str)
    total = cla.sum(x, queue=queue)
    gate.set_status(ppcl.command_execution_status.COMPLETE)
    assert total.get() == h.sum()


def test_a_built_reductions_kernels_wait_for_each_other_on_an_out_of_order_queue(ctx):
    """``Runnable.enqueue`` chains its kernels by events: on an out-of-order queue the final
    kernel of a two-kernel derivation ran at once, before the partials it reads."""
    queue = ppcl.CommandQueue(
        ctx, properties=ppcl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    h = values(np.float32, 4096, 4)
    x = cla.to_device(queue, h)
    x.finish()
    form, _arrays, _scalars = array_patterns.plan(x._node(), "sum", x.dtype, x.size,
                                                  ppcl.CommandQueue(ctx))
    variant = next(v for v in array_patterns.candidates(x.dtype) if v.local_size > 1)
    lowered, _ = array_patterns._lower_body(form, variant, x.size)
    assert len(lowered.kernels) == 2 and x.size % variant.block == 0
    out = ppcl.Buffer(ctx, ppcl.mem_flags.READ_WRITE, 4)
    gate = ppcl.UserEvent(ctx)
    done = Runnable(ctx, lowered, given=True).enqueue(queue, {"x0": x.data, "out": out},
                                                      wait_for=[gate])
    gate.set_status(ppcl.command_execution_status.COMPLETE)
    total = np.empty(1, np.float32)
    ppcl.enqueue_copy(queue, total, out, wait_for=[done])
    assert abs(total[0] - h.sum()) <= 1e-5 * np.abs(h).sum()


@pytest.mark.parametrize("make, reason", [
    (lambda q, h: cla.to_device(q, h.astype(np.complex64)), "dtype complex64"),
    (lambda q, h: cla.to_device(q, h)[::2], "not contiguous"),
    (lambda q, h: cla.to_device(q, h.astype(np.int64)), "dtype int64"),
    (lambda q, h: cla.to_device(q, h) // 2, "operator //"),
    (lambda q, h: cla.to_device(q, h).astype(np.float64), "operator cast"),
])
def test_what_the_patterns_cannot_express_says_why(queue, make, reason):
    h = values(np.float32, 64, 3)
    lazy = make(queue, h)
    dtype = lazy.dtype
    why = array_patterns.plan(lazy._node(), "sum", dtype, lazy.size, queue)
    assert isinstance(why, str) and reason in why
    want = np.sum(lazy.get().astype(np.complex128 if dtype.kind == "c" else np.float64))
    assert abs(complex(lazy.sum().get()) - want) <= 1e-4 * max(1.0, abs(want))


def _run(program: str, cache: str) -> str:
    env = {**os.environ, "PPCL_DEBUG": "array", "PPCL_CACHE_DIR": cache,
           "PPCL_ARRAY_PATTERNS": "1"}
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                          text=True, check=True, timeout=600)
    return done.stdout + done.stderr


def test_debug_output_names_each_route(tmp_path):
    program = ("import numpy as np, ppcl as cl, ppcl.array as cla\n"
               "q = cl.CommandQueue(cl.create_some_context(interactive=False))\n"
               "x = cla.to_device(q, np.arange(100, dtype=np.float32))\n"
               "print(float(abs(x).sum()), float(x[::2].sum()))\n")
    out = _run(program, str(tmp_path))
    assert "4950.0 2450.0" in out
    assert "ppcl array: sum of abs(x0) float32[100]: patterns (one work-item" in out
    assert "derived by vectorize{width=8}" in out
    assert "ppcl array: sum float32[50]: reduction kernel (an operand is not contiguous)" in out


def test_exploration_is_read_back_from_the_cache(tmp_path):
    n = (1 << 20) + 3
    program = ("import numpy as np, ppcl as cl, ppcl.array as cla\n"
               "q = cl.CommandQueue(cl.create_some_context(interactive=False))\n"
               f"h = (np.arange({n}) % 1000 - 500).astype(np.int32)\n"
               "x = cla.to_device(q, h)\n"
               "print('equal', int(abs(x).sum()) == int(np.abs(h).sum()))\n")
    first = _run(program, str(tmp_path))
    second = _run(program, str(tmp_path))
    assert "equal True" in first and "equal True" in second
    explored = [line for line in first.splitlines() if "ppcl array: explored" in line]
    assert explored and "(0 measured now" not in explored[0]
    assert "(explored)" in first
    reread = [line for line in second.splitlines() if "ppcl array: explored" in line]
    assert reread and "(0 measured now" in reread[0]
    assert "(cached)" in second
    # the same variant chosen both times
    chosen = [line.split(": ", 2)[2].split(" (")[0] for out in (first, second)
              for line in out.splitlines() if line.startswith("ppcl array: built")]
    assert len(chosen) == 2 and chosen[0] == chosen[1]
