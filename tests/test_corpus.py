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


@pytest.mark.parametrize("name", FILES)
def test_kernel_builds_for_the_cpu_device(name: str) -> None:
    """``build()`` has the C compiler check every kernel's generated C: what gcc rejects
    (a program-scope ``__constant float3`` initializer, a store to a swizzle of a swizzle of
    an ``int16``) fails here, not only at some user's first launch."""
    import ppcl as cl

    path = KERNEL_DIR / name
    ctx = cl.create_some_context(interactive=False)
    program = cl.Program(ctx, path.read_text(encoding="utf-8")).build()
    assert program.kernel_names
