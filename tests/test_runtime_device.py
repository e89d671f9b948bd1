"""The threaded CPU device: the thread-count setting, the host probe and the default local-size
choice (the native pool itself: tests/test_native_pool.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ppcl.devices.cpu import choose_local_size, configured_threads, probe_cpu
from ppcl.settings import SettingsError, read_settings


@pytest.mark.cpu_device  # PPCL_THREADS sizes the CPU device's pool
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
    ((1016, 1024, 1), 2, (254, 1, 1)),  # 8 x 127: groups of 8 would be one short vector
    ((272, 1, 1), 1, (136, 1, 1)),  # 16 x 17: 136 = 8 x 17 rather than 16
    ((50000, 1, 1), 1, (80, 1, 1)),
])
def test_chosen_local_size(global_size, dims, expected):
    local = choose_local_size(global_size, dims, 4096, (4096, 4096, 4096), 2)
    assert local == expected
    assert all(g % size == 0 for g, size in zip(global_size, local))
