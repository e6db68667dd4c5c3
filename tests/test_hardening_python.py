"""Issue 9, the Python half: right answers, loops that end, and messages that name the function
and the argument. Each test states what TensorFlow / Keras 3 does for the same input."""

import numpy as np
import pytest
from isolated import run_snippet

import ferrotape as tf

Dataset = tf.data.Dataset


def values(ds):
    return [tf.nest.map_structure(lambda t: t.numpy().tolist(), e) for e in ds]


def interleaved(ds, n):
    """Two iterators over ``ds`` advanced in turn: what each one saw."""
    a, b = iter(ds), iter(ds)
    seen_a, seen_b = [], []
    for _ in range(n):
        seen_a.append(next(a).numpy().tolist())
        seen_b.append(next(b).numpy().tolist())
    for it in (a, b):
        with pytest.raises(StopIteration):
            next(it)
    return seen_a, seen_b


# ----------------------------------------------------------------------------- tf.data


def test_cache_with_two_iterators_at_once_gives_each_the_whole_dataset():
    # Was [0, 1, 1, 2, 2, ...]: both iterators appended to one shared store. TF's memory cache
    # gives each concurrent iterator the input, and the first complete pass fills the cache.
    calls = []
    ds = Dataset.range(5).map(lambda x: calls.append(1) or x).cache()
    a, b = interleaved(ds, 5)
    assert a == b == [0, 1, 2, 3, 4]
    assert values(ds) == [0, 1, 2, 3, 4]  # read from the cache
    assert len(calls) == 10  # two filling passes, then none


def test_cache_ignores_a_pass_that_was_abandoned():
    ds = Dataset.range(5).cache()
    it = iter(ds)
    next(it), next(it)
    del it
    assert values(ds) == [0, 1, 2, 3, 4]
    assert values(ds) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: Dataset.range(4).repeat(2), [0, 1, 2, 3, 0, 1, 2, 3]),
        (lambda: Dataset.range(5).batch(2).unbatch(), [0, 1, 2, 3, 4]),
        (lambda: Dataset.range(6).take(4), [0, 1, 2, 3]),
        (lambda: Dataset.range(6).skip(2), [2, 3, 4, 5]),
        (lambda: Dataset.range(6).filter(lambda x: x % 2 == 0), [0, 2, 4]),
        (lambda: Dataset.range(4).map(lambda x: x * 3), [0, 3, 6, 9]),
        (lambda: Dataset.range(3).concatenate(Dataset.range(2)), [0, 1, 2, 0, 1]),
        (lambda: Dataset.range(4).prefetch(2), [0, 1, 2, 3]),
        (lambda: Dataset.range(5).shuffle(5, seed=1, reshuffle_each_iteration=False), None),
    ],
)
def test_two_iterators_over_a_transformation_do_not_disturb_each_other(make, expected):
    ds = make()
    full = values(ds)
    n = len(full)
    a, b = interleaved(ds, n)
    assert a == b == full
    if expected is not None:
        assert full == expected
    else:
        assert sorted(full) == list(range(n))


def test_two_iterators_over_batch_and_zip():
    ds = Dataset.range(5).batch(2)
    a, b = iter(ds), iter(ds)
    got = [(next(a).numpy().tolist(), next(b).numpy().tolist()) for _ in range(3)]
    assert got == [([0, 1], [0, 1]), ([2, 3], [2, 3]), ([4], [4])]
    zipped = Dataset.zip(Dataset.range(3), Dataset.range(10, 13))
    a, b = iter(zipped), iter(zipped)
    pairs = [(next(a), next(b)) for _ in range(3)]
    assert [(int(x), int(y)) for (x, y), _ in pairs] == [(0, 10), (1, 11), (2, 12)]
    assert [(int(x), int(y)) for _, (x, y) in pairs] == [(0, 10), (1, 11), (2, 12)]


def test_shuffle_reshuffles_each_iterator_and_keeps_every_element():
    ds = Dataset.range(30).shuffle(30, seed=4)
    a, b = interleaved(ds, 30)
    assert sorted(a) == sorted(b) == list(range(30))
    assert a != b  # reshuffle_each_iteration: each iteration has its own order


