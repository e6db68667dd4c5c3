"""``Solarization`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.solarization``).

>>> import ferrotape as ft
>>> x = ft.constant([[[10.0], [200.0]]])
>>> ft.keras.layers.Solarization()(x)[0, :, 0].numpy().tolist()  # threshold 0: all invert
[245.0, 55.0]
"""

from ..... import _core
from .base_image_preprocessing_layer import (
    BaseImagePreprocessingLayer,
    factor_pair,
    transform_value_range,
    value_range_pair,
)


class Solarization(BaseImagePreprocessingLayer):
    """In training, solarizes images: on the 0-255 scale each pixel ``x`` becomes
    ``y = clip(x + addition, 0, 255)``, then ``255 - y`` where ``y`` is at least the threshold.
    ``addition`` and the threshold are drawn per image, uniform in ``[lower, 255 * upper]`` of
    ``addition_factor`` and ``threshold_factor`` (Keras scales only the upper end).

    Args:
        addition_factor: A number ``f`` in ``[0, 1]`` (the range ``(0, f)``) or a pair.
        threshold_factor: The same for the threshold.
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).
        seed: An int (reproducible draws) or None.

    Input shape: ``[batch, height, width, channels]`` or ``[height, width, channels]``.
    Output shape: the same.
    """

    def __init__(
        self, addition_factor=0.0, threshold_factor=0.0, value_range=(0, 255), seed=None, **kwargs
    ):
        super().__init__(seed=seed, **kwargs)
        self.addition_factor = factor_pair(
            self, addition_factor, "addition_factor", 0.0, 1.0, lower_bound=0.0
        )
        self.threshold_factor = factor_pair(
            self, threshold_factor, "threshold_factor", 0.0, 1.0, lower_bound=0.0
        )
        self.value_range = value_range_pair(self, value_range)

    def get_random_transformation(self, images):
        shape, dtype = [images.shape[0], 1, 1, 1], self.compute_dtype
        low, high = self.addition_factor
        additions = self.uniform(shape, low, high * 255, dtype)
        low, high = self.threshold_factor
        return additions, self.uniform(shape, low, high * 255, dtype)

    def transform_images(self, images, transformation):
        additions, thresholds = transformation
        images = transform_value_range(images, self.value_range, (0, 255))
        images = _core.clip_by_value(images + additions, 0.0, 255.0)
        images = _core.select(images < thresholds, images, 255.0 - images)
        return transform_value_range(images, (0, 255), self.value_range)

    def get_config(self):
        return {
            **super().get_config(),
            "addition_factor": self.addition_factor,
            "threshold_factor": self.threshold_factor,
            "value_range": self.value_range,
        }
