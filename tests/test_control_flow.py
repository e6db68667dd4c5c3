"""Control flow run eagerly (control_flow.py, functional_ops.py): values against NumPy or
hand-computed references, TensorFlow 2.21's errors, and gradients (first and second order)
through cond, while_loop, map_fn, scan and friends against float64 finite differences.

tests/test_control_flow_tf.py runs the same kinds of programs in TensorFlow when it is installed.
"""

import collections

import numpy as np
import pytest

import ferrotape as tf
from ferrotape.errors import InvalidArgumentError, OutOfRangeError

F64 = tf.float64


def const(x):
    return tf.constant(np.asarray(x, np.float64))


# ----------------------------------------------------------------------------- cond / case


def test_cond_runs_only_the_chosen_branch():
    ran = []
    out = tf.cond(tf.constant(2) < 5, lambda: ran.append("t") or 1, lambda: ran.append("f") or 2)
    assert (out, ran) == (1, ["t"])
    assert tf.cond(False, lambda: 1, lambda: [2]) == [2]  # strict: no singleton unpacking
    assert tf.cond(tf.constant([True]), lambda: "a", lambda: "b") == "a"  # one element is fine
    assert tf.cond(0, lambda: "a", lambda: "b") == "b"


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: tf.cond(tf.constant([True, False]), lambda: 1, lambda: 2), ValueError, "cond"),
        (lambda: tf.cond(True, 1, lambda: 2), TypeError, "true_fn"),
        (lambda: tf.cond(True, lambda: 1), TypeError, "false_fn"),
    ],
)
def test_cond_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_cond_nonscalar_pred_is_invalid_argument():
    with pytest.raises(InvalidArgumentError, match=r"pred must be a scalar.*\(2,\)"):
        tf.cond(tf.constant([True, False]), lambda: 1, lambda: 2)


def test_case_picks_the_first_true_pair_or_the_default():
    f, t = tf.constant(False), tf.constant(True)
    assert tf.case([(f, lambda: 1), (t, lambda: 2)], default=lambda: 3) == 2
    assert tf.case([(f, lambda: 1)], default=lambda: 3) == 3
    assert tf.case([(t, lambda: 1), (t, lambda: 2)]) == 1
    assert tf.case([(f, lambda: 1), (t, lambda: [7])]) == 7  # strict=False unpacks singletons
    assert tf.case([(t, lambda: [7])]) == [7]  # ...but TF builds no cond for one lone pair
    assert tf.case([(t, lambda: [7])], strict=True) == [7]
    # Tensors are unhashable (as in TF), so a dict of pairs can only hold variables' refs etc.
    # TF checks exclusivity over the pairs other than the one made the default.
    assert tf.case([(t, lambda: 1), (t, lambda: 2)], exclusive=True) == 1


@pytest.mark.parametrize(
    "call,error",
    [
        (
            lambda: tf.case([(tf.constant(False), lambda: 1), (tf.constant(False), lambda: 2)]),
            InvalidArgumentError,
        ),
        (
            lambda: tf.case(
                [(tf.constant(True), lambda: 1), (tf.constant(True), lambda: 2)],
                default=lambda: 3,
                exclusive=True,
            ),
            InvalidArgumentError,
        ),
        (lambda: tf.case([(True, lambda: 1)], default=lambda: 3), TypeError),
        (lambda: tf.case([(tf.constant(1), lambda: 1)], default=lambda: 3), TypeError),
        (lambda: tf.case([(tf.constant(True), 1)]), TypeError),
        (lambda: tf.case([tf.constant(True)]), TypeError),
        (lambda: tf.case(3), TypeError),
        (lambda: tf.case([], default=lambda: 3), ValueError),
        (lambda: tf.case({True: lambda: 1}), ValueError),
        (lambda: tf.case([(tf.constant([True, False]), lambda: 1)], default=lambda: 3), ValueError),
    ],
)
def test_case_errors(call, error):
    with pytest.raises(error, match="case"):
        call()


