"""``Resizing`` (Keras 3's ``keras.src.layers.preprocessing.image_preprocessing.resizing``)
and the resize the image layers share.

Resizing is separable: each output row is a fixed combination of input rows (TF's
half-pixel rule: output ``o`` samples input coordinate ``(o + 0.5) * in / out - 0.5``,
``bilinear`` mixing its two neighbours, ``nearest`` taking ``floor((o + 0.5) * in / out)``),
and likewise for columns. So the layer multiplies by one small matrix per axis, and its
gradient is that of a matrix product.

>>> import ferrotape as ft
>>> ft.keras.layers.Resizing(2, 3)(ft.ones([1, 4, 6, 3])).shape
TensorShape([1, 2, 3, 3])
"""

import math

import numpy as np

from ..... import _core, einsum
from ....._host_memory import check_host_size
from ...layer import Layer
from ...layer_helpers import _channels_last, _float_arg, _is_int

_INTERPOLATIONS = ("bilinear", "nearest")


def _weights(size_in, size_out, interpolation):
    """The ``[size_out, size_in]`` matrix that resizes one axis."""
    scale = size_in / size_out
    matrix = np.zeros((size_out, size_in))
    for o in range(size_out):
        if interpolation == "nearest":
            matrix[o, min(math.floor((o + 0.5) * scale), size_in - 1)] = 1.0
            continue
        source = (o + 0.5) * scale - 0.5
        low = math.floor(source)
        frac = source - low
        matrix[o, min(max(low, 0), size_in - 1)] += 1.0 - frac
        matrix[o, min(max(low + 1, 0), size_in - 1)] += frac
    return matrix


def _resize(images, height, width, interpolation, dtype, op="Resizing"):
    """Batched NHWC ``images`` resized to ``height x width``."""
    batch, h, w, channels = images.shape
    # The two interpolation matrices, the half-resized batch and the output.
    for shape in (
        [height, h],
        [width, w],
        [batch, height, w, channels],
        [batch, height, width, channels],
    ):
        check_host_size(op, shape, dtype)
    images = _core.cast(images, dtype)
    if (h, w) == (height, width):
        return images
    rows = _core.constant(_weights(h, height, interpolation), dtype=dtype)
    cols = _core.constant(_weights(w, width, interpolation), dtype=dtype)
    images = einsum("oh,nhwc->nowc", rows, images)
    return einsum("pw,nowc->nopc", cols, images)


def _check_size(layer, height, width):
    for what, value in (("height", height), ("width", width)):
        if not _is_int(value) or value < 1:
            raise ValueError(
                f"{type(layer).__name__}: {what} must be a positive int. Received: {what}={value!r}"
            )
    return int(height), int(width)


def _batched(layer, images):
    """``images`` as a batch, and whether it was a single image."""
    images = _core.convert_to_tensor(images)
    rank = len(images.shape)
    if rank not in (3, 4):
        raise ValueError(
            f"{type(layer).__name__}: expected an image (rank 3) or a batch of images (rank 4), "
            f"received shape {tuple(images.shape)}"
        )
    return (_core.expand_dims(images, 0), True) if rank == 3 else (images, False)


def _aspect_crop(h, w, height, width):
    """Keras's centred window of ``h x w`` with the aspect ratio ``width / height``."""
    crop_h = max(min(h, int(float(w * height) / width)), 1)
    crop_w = max(min(w, int(float(h * width) / height)), 1)
    return int(float(h - crop_h) / 2), int(float(w - crop_w) / 2), crop_h, crop_w


class Resizing(Layer):
    """Resizes images to ``height x width`` (``bilinear`` or ``nearest``, TF's half-pixel
    sampling; no antialiasing). With ``crop_to_aspect_ratio`` the largest centred window of
    the target's aspect ratio is resized, without distortion; with ``pad_to_aspect_ratio`` the
    image is first padded evenly with ``fill_value`` to that ratio. The output is in the
    layer's (floating) dtype, except that integer images come back rounded, as integers."""

    def __init__(
        self,
        height,
        width,
        interpolation="bilinear",
        crop_to_aspect_ratio=False,
        pad_to_aspect_ratio=False,
        fill_mode="constant",
        fill_value=0.0,
        antialias=False,
        data_format=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.height, self.width = _check_size(self, height, width)
        if interpolation not in _INTERPOLATIONS:
            raise ValueError(
                f"Resizing: interpolation must be one of {_INTERPOLATIONS} (others are not "
                f"supported yet). Received: interpolation={interpolation!r}"
            )
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError(
                "Only one of `crop_to_aspect_ratio` and `pad_to_aspect_ratio` can be True."
            )
        if fill_mode != "constant":
            raise ValueError(
                f"Resizing: only fill_mode='constant' is supported. Received: {fill_mode!r}"
            )
        if antialias:
            raise ValueError("Resizing: antialias=True is not supported")
        _channels_last(self, data_format)
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)
        self.pad_to_aspect_ratio = bool(pad_to_aspect_ratio)
        self.fill_mode = fill_mode
        self.fill_value = _float_arg("Resizing", "fill_value", fill_value)
        self.antialias = False
        self.data_format = "channels_last"
        self._autocast = False  # integer pixels are welcome; the resize casts

    def call(self, inputs):
        images, single = _batched(self, inputs)
        integer = images.dtype if images.dtype.is_integer else None
        images = _core.cast(images, self.compute_dtype)
        _, h, w, _ = images.shape
        if self.crop_to_aspect_ratio:
            top, left, crop_h, crop_w = _aspect_crop(h, w, self.height, self.width)
            images = images[:, top : top + crop_h, left : left + crop_w]
        elif self.pad_to_aspect_ratio:
            pad_h = max(h, int(float(w * self.height) / self.width))
            pad_w = max(w, int(float(h * self.width) / self.height))
            top, left = int(float(pad_h - h) / 2), int(float(pad_w - w) / 2)
            # Keras pads `top` rows on both sides (and `left` columns), even when that is
            # one short of the exact ratio.
            images = (
                _core.pad(images - self.fill_value, [[0, 0], [top, top], [left, left], [0, 0]])
                + self.fill_value
            )
        out = _resize(images, self.height, self.width, self.interpolation, self.compute_dtype)
        if integer is not None:
            # Integer images stay integers, rounded (Keras's saturating cast back).
            out = _core.cast(_core.round(out), integer)
        return out[0] if single else out

    def get_config(self):
        return {
            **super().get_config(),
            "height": self.height,
            "width": self.width,
            "interpolation": self.interpolation,
            "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
            "pad_to_aspect_ratio": self.pad_to_aspect_ratio,
            "fill_mode": self.fill_mode,
            "fill_value": self.fill_value,
            "antialias": self.antialias,
            "data_format": self.data_format,
        }
