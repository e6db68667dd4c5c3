"""Random augmentations: each draws its parameters (with ``ft.random``'s seed contract, or from a
stateless seed pair) and applies the matching deterministic op, which carries the gradient."""

import numpy as np

from .. import _core
from .. import random as _random
from ._common import as_float, image_tensor
from .color import adjust_brightness, adjust_contrast, adjust_hue, adjust_saturation
from .geometry import flip_left_right, flip_up_down


def _stateful(seed):
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
    return _random_flip("random_flip_left_right", image, flip_left_right, _stateful(seed))


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
    return _random_flip("random_flip_up_down", image, flip_up_down, _stateful(seed))


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
    return adjust_brightness(image, _stateful(seed)([], -delta, delta))


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
    return adjust_contrast(image, _stateful(seed)([], lower, upper))


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
    return adjust_saturation(image, _stateful(seed)([], lower, upper))


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
    return adjust_hue(image, _stateful(seed)([], -delta, delta))


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

    def offsets(n):
        return _core.random.uniform([n], maxval=2**31 - 1, dtype="int32", seed=seed).numpy()

    return _random_crop("random_crop", value, size, offsets)


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
