"""``AlphaDropout`` (Keras 3's ``keras.src.layers.regularization.alpha_dropout``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.AlphaDropout(0.2, seed=0)
>>> layer(ft.ones([2, 3])).numpy().tolist()
[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
"""

from .... import _core
from ... import random as keras_random
from ..layer import Layer
from .gaussian_noise import _rate

# SELU's constants: dropped units are set to SELU's negative saturation value.
_ALPHA = 1.6732632423543772848170429916717
_SCALE = 1.0507009873554804934193349852946


class AlphaDropout(Layer):
    """Dropout for self-normalising (SELU) networks: in training a fraction ``rate`` of the
    inputs is set to ``-alpha * scale`` and the result affinely rescaled (``a * x + b``) so
    that the mean and variance of SELU activations are kept; the identity otherwise."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = _rate(self, rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed
        self.seed_generator = keras_random.SeedGenerator(seed)

    def call(self, inputs, training=False):
        if not training or self.rate <= 0:
            return inputs
        shape = inputs.shape.as_list()
        if self.noise_shape is not None:
            # Keras's rule: a None entry of noise_shape takes the input's size.
            shape = [s if n is None else n for n, s in zip(self.noise_shape, shape, strict=True)]
        uniform = keras_random.uniform(shape, dtype=inputs.dtype, seed=self.seed_generator)
        kept = _core.cast(uniform >= self.rate, inputs.dtype)
        alpha_p = -_ALPHA * _SCALE
        a = ((1 - self.rate) * (1 + self.rate * alpha_p**2)) ** -0.5
        b = -a * alpha_p * self.rate
        x = inputs * kept + (1.0 - kept) * alpha_p
        return x * a + b

    def get_config(self):
        return {
            **super().get_config(),
            "rate": self.rate,
            "noise_shape": self.noise_shape,
            "seed": self.seed,
        }
