"""``ft.keras.callbacks``: hooks into ``Model.fit``/``evaluate``/``predict``, as in Keras 3.

A callback sees the model (``self.model``) and the loop's parameters (``self.params``: at least
``verbose``, ``epochs``, ``steps``) and is called at the start and end of training, of each
epoch and of each batch, with a ``logs`` dict of numbers (``loss``, metrics, ``val_*``).
Callbacks use only the model's ``stop_training`` flag, ``get_weights``/``set_weights``,
``save_weights(path)`` and ``optimizer.learning_rate``.

>>> class Model:  # the smallest model a callback needs
...     stop_training = False
>>> history = History()
>>> callbacks = CallbackList([history], model=Model(), verbose=0, epochs=2, steps=1)
>>> callbacks.on_train_begin()
>>> for epoch, loss in enumerate([0.5, 0.25]):
...     callbacks.on_epoch_begin(epoch)
...     callbacks.on_epoch_end(epoch, {"loss": loss})
>>> callbacks.on_train_end()
>>> history.history, history.epoch
({'loss': [0.5, 0.25]}, [0, 1])
"""

import csv
import json
import math
import numbers
import os
import reprlib
import sys
import warnings

import numpy as np

from .. import nest
from .utils import ProgressBar

__all__ = [
    "CSVLogger",
    "Callback",
    "CallbackList",
    "EarlyStopping",
    "History",
    "JSONLogger",
    "LambdaCallback",
    "LearningRateScheduler",
    "ModelCheckpoint",
    "ProgbarLogger",
    "ReduceLROnPlateau",
    "TerminateOnNaN",
]


def _scalar(value):
    """A 0-d tensor or numpy number as a Python number; anything else unchanged."""
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, numbers.Number):
        return value.item() if isinstance(value, np.generic) else value
    if hasattr(value, "numpy"):
        value = value.numpy()
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return value.item()
    return value


class Callback:
    """Base class: override the ``on_*`` methods you need; the others do nothing.

    ``on_train_batch_begin``/``on_train_batch_end`` call ``on_batch_begin``/``on_batch_end``,
    as in Keras, so callbacks written against either name work.
    """

    params = None
    _model = None

    def __init__(self):
        self.params = None
        self._model = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self._model = model

    @property
    def model(self):
        return self._model

    def on_batch_begin(self, batch, logs=None):
        """A backwards-compatible alias of ``on_train_batch_begin``."""

    def on_batch_end(self, batch, logs=None):
        """A backwards-compatible alias of ``on_train_batch_end``."""

    def on_epoch_begin(self, epoch, logs=None):
        """Called at the start of each training epoch (``epoch`` counts from 0)."""

    def on_epoch_end(self, epoch, logs=None):
        """Called at the end of each epoch with the epoch's metrics (``val_*`` included)."""

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        """Called before each batch of ``evaluate`` (and of validation inside ``fit``)."""

    def on_test_batch_end(self, batch, logs=None):
        """Called after each batch of ``evaluate`` with the running metrics."""

    def on_predict_batch_begin(self, batch, logs=None):
        """Called before each batch of ``predict``."""

    def on_predict_batch_end(self, batch, logs=None):
        """Called after each batch of ``predict``."""

    def on_train_begin(self, logs=None):
        """Called once at the start of ``fit``."""

    def on_train_end(self, logs=None):
        """Called once at the end of ``fit``."""

    def on_test_begin(self, logs=None):
        """Called at the start of ``evaluate`` (and of validation inside ``fit``)."""

    def on_test_end(self, logs=None):
        """Called at the end of ``evaluate`` with its metrics."""

    def on_predict_begin(self, logs=None):
        """Called at the start of ``predict``."""

    def on_predict_end(self, logs=None):
        """Called at the end of ``predict``."""


