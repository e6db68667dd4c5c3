"""``ft.norm``: vector and matrix norms composed from differentiable ops."""

import math

from . import _core


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """The norm of ``tensor`` over ``axis`` (all elements by default): ``'euclidean'``/``2``/
    ``'fro'`` (square root of the sum of squares; its gradient at 0 is NaN, as TensorFlow's),
    ``1`` (sum of magnitudes) or ``inf`` (largest magnitude)."""
    del name
    tensor = _core.convert_to_tensor(tensor)
    keepdims = bool(keepdims)
    if ord in ("euclidean", "fro", 2, 2.0):
        return _core.sqrt(_core.reduce_sum(tensor * tensor, axis, keepdims=keepdims))
    if ord in (1, 1.0):
        return _core.reduce_sum(_core.abs(tensor), axis, keepdims=keepdims)
    if ord == math.inf:
        return _core.reduce_max(_core.abs(tensor), axis, keepdims=keepdims)
    raise ValueError(f"norm: ord must be 'euclidean', 'fro', 1, 2 or inf, received {ord!r}")
