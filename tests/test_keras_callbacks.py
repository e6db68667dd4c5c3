"""ft.keras.callbacks against Keras 3's rules, driven by a small fit loop over a fake model."""

import io
import json
import math

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras import callbacks as cb
from ferrotape.keras import saving


class FakeOptimizer:
    def __init__(self, learning_rate=0.1):
        self.learning_rate = learning_rate


class FakeModel:
    """What callbacks may use of a model: the contract's attributes, nothing more."""

    def __init__(self):
        self.stop_training = False
        self.weights = [np.zeros(2, np.float32)]
        self.optimizer = FakeOptimizer()
        self.metrics = []
        self.saved = []

    def get_weights(self):
        return [w.copy() for w in self.weights]

    def set_weights(self, weights):
        self.weights = [np.array(w) for w in weights]

    def save_weights(self, path):
        saving.save_weights_file(path, {f"{i:04d}": w for i, w in enumerate(self.weights)})
        self.saved.append(path)


def fit(model, callbacks, epoch_logs, steps=2, batch_logs=None, **params):
    """Keras's fit protocol: epoch e's weights are all e; returns the epochs that ran."""
    params = {"verbose": 0, "epochs": len(epoch_logs), "steps": steps, **params}
    callback_list = cb.CallbackList(callbacks, add_history=True, model=model, **params)
    model.stop_training = False
    callback_list.on_train_begin()
    ran = []
    for epoch, logs in enumerate(epoch_logs):
        callback_list.on_epoch_begin(epoch)
        for batch in range(steps):
            callback_list.on_train_batch_begin(batch)
            model.weights = [np.full(2, epoch, np.float32)]
            logs_now = batch_logs(epoch, batch) if batch_logs else {"loss": 1.0}
            callback_list.on_train_batch_end(batch, logs_now)
            if model.stop_training:
                break
        callback_list.on_epoch_end(epoch, dict(logs))
        ran.append(epoch)
        if model.stop_training:
            break
    callback_list.on_train_end()
    return ran


def losses(*values, name="val_loss"):
    return [{name: v} for v in values]


# ---------------------------------------------------------------- Callback, CallbackList, History
def test_callback_base_aliases_and_attributes():
    calls = []

    class Old(cb.Callback):
        def on_batch_begin(self, batch, logs=None):
            calls.append(("begin", batch))

        def on_batch_end(self, batch, logs=None):
            calls.append(("end", batch, logs["loss"]))

    callback = Old()
    model = FakeModel()
    callback.set_model(model)
    callback.set_params({"epochs": 3})
    callback.on_train_batch_begin(0)
    callback.on_train_batch_end(0, {"loss": 2.0})
    assert calls == [("begin", 0), ("end", 0, 2.0)]
    assert callback.model is model and callback.params == {"epochs": 3}


def test_callback_list_dispatches_in_order_and_adds_defaults():
    seen = []

    class Recorder(cb.Callback):
        def __init__(self, tag):
            super().__init__()
            self.tag = tag

        def on_epoch_end(self, epoch, logs=None):
            seen.append((self.tag, epoch, dict(logs)))

    model = FakeModel()
    first, second = Recorder("a"), Recorder("b")
    callbacks = cb.CallbackList(
        [first, [second]], add_history=True, add_progbar=True, model=model, verbose=0, epochs=1
    )
    assert isinstance(callbacks.callbacks[0], cb.ProgbarLogger)
    assert isinstance(callbacks.callbacks[-1], cb.History) and model.history is callbacks._history
    assert first.params == {"verbose": 0, "epochs": 1} and second.model is model
    callbacks.on_epoch_end(4, {"loss": 1.5})
    callbacks.on_epoch_end(5)
    assert seen == [("a", 4, {"loss": 1.5}), ("b", 4, {"loss": 1.5}), ("a", 5, {}), ("b", 5, {})]
    own_history = cb.History()
    assert cb.CallbackList([own_history], add_history=True).callbacks == [own_history]
    with pytest.raises(TypeError, match="Callback instances"):
        cb.CallbackList([lambda epoch: None])


def test_history_records_logs_as_python_numbers():
    model = FakeModel()
    logs = [{"loss": ft.constant(0.5), "acc": np.float32(0.25)}, {"loss": 0.125, "acc": 0.5}]
    history = cb.History()
    fit(model, [history], logs)
    assert history.history == {"loss": [0.5, 0.125], "acc": [0.25, 0.5]}
    assert all(type(v) is float for v in history.history["loss"])
    assert history.epoch == [0, 1] and model.history is history


