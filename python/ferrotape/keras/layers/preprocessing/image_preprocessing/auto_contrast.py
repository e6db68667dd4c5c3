"""``AutoContrast`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.auto_contrast``).

>>> import ferrotape as ft
>>> x = ft.constant([[[50.0], [100.0], [150.0]]])
>>> ft.keras.layers.AutoContrast()(x)[0, :, 0].numpy().tolist()
[0.0, 127.5, 255.0]
"""

from ..... import _core
from .base_image_preprocessing_layer import (
    BaseImagePreprocessingLayer,
    transform_value_range,
    value_range_pair,
)


class AutoContrast(BaseImagePreprocessingLayer):
    """Stretches each channel of each image so that its smallest value becomes the bottom of
    ``value_range`` and its largest the top; a constant channel is left as it is. Unlike the
    random layers this runs whether or not the call trains (as Keras's does).

    Args:
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).

    Input shape: ``[batch, height, width, channels]`` or a single image. Output shape: the
    same.
    """

    _TRAINING_ONLY = False

    def __init__(self, value_range=(0, 255), **kwargs):
        super().__init__(**kwargs)
        self.value_range = value_range_pair(self, value_range)

    def transform_images(self, images, transformation):
        original = images
        images = transform_value_range(images, self.value_range, (0, 255))
        low = _core.reduce_min(images, [1, 2], keepdims=True)
        high = _core.reduce_max(images, [1, 2], keepdims=True)
        # A constant channel gives inf * 0 = nan here, where Keras keeps the original.
        scale = 255.0 / (high - low)
        images = images * scale - low * scale
        undefined = _core.is_nan(images)
        images = _core.clip_by_value(images, 0.0, 255.0)
        images = transform_value_range(images, (0, 255), self.value_range)
        return _core.select(undefined, original, images)

    def get_config(self):
        return {**super().get_config(), "value_range": self.value_range}
