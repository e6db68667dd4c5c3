"""``RandAugment`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.rand_augment``).

>>> import ferrotape as ft
>>> ft.keras.layers.RandAugment(seed=1)(ft.ones([2, 8, 8, 3]) * 100.0).shape
TensorShape([2, 8, 8, 3])
"""

from .... import random as keras_random
from .auto_contrast import AutoContrast
from .base_image_preprocessing_layer import BaseImagePreprocessingLayer, base_factor
from .equalization import Equalization
from .random_brightness import RandomBrightness
from .random_color_degeneration import RandomColorDegeneration
from .random_contrast import RandomContrast
from .random_posterization import RandomPosterization
from .random_rotation import RandomRotation
from .random_sharpness import RandomSharpness
from .random_shear import RandomShear
from .random_translation import RandomTranslation
from .solarization import Solarization


class RandAugment(BaseImagePreprocessingLayer):
    """In training, applies ``num_ops`` augmentations in turn, each picked at random (the same
    for the whole batch) among shear, translation, rotation, brightness, colour degeneration,
    contrast, sharpness, posterization, solarization, auto-contrast and equalization, all of
    strength ``factor``. As in Keras, each augmentation draws its parameters once per call
    (picked twice, it repeats them).

    Args:
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).
        num_ops: How many augmentations to apply (default 2).
        factor: A number ``f`` in ``[0, 1]`` (the strength range ``(0, f)``; default 0.5) or
            a pair.
        interpolation: ``"bilinear"`` (the default) or ``"nearest"``, for the geometric ones.
        seed: An int (reproducible draws) or None.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.

    Input shape: ``[batch, height, width, 3]`` or a single image. Output shape: the same.
    """

    def __init__(
        self,
        value_range=(0, 255),
        num_ops=2,
        factor=0.5,
        interpolation="bilinear",
        seed=None,
        data_format=None,
        **kwargs,
    ):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if isinstance(num_ops, bool) or not isinstance(num_ops, int) or num_ops < 0:
            raise ValueError(f"RandAugment: num_ops must be an int >= 0. Received: {num_ops!r}")
        self.value_range = tuple(value_range)
        self.num_ops = num_ops
        self.factor = base_factor(self, factor, 0.0, 1.0)
        self.interpolation = interpolation
        common = {"seed": seed, "dtype": self.compute_dtype}
        ranged = {"value_range": value_range, **common}
        f = self.factor
        self._augmentations = [
            RandomShear(f, f, interpolation=interpolation, **common),
            RandomTranslation(f, f, interpolation=interpolation, **common),
            RandomRotation(f, interpolation=interpolation, **common),
            RandomBrightness(f, **ranged),
            RandomColorDegeneration(f, **ranged),
            RandomContrast(f, **ranged),
            RandomSharpness(f, **ranged),
            RandomPosterization(max(1, int(8 * f[1])), **ranged),
            Solarization(f, f, **ranged),
            AutoContrast(value_range, dtype=self.compute_dtype),
            Equalization(value_range, dtype=self.compute_dtype),
        ]

    def get_random_transformation(self, images):
        count = len(self._augmentations)
        picks = keras_random.randint([self.num_ops], 0, count, seed=self.generator)
        return [int(i) for i in picks.numpy()]

    def transform_images(self, images, picks):
        drawn = {}
        for i in picks:
            layer = self._augmentations[i]
            if not isinstance(layer, BaseImagePreprocessingLayer):  # RandomContrast
                images = layer(images, training=True)
                continue
            if i not in drawn:
                drawn[i] = layer.get_random_transformation(images)
            images = layer.transform_images(images, drawn[i])
        return images

    def get_config(self):
        return {
            **super().get_config(),
            "value_range": self.value_range,
            "num_ops": self.num_ops,
            "factor": self.factor,
            "interpolation": self.interpolation,
        }
