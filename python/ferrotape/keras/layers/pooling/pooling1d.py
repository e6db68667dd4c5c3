"""1-D max, average and global pooling over ``[batch, steps, channels]`` sequences (Keras 3's
``keras.src.layers.pooling``): each window op is the 2-D one on a height-1 image, so its
gradient is that op's own.

>>> import ferrotape as ft
>>> x = ft.reshape(ft.range(6.0), [1, 6, 1])
>>> ft.keras.layers.MaxPooling1D(2)(x)[0, :, 0].numpy().tolist()
[1.0, 3.0, 5.0]
>>> ft.keras.layers.GlobalAveragePooling1D()(x).numpy().tolist()
[[2.5]]
"""

from .... import _core, nn
from ..layer import Layer
from ..layer_helpers import _channels_last, _expect_rank, _ntuple, _padding


class _Pooling1D(Layer):
    _op = None

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        (self.pool_size,) = _ntuple(self, "pool_size", pool_size, 1)
        (self.strides,) = (
            (self.pool_size,) if strides is None else _ntuple(self, "strides", strides, 1)
        )
        self.padding = _padding(self, padding)
        self.data_format = "channels_last"

    def build(self, input_shape):
        _expect_rank(self, input_shape, 3)

    def call(self, inputs):
        x = _core.expand_dims(inputs, 1)
        pooled = type(self)._op(x, (1, self.pool_size), (1, self.strides), self.padding.upper())
        return _core.squeeze(pooled, [1])

    def get_config(self):
        return {
            **super().get_config(),
            "pool_size": self.pool_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": self.data_format,
        }


class MaxPooling1D(_Pooling1D):
    """The maximum of each ``pool_size`` window of steps (strides default to ``pool_size``):
    ``[n, steps, c] -> [n, out_steps, c]``."""

    _op = staticmethod(nn.max_pool2d)


class AveragePooling1D(_Pooling1D):
    """The mean of each ``pool_size`` window of steps (``same`` padding averages only real
    steps): ``[n, steps, c] -> [n, out_steps, c]``."""

    _op = staticmethod(nn.avg_pool2d)

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, **kwargs):
        # Keras has no default window for average pooling.
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class _GlobalPooling(Layer):
    """Reduces the spatial axes ``1 .. rank - 2`` of a channels-last input."""

    _rank = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        self.data_format = "channels_last"
        self.keepdims = bool(keepdims)

    def build(self, input_shape):
        _expect_rank(self, input_shape, self._rank)

    def call(self, inputs):
        return self._reduce(inputs, list(range(1, self._rank - 1)), keepdims=self.keepdims)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "keepdims": self.keepdims}


class GlobalAveragePooling1D(_GlobalPooling):
    """The mean over the steps: ``[n, steps, c] -> [n, c]``. A ``mask`` ``[n, steps]`` (as
    ``Masking`` or ``Embedding(mask_zero=True)`` make) averages the unmasked steps only."""

    _rank = 3
    _reduce = staticmethod(_core.reduce_mean)

    def compute_mask(self, inputs, mask=None):
        """None: the steps are averaged away.

        Args:
            inputs: The sequences.
            mask: Their ``[n, steps]`` mask.

        Returns:
            None.
        """
        del inputs, mask
        return None

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        weights = _core.expand_dims(_core.cast(mask, inputs.dtype), -1)
        # Masked steps may hold anything (inf, nan): select them away rather than scale.
        inputs = _core.select(_core.cast(weights, "bool"), inputs, _core.zeros_like(inputs))
        total = _core.reduce_sum(inputs * weights, [1], keepdims=self.keepdims)
        return total / _core.reduce_sum(weights, [1], keepdims=self.keepdims)


class GlobalMaxPooling1D(_GlobalPooling):
    """The maximum over the steps: ``[n, steps, c] -> [n, c]``."""

    _rank = 3
    _reduce = staticmethod(_core.reduce_max)


MaxPool1D = MaxPooling1D
AvgPool1D = AveragePooling1D
GlobalAvgPool1D = GlobalAveragePooling1D
GlobalMaxPool1D = GlobalMaxPooling1D
