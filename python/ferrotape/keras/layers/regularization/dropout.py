"""``Dropout`` (Keras 3's ``keras.src.layers.regularization.dropout``)."""

import numpy as np

from .... import _core
from .... import random as ft_random
from ..layer import Layer


class Dropout(Layer):
    """Sets a fraction ``rate`` of the inputs to 0 in training and scales the rest by
    ``1 / (1 - rate)``; the identity otherwise. With ``seed`` the mask stream is reproducible;
    without, it is drawn from ``ft.random``'s global seed at build time."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rate, (int, float, np.number)) or not 0 <= rate <= 1:
            raise ValueError(
                f"Invalid value received for argument `rate`. Expected a float value between "
                f"0 and 1. Received: rate={rate}"
            )
        self.rate = float(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed

    def build(self, input_shape):
        del input_shape
        if self.seed is not None:
            self._stream_seed = int(self.seed)
        else:
            # Read as a host value: a layer built inside ft.function's first trace picks its
            # stream once, as a build does (the draw is not a decision a replay must repeat).
            seed = ft_random.uniform([], maxval=2**31 - 1, dtype="int32")
            self._stream_seed = int(_core.host_value(seed))
        self._make_native()

    def _make_native(self):
        # A copy draws its masks from the start of the same seeded stream.
        self._native = _core.keras.NativeLayer("Dropout", {}, self._stream_seed)

    def call(self, inputs, training=False):
        # A rate of 1 drops everything: the native scale 1 / (1 - rate) would divide by zero.
        if training and self.rate >= 1.0:
            return inputs * 0.0
        return self._native(
            inputs, training=bool(training), rate=self.rate, noise_shape=self.noise_shape
        )

    def get_config(self):
        return {
            **super().get_config(),
            "rate": self.rate,
            "noise_shape": self.noise_shape,
            "seed": self.seed,
        }
