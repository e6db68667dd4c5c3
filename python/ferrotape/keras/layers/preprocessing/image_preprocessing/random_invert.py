"""``RandomInvert`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_invert``).

>>> import ferrotape as ft
>>> x = ft.constant([[[10.0], [200.0]]])
>>> ft.keras.layers.RandomInvert((1.0, 1.0))(x)[0, :, 0].numpy().tolist()  # always
[245.0, 55.0]
"""

from ..... import _core
from .base_image_preprocessing_layer import BaseImagePreprocessingLayer, base_factor


class RandomInvert(BaseImagePreprocessingLayer):
    """In training, inverts images (``x -> high - x``, ``high = value_range[1]``): for each
    image a probability ``p`` is drawn from ``factor``'s range, then the image is inverted
    with probability ``p`` (so the default ``factor=1.0``, ``p`` in ``[0, 1]``, inverts half
    of the images).

    Args:
        factor: A number ``f`` in ``[0, 1]`` (``p`` in ``[0, f]``) or a pair.
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).
        seed: An int (reproducible draws) or None.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.

    Input shape: ``[batch, height, width, channels]`` or ``[height, width, channels]``.
    Output shape: the same.
    """

    def __init__(self, factor=1.0, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = base_factor(self, factor, 0.0, 1.0)
        self.value_range = tuple(value_range)

    def get_random_transformation(self, images):
        n = images.shape[0]
        return self.happens(n, self.uniform([n], *self.factor))

    def transform_images(self, images, apply):
        return _core.select(apply, self.value_range[1] - images, images)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}
