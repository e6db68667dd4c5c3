"""``ft.autodiff.ForwardAccumulator``: forward-mode autodiff.

Every row of the gradient-check table (``test_gradcheck.ROWS``, the op inventory) is checked in
forward mode too, in float64, against central finite differences of its NumPy reference along
the tangent: ``(f(x + eps t) - f(x - eps t)) / 2 eps``. Hessian-vector products, both
forward-over-reverse and reverse-over-forward, are checked against finite differences of the
gradient for the rows with a second order. Then the nesting rules, control flow, variables,
``ft.function`` and the errors; where TensorFlow is importable, the same programs run in both.
"""

import warnings

import numpy as np
import pytest
from test_gradcheck import ROWS, case, dense, first_grads, outs, weighted_sum

import ferrotape as tf

FwdAcc = tf.autodiff.ForwardAccumulator
IDS = [r.name for r in ROWS]


def directional_fd(f, xs, ts, eps):
    """Central finite differences of ``f`` (arrays -> list of arrays) along ``ts``."""
    hi = f([x + eps * t for x, t in zip(xs, ts, strict=True)])
    lo = f([x - eps * t for x, t in zip(xs, ts, strict=True)])
    return [(np.asarray(a) - np.asarray(b)) / (2 * eps) for a, b in zip(hi, lo, strict=True)]


# ----------------------------------------------------------------------------- the op table


@pytest.mark.parametrize("r", ROWS, ids=IDS)
def test_jvp_matches_finite_differences(r):
    xs, _, ts = case(r)
    primals = [tf.constant(x) for x in xs]
    with FwdAcc(primals, [tf.constant(t) for t in ts]) as acc:
        ys = outs(r.fn(*primals))
    want = directional_fd(lambda xs_: outs(r.ref(*xs_)), xs, ts, r.eps)
    for i, (y, w) in enumerate(zip(ys, want, strict=True)):
        jvp = acc.jvp(y)
        if jvp is None:
            # TensorFlow's convention: an op whose declared derivative is zeros (sign) has no
            # tangent; anywhere else a missing tangent is a bug.
            assert not np.any(w), f"output {i}: no tangent"
            continue
        assert jvp.dtype == tf.float64 and tuple(jvp.shape) == np.shape(w)
        np.testing.assert_allclose(jvp.numpy(), w, rtol=r.rtol, atol=1e-6, err_msg=f"output {i}")


SECOND = [r for r in ROWS if not r.no_second]


def hvp_fd(r, xs, ws, ts):
    """Finite differences of the first gradient along ``ts``: ``H @ t``."""
    return directional_fd(lambda xs_: [g.numpy() for g in first_grads(r, xs_, ws)], xs, ts, 1e-5)


@pytest.mark.parametrize("r", SECOND, ids=[r.name for r in SECOND])
def test_hvp_forward_over_reverse(r):
    xs, ws, ts = case(r)
    primals = [tf.constant(x) for x in xs]
    with FwdAcc(primals, [tf.constant(t) for t in ts]) as acc:
        with tf.GradientTape() as tape:
            tape.watch(primals)
            loss = weighted_sum(r.fn(*primals), ws)
        grads = [dense(g) for g in tape.gradient(loss, primals)]
    for i, (g, want) in enumerate(zip(grads, hvp_fd(r, xs, ws, ts), strict=True)):
        hv = acc.jvp(g, unconnected_gradients="zero").numpy()
        np.testing.assert_allclose(hv, want, rtol=1e-5, atol=1e-5, err_msg=f"input {i}")


@pytest.mark.parametrize("r", SECOND, ids=[r.name for r in SECOND])
def test_hvp_reverse_over_forward(r):
    xs, ws, ts = case(r)
    primals = [tf.constant(x) for x in xs]
    with tf.GradientTape() as tape:
        tape.watch(primals)
        with FwdAcc(primals, [tf.constant(t) for t in ts]) as acc:
            ys = outs(r.fn(*primals))
        directional = weighted_sum([acc.jvp(y, unconnected_gradients="zero") for y in ys], ws)
    hvs = tape.gradient(directional, primals)
    for i, (hv, want) in enumerate(zip(hvs, hvp_fd(r, xs, ws, ts), strict=True)):
        hv = np.zeros_like(xs[i]) if hv is None else dense(hv).numpy()
        np.testing.assert_allclose(hv, want, rtol=1e-5, atol=1e-5, err_msg=f"input {i}")


