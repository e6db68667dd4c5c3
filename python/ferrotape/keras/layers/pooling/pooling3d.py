"""3-D max, average and global pooling over ``[batch, depth, height, width, channels]``
volumes (Keras 3's ``keras.src.layers.pooling``).

A 3-D window is separable: the maximum (or the mean over the real, unpadded elements) of a
``d x h x w`` box is that over depth of the ones over each ``h x w`` plane, and ``same``
padding pads each axis independently. So the layer runs the 2-D pooling op twice, first over
height and width of every depth slice, then over depth (with the pooled planes flattened into
one width axis and a window of 1 across it), and its gradient is those ops' own.

>>> import ferrotape as ft
>>> x = ft.reshape(ft.range(8.0), [1, 2, 2, 2, 1])
>>> ft.keras.layers.MaxPooling3D()(x).numpy().ravel().tolist()
[7.0]
>>> ft.keras.layers.GlobalAveragePooling3D()(x).numpy().tolist()
[[3.5]]
"""

from .... import _core, nn
from ..layer import Layer
from ..layer_helpers import _channels_last, _expect_rank, _ntuple, _padding
from .pooling1d import _GlobalPooling


class _Pooling3D(Layer):
    _op = None

    def __init__(
        self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, **kwargs
    ):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        self.pool_size = _ntuple(self, "pool_size", pool_size, 3)
        self.strides = self.pool_size if strides is None else _ntuple(self, "strides", strides, 3)
        self.padding = _padding(self, padding)
        self.data_format = "channels_last"

    def build(self, input_shape):
        _expect_rank(self, input_shape, 5)

    def call(self, inputs):
        op, padding = type(self)._op, self.padding.upper()
        n, depth, height, width, channels = inputs.shape
        planes = _core.reshape(inputs, [n * depth, height, width, channels])
        planes = op(planes, self.pool_size[1:], self.strides[1:], padding)
        _, out_h, out_w, _ = planes.shape
        x = _core.reshape(planes, [n, depth, out_h * out_w, channels])
        x = op(x, (self.pool_size[0], 1), (self.strides[0], 1), padding)
        return _core.reshape(x, [n, x.shape[1], out_h, out_w, channels])

    def get_config(self):
        return {
            **super().get_config(),
            "pool_size": self.pool_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": self.data_format,
        }


class MaxPooling3D(_Pooling3D):
    """The maximum of each ``pool_size`` box (strides default to ``pool_size``):
    ``[n, d, h, w, c] -> [n, out_d, out_h, out_w, c]``."""

    _op = staticmethod(nn.max_pool2d)


class AveragePooling3D(_Pooling3D):
    """The mean of each ``pool_size`` box (``same`` padding averages only real elements):
    ``[n, d, h, w, c] -> [n, out_d, out_h, out_w, c]``."""

    _op = staticmethod(nn.avg_pool2d)

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, **kwargs):
        # Keras has no default window for average pooling.
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class GlobalAveragePooling3D(_GlobalPooling):
    """The mean over depth, height and width: ``[n, d, h, w, c] -> [n, c]``."""

    _rank = 5
    _reduce = staticmethod(_core.reduce_mean)


class GlobalMaxPooling3D(_GlobalPooling):
    """The maximum over depth, height and width: ``[n, d, h, w, c] -> [n, c]``."""

    _rank = 5
    _reduce = staticmethod(_core.reduce_max)


MaxPool3D = MaxPooling3D
AvgPool3D = AveragePooling3D
GlobalAvgPool3D = GlobalAveragePooling3D
GlobalMaxPool3D = GlobalMaxPooling3D