# ---------------------------------------------------------------- EarlyStopping
@pytest.mark.parametrize(
    "values, kwargs, expected_epochs",
    [
        ((1.0, 0.9, 0.95, 0.5), {}, 3),  # patience 0: stops at the first epoch without gain
        ((1.0, 0.9, 0.95, 0.96, 0.5), {"patience": 2}, 4),
        ((1.0, 0.9, 0.95, 0.85, 0.86, 0.87, 0.1), {"patience": 2}, 6),
        ((1.0, 0.95, 0.92), {"min_delta": 0.1, "patience": 1}, 2),  # 0.05 is not enough
        ((1.0, 0.85, 0.80, 0.1), {"min_delta": -0.1, "patience": 1}, 3),  # abs(min_delta)
        ((0.9, 0.95, 0.97, 0.99), {"patience": 2}, 3),
        ((0.9, 0.95, 0.97, 0.99), {"patience": 2, "baseline": 0.5}, 2),
        ((1, 2, 3, 4, 5), {"start_from_epoch": 2}, 4),  # epochs 0, 1 are not monitored
    ],
)
def test_early_stopping_min_mode(values, kwargs, expected_epochs):
    stopper = cb.EarlyStopping(**kwargs)
    ran = fit(FakeModel(), [stopper], losses(*values))
    assert len(ran) == expected_epochs
    if expected_epochs < len(values):
        assert stopper.stopped_epoch == expected_epochs - 1


def test_early_stopping_max_mode_auto_and_explicit():
    values = losses(0.5, 0.6, 0.55, 0.58, 0.9, name="val_accuracy")
    assert len(fit(FakeModel(), [cb.EarlyStopping("val_accuracy", patience=1)], values)) == 3
    auto_stop = cb.EarlyStopping("val_accuracy", patience=1, mode="max")
    assert len(fit(FakeModel(), [auto_stop], values)) == 3
    as_min = cb.EarlyStopping("val_accuracy", patience=1, mode="min")
    assert len(fit(FakeModel(), [as_min], values)) == 2


def test_early_stopping_direction_from_the_models_metrics():
    class Score:
        name = "score"
        _direction = "up"

    model = FakeModel()
    model.metrics = [Score()]
    stopper = cb.EarlyStopping("val_score")
    assert len(fit(model, [stopper], losses(1.0, 2.0, 1.5, name="val_score"))) == 3
    assert stopper.monitor_op is np.greater
    with pytest.raises(ValueError, match="mode='max'"):
        fit(FakeModel(), [cb.EarlyStopping("val_score")], losses(1.0, name="val_score"))
    with pytest.warns(UserWarning, match="unknown, fallback to auto"):
        assert cb.EarlyStopping(mode="sideways").mode == "auto"


def test_early_stopping_restores_the_best_weights(capsys):
    model = FakeModel()
    stopper = cb.EarlyStopping("loss", patience=2, restore_best_weights=True, verbose=1)
    fit(model, [stopper], losses(0.8, 0.3, 0.5, 0.6, 0.1, name="loss"))
    # Epoch 1 was best; epochs 2 and 3 did not improve, so training stopped after epoch 3.
    assert stopper.stopped_epoch == 3 and stopper.best_epoch == 1
    np.testing.assert_array_equal(model.weights[0], [1.0, 1.0])
    assert capsys.readouterr().out == (
        "Epoch 4: early stopping\nRestoring model weights from the end of the best epoch: 2.\n"
    )
    # A second fit with the same instance starts afresh.
    assert len(fit(model, [stopper], losses(5.0, 4.0, 3.0, name="loss"))) == 3


def test_early_stopping_missing_monitor_warns_and_continues():
    with pytest.warns(UserWarning, match="Available metrics are: loss"):
        ran = fit(FakeModel(), [cb.EarlyStopping()], losses(1.0, 2.0, 3.0, name="loss"))
    assert len(ran) == 3


# ---------------------------------------------------------------- ModelCheckpoint
def test_checkpoint_every_epoch_with_formatted_names(tmp_path):
    model = FakeModel()
    pattern = str(tmp_path / "ckpt" / "{epoch:02d}-{val_loss:.2f}.weights.safetensors")
    fit(model, [cb.ModelCheckpoint(pattern)], losses(0.5, ft.constant(0.25)))
    names = sorted(p.name for p in (tmp_path / "ckpt").iterdir())
    assert names == ["01-0.50.weights.safetensors", "02-0.25.weights.safetensors"]
    loaded = saving.load_weights_file(tmp_path / "ckpt" / names[1])
    np.testing.assert_array_equal(loaded["0000"], [1.0, 1.0])  # the weights at epoch 2's end


