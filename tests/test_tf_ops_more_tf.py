"""The top-level ops of sort_ops.py, array_ops.py, scatter_ops.py, framework_ops.py and
init_ops.py, the truncating math and ft.debugging's dtype checks, run in TensorFlow 2.21 and in
ferrotape and compared: values, dtypes, gradients (first order, float64), and the kind of error.

Each program takes the module (``tensorflow`` or ``ferrotape``) as ``tf`` and returns a nest of
results: tensors become (dtype name, shape, values), an expected error becomes its kind.
Skipped without TensorFlow (``pip install tensorflow-cpu``); tests/test_tf_ops_more.py covers
the same ops without it.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
real_tf = pytest.importorskip(
    "tensorflow", reason="TensorFlow is not installed (pip install tensorflow-cpu)"
)

import ferrotape  # noqa: E402 - after the skip

PROGRAMS = []
RNG = np.random.default_rng(21)
X = RNG.standard_normal((3, 4))
X[1, :2] = 0.5  # a tie
U = RNG.standard_normal((2, 4))


def program(fn):
    PROGRAMS.append(fn)
    return fn


def kind(fn):
    """Run fn; the kind of exception it raises, or 'no error'."""
    try:
        fn()
    except Exception as err:  # noqa: BLE001 - the kind is the result being compared
        if type(err).__name__ == "InvalidArgumentError":
            return "InvalidArgumentError"
        for k in (TypeError, ValueError, RuntimeError):
            if isinstance(err, k):
                return k.__name__
        return type(err).__name__
    return "no error"


def grads(tf, fn, *arrays):
    """fn's value and the gradient of sum(fn(*xs) * weights) for each float64 input."""
    xs = [tf.constant(a) for a in arrays]
    with tf.GradientTape() as tape:
        tape.watch(xs)
        y = fn(*xs)
        loss = tf.reduce_sum(
            y * tf.constant(np.linspace(0.5, 2.0, int(np.prod(y.shape))).reshape(y.shape))
        )
    return y, tape.gradient(loss, xs)


@program
def sorting(tf):
    x = tf.constant(X)
    return [
        tf.sort(x),
        tf.sort(x, axis=0, direction="DESCENDING"),
        tf.argsort(x, axis=0),
        tf.argsort(x, direction="DESCENDING", stable=True),
        tf.sort([3, 1, 2, 1]),
        # NaN is left out: where TensorFlow's top_k puts it depends on its position.
        tuple(tf.unique([np.nan, np.nan, 1.0])),
        tf.argsort([3, 1, 2, 1], direction="DESCENDING"),
        grads(tf, lambda t: tf.sort(t, axis=0), X),
        grads(tf, lambda t: tf.sort(t, direction="DESCENDING"), X),
        kind(lambda: tf.sort([1, 2], direction="UP")),
    ]


@program
def searching_and_unique(tf):
    seq = tf.constant([[1.0, 2.0, 2.0, 3.0], [0.0, 1.0, 5.0, 9.0]])
    vals = tf.constant([[2.0, 0.5, 4.0], [1.0, 10.0, -1.0]])
    return [
        tf.searchsorted(seq, vals),
        tf.searchsorted(seq, vals, side="right", out_type=tf.int64),
        kind(lambda: tf.searchsorted(seq, vals, side="middle")),
        kind(lambda: tf.searchsorted(seq, [1.0, 2.0])),
        tuple(tf.unique([3, 1, 3, 2, 1, 7])),
        tuple(tf.unique_with_counts(tf.constant([0.5, -1.0, 0.5]), out_idx=tf.int64)),
        kind(lambda: tf.unique([[1, 2]])),
        tf.unravel_index([22, 41, 37], (7, 6)),
        tf.unravel_index(5, [7, 6]),
        kind(lambda: tf.unravel_index(42, [7, 6])),
    ]


