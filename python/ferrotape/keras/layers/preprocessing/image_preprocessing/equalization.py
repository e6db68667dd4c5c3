"""``Equalization`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.equalization``).

>>> import ferrotape as ft
>>> x = ft.constant([[[0.0], [0.0], [100.0], [200.0]]])
>>> ft.keras.layers.Equalization()(x)[0, :, 0].numpy().tolist()
[0.0, 0.0, 128.0, 255.0]
"""

from ..... import _core, math
from .base_image_preprocessing_layer import (
    BaseImagePreprocessingLayer,
    _is_number,
    transform_value_range,
    value_range_pair,
)


def _equalize(channel, bins):
    """One channel (all the batch's images together, on the 0-255 scale) mapped through its
    histogram's normalised cumulative counts, as Keras computes them; a channel that fills at
    most one bin is left as it is."""
    values = _core.cast(channel, "float32")
    index = _core.cast(values * float(bins - 1) / 255.0, "int32")
    index = _core.clip_by_value(index, 0, bins - 1)
    hist = math.bincount(_core.reshape(index, [-1]), minlength=bins)
    cdf = math.cumsum(hist)
    # The first non-zero entry of the cumulative counts is their smallest positive one.
    cdf_min = _core.reduce_min(_core.select(cdf > 0, cdf, cdf[-1]))
    denominator = cdf[-1] - cdf_min
    denominator = _core.select(denominator == 0, _core.ones_like(denominator), denominator)
    lookup = _core.cast((cdf - cdf_min) * 255, "float32") / _core.cast(denominator, "float32")
    lookup = _core.cast(_core.clip_by_value(_core.round(lookup), 0.0, 255.0), channel.dtype)
    scaled = _core.clip_by_value(channel / 255.0 * float(bins - 1), 0.0, float(bins - 1))
    equalized = _core.gather(lookup, _core.cast(scaled, "int32"))
    return _core.select(math.count_nonzero(hist) <= 1, channel, equalized)


class Equalization(BaseImagePreprocessingLayer):
    """In training, equalizes the histogram of each channel: on the 0-255 scale, the values
    of a channel (counted over the whole batch, in ``bins`` bins) are spread so that their
    cumulative distribution becomes even. Like Keras's, the call trains unless told
    ``training=False`` (then the images pass unchanged, cast to the layer's dtype).

    Args:
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).
        bins: The number of histogram bins (default 256).
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.

    Input shape: ``[batch, height, width, channels]`` or a single image. Output shape: the
    same.
    """

    _COMPUTED_ON_HOST_IN_TRACES = True  # its histograms are computed in numpy (see the base)

    def __init__(self, value_range=(0, 255), bins=256, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        if not _is_number(bins) or int(bins) != bins or bins < 1:
            raise ValueError(f"Equalization: bins must be a positive int. Received: {bins!r}")
        self.bins = int(bins)
        self.value_range = value_range_pair(self, value_range)

    def transform_images(self, images, transformation):
        images = transform_value_range(images, self.value_range, (0, 255))
        channels = [_equalize(images[..., c], self.bins) for c in range(images.shape[-1])]
        images = _core.stack(channels, axis=-1)
        return transform_value_range(images, (0, 255), self.value_range)

    def get_config(self):
        return {**super().get_config(), "bins": self.bins, "value_range": self.value_range}
