"""Keras's reshaping layers for ``[batch, steps, channels]`` sequences: ``ZeroPadding1D``,
``Cropping1D`` and ``UpSampling1D`` (Keras 3's ``keras.src.layers.reshaping``), each a pad,
a slice or a broadcast, whose gradients are those ops' own.

>>> import ferrotape as ft
>>> x = ft.ones([1, 4, 2])
>>> ft.keras.layers.ZeroPadding1D((1, 2))(x).shape
TensorShape([1, 7, 2])
>>> ft.keras.layers.Cropping1D((1, 2))(x).shape
TensorShape([1, 1, 2])
>>> ft.keras.layers.UpSampling1D(3)(x).shape
TensorShape([1, 12, 2])
"""

from .... import _core
from ..layer import Layer
from ..layer_helpers import _channels_last, _expect_rank, _ntuple
from .spatial2d import _edges


class ZeroPadding1D(Layer):
    """Adds zero steps at the start and end of each sequence:
    ``[n, steps, c] -> [n, left + steps + right, c]``."""

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        (self.padding,) = _edges(self, "padding", padding, dims=1)
        self.data_format = "channels_last"

    def call(self, inputs):
        _expect_rank(self, inputs.shape, 3)
        return _core.pad(inputs, [[0, 0], list(self.padding), [0, 0]])

    def get_config(self):
        return {**super().get_config(), "padding": self.padding, "data_format": self.data_format}


class Cropping1D(Layer):
    """Removes steps from the start and end of each sequence:
    ``[n, steps, c] -> [n, steps - start - end, c]``."""

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        (self.cropping,) = _edges(self, "cropping", cropping, dims=1)

    def call(self, inputs):
        _expect_rank(self, inputs.shape, 3)
        start, end = self.cropping
        steps = inputs.shape[1]
        if start + end >= steps:
            raise ValueError(
                f"Cropping1D: cropping {self.cropping} leaves nothing of an input of shape "
                f"{tuple(inputs.shape)}: it must remove fewer steps than there are"
            )
        return inputs[:, start : steps - end, :]

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping}


class UpSampling1D(Layer):
    """Repeats each step ``size`` times: ``[n, steps, c] -> [n, steps * size, c]``."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        (self.size,) = _ntuple(self, "size", size, 1)

    def call(self, inputs):
        _expect_rank(self, inputs.shape, 3)
        n, steps, channels = inputs.shape
        # [n, steps, 1, c] broadcast to [n, steps, size, c]: its gradient sums each block.
        x = _core.broadcast_to(_core.expand_dims(inputs, 2), [n, steps, self.size, channels])
        return _core.reshape(x, [n, steps * self.size, channels])

    def get_config(self):
        return {**super().get_config(), "size": self.size}
