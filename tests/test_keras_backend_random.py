"""ft.keras.backend's settings and helpers, ft.keras.random's seeds, and
keras.utils.set_random_seed, as TF2 programs use them."""

import numpy as np
import pytest

import ferrotape as tf

K = tf.keras.backend
R = tf.keras.random


def test_floatx_sets_the_dtype_of_new_layers_and_inputs():
    assert K.floatx() == "float32"
    K.set_floatx("float64")
    try:
        layer = tf.keras.layers.Dense(2)
        layer(tf.ones([1, 3], dtype="float64"))
        assert layer.kernel.dtype == tf.float64
        assert tf.keras.Input((3,)).dtype == "float64"
    finally:
        K.set_floatx("float32")
    assert tf.keras.layers.Dense(2).dtype == "float32"
    with pytest.raises(ValueError, match="floatx"):
        K.set_floatx("int8")


def test_backend_helpers():
    v = tf.Variable(np.ones((2, 3), dtype="float32"))
    assert K.int_shape(v) == (2, 3) and K.ndim(v) == 2 and K.dtype(v) == "float32"
    K.set_value(v, np.zeros((2, 3)))
    np.testing.assert_array_equal(K.get_value(v), np.zeros((2, 3)))
    assert K.count_params(v) == 6
    assert K.epsilon() == 1e-7 and K.image_data_format() == "channels_last"
    assert K.backend() == "tensorflow"
    with pytest.raises(ValueError, match="channels_last"):
        K.set_image_data_format("channels_first")
    assert K.get_uid("my_prefix") + 1 == K.get_uid("my_prefix")


def test_random_bernoulli_has_the_requested_rate():
    draws = K.random_bernoulli([20000], p=0.3, seed=5).numpy()
    assert set(np.unique(draws)) <= {0.0, 1.0}
    assert abs(draws.mean() - 0.3) < 0.02
    np.testing.assert_array_equal(draws, K.random_bernoulli([20000], p=0.3, seed=5).numpy())


def test_int_seeds_repeat_and_seed_generators_advance():
    for sample in (R.normal, R.uniform, R.truncated_normal):
        np.testing.assert_array_equal(sample([3], seed=7).numpy(), sample([3], seed=7).numpy())
    gen = R.SeedGenerator(1)
    first, second = R.normal([4], seed=gen).numpy(), R.normal([4], seed=gen).numpy()
    assert not np.array_equal(first, second)
    again = R.SeedGenerator(1)
    np.testing.assert_array_equal(R.normal([4], seed=again).numpy(), first)


def test_random_distributions_and_shapes():
    t = R.truncated_normal([10000], mean=1.0, stddev=2.0, seed=0).numpy()
    assert t.dtype == np.float32 and np.abs(t - 1.0).max() <= 4.0
    u = R.uniform([10000], minval=-1.0, maxval=3.0, seed=0).numpy()
    assert u.min() >= -1.0 and u.max() < 3.0 and abs(u.mean() - 1.0) < 0.05
    i = R.randint([1000], 2, 5, seed=0).numpy()
    assert i.dtype == np.int32 and set(np.unique(i)) == {2, 3, 4}
    kept = R.dropout(tf.ones([10000]), 0.25, seed=0).numpy()
    assert set(np.unique(kept)) == {0.0, np.float32(1 / 0.75)}
    assert sorted(R.shuffle(tf.range(6), seed=0).numpy().tolist()) == list(range(6))
    c = R.categorical([[0.0, 20.0], [20.0, 0.0]], 5, seed=0).numpy()
    np.testing.assert_array_equal(c, [[1] * 5, [0] * 5])
    with pytest.raises(ValueError, match="seed"):
        R.normal([2], seed="abc")
    with pytest.raises(ValueError, match="shape"):
        R.normal([-1])


def test_dropout_is_differentiable_in_its_input():
    x = tf.ones([8])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(R.dropout(x, 0.5, seed=3))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), R.dropout(x, 0.5, seed=3).numpy())


def test_set_random_seed_makes_every_generator_repeat():
    tf.keras.utils.set_random_seed(11)
    first = (np.random.rand(), tf.random.normal([2]).numpy(), R.normal([2]).numpy())
    tf.keras.utils.set_random_seed(11)
    second = (np.random.rand(), tf.random.normal([2]).numpy(), R.normal([2]).numpy())
    assert first[0] == second[0]
    np.testing.assert_array_equal(first[1], second[1])
    np.testing.assert_array_equal(first[2], second[2])
