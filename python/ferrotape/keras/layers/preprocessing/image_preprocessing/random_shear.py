"""``RandomShear`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_shear``).

>>> import ferrotape as ft
>>> ft.keras.layers.RandomShear(x_factor=0.3, seed=1)(ft.ones([2, 5, 5, 3])).shape
TensorShape([2, 5, 5, 3])
"""

from ..... import _core
from .base_image_preprocessing_layer import AffineLayer, factor_pair


class RandomShear(AffineLayer):
    """In training, shears each image: output pixel ``(x, y)`` reads the input at
    ``(x + sx * y, y + sy * x)``, with ``sx`` and ``sy`` drawn per image from the factors'
    ranges and both negated for a random half of the images (as Keras draws them). Points from
    outside the image are filled by ``fill_mode``.

    Args:
        x_factor: A number ``f`` in ``[0, 1]`` (``sx`` in ``[-f, f]``) or a pair
            ``(lower, upper)`` in ``[0, 1]``.
        y_factor: The same for ``sy``.
        interpolation: ``"bilinear"`` (the default) or ``"nearest"``.
        fill_mode: ``"reflect"`` (the default), ``"wrap"``, ``"constant"`` or ``"nearest"``.
        fill_value: The value outside the image with ``fill_mode="constant"``.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.
        seed: An int (reproducible draws) or None.

    Input shape: ``[batch, height, width, channels]`` or ``[height, width, channels]``.
    Output shape: the same.
    """

    def __init__(
        self,
        x_factor=0.0,
        y_factor=0.0,
        interpolation="bilinear",
        fill_mode="reflect",
        fill_value=0.0,
        data_format=None,
        seed=None,
        **kwargs,
    ):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.x_factor = factor_pair(self, x_factor, "x_factor", 0.0, 1.0)
        self.y_factor = factor_pair(self, y_factor, "y_factor", 0.0, 1.0)
        # The config keeps the arguments as given: Keras's stores the ranges, whose negative
        # lower ends its own constructor then rejects.
        self._factors = {"x_factor": x_factor, "y_factor": y_factor}

    def get_random_transformation(self, images):
        n = images.shape[0]
        invert = _core.select(self.uniform([n], 0.0, 1.0) > 0.5, -_core.ones([n]), _core.ones([n]))
        shear_y = self.uniform([n], *self.y_factor) * invert
        shear_x = self.uniform([n], *self.x_factor) * invert
        zeros, ones = _core.zeros([n]), _core.ones([n])
        rows = [ones, shear_x, zeros, shear_y, ones, zeros, zeros, zeros]
        return _core.stack(rows, axis=1)

    def get_config(self):
        return {**super().get_config(), **self._factors}
