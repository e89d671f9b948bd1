"""ppcl.array against numpy: creation, transfers, views, lazy elementwise expressions over
float32/float64/int32/complex64, in-place operators, reductions and the fused kernels."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ppcl
import ppcl.array as cla

DTYPES = [np.float32, np.float64, np.int32, np.complex64]


def host(dtype, shape=(37, 50), seed=0):
    rng = np.random.default_rng(seed)
    values = rng.integers(1, 9, size=shape) if np.dtype(dtype).kind == "i" else \
        rng.random(shape) + 0.5
    if np.dtype(dtype).kind == "c":
        values = values + 1j * (rng.random(shape) - 0.5)
    return values.astype(dtype)


def close(got, want, dtype):
    rtol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    assert got.dtype == np.asarray(want).dtype or np.asarray(want).dtype == np.float64


def test_transfers_and_creation(queue):
    h = host(np.float32)
    a = cla.to_device(queue, h)
    assert (a.shape, a.dtype, a.strides, a.offset, a.size) == (h.shape, h.dtype, h.strides, 0,
                                                               h.size)
    np.testing.assert_array_equal(a.get(), h)
    z = cla.zeros(queue, (3, 4), np.int32)
    np.testing.assert_array_equal(z.get(), np.zeros((3, 4), np.int32))
    e = cla.empty_like(a)
    assert (e.shape, e.dtype) == (a.shape, a.dtype)
    np.testing.assert_array_equal(cla.zeros_like(a).get(), np.zeros_like(h))
    b = cla.empty(queue, h.shape, h.dtype)
    b.set(h * 2)
    np.testing.assert_array_equal(b.get(), h * 2)
    c = a.copy()
    a.fill(7)
    np.testing.assert_array_equal(c.get(), h)
    np.testing.assert_array_equal(a.get(), np.full_like(h, 7))


@pytest.mark.parametrize("args,dtype", [((10,), None), ((2, 20, 3), np.float32),
                                        ((5, -1, -0.5), np.float64), ((0, 7), np.int32),
                                        ((1e-5, 1, 0.1), np.complex64),
                                        ((-2, 3, 0.25), np.complex128)])
def test_arange(queue, args, dtype):
    want = np.arange(*args, dtype=dtype)
    got = cla.arange(queue, *args, dtype=dtype).get()
    np.testing.assert_allclose(got, want)
    assert got.dtype == want.dtype


def test_concatenate(queue):
    x, y = host(np.float32, (3, 4)), host(np.float32, (2, 4), seed=1)
    got = cla.concatenate([cla.to_device(queue, x), cla.to_device(queue, y)]).get()
    np.testing.assert_array_equal(got, np.concatenate([x, y]))
    got = cla.concatenate([cla.to_device(queue, x.T), cla.to_device(queue, y.T)], axis=1)
    np.testing.assert_array_equal(got.get(), np.concatenate([x.T, y.T], axis=1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_arithmetic(queue, dtype):
    x, y = host(dtype), host(dtype, seed=1)
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    close((a + b).get(), x + y, dtype)
    close((a - b).get(), x - y, dtype)
    close((a * b).get(), x * y, dtype)
    close((a * 3).get(), x * 3, dtype)
    close((3 - a).get(), 3 - x, dtype)
    close((2 * a + b * 0.5).get(), 2 * x + y * 0.5, dtype)
    close((-a).get(), -x, dtype)
    close(abs(a - b).get(), abs(x - y), dtype)
    if np.dtype(dtype).kind != "c":
        close((a / b).get(), x / y, dtype)
        close((1 / a).get(), 1 / x, dtype)
        close((a ** 2).get(), x ** 2, dtype)
    else:
        close((a / b).get(), x / y, dtype)
        close(a.real.get(), x.real, dtype)
        close(a.imag.get(), x.imag, dtype)
        close(a.conj().get(), x.conj(), dtype)
        close((a * 2j).get(), x * 2j, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_comparisons(queue, dtype):
    x, y = host(dtype), host(dtype, seed=1)
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    for got, want in [(a < b, x < y), (a <= b, x <= y), (a > 2, x > 2), (a >= b, x >= y),
                      (a == b, x == y), (a != 3, x != 3)]:
        assert got.dtype == np.int8  # as PyOpenCL's comparisons
        np.testing.assert_array_equal(got.get(), want.astype(np.int8))


def test_numpy_operands_on_the_left(queue):
    x = host(np.float32, (10,))
    a = cla.to_device(queue, x)
    got = np.float32(3) * a
    assert isinstance(got, cla.Array) and got.dtype == np.float32
    np.testing.assert_allclose(got.get(), 3 * x)
    assert (np.float64(2) + a).dtype == np.float64
    with pytest.raises(TypeError):
        _ = np.ones(10, np.float32) + a  # host arrays do not mix with device arrays


def test_mixed_dtypes_follow_numpy(queue):
    x, y = host(np.int32), host(np.float32, seed=1)
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    for got, want in [(a + b, x + y), (a * 2.5, x * 2.5), (a / a, x / x), (a + 1, x + 1),
                      (b + np.float64(1), y + np.float64(1))]:
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.get(), want, rtol=1e-6)
    c = cla.to_device(queue, host(np.complex64))
    assert (c + b).dtype == np.complex64
    np.testing.assert_allclose((c + b).get(), host(np.complex64) + y, rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_inplace(queue, dtype):
    x, y = host(dtype), host(dtype, seed=1)
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    a += b
    a *= 2
    a -= 1
    x = (x + y) * 2 - 1
    close(a.get(), x, dtype)
    if np.dtype(dtype).kind != "i":
        a /= b
        close(a.get(), x / y, dtype)
    one = cla.to_device(queue, x[:1, :1])
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE"):
        one += b  # as numpy: a larger operand does not fit a one-element array


def test_astype(queue):
    x = host(np.float64)
    a = cla.to_device(queue, x)
    for dtype in (np.float32, np.int32, np.complex64):
        got = a.astype(dtype)
        assert got.dtype == dtype
        np.testing.assert_allclose(got.get(), x.astype(dtype), rtol=1e-6)


def test_views_slicing(queue):
    x = host(np.float32, (12, 10))
    a = cla.to_device(queue, x)
    for index in [(slice(2, 8), slice(None, None, 3)), (3,), (slice(None), 4),
                  (slice(None, None, -1),), (Ellipsis, slice(1, None, 2)), (5, 6)]:
        view = a[index]
        assert view.shape == x[index].shape
        np.testing.assert_array_equal(view.get(), x[index])
        np.testing.assert_allclose((view * 2 + 1).get(), x[index] * 2 + 1)
    row = a[3]
    assert row.offset == 3 * 10 * 4 and row.flags.c_contiguous
    np.testing.assert_array_equal(a.T.get(), x.T)
    np.testing.assert_allclose((a.T + a.T * a.T).get(), x.T + x.T * x.T, rtol=1e-6)


def test_views_mixed_layouts(queue):
    x = host(np.float64, (8, 8))
    a = cla.to_device(queue, x)
    np.testing.assert_allclose((a + a.T).get(), x + x.T)
    np.testing.assert_allclose((a[::2, 1::2] * a[1::2, ::2]).get(), x[::2, 1::2] * x[1::2, ::2])
    np.testing.assert_allclose(a[::-1].sum().get(), x.sum())
    np.testing.assert_allclose(a[:, 3].sum().get(), x[:, 3].sum())
    np.testing.assert_allclose(cla.dot(a[1], a[:, 2]).get(), x[1] @ x[:, 2])


def test_setitem_and_inplace_on_views(queue):
    x = host(np.float32, (6, 9))
    a = cla.to_device(queue, x)
    a[1:4, ::2] = 0
    x[1:4, ::2] = 0
    a[0] = cla.to_device(queue, np.arange(9, dtype=np.float32))
    x[0] = np.arange(9)
    view = a[:, 1]
    view += 5
    x[:, 1] += 5
    np.testing.assert_array_equal(a.get(), x)
    a[2:, 3] = np.arange(4, dtype=np.float32)
    x[2:, 3] = np.arange(4)
    np.testing.assert_array_equal(a.get(), x)
    a[1:] += a[:-1]  # overlapping views read the source as it was
    x[1:] += x[:-1].copy()
    np.testing.assert_array_equal(a.get(), x)


def test_set_on_strided_view(queue):
    x = host(np.int32, (5, 8))
    a = cla.to_device(queue, x)
    a[:, ::3].set(np.full((5, 3), -1, np.int32))
    x[:, ::3] = -1
    np.testing.assert_array_equal(a.get(), x)


def test_reshape_ravel(queue):
    x = host(np.float32, (4, 6))
    a = cla.to_device(queue, x)
    np.testing.assert_array_equal(a.reshape(6, 4).get(), x.reshape(6, 4))
    np.testing.assert_array_equal(a.reshape((3, -1)).get(), x.reshape(3, -1))
    np.testing.assert_array_equal(a.T.ravel().get(), x.T.ravel())
    np.testing.assert_array_equal(a.ravel().get(), x.ravel())
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE"):
        a.reshape(5, 5)
    row = cla.to_device(queue, x[0])
    # a pending expression is evaluated before its buffer is viewed in Fortran order
    np.testing.assert_array_equal((row + row).reshape(6, order="F").get(), x[0] + x[0])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 255, 1000, 70001])
def test_reductions(queue, dtype, n):
    x, y = host(dtype, (n,)), host(dtype, (n,), seed=1)
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    rtol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10
    total = cla.sum(a)
    assert total.shape == () and total.dtype == dtype
    np.testing.assert_allclose(total.get(), x.sum(dtype=dtype), rtol=rtol)
    np.testing.assert_allclose(cla.dot(a, b).get(), np.dot(x, y), rtol=rtol)
    np.testing.assert_allclose(cla.vdot(a, b).get(), np.vdot(x, y), rtol=rtol)
    if np.dtype(dtype).kind != "c":
        assert cla.max(a).get() == x.max() and cla.min(a).get() == x.min()
        assert a.max().get() == x.max()


def test_subset_reductions(queue):
    x = host(np.float32, (1000,))
    subset = np.random.default_rng(3).integers(0, 1000, 300).astype(np.int32)
    a, s = cla.to_device(queue, x), cla.to_device(queue, subset)
    np.testing.assert_allclose(cla.subset_sum(s, a).get(), x[subset].sum(), rtol=1e-5)
    assert cla.subset_max(s, a).get() == x[subset].max()
    assert cla.subset_min(s, a).get() == x[subset].min()


def test_lazy_expression_is_one_kernel(queue):
    x, y, z = (host(np.float32, (5000,), seed=k) for k in range(3))
    a, b, c = (cla.to_device(queue, v) for v in (x, y, z))
    expr = a * b + c
    assert expr._expr is not None  # nothing ran yet
    np.testing.assert_allclose(expr.sum().get(), (x * y + z).sum(), rtol=1e-5)
    assert expr._expr is not None  # the sum ran over the tree, not over a temporary
    count = len(cla._kernels[queue.context])
    for _ in range(3):
        (a * b + c).sum().get()
        (b * c + a).sum().get()
    assert len(cla._kernels[queue.context]) == count  # same shape of tree: no new kernel
    np.testing.assert_allclose(float((a * 2 + c * 3).sum()), (x * 2 + z * 3).sum(), rtol=1e-5)


def test_laziness_never_changes_results(queue):
    x = host(np.float32, (100,))
    a = cla.to_device(queue, x)
    pending = a * 2
    a += 1  # writing a evaluates what reads it first
    a.fill(0)
    np.testing.assert_allclose(pending.get(), x * 2)
    other = a + 1
    a.set(x)
    np.testing.assert_allclose(other.get(), np.ones_like(x))
    deep = a
    for _ in range(100):  # long chains are evaluated in parts, not grown without bound
        deep = deep + 1
    np.testing.assert_allclose(deep.get(), x + 100, rtol=1e-5)
    total = a.sum()
    deep = total * a  # a 0-d leaf first: evaluated parts still take the full shape
    for _ in range(60):
        deep = deep + a
    np.testing.assert_allclose(deep.get(), x.sum() * x + 60 * x, rtol=1e-5)


def test_elementwise_on_device_scalar(queue):
    x = host(np.float64, (50,))
    a = cla.to_device(queue, x)
    np.testing.assert_allclose((a / a.sum()).get(), x / x.sum())


def test_helpers(queue):
    x, y = host(np.float32), host(np.float32, seed=1)
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    np.testing.assert_array_equal(cla.maximum(a, b).get(), np.maximum(x, y))
    np.testing.assert_array_equal(cla.minimum(a, 1.0).get(), np.minimum(x, 1.0))
    np.testing.assert_array_equal(cla.if_positive(a - b, a, b).get(), np.where(x - y > 0, x, y))


@pytest.mark.parametrize("shape", [(37, 45), (64, 100)])
def test_matmul(queue, shape):
    m = host(np.float32, shape)
    v = host(np.float32, shape[1:], seed=1)
    got = (cla.to_device(queue, m) @ cla.to_device(queue, v)).get()
    np.testing.assert_allclose(got, m @ v, rtol=1e-5)


def test_misuse_raises_opencl_errors(queue):
    a = cla.to_device(queue, host(np.float32, (4, 5)))
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE"):
        a + cla.zeros(queue, (5, 4), np.float32)
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE"):
        a.set(np.zeros((2, 2), np.float32))
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE"):
        a[cla.zeros(queue, 3, np.int32)]
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE"):
        a[1:].data  # noqa: B018 - the property raises
    with pytest.raises(TypeError, match="complex"):
        _ = cla.to_device(queue, host(np.complex64)) < 1
    with pytest.raises(TypeError, match="complex"):  # max of float2 is taken per component
        cla.to_device(queue, host(np.complex64)).max()
    short = cla.zeros(queue, 3, np.float32)  # an out= of another shape than the result
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE"):
        cla.maximum(a, a, out=short)
    with pytest.raises(ppcl.LogicError, match="INVALID_VALUE"):
        cla.take(a.ravel(), cla.zeros(queue, 4, np.int32), out=short)


def test_take_cumsum_any_all(queue):
    x = host(np.int32, (300,))
    indices = np.random.default_rng(2).integers(0, 300, 50).astype(np.int32)
    a = cla.to_device(queue, x)
    np.testing.assert_array_equal(cla.take(a, cla.to_device(queue, indices)).get(), x[indices])
    np.testing.assert_array_equal(cla.cumsum(a).get(), np.cumsum(x, dtype=np.int32))
    np.testing.assert_allclose(cla.cumsum(a, np.float64).get(), np.cumsum(x, dtype=np.float64))
    assert (a > 0).all().get() == 1 and (a > 5).any().get() == 1 and (a > 100).any().get() == 0


def test_multi_put_repeats_shorter_values_as_numpy_put(queue):
    # multi_put takes values[i % len(values)], as numpy's put and PyOpenCL's multi_put do;
    # a 3-element source for 6 indices was refused
    indices = np.array([0, 2, 3, 5, 7, 8], np.int32)
    sources = [np.arange(3, dtype=np.float32) + k for k in range(3)] + [np.float32([9])]
    outs = [cla.zeros(queue, 10, np.float32) for _ in sources]
    cla.multi_put([cla.to_device(queue, s) for s in sources], cla.to_device(queue, indices),
                  out=outs)
    for source, out in zip(sources, outs):
        want = np.zeros(10, np.float32)
        np.put(want, indices, source)
        np.testing.assert_array_equal(out.get(), want)
    strided = cla.to_device(queue, np.arange(8, dtype=np.float32))[::2]  # 4 values for 6
    out = cla.multi_put([strided], cla.to_device(queue, indices), dest_shape=(10,))[0]
    want = np.zeros(10, np.float32)
    np.put(want, indices, np.arange(8, dtype=np.float32)[::2])
    np.testing.assert_array_equal(out.get()[indices], want[indices])
    with pytest.raises(ppcl.LogicError):  # a[indices] = values stays numpy's strict form
        cla.put(outs[0], cla.to_device(queue, indices), cla.to_device(queue, sources[0]))


def test_cumsum_wait_for_return_event_and_complex(queue):
    """PyOpenCL's cumsum(a, output_dtype, queue, wait_for, return_event=...): ppcl's took
    neither wait_for nor return_event (TypeError)."""
    x = np.arange(1, 1001, dtype=np.int64)
    a = cla.to_device(queue, x)
    event, summed = cla.cumsum(a, queue=queue, wait_for=[ppcl.enqueue_marker(queue)],
                               return_event=True)
    event.wait()
    np.testing.assert_array_equal(summed.get(), np.cumsum(x))
    z = (x + 1j * x[::-1]).astype(np.complex64)
    np.testing.assert_allclose(cla.cumsum(cla.to_device(queue, z)).get(), np.cumsum(z),
                               rtol=1e-6)


def test_complex128_empty_and_0d(queue):
    h = (np.arange(10) + 1j * np.arange(10)[::-1]).astype(np.complex128)
    a = cla.to_device(queue, h)
    for got, want in [(a * a, h * h), (a / (a + 1), h / (h + 1)), (abs(a), abs(h)),
                      (a.sum(), h.sum()), (cla.vdot(a, a), np.vdot(h, h)), (a * 2.5, h * 2.5)]:
        assert got.dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got.get(), want)
    with pytest.raises(TypeError, match="imaginary"):
        a.astype(np.float64)
    empty = cla.zeros(queue, (0,), np.float32)
    assert empty.sum().get() == 0 and (empty + 1).get().shape == (0,)
    scalar = cla.to_device(queue, np.float32(3))
    assert scalar.shape == () and float(scalar * 2) == 6.0


def test_stack_diff_squeeze_with_queue(queue):
    x, y = host(np.float32, (3, 4)), host(np.float32, (3, 4), seed=1)
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    for axis in (0, 1, -1):
        np.testing.assert_array_equal(cla.stack([a, b], axis=axis).get(),
                                      np.stack([x, y], axis=axis))
    np.testing.assert_allclose(cla.diff(a.ravel()).get(), np.diff(x.ravel()))
    np.testing.assert_array_equal(a[:, 1:2].squeeze().get(), x[:, 1:2].squeeze())
    other = ppcl.CommandQueue(queue.context)
    moved = a.with_queue(other)
    assert moved.queue is other and moved.base_data is a.base_data


def test_memory_pool_allocator(queue):
    from ppcl import tools

    pool = tools.MemoryPool(tools.ImmediateAllocator(queue))
    x = host(np.float32, (100,))
    a = cla.to_device(queue, x, allocator=pool)
    result = a * 2 + 1
    np.testing.assert_allclose(result.get(), x * 2 + 1)
    assert result.allocator is pool and isinstance(result.base_data, tools.PooledBuffer)
    assert isinstance(a.sum().base_data, tools.PooledBuffer)


@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_remainder_and_floor_division_follow_numpy(queue, dtype):
    x = np.array([7, -7, 7, -7, 0, 5], dtype)
    y = np.array([3, 3, -3, -3, 4, 5], dtype)
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    np.testing.assert_array_equal((a % b).get(), x % y)
    np.testing.assert_array_equal((a % 4).get(), x % 4)
    np.testing.assert_array_equal((a // b).get(), x // y)
    np.testing.assert_array_equal((20 // b).get(), 20 // y)
    np.testing.assert_array_equal((9 % b).get(), 9 % y)


@pytest.mark.parametrize("dtype", [np.int32, np.uint16, np.int64])
def test_integer_floor_division_and_remainder_by_zero_are_zero_as_in_numpy(queue, dtype):
    x = np.array([5, 7, 0, 3], dtype)
    y = np.array([0, 2, 0, 0], dtype)
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    with np.errstate(divide="ignore"):
        for got, want in (((a // b).get(), x // y), ((a % b).get(), x % y),
                          ((a // 0).get(), x // dtype(0)), ((a % 0).get(), x % dtype(0))):
            np.testing.assert_array_equal(got, want)


def test_empty_reductions_zero_steps_and_layouts_as_numpy(queue):
    empty = cla.zeros(queue, (0,), np.float32)
    # max of nothing was -inf (the neutral element) and min of int32 nothing INT_MAX
    for reduce in (cla.max, cla.min):
        with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*empty"):
            reduce(empty)
        with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*empty"):
            reduce(cla.zeros(queue, (0,), np.int32))
    assert cla.sum(empty).get() == 0
    assert bool(empty.any().get()) is False and bool(empty.all().get()) is True
    with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*empty subset"):
        cla.subset_max(cla.zeros(queue, (0,), np.int32), cla.zeros(queue, (4,), np.float32))
    # a step of 0 was taken for 1
    with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*step of 0"):
        cla.arange(queue, 0, 5, 0, dtype=np.int32)
    np.testing.assert_array_equal(cla.arange(queue, 5, 0, -2, dtype=np.int32).get(), [5, 3, 1])
    transposed = cla.to_device(queue, np.arange(6, dtype=np.float32).reshape(2, 3)).T
    like = cla.empty_like(transposed)
    assert like.shape == (3, 2) and like.flags.f_contiguous  # as numpy and PyOpenCL keep it


def test_shapes_indexes_axes_and_dtypes_that_make_no_array(queue):
    a = cla.to_device(queue, np.arange(4, dtype=np.float32))
    # a[True] became a view at a garbage offset: numpy's copy for a boolean index was taken
    # for a view of the index model
    for index in (True, np.bool_(False), (0, True)):
        with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*index"):
            a[index]
    np.testing.assert_array_equal(a[np.int64(-1), None].get(), [3])
    # a float in a shape was truncated, a float alone failed in iteration
    for shape in (4.0, (2.0, 2), (2, None)):
        with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*not an integer"):
            cla.empty(queue, shape, np.float32)
    with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*objects"):
        cla.empty(queue, 4, object)
    # transpose((2, 0)) of a 3-d array dropped an axis without a word
    cube = cla.to_device(queue, np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    for axes in ((2, 0), (0, 0, 1), (0, 1, 3)):
        with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*permutation"):
            cube.transpose(axes)
    np.testing.assert_array_equal(cube.transpose((-1, 0, 1)).get(),
                                  np.arange(24).reshape(2, 3, 4).transpose((2, 0, 1)))
    with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*at least one"):
        cla.concatenate([])  # was IndexError from inside ppcl


def test_arrays_of_two_contexts_are_named_as_such(ctx, queue):
    other_queue = ppcl.CommandQueue(ppcl.Context(ctx.devices))
    a = cla.to_device(queue, np.ones(4, np.float32))
    b = cla.to_device(other_queue, np.ones(4, np.float32))
    with pytest.raises(ppcl.LogicError, match="CL_INVALID_CONTEXT.*arrays"):
        a + b
    with pytest.raises(ppcl.LogicError, match="CL_INVALID_CONTEXT.*arrays"):
        a[:] = b


def test_fill_values_and_orders_numpy_refuses(queue):
    ints = cla.zeros(queue, 2, np.int32)
    for value in (np.nan, np.inf):  # were INT_MIN
        with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*integer"):
            ints.fill(value)
        with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*integer"):
            ints[:] = value
    with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*one scalar"):
        cla.zeros(queue, 2, np.float32).fill(np.ones(2))  # named a generated kernel's argument
    np.testing.assert_array_equal(ints.fill(1.7).get(), [1, 1])  # numpy truncates too
    with pytest.raises(ppcl.LogicError, match="CL_INVALID_VALUE.*order"):
        cla.zeros(queue, (2, 3), np.float32, order="X")  # was taken for "C"


def test_zeros_and_fill_of_vector_and_record_dtypes(queue):
    # zeros of cltypes.float4 failed in numpy's type promotion (a vector dtype and 0), and
    # zeros of an unregistered record asked for a C name, which PyOpenCL's byte fill needs not
    v = cla.zeros(queue, 5, ppcl.cltypes.float4)
    assert v.dtype == ppcl.cltypes.float4
    np.testing.assert_array_equal(v.get().view(np.float32), np.zeros(20, np.float32))
    v.fill(ppcl.cltypes.make_float4(1, 2, 3, 4))
    np.testing.assert_array_equal(v.get().view(np.float32).reshape(5, 4), [[1, 2, 3, 4]] * 5)
    v[1:3].fill(7)  # a number fills every component, as numpy fills each field
    np.testing.assert_array_equal(v.get().view(np.float32).reshape(5, 4)[:, 0],
                                  [1, 7, 7, 1, 1])
    record = np.dtype([("i", np.int32), ("f", np.float32)])
    r = cla.zeros(queue, (2, 3), record)
    assert r.get().tolist() == [[(0, 0.0)] * 3] * 2
    assert cla.zeros_like(cla.to_device(queue, np.ones(3, record))).get().tolist() == \
        [(0, 0.0)] * 3
    assert cla.zeros(queue, 0, record).size == 0


def test_view_as_a_dtype_of_another_size_regroups_the_last_axis(queue):
    # as numpy's view: 8 float32 are 2 float4 (ppcl refused any other size), and a float4
    # array's bytes are 4 float32 each
    h = np.arange(24, dtype=np.float32).reshape(3, 8)
    a = cla.to_device(queue, h)
    v = a.view(ppcl.cltypes.float4)
    assert v.shape == (3, 2) and v.dtype == ppcl.cltypes.float4
    np.testing.assert_array_equal(v.get(), h.view(ppcl.cltypes.float4))
    back = v.view(np.float32)
    assert back.shape == (3, 8)
    np.testing.assert_array_equal(back.get(), h)
    np.testing.assert_array_equal(a[1:].view(np.int64).get(), h[1:].view(np.int64))
    with pytest.raises(ppcl.LogicError, match="contiguous last axis"):
        a[:, ::2].view(np.int64)
    with pytest.raises(ppcl.LogicError, match="not a multiple"):
        a[:, :3].view(np.int64)


# ---------------------------------------------------------------------- events and queues

OUT_OF_ORDER = ppcl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
COMPLETE = ppcl.command_execution_status.COMPLETE


@pytest.fixture(scope="module")
def ooo_queue(ctx):
    return ppcl.CommandQueue(ctx, properties=OUT_OF_ORDER)


@pytest.fixture(scope="module")
def set_value(ctx):
    source = "__kernel void set_value(__global float *a, float v) { a[get_global_id(0)] = v; }"
    return ppcl.Kernel(ppcl.Program(ctx, source).build(), "set_value")


def held_write(queue, set_value, value, n=300):
    """An array of zeros whose write of ``value`` waits for a user event (returned): until it
    is set, only the array's events keep later commands from running before the write."""
    array = cla.zeros(queue, (n,), np.float32)
    array.finish()
    gate = ppcl.UserEvent(queue.context)
    array.add_event(set_value(queue, (n,), None, array.data, np.float32(value), wait_for=[gate]))
    return array, gate


