"""Programs and kernels: builds, logs, arguments, NDRange checks and launches on the CPU."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ppcl as cl
from ppcl import cltypes

mf = cl.mem_flags

SOURCE = """
__kernel void scale(__global float *x, float factor, int n)
{
    int i = get_global_id(0);
    if (i < n) x[i] *= factor;
}

__kernel void ids(__global int *out)
{
    size_t i = get_global_id(0) + get_global_size(0) * get_global_id(1);
    out[i] = (int)(get_global_id(0) * 1000 + get_global_id(1) * 10
                   + (get_local_id(0) == get_global_id(0) % get_local_size(0)));
}

__kernel void offsets(__global int *out)
{
    out[get_global_id(0) - get_global_offset(0)] = (int)get_global_id(0);
}

__kernel void add4(__global float4 *x, float4 delta)
{
    x[get_global_id(0)] += delta;
}

__kernel void maybe_null(__global int *x, __global int *flag)
{
    if (flag) flag[0] = 1;
    x[get_global_id(0)] = flag ? 2 : 3;
}

__kernel void reverse_in_group(__global const int *in, __global int *out, __local int *tmp)
{
    size_t l = get_local_id(0), n = get_local_size(0);
    tmp[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tmp[n - 1 - l];
}

__kernel __attribute__((reqd_work_group_size(8, 1, 1)))
void fixed(__global int *out)
{
    out[get_global_id(0)] = (int)get_local_size(0);
}
"""


@pytest.fixture(scope="module")
def prg(ctx):
    return cl.Program(ctx, SOURCE).build()


def test_scalar_args_and_kernel_attribute_access(ctx, queue, prg):
    x = np.arange(100, dtype=np.float32)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x)
    knl = prg.scale
    assert prg.scale is not knl  # a fresh Kernel per access, as PyOpenCL
    assert knl.function_name == "scale" and knl.num_args == 3
    assert knl.get_info(cl.kernel_info.FUNCTION_NAME) == "scale"
    event = knl(queue, (128,), (32,), buf, np.float32(2), np.int32(100))
    assert isinstance(event, cl.Event)
    out = np.empty_like(x)
    cl.enqueue_copy(queue, out, buf)
    np.testing.assert_array_equal(out, 2 * x)


def test_two_dimensional_ids_and_chosen_local_size(ctx, queue, prg):
    out = np.zeros((6, 64), np.int32)
    buf = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    prg.ids(queue, (64, 6), None, buf)
    cl.enqueue_copy(queue, out, buf)
    gx, gy = np.meshgrid(np.arange(64), np.arange(6))
    np.testing.assert_array_equal(out // 10, gx * 100 + gy)
    assert (out % 10 == 1).all()
    prg.ids(queue, (64, 6), (16, 2), buf)
    cl.enqueue_copy(queue, out, buf)
    np.testing.assert_array_equal(out, gx * 1000 + gy * 10 + 1)


def test_global_offset(ctx, queue, prg):
    buf = cl.Buffer(ctx, mf.WRITE_ONLY, 16 * 4)
    prg.offsets(queue, (16,), (4,), buf, global_offset=(100,))
    out = np.empty(16, np.int32)
    cl.enqueue_copy(queue, out, buf)
    np.testing.assert_array_equal(out, np.arange(100, 116))


def test_vector_args_from_cltypes(ctx, queue, prg):
    x = np.zeros(8, cltypes.float4)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x)
    prg.add4(queue, (8,), None, buf, cltypes.make_float4(1, 2, 3, 4))
    cl.enqueue_copy(queue, x, buf)
    assert x[3]["x"] == 1 and x[3]["w"] == 4


def test_none_for_null_buffers(ctx, queue, prg):
    x = cl.Buffer(ctx, mf.READ_WRITE, 4 * 4)
    flag = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(1, np.int32))
    out = np.empty(4, np.int32)
    prg.maybe_null(queue, (4,), None, x, None)
    cl.enqueue_copy(queue, out, x)
    assert (out == 3).all()
    prg.maybe_null(queue, (4,), None, x, flag)
    cl.enqueue_copy(queue, out, x)
    assert (out == 2).all()


def test_local_memory_argument(ctx, queue, prg):
    data = np.arange(64, dtype=np.int32)
    src = cl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf=data)
    dst = cl.Buffer(ctx, mf.WRITE_ONLY, data.nbytes)
    knl = cl.Kernel(prg, "reverse_in_group")
    knl.set_args(src, dst, cl.LocalMemory(16 * 4))
    cl.enqueue_nd_range_kernel(queue, knl, (64,), (16,))
    out = np.empty_like(data)
    cl.enqueue_copy(queue, out, dst)
    np.testing.assert_array_equal(out, data.reshape(4, 16)[:, ::-1].ravel())
    assert knl.get_work_group_info(cl.kernel_work_group_info.LOCAL_MEM_SIZE,
                                   ctx.devices[0]) >= 64


def test_reqd_work_group_size(ctx, queue, prg):
    buf = cl.Buffer(ctx, mf.WRITE_ONLY, 32 * 4)
    prg.fixed(queue, (32,), None, buf)
    out = np.empty(32, np.int32)
    cl.enqueue_copy(queue, out, buf)
    assert (out == 8).all()
    knl = prg.fixed
    dev = ctx.devices[0]
    assert knl.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, dev) == 8
    assert knl.get_work_group_info(cl.kernel_work_group_info.COMPILE_WORK_GROUP_SIZE,
                                   dev) == [8, 1, 1]
    with pytest.raises(cl.LogicError, match="CL_INVALID_WORK_GROUP_SIZE"):
        knl(queue, (32,), (16,), buf)


def test_reqd_work_group_size_not_dividing_global_size_names_the_attribute(ctx, queue, prg):
    # with local size None the required size is used; when it does not divide the global size
    # (no non-uniform groups in OpenCL 1.2) the error says the size came from the attribute
    buf = cl.Buffer(ctx, mf.WRITE_ONLY, 12 * 4)
    with pytest.raises(cl.LogicError, match=r"CL_INVALID_WORK_GROUP_SIZE.*'fixed' requires "
                       r"the work-group size \(8, 1, 1\) \(reqd_work_group_size\).*\(12, 1, 1\)"):
        prg.fixed(queue, (12,), None, buf)


def test_work_group_info(ctx, prg):
    dev = ctx.devices[0]
    knl = prg.scale
    assert knl.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, dev) == \
        dev.max_work_group_size
    multiple = knl.get_work_group_info(
        cl.kernel_work_group_info.PREFERRED_WORK_GROUP_SIZE_MULTIPLE, dev)
    assert multiple >= 1
    assert knl.get_work_group_info(cl.kernel_work_group_info.LOCAL_MEM_SIZE, dev) == 0
    named = cl.Program(prg.context, prg.source).build("-cl-kernel-arg-info").scale
    assert named.get_arg_info(1, cl.kernel_arg_info.NAME) == "factor"
    assert knl.get_arg_info(0, cl.kernel_arg_info.ADDRESS_QUALIFIER) == \
        cl.kernel_arg_address_qualifier.GLOBAL


def test_arg_type_name_of_a_typedef_named_struct(ctx, queue):
    # 'typedef struct {...} S' is named S, as declared, in the argument's type name and in
    # argument errors; both said 'struct __anon_struct_0', a name of ppcl's own
    src = """typedef struct { int a; float b; } S;
    typedef union { int i; float f; } U;
    struct named { int n; };
    __kernel void k(__global S *p, S s, U u, struct named n) { p[0] = s; }"""
    knl = cl.Program(ctx, src).build("-cl-kernel-arg-info").k
    names = [knl.get_arg_info(i, cl.kernel_arg_info.TYPE_NAME) for i in range(4)]
    assert names == ["S*", "S", "U", "struct named"]
    buf = cl.Buffer(ctx, mf.READ_WRITE, 8)
    with pytest.raises(cl.LogicError, match="of type 'S'.* takes 8 bytes, got 4"):
        knl(queue, (1,), None, buf, np.int32(1), np.int32(0), np.int32(0))


def test_arg_type_name_keeps_typedef_spelling(ctx):
    # an argument's type name is spelt as the kernel declares it, through typedefs, as other
    # OpenCL compilers report it ('vec_t*', not 'float4*'); the target of a typedef'd pointer
    # is named by its own type, and that pointer is a valid __global kernel argument
    src = """typedef float4 vec_t;
    typedef vec_t vec2_t;
    typedef unsigned int count_t;
    typedef __global float *gptr;
    __kernel void k(__global vec_t *p, __local vec2_t *l, const count_t n, gptr g,
                    __global count_t c[], unsigned int u) { }"""
    knl = cl.Program(ctx, src).build("-cl-kernel-arg-info").k
    names = [knl.get_arg_info(i, cl.kernel_arg_info.TYPE_NAME) for i in range(6)]
    assert names == ["vec_t*", "vec2_t*", "count_t", "float*", "count_t*", "uint"]
    assert knl.get_arg_info(3, cl.kernel_arg_info.ADDRESS_QUALIFIER) == \
        cl.kernel_arg_address_qualifier.GLOBAL


def test_kernel_attributes_lists_every_kernel_attribute(ctx):
    # CL_KERNEL_ATTRIBUTES named only reqd_work_group_size; the hints were left out
    src = """__kernel __attribute__((vec_type_hint(float4)))
    __attribute__((work_group_size_hint(8, 1, 1))) void hinted(__global float *a) { }
    __kernel __attribute__((reqd_work_group_size(4, 2, 1))) void fixed(__global float *a) { }
    __kernel void plain(__global float *a) { }"""
    prg = cl.Program(ctx, src).build()
    attributes = {k.function_name: k.get_info(cl.kernel_info.ATTRIBUTES)
                  for k in prg.all_kernels()}
    assert attributes == {"hinted": "work_group_size_hint(8,1,1) vec_type_hint(float4)",
                          "fixed": "reqd_work_group_size(4,2,1)", "plain": ""}


def test_all_kernels_and_unknown_names(prg):
    names = {k.function_name for k in prg.all_kernels()}
    assert {"scale", "ids", "add4", "fixed"} <= names
    assert prg.get_info(cl.program_info.NUM_KERNELS) == len(names)
    with pytest.raises(AttributeError):
        prg.no_such_kernel  # noqa: B018
    with pytest.raises(cl.LogicError, match="CL_INVALID_KERNEL_NAME"):
        cl.Kernel(prg, "no_such_kernel")


def test_argument_errors(ctx, queue, prg):
    buf = cl.Buffer(ctx, mf.READ_WRITE, 64 * 4)
    with pytest.raises(cl.LogicError, match="CL_INVALID_KERNEL_ARGS"):
        prg.scale(queue, (64,), None, buf, np.float32(1))
    with pytest.raises(cl.LogicError, match="CL_INVALID_KERNEL_ARGS"):
        prg.scale(queue, (64,), None)
    with pytest.raises(cl.LogicError, match=r"np\.int32\(5\)"):
        prg.scale(queue, (64,), None, buf, np.float32(1), 5)
    with pytest.raises(cl.LogicError, match="numpy scalars"):
        prg.scale(queue, (64,), None, buf, 1.5, np.int32(5))
    with pytest.raises(cl.LogicError, match="CL_INVALID_ARG_SIZE"):
        prg.scale(queue, (64,), None, buf, np.float64(1), np.int32(5))
    with pytest.raises(cl.LogicError, match="CL_INVALID_ARG_VALUE"):
        prg.scale(queue, (64,), None, buf, np.int32(1), np.int32(5))
    with pytest.raises(cl.LogicError, match="CL_INVALID_MEM_OBJECT"):
        prg.scale(queue, (64,), None, np.zeros(4), np.float32(1), np.int32(5))
    with pytest.raises(cl.LogicError, match="CL_INVALID_ARG_VALUE"):
        prg.reverse_in_group(queue, (64,), None, buf, buf, buf)
    knl = prg.scale
    with pytest.raises(cl.LogicError, match="CL_INVALID_ARG_INDEX"):
        knl.set_arg(3, np.int32(0))
    with pytest.raises(cl.LogicError, match="CL_INVALID_KERNEL_ARGS"):
        cl.enqueue_nd_range_kernel(queue, knl, (64,), None)
    knl.set_scalar_arg_dtypes([None, np.float32, np.int32])
    knl(queue, (64,), None, buf, 2.0, 64)


def test_scalar_arg_dtypes_convert_without_losing_values(ctx, queue, prg):
    """With set_scalar_arg_dtypes, a tuple becomes the vector dtype given, and a fraction
    for an integer or a number outside its range is CL_INVALID_ARG_VALUE: 4.5 became 4
    silently, -1 for a uint raised numpy's OverflowError and a tuple was refused."""
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.ones(8, np.float32))
    knl = cl.Kernel(prg, "add4")
    knl.set_scalar_arg_dtypes([None, cltypes.float4])
    knl(queue, (2,), None, buf, (1, 2, 3, 4))
    out = np.empty(8, np.float32)
    cl.enqueue_copy(queue, out, buf)
    assert out.tolist() == [2, 3, 4, 5] * 2
    scale = cl.Kernel(prg, "scale")
    scale.set_scalar_arg_dtypes([None, np.float32, np.int32])
    scale(queue, (8,), None, buf, 0.5, 4.0)  # an integral float is the integer
    for n, why in ((4.5, "not an integer"), (2**40, "out of bounds")):
        with pytest.raises(cl.LogicError, match=f"CL_INVALID_ARG_VALUE.*'n'.*{why}"):
            scale(queue, (8,), None, buf, 0.5, n)


