"""What ``SeparableConv1D`` and ``SeparableConv2D`` share (Keras 3's
``keras.src.layers.convolutional.base_separable_conv``): a depthwise convolution (each input
channel with its own ``depth_multiplier`` filters) followed by a pointwise (size-1)
convolution to ``filters`` channels, then the bias and the activation. The weights are
``depthwise_kernel`` ``kernel_size + (channels, depth_multiplier)``, ``pointwise_kernel``
``(1,) * rank + (channels * depth_multiplier, filters)`` and ``bias`` ``(filters,)``, in
that order (Keras's).
"""

from ... import initializers, regularizers
from ..layer_helpers import _expect_rank, _is_int, _known_dim, _weight_settings
from .base_conv import _BaseConv, _check_filters_and_groups


class _BaseSeparableConv(_BaseConv):
    # Keras 3 keeps these convolutions' kernels in public attributes (ferrotape.trackable).
    _checkpoint_names = {}

    _kernel_role = "depthwise"

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        data_format=None,
        dilation_rate=(1, 1),
        depth_multiplier=1,
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        pointwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        pointwise_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        depthwise_constraint=None,
        pointwise_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        self.filters = _check_filters_and_groups(self, filters, 1)
        if not _is_int(depth_multiplier) or depth_multiplier < 1:
            raise ValueError(
                f"{type(self).__name__}: depth_multiplier must be a positive integer. "
                f"Received: depth_multiplier={depth_multiplier!r}"
            )
        self.depth_multiplier = int(depth_multiplier)
        super().__init__(
            kernel_size,
            strides,
            padding,
            data_format,
            dilation_rate,
            activation,
            use_bias,
            depthwise_initializer,
            bias_initializer,
            depthwise_regularizer,
            bias_regularizer,
            activity_regularizer,
            depthwise_constraint,
            bias_constraint,
            **kwargs,
        )
        self.depthwise_initializer = self.kernel_initializer
        self.depthwise_regularizer = self.kernel_regularizer
        self.depthwise_constraint = self.kernel_constraint
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.pointwise_constraint = pointwise_constraint

    def build(self, input_shape):
        _expect_rank(self, input_shape, self.rank + 2)
        channels = _known_dim(self, input_shape, -1, "channel dimension")
        self.depthwise_kernel = self.add_weight(
            shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer,
            regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint,
            name="depthwise_kernel",
        )
        self.pointwise_kernel = self.add_weight(
            shape=(1,) * self.rank + (channels * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer,
            regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint,
            name="pointwise_kernel",
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(self.filters,),
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
                name="bias",
            )

    def get_config(self):
        return {
            **super().get_config(),
            "filters": self.filters,
            "depth_multiplier": self.depth_multiplier,
            **_weight_settings(self, "pointwise"),
        }