def test_cardinality_constants_are_tensorflows():
    # tf.data.INFINITE_CARDINALITY == -1, tf.data.UNKNOWN_CARDINALITY == -2.
    assert tf.data.INFINITE_CARDINALITY == -1 and tf.data.UNKNOWN_CARDINALITY == -2
    assert int(Dataset.range(3).repeat().cardinality()) == tf.data.INFINITE_CARDINALITY
    assert int(Dataset.range(3).filter(lambda x: True).cardinality()) == -2
    assert int(Dataset.range(3).repeat().take(5).cardinality()) == 5
    assert int(Dataset.range(3).repeat().batch(2).cardinality()) == -1
    assert int(Dataset.range(3).repeat(0).cardinality()) == 0
    assert int(Dataset.range(3).filter(lambda x: True).repeat(0).cardinality()) == 0
    assert int(Dataset.zip(Dataset.range(3), Dataset.range(5)).cardinality()) == 3
    assert int(Dataset.zip(Dataset.range(3).repeat(), Dataset.range(5)).cardinality()) == 5
    assert int(Dataset.range(3).concatenate(Dataset.range(5)).cardinality()) == 8
    assert int(Dataset.range(3).skip(-1).cardinality()) == 0
    with pytest.raises(TypeError, match="infinite"):
        len(Dataset.range(3).repeat())


def test_take_skip_negative_counts_follow_tensorflow():
    # take(-1) (any negative) keeps everything; skip(-1) skips everything.
    assert values(Dataset.range(4).take(-5)) == [0, 1, 2, 3]
    assert values(Dataset.range(4).take(-1)) == [0, 1, 2, 3]
    assert values(Dataset.range(4).skip(-1)) == []
    assert values(Dataset.range(4).take(0)) == []


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: Dataset.range(4).batch(0), ValueError, "batch_size=0"),
        (lambda: Dataset.range(4).batch(-3), ValueError, "batch_size=-3"),
        (lambda: Dataset.range(4).batch(None), TypeError, "batch_size=None"),
        (lambda: Dataset.range(4).batch(2.5), TypeError, "batch_size=2.5"),
        (lambda: Dataset.range(4).shuffle(0), ValueError, "buffer_size=0"),
        (lambda: Dataset.range(4).shuffle(-1), ValueError, "buffer_size=-1"),
        (lambda: Dataset.range(4).shuffle(4, seed="a"), TypeError, "seed='a'"),
        (lambda: Dataset.range(4).take("3"), TypeError, "count='3'"),
        (lambda: Dataset.range(4).take(True), TypeError, "count=True"),
        (lambda: Dataset.range(4).skip(1.5), TypeError, "count=1.5"),
        (lambda: Dataset.range(4).repeat(2.0), TypeError, "count=2.0"),
        (lambda: Dataset.range(4).prefetch(-5), ValueError, "buffer_size=-5"),
        (lambda: Dataset.range(2.5), TypeError, "stop=2.5"),
        (lambda: Dataset.range(0, 5, 0), ValueError, "step=0"),
        (lambda: Dataset.range(), TypeError, "Dataset.range"),
        (lambda: Dataset.zip(1, 2), TypeError, "Dataset.zip"),
        (lambda: Dataset.range(2).concatenate([1]), TypeError, "Dataset.concatenate"),
        (lambda: Dataset.from_tensor_slices(()), ValueError, "from_tensor_slices"),
        (lambda: Dataset.from_tensor_slices(5), ValueError, "from_tensor_slices"),
        (lambda: values(Dataset.range(3).map(lambda x: None)), TypeError, "Dataset.map"),
        (
            lambda: values(Dataset.range(3).filter(lambda x: tf.stack([x, x]) > 0)),
            ValueError,
            "Dataset.filter",
        ),
        (
            lambda: values(Dataset.range(4).map(lambda x: tf.fill([x], 1)).batch(2)),
            ValueError,
            "Dataset.batch",
        ),
    ],
)
def test_dataset_arguments_are_checked_with_named_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_range_output_type_accepts_a_dtype_object():
    # Was TypeError 'data type "<dtype: 'int32'>" not understood'.
    ds = Dataset.range(3, output_type=tf.int32)
    assert [x.dtype for x in ds] == [tf.int32] * 3
    assert values(Dataset.range(1, 8, 3)) == [1, 4, 7]


def test_zero_size_inputs_to_the_pipeline():
    # A zero-row array gives an empty dataset (TF: cardinality 0), and every transformation of
    # it stays empty; batching an empty dataset yields no batches.
    empty = Dataset.from_tensor_slices((np.zeros((0, 3), "float32"), np.zeros((0,), "int64")))
    assert int(empty.cardinality()) == 0
    assert values(empty.batch(4)) == [] and values(empty.shuffle(3).repeat(3)) == []
    assert values(empty.batch(4).unbatch()) == []
    rows = Dataset.from_tensor_slices(np.zeros((3, 0), "float32")).batch(2)
    assert [x.shape.as_list() for x in rows] == [[2, 0], [1, 0]]


# ----------------------------------------------------------------------------- tf.nest


