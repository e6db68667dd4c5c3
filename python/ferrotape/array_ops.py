"""TensorFlow's top-level rearrangements composed from ferrotape's gathers: ``roll``,
``repeat``, ``reverse``, ``reverse_sequence``, ``boolean_mask``, ``dynamic_partition``,
``dynamic_stitch``, ``meshgrid``, ``sequence_mask``, ``shape_n`` and ``parallel_stack``, and the
broadcast shape of two shapes (``broadcast_static_shape``, ``broadcast_dynamic_shape``).

Which entry goes where is an int index array computed on the host from the arguments that say it
(shifts, repeat counts, masks, lengths: TensorFlow reads these on the CPU as well); the values
then move by ``gather``, so gradients flow back to the entries they came from (summed where one
entry is used several times) and results live on the input's device. A host read of a traced
tensor makes an ``ft.function`` run eagerly (it warns once), with the same results.
"""

import reprlib

import numpy as np

from . import _core
from ._host_memory import check_host_size
from .dtypes import as_dtype
from .errors import InvalidArgumentError


def _host(x):
    """A tensor-or-array-like argument's value as a numpy array."""
    return np.asarray(x.numpy() if _core.is_tensor(x) else x)


def _int32_input(op, name, position, value):
    """An ``int32`` input of a TensorFlow kernel (``partitions``, ``indices``) as a numpy array:
    a tensor must be ``int32`` already (TensorFlow's InvalidArgumentError), a Python or numpy
    value converts to ``int32`` as ``tf.convert_to_tensor`` does (Python ints wrap)."""
    if _core.is_tensor(value) and value.dtype != "int32":
        raise InvalidArgumentError(
            f"{op}: {name} (input #{position}) was expected to be a int32 tensor but is a "
            f"{value.dtype.name} tensor"
        )
    return np.asarray(_core.convert_to_tensor(value, dtype="int32").numpy(), np.int64)


def make_int(op, name, value):
    """An int attribute as TensorFlow's ``make_int`` reads it: anything ``int()`` takes but a
    string (a float truncates, a scalar tensor is read), else a TypeError naming the argument."""
    try:
        if isinstance(value, (str, bytes)):
            raise TypeError
        return int(value.numpy() if _core.is_tensor(value) else value)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(
            f"{op}: Expected int for argument '{name}' not {reprlib.repr(value)}."
        ) from None


def _reorder(x, axis, index):
    """``x`` with its ``axis`` replaced by ``x[..., index, ...]`` (index: a 1-D int array)."""
    return _core.gather(x, _core.constant(np.asarray(index, dtype=np.int64)), axis=axis)


