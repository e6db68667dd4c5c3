"""``RandomColorJitter`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_color_jitter``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.RandomColorJitter(brightness_factor=0.2, hue_factor=0.1, seed=1)
>>> layer(ft.ones([2, 4, 4, 3])).shape
TensorShape([2, 4, 4, 3])
"""

from ..... import _core
from .base_image_preprocessing_layer import BaseImagePreprocessingLayer
from .random_brightness import RandomBrightness
from .random_contrast import RandomContrast
from .random_hue import RandomHue
from .random_saturation import RandomSaturation


class RandomColorJitter(BaseImagePreprocessingLayer):
    """In training, applies in turn ``RandomBrightness``, ``RandomContrast``,
    ``RandomSaturation`` and ``RandomHue`` (each only if its factor is given), each drawing
    its own value per image.

    Args:
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).
        brightness_factor: ``RandomBrightness``'s ``factor``, or None to skip it.
        contrast_factor: ``RandomContrast``'s ``factor``, or None.
        saturation_factor: ``RandomSaturation``'s ``factor``, or None.
        hue_factor: ``RandomHue``'s ``factor``, or None.
        seed: An int (reproducible draws) or None.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.

    Input shape: ``[batch, height, width, 3]`` or a single image. Output shape: the same.
    """

    def __init__(
        self,
        value_range=(0, 255),
        brightness_factor=None,
        contrast_factor=None,
        saturation_factor=None,
        hue_factor=None,
        seed=None,
        data_format=None,
        **kwargs,
    ):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.value_range = tuple(value_range)
        self.brightness_factor = brightness_factor
        self.contrast_factor = contrast_factor
        self.saturation_factor = saturation_factor
        self.hue_factor = hue_factor
        common = {"value_range": value_range, "seed": seed, "dtype": self.compute_dtype}
        self._steps = [
            kind(factor, **common)
            for kind, factor in (
                (RandomBrightness, brightness_factor),
                (RandomContrast, contrast_factor),
                (RandomSaturation, saturation_factor),
                (RandomHue, hue_factor),
            )
            if factor is not None
        ]

    def transform_images(self, images, transformation):
        for step in self._steps:
            images = _core.cast(step(images, training=True), images.dtype)
        return images

    def get_config(self):
        return {
            **super().get_config(),
            "value_range": self.value_range,
            "brightness_factor": self.brightness_factor,
            "contrast_factor": self.contrast_factor,
            "saturation_factor": self.saturation_factor,
            "hue_factor": self.hue_factor,
        }
