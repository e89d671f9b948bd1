"""Integer division and remainder as OpenCL C defines them on the CPU device: a zero divisor and
the most negative value divided by -1 give unspecified values, never a trap (C's division would
raise SIGFPE and, before the native pool reported faults, end the interpreter); every other
quotient truncates toward zero as in C, for scalars and vectors of every integer type, through
operators and compound assignments."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
from ppcl.compiler.codegen.c import print_c
from ppcl.compiler.frontend import compile_source

TYPES = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
         "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64}


@pytest.fixture(scope="module")
def ctx() -> cl.Context:
    return cl.create_some_context(interactive=False)


def _wrap(value: int, dtype: type) -> int:
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min) + 1
    return (value - int(info.min)) % span + int(info.min)


def _c_division(n: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """C's truncating quotient and remainder of nonzero divisors, wrapped to the operands'
    type; a zero divisor gives 0 here (the kernel's value there is unspecified)."""
    q, r = [], []
    for a, b in zip(n.tolist(), d.tolist()):
        quotient = 0 if b == 0 else abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        q.append(_wrap(quotient, n.dtype.type))
        r.append(_wrap(a - quotient * b, n.dtype.type))
    return np.array(q, dtype=n.dtype), np.array(r, dtype=n.dtype)


def _operands(dtype: type, count: int) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dtype)
    rng = np.random.default_rng(7)
    n = rng.integers(info.min, info.max, count, dtype=dtype, endpoint=True)
    d = rng.integers(-9 if info.min < 0 else 0, 9, count, dtype=dtype, endpoint=True)
    n[:4] = [info.min, info.min, info.max, 0]
    d[:4] = [-1 if info.min < 0 else 1, 0, 0, 0]
    return n, d


@pytest.mark.parametrize("name", list(TYPES))
@pytest.mark.parametrize("width", [1, 4])
def test_division_never_traps_and_truncates(ctx: cl.Context, name: str, width: int) -> None:
    t = name if width == 1 else f"{name}{width}"
    src = f"""
    __kernel void k(__global const {t} *n, __global const {t} *d,
                    __global {t} *q, __global {t} *r, __global {t} *c)
    {{
        size_t i = get_global_id(0);
        q[i] = n[i] / d[i];
        r[i] = n[i] % d[i];
        {t} x = n[i];
        x /= d[i];
        c[i] = x;
        c[i] %= ({t})5;
    }}
    """
    dtype = TYPES[name]
    count = 64
    n, d = _operands(dtype, count * width)
    queue = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    nb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=n)
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=d)
    outs = [cl.Buffer(ctx, mf.READ_WRITE, n.nbytes) for _ in range(3)]
    cl.Program(ctx, src).build().k(queue, (count,), None, nb, db, *outs)
    q, r, c = (np.empty_like(n) for _ in range(3))
    for host, buf in zip((q, r, c), outs):
        cl.enqueue_copy(queue, host, buf)
    info = np.iinfo(dtype)
    defined = d != 0
    promoted = width == 1 and np.dtype(dtype).itemsize < 4  # C divides these in int
    if info.min < 0 and not promoted:  # the most negative value over -1 overflows
        defined &= ~((n == info.min) & (d == dtype(-1)))
    want_q, want_r = _c_division(n, d)
    _, want_c = _c_division(want_q, np.full_like(want_q, 5))
    np.testing.assert_array_equal(q[defined], want_q[defined])
    np.testing.assert_array_equal(r[defined], want_r[defined])
    np.testing.assert_array_equal(c[defined], want_c[defined])


def test_constant_divisors_keep_the_operator() -> None:
    """A constant divisor other than 0 and -1 cannot trap: C's operator is printed, so the
    compiler's strength reduction of constant divisions stays."""
    src = """
    __kernel void k(__global int *x, int d)
    {
        size_t i = get_global_id(0);
        x[i] = x[i] / 7 + x[i] % 16 + x[i] / d + x[i] / -1;
    }
    """
    module = compile_source(src).module
    text = print_c(module)
    assert "/ 7" in text and "% 16" in text
    assert "PPCL_SDIV_S(/, int, ppcl_u_x[ppcl_u_i], ppcl_u_d" in text
    assert "PPCL_SDIV_S(/, int, ppcl_u_x[ppcl_u_i], -1" in text