def deep_list(depth, leaf=None):
    x = [] if leaf is None else leaf
    for _ in range(depth):
        x = [x]
    return x


def deep_tuple(depth, leaf):
    x = leaf
    for _ in range(depth):
        x = (x,)
    return x


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda x: tf.nest.flatten(x), "nest.flatten"),
        (lambda x: tf.nest.map_structure(lambda v: v, x), "nest.map_structure"),
        (lambda x: tf.nest.pack_sequence_as(x, []), "nest.pack_sequence_as"),
        (lambda x: tf.nest.assert_same_structure(x, x), "nest.assert_same_structure"),
    ],
)
def test_deep_nests_raise_a_named_value_error(call, name):
    # Was RecursionError. TF raises RecursionError, numpy a ValueError; the issue asks for a clear
    # error naming the function.
    with pytest.raises(ValueError, match=f"{name}: the structure is nested more than"):
        call(deep_list(100_000))


def test_nests_up_to_the_depth_limit_still_work():
    x = deep_list(tf.nest.MAX_DEPTH - 1, leaf=1)
    assert tf.nest.flatten(x) == [1]
    assert tf.nest.flatten(tf.nest.map_structure(lambda v: v + 1, x)) == [2]


def test_deeply_nested_tuples_to_from_tensor_slices_raise_a_named_value_error():
    # Tuples are structure in tf.data (lists are values, converted by the bindings).
    outcome = run_snippet(
        """
        x = np.zeros(3)
        for _ in range(100_000):
            x = (x,)
        tf.data.Dataset.from_tensor_slices(x)
        """
    )
    assert outcome.kind == "raised" and outcome.exc_type == "ValueError", str(outcome)
    assert "Dataset.from_tensor_slices: the structure is nested more than" in outcome.message
    deep_dict = {}
    for _ in range(5000):
        deep_dict = {"a": deep_dict, "b": np.zeros(2)}
    with pytest.raises(ValueError, match="from_tensor_slices"):
        Dataset.from_tensor_slices(deep_dict)


def test_nest_map_structure_takes_several_structures_like_tensorflow():
    assert tf.nest.map_structure(lambda a, b: a + b, (1, [2]), (10, [20])) == (11, [22])
    with pytest.raises(ValueError, match="nest.map_structure.*same nested structure"):
        tf.nest.map_structure(lambda a, b: a, (1, 2), (1, (2,)))
    with pytest.raises(TypeError, match="same sequence type"):
        tf.nest.map_structure(lambda a, b: a, (1, 2), [1, 2])
    # check_types=False compares only the nesting (TF's argument).
    assert tf.nest.map_structure(lambda a, b: a + b, (1, 2), [3, 4], check_types=False) == (4, 6)


def test_nest_pack_sequence_as_counts_leaves():
    # Was RuntimeError "generator raised StopIteration" for too few, silence for too many;
    # TF: ValueError "Could not pack sequence. Structure had 2 atoms, but flat_sequence had 1".
    with pytest.raises(ValueError, match="structure has 2 leaves but the flat sequence has 1"):
        tf.nest.pack_sequence_as((1, 2), [1])
    with pytest.raises(ValueError, match="has 3 items"):
        tf.nest.pack_sequence_as((1, 2), [1, 2, 3])
    with pytest.raises(TypeError, match="nest.flatten: dict keys must be sortable"):
        tf.nest.flatten({1: 2, "a": 3})


# ----------------------------------------------------------------------------- Keras fit loops


def small_model():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    return model


def small_dataset():
    x = np.ones((8, 3), "float32")
    y = np.ones((8, 1), "float32")
    return Dataset.from_tensor_slices((x, y)).batch(4)


def test_fit_on_an_infinite_dataset_without_steps_per_epoch_raises_instead_of_hanging():
    # Was a hang. Keras 3 loops for ever here; tf.keras raised this ValueError before training.
    outcome = run_snippet(
        """
        x = np.ones((8, 3), "float32")
        ds = tf.data.Dataset.from_tensor_slices((x, x[:, :1])).batch(4).repeat()
        model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        model.fit(ds, epochs=1, verbose=0)
        """,
        timeout=60,
    )
    assert outcome.kind == "raised" and outcome.exc_type == "ValueError", str(outcome)
    assert "steps_per_epoch" in outcome.message and "infinitely repeating" in outcome.message


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda m, ds: m.fit(ds, validation_data=ds.repeat(), verbose=0), "validation_steps"),
        (lambda m, ds: m.evaluate(ds.repeat(), verbose=0), "steps"),
        (lambda m, ds: m.predict(ds.repeat(), verbose=0), "steps"),
    ],
)
def test_other_loops_over_infinite_datasets_need_their_step_count(call, name):
    model = small_model()
    iterations = int(model.optimizer.iterations)
    with pytest.raises(ValueError, match=f"`{name}` value"):
        call(model, small_dataset())
    assert int(model.optimizer.iterations) == iterations  # raised before training


