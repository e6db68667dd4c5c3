"""Random augmentations: each draws its parameters (with ``ft.random``'s seed contract, or from a
stateless seed pair) and applies the matching deterministic op, which carries the gradient."""

import math
import operator

import numpy as np

from .. import _core
from .. import random as _random
from ..polymorphic_function import computed_on_host_when_traced
from ._common import as_float, image_tensor
from .color import adjust_brightness, adjust_contrast, adjust_hue, adjust_saturation
from .geometry import flip_left_right, flip_up_down


def _stateful(op, seed):
    # An op seed of any size or sign reduces as TensorFlow's do (see ``ft.random.set_seed``).
    seed = _random._seed_int(op, seed)

    def draw(shape, minval, maxval):
        if minval == maxval:  # An empty range (max_delta=0) has one value to draw.
            return _core.fill(shape, float(minval))
        return _core.random.uniform(shape, minval=minval, maxval=maxval, seed=seed)

    return draw


def _stateless(seed):
    def draw(shape, minval, maxval):
        return _random.stateless_uniform(shape, seed, minval=minval, maxval=maxval)

    return draw


def _random_flip(op, image, flip, draw):
    x = image_tensor(op, image)
    if x.ndim == 3:
        return flip(x) if float(draw([], 0.0, 1.0)) < 0.5 else x
    # One coin per image of the batch.
    heads = _core.reshape(draw([x.shape[0]], 0.0, 1.0) < 0.5, [-1, 1, 1, 1])
    return _core.select(_core.broadcast_to(heads, x.shape), flip(x), x)


def random_flip_left_right(image, seed=None):
    """Flips ``image`` left to right with probability 1/2 (each image of a batch on its own).

    Args:
        image: A 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width, channels]``
            tensor.
        seed: An int op seed (see ``ft.random.set_seed``).

    Returns:
        A tensor of ``image``'s shape and dtype.

    >>> import ferrotape as ft
    >>> ft.image.random_flip_left_right(ft.zeros([2, 2, 1]), seed=1).shape
    TensorShape([2, 2, 1])
    """
    return _random_flip(
        "random_flip_left_right", image, flip_left_right, _stateful("random_flip_left_right", seed)
    )


def random_flip_up_down(image, seed=None):
    """Flips ``image`` upside down with probability 1/2 (each image of a batch on its own).

    Args:
        image: A 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width, channels]``
            tensor.
        seed: An int op seed (see ``ft.random.set_seed``).

    Returns:
        A tensor of ``image``'s shape and dtype.

    >>> import ferrotape as ft
    >>> ft.image.random_flip_up_down(ft.zeros([2, 2, 1]), seed=1).shape
    TensorShape([2, 2, 1])
    """
    return _random_flip(
        "random_flip_up_down", image, flip_up_down, _stateful("random_flip_up_down", seed)
    )


@computed_on_host_when_traced("seed")
def stateless_random_flip_left_right(image, seed):
    """``random_flip_left_right`` with its coins a pure function of ``seed``.

    Args:
        image: A 3-D or 4-D image tensor.
        seed: A shape ``[2]`` int tensor (see ``ft.random.stateless_uniform``).

    Returns:
        A tensor of ``image``'s shape and dtype.

    >>> import ferrotape as ft
    >>> ft.image.stateless_random_flip_left_right(ft.zeros([2, 2, 1]), [1, 2]).shape
    TensorShape([2, 2, 1])
    """
    op = "stateless_random_flip_left_right"
    return _random_flip(op, image, flip_left_right, _stateless(seed))


@computed_on_host_when_traced("seed")
def stateless_random_flip_up_down(image, seed):
    """``random_flip_up_down`` with its coins a pure function of ``seed``.

    Args:
        image: A 3-D or 4-D image tensor.
        seed: A shape ``[2]`` int tensor (see ``ft.random.stateless_uniform``).

    Returns:
        A tensor of ``image``'s shape and dtype.

    >>> import ferrotape as ft
    >>> ft.image.stateless_random_flip_up_down(ft.zeros([2, 2, 1]), [1, 2]).shape
    TensorShape([2, 2, 1])
    """
    return _random_flip("stateless_random_flip_up_down", image, flip_up_down, _stateless(seed))


