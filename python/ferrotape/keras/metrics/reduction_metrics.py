"""The reduction metrics (Keras 3's ``keras.src.metrics.reduction_metrics``): ``Sum``, ``Mean``
and ``MeanMetricWrapper``, the running mean of a per-sample function.

>>> import ferrotape as ft
>>> m = ft.keras.metrics.Mean()
>>> m.update_state([1.0, 2.0, 6.0])
>>> float(m.result())
3.0
"""

import numpy as np

import ferrotape as ft

from ... import _core
from ..layers.layer_masking import get_keras_mask
from ..losses.loss import _apply_mask, squeeze_or_expand_to_same_rank
from .metric import Metric, _numpy, reduce_to_samplewise


def _traced_samplewise(values, sample_weight, reduce_fn):
    """``reduce_to_samplewise`` in ferrotape ops (float64, as the host path sums), for an update
    inside a function ``ft.function`` is tracing: there a host read would refuse the trace and
    the step would run eagerly, so the fit loop's usual metrics are computed as recorded ops."""
    values = ft.cast(ft.convert_to_tensor(values), ft.float64)
    if sample_weight is not None:
        sample_weight = ft.cast(ft.convert_to_tensor(sample_weight), ft.float64)
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        weight_ndim = len(sample_weight.shape)
        if len(values.shape) > weight_ndim:
            values = reduce_fn(values, axis=list(range(weight_ndim, len(values.shape))))
        values = values * ft.broadcast_to(sample_weight, values.shape)
        if weight_ndim > 1:
            sample_weight = reduce_fn(sample_weight, axis=list(range(1, weight_ndim)))
    if len(values.shape) > 1:
        values = reduce_fn(values, axis=list(range(1, len(values.shape))))
    return values, sample_weight


class Sum(Metric):
    """The running (weighted) sum of the values."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(dtype=dtype, name=name)
        self.total = self.add_variable((), "zeros", name="total")

    def update_state(self, values, sample_weight=None):
        if _core.is_tracing():
            values, _ = _traced_samplewise(values, sample_weight, ft.reduce_sum)
            self.total.assign_add(ft.cast(ft.reduce_sum(values), self.total.dtype))
            return
        weights = None if sample_weight is None else _numpy(sample_weight)
        values, _ = reduce_to_samplewise(_numpy(values), weights, np.sum, self.name)
        self.total.assign_add(float(values.sum()))

    def result(self):
        return ft.identity(self.total.read_value())


class Mean(Metric):
    """The running (weighted) mean: ``total / count``, where each update adds the sum of its
    per-sample values (values of rank > 1 are first averaged per sample) and its number of
    samples, or the sum of the sample weights."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(dtype=dtype, name=name)
        self.total = self.add_variable((), "zeros", name="total")
        self.count = self.add_variable((), "zeros", name="count")

    def update_state(self, values, sample_weight=None):
        if _core.is_tracing():
            values, weights = _traced_samplewise(values, sample_weight, ft.reduce_mean)
            if weights is not None:
                count = ft.reduce_sum(weights)
            else:
                count = float(values.shape[0]) if len(values.shape) >= 1 else 1.0
            self.total.assign_add(ft.cast(ft.reduce_sum(values), self.total.dtype))
            self.count.assign_add(ft.cast(count, self.count.dtype))
            return
        weights = None if sample_weight is None else _numpy(sample_weight)
        values, weights = reduce_to_samplewise(_numpy(values), weights, np.mean, self.name)
        if weights is not None:
            count = float(weights.sum())
        else:
            count = float(values.shape[0]) if values.ndim >= 1 else 1.0
        # ndarray.sum, not np.sum: the function's dispatch costs microseconds per batch.
        self.total.assign_add(float(values.sum()))
        self.count.assign_add(count)

    def result(self):
        # One division in the variables' dtype, correctly rounded as the host's float64
        # division rounded to it was; 0 before any update.
        return ft.math.divide_no_nan(self.total.read_value(), self.count.read_value())


class MeanMetricWrapper(Mean):
    """The running mean of ``fn(y_true, y_pred, **kwargs)``, a per-sample function."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", None) or "mean", dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        # As Keras 3: the steps a prediction's mask marks as padding get no weight.
        mask = get_keras_mask(y_pred)
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        if mask is not None:
            sample_weight = _apply_mask(sample_weight, mask, values.dtype, "sum")
        super().update_state(values, sample_weight=sample_weight)

    def get_config(self):
        config = super().get_config()
        config.update(self._fn_kwargs)
        if type(self) is MeanMetricWrapper:
            config["fn"] = getattr(self._fn, "__name__", self._fn)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("fn"), str):
            # Imported here: the package's registry imports this module.
            from . import ALL_OBJECTS_DICT

            config["fn"] = ALL_OBJECTS_DICT[config["fn"]]
        return cls(**config)
