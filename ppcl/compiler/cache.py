"""On-disk cache of compiled shared objects, with a process-wide in-memory layer on top.

Layout: ``cache_dir()/objects/<key>.so`` is an entry; ``<key>.c`` (the C source it was built
from) and ``<key>.log`` (the compiler's diagnostics, e.g. a vectorization report) sit beside it.
Every file is first written under a unique ``.tmp-*`` name in the same directory and then moved
into place with ``os.replace``, which is atomic on one file system: a reader sees either no entry
or a complete one, and two processes building the same entry at once both succeed and leave one
entry. The ``.so`` is published last, so its presence means the entry is complete.

The in-memory layer remembers which entries this process has already found or built, so a warm
rebuild is a hash and a dict lookup, with no file system access.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from ppcl.settings import cache_root
from ppcl.version import __version__

OBJECT_SUFFIX = ".so"
SOURCE_SUFFIX = ".c"
LOG_SUFFIX = ".log"
TEMP_PREFIX = ".tmp-"

_lock = threading.Lock()
# object path -> compiler diagnostics stored with the entry (None when none were kept)
_known_entries: dict[str, str | None] = {}


def cache_dir() -> Path:
    """The cache root, as ``ppcl.settings.cache_root`` reads it on every call (tests and the
    benchmark runner point it at a temporary directory while a process runs)."""
    return Path(cache_root())


def objects_dir() -> Path:
    """Where compiled objects live, under the cache root."""
    return cache_dir() / "objects"


def _ppcl_version() -> str:
    return __version__


def cache_key(*parts: str) -> str:
    """A hex sha256 over the ppcl version and ``parts``, in order.

    Each part is length-prefixed, so ``("ab", "c")`` and ``("a", "bc")`` give different keys.
    Callers pass everything the compiled object depends on: C source, flags, compiler identity,
    specialization, and optionally the OpenCL source and build options it came from.
    """
    digest = hashlib.sha256()
    for part in (_ppcl_version(), *parts):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def object_path(key: str) -> Path:
    return objects_dir() / (key + OBJECT_SUFFIX)


def source_path(key: str) -> Path:
    return objects_dir() / (key + SOURCE_SUFFIX)


def log_path(key: str) -> Path:
    return objects_dir() / (key + LOG_SUFFIX)


@dataclass(frozen=True)
class CacheHit:
    """An entry found in memory or on disk."""

    path: Path
    log: str | None


def lookup(key: str, *, want_log: bool = False) -> CacheHit | None:
    """The entry for ``key`` if this process knows it or it is complete on disk."""
    path = object_path(key)
    name = str(path)
    with _lock:
        known = name in _known_entries
        log = _known_entries.get(name)
    if known and (log is not None or not want_log):
        return CacheHit(path, log)
    if not known and not path.is_file():
        return None
    if want_log:
        try:
            log = log_path(key).read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            log = None
    with _lock:
        _known_entries[name] = log
    return CacheHit(path, log)


def remember(path: Path, log: str | None) -> None:
    """Record an entry this process has just published."""
    with _lock:
        _known_entries[str(path)] = log


def new_temp_source(key: str) -> Path:
    """Create an empty, uniquely named ``.c`` file in the objects directory.

    The compiler's output goes next to it under the same stem with ``.so``; the stem is unique
    because ``mkstemp`` created the ``.c`` name exclusively.
    """
    directory = objects_dir()
    directory.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(
        prefix=f"{TEMP_PREFIX}{key[:16]}-", suffix=SOURCE_SUFFIX, dir=directory
    )
    os.close(fd)
    return Path(name)


def publish(temp: Path, final: Path) -> None:
    """Atomically move a finished temp file into place, replacing any equal entry."""
    os.replace(temp, final)


def discard(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


@dataclass(frozen=True)
class CacheStats:
    directory: Path
    entries: int
    size_bytes: int


def cache_stats() -> CacheStats:
    """Number of compiled objects and the total size of all cache files."""
    directory = objects_dir()
    entries = 0
    size = 0
    if directory.is_dir():
        for item in directory.iterdir():
            if not item.is_file():
                continue
            if item.name.endswith(OBJECT_SUFFIX) and not item.name.startswith(TEMP_PREFIX):
                entries += 1
            size += item.stat().st_size
    return CacheStats(directory, entries, size)


def clear_cache() -> int:
    """Delete every cache file (entries, kept sources, logs, stale temps); return entries removed.

    Only files this module names are removed, so a cache directory shared with other data is
    safe. Libraries already loaded stay mapped and usable.
    """
    directory = objects_dir()
    removed = 0
    with _lock:
        _known_entries.clear()
    if not directory.is_dir():
        return 0
    ours = (OBJECT_SUFFIX, SOURCE_SUFFIX, LOG_SUFFIX)
    for item in directory.iterdir():
        if not item.is_file() or not item.name.endswith(ours):
            continue
        if item.name.endswith(OBJECT_SUFFIX) and not item.name.startswith(TEMP_PREFIX):
            removed += 1
        discard(item)
    return removed
