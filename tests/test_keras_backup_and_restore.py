"""``keras.callbacks.BackupAndRestore``: an interrupted ``fit`` resumes at the first
unfinished epoch with the weights and optimizer state it had, ending where an uninterrupted
run ends; backups every N batches, the double checkpoint, deletion, and errors."""

import json
import os
import tempfile

import numpy as np
import pytest

import ferrotape as ft

RNG = np.random.default_rng(3)
X = RNG.normal(size=(32, 4)).astype("float32")
Y = (X @ np.array([[1.0], [-2.0], [0.5], [3.0]])).astype("float32")


class Interrupt(Exception):
    pass


class InterruptAt(ft.keras.callbacks.Callback):
    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.epoch:
            raise Interrupt(epoch)


def model_with(weights=None):
    model = ft.keras.Sequential([ft.keras.Input((4,)), ft.keras.layers.Dense(1)])
    model.compile(optimizer=ft.keras.optimizers.Adam(0.05), loss="mse")
    if weights is not None:
        model.set_weights(weights)
    return model


def fit(model, callbacks, epochs=5):
    return model.fit(
        X, Y, batch_size=8, epochs=epochs, shuffle=False, verbose=0, callbacks=callbacks
    )


def test_an_interrupted_fit_resumes_at_the_right_epoch_with_the_same_result():
    start = model_with().get_weights()
    straight = model_with(start)
    fit(straight, [])
    directory = os.path.join(tempfile.mkdtemp(), "backup")
    model = model_with(start)
    with pytest.raises(Interrupt):
        fit(model, [ft.keras.callbacks.BackupAndRestore(directory), InterruptAt(3)])
    with open(os.path.join(directory, "training_metadata.json")) as file:
        assert json.load(file)["epoch"] == 3
    # A fresh process would build a new model: its weights and Adam's moments come back.
    resumed = model_with()
    history = fit(resumed, [ft.keras.callbacks.BackupAndRestore(directory)])
    assert history.epoch == [3, 4]
    for got, want in zip(resumed.get_weights(), straight.get_weights(), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert not os.path.exists(directory)  # deleted after a normal end
    # The resumed epoch applies to that fit only.
    assert fit(resumed, [], epochs=2).epoch == [0, 1]


def test_backups_every_n_batches_and_kept_on_request():
    directory = tempfile.mkdtemp()
    saves = []
    callback = ft.keras.callbacks.BackupAndRestore(directory, save_freq=3, delete_checkpoint=False)
    original = callback._save_model
    callback._save_model = lambda: (saves.append(callback._last_batch_seen), original())[1]
    fit(model_with(), [callback], epochs=2)  # 4 batches per epoch: 8 batches, backups at 3 and 6
    assert saves == [2, 1]
    assert os.path.exists(os.path.join(directory, "latest.weights.h5"))


def test_double_checkpoint_falls_back_on_the_previous_backup():
    directory = tempfile.mkdtemp()
    backup = ft.keras.callbacks.BackupAndRestore(directory, double_checkpoint=True)
    with pytest.raises(Interrupt):
        fit(model_with(), [backup, InterruptAt(2)])
    assert os.path.exists(os.path.join(directory, "latest.weights.h5.bkp"))
    with open(os.path.join(directory, "latest.weights.h5"), "wb") as file:
        file.write(b"cut off")  # the latest backup is unreadable
    history = fit(model_with(), [ft.keras.callbacks.BackupAndRestore(directory)])
    assert history.epoch == [1, 2, 3, 4]  # the previous backup was taken after epoch 0


@pytest.mark.parametrize(
    "kwargs, match",
    [({"backup_dir": ""}, "Empty"), ({"backup_dir": "d", "save_freq": "batch"}, "save_freq")],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ft.keras.callbacks.BackupAndRestore(**kwargs)


def test_an_unbuilt_model_is_refused():
    model = ft.keras.Sequential([ft.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="must be built"):
        model.fit(X, Y, epochs=1, verbose=0, callbacks=[ft.keras.callbacks.BackupAndRestore("d")])
