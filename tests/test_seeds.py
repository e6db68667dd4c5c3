"""The seed tutorials, snippet by snippet, checked against the values they print.

One test per runnable snippet of seeds 001 (tape basics), 000 (its tape snippets and linear
regression), 003 (advanced tape) and 004 (TensorFlow's advanced autodiff guide). Where a
tutorial's claim is no longer what TensorFlow 2.21 does, the test follows TensorFlow and says so
(DESIGN.md section 6). Most seed 004 tests write its Keras layers as `tf.Variable`s (a dense layer
is `activation(x @ kernel + bias)`) in float64, to compare with finite differences; the `keras`
tests run the guide's real Keras layers. The example programs in `examples/` are run by
`test_examples.py`.
"""

import logging
import math
import re
import warnings

import numpy as np
import pytest

import ferrotape as tf

NON_PERSISTENT_MESSAGE = (
    "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)"
)


def assert_close(actual, expected, rtol=1e-5, atol=1e-6):
    assert actual is not None, "expected a tensor, got None"
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol, atol=atol)


def scalar_in_str(text, dtype="float32"):
    """The value printed by `print(scalar_tensor)`: `tf.Tensor(40.000004, shape=(), dtype=...)`."""
    match = re.fullmatch(r"tf\.Tensor\((\S+), shape=\(\), dtype=" + dtype + r"\)", text)
    assert match, f"not a scalar {dtype} tensor's str(): {text!r}"
    return float(match.group(1))


# ---------------------------------------------------------------- seed 001: tape basics


def test_001_gradient_of_a_float_variable():
    x = tf.Variable(20.0)
    assert repr(x) == "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=20.0>"
    assert str(x) == repr(x)  # print(x)
    with tf.GradientTape() as tape:
        y = x**2
    dy_dx = tape.gradient(y, x)
    # The tutorial prints tf.Tensor(40.000004, ...): 2 * 20 up to float32 rounding.
    assert scalar_in_str(str(dy_dx)) == pytest.approx(40.0, rel=1e-6)
    assert dy_dx.dtype == tf.float32


def test_001_integer_variable_gives_none_without_printed_warnings(caplog):
    x = tf.Variable(30)
    assert repr(x) == "<tf.Variable 'Variable:0' shape=() dtype=int32, numpy=30>"
    with tf.GradientTape() as tape:
        y = x**3
    assert str(y) == "tf.Tensor(27000, shape=(), dtype=int32)"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with caplog.at_level(logging.WARNING):
            dy_dx = tape.gradient(y, x)
    assert dy_dx is None
    # The tutorial shows two "dtype ... must be floating" warnings; TF 2.21 only logs them at a
    # verbose level, so nothing is printed (DESIGN.md section 6).
    assert not [w for w in caught if "floating" in str(w.message)]
    assert not [r for r in caplog.records if "floating" in r.getMessage()]


def test_001_integer_value_with_float32_dtype():
    x = tf.Variable(30, dtype=tf.float32)
    assert repr(x) == "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=30.0>"
    with tf.GradientTape() as tape:
        y = x**3
    dy_dx = tape.gradient(y, x)
    # The tutorial prints 2699.9998.
    assert scalar_in_str(str(dy_dx)) == pytest.approx(2700.0, rel=1e-6)


def test_001_1d_variable():
    x = tf.Variable([1.0, 2.0, 3.0], dtype=tf.float32)
    with tf.GradientTape() as tape:
        y = x**3
    assert str(y) == "tf.Tensor([ 1.  8. 27.], shape=(3,), dtype=float32)"
    dy_dx = tape.gradient(y, x)
    assert_close(dy_dx, [3.0, 12.0, 27.0])
    assert tuple(dy_dx.shape) == (3,)


def test_001_unwatched_constant_gives_none():
    x = tf.constant(3.0)
    assert str(x) == "tf.Tensor(3.0, shape=(), dtype=float32)"
    with tf.GradientTape() as tape:
        y = x**2
    assert tape.gradient(y, x) is None


def test_001_watched_constant():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**2
    dy_dx = tape.gradient(y, x)
    assert str(dy_dx) == "tf.Tensor(6.0, shape=(), dtype=float32)"


def test_001_non_trainable_variable_is_not_watched():
    x = tf.Variable(5.0, trainable=False)
    with tf.GradientTape() as tape:
        y = x**3
    assert tape.gradient(y, x) is None


def test_001_non_trainable_variable_watched_explicitly():
    x = tf.Variable(5.0, trainable=False)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**3
    # The tutorial prints 74.99999.
    assert scalar_in_str(str(tape.gradient(y, x))) == pytest.approx(75.0, rel=1e-6)


def test_001_watch_accessed_variables_true():
    x0 = tf.Variable(5.0)
    with tf.GradientTape(watch_accessed_variables=True) as tape:
        y0 = x0**2
    assert str(tape.gradient(y0, x0)) == "tf.Tensor(10.0, shape=(), dtype=float32)"


