"""``Rescaling`` (Keras 3's ``keras.src.layers.preprocessing.rescaling``).

>>> import ferrotape as ft
>>> ft.keras.layers.Rescaling(1 / 255)(ft.constant([[0.0, 255.0]])).numpy().tolist()
[[0.0, 1.0]]
"""

import numpy as np

from .... import _core
from ..layer import Layer


class Rescaling(Layer):
    """``inputs * scale + offset``, computed in the layer's dtype (e.g. ``1 / 255`` to bring
    pixels to ``[0, 1]``, or ``scale=1 / 127.5, offset=-1`` for ``[-1, 1]``). ``scale`` and
    ``offset`` may be numbers or per-channel lists, broadcast against the inputs."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        for what, value in (("scale", scale), ("offset", offset)):
            if not np.issubdtype(np.asarray(value).dtype, np.number):
                raise ValueError(
                    f"Rescaling: {what} must be a number or a list of numbers. "
                    f"Received: {what}={value!r}"
                )
        self.scale = scale
        self.offset = offset

    def call(self, inputs):
        dtype = self.compute_dtype
        inputs = _core.cast(inputs, dtype)
        scale = _core.constant(np.asarray(self.scale), dtype=dtype)
        offset = _core.constant(np.asarray(self.offset), dtype=dtype)
        return inputs * scale + offset

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}
