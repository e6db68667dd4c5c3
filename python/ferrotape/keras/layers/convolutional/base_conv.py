"""What the convolutions share (Keras 3's ``keras.src.layers.convolutional.base_conv``):
the arguments, checked once for any spatial ``rank``, and the build of a kernel and a bias.
``Conv2D`` and ``DepthwiseConv2D`` run their native forms; the others compute with
``ft.nn`` ops and say how in their own modules.
"""

import reprlib

from .... import _core, nn
from ... import activations, initializers, object_registration, regularizers
from ..layer_helpers import (
    _channels_last,
    _expect_rank,
    _is_int,
    _KernelLayer,
    _known_dim,
    _ntuple,
    _padding,
    _weight_settings,
)


def _check_filters_and_groups(layer, filters, groups):
    """Keras's checks of ``filters`` (a positive int) and ``groups`` (only 1 here)."""
    if not _is_int(filters) or filters < 1:
        raise ValueError(
            f"{type(layer).__name__}: received an invalid value for `filters`, expected a "
            f"positive integer. Received: filters={reprlib.repr(filters)}"
        )
    if groups != 1:
        raise ValueError(
            f"{type(layer).__name__}: only groups=1 is supported. Received: groups={groups!r}"
        )
    return int(filters)


def _dense_depthwise_kernel(kernel):
    """A depthwise kernel ``[..., c, m]`` as the equivalent full kernel ``[..., c, c * m]``
    (zero except input channel ``i`` to outputs ``i * m .. i * m + m - 1``), so that an
    ordinary convolution computes the depthwise one; it costs ``c`` times the arithmetic, which
    is small for the 1-D layers that use it."""
    *spatial, channels, multiplier = kernel.shape
    # The dtype of the read, not of the variable: a mixed-precision call reads it as float16.
    full = _core.expand_dims(kernel, -2)
    eye = _core.reshape(_core.eye(channels, dtype=full.dtype), [channels, channels, 1])
    full = full * eye
    return _core.reshape(full, [*spatial, channels, channels * multiplier])


def _conv1d(inputs, kernel, strides, padding, dilation_rate):
    """A 1-D convolution ``[n, steps, c] * [k, c, f] -> [n, out_steps, f]`` as the 2-D one on
    a height-1 image; ``causal`` padding is ``k - 1`` dilated steps of zeros on the left."""
    if padding == "causal":
        left = dilation_rate * (kernel.shape[0] - 1)
        inputs = _core.pad(inputs, [[0, 0], [left, 0], [0, 0]])
        padding = "valid"
    outputs = nn.conv2d(
        _core.expand_dims(inputs, 1),
        _core.expand_dims(kernel, 0),
        (1, strides),
        padding.upper(),
        dilations=(1, dilation_rate),
    )
    return _core.squeeze(outputs, [1])


class _BaseConv(_KernelLayer):
    # Keras 3's attribute for the kernel, the name checkpoints give it (ferrotape.trackable).
    _checkpoint_names = {"kernel": "_kernel"}

    _native_class = None
    # The number of spatial axes (1 for sequences, 2 for images, 3 for volumes).
    rank = 2
    # Keras lets only Conv1D pad causally.
    _allow_causal = False

    # The name Keras's config gives the kernel's settings ("depthwise" for depthwise and
    # separable convolutions, which keep their depthwise kernel as `kernel`).
    _kernel_role = "kernel"

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
        self.kernel_size = _ntuple(self, "kernel_size", kernel_size, self.rank)
        self.strides = _ntuple(self, "strides", strides, self.rank)
        self.dilation_rate = _ntuple(self, "dilation_rate", dilation_rate, self.rank)
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(
                f"{type(self).__name__}: strides > 1 are not supported together with "
                f"dilation_rate > 1 (received strides={self.strides}, "
                f"dilation_rate={self.dilation_rate})"
            )
        if self._allow_causal and str(padding).lower() == "causal":
            self.padding = "causal"
        else:
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
        _expect_rank(self, input_shape, self.rank + 2)
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
            "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            **{
                key.replace("kernel", self._kernel_role, 1): value
                for key, value in _weight_settings(self, "kernel", "bias").items()
            },
            "activity_regularizer": object_registration.serialize_keras_object(
                self.activity_regularizer
            ),
        }

    def _finish(self, outputs):
        """``activation(outputs + bias)``, for the convolutions computed with ops."""
        if self.bias is not None:
            outputs = nn.bias_add(outputs, self.bias)
        return self.activation(outputs)
