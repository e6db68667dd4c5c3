"""The hinge metrics (Keras 3's ``keras.src.metrics.hinge_metrics``): running means of the
hinge, squared hinge and categorical hinge losses.

>>> import ferrotape as ft
>>> m = ft.keras.metrics.Hinge()
>>> m.update_state([[0.0, 1.0]], [[0.6, 0.4]])
>>> round(float(m.result()), 4)
1.1
"""

from .. import losses as _losses
from .reduction_metrics import MeanMetricWrapper


class Hinge(MeanMetricWrapper):
    """The running mean of ``hinge``: ``mean(max(1 - y_true * y_pred, 0), axis=-1)`` (0/1
    labels are mapped to -1/1)."""

    def __init__(self, name="hinge", dtype=None):
        super().__init__(_losses.hinge, name=name, dtype=dtype)


class SquaredHinge(MeanMetricWrapper):
    """The running mean of ``squared_hinge``."""

    def __init__(self, name="squared_hinge", dtype=None):
        super().__init__(_losses.squared_hinge, name=name, dtype=dtype)


class CategoricalHinge(MeanMetricWrapper):
    """The running mean of ``categorical_hinge``: ``max(0, max(neg) - pos + 1)``."""

    def __init__(self, name="categorical_hinge", dtype=None):
        super().__init__(_losses.categorical_hinge, name=name, dtype=dtype)
