"""``DepthwiseConv2D`` (Keras 3's
``keras.src.layers.convolutional.depthwise_conv2d``).
"""

from .base_depthwise_conv import _BaseDepthwiseConv


class DepthwiseConv2D(_BaseDepthwiseConv):
    """Each channel of an NHWC image convolved with its own ``depth_multiplier`` filters
    (kernel ``kernel_size + (channels, depth_multiplier)``); output channel
    ``c * depth_multiplier + q``."""

    _native_class = "DepthwiseConv2D"
