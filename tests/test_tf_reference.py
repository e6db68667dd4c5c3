"""The same small programs run in TensorFlow and in ferrotape, compared value by value.

Each program takes the module (`tensorflow` or `ferrotape`) as `tf` and returns a nest of
results: tensors become (dtype name, shape, values), `None` stays `None`, and an expected error
becomes the name of its exception class. The programs cover every seed snippet that needs no
Keras, plus a handful of ops and their gradients (ties, kinks, broadcasting).

TensorFlow is only needed here; without it the module is skipped. To run it:

    pip install tensorflow-cpu
"""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
real_tf = pytest.importorskip(
    "tensorflow", reason="TensorFlow is not installed (pip install tensorflow-cpu)"
)

import ferrotape  # noqa: E402 - after the skip, so that a missing TensorFlow skips cleanly

PROGRAMS = []


def program(fn):
    PROGRAMS.append(fn)
    return fn


def error_name(fn):
    """Run fn; the name of the exception it raises, or 'no error'."""
    try:
        fn()
    except Exception as err:  # noqa: BLE001 - the class name is the result being compared
        # ferrotape's InvalidArgumentError subclasses ValueError (DESIGN.md section 1), TF's does
        # not; where TF raises either, both count as one kind of error.
        if isinstance(err, ValueError) or type(err).__name__ == "InvalidArgumentError":
            return "ValueError or InvalidArgumentError"
        for kind in (RuntimeError, TypeError):
            if isinstance(err, kind):
                return kind.__name__
        return type(err).__name__
    return "no error"


def rng_array(seed, shape, scale=1.0, dtype="float32"):
    return (np.random.default_rng(seed).normal(size=shape) * scale).astype(dtype)


# ---------------------------------------------------------------- seed 001


@program
def seed001_float_variable(tf):
    x = tf.Variable(20.0)
    with tf.GradientTape() as tape:
        y = x**2
    return repr(x), tape.gradient(y, x)


@program
def seed001_integer_variable(tf):
    x = tf.Variable(30)
    with tf.GradientTape() as tape:
        y = x**3
    return repr(x), str(y), tape.gradient(y, x)


@program
def seed001_float32_dtype(tf):
    x = tf.Variable(30, dtype=tf.float32)
    with tf.GradientTape() as tape:
        y = x**3
    return repr(x), tape.gradient(y, x)


@program
def seed001_1d_variable(tf):
    x = tf.Variable([1.0, 2.0, 3.0], dtype=tf.float32)
    with tf.GradientTape() as tape:
        y = x**3
    return str(y), y, tape.gradient(y, x)


