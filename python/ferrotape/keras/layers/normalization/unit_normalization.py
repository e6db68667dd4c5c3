"""``UnitNormalization`` (Keras 3's ``keras.src.layers.normalization.unit_normalization``).

>>> import ferrotape as ft
>>> ft.keras.layers.UnitNormalization()(ft.constant([[3.0, 4.0]])).numpy().tolist()
[[0.6000000238418579, 0.800000011920929]]
"""

from .... import _core
from ..layer import Layer


class UnitNormalization(Layer):
    """Scales each sample to unit L2 norm along ``axis`` (an int or a list of ints):
    ``x / max(||x||, 1e-12)``."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = [int(a) for a in axis]
        elif isinstance(axis, int) and not isinstance(axis, bool):
            self.axis = axis
        else:
            raise TypeError(
                "Invalid value for `axis` argument: expected an int or a list/tuple of ints. "
                f"Received: axis={axis!r}"
            )

    def call(self, inputs):
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        squares = _core.reduce_sum(_core.square(inputs), axes, keepdims=True)
        # rsqrt(max(sum, eps^2)) is 1 / max(norm, eps), with a finite gradient at 0.
        return inputs * _core.rsqrt(_core.maximum(squares, 1e-24))

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
