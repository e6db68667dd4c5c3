"""What ``compile`` builds: the compiled loss and the running means of the metrics (Keras 3's
``keras.src.trainers.compile_utils``).
"""

import math
from collections.abc import Mapping

import numpy as np

from ... import _core


class _MeanTracker:
    """A running mean kept as a tensor (no device read per batch), like ``metrics.Mean``."""

    def __init__(self, name):
        self.name = name
        self.reset_state()

    def reset_state(self):
        self._total = None
        self._count = 0.0

    def update_state(self, values, sample_weight=None):
        if not isinstance(values, _core.Tensor):
            values = _core.convert_to_tensor(values, dtype="float32")
        if values.ndim:
            count = float(math.prod(values.shape))
            values = _core.reduce_sum(values)
        else:
            count = 1.0
        if sample_weight is not None:
            weight = float(sample_weight)
            values, count = values * weight, count * weight
        self._total = values if self._total is None else self._total + values
        self._count += count

    def result(self):
        if self._total is None or self._count == 0:
            return _core.constant(0.0)
        return self._total / self._count


class _MetricResults(Mapping):
    """The metrics' current results, computed only for the names that are read."""

    def __init__(self, metrics):
        self._metrics = {}
        for metric in metrics:
            self._metrics.setdefault(metric.name, metric)

    def __getitem__(self, name):
        return self._metrics[name].result()

    def __iter__(self):
        return iter(self._metrics)

    def __len__(self):
        return len(self._metrics)


def _as_float(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return np.asarray(value)


def _float_logs(logs):
    return {name: _as_float(value) for name, value in (logs or {}).items()}


def _is_loss_object(fn):
    from .. import losses

    loss_class = getattr(losses, "Loss", None)
    return isinstance(loss_class, type) and isinstance(fn, loss_class)


def _reduced_loss(fn, y_true, y_pred, sample_weight, is_loss_object):
    """A scalar loss: Loss objects reduce themselves; a loss function (a name given to compile,
    or the user's) is treated as Keras 3's compile treats it, as a ``LossFunctionWrapper``:
    ``y_true`` and ``y_pred`` brought to the same rank, the per-sample values weighted by
    ``sample_weight`` squeezed or expanded to their rank (so weights of shape ``(N, 1)`` weight
    per-sample values of shape ``(N,)`` instead of broadcasting to ``(N, N)``), then averaged
    ("sum_over_batch_size")."""
    from .. import losses

    if is_loss_object:
        if sample_weight is None:
            return fn(y_true, y_pred)
        return fn(y_true, y_pred, sample_weight=sample_weight)
    y_true, y_pred = losses._tensor(y_true), losses._tensor(y_pred)
    y_true, y_pred = losses.squeeze_or_expand_to_same_rank(y_true, y_pred)
    values = losses._tensor(fn(y_true, y_pred))
    who = getattr(fn, "__name__", "loss")
    return losses.reduce_weighted_values(values, sample_weight=sample_weight, who=who)


class _CompiledLoss:
    """The loss given to ``compile``: one loss for one output, or a list/dict matching the
    outputs, each scaled by its ``loss_weights`` entry."""

    def __init__(self, loss, loss_weights):
        from .. import losses

        self.structure = loss
        if isinstance(loss, dict):
            self.fns = {k: losses.get(v) for k, v in loss.items()}
        elif isinstance(loss, (list, tuple)):
            self.fns = [losses.get(v) for v in loss]
        else:
            self.fns = losses.get(loss)
        weights = list(loss_weights.values()) if isinstance(loss_weights, dict) else loss_weights
        if not isinstance(weights, (list, tuple)):
            weights = [weights]
        if not all(w is None or isinstance(w, (int, float, np.number)) for w in weights):
            raise ValueError(
                f"compile: loss_weights must be numbers (one per output), received "
                f"{loss_weights!r}. compile's third positional argument is loss_weights, as in "
                f"Keras 3: pass metrics by keyword (metrics=[...])."
            )
        self.loss_weights = loss_weights

    def _weight(self, key):
        if self.loss_weights is None:
            return None
        if isinstance(self.loss_weights, (dict, list, tuple)):
            return self.loss_weights[key]
        return self.loss_weights

    def __call__(self, y_true, y_pred, sample_weight=None):
        if isinstance(self.fns, dict):
            keys = list(self.fns)
            parts = [(k, y_true[k], y_pred[k]) for k in keys]
        elif isinstance(self.fns, list):
            if not isinstance(y_pred, (list, tuple)) or len(y_pred) != len(self.fns):
                raise ValueError(
                    f"compile: {len(self.fns)} losses were given but the model returned "
                    f"{len(y_pred) if isinstance(y_pred, (list, tuple)) else 1} output(s)"
                )
            parts = [(i, y_true[i], y_pred[i]) for i in range(len(self.fns))]
        elif isinstance(y_pred, (list, tuple)):
            # One loss for several outputs: applied to each (Keras 3).
            parts = [(i, y_true[i], y_pred[i]) for i in range(len(y_pred))]
        else:
            value = _reduced_loss(
                self.fns, y_true, y_pred, sample_weight, _is_loss_object(self.fns)
            )
            weight = self.loss_weights
            if isinstance(weight, (list, tuple)):
                (weight,) = weight
            return value if weight is None else value * weight
        total = None
        for key, truth, prediction in parts:
            fn = self.fns[key] if isinstance(self.fns, (dict, list)) else self.fns
            value = _reduced_loss(fn, truth, prediction, sample_weight, _is_loss_object(fn))
            weight = self._weight(key)
            if weight is not None:
                value = value * weight
            total = value if total is None else total + value
        return total


# ----------------------------------------------------------------------------- data adapters
