"""UnitNormalization, GroupNormalization, RMSNormalization, Normalization (given statistics and
adapt), Rescaling, CenterCrop, the noise and dropout layers (SpatialDropout1D/2D/3D,
GaussianNoise, GaussianDropout, AlphaDropout) and ActivityRegularization: values against
numpy, float64 finite-difference gradients, get_config round trips and bad arguments."""

import numpy as np
import pytest
from test_keras_layers import check_input_gradient, check_weight_gradients, rand

import ferrotape as ft
from ferrotape.keras import layers


def test_unit_normalization_matches_numpy():
    x = rand(2, 3, 4)
    y = layers.UnitNormalization(dtype="float64")(x).numpy()
    np.testing.assert_allclose(y, x / np.linalg.norm(x, axis=-1, keepdims=True), rtol=1e-12)
    y = layers.UnitNormalization(axis=[1, 2], dtype="float64")(x).numpy()
    np.testing.assert_allclose(y, x / np.sqrt((x**2).sum((1, 2), keepdims=True)), rtol=1e-12)
    assert np.all(np.isfinite(layers.UnitNormalization()(ft.zeros([1, 3])).numpy()))
    check_input_gradient(layers.UnitNormalization(dtype="float64"), x)


def test_rms_normalization_matches_numpy_and_its_gradients():
    layer = layers.RMSNormalization(dtype="float64")
    x = rand(2, 3, 4)
    y = layer(x).numpy()
    assert [w.name.split("/")[-1].split(":")[0] for w in layer.weights] == ["scale"]
    assert layer.scale.shape.as_list() == [4]
    layer.scale.assign(rand(4))
    expected = x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-6) * layer.scale.numpy()
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-12)
    assert y.shape == x.shape
    check_input_gradient(layer, x)
    check_weight_gradients(layer, x)


def group_norm_ref(x, groups, axis, gamma, beta, epsilon=1e-3):
    x = np.moveaxis(x, axis, -1)
    shape = x.shape
    g = x.reshape(*shape[:-1], groups, shape[-1] // groups)
    axes = tuple(range(1, g.ndim - 2)) + (g.ndim - 1,)
    mean = g.mean(axes, keepdims=True)
    var = g.var(axes, keepdims=True)
    out = ((g - mean) / np.sqrt(var + epsilon)).reshape(shape) * gamma + beta
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize(
    "groups, axis, shape",
    [(2, -1, (2, 5, 4)), (-1, -1, (2, 3, 3, 4)), (1, -1, (2, 6)), (3, 1, (2, 6, 5))],
)
def test_group_normalization_matches_numpy(groups, axis, shape):
    layer = layers.GroupNormalization(groups=groups, axis=axis, dtype="float64")
    x = rand(*shape)
    layer(x)
    assert [w.name.split("/")[-1].split(":")[0] for w in layer.weights] == ["gamma", "beta"]
    channels = shape[axis]
    gamma, beta = rand(channels), rand(channels)
    layer.gamma.assign(gamma)
    layer.beta.assign(beta)
    n_groups = channels if groups == -1 else groups
    expected = group_norm_ref(x, n_groups, axis % len(shape), gamma, beta)
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-10, atol=1e-12)


def test_group_normalization_gradients():
    layer = layers.GroupNormalization(groups=2, dtype="float64")
    x = rand(2, 3, 4)
    check_input_gradient(layer, x)
    check_weight_gradients(layer, x)


def test_normalization_with_given_statistics_and_invert():
    x = rand(4, 3)
    mean, variance = [1.0, -2.0, 0.5], [4.0, 0.25, 1.0]
    y = layers.Normalization(mean=mean, variance=variance, dtype="float64")(x).numpy()
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(variance), rtol=1e-12)
    back = layers.Normalization(mean=mean, variance=variance, invert=True, dtype="float64")(y)
    np.testing.assert_allclose(back.numpy(), x, rtol=1e-12)
    scalar = layers.Normalization(axis=None, mean=2.0, variance=9.0, dtype="float64")(x).numpy()
    np.testing.assert_allclose(scalar, (x - 2.0) / 3.0, rtol=1e-12)