def test_constant_divisors_through_casts_are_converted(ctx: cl.Context) -> None:
    """A constant divisor is judged by its value after its casts: ``(int)4294967296L`` is 0 and
    ``(int)8589934591L`` is -1, so both divide through the checked macro and never trap."""
    src = """
    __kernel void k(__global const int *n, __global int *q, __global int *r)
    {
        size_t i = get_global_id(0);
        q[i] = n[i] / (int)8589934591L;
        r[i] = n[i] % (int)4294967296L;
    }
    """
    text = print_c(compile_source(src).module)
    assert "PPCL_SDIV_S(/, int, ppcl_u_n[ppcl_u_i], (int)8589934591L" in text
    assert "PPCL_SDIV_S(%, int, ppcl_u_n[ppcl_u_i], (int)4294967296L" in text
    n = np.array([np.iinfo(np.int32).min, -7, 0, 5, 123456, np.iinfo(np.int32).max] * 4,
                 dtype=np.int32)
    queue = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    nb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=n)
    qb, rb = (cl.Buffer(ctx, mf.READ_WRITE, n.nbytes) for _ in range(2))
    cl.Program(ctx, src).build().k(queue, n.shape, None, nb, qb, rb)
    q = np.empty_like(n)
    cl.enqueue_copy(queue, q, qb)
    defined = n != np.iinfo(np.int32).min
    np.testing.assert_array_equal(q[defined], -n[defined])


def test_divisions_in_program_scope_initializers_are_folded(ctx: cl.Context) -> None:
    """A program scope initializer is a constant expression; a division in it whose divisor
    is not a literal (a sum, a sizeof) was printed as the guarded division, a statement
    expression that C does not allow at file scope, so the C compiler rejected the kernel."""
    source = """
    constant float4 rows[] = { (float4)(1.0f), (float4)(2.0f), (float4)(3.0f) };
    constant int counts[3] = { sizeof(rows) / sizeof(rows[0]), 100 % (int)sizeof(short),
                               (10 / (2 + 3)) << 4 };
    constant float scale = (float)(sizeof(float4) / sizeof(float)) / 8;
    __kernel void k(__global float *out) {
        for (int i = 0; i < 3; i++) out[i] = counts[i] * scale;
    }
    """
    out = _run_one_item(ctx, source, np.zeros(3, np.float32))
    np.testing.assert_array_equal(out, np.array([3, 0, 32], np.float32) * 0.5)


def _run_one_item(ctx: cl.Context, source: str, out: np.ndarray) -> np.ndarray:
    """``out`` as kernel ``k`` of ``source``, run by one work-item, writes it."""
    prg = cl.Program(ctx, source).build()
    queue = cl.CommandQueue(ctx)
    buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    prg.k(queue, (1,), None, buf)
    cl.enqueue_copy(queue, out, buf)
    return out


def test_integer_vector_operators_in_program_scope_initializers_are_folded(
        ctx: cl.Context) -> None:
    """Integer vector division, remainder and shifts print as lane-guarded statement
    expressions, which C does not allow at file scope: a program scope initializer using them
    is reduced to a vector literal lane by lane, with OpenCL's rules (truncating division,
    shift counts modulo the element width, wrap-around in the element type)."""
    source = """
    constant int2 halves = (int2)(10, -20) / (int2)(2, 3);
    constant int4 mixed = (int4)(7) % (int4)(2, 3, 4, 5) + (int4)(1, 2, 3, 4) * 2;
    constant uint2 shifted = (uint2)(9, 8) >> (uint2)(1, 33);
    constant uchar4 wrapped = -(uchar4)(1, 2, 255, 0) + (uchar4)((uchar2)(3, 4), 5, 6);
    __kernel void k(__global int *out) {
        out[0] = halves.x; out[1] = halves.y; out[2] = mixed.x; out[3] = mixed.w;
        out[4] = shifted.x; out[5] = shifted.y; out[6] = wrapped.x; out[7] = wrapped.z;
    }
    """
    out = _run_one_item(ctx, source, np.zeros(8, np.int32))
    np.testing.assert_array_equal(out, [5, -6, 3, 10, 4, 4, 2, 6])


