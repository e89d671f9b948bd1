"""``python -m benchmarks.programs [--size small|default] [--only a,b] [--json FILE]
[--repeats N]``: the second suite on ppcl and on pocl (see ``runner.py``)."""

from __future__ import annotations

import sys

from benchmarks.programs.runner import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
