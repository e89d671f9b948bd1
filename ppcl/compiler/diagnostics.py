"""Source locations and compiler diagnostics.

Every diagnostic prints like a C compiler: ``file:line:col: error: message``, then the source
line and a caret under the column. Several diagnostics are collected per build so the user sees
all of them at once; the formatted text is the build log.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Loc:
    """A position in a source file; line and column count from 1."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NO_LOC = Loc("<unknown>", 0, 0)


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True)
class Diagnostic:
    severity: Severity
    message: str
    loc: Loc

    def format(self, sources: SourceMap | None = None) -> str:
        head = f"{self.loc}: {self.severity.value}: {self.message}"
        if sources is None or self.loc.line <= 0:
            return head
        text = sources.line(self.loc.file, self.loc.line)
        if text is None:
            return head
        caret_pad = "".join("\t" if ch == "\t" else " " for ch in text[: max(self.loc.col - 1, 0)])
        return f"{head}\n{text}\n{caret_pad}^"


@dataclass
class SourceMap:
    """The text of every file a build read, so diagnostics can quote source lines."""

    files: dict[str, list[str]] = field(default_factory=dict)

    def add(self, name: str, text: str) -> None:
        self.files[name] = text.splitlines()

    def line(self, name: str, lineno: int) -> str | None:
        lines = self.files.get(name)
        if lines is None or not 1 <= lineno <= len(lines):
            return None
        return lines[lineno - 1]


class CompileError(Exception):
    """A build failed; ``log`` holds every diagnostic, formatted."""

    def __init__(self, diagnostics: list[Diagnostic], log: str):
        self.diagnostics = diagnostics
        self.log = log
        super().__init__(log)


def format_all(diagnostics: Sequence[Diagnostic], sources: SourceMap | None) -> str:
    """Diagnostics one to a paragraph, each quoting its line from ``sources`` when they hold
    it (passes after the front end make theirs without the program's text)."""
    return "\n".join(d.format(sources) for d in diagnostics)


class Diagnostics:
    """Collects the diagnostics of one build."""

    def __init__(
        self,
        sources: SourceMap | None = None,
        werror: bool = False,
        warnings_enabled: bool = True,
    ):
        self.sources = sources if sources is not None else SourceMap()
        self.werror = werror
        self.warnings_enabled = warnings_enabled
        self.items: list[Diagnostic] = []

    def error(self, loc: Loc, message: str) -> None:
        self.items.append(Diagnostic(Severity.ERROR, message, loc))

    def warning(self, loc: Loc, message: str) -> None:
        if not self.warnings_enabled:
            return
        severity = Severity.ERROR if self.werror else Severity.WARNING
        self.items.append(Diagnostic(severity, message, loc))

    def note(self, loc: Loc, message: str) -> None:
        self.items.append(Diagnostic(Severity.NOTE, message, loc))

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.items)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity is Severity.ERROR]

    def format(self) -> str:
        return format_all(self.items, self.sources)

    def raise_if_errors(self) -> None:
        if self.has_errors:
            raise CompileError(list(self.items), self.format())
