"""``Identity`` (Keras 3's ``keras.src.layers.core.identity``).

>>> import ferrotape as ft
>>> ft.keras.layers.Identity()(ft.constant([1.0, 2.0])).numpy().tolist()
[1.0, 2.0]
"""

from ..layer import Layer


class Identity(Layer):
    """Returns its inputs unchanged (a placeholder, e.g. for a removed block)."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def call(self, inputs):
        return inputs
