"""``Conv2DTranspose`` (Keras 3's
``keras.src.layers.convolutional.conv2d_transpose``).
"""

import numpy as np

from .... import nn
from ... import activations, initializers, regularizers
from ..layer_helpers import _channels_last, _expect_rank, _KernelLayer, _known_dim, _padding, _pair


class Conv2DTranspose(_KernelLayer):
    """The transpose of ``Conv2D`` (its input gradient), as used to upsample in decoders and
    GAN generators: ``activation(conv2d_transpose(inputs, kernel) + bias)`` with a kernel of
    shape ``kernel_size + (filters, input channels)``. The output's height is
    ``height * stride`` with ``same`` padding and ``height * stride + max(k - stride, 0)`` with
    ``valid`` padding (Keras's rule, ``k`` the dilated kernel size); likewise the width."""

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
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
        output_padding=None,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if not isinstance(filters, (int, np.integer)) or filters < 1:
            raise ValueError(
                "Conv2DTranspose: filters must be a positive integer. "
                f"Received: filters={filters!r}"
            )
        if output_padding is not None:
            raise ValueError(
                "Conv2DTranspose: only output_padding=None is supported. "
                f"Received: output_padding={output_padding!r}"
            )
        _channels_last(self, data_format)
        self.filters = int(filters)
        self.kernel_size = _pair(self, "kernel_size", kernel_size)
        self.strides = _pair(self, "strides", strides)
        self.dilation_rate = _pair(self, "dilation_rate", dilation_rate)
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
        _expect_rank(self, input_shape, 4)
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

    def call(self, inputs):
        n, height, width, _ = inputs.shape
        output_shape = [
            n,
            self._output_length(height, 0),
            self._output_length(width, 1),
            self.filters,
        ]
        outputs = nn.conv2d_transpose(
            inputs,
            self.kernel,
            output_shape,
            self.strides,
            padding=self.padding.upper(),
            dilations=self.dilation_rate,
        )
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
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
        }
