"""TensorFlow's ``tensor_scatter_nd_*``: a copy of a tensor with the slices that ``indices``
names combined with ``updates``, by ``update``, ``add``, ``sub``, ``min`` or ``max``.

``indices`` is ``[..., k]``: each row names a slice ``tensor[i0, ..., ik-1]``, and ``updates`` is
``indices.shape[:-1] + tensor.shape[k:]``. ``add`` and ``sub`` are ``tensor +/- scatter_nd``;
``update`` selects between ``tensor`` and a ``scatter_nd`` of the winning updates; all three
differentiate through those ops. ``min`` and ``max`` compute their value on the host and carry
TensorFlow's own gradient rule, which splits the gradient evenly among tied candidates.
"""

import numpy as np

from . import _core
from .errors import InvalidArgumentError
from .gradients import custom_gradient


def _checked(op, tensor, indices, updates):
    """The tensor, the indices as a ``[n, k]`` numpy array, the updates, and ``k``."""
    x = _core.convert_to_tensor(tensor)
    idx = np.asarray(indices.numpy() if _core.is_tensor(indices) else indices)
    u = _core.convert_to_tensor(updates, dtype=x.dtype)
    if idx.ndim < 1 or idx.dtype.kind not in "iu" and idx.size:
        raise InvalidArgumentError(
            f"{op}: indices must be an int tensor of rank at least 1, received shape "
            f"{list(idx.shape)} and dtype {idx.dtype}"
        )
    k = idx.shape[-1]
    if k > x.ndim or list(u.shape) != [*idx.shape[:-1], *x.shape[k:]]:
        raise InvalidArgumentError(
            f"{op}: updates must have shape indices.shape[:-1] + tensor.shape[{k}:] = "
            f"{[*idx.shape[:-1], *x.shape[k:]]} (Outer dimensions of indices and update must "
            f"match), received indices {list(idx.shape)}, updates {list(u.shape)} for tensor "
            f"{list(x.shape)}"
        )
    rows = idx.reshape(-1, k).astype(np.int64)
    bad = ((rows < 0) | (rows >= np.asarray(x.shape[:k], dtype=np.int64))).any(axis=1)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise InvalidArgumentError(
            f"{op}: indices[{first}] = {rows[first].tolist()} does not index into shape "
            f"{list(x.shape)}"
        )
    return x, rows, u, k


def _scattered(x, rows, u, k):
    """``scatter_nd`` of the update slices into a zero tensor of ``x``'s shape."""
    flat = _core.reshape(u, [rows.shape[0], *x.shape[k:]])
    return _core.scatter_nd(_core.constant(rows), flat, list(x.shape))


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """``tensor`` with ``updates`` added to the slices ``indices`` names (repeats add up).

    Args:
        tensor: The tensor to copy.
        indices: An int tensor ``[..., k]`` of slice coordinates.
        updates: A tensor ``indices.shape[:-1] + tensor.shape[k:]`` of ``tensor``'s dtype.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``tensor``'s shape and dtype.

    Raises:
        InvalidArgumentError: for an index outside ``tensor`` or mismatched ``updates``.

    Gradient: ``dz`` for ``tensor``; ``gather_nd(dz, indices)`` for ``updates``.

    >>> import ferrotape as ft
    >>> ft.tensor_scatter_nd_add([1, 2, 3, 4], [[1], [1], [3]], [10, 20, 30]).numpy()
    array([ 1, 32,  3, 34], dtype=int32)
    """
    del name
    x, rows, u, k = _checked("tensor_scatter_nd_add", tensor, indices, updates)
    return _core.add(x, _scattered(x, rows, u, k))


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """``tensor`` with ``updates`` subtracted from the slices ``indices`` names.

    Args:
        tensor: The tensor to copy.
        indices: An int tensor ``[..., k]`` of slice coordinates.
        updates: A tensor ``indices.shape[:-1] + tensor.shape[k:]`` of ``tensor``'s dtype.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``tensor``'s shape and dtype.

    Raises:
        InvalidArgumentError: for an index outside ``tensor`` or mismatched ``updates``.

    Gradient: ``dz`` for ``tensor``; ``-gather_nd(dz, indices)`` for ``updates``.

    >>> import ferrotape as ft
    >>> ft.tensor_scatter_nd_sub([1, 2, 3, 4], [[0]], [5]).numpy()
    array([-4,  2,  3,  4], dtype=int32)
    """
    del name
    x, rows, u, k = _checked("tensor_scatter_nd_sub", tensor, indices, updates)
    return _core.subtract(x, _scattered(x, rows, u, k))


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """``tensor`` with the slices ``indices`` names replaced by ``updates`` (a repeated index
    takes its last update, as TensorFlow's CPU kernel does).

    Args:
        tensor: The tensor to copy.
        indices: An int tensor ``[..., k]`` of slice coordinates.
        updates: A tensor ``indices.shape[:-1] + tensor.shape[k:]`` of ``tensor``'s dtype.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``tensor``'s shape and dtype.

    Raises:
        InvalidArgumentError: for an index outside ``tensor`` or mismatched ``updates``.

    Gradient: ``dz`` with the replaced slices zeroed for ``tensor``; ``gather_nd(dz, indices)``
    for ``updates`` (for a repeated index, only its winning update gets it).

    >>> import ferrotape as ft
    >>> ft.tensor_scatter_nd_update([1, 2, 3, 4], [[1], [3]], [9, 8]).numpy()
    array([1, 9, 3, 8], dtype=int32)
    """
    del name
    x, rows, u, k = _checked("tensor_scatter_nd_update", tensor, indices, updates)
    # Keep the last update of each repeated index (scatter_nd would add them up).
    _, last = np.unique(rows[::-1], axis=0, return_index=True)
    keep = np.sort(rows.shape[0] - 1 - last)
    flat = _core.reshape(u, [rows.shape[0], *x.shape[k:]])
    if keep.size != rows.shape[0]:
        flat = _core.gather(flat, _core.constant(keep))
    new = _core.scatter_nd(_core.constant(rows[keep]), flat, list(x.shape))
    hit = np.zeros(x.shape[:k], dtype=bool)
    hit[tuple(rows.T)] = True
    cover = _core.constant(hit.reshape(hit.shape + (1,) * (x.ndim - k)))
    return _core.select(cover, new, x)


