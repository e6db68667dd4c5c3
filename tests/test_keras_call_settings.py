"""Keras reads a layer's settings (``rate``, ``momentum``, ``activation``...) on every call:
changing one after the layer is built takes effect at the next call, as it does in Keras."""

import numpy as np
import pytest

import ferrotape as ft
from ferrotape import keras


def test_dropout_rate_changed_after_build_takes_effect():
    layer = keras.layers.Dropout(0.0, seed=1)
    x = ft.ones([4000])
    np.testing.assert_array_equal(layer(x, training=True).numpy(), np.ones(4000))
    layer.rate = 0.5
    y = layer(x, training=True).numpy()
    assert 1700 < (y == 0).sum() < 2300
    np.testing.assert_array_equal(np.unique(y), [0.0, 2.0])
    layer.rate = 1.0
    np.testing.assert_array_equal(layer(x, training=True).numpy(), np.zeros(4000))


def test_dropout_noise_shape_changed_after_build_takes_effect():
    layer = keras.layers.Dropout(0.5, seed=3)
    x = ft.ones([200, 8])
    layer(x, training=True)
    layer.noise_shape = (200, 1)  # one draw per row: each row all kept or all dropped
    y = layer(x, training=True).numpy()
    assert all(len(set(row)) == 1 for row in y)


def test_batch_normalization_momentum_changed_after_build_takes_effect():
    layer = keras.layers.BatchNormalization(momentum=1.0)
    batch = ft.constant([[1.0], [3.0]])  # mean 2, (biased) variance 1
    layer(batch, training=True)
    np.testing.assert_allclose(layer.moving_mean.numpy(), [0.0])
    layer.momentum = 0.5
    layer(batch, training=True)
    np.testing.assert_allclose(layer.moving_mean.numpy(), [1.0])
    np.testing.assert_allclose(layer.moving_variance.numpy(), [1.0])


def test_normalization_epsilon_changed_after_build_takes_effect():
    for layer in (keras.layers.BatchNormalization(), keras.layers.LayerNormalization()):
        x = ft.constant([[1.0, 3.0]])
        before = layer(x).numpy()
        layer.epsilon = 100.0
        after = layer(x).numpy()
        assert not np.allclose(before, after), type(layer).__name__


@pytest.mark.parametrize(
    "make",
    [
        lambda: keras.layers.Dense(3, activation="relu"),
        lambda: keras.layers.Conv2D(3, 1, activation="relu"),
        lambda: keras.layers.DepthwiseConv2D(1, activation="relu"),
        lambda: keras.layers.Conv2DTranspose(3, 1, activation="relu"),
    ],
)
def test_activation_changed_after_build_takes_effect(make):
    layer = make()
    rank4 = not isinstance(layer, keras.layers.Dense)
    x = ft.constant(
        np.linspace(-3, 3, 24, dtype=np.float32).reshape((2, 2, 2, 3) if rank4 else (8, 3))
    )
    assert layer(x).numpy().min() >= 0.0
    layer.activation = keras.activations.get("linear")
    linear = layer(x).numpy()
    assert linear.min() < 0.0
    # A callable the native call cannot apply runs after it, also read at call time.
    layer.activation = lambda t: t * 2.0
    np.testing.assert_allclose(layer(x).numpy(), 2.0 * linear, rtol=1e-6)
    layer.activation = keras.activations.tanh
    np.testing.assert_allclose(layer(x).numpy(), np.tanh(linear), rtol=1e-5, atol=1e-6)


def test_activation_layer_reads_its_activation_at_call_time():
    layer = keras.layers.Activation("relu")
    x = ft.constant([-1.0, 2.0])
    np.testing.assert_array_equal(layer(x).numpy(), [0.0, 2.0])
    layer.activation = keras.activations.get("sigmoid")
    np.testing.assert_allclose(layer(x).numpy(), 1 / (1 + np.exp([1.0, -2.0])), rtol=1e-6)


def test_conv_strides_changed_after_build_take_effect():
    layer = keras.layers.Conv2D(1, 1)
    x = ft.ones([1, 4, 4, 1])
    assert layer(x).shape == [1, 4, 4, 1]
    layer.strides = (2, 2)
    assert layer(x).shape == [1, 2, 2, 1]


def test_fused_activations_are_keras_activations():
    """The Rust table of fused activations and Keras's registry agree: each fused name is a
    Keras activation, and the fused form computes what the Python function computes."""
    x = ft.constant(np.linspace(-4, 4, 12, dtype=np.float32).reshape(3, 4))
    for name in ft._core.keras.FUSED_ACTIVATIONS:
        python_fn = keras.activations.get(name)
        fused = keras.layers.Activation(name)(x).numpy()
        np.testing.assert_allclose(fused, python_fn(x).numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_a_setting_of_the_wrong_kind_is_a_clear_error():
    layer = keras.layers.Dropout(0.5, seed=0)
    x = ft.ones([4])
    layer(x, training=True)
    layer.noise_shape = "wide"
    with pytest.raises(ValueError, match="Dropout: `noise_shape` must be None or a tuple"):
        layer(x, training=True)
    norm = keras.layers.BatchNormalization()
    norm(ft.ones([2, 2]))
    norm.momentum = "high"
    with pytest.raises(ValueError, match="BatchNormalization: `momentum` must be a number"):
        norm(ft.ones([2, 2]), training=True)
    norm.momentum = object()
    with pytest.raises(TypeError, match="BatchNormalization: `momentum` must be None, a number"):
        norm(ft.ones([2, 2]), training=True)
    dense = keras.layers.Dense(2)
    dense(ft.ones([1, 2]))
    dense.activation = "no_such"
    with pytest.raises(ValueError, match="no_such"):
        dense(ft.ones([1, 2]))
