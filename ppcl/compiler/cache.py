"""On-disk cache of compiled shared objects, with a process-wide in-memory layer on top.

Layout: ``cache_dir()/objects/<key>.so`` is an entry; ``<key>.c`` (the C source it was built
from) and ``<key>.log`` (the compiler's diagnostics, e.g. a vectorization report) sit beside it.
Every file is first written under a unique ``.tmp-*`` name in the same directory, flushed to disk
with ``fsync``, and then moved into place with ``os.replace``, which is atomic on one file system;
the directory is synced after the move so the new name survives a crash too. A reader sees
either no entry or a complete one, and two processes building the same entry at once both succeed
and leave one entry. The ``.so`` is published last, so its presence means the entry is complete.

Each ``.so`` ends with a checksum trailer (``CHECKSUM_MAGIC`` and the sha256 of the bytes before
it); the dynamic loader ignores bytes past the ELF contents. The checksum lives in the object
file itself, not beside it, so one ``os.replace`` publishes both: a separate checksum file could
pair one process's object with another's checksum when two build the same entry (their objects
differ, because the compiler records the temp source name). An entry whose trailer is missing or
does not match (truncated by a crash, emptied, damaged on disk) is never loaded: it is removed
with a :class:`CacheWarning` and rebuilt. Loading a truncated object would kill the process with
SIGBUS.

If the cache directory cannot be created or written, this process builds into a private
temporary directory instead (one warning names the directory and the reason).

The in-memory layer remembers which entries this process has already found (and verified) or
built, so a warm rebuild is a hash and a dict lookup, with no file system access.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ppcl.settings import cache_root
from ppcl.version import __version__

OBJECT_SUFFIX = ".so"
SOURCE_SUFFIX = ".c"
LOG_SUFFIX = ".log"
TEMP_PREFIX = ".tmp-"
CHECKSUM_MAGIC = b"PPCLSUM1"
CHECKSUM_TRAILER_SIZE = len(CHECKSUM_MAGIC) + hashlib.sha256().digest_size
DIRECTORY_MODE = 0o700
MISSING = "missing"  # what damage_of says of an entry that is simply not there
FIX_DIRECTORY = "set PPCL_CACHE_DIR to a writable directory"

_lock = threading.Lock()
# object path -> compiler diagnostics stored with the entry (None when none were kept)
_known_entries: dict[str, str | None] = {}
# configured objects directory -> the temporary one this process uses because it was unusable
_fallback_dirs: dict[str, Path] = {}


class CacheError(RuntimeError):
    """The cache cannot be read or written; the message names the path and what to fix."""


class CacheWarning(UserWarning):
    """A cache entry was damaged and is rebuilt, or the cache directory is unusable."""


def cache_dir() -> Path:
    """The cache root, as ``ppcl.settings.cache_root`` reads it on every call (tests and the
    benchmark runner point it at a temporary directory while a process runs)."""
    return Path(cache_root())


def _configured_objects_dir() -> Path:
    return cache_dir() / "objects"


def objects_dir() -> Path:
    """Where compiled objects live: under the cache root, or in this process's temporary
    directory once the cache root turned out unusable."""
    configured = _configured_objects_dir()
    return _fallback_dirs.get(str(configured), configured)


def _describe(error: OSError) -> str:
    reason = error.strerror or str(error)
    if error.filename is not None:
        return f"{reason}: {error.filename}"
    return reason


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
    """The entry for ``key`` if this process knows it, or it is on disk and its checksum holds.

    A damaged entry is removed with a :class:`CacheWarning` and reported as a miss, so the
    caller rebuilds it. The checksum is verified once per process per entry.
    """
    path = object_path(key)
    name = str(path)
    with _lock:
        known = name in _known_entries
        log = _known_entries.get(name)
    if known and (log is not None or not want_log):
        return CacheHit(path, log)
    if not known:
        damage = damage_of(path)
        if damage == MISSING:
            return None
        if damage is not None:
            _remove_damaged(path, damage)
            return None
    if want_log:
        try:
            log = log_path(key).read_text(encoding="utf-8", errors="replace")
        except OSError:
            log = None
    with _lock:
        _known_entries[name] = log
    return CacheHit(path, log)


def checksum_trailer(data: bytes) -> bytes:
    """What ``seal_object`` appends to an object: the magic and the sha256 of ``data``."""
    return CHECKSUM_MAGIC + hashlib.sha256(data).digest()


def damage_of(path: Path) -> str | None:
    """None if ``path`` is a complete object with a matching checksum trailer; ``MISSING`` if
    there is no such file; else what is wrong with it, in words."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return MISSING
    except OSError as error:
        return f"cannot be read ({_describe(error)})"
    if not data:
        return "is empty"
    body, trailer = data[:-CHECKSUM_TRAILER_SIZE], data[-CHECKSUM_TRAILER_SIZE:]
    if len(data) <= CHECKSUM_TRAILER_SIZE or not trailer.startswith(CHECKSUM_MAGIC):
        return "has no checksum (truncated, or written by an older ppcl)"
    if checksum_trailer(body) != trailer:
        return "does not match its checksum (damaged on disk)"
    return None


def _remove_damaged(path: Path, damage: str) -> None:
    warnings.warn(
        CacheWarning(f"cache entry {path} {damage}; removing it and rebuilding"), stacklevel=3
    )
    discard(path)


def remember(path: Path, log: str | None) -> None:
    """Record an entry this process has just published."""
    with _lock:
        _known_entries[str(path)] = log


