"""ft.random: TensorFlow's seeding contract and the distributions' basic properties."""

import numpy as np
import pytest

import ferrotape as tf


def draws():
    return [
        tf.random.normal([3]).numpy(),
        tf.random.uniform([2, 2]).numpy(),
        tf.random.truncated_normal([4]).numpy(),
    ]


def test_global_seed_replays_the_same_program():
    tf.random.set_seed(1234)
    first = draws()
    tf.random.set_seed(1234)
    second = draws()
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], tf.random.normal([3]).numpy())


def test_different_global_seeds_differ():
    tf.random.set_seed(1)
    a = tf.random.normal([8]).numpy()
    tf.random.set_seed(2)
    b = tf.random.normal([8]).numpy()
    assert not np.array_equal(a, b)


def test_op_seed_repeats_its_sequence_after_reseeding():
    tf.random.set_seed(7)
    a1, a2 = tf.random.uniform([4], seed=3).numpy(), tf.random.uniform([4], seed=3).numpy()
    assert not np.array_equal(a1, a2)  # repeated calls advance, as in eager TensorFlow
    tf.random.set_seed(7)
    np.testing.assert_array_equal(tf.random.uniform([4], seed=3).numpy(), a1)


def test_unseeded_draws_differ():
    tf.random.set_seed(None)
    assert not np.array_equal(tf.random.normal([16]).numpy(), tf.random.normal([16]).numpy())


def test_distributions_have_the_right_shape_dtype_and_range():
    tf.random.set_seed(0)
    n = tf.random.normal([20000], mean=2.0, stddev=3.0, dtype=tf.float64)
    assert n.dtype == tf.float64 and n.shape == (20000,)
    assert abs(n.numpy().mean() - 2.0) < 0.1 and abs(n.numpy().std() - 3.0) < 0.1
    u = tf.random.uniform([5000], minval=-1.0, maxval=3.0)
    assert u.dtype == tf.float32
    assert u.numpy().min() >= -1.0 and u.numpy().max() < 3.0
    t = tf.random.truncated_normal([5000], stddev=0.5)
    assert np.abs(t.numpy()).max() <= 1.0 + 1e-6
    ints = tf.random.uniform([1000], minval=0, maxval=10, dtype=tf.int32)
    assert ints.dtype == tf.int32 and set(np.unique(ints.numpy())) <= set(range(10))


def test_shuffle_permutes_the_first_axis():
    tf.random.set_seed(5)
    x = tf.reshape(tf.range(12), [6, 2])
    s = tf.random.shuffle(x).numpy()
    assert sorted(map(tuple, s)) == sorted(map(tuple, x.numpy()))


def test_bad_arguments_raise():
    with pytest.raises(ValueError):
        tf.random.uniform([3], dtype=tf.int32)  # integer draws need maxval
    with pytest.raises(ValueError):
        tf.random.uniform([3], minval=0.2, maxval=0.7, dtype=tf.int32)  # no integer inside
    with pytest.raises(ValueError):
        tf.random.normal([2], dtype=tf.int32)


def test_integer_power_is_exact_and_fast():
    assert int(tf.constant(3) ** 13) == 3**13
    assert int(tf.constant(1) ** 2_000_000_000) == 1


def test_set_seed_takes_any_int_as_tensorflow():
    # TF 2.21 accepts tf.random.set_seed(2**70) (and -1, np.int64, a scalar int tensor) and
    # reduces every seed modulo 2**31 - 1 before the kernels see it: with op seed 5,
    # set_seed(2**70) draws what set_seed(2**70 % (2**31 - 1)) draws, set_seed(-1) what
    # set_seed(2**31 - 2) draws, and set_seed(2**70) twice draws the same. ferrotape raised
    # OverflowError for 2**70 and -1.
    m = 2**31 - 1

    def draw(seed, op_seed=5):
        tf.random.set_seed(seed)
        return tf.random.uniform([3], seed=op_seed).numpy()

    try:
        np.testing.assert_array_equal(draw(2**70, None), draw(2**70, None))
        for seed, same in ((2**70, 2**70 % m), (-1, m - 1), (m + 7, 7), (np.int64(7), 7)):
            np.testing.assert_array_equal(draw(seed), draw(same))
        np.testing.assert_array_equal(draw(tf.constant(7)), draw(7))
        with pytest.raises(TypeError, match="set_seed: seed must be an int or None"):
            tf.random.set_seed("a")
        # op seeds of the numpy-backed distributions reduce the same way
        tf.random.set_seed(3)
        a = tf.random.categorical(tf.zeros([1, 4]), 5, seed=-1).numpy()
        tf.random.set_seed(3)
        np.testing.assert_array_equal(a, tf.random.categorical(tf.zeros([1, 4]), 5, seed=m - 1))
        tf.keras.utils.set_random_seed(2**70)
    finally:
        tf.random.set_seed(None)


def test_op_seeds_of_python_ops_take_any_int_as_tensorflow():
    # TF 2.21 reduces op seeds modulo 2**31 - 1 as well (random_seed._truncate_seed): dropout,
    # the image augmentations and Generator.from_seed accept 2**70 and -1, where ferrotape's
    # native uniform raised OverflowError. Seeds that agree modulo 2**31 - 1 draw alike.
    m = 2**31 - 1
    image = tf.reshape(tf.range(12.0), [2, 2, 3])

    def draw(op, seed):
        tf.random.set_seed(4)
        return op(seed).numpy()

    ops = [
        lambda seed: tf.nn.dropout(tf.ones([64]), 0.5, seed=seed),
        lambda seed: tf.image.random_flip_left_right(image, seed=seed),
        lambda seed: tf.image.random_flip_up_down(image, seed=seed),
        lambda seed: tf.image.random_brightness(image, 0.5, seed=seed),
        lambda seed: tf.image.random_contrast(image, 0.1, 0.9, seed=seed),
        lambda seed: tf.image.random_saturation(image, 0.1, 0.9, seed=seed),
        lambda seed: tf.image.random_hue(image, 0.4, seed=seed),
        lambda seed: tf.image.random_crop(image, [1, 1, 3], seed=seed),
    ]
    try:
        for op in ops:
            for seed, same in ((2**70, 2**70 % m), (-1, m - 1), (-(2**80), -(2**80) % m)):
                np.testing.assert_array_equal(draw(op, seed), draw(op, same))
        with pytest.raises(TypeError, match="dropout: seed must be an int or None"):
            tf.nn.dropout(tf.ones([2]), 0.5, seed="a")
    finally:
        tf.random.set_seed(None)
    # A Python int of any size is chopped into 64-bit words, as TensorFlow does.
    for seed in (2**70, -(2**70), 2**200):
        g, h = tf.random.Generator.from_seed(seed), tf.random.Generator.from_seed(seed)
        np.testing.assert_array_equal(g.normal([4]).numpy(), h.normal([4]).numpy())
    assert not np.array_equal(
        tf.random.Generator.from_seed(2**70).normal([4]).numpy(),
        tf.random.Generator.from_seed(0).normal([4]).numpy(),
    )
