"""The layers that stopped real TF2 programs (LeakyReLU, Conv2DTranspose, ZeroPadding2D,
UpSampling2D, Cropping2D, Lambda, ELU, PReLU, ReLU's arguments): values against numpy, shapes by
Keras's rules, and gradients (first and second order) against float64 finite differences."""

import numpy as np
import pytest
from test_keras_layers import check_input_gradient, check_weight_gradients, fd_grad, rand

import ferrotape as ft
from ferrotape.keras import layers


def conv_transpose_ref(x, k, stride, padding, out_hw):
    """Each input pixel scatters ``x[n, i, j, :] @ k[a, b].T`` to ``(i*s + a, j*s + b)`` of a
    full-size map, which is then cut to the output the way TF pads the matching conv2d."""
    n, h, w, _ = x.shape
    kh, kw, filters, _ = k.shape
    full = np.zeros((n, (h - 1) * stride[0] + kh, (w - 1) * stride[1] + kw, filters))
    for i in range(h):
        for j in range(w):
            for a in range(kh):
                for b in range(kw):
                    full[:, i * stride[0] + a, j * stride[1] + b] += x[:, i, j] @ k[a, b].T
    out = np.zeros((n, *out_hw, filters))
    starts = [0, 0]
    if padding == "same":
        for axis, size in enumerate((h, w)):
            total = max((size - 1) * stride[axis] + k.shape[axis] - out_hw[axis], 0)
            starts[axis] = total // 2
    rows = min(out_hw[0], full.shape[1] - starts[0])
    cols = min(out_hw[1], full.shape[2] - starts[1])
    out[:, :rows, :cols] = full[:, starts[0] : starts[0] + rows, starts[1] : starts[1] + cols]
    return out


@pytest.mark.parametrize(
    "kernel_size, strides, padding, expected_hw",
    [
        (3, 2, "same", (8, 10)),
        (3, 2, "valid", (9, 11)),
        (1, 3, "valid", (12, 15)),
        ((2, 3), (1, 2), "valid", (5, 11)),
        (3, 1, "same", (4, 5)),
    ],
)
def test_conv2d_transpose_matches_numpy_with_keras_output_shapes(
    kernel_size, strides, padding, expected_hw
):
    layer = layers.Conv2DTranspose(
        3, kernel_size, strides=strides, padding=padding, bias_initializer="ones", dtype="float64"
    )
    x = rand(2, 4, 5, 2)
    y = layer(x).numpy()
    assert y.shape == (2, *expected_hw, 3)
    assert layer.kernel.shape.as_list() == [*layer.kernel_size, 3, 2]
    expected = conv_transpose_ref(x, layer.kernel.numpy(), layer.strides, padding, expected_hw)
    np.testing.assert_allclose(y, expected + 1.0, rtol=1e-10, atol=1e-12)


def test_conv2d_transpose_gradients_and_activation():
    layer = layers.Conv2DTranspose(
        2, 3, strides=2, padding="same", activation="tanh", dtype="float64"
    )
    x = rand(1, 3, 3, 2)
    check_input_gradient(layer, x)
    check_weight_gradients(layer, x)


def test_conv2d_transpose_in_a_sequential_generator():
    model = ft.keras.Sequential(
        [
            ft.keras.Input((7, 7, 4)),
            layers.Conv2DTranspose(8, 5, strides=1, padding="same", use_bias=False),
            layers.LeakyReLU(),
            layers.Conv2DTranspose(1, 5, strides=2, padding="same", activation="tanh"),
        ]
    )
    assert model(ft.zeros([3, 7, 7, 4])).shape.as_list() == [3, 14, 14, 1]
    assert len(model.trainable_weights) == 3


def test_zero_padding_cropping_and_upsampling_match_numpy_with_gradients():
    x = rand(2, 4, 5, 3)
    pad = layers.ZeroPadding2D(((1, 2), (0, 3)), dtype="float64")
    np.testing.assert_array_equal(pad(x).numpy(), np.pad(x, [(0, 0), (1, 2), (0, 3), (0, 0)]))
    assert layers.ZeroPadding2D(2)(x).shape.as_list() == [2, 8, 9, 3]
    assert layers.ZeroPadding2D((1, 2))(x).shape.as_list() == [2, 6, 9, 3]
    crop = layers.Cropping2D(((1, 0), (2, 1)), dtype="float64")
    np.testing.assert_array_equal(crop(x).numpy(), x[:, 1:, 2:4])
    up = layers.UpSampling2D((2, 3), dtype="float64")
    np.testing.assert_array_equal(up(x).numpy(), x.repeat(2, axis=1).repeat(3, axis=2))
    for layer in (pad, crop, up):
        check_input_gradient(layer, x)


