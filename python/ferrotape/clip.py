"""Gradient clipping, composed exactly as TensorFlow composes it (so gradients through the
clipping match TensorFlow's too).

``clip_norm`` must be a non-negative number: TensorFlow documents ``clip_norm > 0`` without
checking it, and a negative one silently flips signs (``clip_by_norm``) or turns clipping off
(``clip_by_global_norm``); NaN makes every value NaN. Both are refused here (except for a
value computed inside a traced function, which is not read).
"""

import numpy as np

from . import _core


def _floating(who, t):
    try:
        t = _core.convert_to_tensor(t)
    except TypeError as e:
        raise TypeError(f"{who}: {e}") from None
    if not t.dtype.is_floating:
        raise TypeError(f"{who}: expected a floating-point tensor, received dtype {t.dtype.name}")
    return t


def _check_clip_norm(who, clip_norm, dtype):
    clip_norm = _core.cast(clip_norm, dtype)
    if _core.trace_holds_value(clip_norm):
        # A value computed inside a traced function: reading it would refuse the trace, and a
        # replay would not check it again (TensorFlow does not check it at all).
        return clip_norm
    value = clip_norm.numpy()
    if value.shape != () or not value >= 0:  # not >= catches NaN
        raise ValueError(
            f"{who}: clip_norm must be a non-negative scalar. Received: "
            f"clip_norm={value.tolist()!r}"
        )
    return clip_norm


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Rescales ``t`` so that its L2 norm (over ``axes``, or all of it) is at most ``clip_norm``.

    Computes ``t * clip_norm / max(||t||, clip_norm)``: a tensor already within the bound is
    returned unchanged. A zero tensor stays zero, with a finite gradient.

    Args:
        t: A floating tensor.
        clip_norm: A non-negative scalar, the largest norm allowed.
        axes: The axes the norm is taken over (an int or a list of ints); ``None`` for all.
        name: Ignored (TensorFlow's op name).

    Returns:
        The clipped tensor, of ``t``'s shape and dtype.

    Raises:
        ValueError: if ``clip_norm`` is not a non-negative scalar.
        TypeError: if ``t`` is not floating.

    Gradient: that of the expression above (the norm only where the sum of squares is positive).

    >>> import ferrotape as ft
    >>> ft.clip_by_norm(ft.constant([3.0, 4.0]), 1.0).numpy()
    array([0.6, 0.8], dtype=float32)
    """
    del name
    t = _floating("clip_by_norm", t)
    clip_norm = _check_clip_norm("clip_by_norm", clip_norm, t.dtype)
    l2sum = _core.reduce_sum(t * t, axes, keepdims=True)
    positive = l2sum > 0
    safe = _core.select(positive, l2sum, _core.ones_like(l2sum))
    l2norm = _core.select(positive, _core.sqrt(safe), l2sum)
    return _core.identity(t * clip_norm / _core.maximum(l2norm, clip_norm))


def _tensor_list(who, t_list):
    if isinstance(t_list, (_core.Tensor, _core.Variable, np.ndarray, str)) or not hasattr(
        t_list, "__iter__"
    ):
        raise TypeError(
            f"{who}: t_list should be a list or tuple of tensors, received {type(t_list).__name__}"
        )
    tensors = [None if t is None else _floating(who, t) for t in t_list]
    dtypes = sorted({t.dtype.name for t in tensors if t is not None})
    if len(dtypes) > 1:
        raise TypeError(f"{who}: every tensor must have the same dtype, received {dtypes}")
    return tensors


def global_norm(t_list, name=None):
    """The L2 norm of all the tensors of ``t_list`` together: ``sqrt(sum(sum(t ** 2)))``.

    Args:
        t_list: A list or tuple of floating tensors; ``None`` entries are skipped.
        name: Ignored (TensorFlow's op name).

    Returns:
        A scalar tensor (0.0 for a list of ``None`` entries only).

    Raises:
        TypeError: if ``t_list`` is a single tensor rather than a sequence.

    Gradient: ``t / global_norm`` for each tensor.

    >>> import ferrotape as ft
    >>> from ferrotape.clip import global_norm
    >>> global_norm([ft.constant([3.0]), None, ft.constant([4.0])]).numpy()
    np.float32(5.0)
    """
    del name
    parts = [_core.reduce_sum(t * t) for t in _tensor_list("global_norm", t_list) if t is not None]
    if not parts:
        return _core.constant(0.0)
    return _core.sqrt(_core.add_n(parts))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales every tensor of ``t_list`` by ``clip_norm / max(global_norm, clip_norm)``.

    The tensors keep their relative sizes; together, their L2 norm becomes at most ``clip_norm``.

    Args:
        t_list: A list or tuple of floating tensors; ``None`` entries are kept as ``None``.
        clip_norm: A non-negative scalar, the largest global norm allowed.
        use_norm: The global norm to use instead of computing it, or ``None``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair ``(clipped_list, global_norm)``.

    Raises:
        ValueError: if ``clip_norm`` is not a non-negative scalar.
        TypeError: if ``t_list`` is a single tensor rather than a sequence.

    Gradient: that of the scaling above, for every tensor.

    >>> import ferrotape as ft
    >>> (a, b), norm = ft.clip_by_global_norm([ft.constant([3.0]), ft.constant([4.0])], 1.0)
    >>> a.numpy(), b.numpy(), norm.numpy()
    (array([0.6], dtype=float32), array([0.8], dtype=float32), np.float32(5.0))
    """
    del name
    t_list = _tensor_list("clip_by_global_norm", t_list)
    norm = global_norm(t_list) if use_norm is None else _core.convert_to_tensor(use_norm)
    one = _core.ones_like(norm)
    clip = _check_clip_norm("clip_by_global_norm", clip_norm, norm.dtype)
    scale = clip * _core.minimum(one / norm, one / clip)
    clipped = [
        None if t is None else _core.identity(t * _core.cast(scale, t.dtype)) for t in t_list
    ]
    return clipped, norm
