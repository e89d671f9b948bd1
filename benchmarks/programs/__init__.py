"""The second benchmark suite: multi-kernel OpenCL programs written the way GPU-first benchmark
code is (one work-item per output element, loops over rows or columns inside a work-item, 2D
work-groups such as 32x8, bounds guards, double literals in float code, a launch per time step
or per pivot). ``python -m benchmarks.programs`` runs them on ppcl and on pocl; see
``runner.py``. Each module holds one family; ``PROGRAMS`` lists them all, in report order."""

from __future__ import annotations

from benchmarks.programs import (
    factor,
    filters,
    irregular,
    matvec,
    products,
    rankk,
    stats,
    stencils,
)
from benchmarks.programs.program import Program

PROGRAMS: list[Program] = [
    *products.PROGRAMS,
    *matvec.PROGRAMS,
    *rankk.PROGRAMS,
    *stats.PROGRAMS,
    *factor.PROGRAMS,
    *filters.PROGRAMS,
    *stencils.PROGRAMS,
    *irregular.PROGRAMS,
]

BY_NAME: dict[str, Program] = {program.name: program for program in PROGRAMS}