def test_work_size_errors(ctx, queue, prg):
    buf = cl.Buffer(ctx, mf.READ_WRITE, 64 * 4)
    args = (buf, np.float32(1), np.int32(64))
    with pytest.raises(cl.LogicError, match="CL_INVALID_WORK_GROUP_SIZE"):
        prg.scale(queue, (64,), (7,), *args)
    with pytest.raises(cl.LogicError, match="CL_INVALID_WORK_GROUP_SIZE"):
        prg.scale(queue, (8192,), (8192,), *args)
    with pytest.raises(cl.LogicError, match="CL_INVALID_WORK_DIMENSION"):
        prg.scale(queue, (1, 1, 1, 1), None, *args)
    # an empty NDRange: OpenCL 1.2's error, saying how to launch nothing on purpose
    with pytest.raises(cl.LogicError, match="CL_INVALID_GLOBAL_WORK_SIZE.*allow_empty_ndrange"):
        prg.scale(queue, (0,), None, *args)
    with pytest.raises(cl.LogicError, match="entry 1 is 0.*allow_empty_ndrange"):
        prg.scale(queue, (4, 0), (1, 1), *args)
    prg.scale(queue, (0,), None, *args, allow_empty_ndrange=True).wait()


def test_build_failure_reports_located_diagnostics(ctx):
    bad = cl.Program(ctx, "__kernel void k(__global int *x)\n{\n    x[0] = undefined_name;\n}\n")
    with pytest.raises(cl.RuntimeError) as info:
        bad.build()
    text = str(info.value)
    assert "CL_BUILD_PROGRAM_FAILURE" in text
    assert "undefined_name" in text and ":3:" in text
    log = bad.get_build_info(ctx.devices[0], cl.program_build_info.LOG)
    assert "undefined_name" in log
    assert bad.get_build_info(ctx.devices[0], cl.program_build_info.STATUS) == \
        cl.build_status.ERROR


