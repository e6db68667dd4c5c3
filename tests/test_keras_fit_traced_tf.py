"""How often an overridden step's Python body runs in ``fit``, against Keras 3 on TensorFlow:
once per trace unless run eagerly. Skipped where TensorFlow is not installed (the same counts
without TensorFlow are pinned in test_keras_fit_traced.py)."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
import keras  # noqa: E402 - Keras 3, installed with TensorFlow

import ferrotape as ft  # noqa: E402


def step_counts(tf_module, keras_module):
    """The running count of ``train_step`` calls after each phase of the same program."""

    class Counting(keras_module.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras_module.layers.Dense(1)
            self.calls = 0

        def call(self, x):
            return self.dense(x)

        def train_step(self, data):
            self.calls += 1
            return super().train_step(data)

    x = np.random.default_rng(0).normal(size=(64, 3)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    keras_module.utils.set_random_seed(0)
    model = Counting()
    model.compile("sgd", "mse")
    flags = [model.run_eagerly]
    counts = []
    model.fit(x, y, batch_size=32, epochs=2, verbose=0)  # 2 batches of 32 per epoch
    counts.append(model.calls)
    model.fit(x, y, batch_size=32, epochs=3, verbose=0)
    counts.append(model.calls)
    tf_module.config.run_functions_eagerly(True)
    try:
        model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    finally:
        tf_module.config.run_functions_eagerly(False)
    counts.append(model.calls)
    model.compile("sgd", "mse")
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    counts.append(model.calls)
    model.compile("sgd", "mse", run_eagerly=True)
    flags.append(model.run_eagerly)
    model.fit(x, y, batch_size=32, epochs=2, verbose=0)
    counts.append(model.calls)
    return counts, flags


def test_train_step_side_effects_run_as_in_keras_on_tensorflow():
    ours, our_flags = step_counts(ft, ft.keras)
    theirs, their_flags = step_counts(tf, keras)
    assert our_flags == their_flags == [False, True]
    for first, again, eagerly, recompiled, run_eagerly in (ours, theirs):
        # Traced: the first fit traces (TensorFlow traces twice, once more to create the
        # optimizer's variables; ferrotape once), fewer times than the 4 batches.
        assert 1 <= first < 4
        assert again == first  # a later fit reuses the traced step
        assert eagerly - again == 2  # run_functions_eagerly: one call per batch
        assert recompiled - eagerly == 1  # compile makes a new step: traced once
        assert run_eagerly - recompiled == 4  # run_eagerly=True: one call per batch
    assert ours[0] == 1
