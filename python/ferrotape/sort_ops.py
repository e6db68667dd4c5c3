"""Sorting and searching (TensorFlow's ``sort_ops`` and its ``array_ops`` searches): ``sort``,
``argsort``, ``searchsorted``, ``unique``, ``unique_with_counts``, ``unravel_index``, and the
fixed-width histograms (``histogram_fixed_width`` and its ``_bins``).

The order is found on the host (TensorFlow's kernels compute it on the CPU too); the values then
move by a ferrotape ``gather``, so ``sort``'s gradient is the upstream gradient scattered back to
the entries each sorted value came from, and the result lives on the input's device. Inside an
``ft.function`` the order is a host computation of the trace, found again on every replay from
that call's values (``sort``, ``argsort`` and ``top_k`` trace); the other searches read values
into Python, which makes the function run eagerly (it warns once), with the same results.
"""

import collections

import numpy as np

from . import _core
from ._host_memory import check_host_size
from .errors import InvalidArgumentError
from .polymorphic_function import host_computed

Unique = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])

_DIRECTIONS = ("ASCENDING", "DESCENDING")


def sort_order(op, values, axis, direction):
    """``values`` as a tensor with ``axis`` moved last, that permutation, and the stable
    sorting order along the last axis (an int64 tensor; inside a trace, a host computation
    made again on every replay): ``sort``, ``argsort`` and ``ft.nn.top_k`` share it."""
    if direction not in _DIRECTIONS:
        raise ValueError(
            f"{op}: Argument `direction` should be one of ASCENDING, DESCENDING. Received: "
            f"direction={direction}"
        )
    x = _core.convert_to_tensor(values)
    if _core.is_tensor(axis):
        axis = axis.numpy()
        axis = axis.item() if axis.ndim == 0 else axis
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise ValueError(f"{op}: axis must be a scalar int, received axis={axis!r}")
    if not -x.ndim <= axis < x.ndim or x.ndim == 0:
        raise InvalidArgumentError(
            f"{op}: axis must be in [{-x.ndim}, {x.ndim}) for a tensor of shape "
            f"{list(x.shape)}, received axis={axis}"
        )
    axis = int(axis) % x.ndim
    perm = [*range(axis), *range(axis + 1, x.ndim), axis]
    moved = _core.transpose(x, perm) if axis != x.ndim - 1 else x
    order = host_computed(
        lambda m: [_core.constant(_order(m.numpy(), direction).astype(np.int64))], [moved]
    )[0]
    return moved, perm, order


def _order(keys, direction):
    """The stable order that sorts ``keys`` (a numpy array) along its last axis."""
    if direction == "DESCENDING":
        keys = -keys.astype(np.float64) if keys.dtype.kind == "f" else ~keys
    # Ties keep the lower index first in both directions (TensorFlow sorts descending by top_k
    # and ascending by top_k of -x). NaN comes first in both, as ferrotape's top_k takes it for
    # the largest value; TensorFlow's kernel places it by its position, in no fixed order.
    if keys.dtype.kind == "f":
        nan = np.isnan(keys)
        order = np.lexsort((np.where(nan, 0.0, keys), ~nan), axis=-1)
    else:
        order = np.argsort(keys, axis=-1, kind="stable")
    return order


