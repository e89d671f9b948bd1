"""The CUDA dialect of the printer: its spellings, and the whole kernel corpus accepted by nvcc
(compiled for Hopper, ``sm_90``; skipped only where nvcc is not installed)."""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

import pytest

from ppcl.cli import main as cli_main
from ppcl.compiler.codegen.cstyle import CodegenError
from ppcl.compiler.codegen.cuda import cuda_unit
from ppcl.compiler.frontend import compile_source
from ppcl.devices.cuda.device import gpu_local_size
from ppcl.devices.cuda.nvrtc import HEADER_PATH

KERNELS = sorted((pathlib.Path(__file__).parent / "kernels").glob("*.cl"))
NVCC = shutil.which("nvcc")


def unit(source: str, options: str = "") -> str:
    return cuda_unit(compile_source(source, "test.cl", options).module)


def test_kernel_with_local_memory_and_barrier():
    text = unit("""
        __kernel void k(__global float *out, __local float *scratch) {
            __local float tile[64];
            uint lid = get_local_id(0);
            tile[lid] = scratch[lid] = out[get_global_id(0)];
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = tile[63 - lid] + scratch[lid];
        }""")
    assert text.startswith('#include "ppcl_cuda.h"')
    assert ('extern "C" __global__ void ppcl_u_k(const ppcl_ndrange ppcl_nd_arg, '
            'float *ppcl_u_out, unsigned int ppcl_local_scratch)') in text
    assert "float *ppcl_u_scratch = (float *)(ppcl_dynamic_local + ppcl_local_scratch);" in text
    assert "__shared__ float ppcl_u_tile[64];" in text
    assert "ppcl_barrier(1u);" in text  # CLK_LOCAL_MEM_FENCE as its value
    assert "__global " not in text and "__local " not in text


def test_vectors_swizzles_and_conversions():
    text = unit("""
        __kernel void k(__global float4 *v, __global int4 *r, float s) {
            float4 a = v[0] * s + (float4)(1.0f, v[1].xy, 2.0f);
            a.yx = a.zw;
            r[0] = convert_int4_sat_rte(a) + as_int4(a);
        }""")
    assert "ppcl_vec<float, 4> ppcl_u_a" in text
    assert "ppcl_splat<float, 4>((float)ppcl_u_s)" in text
    assert "ppcl_make<float, 4>(1.0f, ppcl_swizzle<0, 1>(ppcl_u_v[1]), 2.0f)" in text
    assert "(ppcl_lanes_of<1, 0>(ppcl_u_a) = ppcl_swizzle<2, 3>(ppcl_u_a))" in text
    assert "ppcl_convert<int, true, 1>(ppcl_u_a)" in text
    assert "ppcl_as<ppcl_vec<int, 4>>(ppcl_u_a)" in text


def test_non_kernel_functions_are_device_functions_and_constants_are_constant():
    text = unit("""
        __constant float weights[3] = {0.25f, 0.5f, 0.25f};
        float blend(__constant float *w, float x) { return w[0] * x + FLT_MAX * 0.0f; }
        __kernel void k(__global float *out) { out[0] = blend(weights, out[0]); }""")
    assert "__constant__ const float ppcl_u_weights[3] = {0.25f, 0.5f, 0.25f};" in text
    assert "__device__ float ppcl_u_blend(const float *ppcl_u_w, float ppcl_u_x)" in text
    assert "FLT_MAX" not in text


def test_vector_printf_prints_each_component():
    """CUDA's printf has no vector conversions: ``%v4hlf`` becomes four ``%f`` joined by
    commas, the vector bound once (its expression may have effects) and passed by components;
    ``hl`` (a 32-bit component) has no C length, other lengths stay."""
    text = unit('__kernel void k(float4 v, __global short2 *s) '
                '{ printf("%5.2v4hlf|%v2hd|%%\\n", v * 2.0f, *s++); }')
    assert ('auto ppcl_pv0 = ppcl_u_v * ppcl_splat<float, 4>((float)2.0f); auto ppcl_pv1 = '
            '*ppcl_u_s++; int failed = 0; failed |= printf("%5.2f,%5.2f,%5.2f,%5.2f|%hd,%hd|%%'
            '\\n", ppcl_pv0[0], ppcl_pv0[1], ppcl_pv0[2], ppcl_pv0[3], ppcl_pv1[0], ppcl_pv1[1]) '
            '< 0; return failed ? -1 : 0;') in text


