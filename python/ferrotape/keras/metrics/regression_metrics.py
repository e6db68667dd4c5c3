"""The regression metrics (Keras 3's ``keras.src.metrics.regression_metrics``): running means of
the squared, absolute, percentage, logarithmic and log-cosh errors and of the cosine
similarity, the root mean squared error and the R² score.

>>> import ferrotape as ft
>>> m = ft.keras.metrics.R2Score()
>>> m.update_state([[1.0], [2.0], [3.0]], [[1.0], [2.0], [4.0]])
>>> round(float(m.result()), 4)
0.5
"""

import warnings

import numpy as np

import ferrotape as ft

from .. import losses as _losses
from .metric import Metric, _np_squeeze_or_expand, _numpy, computed_on_host
from .reduction_metrics import Mean, MeanMetricWrapper


def _pred_and_true(y_true, y_pred, who):
    y_pred = _losses._tensor(y_pred)
    y_true = _losses._tensor(y_true, y_pred.dtype)
    return _losses._same_rank(who, y_true, y_pred)


def cosine_similarity(y_true, y_pred, axis=-1):
    """The cosine of the angle between ``y_true`` and ``y_pred`` along ``axis`` (1 when they
    point the same way; the metric's sign, opposite to the loss's).

    Args:
        y_true: the targets.
        y_pred: the predictions, the same shape.
        axis: the axis the vectors lie along.

    Returns:
        A tensor with ``axis`` reduced.
    """
    y_true, y_pred = _pred_and_true(y_true, y_pred, "cosine_similarity")
    y_true = _losses.losses._l2_normalize(y_true, axis)
    y_pred = _losses.losses._l2_normalize(y_pred, axis)
    return ft.reduce_sum(y_true * y_pred, axis=axis)


