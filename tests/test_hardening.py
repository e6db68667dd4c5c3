"""Issue 9's reproducers: hostile or unusual input ends in an ordinary Python exception or the
right answer, never a crash, a hang, a PanicException or silently wrong data. Anything that
could crash the interpreter runs in a fresh one (tests/isolated.py)."""

import gc
import json
import weakref

import numpy as np
import pytest
from isolated import assert_raises_cleanly, run_snippet

import ferrotape as tf

DEEP_LIST = "x = []\nfor _ in range(100_000):\n    x = [x]\n"


# ----------------------------------------------------------------------------- deep nests


@pytest.mark.parametrize(
    "call",
    [
        "tf.constant(x)",
        "tf.convert_to_tensor(x)",
        "tf.Variable(x)",
        "tf.data.Dataset.from_tensor_slices(x)",
        "tf.reduce_sum(x)",
        "tf.constant(1.0) + x",
    ],
)
def test_a_list_nested_100000_deep_is_refused_with_a_value_error(call):
    assert_raises_cleanly(DEEP_LIST + call, "ValueError", "nested more than")


def test_a_deep_list_holding_a_tensor_is_refused_too():
    assert_raises_cleanly(
        "x = [tf.ones([2])]\nfor _ in range(100_000):\n    x = [x]\ntf.constant(x)",
        "ValueError",
        "nested more than",
    )


def test_a_deep_list_in_a_thread_with_a_small_stack_raises_there():
    code = """
    import threading
    threading.stack_size(64 * 1024)
    x = []
    for _ in range(1000):
        x = [x]
    errors = []
    def convert():
        try:
            tf.constant(x)
        except ValueError as error:
            errors.append(str(error))
    thread = threading.Thread(target=convert)
    thread.start()
    thread.join()
    assert errors and "nested more than" in errors[0], errors
    """
    outcome = run_snippet(code)
    assert outcome.kind == "ok", outcome


def test_nests_tensorflow_accepts_still_convert():
    t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(t.numpy(), [[1, 2], [3, 4]])
    mixed = tf.constant([tf.ones([2]), [5.0, 6.0]])
    np.testing.assert_array_equal(mixed.numpy(), [[1, 1], [5, 6]])
    x = 1.0
    for _ in range(40):
        x = [x]
    assert tf.constant(x).shape.as_list() == [1] * 40


def test_python_nests_deeper_than_the_limit_give_a_value_error():
    x = []
    for _ in range(100_000):
        x = [x]
    with pytest.raises(ValueError, match="nested more than"):
        tf.nest.flatten(x)
    shallow = {"b": [1, (2, 3)], "a": 4}
    assert tf.nest.flatten(shallow) == [4, 1, 2, 3]
    assert tf.nest.map_structure(lambda v: v * 2, shallow) == {"b": [2, (4, 6)], "a": 8}


# ----------------------------------------------------------------------------- numpy layouts


def unaligned(values):
    """``values`` stored one byte past an aligned address (numpy's ``aligned`` flag False)."""
    raw = b"\0" + np.ascontiguousarray(values).tobytes()
    out = np.frombuffer(raw, dtype=values.dtype, offset=1).reshape(values.shape)
    assert not out.flags.aligned
    return out


@pytest.mark.parametrize(
    "make",
    [
        lambda: unaligned(np.arange(5, dtype=np.float32)),
        lambda: unaligned(np.arange(6, dtype=np.float64).reshape(2, 3)),
        lambda: unaligned(np.arange(4, dtype=np.int64)),
        lambda: np.arange(3, dtype=">f4"),
        lambda: np.arange(6, dtype=">i8").reshape(2, 3)[:, ::-1],
        lambda: unaligned(np.arange(6, dtype=">i4")).reshape(2, 3)[:, ::-2],
        lambda: np.arange(12.0).reshape(3, 4)[::-1, 1::2],
        lambda: np.asfortranarray(np.arange(6.0).reshape(2, 3)),
        lambda: np.zeros((0, 3), dtype=">f8"),
        lambda: np.array(2.5, dtype=">f4"),
    ],
)
def test_any_numpy_layout_and_byte_order_converts_to_the_same_values(make):
    array = make()
    tensor = tf.constant(array)
    native = array.astype(array.dtype.newbyteorder("="))
    expected_dtype = {"int64": "int64", "int32": "int32"}.get(native.dtype.name, native.dtype.name)
    assert tensor.dtype.name == expected_dtype
    np.testing.assert_array_equal(tensor.numpy(), native)