def _max_delta(op, max_delta, limit=None):
    value = as_float(max_delta)
    if value < 0:
        raise ValueError(f"{op}: max_delta must be non-negative, received {max_delta}")
    if limit is not None and value > limit:
        raise ValueError(f"{op}: max_delta must be <= {limit}, received {max_delta}")
    return value


def _bounds(op, lower, upper):
    lower, upper = as_float(lower), as_float(upper)
    if upper <= lower:
        raise ValueError(f"{op}: upper must be > lower, received lower={lower}, upper={upper}")
    if lower < 0:
        raise ValueError(f"{op}: lower must be non-negative, received lower={lower}")
    return lower, upper


def random_brightness(image, max_delta, seed=None):
    """``adjust_brightness`` by a delta drawn uniformly from ``[-max_delta, max_delta)``.

    Args:
        image: An image tensor.
        max_delta: A non-negative float.
        seed: An int op seed (see ``ft.random.set_seed``).

    Returns:
        The adjusted image (one delta for the whole batch).

    Raises:
        ValueError: if ``max_delta`` is negative.

    >>> import ferrotape as ft
    >>> ft.image.random_brightness(ft.zeros([1, 1, 1]), 0.0, seed=1).numpy().item()
    0.0
    """
    delta = _max_delta("random_brightness", max_delta)
    return adjust_brightness(image, _stateful("random_brightness", seed)([], -delta, delta))


@computed_on_host_when_traced("seed")
def stateless_random_brightness(image, max_delta, seed):
    """``random_brightness`` with its delta a pure function of ``seed``.

    Args:
        image: An image tensor.
        max_delta: A non-negative float.
        seed: A shape ``[2]`` int tensor.

    Returns:
        The adjusted image.

    >>> import ferrotape as ft
    >>> ft.image.stateless_random_brightness(ft.zeros([1, 1, 1]), 0.0, [1, 2]).numpy().item()
    0.0
    """
    delta = _max_delta("stateless_random_brightness", max_delta)
    return adjust_brightness(image, _stateless(seed)([], -delta, delta))


def random_contrast(image, lower, upper, seed=None):
    """``adjust_contrast`` by a factor drawn uniformly from ``[lower, upper)``.

    Args:
        image: An image tensor ``[..., height, width, channels]``.
        lower: The smallest factor, non-negative.
        upper: The largest factor, above ``lower``.
        seed: An int op seed (see ``ft.random.set_seed``).

    Returns:
        The adjusted image.

    Raises:
        ValueError: unless ``0 <= lower < upper``.

    >>> import ferrotape as ft
    >>> ft.image.random_contrast(ft.ones([2, 2, 1]), 0.5, 1.5, seed=1).numpy().ravel()
    array([1., 1., 1., 1.], dtype=float32)
    """
    lower, upper = _bounds("random_contrast", lower, upper)
    return adjust_contrast(image, _stateful("random_contrast", seed)([], lower, upper))


@computed_on_host_when_traced("seed")
def stateless_random_contrast(image, lower, upper, seed):
    """``random_contrast`` with its factor a pure function of ``seed``.

    Args:
        image: An image tensor ``[..., height, width, channels]``.
        lower: The smallest factor, non-negative.
        upper: The largest factor, above ``lower``.
        seed: A shape ``[2]`` int tensor.

    Returns:
        The adjusted image.

    >>> import ferrotape as ft
    >>> ft.image.stateless_random_contrast(ft.ones([2, 2, 1]), 0.5, 1.5, [1, 2]).shape
    TensorShape([2, 2, 1])
    """
    lower, upper = _bounds("stateless_random_contrast", lower, upper)
    return adjust_contrast(image, _stateless(seed)([], lower, upper))


def random_saturation(image, lower, upper, seed=None):
    """``adjust_saturation`` by a factor drawn uniformly from ``[lower, upper)``.

    Args:
        image: A floating RGB tensor (last dimension 3).
        lower: The smallest factor, non-negative.
        upper: The largest factor, above ``lower``.
        seed: An int op seed (see ``ft.random.set_seed``).

    Returns:
        The adjusted image.

    Raises:
        ValueError: unless ``0 <= lower < upper``.

    >>> import ferrotape as ft
    >>> ft.image.random_saturation(ft.ones([1, 1, 3]), 0.5, 1.5, seed=1).shape
    TensorShape([1, 1, 3])
    """
    lower, upper = _bounds("random_saturation", lower, upper)
    return adjust_saturation(image, _stateful("random_saturation", seed)([], lower, upper))


