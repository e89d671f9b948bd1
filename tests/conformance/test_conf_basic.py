"""Conformance, basic: work-item functions in 1, 2 and 3 dimensions with offsets, address
spaces, barriers and local memory, async copies, vload/vstore (and the half loads and
stores), sizeof, vec_step and alignment of the OpenCL types.

A 3-component vector has the size of 4 components, and ``vec_step`` of it is 4 (section
6.11: "the vec_step built-in functions that take a 3-component vector return 4").
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.launch import LocalMem, run

WORK_ITEM = """
__kernel void ids(__global uint *out)
{
    size_t flat = 0, stride = 1;
    for (uint d = 0; d < get_work_dim(); ++d) {
        flat += (get_global_id(d) - get_global_offset(d)) * stride;
        stride *= get_global_size(d);
    }
    __global uint *o = out + flat * 22;
    o[0] = get_work_dim();
    for (uint d = 0; d < 3; ++d) {
        o[1 + d] = get_global_id(d);
        o[4 + d] = get_local_id(d);
        o[7 + d] = get_group_id(d);
        o[10 + d] = get_global_size(d);
        o[13 + d] = get_local_size(d);
        o[16 + d] = get_num_groups(d);
        o[19 + d] = get_global_offset(d);
    }
}
"""


@pytest.mark.parametrize("global_size, local_size, offset", [
    ((24,), (8,), (0,)),
    ((24,), (6,), (5,)),
    ((8, 6), (4, 3), (1, 2)),
    ((4, 6, 4), (2, 3, 2), (3, 0, 7)),
    ((12, 2), None, (0, 0)),
], ids=["1d", "1d-offset", "2d-offset", "3d-offset", "2d-default-local"])
def test_work_item_functions(global_size: tuple[int, ...], local_size: tuple[int, ...] | None,
                             offset: tuple[int, ...]) -> None:
    dims = len(global_size)
    total = int(np.prod(global_size))
    out = np.zeros(total * 22, np.uint32)
    run(WORK_ITEM, "ids", global_size, local_size, out, offset=offset)
    rows = out.reshape(total, 22)
    gs = list(global_size) + [1] * (3 - dims)
    off = list(offset) + [0] * (3 - dims)
    ls = list(local_size) if local_size else None
    for flat, row in enumerate(rows):
        assert row[0] == dims
        index = np.unravel_index(flat, gs[::-1])[::-1]  # dimension 0 varies fastest
        for d in range(3):
            gid = off[d] + int(index[d])
            assert row[1 + d] == gid
            assert row[10 + d] == gs[d] and row[19 + d] == off[d]
            lsize = row[13 + d]
            if ls is not None and d < dims:
                assert lsize == ls[d]
            assert gs[d] % lsize == 0, "the default local size divides the global size"
            assert row[4 + d] == (gid - off[d]) % lsize
            assert row[7 + d] == (gid - off[d]) // lsize
            assert row[16 + d] == gs[d] // lsize
        if dims < 3:  # dimensions past get_work_dim(): size 1, id 0
            assert row[10 + 2] == 1 and row[1 + 2] == 0 and row[13 + 2] == 1


ADDRESS_SPACES = """
__constant float table[4] = {1.0f, 2.0f, 4.0f, 8.0f};

float scale(__private float *p, int n)
{
    float s = 0.0f;
    for (int i = 0; i < n; ++i)
        s += p[i];
    return s;
}

