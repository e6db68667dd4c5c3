"""``RandomPosterization`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_posterization``).

>>> import ferrotape as ft
>>> x = ft.constant([[[37.0], [200.9]]])
>>> ft.keras.layers.RandomPosterization((2, 2))(x)[0, :, 0].numpy().tolist()  # 2 bits kept
[0.0, 192.0]
"""

from ..... import _core
from .... import random as keras_random
from .base_image_preprocessing_layer import (
    BaseImagePreprocessingLayer,
    base_factor,
    transform_value_range,
    value_range_pair,
)


class RandomPosterization(BaseImagePreprocessingLayer):
    """In training, keeps only the ``b`` highest bits of each pixel's 8-bit value (on the
    0-255 scale, after truncating to an integer), ``b`` drawn per image as an integer in
    ``[lower, upper)`` of ``factor``'s range (``lower`` itself when the two are equal).

    Args:
        factor: A number ``f`` in ``[1, 8]`` (the range ``(1, f)``) or a pair.
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.
        seed: An int (reproducible draws) or None.

    Input shape: ``[batch, height, width, channels]`` or a single image. Output shape: the
    same.
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = base_factor(self, factor, 1.0, 8.0)
        self.value_range = value_range_pair(self, value_range)

    def get_random_transformation(self, images):
        n = images.shape[0]
        low, high = int(self.factor[0]), int(self.factor[1])
        if low == high:
            bits = _core.ones([n]) * float(low)
        else:
            bits = _core.cast(keras_random.randint([n], low, high, seed=self.generator), "float32")
        return 8.0 - bits

    def transform_images(self, images, shift):
        step = _core.reshape(_core.cast(_core.pow(2.0, shift), images.dtype), [-1, 1, 1, 1])
        images = transform_value_range(images, self.value_range, (0, 255))
        whole = _core.cast(_core.cast(images, "int32"), images.dtype)  # Keras's cast to uint8
        images = _core.floor(whole / step) * step
        return transform_value_range(images, (0, 255), self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}
