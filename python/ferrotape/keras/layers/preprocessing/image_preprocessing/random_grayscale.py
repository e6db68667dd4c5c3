"""``RandomGrayscale`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_grayscale``).

>>> import ferrotape as ft
>>> x = ft.constant([[[100.0, 50.0, 0.0]]])
>>> ft.keras.layers.RandomGrayscale(1.0)(x).numpy().astype(float).round(2).tolist()  # always
[[[59.24, 59.24, 59.24]]]
"""

from ..... import _core
from .base_image_preprocessing_layer import BaseImagePreprocessingLayer, _is_number
from .color import grayscale


class RandomGrayscale(BaseImagePreprocessingLayer):
    """In training, turns each image grey with probability ``factor``: every channel becomes
    the luma ``0.2989 R + 0.5870 G + 0.1140 B`` (the shape is kept).

    Args:
        factor: The probability, in ``[0, 1]`` (default 0.5).
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.
        seed: An int (reproducible draws) or None.

    Input shape: ``[batch, height, width, 3]`` (or 1 channel) or a single image.
    Output shape: the same.
    """

    def __init__(self, factor=0.5, data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if not _is_number(factor) or not 0 <= factor <= 1:
            raise ValueError(f"`factor` should be between 0 and 1. Received: factor={factor!r}")
        self.factor = float(factor)

    def get_random_transformation(self, images):
        return self.happens(images.shape[0], self.factor)

    def transform_images(self, images, apply):
        return _core.select(apply, grayscale(images), images)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}
