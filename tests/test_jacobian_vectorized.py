"""Vectorized Jacobians (``experimental_use_pfor=True``, TensorFlow's default): one backward
pass carries many rows of the Jacobian at once. Each op's batched backward must give exactly
what one backward pass per row gives (``experimental_use_pfor=False``), which the tape tests
check against TensorFlow; ops that cannot take batched gradients fall back to row by row.

Float64 throughout, so the two paths agree to rounding.
"""

import numpy as np
import pytest

import ferrotape as tf

RNG = np.random.default_rng(7)


def values(*shape, low=-1.5, high=1.5):
    return tf.constant(RNG.uniform(low, high, size=shape), dtype=tf.float64)


def both_ways(f, *sources, batch=False, **kwargs):
    """The Jacobian of ``f(*sources)`` vectorized and row by row (one persistent tape)."""
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(list(sources))
        y = f(*sources)
    if batch:
        vectorized = tape.batch_jacobian(y, sources[0], **kwargs)
        looped = tape.batch_jacobian(y, sources[0], experimental_use_pfor=False)
        return [vectorized], [looped]
    vectorized = tape.jacobian(y, list(sources), **kwargs)
    looped = tape.jacobian(y, list(sources), experimental_use_pfor=False)
    return vectorized, looped


def assert_same(vectorized, looped):
    for v, lo in zip(vectorized, looped, strict=True):
        if lo is None:
            assert v is None
            continue
        assert tuple(v.shape) == tuple(lo.shape)
        np.testing.assert_allclose(v.numpy(), lo.numpy(), rtol=1e-12, atol=1e-14)


UNARY = {
    "exp": tf.exp,
    "expm1": tf.math.expm1,
    "log": lambda x: tf.math.log(x + 2.0),
    "log1p": lambda x: tf.math.log1p(x + 1.0),
    "sqrt": lambda x: tf.sqrt(x + 2.0),
    "rsqrt": lambda x: tf.math.rsqrt(x + 2.0),
    "reciprocal": lambda x: tf.math.reciprocal(x + 2.0),
    "square": tf.square,
    "abs": tf.abs,
    "neg": tf.negative,
    "sin": tf.sin,
    "cos": tf.cos,
    "tan": tf.tan,
    "atan": tf.atan,
    "asinh": tf.asinh,
    "tanh": tf.tanh,
    "sigmoid": tf.sigmoid,
    "erf": tf.math.erf,
    "lgamma": lambda x: tf.math.lgamma(x + 2.0),
    "relu": tf.nn.relu,
    "relu6": lambda x: tf.nn.relu6(4.0 * x),
    "elu": tf.nn.elu,
    "selu": tf.nn.selu,
    "softplus": tf.nn.softplus,
    "leaky_relu": tf.nn.leaky_relu,
    "cast": lambda x: tf.cast(tf.cast(x, tf.float32), tf.float64) * x,
    "identity": tf.identity,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_element_wise_ops(name):
    assert_same(*both_ways(UNARY[name], values(3, 4)))


BINARY = {
    "add": tf.add,
    "subtract": tf.subtract,
    "multiply": tf.multiply,
    "divide": lambda a, b: a / (b + 3.0),
    "pow": lambda a, b: tf.pow(a + 2.0, b),
    "maximum": tf.maximum,
    "minimum": tf.minimum,
    "squared_difference": tf.math.squared_difference,
    "where": lambda a, b: tf.where(a > b, a * b, a - b),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1))])
def test_broadcasting_binary_ops(name, shapes):
    a, b = values(*shapes[0]), values(*shapes[1])
    assert_same(*both_ways(BINARY[name], a, b))


REDUCTIONS = {
    "sum_all": lambda x: tf.reduce_sum(x),
    "sum_axis0": lambda x: tf.reduce_sum(x, axis=0),
    "sum_axis1_keepdims": lambda x: tf.reduce_sum(x, axis=1, keepdims=True),
    "mean_axes": lambda x: tf.reduce_mean(x, axis=[0, 2]),
    "max_axis": lambda x: tf.reduce_max(x, axis=-1),
    "min_ties": lambda x: tf.reduce_min(tf.round(x), axis=1),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name):
    assert_same(*both_ways(REDUCTIONS[name], values(2, 3, 4)))


SHAPES = {
    "reshape": lambda x: tf.reshape(x, [4, 6]) * 2.0,
    "transpose": lambda x: tf.transpose(x, [2, 0, 1]) ** 2,
    "broadcast_to": lambda x: tf.broadcast_to(x[:, :1, :], [2, 5, 4]) * tf.sin(x[0, 0, 0]),
    "matrix_transpose": lambda x: tf.linalg.matrix_transpose(x) * 3.0,
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shape_ops(name):
    assert_same(*both_ways(SHAPES[name], values(2, 3, 4)))


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_matrix_products(transpose_a, transpose_b):
    a = values(3, 2) if transpose_a else values(2, 3)
    b = values(4, 3) if transpose_b else values(3, 4)
    f = lambda a, b: tf.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)  # noqa: E731
    assert_same(*both_ways(f, a, b))


