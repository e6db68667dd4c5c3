"""TensorFlow's "Advanced automatic differentiation" guide, end to end.

The guide's code runs with `import ferrotape as tf`, Keras layers included (`tf.keras.layers.Dense`
and `BatchNormalization`). Departures, each commented: lines missing from the copy of the guide
this program started from (`t.reset()`, the `@tf.custom_gradient` decorator, some `watch()`
calls, the plotting calls) are restored from TensorFlow's guide; values the notebook shows by
evaluating an expression are printed; the SavedModel section is left out (ferrotape has no
SavedModel); the random seed is set; the matplotlib figures are saved as PNG files when
`--plot-dir` is given (and skipped otherwise).

    python examples/autodiff_guide.py [--plot-dir DIR]
"""

import argparse
from pathlib import Path

import ferrotape as tf


def section(title):
    print(f"\n=== {title} ===")


class Figures:
    """The guide's matplotlib figures, each saved as DIR/NAME.png; does nothing without a DIR."""

    def __init__(self, directory):
        self.directory = None if directory is None else Path(directory)
        self.plt = None
        if self.directory is not None:
            import matplotlib

            matplotlib.use("Agg")  # no display: the figures go to files
            import matplotlib.pyplot as plt

            plt.rcParams["figure.figsize"] = (8, 6)
            self.directory.mkdir(parents=True, exist_ok=True)
            self.plt = plt

    def save(self, name):
        if self.plt is not None:
            path = self.directory / f"{name}.png"
            self.plt.savefig(path)
            self.plt.close()
            print(f"saved {path}")


FIGURES = Figures(None)  # replaced in main() when --plot-dir is given


def imshow_zero_center(image, **kwargs):
    lim = tf.reduce_max(abs(image))
    FIGURES.plt.imshow(image, vmin=-lim, vmax=lim, cmap="seismic", **kwargs)


def plot_as_patches(j):
    # Reorder axes so the diagonals will each form a contiguous patch.
    j = tf.transpose(j, [1, 0, 3, 2])
    # Pad in between each patch.
    lim = tf.reduce_max(abs(j))
    j = tf.pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]], constant_values=-lim)
    # Reshape to form a single image.
    s = j.shape
    j = tf.reshape(j, [s[0] * s[1], s[2] * s[3]])
    imshow_zero_center(j, extent=[-0.5, s[2] - 0.5, s[0] - 0.5, -0.5])


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
            t.reset()  # restored from TensorFlow's guide
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
@tf.custom_gradient  # restored from TensorFlow's guide
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
        # These two watch() calls are restored from TensorFlow's guide.
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
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
    with tf.GradientTape() as t2:
        # The inner tape only takes the gradient with respect to the input,
        # not the variables.
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)  # restored from TensorFlow's guide
            y = layer(x)
            out = tf.reduce_sum(layer(x) ** 2)
        # 1. Calculate the input gradient.
        g1 = t1.gradient(out, x)
        # 2. Calculate the magnitude of the input gradient.
        g1_mag = tf.norm(g1)
    # 3. Calculate the gradient of the magnitude with respect to the model.
    dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
    print([var.shape for var in dg1_mag])


def jacobians():
    section("Jacobian with respect to a scalar source")
    x = tf.linspace(-10.0, 10.0, 200 + 1)
    delta = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    print("y.shape:", y.shape, "dy_dx.shape:", dy_dx.shape)
    print("max dy/dx:", tf.reduce_max(dy_dx).numpy())  # sigmoid'(0) => 0.25
    if FIGURES.plt is not None:
        plt = FIGURES.plt
        # The guide passes the tensors `y` and `dy_dx`; matplotlib copies its data with
        # copy.copy, which ferrotape's Tensor does not support yet, so pass numpy arrays.
        plt.plot(x.numpy(), y.numpy(), label="y")
        plt.plot(x.numpy(), dy_dx.numpy(), label="dy/dx")
        plt.legend()
        _ = plt.xlabel("x")
        FIGURES.save("jacobian_scalar_source")

    section("Jacobian with respect to a tensor source")
    x = tf.random.normal([7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
    with tf.GradientTape(persistent=True) as tape:
        y = layer(x)
    print("y.shape:", y.shape)
    print("layer.kernel.shape:", layer.kernel.shape)
    j = tape.jacobian(y, layer.kernel)
    print("j.shape:", j.shape)
    g = tape.gradient(y, layer.kernel)
    print("g.shape:", g.shape)
    j_sum = tf.reduce_sum(j, axis=[0, 1])
    delta = tf.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-3
    print("delta:", delta)


def hessian():
    section("Hessian and a Newton step")
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = tf.reduce_mean(x**2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    print(f"layer.kernel.shape: {layer1.kernel.shape}")
    print(f"h.shape: {h.shape}")

    n_params = tf.reduce_prod(layer1.kernel.shape)
    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])
    # The Hessian matrix should be symmetric (the guide shows it as an image).
    print("max |h - h^T|:", tf.reduce_max(abs(h_mat - tf.transpose(h_mat))).numpy())
    if FIGURES.plt is not None:
        imshow_zero_center(h_mat)  # restored from TensorFlow's guide
        FIGURES.save("hessian")

    eps = 1e-3
    eye_eps = tf.eye(h_mat.shape[0]) * eps
    # X(k+1) = X(k) - (∇²f(X(k)))^-1 @ ∇f(X(k))
    # h_mat = ∇²f(X(k))
    # g_vec = ∇f(X(k))
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    # Not in the guide: check that `update` solves the system.
    residual = tf.reduce_max(abs(tf.matmul(h_mat + eye_eps, update) - g_vec)).numpy()
    print("max |(H + eps I) update - g|:", residual)

    # Reshape the update and apply it to the variable.
    _ = layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))