def test_build_options_as_list_and_invalid_options(ctx, queue):
    src = "__kernel void k(__global int *x) { x[get_global_id(0)] = VALUE * 2; }"
    prg = cl.Program(ctx, src).build(options=["-D", "VALUE=21"])
    dev = ctx.devices[0]
    assert prg.get_build_info(dev, cl.program_build_info.STATUS) == cl.build_status.SUCCESS
    assert "VALUE=21" in prg.get_build_info(dev, cl.program_build_info.OPTIONS)
    buf = cl.Buffer(ctx, mf.READ_WRITE, 16)
    prg.k(queue, (4,), None, buf)
    out = np.empty(4, np.int32)
    cl.enqueue_copy(queue, out, buf)
    assert (out == 42).all()
    with pytest.raises(cl.LogicError, match="CL_INVALID_BUILD_OPTIONS"):
        cl.Program(ctx, src).build(options="-cl-no-such-option")


def test_unload_platform_compiler_then_build_again(ctx, queue):
    """clUnloadPlatformCompiler is OpenCL 1.2: a hint that takes the platform; programs build
    after it as before."""
    source = "__kernel void twice(__global int *a) { a[get_global_id(0)] *= 2; }"
    cl.Program(ctx, source).build()
    cl.unload_platform_compiler(ctx.devices[0].platform)
    a = np.arange(4, dtype=np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
    cl.Program(ctx, source).build().twice(queue, (4,), None, buf)
    cl.enqueue_copy(queue, a, buf)
    np.testing.assert_array_equal(a, [0, 2, 4, 6])
    with pytest.raises(cl.LogicError, match="CL_INVALID_PLATFORM"):
        cl.unload_platform_compiler(ctx)


def test_compile_with_headers_and_link(ctx, queue):
    header = cl.Program(ctx, "#define SCALE 3\nint triple(int v);\n")
    lib = cl.Program(ctx, '#include "scale.h"\nint triple(int v) { return v * SCALE; }\n')
    main = cl.Program(ctx, '#include "scale.h"\n'
                           "__kernel void k(__global int *x)"
                           " { x[get_global_id(0)] = triple((int)get_global_id(0)); }\n")
    lib.compile(headers=[("scale.h", header)])
    main.compile(headers=[("scale.h", header)])
    linked = cl.link_program(ctx, [lib, main])
    buf = cl.Buffer(ctx, mf.READ_WRITE, 8 * 4)
    linked.k(queue, (8,), None, buf)
    out = np.empty(8, np.int32)
    cl.enqueue_copy(queue, out, buf)
    np.testing.assert_array_equal(out, 3 * np.arange(8))
    with pytest.raises(cl.LogicError):
        cl.link_program(ctx, [cl.Program(ctx, "int f(void) { return 1; }")])


def test_extern_function_declarations_link_across_units(ctx, queue):
    """'extern' on a function prototype (OpenCL C 1.2, 6.8) declares a kernel or function that
    another unit defines; it was refused as if every 'extern' named a variable."""
    header = cl.Program(ctx, "extern __kernel void fill(__global int *x, int v);\n"
                             "extern int twice(int v);\n")
    caller = cl.Program(ctx, '#include "decls/fill.h"\n'
                             "__kernel void run(__global int *x) { fill(x, twice(21)); }\n")
    callee = cl.Program(ctx, "__kernel void fill(__global int *x, int v)"
                             " { x[get_global_id(0)] = v + (int)get_global_id(0); }\n"
                             "extern int twice(int v) { return 2 * v; }\n")
    caller.compile(headers=[("decls/fill.h", header)])
    library = cl.link_program(ctx, [callee.compile()], "-create-library")
    linked = cl.link_program(ctx, [caller, library])
    buf = cl.Buffer(ctx, mf.READ_WRITE, 4 * 4)
    linked.run(queue, (4,), None, buf)
    out = np.empty(4, np.int32)
    cl.enqueue_copy(queue, out, buf)
    np.testing.assert_array_equal(out, 42 + np.arange(4))
    with pytest.raises(cl.RuntimeError, match="'extern' variables are not supported"):
        cl.Program(ctx, "extern constant int n;\n__kernel void k(__global int *x) { *x = n; }\n"
                   ).build()


def test_kernel_args_are_snapshotted_at_enqueue(ctx, prg):
    queue = cl.CommandQueue(ctx)
    x = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.ones(16, np.float32))
    gate = cl.UserEvent(ctx)
    knl = prg.scale
    knl(queue, (16,), None, x, np.float32(3), np.int32(16), wait_for=[gate])
    knl.set_arg(1, np.float32(100))
    gate.set_status(cl.command_execution_status.COMPLETE)
    out = np.empty(16, np.float32)
    cl.enqueue_copy(queue, out, x)
    assert (out == 3).all()


