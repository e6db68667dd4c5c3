"""One epoch's steps over the batches, and the progress bar's pacing (Keras 3's
``keras.src.trainers.epoch_iterator``).
"""

import math
import time
import warnings

from .compile_utils import _float_logs
from .data_adapters import _steps_arg


class _EpochIterator:
    """Steps of one epoch; with ``steps_per_epoch`` the source is consumed across epochs."""

    def __init__(self, source, steps_per_epoch, who, name):
        steps_per_epoch = _steps_arg(who, name, steps_per_epoch)
        if steps_per_epoch is None and getattr(source, "cardinality", None) == -1:
            # Keras 3's EpochIterator would loop for ever here (keras/src/trainers/
            # epoch_iterator.py: no step count and no known number of batches means `while
            # True`), although its fit() docstring says the argument must be given; tf.keras
            # (data_adapter.py, DataHandler._infer_steps) raised this ValueError before
            # training, which we follow: an epoch that never ends is never what was meant.
            raise ValueError(
                f"{who}: when passing an infinitely repeating dataset, please specify a "
                f"`{name}` value so that the {'epoch' if who == 'fit' else 'loop'} ends. "
                f"Received: {name}=None"
            )
        if steps_per_epoch == -1:
            steps_per_epoch = None
        self.source = source
        self.steps_per_epoch = steps_per_epoch
        self.steps = steps_per_epoch if steps_per_epoch is not None else source.steps
        self._iterator = None
        self.exhausted = False

    def epoch(self):
        if self.steps_per_epoch is None:
            yield from enumerate(self.source.batches())
            return
        for step in range(self.steps_per_epoch):
            if self._iterator is None:
                self._iterator = iter(self.source.batches())
            try:
                batch = next(self._iterator)
            except StopIteration:
                self._iterator = None
                self.exhausted = True
                warnings.warn(
                    "Your input ran out of data; interrupting training. Make sure that your "
                    "dataset or generator can generate at least `steps_per_epoch * epochs` "
                    "batches. You may need to use the `.repeat()` function when building your "
                    "dataset.",
                    UserWarning,
                    stacklevel=4,
                )
                return
            yield step, batch


def _overrides(callback, *hooks):
    from .. import callbacks

    base = getattr(callbacks, "Callback", None)
    return any(
        getattr(type(callback), hook, None) is not getattr(base, hook, None) for hook in hooks
    )


class _Progress:
    """Drives a ``utils.ProgressBar``, reading the metrics at most ten times a second."""

    _INTERVAL = 0.1

    def __init__(self, total, description, verbose):
        self.bar = None
        if verbose:
            from .. import utils

            self.bar = utils.ProgressBar(total, description=description, verbose=verbose)
        self.per_batch = verbose == 1
        self.last = -math.inf

    def update(self, steps_done, logs, samples_seen, final=False):
        """Refreshes the bar when due; returns the float logs if it read them."""
        if self.bar is None or not (self.per_batch or final):
            return None
        now = time.perf_counter()
        if not final and now - self.last < self._INTERVAL:
            return None
        self.last = now
        values = _float_logs(logs)
        self.bar.update(steps_done, values, samples_seen)
        return values

    def close(self, logs):
        if self.bar is not None:
            self.bar.close(logs)


def _resolve_verbose(verbose):
    if verbose == "auto":
        return 1
    if verbose not in (0, 1, 2, True, False):
        raise ValueError(f"verbose must be 'auto', 0, 1 or 2, received {verbose!r}")
    return int(verbose)
