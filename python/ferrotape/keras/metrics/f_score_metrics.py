"""The F-scores (Keras 3's ``keras.src.metrics.f_score_metrics``): per-class counts of true
positives, false positives and false negatives accumulated over batches, combined into
``(1 + beta²) * precision * recall / (beta² * precision + recall)``.

>>> import ferrotape as ft
>>> m = ft.keras.metrics.F1Score(average="micro", threshold=0.5)
>>> m.update_state([[1, 0], [0, 1]], [[0.9, 0.2], [0.6, 0.7]])
>>> round(float(m.result()), 4)
0.8
"""

import numpy as np

import ferrotape as ft

from .. import backend
from .metric import Metric, _numpy, computed_on_host

_AVERAGES = (None, "micro", "macro", "weighted")


class FBetaScore(Metric):
    """The F-beta score of multi-label (or one-hot) predictions, per class or averaged.

    Args:
        average: None (one score per class), ``"micro"`` (counts pooled over classes),
            ``"macro"`` (mean of the class scores) or ``"weighted"`` (their mean weighted by
            each class's number of true labels).
        beta: the weight of recall relative to precision (a float > 0).
        threshold: predictions above it count as positive; None marks each row's largest
            prediction (every one equal to it, if not 0).
        name: the metric's name.
        dtype: the result's dtype.
    """

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        who = type(self).__name__
        if average not in _AVERAGES:
            raise ValueError(
                f"{who}: invalid `average` argument value. Expected one of: "
                f"{{None, 'micro', 'macro', 'weighted'}}. Received: average={average}"
            )
        if not isinstance(beta, float):
            raise ValueError(
                f"{who}: invalid `beta` argument value. It should be a Python float. "
                f"Received: beta={beta} of type '{type(beta)}'"
            )
        if beta <= 0.0:
            raise ValueError(
                f"{who}: invalid `beta` argument value. It should be > 0. Received: beta={beta}"
            )
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError(
                    f"{who}: invalid `threshold` argument value. It should be a Python float. "
                    f"Received: threshold={threshold} of type '{type(threshold)}'"
                )
            if threshold > 1.0 or threshold <= 0.0:
                raise ValueError(
                    f"{who}: invalid `threshold` argument value. It should verify "
                    f"0 < threshold <= 1. Received: threshold={threshold}"
                )
        self.average = average
        self.beta = beta
        self.threshold = threshold
        self.axis = None if average == "micro" else 0
        self._built = False

    def _build(self, true_shape, pred_shape):
        if len(pred_shape) != 2 or len(true_shape) != 2:
            raise ValueError(
                f"{type(self).__name__} expects 2D inputs with shape (batch_size, output_dim). "
                f"Received input shapes: y_pred.shape={pred_shape} and "
                f"y_true.shape={true_shape}."
            )
        shape = () if self.average == "micro" else (pred_shape[-1],)
        for name in (
            "true_positives",
            "false_positives",
            "false_negatives",
            "intermediate_weights",
        ):
            setattr(self, name, self.add_variable(shape, "zeros", name=name))
        self._built = True

    @computed_on_host
    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds the batch's counts (``sample_weight``: one weight per row)."""
        y_true = _numpy(y_true).astype(np.float32)
        y_pred = _numpy(y_pred).astype(np.float32)
        if not self._built:
            self._build(y_true.shape, y_pred.shape)
        if self.threshold is None:
            # Each row's maximum; an all-zero row stays all zeros.
            top = y_pred.max(axis=-1, keepdims=True)
            y_pred = (y_pred >= top) & (np.abs(y_pred) > 1e-9)
        else:
            y_pred = y_pred > self.threshold
        y_pred = y_pred.astype(np.float64)
        y_true = y_true.astype(np.float64)
        weights = None if sample_weight is None else _numpy(sample_weight)

        def weighted_sum(values):
            if weights is not None:
                values = values * np.expand_dims(weights, 1)
            return values.sum(axis=self.axis).astype(np.float32)

        self.true_positives.assign_add(weighted_sum(y_pred * y_true))
        self.false_positives.assign_add(weighted_sum(y_pred * (1 - y_true)))
        self.false_negatives.assign_add(weighted_sum((1 - y_pred) * y_true))
        self.intermediate_weights.assign_add(weighted_sum(y_true))

    @computed_on_host
    def result(self):
        if not self._built:
            return ft.constant(0.0, dtype=self.dtype)
        eps = backend.epsilon()
        tp, fp, fn = (
            _numpy(getattr(self, k))
            for k in ("true_positives", "false_positives", "false_negatives")
        )
        precision = tp / (tp + fp + eps)
        recall = tp / (tp + fn + eps)
        beta_2 = self.beta**2
        score = precision * recall / (beta_2 * precision + recall + eps) * (1 + beta_2)
        if self.average == "weighted":
            support = _numpy(self.intermediate_weights)
            score = (score * support / (support.sum() + eps)).sum()
        elif self.average is not None:
            score = score.mean()
        return ft.constant(score, dtype=self.dtype)

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        return {
            **super().get_config(),
            "average": self.average,
            "beta": self.beta,
            "threshold": self.threshold,
        }


class F1Score(FBetaScore):
    """The F1 score, ``2 * precision * recall / (precision + recall)``: ``FBetaScore`` with
    ``beta=1``. Arguments as ``FBetaScore``'s, less ``beta``."""

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self):
        config = super().get_config()
        del config["beta"]
        return config
