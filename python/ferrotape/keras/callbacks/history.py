"""``History`` (Keras 3's ``keras.src.callbacks.history``)."""

from .callback import Callback, _scalar


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