def test_vector_printf_past_cudas_32_arguments_is_several_calls():
    """CUDA's printf ignores arguments past 32 (on the GPU a 35-component line came out
    garbled): the format is cut between conversions into calls of at most 32."""
    text = unit('__kernel void k(float16 a, float16 b, float4 c) '
                '{ printf("%v16hlf|%v16hlf|%v4hlf\\n", a, b, c); }')
    calls = re.findall(r'failed \|= printf\("([^"]*)"((?:, [^,)]+)*)\) < 0;', text)
    assert [fmt.count("%f") for fmt, _ in calls[:2]] == [32, 4]
    assert calls[0][0].endswith("|") and calls[1][0].endswith("\\n")


def test_printf_returns_opencls_status():
    """CUDA's printf returns how many arguments it parsed; OpenCL's returns 0 on success and
    -1 otherwise, which kernels test (``printf(...) == 0``)."""
    text = unit('__kernel void k(__global int *n) { n[0] = printf("%d %d\\n", 1, 2); }')
    assert 'ppcl_u_n[0] = (printf("%d %d\\n", 1, 2) < 0 ? -1 : 0);' in text


def test_emit_cuda_prints_the_unit(tmp_path, capsys):
    source = tmp_path / "k.cl"
    source.write_text("__kernel void k(__global int *a) { a[get_global_id(0)] += 1; }")
    assert cli_main(["build", str(source), "--emit", "cuda"]) == 0
    out = capsys.readouterr().out
    assert 'extern "C" __global__ void ppcl_u_k(' in out
    assert "ppcl_get_global_id(" in out


@pytest.mark.parametrize(("global_size", "dims", "expected"), [
    ((1 << 24, 1, 1), 1, (256, 1, 1)),
    ((2048, 2048, 1), 2, (32, 8, 1)),
    ((1000, 1, 1), 1, (250, 1, 1)),
    ((96, 96, 4), 3, (32, 8, 1)),
])
def test_gpu_local_size(global_size, dims, expected):
    local = gpu_local_size(global_size, dims, 1024, (1024, 1024, 64))
    assert local == expected
    assert all(g % loc == 0 for g, loc in zip(global_size, local))


def _corpus_as_one_unit() -> tuple[str, list[str]]:
    """Every corpus kernel's unit in a namespace of its own, so that one nvcc run checks them
    all (kernels lose ``extern "C"`` there, since two files may name a kernel alike), and the
    files the CUDA device refuses, each of which must say that it is the CUDA device's limit
    (vector printf, images) rather than fail later."""
    parts = [f'#include "{HEADER_PATH.name}"']
    refused = []
    for path in KERNELS:
        try:
            text = unit(path.read_text(encoding="utf-8"))
        except CodegenError as error:
            assert "CUDA device" in str(error), f"{path.name}: {error}"
            refused.append(path.stem)
            continue
        body = text.split("\n", 1)[1].replace('extern "C" ', "")
        name = re.sub(r"\W", "_", path.stem)
        parts.append(f"namespace corpus_{name} {{\n{body}\n}}")
    return "\n".join(parts), refused


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_corpus_compiles_with_nvcc(tmp_path):
    text, refused = _corpus_as_one_unit()
    assert not refused, refused
    ptx = _ptx(tmp_path, "corpus", text)
    assert ptx.count(".entry") >= len(KERNELS) - len(refused)