def roll(input, shift, axis, name=None):  # noqa: A002
    """``input``'s elements shifted cyclically by ``shift`` along ``axis``.

    Args:
        input: A tensor.
        shift: An int, or a 1-D list of ints: how far each axis rolls (negative: backwards).
        axis: An int, or a list of ints the length of ``shift``; an axis named twice rolls by
            the sum of its shifts.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape and dtype.

    Raises:
        InvalidArgumentError: if ``shift`` and ``axis`` differ in size or an axis is out of range.

    Gradient: the upstream gradient rolled back by ``-shift``.

    >>> import ferrotape as ft
    >>> ft.roll([0, 1, 2, 3, 4], shift=2, axis=0).numpy()
    array([3, 4, 0, 1, 2], dtype=int32)
    """
    del name
    x = _core.convert_to_tensor(input)
    shifts, axes = _host(shift).reshape(-1), _host(axis).reshape(-1)
    if shifts.shape != axes.shape or _host(shift).ndim != _host(axis).ndim:
        raise InvalidArgumentError(
            f"roll: shift and axis must have the same size, received shift={shifts.tolist()} "
            f"and axis={axes.tolist()}"
        )
    total = {}
    for s, a in zip(shifts.tolist(), axes.tolist(), strict=True):
        if not -x.ndim <= a < x.ndim:
            raise InvalidArgumentError(
                f"roll: axis {a} is out of range for a tensor of rank {x.ndim}"
            )
        total[a % x.ndim] = total.get(a % x.ndim, 0) + s
    for a, s in sorted(total.items()):
        n = x.shape[a]
        if n and s % n:
            x = _reorder(x, a, (np.arange(n) - s) % n)
    return x


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """Each slice of ``input`` along ``axis`` repeated ``repeats`` times in place.

    Args:
        input: A tensor.
        repeats: An int (every slice) or a 1-D list with one count per slice of ``axis``.
        axis: The axis to repeat along; ``None`` flattens ``input`` first.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``input`` with ``axis`` lengthened to ``sum(repeats)``.

    Raises:
        ValueError: if ``repeats`` has neither one entry nor one per slice.

    Gradient: the upstream gradient summed over each slice's copies.

    >>> import ferrotape as ft
    >>> ft.repeat([1, 2], repeats=[3, 1], axis=0).numpy()
    array([1, 1, 1, 2], dtype=int32)
    """
    del name
    x = _core.convert_to_tensor(input)
    if axis is None:
        x, axis = _core.reshape(x, [-1]), 0
    axis = int(_host(axis))
    if not -x.ndim <= axis < x.ndim:
        raise InvalidArgumentError(f"repeat: axis {axis} is out of range for rank {x.ndim}")
    counts = _host(repeats).astype(np.int64).reshape(-1)
    n = x.shape[axis]
    if counts.size not in (1, n):
        raise ValueError(
            f"repeat: repeats must hold one count or one per slice of axis {axis}: "
            f"Dimensions {n} and {counts.size} are not compatible"
        )
    if (counts < 0).any():
        raise InvalidArgumentError(f"repeat: repeats must be non-negative, received {counts}")
    # The total in Python ints: numpy's own sum wraps, and np.repeat then writes out of bounds.
    total = sum(int(c) for c in counts) * (n if counts.size == 1 else 1)
    check_host_size("repeat", [*x.shape[:axis], total, *x.shape[axis + 1 :]], x.dtype)
    check_host_size("repeat", [total], np.int64)  # the gather's index array
    return _reorder(x, axis, np.repeat(np.arange(n), np.broadcast_to(counts, (n,))))