@computed_on_host_when_traced("seed")
def stateless_random_saturation(image, lower, upper, seed=None):
    """``random_saturation`` with its factor a pure function of ``seed``.

    Args:
        image: A floating RGB tensor (last dimension 3).
        lower: The smallest factor, non-negative.
        upper: The largest factor, above ``lower``.
        seed: A shape ``[2]`` int tensor.

    Returns:
        The adjusted image.

    >>> import ferrotape as ft
    >>> ft.image.stateless_random_saturation(ft.ones([1, 1, 3]), 0.5, 1.5, [1, 2]).shape
    TensorShape([1, 1, 3])
    """
    lower, upper = _bounds("stateless_random_saturation", lower, upper)
    return adjust_saturation(image, _stateless(seed)([], lower, upper))


def random_hue(image, max_delta, seed=None):
    """``adjust_hue`` by a delta drawn uniformly from ``[-max_delta, max_delta)``.

    Args:
        image: A floating RGB tensor (last dimension 3).
        max_delta: A float in ``[0, 0.5]``.
        seed: An int op seed (see ``ft.random.set_seed``).

    Returns:
        The adjusted image.

    Raises:
        ValueError: if ``max_delta`` is outside ``[0, 0.5]``.

    >>> import ferrotape as ft
    >>> ft.image.random_hue(ft.ones([1, 1, 3]), 0.2, seed=1).shape
    TensorShape([1, 1, 3])
    """
    delta = _max_delta("random_hue", max_delta, 0.5)
    return adjust_hue(image, _stateful("random_hue", seed)([], -delta, delta))


@computed_on_host_when_traced("seed")
def stateless_random_hue(image, max_delta, seed):
    """``random_hue`` with its delta a pure function of ``seed``.

    Args:
        image: A floating RGB tensor (last dimension 3).
        max_delta: A float in ``[0, 0.5]``.
        seed: A shape ``[2]`` int tensor.

    Returns:
        The adjusted image.

    >>> import ferrotape as ft
    >>> ft.image.stateless_random_hue(ft.ones([1, 1, 3]), 0.2, [1, 2]).shape
    TensorShape([1, 1, 3])
    """
    delta = _max_delta("stateless_random_hue", max_delta, 0.5)
    return adjust_hue(image, _stateless(seed)([], -delta, delta))


def _random_crop(op, value, size, offsets):
    x = _core.convert_to_tensor(value)
    size = np.asarray(size.numpy() if hasattr(size, "numpy") else size)
    if size.shape != (x.ndim,) or size.dtype.kind not in "iu":
        raise ValueError(
            f"{op}: size must hold one int per dimension of value ({x.ndim}), received "
            f"{size.tolist()!r}"
        )
    limit = np.asarray(x.shape) - size + 1
    if (size < 0).any() or (limit < 1).any():
        raise ValueError(
            f"{op}: size {size.tolist()} must be non-negative and fit in value's shape "
            f"{list(x.shape)}"
        )
    begin = offsets(x.ndim) % limit
    return _core.slice(x, [int(b) for b in begin], [int(s) for s in size])


def random_crop(value, size, seed=None, name=None):
    """A crop of ``value`` of shape ``size`` at a uniformly random offset.

    Args:
        value: A tensor of any rank (an image, or a batch of them).
        size: One int per dimension of ``value``, each at most that dimension.
        seed: An int op seed (see ``ft.random.set_seed``).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``size`` and ``value``'s dtype.

    Raises:
        ValueError: if ``size`` does not fit in ``value``.

    Gradient: the upstream gradient in the crop, zeros elsewhere.

    >>> import ferrotape as ft
    >>> ft.image.random_crop(ft.zeros([4, 4, 3]), [2, 2, 3], seed=1).shape
    TensorShape([2, 2, 3])
    """
    del name

    seed = _random._seed_int("random_crop", seed)

    def offsets(n):
        return _core.random.uniform([n], maxval=2**31 - 1, dtype="int32", seed=seed).numpy()

    return _random_crop("random_crop", value, size, offsets)


