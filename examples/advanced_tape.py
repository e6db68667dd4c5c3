"""Advanced GradientTape techniques: seed tutorial 003 without Keras and MNIST.

Higher-order gradients, a Hessian, gradient clipping and scaling, a Jacobian, a vector-Jacobian
product, a persistent tape with two losses, and a small MLP of `tf.Variable`s trained with plain
SGD (`assign_sub`) on synthetic data in place of the tutorial's MNIST/Adam loop.

    python examples/advanced_tape.py
"""

import numpy as np

import ferrotape as tf


def section(title):
    print(f"\n=== {title} ===")


def core_concepts():
    section("Core concepts")
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x**2  # y = x^2
    dy_dx = tape.gradient(y, x)
    print(dy_dx.numpy())  # 6.0 (dy/dx = 2x = 2*3)


def higher_order():
    section("Second-order gradients")
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape2:
        with tf.GradientTape() as tape1:
            y = x**3  # y = x^3
        dy_dx = tape1.gradient(y, x)  # dy/dx = 3x^2
    d2y_dx2 = tape2.gradient(dy_dx, x)  # d^2y/dx^2 = 6x
    print(dy_dx.numpy())  # 27.0 (3 * 3^2)
    print(d2y_dx2.numpy())  # 18.0 (6 * 3)

    section("Hessian matrix")
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape2:
        with tf.GradientTape() as tape1:
            y = x[0] ** 2 + x[1] ** 2  # y = x1^2 + x2^2
        grad = tape1.gradient(y, x)  # [2x1, 2x2]
    hessian = tape2.jacobian(grad, x)
    print(hessian.numpy())  # [[2. 0.], [0. 2.]]


def gradient_manipulation():
    section("Gradient clipping")
    w = tf.Variable(tf.random.normal([2, 1]))
    x = tf.constant([[1.0, 2.0]])
    y_true = tf.constant([[3.0]])
    with tf.GradientTape() as tape:
        y_pred = tf.matmul(x, w)
        loss = tf.reduce_mean(tf.square(y_true - y_pred))
    grads = tape.gradient(loss, w)
    clipped_grads = tf.clip_by_norm(grads, 1.0)  # Clip by norm
    print(clipped_grads.numpy())

    section("Custom gradient scaling")
    with tf.GradientTape() as tape:
        y_pred = tf.matmul(x, w)
        loss = tf.reduce_mean(tf.square(y_true - y_pred))
    grads = tape.gradient(loss, w)
    # `grads` is one (2, 1) tensor, so this comprehension iterates over its rows (DESIGN.md 6).
    # The tutorial then calls `.numpy()` on the Python list, which TensorFlow cannot do either;
    # print each scaled row instead.
    scaled_grads = [g * 0.5 for g in grads]  # Scale gradients by 0.5
    print([g.numpy() for g in scaled_grads])


def jacobians():
    section("Jacobian")
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.stack([x[0] ** 2, x[1] ** 3])  # y = [x1^2, x2^3]
    jacobian = tape.jacobian(y, x)
    print(jacobian.numpy())  # [[2. 0.], [0. 12.]]

    section("Vector-Jacobian product")
    x = tf.Variable([1.0, 2.0])
    v = tf.constant([1.0, 1.0])
    with tf.GradientTape() as tape:
        y = tf.stack([x[0] ** 2, x[1] ** 3])
    jacobian_v = tape.gradient(y, x, output_gradients=v)
    print(jacobian_v.numpy())  # [2. 12.]


def persistent_tape():
    section("Persistent tape, two losses")
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
    print(grad1.numpy(), grad2.numpy())
    del tape  # Release persistent tape


class MLP(tf.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.w1 = tf.Variable(tf.random.normal([n_in, n_hidden], stddev=0.5))
        self.b1 = tf.Variable(tf.zeros([n_hidden]))
        self.w2 = tf.Variable(tf.random.normal([n_hidden, n_out], stddev=0.5))
        self.b2 = tf.Variable(tf.zeros([n_out]))

    def __call__(self, x):
        h1 = tf.nn.relu(tf.matmul(x, self.w1) + self.b1)
        return tf.matmul(h1, self.w2) + self.b2


def synthetic_data(n=512, n_in=8, n_classes=3, seed=0):
    """Gaussian blobs: class k is centred on a random point of scale 2 in n_in dimensions."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=2.0, size=(n_classes, n_in))
    labels = rng.integers(0, n_classes, size=n)
    x = centres[labels] + rng.normal(size=(n, n_in))
    y = np.eye(n_classes)[labels]
    return x.astype("float32"), y.astype("float32")


def train_step(model, x, y, learning_rate):
    with tf.GradientTape(persistent=True) as tape:
        y_pred = model(x)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, y_pred))
        # Add L2 regularization
        l2_loss = 0.01 * (tf.reduce_sum(tf.square(model.w1)) + tf.reduce_sum(tf.square(model.w2)))
        total_loss = loss + l2_loss
    vars = [model.w1, model.b1, model.w2, model.b2]
    grads = tape.gradient(total_loss, vars)
    clipped_grads = [tf.clip_by_norm(g, 1.0) if g is not None else g for g in grads]
    for g, v in zip(clipped_grads, vars, strict=True):
        v.assign_sub(learning_rate * g)
    del tape
    return loss


def accuracy(model, x, y):
    predicted = np.argmax(model(x).numpy(), axis=1)
    return float(np.mean(predicted == np.argmax(y, axis=1)))


def mlp_training():
    section("MLP trained with SGD, L2 and clipping (synthetic data)")
    x_train, y_train = synthetic_data()
    model = MLP(n_in=8, n_hidden=32, n_out=3)
    batch_size = 64
    print(f"Initial accuracy: {accuracy(model, x_train, y_train):.4f}")
    for epoch in range(5):
        for i in range(0, len(x_train), batch_size):
            x_batch = x_train[i : i + batch_size]
            y_batch = y_train[i : i + batch_size]
            loss = train_step(model, x_batch, y_batch, learning_rate=0.1)
        print(f"Epoch {epoch}, Loss: {loss.numpy():.4f}")
    print(f"Final accuracy: {accuracy(model, x_train, y_train):.4f}")


if __name__ == "__main__":
    tf.random.set_seed(0)
    core_concepts()
    higher_order()
    gradient_manipulation()
    jacobians()
    persistent_tape()
    mlp_training()
