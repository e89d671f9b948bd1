"""GPU-style OpenCL programs for host fusion (issue 15): code written the way it is written for
a GPU (coalesced layouts, one work-item per output element, setup repeated by every work-item)
that runs poorly as written on a CPU. ``benchmarks/hostfusion.py`` times them with host fusion
off and on; ``tests/test_hostfusion_programs.py`` checks them against numpy. The kernels are the
``.cl`` files here, the programs are described in ``programs.py``."""

from __future__ import annotations

from benchmarks.gpu_style.programs import PROGRAMS
from benchmarks.programs.program import Program

BY_NAME: dict[str, Program] = {program.name: program for program in PROGRAMS}

__all__ = ["BY_NAME", "PROGRAMS"]
