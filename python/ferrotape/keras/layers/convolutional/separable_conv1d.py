"""``SeparableConv1D`` (Keras 3's ``keras.src.layers.convolutional.separable_conv1d``).

Both stages are linear, so the layer folds them into one kernel ``(kernel_size, channels,
filters)``, ``sum_q depthwise[k, c, q] * pointwise[0, c * m + q, f]``, and runs a single 1-D
convolution; the gradients reach both weights through that product.

>>> import ferrotape as ft
>>> layer = ft.keras.layers.SeparableConv1D(4, 3, depth_multiplier=2)
>>> layer(ft.ones([2, 10, 5])).shape
TensorShape([2, 8, 4])
>>> [w.shape.as_list() for w in layer.weights]
[[3, 5, 2], [1, 10, 4], [4]]
"""

from .... import _core
from .base_conv import _conv1d
from .base_separable_conv import _BaseSeparableConv


class SeparableConv1D(_BaseSeparableConv):
    """Depthwise then pointwise 1-D convolution over ``[batch, steps, channels]`` sequences:
    ``activation(pointwise(depthwise(inputs)) + bias)``."""

    rank = 1

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        depth_multiplier=1,
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        pointwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        pointwise_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        depthwise_constraint=None,
        pointwise_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(
            filters,
            kernel_size,
            strides,
            padding,
            data_format,
            dilation_rate,
            depth_multiplier,
            activation,
            use_bias,
            depthwise_initializer,
            pointwise_initializer,
            bias_initializer,
            depthwise_regularizer,
            pointwise_regularizer,
            bias_regularizer,
            activity_regularizer,
            depthwise_constraint,
            pointwise_constraint,
            bias_constraint,
            **kwargs,
        )

    def call(self, inputs):
        size, channels, multiplier = self.depthwise_kernel.shape
        pointwise = _core.reshape(self.pointwise_kernel, [1, channels, multiplier, self.filters])
        depthwise = _core.expand_dims(self.depthwise_kernel, -1)
        kernel = _core.reduce_sum(depthwise * pointwise, [2])
        outputs = _conv1d(inputs, kernel, self.strides[0], self.padding, self.dilation_rate[0])
        return self._finish(outputs)


SeparableConvolution1D = SeparableConv1D