def test_vector_add_example_runs():
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PPCL_CTX": "0:0"}
    result = subprocess.run([sys.executable, str(root / "examples" / "vector_add.py")],
                            capture_output=True, text=True, env=env, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "0.0"


def test_global_ids_beyond_int_max_use_a_wide_build(ctx, queue):
    src = """__kernel void ids(__global int *out, ulong base) {
        int i = get_global_id(0);
        out[get_global_id(0) - base] = i;
    }"""
    prg = cl.Program(ctx, src).build()
    offset = 2**31 + 5
    buf = cl.Buffer(ctx, mf.WRITE_ONLY, 16 * 4)
    prg.ids(queue, (16,), (8,), buf, np.uint64(offset), global_offset=(offset,))
    out = np.empty(16, np.int32)
    cl.enqueue_copy(queue, out, buf)
    np.testing.assert_array_equal(out, (np.arange(16, dtype=np.int64) + offset).astype(np.int32))


def test_kernels_of_one_name_share_launches_and_a_rebuild_drops_them(ctx, queue) -> None:
    """``prg.name(...)`` makes a new Kernel each call: its launches are the program's, kept
    per kernel name, and a new build of the program launches the new code."""
    program = cl.Program(ctx, "__kernel void k(__global int *x) { x[get_global_id(0)] = V; }")
    program.build("-DV=1")
    first, second = program.k, program.k
    assert first is not second and first._launches is second._launches
    out = np.zeros(8, np.int32)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=out)
    for value in (1, 2):
        if value == 2:
            program.build("-DV=2")
        program.k(queue, (8,), (4,), buf)
        cl.enqueue_copy(queue, out, buf)
        assert (out == value).all()


