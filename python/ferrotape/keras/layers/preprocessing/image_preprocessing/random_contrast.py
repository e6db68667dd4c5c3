"""``RandomContrast`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_contrast``).

>>> import ferrotape as ft
>>> x = ft.constant([[[[0.0], [100.0]], [[50.0], [250.0]]]])
>>> ft.keras.layers.RandomContrast(0.5)(x, training=False)[0, :, :, 0].numpy().tolist()
[[0.0, 100.0], [50.0, 250.0]]
"""

import numbers

from ..... import _core
from .... import random as keras_random
from ...layer import Layer
from .resizing import _batched


def _contrast_bounds(factor):
    """Keras 3's ``factor`` -> ``(lower, upper)``: the contrast factor is drawn from
    ``[1 - lower, 1 + upper]``. A single number ``f`` gives ``(0, f)`` (Keras 3 clips its
    ``-f`` to the bound 0), a pair is sorted; every number must lie in ``[0, 1]``."""
    message = (
        "The `factor` argument should be a number (or a list of two numbers) in the range "
        f"[0, 1]. Received: factor={factor}"
    )
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > 1 or factor[1] < 0:
            raise ValueError(message)
        lower, upper = sorted(factor)
        return float(lower), float(upper)
    if isinstance(factor, numbers.Real) and not isinstance(factor, bool) and 0 <= factor <= 1:
        return 0.0, float(factor)
    raise ValueError(message)


class RandomContrast(Layer):
    """In training, scales each image's contrast by a factor drawn per image from
    ``[1 - lower, 1 + upper]``: every pixel ``x`` of a channel becomes
    ``(x - mean) * factor + mean`` (``mean``: that channel's mean over the image), clipped to
    ``value_range``. Images are ``[height, width, channels]`` or a batch of them; the output
    is in the layer's float dtype. Like Keras's, the call trains unless told
    ``training=False`` (then only the dtype changes)."""

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(**kwargs)
        self.factor = _contrast_bounds(factor)
        if len(value_range) != 2:
            raise ValueError(
                "RandomContrast: value_range must be a pair (low, high). "
                f"Received: value_range={value_range}"
            )
        self.value_range = tuple(value_range)
        self.seed = seed
        self.seed_generator = keras_random.SeedGenerator(seed)

    def call(self, inputs, training=True):
        images, single = _batched(self, inputs)
        images = _core.cast(images, self.compute_dtype)
        if training:
            factor = keras_random.uniform(
                [images.shape[0], 1, 1, 1],
                minval=1.0 - self.factor[0],
                maxval=1.0 + self.factor[1],
                dtype=self.compute_dtype,
                seed=self.seed_generator,
            )
            mean = _core.reduce_mean(images, [1, 2], keepdims=True)
            images = _core.clip_by_value(
                (images - mean) * factor + mean, self.value_range[0], self.value_range[1]
            )
        return images[0] if single else images

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "value_range": self.value_range,
            "seed": self.seed,
        }
