"""TensorFlow's "Advanced automatic differentiation" guide: seed tutorial 004.

Keras layers are replaced by `tf.Variable`s (a dense layer is `activation(x @ kernel + bias)`),
and the matplotlib plots and the SavedModel section are left out. The lines the seed lost in
copying (`t.reset()`, the `@tf.custom_gradient` decorator, some `watch()` calls) are restored from
TensorFlow's guide, as DESIGN.md section 6 describes.

    python examples/autodiff_guide.py
"""

import ferrotape as tf


def section(title):
    print(f"\n=== {title} ===")


class Dense(tf.Module):
    """A stand-in for `tf.keras.layers.Dense` built from two Variables."""

    def __init__(self, n_in, units, activation=None):
        super().__init__()
        self.kernel = tf.Variable(tf.random.normal([n_in, units], stddev=0.5))
        self.bias = tf.Variable(tf.zeros([units]))
        self.activation = activation

    def __call__(self, x):
        y = tf.matmul(x, self.kernel) + self.bias
        return y if self.activation is None else self.activation(y)


def controlling_recording():
    section("Stop recording")
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    print("dz/dx:", grad["x"])  # 2*x => 4
    print("dz/dy:", grad["y"])

    section("Reset")
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    reset = True
    with tf.GradientTape() as t:
        y_sq = y * y
        if reset:
            # Throw out all the tape recorded so far.
            t.reset()
        z = x * x + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    print("dz/dx:", grad["x"])  # 2*x => 4
    print("dz/dy:", grad["y"])

    section("Stop gradient")
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y_sq = y**2
        z = x**2 + tf.stop_gradient(y_sq)
    grad = t.gradient(z, {"x": x, "y": y})
    print("dz/dx:", grad["x"])  # 2*x => 4
    print("dz/dy:", grad["y"])


# Establish an identity operation, but clip during the gradient pass.
@tf.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return tf.clip_by_norm(dy, 0.5)

    return y, backward


def custom_gradients():
    section("Custom gradients")
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = clip_gradients(v * v)
    print(t.gradient(output, v))  # calls "backward", which clips 4 to 2


def multiple_tapes():
    section("Multiple tapes")
    x0 = tf.constant(0.0)
    x1 = tf.constant(0.0)
    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.sigmoid(x1)
        y = y0 + y1
        ys = tf.reduce_sum(y)
    print(tape0.gradient(ys, x0).numpy())  # cos(x) => 1.0
    print(tape1.gradient(ys, x1).numpy())  # sigmoid(x1)*(1-sigmoid(x1)) => 0.25


def higher_order():
    section("Higher-order gradients")
    x = tf.Variable(1.0)  # Create a Tensorflow variable initialized to 1.0
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        # Compute the gradient inside the outer `t2` context manager
        # which means the gradient computation is differentiable as well.
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    print("dy_dx:", dy_dx.numpy())  # 3 * x**2 => 3.0
    print("d2y_dx2:", d2y_dx2.numpy())  # 6 * x => 6.0

    section("Input gradient regularization")
    x = tf.random.normal([7, 5])
    layer = Dense(5, 10, activation=tf.nn.relu)
    with tf.GradientTape() as t2:
        # The inner tape only takes the gradient with respect to the input,
        # not the variables.
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            y = layer(x)
            out = tf.reduce_sum(layer(x) ** 2)
        # 1. Calculate the input gradient.
        g1 = t1.gradient(out, x)
        # 2. Calculate the magnitude of the input gradient.
        g1_mag = tf.norm(g1)
    # 3. Calculate the gradient of the magnitude with respect to the model.
    dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
    print([tuple(var.shape) for var in dg1_mag])


def jacobians():
    section("Jacobian with respect to a scalar source")
    x = tf.linspace(-10.0, 10.0, 200 + 1)
    delta = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    print("y.shape:", tuple(y.shape), "dy_dx.shape:", tuple(dy_dx.shape))
    print("max dy/dx:", tf.reduce_max(dy_dx).numpy())  # sigmoid'(0) => 0.25

    section("Jacobian with respect to a tensor source")
    x = tf.random.normal([7, 5])
    layer = Dense(5, 10, activation=tf.nn.relu)
    with tf.GradientTape(persistent=True) as tape:
        y = layer(x)
    print("y.shape:", tuple(y.shape))
    print("layer.kernel.shape:", tuple(layer.kernel.shape))
    j = tape.jacobian(y, layer.kernel)
    print("j.shape:", tuple(j.shape))
    g = tape.gradient(y, layer.kernel)
    print("g.shape:", tuple(g.shape))
    j_sum = tf.reduce_sum(j, axis=[0, 1])
    delta = tf.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-3
    print("delta:", delta)


def hessian():
    section("Hessian and a Newton step")
    x = tf.random.normal([7, 5])
    layer1 = Dense(5, 8, activation=tf.nn.relu)
    layer2 = Dense(8, 6, activation=tf.nn.relu)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = tf.reduce_mean(x**2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    print(f"layer.kernel.shape: {tuple(layer1.kernel.shape)}")
    print(f"h.shape: {tuple(h.shape)}")

    n_params = tf.reduce_prod(layer1.kernel.shape)
    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])
    # The Hessian matrix should be symmetric.
    print("max |h - h^T|:", tf.reduce_max(abs(h_mat - tf.transpose(h_mat))).numpy())

    eps = 1e-3
    eye_eps = tf.eye(h_mat.shape[0]) * eps
    # X(k+1) = X(k) - (∇²f(X(k)))^-1 @ ∇f(X(k))
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    residual = tf.reduce_max(abs(tf.matmul(h_mat + eye_eps, update) - g_vec)).numpy()
    print("max |(H + eps I) update - g|:", residual)
    # Reshape the update and apply it to the variable.
    _ = layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))


def batch_jacobian():
    section("Batch Jacobian")
    x = tf.random.normal([7, 5])
    layer1 = Dense(5, 8, activation=tf.nn.tanh)
    layer2 = Dense(8, 6, activation=tf.nn.elu)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = layer2(y)
    print("y.shape:", tuple(y.shape))
    j = tape.jacobian(y, x)
    print("j.shape:", tuple(j.shape))
    j_sum = tf.reduce_sum(j, axis=2)
    print("j_sum.shape:", tuple(j_sum.shape))
    j_select = tf.einsum("bxby->bxy", j)
    print("j_select.shape:", tuple(j_select.shape))
    jb = tape.batch_jacobian(y, x)
    print("jb.shape:", tuple(jb.shape))
    error = tf.reduce_max(abs(jb - j_sum))
    assert error < 1e-3
    print("error:", error.numpy())


if __name__ == "__main__":
    tf.random.set_seed(0)
    controlling_recording()
    custom_gradients()
    multiple_tapes()
    higher_order()
    jacobians()
    hessian()
    batch_jacobian()
