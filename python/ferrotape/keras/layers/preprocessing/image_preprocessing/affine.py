"""``affine_transform`` (Keras 3's ``keras.ops.image.affine_transform``, which its TensorFlow
backend computes with ``ImageProjectiveTransformV3``) and the matrix Keras's geometric
augmentation layers build for it.

Each output pixel ``(x, y)`` (column, row) reads the input at the point the transform row
``[a0, a1, a2, b0, b1, b2, c0, c1]`` maps it to: ``((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2)
/ k)`` with ``k = c0 x + c1 y + 1`` (the transform is the *inverse* of the motion the image
makes). A point outside the image is first mapped back in by ``fill_mode``, exactly as
TensorFlow's kernel maps it, then sampled by ``nearest`` (rounding halves away from zero) or
``bilinear`` interpolation; a neighbour that stays outside (only with ``constant``) reads
``fill_value``. The coordinates are computed in float32, as TensorFlow computes them.

Everything is ferrotape ops (the sampling is four ``gather`` s and a weighted sum), so the
result is differentiable in ``images``, runs under ``ft.device`` and is recorded by
``ft.function``; like TensorFlow's op it has no gradient for ``transform``.

>>> import ferrotape as ft
>>> image = ft.reshape(ft.range(6.0), [2, 3, 1])
>>> shift = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0]  # output (x, y) reads input (x + 1, y)
>>> affine_transform(image, shift, fill_mode="constant")[:, :, 0].numpy().tolist()
[[1.0, 2.0, 0.0], [4.0, 5.0, 0.0]]
"""

import math

import numpy as np

from ..... import _core, linalg

FILL_MODES = ("reflect", "wrap", "constant", "nearest")
INTERPOLATIONS = ("nearest", "bilinear")


def _reflect(c, size):
    """TF's ``FILL_REFLECT`` (``d c b a | a b c d | d c b a``), clamped into the image."""
    period = 2.0 * size
    # Below 0: move up by whole periods, then mirror about -0.5.
    low = period * _core.floor(-c / period) + c
    low = _core.select(low < -size, low + period, -low - 1.0)
    # Above size - 1: move down by whole periods, then mirror about size - 0.5.
    high = c - period * _core.floor(c / period)
    high = _core.select(high >= size, period - high - 1.0, high)
    mapped = _core.select(c < 0.0, low, _core.select(c > size - 1.0, high, c))
    return _core.clip_by_value(mapped, 0.0, size - 1.0)


def _wrap(c, size):
    """TF's ``FILL_WRAP`` (``a b c d | a b c d | a b c d``), with its steps of ``size`` per
    ``size - 1`` of distance, clamped into the image."""
    span = size - 1.0
    low = c + size * (_core.floor(-c / span) + 1.0)
    high = c - size * _core.floor(c / span)
    mapped = _core.select(c < 0.0, low, _core.select(c > span, high, c))
    return _core.clip_by_value(mapped, 0.0, span)


def _map_coordinate(c, size, fill_mode):
    """The input coordinate that a (possibly outside) coordinate ``c`` reads, on an axis of
    ``size`` pixels. ``constant`` leaves it, to be read as ``fill_value`` when outside."""
    if fill_mode == "constant":
        return c
    if size <= 1:
        return _core.zeros_like(c)
    if fill_mode == "nearest":
        return _core.clip_by_value(c, 0.0, size - 1.0)
    return _reflect(c, size) if fill_mode == "reflect" else _wrap(c, size)


def _round_half_away(c):
    """``std::round``: halves go away from zero (``ft.round`` rounds them to even)."""
    return _core.sign(c) * _core.floor(_core.abs(c) + 0.5)


class _Sampler:
    """Reads pixels of a batch of NHWC images at integer-valued float32 coordinates, as
    ``fill_value`` where a coordinate is outside the image (or the projection is undefined)."""

    def __init__(self, images, fill_value, undefined):
        n, self.h, self.w, c = images.shape
        self.flat = _core.reshape(images, [n * self.h * self.w, c])
        self.first = _core.constant(np.arange(n, dtype=np.int32).reshape(n, 1, 1) * self.h)
        self.fill = _core.constant(fill_value, dtype=images.dtype)
        self.undefined = undefined

    def __call__(self, y, x):
        inside = (y >= 0.0) & (y <= self.h - 1.0) & (x >= 0.0) & (x <= self.w - 1.0)
        inside = inside & ~self.undefined
        rows = _core.cast(_core.clip_by_value(y, 0.0, self.h - 1.0), "int32")
        cols = _core.cast(_core.clip_by_value(x, 0.0, self.w - 1.0), "int32")
        values = _core.gather(self.flat, (self.first + rows) * self.w + cols)
        return _core.select(_core.expand_dims(inside, -1), values, self.fill)


