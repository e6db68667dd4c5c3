"""What ``Conv1DTranspose`` and ``Conv2DTranspose`` share (Keras 3's
``keras.src.layers.convolutional.base_conv_transpose``): the arguments for any spatial
``rank``, a kernel ``kernel_size + (filters, input channels)`` and a bias, and Keras's rule for
the output length.
"""

import numpy as np

from .... import nn
from ... import activations, initializers, regularizers
from ..layer_helpers import (
    _channels_last,
    _expect_rank,
    _KernelLayer,
    _known_dim,
    _ntuple,
    _padding,
)


class _BaseConvTranspose(_KernelLayer):
    rank = 2

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        output_padding=None,
        data_format=None,
        dilation_rate=(1, 1),
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if not isinstance(filters, (int, np.integer)) or filters < 1:
            raise ValueError(
                f"{type(self).__name__}: filters must be a positive integer. "
                f"Received: filters={filters!r}"
            )
        if output_padding is not None:
            raise ValueError(
                f"{type(self).__name__}: only output_padding=None is supported. "
                f"Received: output_padding={output_padding!r}"
            )
        _channels_last(self, data_format)
        self.filters = int(filters)
        self.kernel_size = _ntuple(self, "kernel_size", kernel_size, self.rank)
        self.strides = _ntuple(self, "strides", strides, self.rank)
        self.dilation_rate = _ntuple(self, "dilation_rate", dilation_rate, self.rank)
        self.padding = _padding(self, padding)
        self.data_format = "channels_last"
        self.output_padding = None
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    def build(self, input_shape):
        _expect_rank(self, input_shape, self.rank + 2)
        channels = _known_dim(self, input_shape, -1, "channel dimension")
        self._add_kernel_and_bias(self.kernel_size + (self.filters, channels), self.filters)

    def _output_length(self, length, axis):
        kernel = self.kernel_size[axis] + (self.kernel_size[axis] - 1) * (
            self.dilation_rate[axis] - 1
        )
        stride = self.strides[axis]
        if self.padding == "same":
            return length * stride
        return length * stride + max(kernel - stride, 0)

    def _finish(self, outputs):
        if self.bias is not None:
            outputs = nn.bias_add(outputs, self.bias)
        # The activation runs after the transposed convolution (it has no native form), read
        # on each call as Keras does.
        return self.activation(outputs)

    def get_config(self):
        return {
            **super().get_config(),
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": self.data_format,
            "output_padding": self.output_padding,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
        }