def test_reshaping_layers_reject_bad_arguments_by_name():
    with pytest.raises(ValueError, match="padding"):
        layers.ZeroPadding2D(-1)
    with pytest.raises(ValueError, match="cropping"):
        layers.Cropping2D(((1, 2, 3), (0, 0)))
    with pytest.raises(ValueError, match="leaves nothing"):
        layers.Cropping2D(((2, 2), (0, 0)))(ft.zeros([1, 4, 4, 1]))
    with pytest.raises(ValueError, match="size"):
        layers.UpSampling2D(0)
    with pytest.raises(ValueError, match="interpolation"):
        layers.UpSampling2D(2, interpolation="bilinear")
    with pytest.raises(ValueError, match="rank 4"):
        layers.UpSampling2D(2)(ft.zeros([4, 4]))


def test_activation_layers_match_their_formulas_with_gradients():
    x = rand(3, 4)
    x[0, 0] = 0.25  # on ReLU's threshold below
    cases = [
        (layers.LeakyReLU(dtype="float64"), np.where(x >= 0, x, 0.3 * x)),
        (layers.LeakyReLU(negative_slope=0.1, dtype="float64"), np.where(x >= 0, x, 0.1 * x)),
        (layers.ELU(alpha=0.5, dtype="float64"), np.where(x > 0, x, 0.5 * np.expm1(x))),
        (layers.ELU(dtype="float64"), np.where(x > 0, x, np.expm1(x))),
        (layers.ReLU(dtype="float64"), np.maximum(x, 0)),
        (
            layers.ReLU(max_value=0.8, negative_slope=0.1, threshold=0.25, dtype="float64"),
            np.minimum(np.where(x >= 0.25, x, 0.1 * (x - 0.25)), 0.8),
        ),
    ]
    xs = x + 0.01 * (np.abs(x - 0.25) < 1e-3)  # keep finite differences off the kinks
    for layer, expected in cases:
        np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-12)
        check_input_gradient(layer, xs)


def test_leaky_relu_accepts_keras_2_alpha_with_a_warning():
    with pytest.warns(UserWarning, match="negative_slope"):
        layer = layers.LeakyReLU(alpha=0.2)
    assert layer.negative_slope == pytest.approx(0.2)
    with pytest.raises(ValueError, match="negative_slope"):
        layers.LeakyReLU(negative_slope=-1)


def test_elu_gradient_stays_finite_for_large_inputs():
    x = ft.constant([100.0, -3.0])
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = ft.reduce_sum(layers.ELU(alpha=2.0)(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1.0, 2.0 * np.exp(-3.0)], rtol=1e-6)


def test_prelu_learns_a_slope_per_channel_with_gradients_first_and_second_order():
    layer = layers.PReLU(alpha_initializer="ones", shared_axes=[1, 2], dtype="float64")
    x = rand(2, 3, 3, 4)
    y = layer(x)
    assert layer.alpha.shape.as_list() == [1, 1, 4]
    layer.alpha.assign(np.linspace(0.1, 0.4, 4).reshape(1, 1, 4))
    alpha = layer.alpha.numpy()
    np.testing.assert_allclose(layer(x).numpy(), np.where(x > 0, x, alpha * x), rtol=1e-12)
    assert y.shape == x.shape
    check_input_gradient(layer, x)
    check_weight_gradients(layer, x)
    # d/dalpha of sum(d loss/dx) is a second-order quantity: check it against differences.
    xt = ft.constant(x)

    def grad_sum(alpha_value):
        layer.alpha.assign(alpha_value)
        with ft.GradientTape() as tape:
            tape.watch(xt)
            out = ft.reduce_sum(layer(xt) ** 2)
        return float(ft.reduce_sum(tape.gradient(out, xt)))

    with ft.GradientTape() as outer:
        with ft.GradientTape() as inner:
            inner.watch(xt)
            out = ft.reduce_sum(layer(xt) ** 2)
        total = ft.reduce_sum(inner.gradient(out, xt))
    second = outer.gradient(total, layer.alpha).numpy()
    np.testing.assert_allclose(second, fd_grad(grad_sum, alpha), rtol=1e-5, atol=1e-7)


def test_lambda_wraps_a_function_with_arguments_and_training():
    double = layers.Lambda(lambda t, k: t * k, arguments={"k": 2.0})
    np.testing.assert_array_equal(double(ft.ones([2])).numpy(), [2.0, 2.0])
    seen = []

    def record(t, training=None):
        seen.append(training)
        return t

    layer = layers.Lambda(record)
    layer(ft.ones([1]), training=True)
    layer(ft.ones([1]))
    assert seen[0] is True and seen[-1] in (None, False)
    model = ft.keras.Sequential([ft.keras.Input((3,)), layers.Lambda(lambda t: t[:, :2])])
    assert model(ft.ones([4, 3])).shape.as_list() == [4, 2]
    with pytest.raises(ValueError, match="callable"):
        layers.Lambda(3)
