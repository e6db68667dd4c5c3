"""``Conv2DTranspose`` (Keras 3's
``keras.src.layers.convolutional.conv2d_transpose``).
"""

from .... import nn
from .base_conv_transpose import _BaseConvTranspose


class Conv2DTranspose(_BaseConvTranspose):
    """The transpose of ``Conv2D`` (its input gradient), as used to upsample in decoders and
    GAN generators: ``activation(conv2d_transpose(inputs, kernel) + bias)`` with a kernel of
    shape ``kernel_size + (filters, input channels)``. The output's height is
    ``height * stride`` with ``same`` padding and ``height * stride + max(k - stride, 0)`` with
    ``valid`` padding (Keras's rule, ``k`` the dilated kernel size); likewise the width."""

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
        return self._finish(outputs)


Convolution2DTranspose = Conv2DTranspose
