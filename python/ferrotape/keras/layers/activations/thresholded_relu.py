"""``ThresholdedReLU`` (Keras 3 keeps it, for Keras 2 code, in ``keras.src.legacy.layers``).

>>> import ferrotape as ft
>>> ft.keras.layers.ThresholdedReLU(theta=1.0)(ft.constant([0.5, 1.0, 2.0])).numpy().tolist()
[0.0, 0.0, 2.0]
"""

from .... import _core
from ..layer import Layer
from ..layer_helpers import _float_arg


class ThresholdedReLU(Layer):
    """``x`` where ``x > theta``, 0 elsewhere (gradient 1 above ``theta``, 0 below)."""

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        self.theta = _float_arg("ThresholdedReLU", "theta", theta)
        if self.theta < 0:
            raise ValueError(
                f"ThresholdedReLU: theta must be non-negative. Received: theta={theta}"
            )

    def call(self, inputs):
        return _core.select(inputs > self.theta, inputs, _core.zeros_like(inputs))

    def get_config(self):
        return {**super().get_config(), "theta": self.theta}