def test_loops_over_infinite_datasets_end_with_their_step_counts():
    model, ds = small_model(), small_dataset()
    history = model.fit(
        ds.repeat(),
        epochs=2,
        steps_per_epoch=3,
        validation_data=ds.repeat(),
        validation_steps=2,
        verbose=0,
    )
    assert len(history.history["loss"]) == len(history.history["val_loss"]) == 2
    assert int(model.optimizer.iterations) == 6
    assert model.predict(ds.repeat(), steps=3, verbose=0).shape == (12, 1)
    assert np.isfinite(model.evaluate(ds.repeat(), steps=2, verbose=0))


def test_steps_per_epoch_minus_one_runs_until_stop_training():
    # Keras documents steps_per_epoch=-1 as "run indefinitely" on an infinite dataset.
    class StopAfterFive(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 4:
                self.model.stop_training = True

    model = small_model()
    model.fit(small_dataset().repeat(), steps_per_epoch=-1, callbacks=[StopAfterFive()], verbose=0)
    assert int(model.optimizer.iterations) == 5


@pytest.mark.parametrize("steps", [0, -2, 2.5, "3", True])
def test_bad_step_counts_are_named(steps):
    model, ds = small_model(), small_dataset()
    with pytest.raises(ValueError, match=f"Received: steps_per_epoch={steps!r}"):
        model.fit(ds, steps_per_epoch=steps, verbose=0)
    with pytest.raises(ValueError, match=f"Received: steps={steps!r}"):
        model.evaluate(ds, steps=steps, verbose=0)
    with pytest.raises(ValueError, match="Received: steps=-1"):
        model.predict(ds, steps=-1, verbose=0)  # -1 is fit's steps_per_epoch alone


# ----------------------------------------------------------------------------- compiled losses


N = 6


def weighted_setup(loss_name):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(N, 3)).astype("float32")
    y = rng.uniform(size=(N, 1)).astype("float32")
    model = tf.keras.Sequential(
        [tf.keras.Input((3,)), tf.keras.layers.Dense(1, activation="sigmoid")]
    )
    model.compile(optimizer=tf.keras.optimizers.SGD(0.0), loss=loss_name)
    return model, x, y


def numpy_loss(loss_name, y, p):
    """The per-sample loss in float64 numpy (Keras's formulas)."""
    if loss_name == "mse":
        return ((y - p) ** 2).mean(axis=-1)
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean(axis=-1)


WEIGHTS = {
    "(N,)": np.arange(1, N + 1, dtype="float32"),
    "(N, 1)": np.arange(1, N + 1, dtype="float32")[:, None],
    "scalar": np.float32(2.5),
}