def test_001_watch_accessed_variables_false():
    x0 = tf.Variable(5.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y0 = x0**2
    assert tape.gradient(y0, x0) is None


def test_001_watch_accessed_variables_false_with_watch():
    x0 = tf.Variable(5.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x0)
        y0 = x0**2
    assert str(tape.gradient(y0, x0)) == "tf.Tensor(10.0, shape=(), dtype=float32)"


def test_001_second_gradient_on_non_persistent_tape_raises():
    x0 = tf.Variable(5.0)
    x1 = tf.Variable(10.0)
    with tf.GradientTape() as tape:
        y0 = x0**2
        y1 = x1**2
    assert_close(tape.gradient(y0, x0), 10.0)
    with pytest.raises(RuntimeError) as caught:
        tape.gradient(y1, x1)
    assert str(caught.value) == NON_PERSISTENT_MESSAGE  # the tutorial's exact message


def test_001_persistent_tape_two_gradients():
    x0 = tf.Variable(5.0)
    x1 = tf.Variable(10.0)
    with tf.GradientTape(persistent=True) as tape:
        y0 = x0**2
        y1 = x1**2
    dy_dx0 = tape.gradient(y0, x0)
    dy_dx1 = tape.gradient(y1, x1)
    assert str(dy_dx0) == "tf.Tensor(10.0, shape=(), dtype=float32)"
    assert str(dy_dx1) == "tf.Tensor(20.0, shape=(), dtype=float32)"


def test_001_combined_block_f_strings():
    # An f-string formats a tensor through its NumPy value (TF's EagerTensor.__format__), so the
    # combined block prints `...: 40.0`, not `...: tf.Tensor(40.0, ...)`.
    x = tf.Variable(20.0, dtype=tf.float32)
    with tf.GradientTape() as tape:
        y = x**2
    dy_dx = tape.gradient(y, x)
    text = f"TensorFlow GradientTape on a floating variable: {dy_dx}"
    prefix = "TensorFlow GradientTape on a floating variable: "
    assert text.startswith(prefix)
    assert float(text[len(prefix) :]) == pytest.approx(40.0, rel=1e-6)

    x = tf.Variable(30)
    with tf.GradientTape() as tape:
        y = x**3
    assert f"{tape.gradient(y, x)}" == "None"

    x = tf.Variable([1.0, 2.0, 3.0], dtype=tf.float32)
    with tf.GradientTape() as tape:
        y = x**3
    assert f"{tape.gradient(y, x)}" == "[ 3. 12. 27.]"


# ---------------------------------------------------------------- seed 000: tape snippets


def test_000_in9_watched_constant():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**3
    assert tape.gradient(y, x).numpy() == pytest.approx(27.0, rel=1e-6)


def test_000_in10_trainable_variable_is_watched():
    x = tf.Variable(3.0, trainable=True)
    with tf.GradientTape() as tape:
        y = x**3
    assert tape.gradient(y, x).numpy() == pytest.approx(27.0, rel=1e-6)


def test_000_in11_watch_accessed_variables_false():
    x = tf.Variable(3.0, trainable=True)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y = x**3
    assert tape.gradient(y, x) is None


def test_000_in12_second_order():
    x = tf.Variable(3.0, trainable=True)
    with tf.GradientTape() as tape1:
        with tf.GradientTape() as tape2:
            y = x**3
        order_1 = tape2.gradient(y, x)
    order_2 = tape1.gradient(order_1, x)
    assert order_1.numpy() == pytest.approx(27.0, rel=1e-6)
    assert order_2.numpy() == pytest.approx(18.0, rel=1e-6)


def test_000_second_gradient_raises():
    a = tf.Variable(6.0, trainable=True)
    b = tf.Variable(2.0, trainable=True)
    with tf.GradientTape() as tape:
        y1 = a**2
        y2 = b**3
    assert tape.gradient(y1, a).numpy() == pytest.approx(12.0)
    with pytest.raises(RuntimeError, match=re.escape(NON_PERSISTENT_MESSAGE)):
        tape.gradient(y2, b)


def test_000_in13_persistent():
    a = tf.Variable(6.0, trainable=True)
    b = tf.Variable(2.0, trainable=True)
    with tf.GradientTape(persistent=True) as tape:
        y1 = a**2
        y2 = b**3
    assert tape.gradient(y1, a).numpy() == pytest.approx(12.0, rel=1e-6)
    assert tape.gradient(y2, b).numpy() == pytest.approx(12.0, rel=1e-6)


def test_000_in14_gradients_inside_stop_recording():
    a = tf.Variable(6.0, trainable=True)
    b = tf.Variable(2.0, trainable=True)
    printed = []
    with tf.GradientTape(persistent=True) as tape:
        y1 = a**2
        with tape.stop_recording():
            printed.append(tape.gradient(y1, a).numpy())
        y2 = b**3
        with tape.stop_recording():
            printed.append(tape.gradient(y2, b).numpy())
    np.testing.assert_allclose(printed, [12.0, 12.0], rtol=1e-6)
    # y2 was recorded after the first stop_recording block ended.
    assert tape.gradient(y2, b).numpy() == pytest.approx(12.0, rel=1e-6)


def linear_regression_numpy(a, b, x, y, steps):
    """The seed's training loop in float32 NumPy: d|y - (a x + b)|/da = -sign(y - a x - b) x."""
    a, b = np.float32(a), np.float32(b)
    lr = np.float32(0.001)
    for _ in range(steps):
        sign = np.sign((a * x + b) - y).astype(np.float32)
        a = np.float32(a - np.float32((sign * x).sum()) * lr)
        b = np.float32(b - np.float32(sign.sum()) * lr)
    return a, b


def test_000_linear_regression_steps_match_numpy():
    def loss(real_y, pred_y):
        return tf.abs(real_y - pred_y)

    x_train = np.asarray([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    y_train = np.asarray([i * 10 + 5 for i in x_train])
    assert x_train.dtype == np.int64
    a = tf.Variable(0.25, trainable=True)
    b = tf.Variable(0.75, trainable=True)

    def step(real_x, real_y):
        with tf.GradientTape(persistent=True) as tape:
            pred_y = a * real_x + b
            reg_loss = loss(real_y, pred_y)
        a_gradients, b_gradients = tape.gradient(reg_loss, (a, b))
        a.assign_sub(a_gradients * 0.001)
        b.assign_sub(b_gradients * 0.001)
        return pred_y, reg_loss, a_gradients, b_gradients

    pred_y, reg_loss, a_grad, b_grad = step(x_train, y_train)
    # `a * int64 array` converts the array to float32, as TF's operators do.
    assert pred_y.dtype == tf.float32 and tuple(pred_y.shape) == (11,)
    assert reg_loss.dtype == tf.float32 and tuple(reg_loss.shape) == (11,)
    assert_close(reg_loss, np.abs(y_train - (0.25 * x_train + 0.75)))
    # Every prediction is too low: the summed loss has gradient -sum(x) and -11.
    assert_close(a_grad, -55.0)
    assert_close(b_grad, -11.0)
    for _ in range(299):
        step(x_train, y_train)
    a_ref, b_ref = linear_regression_numpy(0.25, 0.75, x_train.astype("float32"), y_train, 300)
    assert a.numpy() == pytest.approx(a_ref, abs=1e-3)
    assert b.numpy() == pytest.approx(b_ref, abs=1e-3)


# ---------------------------------------------------------------- seed 003: advanced tape


def test_003_core_concepts():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x**2
    assert tape.gradient(y, x).numpy() == pytest.approx(6.0, rel=1e-6)


def test_003_second_order():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape2:
        with tf.GradientTape() as tape1:
            y = x**3
        dy_dx = tape1.gradient(y, x)
    d2y_dx2 = tape2.gradient(dy_dx, x)
    assert dy_dx.numpy() == pytest.approx(27.0, rel=1e-6)
    assert d2y_dx2.numpy() == pytest.approx(18.0, rel=1e-6)


def test_003_hessian():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape2:
        with tf.GradientTape() as tape1:
            y = x[0] ** 2 + x[1] ** 2
        grad = tape1.gradient(y, x)
    hessian = tape2.jacobian(grad, x)
    assert_close(grad, [2.0, 4.0])
    assert tuple(hessian.shape) == (2, 2)
    assert_close(hessian, [[2.0, 0.0], [0.0, 2.0]])


def mse_grad(w, target):
    """d/dw mean((target - x @ w)^2) for x = [[1, 2]]: -2 (target - x w) x^T."""
    x = np.array([[1.0, 2.0]])
    return -2.0 * (target - x @ w) * x.T


def test_003_gradient_clipping():
    tf.random.set_seed(3)
    w = tf.Variable(tf.random.normal([2, 1]))
    x = tf.constant([[1.0, 2.0]])
    y_true = tf.constant([[3.0]])
    with tf.GradientTape() as tape:
        y_pred = tf.matmul(x, w)
        loss = tf.reduce_mean(tf.square(y_true - y_pred))
    grads = tape.gradient(loss, w)
    clipped_grads = tf.clip_by_norm(grads, 1.0)
    expected = mse_grad(w.numpy().astype(np.float64), 3.0)
    assert_close(grads, expected, rtol=1e-4)
    assert_close(clipped_grads, expected * min(1.0, 1.0 / np.linalg.norm(expected)), rtol=1e-4)
    assert tuple(clipped_grads.shape) == (2, 1)


def test_003_gradient_clipping_clips():
    w = tf.Variable([[0.0], [0.0]])
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.constant([[3.0]]) - tf.matmul(x, w)))
    grads = tape.gradient(loss, w)
    assert_close(grads, [[-6.0], [-12.0]])
    assert_close(tf.clip_by_norm(grads, 1.0), [[-1.0 / math.sqrt(5)], [-2.0 / math.sqrt(5)]])


def test_003_gradient_scaling_iterates_rows():
    w = tf.Variable([[0.5], [-1.0]])
    x = tf.constant([[1.0, 2.0]])
    y_true = tf.constant([[3.0]])
    with tf.GradientTape() as tape:
        y_pred = tf.matmul(x, w)
        loss = tf.reduce_mean(tf.square(y_true - y_pred))
    grads = tape.gradient(loss, w)
    scaled_grads = [g * 0.5 for g in grads]
    # `grads` is a single (2, 1) tensor, so the comprehension iterates over its rows
    # (DESIGN.md section 6); the tutorial's `scaled_grads.numpy()` fails on the list in TF too.
    assert len(scaled_grads) == 2
    expected = 0.5 * mse_grad(w.numpy().astype(np.float64), 3.0)
    for row, want in zip(scaled_grads, expected, strict=True):
        assert tuple(row.shape) == (1,)
        assert_close(row, want)


def test_003_jacobian():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.stack([x[0] ** 2, x[1] ** 3])
    jacobian = tape.jacobian(y, x)
    assert tuple(jacobian.shape) == (2, 2)
    assert_close(jacobian, [[2.0, 0.0], [0.0, 12.0]])


def test_003_vector_jacobian_product():
    x = tf.Variable([1.0, 2.0])
    v = tf.constant([1.0, 1.0])
    with tf.GradientTape() as tape:
        y = tf.stack([x[0] ** 2, x[1] ** 3])
    jacobian_v = tape.gradient(y, x, output_gradients=v)
    assert_close(jacobian_v, [2.0, 12.0])


def test_003_persistent_tape_two_losses():
    tf.random.set_seed(4)
    w = tf.Variable(tf.random.normal([2, 1]))
    x = tf.constant([[1.0, 2.0]])
    y1 = tf.constant([[3.0]])
    y2 = tf.constant([[4.0]])
    with tf.GradientTape(persistent=True) as tape:
        y_pred = tf.matmul(x, w)
        loss1 = tf.reduce_mean(tf.square(y1 - y_pred))
        loss2 = tf.reduce_mean(tf.square(y2 - y_pred))
    grad1 = tape.gradient(loss1, w)
    grad2 = tape.gradient(loss2, w)
    del tape
    w64 = w.numpy().astype(np.float64)
    assert_close(grad1, mse_grad(w64, 3.0), rtol=1e-4)
    assert_close(grad2, mse_grad(w64, 4.0), rtol=1e-4)


class MLP(tf.Module):
    """Seed 003's MLP, with explicit initial values so a NumPy reference can follow it."""

    def __init__(self, w1, b1, w2, b2):
        super().__init__()
        self.w1 = tf.Variable(w1)
        self.b1 = tf.Variable(b1)
        self.w2 = tf.Variable(w2)
        self.b2 = tf.Variable(b2)

    def __call__(self, x):
        h1 = tf.nn.relu(tf.matmul(x, self.w1) + self.b1)
        return tf.matmul(h1, self.w2) + self.b2


def mlp_train_step(model, x, y, learning_rate):
    """Seed 003's train_step with SGD (`assign_sub`) in place of Adam."""
    with tf.GradientTape(persistent=True) as tape:
        y_pred = model(x)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, y_pred))
        l2_loss = 0.01 * (tf.reduce_sum(tf.square(model.w1)) + tf.reduce_sum(tf.square(model.w2)))
        total_loss = loss + l2_loss
    vars = [model.w1, model.b1, model.w2, model.b2]
    grads = tape.gradient(total_loss, vars)
    clipped_grads = [tf.clip_by_norm(g, 1.0) if g is not None else g for g in grads]
    for g, v in zip(clipped_grads, vars, strict=True):
        v.assign_sub(learning_rate * g)
    del tape
    return loss


