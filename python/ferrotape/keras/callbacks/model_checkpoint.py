"""``ModelCheckpoint`` (Keras 3's ``keras.src.callbacks.model_checkpoint``)."""

import os
import warnings

import numpy as np

from .callback import _scalar
from .monitor_callback import _MonitorCallback


class ModelCheckpoint(_MonitorCallback):
    """Saves the model's weights every epoch (or every ``save_freq`` batches).

    ``filepath`` may hold format fields filled from ``epoch`` (counted from 1), ``batch`` and
    the logs, e.g. ``"ckpt/{epoch:02d}-{val_loss:.2f}.weights.safetensors"``; missing
    directories are created. With ``save_best_only``, a file is written only when ``monitor``
    improves on the best so far (``mode`` ``"min"``, ``"max"`` or ``"auto"``), starting from
    ``initial_value_threshold`` if given. A ``.keras`` path (with ``save_weights_only=False``)
    gets the whole model through ``model.save``; any other path gets the weights through
    ``model.save_weights``, whose file name picks the format (``.weights.h5`` or
    ``.safetensors``).
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
        if not self.save_weights_only and filepath.endswith(".keras"):
            self.model.save(filepath, overwrite=True)
        else:
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