@program
def rolling_repeating_reversing(tf):
    return [
        tf.roll(X, [1, -5], [0, 1]),
        tf.roll([1, 2, 3, 4], [1, 1], [0, 0]),
        kind(lambda: tf.roll([1, 2], [1, 1], [0])),
        grads(tf, lambda t: tf.roll(t, [1, 2], [0, 1]), X),
        tf.repeat(X, 2),
        tf.repeat(X, [1, 0, 2], axis=0),
        kind(lambda: tf.repeat(X, [1, 2], axis=0)),
        grads(tf, lambda t: tf.repeat(t, [2, 1, 0, 3], axis=1), X),
        tf.reverse(X, [0, -1]),
        kind(lambda: tf.reverse(X, [0, -2])),
        kind(lambda: tf.reverse(X, 1)),
        grads(tf, lambda t: tf.reverse(t, [1]), X),
        tf.reverse_sequence(X, [2, 0, 3, 1], seq_axis=0, batch_axis=1),
        kind(lambda: tf.reverse_sequence([[1, 2, 3], [4, 5, 6]], [2, 4], seq_axis=1)),
        grads(tf, lambda t: tf.reverse_sequence(t, [1, 3, 2], seq_axis=1), X),
    ]


@program
def masking_partitioning_grids(tf):
    mask = X > 0.0
    return [
        tf.boolean_mask(X, mask),
        tf.boolean_mask(X, [True, False, True, True], axis=1),
        kind(lambda: tf.boolean_mask(X, True)),
        kind(lambda: tf.boolean_mask(X, [True, False])),
        grads(tf, lambda t: tf.boolean_mask(t, mask), X),
        tf.dynamic_partition(X, [1, 0, 1], 2),
        tf.dynamic_stitch([[0, 2], [1]], [U, X[:1]]),
        grads(tf, lambda t: tf.dynamic_partition(t, [[0, 1, 1, 0]] * 3, 2)[1], X),
        tf.meshgrid([1, 2, 3], [4, 5]),
        tf.meshgrid([1.0, 2.0], [4.0, 5.0, 6.0], [7.0], indexing="ij"),
        kind(lambda: tf.meshgrid([1], indexing="foo")),
        grads(tf, lambda a, b: tf.meshgrid(a, b)[0] + tf.meshgrid(a, b)[1], X[0], X[1]),
        tf.sequence_mask([[1, 3], [2, 0]]),
        tf.sequence_mask([1, 2], 4, dtype=tf.float32),
        tf.shape_n([X, U], out_type=tf.int64),
    ]


@program
def scattering(tf):
    t = tf.constant(X)
    idx = [[1], [0], [1]]  # a repeated index
    up = np.stack([U[0], U[1], U[0] + 1.0])
    out = []
    for name in ("update", "add", "sub", "min", "max"):
        op = getattr(tf, f"tensor_scatter_nd_{name}")
        out.append(op(t, idx, up))
        out.append(op(t, [[2, 1], [0, 3]], [5.0, -5.0]))
        out.append(grads(tf, lambda a, b, op=op: op(a, [[2], [0]], b), X, U))
        out.append(kind(lambda op=op: op(t, [[3]], U[:1])))
    out.append(tf.tensor_scatter_nd_max([1, 2, 3, 4], [[1], [1]], [0, 8]))
    ties = np.array([0.5, 0.5, 9.0, 0.0])
    out.append(
        grads(
            tf, lambda a, b: tf.tensor_scatter_nd_max(a, [[1], [1]], b), X, np.stack([ties, ties])
        )
    )
    return out