@program
def seed001_constant(tf):
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        y = x**2
    unwatched = tape.gradient(y, x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**2
    return str(x), unwatched, tape.gradient(y, x)


@program
def seed001_trainable_false(tf):
    x = tf.Variable(5.0, trainable=False)
    with tf.GradientTape() as tape:
        y = x**3
    unwatched = tape.gradient(y, x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**3
    return unwatched, tape.gradient(y, x)


@program
def seed001_watch_accessed_variables(tf):
    results = []
    for watch_accessed, explicit in ((True, False), (False, False), (False, True)):
        x0 = tf.Variable(5.0)
        with tf.GradientTape(watch_accessed_variables=watch_accessed) as tape:
            if explicit:
                tape.watch(x0)
            y0 = x0**2
        results.append(tape.gradient(y0, x0))
    return results


@program
def seed001_persistent(tf):
    x0 = tf.Variable(5.0)
    x1 = tf.Variable(10.0)
    with tf.GradientTape() as tape:
        y0 = x0**2
        y1 = x1**2
    first = tape.gradient(y0, x0)
    second = error_name(lambda: tape.gradient(y1, x1))
    with tf.GradientTape(persistent=True) as tape:
        y0 = x0**2
        y1 = x1**2
    return first, second, tape.gradient(y0, x0), tape.gradient(y1, x1)


# ---------------------------------------------------------------- seed 000


@program
def seed000_tape_snippets(tf):
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**3
    in9 = tape.gradient(y, x).numpy()
    x = tf.Variable(3.0, trainable=True)
    with tf.GradientTape() as tape:
        y = x**3
    in10 = tape.gradient(y, x).numpy()
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y = x**3
    in11 = tape.gradient(y, x)
    with tf.GradientTape() as tape1:
        with tf.GradientTape() as tape2:
            y = x**3
        order_1 = tape2.gradient(y, x)
    in12 = tape1.gradient(order_1, x).numpy()
    return in9, in10, in11, in12


@program
def seed000_persistent_and_stop_recording(tf):
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
    return printed


@program
def seed000_linear_regression(tf):
    x_train = np.asarray([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    y_train = np.asarray([i * 10 + 5 for i in x_train])
    a = tf.Variable(0.25, trainable=True)
    b = tf.Variable(0.75, trainable=True)
    for _ in range(250):
        with tf.GradientTape(persistent=True) as tape:
            pred_y = a * x_train + b
            reg_loss = tf.abs(y_train - pred_y)
        a_gradients, b_gradients = tape.gradient(reg_loss, (a, b))
        a.assign_sub(a_gradients * 0.001)
        b.assign_sub(b_gradients * 0.001)
    return pred_y, reg_loss, a, b


# ---------------------------------------------------------------- seed 003


@program
def seed003_higher_order_and_hessian(tf):
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape2:
        with tf.GradientTape() as tape1:
            y = x**3
        dy_dx = tape1.gradient(y, x)
    d2y_dx2 = tape2.gradient(dy_dx, x)
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape2:
        with tf.GradientTape() as tape1:
            y = x[0] ** 2 + x[1] ** 2
        grad = tape1.gradient(y, x)
    return dy_dx, d2y_dx2, grad, tape2.jacobian(grad, x)


@program
def seed003_clipping_and_scaling(tf):
    w = tf.Variable(rng_array(0, (2, 1)))
    x = tf.constant([[1.0, 2.0]])
    y_true = tf.constant([[3.0]])
    with tf.GradientTape() as tape:
        y_pred = tf.matmul(x, w)
        loss = tf.reduce_mean(tf.square(y_true - y_pred))
    grads = tape.gradient(loss, w)
    scaled_grads = [g * 0.5 for g in grads]
    return loss, grads, tf.clip_by_norm(grads, 1.0), scaled_grads


@program
def seed003_jacobian_and_vjp(tf):
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        y = tf.stack([x[0] ** 2, x[1] ** 3])
    v = tf.constant([1.0, 1.0])
    return tape.jacobian(y, x), tape.gradient(y, x, output_gradients=v)


@program
def seed003_persistent_two_losses(tf):
    w = tf.Variable(rng_array(1, (2, 1)))
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape(persistent=True) as tape:
        y_pred = tf.matmul(x, w)
        loss1 = tf.reduce_mean(tf.square(tf.constant([[3.0]]) - y_pred))
        loss2 = tf.reduce_mean(tf.square(tf.constant([[4.0]]) - y_pred))
    return tape.gradient(loss1, w), tape.gradient(loss2, w)


@program
def seed003_mlp_step(tf):
    x = rng_array(2, (16, 6))
    y = np.eye(3, dtype="float32")[np.arange(16) % 3]
    w1, b1 = tf.Variable(rng_array(3, (6, 8), 0.5)), tf.Variable(np.zeros(8, "float32"))
    w2, b2 = tf.Variable(rng_array(4, (8, 3), 0.5)), tf.Variable(np.zeros(3, "float32"))
    variables = [w1, b1, w2, b2]
    losses = []
    for _ in range(3):
        with tf.GradientTape(persistent=True) as tape:
            h1 = tf.nn.relu(tf.matmul(x, w1) + b1)
            logits = tf.matmul(h1, w2) + b2
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, logits))
            l2_loss = 0.01 * (tf.reduce_sum(tf.square(w1)) + tf.reduce_sum(tf.square(w2)))
            total_loss = loss + l2_loss
        grads = tape.gradient(total_loss, variables)
        clipped = [tf.clip_by_norm(g, 1.0) for g in grads]
        for g, v in zip(clipped, variables, strict=True):
            v.assign_sub(0.1 * g)
        losses.append(loss)
    return losses, grads, variables


@program
def seed003_gan_losses(tf):
    real = tf.constant(rng_array(5, (6, 1)))
    fake = tf.constant(rng_array(6, (6, 1)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([real, fake])
        bce = tf.nn.sigmoid_cross_entropy_with_logits
        g_loss = tf.reduce_mean(bce(tf.ones_like(fake), fake))
        d_loss = tf.reduce_mean(bce(tf.ones_like(real), real)) + tf.reduce_mean(
            bce(tf.zeros_like(fake), fake)
        )
    return g_loss, d_loss, tape.gradient(g_loss, [real, fake]), tape.gradient(d_loss, [real, fake])


# ---------------------------------------------------------------- seed 004


@program
def seed004_recording_controls(tf):
    results = []
    for mode in ("stop_recording", "reset", "stop_gradient"):
        x = tf.Variable(2.0)
        y = tf.Variable(3.0)
        with tf.GradientTape() as t:
            if mode == "stop_recording":
                x_sq = x * x
                with t.stop_recording():
                    y_sq = y * y
                z = x_sq + y_sq
            elif mode == "reset":
                y_sq = y * y
                t.reset()
                z = x * x + y_sq
            else:
                z = x**2 + tf.stop_gradient(y**2)
        grad = t.gradient(z, {"x": x, "y": y})
        results.append((str(grad["x"]), grad["y"]))
    return results


@program
def seed004_custom_gradient(tf):
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)

        return y, backward

    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = clip_gradients(v * v)
    return str(t.gradient(output, v))


@program
def seed004_multiple_tapes_and_higher_order(tf):
    x0 = tf.constant(0.0)
    x1 = tf.constant(0.0)
    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        ys = tf.reduce_sum(tf.math.sin(x0) + tf.nn.sigmoid(x1))
    x = tf.Variable(1.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    return tape0.gradient(ys, x0), tape1.gradient(ys, x1), dy_dx, t2.gradient(dy_dx, x)


@program
def seed004_input_gradient_regularization(tf):
    x = tf.constant(rng_array(7, (7, 5)))
    kernel = tf.Variable(rng_array(8, (5, 10), 0.5))
    bias = tf.Variable(rng_array(9, (10,), 0.1))
    with tf.GradientTape() as t2:
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            out = tf.reduce_sum(tf.nn.relu(tf.matmul(x, kernel) + bias) ** 2)
        g1 = t1.gradient(out, x)
        g1_mag = tf.norm(g1)
    return g1, g1_mag, t2.gradient(g1_mag, [kernel, bias])


@program
def seed004_jacobians(tf):
    x = tf.linspace(-10.0, 10.0, 200 + 1)
    delta = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    xs = tf.constant(rng_array(10, (7, 5)))
    kernel = tf.Variable(rng_array(11, (5, 10)))
    with tf.GradientTape(persistent=True) as tape:
        out = tf.nn.relu(tf.matmul(xs, kernel))
    j = tape.jacobian(out, kernel)
    g = tape.gradient(out, kernel)
    return dy_dx, j, g, tf.reduce_sum(j, axis=[0, 1])


@program
def seed004_hessian_newton_step(tf):
    # float64, so that solving the ill-conditioned Newton system agrees to the tolerance.
    x = tf.constant(rng_array(12, (7, 5), dtype="float64"))
    k1 = tf.Variable(rng_array(13, (5, 8), 0.7, dtype="float64"))
    k2 = tf.Variable(rng_array(14, (8, 6), 0.7, dtype="float64"))
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            h = tf.nn.relu(tf.matmul(tf.nn.relu(tf.matmul(x, k1)), k2))
            loss = tf.reduce_mean(h**2)
        g = t1.gradient(loss, k1)
    hess = t2.jacobian(g, k1)
    n_params = tf.reduce_prod(k1.shape)
    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(hess, [n_params, n_params])
    update = tf.linalg.solve(h_mat + tf.eye(h_mat.shape[0], dtype=tf.float64) * 1e-3, g_vec)
    k1.assign_sub(tf.reshape(update, k1.shape))
    return loss, g, hess, k1


@program
def seed004_batch_jacobian(tf):
    x = tf.constant(rng_array(15, (7, 5)))
    k1, k2 = tf.Variable(rng_array(16, (5, 8), 0.5)), tf.Variable(rng_array(17, (8, 6), 0.5))
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = tf.nn.elu(tf.matmul(tf.nn.tanh(tf.matmul(x, k1)), k2))
    j = tape.jacobian(y, x)
    return y, j, tf.einsum("bxby->bxy", j), tape.batch_jacobian(y, x)


# ---------------------------------------------------------------- tape semantics


@program
def tape_nested_sources_and_unconnected(tf):
    a, b = tf.Variable(2.0), tf.Variable([1.0, 2.0])
    c = tf.constant([[3.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(c)
        y = a * a + tf.reduce_sum(c)
    nested = tape.gradient(y, {"a": a, "rest": [b, (c,)]})
    zeros = tape.gradient(y, [a, b], unconnected_gradients="zero")
    return nested, zeros


@program
def tape_targets_and_output_gradients(tf):
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y1 = x * x
        y2 = tf.reduce_sum(x**3)
    return (
        tape.gradient(y1, x),
        tape.gradient([y1, y2], x),
        tape.gradient(y1, x, output_gradients=tf.constant([1.0, 10.0, 100.0])),
    )


@program
def tape_integer_dtypes(tf):
    n = tf.Variable(3)
    f = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = tf.cast(n * n, tf.float32) * f
    return y, tape.gradient(y, [n, f])


@program
def tape_errors(tf):
    x = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)
    never_entered = tf.GradientTape()
    with tf.GradientTape() as exited:
        x * x
    return (
        error_name(lambda: tape.gradient(y, x)),
        error_name(lambda: never_entered.gradient(y, x)),
        error_name(exited.reset),
    )


@program
def tape_batch_jacobian_unconnected(tf):
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.constant([[1.0, 2.0], [3.0, 4.0]]) * 2.0
        z = x * x
    return tape.batch_jacobian(y, x), tape.jacobian(y, x), tape.batch_jacobian(z, x)


@program
def tape_custom_gradient_with_variables(tf):
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def scale(x):
        def grad_fn(dy, variables=None):
            return dy * 10.0, [dy * 100.0]

        return x * v, grad_fn

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = scale(x)
    return y, tape.gradient(y, [x, v])


@program
def variable_api(tf):
    v = tf.Variable([1.0, 2.0], name="w")
    before = v.read_value()
    returned = v.assign_sub([0.5, 0.5]).numpy()
    v.assign_add(tf.constant([1.0, 1.0]))
    return (
        repr(v),
        v.name,
        before,
        returned,
        v,
        v.value(),
        error_name(lambda: v.assign([1.0, 2.0, 3.0])),
        error_name(lambda: v.assign(tf.constant([1, 2]))),
    )


@program
def tensor_str_and_repr(tf):
    return [
        (str(t), repr(t))
        for t in (tf.constant(40.0), tf.constant(27000), tf.constant([1.0, 8.0, 27.0]))
    ]


@program
def python_value_conversion(tf):
    a = tf.Variable(2.0)
    x = np.asarray([0, 1, 2, 3])
    return (
        tf.constant(1.5),
        tf.constant(2),
        tf.constant(np.array([1.0, 2.0])),
        tf.constant(np.array([1, 2])),
        a * x,
        x * a,
        tf.constant([1.0, 2.0]) + np.array([0.5, 0.25]),
        error_name(lambda: tf.constant(1.0) + tf.constant(1)),
    )


@program
def module_variables(tf):
    class Inner(tf.Module):
        def __init__(self, value):
            super().__init__()
            self.w = tf.Variable(value)

    class Outer(tf.Module):
        def __init__(self):
            super().__init__()
            self.a = tf.Variable(1.0)
            self.frozen = tf.Variable(2.0, trainable=False)
            self.layers = [tf.Variable(3.0), tf.Variable(4.0)]
            self.table = {"k2": tf.Variable(6.0), "k1": tf.Variable(5.0)}
            self.inner = Inner(7.0)

    m = Outer()
    return list(m.trainable_variables), list(m.variables), len(m.submodules)


# ---------------------------------------------------------------- ops and their gradients


def value_and_grads(tf, fn, *arrays):
    """fn(*tensors), and its gradient with respect to each (watched constant) input."""
    tensors = [tf.constant(a) for a in arrays]
    with tf.GradientTape() as tape:
        tape.watch(tensors)
        out = fn(*tensors)
    return out, tape.gradient(out, tensors)


@program
def op_ties(tf):
    a = np.array([1.0, 3.0, 3.0, -2.0], dtype="float32")
    b = np.array([1.0, 2.0, 3.0, -2.0], dtype="float32")
    return (
        value_and_grads(tf, tf.maximum, a, b),
        value_and_grads(tf, tf.minimum, a, b),
        value_and_grads(tf, tf.reduce_max, a),
        value_and_grads(tf, tf.reduce_min, b[[0, 3, 3]]),
    )


@program
def op_kinks(tf):
    x = np.array([-1.0, 0.0, 2.0], dtype="float32")
    return (
        value_and_grads(tf, tf.abs, x),
        value_and_grads(tf, tf.nn.relu, x),
        value_and_grads(tf, tf.nn.elu, x),
        value_and_grads(tf, lambda t: tf.clip_by_value(t, -1.0, 1.0), x),
    )


@program
def op_elementwise(tf):
    x = np.array([0.5, 1.0, 2.0], dtype="float32")
    fns = (tf.exp, tf.math.log, tf.sqrt, tf.nn.sigmoid, tf.nn.tanh, tf.math.sin, tf.math.cos)
    return [value_and_grads(tf, fn, x) for fn in fns] + [
        value_and_grads(tf, lambda t: t**2.5, x),
        value_and_grads(tf, lambda t: 1.0 / t, x),
        value_and_grads(tf, tf.square, x),
    ]


@program
def op_broadcasting(tf):
    a = rng_array(20, (2, 3))
    b = rng_array(21, (3,))
    c = rng_array(22, (2, 1))
    return (
        value_and_grads(tf, lambda x, y, z: x * y + z, a, b, c),
        value_and_grads(tf, lambda x, y, z: (x - y) / (z * z + 1.0), a, b, c),
    )


@program
def op_matmul_and_reductions(tf):
    a, b = rng_array(23, (3, 4)), rng_array(24, (4, 2))
    return (
        value_and_grads(tf, tf.matmul, a, b),
        value_and_grads(tf, lambda x: tf.reduce_mean(x, axis=0), a),
        value_and_grads(tf, lambda x: tf.reduce_sum(x, axis=1, keepdims=True), a),
        value_and_grads(tf, lambda x: tf.norm(x), a),
    )


@program
def op_shapes(tf):
    a, b = rng_array(25, (2, 3)), rng_array(26, (2, 3))
    return (
        value_and_grads(tf, lambda x, y: tf.concat([x, y * 2.0], axis=0), a, b),
        value_and_grads(tf, lambda x, y: tf.stack([x, y * 3.0], axis=1), a, b),
        value_and_grads(tf, lambda x: tf.reshape(x, [3, 2]) * tf.constant([1.0, 2.0]), a),
        value_and_grads(tf, lambda x: tf.gather(x, [2, 0, 2], axis=1), a),
        value_and_grads(tf, lambda x: tf.transpose(x) * tf.constant([[1.0, 2.0]]), a),
        value_and_grads(tf, lambda x, y: tf.where(x > 0.0, x, y * y), a, b),
    )


@program
def op_softmax_cross_entropy(tf):
    labels = np.eye(4, dtype="float32")[[0, 3, 1]]
    logits = rng_array(27, (3, 4), 2.0)
    return (
        value_and_grads(tf, lambda z: tf.nn.softmax_cross_entropy_with_logits(labels, z), logits),
        value_and_grads(tf, tf.nn.softmax, logits),
        value_and_grads(tf, lambda z: tf.nn.sigmoid_cross_entropy_with_logits(labels, z), logits),
        tf.one_hot([0, 3, 1], 4),
    )


@program
def op_clip_by_global_norm(tf):
    a, b = rng_array(28, (3,), 3.0), rng_array(29, (2, 2), 3.0)
    clipped, norm = tf.clip_by_global_norm([tf.constant(a), tf.constant(b)], 1.0)
    return clipped, norm, tf.clip_by_norm(tf.constant(a), 0.5)


# ---------------------------------------------------------------- Keras layers from real programs


@program
def keras_layers_that_real_programs_use(tf):
    """Conv2DTranspose, padding/cropping/upsampling and the activation layers with arguments,
    with the same weights in both libraries: outputs and input gradients."""
    x = tf.constant(rng_array(30, (2, 4, 5, 3)))
    layers = tf.keras.layers
    results = []
    for layer in [
        layers.Conv2DTranspose(4, 3, strides=2, padding="same"),
        layers.Conv2DTranspose(2, (2, 3), strides=(1, 2), activation="relu"),
        layers.Conv2DTranspose(2, 3, dilation_rate=2),
        layers.ZeroPadding2D(((1, 2), (0, 3))),
        layers.Cropping2D(((1, 0), (2, 1))),
        layers.UpSampling2D((2, 3)),
        layers.LeakyReLU(),
        layers.ELU(0.5),
        layers.ReLU(0.8, 0.1, 0.25),
        layers.PReLU(shared_axes=[1, 2]),
    ]:
        layer(x)
        for i, weight in enumerate(layer.weights):
            weight.assign(rng_array(31 + i, tuple(int(d) for d in weight.shape)))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
            loss = tf.reduce_sum(y * y)
        results.append((y, tape.gradient(loss, x)))
    return results


# ---------------------------------------------------------------- comparison


def to_plain(value):
    """Tensors and variables as (dtype name, shape, float64 values); nests recursively."""
    if isinstance(value, (np.ndarray, np.generic)):
        return ("numpy", value.dtype.name, value.shape, np.asarray(value, dtype=np.float64))
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):
        return {key: to_plain(v) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_plain(v) for v in value)
    dtype = value.dtype
    array = np.asarray(value.numpy())
    return ("tensor", getattr(dtype, "name", str(dtype)), array.shape, array.astype(np.float64))


def assert_same(expected, actual, path="result"):
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and set(actual) == set(expected), path
        for key in expected:
            assert_same(expected[key], actual[key], f"{path}[{key!r}]")
    elif isinstance(expected, (list, tuple)) and not (expected and expected[0] in TAGS):
        assert type(actual) is type(expected), f"{path}: {type(actual)} != {type(expected)}"
        assert len(actual) == len(expected), path
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_same(e, a, f"{path}[{i}]")
    elif isinstance(expected, tuple):
        assert isinstance(actual, tuple) and actual[:3] == expected[:3], (
            f"{path}: {actual[:3]} != {expected[:3]}"
        )
        np.testing.assert_allclose(actual[3], expected[3], rtol=2e-5, atol=1e-5, err_msg=path)
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"


TAGS = ("tensor", "numpy")


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda fn: fn.__name__)
def test_matches_tensorflow(prog):
    expected = to_plain(prog(real_tf))
    actual = to_plain(prog(ferrotape))
    assert_same(expected, actual)