@pytest.mark.parametrize("loss_name", ["mse", "binary_crossentropy"])
@pytest.mark.parametrize("weight_kind", list(WEIGHTS))
def test_compiled_string_loss_weights_samples_like_the_loss_object(loss_name, weight_kind):
    # Was: weights of shape (N, 1) broadcast against per-sample values (N,) to (N, N). Keras 3
    # wraps a compiled function in LossFunctionWrapper, which squeezes or expands the weights to
    # the per-sample values' rank, then takes the mean over the batch ("sum_over_batch_size").
    model, x, y = weighted_setup(loss_name)
    weight = WEIGHTS[weight_kind]
    pred = model.predict(x, verbose=0)
    expected = float(np.mean(numpy_loss(loss_name, y, pred) * np.reshape(weight, (-1,))))
    loss_object = tf.keras.losses.get({"mse": "MeanSquaredError"}.get(loss_name, "bce"))
    if not isinstance(loss_object, tf.keras.losses.Loss):
        loss_object = tf.keras.losses.BinaryCrossentropy()
    direct = float(loss_object(y, pred, sample_weight=weight))
    np.testing.assert_allclose(direct, expected, rtol=1e-5)
    np.testing.assert_allclose(model.test_on_batch(x, y, sample_weight=weight), expected, rtol=1e-5)
    model.reset_metrics()
    np.testing.assert_allclose(
        model.train_on_batch(x, y, sample_weight=weight), expected, rtol=1e-5
    )  # the learning rate is 0: the weights do not move
    if weight_kind == "scalar":
        # fit and evaluate slice sample_weight per batch, so it needs a batch axis, as in Keras.
        with pytest.raises(ValueError, match="scalar in `sample_weight`"):
            model.evaluate(x, y, sample_weight=weight, verbose=0)
        return
    got = model.evaluate(x, y, sample_weight=weight, batch_size=N, verbose=0)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    history = model.fit(x, y, sample_weight=weight, batch_size=N, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"][0], expected, rtol=1e-5)


# ----------------------------------------------------------------------------- einsum


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
        ("...ij,...jk->...ik", [(2, 3, 4), (1, 4, 5)]),  # a size-1 '...' axis broadcasts
        ("...ij,...jk", [(2, 3, 4), (1, 4, 5)]),
        ("ii->i", [(3, 3)]),
        ("ij,ij->", [(0, 3), (0, 3)]),  # zero-size: numpy gives 0.0
        ("ij,jk->ik", [(2, 0), (0, 3)]),  # an empty sum: zeros
    ],
)
def test_einsum_matches_numpy_including_broadcast_and_zero_size(equation, shapes):
    rng = np.random.default_rng(0)
    operands = [rng.normal(size=s) for s in shapes]
    got = tf.einsum(equation, *operands).numpy()
    want = np.einsum(equation, *operands)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_einsum_gradient_through_a_broadcast_operand_is_summed():
    a = tf.constant(np.random.default_rng(1).normal(size=(2, 3, 4)))
    b = tf.Variable(np.ones((1, 4, 5)))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.einsum("...ij,...jk->...ik", a, b))
    grad = tape.gradient(y, b).numpy()
    want = np.broadcast_to(a.numpy().sum(axis=(0, 1))[None, :, None], (1, 4, 5))
    np.testing.assert_allclose(grad, want, rtol=1e-12)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        # Was AttributeError "'Tensor' object has no attribute 'replace'".
        (lambda x: tf.einsum(x, x), TypeError, "einsum: the first argument must be the equation"),
        (lambda x: tf.einsum("ij,jk->ik", x, x[:2]), ValueError, "subscript 'j'"),
        (lambda x: tf.einsum("ij->ik", x), ValueError, "output subscript 'k'"),
        # Was a silently wrong result: a rank-3 operand for two subscripts.
        (lambda x: tf.einsum("ij", x[None]), ValueError, "operand 0 has rank 3"),
        (lambda x: tf.einsum("i$", x), ValueError, "invalid subscript '\\$'"),
        (lambda x: tf.einsum("ij->jj", x), ValueError, "repeats a subscript"),
        (lambda x: tf.einsum("ij"), ValueError, "at least one input"),
        (lambda x: tf.einsum("ij,jk->ik", x), ValueError, "2 operand subscripts but 1 inputs"),
        (lambda x: tf.einsum("i->i->i", x[0]), ValueError, "more than one '->'"),
        (lambda x: tf.einsum("i...->i", x[None]), ValueError, "needs '...'"),
        (lambda x: tf.einsum("...i,...i", x, x[:2]), ValueError, "a '...' dimension"),
        # tensordot: was a silent modulo of out-of-range axes, or a bare zip/unpack error.
        (lambda x: tf.tensordot(x, x, [[5], [0]]), ValueError, "axis 5 is out of range"),
        (lambda x: tf.tensordot(x, x, [[1], [0, 1]]), ValueError, "same length"),
        (lambda x: tf.tensordot(x, x, "x"), ValueError, "axes must be an int or a pair"),
        (lambda x: tf.tensordot(x, x[:2], [[0], [0]]), ValueError, "must have the same size"),
        (lambda x: tf.tensordot(x, x, [[0, 0], [0, 1]]), ValueError, "repeated"),
    ],
)
def test_einsum_and_tensordot_name_what_is_wrong(call, exc, match):
    x = tf.constant(np.arange(12.0).reshape(3, 4))
    with pytest.raises(exc, match=match):
        call(x)


# ----------------------------------------------------------------------------- Keras arguments

layers = tf.keras.layers