def test_local_memory_past_the_device_fails_each_launch_that_needs_it(ctx, queue) -> None:
    """The local-memory check is skipped only for the launch and arguments it passed last."""
    program = cl.Program(ctx, """__kernel void k(__global float *x, __local float *t) {
        t[get_local_id(0)] = 1.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        x[get_global_id(0)] = t[0];
    }""").build()
    kernel = program.k
    buf = cl.Buffer(ctx, mf.READ_WRITE, 4 * 8)
    too_much = queue.device.local_mem_size + 4
    for nbytes in (too_much, 16, too_much, 16):
        kernel.set_args(buf, cl.LocalMemory(nbytes))
        if nbytes == too_much:
            with pytest.raises(cl.Error, match=r"OUT_OF_RESOURCES.*needs \d+ bytes") as info:
                cl.enqueue_nd_range_kernel(queue, kernel, (8,), (4,))
            # the argument's bytes, and any the device keeps in local memory for itself
            needed = re.search(r"needs (\d+) bytes", str(info.value))
            assert needed and int(needed.group(1)) >= too_much
        else:
            cl.enqueue_nd_range_kernel(queue, kernel, (8,), (4,))
    queue.finish()


def test_repeated_arguments_are_checked_like_new_ones(ctx, queue, prg) -> None:
    """set_args keeps what it already holds for the same live buffer or the same numpy scalar
    bytes; a changed value, another dtype or a released buffer is seen as before."""
    x = np.arange(64, dtype=np.float32)
    a = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x)
    b = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x)
    knl = prg.scale
    expected_a, expected_b = x.copy(), x.copy()
    for k, n in [(2, 64), (2, 64), (3, 32), (3, 64), (0.5, 16)]:
        knl(queue, (64,), None, a, np.float32(k), np.int32(n))
        expected_a[:n] *= np.float32(k)
    knl(queue, (64,), None, b, np.float32(4), np.int32(8))  # a buffer in place of another
    expected_b[:8] *= 4
    for buf, expected in [(a, expected_a), (b, expected_b)]:
        out = np.empty_like(x)
        cl.enqueue_copy(queue, out, buf)
        np.testing.assert_array_equal(out, expected)
    with pytest.raises(cl.LogicError, match="CL_INVALID_ARG_SIZE"):
        knl(queue, (64,), None, b, np.float32(1), np.int64(8))
    with pytest.raises(cl.LogicError, match="CL_INVALID_ARG_VALUE"):
        knl(queue, (64,), None, b, np.int32(1), np.int32(8))
    b.release()
    with pytest.raises(cl.LogicError, match="CL_INVALID_MEM_OBJECT"):
        knl(queue, (64,), None, b, np.float32(4), np.int32(8))
    with pytest.raises(cl.LogicError, match="CL_INVALID_MEM_OBJECT"):
        knl.set_arg(0, b)


