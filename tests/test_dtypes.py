"""Dtypes: the DType objects, half-precision storage and casts, and conversion rules."""

import numpy as np
import pytest

import ferrotape as tf


@pytest.mark.parametrize(
    "dtype, name, floating",
    [
        (tf.float16, "float16", True),
        (tf.bfloat16, "bfloat16", True),
        (tf.float32, "float32", True),
        (tf.float64, "float64", True),
        (tf.int32, "int32", False),
        (tf.int64, "int64", False),
        (tf.bool, "bool", False),
    ],
)
def test_dtype_objects(dtype, name, floating):
    assert dtype.name == name and dtype.is_floating == floating
    assert dtype == name and dtype == tf.as_dtype(name) and repr(dtype) == f"tf.{name}"
    assert hash(dtype) == hash(tf.as_dtype(name))
    if name != "bfloat16":
        assert dtype == np.dtype(name) and dtype.as_numpy_dtype == getattr(np, name)


def test_half_precision_storage_and_round_trips():
    values = np.array([0.5, -1.25, 3.0, 1000.0], np.float32)
    for half in (tf.float16, tf.bfloat16):
        h = tf.cast(tf.constant(values), half)
        assert h.dtype == half and h.shape == (4,)
        np.testing.assert_array_equal(tf.cast(h, tf.float32).numpy(), values)  # exact in both
    f16 = tf.constant(np.array([1.5, 2.0], np.float16))
    assert f16.dtype == tf.float16 and f16.numpy().dtype == np.float16


def test_half_precision_rounds_like_numpy():
    x = np.array([0.1, 1 / 3, 65504.0, 1e-5], np.float32)
    got = tf.cast(tf.constant(x), tf.float16).numpy()
    np.testing.assert_array_equal(got, x.astype(np.float16))


def test_half_arithmetic_keeps_the_dtype_and_differentiates():
    x = tf.constant(np.array([1.0, 2.0], np.float16))
    y = x * x + 1.0
    assert y.dtype == tf.float16
    np.testing.assert_array_equal(y.numpy(), np.array([2.0, 5.0], np.float16))
    with tf.GradientTape() as tape:
        tape.watch(x)
        z = tf.reduce_sum(tf.cast(x, tf.float32) ** 2)
    g = tape.gradient(z, x)
    assert g.dtype == tf.float16
    np.testing.assert_array_equal(g.numpy(), np.array([2.0, 4.0], np.float16))


def test_integer_and_bool_casts():
    x = tf.constant([-1.7, -0.2, 0.0, 2.9])
    np.testing.assert_array_equal(tf.cast(x, tf.int32).numpy(), [-1, 0, 0, 2])
    np.testing.assert_array_equal(tf.cast(x, tf.bool).numpy(), [True, True, False, True])
    np.testing.assert_array_equal(tf.cast(tf.constant([True, False]), tf.float32).numpy(), [1, 0])


def test_tensor_shape_helpers():
    x = tf.zeros([2, 3])
    assert x.shape == (2, 3) and x.shape == [2, 3] and x.get_shape().as_list() == [2, 3]
    assert x.shape.rank == 2 and x.shape.num_elements() == 6 and str(x.shape) == "(2, 3)"
    assert repr(x.shape) == "TensorShape([2, 3])"
