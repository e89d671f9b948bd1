"""Front-end speed: preprocess + parse + semantic analysis of the test corpus.

Prints the time per kernel (median of repeated runs, after one warm-up that also builds the
parser tables and the builtin table) and the time for the whole corpus, and the same for a
100 lines of kernel code. Run: ``python3 benchmarks/frontend_speed.py``.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from ppcl.compiler.frontend import compile_source

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "tests" / "kernels").glob("*.cl"))


def time_one(source: str, name: str, repeats: int = 5) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        compile_source(source, name)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    start = time.perf_counter()
    compile_source("__kernel void warm(__global float *a) { a[0] = sqrt(a[1]); }", "warm.cl")
    print(f"one-time setup (parser tables, builtin table): {1e3 * (time.perf_counter() - start):.1f} ms")

    sources = [(p.name, p.read_text()) for p in CORPUS]
    per_kernel = []
    for name, text in sources:
        per_kernel.append((time_one(text, name), len(text.splitlines()), name))
    total_lines = sum(lines for _, lines, _ in per_kernel)
    start = time.perf_counter()
    for name, text in sources:
        compile_source(text, name)
    corpus_time = time.perf_counter() - start
    per_kernel.sort(reverse=True)
    print(f"corpus: {len(sources)} kernels, {total_lines} lines, "
          f"whole corpus {1e3 * corpus_time:.1f} ms "
          f"({1e3 * corpus_time / len(sources):.2f} ms per kernel, "
          f"{1e3 * corpus_time / total_lines * 100:.2f} ms per 100 lines)")
    print("slowest kernels:")
    for seconds, lines, name in per_kernel[:5]:
        print(f"  {name:40s} {lines:4d} lines {1e3 * seconds:7.2f} ms")
    print(f"per 100 lines: {1e3 * corpus_time / total_lines * 100:.2f} ms (target: well under 50 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
