"""Shared test setup: compiled kernels go to a per-session temporary cache directory, the IR
verifier runs after every pass of every kernel build, ``--regen-golden`` rewrites the
expected files of ``test_golden.py``, ``--run-slow`` runs the tests marked ``slow``, and
``--device`` runs the suite on other devices, skipping the tests marked ``cpu_device``."""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

import pytest

CPU_DEVICE_KINDS = ("cpu", "serial")  # PPCL_DEVICES kinds that are the CPU device


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--regen-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.expected from the current compiler")
    parser.addoption("--device", default=None, metavar="KINDS",
                     help="run the tests on these ppcl devices (PPCL_DEVICES), e.g. cuda")
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run the tests marked slow (minutes each)")


def pytest_configure(config: pytest.Config) -> None:
    device = config.getoption("--device")
    if device:
        os.environ["PPCL_DEVICES"] = device
    config.addinivalue_line("markers", "slow: takes minutes; skipped unless --run-slow")
    config.addinivalue_line("markers", "cpu_device: checks a fact of the CPU device (its "
                            "thread pool, C compiler, limits); skipped when --device names "
                            "another device")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    device = config.getoption("--device")
    kinds = [kind.strip().lower() for kind in (device or "").split(",") if kind.strip()]
    others = [kind for kind in kinds if kind not in CPU_DEVICE_KINDS]
    if others:
        skip_cpu = pytest.mark.skip(reason=f"checks the CPU device; --device {device} names "
                                           f"{', '.join(others)}")
        for item in items:
            if "cpu_device" in item.keywords:
                item.add_marker(skip_cpu)
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


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
        from ppcl.hostfusion import wait_for_builds
        wait_for_builds()  # host fusion's candidates still building write into the cache
        for thread in threading.enumerate():  # and so do the CUDA device's optimized modules
            if thread.name.startswith(("ppcl-cuda-optimized", "ppcl-nvrtc-warm-up")):
                thread.join(timeout=120)
    if previous is None:
        os.environ.pop("PPCL_CACHE_DIR", None)
    else:
        os.environ["PPCL_CACHE_DIR"] = previous


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kernel cache of the test's own, and the default C compiler (``CC`` unset)."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("PPCL_CACHE_DIR", str(directory))
    monkeypatch.delenv("CC", raising=False)
    return directory


@pytest.fixture(scope="module")
def ctx():
    """A context as ``create_some_context`` picks it (the listed devices' first)."""
    import ppcl

    return ppcl.create_some_context(interactive=False)


@pytest.fixture(scope="module")
def queue(ctx):
    """An in-order queue on ``ctx``."""
    import ppcl

    return ppcl.CommandQueue(ctx)
