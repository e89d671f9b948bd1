"""The cache and toolchain under damage: truncated, emptied or corrupted objects, an unusable
cache directory, and a CC that is not a C compiler. Each must end in a rebuild or a ppcl error
that says what to fix, never a crash or a raw OSError."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from ppcl.compiler import cache, toolchain
from ppcl.compiler.toolchain import ToolchainError

SOURCE = "int twice(int x) { return 2 * x; }\n"


# every test builds into its own empty cache with the default compiler (conftest.py)
pytestmark = pytest.mark.usefixtures("private_cache")


# Builds SOURCE, loads and calls it, in a fresh process (which knows no entry yet, so it reads
# the one on disk); prints the result and every warning.
LOADER = textwrap.dedent(
    """
    import warnings
    from ppcl.compiler import toolchain
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = toolchain.compile_shared("int twice(int x) { return 2 * x; }\\n")
        library = toolchain.load(compiled.path)
    print("result", library.twice(21), "cached", compiled.cached)
    for warning in caught:
        print("warning", warning.category.__name__, warning.message)
    """
)


def load_in_subprocess(private_cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PPCL_CACHE_DIR": str(private_cache)}
    return subprocess.run(
        [sys.executable, "-c", LOADER], env=env, capture_output=True, text=True, timeout=120
    )


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def empty(path: Path) -> None:
    path.write_bytes(b"")


def flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (truncate, "has no checksum"),
        (empty, "is empty"),
        (flip_a_byte, "does not match its checksum"),
    ],
)
def test_damaged_entry_is_removed_and_rebuilt(
    private_cache: Path, damage: Callable[[Path], None], words: str
) -> None:
    path = toolchain.compile_shared(SOURCE).path
    damage(path)
    # Loading a truncated object kills the process with SIGBUS, so a fresh process tries it.
    result = load_in_subprocess(private_cache)
    assert result.returncode == 0, result.stderr
    assert "result 42 cached False" in result.stdout
    assert f"warning CacheWarning cache entry {path} {words}" in result.stdout
    assert cache.damage_of(path) is None
    # The rebuilt entry is healthy: the next process uses it without a warning.
    again = load_in_subprocess(private_cache)
    assert again.returncode == 0, again.stderr
    assert "result 42 cached True" in again.stdout
    assert "warning" not in again.stdout


def test_damaged_entry_in_this_process_is_rebuilt() -> None:
    path = toolchain.compile_shared(SOURCE).path
    flip_a_byte(path)
    cache._known_entries.clear()
    with pytest.warns(cache.CacheWarning, match=str(path)):
        compiled = toolchain.compile_shared(SOURCE)
    assert not compiled.cached
    assert toolchain.load(compiled.path).twice(5) == 10


def test_healthy_entry_is_verified_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    toolchain.compile_shared(SOURCE)
    cache._known_entries.clear()
    checks: list[Path] = []
    verify = cache.damage_of

    def counting(path: Path) -> str | None:
        checks.append(path)
        return verify(path)

    monkeypatch.setattr(cache, "damage_of", counting)
    for _ in range(3):
        assert toolchain.compile_shared(SOURCE).cached
    assert len(checks) == 1


def test_object_ends_with_its_checksum() -> None:
    data = toolchain.compile_shared(SOURCE).path.read_bytes()
    body = data[: -cache.CHECKSUM_TRAILER_SIZE]
    assert data.endswith(cache.checksum_trailer(body))
    assert body[:4] == b"\x7fELF"


def test_cache_directories_are_private(private_cache: Path) -> None:
    toolchain.compile_shared(SOURCE)
    for directory in (private_cache, cache.objects_dir()):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700


def test_file_in_place_of_cache_dir_falls_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A path under a regular file cannot be created, even by root.
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    configured = blocker / "cache"
    monkeypatch.setenv("PPCL_CACHE_DIR", str(configured))
    with pytest.warns(cache.CacheWarning, match=f"{configured}.*Not a directory"):
        compiled = toolchain.compile_shared(SOURCE)
    assert not compiled.path.is_relative_to(blocker)
    assert stat.S_IMODE(compiled.path.parent.parent.stat().st_mode) == 0o700
    assert toolchain.load(compiled.path).twice(4) == 8
    # One warning per process: later builds and hits go to the same temporary directory.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        other = toolchain.compile_shared(SOURCE + "// other\n")
        hit = toolchain.compile_shared(SOURCE)
    assert other.path.parent == compiled.path.parent
    assert hit.cached and hit.path == compiled.path


def test_file_as_cache_dir_falls_back(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "cache-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("PPCL_CACHE_DIR", str(blocker))
    with pytest.warns(cache.CacheWarning, match=str(blocker)):
        compiled = toolchain.compile_shared(SOURCE)
    assert toolchain.load(compiled.path).twice(1) == 2
    assert blocker.read_text() == "not a directory"
    # cached in the fallback directory (where a build another test left running may land too)
    assert compiled.path.parent == cache.objects_dir()
    assert cache.cache_stats().entries >= 1


def test_dev_null_cache_dir_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPCL_CACHE_DIR", "/dev/null/x")
    with pytest.warns(cache.CacheWarning, match="/dev/null/x"):
        compiled = toolchain.compile_shared(SOURCE)
    assert toolchain.load(compiled.path).twice(3) == 6


def write_script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize("cc", ["echo", "false", "/nonexistent/cc", "gcc 'unbalanced"])
def test_cc_that_is_not_a_compiler(monkeypatch: pytest.MonkeyPatch, cc: str) -> None:
    monkeypatch.setenv("CC", cc)
    with pytest.raises(ToolchainError, match="CC=gcc"):
        toolchain.compile_shared(SOURCE)


def test_compiler_that_writes_an_empty_object(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Answers --version like a compiler, exits 0, and leaves an empty output file.
    fake = write_script(
        tmp_path / "fake-cc",
        'if [ "$1" = --version ]; then echo "fake-cc 1.0"; exit 0; fi\n'
        'while [ "$#" -gt 1 ]; do shift; done\n'
        ': > "$1"\n',
    )
    monkeypatch.setenv("CC", str(fake))
    with pytest.raises(ToolchainError, match="wrote no shared object.*CC=gcc"):
        toolchain.compile_shared(SOURCE)
    leftovers = [p.name for p in cache.objects_dir().iterdir() if p.name.endswith(".so")]
    assert leftovers == []


def test_unloadable_object_gives_toolchain_error(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.so"
    bogus.write_bytes(b"not an ELF file")
    with pytest.raises(ToolchainError, match="remove the file"):
        toolchain.load(bogus)
