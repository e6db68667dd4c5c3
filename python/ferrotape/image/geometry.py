"""Flips, rotations, crops and pads of images: slicing and padding, so gradients flow through."""

import math

from .. import _core
from .._host_memory import check_host_size
from ._common import as_float, as_int, batched, image_tensor, unbatch


def flip_left_right(image):
    """Reverses the width axis of ``image`` (a mirror image).

    Args:
        image: A 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width, channels]``
            tensor.

    Returns:
        A tensor of ``image``'s shape and dtype.

    Gradient: the upstream gradient flipped back.

    >>> import ferrotape as ft
    >>> ft.image.flip_left_right(ft.reshape(ft.range(3.0), [1, 3, 1]))[0, :, 0].numpy()
    array([2., 1., 0.], dtype=float32)
    """
    return image_tensor("flip_left_right", image)[..., ::-1, :]


def flip_up_down(image):
    """Reverses the height axis of ``image`` (upside down).

    Args:
        image: A 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width, channels]``
            tensor.

    Returns:
        A tensor of ``image``'s shape and dtype.

    Gradient: the upstream gradient flipped back.

    >>> import ferrotape as ft
    >>> ft.image.flip_up_down(ft.reshape(ft.range(3.0), [3, 1, 1]))[:, 0, 0].numpy()
    array([2., 1., 0.], dtype=float32)
    """
    return image_tensor("flip_up_down", image)[..., ::-1, :, :]


def transpose(image, name=None):
    """Swaps the height and width axes of ``image``.

    Args:
        image: A 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width, channels]``
            tensor.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor ``[width, height, channels]`` (or ``[batch, width, height, channels]``).

    Gradient: the upstream gradient transposed back.

    >>> import ferrotape as ft
    >>> ft.image.transpose(ft.zeros([2, 3, 1])).shape
    TensorShape([3, 2, 1])
    """
    del name
    x = image_tensor("transpose", image)
    perm = [1, 0, 2] if x.ndim == 3 else [0, 2, 1, 3]
    return _core.transpose(x, perm)


def rot90(image, k=1, name=None):
    """Rotates ``image`` counter-clockwise by ``k`` quarter turns.

    Args:
        image: A 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width, channels]``
            tensor.
        k: The number of quarter turns (any int; taken modulo 4).
        name: Ignored (TensorFlow's op name).

    Returns:
        The rotated tensor (height and width swapped for odd ``k``).

    Gradient: the upstream gradient rotated back.

    >>> import ferrotape as ft
    >>> ft.image.rot90(ft.reshape(ft.range(4.0), [2, 2, 1]))[:, :, 0].numpy()
    array([[1., 3.],
           [0., 2.]], dtype=float32)
    """
    del name
    x = image_tensor("rot90", image)
    k = as_int("rot90", "k", k) % 4
    if k == 0:
        return x
    if k == 2:
        return x[..., ::-1, ::-1, :]
    # A quarter turn counter-clockwise: mirror the columns, then transpose (k=3: the reverse).
    if k == 1:
        return transpose(flip_left_right(x))
    return flip_left_right(transpose(x))


def central_crop(image, central_fraction):
    """Crops the central ``central_fraction`` of ``image`` along height and width.

    The crop starts at ``int((size - size * central_fraction) / 2)`` on each axis and is
    symmetric, as in TensorFlow.

    Args:
        image: A 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width, channels]``
            tensor.
        central_fraction: A float in ``(0, 1]``.

    Returns:
        The cropped tensor, of ``image``'s rank.

    Raises:
        ValueError: if ``central_fraction`` is outside ``(0, 1]``.

    Gradient: the upstream gradient in the kept region, zeros elsewhere.

    >>> import ferrotape as ft
    >>> ft.image.central_crop(ft.zeros([4, 8, 3]), 0.5).shape
    TensorShape([2, 4, 3])
    """
    x = image_tensor("central_crop", image)
    fraction = as_float(central_fraction)
    if not 0.0 < fraction <= 1.0:
        raise ValueError(
            f"central_crop: central_fraction must be within (0, 1], received {central_fraction}"
        )
    if fraction == 1.0:
        return x
    height, width = x.shape[-3], x.shape[-2]
    top = int((float(height) - float(height) * fraction) / 2)
    left = int((float(width) - float(width) * fraction) / 2)
    return x[..., top : height - top, left : width - left, :]


