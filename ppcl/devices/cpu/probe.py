"""What the host tells about its processor: model, cores, caches, memory, vector flags."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def configured_threads(threads: int | None = None) -> int:
    """The number of threads a launch uses: ``threads`` (``PPCL_THREADS``, parsed by
    ``ppcl.settings``) or the usable cores."""
    return threads if threads is not None else usable_cores()


@dataclass(frozen=True)
class CPUInfo:
    """What the host tells about its processor, for the device's info queries."""

    model: str
    vendor: str
    cores: int
    clock_mhz: int
    cache_line: int
    l1d_bytes: int
    last_level_cache_bytes: int
    memory_bytes: int
    flags: frozenset[str]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _parse_size(text: str) -> int:
    text = text.strip().upper()
    scale = 1
    if text.endswith("K"):
        scale, text = 1024, text[:-1]
    elif text.endswith("M"):
        scale, text = 1024 * 1024, text[:-1]
    try:
        return int(text) * scale
    except ValueError:
        return 0


def probe_cpu() -> CPUInfo:
    cpuinfo = _read(Path("/proc/cpuinfo"))
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    caches: dict[tuple[int, str], int] = {}
    cache_root = Path("/sys/devices/system/cpu/cpu0/cache")
    if cache_root.is_dir():
        for index in cache_root.glob("index*"):
            level = _read(index / "level").strip()
            kind = _read(index / "type").strip()
            if level.isdigit():
                caches[(int(level), kind)] = _parse_size(_read(index / "size"))
    last_level = max((size for (_, kind), size in caches.items() if kind != "Instruction"),
                     default=8 * 1024 * 1024)
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        memory = 8 * 1024**3
    try:
        clock = int(float(fields.get("cpu MHz", "0")))
    except ValueError:
        clock = 0
    return CPUInfo(
        model=fields.get("model name") or platform.processor() or platform.machine(),
        vendor=fields.get("vendor_id", "unknown"),
        cores=usable_cores(),
        clock_mhz=clock,
        cache_line=int(fields.get("cache_alignment", "64") or 64),
        l1d_bytes=caches.get((1, "Data"), 32 * 1024),
        last_level_cache_bytes=last_level,
        memory_bytes=memory,
        flags=frozenset(fields.get("flags", "").split()),
    )
