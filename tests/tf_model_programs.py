"""Training programs run by TensorFlow 2.21 (``scripts/make_tf_model_checkpoints.py``, which
saves their checkpoints under ``data/tf_model_checkpoints``) and by ferrotape
(``test_checkpoint_tensorflow_files.py``, which restores those checkpoints): each builds a model,
an optimizer and the checkpoint of both, with ``tf``, ``keras`` and ``np`` bound to one library.
"""

import numpy as np

X = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(8, 3)
Y = np.stack([np.sin(3 * X[:, 0]), X[:, 1] * X[:, 2]], axis=1).astype(np.float32)


def set_weights(model):
    """Fixed starting weights, the same in both libraries."""
    for i, variable in enumerate(model.weights):
        size = int(np.prod(variable.shape))
        values = np.cos(np.arange(size, dtype=np.float32) * 0.7 + i).reshape(variable.shape)
        variable.assign(values * 0.5)


def sequential(keras):
    return keras.Sequential(
        [
            keras.Input((3,)),
            keras.layers.Dense(4, activation="tanh"),
            keras.layers.Dense(2),
        ]
    )


def functional(keras):
    inputs = keras.Input((3,))
    hidden = keras.layers.Dense(5, activation="relu")(inputs)
    hidden = keras.layers.BatchNormalization()(hidden)
    outputs = keras.layers.Dense(2)(hidden)
    return keras.Model(inputs, outputs)


def subclassed(keras):
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = keras.layers.Dense(4, activation="tanh")
            self.out = keras.layers.Dense(2)

        def call(self, x):
            return self.out(self.hidden(x))

    net = Net()
    net(X[:1])
    return net


MODELS = {"sequential": sequential, "functional": functional, "subclassed": subclassed}


def train_step(tf, model, optimizer):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(X, training=True) - Y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))


def module_program(tf):
    """A ``tf.Module`` with variables in attributes, a list and a dict."""

    class Affine(tf.Module):
        def __init__(self):
            super().__init__(name="affine")
            self.w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
            self.b = tf.Variable(np.zeros(2, np.float32), name="b")
            self.extra = [tf.Variable(1.5), {"scale": tf.Variable(np.float64(2.5))}]

    module = Affine()
    step = tf.Variable(np.int64(0))
    return module, step, tf.train.Checkpoint(module=module, step=step)
