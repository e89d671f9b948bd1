"""ppcl: a performance-portable OpenCL stack in Python."""

__version__ = "0.1.0"
