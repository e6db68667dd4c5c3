"""Gradient clipping, composed exactly as TensorFlow composes it (so gradients through the
clipping match TensorFlow's too)."""

from . import _core


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """``t * clip_norm / max(||t||, clip_norm)``: rescales ``t`` to an L2 norm of at most
    ``clip_norm`` (over ``axes``, or all of it). A zero tensor stays zero, with a finite
    gradient (the norm is only taken where the sum of squares is positive)."""
    del name
    t = _core.convert_to_tensor(t)
    l2sum = _core.reduce_sum(t * t, axes, keepdims=True)
    positive = l2sum > 0
    safe = _core.select(positive, l2sum, _core.ones_like(l2sum))
    l2norm = _core.select(positive, _core.sqrt(safe), l2sum)
    clip_norm = _core.cast(clip_norm, t.dtype)
    return _core.identity(t * clip_norm / _core.maximum(l2norm, clip_norm))


def global_norm(t_list, name=None):
    """sqrt(sum of squares of every tensor in ``t_list``); ``None`` entries are skipped."""
    del name
    parts = [_core.reduce_sum(t * t) for t in t_list if t is not None]
    if not parts:
        return _core.constant(0.0)
    return _core.sqrt(_core.add_n(parts))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales every tensor by ``clip_norm / max(global_norm, clip_norm)``; returns the
    clipped list (``None`` entries kept) and the global norm."""
    del name
    t_list = list(t_list)
    norm = global_norm(t_list) if use_norm is None else _core.convert_to_tensor(use_norm)
    one = _core.ones_like(norm)
    clip = _core.cast(clip_norm, norm.dtype)
    scale = clip * _core.minimum(one / norm, one / clip)
    clipped = [
        None if t is None else _core.identity(t * _core.cast(scale, t.dtype)) for t in t_list
    ]
    return clipped, norm
