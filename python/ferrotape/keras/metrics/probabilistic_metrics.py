"""The probabilistic metrics (Keras 3's ``keras.src.metrics.probabilistic_metrics``): running
means of the cross-entropies, the KL divergence and the Poisson loss.

>>> import ferrotape as ft
>>> m = ft.keras.metrics.KLDivergence()
>>> m.update_state([[0.5, 0.5]], [[0.5, 0.5]])
>>> float(m.result())
0.0
"""

from .. import losses as _losses
from .reduction_metrics import MeanMetricWrapper


class KLDivergence(MeanMetricWrapper):
    """The running mean of ``kl_divergence``: ``sum(y_true * log(y_true / y_pred), axis=-1)``."""

    def __init__(self, name="kl_divergence", dtype=None):
        super().__init__(_losses.kl_divergence, name=name, dtype=dtype)


class Poisson(MeanMetricWrapper):
    """The running mean of ``poisson``: ``mean(y_pred - y_true * log(y_pred), axis=-1)``."""

    def __init__(self, name="poisson", dtype=None):
        super().__init__(_losses.poisson, name=name, dtype=dtype)


class CategoricalCrossentropy(MeanMetricWrapper):
    """The running mean of ``categorical_crossentropy``."""

    def __init__(
        self,
        name="categorical_crossentropy",
        dtype=None,
        from_logits=False,
        label_smoothing=0,
        axis=-1,
    ):
        super().__init__(
            _losses.categorical_crossentropy,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    """The running mean of ``sparse_categorical_crossentropy``."""

    def __init__(
        self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False, axis=-1
    ):
        super().__init__(
            _losses.sparse_categorical_crossentropy,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            axis=axis,
        )


class BinaryCrossentropy(MeanMetricWrapper):
    """The running mean of ``binary_crossentropy``."""

    def __init__(
        self, name="binary_crossentropy", dtype=None, from_logits=False, label_smoothing=0
    ):
        super().__init__(
            _losses.binary_crossentropy,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
        )
