"""The conversion syntax of OpenCL C 1.2's ``printf`` (section 6.12.13.2), one definition for
the front end's format check and the C backend's lowering."""

from __future__ import annotations

import re

# %[flags][width][.precision][vector specifier][length modifier]conversion
CONVERSION = re.compile(
    r"%(?P<flags>[-+ #0]*)(?P<width>[0-9]*)(?P<precision>\.[0-9]*)?"
    r"(?P<vector>v(?:16|2|3|4|8))?(?P<length>hh|hl|h|l)?(?P<conversion>[diouxXfFeEgGaAcsp%])")
