"""``SpatialDropout1D``, ``SpatialDropout2D`` and ``SpatialDropout3D`` (Keras 3's
``keras.src.layers.regularization.spatial_dropout``): dropout of whole channels, for
convolutional features whose neighbouring values are correlated.

>>> import ferrotape as ft
>>> y = ft.keras.layers.SpatialDropout1D(0.5, seed=1)(ft.ones([2, 3, 4]), training=True)
>>> sorted(set(y.numpy().ravel().tolist()))
[0.0, 2.0]
"""

from ..layer_helpers import _channels_last, _expect_rank
from .dropout import Dropout


class _SpatialDropout(Dropout):
    _rank = None

    def __init__(self, rate, seed=None, name=None, dtype=None):
        super().__init__(rate, seed=seed, name=name, dtype=dtype)

    def call(self, inputs, training=False):
        _expect_rank(self, inputs.shape, self._rank)
        if training and self.rate >= 1.0:
            return inputs * 0.0
        # One keep-or-drop draw per sample and channel, shared by every position.
        shape = (inputs.shape[0],) + (1,) * (self._rank - 2) + (inputs.shape[-1],)
        return self._native(inputs, training=bool(training), rate=self.rate, noise_shape=shape)

    def get_config(self):
        # Keras's: the constructor's arguments only (no noise_shape, no trainable).
        base = super().get_config()
        return {key: base[key] for key in ("rate", "seed", "name", "dtype")}


class SpatialDropout1D(_SpatialDropout):
    """Drops whole channels of ``[batch, steps, channels]`` sequences in training (a fraction
    ``rate``, the rest scaled by ``1 / (1 - rate)``); the identity otherwise."""

    _rank = 3


class SpatialDropout2D(_SpatialDropout):
    """Drops whole channels of NHWC images in training (a fraction ``rate``, the rest scaled
    by ``1 / (1 - rate)``); the identity otherwise."""

    _rank = 4

    def __init__(self, rate, data_format=None, seed=None, name=None, dtype=None):
        super().__init__(rate, seed=seed, name=name, dtype=dtype)
        _channels_last(self, data_format)
        self.data_format = "channels_last"

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


class SpatialDropout3D(SpatialDropout2D):
    """Drops whole channels of ``[batch, depth, height, width, channels]`` volumes in
    training; the identity otherwise."""

    _rank = 5
