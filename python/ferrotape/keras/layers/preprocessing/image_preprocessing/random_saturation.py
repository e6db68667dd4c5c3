"""``RandomSaturation`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_saturation``). A factor of 0.5
leaves the image as it is:

>>> import ferrotape as ft
>>> x = ft.constant([[[200.0, 100.0, 50.0]]])
>>> ft.keras.layers.RandomSaturation((0.5, 0.5))(x).numpy().astype(float).round(2).tolist()
[[[200.0, 100.0, 50.0]]]
"""

from ..... import _core
from .base_image_preprocessing_layer import (
    BaseImagePreprocessingLayer,
    base_factor,
    value_range_pair,
)
from .color import map_hsv

_EPSILON = 1e-7  # Keras's backend.epsilon()


class RandomSaturation(BaseImagePreprocessingLayer):
    """In training, scales each image's saturation (in HSV space) by ``u / (1 - u)``, ``u``
    drawn per image from ``factor``'s range: 0.5 leaves the image as it is, 0 makes it grey,
    1 saturates it fully. The scaled saturation is clipped to ``value_range``, as Keras
    clips it.

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
        u = self.uniform([images.shape[0]], *self.factor)
        return u / (1.0 - u + _EPSILON)

    def transform_images(self, images, factor):
        factor = _core.reshape(_core.cast(factor, images.dtype), [-1, 1, 1])

        def scale(h, s, v):
            return h, _core.clip_by_value(s * factor, *self.value_range), v

        return map_hsv(images, scale)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}