def test_switch_case():
    fns = [lambda: 10, lambda: 11, lambda: 12]
    assert tf.switch_case(tf.constant(1), fns) == 11
    assert tf.switch_case(tf.constant(2, tf.int64), {0: fns[0], 2: fns[2], 1: fns[1]}) == 12
    assert tf.switch_case(tf.constant(1), [(1, fns[1]), (0, fns[0])]) == 11
    assert tf.switch_case(tf.constant(7), fns) == 12  # out of range: the last branch
    assert tf.switch_case(tf.constant(-1), fns, default=lambda: 99) == 99


@pytest.mark.parametrize(
    "call,error",
    [
        (lambda: tf.switch_case(1, [lambda: 1]), TypeError),  # TF wants a tensor
        (lambda: tf.switch_case(tf.constant(1.0), [lambda: 1]), TypeError),
        (lambda: tf.switch_case(tf.constant(0), []), ValueError),
        (lambda: tf.switch_case(tf.constant(0), {0: lambda: 1, 2: lambda: 2}), ValueError),
        (lambda: tf.switch_case(tf.constant(0), [("a", lambda: 1)]), TypeError),
        (lambda: tf.switch_case(tf.constant([0, 1]), [lambda: 1]), InvalidArgumentError),
    ],
)
def test_switch_case_errors(call, error):
    with pytest.raises(error, match="switch_case"):
        call()


# ----------------------------------------------------------------------------- while_loop


def test_while_loop_structures():
    i = tf.constant(0)
    # One loop variable: a bare tensor from body is accepted; the result keeps loop_vars' type.
    out = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [i])
    assert isinstance(out, list) and int(out[0]) == 3
    out = tf.while_loop(lambda i: i < 3, lambda i: [i + 1], (i,))
    assert isinstance(out, tuple) and int(out[0]) == 3
    out = tf.while_loop(lambda i, j: i < 3, lambda i, j: [i + 1, j * 2], (0, 1.5))
    assert isinstance(out, tuple) and (int(out[0]), float(out[1])) == (3, 12.0)
    assert out[1].dtype == tf.float32  # Python values become tensors
    pair = collections.namedtuple("Pair", "j k")
    i, p = tf.while_loop(
        lambda i, p: i < 3,
        lambda i, p: (i + 1, pair(p.j + p.k, p.j - p.k)),
        (0, pair(tf.constant(1), tf.constant(2))),
    )
    assert type(p) is pair and (int(p.j), int(p.k)) == (6, -2)
    d = tf.while_loop(lambda d: d["a"] < 5, lambda d: [{"a": d["a"] * 2}], [{"a": tf.constant(1)}])
    assert int(d[0]["a"]) == 8
    with pytest.raises(ValueError, match="structure"):  # only a bare tensor is wrapped, as in TF
        tf.while_loop(lambda d: d["a"] < 5, lambda d: {"a": d["a"] * 2}, [{"a": tf.constant(1)}])
    zero = tf.while_loop(lambda i: i < 0, lambda i: i + 1, [0])
    assert int(zero[0]) == 0 and tf.is_tensor(zero[0])


def test_while_loop_maximum_iterations_and_shape_invariants():
    out = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [0], maximum_iterations=4)
    assert int(out[0]) == 4
    assert int(tf.while_loop(lambda i: True, lambda i: i + 1, [0], maximum_iterations=0)[0]) == 0
    i, m = tf.while_loop(
        lambda i, m: i < 3,
        lambda i, m: (i + 1, tf.concat([m, m], 0)),
        (0, tf.ones([1, 2])),
        shape_invariants=(tf.TensorShape([]), tf.TensorShape([None, 2])),
    )
    assert m.shape == (8, 2)


