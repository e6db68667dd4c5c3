"""`tf.gather(..., batch_dims=)` and `tf.gather_nd(..., batch_dims=)`: values against numpy,
TensorFlow's argument rules and messages, traced replays with new indices, and (where
TensorFlow is importable) the same calls in TensorFlow. Gradients: tests/test_gradcheck.py."""

import importlib.util
import warnings

import numpy as np
import pytest

import ferrotape as tf

PARAMS = np.arange(24.0).reshape(2, 3, 4)
IDX = np.array([[0, 1], [1, 2]])


def _batched(params, indices, axis):
    """numpy reference: batch k takes params[k] along `axis - 1` at indices[k]."""
    return np.stack([np.take(params[k], indices[k], axis=axis - 1) for k in range(len(params))])


@pytest.mark.parametrize(
    "kwargs, axis",
    [
        ({"batch_dims": 1}, 1),  # axis defaults to batch_dims
        ({"batch_dims": -1}, 2),  # axis = batch_dims = -1 counts from params' end
        ({"batch_dims": 1, "axis": 2}, 2),
        ({"batch_dims": 1, "axis": -1}, 2),
    ],
)
def test_gather_batch_dims_matches_numpy(kwargs, axis):
    got = tf.gather(tf.constant(PARAMS), IDX, **kwargs).numpy()
    np.testing.assert_array_equal(got, _batched(PARAMS, IDX, axis))


def test_gather_batch_dims_shapes():
    params = tf.constant(PARAMS)
    # batch_dims == rank(indices): one index per batch.
    np.testing.assert_array_equal(
        tf.gather(params, [0, 2], batch_dims=1).numpy(), PARAMS[[0, 1], [0, 2]]
    )
    # Indices with axes past the batch axes, gathered from an inner axis.
    got = tf.gather(params, [[[0, 1]], [[1, 2]]], axis=2, batch_dims=1)
    assert got.shape == (2, 3, 1, 2)
    np.testing.assert_array_equal(got.numpy()[1, 2, 0], PARAMS[1, 2, [1, 2]])
    # Two batch axes.
    both = tf.gather(params, [[[1], [0], [3]], [[2], [2], [0]]], batch_dims=2)
    np.testing.assert_array_equal(both.numpy()[:, :, 0], [[1, 4, 11], [14, 18, 20]])


def test_gather_with_axis_zero_ignores_batch_dims_as_tensorflow_does():
    # tf.gather sends axis=0 to the unbatched read, where batch_dims is not looked at.
    got = tf.gather(tf.constant(PARAMS), [[0, 1], [1, 0]], axis=0, batch_dims=1)
    assert got.shape == (2, 2, 3, 4)


@pytest.mark.parametrize(
    "indices, kwargs, message",
    [
        (IDX, {"batch_dims": 3}, r"Expected batch_dims in the range \[-2, 2\], but got 3"),
        (IDX, {"batch_dims": -3}, r"Expected batch_dims in the range \[-2, 2\], but got -3"),
        (IDX, {"batch_dims": 2}, r"params.shape\[1\]: 3 should be equal to indices.shape\[1\]: 2"),
        ([[0, 1], [1, 2], [0, 0]], {"batch_dims": 1}, r"params.shape\[0\]: 2 should be equal"),
        ([[0, 1], [1, 5]], {"batch_dims": 1}, r"indices\[1,1\] = 5 is not in \[0, 3\)"),
        ([[[0]], [[1]]], {"batch_dims": 2, "axis": 1}, r"batch_dims \(2\) must be less than or"),
        (
            [[[0]], [[1]]],
            {"batch_dims": 3, "axis": 2},
            r"batch_dims \(3\) must be less than rank\(params\) \(3\)",
        ),
    ],
)
def test_gather_batch_dims_errors_are_tensorflows(indices, kwargs, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=f"^GatherV2: {message}"):
        tf.gather(tf.constant(PARAMS), indices, **kwargs)


def test_gather_nd_batch_dims_matches_numpy():
    params = tf.constant(PARAMS)
    got = tf.gather_nd(params, [[0, 1], [1, 2]], batch_dims=1)
    np.testing.assert_array_equal(got.numpy(), [PARAMS[0, 0, 1], PARAMS[1, 1, 2]])
    rows = tf.gather_nd(params, [[[2], [0]], [[1], [1]]], batch_dims=1)
    assert rows.shape == (2, 2, 4)
    np.testing.assert_array_equal(rows.numpy(), [PARAMS[0, [2, 0]], PARAMS[1, [1, 1]]])
    two = tf.gather_nd(params, [[[1], [0], [3]], [[2], [2], [0]]], batch_dims=2)
    np.testing.assert_array_equal(two.numpy(), [[1, 4, 11], [14, 18, 20]])


@pytest.mark.parametrize(
    "indices, batch_dims, message",
    [
        (IDX, -1, "tf.gather_nd does not allow negative batch_dims."),
        (IDX, 2, r"Argument `batch_dims` = 2 must be less than rank\(`indices`\) = 2"),
        ([0, 1], 1, r"Argument `batch_dims` = 1 must be less than rank\(`indices`\) = 1"),
        ([[0], [1], [0]], 1, r"params.shape\[0\]: 2 should be equal to indices.shape\[0\]: 3"),
    ],
)
def test_gather_nd_batch_dims_errors(indices, batch_dims, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=f"^GatherNd: {message}"):
        tf.gather_nd(tf.constant(PARAMS), indices, batch_dims=batch_dims)


def test_a_traced_batched_gather_reads_new_indices_on_each_call():
    @tf.function
    def pick(params, indices):
        return tf.gather(params, indices, batch_dims=1), tf.gather_nd(
            params, indices[:, :1], batch_dims=1
        )

    params = tf.constant(PARAMS)
    for indices in (IDX, np.array([[2, 0], [0, 0]])):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a fallback to eager would warn: it must not
            taken, rows = pick(params, tf.constant(indices))
        np.testing.assert_array_equal(taken.numpy(), _batched(PARAMS, indices, 1))
        np.testing.assert_array_equal(
            rows.numpy(), [PARAMS[0, indices[0, 0]], PARAMS[1, indices[1, 0]]]
        )


def test_batched_gather_gradient_sums_repeated_picks():
    params = tf.constant(PARAMS)
    with tf.GradientTape() as tape:
        tape.watch(params)
        y = tf.gather(params, [[0, 0], [2, 1]], batch_dims=1)
    grad = tape.gradient(y, params).numpy()
    np.testing.assert_array_equal(grad[0, :, 0], [2, 0, 0])
    np.testing.assert_array_equal(grad[1, :, 0], [0, 1, 1])


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="needs TensorFlow")
@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.gather(PARAMS, IDX, batch_dims=1),
        lambda m: m.gather(PARAMS, IDX, batch_dims=-1),
        lambda m: m.gather(PARAMS, [[[0, 1]], [[1, 2]]], axis=2, batch_dims=1),
        lambda m: m.gather(PARAMS, [[0, 1], [1, 0]], axis=0, batch_dims=1),
        lambda m: m.gather_nd(PARAMS, [[[2], [0]], [[1], [1]]], batch_dims=1),
        lambda m: m.gather_nd(PARAMS, [[0, 1], [1, 2]], batch_dims=1),
    ],
)
def test_batched_gathers_match_tensorflow(call):
    import tensorflow as real_tf

    np.testing.assert_array_equal(call(tf).numpy(), call(real_tf).numpy())
