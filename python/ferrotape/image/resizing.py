"""``resize`` and ``resize_with_pad``: sampling by gathers and weighted sums, so a bilinear
or bicubic resize is differentiable with respect to the image."""

import numpy as np

from .. import _core
from .._host_memory import check_host_size
from ._common import as_int, batched, unbatch
from .geometry import pad_to_bounding_box


class ResizeMethod:
    """The names of ``resize``'s sampling methods (``tf.image.ResizeMethod``).

    ferrotape implements ``BILINEAR``, ``NEAREST_NEIGHBOR`` and ``BICUBIC``; the others are
    listed so that code naming them reads, and ``resize`` raises for them.
    """

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_SUPPORTED = (ResizeMethod.BILINEAR, ResizeMethod.NEAREST_NEIGHBOR, ResizeMethod.BICUBIC)


def _source_coordinates(in_size, out_size):
    """Half-pixel centres: output pixel ``i`` samples input position ``(i + 0.5) * scale - 0.5``."""
    # In float32, as TensorFlow's kernels compute them.
    scale = np.float32(in_size) / np.float32(out_size)
    return (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)


def _weighted_taps(x, axis, indices, weights):
    """``sum_t weights[:, t] * gather(x, indices[:, t], axis)``, weights broadcast on ``axis``."""
    shape = [1] * x.ndim
    shape[axis] = indices.shape[0]
    total = None
    for t in range(indices.shape[1]):
        w = _core.constant(weights[:, t].reshape(shape).astype(x.dtype.as_numpy_dtype))
        term = _core.gather(x, _core.constant(indices[:, t].astype(np.int64)), axis=axis) * w
        total = term if total is None else total + term
    return total


def _bilinear_taps(in_size, out_size):
    coords = _source_coordinates(in_size, out_size).astype(np.float64)
    lower = np.floor(coords)
    frac = coords - lower
    indices = np.clip(np.stack([lower, lower + 1], axis=1), 0, in_size - 1)
    return indices.astype(np.int64), np.stack([1 - frac, frac], axis=1)


def _bicubic_taps(in_size, out_size):
    # Keys' cubic with a = -0.5 over the 4 nearest pixels; taps outside the image get weight 0
    # and the rest are renormalized. TensorFlow reads the weights from a table of 1024 steps,
    # so the fractional position is rounded to a multiple of 1/1024 first.
    coords = _source_coordinates(in_size, out_size).astype(np.float64)
    lower = np.floor(coords)
    frac = np.rint((coords - lower) * 1024) / 1024
    offsets = np.arange(-1, 3)
    taps = lower[:, None] + offsets[None, :]
    d = np.abs(frac[:, None] - offsets[None, :])
    a = -0.5
    weights = np.where(
        d <= 1,
        ((a + 2) * d - (a + 3)) * d * d + 1,
        np.where(d < 2, ((a * d - 5 * a) * d + 8 * a) * d - 4 * a, 0.0),
    )
    inside = (taps >= 0) & (taps < in_size)
    weights = np.where(inside, weights, 0.0)
    weights /= weights.sum(axis=1, keepdims=True)
    return np.clip(taps, 0, in_size - 1).astype(np.int64), weights


