"""The checking device: kernels interpreted from the typed IR with every access checked
(``device.py``); what it reports is in ``findings.py``."""

from ppcl.devices.check.device import CheckDevice
from ppcl.devices.check.findings import FINDING_CLASSES, Finding

__all__ = ["FINDING_CLASSES", "CheckDevice", "Finding"]
