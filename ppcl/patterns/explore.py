"""Exploration: derive variants of an expression by rules with numeric parameters (chunk per
work-item, vector width, work-group size, interleaved accumulators), or by a breadth-first
search over rule applications (``rewrite_space``), measure each on the device, keep the
fastest.

Measurements are kept on disk, one JSON file per (expression, device, sizes) under
``<kernel cache root>/patterns`` (or a directory given), written atomically; a variant found
there is not measured again, so a second exploration gives the same choice from the cache
alone. A progress line counts the variants on stderr; ``plot`` draws the measured times when
matplotlib is installed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from ppcl.patterns import expr as px
from ppcl.patterns.derive import Derivation, Problem, Step, derive, show_derivation
from ppcl.patterns.rules import Rule, is_lowered, positions, rewrite
from ppcl.patterns.types import PatternTypeError
from ppcl.settings import read_settings

FORMAT = 1


@dataclass(frozen=True)
class Variant:
    """A point of the search: the problem's derivation for these numbers, or ``steps``
    found by ``rewrite_space``."""

    chunk: int
    width: int
    local_size: int
    interleave: int = 1
    steps: Derivation | None = None

    @property
    def key(self) -> str:
        if self.steps is not None:
            return f"{show_derivation(self.steps)};local={self.local_size}"
        return (f"chunk={self.chunk},width={self.width},local={self.local_size},"
                f"interleave={self.interleave}")


@dataclass(frozen=True)
class Result:
    variant: Variant
    derivation: str
    time_s: float | None  # None: the variant failed (``error`` says why)
    error: str = ""


@dataclass(frozen=True)
class Exploration:
    problem: str
    path: str  # the cache file
    results: tuple[Result, ...]
    measured: int  # variants measured now (the others came from the cache)

    @property
    def best(self) -> Result:
        timed = [r for r in self.results if r.time_s is not None]
        if not timed:
            raise RuntimeError(f"no variant of {self.problem} ran: "
                               + "; ".join(f"{r.variant.key}: {r.error}" for r in self.results))
        return min(timed, key=lambda r: (r.time_s, r.variant.key))


def cache_directory(directory: str | None = None) -> str:
    return directory or os.path.join(read_settings().cache_dir, "patterns")


def cache_key(e: px.Expr, inputs: Sequence[px.Param], device: str,
              sizes: dict[str, int]) -> str:
    text = json.dumps({"expression": px.show(e),
                       "inputs": [f"{p.name}:{p.type}" for p in inputs],
                       "device": device, "sizes": sorted(sizes.items()), "format": FORMAT})
    return hashlib.sha256(text.encode()).hexdigest()


def _load(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("format") == FORMAT else {}


def _store(path: str, data: dict[str, Any]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temp, path)


def variants(chunks: Iterable[int], widths: Iterable[int], local_sizes: Iterable[int],
             interleaves: Iterable[int] = (1,)) -> list[Variant]:
    return [Variant(c, w, ls, k) for c, w, ls, k
            in itertools.product(chunks, widths, local_sizes, interleaves)]


Measure = Callable[[px.Expr, int], float]  # a derived expression and local size -> seconds


def explore(problem: Problem, sizes: dict[str, int], device: str, candidates: Sequence[Variant],
            measure: Measure, directory: str | None = None,
            progress: TextIO | None = sys.stderr) -> Exploration:
    """Every candidate derived and measured (or read from the cache)."""
    path = os.path.join(cache_directory(directory),
                        cache_key(problem.expr, problem.inputs, device, sizes) + ".json")
    data = _load(path) or {"format": FORMAT, "problem": problem.name,
                           "expression": px.show(problem.expr), "device": device,
                           "sizes": sizes, "variants": {}}
    results: list[Result] = []
    measured = 0
    start = time.perf_counter()
    for number, variant in enumerate(candidates, start=1):
        cached = data["variants"].get(variant.key)
        if cached is None:
            cached = _measure_one(problem, variant, measure)
            data["variants"][variant.key] = cached
            measured += 1
            _store(path, data)
        results.append(Result(variant, cached["derivation"], cached["time_s"],
                              cached.get("error", "")))
        if progress is not None:
            best = min((r.time_s for r in results if r.time_s is not None), default=None)
            shown = f"{best * 1e3:.3f} ms" if best is not None else "-"
            progress.write(f"\r{problem.name}: {number}/{len(candidates)} variants "
                           f"({measured} measured, {time.perf_counter() - start:.1f} s), "
                           f"best {shown}   ")
            progress.flush()
    if progress is not None:
        progress.write("\n")
    return Exploration(problem.name, path, tuple(results), measured)


def rewrite_space(e: px.Expr, rules: Sequence[Rule], depth: int, limit: int = 500
                  ) -> list[Derivation]:
    """Derivations of ``e`` by up to ``depth`` applications of ``rules`` (at every position
    each matches), breadth first, distinct results only (at most ``limit``), that end in an
    expression ready for code generation."""
    seen = {px.show(e)}
    frontier: list[tuple[px.Expr, Derivation]] = [(e, ())]
    found: list[Derivation] = []
    for _ in range(depth):
        next_frontier: list[tuple[px.Expr, Derivation]] = []
        for expr, steps in frontier:
            for rule in rules:
                for at in range(positions(expr, rule)):
                    child = rewrite(expr, rule, at)
                    text = px.show(child)
                    if text in seen or len(seen) >= limit:
                        continue
                    seen.add(text)
                    child_steps = (*steps, Step(rule, at))
                    next_frontier.append((child, child_steps))
                    if is_lowered(child):
                        found.append(child_steps)
        frontier = next_frontier
    return found


def _measure_one(problem: Problem, variant: Variant, measure: Measure) -> dict[str, Any]:
    try:
        steps = variant.steps if variant.steps is not None else \
            problem.derivation(variant.chunk, variant.width, variant.interleave)
    except (ValueError, PatternTypeError) as error:
        return {"derivation": "", "time_s": None, "error": str(error)}
    text = show_derivation(steps)
    try:
        derived = derive(problem.expr, steps)
        seconds = measure(derived, variant.local_size)
    except (ValueError, PatternTypeError) as error:
        return {"derivation": text, "time_s": None, "error": str(error).splitlines()[0]}
    return {"derivation": text, "time_s": seconds}


def plot(exploration: Exploration, path: str) -> bool:
    """A bar chart of the variants' times to ``path``; False when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    timed = sorted((r for r in exploration.results if r.time_s is not None),
                   key=lambda r: r.time_s or 0.0)
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(timed) + 1))
    ax.barh([r.variant.key for r in timed], [(r.time_s or 0.0) * 1e3 for r in timed])
    ax.set_xlabel("ms")
    ax.set_title(f"{exploration.problem}: explored variants")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True
