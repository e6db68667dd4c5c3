"""Jacobians, custom gradients, forward mode and the tape's controls on a small network.

The style of the TensorFlow "Introduction to gradients and automatic differentiation" and
"Advanced automatic differentiation" guides: gradients through Python control flow, a tape that
stops recording, one that watches only what it is told, `unconnected_gradients`, a
`tf.custom_gradient` that clips its gradient, `tape.jacobian` and `tape.batch_jacobian` of a
layer, a Hessian by nesting tapes, a Jacobian-vector product with `tf.autodiff.ForwardAccumulator`
and a Hessian-vector product from forward-over-backward. A final loop fits a network whose loss
penalises the norm of its input Jacobian.
"""

import json

import numpy as np

import ferrotape as tf

rng = np.random.default_rng(21)
tf.random.set_seed(21)

# Gradients through Python control flow: only the branch taken is recorded.
x = tf.constant(1.5)
v0 = tf.Variable(2.0)
v1 = tf.Variable(3.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    if x > 1.0:
        result = v0 * x * x
    else:
        result = v1 * x
dv0, dv1, dx = tape.gradient(result, [v0, v1, x])
control_flow = [float(dv0), dv1 is None, float(dx)]
with tf.GradientTape() as tape:
    tape.watch(x)
    y = x
    for _ in range(3):
        y = tf.sin(y) * x
loop_gradient = float(tape.gradient(y, x))

# unconnected_gradients: None by default, zeros on request.
with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    z = v0 * 2.0
unconnected_none = tape.gradient(z, x) is None
unconnected_zero = float(tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO))
del tape

# stop_recording: what is computed inside is invisible to the tape.
with tf.GradientTape() as tape:
    tape.watch(x)
    a = x * x
    with tape.stop_recording():
        b = x * x * x
    total = a + b
stop_recording_grad = float(tape.gradient(total, x))

# watch_accessed_variables=False: only what is watched is differentiated.
layer = tf.keras.layers.Dense(3, activation="tanh")
inputs = tf.constant(rng.normal(size=(4, 2)).astype("float32"))
layer.build((None, 2))
layer.set_weights([rng.normal(size=(2, 3)).astype("float32"), np.zeros(3, "float32")])
x0 = tf.Variable(0.5)
x1 = tf.Variable(tf.constant([10.0, -1.0]))
with tf.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(x1)
    y0 = tf.math.sin(x0)
    y1 = tf.nn.softplus(x1)
    ys = tf.reduce_sum(y0 + y1)
x0_grad, x1_grad = tape.gradient(ys, [x0, x1])
watched = [v.shape.as_list() for v in tape.watched_variables()]


# A custom gradient: identity forward, gradient clipped by norm backward.
@tf.custom_gradient
def clip_gradient_by_norm(x):
    y = tf.identity(x)

    def grad_fn(dresult):
        return tf.clip_by_norm(dresult, 1.0)

    return y, grad_fn


with tf.GradientTape() as tape:
    tape.watch(inputs)
    clipped = tf.reduce_sum(3.0 * clip_gradient_by_norm(inputs))
custom_grad_norm = float(tf.norm(tape.gradient(clipped, inputs)))


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))

    return tf.math.log(1 + e), grad


with tf.GradientTape() as tape:
    big = tf.constant(100.0)
    tape.watch(big)
    stable = log1pexp(big)
log1pexp_grad = float(tape.gradient(stable, big))

# Jacobians of a layer's output with respect to its kernel and, per example, its input.
with tf.GradientTape(persistent=True) as tape:
    tape.watch(inputs)
    out = layer(inputs)
jacobian = tape.jacobian(out, layer.kernel)
batch_jacobian = tape.batch_jacobian(out, inputs)
del tape

# A Hessian by nesting tapes (the TF guide's Newton step on a tiny model).
w = tf.Variable(tf.constant(rng.normal(size=(2,)).astype("float32")))
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        loss = tf.reduce_sum(tf.tanh(tf.linalg.matvec(inputs, w)) ** 2)
    grad = inner.gradient(loss, w)
hessian = outer.jacobian(grad, w)
newton_step = tf.linalg.solve(hessian + tf.eye(2), grad[:, tf.newaxis])[:, 0]

# Forward mode: a Jacobian-vector product, and a Hessian-vector product forward-over-backward.
tangent = tf.constant([1.0, -0.5])
with tf.autodiff.ForwardAccumulator(primals=w, tangents=tangent) as acc:
    fwd_loss = tf.reduce_sum(tf.tanh(tf.linalg.matvec(inputs, w)) ** 2)
jvp = float(acc.jvp(fwd_loss))
with tf.autodiff.ForwardAccumulator(primals=w, tangents=tangent) as acc:
    with tf.GradientTape() as tape:
        hv_loss = tf.reduce_sum(tf.tanh(tf.linalg.matvec(inputs, w)) ** 2)
    backward = tape.gradient(hv_loss, w)
hvp = acc.jvp(backward)

# A loss with a Jacobian penalty: the gradient of a gradient inside a training loop.
model = tf.keras.Sequential(
    [
        tf.keras.Input(shape=(2,)),
        tf.keras.layers.Dense(8, activation="tanh"),
        tf.keras.layers.Dense(1),
    ]
)
init = np.random.default_rng(22)
model.set_weights([init.uniform(-0.5, 0.5, w.shape).astype("float32") for w in model.get_weights()])
train_x = tf.constant(rng.normal(size=(64, 2)).astype("float32"))
train_y = tf.reduce_sum(tf.sin(train_x), axis=1, keepdims=True)
optimizer = tf.keras.optimizers.SGD(0.1)
losses = []
for _ in range(40):
    with tf.GradientTape() as tape:
        with tf.GradientTape() as input_tape:
            input_tape.watch(train_x)
            pred = model(train_x)
        input_jacobian = input_tape.batch_jacobian(pred, train_x)
        penalty = tf.reduce_mean(tf.reduce_sum(input_jacobian**2, axis=[1, 2]))
        loss = tf.reduce_mean((pred - train_y) ** 2) + 0.01 * penalty
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    losses.append(float(loss))
print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")

results = {
    "check": {"losses": losses},
    "compare": {
        "control_flow": control_flow,
        "loop_gradient": loop_gradient,
        "unconnected": [unconnected_none, unconnected_zero],
        "stop_recording_grad": stop_recording_grad,
        "x0_grad_is_none": x0_grad is None,
        "x1_grad": x1_grad.numpy().tolist(),
        "watched": watched,
        "custom_grad_norm": custom_grad_norm,
        "log1pexp_grad": log1pexp_grad,
        "jacobian_shape": jacobian.shape.as_list(),
        "jacobian": jacobian.numpy().ravel().tolist(),
        "batch_jacobian_shape": batch_jacobian.shape.as_list(),
        "batch_jacobian": batch_jacobian.numpy().ravel().tolist(),
        "hessian": hessian.numpy().tolist(),
        "newton_step": newton_step.numpy().tolist(),
        "jvp": jvp,
        "hvp": hvp.numpy().tolist(),
        "penalised_losses": losses[:5] + losses[-1:],
    },
}
print("RESULT", json.dumps(results))