@pytest.mark.parametrize(
    "call, match",
    [
        # Keras 3: "Received an invalid value for `units`, expected a positive integer."
        (lambda: layers.Dense(-1), "Received: units=-1"),
        (lambda: layers.Dense(0), "Received: units=0"),
        (lambda: layers.Dense(2.5), "Received: units=2.5"),
        (lambda: layers.Dense(True), "Received: units=True"),
        (lambda: layers.Dropout(2), "Received: rate=2"),
        (lambda: layers.Dropout(float("nan")), "Received: rate=nan"),
        (lambda: layers.Conv2D(filters=0, kernel_size=0), "Received: filters=0"),
        (lambda: layers.Conv2D(2, 0), "Received: kernel_size=0"),
        (lambda: layers.Conv2D(2, 2.5), "Received: kernel_size=2.5"),
        (lambda: layers.Conv2D(2, "a"), "Received: kernel_size='a'"),
        (lambda: layers.Conv2D(2, (3, None)), "Received: kernel_size=\\(3, None\\)"),
        (lambda: layers.Conv2D(2, 3, strides=0), "Received: strides=0"),
        (lambda: layers.Conv2D(2, 3, padding="full"), "Received: padding='full'"),
        (lambda: layers.MaxPooling2D(-1), "Received: pool_size=-1"),
        # Keras 3: "Both `input_dim` and `output_dim` should be positive". Was accepted.
        (lambda: layers.Embedding(0, 2), "Received: input_dim=0 and output_dim=2"),
        (lambda: layers.Embedding(5, -1), "output_dim=-1"),
        (lambda: layers.BatchNormalization(momentum="a"), "Received: momentum='a'"),
        (lambda: layers.BatchNormalization(epsilon=float("nan")), "Received: epsilon=nan"),
        (lambda: layers.BatchNormalization(axis="a"), "Received: axis='a'"),
        (lambda: layers.Reshape(None), "Received: target_shape=None"),
        (lambda: layers.Reshape((2, 0)), "Received: target_shape=\\(2, 0\\)"),
        # Keras 3's standardize_shape. Was RecursionError for a string, accepted for -1.
        (lambda: tf.keras.Input(shape="a"), "Received: shape='a'"),
        (lambda: tf.keras.Input(shape=(-1,)), "Received: shape=\\(-1,\\)"),
        (lambda: tf.keras.Input(batch_shape=(None, 2.5)), "Received: batch_shape"),
        (lambda: tf.keras.metrics.BinaryAccuracy(threshold=2), "Received: threshold=2"),
    ],
)
def test_keras_constructor_arguments_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_dense_on_a_scalar_names_the_layer():
    # Was IndexError "tuple index out of range". Keras: "expected min_ndim=2, found ndim=0".
    with pytest.raises(ValueError, match="expected min_ndim=2, found ndim=0"):
        layers.Dense(2)(np.float32(1.0))


