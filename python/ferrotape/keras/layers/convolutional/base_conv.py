"""What ``Conv2D`` and ``DepthwiseConv2D`` share (Keras 3's
``keras.src.layers.convolutional.base_conv``).
"""

from ... import activations, initializers, regularizers
from ..layer_helpers import _channels_last, _expect_rank, _KernelLayer, _known_dim, _padding, _pair


class _Conv2DBase(_KernelLayer):
    _native_class = None

    def __init__(
        self,
        kernel_size,
        strides,
        padding,
        data_format,
        dilation_rate,
        activation,
        use_bias,
        kernel_initializer,
        bias_initializer,
        kernel_regularizer,
        bias_regularizer,
        activity_regularizer,
        kernel_constraint,
        bias_constraint,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        _channels_last(self, data_format)
        self.kernel_size = _pair(self, "kernel_size", kernel_size)
        self.strides = _pair(self, "strides", strides)
        self.dilation_rate = _pair(self, "dilation_rate", dilation_rate)
        if self.strides != (1, 1) and self.dilation_rate != (1, 1):
            raise ValueError(
                f"{type(self).__name__}: strides > 1 are not supported together with "
                f"dilation_rate > 1 (received strides={self.strides}, "
                f"dilation_rate={self.dilation_rate})"
            )
        self.padding = _padding(self, padding)
        self.data_format = "channels_last"
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    def _kernel_shape(self, channels):
        raise NotImplementedError

    def _output_channels(self, channels):
        raise NotImplementedError

    def build(self, input_shape):
        _expect_rank(self, input_shape, 4)
        channels = _known_dim(self, input_shape, -1, "channel dimension")
        self._add_kernel_and_bias(self._kernel_shape(channels), self._output_channels(channels))

    def _call_settings(self):
        return {
            "strides": self.strides,
            "dilation_rate": self.dilation_rate,
            "padding": self.padding,
        }

    def get_config(self):
        return {
            **super().get_config(),
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
        }
