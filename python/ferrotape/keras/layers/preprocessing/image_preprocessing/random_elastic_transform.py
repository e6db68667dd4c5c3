"""``RandomElasticTransform`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_elastic_transform``), with the
sampling of Keras's ``ops.image.map_coordinates`` and ``ops.image.elastic_transform`` that it
uses.

Elastic distortion moves every pixel by a smooth random field: Gaussian noise (standard
deviation ``sigma``) blurred by a Gaussian of the same ``sigma``, scaled by ``alpha``, and
the image is resampled at the moved points. The field does not depend on the images, so it
and the sampling positions are computed with numpy; the images are read with ``gather``, so
the result is differentiable in them.

>>> import ferrotape as ft
>>> layer = ft.keras.layers.RandomElasticTransform(seed=1)
>>> layer(ft.ones([2, 16, 16, 3]) * 100.0).shape
TensorShape([2, 16, 16, 3])
"""

import numpy as np

from ..... import _core
from .... import random as keras_random
from .base_image_preprocessing_layer import (
    BaseImagePreprocessingLayer,
    base_factor,
    check_sampling,
)
from .random_gaussian_blur import gaussian_kernel

MAP_FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def _fixed_index(index, size, fill_mode):
    """Keras's ``map_coordinates`` index rule: the in-range index an integer ``index``
    reads on an axis of ``size``, and whether it is inside (only ``constant`` leaves it out)."""
    valid = np.ones(index.shape, bool)
    if fill_mode == "constant":
        valid = (index >= 0) & (index < size)
    elif fill_mode in ("mirror", "reflect"):
        index = np.abs(index)
        mod = np.mod(index, 2 * size)
        over = mod >= size
        index = np.where(over, 2 * size - mod, mod)
        if fill_mode == "reflect":
            index = np.where(over, index - 1, index)
    elif fill_mode == "wrap":
        index = np.mod(index, size)
    # Clipped for every mode: Keras's "mirror" can reach `size` itself.
    return np.clip(index, 0, size - 1), valid


def _nodes(coordinate, order):
    """The integer positions an interpolation reads and their weights."""
    if order == 0:
        # tf.round: halves to even.
        return [(np.round(coordinate).astype(np.int64), np.ones_like(coordinate))]
    lower = np.floor(coordinate)
    upper_weight = coordinate - lower
    return [(lower.astype(np.int64), 1 - upper_weight), (lower.astype(np.int64) + 1, upper_weight)]


def map_coordinates_2d(images, y, x, order=1, fill_mode="constant", fill_value=0.0):
    """Samples each channel of NHWC ``images`` at the points ``(y[b], x[b])`` (numpy
    ``[batch, height', width']`` arrays of row and column coordinates), as Keras's
    ``map_coordinates`` samples one plane: ``order`` 0 (nearest) or 1 (linear), outside points
    mapped by ``fill_mode`` (``constant``: read as ``fill_value``)."""
    n, h, w, c = images.shape
    flat = _core.reshape(images, [n * h * w, c])
    batch = np.arange(n).reshape(n, 1, 1)
    total = None
    for yi, wy in _nodes(y, order):
        rows, rows_valid = _fixed_index(yi, h, fill_mode)
        for xi, wx in _nodes(x, order):
            cols, cols_valid = _fixed_index(xi, w, fill_mode)
            index = _core.constant((batch * h + rows) * w + cols, dtype="int32")
            values = _core.gather(flat, index)
            if fill_mode == "constant":
                inside = _core.constant((rows_valid & cols_valid)[..., None])
                values = _core.select(inside, values, _core.constant(fill_value, images.dtype))
            term = _core.constant((wy * wx)[..., None], dtype=images.dtype) * values
            total = term if total is None else total + term
    return total


