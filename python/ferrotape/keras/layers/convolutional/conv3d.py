"""``Conv3D`` (Keras 3's ``keras.src.layers.convolutional.conv3d``).

ferrotape has no 3-D convolution op, and needs none: output depth slice ``i`` is the sum over
the kernel's depth taps ``a`` of the 2-D convolution of input slice ``i * stride + a *
dilation`` with ``kernel[a]``. The layer runs one batched ``conv2d`` per tap (all output
slices at once, stacked into the batch) and adds them, so its gradients, to any order, are
those of ``conv2d``, a strided slice and a sum.

>>> import ferrotape as ft
>>> layer = ft.keras.layers.Conv3D(4, 3, padding="same")
>>> layer(ft.ones([1, 5, 6, 7, 2])).shape
TensorShape([1, 5, 6, 7, 4])
>>> layer.kernel.shape
TensorShape([3, 3, 3, 2, 4])
"""

from .... import _core, nn
from .base_conv import _BaseConv, _check_filters_and_groups


def _padded_depth(inputs, taps, stride, dilation, padding):
    """The input with TF's ``same`` zeros added along depth, and the output depth."""
    depth = inputs.shape[1]
    span = dilation * (taps - 1) + 1
    if padding == "valid":
        out_depth = (depth - span) // stride + 1
        if out_depth < 1:
            raise ValueError(
                f"Conv3D: the input depth {depth} is smaller than the dilated kernel depth "
                f"{span} (padding='valid'). Received input shape {tuple(inputs.shape)}"
            )
        return inputs, out_depth
    out_depth = -(-depth // stride)
    total = max((out_depth - 1) * stride + span - depth, 0)
    pads = [[0, 0], [total // 2, total - total // 2], [0, 0], [0, 0], [0, 0]]
    return _core.pad(inputs, pads), out_depth


def _conv3d(inputs, kernel, strides, padding, dilation_rate):
    """``[n, d, h, w, c] * [kd, kh, kw, c, f]``: one batched conv2d per depth tap, summed."""
    taps = kernel.shape[0]
    x, out_depth = _padded_depth(inputs, taps, strides[0], dilation_rate[0], padding)
    n, _, height, width, channels = x.shape
    stride, dilation = strides[0], dilation_rate[0]
    terms = []
    for tap in range(taps):
        start = tap * dilation
        planes = x[:, start : start + (out_depth - 1) * stride + 1 : stride]
        planes = _core.reshape(planes, [n * out_depth, height, width, channels])
        terms.append(
            nn.conv2d(
                planes, kernel[tap], strides[1:], padding.upper(), dilations=dilation_rate[1:]
            )
        )
    outputs = _core.add_n(terms) if len(terms) > 1 else terms[0]
    _, out_h, out_w, filters = outputs.shape
    return _core.reshape(outputs, [n, out_depth, out_h, out_w, filters])


class Conv3D(_BaseConv):
    """3-D convolution over ``[batch, depth, height, width, channels]`` volumes:
    ``activation(conv3d(inputs, kernel) + bias)`` with a kernel
    ``kernel_size + (input channels, filters)``."""

    rank = 3

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1, 1),
        padding="valid",
        data_format=None,
        dilation_rate=(1, 1, 1),
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
        outputs = _conv3d(inputs, self.kernel, self.strides, self.padding, self.dilation_rate)
        return self._finish(outputs)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "groups": self.groups}


Convolution3D = Conv3D
