"""Advanced GradientTape techniques, end to end: higher orders, clipping, an MLP and a GAN.

Higher-order gradients, a Hessian, gradient clipping and scaling, a Jacobian, a vector-Jacobian
product, a persistent tape with two losses; then the tutorial's two training programs: an MLP
(`tf.Module`) with L2 regularisation, a persistent tape, `clip_by_norm` and
`tf.optimizers.Adam` on MNIST, and a GAN (generator and discriminator `tf.Module`s, sigmoid
cross-entropy, two Adam optimizers). The Newton step with a Hessian is in `autodiff_guide.py`.

The tutorial's code runs as written with `import ferrotape as tf`. Departures, each commented:
MNIST is loaded when it is on the machine, otherwise Fashion-MNIST stands in (`mnist_data.py`);
the number of epochs and of training images are command-line flags, so a test can run it in
seconds; the random seed is set; the MLP's accuracy on its training images is printed at the end.

    python examples/advanced_tape.py                     # the tutorial: 5 MLP epochs, 50 GAN steps
    python examples/advanced_tape.py --epochs 2 --limit 2048 --gan-epochs 20

The MLP prints "Epoch 0, Loss: ..." (the loss of each epoch's last batch) and
"Training accuracy: ..."; the GAN prints "Epoch 0, G Loss: ..., D Loss: ..." every 10 steps.
"""

# The tutorial's code is kept as written: zip() without strict=.
# ruff: noqa: B905

import argparse

import mnist_data
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


# Define model
class MLP(tf.Module):
    def __init__(self):
        self.w1 = tf.Variable(tf.random.normal([784, 128]))
        self.b1 = tf.Variable(tf.zeros([128]))
        self.w2 = tf.Variable(tf.random.normal([128, 10]))
        self.b2 = tf.Variable(tf.zeros([10]))

    def __call__(self, x):
        h1 = tf.nn.relu(tf.matmul(x, self.w1) + self.b1)
        return tf.matmul(h1, self.w2) + self.b2


# Training step
def train_step(model, x, y, optimizer):
    with tf.GradientTape(persistent=True) as tape:
        y_pred = model(x)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, y_pred))
        # Add L2 regularization
        l2_loss = 0.01 * (tf.reduce_sum(tf.square(model.w1)) + tf.reduce_sum(tf.square(model.w2)))
        total_loss = loss + l2_loss
    vars = [model.w1, model.b1, model.w2, model.b2]
    grads = tape.gradient(total_loss, vars)
    clipped_grads = [tf.clip_by_norm(g, 1.0) if g is not None else g for g in grads]
    optimizer.apply_gradients(zip(clipped_grads, vars))
    del tape
    return loss


def accuracy(model, x, y, batch_size=1000):
    """Not in the tutorial: the fraction of images whose largest logit is the true class."""
    correct = 0
    for i in range(0, len(x), batch_size):
        logits = model(x[i : i + batch_size]).numpy()
        correct += int(
            np.sum(np.argmax(logits, axis=1) == np.argmax(y[i : i + batch_size], axis=1))
        )
    return correct / len(x)


def mlp_training(args):
    section("MLP on MNIST: persistent tape, L2 regularization, clip_by_norm, Adam")
    # Load MNIST
    # The tutorial calls tf.keras.datasets.mnist.load_data(); Fashion-MNIST stands in for it
    # when MNIST is not on the machine.
    ((x_train, y_train), _), name = mnist_data.load_data(args.dataset)
    # Not in the tutorial: --limit trains on the first N images only.
    x_train, y_train = x_train[: args.limit], y_train[: args.limit]
    print(f"{name}: {len(x_train)} training images")
    x_train = x_train.reshape(-1, 784).astype("float32") / 255.0
    y_train = tf.keras.utils.to_categorical(y_train, 10)

    # Train
    model = MLP()
    optimizer = tf.optimizers.Adam(0.001)
    batch_size = 128
    for epoch in range(args.epochs):
        for i in range(0, len(x_train), batch_size):
            x_batch = x_train[i : i + batch_size]
            y_batch = y_train[i : i + batch_size]
            loss = train_step(model, x_batch, y_batch, optimizer)
        print(f"Epoch {epoch}, Loss: {loss.numpy():.4f}")
    print(f"Training accuracy: {accuracy(model, x_train, y_train):.4f}")
    return x_train


# Define generator
class Generator(tf.Module):
    def __init__(self):
        self.w1 = tf.Variable(tf.random.normal([100, 128]))
        self.b1 = tf.Variable(tf.zeros([128]))
        self.w2 = tf.Variable(tf.random.normal([128, 784]))
        self.b2 = tf.Variable(tf.zeros([784]))

    def __call__(self, z):
        h1 = tf.nn.relu(tf.matmul(z, self.w1) + self.b1)
        return tf.nn.tanh(tf.matmul(h1, self.w2) + self.b2)


# Define discriminator
class Discriminator(tf.Module):
    def __init__(self):
        self.w1 = tf.Variable(tf.random.normal([784, 128]))
        self.b1 = tf.Variable(tf.zeros([128]))
        self.w2 = tf.Variable(tf.random.normal([128, 1]))
        self.b2 = tf.Variable(tf.zeros([1]))

    def __call__(self, x):
        h1 = tf.nn.relu(tf.matmul(x, self.w1) + self.b1)
        return tf.matmul(h1, self.w2) + self.b2


# Loss functions
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


# Training step
def gan_train_step(generator, discriminator, x, z, g_optimizer, d_optimizer):
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
    g_optimizer.apply_gradients(zip(g_grads, g_vars))
    d_optimizer.apply_gradients(zip(d_grads, d_vars))
    del tape
    return g_loss_val, d_loss_val


def gan_training(args, x_train):
    section("GAN: generator and discriminator trained from one persistent tape")
    # Train
    generator = Generator()
    discriminator = Discriminator()
    g_optimizer = tf.optimizers.Adam(0.0002)
    d_optimizer = tf.optimizers.Adam(0.0002)
    batch_size = 128
    x_train = x_train[:batch_size]  # Subset for simplicity
    # The tutorial's "epoch" is one step on the same 128 images; --gan-epochs sets how many.
    for epoch in range(args.gan_epochs):
        z = tf.random.normal([batch_size, 100])
        g_loss_val, d_loss_val = gan_train_step(
            generator, discriminator, x_train, z, g_optimizer, d_optimizer
        )
        if epoch % 10 == 0:
            print(
                f"Epoch {epoch}, G Loss: {g_loss_val.numpy():.4f}, D Loss: {d_loss_val.numpy():.4f}"
            )


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5, help="MLP epochs (tutorial: 5)")
    parser.add_argument("--limit", type=int, default=None, help="train on the first N images")
    parser.add_argument("--gan-epochs", type=int, default=50, help="GAN steps (tutorial: 50)")
    parser.add_argument("--dataset", choices=mnist_data.DATASETS, default="auto")
    parser.add_argument("--seed", type=int, default=0, help="seed of ft.random")
    args = parser.parse_args(argv)
    if args.epochs < 1 or args.gan_epochs < 1:
        parser.error("--epochs and --gan-epochs must be positive")
    # The GAN trains on the first 128 training images, so at least that many are needed.
    if args.limit is not None and args.limit < 128:
        parser.error("--limit must be at least 128 (the batch size)")
    return args


if __name__ == "__main__":
    args = parse_args()
    # Not in the tutorial: reproducible weights, noise and results.
    tf.random.set_seed(args.seed)
    core_concepts()
    higher_order()
    gradient_manipulation()
    jacobians()
    persistent_tape()
    x_train = mlp_training(args)
    gan_training(args, x_train)
