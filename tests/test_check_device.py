"""The checking device (``ppcl/devices/check``): the bugs it finds, where, and that correct
kernels (the corpus, every benchmark kernel, the second suite) give no finding and the right
results.

The corpus ``tests/check_corpus`` holds one kernel a file, with a header:

    // expect: data-race 12          (the finding class and line; ``none`` for a correct kernel)
    // launch: 64 16                 (global and local size; ``8,8 4,4`` in 2-D)
    // args: float*64 local=256 int=3

Arguments: ``T*N`` a ``__global`` buffer of N random values of type T (``float4*N`` holds N
float4), ``T*N=v`` one filled with v, ``local=B`` B bytes of ``__local`` memory, ``T=v`` a
value of scalar type T.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ppcl as cl
from ppcl.devices.check import FINDING_CLASSES
from oracle import LocalMem, Shape, check_context, cpu_context, launch

CORPUS = Path(__file__).parent / "check_corpus"
FILES = sorted(p.name for p in CORPUS.glob("*.cl"))
BUGGY = [name for name in FILES if name.startswith("bug_")]
CORRECT = [name for name in FILES if name.startswith("ok_")]

_DTYPES = {"float": np.float32, "double": np.float64, "int": np.int32, "uint": np.uint32,
           "char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
           "long": np.int64, "ulong": np.uint64}


def _header(text: str, key: str) -> str:
    match = re.search(rf"^// {key}: (.*)$", text, re.MULTILINE)
    assert match, f"corpus kernel without a '// {key}:' line"
    return match.group(1).strip()


def _sizes(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(","))


def _arg(spec: str, rng: np.random.Generator) -> Any:
    if spec.startswith("local="):
        return LocalMem(int(spec[6:]))
    if "*" in spec:
        kind, _, rest = spec.partition("*")
        count_text, _, fill = rest.partition("=")
        width_match = re.fullmatch(r"([a-z]+?)(2|3|4|8|16)?", kind)
        assert width_match
        base, width = width_match.group(1), int(width_match.group(2) or 1)
        count = int(count_text) * (4 if width == 3 else width)
        dtype = np.dtype(_DTYPES[base])
        if fill:
            return np.full(count, fill, dtype)
        if dtype.kind == "f":
            return rng.random(count).astype(dtype)
        return rng.integers(0, 10, count).astype(dtype)
    kind, _, value = spec.partition("=")
    return np.dtype(_DTYPES[kind]).type(value)


def run_corpus_kernel(name: str) -> tuple[str, list[Any]]:
    """The expectation of a corpus kernel and the findings of its launch."""
    text = (CORPUS / name).read_text(encoding="utf-8")
    expect = _header(text, "expect")
    global_text, local_text = _header(text, "launch").split()
    rng = np.random.default_rng(0)
    args = [_arg(spec, rng) for spec in _header(text, "args").split()]
    kernel = re.search(r"__kernel\s+void\s+(\w+)", text)
    assert kernel
    shape = Shape(_sizes(global_text), _sizes(local_text))
    try:
        launch(check_context(), text, kernel.group(1), shape, args)
    except cl.KernelCheckError as error:
        return expect, error.findings
    return expect, []


def test_corpus_size() -> None:
    assert len(BUGGY) >= 30
    assert len(CORRECT) >= 25
    kinds = {(CORPUS / name).read_text().split("expect: ")[1].split()[0] for name in BUGGY}
    assert kinds == set(FINDING_CLASSES) - {"released-memory"}


@pytest.mark.parametrize("name", BUGGY)
def test_buggy_kernel_is_reported_at_its_line(name: str) -> None:
    expect, findings = run_corpus_kernel(name)
    kind, line = expect.split()
    assert findings, f"{name}: no finding"
    found = [(f.kind, f.line) for f in findings]
    assert (kind, int(line)) in found, f"{name}: expected {kind} at line {line}, got {found}"


@pytest.mark.parametrize("name", CORRECT)
def test_correct_kernel_has_no_finding(name: str) -> None:
    expect, findings = run_corpus_kernel(name)
    assert expect == "none"
    assert findings == [], "\n".join(str(f) for f in findings)


@pytest.mark.parametrize("name", CORRECT)
def test_correct_kernel_matches_the_cpu_device(name: str) -> None:
    text = (CORPUS / name).read_text(encoding="utf-8")
    if "// order-dependent" in text:
        pytest.skip("results depend on the order atomics run in")
    global_text, local_text = _header(text, "launch").split()
    shape = Shape(_sizes(global_text), _sizes(local_text))
    kernel = re.search(r"__kernel\s+void\s+(\w+)", text)
    assert kernel
    args = [_arg(spec, np.random.default_rng(3)) for spec in _header(text, "args").split()]
    checked = launch(check_context(), text, kernel.group(1), shape, args)
    compiled = launch(cpu_context(), text, kernel.group(1), shape, args)
    for want, have in zip(checked, compiled):
        if want.dtype.kind == "f":
            np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(have, want)
