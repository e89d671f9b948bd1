"""clmath's Bessel and Hankel functions and the headers behind them, against scipy.special.

Each region of the methods is sampled: Miller's recurrence (x < 25 or order above x), Hankel's
expansion (x >= 25) with the forward recurrences, and for complex arguments the recurrence,
the trapezoid integral above the real axis and the reflection near its negative half.
"""

from __future__ import annotations

import numpy as np
import pytest

import ppcl
import ppcl.array as cla
import ppcl.clmath as clmath

special = pytest.importorskip("scipy.special")

# small, mid and large x, with both sides of the switch at 25
X = np.concatenate([np.logspace(-5, 5, 3000), [24.999999, 25.0, 25.000001]])
ORDERS = [0, 1, 2, 7, 29, 60]


def complex_points(count: int, low: float, high: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.logspace(low, high, count) * np.exp(2j * np.pi * rng.random(count))


def relative(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.max(np.abs(got - want) / np.abs(want)))


@pytest.mark.parametrize("n", ORDERS)
def test_bessel_jn_real(queue, n):
    got = clmath.bessel_jn(n, cla.to_device(queue, X)).get()
    want = special.jn(n, X)
    assert not np.isnan(got).any()
    assert np.max(np.abs(got - want)) < 1e-13
    # relative too, where J_n is not near a zero or underflowing, and x <= 1e3: past that
    # scipy's own values are 1e-11 off (ours agree with mpmath within 3e-16 there)
    large = (np.abs(want) > 1e-3) & (X <= 1e3)
    assert relative(got[large], want[large]) < 1e-11


@pytest.mark.parametrize("n", ORDERS)
def test_bessel_yn_real(queue, n):
    got = clmath.bessel_yn(n, cla.to_device(queue, X)).get()
    want = special.yn(n, X)
    finite = np.isfinite(want)
    assert np.array_equal(np.isfinite(got), finite)   # Y_60 overflows at x = 1e-5
    scale = np.max(np.abs(want[finite]))
    assert np.max(np.abs(got[finite] - want[finite])) / scale < 1e-13
    large = finite & (np.abs(want) > 1e-3) & (X <= 1e3)
    assert relative(got[large], want[large]) < 1e-11


def test_bessel_edges_and_dtypes(queue):
    x = np.array([0.0, -3.5, -40.0, np.inf, np.nan])
    j = clmath.bessel_jn(3, cla.to_device(queue, x)).get()
    np.testing.assert_allclose(j[:3], special.jn(3, x[:3]), rtol=1e-13, atol=1e-300)
    assert j[3] == 0 and np.isnan(j[4])   # the limit at infinity, where scipy gives NaN
    y = clmath.bessel_yn(1, cla.to_device(queue, x)).get()
    assert y[0] == -np.inf and np.isnan(y[1]) and np.isnan(y[2]) and y[3] == 0
    # float32 in, float32 out (computed in double); integers give float64
    single = clmath.bessel_jn(2, cla.to_device(queue, np.float32([0.5, 3.0, 30.0])))
    assert single.dtype == np.float32
    np.testing.assert_allclose(single.get(), special.jn(2, np.float32([0.5, 3, 30])),
                               rtol=1e-6)
    whole = clmath.bessel_yn(0, cla.to_device(queue, np.int32([1, 2, 3])))
    assert whole.dtype == np.float64
    np.testing.assert_allclose(whole.get(), special.y0([1.0, 2.0, 3.0]), rtol=1e-14)
    # a strided view is copied first
    view = cla.to_device(queue, np.linspace(0.1, 50, 40))[::3]
    np.testing.assert_allclose(clmath.bessel_jn(1, view).get(),
                               special.j1(np.linspace(0.1, 50, 40)[::3]), atol=1e-15)


def test_bessel_rejects(queue):
    a = cla.to_device(queue, np.ones(4))
    with pytest.raises(ppcl.Error):
        clmath.bessel_jn(1.5, a)
    with pytest.raises(ppcl.Error):
        clmath.bessel_yn(0, a.astype(np.complex128))
    with pytest.raises(ppcl.Error):
        clmath.bessel_jn(-1, a.astype(np.complex128))
    with pytest.raises(ppcl.Error):
        clmath.hankel_01(np.ones(3))


@pytest.mark.parametrize("n", [0, 1, 40])
def test_bessel_jn_complex(queue, n):
    z = complex_points(20000, -5, 2, seed=n)
    got = clmath.bessel_jn(n, cla.to_device(queue, z)).get()
    want = special.jv(n, z)
    error = np.abs(got - want)
    size = np.abs(want)
    # relative, except where J_n underflows; a zero of J_n (real) is avoided by the bound
    error[size > 1e-300] /= size[size > 1e-300]
    near_zero = (np.abs(z.imag) < 1e-2) & (np.abs(z) > n)
    assert np.max(error[~near_zero]) < 2e-13


def test_hankel_01(queue):
    z = complex_points(40000, -5, 2, seed=11)
    h0, h1 = clmath.hankel_01(cla.to_device(queue, z))
    assert h0.dtype == h1.dtype == np.complex128
    assert relative(h0.get(), special.hankel1(0, z)) < 2e-13
    assert relative(h1.get(), special.hankel1(1, z)) < 2e-13
    # each method's region: the integral above the axis, the reflection and the recurrence
    edges = np.array([3 + 1e-9j, -3 + 1e-9j, -50 - 0.3j, -50 - 0.35j, 50 - 0.3j, 1.5j, 2.5j,
                      -2.1 - 0.3j, 7.99 * np.exp(-2.4j), 8.01 * np.exp(-2.4j), 99j, -99j])
    h0, h1 = clmath.hankel_01(cla.to_device(queue, edges))
    assert relative(h0.get(), special.hankel1(0, edges)) < 1e-13
    assert relative(h1.get(), special.hankel1(1, edges)) < 1e-13


def test_hankel_01_real_and_single(queue):
    x = np.array([1e-3, 0.7, 5.0, 30.0])
    h0, h1 = clmath.hankel_01(cla.to_device(queue, x))
    assert h0.dtype == np.complex128
    assert relative(h0.get(), special.hankel1(0, x)) < 1e-14
    h0, h1 = clmath.hankel_01(cla.to_device(queue, x.astype(np.complex64)))
    assert h1.dtype == np.complex64
    assert relative(h1.get(), special.hankel1(1, x)) < 1e-6


def test_headers_in_a_kernel(ctx, queue):
    """A PyOpenCL-style program including the headers and calling the device functions."""
    source = """
    #define PYOPENCL_DEFINE_CDOUBLE
    #include <pyopencl-complex.h>
    #include <pyopencl-bessel-y.h>
    #include <pyopencl-bessel-j.cl>
    #include <pyopencl-hankel-complex.cl>
    #include <pyopencl-bessel-j-complex.h>
    __kernel void all(__global const double *x, __global double *out,
                      __global cdouble_t *cout) {
      int i = get_global_id(0);
      out[6 * i] = bessel_j0(x[i]);
      out[6 * i + 1] = bessel_j1(x[i]);
      out[6 * i + 2] = bessel_jn(5, x[i]);
      out[6 * i + 3] = bessel_y0(x[i]);
      out[6 * i + 4] = bessel_y1(x[i]);
      out[6 * i + 5] = bessel_yn(5, x[i]);
      cdouble_t z = cdouble_new(x[i], 0.5 * x[i]), h0, h1, jv, jvp1;
      hankel_01_complex(z, &h0, &h1, 1);
      cout[4 * i] = h0;
      cout[4 * i + 1] = h1;
      bessel_j_complex(3, z, &jv, &jvp1);
      cout[4 * i + 2] = jv;
      cout[4 * i + 3] = jvp1;
    }
    """
    program = ppcl.Program(ctx, source).build()
    x = np.array([0.01, 1.0, 7.5, 26.0, 300.0])
    out = cla.empty(queue, 6 * len(x), np.float64)
    cout = cla.empty(queue, 4 * len(x), np.complex128)
    program.all(queue, (len(x),), None, cla.to_device(queue, x).data, out.data, cout.data)
    real = out.get().reshape(-1, 6)
    want = np.stack([special.j0(x), special.j1(x), special.jn(5, x), special.y0(x),
                     special.y1(x), special.yn(5, x)], axis=1)
    np.testing.assert_allclose(real, want, rtol=1e-12)
    z = x + 0.5j * x
    cwant = np.stack([special.hankel1(0, z), special.hankel1(1, z), special.jv(3, z),
                      special.jv(4, z)], axis=1)
    np.testing.assert_allclose(cout.get().reshape(-1, 4), cwant, rtol=1e-12)