def reverse(tensor, axis, name=None):
    """``tensor`` with the order of its elements reversed along each of ``axis``.

    Args:
        tensor: A tensor.
        axis: A 1-D list of distinct axes in ``[-rank, rank)``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``tensor``'s shape and dtype.

    Raises:
        InvalidArgumentError: if ``axis`` is not 1-D, names an axis twice or is out of range.

    Gradient: the upstream gradient reversed along the same axes.

    >>> import ferrotape as ft
    >>> ft.reverse([[1, 2], [3, 4]], [1]).numpy()
    array([[2, 1],
           [4, 3]], dtype=int32)
    """
    del name
    x = _core.convert_to_tensor(tensor)
    axes = _host(axis)
    if axes.ndim != 1:
        raise InvalidArgumentError(
            f"reverse: 'dims' must be 1-dimension, not {axes.ndim} (received axis={axes.tolist()})"
        )
    seen = set()
    for a in axes.tolist():
        if not -x.ndim <= a < x.ndim:
            raise InvalidArgumentError(f"reverse: axis {a} is out of range for rank {x.ndim}")
        if a % x.ndim in seen:
            raise InvalidArgumentError(f"reverse: axis {a % x.ndim} specified more than once")
        seen.add(a % x.ndim)
        x = _reorder(x, a % x.ndim, np.arange(x.shape[a] - 1, -1, -1))
    return x


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None):  # noqa: A002
    """For each batch entry ``i``, the first ``seq_lengths[i]`` elements along ``seq_axis``
    reversed, the rest unchanged.

    Args:
        input: A tensor of rank at least 2.
        seq_lengths: A 1-D int tensor ``[input.shape[batch_axis]]``, each at most the length of
            ``seq_axis``.
        seq_axis: The axis holding the sequences.
        batch_axis: The batch axis (``None``: 0).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape and dtype.

    Raises:
        InvalidArgumentError: for a length above the sequence axis or a mismatched batch size.

    Gradient: the upstream gradient reverse-sequenced the same way.

    >>> import ferrotape as ft
    >>> ft.reverse_sequence([[1, 2, 3], [4, 5, 6]], [2, 3], seq_axis=1).numpy()
    array([[2, 1, 3],
           [6, 5, 4]], dtype=int32)
    """
    del name
    x = _core.convert_to_tensor(input)
    if seq_axis is None:
        raise ValueError("reverse_sequence: seq_axis is required")
    seq_axis, batch_axis = int(seq_axis), 0 if batch_axis is None else int(batch_axis)
    if not (0 <= seq_axis < x.ndim and 0 <= batch_axis < x.ndim) or seq_axis == batch_axis:
        raise InvalidArgumentError(
            f"reverse_sequence: seq_axis and batch_axis must be distinct axes in [0, {x.ndim}), "
            f"received seq_axis={seq_axis} and batch_axis={batch_axis}"
        )
    lengths = _host(seq_lengths).astype(np.int64).reshape(-1)
    batch, steps = x.shape[batch_axis], x.shape[seq_axis]
    if lengths.size != batch or (lengths > steps).any() or (lengths < 0).any():
        raise InvalidArgumentError(
            f"reverse_sequence: seq_lengths must hold {batch} lengths in [0, {steps}] "
            f"(input.dims({seq_axis})), received {lengths.tolist()}"
        )
    step = np.arange(steps)
    index = np.where(step < lengths[:, None], lengths[:, None] - 1 - step, step)
    # The batch axis first and the sequence axis second, so one batched gather does every row.
    rest = [a for a in range(x.ndim) if a not in (batch_axis, seq_axis)]
    perm = [batch_axis, seq_axis, *rest]
    moved = _core.gather(_core.transpose(x, perm), _core.constant(index), axis=1, batch_dims=1)
    return _core.transpose(moved, list(np.argsort(perm)))


def boolean_mask(tensor, mask, axis=None, name=None):
    """The entries of ``tensor`` where ``mask`` is true, ``mask`` covering the axes
    ``axis .. axis + rank(mask) - 1``, which become one axis.

    Args:
        tensor: A tensor.
        mask: A bool tensor of rank ``k >= 1`` whose shape equals
            ``tensor.shape[axis:axis + k]``.
        axis: The first masked axis (``None``: 0).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor ``tensor.shape[:axis] + [count(mask)] + tensor.shape[axis + k:]``.

    Raises:
        ValueError: for a scalar mask or one whose shape does not match.

    Gradient: the upstream gradient scattered back to the kept entries, zeros elsewhere.

    >>> import ferrotape as ft
    >>> ft.boolean_mask([[1, 2], [3, 4]], [[True, False], [False, True]]).numpy()
    array([1, 4], dtype=int32)
    """
    del name
    x = _core.convert_to_tensor(tensor)
    keep = _host(mask)
    if keep.ndim == 0:
        raise ValueError("boolean_mask: mask cannot be scalar.")
    axis = 0 if axis is None else int(_host(axis)) % max(x.ndim, 1)
    covered = tuple(x.shape[axis : axis + keep.ndim])
    if covered != keep.shape:
        raise ValueError(
            f"boolean_mask: the mask's shape must match tensor.shape[{axis}:{axis + keep.ndim}]: "
            f"Shapes {covered} and {keep.shape} are incompatible"
        )
    flat = _core.reshape(x, [*x.shape[:axis], -1, *x.shape[axis + keep.ndim :]])
    return _reorder(flat, axis, np.flatnonzero(keep.astype(bool)))


