"""The environment of a Python process a test starts: the checkout first on ``PYTHONPATH``,
then the parent's own ``PYTHONPATH``, so the child imports this ppcl and still finds the
dependencies a machine installs under ``PYTHONPATH`` (a GPU machine's ``/tmp/site``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def python_path() -> str:
    """The checkout, then the parent's ``PYTHONPATH`` entries."""
    inherited = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join([str(ROOT), *(entry for entry in inherited.split(os.pathsep) if entry)])


def child_env(extra: Mapping[str, str] | None = None,
              base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (this process's environment by default) with ``python_path()`` and ``extra``."""
    return {**(os.environ if base is None else base), "PYTHONPATH": python_path(), **(extra or {})}