def _extreme(op, pick, tensor, indices, updates):
    x, rows, u, k = _checked(op, tensor, indices, updates)
    index = _core.constant(rows)

    @custom_gradient
    def combine(x, u):
        value = x.numpy().copy()
        pick.at(value, tuple(rows.T), u.numpy().reshape(rows.shape[0], *x.shape[k:]))
        z = _core.constant(value)

        def grad(dz):
            # TensorFlow's rule: every candidate equal to the result shares its gradient evenly.
            from_x = _core.cast(_core.equal(x, z), dz.dtype)
            flat_u = _core.reshape(u, [rows.shape[0], *x.shape[k:]])
            from_u = _core.cast(_core.equal(flat_u, _core.gather_nd(z, index)), dz.dtype)
            ties = from_x + _core.scatter_nd(index, from_u, list(x.shape))
            du = _core.gather_nd(dz / ties, index) * from_u
            return dz * from_x / ties, _core.reshape(du, u.shape)

        return z, grad

    return combine(x, u)


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """``tensor`` with each slice ``indices`` names replaced by its element-wise maximum with
    the updates for it.

    Args:
        tensor: The tensor to copy.
        indices: An int tensor ``[..., k]`` of slice coordinates.
        updates: A tensor ``indices.shape[:-1] + tensor.shape[k:]`` of ``tensor``'s dtype.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``tensor``'s shape and dtype.

    Raises:
        InvalidArgumentError: for an index outside ``tensor`` or mismatched ``updates``.

    Gradient: each result element's gradient goes to the candidates (the tensor's element and
    the updates for it) equal to it, split evenly among ties.

    >>> import ferrotape as ft
    >>> ft.tensor_scatter_nd_max([1, 2, 3, 4], [[1], [1]], [0, 8]).numpy()
    array([1, 8, 3, 4], dtype=int32)
    """
    del name
    return _extreme("tensor_scatter_nd_max", np.maximum, tensor, indices, updates)


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """``tensor`` with each slice ``indices`` names replaced by its element-wise minimum with
    the updates for it.

    Args:
        tensor: The tensor to copy.
        indices: An int tensor ``[..., k]`` of slice coordinates.
        updates: A tensor ``indices.shape[:-1] + tensor.shape[k:]`` of ``tensor``'s dtype.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``tensor``'s shape and dtype.

    Raises:
        InvalidArgumentError: for an index outside ``tensor`` or mismatched ``updates``.

    Gradient: each result element's gradient goes to the candidates (the tensor's element and
    the updates for it) equal to it, split evenly among ties.

    >>> import ferrotape as ft
    >>> ft.tensor_scatter_nd_min([1, 2, 3, 4], [[1], [3]], [0, 8]).numpy()
    array([1, 0, 3, 4], dtype=int32)
    """
    del name
    return _extreme("tensor_scatter_nd_min", np.minimum, tensor, indices, updates)
