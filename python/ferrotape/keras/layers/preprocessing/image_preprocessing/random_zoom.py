"""``RandomZoom`` (Keras 3's ``keras.src.layers.preprocessing.image_preprocessing.random_zoom``).

>>> import ferrotape as ft
>>> x = ft.reshape(ft.range(16.0), [4, 4, 1])
>>> layer = ft.keras.layers.RandomZoom((-0.5, -0.5), fill_mode="constant")  # 2x in, always
>>> layer(x)[:, :, 0].numpy().tolist()[1]
[5.75, 6.25, 6.75, 7.25]
"""

from ..... import _core
from .base_image_preprocessing_layer import AffineLayer, factor_pair


class RandomZoom(AffineLayer):
    """In training, zooms each image about its centre: the output samples a window
    ``1 + dh`` times the image's height and ``1 + dw`` times its width, with ``dh`` drawn per
    image from ``height_factor``'s range and ``dw`` from ``width_factor``'s (without
    ``width_factor``, ``dw = dh``: the aspect ratio is kept). A negative factor zooms in (a
    smaller window, enlarged), a positive one zooms out, filling the border by ``fill_mode``.

    Args:
        height_factor: A number ``f`` in ``(-1, 1]`` (``dh`` in ``[-|f|, |f|]``) or a pair
            ``(lower, upper)``.
        width_factor: The same for the width, or None to zoom both axes alike.
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
        width_factor=None,
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
            self, height_factor, "height_factor", -1.0, 1.0, low_open=True
        )
        self.width_factor = width_factor
        if width_factor is not None:
            self.width_lower, self.width_upper = factor_pair(
                self, width_factor, "width_factor", -1.0, 1.0, low_open=True
            )

    def get_random_transformation(self, images):
        n, h, w, _ = images.shape
        zoom_y = self.uniform([n, 1], 1.0 + self.height_lower, 1.0 + self.height_upper)
        zoom_x = zoom_y
        if self.width_factor is not None:
            zoom_x = self.uniform([n, 1], 1.0 + self.width_lower, 1.0 + self.width_upper)
        zeros = _core.zeros([n, 1], "float32")
        # x_in = zoom_x * x + (w - 1) / 2 * (1 - zoom_x): the centre column stays put.
        offset_x = (w - 1.0) / 2.0 * (1.0 - zoom_x)
        offset_y = (h - 1.0) / 2.0 * (1.0 - zoom_y)
        rows = [zoom_x, zeros, offset_x, zeros, zoom_y, offset_y, zeros, zeros]
        return _core.concat(rows, axis=1)

    def get_config(self):
        return {
            **super().get_config(),
            "height_factor": self.height_factor,
            "width_factor": self.width_factor,
        }
