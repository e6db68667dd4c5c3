"""ft.conv (batch dimensions, groups, explicit padding), ft.conv2d_backprop_filter_v2 and
ft.conv2d_backprop_input_v2, ft.extract_volume_patches and ft.nn.with_space_to_batch: numpy
references, float64 finite-difference gradients and errors. Runs without TensorFlow
(tests/test_conv_ops_tf.py compares with it)."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from test_keras_layers import fd_grad

import ferrotape as ft

RNG = np.random.default_rng(41)


def np_conv2d(x, w, stride=(1, 1), pads=((0, 0), (0, 0))):
    """VALID cross-correlation of NHWC x with HWIO w after zero padding."""
    x = np.pad(x, ((0, 0), *pads, (0, 0)))
    win = sliding_window_view(x, w.shape[:2], axis=(1, 2))[:, :: stride[0], :: stride[1]]
    return np.einsum("bhwcij,ijco->bhwo", win, w)


def test_conv_batch_dims_groups_and_explicit_padding():
    x = RNG.standard_normal((2, 3, 6, 5, 4))
    w = RNG.standard_normal((3, 2, 2, 6))  # 2 groups of 2 input and 3 output channels
    pads = [0, 0, 1, 2, 0, 1, 0, 0]
    got = ft.conv(x, w, [1, 2, 1, 1], "EXPLICIT", explicit_paddings=pads, batch_dims=2, groups=2)
    flat = x.reshape(6, 6, 5, 4)
    want = np.concatenate(
        [
            np_conv2d(
                flat[..., 2 * g : 2 * g + 2], w[..., 3 * g : 3 * g + 3], (2, 1), ((1, 2), (0, 1))
            )
            for g in range(2)
        ],
        axis=-1,
    )
    want = want.reshape(2, 3, *want.shape[1:])
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_conv_gradient_matches_finite_differences():
    x, w = RNG.standard_normal((2, 5, 4, 4)), RNG.standard_normal((2, 2, 2, 4))
    weights = RNG.standard_normal((2, 5, 2, 4))

    def f(xv, wv):
        return ft.conv(xv, wv, [1, 1, 2, 1], "SAME", groups=2)

    xt, wt = ft.constant(x), ft.constant(w)
    with ft.GradientTape() as tape:
        tape.watch([xt, wt])
        y = ft.reduce_sum(f(xt, wt) * weights)
    gx, gw = tape.gradient(y, [xt, wt])
    np.testing.assert_allclose(
        gx.numpy(), fd_grad(lambda v: float(ft.reduce_sum(f(v, w) * weights)), x), rtol=1e-6
    )
    np.testing.assert_allclose(
        gw.numpy(), fd_grad(lambda v: float(ft.reduce_sum(f(x, v) * weights)), w), rtol=1e-6
    )


def test_conv_bad_input():
    with pytest.raises(ValueError, match="conv: input must have batch_dims=1"):
        ft.conv(ft.ones([1, 4, 1]), ft.ones([2, 2, 1, 1]), [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="groups"):
        ft.conv(ft.ones([1, 4, 4, 3]), ft.ones([2, 2, 2, 2]), [1, 1, 1, 1], "VALID", groups=2)
    with pytest.raises(ValueError, match="strides must be 4 positive ints"):
        ft.conv(ft.ones([1, 4, 4, 1]), ft.ones([2, 2, 1, 1]), [1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="CHANNELS_LAST"):
        ft.conv(
            ft.ones([1, 1, 4, 4]), ft.ones([2, 2, 1, 1]), 1, "VALID", data_format="CHANNELS_FIRST"
        )


@pytest.mark.parametrize(
    "padding, explicit", [("VALID", ()), ("SAME", ()), ("EXPLICIT", (0, 0, 1, 2, 0, 1, 0, 0))]
)
def test_conv2d_backprops_are_the_gradients(padding, explicit):
    x, w = RNG.standard_normal((2, 6, 5, 3)), RNG.standard_normal((3, 2, 3, 4))
    pad = padding if padding != "EXPLICIT" else "VALID"
    xp = x if padding != "EXPLICIT" else np.pad(x, ((0, 0), (1, 2), (0, 1), (0, 0)))
    out = ft.nn.conv2d(xp, w, 2, pad)
    g = RNG.standard_normal(out.shape)

    def loss(xv, wv):
        xv = xv if padding != "EXPLICIT" else np.pad(xv, ((0, 0), (1, 2), (0, 1), (0, 0)))
        return float(ft.reduce_sum(ft.nn.conv2d(xv, wv, 2, pad) * g))

    kwargs = {"explicit_paddings": explicit}
    dw = ft.conv2d_backprop_filter_v2(x, ft.zeros(w.shape, ft.float64), g, 2, padding, **kwargs)
    dx = ft.conv2d_backprop_input_v2(ft.zeros(x.shape, ft.float64), w, g, 2, padding, **kwargs)
    np.testing.assert_allclose(dw.numpy(), fd_grad(lambda v: loss(x, v), w), rtol=1e-6)
    np.testing.assert_allclose(dx.numpy(), fd_grad(lambda v: loss(v, w), x), rtol=1e-6, atol=1e-9)


def np_volume_patches(x, k, s, padding):
    if padding == "SAME":
        pads = []
        for size, kk, ss in zip(x.shape[1:4], k, s, strict=True):
            total = max((-(-size // ss) - 1) * ss + kk - size, 0)
            pads.append((total // 2, total - total // 2))
        x = np.pad(x, ((0, 0), *pads, (0, 0)))
    win = sliding_window_view(x, k, axis=(1, 2, 3))[:, :: s[0], :: s[1], :: s[2]]
    # (b, od, oh, ow, c, kd, kh, kw) -> patches flattened as (kd, kh, kw, c)
    win = win.transpose(0, 1, 2, 3, 5, 6, 7, 4)
    return win.reshape(*win.shape[:4], -1)


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize("k, s", [((2, 3, 2), (1, 1, 1)), ((3, 2, 2), (2, 3, 2))])
def test_extract_volume_patches(padding, k, s):
    x = RNG.standard_normal((2, 5, 6, 7, 2))
    got = ft.extract_volume_patches(x, [1, *k, 1], [1, *s, 1], padding)
    np.testing.assert_allclose(got.numpy(), np_volume_patches(x, k, s, padding), rtol=1e-12)


def test_extract_volume_patches_gradient_and_errors():
    x = RNG.standard_normal((1, 3, 3, 3, 1))
    weights = RNG.standard_normal((1, 2, 2, 2, 8))
    xt = ft.constant(x)
    with ft.GradientTape() as tape:
        tape.watch(xt)
        y = ft.reduce_sum(
            ft.extract_volume_patches(xt, [1, 2, 2, 2, 1], [1] * 5, "VALID") * weights
        )
    want = fd_grad(
        lambda v: float(
            ft.reduce_sum(ft.extract_volume_patches(v, [1, 2, 2, 2, 1], [1] * 5, "VALID") * weights)
        ),
        x,
    )
    np.testing.assert_allclose(tape.gradient(y, xt).numpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match="extract_volume_patches: input must be 5-D"):
        ft.extract_volume_patches(ft.ones([1, 3, 3, 1]), [1, 2, 2, 2, 1], [1] * 5, "VALID")


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize("rate", [[2, 2], [3, 1]])
def test_with_space_to_batch_dilates_the_op(padding, rate):
    x, w = RNG.standard_normal((2, 9, 8, 3)), RNG.standard_normal((3, 2, 3, 4))
    got = ft.nn.with_space_to_batch(
        x, rate, padding, lambda t, n, p: ft.nn.conv2d(t, w, 1, p), filter_shape=[3, 2]
    )
    want = ft.nn.conv2d(x, w, 1, padding, dilations=rate)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_with_space_to_batch_passes_through_and_errors():
    seen = []
    ft.nn.with_space_to_batch(ft.ones([1, 4, 1]), [1], "SAME", lambda t, n, p: seen.append((n, p)))
    assert seen == [(1, "SAME")]
    with pytest.raises(ValueError, match="filter_shape must be given"):
        ft.nn.with_space_to_batch(ft.ones([1, 4, 1]), [2], "SAME", lambda t, n, p: t)
