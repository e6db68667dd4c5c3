"""Adaptive max and average pooling in 1, 2 and 3 dimensions (Keras 3's
``keras.src.layers.pooling.adaptive_*``): the windows are chosen for a fixed output size.

Along an axis of length ``L`` pooled to ``n``, output ``i`` covers the input from
``floor(i * L / n)`` to ``ceil((i + 1) * L / n)`` (exclusive), so the windows tile the axis
and overlap by at most one element. A box's maximum (or mean) is that over one axis of those
over the others, so the layer pools one axis at a time with slices and reductions, whose
gradients are theirs.

>>> import ferrotape as ft
>>> x = ft.reshape(ft.range(10.0), [1, 10, 1])
>>> ft.keras.layers.AdaptiveAveragePooling1D(4)(x)[0, :, 0].numpy().tolist()
[1.0, 3.0, 6.0, 8.0]
"""

from .... import _core
from ..layer import Layer
from ..layer_helpers import _channels_last, _expect_rank, _is_int


def _windows(length, size):
    return [(i * length // size, -(-(i + 1) * length // size)) for i in range(size)]


class _AdaptivePooling(Layer):
    _rank = None
    _reduce = None

    def __init__(self, output_size, data_format=None, **kwargs):
        super().__init__(**kwargs)
        rank = self._rank
        sizes = (output_size,) * rank if _is_int(output_size) else output_size
        if (
            not isinstance(sizes, (tuple, list))
            or len(sizes) != rank
            or not all(_is_int(s) and s >= 1 for s in sizes)
        ):
            raise TypeError(
                f"`output_size` must be an integer or a tuple of {rank} integers. "
                f"Received: output_size={output_size}"
            )
        _channels_last(self, data_format)
        self.output_size = tuple(int(s) for s in sizes)
        self.data_format = "channels_last"

    def build(self, input_shape):
        _expect_rank(self, input_shape, self._rank + 2)

    def call(self, inputs):
        x = inputs
        for axis, size in enumerate(self.output_size, start=1):
            length = x.shape[axis]
            index = [slice(None)] * len(x.shape)
            pieces = []
            for start, end in _windows(length, size):
                index[axis] = slice(start, end)
                pieces.append(type(self)._reduce(x[tuple(index)], [axis], keepdims=True))
            x = _core.concat(pieces, axis)
        return x

    def get_config(self):
        return {
            **super().get_config(),
            "output_size": self.output_size,
            "data_format": self.data_format,
        }


class AdaptiveAveragePooling1D(_AdaptivePooling):
    """The mean of each adaptive window: ``[n, steps, c] -> [n, output_size, c]``."""

    _rank = 1
    _reduce = staticmethod(_core.reduce_mean)


class AdaptiveAveragePooling2D(_AdaptivePooling):
    """The mean of each adaptive window: ``[n, h, w, c] -> [n, *output_size, c]``."""

    _rank = 2
    _reduce = staticmethod(_core.reduce_mean)


class AdaptiveAveragePooling3D(_AdaptivePooling):
    """The mean of each adaptive window: ``[n, d, h, w, c] -> [n, *output_size, c]``."""

    _rank = 3
    _reduce = staticmethod(_core.reduce_mean)


class AdaptiveMaxPooling1D(_AdaptivePooling):
    """The maximum of each adaptive window: ``[n, steps, c] -> [n, output_size, c]``."""

    _rank = 1
    _reduce = staticmethod(_core.reduce_max)


class AdaptiveMaxPooling2D(_AdaptivePooling):
    """The maximum of each adaptive window: ``[n, h, w, c] -> [n, *output_size, c]``."""

    _rank = 2
    _reduce = staticmethod(_core.reduce_max)


class AdaptiveMaxPooling3D(_AdaptivePooling):
    """The maximum of each adaptive window: ``[n, d, h, w, c] -> [n, *output_size, c]``."""

    _rank = 3
    _reduce = staticmethod(_core.reduce_max)