def batch_jacobian():
    section("Batch Jacobian")
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)  # restored from TensorFlow's guide
        y = layer1(x)
        y = layer2(y)
    print("y.shape:", y.shape)
    j = tape.jacobian(y, x)
    print("j.shape:", j.shape)
    # Not in the guide: the guide shows that every (batch, batch) slice is diagonal.
    print("max off-diagonal |j|:", max_off_diagonal(j).numpy())
    if FIGURES.plt is not None:
        plt = FIGURES.plt
        imshow_zero_center(j[:, 0, :, 0])
        _ = plt.title("A (batch, batch) slice")
        FIGURES.save("batch_slice")
        plot_as_patches(j)  # restored from TensorFlow's guide
        _ = plt.title("All (batch, batch) slices are diagonal")
        FIGURES.save("batch_slices_diagonal")
    j_sum = tf.reduce_sum(j, axis=2)
    print("j_sum.shape:", j_sum.shape)
    j_select = tf.einsum("bxby->bxy", j)
    print("j_select.shape:", j_select.shape)
    jb = tape.batch_jacobian(y, x)
    print("jb.shape:", jb.shape)
    error = tf.reduce_max(abs(jb - j_sum))
    assert error < 1e-3
    print("error:", error.numpy())

    section("Batch Jacobian through BatchNormalization")
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    bn = tf.keras.layers.BatchNormalization()
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)  # restored from TensorFlow's guide
        y = layer1(x)
        y = bn(y, training=True)
        y = layer2(y)
    j = tape.jacobian(y, x)
    print(f"j.shape: {j.shape}")
    if FIGURES.plt is not None:
        plt = FIGURES.plt
        plot_as_patches(j)  # restored from TensorFlow's guide
        _ = plt.title("These slices are not diagonal")
        _ = plt.xlabel("Don't use `batch_jacobian`")
        FIGURES.save("batch_norm_slices")
    # In this case, batch_jacobian still runs and returns something with the expected shape,
    # but its contents have an unclear meaning.
    jb = tape.batch_jacobian(y, x)
    print(f"jb.shape: {jb.shape}")
    # Not in the guide: training-mode BatchNormalization mixes the batch, so the Jacobian has
    # entries off the batch diagonal (zero without it, as in the section above).
    print("max off-diagonal |j|:", max_off_diagonal(j).numpy())


def max_off_diagonal(j):
    """The largest |j[b, :, c, :]| with b != c: how much example c moves example b's output."""
    batch = j.shape[0]
    return tf.reduce_max(abs(j * tf.reshape(1.0 - tf.eye(batch), [batch, 1, batch, 1])))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot-dir", default=None, help="save the guide's figures here as PNG")
    parser.add_argument("--seed", type=int, default=0, help="seed of ft.random")
    return parser.parse_args(argv)


def main(args):
    global FIGURES
    FIGURES = Figures(args.plot_dir)
    # Not in the guide: reproducible random inputs and weights.
    tf.random.set_seed(args.seed)
    controlling_recording()
    custom_gradients()
    multiple_tapes()
    higher_order()
    jacobians()
    hessian()
    batch_jacobian()


if __name__ == "__main__":
    main(parse_args())
