"""``RandomTranslation`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_translation``).

>>> import ferrotape as ft
>>> x = ft.reshape(ft.range(4.0), [1, 4, 1])
>>> layer = ft.keras.layers.RandomTranslation(0.0, (0.5, 0.5), fill_mode="constant")
>>> layer(x)[0, :, 0].numpy().tolist()  # half the width to the right
[0.0, 0.0, 0.0, 1.0]
"""

from ..... import _core
from .base_image_preprocessing_layer import AffineLayer, factor_pair


class RandomTranslation(AffineLayer):
    """In training, shifts each image by ``dy * height`` rows down and ``dx * width`` columns
    right, ``dy`` and ``dx`` drawn per image from the factors' ranges (fractions of the
    image's size; negative moves up or left). The uncovered border is filled by
    ``fill_mode``.

    Args:
        height_factor: A number ``f`` in ``[-1, 1]`` (``dy`` in ``[-|f|, |f|]``) or a pair
            ``(lower, upper)``.
        width_factor: The same for ``dx``.
        fill_mode: ``"reflect"`` (the default), ``"wrap"``, ``"constant"`` or ``"nearest"``.
        interpolation: ``"bilinear"`` (the default) or ``"nearest"``.
        seed: An int (reproducible draws) or None.
        fill_value: The value outside the image with ``fill_mode="constant"``.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.

    Input shape: ``[batch, height, width, channels]`` or ``[height, width, channels]``.
    Output shape: the same.
    """

    def __init__(
        self,
        height_factor,
        width_factor,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        data_format=None,
        **kwargs,
    ):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor = height_factor
        self.height_lower, self.height_upper = factor_pair(
            self, height_factor, "height_factor", -1.0, 1.0
        )
        self.width_factor = width_factor
        self.width_lower, self.width_upper = factor_pair(
            self, width_factor, "width_factor", -1.0, 1.0
        )

    def get_random_transformation(self, images):
        n, h, w, _ = images.shape
        dy = self.uniform([n, 1], self.height_lower, self.height_upper) * float(h)
        dx = self.uniform([n, 1], self.width_lower, self.width_upper) * float(w)
        zeros, ones = _core.zeros([n, 1], "float32"), _core.ones([n, 1], "float32")
        return _core.concat([ones, zeros, -dx, zeros, ones, -dy, zeros, zeros], axis=1)

    def get_config(self):
        return {
            **super().get_config(),
            "height_factor": self.height_factor,
            "width_factor": self.width_factor,
        }
