"""``Conv3DTranspose`` (Keras 3's ``keras.src.layers.convolutional.conv3d_transpose``).

Like ``Conv3D``, composed from 2-D ops: input depth slice ``i`` spreads, through the 2-D
transposed convolution with ``kernel[a]``, to output depth ``i * stride + a * dilation``. Each
depth tap runs one batched ``conv2d_transpose``; its slices are spaced ``stride`` apart
(zeros between), shifted by the tap, summed, and cut to Keras's output depth where TF's
padding rule puts it. The gradients are those ops'.

>>> import ferrotape as ft
>>> layer = ft.keras.layers.Conv3DTranspose(4, 3, strides=2, padding="same")
>>> layer(ft.ones([1, 3, 4, 5, 2])).shape
TensorShape([1, 6, 8, 10, 4])
>>> layer.kernel.shape
TensorShape([3, 3, 3, 4, 2])
"""

from .... import _core, nn
from .base_conv_transpose import _BaseConvTranspose


class Conv3DTranspose(_BaseConvTranspose):
    """The transpose of ``Conv3D`` (its input gradient), to upsample volumes:
    ``activation(conv3d_transpose(inputs, kernel) + bias)`` with a kernel
    ``kernel_size + (filters, input channels)``; each output size is ``size * stride`` with
    ``same`` padding and ``size * stride + max(k - stride, 0)`` with ``valid`` padding."""

    rank = 3

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1, 1),
        padding="valid",
        output_padding=None,
        data_format=None,
        dilation_rate=(1, 1, 1),
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
        n, depth, height, width, channels = inputs.shape
        stride, dilation, taps = self.strides[0], self.dilation_rate[0], self.kernel_size[0]
        out_h, out_w = self._output_length(height, 1), self._output_length(width, 2)
        planes = _core.reshape(inputs, [n * depth, height, width, channels])
        full_depth = (depth - 1) * stride + (taps - 1) * dilation + 1
        spread = (depth - 1) * stride + 1
        plane = out_h * out_w * self.filters
        total = None
        for tap in range(taps):
            y = nn.conv2d_transpose(
                planes,
                self.kernel[tap],
                [n * depth, out_h, out_w, self.filters],
                self.strides[1:],
                padding=self.padding.upper(),
                dilations=self.dilation_rate[1:],
            )
            # Slice i to depth i * stride: each followed by stride - 1 zero slices.
            y = _core.reshape(y, [n, depth, 1, plane])
            y = _core.pad(y, [[0, 0], [0, 0], [0, stride - 1], [0, 0]])
            y = _core.reshape(y, [n, depth * stride, plane])[:, :spread]
            before = tap * dilation
            y = _core.pad(y, [[0, 0], [before, full_depth - spread - before], [0, 0]])
            total = y if total is None else total + y
        out_depth = self._output_length(depth, 0)
        # TF's transposed convolution drops pad_total // 2 leading slices (the forward
        # convolution's padding before) and keeps out_depth, zero-filling past the end.
        start = max((depth - 1) * stride + (taps - 1) * dilation + 1 - out_depth, 0) // 2
        kept = total[:, start : start + out_depth]
        if kept.shape[1] < out_depth:
            kept = _core.pad(kept, [[0, 0], [0, out_depth - kept.shape[1]], [0, 0]])
        outputs = _core.reshape(kept, [n, out_depth, out_h, out_w, self.filters])
        return self._finish(outputs)


Convolution3DTranspose = Conv3DTranspose
