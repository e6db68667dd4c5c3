"""``ContrastLimitedAdaptiveHistogramEqualization`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.clahe``).

>>> import numpy as np, ferrotape as ft
>>> layer = ft.keras.layers.ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(1, 1))
>>> image = np.array([[[0.0], [50.0], [100.0], [200.0]]])
>>> [round(float(v), 2) for v in layer(image).numpy()[0, :, 0]]  # clipped: not 0, 85, 170, 255
[0.0, 51.67, 103.35, 202.63]
"""

import numpy as np

from ..... import _core
from .base_image_preprocessing_layer import (
    BaseImagePreprocessingLayer,
    transform_value_range,
    value_range_pair,
)


def _tile_lookups(tiles, clip_limit, tile_pixels):
    """Each tile's mapping of the 256 intensities: its histogram, clipped at ``clip_limit``
    times the mean bin count with the excess spread evenly, as a cumulative count scaled to
    0-255 (``(cdf - cdf_min) * 255 / (pixels - cdf_min)``)."""
    levels = np.clip(tiles.astype(np.int32), 0, 255)  # truncated, as Keras's int cast
    flat = levels.reshape(-1, levels.shape[-1])
    hists = np.zeros((flat.shape[0], 256), dtype=np.float32)
    np.add.at(hists, (np.arange(flat.shape[0])[:, None], flat), 1.0)
    if clip_limit > 0:
        limit = np.float32(clip_limit * tile_pixels / 256.0)
        clipped = np.minimum(hists, limit)
        hists = clipped + (hists - clipped).sum(axis=-1, keepdims=True) / 256.0
    cdf = np.cumsum(hists, axis=-1)
    cdf_min = cdf.min(axis=-1, keepdims=True)
    denominator = np.float32(tile_pixels) - cdf_min
    denominator = np.where(denominator == 0, 1.0, denominator)
    lookups = np.clip((cdf - cdf_min) * 255.0 / denominator, 0, 255)
    return lookups.reshape(*tiles.shape[:-1], 256)


def _interpolation_grid(size, tile, grid):
    """For each pixel row (or column): the two neighbouring tile centres (indices into the
    edge-padded grid of ``grid + 2`` tiles) and the weight of the second."""
    position = (np.arange(size, dtype=np.float32) - tile / 2.0) / tile + 1.0
    first = np.floor(position)
    weight = position - first
    first_index = np.clip(first, 0, grid + 1).astype(np.int64)
    second_index = np.clip(first + 1, 0, grid + 1).astype(np.int64)
    return first_index, second_index, weight.astype(np.float32)


def clahe(images, clip_limit, tile_grid_size):
    """CLAHE of a ``[batch, height, width, channels]`` float array on the 0-255 scale: each
    pixel's intensity is mapped by the lookups of the four nearest tiles, blended bilinearly
    (edge tiles extended, as Keras does)."""
    batch, height, width, channels = images.shape
    grid_h, grid_w = tile_grid_size
    tile_h, tile_w = -(-height // grid_h), -(-width // grid_w)
    padded = np.pad(
        images,
        [(0, 0), (0, tile_h * grid_h - height), (0, tile_w * grid_w - width), (0, 0)],
        mode="symmetric",
    )
    tiles = padded.reshape(batch, grid_h, tile_h, grid_w, tile_w, channels)
    tiles = tiles.transpose(0, 1, 3, 5, 2, 4).reshape(batch, grid_h, grid_w, channels, -1)
    lookups = _tile_lookups(tiles, clip_limit, tile_h * tile_w)
    lookups = np.pad(lookups, [(0, 0), (1, 1), (1, 1), (0, 0), (0, 0)], mode="edge")
    y0, y1, wy = _interpolation_grid(tile_h * grid_h, tile_h, grid_h)
    x0, x1, wx = _interpolation_grid(tile_w * grid_w, tile_w, grid_w)
    b = np.arange(batch)[:, None, None, None]
    c = np.arange(channels)[None, None, None, :]
    levels = np.clip(padded, 0, 255).astype(np.int64)
    y0, y1, wy = y0[None, :, None, None], y1[None, :, None, None], wy[None, :, None, None]
    x0, x1, wx = x0[None, None, :, None], x1[None, None, :, None], wx[None, None, :, None]
    top = lookups[b, y0, x0, c, levels] * (1 - wx) + lookups[b, y0, x1, c, levels] * wx
    bottom = lookups[b, y1, x0, c, levels] * (1 - wx) + lookups[b, y1, x1, c, levels] * wx
    return (top * (1 - wy) + bottom * wy)[:, :height, :width, :]


class ContrastLimitedAdaptiveHistogramEqualization(BaseImagePreprocessingLayer):
    """Contrast-limited adaptive histogram equalization (CLAHE), in training and inference:
    the image is cut into ``tile_grid_size`` tiles, each tile's histogram is clipped at
    ``clip_limit`` times its mean bin count (the excess spread over all bins) and equalized,
    and each pixel is mapped by the four nearest tiles' mappings, blended bilinearly.
    Histograms are of the integer intensities 0-255 after mapping ``value_range`` there; the
    operation has no gradient.

    Args:
        value_range: the images' ``(low, high)``; defaults to ``(0, 255)``.
        clip_limit: the clipping threshold relative to the mean bin count (0: plain
            adaptive equalization); defaults to 4.
        tile_grid_size: ``(rows, columns)`` of tiles; defaults to ``(8, 8)``.
        data_format: ``"channels_last"`` or ``"channels_first"``.

    Input shape: ``[batch, height, width, channels]`` or ``[height, width, channels]``.
    Output shape: the same.
    """

    _COMPUTED_ON_HOST_IN_TRACES = True  # its histograms are computed in numpy (see the base)

    _TRAINING_ONLY = False  # a deterministic filter: it applies in inference too

    def __init__(
        self,
        value_range=(0, 255),
        clip_limit=4.0,
        tile_grid_size=(8, 8),
        data_format=None,
        **kwargs,
    ):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = value_range_pair(self, value_range)
        self.clip_limit = clip_limit
        self.tile_grid_size = tuple(int(n) for n in tile_grid_size)

    def call(self, inputs, training=True):
        # Keras gives integer images back in their dtype (the result truncated), while the
        # base layer computes in the layer's float dtype.
        images = inputs["images"] if isinstance(inputs, dict) else inputs
        dtype = _core.convert_to_tensor(images).dtype
        outputs = super().call(inputs, training=training)
        if not dtype.is_integer:
            return outputs
        if isinstance(outputs, dict):
            return {**outputs, "images": _core.cast(outputs["images"], dtype)}
        return _core.cast(outputs, dtype)

    def transform_images(self, images, transformation):
        del transformation
        scaled = transform_value_range(_core.cast(images, "float32"), self.value_range, (0, 255))
        result = clahe(scaled.numpy(), self.clip_limit, self.tile_grid_size)
        result = transform_value_range(
            _core.constant(result.astype(np.float32)), (0, 255), self.value_range
        )
        return _core.cast(result, images.dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "value_range": self.value_range,
            "clip_limit": self.clip_limit,
            "tile_grid_size": self.tile_grid_size,
        }