# ----------------------------------------------------------------------------- semantics


def test_docstring_example_and_primal_tangent():
    x = tf.constant([1.0, 2.0])
    t = tf.constant([1.0, 0.0])
    with FwdAcc(x, t) as acc:
        y = tf.reduce_sum(x**3.0)
    assert float(acc.jvp(y)) == pytest.approx(3.0)
    np.testing.assert_array_equal(acc.jvp(x).numpy(), [1.0, 0.0])  # a primal's own tangent


def test_several_primals_sum_their_contributions():
    a, b = tf.constant(2.0, tf.float64), tf.constant(5.0, tf.float64)
    with FwdAcc({"a": a, "b": [b]}, {"a": 1.0, "b": [3.0]}) as acc:
        y = a * b + tf.sin(b)
    # dy = b da + (a + cos b) db
    assert float(acc.jvp(y)) == pytest.approx(5.0 + 3.0 * (2.0 + np.cos(5.0)))


def test_jvp_returns_the_structure_and_unconnected():
    x = tf.constant([1.0, 2.0])
    c = tf.constant([3.0, 4.0])
    with FwdAcc(x, tf.constant([1.0, 1.0])) as acc:
        y = 2.0 * x
        z = c * 2.0
    out = acc.jvp({"y": y, "rest": [z, x]})
    np.testing.assert_array_equal(out["y"].numpy(), [2.0, 2.0])
    assert out["rest"][0] is None
    zero = acc.jvp(z, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert zero.dtype == tf.float32
    np.testing.assert_array_equal(zero.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(acc.jvp(z, unconnected_gradients="zero").numpy(), [0, 0])


def test_values_computed_outside_the_block_have_no_tangent():
    x = tf.constant(1.5)
    before = x * 3.0
    acc = FwdAcc(x, tf.constant(1.0))
    with acc:
        inside = before + x
    after = x * 2.0
    assert acc.jvp(before) is None
    assert acc.jvp(after) is None
    assert float(acc.jvp(inside)) == 1.0


def test_non_differentiable_results_have_no_tangent():
    x = tf.constant([1.0, 3.0, 2.0])
    with FwdAcc(x, tf.constant([1.0, 1.0, 1.0])) as acc:
        stopped = tf.stop_gradient(x) * 2.0
        as_int = tf.cast(x, tf.int32)
        arg = tf.argmax(x)
    assert acc.jvp(stopped) is None
    assert acc.jvp(as_int) is None
    assert acc.jvp(arg) is None


def test_variables_as_primals_and_dense_layer():
    x = tf.constant([[2.0, 3.0], [1.0, 4.0]])
    targets = tf.constant([[1.0], [-1.0]])
    dense_layer = tf.keras.layers.Dense(1)
    dense_layer.build((None, 2))
    loss_fn = lambda: tf.reduce_sum((dense_layer(x) - targets) ** 2.0)  # noqa: E731
    columns = []
    for tangent in ([[1.0], [0.0]], [[0.0], [1.0]]):
        with FwdAcc(dense_layer.kernel, tf.constant(tangent)) as acc:
            columns.append(float(acc.jvp(loss_fn())))
    np.testing.assert_array_equal(acc.jvp(dense_layer.kernel).numpy(), [[0.0], [1.0]])
    with tf.GradientTape() as tape:
        loss = loss_fn()
    grad = tape.gradient(loss, dense_layer.kernel).numpy()
    np.testing.assert_allclose(columns, grad[:, 0], rtol=1e-5)


def test_control_flow_runs_eagerly_with_tangents():
    x = tf.constant(0.7, tf.float64)
    with FwdAcc(x, tf.constant(1.0, tf.float64)) as acc:
        y = tf.cond(x > 0.0, lambda: tf.sin(x) * x, lambda: tf.cos(x))
        _, z = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), (0, x))
    # d(x sin x) = sin x + x cos x; z = x**4, dz = 4 x**3
    assert float(acc.jvp(y)) == pytest.approx(np.sin(0.7) + 0.7 * np.cos(0.7))
    assert float(acc.jvp(z)) == pytest.approx(4 * 0.7**3)


