"""Arithmetic on ``void *`` pointers, GNU C's extension that clang accepts with a warning:
``p + n``, ``p - n`` and ``&p[n]`` move ``n`` bytes, ``p - q`` counts bytes. Published kernels
use it to reach a record at a byte offset inside an untyped buffer. ppcl warns as clang does and
runs it on every device; ``++``, ``+=`` and reading ``p[n]`` stay errors naming the spelling that
works."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import Shape, check_context, cpu_context, launch

from ppcl.compiler.diagnostics import CompileError
from ppcl.compiler.frontend import compile_source

# a float stored at a byte offset of an untyped buffer, reached three ways
BYTE_OFFSETS = """
__kernel void at_offset(__global void *base, __global float *out, int skip) {
    int i = get_global_id(0);
    __global float *plus = (__global float *)(base + skip);
    __global float *address = (__global float *)&base[skip + 4 * i];
    __global void *end = base + 4 * (i + 1) + skip;
    out[3 * i] = plus[i];
    out[3 * i + 1] = *address;
    out[3 * i + 2] = (float)(end - base);
}
"""


def _expected(data: np.ndarray, skip: int, n: int) -> np.ndarray:
    floats = data[skip // 4:]
    want = np.empty(3 * n, np.float32)
    want[0::3] = floats[:n]
    want[1::3] = floats[:n]
    want[2::3] = 4 * np.arange(1, n + 1) + skip
    return want


@pytest.mark.parametrize("context", [cpu_context, check_context], ids=["cpu", "check"])
def test_void_pointer_offsets_count_bytes(context) -> None:
    n, skip = 8, 12
    data = np.arange(n + skip // 4, dtype=np.float32) * 1.5
    out = np.zeros(3 * n, np.float32)
    _, got = launch(context(), BYTE_OFFSETS, "at_offset", Shape((n,), (n,)),
                    [data, out, np.int32(skip)])
    np.testing.assert_array_equal(got, _expected(data, skip, n))


def test_void_pointer_arithmetic_warns_like_clang() -> None:
    log = compile_source(BYTE_OFFSETS, "t.cl").log
    assert "arithmetic on a 'void *' pointer is a GNU extension" in log
    assert "subscript of a 'void *' pointer is a GNU extension" in log


@pytest.mark.parametrize(("statement", "fragment"), [
    ("p += 4;", "write 'p = p + n'"),
    ("p++;", "write 'p = p + 1'"),
    ("out[0] = p[2];", "only its address, '&p[i]'"),
])
def test_void_pointer_updates_and_reads_are_errors(statement: str, fragment: str) -> None:
    source = ("__kernel void k(__global void *p, __global char *out) { " + statement + " }")
    with pytest.raises(CompileError) as info:
        compile_source(source, "t.cl")
    assert fragment in info.value.log
