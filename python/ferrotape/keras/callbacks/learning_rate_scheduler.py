"""``LearningRateScheduler`` (Keras 3's ``keras.src.callbacks.learning_rate_scheduler``)."""

import numbers

from .callback import Callback, _scalar


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
