"""PyOpenCL host programs as people publish them, run with ``import ppcl as cl``: the API
names they reach for exist and behave as in PyOpenCL, and the ones ppcl leaves out on purpose
say so."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
import ppcl.tools


def test_header_version_is_the_opencl_version_implemented():
    assert cl.get_cl_header_version() == (1, 2)
    assert ppcl.tools.get_cl_header_version() == (1, 2)


def test_enqueue_fill_fills_a_buffer_range(ctx, queue):
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16)
    cl.enqueue_fill_buffer(queue, buf, np.int32(0), 0, 16)
    cl.enqueue_fill(queue, buf, np.int32(7), 8, offset=4)
    out = np.empty(4, np.int32)
    cl.enqueue_copy(queue, out, buf)
    assert out.tolist() == [0, 7, 7, 0]
    with pytest.raises(cl.LogicError, match="fills a Buffer"):
        cl.enqueue_fill(queue, np.zeros(4, np.int32), np.int32(1), 16)


@pytest.mark.parametrize(("owner", "name"), [
    (cl, "SVM"), (cl, "svm_empty"), (cl, "Pipe"), (cl, "GLBuffer"),
    (ppcl.tools, "SVMAllocator"), (ppcl.tools, "SVMPool"),
])
def test_opencl_2_and_gl_names_say_they_are_unsupported(owner, name):
    assert not hasattr(owner, name)  # feature tests with hasattr still work
    with pytest.raises(AttributeError, match=f"{name} \\(PyOpenCL\\) is not supported by ppcl"):
        getattr(owner, name)


def test_create_sub_devices_says_it_is_unsupported(ctx):
    with pytest.raises(AttributeError, match="create_sub_devices .*not supported"):
        ctx.devices[0].create_sub_devices([0x1086, 1])


def test_unknown_names_keep_pythons_message():
    with pytest.raises(AttributeError, match="^module 'ppcl' has no attribute 'no_such_name'$"):
        cl.no_such_name  # noqa: B018


def test_kernel_info_attributes_and_clone(ctx, queue):
    prg = cl.Program(ctx, """
        __kernel __attribute__((reqd_work_group_size(2, 1, 1)))
        void put(__global int *a, int v) { a[get_global_id(0)] = v; }""").build()
    knl = prg.put
    assert knl.attributes == "reqd_work_group_size(2,1,1)"
    assert knl.reference_count >= 1 and knl.num_args == 2
    with pytest.raises(AttributeError, match="'Kernel' object has no attribute 'nope'"):
        knl.nope  # noqa: B018
    first, second = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 8), cl.Buffer(ctx, 0, 8)
    knl.set_args(first, np.int32(5))
    twin = knl.clone()
    assert twin.function_name == "put" and twin is not knl
    twin.set_arg(0, second)  # leaves the original's argument as it was
    cl.enqueue_nd_range_kernel(queue, knl, (2,), (2,))
    cl.enqueue_nd_range_kernel(queue, twin, (2,), (2,))
    for buf in (first, second):
        out = np.empty(2, np.int32)
        cl.enqueue_copy(queue, out, buf)
        assert out.tolist() == [5, 5]