def test_while_loop_gradient_and_back_prop_false():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        (y,) = tf.while_loop(lambda y: y < 100.0, lambda y: y * y, [x * 1.0])
        (z,) = tf.while_loop(lambda y: y < 100.0, lambda y: y * y, [x * 1.0], back_prop=False)
    assert float(y) == 256.0 and float(z) == 256.0
    assert float(tape.gradient(y, x)) == pytest.approx(8 * 2.0**7)
    assert tape.gradient(z, x) is None


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: tf.while_loop(1, lambda i: i, [0]), TypeError, "cond"),
        (lambda: tf.while_loop(lambda i: True, 1, [0]), TypeError, "body"),
        (
            lambda: tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], parallel_iterations=0),
            TypeError,
            "parallel_iterations",
        ),
        (lambda: tf.while_loop(lambda: True, lambda: (), []), ValueError, "loop_vars"),
        (
            lambda: tf.while_loop(lambda i: i < 3, lambda i: i + 1, tf.constant(0)),
            TypeError,
            "loop_vars",
        ),
        (
            lambda: tf.while_loop(lambda i, j: i < 3, lambda i, j: (i + 1,), (0, 0)),
            ValueError,
            "structure",
        ),
        (
            lambda: tf.while_loop(lambda i, p: i < 3, lambda i, p: (i + 1, p[0]), (0, (0, 0))),
            ValueError,
            "structure",
        ),
        (
            lambda: tf.while_loop(
                lambda i, m: i < 3, lambda i, m: (i + 1, tf.concat([m, m], 0)), (0, tf.ones([1, 2]))
            ),
            ValueError,
            r"shape_invariants",
        ),
        (
            lambda: tf.while_loop(
                lambda i, m: i < 3,
                lambda i, m: (i + 1, tf.cast(m, tf.float64)),
                (0, tf.ones([1, 2])),
            ),
            TypeError,
            "type",
        ),
        (
            lambda: tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], maximum_iterations=[4]),
            ValueError,
            "maximum_iterations",
        ),
        (
            lambda: tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], maximum_iterations=2.5),
            TypeError,
            "maximum_iterations",
        ),
        (
            lambda: tf.while_loop(lambda i: tf.constant([True, True]), lambda i: i + 1, [0]),
            InvalidArgumentError,
            "cond",
        ),
    ],
)
def test_while_loop_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_while_loop_shape_error_message_names_the_shapes():
    with pytest.raises(ValueError, match=r"while_loop: .*shape \(1, 2\), but has shape \(2, 2\)"):
        tf.while_loop(
            lambda i, m: i < 3, lambda i, m: (i + 1, tf.concat([m, m], 0)), (0, tf.ones([1, 2]))
        )


# ----------------------------------------------------------------------------- map_fn etc.


X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)


def test_map_fn_values_and_signatures():
    x = tf.constant(X)
    np.testing.assert_array_equal(tf.map_fn(lambda r: r * 2, x).numpy(), X * 2)
    out = tf.map_fn(lambda r: tf.reduce_sum(r), x)
    np.testing.assert_array_equal(out.numpy(), X.sum(1))
    out = tf.map_fn(lambda p: p[0] * p[1], (x, x), fn_output_signature=tf.float32)
    np.testing.assert_array_equal(out.numpy(), X * X)
    a, b = tf.map_fn(lambda p: (p[0], p[1] + 1), (x, x))
    np.testing.assert_array_equal(b.numpy(), X + 1)
    out = tf.map_fn(lambda r: tf.cast(r, tf.int32), x, dtype=tf.int32)
    assert out.dtype == tf.int32
    d = tf.map_fn(
        lambda r: {"a": r, "b": r[0]}, x, fn_output_signature={"a": tf.float32, "b": tf.float32}
    )
    np.testing.assert_array_equal(d["b"].numpy(), X[:, 0])
    out = tf.map_fn(tf.reduce_sum, x, fn_output_signature=tf.TensorSpec([], tf.float32))
    np.testing.assert_array_equal(out.numpy(), X.sum(1))
    assert tf.map_fn(lambda r: 1, tf.constant([1, 2])).numpy().tolist() == [1, 1]
    assert tf.map_fn(lambda r: 1, x, fn_output_signature=tf.float32).dtype == tf.float32
    assert tf.map_fn(lambda r: r * 2, np.arange(3)).numpy().tolist() == [0, 2, 4]


def test_map_fn_over_zero_elements_returns_empty_results_as_tf():
    empty = tf.zeros([0, 3])
    assert tf.map_fn(lambda r: r * 2, empty).shape == (0,)
    spec = tf.TensorSpec([3], tf.float32)
    assert tf.map_fn(lambda r: r * 2, empty, fn_output_signature=spec).shape == (0, 3)
    out = tf.map_fn(lambda r: r, empty, fn_output_signature=tf.int32)
    assert out.shape == (0,) and out.dtype == tf.int32


