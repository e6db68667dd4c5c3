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