def _bounding_box_args(op, offset_height, offset_width, target_height, target_width):
    return (
        as_int(op, "offset_height", offset_height, 0),
        as_int(op, "offset_width", offset_width, 0),
        as_int(op, "target_height", target_height, 1),
        as_int(op, "target_width", target_width, 1),
    )


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Crops the box ``[offset_height : offset_height + target_height, offset_width : ...]``.

    Args:
        image: A 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width, channels]``
            tensor.
        offset_height: The top row of the box, ``>= 0``.
        offset_width: The left column of the box, ``>= 0``.
        target_height: The box's height, ``> 0``.
        target_width: The box's width, ``> 0``.

    Returns:
        A tensor ``[target_height, target_width, channels]`` (batched if ``image`` is).

    Raises:
        ValueError: for a negative offset, an empty box, or a box that leaves the image.

    Gradient: the upstream gradient in the box, zeros elsewhere.

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.range(16.0), [4, 4, 1])
    >>> ft.image.crop_to_bounding_box(x, 1, 2, 2, 2)[:, :, 0].numpy()
    array([[ 6.,  7.],
           [10., 11.]], dtype=float32)
    """
    op = "crop_to_bounding_box"
    x = image_tensor(op, image)
    top, left, height, width = _bounding_box_args(
        op, offset_height, offset_width, target_height, target_width
    )
    if top + height > x.shape[-3] or left + width > x.shape[-2]:
        raise ValueError(
            f"{op}: the box [{top}:{top + height}, {left}:{left + width}] leaves the image of "
            f"height {x.shape[-3]} and width {x.shape[-2]}"
        )
    return x[..., top : top + height, left : left + width, :]


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Pads ``image`` with zeros to ``[target_height, target_width]``, placing it at the offsets.

    Args:
        image: A 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width, channels]``
            tensor.
        offset_height: Rows of zeros above the image, ``>= 0``.
        offset_width: Columns of zeros left of the image, ``>= 0``.
        target_height: The height of the result, at least ``offset_height + height``.
        target_width: The width of the result, at least ``offset_width + width``.

    Returns:
        A tensor ``[target_height, target_width, channels]`` (batched if ``image`` is).

    Raises:
        ValueError: for a negative offset or a target too small for the image.

    Gradient: the upstream gradient at the image's position.

    >>> import ferrotape as ft
    >>> ft.image.pad_to_bounding_box(ft.ones([1, 1, 1]), 1, 0, 3, 2)[:, :, 0].numpy()
    array([[0., 0.],
           [1., 0.],
           [0., 0.]], dtype=float32)
    """
    op = "pad_to_bounding_box"
    x = image_tensor(op, image)
    top, left, height, width = _bounding_box_args(
        op, offset_height, offset_width, target_height, target_width
    )
    bottom, right = height - top - x.shape[-3], width - left - x.shape[-2]
    if bottom < 0 or right < 0:
        raise ValueError(
            f"{op}: the image of height {x.shape[-3]} and width {x.shape[-2]} at offset "
            f"({top}, {left}) does not fit in target {height}x{width}"
        )
    paddings = [[0, 0]] * (x.ndim - 3) + [[top, bottom], [left, right], [0, 0]]
    return _core.pad(x, paddings)


