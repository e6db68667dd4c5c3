"""``axis=None`` in Keras's softmax and log_softmax means every element (issue 34), while
``tf.nn.softmax``/``log_softmax`` read it as the last axis. Values from Keras 3.15.1 and
TensorFlow 2.21."""

import numpy as np
import pytest

import ferrotape as ft

X = np.array([[1.0, 2.0], [3.0, 4.0]], "float32")
KERAS_SOFTMAX = [[0.0320586, 0.08714432], [0.23688284, 0.6439142]]
KERAS_LOG_SOFTMAX = [[-3.4401896, -2.4401896], [-1.4401897, -0.4401897]]
LAST_AXIS_SOFTMAX = [[0.26894143, 0.73105854], [0.26894143, 0.73105854]]


@pytest.mark.parametrize(
    ("fn", "want"),
    [
        (ft.keras.ops.softmax, KERAS_SOFTMAX),
        (ft.keras.ops.log_softmax, KERAS_LOG_SOFTMAX),
        (ft.keras.activations.softmax, KERAS_SOFTMAX),
        (ft.keras.activations.log_softmax, KERAS_LOG_SOFTMAX),
    ],
)
def test_keras_axis_none_normalizes_over_every_element(fn, want):
    got = fn(X, axis=None)
    assert tuple(got.shape) == (2, 2)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_keras_axis_none_in_a_functional_model():
    inputs = ft.keras.Input((2, 2))
    model = ft.keras.Model(inputs, ft.keras.ops.softmax(inputs, axis=None))
    np.testing.assert_allclose(model(X[None]).numpy()[0], KERAS_SOFTMAX, rtol=1e-6)


def test_tf_nn_axis_none_stays_the_last_axis():
    np.testing.assert_allclose(ft.nn.softmax(X, axis=None).numpy(), LAST_AXIS_SOFTMAX, rtol=1e-6)


def test_a_gradient_flows_through_axis_none():
    x = ft.Variable(X)
    with ft.GradientTape() as tape:
        y = ft.reduce_sum(ft.keras.ops.log_softmax(x, axis=None) * ft.constant([[1.0, 0], [0, 0]]))
    # d/dx_j of (x_0 - logsumexp(x)) = [j == 0] - softmax_j over all four elements.
    want = -np.array(KERAS_SOFTMAX)
    want[0, 0] += 1.0
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-5)
