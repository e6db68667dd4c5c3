"""``SeparableConv2D`` (Keras 3's ``keras.src.layers.convolutional.separable_conv2d``).

The depthwise stage runs ``DepthwiseConv2D``'s native form over ``depthwise_kernel``, the
pointwise stage is a 1x1 ``conv2d``.

>>> import ferrotape as ft
>>> layer = ft.keras.layers.SeparableConv2D(4, 3, padding="same")
>>> layer(ft.ones([2, 6, 6, 3])).shape
TensorShape([2, 6, 6, 4])
>>> [w.shape.as_list() for w in layer.weights]
[[3, 3, 3, 1], [1, 1, 3, 4], [4]]
"""

from .... import _core, nn
from .base_separable_conv import _BaseSeparableConv


class SeparableConv2D(_BaseSeparableConv):
    """Depthwise then pointwise 2-D convolution over NHWC images:
    ``activation(pointwise(depthwise(inputs)) + bias)``."""

    def build(self, input_shape):
        super().build(input_shape)
        self._depthwise = _core.keras.NativeLayer(
            "DepthwiseConv2D", {"kernel": self.depthwise_kernel, "bias": None}
        )

    def call(self, inputs):
        x = self._depthwise(inputs, activation="linear", **self._call_settings())
        return self._finish(nn.conv2d(x, self.pointwise_kernel, (1, 1), "VALID"))


SeparableConvolution2D = SeparableConv2D