@pytest.mark.parametrize(
    "call,error",
    [
        (lambda: tf.map_fn(lambda r: r[0] * r[1], [tf.constant(X), tf.constant(X)]), ValueError),
        (lambda: tf.map_fn(lambda r: [r[0], r[1]], (tf.constant(X), tf.constant(X))), TypeError),
        (lambda: tf.map_fn(lambda r: tf.cast(r, tf.int32), tf.constant(X)), InvalidArgumentError),
        (
            lambda: tf.map_fn(
                lambda r: r, tf.constant(X), fn_output_signature=tf.TensorSpec([3], tf.float32)
            ),
            ValueError,
        ),
        (
            lambda: tf.map_fn(lambda r: r[: int(r[0])], tf.constant([[1.0, 2.0], [2.0, 2.0]])),
            ValueError,
        ),
        (
            lambda: tf.map_fn(
                lambda r: r[: int(r[0])], tf.constant([[1.0, 2.0], [2.0, 2.0]]), infer_shape=False
            ),
            InvalidArgumentError,
        ),
        (lambda: tf.map_fn(lambda r: r, tf.constant(3.0)), ValueError),
        (lambda: tf.map_fn(lambda r: r, []), ValueError),
        (lambda: tf.map_fn(lambda r: r[0], (tf.zeros([3]), tf.zeros([4]))), ValueError),
        (lambda: tf.map_fn(3, tf.constant(X)), TypeError),
        (lambda: tf.map_fn(lambda r: 1.5, tf.constant([1, 2])), InvalidArgumentError),
    ],
)
def test_map_fn_errors(call, error):
    with pytest.raises(error):
        call()


def test_map_fn_errors_name_the_op():
    with pytest.raises(
        InvalidArgumentError, match=r"map_fn: fn returned tf.int32 where tf.float32"
    ):
        tf.map_fn(lambda r: tf.cast(r, tf.int32), tf.constant(X))
    with pytest.raises(ValueError, match=r"map_fn: .*1\+ dimensional"):
        tf.map_fn(lambda r: r, tf.constant(3.0))


def test_scan_against_numpy():
    v = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    x = tf.constant(v)
    np.testing.assert_array_equal(tf.scan(lambda a, e: a + e, x).numpy(), np.cumsum(v))
    np.testing.assert_array_equal(
        tf.scan(lambda a, e: a + e, x, reverse=True).numpy(), np.cumsum(v[::-1])[::-1]
    )
    np.testing.assert_array_equal(
        tf.scan(lambda a, e: a + e, x, initializer=10.0).numpy(), 10 + np.cumsum(v)
    )
    np.testing.assert_array_equal(
        tf.scan(lambda a, e: a + e, x, initializer=10.0, reverse=True).numpy(),
        10 + np.cumsum(v[::-1])[::-1],
    )
    s, p = tf.scan(lambda a, e: (a[0] + e, a[1] * e), x, initializer=(0.0, 1.0))
    np.testing.assert_array_equal(p.numpy(), np.cumprod(v))
    out = tf.scan(lambda a, e: a + e[0] * e[1], (x, x), initializer=0.0)
    np.testing.assert_array_equal(out.numpy(), np.cumsum(v * v))
    m = np.arange(8.0, dtype=np.float32).reshape(2, 2, 2)
    out = tf.scan(lambda a, e: tf.matmul(a, e), tf.constant(m)).numpy()
    np.testing.assert_array_equal(out, np.stack([m[0], m[0] @ m[1]]))
    assert tf.scan(lambda a, e: a + e, tf.zeros([0]), initializer=1.0).shape == (0,)


