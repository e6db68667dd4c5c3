"""``GaussianNoise`` (Keras 3's ``keras.src.layers.regularization.gaussian_noise``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.GaussianNoise(0.1, seed=0)
>>> bool(ft.reduce_all(layer(ft.ones([2, 3])) == 1.0))
True
"""

from ... import random as keras_random
from ..layer import Layer
from ..layer_helpers import _float_arg


def _rate(layer, rate):
    rate = _float_arg(type(layer).__name__, "rate", rate)
    if not 0.0 <= rate <= 1.0:
        raise ValueError(
            f"Invalid value received for argument `rate`. Expected a float value between 0 "
            f"and 1. Received: rate={rate}"
        )
    return rate


class GaussianNoise(Layer):
    """Adds zero-mean normal noise of standard deviation ``stddev`` in training (a
    regulariser against overfitting); the identity otherwise. The noise is a constant, so the
    gradient with respect to the inputs is the identity."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.stddev = _float_arg("GaussianNoise", "stddev", stddev)
        if self.stddev < 0:
            raise ValueError(
                f"Invalid value received for argument `stddev`. Expected a non-negative "
                f"float. Received: stddev={stddev}"
            )
        self.seed = seed
        self.seed_generator = keras_random.SeedGenerator(seed)

    def call(self, inputs, training=False):
        if not training or self.stddev == 0:
            return inputs
        noise = keras_random.normal(
            inputs.shape, stddev=self.stddev, dtype=inputs.dtype, seed=self.seed_generator
        )
        return inputs + noise

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}
