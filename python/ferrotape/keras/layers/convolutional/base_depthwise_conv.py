"""What ``DepthwiseConv1D`` and ``DepthwiseConv2D`` share (Keras 3's
``keras.src.layers.convolutional.base_depthwise_conv``).
"""

from ..layer_helpers import _is_int
from .base_conv import _BaseConv


class _BaseDepthwiseConv(_BaseConv):
    """Each input channel convolved with its own ``depth_multiplier`` filters; output channel
    ``c * depth_multiplier + q``."""

    # Keras 3 keeps these convolutions' kernels in public attributes (ferrotape.trackable).
    _checkpoint_names = {}

    _kernel_role = "depthwise"

    def __init__(
        self,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        depth_multiplier=1,
        data_format=None,
        dilation_rate=(1, 1),
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
        if not _is_int(depth_multiplier) or depth_multiplier < 1:
            raise ValueError(
                f"{type(self).__name__}: depth_multiplier must be a positive integer. "
                f"Received: depth_multiplier={depth_multiplier!r}"
            )
        self.depth_multiplier = int(depth_multiplier)
        super().__init__(
            kernel_size,
            strides,
            padding,
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

    def _kernel_shape(self, channels):
        return self.kernel_size + (channels, self.depth_multiplier)

    def _output_channels(self, channels):
        return channels * self.depth_multiplier

    def get_config(self):
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier}