def mlp_numpy_step(params, x, y, learning_rate):
    """One step of mlp_train_step in float64 NumPy: loss before the step, and updated params."""
    w1, b1, w2, b2 = params
    z1 = x @ w1 + b1
    h1 = np.maximum(z1, 0.0)
    logits = h1 @ w2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = np.mean(-(y * log_p).sum(axis=1))
    d_logits = (np.exp(log_p) - y) / len(x)
    d_w2 = h1.T @ d_logits + 0.02 * w2
    d_b2 = d_logits.sum(axis=0)
    d_z1 = (d_logits @ w2.T) * (z1 > 0)
    d_w1 = x.T @ d_z1 + 0.02 * w1
    d_b1 = d_z1.sum(axis=0)
    new = []
    for p, g in zip(params, (d_w1, d_b1, d_w2, d_b2), strict=True):
        g = g * min(1.0, 1.0 / np.linalg.norm(g))
        new.append(p - learning_rate * g)
    return loss, new


def test_003_mlp_training_step_matches_numpy():
    rng = np.random.default_rng(0)
    n, n_in, n_hidden, n_out = 32, 6, 16, 3
    centres = rng.normal(scale=2.0, size=(n_out, n_in))
    labels = rng.integers(0, n_out, size=n)
    x = (centres[labels] + rng.normal(size=(n, n_in))).astype("float32")
    y = np.eye(n_out, dtype="float32")[labels]
    params = [
        rng.normal(scale=0.5, size=(n_in, n_hidden)).astype("float32"),
        np.zeros(n_hidden, dtype="float32"),
        rng.normal(scale=0.5, size=(n_hidden, n_out)).astype("float32"),
        np.zeros(n_out, dtype="float32"),
    ]
    model = MLP(*params)
    assert len(model.trainable_variables) == 4
    ref = [p.astype(np.float64) for p in params]
    losses = []
    for _ in range(3):
        loss = mlp_train_step(model, x, y, learning_rate=0.1)
        ref_loss, ref = mlp_numpy_step(ref, x.astype(np.float64), y.astype(np.float64), 0.1)
        assert loss.numpy() == pytest.approx(ref_loss, rel=1e-4)
        for var, want in zip([model.w1, model.b1, model.w2, model.b2], ref, strict=True):
            assert_close(var, want, rtol=1e-4, atol=1e-5)
        losses.append(float(loss.numpy()))
    for _ in range(30):
        losses.append(float(mlp_train_step(model, x, y, learning_rate=0.1).numpy()))
    assert losses[-1] < 0.5 * losses[0]


