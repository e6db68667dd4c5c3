"""Keras's reshaping layers for ``[batch, depth, height, width, channels]`` volumes:
``ZeroPadding3D``, ``Cropping3D`` and ``UpSampling3D`` (Keras 3's
``keras.src.layers.reshaping``), each a pad, a slice or a broadcast, whose gradients are those
ops' own.

>>> import ferrotape as ft
>>> x = ft.ones([1, 2, 3, 4, 1])
>>> ft.keras.layers.ZeroPadding3D(1)(x).shape
TensorShape([1, 4, 5, 6, 1])
>>> ft.keras.layers.Cropping3D(((0, 1), (1, 1), (0, 2)))(x).shape
TensorShape([1, 1, 1, 2, 1])
>>> ft.keras.layers.UpSampling3D((1, 2, 3))(x).shape
TensorShape([1, 2, 6, 12, 1])
"""

from .... import _core
from ..layer import Layer
from ..layer_helpers import _channels_last, _expect_rank, _ntuple
from .spatial2d import _edges


class ZeroPadding3D(Layer):
    """Adds zeros before and after each spatial axis of each volume."""

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        self.padding = _edges(self, "padding", padding, dims=3)
        self.data_format = "channels_last"

    def call(self, inputs):
        _expect_rank(self, inputs.shape, 5)
        return _core.pad(inputs, [[0, 0], *map(list, self.padding), [0, 0]])

    def get_config(self):
        return {**super().get_config(), "padding": self.padding, "data_format": self.data_format}


class Cropping3D(Layer):
    """Removes elements from the start and end of each spatial axis of each volume."""

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        self.cropping = _edges(self, "cropping", cropping, dims=3)
        self.data_format = "channels_last"

    def call(self, inputs):
        _expect_rank(self, inputs.shape, 5)
        sizes = inputs.shape[1:4]
        if any(a + b >= size for (a, b), size in zip(self.cropping, sizes, strict=True)):
            raise ValueError(
                f"Cropping3D: cropping {self.cropping} leaves nothing of an input of shape "
                f"{tuple(inputs.shape)}: it must remove less than each spatial size"
            )
        (d0, d1), (h0, h1), (w0, w1) = self.cropping
        depth, height, width = sizes
        return inputs[:, d0 : depth - d1, h0 : height - h1, w0 : width - w1, :]

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping, "data_format": self.data_format}


class UpSampling3D(Layer):
    """Repeats each element ``size[i]`` times along spatial axis ``i`` (nearest neighbour):
    ``[n, d, h, w, c] -> [n, d * size[0], h * size[1], w * size[2], c]``."""

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        self.size = _ntuple(self, "size", size, 3)
        self.data_format = "channels_last"

    def call(self, inputs):
        _expect_rank(self, inputs.shape, 5)
        n, depth, height, width, channels = inputs.shape
        sd, sh, sw = self.size
        # Each element broadcast over an sd x sh x sw block; the gradient sums the block.
        x = _core.reshape(inputs, [n, depth, 1, height, 1, width, 1, channels])
        x = _core.broadcast_to(x, [n, depth, sd, height, sh, width, sw, channels])
        return _core.reshape(x, [n, depth * sd, height * sh, width * sw, channels])

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": self.data_format}