def test_checkpoint_save_best_only(tmp_path, capsys):
    model = FakeModel()
    path = str(tmp_path / "best.safetensors")
    checkpoint = cb.ModelCheckpoint(path, save_best_only=True, verbose=1)
    fit(model, [checkpoint], losses(0.5, 0.6, 0.4, 0.45))
    assert model.saved == [path, path] and checkpoint.best == 0.4
    np.testing.assert_array_equal(saving.load_weights_file(path)["0000"], [2.0, 2.0])
    assert capsys.readouterr().out.splitlines() == [
        f"Epoch 1: val_loss improved from inf to 0.50000, saving model to {path}",
        "Epoch 2: val_loss did not improve from 0.50000",
        f"Epoch 3: val_loss improved from 0.50000 to 0.40000, saving model to {path}",
        "Epoch 4: val_loss did not improve from 0.40000",
    ]


def test_checkpoint_max_mode_and_initial_threshold(tmp_path):
    model = FakeModel()
    values = losses(0.7, 0.9, 0.8, 0.95, name="val_acc")
    path = str(tmp_path / "w-{epoch}.safetensors")
    fit(model, [cb.ModelCheckpoint(path, "val_acc", save_best_only=True)], values)
    assert [p.rsplit("-", 1)[1] for p in model.saved] == [
        "1.safetensors",
        "2.safetensors",
        "4.safetensors",
    ]
    model.saved.clear()
    threshold = cb.ModelCheckpoint(
        path, "val_acc", save_best_only=True, mode="max", initial_value_threshold=0.92
    )
    fit(model, [threshold], values)
    assert [p.rsplit("-", 1)[1] for p in model.saved] == ["4.safetensors"]


def test_checkpoint_every_n_batches(tmp_path):
    model = FakeModel()
    path = str(tmp_path / "e{epoch}-b{batch}.safetensors")
    fit(model, [cb.ModelCheckpoint(path, save_freq=2)], losses(1.0, 1.0), steps=3)
    assert [p.rsplit("/", 1)[1] for p in model.saved] == [
        "e1-b2.safetensors",
        "e2-b1.safetensors",
        "e2-b3.safetensors",
    ]


def test_checkpoint_errors(tmp_path):
    with pytest.raises(ValueError, match="Unrecognized save_freq"):
        cb.ModelCheckpoint("x", save_freq="batch")
    with pytest.raises(KeyError, match="Failed to format this callback filepath"):
        fit(FakeModel(), [cb.ModelCheckpoint(str(tmp_path / "{val_acc}"))], losses(1.0))
    (tmp_path / "a_dir").mkdir()
    with pytest.raises(OSError, match="non-directory filepath"):
        fit(FakeModel(), [cb.ModelCheckpoint(str(tmp_path / "a_dir"))], losses(1.0))


# ---------------------------------------------------------------- LearningRateScheduler
def test_learning_rate_scheduler_sets_the_rate_each_epoch(capsys):
    model = FakeModel()
    seen = []
    record = cb.LambdaCallback(
        on_epoch_begin=lambda epoch, logs: seen.append(model.optimizer.learning_rate)
    )
    scheduler = cb.LearningRateScheduler(lambda epoch, lr: lr if epoch < 2 else lr * 0.5, 1)
    history = cb.History()
    fit(model, [scheduler, record, history], losses(1, 1, 1, 1))
    assert seen == [0.1, 0.1, 0.05, 0.025]
    assert history.history["learning_rate"] == [0.1, 0.1, 0.05, 0.025]
    assert (
        "Epoch 3: LearningRateScheduler setting learning rate to 0.05." in capsys.readouterr().out
    )


def test_learning_rate_scheduler_old_api_tensors_and_bad_outputs():
    model = FakeModel()
    fit(model, [cb.LearningRateScheduler(lambda epoch: 0.01 * (epoch + 1))], losses(1, 1, 1))
    assert model.optimizer.learning_rate == pytest.approx(0.03)
    fit(model, [cb.LearningRateScheduler(lambda e, lr: ft.constant(0.5))], losses(1))
    assert model.optimizer.learning_rate == 0.5 and type(model.optimizer.learning_rate) is float
    with pytest.raises(ValueError, match="should be a float. Got: fast"):
        fit(model, [cb.LearningRateScheduler(lambda e, lr: "fast")], losses(1))
    model.optimizer = object()
    with pytest.raises(ValueError, match='must have a "learning_rate"'):
        fit(model, [cb.LearningRateScheduler(lambda e, lr: lr)], losses(1))


