"""``ft.norm``: vector and matrix norms composed from differentiable ops."""

import math
import reprlib

import numpy as np

from . import _core


def _vector_norm(x, ord, axis, keepdims):
    if isinstance(ord, bool):
        raise ValueError(
            f"norm: ord must be 'euclidean', 'fro', inf or a positive number, got {ord!r}"
        )
    if ord == math.inf and _is_empty(x):
        ord = 1  # the max of nothing is -inf; a norm of nothing is 0 (both sums are 0)
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


def _is_empty(x):
    return 0 in x.shape


def _axis(x, axis):
    """A checked axis (in range, as a non-negative int)."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise ValueError(
            f"norm: axis must be None, an int or a pair of distinct ints, received "
            f"axis={reprlib.repr(axis)}"
        )
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(
            f"norm: axis {axis} is out of range for a tensor of rank {x.ndim} (shape "
            f"{list(x.shape)})"
        )
    return int(axis) % x.ndim


def _matrix_norm(x, ord, axis, keepdims):
    rows, cols = (_axis(x, a) for a in axis)
    if rows == cols:
        raise ValueError(f"norm: the two axes must be distinct, received axis={tuple(axis)}")
    if ord in (1, 1.0, math.inf) and _is_empty(x):
        # Column or row sums of nothing have no max (-inf); the norm of nothing is 0.
        return _core.reduce_sum(_core.abs(x), [rows, cols], keepdims=keepdims)
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
    """The norm of ``tensor``: a vector norm over all elements or one axis, or a matrix norm.

    Vector norms: ``'euclidean'`` (2), ``1``, ``inf`` or any ``p > 0``. Matrix norms, over a
    pair of axes: ``'fro'``/``'euclidean'``, ``1`` (largest column sum), ``inf`` (largest row
    sum).

    Args:
        tensor: A floating tensor.
        ord: The order of the norm, as above.
        axis: ``None`` (every element as one vector), an int, or a pair of distinct ints for a
            matrix norm.
        keepdims: If true, the reduced axes are kept with length 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``tensor``'s dtype.

    Raises:
        TypeError: if ``tensor`` is not floating.
        ValueError: for an unsupported ``ord`` or a bad ``axis``.

    Gradient: of the euclidean norm, ``x / norm`` (NaN at 0, as in TensorFlow).

    >>> import ferrotape as ft
    >>> ft.norm(ft.constant([3.0, 4.0])).numpy()
    np.float32(5.0)
    >>> ft.norm(ft.constant([[1.0, -2.0], [3.0, 4.0]]), ord=1, axis=[0, 1]).numpy()
    np.float32(6.0)
    """
    del name
    x = _core.convert_to_tensor(tensor)
    if not x.dtype.is_floating:
        raise TypeError(f"norm: expected a floating-point tensor, received dtype {x.dtype.name}")
    keepdims = bool(keepdims)
    if isinstance(axis, (list, tuple)) and len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    if isinstance(axis, (list, tuple)) and len(axis) == 1:
        axis = axis[0]
    elif isinstance(axis, (list, tuple)):
        raise ValueError(
            f"norm: axis must be None, an int or a pair of distinct ints, received "
            f"axis={reprlib.repr(axis)}"
        )
    if axis is not None:
        axis = _axis(x, axis)
    return _vector_norm(x, ord, axis, keepdims)