@computed_on_host_when_traced("seed")
def stateless_random_crop(value, size, seed, name=None):
    """``random_crop`` with its offset a pure function of ``seed``.

    Args:
        value: A tensor of any rank.
        size: One int per dimension of ``value``.
        seed: A shape ``[2]`` int tensor.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``size``.

    >>> import ferrotape as ft
    >>> ft.image.stateless_random_crop(ft.zeros([4, 4, 3]), [2, 2, 3], [1, 2]).shape
    TensorShape([2, 2, 3])
    """
    del name

    def offsets(n):
        return _random.stateless_uniform([n], seed, maxval=2**31 - 1, dtype="int32").numpy()

    return _random_crop("stateless_random_crop", value, size, offsets)


def _random_crop_box(rng, height, width, aspect, min_area, max_area):
    """One crop of aspect ratio ``aspect`` with an area in ``[min_area, max_area]``, or None
    (the rules of TensorFlow's kernel: a height drawn between the bounds the areas imply)."""
    min_h = int(round(math.sqrt(min_area / aspect)))
    max_h = int(round(math.sqrt(max_area / aspect)))
    if round(max_h * aspect) > width:
        max_h = int((width + 0.5 - 1e-7) / aspect)  # the tallest crop that still fits across
    max_h = min(max_h, height)
    min_h = min(min_h, max_h)
    h = min_h + int(rng.integers(0, max_h - min_h + 1))
    w = int(round(h * aspect))
    if w * h < min_area:
        h += 1
        w = int(round(h * aspect))
    if not (min_area <= w * h <= max_area) or not (0 < w <= width) or not (0 < h <= height):
        return None
    return int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1)), h, w


def _covers(crop, boxes, height, width, fraction):
    """Whether the crop covers at least ``fraction`` of one of the (normalized) boxes."""
    y, x, h, w = crop
    for y1, x1, y2, x2 in boxes:
        by1, by2 = sorted((y1 * height, y2 * height))
        bx1, bx2 = sorted((x1 * width, x2 * width))
        area = (by2 - by1) * (bx2 - bx1)
        inter = max(0.0, min(by2, y + h) - max(by1, y)) * max(0.0, min(bx2, x + w) - max(bx1, x))
        if area > 0 and inter / area >= fraction:
            return True
    return False


def _sample_distorted_bounding_box(
    op,
    rng,
    image_size,
    bounding_boxes,
    min_object_covered,
    aspect_ratio_range,
    area_range,
    max_attempts,
    use_image_if_no_bounding_boxes,
):
    size = np.asarray(image_size.numpy() if hasattr(image_size, "numpy") else image_size)
    boxes = np.asarray(
        bounding_boxes.numpy() if hasattr(bounding_boxes, "numpy") else bounding_boxes, float
    ).reshape(-1, 4)
    if size.shape != (3,) or size.dtype.kind not in "iu" or (size[:2] <= 0).any():
        raise ValueError(f"{op}: image_size must be 3 ints [height, width, channels]")
    if not boxes.size:
        if not use_image_if_no_bounding_boxes:
            raise ValueError(
                f"{op}: no bounding boxes given and use_image_if_no_bounding_boxes is false"
            )
        boxes = np.array([[0.0, 0.0, 1.0, 1.0]])
    height, width = int(size[0]), int(size[1])
    low_ar, high_ar = (0.75, 1.33) if aspect_ratio_range is None else map(float, aspect_ratio_range)
    low_area, high_area = (0.05, 1.0) if area_range is None else map(float, area_range)
    crop = None
    for _ in range(100 if max_attempts is None else operator.index(max_attempts)):
        aspect = low_ar + (high_ar - low_ar) * rng.random()
        candidate = _random_crop_box(
            rng, height, width, aspect, low_area * height * width, high_area * height * width
        )
        if candidate and _covers(candidate, boxes, height, width, float(min_object_covered)):
            crop = candidate
            break
    y, x, h, w = crop or (0, 0, height, width)
    dtype = _core.convert_to_tensor(image_size).dtype
    begin = _core.cast(_core.constant(np.array([y, x, 0])), dtype)
    extent = _core.cast(_core.constant(np.array([h, w, -1])), dtype)
    box = np.array([[[y / height, x / width, (y + h) / height, (x + w) / width]]], np.float32)
    return begin, extent, _core.constant(box)


