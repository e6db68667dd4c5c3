"""``RandomPerspective`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_perspective``).

>>> import ferrotape as ft
>>> ft.keras.layers.RandomPerspective(seed=1)(ft.ones([2, 5, 5, 3])).shape
TensorShape([2, 5, 5, 3])
"""

from ..... import _core
from .affine import perspective_transform
from .base_image_preprocessing_layer import (
    BaseImagePreprocessingLayer,
    _is_number,
    base_factor,
    check_sampling,
)


class RandomPerspective(BaseImagePreprocessingLayer):
    """In training, warps images in perspective: for each image a probability ``p`` is drawn
    from ``factor``'s range and the image is warped with probability ``p``. The warp moves
    each corner ``c = (x, y)`` of the image to ``c + c * d``, ``d`` uniform in
    ``[-scale / 2, scale / 2]`` per coordinate (so the top-left corner stays); points from
    outside the image read ``fill_value``.

    Args:
        factor: A number ``f`` in ``[0, 1]`` (``p`` in ``[0, f]``; default 1.0) or a pair.
        scale: How far the corners move, in ``[0, 1]`` (default 1.0).
        interpolation: ``"bilinear"`` (the default) or ``"nearest"``.
        fill_value: The value outside the image.
        seed: An int (reproducible draws) or None.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.

    Input shape: ``[batch, height, width, channels]`` or a single image. Output shape: the
    same.
    """

    def __init__(
        self,
        factor=1.0,
        scale=1.0,
        interpolation="bilinear",
        fill_value=0.0,
        seed=None,
        data_format=None,
        **kwargs,
    ):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = base_factor(self, factor, 0.0, 1.0)
        if not _is_number(scale) or not 0.0 <= scale <= 1.0:
            raise ValueError(
                f"The `scale` argument should be a number in the range [0,1]. Received: "
                f"scale={scale!r}"
            )
        check_sampling(self, None, interpolation)
        self.scale = float(scale)
        self.interpolation = interpolation
        self.fill_value = float(fill_value)

    def get_random_transformation(self, images):
        n, h, w, _ = images.shape
        apply = self.happens(n, self.uniform([n], *self.factor))
        shift = self.uniform([n, 4, 2], -0.5 * self.scale, 0.5 * self.scale, self.compute_dtype)
        corners = [[0.0, 0.0], [w - 1.0, 0.0], [0.0, h - 1.0], [w - 1.0, h - 1.0]]
        start = _core.tile(_core.constant([corners], dtype=self.compute_dtype), [n, 1, 1])
        return apply, start, start + start * shift

    def transform_images(self, images, transformation):
        apply, start, end = transformation
        warped = perspective_transform(images, start, end, self.interpolation, self.fill_value)
        return _core.select(apply, warped, images)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "scale": self.scale,
            "interpolation": self.interpolation,
            "fill_value": self.fill_value,
        }
