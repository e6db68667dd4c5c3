"""``RandomErasing`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_erasing``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.RandomErasing((1.0, 1.0), scale=(1.0, 1.0), fill_value=7.0)
>>> float(ft.reduce_max(layer(ft.ones([2, 4, 4, 3]))))  # the whole image, always
7.0
"""

from ..... import _core
from .... import random as keras_random
from .base_image_preprocessing_layer import BaseImagePreprocessingLayer, _is_number, base_factor
from .cut_mix import random_boxes


class RandomErasing(BaseImagePreprocessingLayer):
    """In training, erases a random box of each image: for each image a probability ``p``
    is drawn from ``factor``'s range and the image is erased with probability ``p``. The box
    is ``sqrt(s) * size`` long on each axis (an ``s`` per axis, uniform in ``scale``), at a
    uniform position; it is filled with ``fill_value`` (a number or one per channel), or,
    when None, with Gaussian noise times ``value_range[1]``; fills are clipped to
    ``value_range``.

    Args:
        factor: A number ``f`` in ``[0, 1]`` (``p`` in ``[0, f]``; default 1.0) or a pair.
        scale: The range of the box's area fraction per axis, within ``[0, 1]`` (default
            ``(0.02, 0.33)``).
        fill_value: None (noise), a number, or a list of one number per channel.
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).
        seed: An int (reproducible draws) or None.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.

    Input shape: ``[batch, height, width, channels]`` or a single image. Output shape: the
    same.
    """

    def __init__(
        self,
        factor=1.0,
        scale=(0.02, 0.33),
        fill_value=None,
        value_range=(0, 255),
        seed=None,
        data_format=None,
        **kwargs,
    ):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = base_factor(self, factor, 0.0, 1.0)
        self.scale = base_factor(self, scale, 0.0, 1.0, name="scale")
        fills = fill_value if isinstance(fill_value, (tuple, list)) else [fill_value]
        if fill_value is not None and not all(_is_number(v) for v in fills):
            raise ValueError(
                "The `fill_value` argument should be a number (or a list of three numbers). "
                f"Received: fill_value={fill_value!r}"
            )
        self.fill_value = fill_value
        self.value_range = tuple(value_range)

    def get_random_transformation(self, images):
        n, h, w, _ = images.shape
        dtype = self.compute_dtype
        ratio = _core.sqrt(self.uniform([n, 2], *self.scale, dtype=dtype))
        mask, _ = random_boxes(self, h, w, ratio[:, 0], ratio[:, 1])
        apply = self.happens(n, self.uniform([n], *self.factor))
        if self.fill_value is None:
            fill = keras_random.normal(images.shape, dtype=dtype, seed=self.generator)
            fill = fill * self.value_range[1]
        else:
            fill = _core.constant(self.fill_value, dtype=dtype)
        return mask & apply, _core.clip_by_value(fill, *self.value_range)

    def transform_images(self, images, transformation):
        mask, fill = transformation
        return _core.select(mask, _core.cast(fill, images.dtype), images)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "scale": self.scale,
            "fill_value": self.fill_value,
            "value_range": self.value_range,
        }
