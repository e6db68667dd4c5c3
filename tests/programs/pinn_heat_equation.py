"""A physics-informed network for the heat equation u_t = k u_xx, with nested tapes.

The style of the PINN programs on GitHub: a small tanh MLP u(x, t), an outer tape for the
parameter gradients, an inner persistent tape for u_x and u_t, and a tape inside it for u_xx; the
loss is the PDE residual plus the initial and boundary conditions.
"""

import json
import math

import numpy as np

import ferrotape as tf

rng = np.random.default_rng(7)
tf.random.set_seed(7)
K = 0.1

model = tf.keras.Sequential(
    [
        tf.keras.layers.Input(shape=(2,)),
        tf.keras.layers.Dense(16, activation="tanh"),
        tf.keras.layers.Dense(16, activation="tanh"),
        tf.keras.layers.Dense(1),
    ]
)
init = np.random.default_rng(3)
model.set_weights([init.normal(0, 0.5, w.shape).astype("float32") for w in model.get_weights()])

# Collocation points in (0, 1) x (0, 1); u(x, 0) = sin(pi x); u(0, t) = u(1, t) = 0.
x_col = tf.constant(rng.random((128, 1)), dtype=tf.float32)
t_col = tf.constant(rng.random((128, 1)), dtype=tf.float32)
x_ic = tf.constant(np.linspace(0, 1, 32)[:, None], dtype=tf.float32)
u_ic = tf.sin(math.pi * x_ic)
t_bc = tf.constant(rng.random((32, 1)), dtype=tf.float32)


def pde_residual(x, t):
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([x, t])
        with tf.GradientTape() as inner:
            inner.watch(x)
            u = model(tf.concat([x, t], axis=1))
        u_x = inner.gradient(u, x)
    u_xx = outer.gradient(u_x, x)
    u_t = outer.gradient(u, t)
    del outer
    return u_t - K * u_xx


def loss_fn():
    residual = pde_residual(x_col, t_col)
    initial = model(tf.concat([x_ic, tf.zeros_like(x_ic)], axis=1)) - u_ic
    left = model(tf.concat([tf.zeros_like(t_bc), t_bc], axis=1))
    right = model(tf.concat([tf.ones_like(t_bc), t_bc], axis=1))
    return (
        tf.reduce_mean(tf.square(residual))
        + tf.reduce_mean(tf.square(initial))
        + tf.reduce_mean(tf.square(left))
        + tf.reduce_mean(tf.square(right))
    )


# Deterministic plain gradient descent from identical weights: comparable across libraries.
sgd_losses = []
for _ in range(3):
    with tf.GradientTape() as tape:
        loss = loss_fn()
    grads = tape.gradient(loss, model.trainable_variables)
    for variable, grad in zip(model.trainable_variables, grads):
        variable.assign_sub(0.05 * grad)
    sgd_losses.append(float(loss))

optimizer = tf.keras.optimizers.Adam(learning_rate=5e-3)
adam_losses = []
for step in range(150):
    with tf.GradientTape() as tape:
        loss = loss_fn()
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step % 30 == 0:
        adam_losses.append(float(loss))
        print(f"step {step}: loss {adam_losses[-1]:.5f}")
adam_losses.append(float(loss_fn()))

results = {
    "check": {"adam_losses": adam_losses},
    "compare": {"sgd_losses": sgd_losses},
}
print("RESULT", json.dumps(results))