def test_unconvertible_numpy_arrays_raise_type_errors():
    with pytest.raises(TypeError, match="unsupported dtype"):
        tf.constant(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        tf.constant(np.zeros(2, dtype=[("a", "f4"), ("b", "i4")]))


# ----------------------------------------------------------------------------- messages


def test_gradient_tape_takes_truthy_flags_as_tensorflow_does():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=2) as tape:
        tape.watch(x)
        y = x * x
    assert float(tape.gradient(y, x)) == 6.0
    assert float(tape.gradient(y, x)) == 6.0  # persistent: a second call works
    with tf.GradientTape(watch_accessed_variables=0) as tape:
        v = tf.Variable(2.0)
        z = v * v
    assert tape.gradient(z, v) is None


@pytest.mark.parametrize(
    ("value", "name"), [(tf.constant(1.0), "Tensor"), (tf.Variable(1.0), "Variable")]
)
def test_hashing_a_tensor_names_the_public_class(value, name):
    with pytest.raises(TypeError, match=f"^{name} is unhashable"):
        hash(value)


def test_einsum_with_a_tensor_for_the_equation_says_so():
    with pytest.raises(TypeError, match="einsum: the first argument must be the equation"):
        tf.einsum(tf.ones([2]), tf.ones([2]))


# ----------------------------------------------------------------------------- tf.data and fit


def test_a_cache_iterated_by_two_iterators_at_once_gives_each_every_element():
    ds = tf.data.Dataset.range(5).cache()
    first, second = iter(ds), iter(ds)
    pairs = [(int(next(first)), int(next(second))) for _ in range(5)]
    assert pairs == [(i, i) for i in range(5)]
    assert [int(x) for x in ds] == list(range(5))
    stopped = iter(tf.data.Dataset.range(4).cache())
    next(stopped)  # a pass stopped early fills nothing; a later pass is still complete


def repeated_model_and_data():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x, y = np.ones((8, 2), "float32"), np.ones((8, 1), "float32")
    return model, tf.data.Dataset.from_tensor_slices((x, y)).batch(4).repeat()


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda m, ds: m.fit(ds, verbose=0), "steps_per_epoch"),
        (lambda m, ds: m.fit(ds.take(2), validation_data=ds, verbose=0), "validation_steps"),
        (lambda m, ds: m.evaluate(ds, verbose=0), "steps"),
        (lambda m, ds: m.predict(ds.map(lambda x, y: x), verbose=0), "steps"),
    ],
)
def test_fit_evaluate_predict_refuse_an_endless_dataset_without_a_step_count(call, argument):
    # TensorFlow 2.21 (Keras 3) loops for ever here; the message is tf.keras 2's.
    model, ds = repeated_model_and_data()
    with pytest.raises(ValueError, match=f"infinitely repeating.*`{argument}`"):
        call(model, ds)


def test_an_endless_dataset_with_a_step_count_trains():
    model, ds = repeated_model_and_data()
    history = model.fit(ds, steps_per_epoch=3, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2


@pytest.mark.parametrize("weight_shape", ["(n,)", "(n, 1)"])
def test_a_compiled_string_loss_weights_samples_like_the_loss_object(weight_shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 3)).astype("float32")
    y = rng.standard_normal((6, 1)).astype("float32")
    weights = np.arange(1.0, 7.0, dtype="float32")
    if weight_shape == "(n, 1)":
        weights = weights[:, None]
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    prediction = model.predict(x, verbose=0)
    by_hand = np.sum(((prediction - y) ** 2).mean(-1) * weights.reshape(-1)) / 6
    by_object = float(tf.keras.losses.MeanSquaredError()(y, prediction, sample_weight=weights))
    evaluated = model.evaluate(x, y, sample_weight=weights, verbose=0)
    np.testing.assert_allclose([evaluated, by_object], [by_hand, by_hand], rtol=1e-5)


# ----------------------------------------------------------------------------- pooling windows