def sample_distorted_bounding_box(
    image_size,
    bounding_boxes,
    seed=0,
    min_object_covered=0.1,
    aspect_ratio_range=None,
    area_range=None,
    max_attempts=None,
    use_image_if_no_bounding_boxes=None,
    name=None,
):
    """A random crop of an image that covers enough of one of ``bounding_boxes`` (Inception-style
    data augmentation).

    Up to ``max_attempts`` times, draws an aspect ratio from ``aspect_ratio_range`` and an area
    from ``area_range`` (fractions of the image) and places the crop uniformly; the first crop
    covering at least ``min_object_covered`` of some box wins, else the whole image. The
    candidate draws are TensorFlow's rules with numpy's generator, so the crops differ from
    TensorFlow's.

    Args:
        image_size: 3 ints ``[height, width, channels]``.
        bounding_boxes: A float tensor ``[batch, N, 4]`` of normalized ``[y1, x1, y2, x2]``.
        seed: An int op seed; 0 means none (see ``ft.random.set_seed``).
        min_object_covered: The fraction of some box the crop must cover.
        aspect_ratio_range: ``(low, high)`` width / height; ``(0.75, 1.33)`` when ``None``.
        area_range: ``(low, high)`` fractions of the image; ``(0.05, 1.0)`` when ``None``.
        max_attempts: How many crops to try; 100 when ``None``.
        use_image_if_no_bounding_boxes: Use the whole image as the box when none is given.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(begin, size, bboxes)``: ``[y, x, 0]`` and ``[h, w, -1]`` for ``ft.slice``, and the
        crop as a normalized ``[1, 1, 4]`` box.

    >>> import ferrotape as ft
    >>> begin, size, box = ft.image.sample_distorted_bounding_box(
    ...     [40, 60, 3], [[[0.1, 0.1, 0.9, 0.9]]], seed=1)
    >>> ft.slice(ft.zeros([40, 60, 3]), begin, size).shape[2]
    3
    """
    del name
    rng = _random._op_rng(seed or None)
    return _sample_distorted_bounding_box(
        "sample_distorted_bounding_box",
        rng,
        image_size,
        bounding_boxes,
        min_object_covered,
        aspect_ratio_range,
        area_range,
        max_attempts,
        use_image_if_no_bounding_boxes,
    )


@computed_on_host_when_traced("seed")
def stateless_sample_distorted_bounding_box(
    image_size,
    bounding_boxes,
    seed,
    min_object_covered=0.1,
    aspect_ratio_range=None,
    area_range=None,
    max_attempts=None,
    use_image_if_no_bounding_boxes=None,
    name=None,
):
    """``sample_distorted_bounding_box`` with its draws a pure function of ``seed``.

    Args:
        image_size: 3 ints ``[height, width, channels]``.
        bounding_boxes: A float tensor ``[batch, N, 4]`` of normalized boxes.
        seed: A shape ``[2]`` int tensor.
        min_object_covered: The fraction of some box the crop must cover.
        aspect_ratio_range: ``(low, high)`` width / height.
        area_range: ``(low, high)`` fractions of the image.
        max_attempts: How many crops to try.
        use_image_if_no_bounding_boxes: Use the whole image when no box is given.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(begin, size, bboxes)`` as in ``sample_distorted_bounding_box``.

    >>> import ferrotape as ft
    >>> a = ft.image.stateless_sample_distorted_bounding_box([40, 60, 3], [[[0, 0, 1, 1]]], [1, 2])
    >>> b = ft.image.stateless_sample_distorted_bounding_box([40, 60, 3], [[[0, 0, 1, 1]]], [1, 2])
    >>> bool((a[0].numpy() == b[0].numpy()).all())
    True
    """
    del name
    op = "stateless_sample_distorted_bounding_box"
    return _sample_distorted_bounding_box(
        op,
        _random._stateless_rng(op, seed),
        image_size,
        bounding_boxes,
        min_object_covered,
        aspect_ratio_range,
        area_range,
        max_attempts,
        use_image_if_no_bounding_boxes,
    )