HELD_OPERATIONS = {
    "copy": (lambda a: a.copy(), lambda x: x),
    "astype": (lambda a: a.astype(np.float64).copy(), lambda x: x),
    "fill": (lambda a: a.fill(7), lambda x: np.full_like(x, 7)),
    "iadd": (lambda a: a.__iadd__(1), lambda x: x + 1),
    "setitem": (lambda a: a.__setitem__(slice(0, 5), 9) or a,
                lambda x: np.concatenate([np.full(5, 9, x.dtype), x[5:]])),
    "sum": (lambda a: cla.sum(a), lambda x: x.sum()),
    "max": (lambda a: cla.max(a * 2), lambda x: 2 * x.max()),
    "dot": (lambda a: cla.dot(a, a), lambda x: np.dot(x, x)),
    "concatenate": (lambda a: cla.concatenate([a, a]), lambda x: np.concatenate([x, x])),
    "take": (lambda a: cla.take(a, cla.arange(a.queue, 0, a.size, 3, dtype=np.int32)),
             lambda x: x[::3]),
    "subset_sum": (lambda a: cla.subset_sum(cla.arange(a.queue, 0, a.size, 3, dtype=np.int32),
                                            a), lambda x: x[::3].sum()),
    "cumsum": (lambda a: cla.cumsum(a), np.cumsum),
    "reshape_copy": (lambda a: a.reshape(30, 10).T.copy(), lambda x: x.reshape(30, 10).T),
    "matmul": (lambda a: cla.to_device(a.queue, np.ones((4, a.size), np.float32)) @ a,
               lambda x: np.full(4, x.sum())),
    "put": (lambda a: cla.put(a, cla.arange(a.queue, 0, a.size, 3, dtype=np.int32), 5),
            lambda x: np.where(np.arange(x.size) % 3 == 0, 5, x)),
    "subset_dot": (lambda a: cla.subset_dot(cla.arange(a.queue, 0, a.size, 3, dtype=np.int32),
                                            _ones(a), a),
                   lambda x: x[::3].sum()),
    "get_async": (lambda a: _Got(a.get_async()), lambda x: x),
    "map_to_host": (lambda a: _Got(a.map_to_host(is_blocking=False)), lambda x: x),
}


