"""``python3 -m ppcl``: the ``ppcl`` command (``ppcl.cli``)."""

import sys

from ppcl.cli import main

sys.exit(main())