class CallbackList(Callback):
    """Dispatches every hook to a list of callbacks, in order.

    ``add_history``/``add_progbar`` add a :class:`History` and a :class:`ProgbarLogger`
    unless the list has one; ``model`` and ``**params`` are passed on to every callback.
    """

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        super().__init__()
        self.callbacks = _flatten_callbacks(callbacks)
        self._history = next((c for c in self.callbacks if isinstance(c, History)), None)
        self._progbar = next((c for c in self.callbacks if isinstance(c, ProgbarLogger)), None)
        if self._progbar is None and add_progbar:
            # First, so the epoch's bar is finished before other callbacks print at epoch end.
            self._progbar = ProgbarLogger()
            self.callbacks.insert(0, self._progbar)
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def append(self, callback):
        self.callbacks.extend(_flatten_callbacks([callback]))

    def __iter__(self):
        return iter(self.callbacks)

    def __len__(self):
        return len(self.callbacks)

    def set_params(self, params):
        self.params = params
        for callback in self.callbacks:
            callback.set_params(params)

    def set_model(self, model):
        super().set_model(model)
        if self._history is not None:
            model.history = self._history
        for callback in self.callbacks:
            callback.set_model(model)

    def _dispatch(self, hook, *args, logs=None):
        logs = {} if logs is None else logs
        for callback in self.callbacks:
            getattr(callback, hook)(*args, logs=logs)

    def on_batch_begin(self, batch, logs=None):
        self._dispatch("on_train_batch_begin", batch, logs=logs)

    def on_batch_end(self, batch, logs=None):
        self._dispatch("on_train_batch_end", batch, logs=logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._dispatch("on_epoch_begin", epoch, logs=logs)

    def on_epoch_end(self, epoch, logs=None):
        self._dispatch("on_epoch_end", epoch, logs=logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._dispatch("on_train_batch_begin", batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self._dispatch("on_train_batch_end", batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._dispatch("on_test_batch_begin", batch, logs=logs)

    def on_test_batch_end(self, batch, logs=None):
        self._dispatch("on_test_batch_end", batch, logs=logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._dispatch("on_predict_batch_begin", batch, logs=logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._dispatch("on_predict_batch_end", batch, logs=logs)

    def on_train_begin(self, logs=None):
        self._dispatch("on_train_begin", logs=logs)

    def on_train_end(self, logs=None):
        self._dispatch("on_train_end", logs=logs)

    def on_test_begin(self, logs=None):
        self._dispatch("on_test_begin", logs=logs)

    def on_test_end(self, logs=None):
        self._dispatch("on_test_end", logs=logs)

    def on_predict_begin(self, logs=None):
        self._dispatch("on_predict_begin", logs=logs)

    def on_predict_end(self, logs=None):
        self._dispatch("on_predict_end", logs=logs)


def _flatten_callbacks(callbacks):
    """A callback, or (nested) lists of them, as a flat list (Keras 3 flattens too)."""
    if callbacks is None:
        return []
    flat = nest.flatten_for(callbacks, (list, tuple), "callbacks")
    for callback in flat:
        if not isinstance(callback, Callback):
            raise TypeError(
                "CallbackList: callbacks must be ft.keras.callbacks.Callback instances, "
                f"received {reprlib.repr(callback)}"
            )
    return flat


class History(Callback):
    """Records each epoch's logs: ``history`` maps a name to its list of values, ``epoch`` the
    epoch numbers. ``fit`` adds one and returns it; it is also set as ``model.history``."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for name, value in (logs or {}).items():
            self.history.setdefault(name, []).append(_scalar(value))
        if self.model is not None:
            self.model.history = self


# ---------------------------------------------------------------- monitoring a quantity
class _MonitorCallback(Callback):
    """Shared by the callbacks that watch one logged quantity for improvement (Keras 3)."""

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(
                f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto mode.",
                stacklevel=3,
            )
            mode = "auto"
        self.monitor = monitor
        self.mode = mode
        self.best = baseline
        self.min_delta = abs(min_delta)
        self.monitor_op = None

    def _set_monitor_op(self):
        if self.mode == "auto":
            increasing = _metric_increases(self.monitor, self.model)
            if increasing is None:
                raise ValueError(
                    f"{type(self).__name__} callback received monitor={self.monitor}, but "
                    "ferrotape cannot tell whether that metric should be maximized or "
                    "minimized. Pass `mode='max'` in order to monitor based on the highest "
                    "metric value, or pass `mode='min'` in order to use the lowest value."
                )
        else:
            increasing = self.mode == "max"
        self.monitor_op = np.greater if increasing else np.less
        if not increasing:
            self.min_delta = -abs(self.min_delta)
        if self.best is None:
            self.best = -np.inf if increasing else np.inf

    def _is_improvement(self, value, reference):
        if reference is None:
            return True
        return bool(self.monitor_op(float(value) - self.min_delta, float(reference)))


# Names whose direction is known without asking the metric (the name without "val_").
_INCREASING_WORDS = ("acc", "auc", "precision", "recall", "f1", "iou", "r2")
_DECREASING_WORDS = ("loss", "error", "crossentropy", "hinge", "divergence", "mse", "mae")


def _metric_increases(monitor, model):
    """True if higher is better for ``monitor``, False if lower is, None if unknown.

    As Keras 3: ``loss`` decreases, and a compiled metric of that name says its direction
    (``_direction``). Beyond Keras, common metric names (accuracy, AUC, MSE, ...) decide too.
    """
    name = monitor.removeprefix("val_")
    if name == "loss":
        return False
    for metric in _model_metrics(model):
        direction = getattr(metric, "_direction", None)
        if getattr(metric, "name", None) == name and direction in ("up", "down"):
            return direction == "up"
    lowered = name.lower()
    if any(word in lowered for word in _DECREASING_WORDS):
        return False
    if any(word in lowered for word in _INCREASING_WORDS):
        return True
    return None


def _model_metrics(model):
    metrics = []
    for metric in getattr(model, "metrics", None) or []:
        inner = getattr(metric, "metrics", None)
        metrics.extend(inner if isinstance(inner, (list, tuple)) else [metric])
    return metrics


class EarlyStopping(_MonitorCallback):
    """Stops training when ``monitor`` has stopped improving (Keras 3 semantics).

    Each epoch the monitored value is compared with the best so far; an improvement must
    beat it by more than ``min_delta``. After ``patience`` epochs without one,
    ``model.stop_training`` is set. ``mode`` is ``"min"``, ``"max"`` or ``"auto"`` (from the
    name). With a ``baseline``, the wait restarts only on epochs that beat the baseline too.
    ``restore_best_weights`` puts back the weights of the best epoch at the end of training.
    Epochs before ``start_from_epoch`` are not monitored.
    """

    def __init__(
        self,
        monitor="val_loss",
        min_delta=0,
        patience=0,
        verbose=0,
        mode="auto",
        baseline=None,
        restore_best_weights=False,
        start_from_epoch=0,
    ):
        super().__init__(monitor, mode, None, min_delta)
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights = None
        self.best_epoch = 0

    def on_train_begin(self, logs=None):
        # Reset, so that an instance can be used for several fits.
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights = None
        self.best_epoch = 0
        self.monitor_op = None
        self.best = None
        self.min_delta = abs(self.min_delta)

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            # Set up late, when the model's metrics exist.
            self._set_monitor_op()
        current = self._monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            # Until an epoch improves, the current weights are the best seen.
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            # The wait restarts only on beating both the best so far and the baseline.
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(
                    "Restoring model weights from the end of the best epoch: "
                    f"{self.best_epoch + 1}."
                )
            self.model.set_weights(self.best_weights)

    def get_monitor_value(self, logs):
        return self._monitor_value(logs)

    def _monitor_value(self, logs):
        logs = logs or {}
        value = logs.get(self.monitor)
        if value is None:
            warnings.warn(
                f"Early stopping conditioned on metric `{self.monitor}` which is not "
                f"available. Available metrics are: {','.join(logs)}",
                stacklevel=3,
            )
            return None
        return _scalar(value)


class ModelCheckpoint(_MonitorCallback):
    """Saves the model's weights every epoch (or every ``save_freq`` batches).

    ``filepath`` may hold format fields filled from ``epoch`` (counted from 1), ``batch`` and
    the logs, e.g. ``"ckpt/{epoch:02d}-{val_loss:.2f}.weights.safetensors"``; missing
    directories are created. With ``save_best_only``, a file is written only when ``monitor``
    improves on the best so far (``mode`` ``"min"``, ``"max"`` or ``"auto"``), starting from
    ``initial_value_threshold`` if given. Saving goes through ``model.save_weights(path)``.

    ferrotape saves weights only: ``save_weights_only=False`` (Keras's full-model ``.keras``
    format) is not supported and writes the weights as ``save_weights_only=True`` does; for
    the same reason no file extension is required.
    """

    def __init__(
        self,
        filepath,
        monitor="val_loss",
        verbose=0,
        save_best_only=False,
        save_weights_only=False,
        mode="auto",
        save_freq="epoch",
        initial_value_threshold=None,
    ):
        super().__init__(monitor, mode, initial_value_threshold)
        self.filepath = os.fspath(filepath)
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        if save_freq != "epoch" and (
            not isinstance(save_freq, int) or isinstance(save_freq, bool) or save_freq < 1
        ):
            raise ValueError(
                f"Unrecognized save_freq: {save_freq}. "
                "Expected save_freq are 'epoch' or integer values"
            )
        self.save_freq = save_freq
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = 0
        self._current_epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save_model(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        if self.save_freq == "epoch":
            self._save_model(epoch, None, logs)

    def _should_save_on_batch(self, batch):
        if self.save_freq == "epoch":
            return False
        # A batch index not above the last one seen means a new epoch began.
        added = batch + 1 if batch <= self._last_batch_seen else batch - self._last_batch_seen
        self._batches_seen_since_last_saving += added
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

    def _save_model(self, epoch, batch, logs):
        logs = {name: _scalar(value) for name, value in (logs or {}).items()}
        filepath = self._file_path(epoch, batch, logs)
        if not self._should_save(epoch, logs, filepath):
            return
        directory = os.path.dirname(filepath)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if os.path.isdir(filepath):
            raise OSError(
                "Please specify a non-directory filepath for ModelCheckpoint. "
                f"Filepath used is an existing directory: {filepath}"
            )
        self.model.save_weights(filepath)

    def _should_save(self, epoch, logs, filepath):
        if not self.save_best_only:
            if self.verbose > 0:
                print(f"Epoch {epoch + 1}: saving model to {filepath}")
            return True
        if self.monitor_op is None:
            self._set_monitor_op()
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available.", stacklevel=4)
            return True
        if np.ndim(current) > 0:
            warnings.warn(
                "Can save best model only when `monitor` is a scalar value. "
                f"Received: {current}. Falling back to `save_best_only=False`.",
                stacklevel=4,
            )
            return True
        if self._is_improvement(current, self.best):
            if self.verbose > 0:
                print(
                    f"Epoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} to "
                    f"{current:.5f}, saving model to {filepath}"
                )
            self.best = current
            return True
        if self.verbose > 0:
            print(f"Epoch {epoch + 1}: {self.monitor} did not improve from {self.best:.5f}")
        return False

    def _file_path(self, epoch, batch, logs):
        fields = dict(logs)
        if batch is not None and "batch" not in logs:
            fields["batch"] = batch + 1
        fields["epoch"] = epoch + 1
        try:
            return self.filepath.format(**fields)
        except KeyError as error:
            raise KeyError(
                f'Failed to format this callback filepath: "{self.filepath}". Reason: {error}'
            ) from None


# ---------------------------------------------------------------- learning rate, logging
class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate at the start of each epoch.

    ``schedule(epoch, lr)`` gets the epoch index (from 0) and the current learning rate and
    returns the new one (a one-argument ``schedule(epoch)`` works too, as in Keras). The rate
    used is added to the epoch's logs as ``learning_rate``.

    >>> def schedule(epoch, lr):
    ...     return lr if epoch < 2 else lr * 0.5
    """

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = getattr(self.model, "optimizer", None)
        if not hasattr(optimizer, "learning_rate"):
            raise ValueError('Optimizer must have a "learning_rate" attribute.')
        current = float(_scalar(optimizer.learning_rate))
        try:
            learning_rate = self.schedule(epoch, current)
        except TypeError:
            # The older one-argument schedule(epoch).
            learning_rate = self.schedule(epoch)
        learning_rate = _scalar(learning_rate)
        if not isinstance(learning_rate, numbers.Real) or isinstance(learning_rate, bool):
            raise ValueError(
                f"The output of the `schedule` function should be a float. Got: {learning_rate}"
            )
        optimizer.learning_rate = float(learning_rate)
        if self.verbose > 0:
            print(
                f"Epoch {epoch + 1}: LearningRateScheduler setting learning rate to "
                f"{float(learning_rate)}."
            )

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(_scalar(self.model.optimizer.learning_rate))


class ReduceLROnPlateau(_MonitorCallback):
    """Multiplies the learning rate by ``factor`` when ``monitor`` has stopped improving
    (Keras 3 semantics).

    An improvement beats the best so far by more than ``min_delta``. After ``patience``
    epochs without one, the rate becomes ``max(lr * factor, min_lr)`` (if it is still above
    ``min_lr``) and ``cooldown`` epochs follow during which the wait does not count. The
    current rate is added to each epoch's logs as ``learning_rate``.

    >>> reduce_lr = ReduceLROnPlateau(monitor="val_loss", factor=0.2, patience=5, min_lr=0.001)
    """

    def __init__(
        self,
        monitor="val_loss",
        factor=0.1,
        patience=10,
        verbose=0,
        mode="auto",
        min_delta=1e-4,
        cooldown=0,
        min_lr=0.0,
        **kwargs,
    ):
        if kwargs:
            raise TypeError(f"ReduceLROnPlateau: unexpected keyword argument(s) {sorted(kwargs)}")
        super().__init__(monitor, mode, min_delta=min_delta)
        if factor >= 1.0:
            raise ValueError(
                f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}"
            )
        self.factor = factor
        self.min_lr = min_lr
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.wait = 0

    def _reset(self):
        self.best = None
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            # Set up late, when the model's metrics exist.
            self._set_monitor_op()
        logs = logs if logs is not None else {}
        optimizer = self.model.optimizer
        logs["learning_rate"] = float(_scalar(optimizer.learning_rate))
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(
                f"Learning rate reduction is conditioned on metric `{self.monitor}` which is "
                f"not available. Available metrics are: {','.join(logs)}.",
                stacklevel=2,
            )
            return
        current = _scalar(current)
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience and self._reduce(optimizer, epoch):
                self.cooldown_counter = self.cooldown
                self.wait = 0

    def _reduce(self, optimizer, epoch):
        old_lr = float(_scalar(optimizer.learning_rate))
        # As Keras: compared with min_lr in float32, where the optimizer holds the rate.
        if old_lr <= np.float32(self.min_lr):
            return False
        new_lr = max(old_lr * self.factor, self.min_lr)
        optimizer.learning_rate = new_lr
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}.")
        return True


class CSVLogger(Callback):
    """Streams each epoch's logs to a CSV file: an ``epoch`` column, then the log names sorted.

    ``append=True`` adds to an existing file (writing the header only if it is empty).
    """

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep = separator
        self.filename = os.fspath(filename)
        self.append = append
        self.writer = None
        self.keys = None
        self.append_header = True
        self.csv_file = None

    def on_train_begin(self, logs=None):
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename, encoding="utf-8") as existing:
                    self.append_header = not existing.readline()
            mode = "a"
        else:
            mode = "w"
        self._close()
        self.csv_file = open(self.filename, mode, newline="", encoding="utf-8")
        self.writer = None
        self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            # With validation_freq > 1 the first epoch has no val_ keys: reserve their columns.
            if self.keys and not any(key.startswith("val_") for key in self.keys):
                self.keys += ["val_" + key for key in self.keys]
        if self.writer is None:
            self.writer = csv.DictWriter(
                self.csv_file, fieldnames=["epoch", *self.keys], delimiter=self.sep
            )
            if self.append_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((key, _csv_value(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        self._close()
        self.writer = None

    def _close(self):
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()


def _csv_value(value):
    value = _scalar(value)
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        return value
    return f'"[{", ".join(map(str, np.asarray(value).reshape(-1).tolist()))}]"'


class JSONLogger(Callback):
    """Writes each epoch's logs as one JSON object per line (JSON Lines): ferrotape's own.

    Each line is ``{"epoch": 0, "loss": 0.52, ...}``, flushed as the epoch ends, so a running
    training can be followed or plotted. Non-finite numbers are written as ``null`` (JSON
    has no NaN); arrays as lists. ``append=True`` adds to an existing file.
    """

    def __init__(self, filename, append=False):
        super().__init__()
        self.filename = os.fspath(filename)
        self.append = append
        self.file = None

    def on_train_begin(self, logs=None):
        self._close()
        self.file = open(self.filename, "a" if self.append else "w", encoding="utf-8")

    def on_epoch_end(self, epoch, logs=None):
        record = {"epoch": epoch}
        record.update((name, _json_value(value)) for name, value in (logs or {}).items())
        self.file.write(json.dumps(record, allow_nan=False) + "\n")
        self.file.flush()

    def on_train_end(self, logs=None):
        self._close()

    def _close(self):
        if self.file is not None and not self.file.closed:
            self.file.close()


def _json_value(value):
    value = _scalar(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    array = np.asarray(value)
    if array.dtype.kind in "fiub":
        return [_json_value(v) for v in array.tolist()] if array.ndim else _json_value(array.item())
    return str(value)


class LambdaCallback(Callback):
    """A callback made of functions: ``on_epoch_end=lambda epoch, logs: ...`` and so on.

    The named hooks take ``(epoch, logs)``, ``(batch, logs)`` or ``(logs)``; any other
    ``on_*`` hook can be given as a keyword too (``on_test_end=...``).
    """

    def __init__(
        self,
        on_epoch_begin=None,
        on_epoch_end=None,
        on_train_begin=None,
        on_train_end=None,
        on_train_batch_begin=None,
        on_train_batch_end=None,
        **kwargs,
    ):
        super().__init__()
        self.__dict__.update(kwargs)
        hooks = {
            "on_epoch_begin": on_epoch_begin,
            "on_epoch_end": on_epoch_end,
            "on_train_begin": on_train_begin,
            "on_train_end": on_train_end,
            "on_train_batch_begin": on_train_batch_begin,
            "on_train_batch_end": on_train_batch_end,
        }
        for name, function in hooks.items():
            if function is not None:
                setattr(self, name, function)


class TerminateOnNaN(Callback):
    """Stops training when a batch's loss is NaN or infinite.

    By default sets ``model.stop_training`` (the epoch ends and ``on_train_end`` runs);
    ``raise_error=True`` raises ``RuntimeError`` at once instead.
    """

    def __init__(self, raise_error=False):
        super().__init__()
        self.raise_error = raise_error

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None:
            return
        loss = float(_scalar(loss))
        if math.isnan(loss) or math.isinf(loss):
            if self.raise_error:
                raise RuntimeError(
                    f"NaN or Inf loss encountered at batch {batch}. "
                    f"Loss value: {loss}. Terminating training immediately."
                )
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class ProgbarLogger(Callback):
    """Shows the progress of ``fit``/``evaluate``/``predict``: an :class:`~.utils.ProgressBar`
    per epoch, preceded by ``Epoch i/N`` when there are several epochs.

    Reads ``verbose``, ``epochs`` and ``steps`` from the params (``steps=None``: unknown), and,
    for the throughput, ``batch_size`` and ``samples`` when the loop provides them. Inside
    ``fit`` the validation pass is silent, as in Keras. ``pinned`` is accepted for Keras
    compatibility and ignored; ``file`` is where to write (default: standard error).
    """

    def __init__(self, pinned=False, file=None):
        super().__init__()
        self.pinned = pinned
        self.file = file
        self.seen = 0
        self.progbar = None
        self.target = None
        self.verbose = 1
        self.epochs = 1
        self._called_in_fit = False

    def set_params(self, params):
        super().set_params(params)
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else verbose
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps")

    def on_train_begin(self, logs=None):
        # Inside fit, the validation pass at each epoch's end is not shown.
        self._called_in_fit = True

    def on_train_end(self, logs=None):
        self._called_in_fit = False

    def on_epoch_begin(self, epoch, logs=None):
        self._reset()
        if self.verbose and self.epochs > 1:
            print(f"Epoch {epoch + 1}/{self.epochs}", file=self._file(), flush=True)

    def on_train_batch_end(self, batch, logs=None):
        self._update(batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._finalize(logs)

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._reset()

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._update(batch, logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finalize(logs)

    def on_predict_begin(self, logs=None):
        self._reset()

    def on_predict_batch_end(self, batch, logs=None):
        self._update(batch, None)  # the logs hold the predictions: not shown

    def on_predict_end(self, logs=None):
        self._finalize(logs)

    def _file(self):
        return self.file if self.file is not None else sys.stderr

    def _reset(self):
        if self.progbar is not None:
            self.progbar.close()
        self.seen = 0
        self.progbar = None

    def _ensure_progbar(self):
        # Created at the first batch, so messages printed at epoch begin come before the bar.
        if self.progbar is None:
            self.progbar = ProgressBar(self.target, verbose=self.verbose, file=self._file())

    def _samples(self, steps):
        batch_size = (self.params or {}).get("batch_size")
        if not batch_size:
            return None
        samples = (self.params or {}).get("samples")
        return min(steps * batch_size, samples) if samples else steps * batch_size

    def _update(self, batch, logs):
        self._ensure_progbar()
        self.seen = batch + 1
        self.progbar.update(self.seen, logs or {}, self._samples(self.seen))

    def _finalize(self, logs):
        self._ensure_progbar()
        self.progbar.close(logs or {})
        self.progbar = None