def _ones(array):
    return cla.to_device(array.queue, np.ones(array.shape, array.dtype))


class _Got:
    """What a non-blocking host read gave: ``get()`` waits for its event, then the array."""

    def __init__(self, pair):
        self.ary, self.event = pair

    def get(self):
        self.event.wait()
        return np.array(self.ary)


@pytest.mark.parametrize("name", HELD_OPERATIONS)
def test_array_operations_wait_for_the_arrays_events_on_an_out_of_order_queue(
        ooo_queue, set_value, name):
    """Each operation waits for the events of the arrays it reads and writes (PyOpenCL's
    ``Array.events``): on an out-of-order queue a copy, fill or reduction ran before the
    held write and read or lost the zeros."""
    operation, want = HELD_OPERATIONS[name]
    array, gate = held_write(ooo_queue, set_value, 3)
    result = operation(array)
    gate.set_status(COMPLETE)
    np.testing.assert_allclose(result.get(), want(np.full(array.shape, 3, np.float32)))


def test_the_truth_value_of_an_empty_array_says_it_is_empty(queue):
    """``bool`` of a zero-size array raises as numpy does, saying the array is empty (it said
    "more than one element", which a zero-size array does not have)."""
    with pytest.raises(ValueError, match="empty array is ambiguous"):
        bool(cla.zeros(queue, (0, 3), np.float32))
    with pytest.raises(ValueError, match="more than one element.*any"):
        bool(cla.zeros(queue, (2,), np.float32))
    assert bool(cla.zeros(queue, (1, 1), np.float32) + 1)


