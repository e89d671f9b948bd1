"""Golden tests of the kernel build: for each kernel in ``tests/golden``, the IR after every
pass of the CPU pipeline, the scheduling plans and the C of the group function and entry
point, compared with the checked-in ``<name>.expected``.

After a deliberate change, ``python3 -m pytest tests/test_golden.py --regen-golden`` rewrites
the expected files; review their diff like code.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from ppcl.compiler.frontend import compile_source
from ppcl.compiler.frontend.options import parse_build_options
from ppcl.compiler.pipeline import KernelSpec, kernel_ir, lower_kernel
from ppcl.settings import Debug

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.stem for p in GOLDEN.glob("*.cl"))
_HEADER = re.compile(r"//\s*golden:\s*kernel=(\w+)\s+local_size=(\d+)x(\d+)x(\d+)")


def golden_text(source: str) -> str:
    """What ``<name>.expected`` holds for a golden kernel source."""
    header = _HEADER.search(source)
    assert header is not None, "a golden kernel starts with '// golden: kernel=K local_size=XxYxZ'"
    name = header.group(1)
    spec = KernelSpec((int(header.group(2)), int(header.group(3)), int(header.group(4))))
    module = compile_source(source, "input.cl").module
    options = parse_build_options("")
    stream = io.StringIO()
    kernel_ir(module, name, spec, options, Debug(frozenset({"passes", "plans"}), verify=True),
              stream=stream)
    c = lower_kernel(module, name, spec, options).source
    start = c.index(next(line for line in c.splitlines() if f"ppcl_group_{name}(" in line))
    return stream.getvalue() + "// ppcl C: the group function and the entry point\n" + c[start:]


@pytest.mark.parametrize("name", CASES)
def test_golden(name: str, request: pytest.FixtureRequest) -> None:
    got = golden_text((GOLDEN / f"{name}.cl").read_text(encoding="utf-8"))
    expected = GOLDEN / f"{name}.expected"
    if request.config.getoption("--regen-golden"):
        expected.write_text(got, encoding="utf-8")
        return
    assert expected.exists(), f"no {expected.name}: run pytest with --regen-golden"
    assert got == expected.read_text(encoding="utf-8")


def test_every_case_has_expectations() -> None:
    assert len(CASES) >= 5
    for name in CASES:
        assert (GOLDEN / f"{name}.expected").exists(), name