def _source_points(transform, h, w):
    """The float32 input coordinates ``(y, x)`` each output pixel reads, ``[m, h, w]`` each
    for ``m`` transforms, and where the projection ``k`` is 0 (no point: ``fill_value``)."""
    xs = _core.constant(np.arange(w, dtype=np.float32).reshape(1, 1, w))
    ys = _core.constant(np.arange(h, dtype=np.float32).reshape(1, h, 1))
    a0, a1, a2, b0, b1, b2, c0, c1 = (_core.reshape(transform[:, i], [-1, 1, 1]) for i in range(8))
    k = c0 * xs + c1 * ys + 1.0
    undefined = k == 0.0
    k = _core.select(undefined, _core.ones_like(k), k)
    return (b0 * xs + b1 * ys + b2) / k, (a0 * xs + a1 * ys + a2) / k, undefined


def _check(images, transform, interpolation, fill_mode):
    if interpolation not in INTERPOLATIONS:
        raise ValueError(
            "affine_transform: invalid value for argument `interpolation`. Expected one of "
            f"{INTERPOLATIONS}. Received: interpolation={interpolation!r}"
        )
    if fill_mode not in FILL_MODES:
        raise ValueError(
            "affine_transform: invalid value for argument `fill_mode`. Expected one of "
            f"{FILL_MODES}. Received: fill_mode={fill_mode!r}"
        )
    if images.ndim not in (3, 4):
        raise ValueError(
            "affine_transform: invalid images rank: expected rank 3 (single image) or rank 4 "
            f"(batch of images). Received input with shape: images.shape={tuple(images.shape)}"
        )
    if transform.ndim not in (1, 2) or transform.shape[-1] != 8:
        raise ValueError(
            "affine_transform: transform must be 8 numbers [a0, a1, a2, b0, b1, b2, c0, c1] "
            f"or a batch of them. Received: transform.shape={tuple(transform.shape)}"
        )


def affine_transform(
    images,
    transform,
    interpolation="bilinear",
    fill_mode="constant",
    fill_value=0,
    data_format=None,
):
    """Applies the given projective transform(s) to the image(s).

    Output pixel ``(x, y)`` takes the input's value at ``((a0 x + a1 y + a2) / k,
    (b0 x + b1 y + b2) / k)``, ``k = c0 x + c1 y + 1``, for the transform row
    ``[a0, a1, a2, b0, b1, b2, c0, c1]``; points outside the input are mapped back by
    ``fill_mode``: ``reflect`` (``d c b a | a b c d | d c b a``), ``wrap``
    (``a b c d | a b c d``), ``nearest`` (``a a a a | a b c d | d d d d``) or ``constant``
    (``k k k k | a b c d | k k k k`` with ``k = fill_value``).

    Args:
        images: ``[height, width, channels]`` or ``[batch, height, width, channels]``
            (``channels_first``: channels before height).
        transform: 8 numbers, or ``[batch, 8]`` (or ``[1, 8]``: one for the whole batch).
        interpolation: ``"bilinear"`` or ``"nearest"``.
        fill_mode: ``"constant"``, ``"nearest"``, ``"wrap"`` or ``"reflect"``.
        fill_value: The value read outside the input with ``fill_mode="constant"``.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.

    Returns:
        The transformed images, with the shape and dtype of ``images`` (integer images are
        interpolated in float32 and truncated back, as TensorFlow does).
    """
    images = _core.convert_to_tensor(images)
    transform = _core.cast(_core.convert_to_tensor(transform), "float32")
    _check(images, transform, interpolation, fill_mode)
    if data_format not in (None, "channels_last", "channels_first"):
        raise ValueError(
            "affine_transform: data_format must be 'channels_last' or 'channels_first'. "
            f"Received: data_format={data_format!r}"
        )
    single = images.ndim == 3
    if single:
        images = _core.expand_dims(images, 0)
    if transform.ndim == 1:
        transform = _core.expand_dims(transform, 0)
    if data_format == "channels_first":
        images = _core.transpose(images, [0, 2, 3, 1])
    n, h, w, _ = images.shape
    if transform.shape[0] not in (1, n):
        raise ValueError(
            f"affine_transform: {transform.shape[0]} transforms for {n} images; give one "
            "transform or one per image"
        )
    integer = None if images.dtype.is_floating else images.dtype
    if integer is not None:
        images = _core.cast(images, "float32")
    y, x, undefined = _source_points(transform, h, w)
    y, x = _map_coordinate(y, h, fill_mode), _map_coordinate(x, w, fill_mode)
    read = _Sampler(images, float(fill_value), undefined)
    if interpolation == "nearest":
        out = read(_round_half_away(y), _round_half_away(x))
    else:
        out = _bilinear(read, y, x, images.dtype)
    if integer is not None:
        out = _core.cast(out, integer)
    if data_format == "channels_first":
        out = _core.transpose(out, [0, 3, 1, 2])
    return out[0] if single else out


