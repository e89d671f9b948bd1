"""Program binaries: what ``clGetProgramInfo(CL_PROGRAM_BINARIES)`` hands out and
``clCreateProgramWithBinary`` takes back, self-describing so that ppcl rebuilds the program
without its source.

An executable holds the front end's typed IR module and the build options it was built with
(the devices build their kernels from the IR, as they do after a build from source); a compiled
object or a library holds its preprocessed text (with line markers naming the original files),
which ``link_program`` joins with the others. The layout is::

    b"PPCLBIN\\0"  uint32 format version  uint32 payload length  payload  sha256(all before)

with the payload a pickle of :class:`ProgramBinary`. The trailer is checked before anything is
unpickled, and the unpickler builds only the IR's own classes (frozen dataclasses and enums of
``ppcl.compiler``) and a few containers, so a damaged or foreign binary is refused
(``BinaryError``, the runtime's ``CL_INVALID_BINARY``) with the reason, never half-loaded.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import io
import pickle
import struct
from dataclasses import dataclass
from typing import Any

from ppcl.compiler.deepstack import run_deep_if_needed
from ppcl.compiler.frontend.options import BuildOptions
from ppcl.compiler.ir import nodes as ir

MAGIC = b"PPCLBIN\0"
FORMAT_VERSION = 1
_HEAD = struct.Struct("<8sII")  # magic, format version, payload bytes
_DIGEST_BYTES = 32
_CONTAINERS = {("builtins", "frozenset"), ("builtins", "set"), ("builtins", "complex"),
               ("builtins", "slice")}

# what a binary holds, in the words of program_binary_type
EXECUTABLE = "executable"
COMPILED_OBJECT = "compiled-object"
LIBRARY = "library"
KINDS = (EXECUTABLE, COMPILED_OBJECT, LIBRARY)


class BinaryError(ValueError):
    """Bytes that are not a program binary this ppcl can load, and why."""


@dataclass(frozen=True)
class ProgramBinary:
    """One program as a binary holds it.

    ``kind``: ``EXECUTABLE`` (``module`` and ``build_options`` set) or ``COMPILED_OBJECT`` /
    ``LIBRARY`` (``text``: the preprocessed unit). ``options``: the option string as given to
    the build, compile or link; ``log``: the build log."""

    kind: str
    options: str
    log: str = ""
    module: ir.Module | None = None
    build_options: BuildOptions | None = None
    text: str = ""


class _IRUnpickler(pickle.Unpickler):
    """An unpickler that builds only the IR's classes and plain containers."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _CONTAINERS:
            return super().find_class(module, name)
        if not module.startswith("ppcl.compiler."):
            raise BinaryError(f"the binary names '{module}.{name}', which is not part of a "
                              "ppcl program")
        found = super().find_class(module, name)
        if not isinstance(found, type) or not (dataclasses.is_dataclass(found)
                                               or issubclass(found, enum.Enum)):
            raise BinaryError(f"the binary names '{module}.{name}', which is not an IR value")
        return found


def encode_binary(program: ProgramBinary) -> bytes:
    """The bytes of a program binary holding ``program``."""
    payload = run_deep_if_needed(pickle.dumps, program, protocol=pickle.HIGHEST_PROTOCOL)
    head = _HEAD.pack(MAGIC, FORMAT_VERSION, len(payload)) + payload
    return head + hashlib.sha256(head).digest()


def decode_binary(data: bytes) -> ProgramBinary:
    """The program a binary holds; raises ``BinaryError`` saying what is wrong with it."""
    data = bytes(data)
    if len(data) < _HEAD.size + _DIGEST_BYTES:
        raise BinaryError(f"{len(data)} bytes are too short for a ppcl program binary")
    magic, version, length = _HEAD.unpack_from(data)
    if magic != MAGIC:
        raise BinaryError("not a ppcl program binary (its first bytes are "
                          f"{magic!r}, not {MAGIC!r})")
    if version != FORMAT_VERSION:
        raise BinaryError(f"binary format version {version}; this ppcl reads version "
                          f"{FORMAT_VERSION}: build the program from source again")
    end = _HEAD.size + length
    if end + _DIGEST_BYTES != len(data):
        raise BinaryError(f"the binary holds {len(data)} bytes, its header says "
                          f"{end + _DIGEST_BYTES}: it is cut short or has bytes appended")
    if hashlib.sha256(data[:end]).digest() != data[end:]:
        raise BinaryError("the binary's checksum does not match its contents (it is damaged)")
    try:
        program = run_deep_if_needed(_load, data[_HEAD.size:end])
    except BinaryError:
        raise
    except Exception as error:  # a binary of another ppcl whose IR classes differ
        raise BinaryError(f"the binary does not hold a program this ppcl can read ({error})"
                          ) from error
    if not isinstance(program, ProgramBinary) or program.kind not in KINDS \
            or (program.kind == EXECUTABLE and not isinstance(program.module, ir.Module)):
        raise BinaryError("the binary does not hold a ppcl program")
    return program


def _load(payload: bytes) -> Any:
    return _IRUnpickler(io.BytesIO(payload)).load()
