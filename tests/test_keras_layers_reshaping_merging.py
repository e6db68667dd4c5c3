"""The 1-D and 3-D padding/cropping/upsampling layers, Permute, RepeatVector, the merge layers
(Maximum, Minimum, Dot and the functional forms), Softmax's mask and tuple axes, Identity and
Masking: values against numpy, gradients against float64 finite differences, get_config round
trips and bad arguments."""

import numpy as np
import pytest
from test_keras_layers import check_input_gradient, fd_grad, rand

import ferrotape as ft
from ferrotape.keras import layers


@pytest.mark.parametrize(
    "layer, shape, expected",
    [
        (
            layers.ZeroPadding1D(dtype="float64"),
            (2, 4, 3),
            lambda x: np.pad(x, [(0, 0), (1, 1), (0, 0)]),
        ),
        (
            layers.ZeroPadding1D((2, 0), dtype="float64"),
            (2, 4, 3),
            lambda x: np.pad(x, [(0, 0), (2, 0), (0, 0)]),
        ),
        (
            layers.ZeroPadding3D(dtype="float64"),
            (1, 2, 3, 2, 2),
            lambda x: np.pad(x, [(0, 0), (1, 1), (1, 1), (1, 1), (0, 0)]),
        ),
        (
            layers.ZeroPadding3D((1, 0, 2), dtype="float64"),
            (1, 2, 3, 2, 2),
            lambda x: np.pad(x, [(0, 0), (1, 1), (0, 0), (2, 2), (0, 0)]),
        ),
        (
            layers.ZeroPadding3D(((0, 1), (2, 0), (1, 1)), dtype="float64"),
            (1, 2, 3, 2, 2),
            lambda x: np.pad(x, [(0, 0), (0, 1), (2, 0), (1, 1), (0, 0)]),
        ),
        (layers.Cropping1D(dtype="float64"), (2, 5, 3), lambda x: x[:, 1:4]),
        (layers.Cropping1D((0, 2), dtype="float64"), (2, 5, 3), lambda x: x[:, :3]),
        (layers.Cropping3D(dtype="float64"), (1, 3, 4, 5, 2), lambda x: x[:, 1:2, 1:3, 1:4]),
        (
            layers.Cropping3D(((0, 1), (2, 0), (1, 2)), dtype="float64"),
            (1, 3, 4, 5, 2),
            lambda x: x[:, 0:2, 2:4, 1:3],
        ),
        (layers.UpSampling1D(3, dtype="float64"), (2, 4, 3), lambda x: np.repeat(x, 3, axis=1)),
        (
            layers.UpSampling3D((2, 1, 3), dtype="float64"),
            (1, 2, 3, 2, 2),
            lambda x: np.repeat(np.repeat(x, 2, axis=1), 3, axis=3),
        ),
        (layers.Permute((2, 1), dtype="float64"), (2, 4, 3), lambda x: x.transpose(0, 2, 1)),
        (
            layers.Permute((3, 1, 2), dtype="float64"),
            (2, 4, 3, 5),
            lambda x: x.transpose(0, 3, 1, 2),
        ),
        (
            layers.RepeatVector(3, dtype="float64"),
            (2, 4),
            lambda x: np.repeat(x[:, None], 3, axis=1),
        ),
        (layers.Identity(dtype="float64"), (2, 3), lambda x: x),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, layers.Layer) else "",
)
def test_shape_layers_match_numpy_with_gradients(layer, shape, expected):
    x = rand(*shape)
    np.testing.assert_array_equal(layer(ft.constant(x)).numpy(), expected(x))
    check_input_gradient(layer, x)


