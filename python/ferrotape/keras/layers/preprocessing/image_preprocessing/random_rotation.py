"""``RandomRotation`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_rotation``).

>>> import ferrotape as ft
>>> x = ft.reshape(ft.range(9.0), [3, 3, 1])
>>> turned = ft.keras.layers.RandomRotation((0.25, 0.25))(x)  # a quarter turn, every time
>>> ft.round(turned[:, :, 0]).numpy().tolist()  # float32's cos(90 degrees) is not quite 0
[[2.0, 5.0, 8.0], [1.0, 4.0, 7.0], [0.0, 3.0, 6.0]]
"""

from .affine import compute_affine_matrix
from .base_image_preprocessing_layer import AffineLayer, base_factor


class RandomRotation(AffineLayer):
    """In training, rotates each image about its centre by an angle drawn per image from
    ``[lower, upper]`` turns (``factor=0.1``: up to a tenth of a full turn either way; a
    positive angle turns the picture counter-clockwise as displayed). Points that come from outside
    the image are filled by ``fill_mode``.

    Args:
        factor: A number ``f`` in ``[-1, 1]`` (angles in ``[-|f|, |f|]`` of a turn) or a pair
            ``(lower, upper)``.
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
        factor,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        data_format=None,
        **kwargs,
    ):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        # Keras checks only that the pair overlaps [-1, 1] (its base layer's rule).
        self.factor = base_factor(self, factor)

    def get_random_transformation(self, images):
        n, h, w, _ = images.shape
        angle = self.uniform([n], self.factor[0] * 360.0, self.factor[1] * 360.0)
        zeros, ones = [0.0] * n, [1.0] * n
        return compute_affine_matrix(0.5, 0.5, angle, zeros, zeros, ones, zeros, zeros, h, w)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}
