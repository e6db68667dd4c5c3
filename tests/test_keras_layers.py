"""ft.keras.layers: shapes, values against numpy references, and gradients (first and second
order) against central finite differences, in float64 layers so the differences are exact
enough."""

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras import layers

RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.standard_normal(shape)


def short_name(variable):
    """ "dense/kernel:0" -> "kernel"."""
    return variable.name.split("/")[-1].split(":")[0]


def fd_grad(f, x, eps=1e-6):
    """Central differences of the scalar f at numpy x."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[idx] += eps
        lo[idx] -= eps
        g[idx] = (f(hi) - f(lo)) / (2 * eps)
    return g


def check_input_gradient(layer, x, training=None, rtol=1e-5, atol=1e-7):
    """d/dx sum(layer(x) * w) from the tape against finite differences."""
    kwargs = {} if training is None else {"training": training}
    w = rand(*layer(x, **kwargs).shape)

    def loss(xv):
        return float(ft.reduce_sum(layer(ft.constant(xv), **kwargs) * w))

    xt = ft.constant(x)
    with ft.GradientTape() as tape:
        tape.watch(xt)
        y = ft.reduce_sum(layer(xt, **kwargs) * w)
    np.testing.assert_allclose(tape.gradient(y, xt).numpy(), fd_grad(loss, x), rtol, atol)


def check_weight_gradients(layer, x, training=None, rtol=1e-5, atol=1e-7, weights=None):
    """d/dweights of sum(layer(x) * w) against finite differences for every trainable weight
    (or for `weights`, which the tape then watches)."""
    kwargs = {} if training is None else {"training": training}
    weights = layer.trainable_weights if weights is None else weights
    w = rand(*layer(x, **kwargs).shape)
    with ft.GradientTape() as tape:
        tape.watch(weights)
        y = ft.reduce_sum(layer(x, **kwargs) * w)
    grads = tape.gradient(y, weights)
    for var, grad in zip(weights, grads, strict=True):
        saved = var.numpy()

        def loss(value, var=var):
            var.assign(value)
            return float(ft.reduce_sum(layer(x, **kwargs) * w))

        expected = fd_grad(loss, saved)
        var.assign(saved)
        np.testing.assert_allclose(grad.numpy(), expected, rtol, atol, err_msg=var.name)


# ----------------------------------------------------------------------------- references


def same_pads(size, window, stride):
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def conv_ref(x, k, stride=(1, 1), padding="valid"):
    kh, kw = k.shape[:2]
    if padding == "same":
        x = np.pad(
            x,
            [
                (0, 0),
                same_pads(x.shape[1], kh, stride[0]),
                same_pads(x.shape[2], kw, stride[1]),
                (0, 0),
            ],
        )
    oh = (x.shape[1] - kh) // stride[0] + 1
    ow = (x.shape[2] - kw) // stride[1] + 1
    out = np.zeros((x.shape[0], oh, ow, k.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride[0] : i * stride[0] + kh, j * stride[1] : j * stride[1] + kw]
            out[:, i, j] = np.einsum("nabc,abcd->nd", patch, k)
    return out


# ----------------------------------------------------------------------------- Dense


def test_dense_matches_numpy_and_lists_its_weights_in_keras_order():
    layer = layers.Dense(3, activation="relu", dtype="float64")
    x = rand(4, 5)
    y = layer(x).numpy()
    kernel, bias = layer.get_weights()
    assert kernel.shape == (5, 3) and bias.shape == (3,)
    np.testing.assert_allclose(y, np.maximum(x @ kernel + bias, 0), rtol=1e-12)
    assert [v.name for v in layer.trainable_variables] == [
        f"{layer.name}/kernel:0",
        f"{layer.name}/bias:0",
    ]


def test_dense_applies_over_the_last_axis_and_accepts_any_activation_callable():
    layer = layers.Dense(2, activation=lambda t: t * 2.0, use_bias=False, dtype="float64")
    x = rand(3, 4, 5)
    y = layer(x).numpy()
    assert y.shape == (3, 4, 2)
    np.testing.assert_allclose(y, 2.0 * x @ layer.kernel.numpy(), rtol=1e-12)
    assert layer.get_weights()[0].shape == (5, 2) and len(layer.weights) == 1


def test_dense_with_a_tf_nn_activation_matches_seed_004():
    layer = ft.keras.layers.Dense(10, activation=ft.nn.relu)
    x = ft.constant([[1.0, 2.0, 3.0]])
    with ft.GradientTape() as tape:
        y = layer(x)
        loss = ft.reduce_mean(y**2)
    grad = tape.gradient(loss, layer.kernel)
    k, b = layer.kernel.numpy(), layer.bias.numpy()
    pre = x.numpy() @ k + b
    expected = x.numpy().T @ (2 * np.maximum(pre, 0) * (pre > 0) / 10)
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_dense_gradients():
    layer = layers.Dense(3, activation="tanh", dtype="float64")
    x = rand(4, 2)
    check_input_gradient(layer, x)
    check_weight_gradients(layer, x)


def test_dense_rejects_a_wrong_feature_count():
    layer = layers.Dense(3)
    layer(np.ones((2, 4), np.float32))
    with pytest.raises(ValueError, match="Dense"):
        layer(np.ones((2, 5), np.float32))


# ----------------------------------------------------------------------------- convolutions


@pytest.mark.parametrize(
    "kernel_size, strides, padding",
    [((3, 3), (1, 1), "same"), ((3, 2), (2, 2), "valid"), ((2, 2), (2, 1), "same")],
)
def test_conv2d_matches_numpy(kernel_size, strides, padding):
    layer = layers.Conv2D(4, kernel_size, strides=strides, padding=padding, dtype="float64")
    x = rand(2, 7, 6, 3)
    y = layer(x).numpy()
    kernel, bias = layer.get_weights()
    assert kernel.shape == kernel_size + (3, 4)
    np.testing.assert_allclose(y, conv_ref(x, kernel, strides, padding) + bias, rtol=1e-10)


@pytest.mark.parametrize("channels", [1, 3, 9])
@pytest.mark.parametrize("use_bias", [True, False])
def test_conv2d_direct_and_gemm_paths_match_numpy_with_gradients(channels, use_bias):
    """Up to 32 patch elements (channels × window) convolve forward directly, longer patches
    by im2col and gemm (and every filter gradient); the bias is added inside the same op. Both
    paths, with and without the bias."""
    layer = layers.Conv2D(3, 3, padding="same", use_bias=use_bias, dtype="float64")
    x = rand(2, 5, 4, channels)
    layer(x)
    if use_bias:
        layer.bias.assign(rand(3))  # a zero bias would hide one added in the wrong place
    bias = layer.bias.numpy() if use_bias else 0.0
    expected = conv_ref(x, layer.kernel.numpy(), (1, 1), "same") + bias
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-10)
    check_input_gradient(layer, x)
    check_weight_gradients(layer, x)


@pytest.mark.parametrize("channels", [2, 4])
def test_conv2d_gradients_first_and_second_order(channels):
    layer = layers.Conv2D(2, 3, padding="same", activation="tanh", dtype="float64")
    x = rand(2, 4, 4, channels)
    check_input_gradient(layer, x)
    check_weight_gradients(layer, x)
    # Second order: the gradient of <d loss/dx, v> with respect to x, against differences of
    # the first gradient.
    v = rand(*x.shape)

    def first(xv):
        xt = ft.constant(xv)
        with ft.GradientTape() as tape:
            tape.watch(xt)
            y = ft.reduce_sum(layer(xt) ** 2)
        return tape.gradient(y, xt)

    xt = ft.constant(x)
    with ft.GradientTape() as outer:
        outer.watch(xt)
        with ft.GradientTape() as inner:
            inner.watch(xt)
            y = ft.reduce_sum(layer(xt) ** 2)
        g = inner.gradient(y, xt)
        gv = ft.reduce_sum(g * v)
    hv = outer.gradient(gv, xt).numpy()
    expected = fd_grad(lambda xv: float(np.sum(first(xv).numpy() * v)), x)
    np.testing.assert_allclose(hv, expected, rtol=1e-5, atol=1e-7)


def test_depthwise_conv2d_convolves_each_channel_with_its_own_filters():
    layer = layers.DepthwiseConv2D(3, padding="same", depth_multiplier=2, dtype="float64")
    x = rand(2, 5, 5, 3)
    y = layer(x).numpy()
    kernel, bias = layer.get_weights()
    assert kernel.shape == (3, 3, 3, 2) and y.shape == (2, 5, 5, 6)
    for c in range(3):
        ref = conv_ref(x[..., c : c + 1], kernel[:, :, c : c + 1, :], padding="same")
        np.testing.assert_allclose(
            y[..., 2 * c : 2 * c + 2], ref + bias[2 * c : 2 * c + 2], rtol=1e-10
        )
    check_weight_gradients(layer, rand(1, 4, 4, 3))


def test_conv2d_rejects_images_of_the_wrong_rank_or_channels():
    layer = layers.Conv2D(2, 3)
    with pytest.raises(ValueError, match="ndim=4"):
        layer(np.ones((2, 5, 5), np.float32))
    layer(np.ones((1, 5, 5, 3), np.float32))
    with pytest.raises(ValueError, match="Conv2D"):
        layer(np.ones((1, 5, 5, 4), np.float32))
    with pytest.raises(ValueError, match="padding"):
        layers.Conv2D(2, 3, padding="full")


# ----------------------------------------------------------------------------- pooling


def test_pooling_layers_match_numpy():
    x = rand(2, 6, 5, 3)
    y = layers.MaxPooling2D()(x).numpy()
    ref = x[:, :6, :4].reshape(2, 3, 2, 2, 2, 3).max(axis=(2, 4))
    np.testing.assert_allclose(y, ref.astype(np.float32), rtol=1e-6)
    avg = layers.AveragePooling2D(pool_size=2, strides=1)(x).numpy()
    np.testing.assert_allclose(avg[0, 0, 0], x[0, :2, :2].mean((0, 1)), rtol=1e-6)
    assert avg.shape == (2, 5, 4, 3)
    same = layers.MaxPooling2D(pool_size=(2, 2), padding="same")(x)
    assert same.shape == (2, 3, 3, 3)
    gap = layers.GlobalAveragePooling2D()(x).numpy()
    np.testing.assert_allclose(gap, x.mean((1, 2)), rtol=1e-6)
    assert layers.GlobalMaxPooling2D(keepdims=True)(x).shape == (2, 1, 1, 3)


# ----------------------------------------------------------------------------- normalization


def test_batch_normalization_trains_on_batch_statistics_and_updates_moving_averages():
    layer = layers.BatchNormalization(momentum=0.9, epsilon=1e-3, dtype="float64")
    x1, x2 = rand(8, 3) * 2 + 1, rand(8, 3) - 1
    y = layer(x1, training=True).numpy()
    np.testing.assert_allclose(y, (x1 - x1.mean(0)) / np.sqrt(x1.var(0) + 1e-3), rtol=1e-10)
    layer(x2, training=True)
    mean = (0.0 * 0.9 + x1.mean(0) * 0.1) * 0.9 + x2.mean(0) * 0.1
    var = (1.0 * 0.9 + x1.var(0) * 0.1) * 0.9 + x2.var(0) * 0.1
    np.testing.assert_allclose(layer.moving_mean.numpy(), mean, rtol=1e-10)
    np.testing.assert_allclose(layer.moving_variance.numpy(), var, rtol=1e-10)
    # Without training=True (Keras 3): the moving statistics, and no update.
    gamma, beta = layer.gamma.numpy(), layer.beta.numpy()
    np.testing.assert_allclose(
        layer(x1).numpy(), (x1 - mean) / np.sqrt(var + 1e-3) * gamma + beta, rtol=1e-10
    )
    np.testing.assert_allclose(layer.moving_mean.numpy(), mean, rtol=1e-10)
    assert [short_name(w) for w in layer.weights] == [
        "gamma",
        "beta",
        "moving_mean",
        "moving_variance",
    ]
    assert len(layer.trainable_weights) == 2 and len(layer.non_trainable_weights) == 2


def test_batch_normalization_on_an_empty_batch_keeps_its_moving_averages():
    # TensorFlow folds the empty batch's NaN mean into the moving averages, poisoning them for
    # every later inference; ferrotape leaves them as they were (deliberately different).
    bn = layers.BatchNormalization()
    bn(np.full((3, 4), 2.0, np.float32), training=True)
    before = (bn.moving_mean.numpy().copy(), bn.moving_variance.numpy().copy())
    y = bn(np.zeros((0, 4), np.float32), training=True)
    assert y.shape == (0, 4)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), before[0])
    np.testing.assert_array_equal(bn.moving_variance.numpy(), before[1])


def test_batch_normalization_over_channels_of_images_and_another_axis():
    x = rand(4, 3, 3, 2)
    y = layers.BatchNormalization(dtype="float64")(x, training=True).numpy()
    ref = (x - x.mean((0, 1, 2))) / np.sqrt(x.var((0, 1, 2)) + 1e-3)
    np.testing.assert_allclose(y, ref, rtol=1e-10)
    y1 = layers.BatchNormalization(axis=1, dtype="float64")(x, training=True).numpy()
    mean = x.mean((0, 2, 3), keepdims=True)
    np.testing.assert_allclose(
        y1, (x - mean) / np.sqrt(x.var((0, 2, 3), keepdims=True) + 1e-3), rtol=1e-10
    )


def test_batch_normalization_gradients_in_training():
    layer = layers.BatchNormalization(dtype="float64")
    x = rand(5, 3)
    layer(x)
    layer.gamma.assign(rand(3))
    layer.beta.assign(rand(3))
    check_input_gradient(layer, x, training=True)
    check_weight_gradients(layer, x, training=True)


def test_batch_normalization_inference_uses_the_moving_statistics_with_gradients():
    """training=False is one fused op: values from the moving statistics, and gradients for x,
    gamma, beta and (when watched) the moving statistics, first and second order."""
    layer = layers.BatchNormalization(epsilon=1e-3, dtype="float64")
    x = rand(3, 2, 2, 2)
    layer(x)
    gamma, beta, mean, variance = rand(2), rand(2), rand(2), rand(2) ** 2 + 0.5
    for var, value in zip(
        (layer.gamma, layer.beta, layer.moving_mean, layer.moving_variance),
        (gamma, beta, mean, variance),
        strict=True,
    ):
        var.assign(value)
    expected = (x - mean) / np.sqrt(variance + 1e-3) * gamma + beta
    np.testing.assert_allclose(layer(x, training=False).numpy(), expected, rtol=1e-12)
    check_input_gradient(layer, x, training=False)
    check_weight_gradients(layer, x, training=False)
    check_weight_gradients(
        layer, x, training=False, weights=[layer.moving_mean, layer.moving_variance]
    )
    # Second order in x and gamma: the Hessian-vector product of sum((y·w)²) against
    # differences of the first gradient.
    w, v = rand(*x.shape), rand(2)

    def first(gv):
        layer.gamma.assign(gv)
        with ft.GradientTape() as tape:
            y = ft.reduce_sum(ft.square(layer(x, training=False) * w))
        return tape.gradient(y, layer.gamma).numpy()

    with ft.GradientTape() as outer:
        with ft.GradientTape() as inner:
            y = ft.reduce_sum(ft.square(layer(x, training=False) * w))
        gv = ft.reduce_sum(inner.gradient(y, layer.gamma) * v)
    hv = outer.gradient(gv, layer.gamma).numpy()
    np.testing.assert_allclose(
        hv, fd_grad(lambda g: float(np.sum(first(g) * v)), gamma), rtol=1e-5, atol=1e-7
    )
    layer.gamma.assign(gamma)


def test_frozen_batch_normalization_runs_in_inference_mode():
    layer = layers.BatchNormalization(dtype="float64")
    x = rand(6, 2) + 3
    layer(x)
    layer.trainable = False
    np.testing.assert_allclose(layer(x, training=True).numpy(), x / np.sqrt(1 + 1e-3), rtol=1e-10)
    np.testing.assert_allclose(layer.moving_mean.numpy(), 0.0)


def test_layer_normalization_matches_numpy_and_its_gradients():
    layer = layers.LayerNormalization(dtype="float64")
    x = rand(3, 4)
    y = layer(x).numpy()
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(y, ref, rtol=1e-10)
    layer.gamma.assign(rand(4))
    check_input_gradient(layer, x)
    check_weight_gradients(layer, x)


# ----------------------------------------------------------------------------- dropout


def test_dropout_scales_kept_units_and_is_the_identity_in_inference():
    layer = layers.Dropout(0.5, seed=3)
    x = np.ones((200, 50), np.float32)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    y = layer(x, training=True).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert 0.45 < (y == 0).mean() < 0.55
    # The gradient is the same mask.
    xt = ft.constant(x)
    with ft.GradientTape() as tape:
        tape.watch(xt)
        out = layer(xt, training=True)
    np.testing.assert_array_equal(tape.gradient(out, xt).numpy(), out.numpy())


def test_dropout_is_reproducible_with_a_seed_and_honours_noise_shape():
    x = np.ones((4, 6), np.float32)
    a = layers.Dropout(0.3, seed=11)(x, training=True).numpy()
    b = layers.Dropout(0.3, seed=11)(x, training=True).numpy()
    np.testing.assert_array_equal(a, b)
    shared = layers.Dropout(0.5, noise_shape=(None, 1), seed=1)(x, training=True).numpy()
    assert all(len(set(row)) == 1 for row in shared)
    with pytest.raises(ValueError, match="rate"):
        layers.Dropout(1.5)


# ----------------------------------------------------------------------------- the rest


def test_shape_layers_activation_embedding_and_merges():
    x = rand(2, 3, 4).astype(np.float32)
    assert layers.Flatten()(x).shape == (2, 12)
    assert layers.Reshape((4, 3))(x).shape == (2, 4, 3)
    assert layers.Reshape((-1, 2))(x).shape == (2, 6, 2)
    np.testing.assert_allclose(layers.Activation("relu")(x).numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(
        layers.Activation("softmax")(x).numpy().sum(-1), np.ones((2, 3)), rtol=1e-6
    )
    emb = layers.Embedding(10, 3)
    ids = np.array([[1, 2], [9, 1]])
    out = emb(ids).numpy()
    np.testing.assert_array_equal(out[0, 0], emb.embeddings.numpy()[1])
    assert out.shape == (2, 2, 3)
    np.testing.assert_allclose(layers.Add()([x, x, x]).numpy(), 3 * x, rtol=1e-6)
    np.testing.assert_allclose(layers.Subtract()([x, x]).numpy(), 0 * x)
    np.testing.assert_allclose(layers.Multiply()([x, x]).numpy(), x * x, rtol=1e-6)
    np.testing.assert_allclose(layers.Average()([x, 3 * x]).numpy(), 2 * x, rtol=1e-6)
    assert layers.Concatenate(axis=1)([x, x]).shape == (2, 6, 4)


def test_seed_cnn_trains_with_a_tape_and_keeps_its_variables_in_keras_order():
    ft.random.set_seed(0)
    model = ft.keras.Sequential(
        [
            layers.Conv2D(4, (3, 3), padding="same", input_shape=(8, 8, 1)),
            layers.Activation("relu"),
            layers.BatchNormalization(axis=-1),
            layers.MaxPooling2D(pool_size=(2, 2)),
            layers.Flatten(),
            layers.Dense(8),
            layers.Activation("relu"),
            layers.BatchNormalization(),
            layers.Dropout(0.5),
            layers.Dense(2),
            layers.Activation("softmax"),
        ]
    )
    names = [short_name(v) for v in model.trainable_variables]
    assert names == ["kernel", "bias", "gamma", "beta"] * 2 + ["kernel", "bias"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 8, 8, 1)).astype(np.float32)
    labels = (x[:, :4].mean((1, 2, 3)) > x[:, 4:].mean((1, 2, 3))).astype(int)
    y = np.eye(2, dtype=np.float32)[labels]
    opt = ft.keras.optimizers.Adam(0.01)
    losses = []
    for _ in range(30):
        with ft.GradientTape() as tape:
            pred = model(x, training=True)
            loss = ft.reduce_mean(ft.keras.losses.categorical_crossentropy(y, pred))
        grads = tape.gradient(loss, model.trainable_variables)
        assert all(g is not None for g in grads)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]


def test_batch_normalization_second_order_through_the_fused_op():
    """Under an outer tape the fused op's backward runs as differentiable ops: the Hessian-vector
    product matches finite differences of the first gradient."""
    layer = layers.BatchNormalization(dtype="float64")
    x = rand(6, 3)
    layer(x)
    layer.gamma.assign(rand(3))
    w = rand(6, 3)
    v = rand(6, 3)

    def first(xv):
        xt = ft.constant(xv)
        with ft.GradientTape() as tape:
            tape.watch(xt)
            y = ft.reduce_sum(ft.square(layer(xt, training=True) * w))
        return tape.gradient(y, xt).numpy()

    xt = ft.constant(x)
    with ft.GradientTape() as outer:
        outer.watch(xt)
        with ft.GradientTape() as inner:
            inner.watch(xt)
            y = ft.reduce_sum(ft.square(layer(xt, training=True) * w))
        gv = ft.reduce_sum(inner.gradient(y, xt) * v)
    hv = outer.gradient(gv, xt).numpy()
    expected = fd_grad(lambda xv: float(np.sum(first(xv) * v)), x)
    np.testing.assert_allclose(hv, expected, rtol=1e-5, atol=1e-7)
    # The first gradient is the same whichever path computes it.
    with ft.GradientTape() as outer:
        outer.watch(xt)
        with ft.GradientTape() as inner:
            inner.watch(xt)
            y = ft.reduce_sum(ft.square(layer(xt, training=True) * w))
        composed = inner.gradient(y, xt).numpy()
    np.testing.assert_allclose(composed, first(x), rtol=1e-12, atol=1e-12)
