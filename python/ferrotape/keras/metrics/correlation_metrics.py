"""The correlation metrics (Keras 3's ``keras.src.metrics.correlation_metrics``): Pearson's and
Lin's concordance correlation coefficients along an axis, and running means of them.

>>> import ferrotape as ft
>>> y_true = [[0, 1, 0.5], [1, 1, 0.2]]
>>> y_pred = [[0.1, 0.9, 0.5], [1, 0.9, 0.2]]
>>> [round(float(v), 4) for v in ft.keras.metrics.pearson_correlation(y_true, y_pred)]
[1.0, 0.9934]
"""

import ferrotape as ft

from .. import backend
from .reduction_metrics import MeanMetricWrapper
from .regression_metrics import _pred_and_true


def pearson_correlation(y_true, y_pred, axis=-1):
    """Pearson's correlation coefficient between ``y_true`` and ``y_pred`` along ``axis``:
    the mean product of the two after each is centred and divided by its (population)
    standard deviation.

    Args:
        y_true: the targets.
        y_pred: the predictions, the same shape.
        axis: the axis (or axes) the coefficient is computed along.

    Returns:
        A tensor with ``axis`` reduced.
    """
    y_true, y_pred = _pred_and_true(y_true, y_pred, "pearson_correlation")
    true_centred = y_true - ft.reduce_mean(y_true, axis=axis, keepdims=True)
    pred_centred = y_pred - ft.reduce_mean(y_pred, axis=axis, keepdims=True)
    true_centred = true_centred / ft.math.reduce_std(true_centred, axis=axis, keepdims=True)
    pred_centred = pred_centred / ft.math.reduce_std(pred_centred, axis=axis, keepdims=True)
    return ft.reduce_mean(true_centred * pred_centred, axis=axis)


def concordance_correlation(y_true, y_pred, axis=-1):
    """Lin's concordance correlation coefficient between ``y_true`` and ``y_pred`` along
    ``axis``: ``mean(2 * cov / (var_true + var_pred + (mean_true - mean_pred) ** 2 + eps))``.

    As in Keras 3, the covariance term centres ``y_true`` on the mean of ``y_pred``.

    Args:
        y_true: the targets.
        y_pred: the predictions, the same shape.
        axis: the axis (or axes) the coefficient is computed along.

    Returns:
        A tensor with ``axis`` reduced.
    """
    y_true, y_pred = _pred_and_true(y_true, y_pred, "concordance_correlation")
    true_mean = ft.reduce_mean(y_true, axis=axis, keepdims=True)
    pred_mean = ft.reduce_mean(y_pred, axis=axis, keepdims=True)
    true_var = ft.math.reduce_variance(y_true - true_mean, axis=axis, keepdims=True)
    pred_var = ft.math.reduce_variance(y_pred - pred_mean, axis=axis, keepdims=True)
    covariance = (y_true - pred_mean) * (y_pred - pred_mean)
    norm = true_var + pred_var + ft.square(true_mean - pred_mean)
    return ft.reduce_mean(2.0 * covariance / (norm + backend.epsilon()), axis=axis)


class PearsonCorrelation(MeanMetricWrapper):
    """The running mean of ``pearson_correlation`` (one coefficient per sample along ``axis``).

    Args:
        name: the metric's name.
        dtype: the result's dtype.
        axis: the axis the coefficient is computed along (-1).
    """

    def __init__(self, name="pearson_correlation", dtype=None, axis=-1):
        super().__init__(pearson_correlation, name=name, dtype=dtype, axis=axis)
        self.axis = axis


class ConcordanceCorrelation(MeanMetricWrapper):
    """The running mean of ``concordance_correlation`` (one coefficient per sample).

    Args:
        name: the metric's name.
        dtype: the result's dtype.
        axis: the axis the coefficient is computed along (-1).
    """

    def __init__(self, name="concordance_correlation", dtype=None, axis=-1):
        super().__init__(concordance_correlation, name=name, dtype=dtype, axis=axis)
        self.axis = axis
