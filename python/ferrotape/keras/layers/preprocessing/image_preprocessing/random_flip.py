"""``RandomFlip`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_flip``).

>>> import ferrotape as ft
>>> x = ft.reshape(ft.range(4.0), [1, 1, 4, 1])
>>> ft.keras.layers.RandomFlip("horizontal")(x, training=False)[0, 0, :, 0].numpy().tolist()
[0.0, 1.0, 2.0, 3.0]
"""

from ..... import _core
from .... import random as keras_random
from ...layer import Layer
from ...layer_helpers import _channels_last
from .resizing import _batched

_MODES = ("horizontal", "vertical", "horizontal_and_vertical")


class RandomFlip(Layer):
    """In training, flips each image with probability 1/2: left-right (``horizontal``),
    upside down (``vertical``), or both at once (``horizontal_and_vertical``, Keras's
    default: one draw per image decides both). Like Keras's, the call trains unless told
    ``training=False`` (then it is the identity); ``fit`` and ``predict`` say which."""

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if mode not in _MODES:
            raise ValueError(
                f"RandomFlip layer {self.name} received an unknown mode argument {mode}"
            )
        _channels_last(self, data_format)
        self.mode = mode
        self.seed = seed
        self.seed_generator = keras_random.SeedGenerator(seed)
        self.data_format = "channels_last"

    def call(self, inputs, training=True):
        images, single = _batched(self, inputs)
        images = _core.cast(images, self.compute_dtype)
        if not training:
            return images[0] if single else images
        draws = keras_random.uniform([images.shape[0], 1, 1, 1], seed=self.seed_generator)
        flip = draws <= 0.5
        flipped = images
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            flipped = flipped[:, :, ::-1]
        if self.mode in ("vertical", "horizontal_and_vertical"):
            flipped = flipped[:, ::-1]
        out = _core.select(flip, flipped, images)
        return out[0] if single else out

    def get_config(self):
        return {
            **super().get_config(),
            "data_format": self.data_format,
            "seed": self.seed,
            "mode": self.mode,
        }
