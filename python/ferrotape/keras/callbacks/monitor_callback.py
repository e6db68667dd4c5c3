"""The base of the callbacks that watch a metric, and its direction (Keras 3's
``keras.src.callbacks.monitor_callback``)."""

import warnings

import numpy as np

from .callback import Callback


class _MonitorCallback(Callback):
    """Shared by the callbacks that watch one logged quantity for improvement (Keras 3)."""

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(
                f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto mode.",
                stacklevel=3,
            )
            mode = "auto"
        self.monitor = monitor
        self.mode = mode
        self.best = baseline
        self.min_delta = abs(min_delta)
        self.monitor_op = None

    def _set_monitor_op(self):
        if self.mode == "auto":
            increasing = _metric_increases(self.monitor, self.model)
            if increasing is None:
                raise ValueError(
                    f"{type(self).__name__} callback received monitor={self.monitor}, but "
                    "ferrotape cannot tell whether that metric should be maximized or "
                    "minimized. Pass `mode='max'` in order to monitor based on the highest "
                    "metric value, or pass `mode='min'` in order to use the lowest value."
                )
        else:
            increasing = self.mode == "max"
        self.monitor_op = np.greater if increasing else np.less
        if not increasing:
            self.min_delta = -abs(self.min_delta)
        if self.best is None:
            self.best = -np.inf if increasing else np.inf

    def _is_improvement(self, value, reference):
        if reference is None:
            return True
        return bool(self.monitor_op(float(value) - self.min_delta, float(reference)))


# Names whose direction is known without asking the metric (the name without "val_").
_INCREASING_WORDS = ("acc", "auc", "precision", "recall", "f1", "iou", "r2")
_DECREASING_WORDS = ("loss", "error", "crossentropy", "hinge", "divergence", "mse", "mae")


def _metric_increases(monitor, model):
    """True if higher is better for ``monitor``, False if lower is, None if unknown.

    As Keras 3: ``loss`` decreases, and a compiled metric of that name says its direction
    (``_direction``). Beyond Keras, common metric names (accuracy, AUC, MSE, ...) decide too.
    """
    name = monitor.removeprefix("val_")
    if name == "loss":
        return False
    for metric in _model_metrics(model):
        direction = getattr(metric, "_direction", None)
        if getattr(metric, "name", None) == name and direction in ("up", "down"):
            return direction == "up"
    lowered = name.lower()
    if any(word in lowered for word in _DECREASING_WORDS):
        return False
    if any(word in lowered for word in _INCREASING_WORDS):
        return True
    return None


def _model_metrics(model):
    metrics = []
    for metric in getattr(model, "metrics", None) or []:
        inner = getattr(metric, "metrics", None)
        metrics.extend(inner if isinstance(inner, (list, tuple)) else [metric])
    return metrics
