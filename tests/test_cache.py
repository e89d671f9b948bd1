"""Tests for the on-disk cache of compiled objects and its in-memory layer."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ppcl.compiler import cache, toolchain

SOURCE = "int twice(int x) { return 2 * x; }\n"


# every test builds into its own empty cache with the default compiler (conftest.py)
pytestmark = pytest.mark.usefixtures("private_cache")


def so_entries() -> list[Path]:
    return sorted(
        p
        for p in cache.objects_dir().iterdir()
        if p.suffix == ".so" and not p.name.startswith(cache.TEMP_PREFIX)
    )


def temp_files() -> list[Path]:
    return [p for p in cache.objects_dir().iterdir() if p.name.startswith(cache.TEMP_PREFIX)]


def test_cache_dir_follows_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PPCL_CACHE_DIR", str(tmp_path / "explicit"))
    assert cache.cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("PPCL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "ppcl"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "ppcl"


def test_cache_key_is_deterministic_and_unambiguous() -> None:
    assert cache.cache_key("a", "b") == cache.cache_key("a", "b")
    assert cache.cache_key("ab", "c") != cache.cache_key("a", "bc")
    assert cache.cache_key("a") != cache.cache_key("a", "")
    assert len(cache.cache_key()) == 64


def test_second_build_is_a_hit_without_compiler_call() -> None:
    first = toolchain.compile_shared(SOURCE)
    mtime = first.path.stat().st_mtime_ns
    calls = toolchain.compiler_invocations()
    second = toolchain.compile_shared(SOURCE)
    assert second.cached
    assert second.path == first.path
    assert toolchain.compiler_invocations() == calls
    assert first.path.stat().st_mtime_ns == mtime


def test_disk_hit_after_memory_is_forgotten() -> None:
    first = toolchain.compile_shared(SOURCE)
    cache._known_entries.clear()
    calls = toolchain.compiler_invocations()
    again = toolchain.compile_shared(SOURCE)
    assert again.cached and again.path == first.path
    assert toolchain.compiler_invocations() == calls


def test_flags_and_specialization_change_the_key() -> None:
    base = toolchain.compile_shared(SOURCE)
    keys = {
        base.key,
        toolchain.compile_shared(SOURCE, math_flags=("-ffp-contract=fast",)).key,
        toolchain.compile_shared(SOURCE, extra_flags=("-DEXTRA=1",)).key,
        toolchain.compile_shared(SOURCE, specialization="local=64,1,1").key,
        toolchain.compile_shared(SOURCE, specialization="local=32,1,1").key,
        toolchain.compile_shared(SOURCE, key_parts=("kernel void k() {}", "-cl-mad-enable")).key,
    }
    assert len(keys) == 6
    assert len(so_entries()) == 6


def test_compiler_identity_enters_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    base = toolchain.compile_shared(SOURCE)
    compiler = toolchain.find_compiler()
    monkeypatch.setenv("CC", f"{compiler.argv[0]} -DUNUSED")
    assert toolchain.compile_shared(SOURCE).key != base.key


def test_entry_is_complete_and_source_kept() -> None:
    compiled = toolchain.compile_shared(SOURCE)
    assert cache.source_path(compiled.key).read_text() == SOURCE
    assert temp_files() == []


def test_stats_and_clear() -> None:
    toolchain.compile_shared(SOURCE)
    toolchain.compile_shared(SOURCE, specialization="other")
    stats = cache.cache_stats()
    assert stats.entries == 2
    assert stats.size_bytes > 0
    assert stats.directory == cache.objects_dir()
    unrelated = cache.objects_dir() / "notes.txt"
    unrelated.write_text("keep me")
    assert cache.clear_cache() == 2
    assert cache.cache_stats().entries == 0
    assert unrelated.exists()
    calls = toolchain.compiler_invocations()
    assert not toolchain.compile_shared(SOURCE).cached
    assert toolchain.compiler_invocations() == calls + 1


def test_clear_on_missing_directory() -> None:
    assert cache.clear_cache() == 0
    assert cache.cache_stats().entries == 0


def test_warm_lookups_neither_compile_nor_load_again() -> None:
    first = toolchain.load(toolchain.compile_shared(SOURCE).path)
    calls = toolchain.compiler_invocations()
    for _ in range(200):
        compiled = toolchain.compile_shared(SOURCE)
        assert compiled.cached
        assert toolchain.load(compiled.path) is first
    assert toolchain.compiler_invocations() == calls


BUILDER = textwrap.dedent(
    """
    import sys, time
    from ppcl.compiler import toolchain
    start_at = float(sys.argv[1])
    source = "int triple(int x) { return 3 * x; }\\n"
    while time.time() < start_at:
        pass
    compiled = toolchain.compile_shared(source)
    library = toolchain.load(compiled.path)
    print(compiled.key, library.triple(14))
    """
)


def test_concurrent_processes_build_one_entry(private_cache: Path) -> None:
    env = {**os.environ, "PPCL_CACHE_DIR": str(private_cache)}
    # Both processes spin until the same instant, so the two compiles overlap.
    start_at = time.time() + 1.5
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", BUILDER, repr(start_at)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [process.communicate(timeout=120) for process in processes]
    for process, (_stdout, stderr) in zip(processes, outputs):
        assert process.returncode == 0, stderr
    keys = {stdout.split()[0] for stdout, _ in outputs}
    results = {stdout.split()[1] for stdout, _ in outputs}
    assert results == {"42"}
    assert len(keys) == 1
    (key,) = keys
    assert [p.name for p in so_entries()] == [key + ".so"]
    assert temp_files() == []