def _wide_operands(dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """Dividends and divisors over the whole range of a 32-bit type, with the pairs where a
    rounded quotient would go wrong first: exact multiples (an integer quotient), one more and
    one less than them, the extremes and divisors of 1, -1, 2 and the extremes."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(32)
    count = 1 << 16
    n = rng.integers(info.min, info.max, count, dtype=np.int64, endpoint=True)
    d = rng.integers(info.min, info.max, count, dtype=np.int64, endpoint=True)
    small = rng.integers(1, 1 << 16, count // 4)
    d[: count // 4] = small * (rng.integers(0, 2, count // 4) * 2 - 1 if info.min < 0 else 1)
    k = rng.integers(0, info.max // (1 << 16), count // 4)
    n[: count // 4] = k * d[: count // 4] + rng.integers(-1, 1, count // 4, endpoint=True)
    edges = [info.min, info.min + 1, -2, -1, 0, 1, 2, info.max - 1, info.max]
    edges = [e for e in edges if info.min <= e <= info.max]
    grid_n, grid_d = np.meshgrid(edges, edges)
    n = np.concatenate([grid_n.ravel(), n])
    d = np.concatenate([grid_d.ravel(), d])
    n = np.clip(n, info.min, info.max)
    return n.astype(dtype), d.astype(dtype)


@pytest.mark.parametrize("options", ["", "-cl-unsafe-math-optimizations"])
@pytest.mark.parametrize("name", ["int", "uint", "int4", "uint8"])
def test_32_bit_division_by_varying_divisors_is_exact(ctx: cl.Context, name: str,
                                                      options: str) -> None:
    """32-bit quotients go through double division where the build keeps division exact
    (not under -cl-unsafe-math-optimizations, whose reciprocals are not): every pair of the
    whole range gives C's truncated quotient and remainder, exact multiples included."""
    src = f"""
    __kernel void k(__global const {name} *n, __global const {name} *d,
                    __global {name} *q, __global {name} *r)
    {{
        size_t i = get_global_id(0);
        q[i] = n[i] / d[i];
        r[i] = n[i] % d[i];
    }}
    """
    dtype = np.int32 if name.startswith("int") else np.uint32
    lanes = int(name[len(name.rstrip("0123456789")):] or 1)
    n, d = _wide_operands(dtype)
    count = len(n) // lanes
    n, d = n[: count * lanes], d[: count * lanes]
    queue = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    nb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=n)
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=d)
    qb, rb = (cl.Buffer(ctx, mf.READ_WRITE, n.nbytes) for _ in range(2))
    cl.Program(ctx, src).build(options=options).k(queue, (count,), None, nb, db, qb, rb)
    q, r = np.empty_like(n), np.empty_like(n)
    cl.enqueue_copy(queue, q, qb)
    cl.enqueue_copy(queue, r, rb)
    wide_n, wide_d = n.astype(np.int64), d.astype(np.int64)
    defined = wide_d != 0
    if dtype is np.int32:
        defined &= ~((wide_n == -(2**31)) & (wide_d == -1))
    safe_d = np.where(defined, wide_d, 1)
    want_q = np.abs(wide_n) // np.abs(safe_d) * np.where((wide_n < 0) == (safe_d < 0), 1, -1)
    want_r = wide_n - want_q * safe_d
    np.testing.assert_array_equal(q[defined], want_q[defined].astype(dtype))
    np.testing.assert_array_equal(r[defined], want_r[defined].astype(dtype))


def test_a_work_item_loop_dividing_by_per_item_divisors_vectorizes() -> None:
    """x86 has no vector integer division: the quotient through double lets gcc vectorize a
    work-item loop whose divisor differs from one work-item to the next."""
    from tests.launch import build_kernel
    from tests.test_workgroup import _work_item_loops_vectorized

    src = """
    __kernel void k(__global const int *n, __global const int *d, __global int *q,
                    __global uint *r)
    {
        int i = get_global_id(0);
        q[i] = n[i] / d[i];
        r[i] = (uint)n[i] % (uint)d[i];
    }
    """
    kernel = build_kernel(src, "k", local_size=(64,), want_vector_report=True)
    assert _work_item_loops_vectorized(kernel), kernel.vector_report
