"""``GaussianDropout`` (Keras 3's ``keras.src.layers.regularization.gaussian_dropout``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.GaussianDropout(0.2, seed=0)
>>> layer(ft.ones([2, 3]), training=True).shape
TensorShape([2, 3])
"""

import math

from ... import random as keras_random
from ..layer import Layer
from .gaussian_noise import _rate


class GaussianDropout(Layer):
    """Multiplies the inputs by normal noise of mean 1 and standard deviation
    ``sqrt(rate / (1 - rate))`` in training (dropout's variance without zeros); the identity
    otherwise."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = _rate(self, rate)
        self.seed = seed
        self.seed_generator = keras_random.SeedGenerator(seed)

    def call(self, inputs, training=False):
        if not training or not 0 < self.rate < 1:
            return inputs
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        noise = keras_random.normal(
            inputs.shape, mean=1.0, stddev=stddev, dtype=inputs.dtype, seed=self.seed_generator
        )
        return inputs * noise

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}