def dynamic_partition(data, partitions, num_partitions, name=None):
    """``data`` split into ``num_partitions`` tensors: entry ``i`` (of ``partitions``' shape)
    goes to output ``partitions[i]``, in order.

    Args:
        data: A tensor whose shape starts with ``partitions``' shape.
        partitions: An int tensor of values in ``[0, num_partitions)``.
        num_partitions: The number of outputs.
        name: Ignored (TensorFlow's op name).

    Returns:
        A list of ``num_partitions`` tensors, each ``[count] + data.shape[rank(partitions):]``.

    Raises:
        InvalidArgumentError: for a partition out of range or a shape mismatch.

    Gradient: each output's upstream gradient scattered back to its entries.

    >>> import ferrotape as ft
    >>> [p.numpy().tolist() for p in ft.dynamic_partition([10, 20, 30, 40], [0, 1, 0, 2], 3)]
    [[10, 30], [20], [40]]
    """
    del name
    count = make_int("dynamic_partition", "num_partitions", num_partitions)
    if count >= 2**31:  # TensorFlow's limit on an op's outputs
        raise ValueError(f"dynamic_partition: Number of outputs is too big: {count}")
    if count < 1:
        raise InvalidArgumentError(
            f"dynamic_partition: Value for attr 'num_partitions' of {count} must be at least "
            f"minimum 1"
        )
    x = _core.convert_to_tensor(data)
    parts = _int32_input("dynamic_partition", "partitions", 1, partitions)
    if tuple(x.shape[: parts.ndim]) != parts.shape:
        raise InvalidArgumentError(
            f"dynamic_partition: data.shape must start with partitions.shape, received "
            f"{list(x.shape)} and {list(parts.shape)}"
        )
    flat = _core.reshape(x, [-1, *x.shape[parts.ndim :]])
    parts = parts.reshape(-1)
    bad = (parts < 0) | (parts >= count)
    if bad.any():
        raise InvalidArgumentError(
            f"dynamic_partition: partitions must be in [0, {count}), received {parts[bad].tolist()}"
        )
    check_host_size("dynamic_partition", [count], "int64")
    # A stable sort groups the entries by partition, each group in its original order.
    order = np.argsort(parts, kind="stable")
    ends = np.cumsum(np.bincount(parts, minlength=count))
    return [_reorder(flat, 0, group) for group in np.split(order, ends[:-1])]


def dynamic_stitch(indices, data, name=None):
    """Interleaves the ``data`` tensors: ``merged[indices[m][i]] = data[m][i]``; where an index
    repeats, the last ``(m, i)`` wins, and rows no index names are zeros.

    Args:
        indices: A list of int tensors.
        data: A list of tensors, ``data[m].shape = indices[m].shape + rest``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor ``[max(indices) + 1] + rest``.

    Raises:
        InvalidArgumentError: if the lists differ in length or a shape does not match.

    Gradient: the upstream gradient of each merged row flows to the entry that won it
    (TensorFlow also sends it to overwritten duplicates).

    >>> import ferrotape as ft
    >>> ft.dynamic_stitch([[0, 2], [1, 3]], [[1.0, 2.0], [3.0, 4.0]]).numpy()
    array([1., 3., 2., 4.], dtype=float32)
    """
    del name
    indices, data = _input_list("indices", indices), _input_list("data", data)
    if len(indices) != len(data) or not data:
        raise InvalidArgumentError(
            f"dynamic_stitch: indices and data must be non-empty lists of one length, received "
            f"{len(indices)} and {len(data)}"
        )
    index = [_int32_input("dynamic_stitch", "indices", m, i) for m, i in enumerate(indices)]
    values = _same_dtype(data)
    rest = list(values[0].shape[index[0].ndim :])
    for i, v in zip(index, values, strict=True):
        if list(v.shape) != [*i.shape, *rest]:
            raise InvalidArgumentError(
                f"dynamic_stitch: data must have shape indices.shape + {rest}, received "
                f"{list(v.shape)} for indices of shape {list(i.shape)}"
            )
    flat_index = np.concatenate([i.reshape(-1) for i in index])
    if (flat_index < 0).any():
        raise InvalidArgumentError(f"dynamic_stitch: indices must be >= 0, received {flat_index}")
    rows = _core.concat([_core.reshape(v, [-1, *rest]) for v in values], 0)
    size = int(flat_index.max()) + 1 if flat_index.size else 0
    check_host_size("dynamic_stitch", [size], "int64")
    check_host_size("dynamic_stitch", [size, *rest], rows.dtype)
    # Row ``len(flat_index)`` is a zero row, for the merged rows no index names.
    source = np.full(size, flat_index.size, dtype=np.int64)
    source[flat_index] = np.arange(flat_index.size)  # numpy assigns in order: the last wins
    padded = _core.concat([rows, _core.zeros([1, *rest], rows.dtype)], 0)
    return _reorder(padded, 0, source)


