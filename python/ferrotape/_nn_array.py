"""``ft.nn``'s lookups, selections and rearrangements: ``embedding_lookup``, ``top_k`` and
``in_top_k`` (with the approximate forms computed exactly), ``space_to_depth``,
``depth_to_space``, ``space_to_batch`` and ``batch_to_space``. Values move by gathers, reshapes
and transposes, so gradients flow back to the entries they came from.
"""

import collections
import math
import operator

import numpy as np

from . import _core
from .polymorphic_function import computed_on_host_when_traced
from .sort_ops import sort_order

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])
ApproxTopK = collections.namedtuple("ApproxTopK", ["values", "indices"])


def embedding_lookup(params, ids, max_norm=None, name=None):
    """The rows of ``params`` at ``ids``: ``gather(params, ids)``.

    Args:
        params: A tensor ``[vocabulary, ...]``, or a list holding one such tensor.
        ids: An int tensor of any shape.
        max_norm: If given, rows whose L2 norm is above it are scaled down to it.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor ``ids.shape + params.shape[1:]``.

    Raises:
        ValueError: for a list of several shards (partitioned tables are not supported).

    Gradient: the upstream gradient summed into the looked-up rows (dense).

    >>> import ferrotape as ft
    >>> ft.nn.embedding_lookup(ft.constant([[0.0, 1.0], [2.0, 3.0]]), [1, 1]).numpy()
    array([[2., 3.],
           [2., 3.]], dtype=float32)
    """
    del name
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise ValueError(
                f"embedding_lookup: a list of {len(params)} shards is not supported; pass one "
                f"tensor"
            )
        params = params[0]
    rows = _core.gather(params, ids)
    if max_norm is None:
        return rows
    axes = list(range(_core.convert_to_tensor(ids).ndim, rows.ndim))
    norm = _core.sqrt(_core.reduce_sum(_core.square(rows), axes, keepdims=True))
    limit = _core.cast(max_norm, rows.dtype)
    scale = _core.select(norm > limit, limit / _core.maximum(norm, limit), _core.ones_like(norm))
    return rows * scale


def top_k(input, k=1, sorted=True, index_type="int32", name=None):  # noqa: A002
    """The ``k`` largest entries of the last axis and their indices (ties: lower index first;
    NaN counts as the largest value).

    Args:
        input: A tensor of rank at least 1 with at least ``k`` entries in its last axis.
        k: How many entries to keep.
        sorted: Ignored: the values are always in descending order.
        index_type: The dtype of the indices (int32 or int64).
        name: Ignored (TensorFlow's op name).

    Returns:
        A named pair ``(values, indices)`` (TensorFlow's ``TopKV2``: ``result.values`` and
        ``result.indices`` too), each ``input.shape[:-1] + [k]``.

    Raises:
        ValueError: if ``k`` is negative or above the last dimension.

    Gradient: the upstream gradient of ``values`` scattered back to the chosen entries.

    >>> import ferrotape as ft
    >>> values, indices = ft.nn.top_k(ft.constant([1.0, 3.0, 2.0]), k=2)
    >>> values.numpy(), indices.numpy()
    (array([3., 2.], dtype=float32), array([1, 2], dtype=int32))
    """
    del sorted, name
    x = _core.convert_to_tensor(input)
    k = operator.index(k)
    if x.ndim < 1 or not 0 <= k <= x.shape[-1]:
        raise ValueError(
            f"top_k: k must be in [0, {x.shape[-1] if x.ndim else 0}] for input of shape "
            f"{list(x.shape)}, received k={k}"
        )
    _, _, order = sort_order("top_k", x, -1, "DESCENDING")
    order = order[..., :k]
    values = _core.gather(x, order, axis=-1, batch_dims=x.ndim - 1)
    return TopKV2(values, _core.cast(order, index_type))


@computed_on_host_when_traced()
def in_top_k(targets, predictions, k, name=None):
    """Whether each ``targets[i]`` is among the ``k`` largest of ``predictions[i]``.

    Ties count in favour: the target is in the top ``k`` when fewer than ``k`` predictions
    are strictly larger; a row with a non-finite prediction gives false.

    Args:
        targets: An int tensor ``[batch]`` of class indices.
        predictions: A float tensor ``[batch, classes]``.
        k: The number of top entries to look at.
        name: Ignored (TensorFlow's op name).

    Returns:
        A bool tensor ``[batch]``.

    >>> import ferrotape as ft
    >>> ft.nn.in_top_k([1, 0], ft.constant([[0.1, 0.9], [0.1, 0.9]]), 1).numpy()
    array([ True, False])
    """
    del name
    scores = _core.convert_to_tensor(predictions).numpy()
    labels = np.asarray(_core.convert_to_tensor(targets).numpy())
    if scores.ndim != 2 or labels.shape != (scores.shape[0],):
        raise ValueError(
            f"in_top_k: predictions must be [batch, classes] and targets [batch], received "
            f"{list(scores.shape)} and {list(labels.shape)}"
        )
    if ((labels < 0) | (labels >= scores.shape[1])).any():
        raise ValueError(f"in_top_k: targets must be in [0, {scores.shape[1]}), received {labels}")
    target = scores[np.arange(scores.shape[0]), labels]
    larger = (scores > target[:, None]).sum(axis=1)
    finite = np.isfinite(scores).all(axis=1)
    return _core.constant(finite & (larger < operator.index(k)))