class Generator(tf.Module):
    def __init__(self, n_noise, n_hidden, n_out):
        super().__init__()
        self.w1 = tf.Variable(tf.random.normal([n_noise, n_hidden]))
        self.b1 = tf.Variable(tf.zeros([n_hidden]))
        self.w2 = tf.Variable(tf.random.normal([n_hidden, n_out]))
        self.b2 = tf.Variable(tf.zeros([n_out]))

    def __call__(self, z):
        h1 = tf.nn.relu(tf.matmul(z, self.w1) + self.b1)
        return tf.nn.tanh(tf.matmul(h1, self.w2) + self.b2)


class Discriminator(tf.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.w1 = tf.Variable(tf.random.normal([n_in, n_hidden]))
        self.b1 = tf.Variable(tf.zeros([n_hidden]))
        self.w2 = tf.Variable(tf.random.normal([n_hidden, 1]))
        self.b2 = tf.Variable(tf.zeros([1]))

    def __call__(self, x):
        h1 = tf.nn.relu(tf.matmul(x, self.w1) + self.b1)
        return tf.matmul(h1, self.w2) + self.b2


def d_loss(real_output, fake_output):
    real_loss = tf.reduce_mean(
        tf.nn.sigmoid_cross_entropy_with_logits(tf.ones_like(real_output), real_output)
    )
    fake_loss = tf.reduce_mean(
        tf.nn.sigmoid_cross_entropy_with_logits(tf.zeros_like(fake_output), fake_output)
    )
    return real_loss + fake_loss


def g_loss(fake_output):
    return tf.reduce_mean(
        tf.nn.sigmoid_cross_entropy_with_logits(tf.ones_like(fake_output), fake_output)
    )


def test_003_gan_step_with_persistent_tape():
    tf.random.set_seed(5)
    generator = Generator(n_noise=4, n_hidden=8, n_out=6)
    discriminator = Discriminator(n_in=6, n_hidden=8)
    x = tf.constant(np.random.default_rng(1).uniform(-1, 1, size=(10, 6)).astype("float32"))
    z = tf.random.normal([10, 4])
    with tf.GradientTape(persistent=True) as tape:
        fake_images = generator(z)
        real_output = discriminator(x)
        fake_output = discriminator(fake_images)
        g_loss_val = g_loss(fake_output)
        d_loss_val = d_loss(real_output, fake_output)
    g_vars = [generator.w1, generator.b1, generator.w2, generator.b2]
    d_vars = [discriminator.w1, discriminator.b1, discriminator.w2, discriminator.b2]
    g_grads = tape.gradient(g_loss_val, g_vars)
    d_grads = tape.gradient(d_loss_val, d_vars)
    del tape
    for grads, variables in ((g_grads, g_vars), (d_grads, d_vars)):
        assert isinstance(grads, list) and len(grads) == 4
        for g, v in zip(grads, variables, strict=True):
            assert g is not None and tuple(g.shape) == tuple(v.shape)
            assert np.all(np.isfinite(g.numpy()))

    def softplus(t):
        return np.logaddexp(0.0, t)

    real = real_output.numpy().astype(np.float64)
    fake = fake_output.numpy().astype(np.float64)
    assert g_loss_val.numpy() == pytest.approx(np.mean(softplus(-fake)), rel=1e-4)
    assert d_loss_val.numpy() == pytest.approx(
        np.mean(softplus(-real)) + np.mean(softplus(fake)), rel=1e-4
    )
    # d d_loss / d b2 = mean(sigmoid(real) - 1) + mean(sigmoid(fake)).
    sigmoid = 1.0 / (1.0 + np.exp(-np.concatenate([real, fake])))
    expected_db2 = np.mean(sigmoid[: len(real)] - 1.0) + np.mean(sigmoid[len(real) :])
    assert_close(d_grads[3], [expected_db2], rtol=1e-4)


# ---------------------------------------------------------------- seed 004: autodiff guide


def test_004_stop_recording():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    assert isinstance(grad, dict) and set(grad) == {"x", "y"}
    assert str(grad["x"]) == "tf.Tensor(4.0, shape=(), dtype=float32)"
    assert grad["y"] is None


def test_004_reset():
    # The seed lost the `t.reset()` line; restored from TF's guide (DESIGN.md section 6).
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    reset = True
    with tf.GradientTape() as t:
        y_sq = y * y
        if reset:
            t.reset()
        z = x * x + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    assert str(grad["x"]) == "tf.Tensor(4.0, shape=(), dtype=float32)"
    assert grad["y"] is None


def test_004_stop_gradient():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y_sq = y**2
        z = x**2 + tf.stop_gradient(y_sq)
    grad = t.gradient(z, {"x": x, "y": y})
    assert grad["x"].numpy() == pytest.approx(4.0, rel=1e-6)
    assert grad["y"] is None


def test_004_custom_gradient_clips():
    # The seed lost the `@tf.custom_gradient` decorator; restored from TF's guide.
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)

        return y, backward

    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = clip_gradients(v * v)
    assert output.numpy() == pytest.approx(4.0)
    # backward clips dy = 1 to 0.5; then d(v*v)/dv = 2v = 4 scales it to 2.
    assert str(t.gradient(output, v)) == "tf.Tensor(2.0, shape=(), dtype=float32)"