def test_local_memory_of_the_same_size_keeps_the_argument_tuple(ctx, queue):
    """``LocalMemory(n)`` made anew at every call, as published host code does, is the argument
    already set: the tuple the device keyed its packed arguments on stays, so a repeated launch
    packs nothing again; another size is a new argument."""
    from ppcl.runtime.kernel import _arg_values

    kernel = cl.Program(ctx, """
        __kernel void rev(__global float *x, __local float *s) {
            int l = get_local_id(0), n = get_local_size(0), g = get_group_id(0) * n;
            s[l] = x[g + l];
            barrier(CLK_LOCAL_MEM_FENCE);
            x[g + l] = s[n - 1 - l];
        }""").build().rev
    data = np.arange(64, dtype=np.float32)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data)
    kernel(queue, (64,), (16,), buf, cl.LocalMemory(16 * 4))
    kept = _arg_values(kernel)
    kernel(queue, (64,), (16,), buf, cl.LocalMemory(16 * 4))
    assert _arg_values(kernel) is kept
    kernel(queue, (64,), (32,), buf, cl.LocalMemory(32 * 4))
    assert _arg_values(kernel) is not kept
    out = np.empty_like(data)
    cl.enqueue_copy(queue, out, buf)
    # reversed within groups of 16 twice (back to the start), then within groups of 32
    np.testing.assert_array_equal(out, data.reshape(-1, 32)[:, ::-1].reshape(-1))