__kernel void spaces(__global const float *in, __constant float *coeff, __local float *arg_local,
                     __global float *out)
{
    __local float declared[16];
    __private float mine[3];
    size_t g = get_global_id(0), l = get_local_id(0), n = get_local_size(0);
    mine[0] = in[g];
    mine[1] = coeff[l % 4];
    mine[2] = table[g % 4];
    declared[l] = in[g] * 2.0f;
    arg_local[l] = in[g] + 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = scale(mine, 3) + declared[n - 1 - l] + arg_local[(l + 1) % n];
}
"""


def test_address_spaces() -> None:
    x = np.arange(32, dtype=np.float32) * 0.5
    coeff = np.array([10, 20, 30, 40], np.float32)
    out = np.zeros(32, np.float32)
    run(ADDRESS_SPACES, "spaces", (32,), (8,), x, coeff, LocalMem(8 * 4), out)
    g = np.arange(32)
    lid, base = g % 8, g - g % 8
    table = np.array([1, 2, 4, 8], np.float32)
    want = (x + coeff[lid % 4] + table[g % 4] + x[base + 7 - lid] * 2
            + x[base + (lid + 1) % 8] + 1)
    np.testing.assert_allclose(out, want, rtol=1e-6)


REDUCE = """
__kernel void reduce(__global const int *in, __local int *scratch, __global int *sums,
                     __global int *prefix)
{
    size_t l = get_local_id(0), n = get_local_size(0);
    scratch[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t step = 1; step < n; step *= 2) {    /* inclusive scan, Hillis-Steele */
        int add = l >= step ? scratch[l - step] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        scratch[l] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    prefix[get_global_id(0)] = scratch[l];
    if (l == n - 1)
        sums[get_group_id(0)] = scratch[l];
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
}
"""


@pytest.mark.parametrize("local", [1, 4, 16, 64])
def test_barriers_and_local_memory_scan(local: int) -> None:
    rng = np.random.default_rng(local)
    x = rng.integers(-1000, 1000, 256).astype(np.int32)
    sums = np.zeros(256 // local, np.int32)
    prefix = np.zeros(256, np.int32)
    run(REDUCE, "reduce", (256,), (local,), x, LocalMem(local * 4), sums, prefix)
    groups = x.reshape(-1, local)
    np.testing.assert_array_equal(sums, groups.sum(axis=1))
    np.testing.assert_array_equal(prefix, np.cumsum(groups, axis=1).ravel())


ASYNC = """
__kernel void copies(__global const float *in, __global float *out, __global float *strided,
                     __local float *tile)
{
    size_t n = get_local_size(0), group = get_group_id(0);
    event_t e = async_work_group_copy(tile, in + group * n, n, 0);
    wait_group_events(1, &e);
    size_t l = get_local_id(0);
    float v = tile[n - 1 - l];
    barrier(CLK_LOCAL_MEM_FENCE);
    tile[l] = v * 3.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_copy(out + group * n, tile, n, 0);
    /* every fourth element of the group's block, gathered then scattered with stride 2 */
    event_t f = async_work_group_strided_copy(tile, in + group * n, n / 4, 4, 0);
    wait_group_events(1, &f);
    wait_group_events(1, &e);
    f = async_work_group_strided_copy(strided + group * n, tile, n / 4, 2, 0);
    wait_group_events(1, &f);
}
"""


def test_async_copies_contiguous_and_strided() -> None:
    n, groups = 16, 4
    x = np.arange(n * groups, dtype=np.float32)
    out = np.zeros_like(x)
    strided = np.full_like(x, -1)
    run(ASYNC, "copies", (n * groups,), (n,), x, out, strided, LocalMem(n * 4))
    blocks = x.reshape(groups, n)
    np.testing.assert_array_equal(out.reshape(groups, n), blocks[:, ::-1] * 3)
    want = np.full((groups, n), -1, np.float32)
    want[:, 0:n // 2:2] = blocks[:, ::4]
    np.testing.assert_array_equal(strided.reshape(groups, n), want)


VLOAD_TYPES = {"char": np.int8, "ushort": np.uint16, "int": np.int32, "ulong": np.uint64,
               "float": np.float32, "double": np.float64}


@pytest.mark.parametrize("type_name", list(VLOAD_TYPES))
def test_vload_vstore_every_width_and_offset(type_name: str) -> None:
    dtype = VLOAD_TYPES[type_name]
    lines = []
    for n in (2, 3, 4, 8, 16):
        lines.append(f"    vstore{n}(vload{n}(i, in + 1) + ({type_name}){n}, i, out{n} + 2);")
    params = ", ".join(f"__global {type_name} *out{n}" for n in (2, 3, 4, 8, 16))
    source = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + f"""
__kernel void k(__global const {type_name} *in, {params})
{{
    size_t i = get_global_id(0);
{chr(10).join(lines)}
}}
"""
    count = 8
    x = np.arange(16 * count + 1).astype(dtype)
    outs = {n: np.zeros(n * count + 2, dtype) for n in (2, 3, 4, 8, 16)}
    run(source, "k", (count,), None, x, *outs.values())
    for n, out in outs.items():
        want = np.zeros(n * count + 2, dtype)
        want[2:] = x[1:n * count + 1] + dtype(n)
        np.testing.assert_array_equal(out, want, err_msg=f"vload{n}/vstore{n}")


HALF = """
__kernel void half_io(__global const half *h, __global const float *f, __global float *loaded,
                      __global half *rte, __global half *rtz, __global half *rtp,
                      __global half *rtn, __global half *plain, __global float *loaded4,
                      __global float *aligned3, __global half *stored3)
{
    size_t i = get_global_id(0);
    loaded[i] = vload_half(i, h);
    vstore_half_rte(f[i], i, rte);
    vstore_half_rtz(f[i], i, rtz);
    vstore_half_rtp(f[i], i, rtp);
    vstore_half_rtn(f[i], i, rtn);
    vstore_half(f[i], i, plain);
    if (i % 4 == 0) {
        vstore4(vload_half4(i / 4, h), i / 4, loaded4);
        /* the aligned forms address 3-component vectors in steps of 4 */
        vstore3(vloada_half3(i / 4, h), i / 4, aligned3);
        vstorea_half3_rtz(vload3(i / 4, f), i / 4, stored3);
    }
}
"""


def _half_round(f: np.ndarray, mode: str) -> np.ndarray:
    """float32 or float64 -> float16 by a rounding mode (numpy converts either directly, to
    nearest even): the nearest-even result stepped by one half ulp
    where it went the wrong way."""
    with np.errstate(over="ignore"):  # beyond 65504: infinity, stepped back below
        near = f.astype(np.float16)
    back = near.astype(f.dtype)
    if mode == "rte":
        return near
    with np.errstate(invalid="ignore", over="ignore"):
        if mode == "rtz":
            wrong = np.abs(back) > np.abs(f)
            toward = np.zeros_like(near)
        elif mode == "rtp":
            wrong = back < f
            toward = np.full_like(near, np.inf)
        else:
            wrong = back > f
            toward = np.full_like(near, -np.inf)
    with np.errstate(over="ignore"):
        stepped = np.nextafter(near, toward)
    return np.where(wrong & np.isfinite(f), stepped, near).astype(np.float16)


def test_vload_half_and_vstore_half_rounding_modes() -> None:
    rng = np.random.default_rng(8)
    n = 256
    h = rng.integers(0, 2**16, n, dtype=np.uint16).view(np.float16)
    f = (rng.choice([-1, 1], n) * np.exp2(rng.uniform(-26, 17, n))).astype(np.float32)
    f[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 65520.0, 1e-8, -70000.0]
    loaded = np.zeros(n, np.float32)
    outs = [np.zeros(n, np.float16) for _ in range(5)]
    loaded4 = np.zeros(n, np.float32)
    aligned3 = np.zeros(3 * n // 4, np.float32)
    stored3 = np.full(n, 7, np.float16)
    run(HALF, "half_io", (n,), None, h, f, loaded, *outs, loaded4, aligned3, stored3)
    np.testing.assert_array_equal(loaded, h.astype(np.float32))
    np.testing.assert_array_equal(loaded4, h.astype(np.float32))
    np.testing.assert_array_equal(aligned3.reshape(-1, 3), h.reshape(-1, 4)[:, :3])
    want3 = np.full((n // 4, 4), 7, np.float16)
    want3[:, :3] = _half_round(f[:3 * n // 4], "rtz").reshape(-1, 3)
    same = (stored3.reshape(-1, 4) == want3) | (np.isnan(stored3.reshape(-1, 4)) &
                                                 np.isnan(want3))
    assert same.all(), "vstorea_half3 writes 3 halves at every fourth position"
    for mode, out in zip(["rte", "rtz", "rtp", "rtn", "rte"], outs):
        want = _half_round(f, mode)
        np.testing.assert_array_equal(out.view(np.uint16)[~np.isnan(f)],
                                      want.view(np.uint16)[~np.isnan(f)], err_msg=mode)
        assert np.isnan(out[np.isnan(f)]).all()


SIZES = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4, "long": 8,
         "ulong": 8, "float": 4, "double": 8, "half": 2}


def test_sizeof_vec_step_and_alignment() -> None:
    """Sizes, and alignments seen through layout: ``struct { char c; T v; }`` is twice T's
    alignment when T's size is its alignment (every vector type aligns to its size)."""
    rows = []
    structs = []
    for name, size in SIZES.items():
        rows.append((f"sizeof({name})", size))
        if name == "half":
            continue
        for n in (2, 3, 4, 8, 16):
            stored = 4 if n == 3 else n  # a 3-component vector is stored as 4
            rows.append((f"sizeof({name}{n})", size * stored))
            rows.append((f"vec_step({name}{n})", stored))
            structs.append(f"struct a_{name}{n} {{ char c; {name}{n} v; }};")
            rows.append((f"sizeof(struct a_{name}{n})", 2 * size * stored))
    rows += [("sizeof(size_t)", 8), ("sizeof(ptrdiff_t)", 8), ("sizeof(void *)", 8),
             ("sizeof(struct pair)", 16), ("sizeof(struct vec)", 32),
             ("sizeof(struct outer)", 48)]
    lines = "\n".join(f"    out[{i}] = {expr};" for i, (expr, _) in enumerate(rows))
    source = f"""#pragma OPENCL EXTENSION cl_khr_fp64 : enable
struct pair {{ char c; long l; }};
struct vec {{ float f; float4 v; }};
struct outer {{ char c; struct vec v; }};
{chr(10).join(structs)}
__kernel void sizes(__global ulong *out)
{{
{lines}
}}
"""
    out = np.zeros(len(rows), np.uint64)
    run(source, "sizes", (1,), None, out)
    wrong = [f"{expr} = {got}, want {want}" for (expr, want), got in zip(rows, out.tolist())
             if got != want]
    assert not wrong, "; ".join(wrong)


OUT_OF_RANGE_DIM = """
__kernel void past(__global uint *out, uint d)
{
    size_t i = get_global_id(0) - get_global_offset(0);
    out[7 * i + 0] = get_global_id(d);
    out[7 * i + 1] = get_local_id(d);
    out[7 * i + 2] = get_group_id(d);
    out[7 * i + 3] = get_global_size(d);
    out[7 * i + 4] = get_local_size(d);
    out[7 * i + 5] = get_num_groups(d);
    out[7 * i + 6] = get_global_offset(d);
}
"""


@pytest.mark.parametrize("dim", [3, 4, 1000])
def test_work_item_functions_past_the_last_dimension(dim: int) -> None:
    """Section 6.12.1: for a dimension index of 3 or more the sizes are 1, ids and offsets 0."""
    out = np.full(8 * 7, 99, np.uint32)
    run(OUT_OF_RANGE_DIM, "past", (8,), (4,), out, np.uint32(dim), offset=(2,))
    np.testing.assert_array_equal(out.reshape(8, 7), np.tile([0, 0, 0, 1, 1, 1, 0], (8, 1)))


DIM_OF_OTHER_TYPES = """
__kernel void dims(__global uint *out, float f)
{
    size_t i = get_global_id(0);
    uint k = 0;
    out[4 * i + 0] = get_local_size(f);         /* a float dimension index converts to uint */
    out[4 * i + 1] = get_local_size(f * 2.0f);
    out[4 * i + 2] = get_global_size(0x1p1);
    out[4 * i + 3] = get_local_size(k++) + k;   /* the index is evaluated once */
}
"""


def test_work_item_function_dimension_of_float_type_and_with_side_effects() -> None:
    # a float index reached C as an array subscript, which the C compiler rejected; an index
    # with a side effect was evaluated twice
    out = np.zeros(4 * 4, np.uint32)
    run(DIM_OF_OTHER_TYPES, "dims", (4, 2, 3), (2, 1, 3), out, np.float32(1.0))
    np.testing.assert_array_equal(out.reshape(4, 4), np.tile([1, 3, 3, 3], (4, 1)))


HALF_FROM_DOUBLE = """
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void store(__global const double *d, __global half *rte, __global half *rtz,
                    __global half *rtp, __global half *rtn, __global half *v2)
{
    size_t i = get_global_id(0);
    vstore_half_rte(d[i], i, rte);
    vstore_half_rtz(d[i], i, rtz);
    vstore_half_rtp(d[i], i, rtp);
    vstore_half_rtn(d[i], i, rtn);
    if (i % 2 == 0)
        vstore_half2(vload2(i / 2, d), i / 2, v2);
}
"""


def test_vstore_half_of_double_rounds_once() -> None:
    """A double is rounded to half directly: through float first, 1 + 2^-11 + 2^-40 would
    become the tie 1 + 2^-11 and then 1, instead of 1 + 2^-10."""
    rng = np.random.default_rng(12)
    n = 256
    d = rng.choice([-1, 1], n) * np.exp2(rng.uniform(-27, 17, n))
    d[:6] = [1 + 2.0**-11 + 2.0**-40, -(1 + 2.0**-11 + 2.0**-40), 2.0**-24 * 1.5 + 2.0**-60,
             65504 + 16 - 2.0**-30, 0.0, -0.0]
    outs = [np.zeros(n, np.float16) for _ in range(5)]
    run(HALF_FROM_DOUBLE, "store", (n,), None, d, *outs)
    for mode, out in zip(["rte", "rtz", "rtp", "rtn", "rte"], outs):
        np.testing.assert_array_equal(out.view(np.uint16), _half_round(d, mode).view(np.uint16),
                                      err_msg=mode)