def _input_list(name, value):
    """A list input of ``dynamic_stitch``: a list or tuple, or a tensor read as the list of its
    rows (TensorFlow's fast path iterates any sequence); anything else is refused as TensorFlow
    refuses it."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if _core.is_tensor(value) and value.ndim > 0:
        return [value[i] for i in range(value.shape[0])]
    if isinstance(value, np.ndarray):
        raise ValueError(
            f"dynamic_stitch: expected a sequence for attr N, got an ndarray with rank "
            f"{value.ndim} instead ({name})"
        )
    raise TypeError(
        f"Expected list for '{name}' argument to 'dynamic_stitch' Op, not {reprlib.repr(value)}."
    )


def _same_dtype(items):
    """The items as tensors of one dtype: that of the first tensor among them, else (plain
    lists) the first floating one's, as TensorFlow converts a list of inputs together."""
    values = [_core.convert_to_tensor(d) for d in items]
    given = [v for d, v in zip(items, values, strict=True) if _core.is_tensor(d)]
    floats = [v for v in values if v.dtype.is_floating]
    dtype = (given or floats or values)[0].dtype
    return [v if v.dtype == dtype else _core.cast(v, dtype) for v in values]


def meshgrid(*args, **kwargs):
    """N-D coordinate grids from ``N`` 1-D coordinate vectors.

    Args:
        *args: 1-D tensors ``x0, x1, ...`` (anything is flattened first).
        **kwargs: ``indexing``: ``"xy"`` (Cartesian, the default: the first two output axes are
            ``len(x1), len(x0)``) or ``"ij"`` (matrix: output axes in argument order); ``name``
            is ignored.

    Returns:
        A list of ``N`` tensors of the grid's shape; output ``i`` holds ``args[i]`` along its
        own axis.

    Raises:
        ValueError: for another ``indexing``.
        TypeError: for another keyword.

    Gradient: each output's upstream gradient summed over the broadcast axes.

    >>> import ferrotape as ft
    >>> X, Y = ft.meshgrid([1, 2, 3], [4, 5])
    >>> X.numpy().tolist(), Y.numpy().tolist()
    ([[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]])
    """
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"'{next(iter(kwargs))}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError(
            f"meshgrid: Argument `indexing` parameter must be either 'xy' or 'ij', got '{indexing}'"
        )
    vectors = [_core.reshape(_core.convert_to_tensor(a), [-1]) for a in args]
    n = len(vectors)
    place = list(range(n))  # the output axis each vector lies along
    if indexing == "xy" and n > 1:
        place[0], place[1] = 1, 0
    shape = [0] * n
    for v, p in zip(vectors, place, strict=True):
        shape[p] = v.shape[0]
    out = []
    for v, p in zip(vectors, place, strict=True):
        along = [1] * n
        along[p] = -1
        out.append(_core.broadcast_to(_core.reshape(v, along), shape))
    return out


def sequence_mask(lengths, maxlen=None, dtype="bool", name=None):
    """``mask[..., j] = j < lengths[...]``: which steps of each sequence are inside its length.

    Args:
        lengths: An int tensor of any shape.
        maxlen: A scalar int, the mask's last dimension (``None``: ``max(lengths)``).
        dtype: The result dtype (``bool``, or a numeric dtype for 0/1).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor ``lengths.shape + [maxlen]``.

    Raises:
        ValueError: if ``maxlen`` is not a scalar.

    >>> import ferrotape as ft
    >>> ft.sequence_mask([1, 3], 4).numpy()
    array([[ True, False, False, False],
           [ True,  True,  True, False]])
    """
    del name
    lengths = _core.convert_to_tensor(lengths)
    if maxlen is None:
        maxlen = int(_core.reduce_max(lengths).numpy()) if _host(lengths).size else 0
    limit = _host(maxlen)
    if limit.ndim != 0:
        raise ValueError(f"sequence_mask: Argument `maxlen` must be scalar, received {limit}")
    steps = _core.cast(_core.range(int(limit)), lengths.dtype)
    mask = _core.less(steps, _core.expand_dims(lengths, -1))
    return mask if as_dtype(dtype).is_bool else _core.cast(mask, dtype)


