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


def make_augmentations(names, factor, value_range, interpolation, seed, dtype):
    """The augmentation layers RandAugment and AugMix pick from, by Keras's names, all of
    strength ``factor`` (a pair)."""
    common = {"seed": seed, "dtype": dtype}
    ranged = {"value_range": value_range, **common}
    makers = {
        "random_shear": lambda: RandomShear(factor, factor, interpolation=interpolation, **common),
        "random_translation": lambda: RandomTranslation(
            factor, factor, interpolation=interpolation, **common
        ),
        "random_rotation": lambda: RandomRotation(factor, interpolation=interpolation, **common),
        "random_brightness": lambda: RandomBrightness(factor, **ranged),
        "random_color_degeneration": lambda: RandomColorDegeneration(factor, **ranged),
        "random_contrast": lambda: RandomContrast(factor, **ranged),
        "random_sharpness": lambda: RandomSharpness(factor, **ranged),
        "random_posterization": lambda: RandomPosterization(max(1, int(8 * factor[1])), **ranged),
        "solarization": lambda: Solarization(factor, factor, **ranged),
        "auto_contrast": lambda: AutoContrast(value_range, dtype=dtype),
        "equalization": lambda: Equalization(value_range, dtype=dtype),
    }
    return [makers[name]() for name in names]


def apply_augmentation(layer, images, transformation):
    """``layer``'s transform with its drawn ``transformation`` (RandomContrast, which is not
    a ``BaseImagePreprocessingLayer``, draws its own)."""
    if isinstance(layer, BaseImagePreprocessingLayer):
        return layer.transform_images(images, transformation)
    return layer(images, training=True)


def draw_augmentation(layer, images):
    if isinstance(layer, BaseImagePreprocessingLayer):
        return layer.get_random_transformation(images)
    return None


_NAMES = (
    "random_shear",
    "random_translation",
    "random_rotation",
    "random_brightness",
    "random_color_degeneration",
    "random_contrast",
    "random_sharpness",
    "random_posterization",
    "solarization",
    "auto_contrast",
    "equalization",
)


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

    _COMPUTED_ON_HOST_IN_TRACES = True  # it reads its draws into Python (see the base)

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
        self._augmentations = make_augmentations(
            _NAMES, self.factor, value_range, interpolation, seed, self.compute_dtype
        )

    def get_random_transformation(self, images):
        count = len(self._augmentations)
        picks = keras_random.randint([self.num_ops], 0, count, seed=self.generator)
        return [int(i) for i in picks.numpy()]

    def transform_images(self, images, picks):
        drawn = {}
        for i in picks:
            layer = self._augmentations[i]
            if i not in drawn:
                drawn[i] = draw_augmentation(layer, images)
            images = apply_augmentation(layer, images, drawn[i])
        return images

    def get_config(self):
        return {
            **super().get_config(),
            "value_range": self.value_range,
            "num_ops": self.num_ops,
            "factor": self.factor,
            "interpolation": self.interpolation,
        }