def test_batched_matrix_products_broadcast_their_batch_axes():
    assert_same(*both_ways(lambda a, b: tf.matmul(a, b), values(2, 3, 4), values(4, 2)))


def test_ops_without_a_batched_backward_fall_back_to_one_pass_per_row():
    def f(x, w):
        h = tf.nn.softmax(tf.matmul(x, w))
        return tf.concat([tf.gather(h, [1, 0], axis=1), tf.nn.log_softmax(h)], axis=1)

    assert_same(*both_ways(f, values(3, 4), values(4, 2)))


def test_a_dense_network_and_its_hessian_by_nested_tapes():
    x, w1, w2 = values(5, 3), values(3, 4), values(4, 2)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(w1)
        with tf.GradientTape() as inner:
            inner.watch(w1)
            y = tf.matmul(tf.nn.elu(tf.matmul(x, w1) + 0.1), w2)
            loss = tf.reduce_mean(tf.nn.relu(y) ** 2)
        g = inner.gradient(loss, w1)
    hessian = outer.jacobian(g, w1)
    looped = outer.jacobian(g, w1, experimental_use_pfor=False)
    assert tuple(hessian.shape) == (3, 4, 3, 4)
    assert_same([hessian], [looped])
    np.testing.assert_allclose(
        hessian.numpy().reshape(12, 12), hessian.numpy().reshape(12, 12).T, atol=1e-12
    )


def test_batch_jacobian_of_a_dense_elu_network():
    w1, w2 = values(5, 8), values(8, 6)

    def f(x):
        return tf.nn.elu(tf.matmul(tf.nn.elu(tf.matmul(x, w1)), w2))

    assert_same(*both_ways(f, values(7, 5), batch=True))


def test_batch_jacobian_of_a_rank_three_target_and_source():
    def f(x):
        return tf.reshape(tf.tanh(tf.reshape(x, [4, 6])), [4, 3, 2]) * tf.reduce_sum(x)

    assert_same(*both_ways(f, values(4, 2, 3), batch=True))


@pytest.mark.parametrize("parallel_iterations", [1, 2, 5, 100])
def test_parallel_iterations_splits_the_rows_without_changing_the_result(parallel_iterations):
    f = lambda x: tf.matmul(tf.tanh(x), x, transpose_b=True)  # noqa: E731
    assert_same(*both_ways(f, values(3, 4), parallel_iterations=parallel_iterations))
    assert_same(*both_ways(f, values(3, 4), batch=True, parallel_iterations=parallel_iterations))


@pytest.mark.parametrize(
    ("value", "error"), [(0, ValueError), (-3, ValueError), (2.5, TypeError), ("2", TypeError)]
)
def test_parallel_iterations_must_be_a_positive_integer(value, error):
    x = values(3)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(error, match="parallel_iterations must be None or a positive integer"):
        tape.jacobian(y, x, parallel_iterations=value)


def test_unconnected_sources_stay_none_or_zeros():
    x, unused = values(2, 3), values(4)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, unused])
        y = tf.exp(x)
    j = tape.jacobian(y, [x, unused])
    assert j[1] is None
    z = tape.jacobian(y, unused, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert tuple(z.shape) == (2, 3, 4) and not z.numpy().any()


def test_under_a_forward_accumulator_the_jacobian_of_a_jvp_matches():
    # Forward over reverse: the accumulator derives tangents from backward closures, which
    # must then see one row at a time.
    x, t = values(3), values(3)
    with tf.autodiff.ForwardAccumulator(x, t) as acc:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.sin(x) * tf.reduce_sum(x**2)
        vectorized = tape.jacobian(y, x)
        looped = tape.jacobian(y, x, experimental_use_pfor=False)
    assert_same([vectorized, acc.jvp(vectorized)], [looped, acc.jvp(looped)])


def test_an_outer_tape_differentiates_through_a_vectorized_jacobian():
    x = values(3)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.tanh(x) * x[0]
        jac = inner.jacobian(y, x)
        total = tf.reduce_sum(jac * jac)
    got = outer.gradient(total, x).numpy()

    def total_at(v):
        with tf.GradientTape(persistent=True) as tape:
            v = tf.constant(v)
            tape.watch(v)
            y = tf.tanh(v) * v[0]
        j = tape.jacobian(y, v, experimental_use_pfor=False).numpy()
        return float((j * j).sum())

    step, base = 1e-6, x.numpy()
    numeric = [
        (total_at(base + step * e) - total_at(base - step * e)) / (2 * step) for e in np.eye(3)
    ]
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)
