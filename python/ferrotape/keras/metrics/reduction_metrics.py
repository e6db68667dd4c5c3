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

from ..layers.layer_masking import get_keras_mask
from ..losses.loss import _apply_mask
from .metric import Metric, _numpy, reduce_to_samplewise


class Sum(Metric):
    """The running (weighted) sum of the values."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(dtype=dtype, name=name)
        self.total = self.add_variable((), "zeros", name="total")

    def update_state(self, values, sample_weight=None):
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
        count = float(self.count.numpy())
        value = float(self.total.numpy()) / count if count else 0.0
        return ft.constant(value, dtype=self._dtype)


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