EMPTY_OPERATIONS = {
    "add": lambda z: z + 1,
    "iadd": lambda z: z.__iadd__(1),
    "fill": lambda z: z.fill(2),
    "copy": lambda z: z.copy(),
    "astype": lambda z: z.astype(np.float64),
    "where": lambda z: cla.if_positive(z, z, z),
    "elementwise": lambda z: z.__setitem__(slice(None), 3) or z,
}


@pytest.mark.parametrize("name", EMPTY_OPERATIONS)
def test_an_empty_arrays_events_do_not_wait_for_unrelated_commands(ooo_queue, set_value, name):
    """An operation on a zero-size array does no work: its event completes at once. It was a
    marker with no wait list, which on an out-of-order queue waits for every earlier command,
    so waiting for an empty array blocked behind an unrelated write held by a user event."""
    held, gate = held_write(ooo_queue, set_value, 3)
    try:
        empty = cla.zeros(ooo_queue, (0,), np.float32)
        result = EMPTY_OPERATIONS[name](empty)
        assert result.shape == (0,)
        assert [e.command_execution_status for e in result.events] == [COMPLETE] \
            * len(result.events)
        assert result.get().shape == (0,)
        assert held.events[-1].command_execution_status != COMPLETE
    finally:
        gate.set_status(COMPLETE)
    assert (held.get() == 3).all()