# ---------------------------------------------------------------- CSVLogger, JSONLogger
def test_csv_logger_writes_sorted_columns_and_appends(tmp_path):
    path = tmp_path / "log.csv"
    logs = [{"loss": 0.5, "acc": ft.constant(0.25)}, {"loss": 0.125, "acc": 0.75}]
    fit(FakeModel(), [cb.CSVLogger(path)], logs)
    assert path.read_text().splitlines() == [
        "epoch,acc,loss,val_acc,val_loss",
        "0,0.25,0.5,NA,NA",
        "1,0.75,0.125,NA,NA",
    ]
    fit(FakeModel(), [cb.CSVLogger(str(path), separator=";", append=True)], [logs[1]])
    assert path.read_text().splitlines()[-1] == "0;0.75;0.125;NA;NA"
    assert len(path.read_text().splitlines()) == 4  # no second header
    fit(FakeModel(), [cb.CSVLogger(path)], [{"loss": 1.0, "val_loss": 2.0}])
    assert path.read_text().splitlines() == ["epoch,loss,val_loss", "0,1.0,2.0"]


def test_json_logger_writes_one_object_per_epoch(tmp_path):
    path = tmp_path / "log.jsonl"
    logs = [
        {"loss": ft.constant(0.5), "val_loss": np.float64(0.75)},
        {"loss": float("nan"), "val_loss": math.inf},
    ]
    fit(FakeModel(), [cb.JSONLogger(path)], logs)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records == [
        {"epoch": 0, "loss": 0.5, "val_loss": 0.75},
        {"epoch": 1, "loss": None, "val_loss": None},
    ]
    fit(FakeModel(), [cb.JSONLogger(path, append=True)], [{"loss": 1.0, "name": "x"}])
    assert json.loads(path.read_text().splitlines()[-1]) == {"epoch": 0, "loss": 1.0, "name": "x"}


# ---------------------------------------------------------------- LambdaCallback, TerminateOnNaN
def test_lambda_callback_calls_the_given_functions():
    calls = []
    callback = cb.LambdaCallback(
        on_train_begin=lambda logs: calls.append("train_begin"),
        on_epoch_end=lambda epoch, logs: calls.append(("epoch_end", epoch, logs["loss"])),
        on_train_batch_end=lambda batch, logs: calls.append(("batch_end", batch)),
        on_test_end=lambda logs: calls.append("test_end"),
    )
    fit(FakeModel(), [callback], losses(0.5, name="loss"))
    callback.on_test_end({})
    assert calls == [
        "train_begin",
        ("batch_end", 0),
        ("batch_end", 1),
        ("epoch_end", 0, 0.5),
        "test_end",
    ]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_terminate_on_nan_stops_at_the_bad_batch(bad, capsys):
    model = FakeModel()
    batches = []

    def batch_logs(epoch, batch):
        batches.append((epoch, batch))
        return {"loss": ft.constant(bad) if (epoch, batch) == (1, 0) else 1.0}

    ran = fit(model, [cb.TerminateOnNaN()], losses(1, 1, 1), steps=3, batch_logs=batch_logs)
    assert ran == [0, 1] and batches[-1] == (1, 0)
    assert capsys.readouterr().out == "Batch 0: Invalid loss, terminating training\n"
    with pytest.raises(RuntimeError, match="NaN or Inf loss encountered at batch 0"):
        fit(model, [cb.TerminateOnNaN(raise_error=True)], losses(1, 1), batch_logs=batch_logs)