def _bilinear(read, y, x, dtype):
    """TF's bilinear rule: along x at the rows ``floor(y)`` and ``floor(y) + 1``, then along y,
    the weights being the distances to the opposite neighbour."""
    y0, x0 = _core.floor(y), _core.floor(x)
    y1, x1 = y0 + 1.0, x0 + 1.0

    def weight(t):
        return _core.expand_dims(_core.cast(t, dtype), -1)

    left, right = weight(x1 - x), weight(x - x0)
    top = left * read(y0, x0) + right * read(y0, x1)
    bottom = left * read(y1, x0) + right * read(y1, x1)
    return weight(y1 - y) * top + weight(y - y0) * bottom


def compute_affine_matrix(
    center_x, center_y, angle, translate_x, translate_y, scale, shear_x, shear_y, height, width
):
    """Keras's ``_compute_affine_matrix``: the ``[batch, 8]`` transform rows (float32) that
    rotate by ``angle`` degrees and shear by ``shear_x``/``shear_y`` degrees about the point at
    fractions ``center_x``/``center_y`` of the image, scale by ``scale`` and translate by
    ``translate_x``/``translate_y`` pixels. Each argument but the centre and the size is a
    ``[batch]`` tensor."""

    def f32(t):
        return _core.cast(_core.convert_to_tensor(t), "float32")

    to_radians = _core.constant(math.pi / 180.0, dtype="float32")
    angle = f32(angle) * to_radians
    shear_x = _core.tan(f32(shear_x) * to_radians)
    shear_y = _core.tan(f32(shear_y) * to_radians)
    scale, translate_x, translate_y = f32(scale), f32(translate_x), f32(translate_y)
    cx = center_x * (float(width) - 1.0)
    cy = center_y * (float(height) - 1.0)
    cos, sin = _core.cos(angle), _core.sin(angle)
    a0 = scale * (cos + shear_x * sin)
    a1 = scale * (-sin + shear_x * cos)
    a2 = translate_x + cx - cx * a0 - cy * a1
    b0 = scale * (shear_y * cos + sin)
    b1 = scale * (shear_y * -sin + cos)
    b2 = translate_y + cy - cx * b0 - cy * b1
    zero = _core.zeros_like(a0)
    return _core.stack([a0, a1, a2, b0, b1, b2, zero, zero], axis=1)


def compute_homography_matrix(start_points, end_points):
    """The ``[batch, 8]`` projective transforms that map each of the 4 ``end_points`` (output
    corners, ``[batch, 4, 2]`` as ``(x, y)``) to the matching ``start_points`` (input corners),
    solved as Keras solves them (an 8 x 8 linear system, float32)."""
    start = _core.cast(_core.convert_to_tensor(start_points), "float32")
    end = _core.cast(_core.convert_to_tensor(end_points), "float32")
    rows = []
    for i in range(4):
        sx, sy, ex, ey = start[:, i, 0], start[:, i, 1], end[:, i, 0], end[:, i, 1]
        zero, one = _core.zeros_like(ex), _core.ones_like(ex)
        rows.append(_core.stack([ex, ey, one, zero, zero, zero, -sx * ex, -sx * ey], axis=-1))
        rows.append(_core.stack([zero, zero, zero, ex, ey, one, -sy * ex, -sy * ey], axis=-1))
    target = _core.reshape(start, [-1, 8, 1])  # x1, y1, x2, y2, ...
    return _core.reshape(linalg.solve(_core.stack(rows, axis=1), target), [-1, 8])


def perspective_transform(
    images, start_points, end_points, interpolation="bilinear", fill_value=0, data_format=None
):
    """Warps ``images`` so that the 4 input corners ``start_points`` land on ``end_points``
    (Keras 3's ``keras.ops.image.perspective_transform``; points outside the input read
    ``fill_value``).

    Args:
        images: ``[height, width, channels]`` or a batch of them.
        start_points: ``[4, 2]`` or ``[batch, 4, 2]`` points ``(x, y)`` in the input.
        end_points: Where they go in the output, the same shape.
        interpolation: ``"bilinear"`` or ``"nearest"``.
        fill_value: The value read outside the input.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.

    Returns:
        The warped images, shaped as ``images``.
    """
    start = _core.convert_to_tensor(start_points)
    end = _core.convert_to_tensor(end_points)
    if start.shape != end.shape or tuple(start.shape[-2:]) != (4, 2) or start.ndim not in (2, 3):
        raise ValueError(
            "perspective_transform: start_points and end_points must both be (4, 2) or "
            f"(N, 4, 2). Received shapes {tuple(start.shape)} and {tuple(end.shape)}"
        )
    if start.ndim == 2:
        start, end = _core.expand_dims(start, 0), _core.expand_dims(end, 0)
    transform = compute_homography_matrix(start, end)
    return affine_transform(images, transform, interpolation, "constant", fill_value, data_format)
