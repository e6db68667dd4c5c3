"""``ActivityRegularization`` (Keras 3's
``keras.src.layers.regularization.activity_regularization``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.ActivityRegularization(l1=0.5)
>>> _ = layer(ft.constant([[1.0, -2.0]]))
>>> [float(loss) for loss in layer.losses]
[1.5]
"""

from ... import regularizers
from ..layer import Layer
from ..layer_helpers import _float_arg


class ActivityRegularization(Layer):
    """The identity, adding ``l1 * sum(|x|) + l2 * sum(x^2)`` of its output to the layer's
    (and the model's) losses."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        l1 = _float_arg("ActivityRegularization", "l1", l1)
        l2 = _float_arg("ActivityRegularization", "l2", l2)
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = l1, l2

    def call(self, inputs):
        return inputs

    def get_config(self):
        config = {**super().get_config(), "l1": self.l1, "l2": self.l2}
        config.pop("activity_regularizer", None)
        return config