def test_an_arrays_last_event_stays_after_it_completed(ctx):
    # as in PyOpenCL, a.events[-1] is the command that made a, completed or not (its profile);
    # completed events were dropped, and a lazy array had none, leaving a.events empty
    queue = ppcl.CommandQueue(ctx, properties=ppcl.command_queue_properties.PROFILING_ENABLE)
    x = cla.to_device(queue, np.arange(50, dtype=np.float32))
    made = {"copy": x.copy(), "fill": cla.empty_like(x).fill(1), "sum": cla.sum(x),
            "lazy": x + 2 * x}  # asking a lazy array for its events runs its kernel
    for name, y in made.items():
        assert len(y.events) == 1, name
        y.events[-1].wait()
        assert y.events[-1].command_execution_status == ppcl.command_execution_status.COMPLETE
        assert y.events[-1].profile.end >= y.events[-1].profile.start
    np.testing.assert_array_equal(made["lazy"].get(), 3 * np.arange(50, dtype=np.float32))
    y = made["fill"]
    for _ in range(30):  # later commands replace completed events: the list stays short
        y.fill(2)
    assert 1 <= len(y.events) <= 12
    y.finish()
    assert y.events == []
    assert (y.get() == 2).all()


def test_finish_waits_for_the_arrays_events_only(ooo_queue, set_value):
    """``Array.finish`` waits for the array's events, as PyOpenCL's does; it finished the
    whole queue too, so it blocked behind an unrelated write held by a user event."""
    held, gate = held_write(ooo_queue, set_value, 3)
    try:
        for shape in ((0,), (1,), (5,)):
            array = cla.arange(ooo_queue, 0, shape[0], 1, dtype=np.float32) + 1
            array.finish()
            assert array.events == []
            np.testing.assert_array_equal(array.get(), np.arange(shape[0]) + 1)
        assert held.events[-1].command_execution_status != COMPLETE
    finally:
        gate.set_status(COMPLETE)
    held.finish()
    assert (held.get() == 3).all()