@pytest.mark.parametrize("pool", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("stride", [1, 2])
def test_a_same_window_far_larger_than_the_image_returns_at_once_with_tf_values(pool, stride):
    x = tf.constant((np.arange(2 * 4 * 5 * 3, dtype=np.float32) % 7).reshape(2, 4, 5, 3))
    huge = run_snippet(
        f"""
        import json
        x = tf.constant((np.arange(2 * 4 * 5 * 3, dtype=np.float32) % 7).reshape(2, 4, 5, 3))
        print("VALUES", json.dumps(tf.nn.{pool}(x, 2**62, {stride}, "SAME").numpy().tolist()))
        """,
        timeout=20,
    )
    assert huge.kind == "ok", huge
    # A window of 10 already covers the whole image from every position (TF 2.21 gives these
    # same values for it; its own kernels reject 2**62).
    expected = getattr(tf.nn, pool)(x, 10, stride, "SAME").numpy()
    line = next(row for row in huge.stdout.splitlines() if row.startswith("VALUES "))
    values = np.array(json.loads(line[len("VALUES ") :]))
    np.testing.assert_allclose(values, expected, rtol=1e-6)
    reduce = np.max if pool == "max_pool2d" else np.mean
    np.testing.assert_allclose(expected[:, 0, 0], reduce(x.numpy(), axis=(1, 2)), rtol=1e-6)


def test_huge_pooling_windows_differentiate_like_a_global_pool():
    x = tf.constant(np.random.default_rng(0).standard_normal((1, 3, 3, 2)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        mean = tf.reduce_sum(tf.nn.avg_pool2d(x, 2**40, 1, "SAME"))
        top = tf.reduce_sum(tf.nn.max_pool2d(x, 2**40, 5, "SAME"))
    np.testing.assert_allclose(tape.gradient(mean, x).numpy(), np.ones((1, 3, 3, 2)))
    expected = (x.numpy() == x.numpy().max(axis=(1, 2), keepdims=True)).astype(float)
    np.testing.assert_array_equal(tape.gradient(top, x).numpy(), expected)


@pytest.mark.parametrize("pool", ["max_pool2d", "avg_pool2d"])
def test_a_valid_window_larger_than_the_image_is_an_invalid_argument(pool):
    assert_raises_cleanly(
        f"tf.nn.{pool}(tf.zeros([1, 4, 4, 1]), 2**62, 1, 'VALID')",
        "InvalidArgumentError",
        "larger than the input",
    )


def test_pooling_layers_with_huge_windows_end():
    outcome = run_snippet(
        """
        layer = tf.keras.layers.MaxPooling2D(2**62, strides=1, padding="same")
        print(layer(tf.ones([1, 3, 3, 1])).shape)
        """,
        timeout=20,
    )
    assert outcome.kind == "ok" and "(1, 3, 3, 1)" in outcome.stdout, outcome


# ----------------------------------------------------------------------------- iteration


def test_iteration_makes_rows_one_at_a_time():
    outcome = run_snippet(
        """
        import time
        big = tf.zeros([10**7])
        start = time.perf_counter()
        first = next(iter(big))
        assert time.perf_counter() - start < 0.5, time.perf_counter() - start
        assert float(first) == 0.0
        """
    )
    assert outcome.kind == "ok", outcome


def test_iteration_yields_differentiable_rows_and_unpacks():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = sum(tf.reduce_sum(row) * i for i, row in enumerate(x))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[0, 0], [1, 1]])
    a, b = tf.constant([1, 2])
    assert (int(a), int(b)) == (1, 2)
    assert len(list(tf.zeros([3, 0]))) == 3 and list(tf.zeros([0, 2])) == []
    assert [float(v) for v in tf.Variable([1.0, 2.0])] == [1.0, 2.0]
    with pytest.raises(TypeError, match="Cannot iterate over a scalar tensor"):
        iter(tf.constant(1.0))


# ----------------------------------------------------------------------------- reference cycles


def tape_in_a_cycle(persistent, call_gradient):
    """A tape whose custom gradient function refers back to the tape; a weak reference to it."""
    x = tf.constant(2.0)
    tape = tf.GradientTape(persistent=persistent)

    @tf.custom_gradient
    def f(v):
        def grad(dy):
            assert tape is not None  # the closure holds the tape: tape -> grad -> tape
            return dy * 3.0

        return v * v, grad

    with tape:
        tape.watch(x)
        y = f(x)
    if call_gradient:
        assert float(tape.gradient(y, x)) == 3.0
    return weakref.ref(tape)


@pytest.mark.parametrize(
    ("persistent", "call_gradient"), [(True, False), (True, True), (False, False)]
)
def test_a_tape_in_a_cycle_through_its_custom_gradient_is_collected(persistent, call_gradient):
    gc.collect()
    refs = [tape_in_a_cycle(persistent, call_gradient) for _ in range(50)]
    gc.collect()
    assert sum(ref() is not None for ref in refs) == 0


def test_custom_gradients_under_nested_tapes_still_work_after_collections():
    x = tf.constant(2.0)

    @tf.custom_gradient
    def f(v):
        return v * v, lambda dy: dy * 3.0

    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        gc.collect()
        g = inner.gradient(y, x)
    gc.collect()
    assert float(g) == 3.0
    assert outer.gradient(g, x) is None  # the lambda's result does not depend on x


# ----------------------------------------------------------------------------- integer overflow


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_arithmetic_wraps_like_numpy_instead_of_panicking(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.min, info.min, 7, -7, info.max], dtype=dtype)
    y = np.array([-1, 3, -1, 2, -1], dtype=dtype)
    a, b = tf.constant(x), tf.constant(y)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal((a // b).numpy(), x // y)
        np.testing.assert_array_equal((a % b).numpy(), x % y)
        np.testing.assert_array_equal(tf.math.squared_difference(a, b).numpy(), (x - y) * (x - y))


def test_python_level_flags_are_read_by_truth_value_as_tensorflow_reads_them():
    # TensorFlow converts keepdims, persistent, ... with bool(): 2.5 and 1 are True, None False.
    x = tf.constant([[1.0, 2.0]])
    assert tf.reduce_max(x, keepdims=2.5).shape == (1, 1)
    assert tf.reduce_max(x, keepdims=None).shape == ()
    assert tf.reduce_sum(x, axis=1, keepdims=np.True_).shape == (1, 1)
    with pytest.raises(ValueError, match="ambiguous|truth value"):
        tf.reduce_max(x, keepdims=tf.constant([1.0, 2.0]))


@pytest.mark.parametrize(
    "call, match",
    [
        # Flags TensorFlow hands to its kernels must be real bools ("Expected bool ...").
        (lambda: tf.matmul(tf.ones([2, 2]), tf.ones([2, 2]), transpose_b=1), "expected a bool"),
        (lambda: tf.linalg.inv(tf.eye(2), adjoint=0), "expected a bool"),
        (lambda: tf.pad(tf.ones([2]), [[1, 1]], mode=5), "expected a string, received int 5"),
        (
            lambda: tf.pad(tf.ones([2]), [[1, 1]], constant_values=None),
            r"Attempt to convert a value \(None\)",
        ),
        (lambda: tf.nn.silu(tf.ones([2]), beta="x"), "expected a number, received str x"),
    ],
)
def test_arguments_of_the_wrong_kind_say_what_was_expected(call, match):
    with pytest.raises(TypeError, match=match) as info:
        call()
    # The argument's name travels as a note (shown in tracebacks).
    assert any("while processing" in note for note in getattr(info.value, "__notes__", [])), (
        info.value.__notes__ if hasattr(info.value, "__notes__") else "no notes"
    )


# TensorFlow 2.21 raises TypeError for what is not iterable, and sums the rows of a tensor.
@pytest.mark.parametrize("inputs", [0, None, tf.float32])
def test_add_n_refuses_what_is_not_iterable_as_tensorflow_does(inputs):
    with pytest.raises(TypeError, match="add_n: expected an iterable of tensors, received"):
        tf.add_n(inputs)


def test_add_n_takes_any_iterable_and_refuses_an_empty_one():
    assert float(tf.add_n(iter([tf.constant(1.0), 2.0]))) == 3.0
    assert float(tf.add_n((1.0, 2.0, 3.0))) == 6.0
    assert float(tf.add_n(tf.constant([1.0, 2.0]))) == 3.0
    with pytest.raises(TypeError, match=r"unsupported type \(str\)"):
        tf.add_n("ab")
    with pytest.raises(ValueError, match="AddN: expected at least one tensor"):
        tf.add_n([])


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: tf.unstack(tf.ones([2]), axis=None), TypeError, "expected an integer"),
        (lambda: tf.gather([1.0], [0], batch_dims=[0, 1]), TypeError, "expected an integer"),
        (lambda: tf.eye("abc"), TypeError, "expected an integer, received str abc"),
        (lambda: tf.eye(-2), tf.errors.InvalidArgumentError, "Eye: num_rows must be >= 0"),
        (lambda: tf.random.normal([2], mean=[[0, 1]]), TypeError, "expected a number"),
        (lambda: tf.as_dtype(None), TypeError, "Cannot convert value None to a TensorFlow DType"),
        (lambda: tf.as_dtype({"a": 1}), TypeError, "to a TensorFlow DType"),
    ],
)
def test_integer_number_and_dtype_arguments_say_what_was_expected(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_dtypes_from_numpy_still_convert():
    assert tf.as_dtype(np.dtype(">f4")) == tf.float32
    assert tf.as_dtype(np.int64) == tf.int64
    assert tf.as_dtype(np.dtype("int32")) == tf.int32
    assert tf.as_dtype("bfloat16") == tf.bfloat16
    assert tf.unstack(tf.ones([2, 3]), axis=np.int64(1))[0].shape == (2,)
    assert tf.eye(np.int32(2), num_columns=tf.constant(3)).shape == (2, 3)