def test_a_call_without_a_queue_names_the_queue(ctx, queue, prg):
    # a kernel call whose first argument was not a queue failed with AttributeError
    # ('NoneType' object has no attribute 'context'); a wait_for of one event with TypeError
    buf = cl.Buffer(ctx, mf.READ_WRITE, 64 * 4)
    args = (buf, np.float32(1), np.int32(64))
    for not_a_queue in (None, ctx):
        with pytest.raises(cl.LogicError, match="CL_INVALID_COMMAND_QUEUE"):
            prg.scale(not_a_queue, (64,), None, *args)
    with pytest.raises(cl.LogicError, match="CL_INVALID_CONTEXT"):
        cl.CommandQueue(None)
    marker = cl.enqueue_marker(queue)
    with pytest.raises(cl.LogicError, match=r"CL_INVALID_EVENT_WAIT_LIST.*wait_for=\[event\]"):
        prg.scale(queue, (64,), None, *args, wait_for=marker)


def test_program_source_as_bytes(ctx, queue):
    # PyOpenCL builds Program(ctx, source.encode()); ppcl took the bytes for binaries
    prg = cl.Program(ctx, SOURCE.encode()).build()
    assert "scale" in prg.kernel_names.split(";")
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE.*UTF-8"):
        cl.Program(ctx, b"\xff\xfe kernel")
    with pytest.raises(cl.LogicError, match="CL_INVALID_CONTEXT"):
        cl.Program(None, SOURCE)


def test_arguments_of_the_wrong_type_raise_opencl_errors(ctx, queue, prg):
    # each of these was an AttributeError or TypeError from inside ppcl, or (LocalMemory(1.5))
    # silently truncated
    with pytest.raises(cl.LogicError, match="CL_INVALID_KERNEL"):
        cl.enqueue_nd_range_kernel(queue, "scale", (4,), None)
    with pytest.raises(cl.LogicError, match="CL_INVALID_PROGRAM"):
        cl.Kernel(None, "scale")
    knl = cl.Kernel(prg, "scale")
    for index in ("0", 1.0):
        with pytest.raises(cl.LogicError, match="CL_INVALID_ARG_INDEX"):
            knl.set_arg(index, np.float32(1))
    knl.set_arg(np.int64(1), np.float32(1))
    for size in (1.5, "16"):
        with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
            cl.LocalMemory(size)
    with pytest.raises(cl.LogicError, match="CL_INVALID_BUILD_OPTIONS"):
        cl.Program(ctx, SOURCE).build(options=123)