def resize_with_crop_or_pad(image, target_height, target_width):
    """Centrally crops or zero-pads ``image`` to ``[target_height, target_width]``.

    Each axis is cropped when it is longer than the target and padded when it is shorter,
    with the extra row or column (for an odd difference) at the bottom or right.

    Args:
        image: A 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width, channels]``
            tensor.
        target_height: The height of the result, ``> 0``.
        target_width: The width of the result, ``> 0``.

    Returns:
        A tensor ``[target_height, target_width, channels]`` (batched if ``image`` is).

    Gradient: the upstream gradient at the kept pixels.

    >>> import ferrotape as ft
    >>> ft.image.resize_with_crop_or_pad(ft.ones([4, 2, 1]), 2, 4)[:, :, 0].numpy()
    array([[0., 1., 1., 0.],
           [0., 1., 1., 0.]], dtype=float32)
    """
    op = "resize_with_crop_or_pad"
    x, was_batched = batched(op, image)
    target_height = as_int(op, "target_height", target_height, 1)
    target_width = as_int(op, "target_width", target_width, 1)
    height, width = x.shape[1], x.shape[2]
    crop_top, crop_left = max((height - target_height) // 2, 0), max((width - target_width) // 2, 0)
    pad_top, pad_left = max((target_height - height) // 2, 0), max((target_width - width) // 2, 0)
    cropped = crop_to_bounding_box(
        x, crop_top, crop_left, min(target_height, height), min(target_width, width)
    )
    padded = pad_to_bounding_box(cropped, pad_top, pad_left, target_height, target_width)
    return unbatch(padded, was_batched)


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """Every ``sizes`` patch of ``images``, flattened into the depth axis.

    Computed as a convolution with an identity filter, so patches are ``[rows, cols, channels]``
    flattened in that order, as in TensorFlow.

    Args:
        images: A 4-D tensor ``[batch, height, width, channels]``.
        sizes: ``[1, size_rows, size_cols, 1]``.
        strides: ``[1, stride_rows, stride_cols, 1]``: the step between patch starts.
        rates: ``[1, rate_rows, rate_cols, 1]``: the step between a patch's pixels (dilation).
        padding: ``"VALID"`` or ``"SAME"`` (zeros outside the image).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor ``[batch, out_rows, out_cols, size_rows * size_cols * channels]``.

    Gradient: the upstream gradient summed back onto the pixels each patch read.

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.range(16.0), [1, 4, 4, 1])
    >>> patches = ft.image.extract_patches(x, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
    >>> patches[0, 0, 0].numpy()
    array([0., 1., 4., 5.], dtype=float32)
    """
    del name
    from .. import nn
    from .._nn_conv import _same_padding
    from ..nn import _spatial

    op = "extract_patches"
    x = image_tensor(op, images, ranks=(4,))
    rows, cols = _spatial(op, "sizes", sizes)
    steps, gaps = _spatial(op, "strides", strides), _spatial(op, "rates", rates)
    depth = rows * cols * x.shape[-1]
    identity = _core.reshape(_core.eye(depth, dtype=x.dtype), [rows, cols, x.shape[-1], depth])
    if max(steps) == 1 or max(gaps) == 1:
        return nn.conv2d(x, identity, steps, padding, dilations=gaps)
    # conv2d takes strides or dilations, not both: pad as the strided op would, take every
    # patch, then keep every stride-th one.
    if padding == "SAME":
        pads = [
            _same_padding(x.shape[i + 1], k, s, d)
            for i, (k, s, d) in enumerate(zip((rows, cols), steps, gaps, strict=True))
        ]
        x = _core.pad(x, [[0, 0], list(pads[0]), list(pads[1]), [0, 0]])
    patches = nn.conv2d(x, identity, 1, "VALID", dilations=gaps)
    return patches[:, :: steps[0], :: steps[1], :]


def extract_glimpse(
    input,  # noqa: A002
    size,
    offsets,
    centered=True,
    normalized=True,
    noise="uniform",
    name=None,
):
    """Cuts a ``size`` window out of each image at its offset; the part of a window outside its
    image is filled with noise.

    ``offsets`` are ``(y, x)`` per image. Normalized offsets are fractions of the image's height
    and width; centered ones count from the image's center (from -1 to 1 when also
    normalized). Normalized and centered offsets place the window's center, all others its
    top-left corner; the corner is truncated toward zero to whole pixels, as in TensorFlow.

    Args:
        input: A 4-D ``[batch, height, width, channels]`` float tensor.
        size: ``[glimpse_height, glimpse_width]``.
        offsets: ``[batch, 2]`` floats ``(y, x)``.
        centered: Whether offsets count from the center.
        normalized: Whether offsets are fractions of the image size.
        noise: What fills the outside: ``"uniform"`` (between the image's minimum and maximum),
            ``"gaussian"`` (each channel's mean and deviation, clipped to its range) or
            ``"zero"``.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``[batch, glimpse_height, glimpse_width, channels]``, float32.

    Raises:
        ValueError: for a bad rank, size, offsets shape or noise.

    Not differentiable (a copy at data-dependent positions, as TensorFlow's kernel).

    >>> import numpy as np, ferrotape as ft
    >>> x = np.arange(9.0, dtype=np.float32).reshape(1, 3, 3, 1)
    >>> ft.image.extract_glimpse(x, [2, 2], [[1.0, 1.0]], centered=False, normalized=False,
    ...                          noise="zero")[0, :, :, 0].numpy()
    array([[4., 5.],
           [7., 8.]], dtype=float32)
    """
    del name
    import numpy as np

    from ..random import _op_rng  # ft.random loads after ft.image

    op = "extract_glimpse"
    images = image_tensor(op, input, ranks=(4,)).numpy().astype(np.float32)
    # size is int32 (a Python int past 32 bits wraps, as TensorFlow converts it); 0 is allowed.
    if not _core.is_tensor(size):
        size = _core.convert_to_tensor(size, dtype="int32")
    sizes = np.asarray(size.numpy()).reshape(-1)
    if sizes.shape != (2,):
        raise ValueError(f"{op}: size must be 2 ints [height, width], received {sizes.tolist()}")
    height, width = (as_int(op, "size", v, minimum=0) for v in sizes)
    offsets = _core.convert_to_tensor(offsets).numpy().astype(np.float32)
    if offsets.shape != (images.shape[0], 2):
        raise ValueError(
            f"{op}: offsets must be [batch, 2] = [{images.shape[0]}, 2]; received "
            f"{list(offsets.shape)}"
        )
    if noise not in ("uniform", "gaussian", "zero"):
        raise ValueError(f"{op}: noise must be 'uniform', 'gaussian' or 'zero'; received {noise!r}")
    rng = None if noise == "zero" else _op_rng(None)
    check_host_size(op, [images.shape[0], height, width, images.shape[3]], "float32")
    out = np.zeros((images.shape[0], height, width, images.shape[3]), dtype=np.float32)
    for b, (y, x) in enumerate(offsets.tolist()):
        image = images[b]
        rows, cols = image.shape[:2]
        if normalized:
            y, x = y * rows, x * cols
            if centered:
                y, x = y / 2 + rows / 2 - height / 2, x / 2 + cols / 2 - width / 2
        elif centered:
            y, x = y + rows / 2, x + cols / 2
        if not (math.isfinite(y) and math.isfinite(x)):  # nowhere: TensorFlow copies nothing
            y = x = -float(height + width + rows + cols)
        top, left = int(y), int(x)  # toward zero, as the C++ cast
        inside = top >= 0 and left >= 0 and top + height < rows and left + width < cols
        if not inside and noise == "uniform":
            out[b] = rng.uniform(image.min(), image.max(), out[b].shape)
        elif not inside and noise == "gaussian":
            mean, sigma = image.mean(axis=(0, 1)), image.std(axis=(0, 1))
            fill = mean + rng.standard_normal(out[b].shape) * sigma
            out[b] = np.clip(fill, image.min(axis=(0, 1)), image.max(axis=(0, 1)))
        r0, r1 = max(top, 0), min(top + height, rows)
        c0, c1 = max(left, 0), min(left + width, cols)
        if r0 < r1 and c0 < c1:
            out[b, r0 - top : r1 - top, c0 - left : c1 - left] = image[r0:r1, c0:c1]
    return _core.constant(out)
