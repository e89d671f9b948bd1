"""``python -m benchmarks [--only NAMES] [--size small|default] [--json FILE] [--repeats N]``:
the kernel suite of ``ppcl.bench`` (the same as ``ppcl bench``)."""

from __future__ import annotations

import sys

from ppcl.bench import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