def test_normalization_adapt_from_an_array_and_a_dataset():
    data = rand(50, 3, 2) * 3.0 + 1.0
    layer = layers.Normalization(axis=-1, dtype="float64")
    layer.adapt(data)
    names = [w.name.split("/")[-1].split(":")[0] for w in layer.weights]
    assert names == ["mean", "variance", "count"] and layer.trainable_weights == []
    np.testing.assert_allclose(layer.adapt_mean.numpy(), data.mean((0, 1)), rtol=1e-12)
    # `mean`/`variance` (read by the TF regression tutorial) broadcast against the inputs.
    assert layer.mean.shape == [1, 1, 2] and layer.variance.shape == [1, 1, 2]
    np.testing.assert_allclose(layer.mean.numpy()[0, 0], data.mean((0, 1)), rtol=1e-12)
    np.testing.assert_allclose(layer.variance.numpy()[0, 0], data.var((0, 1)), rtol=1e-12)
    out = layer(data).numpy()
    np.testing.assert_allclose(out.mean((0, 1)), 0.0, atol=1e-12)
    np.testing.assert_allclose(out.std((0, 1)), 1.0, rtol=1e-10)
    batched = layers.Normalization(axis=(1, 2), dtype="float64")
    batched.adapt(ft.data.Dataset.from_tensor_slices(data).batch(8))
    np.testing.assert_allclose(batched.adapt_mean.numpy(), data.mean(0), rtol=1e-12)
    np.testing.assert_allclose(batched.adapt_variance.numpy(), data.var(0), rtol=1e-12)
    check_input_gradient(layer, data[:2])


def test_rescaling_and_center_crop():
    x = rand(2, 5, 6, 3)
    np.testing.assert_allclose(
        layers.Rescaling(1 / 127.5, offset=-1, dtype="float64")(x).numpy(),
        x / 127.5 - 1,
        rtol=1e-12,
    )
    per_channel = layers.Rescaling([1.0, 2.0, 3.0], dtype="float64")(x).numpy()
    np.testing.assert_allclose(per_channel, x * [1.0, 2.0, 3.0], rtol=1e-12)
    ints = layers.Rescaling(0.5)(ft.constant([[2, 4]], dtype="int32"))
    assert ints.dtype == ft.float32 and ints.numpy().tolist() == [[1.0, 2.0]]
    np.testing.assert_array_equal(
        layers.CenterCrop(2, 3, dtype="float64")(x).numpy(), x[:, 1:3, 1:4]
    )
    np.testing.assert_array_equal(layers.CenterCrop(4, 6, dtype="float64")(x[0]).numpy(), x[0, 0:4])


def test_noise_layers_are_the_identity_outside_training():
    x = rand(3, 4, 5)
    for layer in [
        layers.GaussianNoise(0.5, seed=1),
        layers.GaussianDropout(0.5, seed=1),
        layers.AlphaDropout(0.5, seed=1),
        layers.SpatialDropout1D(0.5, seed=1),
    ]:
        np.testing.assert_array_equal(layer(ft.constant(x)).numpy(), x.astype(np.float32))


def test_spatial_dropout_drops_whole_channels():
    for cls, shape in [
        (layers.SpatialDropout1D, (4, 6, 8)),
        (layers.SpatialDropout2D, (4, 3, 3, 8)),
        (layers.SpatialDropout3D, (4, 2, 2, 2, 8)),
    ]:
        y = cls(0.5, seed=3)(ft.ones(list(shape)), training=True).numpy()
        per_channel = y.reshape(shape[0], -1, shape[-1])
        # Each (sample, channel) is all 0 or all 2: one draw shared by every position.
        assert np.all(per_channel.min(1) == per_channel.max(1))
        assert set(np.unique(per_channel)) == {0.0, 2.0}


def test_gaussian_noise_and_dropout_statistics():
    x = ft.ones([200, 100])
    noisy = layers.GaussianNoise(0.5, seed=0)(x, training=True).numpy() - 1.0
    assert abs(noisy.mean()) < 0.01 and abs(noisy.std() - 0.5) < 0.01
    scaled = layers.GaussianDropout(0.2, seed=0)(x, training=True).numpy()
    assert abs(scaled.mean() - 1.0) < 0.01 and abs(scaled.std() - 0.5) < 0.01  # sqrt(.2/.8)


def test_alpha_dropout_keeps_selu_mean_and_variance():
    x = ft.constant(np.random.default_rng(0).standard_normal((400, 250)), dtype="float64")
    y = layers.AlphaDropout(0.3, seed=0, dtype="float64")(x, training=True).numpy()
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1.0) < 0.01
    # Dropped units all take the same value a * (-alpha * scale) + b.
    values, counts = np.unique(y, return_counts=True)
    assert abs(counts.max() / y.size - 0.3) < 0.01


def test_noise_layer_gradients_are_those_of_a_fixed_draw():
    x = rand(2, 3)
    for layer in [
        layers.GaussianNoise(0.3, seed=2, dtype="float64"),
        layers.GaussianDropout(0.3, seed=2, dtype="float64"),
    ]:
        xt = ft.constant(x)
        with ft.GradientTape() as tape:
            tape.watch(xt)
            y = layer(xt, training=True)
            total = ft.reduce_sum(y)
        grad = tape.gradient(total, xt).numpy()
        expected = np.ones_like(x) if isinstance(layer, layers.GaussianNoise) else y.numpy() / x
        np.testing.assert_allclose(grad, expected, rtol=1e-10)


