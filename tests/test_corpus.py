"""Every kernel in tests/kernels type-checks without errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from ppcl.compiler.frontend import compile_source
from ppcl.compiler.ir import nodes as ir

KERNEL_DIR = Path(__file__).parent / "kernels"
FILES = sorted(p.name for p in KERNEL_DIR.glob("*.cl"))


@pytest.mark.parametrize("name", FILES)
def test_kernel_type_checks(name: str) -> None:
    path = KERNEL_DIR / name
    result = compile_source(path.read_text(encoding="utf-8"), str(path))
    assert isinstance(result.module, ir.Module)
    assert result.module.kernels, f"{name} defines no kernel"
