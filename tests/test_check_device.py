"""The checking device (``ppcl/devices/check``): the bugs it finds, where, and that correct
kernels (the corpus, every benchmark kernel, the second suite) give no finding and the right
results.

The corpus ``tests/check_corpus`` holds one kernel a file, with a header:

    // expect: data-race 12          (the finding class and line; ``none`` for a correct kernel)
    // launch: 64 16                 (global and local size; ``8,8 4,4`` in 2-D)
    // args: float*64 local=256 int=3

Arguments: ``T*N`` a ``__global`` buffer of N random values of type T (``float4*N`` holds N
float4), ``T*N=v`` one filled with v, ``local=B`` B bytes of ``__local`` memory, ``T=v`` a
value of scalar type T.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from oracle import LocalMem, Shape, check_context, cpu_context, launch

import ppcl as cl
from ppcl.devices.check import FINDING_CLASSES
from tests.child_env import child_env

CORPUS = Path(__file__).parent / "check_corpus"
FILES = sorted(p.name for p in CORPUS.glob("*.cl"))
BUGGY = [name for name in FILES if name.startswith("bug_")]
CORRECT = [name for name in FILES if name.startswith("ok_")]

_DTYPES = {"float": np.float32, "double": np.float64, "int": np.int32, "uint": np.uint32,
           "char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
           "long": np.int64, "ulong": np.uint64}


def _header(text: str, key: str) -> str:
    match = re.search(rf"^// {key}: (.*)$", text, re.MULTILINE)
    assert match, f"corpus kernel without a '// {key}:' line"
    return match.group(1).strip()


def _sizes(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(","))


def _arg(spec: str, rng: np.random.Generator) -> Any:
    if spec.startswith("local="):
        return LocalMem(int(spec[6:]))
    if "*" in spec:
        kind, _, rest = spec.partition("*")
        count_text, _, fill = rest.partition("=")
        width_match = re.fullmatch(r"([a-z]+?)(2|3|4|8|16)?", kind)
        assert width_match
        base, width = width_match.group(1), int(width_match.group(2) or 1)
        count = int(count_text) * (4 if width == 3 else width)
        dtype = np.dtype(_DTYPES[base])
        if fill:
            return np.full(count, fill, dtype)
        if dtype.kind == "f":
            return rng.random(count).astype(dtype)
        return rng.integers(0, 10, count).astype(dtype)
    kind, _, value = spec.partition("=")
    return np.dtype(_DTYPES[kind]).type(value)


def run_corpus_kernel(name: str) -> tuple[str, list[Any]]:
    """The expectation of a corpus kernel and the findings of its launch."""
    text = (CORPUS / name).read_text(encoding="utf-8")
    expect = _header(text, "expect")
    global_text, local_text = _header(text, "launch").split()
    rng = np.random.default_rng(0)
    args = [_arg(spec, rng) for spec in _header(text, "args").split()]
    kernel = re.search(r"__kernel\s+void\s+(\w+)", text)
    assert kernel
    shape = Shape(_sizes(global_text), _sizes(local_text))
    try:
        launch(check_context(), text, kernel.group(1), shape, args)
    except cl.KernelCheckError as error:
        return expect, error.findings
    return expect, []


def test_corpus_size() -> None:
    assert len(BUGGY) >= 30
    assert len(CORRECT) >= 25
    kinds = {(CORPUS / name).read_text().split("expect: ")[1].split()[0] for name in BUGGY}
    assert kinds == set(FINDING_CLASSES) - {"released-memory"}


@pytest.mark.parametrize("name", BUGGY)
def test_buggy_kernel_is_reported_at_its_line(name: str) -> None:
    expect, findings = run_corpus_kernel(name)
    kind, line = expect.split()
    assert findings, f"{name}: no finding"
    found = [(f.kind, f.line) for f in findings]
    assert (kind, int(line)) in found, f"{name}: expected {kind} at line {line}, got {found}"


@pytest.mark.parametrize("name", CORRECT)
def test_correct_kernel_has_no_finding(name: str) -> None:
    expect, findings = run_corpus_kernel(name)
    assert expect == "none"
    assert findings == [], "\n".join(str(f) for f in findings)


@pytest.mark.parametrize("name", CORRECT)
def test_correct_kernel_matches_the_cpu_device(name: str) -> None:
    text = (CORPUS / name).read_text(encoding="utf-8")
    if "// order-dependent" in text:
        pytest.skip("results depend on the order atomics run in")
    global_text, local_text = _header(text, "launch").split()
    shape = Shape(_sizes(global_text), _sizes(local_text))
    kernel = re.search(r"__kernel\s+void\s+(\w+)", text)
    assert kernel
    args = [_arg(spec, np.random.default_rng(3)) for spec in _header(text, "args").split()]
    checked = launch(check_context(), text, kernel.group(1), shape, args)
    compiled = launch(cpu_context(), text, kernel.group(1), shape, args)
    for want, have in zip(checked, compiled):
        if want.dtype.kind == "f":
            np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(have, want)


# ---------------------------------------------------------------- the benchmark kernels


@pytest.mark.parametrize("case_name", sorted(__import__("ppcl.bench_kernels").bench_kernels.CASES))
def test_benchmark_kernels_check_clean_and_match_numpy(case_name: str) -> None:
    from ppcl.bench_kernels import make_case
    from ppcl.bench_source import SOURCE

    context = check_context()
    queue = cl.CommandQueue(context)
    program = cl.Program(context, SOURCE).build()
    case = make_case(case_name, "small", np.random.default_rng(0))
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    buffers = {name: cl.Buffer(context, flags, hostbuf=np.ascontiguousarray(array))
               for name, array in case.inputs.items()}
    for name, (shape, dtype) in {**case.outputs, **case.scratch}.items():
        size = max(4, int(np.prod(shape)) * dtype.itemsize)
        buffers[name] = cl.Buffer(context, cl.mem_flags.READ_WRITE, size=size)
    for step in case.launches:
        args = [buffers[a] if isinstance(a, str) else a for a in step.args]
        getattr(program, step.kernel)(queue, step.global_size, step.local_size, *args)
    outputs = {}
    for name, (shape, dtype) in case.outputs.items():
        outputs[name] = np.empty(shape, dtype)
        cl.enqueue_copy(queue, outputs[name], buffers[name])
    queue.finish()
    assert case.check(outputs) is None


@pytest.mark.parametrize("program", __import__("benchmarks.programs").programs.PROGRAMS,
                         ids=lambda p: p.name)
def test_suite_programs_check_clean_and_match_numpy(program: Any) -> None:
    import ppcl
    from benchmarks.programs.program import Data, compare

    context = check_context()
    queue = cl.CommandQueue(context)
    size = program.sizes["small"]
    inputs = program.make_inputs(size)
    data = Data(ppcl, context, program, size, inputs)
    assert compare(program, program.run(ppcl, context, queue, data),
                   program.reference(size, inputs)) is None


# ---------------------------------------------------------------- what a finding says


def _findings(source: str, global_size: Any, local_size: Any, *args: Any) -> list[Any]:
    name = re.search(r"__kernel\s+void\s+(\w+)", source)
    assert name
    with pytest.raises(cl.KernelCheckError) as caught:
        launch(check_context(), source, name.group(1), Shape(global_size, local_size), args)
    assert caught.value.code == -5  # CL_OUT_OF_RESOURCES, as a faulting kernel on a platform
    assert isinstance(caught.value, cl.RuntimeError)
    return caught.value.findings


def test_out_of_bounds_names_the_argument_index_and_bound() -> None:
    source = """__kernel void k(__global float *data, __global float *out) {
        int i = get_global_id(0);
        out[i] = data[2 * i];
    }"""
    (finding,) = _findings(source, (8,), (4,), np.zeros(10, np.float32), np.zeros(8, np.float32))
    assert (finding.kind, finding.line, finding.loc.col) == ("out-of-bounds", 3, 22)
    assert finding.name == "data"
    assert (finding.index, finding.element_size, finding.bound) == (10, 4, 10)
    assert finding.global_id == (5, 0, 0)
    assert (finding.local_id, finding.group_id) == ((1, 0, 0), (1, 0, 0))
    assert "__global buffer 'data'" in str(finding)


def test_race_names_both_locations_and_work_items() -> None:
    source = """__kernel void k(__global int *out) {
        __local int t[4];
        int l = get_local_id(0);
        t[l] = l;
        out[l] = t[3 - l];
    }"""
    (finding,) = _findings(source, (4,), (4,), np.zeros(4, np.int32))
    assert finding.kind == "data-race"
    assert {finding.line, finding.other_loc.line} == {4, 5}
    assert finding.other_global_id is not None
    assert finding.other_global_id != finding.global_id


def test_sub_buffer_bounds_are_its_own() -> None:
    source = """__kernel void k(__global float *part) {
        part[get_global_id(0)] = 1.0f;
    }"""
    context = check_context()
    queue = cl.CommandQueue(context)
    whole = cl.Buffer(context, cl.mem_flags.READ_WRITE, size=1024)
    part = whole.get_sub_region(128, 64)  # 16 floats
    kernel = cl.Program(context, source).build().k
    kernel(queue, (16,), (16,), part)
    with pytest.raises(cl.KernelCheckError) as caught:
        kernel(queue, (32,), (16,), part)
    (finding,) = caught.value.findings
    assert (finding.index, finding.bound) == (16, 16)


def test_division_by_zero_on_inactive_lanes_is_not_reported() -> None:
    source = """__kernel void k(__global int *a, __global const int *d) {
        int i = get_global_id(0);
        if (d[i] != 0)
            a[i] = a[i] / d[i] + a[i] % d[i];
    }"""
    a = np.arange(16, dtype=np.int32) - 8
    d = np.array([0, 3] * 8, np.int32)
    (out, _) = launch(check_context(), source, "k", Shape((16,), (8,)), [a, d])
    want = np.where(d != 0, np.fix(a / np.where(d == 0, 1, d)) + np.fmod(a, np.where(d == 0, 1, d)), a)
    np.testing.assert_array_equal(out, want.astype(np.int32))


def test_fma_rounds_once_like_the_cpu_device() -> None:
    # fma is exact to 0 ulp. a * b + c in numpy rounds twice: a float product plus a tiny c
    # landing on a float midpoint, and most double products, came out one ulp off.
    from fractions import Fraction

    source = """#pragma OPENCL EXTENSION cl_khr_fp64 : enable
    __kernel void f(__global float *o, __global const float *a, __global const float *b,
                    __global const float *c) {
        int i = get_global_id(0); o[i] = fma(a[i], b[i], c[i]); }
    __kernel void d(__global double4 *o, __global const double4 *a,
                    __global const double4 *b, __global const double4 *c) {
        int i = get_global_id(0); o[i] = fma(a[i], b[i], c[i]); }"""
    near = np.float32(1 + 2 ** -12)  # near * near is a midpoint between two floats
    a = np.array([near, near, 3.0, -0.0], np.float32)
    b = np.array([near, near, 3.0, 0.0], np.float32)
    c = np.array([2 ** -70, -(2 ** -70), np.inf, -0.0], np.float32)
    (out, *_) = launch(check_context(), source, "f", Shape((4,), (4,)), [np.zeros(4, np.float32),
                                                                        a, b, c])
    want = launch(cpu_context(), source, "f", Shape((4,), (4,)), [np.zeros(4, np.float32),
                                                                  a, b, c])[0]
    np.testing.assert_array_equal(out, want)
    assert out[0] == np.float32(1 + 2 ** -11 + 2 ** -23) and np.signbit(out[3])

    rng = np.random.default_rng(4)
    x, y = (rng.standard_normal(256) * 2.0 ** rng.integers(-40, 40, 256) for _ in range(2))
    z = np.where(rng.random(256) < 0.5, -(x * y), rng.standard_normal(256))
    x[:3], y[:3], z[:3] = [1e300, 1e-300, 2.0], [1e10, 1e-300, 0.0], [1.0, 1e-310, -1.0]
    (out, *_) = launch(check_context(), source, "d", Shape((64,), (16,)), [np.zeros(256),
                                                                          x, y, z])
    exact = [float(Fraction(p) * Fraction(q) + Fraction(r)) if abs(p * q) < 1e308 else p * q
             for p, q, r in zip(x.tolist(), y.tolist(), z.tolist())]
    np.testing.assert_array_equal(out, exact)


def test_unsupported_builtin_is_named() -> None:
    source = """__kernel void k(__global int *a, __read_only image2d_t img) {
        a[0] = get_image_width(img);
    }"""
    image = cl.Image(check_context(), cl.mem_flags.READ_ONLY,
                     cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT), shape=(4, 4))
    with pytest.raises(cl.Error, match="get_image_width"):
        launch(check_context(), source, "k", Shape((1,), (1,)), [np.ones(1, np.int32), image])


def test_released_buffer_is_refused() -> None:
    source = "__kernel void k(__global float *a) { a[get_global_id(0)] = 1.0f; }"
    context = check_context()
    queue = cl.CommandQueue(context)
    buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE, size=64)
    kernel = cl.Program(context, source).build().k
    kernel.set_args(buffer)
    buffer.release()
    with pytest.raises(cl.LogicError, match="INVALID_MEM_OBJECT"):
        cl.enqueue_nd_range_kernel(queue, kernel, (16,), (16,))


# ---------------------------------------------------------------- selecting the device


def test_check_device_is_selected_by_environment(tmp_path: Path) -> None:
    """``PPCL_DEVICES=check`` runs an unmodified program on the checking device, and
    ``PPCL_CHECK=collect`` gathers every finding until ``finish``."""
    import subprocess
    import sys

    program = tmp_path / "user.py"
    program.write_text(
        "import numpy as np\n"
        "import ppcl as cl\n"
        "ctx = cl.create_some_context(interactive=False)\n"
        "print(ctx.devices[0].name)\n"
        "q = cl.CommandQueue(ctx)\n"
        "src = '__kernel void k(__global float *a) { a[get_global_id(0) + 1] = 1.0f; }'\n"
        "prg = cl.Program(ctx, src).build()\n"
        "buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, size=64)\n"
        "prg.k(q, (16,), (16,), buf)\n"
        "print('launched')\n"
        "prg.k(q, (16,), (8,), buf)\n"
        "try:\n"
        "    q.finish()\n"
        "except cl.KernelCheckError as e:\n"
        "    print('findings', len(e.findings), e.findings[0].kind, e.findings[0].count)\n")
    env = child_env({"PPCL_DEVICES": "check", "PPCL_CHECK": "collect"})
    out = subprocess.run([sys.executable, str(program)], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert out.splitlines() == ["ppcl checking device", "launched",
                                "findings 1 out-of-bounds 2"]


def test_info_lists_the_check_device(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = child_env({"PPCL_DEVICES": "cpu,check"})
    out = subprocess.run([sys.executable, "-m", "ppcl.cli", "info"], env=env,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert "ppcl checking device" in out


def test_bad_check_mode_is_named() -> None:
    from ppcl.settings import SettingsError, read_settings

    with pytest.raises(SettingsError, match="PPCL_CHECK"):
        read_settings({"PPCL_CHECK": "loud"})
    assert read_settings({"PPCL_CHECK": "collect"}).check == "collect"


def test_local_race_in_a_later_group_names_the_element_of_its_own_copy() -> None:
    source = """__kernel void k(__global int *out) {
        __local int t[4];
        int l = get_local_id(0);
        if (get_group_id(0) == 3)
            t[l / 2] = l;
        else
            t[l] = l;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = t[l / 2];
    }"""
    (finding,) = _findings(source, (16,), (4,), np.zeros(16, np.int32))
    assert (finding.kind, finding.line, finding.group_id) == ("data-race", 5, (3, 0, 0))
    assert finding.index in (0, 1)


@pytest.mark.parametrize("make_context", [cpu_context, check_context])
def test_kernel_local_arrays_past_the_local_memory_fail_the_launch(make_context: Any) -> None:
    """The kernel's own __local arrays count towards the device's local memory on the checking
    device too (it ran such a kernel, which the CPU device refuses)."""
    source = """__kernel void k(__global float *out) {
        __local float big[300000];
        big[get_local_id(0)] = 1.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = big[get_local_id(0)];
    }"""
    with pytest.raises(cl.Error, match="OUT_OF_RESOURCES.*1200000 bytes of local memory") \
            as caught:
        launch(make_context(), source, "k", Shape((8,), (4,)), (np.zeros(8, np.float32),))
    assert caught.value.code == -5


def test_array_reductions_run_clean_on_the_checking_device():
    # the CPU layout folds every partial in the launch's last work-item, seen through a fence
    # and an atomic, which OpenCL 1.2 does not promise between work-groups: the checking
    # device reported its own sum as a data race; it takes the two-launch layout
    import ppcl.array as cla
    from ppcl.reduction import folds_in_one_launch

    assert not folds_in_one_launch(check_context().devices[0])
    assert folds_in_one_launch(cpu_context().devices[0])
    queue = cl.CommandQueue(check_context())
    x = np.random.default_rng(3).random(40000).astype(np.float32)  # several CPU chunks
    a = cla.to_device(queue, x)
    np.testing.assert_allclose(cla.sum(a).get(), x.sum(dtype=np.float64), rtol=1e-5)
    assert cla.max(a).get() == x.max() and cla.min(a[1::3]).get() == x[1::3].min()