def test_activity_regularization_adds_its_penalty_per_sample():
    layer = layers.ActivityRegularization(l1=0.1, l2=0.2, dtype="float64")
    x = rand(4, 3)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    expected = (0.1 * np.abs(x).sum() + 0.2 * (x**2).sum()) / 4  # Keras 3 divides by the batch
    assert [float(v) for v in layer.losses] == pytest.approx([expected])
    model = ft.keras.Sequential([ft.keras.Input((3,)), layer])
    model(x)
    assert [float(v) for v in model.losses] == pytest.approx([expected])


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.UnitNormalization(axis=[1, 2]),
        lambda: layers.GroupNormalization(groups=4, epsilon=1e-5, center=False),
        lambda: layers.RMSNormalization(epsilon=1e-5),
        lambda: layers.Normalization(mean=[1.0, 2.0], variance=[1.0, 4.0]),
        lambda: layers.Normalization(axis=(1, 2), invert=True),
        lambda: layers.Rescaling(0.5, offset=1.0),
        lambda: layers.CenterCrop(3, 4),
        lambda: layers.SpatialDropout2D(0.3, seed=1),
        lambda: layers.GaussianNoise(0.1, seed=2),
        lambda: layers.GaussianDropout(0.2),
        lambda: layers.AlphaDropout(0.1, noise_shape=(None, 1)),
        lambda: layers.ActivityRegularization(l1=0.5),
    ],
)
def test_get_config_round_trips(make):
    layer = make()
    config = layer.get_config()
    assert type(layer).from_config(config).get_config() == config


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: layers.GroupNormalization(groups=0), "groups"),
        (lambda: layers.RMSNormalization(epsilon="x"), "epsilon"),
        (lambda: layers.Normalization(mean=1.0), "variance"),
        (lambda: layers.Normalization(axis="x"), "axis"),
        (lambda: layers.Rescaling("x"), "scale"),
        (lambda: layers.CenterCrop(0, 3), "height"),
        (lambda: layers.SpatialDropout1D(1.5), "rate"),
        (lambda: layers.GaussianNoise(-1.0), "stddev"),
        (lambda: layers.GaussianDropout(2.0), "rate"),
        (lambda: layers.AlphaDropout(-0.1), "rate"),
        (lambda: layers.ActivityRegularization(l1="x"), "l1"),
    ],
)
def test_bad_arguments_raise_value_error(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_inputs_raise_value_error():
    with pytest.raises(ValueError, match="cannot be more than the number of channels"):
        layers.GroupNormalization(groups=8)(ft.ones([2, 4]))
    with pytest.raises(ValueError, match="must be a multiple"):
        layers.GroupNormalization(groups=3)(ft.ones([2, 4]))
    with pytest.raises(ValueError, match="smaller than the crop"):
        layers.CenterCrop(5, 5)(ft.ones([1, 4, 6, 1]))
    with pytest.raises(ValueError, match="expected ndim=4"):
        layers.SpatialDropout2D(0.5)(ft.ones([2, 3, 4]), training=True)
    with pytest.raises(ValueError, match="range"):
        layers.Normalization(axis=3, mean=0.0, variance=1.0)(ft.ones([2, 3]))


def test_spectral_normalization_divides_the_kernel_by_its_power_iteration_norm():
    layer = layers.SpectralNormalization(layers.Dense(4, dtype="float64"), dtype="float64")
    x = rand(2, 3)
    layer(x)
    names = [w.name.split("/")[-1].split(":")[0] for w in layer.weights]
    assert names == ["kernel", "vector_u", "bias"]  # Keras's order
    assert layer.trainable_weights == [layer.layer.kernel, layer.layer.bias]
    w, u = layer.layer.kernel.numpy(), layer.vector_u.numpy()
    np.testing.assert_array_equal(layer(x).numpy(), x @ w)  # inference: the kernel as it is
    layer(x, training=True)
    v = u @ w.T
    v /= np.linalg.norm(v)
    u_new = v @ w
    u_new /= np.linalg.norm(u_new)
    sigma = (v @ w @ u_new.T).item()
    np.testing.assert_allclose(layer.vector_u.numpy(), u_new, rtol=1e-10)
    np.testing.assert_allclose(layer.layer.kernel.numpy(), w / sigma, rtol=1e-10)
    for _ in range(30):
        layer(x, training=True)
    top = np.linalg.svd(layer.layer.kernel.numpy(), compute_uv=False)[0]
    np.testing.assert_allclose(top, 1.0, rtol=1e-6)
    config = layer.get_config()
    assert layers.SpectralNormalization.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="power_iterations"):
        layers.SpectralNormalization(layers.Dense(2), power_iterations=0)
    with pytest.raises(ValueError, match="kernel"):
        layers.SpectralNormalization(layers.Flatten())(ft.ones([2, 3]))