def test_scan_algorithms_of_an_empty_array_do_not_wait_for_unrelated_commands(
        ooo_queue, set_value):
    """``copy_if`` of a zero-size array returns an event that waits for nothing unrelated."""
    from ppcl.algorithm import copy_if
    held, gate = held_write(ooo_queue, set_value, 3)
    try:
        empty = cla.zeros(ooo_queue, (0,), np.int32)
        out, count, event = copy_if(empty, "ary[i] > 0")
        assert event.command_execution_status == COMPLETE
        assert out.shape == (0,) and int(count.get()) == 0
        ary, event = empty.get_async()
        assert event.command_execution_status == COMPLETE and ary.shape == (0,)
    finally:
        gate.set_status(COMPLETE)
    assert (held.get() == 3).all()


def test_get_and_other_queues_wait_for_an_arrays_events(ctx, ooo_queue, queue, set_value):
    """``get`` (on the array's queue or another) and an array copied onto another queue wait
    for the array's events; a failed write fails what waits for it."""
    for source_queue, other in ((ooo_queue, queue), (queue, ooo_queue)):
        array, gate = held_write(source_queue, set_value, 3)
        copied = array.copy(queue=other)
        timer = threading.Timer(0.05, gate.set_status, (COMPLETE,))
        timer.start()
        assert (array.get(queue=other) == 3).all()
        assert (copied.get() == 3).all() and (array.get() == 3).all()
        timer.join()
    array, gate = held_write(ooo_queue, set_value, 3)
    doubled = array * 2
    gate.set_status(-5)
    with pytest.raises(ppcl.RuntimeError, match="EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"):
        doubled.get()
    with pytest.raises(ppcl.RuntimeError, match="EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"):
        array.finish()


