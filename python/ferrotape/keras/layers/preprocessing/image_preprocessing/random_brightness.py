"""``RandomBrightness`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_brightness``).

>>> import ferrotape as ft
>>> x = ft.constant([[[10.0], [200.0]]])
>>> ft.keras.layers.RandomBrightness((0.2, 0.2))(x)[0, :, 0].numpy().tolist()
[61.0, 251.0]
"""

from ..... import _core
from .base_image_preprocessing_layer import (
    BaseImagePreprocessingLayer,
    base_factor,
    value_range_pair,
)


class RandomBrightness(BaseImagePreprocessingLayer):
    """In training, adds ``delta * (high - low)`` to every pixel of an image, ``delta`` drawn
    per image from ``factor``'s range, and clips to ``value_range = (low, high)``.

    Args:
        factor: A number ``f`` in ``[-1, 1]`` (``delta`` in ``[-|f|, |f|]``) or a pair
            ``(lower, upper)``.
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).
        seed: An int (reproducible draws) or None.

    Input shape: ``[batch, height, width, channels]`` or ``[height, width, channels]``.
    Output shape: the same.
    """

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.factor = base_factor(self, factor)
        self.value_range = value_range_pair(self, value_range)

    def get_random_transformation(self, images):
        low, high = self.value_range
        return self.uniform([images.shape[0], 1, 1, 1], *self.factor) * (high - low)

    def transform_images(self, images, delta):
        images = images + _core.cast(delta, images.dtype)
        return _core.clip_by_value(images, *self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}
