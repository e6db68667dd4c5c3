"""``Conv1D`` (Keras 3's ``keras.src.layers.convolutional.conv1d``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.Conv1D(4, 3, padding="causal")
>>> layer(ft.ones([2, 10, 5])).shape
TensorShape([2, 10, 4])
>>> layer.kernel.shape
TensorShape([3, 5, 4])
"""

from .base_conv import _BaseConv, _check_filters_and_groups, _conv1d


class Conv1D(_BaseConv):
    """1-D convolution over ``[batch, steps, channels]`` sequences:
    ``activation(conv1d(inputs, kernel) + bias)`` with a kernel
    ``(kernel_size, input channels, filters)``. ``padding="causal"`` pads only the start, so
    output step ``t`` sees inputs up to ``t`` (WaveNet's convolution). Computed as the 2-D
    convolution of a height-1 image, whose gradient it shares."""

    rank = 1
    _allow_causal = True

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        groups=1,
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
        self.filters = _check_filters_and_groups(self, filters, groups)
        self.groups = 1
        super().__init__(
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
        )

    def _kernel_shape(self, channels):
        return self.kernel_size + (channels, self.filters)

    def _output_channels(self, channels):
        return self.filters

    def call(self, inputs):
        outputs = _conv1d(inputs, self.kernel, self.strides[0], self.padding, self.dilation_rate[0])
        return self._finish(outputs)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "groups": self.groups}


Convolution1D = Conv1D
