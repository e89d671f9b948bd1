"""A kernel fuzzer: random OpenCL C programs free of undefined behaviour and races by
construction (``generate.py``, CLsmith's modes), run on ppcl's CPU device, its checking device
and pocl when installed (``run.py``), every failure reduced to a small reproducer
(``reduce.py``); ``ppcl fuzz`` drives a campaign (``campaign.py``)."""

from ppcl.fuzz.generate import MODES, FuzzProgram, generate
from ppcl.fuzz.reduce import reduce_program
from ppcl.fuzz.run import Outcome, Target, run_program

__all__ = ["MODES", "FuzzProgram", "Outcome", "Target", "generate", "reduce_program",
           "run_program"]
