"""Shared test setup: compiled kernels go to a per-session temporary cache directory, and
every kernel build runs the IR verifier after each compiler pass (``PPCL_VERIFY=1``)."""

from __future__ import annotations

import os
import tempfile

import pytest


os.environ.setdefault("PPCL_VERIFY", "1")


@pytest.fixture(scope="session", autouse=True)
def _temporary_kernel_cache():
    previous = os.environ.get("PPCL_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="ppcl-test-cache-") as path:
        os.environ["PPCL_CACHE_DIR"] = path
        yield path
    if previous is None:
        os.environ.pop("PPCL_CACHE_DIR", None)
    else:
        os.environ["PPCL_CACHE_DIR"] = previous
