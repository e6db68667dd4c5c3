"""ft.data.Dataset: TensorFlow's pipeline semantics on small data."""

import numpy as np
import pytest

import ferrotape as tf


def as_lists(ds):
    return [tf.nest.map_structure(lambda t: t.numpy().tolist(), e) for e in ds]


def test_from_tensor_slices_tuples_dicts_and_dtypes():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    y = np.array([0, 1, 2])
    ds = tf.data.Dataset.from_tensor_slices((x, y))
    elements = list(ds)
    assert len(elements) == 3 and len(ds) == 3
    first_x, first_y = elements[0]
    assert isinstance(first_x, tf.Tensor) and first_x.shape == (2,) and first_x.dtype == tf.float32
    assert first_y.dtype == tf.int64 and int(first_y) == 0
    d = tf.data.Dataset.from_tensor_slices({"a": [1.0, 2.0], "b": [[1, 2], [3, 4]]})
    assert as_lists(d) == [{"a": 1.0, "b": [1, 2]}, {"a": 2.0, "b": [3, 4]}]
    assert next(iter(d))["a"].dtype == tf.float32  # Python floats become float32
    assert next(iter(d))["b"].dtype == tf.int32
    with pytest.raises(ValueError):
        tf.data.Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))


def test_batch_with_and_without_remainder():
    ds = tf.data.Dataset.range(7)
    assert as_lists(ds.batch(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert as_lists(ds.batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(ds.batch(3)) == 3 and len(ds.batch(3, drop_remainder=True)) == 2
    pairs = tf.data.Dataset.from_tensor_slices((np.ones((5, 2)), np.arange(5))).batch(2)
    shapes = [(x.shape.as_list(), y.shape.as_list()) for x, y in pairs]
    assert shapes == [([2, 2], [2]), ([2, 2], [2]), ([1, 2], [1])]


def test_shuffle_is_a_seeded_permutation_reshuffled_each_epoch():
    ds = tf.data.Dataset.range(20).shuffle(20, seed=3)
    first, second = as_lists(ds), as_lists(ds)
    assert sorted(first) == list(range(20)) and first != list(range(20))
    assert first != second  # reshuffle_each_iteration
    again = as_lists(tf.data.Dataset.range(20).shuffle(20, seed=3))
    assert again == first  # same seed, same order
    fixed = tf.data.Dataset.range(20).shuffle(20, seed=3, reshuffle_each_iteration=False)
    assert as_lists(fixed) == as_lists(fixed)
    small_buffer = as_lists(tf.data.Dataset.range(50).shuffle(4, seed=1))
    assert sorted(small_buffer) == list(range(50))


def test_map_filter_repeat_take_skip_enumerate_cache():
    ds = tf.data.Dataset.range(5).map(lambda x: x * 2)
    assert as_lists(ds) == [0, 2, 4, 6, 8]
    pairs = tf.data.Dataset.from_tensor_slices(([1.0, 2.0], [3.0, 4.0])).map(lambda a, b: a + b)
    assert as_lists(pairs) == [4.0, 6.0]
    assert as_lists(tf.data.Dataset.range(6).filter(lambda x: x % 2 == 0)) == [0, 2, 4]
    assert as_lists(tf.data.Dataset.range(2).repeat(3)) == [0, 1] * 3
    assert as_lists(tf.data.Dataset.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert as_lists(tf.data.Dataset.range(5).skip(3)) == [3, 4]
    assert as_lists(tf.data.Dataset.range(2).enumerate(10)) == [(10, 0), (11, 1)]
    calls = []
    cached = tf.data.Dataset.range(3).map(lambda x: calls.append(1) or x).cache()
    assert as_lists(cached) == as_lists(cached) == [0, 1, 2] and len(calls) == 3
    assert int(tf.data.Dataset.range(3).repeat().cardinality()) == tf.data.INFINITE
    assert tf.data.Dataset.range(3).prefetch(tf.data.AUTOTUNE) is not None


def test_seed_002_custom_loop_with_a_dataset_learns_the_line():
    # Seed 002's pipeline and loop, with a Variable pair in place of the Keras Dense layer.
    rng = np.random.default_rng(42)
    x_train = np.linspace(-1, 1, 100).astype(np.float32).reshape(-1, 1)
    y_train = 2 * x_train - 1 + rng.normal(size=x_train.shape).astype(np.float32) * 0.2
    dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(1024, seed=0).batch(32)
    m, b = tf.Variable([[0.0]]), tf.Variable([0.0])
    for _ in range(50):
        for x_batch, y_batch in dataset:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(y_batch - (tf.matmul(x_batch, m) + b)))
            dm, db = tape.gradient(loss, [m, b])
            m.assign_sub(0.1 * dm)
            b.assign_sub(0.1 * db)
    assert abs(float(m[0, 0]) - 2.0) < 0.15 and abs(float(b[0]) + 1.0) < 0.1


def test_unbatch_as_numpy_iterator_and_len_errors():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(6)
    batched = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)
    rows = list(batched.unbatch().as_numpy_iterator())
    numpy_types = (np.ndarray, np.generic)
    assert len(rows) == 6 and all(isinstance(a, numpy_types) for pair in rows for a in pair)
    np.testing.assert_array_equal(np.stack([r[0] for r in rows]), x)
    np.testing.assert_array_equal([int(r[1]) for r in rows], y)
    assert int(batched.unbatch().cardinality()) == tf.data.UNKNOWN
    dicts = tf.data.Dataset.from_tensor_slices({"a": x}).batch(5).unbatch()
    assert [e["a"].numpy().tolist() for e in dicts][-1] == [10.0, 11.0]
    ragged = tf.data.Dataset.from_tensors((np.zeros((2, 1)), np.zeros(3))).unbatch()
    with pytest.raises(ValueError, match="same first dimension"):
        list(ragged)
    with pytest.raises(TypeError):
        len(tf.data.Dataset.range(3).repeat())
    with pytest.raises(TypeError):
        len(tf.data.Dataset.range(3).filter(lambda v: v > 0))
    first = next(tf.data.Dataset.range(3).as_numpy_iterator())
    assert isinstance(first, (np.ndarray, np.generic)) and first.dtype == np.int64


# TensorFlow 2.21's windows of range(7), as lists, with their cardinality:
# window(size, shift, stride, drop_remainder) -> (cardinality, windows).
WINDOWS = [
    ((3, 2, 1, False), (4, [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]])),
    ((3, 2, 1, True), (3, [[0, 1, 2], [2, 3, 4], [4, 5, 6]])),
    ((3, None, 1, False), (3, [[0, 1, 2], [3, 4, 5], [6]])),
    ((3, 1, 2, True), (3, [[0, 2, 4], [1, 3, 5], [2, 4, 6]])),
    ((3, 1, 2, False), (7, [[0, 2, 4], [1, 3, 5], [2, 4, 6], [3, 5], [4, 6], [5], [6]])),
    ((10, 1, 1, True), (0, [])),
    ((2, 5, 1, False), (2, [[0, 1], [5, 6]])),
]


@pytest.mark.parametrize(("args", "expected"), WINDOWS)
def test_window_matches_tensorflow(args, expected):
    size, shift, stride, drop_remainder = args
    windows = tf.data.Dataset.range(7).window(size, shift, stride, drop_remainder)
    assert (int(windows.cardinality()), [as_lists(w) for w in windows]) == expected
    # Each window's component is a dataset of known length.
    assert [len(w) for w in windows] == [len(values) for values in expected[1]]


def test_window_keeps_the_structure_and_flat_map_batches_it():
    pairs = tf.data.Dataset.zip(
        (tf.data.Dataset.range(5), tf.data.Dataset.range(5).map(lambda x: -x))
    )
    windows = pairs.window(3, shift=1, drop_remainder=True)
    first = next(iter(windows))
    assert isinstance(first, tuple) and all(isinstance(c, tf.data.Dataset) for c in first)
    # The TF tutorials' idiom: each window back to a tensor with flat_map + batch.
    batched = windows.flat_map(lambda a, b: tf.data.Dataset.zip((a, b)).batch(3))
    assert as_lists(batched) == [
        ([0, 1, 2], [0, -1, -2]),
        ([1, 2, 3], [-1, -2, -3]),
        ([2, 3, 4], [-2, -3, -4]),
    ]
    assert int(batched.cardinality()) == tf.data.UNKNOWN_CARDINALITY  # as in TensorFlow
    dicts = tf.data.Dataset.from_tensor_slices({"a": [1, 2, 3]}).window(2)
    assert [as_lists(w["a"]) for w in dicts] == [[1, 2], [3]]
    # Windows of an infinite dataset stream: the dataset is infinite and never materialised.
    endless = tf.data.Dataset.range(3).repeat().window(2, shift=5)
    assert int(endless.cardinality()) == tf.data.INFINITE_CARDINALITY
    assert as_lists(endless.flat_map(lambda w: w.batch(2)).take(3)) == [[0, 1], [2, 0], [1, 2]]


def test_flat_map_and_window_errors():
    ds = tf.data.Dataset.range(3)
    assert as_lists(ds.flat_map(lambda n: tf.data.Dataset.range(n))) == [0, 0, 1]
    with pytest.raises(TypeError, match="flat_map: map_func must return a Dataset"):
        list(ds.flat_map(lambda x: x))
    for arg in ("size", "shift", "stride"):
        kwargs = {"size": 2, arg: 0}
        with pytest.raises(ValueError, match=f"window: {arg} must be greater than zero"):
            ds.window(**kwargs)


def test_reduce_folds_whole_elements_into_the_state():
    ds = tf.data.Dataset.range(7)
    # TensorFlow: a Python int state becomes an int32 tensor; a tuple element is passed whole.
    count = ds.reduce(0, lambda state, _: state + 1)
    assert count.dtype == tf.int32 and int(count) == 7
    pairs = tf.data.Dataset.zip((ds, ds.map(lambda x: x * 2)))
    assert int(pairs.reduce(tf.constant(0, tf.int64), lambda s, e: s + e[0] + e[1])) == 63
    total, doubled = ds.reduce(
        (tf.constant(0, tf.int64), tf.constant(1, tf.int64)), lambda s, x: (s[0] + x, s[1] * 2)
    )
    assert (int(total), int(doubled)) == (21, 128)


def test_map_can_turn_windows_into_datasets():
    # TensorFlow: elements may be datasets; range(5).window(2).map(lambda w: w.batch(2)).
    nested = tf.data.Dataset.range(5).window(2).map(lambda w: w.batch(2))
    assert int(nested.cardinality()) == 3
    assert [as_lists(d) for d in nested] == [[[0, 1]], [[2, 3]], [[4]]]
