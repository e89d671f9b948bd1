"""Conformance of program and kernel objects with OpenCL 1.2 as PyOpenCL exposes them: program
binaries (``program.binaries``, ``Program(ctx, devices, binaries)``, damaged binaries refused),
separate compilation with headers, ``link_program`` and ``-create-library``, per-device build
info, ``Kernel.get_work_group_info`` and ``Kernel.get_arg_info`` with and without
``-cl-kernel-arg-info``."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl

mf = cl.mem_flags

SOURCE = r"""
struct params { float scale; int offset; };
__constant float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};
float twice(float x) { return 2.0f * x; }
__kernel void apply(__global float *out, __global const float * restrict in,
                    struct params p)
{
    int i = get_global_id(0);
    out[i] = twice(in[i]) * p.scale + p.offset + table[i % 4];
}
__kernel __attribute__((reqd_work_group_size(8, 1, 1)))
void blocked(__global int *out, __local int *scratch, __constant int *c, uint n, float4 v)
{
    __local int tile[8];
    tile[get_local_id(0)] = (int)get_global_id(0) + c[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_global_id(0) < n)
        out[get_global_id(0)] = tile[7 - get_local_id(0)];
}
"""

PARAMS = np.dtype([("scale", np.float32), ("offset", np.int32)])


@pytest.fixture(scope="module")
def ctx():
    return cl.create_some_context(interactive=False)


@pytest.fixture(scope="module")
def queue(ctx):
    return cl.CommandQueue(ctx)


def _apply(ctx, queue, program) -> np.ndarray:
    n = 16
    data = np.arange(n, dtype=np.float32)
    src = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=data)
    dst = cl.Buffer(ctx, mf.WRITE_ONLY, data.nbytes)
    params = np.array((0.5, 3), PARAMS)[()]
    program.apply(queue, (n,), None, dst, src, params)
    out = np.empty_like(data)
    cl.enqueue_copy(queue, out, dst)
    expected = 2 * data * 0.5 + 3 + np.tile(np.float32([1, 2, 3, 4]), n // 4)
    np.testing.assert_allclose(out, expected)
    return out


# ---------------------------------------------------------------------- binaries

def test_a_program_rebuilt_from_its_binaries_runs_without_the_source(ctx, queue):
    built = cl.Program(ctx, SOURCE).build("-cl-kernel-arg-info -DUNUSED=1")
    binaries = built.binaries
    assert len(binaries) == len(ctx.devices) and all(binaries)
    assert built.get_info(cl.program_info.BINARY_SIZES) == [len(b) for b in binaries]
    assert built.get_info(cl.program_info.BINARIES) == binaries

    loaded = cl.Program(ctx, ctx.devices, binaries)
    device = ctx.devices[0]
    assert loaded.get_build_info(device, cl.program_build_info.STATUS) == cl.build_status.NONE
    assert loaded.get_build_info(device, cl.program_build_info.BINARY_TYPE) == \
        cl.program_binary_type.EXECUTABLE
    assert loaded.binaries == binaries  # handed back as given before the build
    loaded.build()
    assert loaded.get_info(cl.program_info.SOURCE) == ""
    assert loaded.kernel_names == built.kernel_names
    assert loaded.get_build_info(device, cl.program_build_info.STATUS) == \
        cl.build_status.SUCCESS
    assert "-cl-kernel-arg-info" in loaded.get_build_info(device,
                                                          cl.program_build_info.OPTIONS)
    _apply(ctx, queue, loaded)
    # the build options travel with the binary: argument names stay available
    assert loaded.apply.get_arg_info(2, cl.kernel_arg_info.NAME) == "p"


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped", "appended", "empty"])
def test_a_damaged_binary_is_refused_with_invalid_binary(ctx, damage):
    good = cl.Program(ctx, SOURCE).build().binaries[0]
    bad = {"garbage": b"\x7fELF" + bytes(200), "truncated": good[:len(good) // 2],
           "flipped": good[:100] + bytes([good[100] ^ 0x40]) + good[101:],
           "appended": good + b"\0", "empty": b""}[damage]
    with pytest.raises(cl.LogicError, match="CL_INVALID_BINARY"):
        cl.Program(ctx, ctx.devices, [bad])


def test_a_binary_naming_foreign_classes_is_refused_before_it_runs(ctx):
    import hashlib
    import os
    import pickle
    import struct

    from ppcl.compiler.frontend.binary import FORMAT_VERSION, MAGIC

    payload = pickle.dumps(os.getcwd)  # would name os.getcwd when loaded
    head = struct.pack("<8sII", MAGIC, FORMAT_VERSION, len(payload)) + payload
    with pytest.raises(cl.LogicError, match="CL_INVALID_BINARY.*not part of a ppcl program"):
        cl.Program(ctx, ctx.devices, [head + hashlib.sha256(head).digest()])


def test_binary_arguments_are_checked(ctx):
    binary = cl.Program(ctx, SOURCE).build().binaries[0]
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        cl.Program(ctx, ctx.devices, [binary, binary])
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        cl.Program(ctx, ctx.devices, ["text"])
    other = cl.Context([cl.get_platforms()[0].get_devices()[0]])
    foreign = [d for d in other.devices if d not in ctx.devices]
    if foreign:
        with pytest.raises(cl.LogicError, match="CL_INVALID_DEVICE"):
            cl.Program(ctx, foreign, [binary])


def test_a_program_not_built_has_empty_binaries(ctx):
    program = cl.Program(ctx, SOURCE)
    assert program.binaries == [b""] * len(ctx.devices)
    assert program.get_info(cl.program_info.BINARY_SIZES) == [0] * len(ctx.devices)


# ---------------------------------------------------------------------- compile and link

HEADER = "#define OFFSET 5\nint shifted(int v);\n"
LIBRARY_UNIT = '#include "shift.h"\nint shifted(int v) { return v + OFFSET; }\n'
MAIN_UNIT = ('#include "shift.h"\n'
             "__kernel void k(__global int *x) { x[get_global_id(0)] = "
             "shifted((int)get_global_id(0)); }\n")


def _run_k(ctx, queue, program) -> None:
    buf = cl.Buffer(ctx, mf.READ_WRITE, 8 * 4)
    program.k(queue, (8,), None, buf)
    out = np.empty(8, np.int32)
    cl.enqueue_copy(queue, out, buf)
    np.testing.assert_array_equal(out, np.arange(8) + 5)


def test_compile_link_and_create_library(ctx, queue):
    header = cl.Program(ctx, HEADER)
    lib_obj = cl.Program(ctx, LIBRARY_UNIT).compile(headers=[("shift.h", header)])
    device = ctx.devices[0]
    assert lib_obj.get_build_info(device, cl.program_build_info.BINARY_TYPE) == \
        cl.program_binary_type.COMPILED_OBJECT
    library = cl.link_program(ctx, [lib_obj], "-create-library")
    assert library.get_build_info(device, cl.program_build_info.BINARY_TYPE) == \
        cl.program_binary_type.LIBRARY
    assert library.get_build_info(device, cl.program_build_info.STATUS) == \
        cl.build_status.SUCCESS
    assert library.all_kernels() == []
    with pytest.raises(cl.LogicError, match="CL_INVALID_PROGRAM_EXECUTABLE"):
        cl.Kernel(library, "shifted")
    main = cl.Program(ctx, MAIN_UNIT).compile(headers=[("shift.h", header)])
    linked = cl.link_program(ctx, [library, main])
    assert linked.get_build_info(device, cl.program_build_info.BINARY_TYPE) == \
        cl.program_binary_type.EXECUTABLE
    _run_k(ctx, queue, linked)


def test_objects_and_libraries_travel_as_binaries(ctx, queue):
    header = cl.Program(ctx, HEADER)
    obj = cl.Program(ctx, LIBRARY_UNIT).compile(headers=[("shift.h", header)])
    library = cl.link_program(ctx, [obj], "-create-library")
    main = cl.Program(ctx, MAIN_UNIT).compile(headers=[("shift.h", header)])
    library_again = cl.Program(ctx, ctx.devices, library.binaries)
    main_again = cl.Program(ctx, ctx.devices, main.binaries)
    device = ctx.devices[0]
    assert library_again.get_build_info(device, cl.program_build_info.BINARY_TYPE) == \
        cl.program_binary_type.LIBRARY
    assert main_again.get_build_info(device, cl.program_build_info.BINARY_TYPE) == \
        cl.program_binary_type.COMPILED_OBJECT
    # binaries of objects and libraries are linked as they are, without a build
    _run_k(ctx, queue, cl.link_program(ctx, [library_again, main_again]))
    # and a compiled object's binary builds into an executable of its own
    whole = cl.Program(ctx, LIBRARY_UNIT.replace('#include "shift.h"', "#define OFFSET 5")
                       + MAIN_UNIT.replace('#include "shift.h"', "")).compile()
    _run_k(ctx, queue, cl.Program(ctx, ctx.devices, whole.binaries).build())


def test_a_call_no_unit_defines_fails_the_link(ctx):
    main = cl.Program(ctx, "int missing(int);\n__kernel void k(__global int *x) "
                           "{ x[0] = missing(x[0]); }\n").compile()
    with pytest.raises(cl.RuntimeError, match="(?s)CL_LINK_PROGRAM_FAILURE.*'missing'"):
        cl.link_program(ctx, [main])
    with pytest.raises(cl.LogicError, match="CL_INVALID_PROGRAM"):
        cl.link_program(ctx, [cl.Program(ctx, "int f(void) { return 1; }")])
    with pytest.raises(cl.LogicError, match="CL_INVALID_LINKER_OPTIONS"):
        cl.link_program(ctx, [main], "-no-such-link-option")


def test_compile_reports_the_errors_of_its_unit(ctx):
    unit = cl.Program(ctx, "int helper(int);\n"
                           "__kernel void k(__global int *x) { x[0] = helper(x[0]) + nope; }\n")
    with pytest.raises(cl.RuntimeError, match="(?s)CL_COMPILE_PROGRAM_FAILURE.*:2:.*'nope'"):
        unit.compile()
    device = ctx.devices[0]
    assert unit.get_build_info(device, cl.program_build_info.STATUS) == cl.build_status.ERROR
    assert "nope" in unit.get_build_info(device, cl.program_build_info.LOG)


def test_kernel_arg_info_follows_the_compile_options_through_a_link(ctx):
    unit = cl.Program(ctx, "__kernel void k(__global int *data) { data[0] = 1; }")
    linked = cl.link_program(ctx, [unit.compile("-cl-kernel-arg-info")])
    assert linked.k.get_arg_info(0, cl.kernel_arg_info.NAME) == "data"


# ---------------------------------------------------------------------- build info

def test_build_info_per_device(ctx):
    device = ctx.devices[0]
    program = cl.Program(ctx, SOURCE)
    assert program.get_build_info(device, cl.program_build_info.STATUS) == cl.build_status.NONE
    assert program.get_build_info(device, cl.program_build_info.BINARY_TYPE) == \
        cl.program_binary_type.NONE
    program.build("-DX=1", devices=[device])
    assert program.get_build_info(device, cl.program_build_info.STATUS) == \
        cl.build_status.SUCCESS
    assert program.get_build_info(device, cl.program_build_info.OPTIONS) == "-DX=1"
    assert program.get_build_info(device, cl.program_build_info.LOG) == ""
    assert program.get_build_info(device, cl.program_build_info.BINARY_TYPE) == \
        cl.program_binary_type.EXECUTABLE
    bad = cl.Program(ctx, "__kernel void k(__global int *x) { x[0] = nope; }")
    with pytest.raises(cl.RuntimeError, match="CL_BUILD_PROGRAM_FAILURE"):
        bad.build()
    assert bad.get_build_info(device, cl.program_build_info.STATUS) == cl.build_status.ERROR
    assert "nope" in bad.get_build_info(device, cl.program_build_info.LOG)


def test_build_info_of_a_device_outside_the_program_is_invalid_device(ctx):
    others = [d for p in cl.get_platforms() for d in p.get_devices() if d not in ctx.devices]
    if not others:
        pytest.skip("one device only")
    program = cl.Program(ctx, SOURCE).build()
    with pytest.raises(cl.LogicError, match="CL_INVALID_DEVICE"):
        program.get_build_info(others[0], cl.program_build_info.STATUS)
    with pytest.raises(cl.LogicError, match="CL_INVALID_DEVICE"):
        program.blocked.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE,
                                            others[0])


def test_program_info_names_as_attributes(ctx):
    program = cl.Program(ctx, SOURCE).build()
    assert program.num_devices == len(ctx.devices)
    assert program.devices == ctx.devices
    assert program.num_kernels == 2
    assert program.binary_sizes == [len(b) for b in program.binaries]
    assert program.source == SOURCE


# ---------------------------------------------------------------------- kernels

def test_work_group_info(ctx):
    device = ctx.devices[0]
    program = cl.Program(ctx, SOURCE).build()
    blocked, apply = program.blocked, program.apply
    info = cl.kernel_work_group_info
    assert blocked.get_work_group_info(info.WORK_GROUP_SIZE, device) == 8
    assert blocked.get_work_group_info(info.COMPILE_WORK_GROUP_SIZE, device) == [8, 1, 1]
    assert blocked.get_work_group_info(info.LOCAL_MEM_SIZE, device) == 8 * 4
    blocked.set_arg(1, cl.LocalMemory(64))
    assert blocked.get_work_group_info(info.LOCAL_MEM_SIZE, device) == 8 * 4 + 64
    assert apply.get_work_group_info(info.WORK_GROUP_SIZE, device) == \
        device.max_work_group_size
    assert apply.get_work_group_info(info.COMPILE_WORK_GROUP_SIZE, device) == [0, 0, 0]
    multiple = apply.get_work_group_info(info.PREFERRED_WORK_GROUP_SIZE_MULTIPLE, device)
    assert multiple >= 1 and device.max_work_group_size % multiple == 0
    # pointers, the struct and the int i; blocked: three pointers, n and v
    assert apply.get_work_group_info(info.PRIVATE_MEM_SIZE, device) >= 8 + 8 + 8 + 4
    assert blocked.get_work_group_info(info.PRIVATE_MEM_SIZE, device) >= 3 * 8 + 4 + 16
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        apply.get_work_group_info(0x12345, device)


def test_arg_info_with_kernel_arg_info(ctx):
    kernel = cl.Program(ctx, SOURCE).build("-cl-kernel-arg-info").blocked
    arg = cl.kernel_arg_info
    address, access = cl.kernel_arg_address_qualifier, cl.kernel_arg_access_qualifier
    quals = cl.kernel_arg_type_qualifier
    expected = [("out", "int*", address.GLOBAL, quals.NONE),
                ("scratch", "int*", address.LOCAL, quals.NONE),
                ("c", "int*", address.CONSTANT, quals.CONST),
                ("n", "uint", address.PRIVATE, quals.NONE),
                ("v", "float4", address.PRIVATE, quals.NONE)]
    for index, (name, type_name, space, qualifier) in enumerate(expected):
        assert kernel.get_arg_info(index, arg.NAME) == name
        assert kernel.get_arg_info(index, arg.TYPE_NAME) == type_name
        assert kernel.get_arg_info(index, arg.ADDRESS_QUALIFIER) == space
        assert kernel.get_arg_info(index, arg.ACCESS_QUALIFIER) == access.NONE
        assert kernel.get_arg_info(index, arg.TYPE_QUALIFIER) == qualifier
    apply = cl.Program(ctx, SOURCE).build("-cl-kernel-arg-info").apply
    assert apply.get_arg_info(1, arg.TYPE_QUALIFIER) == quals.CONST | quals.RESTRICT
    assert apply.get_arg_info(2, arg.TYPE_NAME) == "struct params"
    with pytest.raises(cl.LogicError, match="CL_INVALID_ARG_INDEX"):
        kernel.get_arg_info(5, arg.NAME)


def test_arg_names_and_types_need_kernel_arg_info(ctx):
    kernel = cl.Program(ctx, SOURCE).build().blocked
    arg = cl.kernel_arg_info
    for param in (arg.NAME, arg.TYPE_NAME):
        with pytest.raises(cl.Error, match="CL_KERNEL_ARG_INFO_NOT_AVAILABLE"):
            kernel.get_arg_info(0, param)
    assert kernel.get_arg_info(2, arg.ADDRESS_QUALIFIER) == \
        cl.kernel_arg_address_qualifier.CONSTANT
