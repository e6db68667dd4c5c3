"""``JSONLogger``: ferrotape's own, one JSON line per epoch (beside Keras 3's
``keras.src.callbacks``)."""

import json
import math
import os

import numpy as np

from .callback import Callback, _scalar


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