def test_merge_layers_and_their_functional_forms():
    a, b, c = rand(2, 3), rand(2, 3), rand(2, 3)
    np.testing.assert_array_equal(
        layers.Maximum(dtype="float64")([a, b, c]).numpy(), np.maximum(np.maximum(a, b), c)
    )
    np.testing.assert_array_equal(layers.Minimum(dtype="float64")([a, b]).numpy(), np.minimum(a, b))
    cases = [
        (layers.add, a + b),
        (layers.subtract, a - b),
        (layers.multiply, a * b),
        (layers.average, (a + b) / 2),
        (layers.maximum, np.maximum(a, b)),
        (layers.minimum, np.minimum(a, b)),
        (layers.concatenate, np.concatenate([a, b], -1)),
    ]
    for fn, expected in cases:
        np.testing.assert_allclose(
            fn([a, b], dtype="float64").numpy(), expected, rtol=1e-12, err_msg=fn.__name__
        )
    np.testing.assert_array_equal(
        layers.concatenate([a, b], axis=0, dtype="float64").numpy(), np.concatenate([a, b])
    )


def test_maximum_gradient_goes_to_the_larger_input():
    a, b = ft.constant([[1.0, 5.0]]), ft.constant([[3.0, 2.0]])
    with ft.GradientTape() as tape:
        tape.watch([a, b])
        y = ft.reduce_sum(layers.Maximum()([a, b]))
    ga, gb = tape.gradient(y, [a, b])
    assert ga.numpy().tolist() == [[0.0, 1.0]] and gb.numpy().tolist() == [[1.0, 0.0]]


@pytest.mark.parametrize(
    "axes, shapes, expected",
    [
        (1, [(2, 4), (2, 4)], lambda x, y: (x * y).sum(1, keepdims=True)),
        (-1, [(2, 4), (2, 4)], lambda x, y: (x * y).sum(1, keepdims=True)),
        ((2, 2), [(2, 3, 4), (2, 5, 4)], lambda x, y: np.einsum("bik,bjk->bij", x, y)),
        ((1, 2), [(2, 3, 4), (2, 5, 3)], lambda x, y: np.einsum("bki,bjk->bij", x, y)),
        ((2, 1), [(2, 3, 4), (2, 4, 5)], lambda x, y: np.einsum("bik,bkj->bij", x, y)),
        (1, [(2, 4), (2, 4, 5)], lambda x, y: np.einsum("bk,bkj->bj", x, y)),
    ],
)
def test_dot_is_keras_batch_dot(axes, shapes, expected):
    x, y = rand(*shapes[0]), rand(*shapes[1])
    out = layers.Dot(axes, dtype="float64")([x, y]).numpy()
    np.testing.assert_allclose(out, expected(x, y), rtol=1e-12)
    # Gradient in the first input, the second held fixed.
    layer = layers.Dot(axes, dtype="float64")
    w = rand(*out.shape)
    xt = ft.constant(x)
    with ft.GradientTape() as tape:
        tape.watch(xt)
        loss = ft.reduce_sum(layer([xt, y]) * w)
    numeric = fd_grad(lambda v: float(ft.reduce_sum(layer([ft.constant(v), y]) * w)), x)
    np.testing.assert_allclose(tape.gradient(loss, xt).numpy(), numeric, rtol=1e-6, atol=1e-8)


def test_dot_normalize_gives_the_cosine_similarity():
    x, y = rand(3, 4), rand(3, 4)
    cosine = (x * y).sum(1) / np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)
    out = layers.dot([x, y], axes=1, normalize=True, dtype="float64").numpy()
    np.testing.assert_allclose(out[:, 0], cosine, rtol=1e-12)


def test_softmax_mask_and_tuple_axes():
    x = rand(2, 4)
    mask = np.array([[1, 1, 0, 1], [0, 0, 0, 0]], bool)
    y = layers.Softmax(dtype="float64")(x, mask=ft.constant(mask)).numpy()
    kept = np.exp(x[0, [0, 1, 3]])
    np.testing.assert_allclose(y[0], np.insert(kept / kept.sum(), 2, 0.0), rtol=1e-12)
    np.testing.assert_array_equal(y[1], 0.0)  # a fully masked row is all zeros, not uniform
    # A float mask keeps entries above 0.5, and broadcasts.
    y2 = layers.Softmax(dtype="float64")(x, mask=ft.constant([[1.0, 1.0, 0.2, 1.0]])).numpy()
    np.testing.assert_allclose(y2[0], y[0], rtol=1e-12)
    z = rand(2, 3, 4)
    out = layers.Softmax(axis=(1, 2), dtype="float64")(z).numpy()
    e = np.exp(z - z.max((1, 2), keepdims=True))
    np.testing.assert_allclose(out, e / e.sum((1, 2), keepdims=True), rtol=1e-12)
    check_input_gradient(layers.Softmax(axis=(1, 2), dtype="float64"), z)


