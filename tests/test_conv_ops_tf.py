"""ft.conv, the conv2d_backprop_*_v2 pair, ft.extract_volume_patches and
ft.nn.with_space_to_batch compared with TensorFlow 2.21. TensorFlow's CPU has no kernel for
the two backprop ops nor for grouped ``Conv``, so those are compared with its conv2d gradient
and left to tests/test_conv_ops.py. Skipped without TensorFlow (``pip install
tensorflow-cpu``)."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed")

import ferrotape as ft  # noqa: E402 - after the skip

RNG = np.random.default_rng(43)
PADDINGS = [("VALID", []), ("SAME", []), ("EXPLICIT", [0, 0, 1, 2, 0, 1, 0, 0])]


@pytest.mark.parametrize("padding, explicit", PADDINGS)
def test_conv_matches(padding, explicit):
    x = RNG.standard_normal((2, 3, 7, 6, 4)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 4, 3)).astype(np.float32)
    kwargs = {"explicit_paddings": explicit, "batch_dims": 2}
    want = tf.raw_ops.Conv(input=x, filter=w, strides=[1, 2, 1, 1], padding=padding, **kwargs)
    got = ft.conv(x, w, [1, 2, 1, 1], padding, **kwargs)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("padding, explicit", PADDINGS)
def test_conv2d_backprops_match_tensorflows_conv2d_gradient(padding, explicit):
    x = RNG.standard_normal((2, 7, 6, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3, 5)).astype(np.float32)
    tf_padding = padding if padding != "EXPLICIT" else [[0, 0], [1, 2], [0, 1], [0, 0]]
    xt, wt = tf.constant(x), tf.constant(w)
    with tf.GradientTape() as tape:
        tape.watch([xt, wt])
        y = tf.nn.conv2d(xt, wt, [1, 2, 2, 1], tf_padding)
    g = RNG.standard_normal(y.shape).astype(np.float32)
    want_x, want_w = tape.gradient(y, [xt, wt], output_gradients=g)
    kwargs = {"explicit_paddings": explicit}
    got_w = ft.conv2d_backprop_filter_v2(x, w, g, [1, 2, 2, 1], padding, **kwargs)
    got_x = ft.conv2d_backprop_input_v2(x, w, g, [1, 2, 2, 1], padding, **kwargs)
    np.testing.assert_allclose(got_w.numpy(), want_w.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_x.numpy(), want_x.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize("k, s", [([1, 2, 3, 2, 1], [1] * 5), ([1, 3, 2, 2, 1], [1, 2, 3, 2, 1])])
def test_extract_volume_patches_matches(padding, k, s):
    v = RNG.standard_normal((2, 5, 6, 7, 2)).astype(np.float32)
    want = tf.extract_volume_patches(v, k, s, padding)
    np.testing.assert_array_equal(ft.extract_volume_patches(v, k, s, padding).numpy(), want)


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize("rate", [[2, 2], [3, 1]])
def test_with_space_to_batch_matches(padding, rate):
    x = RNG.standard_normal((2, 9, 8, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3, 4)).astype(np.float32)
    results = [
        lib.nn.with_space_to_batch(
            x,
            rate,
            padding,
            lambda t, n, p, lib=lib: lib.nn.conv2d(t, w, 1, p),
            filter_shape=[3, 2],
        ).numpy()
        for lib in (tf, ft)
    ]
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-5)
