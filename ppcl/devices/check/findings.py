"""What the checking device reports: one :class:`Finding` per kernel bug, and the collection
of them during a launch (deduplicated by class and source location, with a count).

A finding names its class (``FINDING_CLASSES``), the kernel source location, the work-item
(global and local ids) and group, the argument or variable the access went through, and for
memory errors the index, element size and bound; a race also names the location of the
access it conflicts with.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ppcl.compiler.diagnostics import Loc

FINDING_CLASSES = (
    "out-of-bounds",  # an access outside a buffer, sub-buffer, __local or private array
    "data-race",  # two work-items, no barrier between, at least one writing
    "barrier-divergence",  # work-items of a group at different barriers, or some returned
    "uninitialized-read",  # a read of __local or private memory nobody wrote
    "misaligned-access",  # a load or store at an address not aligned to its type
    "division-by-zero",  # integer division or remainder by zero
    "released-memory",  # a buffer released before the launch ran
)

# findings kept per launch, so a bug in a 1M-item loop does not fill memory
MAX_FINDINGS = 100


@dataclass(frozen=True)
class Finding:
    """One kernel bug, at the first work-item found doing it."""

    kind: str  # one of FINDING_CLASSES
    loc: Loc
    kernel: str
    message: str
    global_id: tuple[int, int, int] = (0, 0, 0)
    local_id: tuple[int, int, int] = (0, 0, 0)
    group_id: tuple[int, int, int] = (0, 0, 0)
    name: str = ""  # the argument or variable the access went through
    index: int | None = None  # element index of a memory access
    element_size: int | None = None
    bound: int | None = None  # elements of the object
    other_loc: Loc | None = None  # a race's other access
    other_global_id: tuple[int, int, int] | None = None
    count: int = field(default=1, compare=False)

    @property
    def line(self) -> int:
        return self.loc.line

    def __str__(self) -> str:
        text = (f"{self.loc}: {self.kind} in kernel '{self.kernel}': {self.message} "
                f"(work-item global {self.global_id}, local {self.local_id}, "
                f"group {self.group_id})")
        if self.count > 1:
            text += f" [{self.count} times]"
        return text


class FindingLog:
    """The findings of one launch (or of every launch, in collect mode), one per class and
    location, counting repeats."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, Loc, str], Finding] = {}
        self._counts: dict[tuple[str, Loc, str], int] = {}
        self._lock = threading.Lock()  # collect mode: launches of several command threads

    def add(self, finding: Finding) -> None:
        key = (finding.kind, finding.loc, finding.name)
        with self._lock:
            if key in self._by_key:
                self._counts[key] += 1
                return
            if len(self._by_key) >= MAX_FINDINGS:
                return
            self._by_key[key] = finding
            self._counts[key] = 1

    def __bool__(self) -> bool:
        return bool(self._by_key)

    def __len__(self) -> int:
        return len(self._by_key)

    def findings(self) -> list[Finding]:
        out = []
        for key, finding in self._by_key.items():
            count = self._counts[key]
            out.append(finding if count == 1 else _with_count(finding, count))
        return out

    def take(self) -> list[Finding]:
        with self._lock:
            found = [finding if self._counts[key] == 1 else
                     _with_count(finding, self._counts[key])
                     for key, finding in self._by_key.items()]
            self._by_key.clear()
            self._counts.clear()
        return found


def _with_count(finding: Finding, count: int) -> Finding:
    from dataclasses import replace

    return replace(finding, count=count)


def summary(findings: list[Finding]) -> str:
    """The text of a report: a count by class, then one line per finding."""
    by_kind: dict[str, int] = {}
    for f in findings:
        by_kind[f.kind] = by_kind.get(f.kind, 0) + 1
    head = ", ".join(f"{n} {kind}" for kind, n in by_kind.items())
    return f"the checking device found {len(findings)} kernel bug(s) ({head}):\n" + \
        "\n".join(f"  {f}" for f in findings)