class MeanSquaredError(MeanMetricWrapper):
    """The running mean of ``mean((y_true - y_pred) ** 2, axis=-1)``."""

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(_losses.mean_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    """The running mean of ``mean(abs(y_true - y_pred), axis=-1)``."""

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(_losses.mean_absolute_error, name=name, dtype=dtype)


class RootMeanSquaredError(Mean):
    """``sqrt`` of the running mean of the squared errors."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _pred_and_true(y_true, y_pred, "RootMeanSquaredError")
        super().update_state(ft.square(y_pred - y_true), sample_weight=sample_weight)

    def result(self):
        return ft.sqrt(super().result())


class MeanAbsolutePercentageError(MeanMetricWrapper):
    """The running mean of ``mean_absolute_percentage_error``."""

    def __init__(self, name="mean_absolute_percentage_error", dtype=None):
        super().__init__(_losses.mean_absolute_percentage_error, name=name, dtype=dtype)


class MeanSquaredLogarithmicError(MeanMetricWrapper):
    """The running mean of ``mean_squared_logarithmic_error``."""

    def __init__(self, name="mean_squared_logarithmic_error", dtype=None):
        super().__init__(_losses.mean_squared_logarithmic_error, name=name, dtype=dtype)


class CosineSimilarity(MeanMetricWrapper):
    """The running mean of the cosine similarity between labels and predictions.

    Args:
        name: the metric's name.
        dtype: the result's dtype.
        axis: the axis the vectors lie along (-1).
    """

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1):
        super().__init__(cosine_similarity, name=name, dtype=dtype, axis=axis)


class LogCoshError(MeanMetricWrapper):
    """The running mean of ``log_cosh(y_pred - y_true)`` (averaged over the last axis)."""

    def __init__(self, name="logcosh", dtype=None):
        super().__init__(_losses.log_cosh, name=name, dtype=dtype)


class R2Score(Metric):
    """The coefficient of determination, ``1 - SS_res / SS_tot``, per output column.

    Accumulates weighted sums over every batch, so the result is the score of all the data
    seen, not a mean of per-batch scores.

    Args:
        class_aggregation: how the per-column scores combine: ``"uniform_average"`` (their
            mean), ``"variance_weighted_average"`` (weighted by each column's total sum of
            squares) or None (the vector of scores).
        num_regressors: the number of independent variables; above 0 the adjusted R² is
            returned.
        name: the metric's name.
        dtype: the result's dtype.
    """

    def __init__(
        self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None
    ):
        super().__init__(name=name, dtype=dtype)
        valid = (None, "uniform_average", "variance_weighted_average")
        if class_aggregation not in valid:
            raise ValueError(
                "R2Score: invalid value for argument `class_aggregation`. Expected one of "
                f"{valid}. Received: class_aggregation={class_aggregation}"
            )
        if num_regressors < 0:
            raise ValueError(
                "R2Score: invalid value for argument `num_regressors`. Expected a value >= 0. "
                f"Received: num_regressors={num_regressors}"
            )
        self.class_aggregation = class_aggregation
        self.num_regressors = num_regressors
        self.num_samples = self.add_variable((), "zeros", name="num_samples")
        self._built = False

    def _build(self, true_shape, pred_shape):
        if len(pred_shape) != 2 or len(true_shape) != 2:
            raise ValueError(
                "R2Score expects 2D inputs with shape (batch_size, output_dim). Received "
                f"input shapes: y_pred.shape={pred_shape} and y_true.shape={true_shape}."
            )
        columns = (pred_shape[-1],)
        self.squared_sum = self.add_variable(columns, "zeros", name="squared_sum")
        self.sum = self.add_variable(columns, "zeros", name="sum")
        self.total_mse = self.add_variable(columns, "zeros", name="residual")
        self.count = self.add_variable(columns, "zeros", name="count")
        self._built = True

    @computed_on_host
    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds a batch's sums: ``y_true`` and ``y_pred`` of shape ``(batch, outputs)``."""
        y_true, y_pred = _np_squeeze_or_expand(_numpy(y_true), _numpy(y_pred))
        if not self._built:
            self._build(y_true.shape, y_pred.shape)
        weights = np.asarray(1.0) if sample_weight is None else _numpy(sample_weight)
        if weights.ndim == 1:
            weights = weights[:, None]
        try:
            weights = np.broadcast_to(weights, y_true.shape)
        except ValueError:
            raise ValueError(
                f"R2Score: `sample_weight` cannot be broadcast to y_true's shape. Received: "
                f"sample_weight.shape={weights.shape}, y_true.shape={y_true.shape}"
            ) from None
        weighted = y_true * weights
        self.sum.assign_add(weighted.sum(axis=0).astype(np.float32))
        self.squared_sum.assign_add((y_true * weighted).sum(axis=0).astype(np.float32))
        residual = (np.square(y_true - y_pred) * weights).sum(axis=0)
        self.total_mse.assign_add(residual.astype(np.float32))
        self.count.assign_add(weights.sum(axis=0).astype(np.float32))
        self.num_samples.assign_add(float(y_true.size))

    @computed_on_host
    def result(self):
        if not self._built:
            return ft.constant(0.0, dtype=self.dtype)
        total_sum, count = _numpy(self.sum), _numpy(self.count)
        with np.errstate(divide="ignore", invalid="ignore"):
            total = _numpy(self.squared_sum) - total_sum * (total_sum / count)
            raw = 1.0 - _numpy(self.total_mse) / total
        raw = np.where(np.isinf(raw), 0.0, raw)
        if self.class_aggregation == "uniform_average":
            score = raw.mean()
        elif self.class_aggregation == "variance_weighted_average":
            score = (total * raw).sum() / total.sum()
        else:
            score = raw
        if self.num_regressors:
            n, p = float(_numpy(self.num_samples)), float(self.num_regressors)
            if p > n - 1:
                warnings.warn(
                    "More independent predictors than datapoints in adjusted R2 score. "
                    "Falling back to standard R2 score.",
                    stacklevel=2,
                )
            elif p == n - 1:
                warnings.warn(
                    "Division by zero in adjusted R2 score. Falling back to standard R2 score.",
                    stacklevel=2,
                )
            else:
                score = 1.0 - (1.0 - score) * (n - 1.0) / (n - p - 1.0)
        return ft.constant(score, dtype=self.dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "class_aggregation": self.class_aggregation,
            "num_regressors": self.num_regressors,
        }
