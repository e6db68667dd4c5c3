"""``ReduceLROnPlateau`` (Keras 3's ``keras.src.callbacks.reduce_lr_on_plateau``)."""

import warnings

import numpy as np

from .callback import _scalar
from .monitor_callback import _MonitorCallback


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
