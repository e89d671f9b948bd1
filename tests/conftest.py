"""Shared test setup: compiled kernels go to a per-session temporary cache directory, the IR
verifier runs after every pass of every kernel build, and ``--regen-golden`` rewrites the
expected files of ``test_golden.py``."""

from __future__ import annotations

import os
import tempfile

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--regen-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.expected from the current compiler")


@pytest.fixture(scope="session", autouse=True)
def _verify_every_pass():
    previous = os.environ.get("PPCL_VERIFY")
    os.environ["PPCL_VERIFY"] = "1"
    yield
    if previous is None:
        os.environ.pop("PPCL_VERIFY", None)
    else:
        os.environ["PPCL_VERIFY"] = previous


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
