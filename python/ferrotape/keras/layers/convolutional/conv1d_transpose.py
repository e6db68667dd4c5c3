"""``Conv1DTranspose`` (Keras 3's ``keras.src.layers.convolutional.conv1d_transpose``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.Conv1DTranspose(4, 3, strides=2)
>>> layer(ft.ones([2, 5, 3])).shape
TensorShape([2, 11, 4])
>>> layer.kernel.shape
TensorShape([3, 4, 3])
"""

from .... import _core, nn
from .base_conv_transpose import _BaseConvTranspose


class Conv1DTranspose(_BaseConvTranspose):
    """The transpose of ``Conv1D`` (its input gradient), to upsample sequences:
    ``activation(conv1d_transpose(inputs, kernel) + bias)`` with a kernel
    ``(kernel_size, filters, input channels)``. The output length is ``steps * stride`` with
    ``same`` padding and ``steps * stride + max(k - stride, 0)`` with ``valid`` padding (``k``
    the dilated kernel size). Computed as ``Conv2DTranspose`` on a height-1 image."""

    rank = 1

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        output_padding=None,
        data_format=None,
        dilation_rate=1,
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
        super().__init__(
            filters,
            kernel_size,
            strides,
            padding,
            output_padding,
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

    def call(self, inputs):
        n, steps, _ = inputs.shape
        outputs = nn.conv2d_transpose(
            _core.expand_dims(inputs, 1),
            _core.expand_dims(self.kernel, 0),
            [n, 1, self._output_length(steps, 0), self.filters],
            (1, self.strides[0]),
            padding=self.padding.upper(),
            dilations=(1, self.dilation_rate[0]),
        )
        return self._finish(_core.squeeze(outputs, [1]))


Convolution1DTranspose = Conv1DTranspose