def test_004_multiple_tapes():
    x0 = tf.constant(0.0)
    x1 = tf.constant(0.0)
    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.sigmoid(x1)
        y = y0 + y1
        ys = tf.reduce_sum(y)
    assert tape0.gradient(ys, x0).numpy() == pytest.approx(1.0)
    assert tape1.gradient(ys, x1).numpy() == pytest.approx(0.25)


def test_004_higher_order():
    x = tf.Variable(1.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    assert dy_dx.numpy() == pytest.approx(3.0)
    assert d2y_dx2.numpy() == pytest.approx(6.0)


def test_004_input_gradient_regularization():
    rng = np.random.default_rng(2)
    x = tf.constant(rng.normal(size=(7, 5)))
    kernel = rng.normal(scale=0.5, size=(5, 10))
    bias = rng.normal(scale=0.1, size=10)
    k, b = tf.Variable(kernel), tf.Variable(bias)
    with tf.GradientTape() as t2:
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            out = tf.reduce_sum(tf.nn.relu(tf.matmul(x, k) + b) ** 2)
        g1 = t1.gradient(out, x)
        g1_mag = tf.norm(g1)
    dg1_mag = t2.gradient(g1_mag, [k, b])
    assert [tuple(g.shape) for g in dg1_mag] == [(5, 10), (10,)]

    # |d out / dx| = |2 relu(x k + b) k^T|; its gradient by central differences in float64.
    def magnitude(kernel, bias):
        return np.linalg.norm(2.0 * np.maximum(x.numpy() @ kernel + bias, 0.0) @ kernel.T)

    assert g1_mag.numpy() == pytest.approx(magnitude(kernel, bias), rel=1e-9)
    eps = 1e-6
    for value, grad in ((kernel, dg1_mag[0]), (bias, dg1_mag[1])):
        numeric = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            saved = value[index]
            value[index] = saved + eps
            up = magnitude(kernel, bias)
            value[index] = saved - eps
            down = magnitude(kernel, bias)
            value[index] = saved
            numeric[index] = (up - down) / (2 * eps)
        assert_close(grad, numeric, rtol=1e-5, atol=1e-7)


def test_004_jacobian_scalar_source():
    x = tf.linspace(-10.0, 10.0, 200 + 1)
    delta = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    assert tuple(dy_dx.shape) == (201,)
    s = 1.0 / (1.0 + np.exp(-np.linspace(-10.0, 10.0, 201)))
    assert_close(dy_dx, s * (1.0 - s), rtol=1e-4, atol=1e-7)


def test_004_jacobian_tensor_source():
    rng = np.random.default_rng(3)
    x = tf.constant(rng.normal(size=(7, 5)).astype("float32"))
    kernel = tf.Variable(rng.normal(size=(5, 10)).astype("float32"))
    bias = tf.Variable(np.zeros(10, dtype="float32"))
    with tf.GradientTape(persistent=True) as tape:
        y = tf.nn.relu(tf.matmul(x, kernel) + bias)
    assert tuple(y.shape) == (7, 10)
    j = tape.jacobian(y, kernel)
    assert tuple(j.shape) == (7, 10, 5, 10)
    g = tape.gradient(y, kernel)
    assert tuple(g.shape) == (5, 10)
    j_sum = tf.reduce_sum(j, axis=[0, 1])
    delta = tf.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-3
    # j[b, o, i, p] = x[b, i] * (z[b, o] > 0) * (o == p)
    active = (x.numpy() @ kernel.numpy() > 0).astype("float32")
    expected = np.einsum("bi,bo,op->boip", x.numpy(), active, np.eye(10, dtype="float32"))
    assert_close(j, expected)


def two_relu_layers_numpy(x, k1, b1, k2, b2):
    """mean(relu(relu(x k1 + b1) k2 + b2)^2) and its gradient with respect to k1."""
    z1 = x @ k1 + b1
    a1 = np.maximum(z1, 0.0)
    z2 = a1 @ k2 + b2
    a2 = np.maximum(z2, 0.0)
    d_z2 = 2.0 * a2 / a2.size
    d_z1 = (d_z2 @ k2.T) * (z1 > 0)
    return np.mean(a2**2), x.T @ d_z1


def test_004_hessian_and_newton_step():
    rng = np.random.default_rng(4)
    x0 = rng.normal(size=(7, 5))
    k1_init, b1_init = rng.normal(scale=0.7, size=(5, 8)), rng.normal(scale=0.1, size=8)
    k2_init, b2_init = rng.normal(scale=0.7, size=(8, 6)), rng.normal(scale=0.1, size=6)
    k1, b1 = tf.Variable(k1_init), tf.Variable(b1_init)
    k2, b2 = tf.Variable(k2_init), tf.Variable(b2_init)
    x = tf.constant(x0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            x = tf.nn.relu(tf.matmul(x, k1) + b1)
            x = tf.nn.relu(tf.matmul(x, k2) + b2)
            loss = tf.reduce_mean(x**2)
        g = t1.gradient(loss, k1)
    h = t2.jacobian(g, k1)
    assert tuple(k1.shape) == (5, 8)
    assert tuple(h.shape) == (5, 8, 5, 8)

    ref_loss, ref_g = two_relu_layers_numpy(x0, k1_init, b1_init, k2_init, b2_init)
    assert loss.numpy() == pytest.approx(ref_loss, rel=1e-9)
    assert_close(g, ref_g, rtol=1e-9, atol=1e-12)
    eps = 1e-6
    numeric = np.zeros((5, 8, 5, 8))
    for i, j in np.ndindex(5, 8):
        step = np.zeros((5, 8))
        step[i, j] = eps
        up = two_relu_layers_numpy(x0, k1_init + step, b1_init, k2_init, b2_init)[1]
        down = two_relu_layers_numpy(x0, k1_init - step, b1_init, k2_init, b2_init)[1]
        numeric[:, :, i, j] = (up - down) / (2 * eps)
    assert_close(h, numeric, rtol=1e-5, atol=1e-8)

    n_params = tf.reduce_prod(k1.shape)
    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])
    assert tuple(g_vec.shape) == (40, 1) and tuple(h_mat.shape) == (40, 40)
    assert_close(h_mat, tf.transpose(h_mat).numpy(), atol=1e-10)  # symmetric

    eps = 1e-3
    eye_eps = tf.eye(h_mat.shape[0], dtype=tf.float64) * eps
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    expected = np.linalg.solve(h_mat.numpy() + eps * np.eye(40), g_vec.numpy())
    assert_close(update, expected, rtol=1e-6, atol=1e-9)
    _ = k1.assign_sub(tf.reshape(update, k1.shape))
    assert_close(k1, k1_init - expected.reshape(5, 8), rtol=1e-6, atol=1e-9)


