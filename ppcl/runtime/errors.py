"""OpenCL error codes and the exceptions that carry them.

As in PyOpenCL, an ``INVALID_*`` code (a misuse of the API, code <= -30) raises ``LogicError``,
an allocation failure raises ``MemoryError`` and anything else raises ``RuntimeError``. Every
exception has ``.code`` (the integer), ``.routine`` (the OpenCL entry point the call stands for)
and ``str(e)`` names the code, e.g. ``clEnqueueNDRangeKernel failed: CL_INVALID_WORK_GROUP_SIZE``.
"""

from __future__ import annotations

import builtins

import numpy as np

# name (without the CL_ prefix) -> code, from cl.h of OpenCL 1.2
ERROR_CODES: dict[str, int] = {
    "SUCCESS": 0,
    "DEVICE_NOT_FOUND": -1,
    "DEVICE_NOT_AVAILABLE": -2,
    "COMPILER_NOT_AVAILABLE": -3,
    "MEM_OBJECT_ALLOCATION_FAILURE": -4,
    "OUT_OF_RESOURCES": -5,
    "OUT_OF_HOST_MEMORY": -6,
    "PROFILING_INFO_NOT_AVAILABLE": -7,
    "MEM_COPY_OVERLAP": -8,
    "IMAGE_FORMAT_MISMATCH": -9,
    "IMAGE_FORMAT_NOT_SUPPORTED": -10,
    "BUILD_PROGRAM_FAILURE": -11,
    "MAP_FAILURE": -12,
    "MISALIGNED_SUB_BUFFER_OFFSET": -13,
    "EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST": -14,
    "COMPILE_PROGRAM_FAILURE": -15,
    "LINKER_NOT_AVAILABLE": -16,
    "LINK_PROGRAM_FAILURE": -17,
    "DEVICE_PARTITION_FAILED": -18,
    "KERNEL_ARG_INFO_NOT_AVAILABLE": -19,
    "INVALID_VALUE": -30,
    "INVALID_DEVICE_TYPE": -31,
    "INVALID_PLATFORM": -32,
    "INVALID_DEVICE": -33,
    "INVALID_CONTEXT": -34,
    "INVALID_QUEUE_PROPERTIES": -35,
    "INVALID_COMMAND_QUEUE": -36,
    "INVALID_HOST_PTR": -37,
    "INVALID_MEM_OBJECT": -38,
    "INVALID_IMAGE_FORMAT_DESCRIPTOR": -39,
    "INVALID_IMAGE_SIZE": -40,
    "INVALID_SAMPLER": -41,
    "INVALID_BINARY": -42,
    "INVALID_BUILD_OPTIONS": -43,
    "INVALID_PROGRAM": -44,
    "INVALID_PROGRAM_EXECUTABLE": -45,
    "INVALID_KERNEL_NAME": -46,
    "INVALID_KERNEL_DEFINITION": -47,
    "INVALID_KERNEL": -48,
    "INVALID_ARG_INDEX": -49,
    "INVALID_ARG_VALUE": -50,
    "INVALID_ARG_SIZE": -51,
    "INVALID_KERNEL_ARGS": -52,
    "INVALID_WORK_DIMENSION": -53,
    "INVALID_WORK_GROUP_SIZE": -54,
    "INVALID_WORK_ITEM_SIZE": -55,
    "INVALID_GLOBAL_OFFSET": -56,
    "INVALID_EVENT_WAIT_LIST": -57,
    "INVALID_EVENT": -58,
    "INVALID_OPERATION": -59,
    "INVALID_GL_OBJECT": -60,
    "INVALID_BUFFER_SIZE": -61,
    "INVALID_MIP_LEVEL": -62,
    "INVALID_GLOBAL_WORK_SIZE": -63,
    "INVALID_PROPERTY": -64,
    "INVALID_IMAGE_DESCRIPTOR": -65,
    "INVALID_COMPILER_OPTIONS": -66,
    "INVALID_LINKER_OPTIONS": -67,
    "INVALID_DEVICE_PARTITION_COUNT": -68,
}

_NAMES_BY_CODE = {code: name for name, code in ERROR_CODES.items()}
_MEMORY_CODES = {
    ERROR_CODES["MEM_OBJECT_ALLOCATION_FAILURE"],
    ERROR_CODES["OUT_OF_RESOURCES"],
    ERROR_CODES["OUT_OF_HOST_MEMORY"],
}


