"""A typed user program written as TensorFlow users write it. ``tests/test_typing.py`` runs mypy
over it: the stub (``python/ferrotape/_core/``) must accept correct code, so that editors and type
checkers help ferrotape users instead of flagging their programs. It also runs, and must."""

import numpy as np

import ferrotape as tf


def fit_line(steps: int = 50) -> float:
    """Fits y = w·x + b by gradient descent: Variables, operators, a GradientTape loop."""
    w = tf.Variable(3.0)
    b = tf.Variable(0.0, name="bias")
    x = tf.constant([[1.0], [2.0], [3.0]])
    y = tf.constant(np.array([[2.0], [4.0], [6.0]], np.float32))
    loss = tf.constant(0.0)
    for _ in range(steps):
        with tf.GradientTape() as tape:
            prediction = w * x + b
            loss = tf.reduce_mean(tf.square(prediction - y))
        dw, db = tape.gradient(loss, [w, b])
        w.assign_sub(0.05 * dw)
        b.assign_sub(0.05 * db)
    return float(loss)


def tensors() -> list[float]:
    """Indexing, length, iteration, numpy, shape and dtype, and ops on Python values."""
    t = tf.constant([0.5, 1.0, 1.5])
    v = tf.Variable(t)
    squared: tf.Tensor = v * v
    n: int = len(t)
    first: tf.Tensor = t[0]
    rows = [float(r) for r in t]
    as_numpy: np.ndarray = np.asarray(t.numpy())
    dims: list[int | None] = list(t.shape)
    assert t.dtype == tf.float32 and dims == [n] and as_numpy.tolist() == rows
    mixed = tf.add(t, 1) + 2.0 - tf.math.sinh(t) / tf.maximum(t, 0.1)
    stacked = tf.concat([t, -t], axis=0)
    parts: list[tf.Tensor] = tf.split(stacked, 2)
    second = tf.reduce_sum(parts[1], axis=0, keepdims=False)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(t)
        z = tf.math.tanh(t / 2.0) * tf.nn.relu(t) + tf.linalg.matmul([[1.0, 2.0]], [[3.0], [4.0]])
    dz = tape.gradient(z, t)
    return [float(squared[0]), float(first), float(mixed[0]), float(second), float(dz[0])]


if __name__ == "__main__":
    print(fit_line(), tensors())