@pytest.mark.parametrize(
    "call,error",
    [
        (lambda: tf.scan(lambda a, e: a + e, tf.zeros([0])), OutOfRangeError),
        (
            lambda: tf.scan(lambda a, e: tf.cast(a, tf.int32), tf.constant([1.0, 2.0])),
            InvalidArgumentError,
        ),
        (lambda: tf.scan(lambda a, e: tf.concat([a, a], 0), tf.ones([3, 1])), ValueError),
        (
            lambda: tf.scan(lambda a, e: [a[0], a[1]], tf.ones([2]), initializer=(0.0, 1.0)),
            TypeError,
        ),
        (lambda: tf.scan(lambda a, e: a[0], (tf.ones([2]), tf.ones([2]))), ValueError),
        (lambda: tf.scan(lambda a, e: a, (tf.zeros([3]), tf.zeros([4]))), ValueError),
        (lambda: tf.scan(1, tf.ones([2])), TypeError),
    ],
)
def test_scan_errors(call, error):
    with pytest.raises(error, match="scan"):
        call()


def test_folds_against_hand_values():
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    assert float(tf.foldl(lambda a, e: a * 10 + e, x)) == 1234.0
    assert float(tf.foldr(lambda a, e: a * 10 + e, x)) == 4321.0
    assert float(tf.foldl(lambda a, e: a - e, x, initializer=10.0)) == 0.0
    assert float(tf.foldr(lambda a, e: a - e, x)) == -2.0
    s, p = tf.foldl(lambda a, e: (a[0] + e, a[1] * e), x, initializer=(0.0, 1.0))
    assert (float(s), float(p)) == (10.0, 24.0)
    out = tf.foldl(lambda a, e: a + e, tf.zeros([0]), initializer=1.0)
    assert tf.is_tensor(out) and float(out) == 1.0
    # Eager TensorFlow lets the accumulator change dtype.
    assert tf.foldl(lambda a, e: tf.cast(a, tf.int32), x).dtype == tf.int32
    with pytest.raises(OutOfRangeError, match="foldr"):
        tf.foldr(lambda a, e: a + e, tf.zeros([0]))
    with pytest.raises(ValueError, match="foldl"):
        tf.foldl(lambda a, e: a[0], (x, x))


def test_vectorized_map_stacks_per_example_results():
    x = tf.constant(X)
    np.testing.assert_array_equal(tf.vectorized_map(lambda r: r * 2, x).numpy(), X * 2)
    s, first = tf.vectorized_map(lambda p: (p[0] + p[1], p[0][0]), (x, x))
    np.testing.assert_array_equal(first.numpy(), X[:, 0])
    assert tf.vectorized_map(lambda r: tf.constant(1.0), x).shape == (3,)
    d = tf.vectorized_map(lambda r: {"a": r["a"] * 2}, {"a": x})
    np.testing.assert_array_equal(d["a"].numpy(), X * 2)
    assert tf.vectorized_map(lambda r: r * 2, tf.zeros([0, 3])).shape == (0, 3)
    with pytest.raises(InvalidArgumentError, match="vectorized_map"):
        tf.vectorized_map(lambda r: r[0], (tf.zeros([3]), tf.zeros([4])))
    with pytest.raises(ValueError, match="vectorized_map"):
        tf.vectorized_map(lambda r: r, tf.constant(1.0))


# ----------------------------------------------------------------------------- graph-era names


def test_graph_era_names():
    ids = tf.identity_n([tf.constant(1), 2.0, tf.Variable([3.0])])
    assert [t.numpy().tolist() for t in ids] == [1, 2.0, [3.0]]
    assert [int(t) for t in tf.identity_n(tf.constant([4, 5]))] == [4, 5]
    assert tf.no_op() is None and tf.group(tf.constant(1), name="g") is None
    calls = []
    with tf.control_dependencies([tf.constant(1), lambda: calls.append(1)]) as ctx:
        assert ctx is None
    assert calls == [1]
    with tf.control_dependencies(None):
        pass
    np.testing.assert_array_equal(tf.get_static_value(tf.constant([1, 2])), [1, 2])
    assert tf.get_static_value(tf.Variable(1.0)) is None
    assert tf.get_static_value([1, 2]) == [1, 2]


def test_identity_n_passes_gradients():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        a, b = tf.identity_n([x * x, x])
        y = a + 2 * b
    assert float(tape.gradient(y, x)) == 8.0


# ----------------------------------------------------------------------------- gradients


