"""The programs a benchmark's ``--only`` names, checked against those it knows."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def pick_names(only: str | None, known: Sequence[str]) -> list[str] | None:
    """The comma-separated names of ``only`` (every known name when it is empty), or None
    after saying on stderr which names are unknown."""
    names = [name for name in (only or "").split(",") if name] or list(known)
    unknown = [name for name in names if name not in known]
    if unknown:
        print(f"unknown programs: {', '.join(unknown)}; known: {', '.join(known)}",
              file=sys.stderr)
        return None
    return names