def error_name(code: int) -> str:
    """``-54`` -> ``CL_INVALID_WORK_GROUP_SIZE``."""
    name = _NAMES_BY_CODE.get(code)
    return f"CL_{name}" if name is not None else f"CL_UNKNOWN_ERROR({code})"


class ErrorInfo:
    """PyOpenCL's error record, ``e.args[0]`` and ``e.what``: methods ``code()``,
    ``routine()``, ``what()`` (the explanation) and ``is_out_of_memory()``; ``str()`` gives
    the whole message."""

    def __init__(self, routine: str, code: int, message: str = "") -> None:
        self._routine = routine
        self._code = code
        self._message = message

    def code(self) -> int:
        return self._code

    def routine(self) -> str:
        return self._routine

    def what(self) -> str:
        return self._message

    def is_out_of_memory(self) -> bool:
        return self._code in _MEMORY_CODES

    def __str__(self) -> str:
        text = f"{self._routine} failed: {error_name(self._code)}"
        return f"{text} - {self._message}" if self._message else text

    def __repr__(self) -> str:
        return repr(str(self))


class Error(Exception):
    """Base of every ppcl runtime error; ``code`` is the OpenCL status code. As in PyOpenCL,
    ``args[0]`` is the error record (``e.args[0].code()``)."""

    def __init__(self, routine: str, code: int, message: str = "") -> None:
        self.what = ErrorInfo(routine, code, message)
        self.code = code
        self.routine = routine
        super().__init__(self.what)

    def __str__(self) -> str:
        return str(self.what)

    def is_out_of_memory(self) -> bool:
        return self.what.is_out_of_memory()


class LogicError(Error):
    """A misuse of the API (an ``INVALID_*`` code)."""


class InvalidValueError(LogicError, builtins.ValueError):
    """``CL_INVALID_VALUE`` where numpy and PyOpenCL raise ``ValueError`` (a negative or
    fractional dimension, a reshape to another size, the maximum of an empty array): code
    written for them catches it with ``except ValueError``, as with ``except LogicError``."""


def invalid_value(routine: str, message: str) -> InvalidValueError:
    """The ``InvalidValueError`` of ``routine``."""
    return InvalidValueError(routine, ERROR_CODES["INVALID_VALUE"], message)


class RuntimeError(Error, builtins.RuntimeError):  # noqa: A001 - PyOpenCL's name
    """A failure at run time that is not the caller's misuse (build failure, ...)."""


class KernelCheckError(RuntimeError):
    """Bugs the checking device found in a kernel (``PPCL_DEVICES=check``): ``findings`` is
    the list of them (class, source location, work-item, argument, ...), the message shows
    each; the code is ``CL_OUT_OF_RESOURCES``, what OpenCL platforms report for a kernel that
    faults."""

    def __init__(self, routine: str, message: str, findings: list) -> None:  # type: ignore[type-arg]
        super().__init__(routine, ERROR_CODES["OUT_OF_RESOURCES"], message)
        self.findings = findings


class MemoryError(Error, builtins.MemoryError):  # noqa: A001 - PyOpenCL's name
    """An allocation failure."""


def make_error(routine: str, code: int | str, message: str = "") -> Error:
    """The exception class PyOpenCL would raise for ``code`` (an int or a name like
    ``INVALID_VALUE``), with the routine name and an explanatory message."""
    if isinstance(code, str):
        code = ERROR_CODES[code.removeprefix("CL_")]
    if code in _MEMORY_CODES:
        return MemoryError(routine, code, message)
    if code <= ERROR_CODES["INVALID_VALUE"]:
        return LogicError(routine, code, message)
    return RuntimeError(routine, code, message)


def is_integer(value: object) -> bool:
    """A Python or numpy integer, not a bool (a size, offset or count as OpenCL's size_t)."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def integer_arg(routine: str, value: object, what: str) -> int:
    """``value`` as an int, or ``CL_INVALID_VALUE`` naming ``what`` when it is not an integer
    (a float size would otherwise reach slicing and the allocator deep inside ppcl)."""
    if not is_integer(value):
        raise make_error(routine, "INVALID_VALUE",
                         f"the {what} is {value!r} ({type(value).__name__}), not an integer")
    return int(value)  # type: ignore[call-overload]