def space_to_depth(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """Moves ``block_size x block_size`` blocks of pixels into the channel axis.

    Args:
        input: A 4-D NHWC tensor whose height and width are multiples of ``block_size``.
        block_size: An int of at least 2.
        data_format: ``"NHWC"``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor ``[batch, height / b, width / b, channels * b * b]``.

    Gradient: the inverse rearrangement (``depth_to_space``).

    >>> import ferrotape as ft
    >>> ft.nn.space_to_depth(ft.reshape(ft.range(4.0), [1, 2, 2, 1]), 2).numpy()
    array([[[[0., 1., 2., 3.]]]], dtype=float32)
    """
    del name
    x, b = _block_args("space_to_depth", input, block_size, data_format)
    n, h, w, c = x.shape
    if h % b or w % b:
        raise ValueError(
            f"space_to_depth: height and width must be multiples of block_size={b}, received "
            f"shape {list(x.shape)}"
        )
    y = _core.reshape(x, [n, h // b, b, w // b, b, c])
    return _core.reshape(_core.transpose(y, [0, 1, 3, 2, 4, 5]), [n, h // b, w // b, b * b * c])


def depth_to_space(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """Moves channels into ``block_size x block_size`` blocks of pixels (``space_to_depth``'s
    inverse).

    Args:
        input: A 4-D NHWC tensor whose channels are a multiple of ``block_size ** 2``.
        block_size: An int of at least 2.
        data_format: ``"NHWC"``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor ``[batch, height * b, width * b, channels / (b * b)]``.

    Gradient: the inverse rearrangement (``space_to_depth``).

    >>> import ferrotape as ft
    >>> ft.nn.depth_to_space(ft.reshape(ft.range(4.0), [1, 1, 1, 4]), 2)[0, :, :, 0].numpy()
    array([[0., 1.],
           [2., 3.]], dtype=float32)
    """
    del name
    x, b = _block_args("depth_to_space", input, block_size, data_format)
    n, h, w, c = x.shape
    if c % (b * b):
        raise ValueError(
            f"depth_to_space: channels must be a multiple of block_size**2={b * b}, received "
            f"shape {list(x.shape)}"
        )
    y = _core.reshape(x, [n, h, w, b, b, c // (b * b)])
    return _core.reshape(_core.transpose(y, [0, 1, 3, 2, 4, 5]), [n, h * b, w * b, c // (b * b)])


def _block_args(op, input, block_size, data_format):  # noqa: A002
    if data_format not in (None, "NHWC"):
        raise ValueError(f"{op}: only the NHWC data format is supported, received {data_format!r}")
    x = _core.convert_to_tensor(input)
    b = operator.index(block_size)
    if x.ndim != 4 or b < 2:
        raise ValueError(
            f"{op}: input must be 4-D and block_size at least 2, received shape "
            f"{list(x.shape)} and block_size={b}"
        )
    return x, b


def _top_k_along(op, operand, k, axis, largest):
    x = _core.convert_to_tensor(operand)
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{op}: reduction_dimension {axis} is out of range for rank {x.ndim}")
    axis %= x.ndim
    perm = [*[i for i in range(x.ndim) if i != axis], axis]
    inverse = [perm.index(i) for i in range(x.ndim)]
    moved = _core.transpose(x, perm)
    values, indices = top_k(moved if largest else -moved, k)
    values = values if largest else -values
    return _core.transpose(values, inverse), _core.transpose(indices, inverse)


def approx_max_k(
    operand,
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
    name=None,
):
    """The ``k`` largest entries along ``reduction_dimension`` and their indices.

    ferrotape computes them exactly (``top_k``), which meets any ``recall_target``.

    Args:
        operand: A tensor.
        k: How many entries to keep.
        reduction_dimension: The axis to search.
        recall_target: Ignored (the result is exact).
        reduction_input_size_override: Ignored.
        aggregate_to_topk: Ignored (the result is always the sorted top ``k``).
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair ``(values, indices)``, ``operand``'s shape with ``k`` along the axis.

    Gradient: the upstream gradient of ``values`` scattered back to the chosen entries.

    >>> import ferrotape as ft
    >>> ft.nn.approx_max_k(ft.constant([[1.0, 4.0], [3.0, 2.0]]), 1, 0)[0].numpy()
    array([[3., 4.]], dtype=float32)
    """
    del recall_target, reduction_input_size_override, aggregate_to_topk, name
    return _top_k_along("approx_max_k", operand, k, reduction_dimension, largest=True)


def approx_min_k(
    operand,
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
    name=None,
):
    """The ``k`` smallest entries along ``reduction_dimension`` and their indices (exact).

    Args:
        operand: A tensor.
        k: How many entries to keep.
        reduction_dimension: The axis to search.
        recall_target: Ignored (the result is exact).
        reduction_input_size_override: Ignored.
        aggregate_to_topk: Ignored (the result is always the sorted bottom ``k``).
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair ``(values, indices)``, ascending along the axis.

    Gradient: the upstream gradient of ``values`` scattered back to the chosen entries.

    >>> import ferrotape as ft
    >>> ft.nn.approx_min_k(ft.constant([3.0, 1.0, 2.0]), 2)[1].numpy()
    array([1, 2], dtype=int32)
    """
    del recall_target, reduction_input_size_override, aggregate_to_topk, name
    return _top_k_along("approx_min_k", operand, k, reduction_dimension, largest=False)


def approx_top_k(
    input,  # noqa: A002 - TensorFlow's argument name
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    is_max_k=True,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
    name=None,
):
    """The ``k`` largest (``is_max_k``) or smallest entries along ``reduction_dimension`` and
    their indices: ``tf.approx_top_k``, which ferrotape computes exactly (any axis, either way;
    TensorFlow's CPU kernel takes only the last axis and the largest).

    Args:
        input: A tensor.
        k: How many entries to keep.
        reduction_dimension: The axis to search.
        recall_target: Ignored (the result is exact).
        is_max_k: Largest (true) or smallest (false) entries.
        reduction_input_size_override: Ignored.
        aggregate_to_topk: Ignored (the result is always the sorted top ``k``).
        name: Ignored (TensorFlow's op name).

    Returns:
        A named pair ``(values, indices)``, ``input``'s shape with ``k`` along the axis.

    Gradient: the upstream gradient of ``values`` scattered back to the chosen entries.

    >>> import ferrotape as ft
    >>> ft.approx_top_k(ft.constant([[1.0, 5.0, 3.0], [2.0, 0.0, 4.0]]), 2).indices.numpy()
    array([[1, 2],
           [2, 0]], dtype=int32)
    """
    del recall_target, reduction_input_size_override, aggregate_to_topk, name
    found = _top_k_along("approx_top_k", input, k, reduction_dimension, largest=is_max_k)
    return ApproxTopK(*found)


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """The paddings that make ``input_shape`` (plus ``base_paddings``) a multiple of
    ``block_shape``, added at the end, and the crops that undo them (``space_to_batch``'s and
    ``batch_to_space``'s arguments).

    Args:
        input_shape: A 1-D int tensor ``[M]``: the spatial dimensions.
        block_shape: A 1-D int tensor ``[M]`` of positive block sizes.
        base_paddings: An int ``[M, 2]`` of paddings to start from (``None``: zeros).
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair ``(paddings, crops)`` of ``[M, 2]`` int tensors: ``paddings`` is
        ``base_paddings`` with ``(-size) mod block`` more at each end, ``crops`` that extra.

    >>> import ferrotape as ft
    >>> paddings, crops = ft.required_space_to_batch_paddings([5, 7], [2, 3])
    >>> paddings.numpy().tolist(), crops.numpy().tolist()
    ([[0, 1], [0, 2]], [[0, 1], [0, 2]])
    """
    del name
    shape = _core.convert_to_tensor(input_shape)
    size, block = np.asarray(_values(shape)).reshape(-1), np.asarray(_values(block_shape))
    block = block.reshape(-1)
    base = np.zeros((size.size, 2), np.int64) if base_paddings is None else _values(base_paddings)
    base = np.asarray(base).reshape(size.size, 2)
    if block.shape != size.shape or (block <= 0).any():
        raise ValueError(
            f"required_space_to_batch_paddings: block_shape must hold {size.size} positive "
            f"sizes, received {block.tolist()}"
        )
    extra = (-(size + base[:, 0] + base[:, 1])) % block
    crops = np.stack([np.zeros_like(extra), extra], axis=1)
    paddings = np.stack([base[:, 0], base[:, 1] + extra], axis=1)
    paddings, crops = (_core.constant(a.astype(np.int64)) for a in (paddings, crops))
    return _core.cast(paddings, shape.dtype), _core.cast(crops, shape.dtype)


def _block_layout(op, x, block_shape, pairs, name):
    block = [operator.index(b) for b in np.asarray(_values(block_shape)).reshape(-1)]
    pairs = np.asarray(_values(pairs)).astype(np.int64).reshape(-1, 2)
    m = len(block)
    if m < 1 or pairs.shape[0] != m or x.ndim < m + 1 or min(block) < 1 or (pairs < 0).any():
        raise ValueError(
            f"{op}: block_shape must be M >= 1 positive ints and {name} [M, 2] non-negative "
            f"ints, M at most rank(input) - 1; received block_shape={block}, "
            f"{name}={pairs.tolist()} for input of shape {list(x.shape)}"
        )
    return block, pairs


def _values(x):
    return x.numpy() if hasattr(x, "numpy") else x


def space_to_batch(input, block_shape, paddings, name=None):  # noqa: A002
    """Pads the spatial axes, then moves ``block_shape`` blocks of them into the batch axis.

    For ``input`` ``[batch, s1, ..., sM, rest...]`` padded to ``[batch, p1, ..., pM, ...]``,
    the result is ``[batch * prod(block_shape), p1 / b1, ..., pM / bM, rest...]``; batch entry
    ``(i1, ..., iM, n)`` (row-major) holds the pixels at offset ``(i1, ..., iM)`` of every block.

    Args:
        input: A tensor of rank at least ``M + 1``.
        block_shape: ``M`` positive ints.
        paddings: ``[M, 2]`` non-negative ints: zeros before and after each spatial axis; the
            padded sizes must be multiples of the block.
        name: Ignored (TensorFlow's op name).

    Returns:
        The rearranged tensor.

    Gradient: the inverse rearrangement (``batch_to_space``), cropped.

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.range(4.0), [1, 2, 2, 1])
    >>> ft.nn.space_to_batch(x, [2, 2], [[0, 0], [0, 0]])[:, 0, 0, 0].numpy()
    array([0., 1., 2., 3.], dtype=float32)
    """
    del name
    op = "space_to_batch"
    x = _core.convert_to_tensor(input)
    block, pads = _block_layout(op, x, block_shape, paddings, "paddings")
    m = len(block)
    x = _core.pad(x, [[0, 0], *pads.tolist(), *[[0, 0]] * (x.ndim - m - 1)])
    spatial, rest = list(x.shape[1 : m + 1]), list(x.shape[m + 1 :])
    if any(s % b for s, b in zip(spatial, block, strict=True)):
        raise ValueError(
            f"{op}: the padded spatial sizes {spatial} must be multiples of block_shape {block}"
        )
    split = [x.shape[0]]
    for s, b in zip(spatial, block, strict=True):
        split += [s // b, b]
    y = _core.reshape(x, split + rest)
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    perm += list(range(1 + 2 * m, y.ndim))
    out_spatial = [s // b for s, b in zip(spatial, block, strict=True)]
    return _core.reshape(_core.transpose(y, perm), [-1, *out_spatial, *rest])


def batch_to_space(input, block_shape, crops, name=None):  # noqa: A002
    """The inverse of ``space_to_batch``: moves batch blocks back into the spatial axes, then
    crops.

    Args:
        input: A tensor ``[batch * prod(block_shape), d1, ..., dM, rest...]``.
        block_shape: ``M`` positive ints.
        crops: ``[M, 2]`` non-negative ints removed before and after each spatial axis.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor ``[batch, d1 * b1 - crops, ..., rest...]``.

    Gradient: ``space_to_batch`` of the upstream gradient.

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.range(4.0), [4, 1, 1, 1])
    >>> ft.nn.batch_to_space(x, [2, 2], [[0, 0], [0, 0]])[0, :, :, 0].numpy()
    array([[0., 1.],
           [2., 3.]], dtype=float32)
    """
    del name
    op = "batch_to_space"
    x = _core.convert_to_tensor(input)
    block, crop = _block_layout(op, x, block_shape, crops, "crops")
    m, total = len(block), math.prod(block)
    if x.shape[0] % total:
        raise ValueError(
            f"{op}: the batch {x.shape[0]} must be a multiple of prod(block_shape) = {total}"
        )
    spatial, rest = list(x.shape[1 : m + 1]), list(x.shape[m + 1 :])
    y = _core.reshape(x, [*block, x.shape[0] // total, *spatial, *rest])
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, y.ndim))
    full = [s * b for s, b in zip(spatial, block, strict=True)]
    y = _core.reshape(_core.transpose(y, perm), [x.shape[0] // total, *full, *rest])
    if (crop.sum(axis=1) > np.array(full)).any():
        raise ValueError(f"{op}: crops {crop.tolist()} exceed the spatial sizes {full}")
    index = (slice(None),) + tuple(
        slice(int(a), f - int(b)) for (a, b), f in zip(crop, full, strict=True)
    )
    return y[index]
