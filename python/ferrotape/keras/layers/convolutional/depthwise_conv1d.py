"""``DepthwiseConv1D`` (Keras 3's ``keras.src.layers.convolutional.depthwise_conv1d``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.DepthwiseConv1D(3, depth_multiplier=2)
>>> layer(ft.ones([2, 10, 5])).shape
TensorShape([2, 8, 10])
"""

from .base_conv import _conv1d, _dense_depthwise_kernel
from .base_depthwise_conv import _BaseDepthwiseConv


class DepthwiseConv1D(_BaseDepthwiseConv):
    """Each channel of a ``[batch, steps, channels]`` sequence convolved with its own
    ``depth_multiplier`` filters (kernel ``(kernel_size, channels, depth_multiplier)``);
    output channel ``c * depth_multiplier + q``."""

    rank = 1

    def __init__(
        self,
        kernel_size,
        strides=1,
        padding="valid",
        depth_multiplier=1,
        data_format=None,
        dilation_rate=1,
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        depthwise_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(
            kernel_size,
            strides,
            padding,
            depth_multiplier,
            data_format,
            dilation_rate,
            activation,
            use_bias,
            depthwise_initializer,
            bias_initializer,
            depthwise_regularizer,
            bias_regularizer,
            activity_regularizer,
            depthwise_constraint,
            bias_constraint,
            **kwargs,
        )

    def call(self, inputs):
        kernel = _dense_depthwise_kernel(self.kernel)
        outputs = _conv1d(inputs, kernel, self.strides[0], self.padding, self.dilation_rate[0])
        return self._finish(outputs)