@program
def truncating_math(tf):
    x, y = [-7, 7, -8, 8, 0], [2, -2, 3, 3, 5]
    return [
        tf.truncatediv(x, y),
        tf.truncatemod(x, y),
        tf.truncatemod(tf.constant(X * 10), tf.constant(3.0, tf.float64)),
        tf.truncatediv(tf.constant(X * 10), tf.constant(3.0, tf.float64)),
        tf.saturate_cast([-1e10, 3e9, 2.7, -2.7], tf.int32),
        tf.saturate_cast(tf.constant([2**40, -3], tf.int64), tf.int32),
        tf.saturate_cast(tf.constant([1e6, -1e300, 1.5], tf.float64), tf.float16),
        grads(
            tf,
            lambda t: tf.cast(tf.saturate_cast(t * 1e5, tf.float16), tf.float64),
            X[0].astype("float32"),
        ),
    ]


@program
def framework_utilities(tf):
    scopes = []
    with tf.name_scope("outer") as outer:
        scopes += [outer, tf.get_current_name_scope()]
        with tf.name_scope("inner") as inner:
            scopes += [inner, tf.get_current_name_scope()]
        with tf.name_scope("abs/") as absolute:
            scopes += [absolute, tf.get_current_name_scope()]
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.py_function(lambda a: a * a, [x], tf.float32)
        z = tf.grad_pass_through(tf.round)(x * 1.3)
    return [
        scopes,
        tf.name_scope("n").name,
        kind(lambda: tf.name_scope(3)),
        tf.ensure_shape(tf.constant([[1, 2]]), [None, 2]),
        kind(lambda: tf.ensure_shape(tf.constant([[1, 2]]), [2])),
        tf.timestamp().dtype.name,
        y,
        z,
        tape.gradient([y, z], x),
        tf.py_function(lambda a: (a, 2), [x], [tf.float32, tf.float32]),
        tf.numpy_function(lambda a: a * 2, [x], tf.float32),
        kind(lambda: tf.hessians(x, x)),
        tf.tuple([x, x]),
    ]


@program
def initializers(tf):
    return [
        tf.zeros_initializer()([2], dtype=tf.int32),
        tf.ones_initializer()([2, 1]),
        tf.constant_initializer([1, 2, 3, 4])([2, 2], tf.int64),
        tf.constant_initializer(2.5)([3]),
        tf.constant_initializer(2).get_config(),
        tf.random_normal_initializer(seed=3).get_config(),
        tf.random_uniform_initializer(-1.0, 1.0).get_config(),
        kind(lambda: tf.constant_initializer([1, 2, 3])([2])),
        kind(lambda: tf.constant_initializer(tf.constant(1.0))),
        kind(lambda: tf.zeros_initializer()([2], partition_info=None)),
        kind(lambda: tf.random_normal_initializer()([2], tf.int32)),
        tf.random_normal_initializer(seed=3)([5]).shape.as_list(),
        tf.random_uniform_initializer(0, 5)([4], tf.int32).dtype.name,
    ]


@program
def debugging_checks(tf):
    d = tf.debugging
    return [
        kind(lambda: d.assert_integer(tf.constant([1]))),
        kind(lambda: d.assert_integer(tf.constant(1.0))),
        d.assert_same_float_dtype().name,
        d.assert_same_float_dtype(None, tf.float64).name,
        kind(lambda: d.assert_same_float_dtype([tf.constant(1.0), tf.constant(1.0, tf.float64)])),
        kind(lambda: d.assert_same_float_dtype([tf.constant(1)])),
        [d.is_numeric_tensor(v) for v in (tf.constant(1), tf.constant(True), 1.0)],
        [kind(lambda v=v: d.assert_proper_iterable(v)) for v in ([1], "ab", np.zeros(2), 3)],
        d.get_log_device_placement(),
    ]


