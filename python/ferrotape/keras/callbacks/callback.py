"""``Callback``, the base class (Keras 3's ``keras.src.callbacks.callback``)."""

import numbers

import numpy as np


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
