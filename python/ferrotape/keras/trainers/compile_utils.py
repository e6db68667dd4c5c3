"""What ``compile`` builds: the compiled loss and the running means of the metrics (Keras 3's
``keras.src.trainers.compile_utils``).
"""

import math
from collections.abc import Mapping

import numpy as np

from ... import _core, nest
from ... import math as math_ops
from ..layers.layer_masking import get_keras_mask


class _MeanTracker:
    """A running mean kept in two variables (no device read per batch), like ``metrics.Mean``;
    variables, not Python attributes, so that a step traced by ``ft.function`` updates them
    on every replay."""

    def __init__(self, name):
        self.name = name
        self._total = _core.Variable(0.0, trainable=False, name=f"{name}/total")
        self._count = _core.Variable(0.0, trainable=False, name=f"{name}/count")

    def reset_state(self):
        self._total.assign(0.0)
        self._count.assign(0.0)

    def update_state(self, values, sample_weight=None):
        if not isinstance(values, _core.Tensor):
            values = _core.convert_to_tensor(values, dtype="float32")
        if values.dtype.name != "float32":
            values = _core.cast(values, "float32")
        if values.ndim:
            count = float(math.prod(values.shape))
            values = _core.reduce_sum(values)
        else:
            count = 1.0
        if sample_weight is not None:
            weight = float(sample_weight)
            values, count = values * weight, count * weight
        self._total.assign_add(values)
        self._count.assign_add(count)

    def result(self):
        return math_ops.divide_no_nan(self._total.read_value(), self._count.read_value())


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
    mask = get_keras_mask(y_pred)  # the output's padding does not count (Keras 3)
    y_true, y_pred = losses._tensor(y_true), losses._tensor(y_pred)
    if y_pred.dtype.name in ("float16", "bfloat16"):
        # Keras's wrapper computes in floatx: a mixed-precision model's loss is not reduced
        # (nor its squares overflowed) in half precision.
        y_pred = losses._tensor(y_pred, "float32")
    y_true, y_pred = losses.squeeze_or_expand_to_same_rank(y_true, y_pred)
    values = losses._tensor(fn(y_true, y_pred))
    who = getattr(fn, "__name__", "loss")
    return losses.reduce_weighted_values(values, sample_weight=sample_weight, mask=mask, who=who)


class _CompiledLoss:
    """The loss given to ``compile``: one loss for one output, or a list/dict matching the
    outputs, each scaled by its ``loss_weights`` entry."""

    def __init__(self, loss, loss_weights, output_names=None):
        from .. import losses

        self.structure = loss
        self.output_names = list(output_names) if output_names else None
        # With several named outputs, Keras 3 also reports each output's (unweighted) loss as
        # "<output>_loss".
        self.output_trackers = []
        if self.output_names and len(self.output_names) > 1:
            if isinstance(loss, dict):
                tracked = [name for name in self.output_names if name in loss]
            elif isinstance(loss, (list, tuple)):
                tracked = self.output_names[: len(loss)]
            else:
                tracked = self.output_names
            self.output_trackers = [_MeanTracker(f"{name}_loss") for name in tracked]
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

    def _track(self, key, value, prediction):
        if not self.output_trackers:
            return
        name = key if isinstance(key, str) else self.output_names[key]
        for tracker in self.output_trackers:
            if tracker.name == f"{name}_loss":
                tracker.update_state(value, sample_weight=prediction.shape[0])

    def __call__(self, y_true, y_pred, sample_weight=None):
        if isinstance(self.fns, dict):
            keys = list(self.fns)
            names = self.output_names
            parts = [
                (k, _for_output(y_true, k, names), _for_output(y_pred, k, names)) for k in keys
            ]
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
            self._track(key, value, prediction)
            weight = self._weight(key)
            if weight is not None:
                value = value * weight
            total = value if total is None else total + value
        return total


def _for_output(structure, output, output_names):
    """The part of ``structure`` (targets or predictions) for the output named ``output``:
    by key in a dict, by the output's position in a list, or a single tensor itself."""
    if isinstance(structure, Mapping):
        if output not in structure:
            raise ValueError(
                f"compile: no entry for output '{output}' in the data, which has the keys "
                f"{sorted(structure)}"
            )
        return structure[output]
    if isinstance(structure, (list, tuple)):
        if not output_names or output not in output_names:
            raise ValueError(
                f"compile: output '{output}' is not one of the model's outputs "
                f"{output_names or []}; losses and metrics given as a dict are keyed by the "
                f"output layers' names"
            )
        return structure[output_names.index(output)]
    return structure


def _requested_metrics(group):
    """``compile``'s ``metrics`` (or ``weighted_metrics``) as (output name or None, metric)
    pairs: a dict gives each output its own metrics, anything else applies to the whole."""
    if group is None:
        return []
    if isinstance(group, dict):
        return [
            (output, metric)
            for output, metrics in group.items()
            for metric in nest.flatten(metrics if isinstance(metrics, (list, tuple)) else [metrics])
            if metric is not None
        ]
    if not isinstance(group, (list, tuple)):
        group = [group]
    return [(None, metric) for metric in nest.flatten(list(group)) if metric is not None]


# ----------------------------------------------------------------------------- data adapters