def elastic_transform(images, alpha, sigma, order, fill_mode, fill_value, seed):
    """Keras's ``elastic_transform`` of NHWC ``images``: a random displacement, Gaussian noise
    of standard deviation ``sigma`` blurred by a Gaussian of ``sigma`` (a kernel of
    ``6 * int(sigma) | 1`` taps, zero padding) times ``alpha``, applied to both coordinates.

    As in Keras (which draws both noise fields from the same seed), the row and column
    displacements are equal."""
    n, h, w, _ = images.shape
    dtype = np.dtype(images.dtype.name)
    noise = keras_random.normal([n, h, w], seed=seed).numpy().astype(dtype) * dtype.type(sigma)
    taps = (6 * int(sigma)) | 1
    kernel = gaussian_kernel((taps, taps), (sigma, sigma))
    padded = np.pad(noise, [(0, 0), (taps // 2, taps // 2), (taps // 2, taps // 2)])
    field = np.zeros_like(noise)
    for i in range(taps):
        for j in range(taps):
            field += kernel[i, j] * padded[:, i : i + h, j : j + w]
    rows, cols = np.meshgrid(np.arange(h, dtype=dtype), np.arange(w, dtype=dtype), indexing="ij")
    shift = dtype.type(alpha) * field
    return map_coordinates_2d(images, rows + shift, cols + shift, order, fill_mode, fill_value)


class RandomElasticTransform(BaseImagePreprocessingLayer):
    """In training, distorts images elastically: for each image a probability ``p`` is drawn
    from ``factor``'s range and the image is distorted with probability ``p``; the strength
    ``s`` is drawn once per call from ``scale``'s range, giving ``alpha = 0.1 s max(h, w)``
    and ``sigma = 0.05 s min(h, w)`` (see ``elastic_transform``). The result is clipped to
    ``value_range``.

    Args:
        factor: A number ``f`` in ``[0, 1]`` (``p`` in ``[0, f]``; default 1.0) or a pair.
        scale: A number ``s`` in ``[0, 1]`` (the range ``(0, s)``; default 1.0) or a pair.
        interpolation: ``"bilinear"`` (the default) or ``"nearest"``.
        fill_mode: ``"reflect"`` (the default), ``"mirror"``, ``"wrap"``, ``"nearest"`` or
            ``"constant"`` (Keras's ``map_coordinates`` modes).
        fill_value: The value outside the image with ``fill_mode="constant"``.
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).
        seed: An int (reproducible draws) or None.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.

    Input shape: ``[batch, height, width, channels]`` or a single image. Output shape: the
    same.
    """

    _COMPUTED_ON_HOST_IN_TRACES = True  # it reads its draws into Python (see the base)

    def __init__(
        self,
        factor=1.0,
        scale=1.0,
        interpolation="bilinear",
        fill_mode="reflect",
        fill_value=0.0,
        value_range=(0, 255),
        seed=None,
        data_format=None,
        **kwargs,
    ):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = base_factor(self, factor, 0.0, 1.0)
        self.scale = base_factor(self, scale, 0.0, 1.0, name="scale")
        check_sampling(self, None, interpolation)
        if fill_mode not in MAP_FILL_MODES:
            raise NotImplementedError(
                f"Unknown `fill_mode` {fill_mode}. Expected of one {set(MAP_FILL_MODES)}."
            )
        self.interpolation = interpolation
        self.fill_mode = fill_mode
        self.fill_value = float(fill_value)
        self.value_range = tuple(value_range)

    def get_random_transformation(self, images):
        if self.scale[1] == 0 or self.factor[1] == 0:
            return None
        n = images.shape[0]
        apply = self.happens(n, self.uniform([n], *self.factor))
        strength = float(self.uniform([], *self.scale, dtype=self.compute_dtype).numpy())
        return apply, strength

    def transform_images(self, images, transformation):
        if transformation is None:
            return images
        apply, strength = transformation
        _, h, w, _ = images.shape
        alpha = max(h, w) * np.float32(0.1 * np.float32(strength))
        sigma = min(h, w) * np.float32(0.05 * np.float32(strength))
        order = 0 if self.interpolation == "nearest" else 1
        distorted = elastic_transform(
            images, alpha, sigma, order, self.fill_mode, self.fill_value, self.generator
        )
        images = _core.select(apply, distorted, images)
        return _core.clip_by_value(images, *self.value_range)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "scale": self.scale,
            "interpolation": self.interpolation,
            "fill_mode": self.fill_mode,
            "fill_value": self.fill_value,
            "value_range": self.value_range,
        }
