"""Keras's spatial reshaping layers for NHWC images: ``ZeroPadding2D``, ``Cropping2D`` and
``UpSampling2D``. Each is one or two ferrotape ops (pad, a strided slice, a broadcast), so their
gradients, to any order, are those ops' own.

>>> import ferrotape as ft
>>> x = ft.ones([1, 2, 3, 1])
>>> ft.keras.layers.ZeroPadding2D(((1, 0), (2, 1)))(x).shape
TensorShape([1, 3, 6, 1])
>>> ft.keras.layers.Cropping2D(((1, 0), (1, 1)))(x).shape
TensorShape([1, 1, 1, 1])
>>> ft.keras.layers.UpSampling2D((2, 3))(x).shape
TensorShape([1, 4, 9, 1])

Keras 3 keeps these in ``keras.src.layers.reshaping`` (``zero_padding2d``, ``cropping2d``,
``up_sampling2d``).
"""

import numpy as np

from .... import _core
from ..layer import Layer


def _channels_last(layer, data_format):
    if data_format not in (None, "channels_last"):
        raise ValueError(
            f"{type(layer).__name__}: only data_format='channels_last' (NHWC) is supported, "
            f"received {data_format!r}"
        )


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _edges(layer, what, value, dims=2):
    """Keras's padding/cropping argument as ``dims`` ``(before, after)`` pairs of non-negative
    ints. For 2 and 3 spatial axes it is an int, a tuple of ``dims`` symmetric amounts, or a
    tuple of ``dims`` pairs; for 1 axis, an int or one ``(before, after)`` pair."""
    given = value
    if dims == 1 and isinstance(value, (tuple, list)) and len(value) == 2:
        value = (value,)
    if _is_int(value):
        value = ((value, value),) * dims
    elif isinstance(value, (tuple, list)) and len(value) == dims and all(map(_is_int, value)):
        value = tuple((v, v) for v in value)
    ok = (
        isinstance(value, (tuple, list))
        and len(value) == dims
        and all(isinstance(p, (tuple, list)) and len(p) == 2 for p in value)
        and all(_is_int(v) and v >= 0 for p in value for v in p)
    )
    if not ok:
        shapes = (
            "an int or a tuple of 2 of them"
            if dims == 1
            else f"a tuple of {dims} of them, or a tuple of {dims} tuples of 2 of them"
        )
        raise ValueError(
            f"{type(layer).__name__}: {what} must be a non-negative int, {shapes}. "
            f"Received: {what}={given!r}"
        )
    return tuple(tuple(int(v) for v in p) for p in value)


def _expect_images(layer, inputs):
    if len(inputs.shape) != 4:
        raise ValueError(
            f"{type(layer).__name__}: expected images of rank 4 (batch, height, width, "
            f"channels), received shape {tuple(inputs.shape)}"
        )


class ZeroPadding2D(Layer):
    """Adds rows and columns of zeros around each image:
    ``[n, h, w, c] -> [n, top + h + bottom, left + w + right, c]``."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        self.padding = _edges(self, "padding", padding)
        self.data_format = "channels_last"

    def call(self, inputs):
        _expect_images(self, inputs)
        return _core.pad(inputs, [[0, 0], *map(list, self.padding), [0, 0]])

    def get_config(self):
        return {**super().get_config(), "padding": self.padding, "data_format": self.data_format}


class Cropping2D(Layer):
    """Removes rows and columns from the edges of each image:
    ``[n, h, w, c] -> [n, h - top - bottom, w - left - right, c]``."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        self.cropping = _edges(self, "cropping", cropping)
        self.data_format = "channels_last"

    def call(self, inputs):
        _expect_images(self, inputs)
        (top, bottom), (left, right) = self.cropping
        _, height, width, _ = inputs.shape
        if top + bottom >= height or left + right >= width:
            raise ValueError(
                f"Cropping2D: cropping {self.cropping} leaves nothing of an input of shape "
                f"{tuple(inputs.shape)}: it must remove fewer rows than the height and fewer "
                f"columns than the width"
            )
        return inputs[:, top : height - bottom, left : width - right, :]

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping, "data_format": self.data_format}


class UpSampling2D(Layer):
    """Repeats each row ``size[0]`` times and each column ``size[1]`` times (nearest
    neighbour): ``[n, h, w, c] -> [n, h * size[0], w * size[1], c]``."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        if _is_int(size):
            size = (size, size)
        if not (
            isinstance(size, (tuple, list))
            and len(size) == 2
            and all(_is_int(s) and s >= 1 for s in size)
        ):
            raise ValueError(
                f"UpSampling2D: size must be a positive int or a tuple of 2 of them. "
                f"Received: size={size!r}"
            )
        if interpolation != "nearest":
            raise ValueError(
                "UpSampling2D: only interpolation='nearest' is supported. "
                f"Received: interpolation={interpolation!r}"
            )
        self.size = tuple(int(s) for s in size)
        self.data_format = "channels_last"
        self.interpolation = interpolation

    def call(self, inputs):
        _expect_images(self, inputs)
        n, height, width, channels = inputs.shape
        rows, cols = self.size
        # [n, h, 1, w, 1, c] broadcast to [n, h, rows, w, cols, c] is each pixel repeated in a
        # rows x cols block; its gradient (a sum over the block) comes from broadcast_to.
        x = _core.reshape(inputs, [n, height, 1, width, 1, channels])
        x = _core.broadcast_to(x, [n, height, rows, width, cols, channels])
        return _core.reshape(x, [n, height * rows, width * cols, channels])

    def get_config(self):
        return {
            **super().get_config(),
            "size": self.size,
            "data_format": self.data_format,
            "interpolation": self.interpolation,
        }