def test_an_array_read_is_finished_before_the_array_is_written(ooo_queue, set_value):
    """A kernel reading an array is in the array's events too, so a later write of it waits
    for the read on an out-of-order queue."""
    array, gate = held_write(ooo_queue, set_value, 3)
    doubled = (array * 2).copy()
    array.fill(0)
    gate.set_status(COMPLETE)
    assert (doubled.get() == 6).all() and (array.get() == 0).all()


def test_many_operations_queue_behind_a_user_event_without_waiting(ooo_queue, set_value):
    """Forty reads and writes of one array enqueue while its write is held by a user event:
    an array's events stay one (each command waited for those before), where waiting for the
    oldest of a long list blocked the program before it could set the event."""
    def operations(array):
        copies = []
        for k in range(20):
            copies.append((array * k).copy())
            array += 1
        return copies

    operations(cla.zeros(ooo_queue, (300,), np.float32))  # the kernels built beforehand
    array, gate = held_write(ooo_queue, set_value, 3)
    safety = threading.Timer(5.0, gate.set_status, (COMPLETE,))  # ends a hang as a failure
    safety.start()
    copies = operations(array)
    enqueued_while_held = gate.command_execution_status != COMPLETE
    safety.cancel()
    if enqueued_while_held:
        gate.set_status(COMPLETE)
    assert enqueued_while_held
    for k, copy in enumerate(copies):
        assert (copy.get() == (3 + k) * k).all()
    assert (array.get() == 23).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_propagates_through_max_min_maximum_minimum(queue, dtype, monkeypatch):
    # OpenCL's fmax/fmin return the other operand of a NaN: max of [1, nan, 3] was 3
    x = np.array([1, np.nan, 3, -2, 0.0, -0.0], dtype)
    y = np.array([0, 1, np.nan, -5, -0.0, 0.0], dtype)
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    for reduce, want in ((cla.max, np.max), (cla.min, np.min)):
        assert np.isnan(reduce(a).get())
        assert reduce(b[3:]).get() == want(y[3:])
    long = np.ones(300_001, dtype)
    long[123_456] = np.nan  # past the one-work-item size: partials folded too
    assert np.isnan(cla.max(cla.to_device(queue, long)).get())
    for pair, want in ((cla.maximum, np.maximum), (cla.minimum, np.minimum)):
        got = pair(a, b).get()
        np.testing.assert_array_equal(got, want(x, y))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want(x, y)))
        np.testing.assert_array_equal(pair(a, 0.5).get(), want(x, dtype(0.5)))
    monkeypatch.setenv("PPCL_ARRAY_PATTERNS", "1")  # that route folds with fmax: not taken
    assert np.isnan(cla.max(a).get()) and np.isnan(cla.min(a).get())