def shape_n(input, out_type="int32", name=None):  # noqa: A002
    """The shape of each tensor of a list (``[shape(x, out_type) for x in input]``).

    Args:
        input: A list of tensors.
        out_type: The dtype of the shapes, int32 or int64.
        name: Ignored (TensorFlow's op name).

    Returns:
        A list of 1-D tensors.

    >>> import ferrotape as ft
    >>> [s.numpy().tolist() for s in ft.shape_n([ft.zeros([2, 3]), ft.zeros([4])])]
    [[2, 3], [4]]
    """
    del name
    return [_core.shape(x, out_type=out_type) for x in input]


def parallel_stack(values, name="parallel_stack"):
    """The tensors of ``values`` stacked along a new first axis (``stack(values, 0)``).

    TensorFlow refuses this op outside ``tf.function`` (its graph-only kernel copies the inputs
    in parallel); ferrotape, which always runs eagerly, stacks.

    Args:
        values: A list of tensors of one shape and dtype.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor ``[len(values)] + values[0].shape``.

    Gradient: the upstream gradient unstacked.

    >>> import ferrotape as ft
    >>> ft.parallel_stack([[1, 2], [3, 4]]).numpy().tolist()
    [[1, 2], [3, 4]]
    """
    del name
    return _core.stack(values, 0)


def _broadcast(op, error, x, y):
    """numpy's broadcast of two shapes, or ``error`` naming the op and both shapes."""
    try:
        return list(np.broadcast_shapes(tuple(x), tuple(y)))
    except ValueError:
        raise error(
            f"{op}: Incompatible shapes for broadcasting. Two shapes are compatible if for each "
            f"dimension pair they are either equal or one of them is 1. Received: "
            f"{tuple(x)} and {tuple(y)}."
        ) from None


def broadcast_static_shape(shape_x, shape_y):
    """The shape two tensors of shapes ``shape_x`` and ``shape_y`` broadcast to.

    Args:
        shape_x: A ``TensorShape`` (or list of ints).
        shape_y: A ``TensorShape`` (or list of ints).

    Returns:
        A ``TensorShape``.

    Raises:
        ValueError: if the shapes do not broadcast.

    >>> import ferrotape as ft
    >>> ft.broadcast_static_shape(ft.TensorShape([2, 1]), ft.TensorShape([3]))
    TensorShape([2, 3])
    """
    from .tensor_shape import TensorShape

    return TensorShape(_broadcast("broadcast_static_shape", ValueError, shape_x, shape_y))


def broadcast_dynamic_shape(shape_x, shape_y):
    """The shape two tensors of shapes ``shape_x`` and ``shape_y`` broadcast to, as a tensor.

    Args:
        shape_x: A 1-D int tensor (or list): a shape.
        shape_y: A 1-D int tensor of the same dtype.

    Returns:
        A 1-D tensor of ``shape_x``'s dtype (int32 for a list).

    Raises:
        InvalidArgumentError: if the shapes do not broadcast.

    >>> import ferrotape as ft
    >>> ft.broadcast_dynamic_shape([2, 1], [3]).numpy()
    array([2, 3], dtype=int32)
    """
    x = _core.convert_to_tensor(shape_x)
    shape = _broadcast(
        "broadcast_dynamic_shape",
        InvalidArgumentError,
        _host(x).reshape(-1).tolist(),
        _host(shape_y).reshape(-1).tolist(),
    )
    return _core.cast(_core.constant(np.asarray(shape, dtype=np.int64)), x.dtype)
