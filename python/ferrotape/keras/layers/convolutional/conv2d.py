"""``Conv2D`` (Keras 3's ``keras.src.layers.convolutional.conv2d``)."""

from .base_conv import _BaseConv, _check_filters_and_groups


class Conv2D(_BaseConv):
    """2-D convolution over NHWC images: ``activation(conv2d(inputs, kernel) + bias)`` with an
    HWIO kernel ``kernel_size + (input channels, filters)``."""

    _native_class = "Conv2D"

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        data_format=None,
        dilation_rate=(1, 1),
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

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "groups": self.groups}


Convolution2D = Conv2D