def fd_grad(f, x, eps=1e-6):
    """Central finite differences of the scalar f (numpy in, float out) at x."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def first_and_second(program, x0):
    """tape gradient of program(x) and the gradient of sum(grad * v), for float64 x0."""
    v = np.random.default_rng(0).normal(size=x0.shape)
    x = tf.Variable(x0)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = program(x)
        g = inner.gradient(y, x)
        gv = tf.reduce_sum(g * const(v))
    h = outer.gradient(gv, x)
    return g.numpy(), (np.zeros_like(x0) if h is None else h.numpy()), v


def check(program, x0, atol=1e-5):
    def value(a):
        return float(program(tf.constant(a)).numpy())

    g, hv, v = first_and_second(program, x0)
    np.testing.assert_allclose(g, fd_grad(value, x0), atol=atol, rtol=1e-5)

    def directional(a):
        x = tf.Variable(a)
        with tf.GradientTape() as t:
            y = program(x)
        return float(np.sum(t.gradient(y, x).numpy() * v))

    np.testing.assert_allclose(hv, fd_grad(directional, x0), atol=atol, rtol=1e-4)


X0 = np.array([[0.3, -0.7, 1.1], [0.5, 0.9, -1.3]])


def cond_program(x):
    s = tf.reduce_sum(x)
    return tf.cond(s > 0, lambda: tf.reduce_sum(tf.sin(x) * x), lambda: tf.reduce_sum(x**3))


def cond_false_program(x):
    return tf.cond(tf.reduce_sum(x) > 100.0, lambda: tf.reduce_sum(x), lambda: tf.reduce_sum(x**3))


def while_program(x):
    def body(i, acc):
        return i + 1, acc * tf.tanh(x) + x

    _, acc = tf.while_loop(lambda i, acc: i < 3, body, (0, tf.ones_like(x)))
    return tf.reduce_sum(acc)


def map_fn_program(x):
    return tf.reduce_sum(tf.map_fn(lambda r: tf.exp(r) * tf.reduce_sum(r * r), x))


def scan_program(x):
    return tf.reduce_sum(tf.scan(lambda a, r: a * tf.sin(r) + r, x) ** 2)


def scan_reverse_init_program(x):
    out = tf.scan(lambda a, r: a * r, x, initializer=tf.ones([3], F64), reverse=True)
    return tf.reduce_sum(out)


def fold_program(x):
    return tf.reduce_sum(tf.foldr(lambda a, r: a * r + 1.0, x) + tf.foldl(lambda a, r: a - r, x))


def case_program(x):
    s = tf.reduce_sum(x)
    return tf.case([(s < 0, lambda: tf.reduce_sum(x * x)), (s > 0, lambda: tf.reduce_sum(x**3))])


def switch_program(x):
    return tf.switch_case(tf.constant(1), [lambda: tf.reduce_sum(x), lambda: tf.reduce_sum(x**4)])


def vmap_program(x):
    return tf.reduce_sum(tf.vectorized_map(lambda r: tf.tanh(r) * r[0], x))


@pytest.mark.parametrize(
    "program",
    [
        cond_program,
        cond_false_program,
        while_program,
        map_fn_program,
        scan_program,
        scan_reverse_init_program,
        fold_program,
        case_program,
        switch_program,
        vmap_program,
    ],
)
def test_gradients_first_and_second_order(program):
    check(program, X0)


def test_map_fn_gradient_matches_the_closed_form():
    x0 = np.array([[0.1, 0.2], [0.3, 0.4]])
    g, _, _ = first_and_second(lambda x: tf.reduce_sum(tf.map_fn(lambda r: r * r, x)), x0)
    np.testing.assert_allclose(g, 2 * x0)


def test_variables_as_loop_vars_and_elems_pass_gradients():
    v = tf.Variable(1.5)
    with tf.GradientTape(persistent=True) as tape:
        (y,) = tf.while_loop(lambda y: y < 10.0, lambda y: y * 2.0, [v])
        m = tf.map_fn(lambda r: r * r, v * tf.ones([3]))
        c = tf.cond(v > 1, lambda: v * v, lambda: v)
    assert float(y) == 12.0 and float(tape.gradient(y, v)) == 8.0
    assert float(tape.gradient(m, v)) == 9.0  # d/dv sum of 3 v^2
    assert float(tape.gradient(c, v)) == 3.0
