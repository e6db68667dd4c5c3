"""``ProgbarLogger`` (Keras 3's ``keras.src.callbacks.progbar_logger``)."""

import sys

from ..utils.progbar import ProgressBar
from .callback import Callback


class ProgbarLogger(Callback):
    """Shows the progress of ``fit``/``evaluate``/``predict``: a progress bar
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