def _nearest_indices(in_size, out_size):
    scale = np.float32(in_size) / np.float32(out_size)
    index = np.floor((np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * scale)
    return np.clip(index, 0, in_size - 1).astype(np.int64)


def _size(op, size):
    values = np.asarray(size.numpy() if hasattr(size, "numpy") else size)
    if values.shape != (2,) or values.dtype.kind not in "iu" or (values <= 0).any():
        raise ValueError(f"{op}: size must be 2 positive ints [height, width], received {size!r}")
    if (values > np.iinfo(np.int32).max).any():  # TensorFlow's size is an int32 tensor
        raise ValueError(f"{op}: size must fit in int32, received {values.tolist()}")
    return int(values[0]), int(values[1])


def _resize(x, height, width, method):
    """Resizes the 4-D ``x`` to ``[height, width]``, in ``x``'s float dtype (integers become
    float32) for the weighted methods."""
    batch, rows, cols, channels = x.shape
    for shape in ([batch, height, cols, channels], [batch, height, width, channels]):
        check_host_size("resize", shape, x.dtype if x.dtype.is_floating else "float32")
    if method == ResizeMethod.NEAREST_NEIGHBOR:
        x = _core.gather(x, _core.constant(_nearest_indices(x.shape[1], height)), axis=1)
        return _core.gather(x, _core.constant(_nearest_indices(x.shape[2], width)), axis=2)
    taps = _bilinear_taps if method == ResizeMethod.BILINEAR else _bicubic_taps
    if not x.dtype.is_floating:
        x = _core.cast(x, "float32")
    x = _weighted_taps(x, 1, *taps(x.shape[1], height))
    return _weighted_taps(x, 2, *taps(x.shape[2], width))


def _method(op, method):
    method = getattr(method, "value", method)
    if method not in _SUPPORTED:
        raise ValueError(
            f"{op}: method must be one of {list(_SUPPORTED)} (the others are not implemented), "
            f"received method={method!r}"
        )
    return method


def resize(
    images,
    size,
    method=ResizeMethod.BILINEAR,
    preserve_aspect_ratio=False,
    antialias=False,
    name=None,
):
    """Resizes ``images`` to ``size`` with half-pixel centres (TensorFlow 2's ``resize``).

    Output pixel ``i`` samples the input at ``(i + 0.5) * in / out - 0.5``: ``"bilinear"``
    interpolates its 2x2 neighbours, ``"bicubic"`` its 4x4 (Keys, a = -0.5), ``"nearest"``
    takes input pixel ``floor((i + 0.5) * in / out)``. Edges are clamped.

    Args:
        images: A 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width, channels]``
            tensor.
        size: ``[new_height, new_width]``, two positive ints.
        method: ``"bilinear"``, ``"nearest"`` or ``"bicubic"`` (a ``ResizeMethod`` name).
        preserve_aspect_ratio: If true, scale both axes by the same factor so the result fits
            within ``size``.
        antialias: Must be false when downsampling (anti-aliasing filters are not implemented);
            it changes nothing when upsampling.
        name: Ignored (TensorFlow's op name).

    Returns:
        The resized images, float32 (whatever the input's dtype, as in TensorFlow), except
        ``"nearest"``, which keeps the input's dtype.

    Raises:
        ValueError: for a bad ``size``, an unimplemented method, or ``antialias`` when
            downsampling.

    Gradient: for ``"bilinear"`` and ``"bicubic"``, the upstream gradient spread back with the
    interpolation weights; for ``"nearest"``, summed onto the sampled pixels.

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.constant([0.0, 1.0]), [1, 2, 1])
    >>> ft.image.resize(x, [1, 4])[0, :, 0].numpy()
    array([0.  , 0.25, 0.75, 1.  ], dtype=float32)
    """
    del name
    op = "resize"
    x, was_batched = batched(op, images)
    height, width = _size(op, size)
    method = _method(op, method)
    if preserve_aspect_ratio:
        scale = min(np.float32(height) / x.shape[1], np.float32(width) / x.shape[2])
        height = int(np.round(np.float32(x.shape[1]) * scale))
        width = int(np.round(np.float32(x.shape[2]) * scale))
    if antialias and (height < x.shape[1] or width < x.shape[2]):
        raise ValueError(f"{op}: antialias=True when downsampling is not implemented")
    out = _resize(x, height, width, method)
    if method != ResizeMethod.NEAREST_NEIGHBOR:
        out = _core.cast(out, "float32")
    return unbatch(out, was_batched)


def resize_with_pad(
    image, target_height, target_width, method=ResizeMethod.BILINEAR, antialias=False
):
    """Resizes ``image`` to fit ``[target_height, target_width]`` keeping its aspect ratio,
    then pads it with zeros (centred) to exactly that size.

    Args:
        image: A 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width, channels]``
            tensor.
        target_height: The height of the result, ``> 0``.
        target_width: The width of the result, ``> 0``.
        method: As in ``resize``.
        antialias: As in ``resize``.

    Returns:
        A tensor ``[target_height, target_width, channels]`` (batched if ``image`` is).

    Gradient: as ``resize``'s, at the pixels inside the padding.

    >>> import ferrotape as ft
    >>> ft.image.resize_with_pad(ft.ones([2, 4, 1]), 4, 4)[:, :, 0].numpy()
    array([[0., 0., 0., 0.],
           [1., 1., 1., 1.],
           [1., 1., 1., 1.],
           [0., 0., 0., 0.]], dtype=float32)
    """
    op = "resize_with_pad"
    x, was_batched = batched(op, image)
    target_height = as_int(op, "target_height", target_height, 1)
    target_width = as_int(op, "target_width", target_width, 1)
    # float32 arithmetic, as TensorFlow computes these sizes.
    f32 = np.float32
    height, width = f32(x.shape[1]), f32(x.shape[2])
    ratio = max(width / f32(target_width), height / f32(target_height))
    new_height, new_width = height / ratio, width / ratio
    top = max(0, int(np.floor((f32(target_height) - new_height) / f32(2))))
    left = max(0, int(np.floor((f32(target_width) - new_width) / f32(2))))
    resized = resize(
        x, [int(np.floor(new_height)), int(np.floor(new_width))], method, False, antialias
    )
    padded = pad_to_bounding_box(resized, top, left, target_height, target_width)
    return unbatch(padded, was_batched)