@program
def asserts_shapes_histograms_recompute(tf):
    v = tf.Variable([2.0, -1.0], dtype=tf.float64)
    x = tf.constant([1.0, 2.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.recompute_grad(lambda t: tf.sin(t) * v)(x)
    values = tf.constant(X.reshape(-1) * 3)
    span = tf.constant([-2.0, 2.0], tf.float64)
    return [
        kind(lambda: tf.Assert(tf.constant(True), ["x"])),
        kind(lambda: tf.Assert(tf.constant(False), ["x", tf.constant([1, 2])])),
        tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3])).as_list(),
        kind(lambda: tf.broadcast_static_shape(tf.TensorShape([2, 2]), tf.TensorShape([3]))),
        tf.broadcast_dynamic_shape(tf.constant([5, 1, 3], tf.int64), tf.constant([4, 1], tf.int64)),
        kind(lambda: tf.broadcast_dynamic_shape([2, 2], [3])),
        tf.histogram_fixed_width(values, span, nbins=8),
        tf.histogram_fixed_width_bins(values, span, nbins=8, dtype=tf.int64),
        kind(lambda: tf.histogram_fixed_width([1.0], [5.0, 0.0])),
        y,
        tape.gradient(y, [x, v]),
        tuple(tf.approx_top_k(tf.constant(X, tf.float32), 2)),
        tf.required_space_to_batch_paddings([5, 7], [2, 3]),
        tf.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [0, 1]]),
    ]


@program
def tensor_array(tf):
    x = tf.constant(np.arange(6.0).reshape(3, 2))
    with tf.GradientTape() as tape:
        tape.watch(x)
        ta = tf.TensorArray(tf.float64, size=3)
        for i in range(3):
            ta = ta.write(i, x[i] * float(i + 1))
        stacked = ta.stack()
        loss = tf.reduce_sum(stacked * stacked)
    grown = tf.while_loop(
        lambda i, ta: i < 4,
        lambda i, ta: (i + 1, ta.write(i, tf.cast(i, tf.float32) * 2.0)),
        [tf.constant(0), tf.TensorArray(tf.float32, size=0, dynamic_size=True)],
    )[1]
    out = [stacked, tape.gradient(loss, x), grown.stack(), grown.size(), grown.read(2)]
    out.append(kind(lambda: grown.read(2)))  # cleared by the first read
    shaped = tf.TensorArray(tf.float32, size=2, element_shape=[2])
    out += [shaped.stack(), shaped.gather([1]), shaped.unstack(tf.ones([2, 2])).concat()]
    out += [
        kind(lambda: tf.TensorArray(tf.float32)),
        kind(lambda: shaped.write(5, tf.ones([2]))),
        kind(lambda: shaped.write(0, tf.ones([3]))),
        kind(lambda: shaped.write(0, tf.ones([2], tf.int32))),
        kind(lambda: shaped.read(7)),
        kind(lambda: tf.TensorArray(tf.float32, 3).split(tf.ones([4]), [1, 3])),
    ]
    kept = tf.TensorArray(tf.int32, size=3, clear_after_read=False)
    kept = kept.scatter([2, 0], tf.constant([[1], [2]]))
    out += [kept.read(0), kept.read(0), kept.gather([0, 2])]
    pieces = tf.TensorArray(tf.float32, size=2).split(tf.range(5.0), [2, 3])
    out += [pieces.concat(), tf.TensorArray(tf.float32, size=0, element_shape=[3]).stack()]
    return out


def to_plain(value):
    if isinstance(value, (real_tf.Tensor, ferrotape.Tensor)):
        return (value.dtype.name, tuple(value.shape), value.numpy().tolist())
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    return value


def assert_same(expected, actual, path="result"):
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), path
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_same(e, a, f"{path}[{i}]")
    elif isinstance(expected, tuple) and len(expected) == 3 and isinstance(expected[0], str):
        assert actual[0] == expected[0] and actual[1] == expected[1], (path, expected, actual)
        np.testing.assert_allclose(actual[2], expected[2], rtol=1e-6, atol=1e-6, err_msg=path)
    else:
        assert actual == expected, (path, expected, actual)


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda fn: fn.__name__)
def test_matches_tensorflow(prog):
    assert_same(to_plain(prog(real_tf)), to_plain(prog(ferrotape)))
