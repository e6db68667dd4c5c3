"""Tapes give back what they hold: a training-like loop keeps resident memory flat."""

import gc
import os

import numpy as np
import pytest

import ferrotape as tf


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
@pytest.mark.parametrize("persistent", [False, True])
def test_repeated_steps_do_not_grow_memory(persistent):
    x_train, y_train = np.arange(11), np.arange(11) * 10 + 5
    a, b = tf.Variable(0.4), tf.Variable(0.7)
    w = tf.Variable(tf.random.normal([64, 64], seed=1))

    def step():
        with tf.GradientTape(persistent=persistent) as tape:
            loss = tf.reduce_sum(tf.abs(y_train - (a * x_train + b)))
            loss += tf.reduce_sum(tf.nn.relu(tf.matmul(w, w))) * 1e-6
        ga, gb, gw = tape.gradient(loss, (a, b, w))
        a.assign_sub(ga * 0.001)
        b.assign_sub(gb * 0.001)
        w.assign_sub(gw * 1e-6)

    for _ in range(300):  # warm up allocator pools
        step()
    gc.collect()
    before = resident_bytes()
    for _ in range(3000):
        step()
    gc.collect()
    grown = resident_bytes() - before
    # 3000 steps each saving a 64x64 float32 matrix would be ~50 MB if nothing were freed.
    assert grown < 4 * 2**20, f"resident memory grew by {grown / 2**20:.1f} MiB"


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_training_a_keras_cnn_keeps_memory_flat():
    """The seed CNN's layer types (Conv2D, BatchNormalization in training, pooling, Dropout,
    Dense) with Adam: after warm-up, many more steps add no resident memory."""
    from ferrotape.keras import layers

    ft_model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(12, 12, 1)),
            layers.Conv2D(8, 3, padding="same"),
            layers.Activation("relu"),
            layers.BatchNormalization(),
            layers.MaxPooling2D(),
            layers.Flatten(),
            layers.Dense(32, activation="relu"),
            layers.Dropout(0.5),
            layers.Dense(10, activation="softmax"),
        ]
    )
    optimizer = tf.keras.optimizers.Adam(1e-3)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 12, 12, 1)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)]

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(
                tf.keras.losses.categorical_crossentropy(y, ft_model(x, training=True))
            )
        grads = tape.gradient(loss, ft_model.trainable_variables)
        optimizer.apply_gradients(zip(grads, ft_model.trainable_variables, strict=True))

    for _ in range(100):
        step()
    gc.collect()
    before = resident_bytes()
    for _ in range(600):
        step()
    gc.collect()
    grown = resident_bytes() - before
    # Each step's activations and saved tensors are ~1 MB: kept, 600 steps would be ~600 MB.
    assert grown < 8 * 2**20, f"resident memory grew by {grown / 2**20:.1f} MiB"