def test_masking_zeroes_masked_steps_and_computes_the_mask():
    x = rand(2, 3, 2)
    x[0, 1] = 0.0
    x[1, 2] = 0.0
    layer = layers.Masking(dtype="float64")
    out = layer(x).numpy()
    np.testing.assert_array_equal(out, x)
    np.testing.assert_array_equal(layer.compute_mask(x).numpy(), [[1, 0, 1], [1, 1, 0]])
    y = x.copy()
    y[0, 0] = [7.0, 7.0]
    masked = layers.Masking(mask_value=7.0, dtype="float64")(y).numpy()
    np.testing.assert_array_equal(masked[0, 0], 0.0)
    np.testing.assert_array_equal(masked[1], y[1])


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.ZeroPadding1D((1, 2)),
        lambda: layers.ZeroPadding3D((1, 2, 3)),
        lambda: layers.Cropping1D(2),
        lambda: layers.Cropping3D(((0, 1), (1, 0), (2, 2))),
        lambda: layers.UpSampling1D(4),
        lambda: layers.UpSampling3D(3),
        lambda: layers.Permute((2, 3, 1)),
        lambda: layers.RepeatVector(5),
        lambda: layers.Maximum(),
        lambda: layers.Dot((1, 2), normalize=True),
        lambda: layers.Softmax(axis=(1, 2)),
        lambda: layers.Masking(mask_value=-1.0),
        lambda: layers.Identity(),
    ],
)
def test_get_config_round_trips(make):
    layer = make()
    config = layer.get_config()
    assert type(layer).from_config(config).get_config() == config


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: layers.ZeroPadding1D(-1), "padding"),
        (lambda: layers.ZeroPadding1D((1, 2, 3)), "padding"),
        (lambda: layers.ZeroPadding3D((1, 2)), "padding"),
        (lambda: layers.Cropping1D("a"), "cropping"),
        (lambda: layers.Cropping3D(((1, 1), (1, 1))), "cropping"),
        (lambda: layers.UpSampling1D(0), "size"),
        (lambda: layers.UpSampling3D((2, 2)), "size"),
        (lambda: layers.Permute((1, 3)), "dims"),
        (lambda: layers.Permute((0, 1)), "dims"),
        (lambda: layers.RepeatVector(0), "n"),
        (lambda: layers.Dot("x"), "axes"),
        (lambda: layers.Masking(mask_value="a"), "mask_value"),
    ],
)
def test_bad_arguments_raise_value_error(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_inputs_raise_value_error():
    with pytest.raises(ValueError, match="leaves nothing"):
        layers.Cropping1D((2, 3))(ft.ones([1, 5, 1]))
    with pytest.raises(ValueError, match="leaves nothing"):
        layers.Cropping3D(1)(ft.ones([1, 2, 5, 5, 1]))
    with pytest.raises(ValueError, match="expected ndim=2"):
        layers.RepeatVector(2)(ft.ones([1, 2, 3]))
    with pytest.raises(ValueError, match="Permute"):
        layers.Permute((2, 1))(ft.ones([1, 2, 3, 4]))
    with pytest.raises(ValueError, match="incompatible"):
        layers.Dot(1)([ft.ones([2, 3]), ft.ones([2, 4])])
    with pytest.raises(ValueError, match="exactly 2"):
        layers.Dot(1)([ft.ones([2, 3])] * 3)
    with pytest.raises(ValueError, match="broadcastable"):
        layers.Softmax()(ft.ones([2, 3]), mask=ft.ones([2, 4]))