def _inverse(perm):
    return list(np.argsort(perm))


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """The values sorted along ``axis``.

    Args:
        values: A numeric tensor of rank at least 1.
        axis: The axis to sort along (an int or a scalar int tensor).
        direction: ``"ASCENDING"`` or ``"DESCENDING"``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the same shape and dtype, sorted along ``axis``.

    Raises:
        ValueError: for another ``direction`` or a non-int ``axis``.
        InvalidArgumentError: for a scalar or an ``axis`` outside ``[-rank, rank)``.

    Equal values keep their index order, as in TensorFlow; NaN comes first in both directions
    (where TensorFlow puts it depends on its position).

    Gradient: the upstream gradient of each sorted position flows back to the entry that was
    moved there (ties: in index order).

    >>> import ferrotape as ft
    >>> ft.sort(ft.constant([3.0, 1.0, 2.0]), direction="DESCENDING").numpy()
    array([3., 2., 1.], dtype=float32)
    """
    del name
    moved, perm, order = sort_order("sort", values, axis, direction)
    result = _core.gather(moved, order, axis=-1, batch_dims=moved.ndim - 1)
    return _core.transpose(result, _inverse(perm)) if perm[-1] != moved.ndim - 1 else result


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The indices that sort ``values`` along ``axis``: ``gather(values, argsort(values), ...)``
    is ``sort(values)``.

    Args:
        values: A numeric tensor of rank at least 1.
        axis: The axis to sort along (an int or a scalar int tensor).
        direction: ``"ASCENDING"`` or ``"DESCENDING"``.
        stable: Accepted for TensorFlow's signature; the order is always stable (equal values
            keep their index order), which is what TensorFlow's kernel gives too.
        name: Ignored (TensorFlow's op name).

    Returns:
        An int32 tensor of ``values``' shape.

    Raises:
        ValueError: for another ``direction`` or a non-int ``axis``.
        InvalidArgumentError: for a scalar or an ``axis`` outside ``[-rank, rank)``.

    Not differentiable (integer result).

    >>> import ferrotape as ft
    >>> ft.argsort(ft.constant([3.0, 1.0, 2.0, 1.0])).numpy()
    array([1, 3, 2, 0], dtype=int32)
    """
    del stable, name
    moved, perm, order = sort_order("argsort", values, axis, direction)
    del moved
    order = _core.cast(order, "int32")
    return _core.transpose(order, _inverse(perm)) if perm[-1] != len(perm) - 1 else order


def searchsorted(sorted_sequence, values, side="left", out_type="int32", name=None):
    """For each of ``values``, the index where it would go in ``sorted_sequence`` (innermost
    axis) to keep it sorted.

    Args:
        sorted_sequence: An N-D tensor sorted along its last axis.
        values: An N-D tensor with the same leading dimensions (all but the last).
        side: ``"left"`` (the first suitable index) or ``"right"`` (the last).
        out_type: The result dtype, int32 or int64.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``values``' shape and dtype ``out_type``.

    Raises:
        ValueError: for another ``side``.
        InvalidArgumentError: if the leading dimensions differ.

    Not differentiable (integer result).

    >>> import ferrotape as ft
    >>> ft.searchsorted([1.0, 2.0, 3.0], [2.0, 2.5], side="right").numpy()
    array([2, 2], dtype=int32)
    """
    del name
    if side not in ("left", "right"):
        raise ValueError(
            f"searchsorted: Argument `side` must be either 'right' or 'left'. Received: "
            f"`side` = {side!r}."
        )
    seq = _core.convert_to_tensor(sorted_sequence).numpy()
    vals = _core.convert_to_tensor(values).numpy()
    if seq.ndim < 1 or seq.ndim != vals.ndim or seq.shape[:-1] != vals.shape[:-1]:
        raise InvalidArgumentError(
            f"searchsorted: sorted_sequence and values must have the same rank and leading "
            f"dimensions, received shapes {list(seq.shape)} and {list(vals.shape)}"
        )
    rows_seq = seq.reshape(-1, seq.shape[-1])
    rows_val = vals.reshape(-1, vals.shape[-1]) if vals.size else vals.reshape(0, 0)
    found = [np.searchsorted(s, v, side=side) for s, v in zip(rows_seq, rows_val, strict=True)]
    result = np.asarray(found, dtype=np.int64).reshape(vals.shape)
    return _core.cast(_core.constant(result), out_type)


def _unique(op, x, out_idx):
    values = _core.convert_to_tensor(x)
    if values.ndim != 1:
        raise InvalidArgumentError(
            f"{op}: unique expects a 1D vector, received shape {list(values.shape)}"
        )
    host = values.numpy()
    # NaN differs from every value, itself included, as in TensorFlow.
    _, first, inverse, counts = np.unique(
        host, return_index=True, return_inverse=True, return_counts=True, equal_nan=False
    )
    # np.unique sorts; TensorFlow keeps the order of first occurrence.
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    y = _core.gather(values, _core.constant(first[order].astype(np.int64)))
    idx = _core.cast(_core.constant(rank[inverse.reshape(-1)].astype(np.int64)), out_idx)
    return y, idx, _core.cast(_core.constant(counts[order].astype(np.int64)), out_idx)


def unique(x, out_idx="int32", name=None):
    """The distinct values of a 1-D tensor in order of first occurrence, and for each entry of
    ``x`` the position of its value among them.

    Args:
        x: A 1-D tensor.
        out_idx: The dtype of ``idx``, int32 or int64.
        name: Ignored (TensorFlow's op name).

    Returns:
        A named pair ``(y, idx)``: ``y`` the distinct values, ``idx`` with ``x = gather(y, idx)``.

    Raises:
        InvalidArgumentError: if ``x`` is not 1-D.

    Not differentiable (TensorFlow registers no gradient).

    >>> import ferrotape as ft
    >>> y, idx = ft.unique([3, 1, 3, 2])
    >>> y.numpy(), idx.numpy()
    (array([3, 1, 2], dtype=int32), array([0, 1, 0, 2], dtype=int32))
    """
    del name
    y, idx, _ = _unique("unique", x, out_idx)
    return Unique(_core.stop_gradient(y), idx)


def unique_with_counts(x, out_idx="int32", name=None):
    """``unique`` plus how many times each distinct value occurs.

    Args:
        x: A 1-D tensor.
        out_idx: The dtype of ``idx`` and ``count``, int32 or int64.
        name: Ignored (TensorFlow's op name).

    Returns:
        A named triple ``(y, idx, count)``.

    Raises:
        InvalidArgumentError: if ``x`` is not 1-D.

    Not differentiable (TensorFlow registers no gradient).

    >>> import ferrotape as ft
    >>> ft.unique_with_counts([3, 1, 3, 2]).count.numpy()
    array([2, 1, 1], dtype=int32)
    """
    del name
    y, idx, count = _unique("unique_with_counts", x, out_idx)
    return UniqueWithCounts(_core.stop_gradient(y), idx, count)


def unravel_index(indices, dims, name=None):
    """The coordinates of flat ``indices`` in an array of shape ``dims`` (row-major).

    Args:
        indices: An int scalar or 1-D tensor of flat indices in ``[0, prod(dims))``.
        dims: A 1-D int tensor: the shape.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``indices``' dtype, ``[len(dims)]`` for a scalar, else
        ``[len(dims), len(indices)]``.

    Raises:
        InvalidArgumentError: for an index outside ``[0, prod(dims))`` or indices of rank > 1.

    >>> import ferrotape as ft
    >>> ft.unravel_index([22, 41, 37], (7, 6)).numpy()
    array([[3, 6, 6],
           [4, 5, 1]], dtype=int32)
    """
    del name
    flat = _core.convert_to_tensor(indices)
    host = flat.numpy()
    shape = np.asarray(_core.convert_to_tensor(dims).numpy()).reshape(-1)
    if host.ndim > 1 or host.dtype.kind not in "iu":
        raise InvalidArgumentError(
            f"unravel_index: indices must be an int scalar or vector, received shape "
            f"{list(host.shape)} and dtype {host.dtype}"
        )
    if ((host < 0) | (host >= np.prod(shape))).any():
        raise InvalidArgumentError(
            f"unravel_index: index is out of bound as with dims {shape.tolist()}, received "
            f"indices={host.tolist()}"
        )
    coords = np.stack(np.unravel_index(host, shape)) if shape.size else np.zeros((0, *host.shape))
    return _core.cast(_core.constant(coords.astype(np.int64)), flat.dtype)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype="int32", name=None):
    """The bin of each of ``values`` among ``nbins`` equal bins spanning ``value_range``;
    values below the range go to bin 0, values above it to the last bin.

    Args:
        values: A numeric tensor.
        value_range: ``[lo, hi]`` with ``lo < hi``.
        nbins: The number of bins (positive).
        dtype: Accepted for TensorFlow's signature, which ignores it: the bins are int32.
        name: Ignored (TensorFlow's op name).

    Returns:
        An int32 tensor of ``values``' shape:
        ``clip(floor(nbins * (v - lo) / (hi - lo)), 0, nbins - 1)``.

    Raises:
        InvalidArgumentError: for ``lo >= hi`` or ``nbins <= 0``.

    >>> import ferrotape as ft
    >>> ft.histogram_fixed_width_bins([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0], [0.0, 5.0], 5).numpy()
    array([0, 0, 1, 2, 4, 4], dtype=int32)
    """
    del dtype, name
    host = np.asarray(_core.convert_to_tensor(values).numpy(), dtype=np.float64)
    lo, hi = np.asarray(_core.convert_to_tensor(value_range).numpy(), np.float64).reshape(-1)
    nbins = int(np.asarray(nbins.numpy() if _core.is_tensor(nbins) else nbins))
    if not lo < hi:
        raise InvalidArgumentError(
            f"histogram_fixed_width: value_range should satisfy value_range[0] < "
            f"value_range[1], but got {[lo, hi]}"
        )
    if nbins <= 0:
        raise InvalidArgumentError(
            f"histogram_fixed_width: nbins should be a positive number, but got {nbins}"
        )
    if nbins > np.iinfo(np.int32).max:  # TensorFlow's nbins is an int32 scalar, as the bins
        raise InvalidArgumentError(
            f"histogram_fixed_width: nbins must fit in int32, but got {nbins}"
        )
    bins = np.clip(np.floor(nbins * (host - lo) / (hi - lo)), 0, nbins - 1)
    return _core.constant(bins.astype(np.int32))


def histogram_fixed_width(values, value_range, nbins=100, dtype="int32", name=None):
    """How many of ``values`` fall in each of ``nbins`` equal bins spanning ``value_range``
    (values outside the range count in the first or last bin).

    Args:
        values: A numeric tensor.
        value_range: ``[lo, hi]`` with ``lo < hi``.
        nbins: The number of bins (positive).
        dtype: The dtype of the counts (int32 or int64).
        name: Ignored (TensorFlow's op name).

    Returns:
        A 1-D tensor ``[nbins]`` of counts.

    Raises:
        InvalidArgumentError: for ``lo >= hi`` or ``nbins <= 0``.

    >>> import ferrotape as ft
    >>> ft.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0], [0.0, 5.0], nbins=5).numpy()
    array([2, 1, 1, 0, 2], dtype=int32)
    """
    del name
    bins = histogram_fixed_width_bins(values, value_range, nbins).numpy()
    check_host_size("histogram_fixed_width", [int(np.asarray(nbins))], np.int64)
    counts = np.bincount(bins.reshape(-1), minlength=int(np.asarray(nbins)))
    return _core.cast(_core.constant(counts.astype(np.int64)), dtype)
