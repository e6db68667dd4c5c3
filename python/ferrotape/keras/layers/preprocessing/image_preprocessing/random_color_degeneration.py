"""``RandomColorDegeneration`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_color_degeneration``).

>>> import ferrotape as ft
>>> x = ft.constant([[[100.0, 50.0, 0.0]]])
>>> ft.keras.layers.RandomColorDegeneration((0.5, 0.5))(x).numpy().astype(float).round(2).tolist()
[[[79.62, 54.62, 29.62]]]
"""

from ..... import _core
from .base_image_preprocessing_layer import (
    BaseImagePreprocessingLayer,
    base_factor,
    value_range_pair,
)
from .color import grayscale


class RandomColorDegeneration(BaseImagePreprocessingLayer):
    """In training, moves each image towards its grayscale version: ``x + f * (grey - x)``,
    ``f`` drawn per image from ``factor``'s range (1 is fully grey, negative values push the
    colours further), clipped to ``value_range``.

    Args:
        factor: A number ``f`` in ``[-1, 1]`` (the range ``[-|f|, |f|]``) or a pair.
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.
        seed: An int (reproducible draws) or None.

    Input shape: ``[batch, height, width, 3]`` or a single image. Output shape: the same.
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = base_factor(self, factor)
        self.value_range = value_range_pair(self, value_range)

    def get_random_transformation(self, images):
        return self.uniform([images.shape[0], 1, 1, 1], *self.factor)

    def transform_images(self, images, factor):
        factor = _core.cast(factor, images.dtype)
        images = images + factor * (grayscale(images) - images)
        return _core.clip_by_value(images, *self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}
