"""The threaded CPU device: chunked work-group scheduling, per-thread local memory, the
thread-count setting and the default local-size choice."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from ppcl.devices.cpu import (
    LOCAL_MEM_ALIGN,
    WorkGroupPool,
    choose_local_size,
    configured_threads,
    probe_cpu,
)
from ppcl.settings import SettingsError, read_settings


def test_every_group_runs_once_across_threads():
    pool = WorkGroupPool(4)
    seen: list[int] = []
    threads: set[int] = set()
    blocks: dict[int, set[int]] = {}
    lock = threading.Lock()

    def run_chunk(first: int, last: int, local: int) -> None:
        with lock:
            seen.extend(range(first, last))
            threads.add(threading.get_ident())
            blocks.setdefault(threading.get_ident(), set()).add(local)

    for _ in range(20):
        seen.clear()
        pool.run(run_chunk, 1000, 4096)
        assert sorted(seen) == list(range(1000))
    # one local block per thread, aligned, never shared between threads
    per_thread = [next(iter(b)) for b in blocks.values() if len(b) == 1]
    assert len(per_thread) == len(blocks)
    assert len(set(per_thread)) == len(per_thread)
    assert all(address % LOCAL_MEM_ALIGN == 0 for address in per_thread)


def test_errors_in_chunks_reach_the_submitter():
    pool = WorkGroupPool(3)

    def run_chunk(first: int, last: int, local: int) -> None:
        if first <= 50 < last:
            raise ValueError("group 50 failed")

    with pytest.raises(ValueError, match="group 50"):
        pool.run(run_chunk, 200, 0)
    done: list[int] = []
    pool.run(lambda f, last, _: done.extend(range(f, last)), 10, 0)
    assert sorted(done) == list(range(10))


def test_serial_pool_runs_in_the_calling_thread():
    pool = WorkGroupPool(1)
    callers: set[int] = set()
    pool.run(lambda f, last, _: callers.add(threading.get_ident()), 64, 128)
    assert callers == {threading.get_ident()}


def test_thread_count_from_environment(monkeypatch):
    monkeypatch.setenv("PPCL_THREADS", "3")
    assert configured_threads(read_settings().threads) == 3
    for bad in ("0", "abc", "-2"):
        monkeypatch.setenv("PPCL_THREADS", bad)
        with pytest.raises(SettingsError, match="PPCL_THREADS"):
            read_settings()
    monkeypatch.delenv("PPCL_THREADS")
    assert configured_threads(read_settings().threads) == probe_cpu().cores
    script = "import ppcl; print(ppcl.get_platforms()[0].get_devices()[0].max_compute_units)"
    env = {**os.environ, "PPCL_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert out.strip() == "1"


@pytest.mark.parametrize("global_size, dims, expected", [
    ((1024, 1, 1), 1, (256, 1, 1)),
    ((50000, 1, 1), 1, (80, 1, 1)),
    ((97, 1, 1), 1, (1, 1, 1)),
    ((64, 6, 1), 2, (64, 3, 1)),
    ((4, 512, 1), 2, (4, 64, 1)),
    ((8, 1, 1), 1, (4, 1, 1)),
])
def test_chosen_local_size(global_size, dims, expected):
    local = choose_local_size(global_size, dims, 4096, (4096, 4096, 4096), 2)
    assert local == expected
    assert all(g % size == 0 for g, size in zip(global_size, local))