@pytest.mark.parametrize(
    "call, match",
    [
        # Were "Sub: incompatible shapes" / "Mul: ..." (the op inside) and, for a metric's
        # sample weights, numpy's "operands could not be broadcast together with remapped shapes".
        (
            lambda: tf.keras.losses.mean_squared_error(np.ones((2, 3)), np.ones((2, 4))),
            "mean_squared_error: `y_true` and `y_pred` have incompatible shapes",
        ),
        (
            lambda: tf.keras.losses.MeanAbsoluteError()(np.ones((2, 3)), np.ones((3, 3))),
            "mean_absolute_error: `y_true` and `y_pred`",
        ),
        (
            lambda: tf.keras.losses.MeanSquaredError()(
                np.ones((4, 3)), np.zeros((4, 3)), sample_weight=np.ones(3)
            ),
            "MeanSquaredError: `sample_weight`.*sample_weight.shape=\\(3,\\)",
        ),
        (
            lambda: tf.keras.metrics.Accuracy()(np.zeros(3), np.zeros(4)),
            "accuracy: `y_true` and `y_pred`",
        ),
        (
            lambda: tf.keras.metrics.Mean()([1.0, 2.0, 3.0], sample_weight=[1.0, 2.0]),
            "mean: `sample_weight` cannot be broadcast.*sample_weight.shape=\\(2,\\)",
        ),
    ],
)
def test_loss_and_metric_shape_mismatches_name_the_loss_or_metric(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_compiled_loss_with_mismatched_sample_weight_names_the_loss():
    model = small_model()
    with pytest.raises(ValueError, match="mean_squared_error: `sample_weight`"):
        model.train_on_batch(np.ones((4, 3)), np.ones((4, 1)), sample_weight=np.ones(3))


def test_class_weight_with_zero_samples_is_not_a_numpy_reshape_error():
    # Was numpy's "cannot reshape array of size 0 into shape (0,newaxis)"; Keras 3 (and now
    # ferrotape) finds the data empty.
    model = small_model()
    x, y = np.zeros((0, 3), "float32"), np.zeros((0, 1), "float32")
    with pytest.raises(ValueError, match="fit: the training data produced no batches"):
        model.fit(x, y, class_weight={0: 1.0, 1: 2.0}, verbose=0)
    with pytest.raises(ValueError, match="evaluate: the data produced no batches"):
        model.evaluate(x, y, verbose=0)
    with pytest.raises(ValueError, match="predict: the data produced no batches"):
        model.predict(x, verbose=0)
    assert model.predict_on_batch(x).shape == (0, 1)


# ----------------------------------------------------------------------------- tf.* composites

x22 = np.array([[3.0, 4.0], [1.0, 2.0]], "float32")


@pytest.mark.parametrize(
    "call, exc, match",
    [
        # A negative clip_norm silently flipped signs (clip_by_norm) or turned clipping off
        # (clip_by_global_norm); TF documents clip_norm > 0.
        (lambda: tf.clip_by_norm(x22, -1.0), ValueError, "Received: clip_norm=-1.0"),
        (lambda: tf.clip_by_norm(x22, float("nan")), ValueError, "clip_norm=nan"),
        (lambda: tf.clip_by_norm(np.array([3, 4]), 1), TypeError, "clip_by_norm: expected a float"),
        (lambda: tf.clip_by_global_norm([x22], -1.0), ValueError, "clip_by_global_norm"),
        # Was iterated row by row.
        (lambda: tf.clip_by_global_norm(tf.constant(x22), 1.0), TypeError, "t_list should be"),
        (
            lambda: tf.clip_by_global_norm([x22, x22.astype("float64")], 1.0),
            TypeError,
            "same dtype",
        ),
        # Was the Frobenius norm over axes (0, 1): 5 % 2 == 1.
        (lambda: tf.norm(x22, axis=(0, 5)), ValueError, "axis 5 is out of range"),
        (lambda: tf.norm(x22, axis=(0, 0)), ValueError, "distinct"),
        (lambda: tf.norm(x22, axis=(0, 1, 2)), ValueError, "received axis=\\(0, 1, 2\\)"),
        (lambda: tf.norm(x22, axis="a"), ValueError, "received axis='a'"),
        (lambda: tf.norm(x22, ord=True), ValueError, "got True"),
        (lambda: tf.norm(np.array([3, 4])), TypeError, "norm: expected a floating"),
        (lambda: tf.nn.dropout(x22, "a"), ValueError, "received rate='a'"),
        (
            lambda: tf.nn.conv2d(
                np.ones((1, 4, 4, 1), "float32"), np.ones((2, 2, 1, 1), "float32"), -1, "SAME"
            ),
            ValueError,
            "received strides=-1",
        ),
        (
            lambda: tf.nn.max_pool2d(np.ones((1, 4, 4, 1), "float32"), 2.5, 1, "SAME"),
            ValueError,
            "received ksize=2.5",
        ),
        (
            lambda: tf.nn.conv2d_transpose(
                np.ones((1, 4, 4, 2), "float32"), np.ones((2, 2, 3, 2), "float32"), [1, 5, 5], 1
            ),
            ValueError,
            "output_shape must be 4 ints",
        ),
        (lambda: tf.nn.bias_add(x22, np.ones(3, "float32")), ValueError, "bias_add"),
        (lambda: tf.strided_slice(x22, [0], [1, 2]), ValueError, "same length"),
        (lambda: tf.strided_slice(x22, [None], [1]), ValueError, "begin must be a list of ints"),
        (lambda: tf.strided_slice(x22, [0], [1], [0]), ValueError, "non-zero"),
        (lambda: tf.TensorShape([-1, 2]), ValueError, "dimension -1 must be >= 0"),
        (lambda: tf.TensorShape(["a"]), TypeError, "dimension value must be an integer"),
        (lambda: tf.TensorShape(None), ValueError, "unknown rank"),
    ],
)
def test_composites_name_their_bad_arguments(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_norms_of_empty_tensors_are_zero():
    # Was -inf (the max of nothing); numpy raises, and a norm of nothing is 0.
    assert float(tf.norm(np.zeros(0, "float32"), ord=np.inf)) == 0.0
    assert float(tf.norm(np.zeros((3, 0), "float32"), ord=np.inf, axis=[0, 1])) == 0.0
    assert float(tf.norm(np.zeros((3, 0), "float32"), ord=1, axis=[0, 1])) == 0.0
    assert float(tf.norm(np.zeros((0, 3), "float32"))) == 0.0


def test_tensor_shape_takes_unknown_dimensions_like_tensorflow():
    shape = tf.TensorShape([None, 3])
    assert shape.as_list() == [None, 3] and shape.num_elements() is None
    assert not shape.is_fully_defined() and tf.TensorShape([2, 3]).is_fully_defined()
    assert tf.TensorShape(3) == [3]  # TF: an int is one dimension
    assert (tf.TensorShape([2]) == "a") is False  # was ValueError from int("a")
    assert tf.strided_slice(x22, tf.constant([0, 1]), [2, 2]).numpy().tolist() == [[4.0], [2.0]]


def test_module_walks_deep_cyclic_and_long_attribute_structures():
    module = tf.Module()
    looped = [tf.Variable(1.0)]
    looped.append(looped)  # was RecursionError
    module.a = looped
    assert len(module.variables) == 1
    chain = [tf.Module() for _ in range(3000)]  # was RecursionError
    for parent, child in zip(chain, chain[1:], strict=False):
        parent.child = child
    assert len(chain[0].submodules) == 2999
    module.deep = deep_list(5000)
    with pytest.raises(ValueError, match="Module: an attribute is nested more than"):
        _ = module.variables


# ----------------------------------------------------------------------------- Keras and nests


def dense_model():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    return model


@pytest.mark.parametrize(
    "call, name",
    [
        # Was RecursionError (the layer's check for symbolic inputs recursed).
        (lambda x: tf.keras.layers.Dense(2)(x), "Dense 'dense"),
        (lambda x: tf.keras.layers.Concatenate()(tuple(x)), "Concatenate 'concatenate"),
        (lambda x: dense_model()(x), "Sequential '"),
        # Were named "nest.flatten" / "nest.map_structure".
        (lambda x: dense_model().predict(x, verbose=0), "predict"),
        (lambda x: dense_model().fit(x, np.ones((1, 1)), verbose=0), "fit"),
        (lambda x: dense_model().train_on_batch(x, np.ones((1, 1))), "train_on_batch"),
        (lambda x: tf.keras.Model(x, x), "Model\\(inputs, outputs\\)"),
    ],
)
def test_deep_inputs_to_keras_raise_a_value_error_naming_the_call(call, name):
    with pytest.raises(ValueError, match=f"{name}.*nested more than 100 levels"):
        call(deep_list(100_000))


def test_messages_about_deep_values_do_not_recurse_in_repr():
    # repr() of a 1,000-deep list raises RecursionError; messages abbreviate with reprlib.
    x = deep_list(1000)
    with pytest.raises(ValueError, match="Received: shape=\\[\\[\\[\\["):
        tf.keras.Input(shape=x)
    with pytest.raises(TypeError, match="count must be an integer"):
        Dataset.range(3).take(x)
    with pytest.raises(ValueError, match="same nested structure"):
        tf.nest.map_structure(lambda a, b: a, (1, deep_list(50)), (1, 2))


def test_keras_utils_and_initializers_name_bad_arguments():
    # Was numpy's AxisError "axis 5 is out of bounds for array of dimension 2".
    with pytest.raises(ValueError, match="normalize: axis must be.*Received: axis=5"):
        tf.keras.utils.normalize(np.ones((2, 2)), axis=5)
    # Was int("a")'s "invalid literal for int() with base 10".
    with pytest.raises(TypeError, match="GlorotUniform: expected a shape"):
        tf.keras.initializers.GlorotUniform()("a")


def test_shuffle_without_seed_and_without_reshuffle_repeats_one_order():
    # Was a new order on every pass; TF draws the seed once when the dataset is made.
    ds = Dataset.range(50).shuffle(50, reshuffle_each_iteration=False)
    first = values(ds)
    assert sorted(first) == list(range(50)) and first == values(ds) == values(ds)
    reshuffled = Dataset.range(50).shuffle(50)
    assert values(reshuffled) != values(reshuffled)  # 1 chance in 50! to be equal


@pytest.mark.parametrize(
    "call, exc, match",
    [
        # Was TypeError "'float' object cannot be interpreted as an integer".
        (lambda m, x, y: m.fit(x, y, epochs=2.5, verbose=0), ValueError, "Received: epochs=2.5"),
        (lambda m, x, y: m.fit(x, y, initial_epoch="a", verbose=0), ValueError, "initial_epoch"),
        # Was "Attempt to convert a value (None) ... to a Tensor".
        (lambda m, x, y: m.fit(x, None, verbose=0), ValueError, "no `y` was given"),
        (lambda m, x, y: m.train_on_batch(x), ValueError, "no `y` was given"),
    ],
)
def test_fit_arguments_are_named(call, exc, match):
    x, y = np.ones((8, 3), "float32"), np.ones((8, 1), "float32")
    with pytest.raises(exc, match=match):
        call(dense_model(), x, y)


def test_fit_takes_one_callback_not_in_a_list():
    # Keras 3 flattens `callbacks`; was TypeError "'History' object is not iterable".
    seen = []
    callback = tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(1))
    dense_model().fit(np.ones((4, 3)), np.ones((4, 1)), epochs=2, callbacks=callback, verbose=0)
    assert seen == [1, 1]