# ---------------------------------------------------------------- ProgbarLogger
def test_progbar_logger_writes_the_epoch_lines():
    out = io.StringIO()
    logger = cb.ProgbarLogger(file=out)
    logs = [{"loss": 0.5, "val_loss": 0.75}, {"loss": 0.25, "val_loss": 0.5}]
    model = FakeModel()
    callbacks = cb.CallbackList(
        [logger], model=model, verbose=2, epochs=2, steps=3, batch_size=4, samples=10
    )
    callbacks.on_train_begin()
    for epoch, epoch_logs in enumerate(logs):
        callbacks.on_epoch_begin(epoch)
        for batch in range(3):
            callbacks.on_train_batch_end(batch, {"loss": 1.0})
        # Validation inside fit is not shown.
        callbacks.on_test_begin()
        callbacks.on_test_batch_end(0, {"loss": 9.0})
        callbacks.on_test_end({"loss": 9.0})
        callbacks.on_epoch_end(epoch, epoch_logs)
    callbacks.on_train_end()
    lines = out.getvalue().splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and len(lines) == 4
    assert lines[1].startswith("3/3 - 0s - ")
    assert lines[1].split("step - ", 1)[1].startswith("loss: 0.5000 - val_loss: 0.7500 - ")
    assert lines[1].endswith("samples/s") and lines[3].split("step - ")[1].startswith("loss: 0.25")
    # evaluate afterwards shows its own line, and one epoch has no "Epoch" header.
    out.truncate(0), out.seek(0)
    callbacks.set_params({"verbose": 2, "epochs": 1, "steps": None})
    callbacks.on_test_begin()
    callbacks.on_test_batch_end(0, {"loss": 2.0})
    callbacks.on_test_batch_end(1, {"loss": 1.0})
    callbacks.on_test_end({"loss": 1.5})
    assert out.getvalue().startswith("2/2 - 0s - ") and "loss: 1.5000" in out.getvalue()


def test_progbar_logger_is_silent_with_verbose_0():
    out = io.StringIO()
    fit(FakeModel(), [cb.ProgbarLogger(file=out)], losses(1, 2), verbose=0)
    assert out.getvalue() == ""


# ---------------------------------------------------------------- ReduceLROnPlateau
def _rates(callback, values, name="val_loss", model=None):
    """The learning rate after each epoch's end, and the rate logged for that epoch."""
    model = model or FakeModel()
    after, logged = [], []
    callback.set_model(model)
    callback.on_train_begin()
    for epoch, value in enumerate(values):
        logs = {name: value}
        callback.on_epoch_end(epoch, logs)
        after.append(round(model.optimizer.learning_rate, 7))
        logged.append(round(logs["learning_rate"], 7))
    return after, logged


@pytest.mark.parametrize(
    "values, kwargs, expected",
    [
        # The rates TF 2.21 sets for the same values (tests/test_tf_reference.py compares live).
        (
            (1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95),
            {"factor": 0.5, "patience": 2},
            [0.1, 0.1, 0.1, 0.05, 0.05, 0.025, 0.025, 0.0125],
        ),
        (
            (1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95),
            {"factor": 0.5, "patience": 1, "cooldown": 2},
            [0.1, 0.1, 0.05, 0.05, 0.025, 0.025, 0.0125, 0.0125],
        ),
        # 0.99995 is within the default min_delta (1e-4) of 1.0: not an improvement.
        (
            (1.0, 0.99995, 0.9999, 0.8, 0.8, 0.8),
            {"patience": 1, "min_lr": 0.002},
            [0.1, 0.01, 0.002, 0.002, 0.002, 0.002],
        ),
    ],
)
def test_reduce_lr_on_plateau_min_mode(values, kwargs, expected):
    after, logged = _rates(cb.ReduceLROnPlateau(**kwargs), values)
    assert after == expected
    # The logged rate is the one in force during the epoch, before any reduction.
    assert logged == [0.1, *expected[:-1]]


def test_reduce_lr_on_plateau_max_and_explicit_min_mode():
    values = (0.5, 0.6, 0.6, 0.6, 0.7, 0.7)
    as_max = cb.ReduceLROnPlateau("val_accuracy", factor=0.5, patience=1, mode="max")
    assert _rates(as_max, values, "val_accuracy")[0] == [0.1, 0.1, 0.05, 0.025, 0.025, 0.0125]
    # Auto mode knows accuracy increases.
    auto = cb.ReduceLROnPlateau("val_accuracy", factor=0.5, patience=1)
    assert _rates(auto, values, "val_accuracy")[0] == [0.1, 0.1, 0.05, 0.025, 0.025, 0.0125]
    as_min = cb.ReduceLROnPlateau("val_accuracy", factor=0.5, patience=1, mode="min")
    assert _rates(as_min, values, "val_accuracy")[0] == [
        0.1,
        0.05,
        0.025,
        0.0125,
        0.00625,
        0.003125,
    ]


