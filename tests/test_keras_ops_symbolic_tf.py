"""Symbolic ops against Keras 3 itself: the same expressions on ``Input``s give the same
shapes, dtypes and values, the models' files load across the two libraries, and a tf op given
a KerasTensor fails the same way. Skipped where TensorFlow is not installed."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
import keras  # noqa: E402 - Keras 3, installed with TensorFlow

import ferrotape as ft  # noqa: E402

X = np.random.default_rng(0).normal(size=(3, 4)).astype("float32")
W = np.random.default_rng(1).normal(size=(4, 2)).astype("float32")


def expressions(k, x):
    ops = k.ops
    return [
        x * 10.0,
        1 - x,
        -x,
        abs(x) ** 2,
        x / 4.0,
        x // 2.0,
        x @ W,
        x[:, 0],
        x[:, None, 1:3],
        x > 0.5,
        ops.mean(x, axis=1, keepdims=True),
        ops.sum(x),
        ops.max(x, axis=0),
        ops.min(x, axis=1, initial=0.0),
        ops.prod(x, axis=1, keepdims=True),
        ops.argmax(x, axis=1),
        ops.argmin(x, keepdims=True),
        ops.softmax(x),
        ops.gelu(x),
        ops.clip(x, -0.5, 0.5),
        ops.concatenate([x, x * 2.0], axis=1),
        ops.expand_dims(x, 1),
        ops.transpose(ops.expand_dims(x, 1), (0, 2, 1)),
        ops.cast(x, "int32"),
        ops.where(x > 0, x, 0.0),
        ops.cumsum(x, axis=1),
        k.activations.relu(x, negative_slope=0.1, max_value=1.0),
        k.activations.gelu(x),
        k.activations.elu(x),
        k.activations.softmax(x),
        k.activations.tanh(x),
        k.activations.silu(x),
    ]


def _model(k):
    x = k.Input((4,), name="x")
    return k.Model(x, expressions(k, x))


def test_shapes_dtypes_and_values_match_keras():
    theirs, ours = _model(keras), _model(ft.keras)
    for i, (a, b) in enumerate(zip(theirs.outputs, ours.outputs, strict=True)):
        assert tuple(a.shape) == b.shape, i
        assert a.dtype == b.dtype, i
    for i, (a, b) in enumerate(zip(theirs(X), ours(X), strict=True)):
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=str(i))


def test_op_models_load_across_the_libraries(tmp_path):
    theirs, ours = _model(keras), _model(ft.keras)
    theirs.save(tmp_path / "theirs.keras")
    ours.save(tmp_path / "ours.keras")
    in_ours = ft.keras.models.load_model(tmp_path / "theirs.keras")
    in_theirs = keras.models.load_model(tmp_path / "ours.keras")
    for a, b in zip(in_theirs(X), in_ours(X), strict=True):
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-5, atol=1e-6)


def test_a_tf_op_on_a_keras_tensor_fails_as_in_tensorflow():
    with pytest.raises(ValueError) as theirs:
        tf.nn.relu(keras.Input((4,)))
    with pytest.raises(ValueError) as ours:
        ft.nn.relu(ft.keras.Input((4,)))
    assert str(ours.value) == str(theirs.value)
