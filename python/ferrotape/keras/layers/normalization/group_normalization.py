"""``GroupNormalization`` (Keras 3's
``keras.src.layers.normalization.group_normalization``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.GroupNormalization(groups=2)
>>> layer(ft.ones([2, 5, 4])).shape
TensorShape([2, 5, 4])
>>> [w.shape.as_list() for w in layer.weights]
[[4], [4]]
"""

from .... import _core, nn
from ... import initializers, regularizers
from ..layer_helpers import _float_arg, _is_int, _known_dim
from .batch_normalization import _Normalization


class GroupNormalization(_Normalization):
    """Splits the channels (along ``axis``) into ``groups`` groups and normalises each group
    of each sample with its own mean and variance, taken over the group's channels and all
    other non-batch axes: ``(x - mean) * rsqrt(variance + epsilon) * gamma + beta`` with
    ``gamma`` and ``beta`` per channel. ``groups=-1`` is instance normalisation (one channel
    per group), ``groups=1`` layer normalisation over all axes."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(
        self,
        groups=32,
        axis=-1,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not _is_int(groups) or (groups < 1 and groups != -1):
            raise ValueError(
                f"GroupNormalization: groups must be a positive int or -1. Received: "
                f"groups={groups!r}"
            )
        if not _is_int(axis):
            raise ValueError(f"GroupNormalization: axis must be an int. Received: axis={axis!r}")
        self.groups = int(groups)
        self.axis = int(axis)
        self.epsilon = _float_arg("GroupNormalization", "epsilon", epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        self.autocast = False  # Keras 3's: inputs keep their dtype, computed in float32

    def build(self, input_shape):
        rank = len(input_shape)
        if not -rank <= self.axis < rank or self.axis % rank == 0:
            raise ValueError(
                f"GroupNormalization: axis {self.axis} must name a non-batch axis of the input "
                f"of shape {tuple(input_shape)}"
            )
        channels = _known_dim(self, input_shape, self.axis, f"axis {self.axis}")
        if self.groups == -1:
            self.groups = channels
        if channels < self.groups:
            raise ValueError(
                f"Number of groups ({self.groups}) cannot be more than the number of channels "
                f"({channels})."
            )
        if channels % self.groups != 0:
            raise ValueError(
                f"Number of groups ({self.groups}) must be a multiple of the number of channels "
                f"({channels})."
            )
        self._add_scale_and_offset((channels,))

    def call(self, inputs):
        inputs = self._in_float32(inputs)
        shape = inputs.shape.as_list()
        rank, axis = len(shape), self.axis % len(shape)
        channels = shape[axis]
        grouped = _core.reshape(
            inputs, shape[:axis] + [self.groups, channels // self.groups] + shape[axis + 1 :]
        )
        # Statistics per sample and group: over every axis but the batch and the group index.
        axes = [d for d in range(1, rank + 1) if d != axis]
        mean, variance = nn.moments(grouped, axes, keepdims=True)
        normalized = _core.reshape((grouped - mean) * _core.rsqrt(variance + self.epsilon), shape)
        per_channel = [channels if d == axis else 1 for d in range(rank)]
        # The weights in the inputs' dtype, as Keras's (the inputs are not autocast).
        if self.gamma is not None:
            gamma = _core.cast(self.gamma, normalized.dtype)
            normalized = normalized * _core.reshape(gamma, per_channel)
        if self.beta is not None:
            beta = _core.cast(self.beta, normalized.dtype)
            normalized = normalized + _core.reshape(beta, per_channel)
        return self._in_compute_dtype(normalized)

    def get_config(self):
        return {
            **super().get_config(),
            "groups": self.groups,
            "axis": self.axis,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
        }