def test_reduce_lr_on_plateau_resets_between_fits():
    callback = cb.ReduceLROnPlateau(factor=0.5, patience=1)
    model = FakeModel()
    _rates(callback, (1.0, 1.0), model=model)
    assert model.optimizer.learning_rate == pytest.approx(0.05)
    # A new fit starts with no best and no wait: the first epoch is an improvement.
    after, _ = _rates(callback, (5.0, 4.0), model=model)
    assert after == [0.05, 0.05]


def test_reduce_lr_on_plateau_bad_arguments_and_missing_monitor():
    with pytest.raises(ValueError, match="factor=1.5"):
        cb.ReduceLROnPlateau(factor=1.5)
    with pytest.raises(TypeError, match="epsilon"):
        cb.ReduceLROnPlateau(epsilon=1e-3)
    with pytest.warns(UserWarning, match="mode 'up' is unknown"):
        cb.ReduceLROnPlateau(mode="up")
    callback = cb.ReduceLROnPlateau()
    with pytest.warns(UserWarning, match="`val_loss` which is not available"):
        after, _ = _rates(callback, (1.0,), name="loss")
    assert after == [0.1]


def test_reduce_lr_on_plateau_in_fit_lowers_the_real_optimizer():
    # Zero inputs and no bias: zero gradients and a flat loss, a plateau from the start.
    model = ft.keras.Sequential([ft.keras.Input((2,)), ft.keras.layers.Dense(1, use_bias=False)])
    model.compile(ft.keras.optimizers.SGD(0.01), "mse")
    x, y = np.zeros((8, 2), np.float32), np.ones((8, 1), np.float32)
    callback = cb.ReduceLROnPlateau("loss", factor=0.5, patience=1, min_lr=0.002)
    history = model.fit(x, y, epochs=5, verbose=0, callbacks=[callback])
    assert history.history["learning_rate"] == pytest.approx([0.01, 0.01, 0.005, 0.0025, 0.002])
    assert float(model.optimizer.learning_rate) == pytest.approx(0.002)


def _ema_model():
    ft.random.set_seed(2)
    model = ft.keras.Sequential([ft.keras.Input((3,)), ft.keras.layers.Dense(2)])
    optimizer = ft.keras.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.5)
    model.compile(optimizer=optimizer, loss="mse")
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(16, 3)).astype("float32"), rng.normal(size=(16, 2)).astype("float32")
    return model, x, y


def test_swap_ema_weights_evaluates_and_predicts_with_the_averages_then_swaps_back():
    model, x, y = _ema_model()
    model.fit(x, y, epochs=2, batch_size=4, verbose=0)
    weights = [w.numpy() for w in model.trainable_weights]
    averages = [a.numpy() for a in model.optimizer._model_variables_moving_average]
    assert not all(np.allclose(w, a) for w, a in zip(weights, averages, strict=True))
    kernel, bias = averages
    expected = x @ kernel + bias
    swap = ft.keras.callbacks.SwapEMAWeights()
    np.testing.assert_allclose(
        model.predict(x, verbose=0, callbacks=[swap]), expected, rtol=1e-5, atol=1e-6
    )
    for w, kept in zip(model.trainable_weights, weights, strict=True):
        np.testing.assert_array_equal(w.numpy(), kept)  # swapped back after predict
    loss = model.evaluate(x, y, verbose=0, callbacks=[swap])
    assert loss == pytest.approx(float(np.mean((expected - y) ** 2)), rel=1e-5)
    for w, kept in zip(model.trainable_weights, weights, strict=True):
        np.testing.assert_array_equal(w.numpy(), kept)  # swapped back after each


def test_swap_ema_weights_on_epoch_leaves_the_averages_in_the_model():
    model, x, y = _ema_model()
    swap = ft.keras.callbacks.SwapEMAWeights(swap_on_epoch=True)
    model.fit(x, y, epochs=2, batch_size=4, verbose=0, callbacks=[swap])
    for w, a in zip(
        model.trainable_weights, model.optimizer._model_variables_moving_average, strict=True
    ):
        np.testing.assert_array_equal(w.numpy(), a.numpy())


def test_swap_ema_weights_needs_an_optimizer_with_ema():
    model = ft.keras.Sequential([ft.keras.Input((3,)), ft.keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="use_ema=True"):
        model.evaluate(
            np.ones((2, 3)),
            np.ones((2, 2)),
            verbose=0,
            callbacks=[ft.keras.callbacks.SwapEMAWeights()],
        )