def test_narrow_integer_operators_wrap_in_their_dtype(queue):
    # C computes char and short operands in int: a uint8 200 + 100 was 300 to what followed
    x, y = np.array([200, 5], np.uint8), np.array([100, 1], np.uint8)
    a, b = cla.to_device(queue, x), cla.to_device(queue, y)
    np.testing.assert_array_equal(((a + b) < 100).get(), (x + y) < 100)
    np.testing.assert_array_equal((-a > 10).get(), -x > 10)
    assert cla.sum((a + b) // 1, dtype=np.int32).get() == ((x + y) // 1).sum(dtype=np.int32)
    c = np.array([100, -100, -128], np.int8)
    d = cla.to_device(queue, c)
    np.testing.assert_array_equal(((d + d) / 2).get(), (c + c) / 2)
    np.testing.assert_array_equal(abs(d * 2).get(), abs(c * 2))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal((d // -1).get(), c // -1)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32,
                                   np.int64, np.uint64])
def test_integer_power_is_exact_and_wraps(queue, dtype):
    # through double, 3**39 lost its low digits and an overflow became INT_MIN
    x = np.array([0, 1, 2, 3, 7, 13, 100, 255 if np.dtype(dtype).kind == "u" else -3], dtype)
    e = np.array([0, 5, 9, 39, 3, 17, 4, 3], dtype)
    a, b = cla.to_device(queue, x), cla.to_device(queue, e)
    with np.errstate(over="ignore"):
        for got, want in ((a ** b, x ** e), (a ** 3, x ** 3), (2 ** b, dtype(2) ** e)):
            np.testing.assert_array_equal(got.get(), want)
            assert got.dtype == want.dtype


INPLACE = ["+=", "-=", "*=", "//=", "%=", "**=", "&=", "|=", "^=", "<<=", ">>="]


@pytest.mark.parametrize("dtype", [np.int8, np.uint64])
def test_integer_operators_in_place_and_bitwise(queue, dtype):
    # //=, %=, **= and the bitwise ones had no in-place method: Python rebound the name to a
    # new array, so another reference (or a view's base) kept the old values
    x = np.array([0, 1, 2, 3, 7, 13, 100, 5], dtype)
    y = np.array([1, 5, 3, 2, 3, 1, 4, 3], dtype)
    for op in INPLACE:
        for other_h, other in ((y, cla.to_device(queue, y)), (3, 3)):
            a = cla.to_device(queue, x)
            alias, h = a, x.copy()
            scope = {"a": a, "h": h, "o": other, "oh": other_h}
            exec(f"a {op} o\nh {op} oh", scope)
            assert scope["a"] is alias
            np.testing.assert_array_equal(alias.get(), scope["h"], err_msg=op)
    a = cla.to_device(queue, x)
    for expr in ("~a", "a << 2", "a >> 1", "3 & a", "3 | a", "3 ^ a", "1 << a", "100 >> a",
                 "a << 200 // 20"):
        want = eval(expr.replace("a", "x"))
        got = eval(expr).get()
        np.testing.assert_array_equal(got, want, err_msg=expr)
        assert got.dtype == want.dtype


def test_operators_numpy_refuses_raise(queue):
    f = cla.to_device(queue, np.ones(3, np.float32))
    i = cla.to_device(queue, np.ones(3, np.int32))
    u = cla.to_device(queue, np.ones(3, np.uint8))
    for expr in ("f & f", "f | 1", "~f", "f << 1", "i /= 2", "i += 1.5", "f += 1j"):
        with pytest.raises(TypeError):  # bitwise float operators were a failed build
            exec(expr, {"f": f, "i": i})
    with pytest.raises(OverflowError):  # was raised only when the result was read
        _ = u + 300
    np.testing.assert_array_equal(i.get(), 1)


def test_mixed_real_and_complex_comparisons_build(queue):
    # float64 == complex64 compares in complex128, which no argument has: the kernel called
    # cdouble_fromreal without the header that defines it
    x = np.array([1.0, 2.0, 3.0])
    z = np.array([1 + 0j, 2 + 1j, 0j], np.complex64)
    a, c = cla.to_device(queue, x), cla.to_device(queue, z)
    for got, want in ((a == c, x == z), (c != a, z != x), (a.astype(np.int32) == c, x == z)):
        np.testing.assert_array_equal(got.get().astype(bool), want)
    np.testing.assert_allclose((c + a).get(), z + x)


def test_shape_errors_are_value_errors_as_in_numpy(queue):
    """A negative dimension made an array (or failed deep in the allocator); it, a fractional
    one, two -1 in a reshape and the max of nothing raise ValueError as numpy's and
    PyOpenCL's do, and stay CL_INVALID_VALUE."""
    for shape in (-1, (-10,), (0, -1), (-1, 2), (3, 5.7), np.float32(7)):
        with pytest.raises(ValueError) as raised:
            cla.empty(queue, shape, np.float32)
        assert isinstance(raised.value, ppcl.LogicError)
    a = cla.to_device(queue, np.arange(128, dtype=np.float32))
    assert a.reshape((8, -1, 4)).shape == (8, 4, 4)
    for shape in ((-1, -1, 4), (-2, 64), (5, -1), (3, 3)):
        with pytest.raises(ValueError, match="CL_INVALID_VALUE"):
            a.reshape(shape)
    for reduce in (cla.max, cla.min):
        with pytest.raises(ValueError, match="empty"):
            reduce(cla.zeros(queue, 0, np.float64))


def test_reshape_of_a_strided_view_is_a_view_where_numpy_gives_one(queue):
    """Splitting an axis of a slice is a view in numpy: writing it wrote a copy instead."""
    x = cla.zeros(queue, (2, 12), np.float32)
    x[..., 6:12].reshape((2, 2, 3))[0].fill(1)
    want = np.zeros((2, 12), np.float32)
    want[..., 6:12].reshape((2, 2, 3))[0] = 1
    np.testing.assert_array_equal(x.get(), want)
    h = np.arange(24, dtype=np.float32).reshape(4, 6)
    a = cla.to_device(queue, h)
    for view, host_view in ((a[:, ::-2], h[:, ::-2]), (a.T, h.T), (a[::2], h[::2])):
        for shape in ((view.size,), (2, -1), (view.shape[0], 1, -1)):
            np.testing.assert_array_equal(view.reshape(shape).get(), host_view.reshape(shape))
            np.testing.assert_array_equal(view.reshape(shape, order="F").get(),
                                          host_view.reshape(shape, order="F"))
        flat = view.ravel()  # contiguous, a copy when the view is not, as numpy's
        assert flat.flags.c_contiguous
        np.testing.assert_array_equal(flat.get(), host_view.ravel())
        np.testing.assert_array_equal(view.ravel("F").get(), host_view.ravel("F"))
    np.testing.assert_array_equal(a[:, ::2].reverse().get(), h[:, ::2].ravel()[::-1].reshape(4, 3))


@pytest.mark.parametrize("shape", [0, (3, 0, 2), (0, 5), (5, 0)])
def test_an_array_without_elements_is_contiguous_both_ways(queue, shape):
    got = cla.zeros(queue, shape, np.float32)
    want = np.zeros(shape, np.float32)
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == (True, True)
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == \
        (want.flags.c_contiguous, want.flags.f_contiguous)


def test_copy_takes_the_queue_given_or_none(ctx, queue):
    other = ppcl.CommandQueue(ctx)
    a = cla.to_device(queue, np.arange(10, dtype=np.int32))
    assert a.copy().queue is queue
    assert a.copy(queue=other).queue is other
    detached = a.copy(queue=None)  # PyOpenCL's way to a copy without a queue
    assert detached.queue is None
    np.testing.assert_array_equal(detached.with_queue(queue).get(), np.arange(10))
    assert a.astype(np.int32).queue is queue and a.reverse().queue is queue


def test_an_array_without_a_queue_prints_without_raising(queue):
    a = cla.zeros(queue, 10, np.float32).with_queue(None)
    assert "without queue" in str(a) and "(10,)" in str(a)
    assert "without queue" in repr(a)
    assert str(a.with_queue(queue)) == str(np.zeros(10, np.float32))


def test_maximum_minimum_if_positive_of_numbers_and_queueless_arrays(queue):
    assert cla.maximum(0.25, 0.75) == 0.75 and cla.minimum(0.25, 0.75) == 0.25
    assert cla.if_positive(np.bool_(False), 1.0, 2.0) == 2.0
    out = cla.empty(queue, 3, np.float64)
    assert cla.maximum(1.0, 2.0, out=out) is out
    np.testing.assert_array_equal(out.get(), [2, 2, 2])
    # operands without a queue run on the queue= given, as in PyOpenCL
    b = cla.to_device(queue, np.array(-3.0)).with_queue(None)
    assert cla.maximum(4.0, b, queue=queue).get() == 4.0
    assert cla.minimum(b, 4.0, queue=queue).get() == -3.0
    c = cla.to_device(queue, np.array([1.0, -1.0])).with_queue(None)
    np.testing.assert_array_equal(cla.if_positive(c, c, 0.0, queue=queue).get(), [1, 0])
