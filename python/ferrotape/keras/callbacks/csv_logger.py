"""``CSVLogger`` (Keras 3's ``keras.src.callbacks.csv_logger``)."""

import csv
import os

import numpy as np

from .callback import Callback, _scalar


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
