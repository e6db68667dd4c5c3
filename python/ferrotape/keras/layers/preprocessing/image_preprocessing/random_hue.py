"""``RandomHue`` (Keras 3's ``keras.src.layers.preprocessing.image_preprocessing.random_hue``).

>>> import ferrotape as ft
>>> ft.keras.layers.RandomHue(0.3, seed=1)(ft.ones([2, 4, 4, 3])).shape
TensorShape([2, 4, 4, 3])
"""

from ..... import _core
from .base_image_preprocessing_layer import (
    BaseImagePreprocessingLayer,
    base_factor,
    transform_value_range,
)
from .color import map_hsv


class RandomHue(BaseImagePreprocessingLayer):
    """In training, rotates each image's hue by ``d`` of a full turn, ``d = ±u / 2`` with
    ``u`` drawn per image from ``factor``'s range and the sign at random (so ``factor=1``
    shifts by up to half a turn either way). The result is clipped to ``value_range``.

    Args:
        factor: A number ``f`` in ``[0, 1]`` (``u`` in ``[0, f]``) or a pair.
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.
        seed: An int (reproducible draws) or None.

    Input shape: ``[batch, height, width, 3]`` or a single image. Output shape: the same.
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = base_factor(self, factor, 0.0, 1.0)
        self.value_range = tuple(value_range)

    def get_random_transformation(self, images):
        n = images.shape[0]
        sign = _core.select(self.uniform([n]) > 0.5, -_core.ones([n]), _core.ones([n]))
        return sign * self.uniform([n], *self.factor) * 0.5

    def transform_images(self, images, delta):
        delta = _core.reshape(_core.cast(delta, images.dtype), [-1, 1, 1])

        def turn(h, s, v):
            h = h + delta
            h = _core.select(h > 1.0, h - 1.0, h)
            return _core.select(h < 0.0, h + 1.0, h), s, v

        images = transform_value_range(images, self.value_range, (0, 1))
        images = _core.clip_by_value(map_hsv(images, turn), 0.0, 1.0)
        return transform_value_range(images, (0, 1), self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}
