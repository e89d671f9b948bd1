"""Resource lifetime as a long-running program sees it: what the program deletes is freed
(a kernel keeps no reference to its arguments, as OpenCL's clSetKernelArg), while a command
still pending keeps what it uses."""

from __future__ import annotations

import gc
import weakref

import numpy as np

import ppcl as cl

mf = cl.mem_flags
OUT_OF_ORDER = cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE

N = 256


def _buffer(ctx, values):
    return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.asarray(values, np.int32))


def test_a_command_thread_keeps_nothing_of_the_command_it_ran(ctx):
    queue = cl.CommandQueue(ctx, properties=OUT_OF_ORDER)  # commands run on command threads
    buf = _buffer(ctx, np.arange(N))
    host = np.empty(N, np.int32)
    cl.enqueue_copy(queue, host, buf, is_blocking=False)
    queue.finish()
    np.testing.assert_array_equal(host, np.arange(N))
    refs = weakref.ref(buf), weakref.ref(host)
    del buf, host
    gc.collect()
    assert [ref() for ref in refs] == [None, None]
