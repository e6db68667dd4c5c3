"""``RandomSharpness`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_sharpness``).

>>> import ferrotape as ft
>>> ft.keras.layers.RandomSharpness(0.5, seed=1)(ft.ones([2, 4, 4, 3])).shape
TensorShape([2, 4, 4, 3])
"""

import numpy as np

from ..... import _core, nn
from .base_image_preprocessing_layer import (
    BaseImagePreprocessingLayer,
    base_factor,
    value_range_pair,
)

# Keras's smoothing kernel: the centre weighs 5/13, each of the 8 neighbours 1/13.
_SMOOTH = np.full((3, 3), 1.0 / 13.0)
_SMOOTH[1, 1] = 5.0 / 13.0


def smooth(images, kernel):
    """Each channel of NHWC ``images`` convolved with the 2-D ``kernel`` (zero padding,
    the output the input's size)."""
    channels = images.shape[-1]
    k = np.tile(kernel[:, :, None, None], (1, 1, channels, 1))
    k = _core.constant(k, dtype=images.dtype)
    return nn.depthwise_conv2d(images, k, [1, 1, 1, 1], "SAME")


class RandomSharpness(BaseImagePreprocessingLayer):
    """In training, sharpens or blurs each image: ``x + (1 - 2 u) * (smooth(x) - x)``, with
    ``u`` drawn per image from ``factor``'s range (``u = 0.5`` leaves the image, 0 blurs it,
    1 sharpens it) and ``smooth`` a 3x3 smoothing filter (zero padding at the border),
    clipped to ``value_range``.

    Args:
        factor: A number ``f`` in ``[0, 1]`` (``u`` in ``[0, f]``) or a pair.
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.
        seed: An int (reproducible draws) or None.

    Input shape: ``[batch, height, width, channels]`` or a single image. Output shape: the
    same.
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = base_factor(self, factor, 0.0, 1.0)
        self.value_range = value_range_pair(self, value_range)

    def get_random_transformation(self, images):
        return self.uniform([images.shape[0], 1, 1, 1], *self.factor)

    def transform_images(self, images, u):
        sharpness = _core.cast(u * 2.0, images.dtype)
        images = images + (1.0 - sharpness) * (smooth(images, _SMOOTH) - images)
        return _core.clip_by_value(images, *self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}
