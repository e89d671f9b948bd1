"""The 64-bit atom_* functions (cl_khr_int64_base_atomics, cl_khr_int64_extended_atomics):
the builtin table has them on __global and __local long/ulong, so every device that runs
them lists both extensions and the front end predefines their macros and accepts their
pragmas."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import LocalMem, Shape, check_context, cpu_context, launch

import ppcl as cl

INT64_ATOMICS = ("cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics")

SOURCE = """
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

#if !defined(cl_khr_int64_base_atomics) || !defined(cl_khr_int64_extended_atomics)
#error the int64 atomics extensions are not predefined
#endif

/* Every work-item adds a value above 32 bits to one global counter, lowers a global
   minimum and sets its own high bit of a __local mask. */
__kernel void wide_counters(__global long *totals, __global ulong *masks, __local ulong *bits)
{
    size_t lid = get_local_id(0);
    if (lid == 0)
        *bits = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    long id = (long)get_global_id(0);
    atom_add(&totals[0], (id + 1) << 33);
    atom_min(&totals[1], -(id << 34));
    atom_or(bits, 1UL << (32 + lid));
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0)
        atom_xor(&masks[get_group_id(0)], *bits);
}
"""


@pytest.mark.parametrize("context", [cpu_context, check_context], ids=["cpu", "check"])
def test_device_lists_the_int64_atomics_it_runs(context) -> None:
    extensions = context().devices[0].extensions.split()
    for name in INT64_ATOMICS:
        assert name in extensions


@pytest.mark.parametrize("context", [cpu_context, check_context], ids=["cpu", "check"])
def test_int64_atomics_update_all_64_bits(context) -> None:
    groups, size = 4, 16
    totals = np.array([0, 0], np.int64)
    masks = np.full(groups, 0xF, np.uint64)
    got_totals, got_masks = launch(context(), SOURCE, "wide_counters",
                                   Shape((groups * size,), (size,)),
                                   [totals, masks, LocalMem(8)])
    ids = np.arange(groups * size, dtype=np.int64)
    assert got_totals[0] == int(((ids + 1) << 33).sum())
    assert got_totals[1] == -((groups * size - 1) << 34)
    assert (got_masks == np.uint64(0xFFFF0000000F)).all()


def test_int64_atomics_pragmas_build_without_warnings() -> None:
    program = cl.Program(cpu_context(), SOURCE).build()
    log = program.get_build_info(cpu_context().devices[0], cl.program_build_info.LOG)
    assert "unsupported OpenCL extension" not in log
