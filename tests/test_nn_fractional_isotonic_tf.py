"""ft.nn's fractional pools and isotonic_regression compared with TensorFlow 2.21. The
windows are random in both (different generators), so the pools are compared on TensorFlow's
own window sequences, values and gradients; isotonic_regression is deterministic. Skipped
without TensorFlow (``pip install tensorflow-cpu``)."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed")

import ferrotape as ft  # noqa: E402 - after the skip
from ferrotape._nn_pool import _pool_windows  # noqa: E402

RNG = np.random.default_rng(53)


@pytest.mark.parametrize(
    "pool, reduce",
    [("fractional_max_pool", ft.reduce_max), ("fractional_avg_pool", ft.reduce_mean)],
)
@pytest.mark.parametrize("pseudo_random", [False, True])
@pytest.mark.parametrize("overlapping", [False, True])
def test_pools_match_on_tensorflows_windows(pool, reduce, pseudo_random, overlapping):
    x = RNG.standard_normal((2, 11, 9, 3)).astype(np.float32)
    ratio = [1.0, 1.6, 2.0, 1.0]
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        want, rows, cols = getattr(tf.nn, pool)(
            xt, ratio, pseudo_random=pseudo_random, overlapping=overlapping, seed=9
        )
    weights = RNG.standard_normal(want.shape).astype(np.float32)
    want_grad = tape.gradient(want, xt, output_gradients=weights)
    got_shape = getattr(ft.nn, pool)(x, ratio, pseudo_random=pseudo_random, seed=9)[0].shape
    assert got_shape == want.shape
    xf = ft.constant(x)
    with ft.GradientTape() as tape:
        tape.watch(xf)
        got = _pool_windows(reduce, xf, rows.numpy(), cols.numpy(), overlapping)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    got_grad = tape.gradient(got, xf, output_gradients=ft.constant(weights))
    np.testing.assert_allclose(got_grad.numpy(), want_grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("decreasing", [True, False])
@pytest.mark.parametrize("axis", [-1, 0])
def test_isotonic_regression_matches(decreasing, axis):
    x = RNG.standard_normal((5, 7)).astype(np.float32)
    x[1, 2:4] = x[1, 4]  # ties
    for want, got in zip(
        tf.nn.isotonic_regression(x, decreasing=decreasing, axis=axis),
        ft.nn.isotonic_regression(x, decreasing=decreasing, axis=axis),
        strict=True,
    ):
        assert got.dtype.name == want.dtype.name
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("decreasing", [True, False])
def test_isotonic_regression_gradient_matches(decreasing):
    x = RNG.standard_normal((4, 6))
    w = RNG.standard_normal((4, 6))
    grads = []
    for lib in (tf, ft):
        xt = lib.constant(x)
        with lib.GradientTape() as tape:
            tape.watch(xt)
            loss = lib.reduce_sum(lib.nn.isotonic_regression(xt, decreasing=decreasing)[0] * w)
        grads.append(tape.gradient(loss, xt).numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)
