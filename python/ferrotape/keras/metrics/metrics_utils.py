"""The confusion-matrix bookkeeping of the threshold metrics (Keras 3's
``keras.src.metrics.metrics_utils``), in numpy: counts of true/false positives/negatives at a
list of thresholds, and the confusion matrix of the IoU metrics.

A prediction is positive at a threshold when it is strictly greater than it. Evenly spaced
thresholds (those of ``AUC`` and the ``...AtPrecision``-style metrics) are counted, as Keras
counts them, by bucketing the predictions clipped to [0, 1]: ``ceil(p * (n - 1)) - 1`` is the
last threshold ``p`` exceeds.
"""

import numpy as np

from .metric import _np_squeeze_or_expand, _numpy

# Keras's stand-in for minus infinity: predictions outside the top k are set to it.
NEG_INF = -1e10
CONFUSION_KEYS = ("true_positives", "false_positives", "true_negatives", "false_negatives")


def parse_init_thresholds(thresholds, default_threshold=0.5, who="Metric"):
    """``thresholds`` (None, a number or a list) as a list of floats in [0, 1]."""
    if thresholds is None:
        return [default_threshold]
    values = [thresholds] if isinstance(thresholds, int | float) else list(thresholds)
    for value in values:
        if value is not None and not 0 <= value <= 1:
            raise ValueError(
                f"{who}: threshold values must be in [0, 1]. Received: thresholds={thresholds}"
            )
    return [float(v) for v in values]


def evenly_spaced_thresholds(num_thresholds):
    """The ``num_thresholds - 2`` thresholds strictly inside (0, 1), evenly spaced."""
    return [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]


def _filter_top_k(x, k):
    """``x`` with every entry outside the ``k`` largest of its last axis set to ``NEG_INF``."""
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    keep = np.zeros(x.shape, dtype=bool)
    np.put_along_axis(keep, order, True, axis=-1)
    return np.where(keep, x, np.float32(NEG_INF))


def update_confusion_matrix_variables(
    variables,
    y_true,
    y_pred,
    thresholds,
    top_k=None,
    class_id=None,
    sample_weight=None,
    multi_label=False,
    label_weights=None,
    thresholds_distributed_evenly=False,
):
    """Adds a batch's confusion counts at each threshold to ``variables``.

    Args:
        variables: ``{"true_positives": Variable, ...}``, any of ``CONFUSION_KEYS``; each of
            shape ``(len(thresholds),)``, or ``(len(thresholds), labels)`` with
            ``multi_label``.
        y_true: labels; nonzero counts as positive.
        y_pred: predictions, compared with the thresholds.
        thresholds: a list of floats.
        top_k: only the ``top_k`` largest predictions of each row may be positive.
        class_id: only this class (index of the last axis) is counted.
        sample_weight: weights broadcast against ``y_pred``.
        multi_label: count each label (last axis) separately instead of pooling them.
        label_weights: per-label weights (only without ``multi_label``).
        thresholds_distributed_evenly: count by bucketing (see the module's doc).
    """
    # float32 as the variables are: predictions at a threshold fall on the same side as in TF.
    y_true = _numpy(y_true).astype(np.float32)
    y_pred = _numpy(y_pred).astype(np.float32)
    y_pred, y_true = _np_squeeze_or_expand(y_pred, y_true)
    if y_pred.shape != y_true.shape:
        raise ValueError(
            "Confusion metrics: `y_true` and `y_pred` must have the same shape. Received: "
            f"y_true.shape={y_true.shape}, y_pred.shape={y_pred.shape}"
        )
    weights = np.ones(y_pred.shape, dtype=np.float64)
    if sample_weight is not None:
        sample_weight = _numpy(sample_weight)[..., None]
        if sample_weight.ndim == y_true.ndim + 1 and sample_weight.shape[-1] == 1:
            sample_weight = sample_weight[..., 0]
        try:
            weights = np.broadcast_to(sample_weight, y_pred.shape).astype(np.float64)
        except ValueError:
            raise ValueError(
                "Confusion metrics: `sample_weight` cannot be broadcast to the predictions' "
                f"shape. Received: sample_weight.shape={np.shape(sample_weight)}, "
                f"y_pred.shape={y_pred.shape}"
            ) from None
    if top_k is not None:
        y_pred = _filter_top_k(y_pred, top_k)
    if class_id is not None:
        if y_pred.ndim == 1:
            raise ValueError(
                "When class_id is provided, y_pred must be a 2D array with shape "
                f"(num_samples, num_classes), found shape: {y_pred.shape}"
            )
        y_true = y_true[..., class_id, None]
        y_pred = y_pred[..., class_id, None]
        weights = weights[..., class_id, None]
    if label_weights is not None and not multi_label:
        weights = weights * np.broadcast_to(_numpy(label_weights), y_pred.shape)
    positive = y_true != 0
    if multi_label:
        y_pred = y_pred.reshape(-1, y_pred.shape[-1])
        positive = positive.reshape(y_pred.shape)
        weights = weights.reshape(y_pred.shape)
    else:
        y_pred, positive, weights = y_pred.reshape(-1), positive.reshape(-1), weights.reshape(-1)
    count = len(thresholds)
    index = np.arange(count).reshape((count,) + (1,) * y_pred.ndim)
    if thresholds_distributed_evenly:
        with_epsilon = thresholds[0] < 0.0 or thresholds[-1] > 1.0
        buckets = np.ceil(np.clip(y_pred, 0.0, 1.0) * np.float32(count - 1)) - 1
        if with_epsilon:
            buckets = np.maximum(buckets, 0)
        predicted = buckets[None] >= index
    else:
        limits = np.asarray(thresholds, dtype=np.float32)[index]
        predicted = y_pred[None] > limits
    sums = {
        "true_positives": (predicted & positive) * weights,
        "false_positives": (predicted & ~positive) * weights,
        "true_negatives": (~predicted & ~positive) * weights,
        "false_negatives": (~predicted & positive) * weights,
    }
    for key, variable in variables.items():
        variable.assign_add(sums[key].sum(axis=1).astype(np.float32))


def confusion_matrix(labels, predictions, num_classes, weights):
    """The ``num_classes x num_classes`` matrix of summed weights, rows the true class,
    columns the predicted one (``labels``/``predictions`` are integer arrays)."""
    matrix = np.zeros((num_classes, num_classes), dtype=np.float64)
    np.add.at(matrix, (labels, predictions), weights)
    return matrix