def test_custom_gradient_jvp_uses_its_gradient():
    @tf.custom_gradient
    def scaled(x):
        def grad(upstream):
            return upstream * 10.0  # deliberately not the true derivative

        return x * 2.0, grad

    x = tf.constant(1.0)
    with FwdAcc(x, tf.constant(1.0)) as acc:
        y = scaled(x)
    assert float(acc.jvp(y)) == 10.0


# ----------------------------------------------------------------------------- nesting


def test_hvp_tape_outside_accumulator():
    x = tf.constant([1.0, 2.0], tf.float64)
    v = tf.constant([1.0, -1.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with FwdAcc(x, v) as acc:
            y = tf.reduce_sum(x**3.0)
        jvp = acc.jvp(y)
    # H = diag(6 x)
    np.testing.assert_allclose(tape.gradient(jvp, x).numpy(), [6.0, -12.0])


def test_tape_inside_accumulator_ignores_its_jvps():
    x = tf.constant([1.0, 2.0])
    with FwdAcc(x, tf.constant([1.0, 0.0])) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.sin(x)
        assert tape.gradient(acc.jvp(y), x) is None


def test_higher_order_forward_outer_sees_inner():
    primal = tf.constant(1.1, tf.float64)
    one = tf.constant(1.0, tf.float64)
    with FwdAcc(primal, one) as outer:
        with FwdAcc(primal, one) as inner:
            out = primal ** tf.constant(3.5, tf.float64)
    inner_jvp = inner.jvp(out)
    assert float(inner_jvp) == pytest.approx(3.5 * 1.1**2.5)
    assert float(outer.jvp(inner_jvp)) == pytest.approx(3.5 * 2.5 * 1.1**1.5)
    # Reversed, the inner accumulator never saw the outer one's computation.
    assert inner.jvp(outer.jvp(out)) is None


def test_third_order_forward():
    x = tf.constant(0.3, tf.float64)
    one = tf.constant(1.0, tf.float64)
    with FwdAcc(x, one) as a1:
        with FwdAcc(x, one) as a2:
            with FwdAcc(x, one) as a3:
                y = tf.exp(2.0 * x)
    third = a1.jvp(a2.jvp(a3.jvp(y)))
    assert float(third) == pytest.approx(8.0 * np.exp(0.6))


# ----------------------------------------------------------------------------- ft.function


def test_function_called_under_an_accumulator_runs_eagerly():
    calls = []

    @tf.function
    def f(a):
        calls.append(1)
        return tf.sin(a) * 2.0

    x = tf.constant([0.5, 1.0])
    f(x)  # traced once without an accumulator
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # silently eager, as under a tape
        with FwdAcc(x, tf.constant([1.0, 0.0])) as acc:
            y = f(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), [2.0 * np.cos(0.5), 0.0], rtol=1e-6)
    assert len(calls) == 2


def test_accumulator_inside_a_traced_function():
    @tf.function
    def jvp_of_sin(a, t):
        with FwdAcc(a, t) as acc:
            y = tf.sin(a) * a
        return acc.jvp(y)

    x = tf.constant([0.5, 1.0], tf.float64)
    t = tf.constant([1.0, 2.0], tf.float64)
    want = (np.sin([0.5, 1.0]) + [0.5, 1.0] * np.cos([0.5, 1.0])) * [1.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # traced and replayed, not refused
        first = jvp_of_sin(x, t)
        again = jvp_of_sin(x * 2.0, t)
    np.testing.assert_allclose(first.numpy(), want)
    x2 = np.array([1.0, 2.0])
    np.testing.assert_allclose(again.numpy(), (np.sin(x2) + x2 * np.cos(x2)) * [1.0, 2.0])
    assert jvp_of_sin.experimental_get_tracing_count() == 1


# ----------------------------------------------------------------------------- errors


def test_structure_errors():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(ValueError, match="same nested structure"):
        FwdAcc([x], [x, x])
    with pytest.raises(ValueError, match="same nested structure"):
        FwdAcc(x, [1.0, 0.0])  # a list is a structure, as in TensorFlow
    with pytest.raises(TypeError, match="sequence type"):
        FwdAcc([x], (x,))


def test_primal_twice():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(ValueError, match="specified as a primal multiple times"):
        FwdAcc([x, x], [x, x])


def test_primal_and_tangent_type_shape_dtype():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(TypeError, match="primals must be Tensors or Variables, received float"):
        FwdAcc(1.0, 1.0)
    with pytest.raises(ValueError, match=r"expected to be of shape \(2,\).*shape \(3,\)"):
        FwdAcc(x, tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="dtype float32, received dtype float64"):
        FwdAcc(x, tf.constant([1.0, 2.0], tf.float64))
    acc = FwdAcc(x, np.array([1.0, 0.0]))  # host values convert to the primal's dtype
    assert acc.jvp(x).dtype == tf.float32


def test_enter_twice_and_bad_jvp_arguments():
    x = tf.constant(1.0)
    acc = FwdAcc(x, tf.constant(1.0))
    with acc:
        with pytest.raises(ValueError, match="Accumulator is already recording"):
            acc.__enter__()
    with pytest.raises(ValueError, match="is not a valid UnconnectedGradients"):
        acc.jvp(x, unconnected_gradients="sometimes")
    with pytest.raises(TypeError, match="expected Tensors or Variables, received float"):
        acc.jvp(1.0)


def test_autodiff_namespace():
    assert tf.autodiff.GradientTape is tf.GradientTape
    assert tf.autodiff.ForwardAccumulator is FwdAcc


def test_a_jvp_that_cannot_be_computed_raises_from_jvp():
    # igamma's derivative in `a` has no derivative of its own (as in TensorFlow), so a second
    # forward derivative in `a` fails; the op itself ran, and jvp() reports the failure.
    a, x = tf.constant(1.5, tf.float64), tf.constant(0.7, tf.float64)
    one = tf.constant(1.0, tf.float64)
    with FwdAcc(a, one) as outer:
        with FwdAcc(a, one) as inner:
            y = tf.math.igamma(a, x)
    first = inner.jvp(y)
    assert first is not None
    with pytest.raises(
        tf.errors.UnimplementedError, match="no gradient is defined for IgammaGradA"
    ):
        outer.jvp(first)


class Chain:
    """Layers applied in turn, all in float64 (a Sequential would compute in its own float32)."""

    def __init__(self, *layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    @property
    def trainable_weights(self):
        return [w for layer in self.layers for w in layer.trainable_weights]


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda: tf.keras.layers.LSTM(4, dtype="float64"), (2, 3, 3)),
        (lambda: tf.keras.layers.GRU(4, dtype="float64"), (2, 3, 3)),
        (
            lambda: Chain(
                tf.keras.layers.Conv2D(3, 3, activation="relu", dtype="float64"),
                tf.keras.layers.MaxPooling2D(dtype="float64"),
                tf.keras.layers.Flatten(dtype="float64"),
                tf.keras.layers.Dense(2, activation="tanh", dtype="float64"),
            ),
            (2, 6, 6, 2),
        ),
    ],
    ids=["lstm", "gru", "cnn"],
)
def test_keras_models_jvp_in_their_weights_and_inputs(make, shape):
    rng = np.random.default_rng(7)
    model = make()
    x = tf.constant(rng.normal(size=shape))
    model(x)  # builds the weights
    weights = model.trainable_weights
    primals = [x, *weights]
    tangents = [rng.normal(size=tuple(p.shape)) for p in primals]
    with FwdAcc(primals, [tf.constant(t) for t in tangents]) as acc:
        y = model(x)

    def shifted(sign):
        originals = [w.numpy() for w in weights]
        for w, t in zip(weights, tangents[1:], strict=True):
            w.assign(w.numpy() + sign * 1e-6 * t)
        out = model(tf.constant(x.numpy() + sign * 1e-6 * tangents[0])).numpy()
        for w, v in zip(weights, originals, strict=True):
            w.assign(v)
        return out

    want = (shifted(1.0) - shifted(-1.0)) / 2e-6
    np.testing.assert_allclose(acc.jvp(y).numpy(), want, rtol=1e-5, atol=1e-7)