def test_004_batch_jacobian():
    rng = np.random.default_rng(5)
    x0 = rng.normal(size=(7, 5))
    k1, b1 = rng.normal(scale=0.5, size=(5, 8)), rng.normal(scale=0.1, size=8)
    k2, b2 = rng.normal(scale=0.5, size=(8, 6)), rng.normal(scale=0.1, size=6)

    def forward_numpy(x):
        h = np.tanh(x @ k1 + b1)
        z = h @ k2 + b2
        return np.where(z > 0, z, np.expm1(z))  # elu

    x = tf.constant(x0)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = tf.nn.tanh(tf.matmul(x, tf.Variable(k1)) + b1)
        y = tf.nn.elu(tf.matmul(y, tf.Variable(k2)) + b2)
    assert tuple(y.shape) == (7, 6)
    assert_close(y, forward_numpy(x0), rtol=1e-9)
    j = tape.jacobian(y, x)
    assert tuple(j.shape) == (7, 6, 7, 5)
    j_sum = tf.reduce_sum(j, axis=2)
    j_select = tf.einsum("bxby->bxy", j)
    assert tuple(j_sum.shape) == (7, 6, 5) and tuple(j_select.shape) == (7, 6, 5)
    jb = tape.batch_jacobian(y, x)
    assert tuple(jb.shape) == (7, 6, 5)
    error = tf.reduce_max(abs(jb - j_sum))
    assert error < 1e-3
    assert_close(j_select, j_sum.numpy(), atol=1e-12)
    # Off-diagonal (batch, batch) blocks are zero.
    off_diagonal = j.numpy().copy()
    for b in range(7):
        off_diagonal[b, :, b, :] = 0.0
    assert not off_diagonal.any()
    # Central differences: rows are independent, so perturb one input column of all rows at once.
    eps = 1e-6
    numeric = np.zeros((7, 6, 5))
    for i in range(5):
        step = np.zeros_like(x0)
        step[:, i] = eps
        numeric[:, :, i] = (forward_numpy(x0 + step) - forward_numpy(x0 - step)) / (2 * eps)
    assert_close(jb, numeric, rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------- seed 004 with real Keras layers


def dense_numpy(layer):
    """A built Keras Dense layer's kernel and bias as float64 numpy arrays."""
    kernel, bias = layer.get_weights()
    return kernel.astype(np.float64), bias.astype(np.float64)


def elu(z):
    return np.where(z > 0, z, np.expm1(z))


def batch_norm_training(a, epsilon=1e-3):
    """Keras BatchNormalization with training=True and its initial gamma = 1, beta = 0."""
    return (a - a.mean(axis=0)) / np.sqrt(a.var(axis=0) + epsilon)


def jacobian_numpy(forward, x0, eps=1e-6):
    """d forward(x)[b, o] / d x[c, i] by central differences: shape (batch, outs, batch, ins)."""
    rows = forward(x0)
    j = np.zeros(rows.shape + x0.shape)
    for c, i in np.ndindex(x0.shape):
        step = np.zeros_like(x0)
        step[c, i] = eps
        j[:, :, c, i] = (forward(x0 + step) - forward(x0 - step)) / (2 * eps)
    return j


def test_004_keras_dense_jacobian_with_respect_to_the_kernel():
    tf.random.set_seed(6)
    x = tf.random.normal([7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
    with tf.GradientTape(persistent=True) as tape:
        y = layer(x)
    assert y.shape == (7, 10) and layer.kernel.shape == (5, 10)
    j = tape.jacobian(y, layer.kernel)
    assert j.shape == (7, 10, 5, 10)
    g = tape.gradient(y, layer.kernel)
    assert g.shape == (5, 10)
    assert tf.reduce_max(abs(g - tf.reduce_sum(j, axis=[0, 1]))).numpy() < 1e-3
    kernel, bias = dense_numpy(layer)
    active = (x.numpy() @ kernel + bias > 0).astype(np.float64)
    # j[b, o, i, p] = x[b, i] * relu'(z[b, o]) * (o == p)
    expected = np.einsum("bi,bo,op->boip", x.numpy(), active, np.eye(10))
    assert_close(j, expected, rtol=1e-6)
    assert_close(g, x.numpy().T @ active, rtol=1e-5, atol=1e-5)


def test_004_keras_input_gradient_regularization():
    rng = np.random.default_rng(7)
    x = tf.constant(rng.normal(size=(7, 5)))
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu, dtype="float64")
    with tf.GradientTape() as t2:
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)  # lost from the seed, restored from TF's guide
            out = tf.reduce_sum(layer(x) ** 2)
        g1 = t1.gradient(out, x)
        g1_mag = tf.norm(g1)
    dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
    assert [var.shape for var in dg1_mag] == [(5, 10), (10,)]
    kernel, bias = dense_numpy(layer)

    def magnitude(kernel, bias):
        return np.linalg.norm(2.0 * np.maximum(x.numpy() @ kernel + bias, 0.0) @ kernel.T)

    assert g1_mag.numpy() == pytest.approx(magnitude(kernel, bias), rel=1e-9)
    eps = 1e-6
    for value, grad in ((kernel, dg1_mag[0]), (bias, dg1_mag[1])):
        numeric = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            saved = value[index]
            value[index] = saved + eps
            up = magnitude(kernel, bias)
            value[index] = saved - eps
            down = magnitude(kernel, bias)
            value[index] = saved
            numeric[index] = (up - down) / (2 * eps)
        assert_close(grad, numeric, rtol=1e-5, atol=1e-7)


def test_004_keras_two_layer_hessian():
    rng = np.random.default_rng(8)
    x0 = rng.normal(size=(7, 5))
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu, dtype="float64")
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu, dtype="float64")
    x = tf.constant(x0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = tf.reduce_mean(x**2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    assert layer1.kernel.shape == (5, 8) and h.shape == (5, 8, 5, 8)
    (k1, b1), (k2, b2) = dense_numpy(layer1), dense_numpy(layer2)
    ref_loss, ref_g = two_relu_layers_numpy(x0, k1, b1, k2, b2)
    assert loss.numpy() == pytest.approx(ref_loss, rel=1e-9)
    assert_close(g, ref_g, rtol=1e-9, atol=1e-12)
    eps = 1e-6
    numeric = np.zeros((5, 8, 5, 8))
    for i, j in np.ndindex(5, 8):
        step = np.zeros((5, 8))
        step[i, j] = eps
        up = two_relu_layers_numpy(x0, k1 + step, b1, k2, b2)[1]
        down = two_relu_layers_numpy(x0, k1 - step, b1, k2, b2)[1]
        numeric[:, :, i, j] = (up - down) / (2 * eps)
    assert_close(h, numeric, rtol=1e-5, atol=1e-8)


def test_004_keras_batch_jacobian_with_elu():
    x0 = np.random.default_rng(9).normal(size=(7, 5))
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu, dtype="float64")
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu, dtype="float64")
    x = tf.constant(x0)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)  # lost from the seed, restored from TF's guide
        y = layer1(x)
        y = layer2(y)
    (k1, b1), (k2, b2) = dense_numpy(layer1), dense_numpy(layer2)

    def forward(x):
        return elu(elu(x @ k1 + b1) @ k2 + b2)

    assert_close(y, forward(x0), rtol=1e-9)
    j = tape.jacobian(y, x)
    assert j.shape == (7, 6, 7, 5)
    assert_close(j, jacobian_numpy(forward, x0), rtol=1e-6, atol=1e-9)
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 6, 5)
    assert_close(jb, tf.reduce_sum(j, axis=2).numpy(), atol=1e-12)
    assert_close(tf.einsum("bxby->bxy", j), jb.numpy(), atol=1e-12)


