"""``EarlyStopping`` (Keras 3's ``keras.src.callbacks.early_stopping``)."""

import warnings

from .callback import _scalar
from .monitor_callback import _MonitorCallback


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