def _ptx(tmp_path, stem: str, text: str) -> str:
    """The PTX nvcc makes of the unit ``text`` for Hopper (the test fails with its errors)."""
    source = tmp_path / f"{stem}.cu"
    source.write_text(text)
    result = subprocess.run(
        [NVCC, "-arch=sm_90", "-std=c++17", "--ptx", "-I", str(HEADER_PATH.parent),
         str(source), "-o", str(tmp_path / f"{stem}.ptx")],
        capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    return (tmp_path / f"{stem}.ptx").read_text()


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_a_kernel_compiles_to_an_object_with_its_c_name(tmp_path):
    source = tmp_path / "saxpy.cu"
    source.write_text(unit("""
        __kernel void saxpy(float a, __global const float *x, __global float *y) {
            size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }"""))
    result = subprocess.run(
        [NVCC, "-arch=sm_90", "-std=c++17", "-c", "-I", str(HEADER_PATH.parent), str(source),
         "-o", str(tmp_path / "saxpy.o")], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    symbols = subprocess.run(["nm", str(tmp_path / "saxpy.o")], capture_output=True, text=True,
                             check=False).stdout
    assert "ppcl_u_saxpy" in symbols


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_steps_of_several_components_go_through_the_lanes(tmp_path):
    """``v.yx++`` and ``--v.zw``: C++ has no lvalue for several lanes of ``ppcl_vec`` either;
    they step through ``ppcl_lanes_of``'s reference (the unit was a build error)."""
    text = unit("""
        __kernel void k(__global int4 *o) {
            int4 v = o[0];
            int2 a = v.yx++;
            int2 b = --v.zw;
            uchar4 c = (uchar4)(255, 0, 1, 2);
            c.xyw++;
            o[0] = v + (int4)(a, b) + convert_int4(c);
        }""")
    assert "(ppcl_lanes_of<1, 0>(ppcl_u_v)++)" in text
    assert "(--ppcl_lanes_of<2, 3>(ppcl_u_v))" in text
    assert ".entry" in _ptx(tmp_path, "steps", text)


def test_kernels_with_buffers_get_a_noalias_copy():
    text = unit("""
        __kernel void two(__global const float *x, __global float *y) { y[0] = x[0]; }
        __kernel void one(__global float *y, __local float *s) { y[0] = s[0]; }""")
    assert ('extern "C" __global__ void ppcl_u_two__noalias(const ppcl_ndrange ppcl_nd_arg, '
            'const float *__restrict__ ppcl_u_x, float *__restrict__ ppcl_u_y)') in text
    assert "ppcl_u_one__noalias" not in text


def test_noalias_copy_only_for_disjoint_buffers():
    from ppcl.devices.cuda.device import buffers_disjoint
    from ppcl.devices.interface import BufferArg, LocalArg, ValueArg

    class Owner:
        def __init__(self, size):
            self.size = size

    owners = Owner(1024), Owner(64), Owner(128)  # a BufferArg holds its owner weakly
    a, b = BufferArg(4096, owners[0]), BufferArg(8192, owners[1])
    inside = BufferArg(4096 + 512, owners[2])
    assert buffers_disjoint([a, b, LocalArg(64), ValueArg(b"1234"), BufferArg(0)])
    assert not buffers_disjoint([a, inside])
    assert not buffers_disjoint([a, a])


def test_vector_conditions_select_and_kernel_constants_are_const():
    text = unit("""
        __kernel void k(__global float4 *a, __global int *o) {
            __constant float table[3] = {1.0f, 2.0f, 3.0f};
            float4 x = a[0];
            a[1] = (x > (float4)(0.5f)) ? x : (float4)(0.0f);
            o[0] = (int)table[get_global_id(0) % 3] + (o[1] > 0 ? 1 : 2);
        }""")
    assert "    const float ppcl_u_table[3] = {1.0f, 2.0f, 3.0f};" in text
    assert ("ppcl_select(ppcl_splat<float, 4>((float)0.0f), ppcl_u_x, "
            "ppcl_u_x > ppcl_splat<float, 4>((float)0.5f))") in text
    assert "ppcl_u_o[1] > 0 ? 1 : 2" in text
    if NVCC is not None:
        assert _nvcc_accepts(text)


def test_casts_between_vector_types_keep_the_bytes(monkeypatch):
    """Passes make vector-to-vector casts (OpenCL C has none): an int32 ``abs(x).sum()``
    through the patterns casts the uint8 ``abs`` back to int8. The C backend's vector extension
    keeps the bytes; ppcl_vec has no conversions, so the CUDA unit spells ``ppcl_as``."""
    import numpy as np

    import ppcl as cl
    import ppcl.array as cla
    from ppcl import array_patterns
    from ppcl.compiler.frontend import compile_module

    monkeypatch.setenv("PPCL_ARRAY_PATTERNS", "1")
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    x = cla.to_device(queue, np.arange(4099, dtype=np.int32))
    route = array_patterns.plan(abs(x)._node(), "sum", x.dtype, x.size, queue)
    assert not isinstance(route, str), route
    variant = array_patterns.default_variant(x.dtype, x.size)  # vectors of 8
    lowered, _ = array_patterns._lower_body(route[0], variant, x.size - x.size % variant.block)
    text = cuda_unit(compile_module(lowered.module, "").module)
    assert "ppcl_as<ppcl_vec<int, " in text
    if NVCC is not None:
        assert _nvcc_accepts(text)


def test_the_header_uses_nothing_nvrtc_lacks():
    # nvcc accepts __builtin_memcpy in device code, NVRTC does not: every as_type failed there
    assert "__builtin_memcpy(" not in HEADER_PATH.read_text()


def _nvcc_accepts(text: str) -> bool:
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        source = pathlib.Path(directory) / "unit.cu"
        source.write_text(text)
        result = subprocess.run(
            [str(NVCC), "-arch=sm_90", "-std=c++17", "--ptx", "-I", str(HEADER_PATH.parent),
             str(source), "-o", str(source.with_suffix(".ptx"))],
            capture_output=True, text=True, check=False)
    return result.returncode == 0


# Families whose calls need a work-group around them or a format: tested through the corpus.
_NOT_SAMPLED = {"printf", "async", "workitem", "sync"}


def _call_kernel(index: int, ov) -> str | None:
    """A kernel calling overload ``ov`` with arguments of its parameter types."""
    from ppcl.compiler.ir.types import AddressSpace, OpaqueType, PointerType

    lines, args = [], []
    for i, param in enumerate(ov.params):
        if isinstance(param, OpaqueType):
            return None
        name = f"a{i}"
        if isinstance(param, PointerType):
            space = "__constant" if param.space is AddressSpace.CONSTANT else "__global"
            quals = "const " * param.const + "volatile " * param.volatile
            spelled = f"{space} {quals}{param.pointee} *"
            lines.append(f"{spelled}{name} = ({spelled})"
                         f"{'cbuf' if space == '__constant' else 'buf'};")
        else:
            lines.append(f"{param} {name} = ({param})(1);")
        args.append(name)
    call = f"{ov.name}({', '.join(args)})"
    if str(ov.ret) == "void":
        lines.append(call + ";")
    else:
        lines.append(f"*(__global {ov.ret} *)buf = {call};")
    body = "\n    ".join(lines)
    return (f"__kernel void k{index}(__global void *buf, __constant void *cbuf) {{\n"
            f"    {body}\n}}")


def _ptx(tmp_path: pathlib.Path, name: str, text: str) -> str:
    """The PTX nvcc makes of the unit ``text`` for ``sm_90`` (the test fails where it cannot)."""
    source = tmp_path / f"{name}.cu"
    source.write_text(text)
    result = subprocess.run(
        [NVCC, "-arch=sm_90", "-std=c++17", "--ptx", "-I", str(HEADER_PATH.parent), str(source),
         "-o", str(tmp_path / f"{name}.ptx")], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    return (tmp_path / f"{name}.ptx").read_text()


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_first_and_last_overload_of_every_builtin_compile_with_nvcc(tmp_path):
    from ppcl.compiler.ir.builtin_signatures import fixed_signatures
    from ppcl.compiler.ir.builtins import overloads

    sampled = []
    for ovs in fixed_signatures().values():
        if ovs[0].family not in _NOT_SAMPLED:
            sampled += [ovs[0], ovs[-1]]
    sampled += [overloads(name)[-1] for name in ("convert_uchar16_sat_rtn", "convert_float3_rtp",
                                                 "convert_long2_sat", "as_double2", "as_char3")]
    kernels = [k for k in (_call_kernel(i, ov) for i, ov in enumerate(sampled)) if k]
    assert len(kernels) > 400
    _ptx(tmp_path, "builtins", unit("\n".join(kernels)))


def _image_kernel(index: int, ov) -> str:
    """A kernel calling image builtin ``ov``: the image and sampler are kernel parameters."""
    from ppcl.compiler.ir.types import ImageType

    params, args, lines = ["__global void *buf"], [], []
    for i, param in enumerate(ov.params):
        name = f"a{i}"
        if isinstance(param, ImageType) or str(param) == "sampler_t":
            params.append(f"{param} {name}")
        else:
            lines.append(f"{param} {name} = ({param})(1);")
        args.append(name)
    call = f"{ov.name}({', '.join(args)})"
    lines.append(call + ";" if str(ov.ret) == "void" else f"*(__global {ov.ret} *)buf = {call};")
    body = "\n    ".join(lines)
    return f"__kernel void img{index}({', '.join(params)}) {{\n    {body}\n}}"


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_every_image_builtin_overload_compiles_with_nvcc(tmp_path):
    """Images are the C backend's descriptors and its support code printed as device functions;
    every read (through a sampler and not), write and query of every image type compiles."""
    from ppcl.compiler.ir.builtin_signatures import fixed_signatures

    image_overloads = [ov for ovs in fixed_signatures().values() for ov in ovs
                       if ov.family == "image"]
    assert len(image_overloads) > 60
    text = unit("\n".join(_image_kernel(i, ov) for i, ov in enumerate(image_overloads)))
    assert "struct ppcl_image {" in text
    assert _ptx(tmp_path, "images", text).count(".entry") == len(image_overloads)


def test_a_unit_without_images_has_no_image_support():
    text = unit("__kernel void k(__global float *x, sampler_t s) { x[0] = 1.0f; }")
    assert "ppcl_image {" not in text and "ppcl_img_read" not in text


FMA = """
__kernel void k(__global const float *a, __global const float *b, __global float *c,
                __global float *e) {
    int i = get_global_id(0);
    float acc = c[i];
    acc += a[i] * b[i];
    c[i] = a[i] * b[i] - acc;
    float p = a[i] * b[i];
    e[i] = p + 1.0f;
    e[i++] += a[i] * b[i];
}
"""


def test_a_product_and_a_sum_in_one_expression_are_one_fma():
    """OpenCL C's FP_CONTRACT is on by default and C lets it contract within an expression:
    the printer writes those as ppcl_fma, and NVRTC, told not to contract (--fmad=false), keeps
    a product one statement stores and the next adds as two roundings."""
    body = unit(FMA).split("void ppcl_u_k(", 1)[1].split("}", 1)[0]
    assert "ppcl_u_acc = ppcl_fma(ppcl_u_a[ppcl_u_i], ppcl_u_b[ppcl_u_i], ppcl_u_acc);" in body
    assert ("ppcl_u_c[ppcl_u_i] = ppcl_fma(ppcl_u_a[ppcl_u_i], ppcl_u_b[ppcl_u_i], "
            "-(ppcl_u_acc));") in body
    assert "ppcl_u_e[ppcl_u_i] = ppcl_u_p + 1.0f;" in body
    assert "ppcl_u_e[ppcl_u_i++] += " in body  # the target has an effect: not repeated
    off = unit("#pragma OPENCL FP_CONTRACT OFF\n" + FMA)
    assert "ppcl_fma" not in off and "ppcl_u_acc += ppcl_u_a[ppcl_u_i] * ppcl_u_b[ppcl_u_i];" in off


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_a_kernel_called_by_a_kernel_compiles_with_nvcc(tmp_path):
    """A called kernel is a __device__ function copy in CUDA, which a __global__ kernel can
    call (a __global__ function cannot be called from device code)."""
    source = """__kernel void put(__global float *o, int i) { o[i] = 7.0f; }
__kernel void k(__global float *o) { put(o, get_global_id(0)); }"""
    ptx = _ptx(tmp_path, "calls", cuda_unit(compile_source(source, "t.cl").module))
    assert ".entry" in ptx and "__ppcl_kernel_put" in cuda_unit(
        compile_source(source, "t.cl").module)