def test_004_keras_batch_norm_jacobian_is_not_block_diagonal():
    x0 = np.random.default_rng(10).normal(size=(7, 5))
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu, dtype="float64")
    bn = tf.keras.layers.BatchNormalization(dtype="float64")
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu, dtype="float64")
    x = tf.constant(x0)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = bn(y, training=True)
        y = layer2(y)
    (k1, b1), (k2, b2) = dense_numpy(layer1), dense_numpy(layer2)

    def forward(x):
        return elu(batch_norm_training(elu(x @ k1 + b1)) @ k2 + b2)

    assert_close(y, forward(x0), rtol=1e-9, atol=1e-12)
    j = tape.jacobian(y, x)
    assert j.shape == (7, 6, 7, 5)
    expected = jacobian_numpy(forward, x0)
    assert_close(j, expected, rtol=1e-5, atol=1e-8)
    off_diagonal = expected.copy()
    for b in range(7):
        off_diagonal[b, :, b, :] = 0.0
    assert np.abs(off_diagonal).max() > 1e-3  # the batch statistics couple the examples
    # batch_jacobian still runs, but its contents have an unclear meaning: like TF's (which
    # differentiates sum_b y[b, o] for each output o), jb[c, o] = sum_b dy[b, o] / dx[c], not
    # the diagonal block dy[c, o] / dx[c].
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 6, 5)
    assert_close(jb, np.einsum("boci->coi", expected), rtol=1e-5, atol=1e-8)
    assert np.abs(jb.numpy() - np.einsum("bxby->bxy", expected)).max() > 1e-3