def test_enqueue_nd_range_kernel_takes_g_times_l_and_allow_empty_ndrange_by_position(ctx, queue,
                                                                                     prg):
    # PyOpenCL's enqueue_nd_range_kernel takes them by position too
    data = np.ones(64, np.float32)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data)
    knl = prg.scale
    knl.set_args(buf, np.float32(2), np.int32(64))
    cl.enqueue_nd_range_kernel(queue, knl, (4,), (16,), None, None, True).wait()
    empty = cl.enqueue_nd_range_kernel(queue, knl, (0,), None, None, None, False, True)
    empty.wait()
    out = np.empty_like(data)
    cl.enqueue_copy(queue, out, buf)
    np.testing.assert_array_equal(out, 2 * data)  # 4 groups of 16: all 64 items, once


def test_a_call_after_set_args_sets_its_own_arguments_again(ctx, queue, prg) -> None:
    """A call passing the objects of the call before it, after ``set_args`` set others, runs
    with the call's arguments: the record of the last call no longer stands for what is set
    (the launch ran with set_args' values)."""
    x = np.ones(16, dtype=np.float32)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x)
    two, sixteen = np.float32(2), np.int32(16)
    knl = prg.scale
    knl(queue, (16,), None, buf, two, sixteen)
    knl.set_args(buf, np.float32(5), sixteen)
    knl(queue, (16,), None, buf, two, sixteen)
    out = np.empty_like(x)
    cl.enqueue_copy(queue, out, buf)
    np.testing.assert_array_equal(out, np.full(16, 4, dtype=np.float32))


def test_calls_changing_some_arguments_repack_only_those(ctx, queue, prg) -> None:
    """A host loop passing a new scalar at every call, now and then another buffer or a
    value without a record (bytes): each launch runs with the arguments of its own call, and
    an argument that fails leaves those set before the call."""
    from ppcl.runtime.kernel import _arg_values

    x = np.arange(32, dtype=np.float32)
    a = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x)
    b = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x)
    knl = prg.scale
    expected = {"a": x.copy(), "b": x.copy()}
    n = np.int32(32)
    steps = [("a", 2.0, n), ("a", 3.0, n), ("b", 0.5, n), ("b", 4.0, np.int32(8)),
             ("a", 1.5, np.int32(8).tobytes()), ("a", 2.0, n), ("b", 2.0, n)]
    for name, factor, count in steps:
        knl(queue, (32,), None, a if name == "a" else b, np.float32(factor), count)
        limit = int(np.frombuffer(count, np.int32)[0]) if isinstance(count, bytes) else int(count)
        expected[name][:limit] *= np.float32(factor)
    kept = _arg_values(knl)
    refs = knl._arg_buffers
    knl(queue, (32,), None, b, np.float32(3), n)  # a new scalar alone: the references stay
    expected["b"] *= 3
    assert knl._arg_buffers is refs
    kept = _arg_values(knl)
    with pytest.raises(cl.LogicError, match="CL_INVALID_ARG_SIZE"):
        knl(queue, (32,), None, b, np.float32(7), np.int64(8))
    assert _arg_values(knl) is kept
    knl(queue, (32,), None, a, np.float32(3), n)
    expected["a"] *= 3
    for buf, name in [(a, "a"), (b, "b")]:
        out = np.empty_like(x)
        cl.enqueue_copy(queue, out, buf)
        np.testing.assert_array_equal(out, expected[name])


def test_kernel_named_with_a_leading_underscore_is_an_attribute(ctx, queue):
    """Code generators name kernels ``_kernel_f_s0...``; the program finds them by attribute
    as by ``cl.Kernel``, while a private name it does not hold stays an AttributeError."""
    program = cl.Program(ctx, """
    __kernel void _generated_fill(__global int *out) { out[get_global_id(0)] = 7; }
    """).build()
    out = np.zeros(4, np.int32)
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=out)
    program._generated_fill(queue, (4,), None, buf)
    cl.enqueue_copy(queue, out, buf)
    np.testing.assert_array_equal(out, 7)
    with pytest.raises(AttributeError):
        program._not_a_kernel  # noqa: B018
