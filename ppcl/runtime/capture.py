"""``Kernel.capture_call``: one kernel call written out as a Python program that repeats it.

As PyOpenCL's ``capture_call``, for reporting a kernel's bug or timing it alone: the program
holds the kernel's source and build options, the contents of every buffer argument at the time
of the call (compressed), the scalars with their types, and the launch; its ``main()`` builds
the program on a context of its own, makes the buffers, launches, waits, and returns the queue
and the arguments (a caller reads the buffers back from them)."""

from __future__ import annotations

import base64
import zlib
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from ppcl.runtime.errors import make_error
from ppcl.runtime.event import Event, wait_for_events
from ppcl.runtime.image import Image, Sampler
from ppcl.runtime.memory import LocalMemory, MemoryObject
from ppcl.runtime.transfer import enqueue_copy

if TYPE_CHECKING:
    from ppcl.runtime.kernel import Kernel
    from ppcl.runtime.queue import CommandQueue

_LINE = 96  # characters of encoded data per line of the written program


def _encoded(data: bytes) -> str:
    text = base64.b64encode(zlib.compress(data, 6)).decode("ascii")
    lines = [text[i:i + _LINE] for i in range(0, len(text), _LINE)] or [""]
    return "(\n" + "".join(f"        {line!r}\n" for line in lines) + "    )"


def _argument(index: int, arg: Any, queue: CommandQueue) -> str:
    """The statement of ``main()`` making argument ``index`` as the call passed it."""
    name = f"arg{index}"
    if arg is None:
        return f"    {name} = None"
    if isinstance(arg, LocalMemory):
        return f"    {name} = cl.LocalMemory({arg.size})"
    if isinstance(arg, (Image, Sampler)):
        raise make_error("Kernel.capture_call", "INVALID_ARG_VALUE",
                         f"argument {index} is {type(arg).__name__.lower()}; capture_call "
                         "writes buffers, scalars and local memory, not images or samplers")
    if isinstance(arg, MemoryObject):
        contents = np.empty(arg.size, dtype=np.uint8)
        enqueue_copy(queue, contents, arg)
        queue.finish()
        return (f"    {name} = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=_bytes"
                f"{_encoded(contents.tobytes())})")
    value = np.asarray(arg)
    if value.dtype.kind in "biufc" and value.ndim == 0 and value.dtype.fields is None:
        return f"    {name} = np.{value.dtype.name}({value.item()!r})"
    # structs, vectors and anything else numpy holds: its bytes, as the kernel receives them
    return (f"    {name} = np.frombuffer(_bytes{_encoded(value.tobytes())}, "
            f"dtype=np.dtype({value.dtype.descr!r}))[0]")


def capture_call(kernel: Kernel, output_file: str | IO[str], queue: CommandQueue,
                 global_size: Sequence[int], local_size: Sequence[int] | None, *args: Any,
                 wait_for: Sequence[Event] | None = None, g_times_l: bool = False,
                 allow_empty_ndrange: bool = False,
                 global_offset: Sequence[int] | None = None) -> None:
    """Write the call ``kernel(queue, global_size, local_size, *args, ...)`` to
    ``output_file`` (a path or a text file) as a program, without running it."""
    program = kernel.program
    if not program.source:
        raise make_error("Kernel.capture_call", "INVALID_PROGRAM",
                         f"kernel '{kernel.function_name}' comes from binaries or IR: "
                         "capture_call writes the OpenCL C source of the program")
    if len(args) != kernel.num_args:
        raise make_error("Kernel.capture_call", "INVALID_KERNEL_ARGS",
                         f"kernel '{kernel.function_name}' takes {kernel.num_args} "
                         f"arguments, {len(args)} given")
    if wait_for:
        wait_for_events(list(wait_for))
    made = [_argument(i, a, queue) for i, a in enumerate(args)]
    names = ", ".join(f"arg{i}" for i in range(len(args)))
    sizes = (f"{tuple(global_size)!r}, {None if local_size is None else tuple(local_size)!r}")
    keywords = "".join([f", global_offset={tuple(global_offset)!r}" if global_offset else "",
                        ", g_times_l=True" if g_times_l else "",
                        ", allow_empty_ndrange=True" if allow_empty_ndrange else ""])
    text = "\n".join([
        f"# The call of kernel '{kernel.function_name}' captured by ppcl's "
        "Kernel.capture_call.",
        "import base64",
        "import zlib",
        "",
        "import numpy as np",
        "",
        "import ppcl as cl",
        "",
        f"SOURCE = {program.source!r}",
        f"OPTIONS = {program._options!r}",
        "",
        "",
        "def _bytes(*lines):",
        "    return np.frombuffer(zlib.decompress(base64.b64decode(''.join(lines))),",
        "                         dtype=np.uint8).copy()",
        "",
        "",
        "def main():",
        "    ctx = cl.create_some_context(interactive=False)",
        "    queue = cl.CommandQueue(ctx)",
        "    mf = cl.mem_flags",
        "    program = cl.Program(ctx, SOURCE).build(options=OPTIONS)",
        *made,
        f"    program.{kernel.function_name}(queue, {sizes}, {names}{keywords})",
        "    queue.finish()",
        f"    return queue, [{names}]",
        "",
        "",
        'if __name__ == "__main__":',
        "    main()",
        ""])
    if isinstance(output_file, str):
        with open(output_file, "w") as f:
            f.write(text)
    else:
        output_file.write(text)
