"""``CallbackList`` (Keras 3's ``keras.src.callbacks.callback_list``)."""

import reprlib

from ... import nest
from .callback import Callback
from .history import History
from .progbar_logger import ProgbarLogger


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
