"""2-D max, average and global pooling (Keras 3's ``keras.src.layers.pooling``)."""

from .... import _core, nn
from ..layer import Layer
from ..layer_helpers import _channels_last, _expect_rank, _padding, _pair


class _Pooling2D(Layer):
    _op = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        self.pool_size = _pair(self, "pool_size", pool_size)
        self.strides = self.pool_size if strides is None else _pair(self, "strides", strides)
        self.padding = _padding(self, padding)
        self.data_format = "channels_last"

    def build(self, input_shape):
        _expect_rank(self, input_shape, 4)

    def call(self, inputs):
        return type(self)._op(inputs, self.pool_size, self.strides, self.padding.upper())

    def get_config(self):
        return {
            **super().get_config(),
            "pool_size": self.pool_size,
            "strides": self.strides,
            "padding": self.padding,
        }


class MaxPooling2D(_Pooling2D):
    """The maximum of each ``pool_size`` window (strides default to ``pool_size``)."""

    _op = staticmethod(nn.max_pool2d)


class AveragePooling2D(_Pooling2D):
    """The mean of each ``pool_size`` window (``same`` padding averages only real pixels)."""

    _op = staticmethod(nn.avg_pool2d)

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, **kwargs):
        # Keras has no default window for average pooling.
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class _GlobalPooling2D(Layer):
    _reduce = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        self.data_format = "channels_last"
        self.keepdims = bool(keepdims)

    def build(self, input_shape):
        _expect_rank(self, input_shape, 4)

    def call(self, inputs):
        return type(self)._reduce(inputs, [1, 2], keepdims=self.keepdims)

    def get_config(self):
        return {**super().get_config(), "keepdims": self.keepdims}


class GlobalAveragePooling2D(_GlobalPooling2D):
    """The mean over height and width: ``[n, h, w, c] -> [n, c]``."""

    _reduce = staticmethod(_core.reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling2D):
    """The maximum over height and width: ``[n, h, w, c] -> [n, c]``."""

    _reduce = staticmethod(_core.reduce_max)


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
GlobalAvgPool2D = GlobalAveragePooling2D
GlobalMaxPool2D = GlobalMaxPooling2D