def new_temp_source(key: str) -> Path:
    """Create an empty, uniquely named ``.c`` file in the objects directory.

    The compiler's output goes next to it under the same stem with ``.so``; the stem is unique
    because ``mkstemp`` created the ``.c`` name exclusively. Directories are created with mode
    0700. If the objects directory cannot be created or written, the rest of this process uses
    a temporary directory instead, with one :class:`CacheWarning`.
    """
    configured = _configured_objects_dir()
    directory = objects_dir()
    if directory == configured:
        try:
            return _make_temp_source(directory, key)
        except OSError as error:
            directory = _fall_back(configured, error)
    try:
        return _make_temp_source(directory, key)
    except OSError as error:
        raise CacheError(
            f"cannot write a build file in {directory}: {_describe(error)}; {FIX_DIRECTORY}"
        ) from error


def _make_temp_source(directory: Path, key: str) -> Path:
    os.makedirs(directory.parent, mode=DIRECTORY_MODE, exist_ok=True)
    os.makedirs(directory, mode=DIRECTORY_MODE, exist_ok=True)
    fd, name = tempfile.mkstemp(
        prefix=f"{TEMP_PREFIX}{key[:16]}-", suffix=SOURCE_SUFFIX, dir=directory
    )
    os.close(fd)
    return Path(name)


def _fall_back(configured: Path, error: OSError) -> Path:
    """The temporary objects directory this process uses in place of ``configured``."""
    with _lock:
        known = _fallback_dirs.get(str(configured))
        if known is not None:
            return known
        try:
            root = Path(tempfile.mkdtemp(prefix="ppcl-cache-"))  # mode 0700
        except OSError as temp_error:
            raise CacheError(
                f"cannot use the kernel cache directory {configured.parent} "
                f"({_describe(error)}) nor a temporary directory ({_describe(temp_error)}); "
                f"{FIX_DIRECTORY} or TMPDIR to a writable one"
            ) from temp_error
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        fallback = root / "objects"
        _fallback_dirs[str(configured)] = fallback
    warnings.warn(
        CacheWarning(
            f"cannot use the kernel cache directory {configured.parent} ({_describe(error)}); "
            f"this process builds into {root}, which is removed at exit; {FIX_DIRECTORY}"
        ),
        stacklevel=4,
    )
    return fallback


def _write_synced(path: Path, data: bytes, what: str) -> None:
    """``data`` as the whole of ``path``, flushed to disk before returning."""
    try:
        with open(path, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
    except OSError as error:
        raise CacheError(f"cannot {what} {path}: {_describe(error)}; free space there "
                         f"or {FIX_DIRECTORY}") from error


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (a temp file of a build) and flush it to disk."""
    _write_synced(path, text.encode("utf-8"), "write")


def seal_object(path: Path) -> None:
    """Append the checksum trailer to a freshly built object and flush it to disk."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CacheError(f"cannot read the object {path}: {_describe(error)}") from error
    _write_synced(path, data + checksum_trailer(data), "finish the object")


def _fsync_directory(directory: Path) -> None:
    """Make the renames in ``directory`` durable where the platform can: some systems have no
    directory handles and some file systems refuse fsync on one; the renames hold regardless."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def publish(moves: Sequence[tuple[Path, Path]]) -> None:
    """Move finished temp files into place, in order (the object last), replacing any equal
    entry; each file was flushed to disk first (``write_text``, ``seal_object``), and the
    directory is synced once after the moves."""
    directories = []
    for temp, final in moves:
        try:
            os.replace(temp, final)
        except OSError as error:
            raise CacheError(f"cannot move {temp} to {final}: {_describe(error)}; "
                             f"{FIX_DIRECTORY}") from error
        if final.parent not in directories:
            directories.append(final.parent)
    for directory in directories:
        _fsync_directory(directory)


def discard(path: Path) -> bool:
    """Remove ``path`` if it exists; False if it could not be removed (best effort: used to
    clean up after a build, where a second error must not hide the first)."""
    try:
        path.unlink()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


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
    for item in _listing(directory):
        try:
            info = item.stat()
        except FileNotFoundError:
            continue  # removed by a concurrent build or clear while we counted
        except OSError as error:
            raise CacheError(f"cannot read {item}: {_describe(error)}; {FIX_DIRECTORY}") from error
        if not stat.S_ISREG(info.st_mode):
            continue
        if item.name.endswith(OBJECT_SUFFIX) and not item.name.startswith(TEMP_PREFIX):
            entries += 1
        size += info.st_size
    return CacheStats(directory, entries, size)


def _listing(directory: Path) -> list[Path]:
    """The files in ``directory``; none if it does not exist (or is not a directory)."""
    try:
        return list(directory.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as error:
        raise CacheError(
            f"cannot list the cache directory {directory}: {_describe(error)}; {FIX_DIRECTORY}"
        ) from error


def clear_cache() -> int:
    """Delete every cache file (entries, kept sources, logs, stale temps); return entries removed.

    Only files this module names are removed, so a cache directory shared with other data is
    safe. Libraries already loaded stay mapped and usable.
    """
    directory = objects_dir()
    removed = 0
    with _lock:
        _known_entries.clear()
    ours = (OBJECT_SUFFIX, SOURCE_SUFFIX, LOG_SUFFIX)
    for item in _listing(directory):
        if not item.is_file() or not item.name.endswith(ours):
            continue
        if not discard(item):
            raise CacheError(f"cannot remove {item}; check the permissions of {directory}")
        if item.name.endswith(OBJECT_SUFFIX) and not item.name.startswith(TEMP_PREFIX):
            removed += 1
    return removed
