"""``MixUp`` (Keras 3's ``keras.src.layers.preprocessing.image_preprocessing.mix_up``).

>>> import ferrotape as ft
>>> data = {"images": ft.ones([4, 8, 8, 3]), "labels": ft.one_hot([0, 1, 2, 0], 3)}
>>> mixed = ft.keras.layers.MixUp(seed=1)(data)
>>> mixed["images"].shape, mixed["labels"].shape
(TensorShape([4, 8, 8, 3]), TensorShape([4, 3]))
"""

from ..... import _core
from .... import random as keras_random
from .base_image_preprocessing_layer import BaseImagePreprocessingLayer, _is_number


class MixUp(BaseImagePreprocessingLayer):
    """In training, blends each image with another image of the batch (a random permutation
    pairs them): ``w * x_i + (1 - w) * x_j``, ``w`` drawn per image from Beta(``alpha``,
    ``alpha``). Given a dict ``{"images": ..., "labels": ...}``, the labels are blended with
    the same weights and partners.

    Args:
        alpha: The Beta distribution's parameter, positive (default 0.2: most weights near 0
            or 1).
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.
        seed: An int (reproducible draws) or None.

    Input shape: ``[batch, height, width, channels]`` (a single image mixes with itself), or a
    dict of those images and ``[batch, ...]`` labels. Output: the same structure and shapes.
    """

    def __init__(self, alpha=0.2, data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if not _is_number(alpha) or alpha <= 0:
            raise ValueError(f"MixUp: alpha must be a positive number. Received: alpha={alpha!r}")
        self.alpha = float(alpha)

    def get_random_transformation(self, images):
        n = images.shape[0]
        order = keras_random.shuffle(_core.range(n), seed=self.generator)
        weight = keras_random.beta([n], self.alpha, self.alpha, seed=self.generator)
        return order, weight

    def transform_images(self, images, transformation):
        order, weight = transformation
        weight = _core.reshape(_core.cast(weight, images.dtype), [-1, 1, 1, 1])
        return weight * images + (1.0 - weight) * _core.gather(images, order)

    def transform_labels(self, labels, transformation):
        order, weight = transformation
        labels = _core.cast(labels, "float32") if labels.dtype.is_integer else labels
        weight = _core.reshape(_core.cast(weight, labels.dtype), [-1] + [1] * (labels.ndim - 1))
        return weight * labels + (1.0 - weight) * _core.gather(labels, order)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}
