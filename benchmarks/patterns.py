"""Kernels from patterns (``ppcl.patterns``) against numpy and the suite's hand-written OpenCL,
in the same run on ppcl's CPU device.

scal, asum and dot over 16M floats and gemv over a 4096 x 4096 matrix are compared with numpy
(OpenBLAS where numpy calls it; the fastest of numpy's spellings, and OpenBLAS's sasum through
scipy when it is installed); BlackScholes over 4M options with the hand-written kernel of
``ppcl/bench_source.py``. Each pattern kernel is first explored (chunk per work-item, vector
width, work-group size; measurements cached per expression, device and sizes), then its best
variant is timed against the others' way of computing the same result, the two taking turns
in every round, two timed calls after a fifth of a second of untimed ones (the median of each
is reported). Usage::

    python3 -m benchmarks.patterns [--size default|small] [--only scal,dot] [--cache DIR]
                                   [--plot DIR] [--json FILE] [--quick] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import ppcl as cl
from benchmarks.names import pick_names
from ppcl.bench_source import SOURCE
from ppcl.patterns import codegen, explore, run
from ppcl.patterns import derive as d
from ppcl.patterns import expr as px
from ppcl.patterns.types import ArrayT, shape_of
from ppcl.timing import measure, measure_in_turns

try:
    from scipy.linalg import blas as _blas
except ImportError:  # scipy is optional
    _blas = None

RATE, VOLATILITY = 0.02, 0.30


def _sizes(name: str, small: bool) -> dict[str, int]:
    if name == "gemv":
        return {"M": 512, "N": 512} if small else {"M": 4096, "N": 4096}
    if name == "black_scholes":
        return {"N": 1 << 16 if small else 1 << 22}
    return {"N": 1 << 18 if small else 1 << 24}


def _inputs(problem: d.Problem, sizes: dict[str, int], rng: np.random.Generator
            ) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for p in problem.inputs:
        if not isinstance(p.type, ArrayT):
            data[p.name] = {"a": 2.5, "rate": RATE, "volatility": VOLATILITY}[p.name]
            continue
        shape = [s.evaluate(sizes) for s in shape_of(p.type)]
        low, high = {"spot": (5, 30), "strike": (1, 100), "years": (0.25, 10)}.get(
            p.name, (-1, 1))
        data[p.name] = (low + (high - low) * rng.random(shape)).astype(np.float32)
    return data


def _numpy(name: str, data: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """numpy's ways of computing ``name`` (the fastest is the baseline), with OpenBLAS's own
    routine through scipy where numpy has no call of it and scipy is installed."""
    if name == "scal":
        out = np.empty_like(data["x"])
        return {"numpy a * x": lambda: np.float32(data["a"]) * data["x"],
                "numpy multiply(a, x, out=)":
                    lambda: np.multiply(np.float32(data["a"]), data["x"], out=out)}
    if name == "asum":
        ways: dict[str, Callable[[], Any]] = {"numpy abs(x).sum()":
                                              lambda: np.abs(data["x"]).sum()}
        if _blas is not None:
            ways["OpenBLAS sasum"] = lambda: _blas.sasum(data["x"])
        return ways
    if name == "dot":
        return {"numpy dot (OpenBLAS sdot)": lambda: np.dot(data["x"], data["y"])}
    if name == "gemv":
        return {"numpy A @ x (OpenBLAS sgemv)": lambda: data["A"] @ data["x"]}
    raise KeyError(name)


def _reference(name: str, data: dict[str, Any]) -> list[np.ndarray]:
    if name == "black_scholes":
        from ppcl.bench_kernels import _cnd
        s, x, t = (data[k].astype(np.float64) for k in ("spot", "strike", "years"))
        sqrt_t = np.sqrt(t)
        d1 = (np.log(s / x) + (RATE + 0.5 * VOLATILITY ** 2) * t) / (VOLATILITY * sqrt_t)
        d2 = d1 - VOLATILITY * sqrt_t
        disc = x * np.exp(-RATE * t)
        return [s * _cnd(d1) - disc * _cnd(d2), disc * (1.0 - _cnd(d2)) - s * (1.0 - _cnd(d1))]
    ways = _numpy(name, {k: v.astype(np.float64) if isinstance(v, np.ndarray) else v
                         for k, v in data.items()})
    value = next(iter(ways.values()))()  # numpy's first spelling, in float64
    return [np.atleast_1d(value)]


def _candidates(name: str, sizes: dict[str, int], quick: bool) -> list[explore.Variant]:
    """The search space; ``quick`` keeps a few points of it (vectorized, a mid chunk)."""
    n = sizes["M"] if name == "gemv" else sizes["N"]
    if name == "gemv":
        chunks = [c for c in ((4, 16) if quick else (1, 4, 16, 64)) if n % c == 0]
        return explore.variants(chunks, (8, 16) if quick else (4, 8, 16), (8,) if quick
                                else (1, 8), (1, 4) if quick else (1, 2, 4))
    chunks = [c for c in ((1024, 4096) if quick else (256, 1024, 4096, 16384))
              if n % (c * 16) == 0 and n // c >= 16]
    interleaves = (1, 4) if name in ("asum", "dot") else (1,)
    return explore.variants(chunks, (8, 16) if quick else (1, 4, 8, 16),
                            (8,) if quick else (1, 8), interleaves)


def _hand_written_black_scholes(ctx: cl.Context, queue: cl.CommandQueue, data: dict[str, Any]
                                ) -> tuple[Callable[[], None], Callable[[], list[np.ndarray]]]:
    program = cl.Program(ctx, SOURCE).build()
    n = data["spot"].size
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=data[k])
            for k in ("spot", "strike", "years")]
    outs = [cl.Buffer(ctx, mf.WRITE_ONLY, 4 * n) for _ in range(2)]
    kernel = program.black_scholes

    def launch() -> None:
        kernel(queue, (n,), (256,), *bufs, *outs, np.float32(RATE), np.float32(VOLATILITY),
               np.int32(n))
        queue.finish()

    def read() -> list[np.ndarray]:
        host = [np.empty(n, np.float32) for _ in range(2)]
        for h, b in zip(host, outs, strict=True):
            cl.enqueue_copy(queue, h, b)
        queue.finish()
        return host
    return launch, read


def _in_turns(ours: Callable[[], Any], theirs: dict[str, Callable[[], Any]], rounds: int
              ) -> tuple[float, str, float]:
    """Median seconds of ours, and the name and median seconds of the fastest of theirs, all
    taking turns in every round (the order rotates), so that a change of the shared
    machine's load falls on all. A turn times two calls after a fifth of a second of untimed
    ones: OpenBLAS's workers spin after a call, so a call right after another side's finds
    cores taken (``measure_in_turns``)."""
    measured = measure_in_turns({"": ours, **theirs}, repeats=rounds, run_length=2,
                                lead_s=0.2)
    ours_s = measured.pop("").timing.median_s
    best = min(measured, key=lambda label: measured[label].timing.median_s)
    return ours_s, best, measured[best].timing.median_s


def _close(got: list[np.ndarray], want: list[np.ndarray], rtol: float) -> str:
    for g, w in zip(got, want, strict=True):
        scale = max(float(np.max(np.abs(w))), 1.0)
        error = float(np.max(np.abs(g.astype(np.float64) - w))) / scale
        if not math.isfinite(error) or error > rtol:
            return f"MISMATCH (relative error {error:.2e})"
    return "ok"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("small", "default"), default="default")
    parser.add_argument("--only", default=None)
    parser.add_argument("--cache", default=None, help="exploration cache directory")
    parser.add_argument("--plot", default=None, help="directory for plots of the variants")
    parser.add_argument("--json", default=None)
    parser.add_argument("--quick", action="store_true", help="explore a few variants only")
    parser.add_argument("--rounds", type=int, default=11,
                        help="rounds of the final comparison, both sides timed in each")
    args = parser.parse_args(argv)
    names = pick_names(args.only, list(d.PROBLEMS))
    if names is None:
        return 2

    devices = [dev for plat in cl.get_platforms() if plat.name == "ppcl"
               for dev in plat.get_devices()]
    cpus = [dev for dev in devices if "cpu" in dev.name]
    ctx = cl.Context((cpus or devices)[:1])
    queue = cl.CommandQueue(ctx)
    device = ctx.devices[0].name
    rng = np.random.default_rng(7)
    rows = []
    print(f"device: {device}; numpy {np.__version__}")
    for name in names:
        problem = d.PROBLEMS[name]()
        sizes = _sizes(name, args.size == "small")
        data = _inputs(problem, sizes, rng)
        runnables: dict[tuple[str, int], run.Runnable] = {}

        def timed(derived: px.Expr, local: int, problem: d.Problem = problem,
                  sizes: dict[str, int] = sizes,
                  data: dict[str, Any] = data, name: str = name,
                  runnables: dict[tuple[str, int], run.Runnable] = runnables) -> float:
            lowered = codegen.lower(derived, problem.inputs, sizes, local, name)
            runnable = run.Runnable(ctx, lowered)
            runnable.set_inputs(queue, data)
            runnables[(px.show(derived), local)] = runnable
            return measure(lambda: runnable.launch(queue), repeats=3, max_warmup=3).timing.min_s

        exploration = explore.explore(problem, sizes, device, _candidates(name, sizes, args.quick), timed,
                                      args.cache)
        best = exploration.best
        if args.plot:
            os.makedirs(args.plot, exist_ok=True)
            explore.plot(exploration, os.path.join(args.plot, f"{name}.png"))
        derived = d.derive(problem.expr, problem.derivation(
            best.variant.chunk, best.variant.width, best.variant.interleave))
        runnable = run.Runnable(ctx, codegen.lower(derived, problem.inputs, sizes,
                                                   best.variant.local_size, name))
        runnable.set_inputs(queue, data)
        theirs: dict[str, Callable[[], Any]]
        if name == "black_scholes":
            launch, read = _hand_written_black_scholes(ctx, queue, data)
            theirs = {"hand-written OpenCL": launch}
        else:
            theirs, read = _numpy(name, data), lambda: []
        ours_s, versus, theirs_s = _in_turns(partial(runnable.launch, queue), theirs,
                                             args.rounds)
        check = _close(runnable.outputs(queue), _reference(name, data),
                       2e-3 if name == "black_scholes" else 1e-4)
        if name == "black_scholes":
            check += "/" + _close(read(), _reference(name, data), 2e-3)
        ratio = theirs_s / ours_s
        rows.append({"kernel": name, "sizes": sizes, "variant": best.variant.key,
                     "derivation": best.derivation, "patterns_ms": ours_s * 1e3,
                     "versus": versus, "versus_ms": theirs_s * 1e3, "speedup": ratio,
                     "check": check, "explored": len(exploration.results),
                     "measured_now": exploration.measured})
        print(f"{name:<14} {best.variant.key:<28} patterns {ours_s * 1e3:8.3f} ms  "
              f"{versus} {theirs_s * 1e3:8.3f} ms  {ratio:5.2f}x  {check}", flush=True)
        if args.json:  # after every kernel, so a run cut short keeps what it measured
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump({"device": device, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
