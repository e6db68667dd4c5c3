"""``ft.norm``: vector and matrix norms composed from differentiable ops."""

import math

from . import _core


def _vector_norm(x, ord, axis, keepdims):
    if ord in ("euclidean", "fro", 2, 2.0):
        return _core.sqrt(_core.reduce_sum(x * x, axis, keepdims=keepdims))
    if ord in (1, 1.0):
        return _core.reduce_sum(_core.abs(x), axis, keepdims=keepdims)
    if ord == math.inf:
        return _core.reduce_max(_core.abs(x), axis, keepdims=keepdims)
    if isinstance(ord, (int, float)) and ord > 0:
        p = float(ord)
        total = _core.reduce_sum(_core.abs(x) ** p, axis, keepdims=keepdims)
        return total ** (1.0 / p)
    raise ValueError(f"norm: ord must be 'euclidean', 'fro', inf or a positive number, got {ord!r}")


def _matrix_norm(x, ord, axis, keepdims):
    rows, cols = (a % x.ndim for a in axis)
    if ord in ("euclidean", "fro"):
        return _core.sqrt(_core.reduce_sum(x * x, [rows, cols], keepdims=keepdims))
    if ord in (1, 1.0, math.inf):
        # 1: the largest column sum of |x|; inf: the largest row sum.
        summed, taken = (rows, cols) if ord != math.inf else (cols, rows)
        sums = _core.reduce_sum(_core.abs(x), summed, keepdims=True)
        out = _core.reduce_max(sums, taken, keepdims=True)
        return out if keepdims else _core.squeeze(out, [rows, cols])
    raise ValueError(f"norm: matrix ord must be 'euclidean', 'fro', 1 or inf, got {ord!r}")


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """The norm of ``tensor``: a vector norm over all elements or one axis (``'euclidean'``,
    ``1``, ``inf``, any ``p > 0``), or a matrix norm over a pair of axes (``'fro'``/
    ``'euclidean'``, ``1``: largest column sum, ``inf``: largest row sum). The euclidean
    norm's gradient at 0 is NaN, as TensorFlow's is."""
    del name
    x = _core.convert_to_tensor(tensor)
    keepdims = bool(keepdims)
    if isinstance(axis, (list, tuple)) and len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    if isinstance(axis, (list, tuple)) and len(axis) == 1:
        axis = axis[0]
    return _vector_norm(x, ord, axis, keepdims)
