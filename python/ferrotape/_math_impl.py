"""``ft.math`` names composed in Python from native ops: the ``*_no_nan`` and ``x*y`` family,
scans (``cumsum``, ``cumprod``, ``cumulative_logsumexp``), segment reductions, counting, and the
dtype conversions ``saturate_cast`` and ``bitcast``.

Each is built from differentiable native ops (``select``, ``scatter_nd``, reductions), so the
gradients come from those ops; index arguments (segment ids, labels) are read as NumPy constants
because TensorFlow does not differentiate through them either.
"""

import numpy as np

from . import _core
from ._host_memory import check_host_size
from .errors import InvalidArgumentError

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _tensors(x, y):
    """``x`` and ``y`` as tensors, ``y`` converted to ``x``'s dtype when it is not a tensor yet."""
    x = _core.convert_to_tensor(x)
    if not _core.is_tensor(y):
        y = _core.convert_to_tensor(y, dtype=x.dtype)
    return x, y


def _is_zero(t):
    return _core.equal(t, _core.zeros_like(t))


def _floating(who, x):
    if x.dtype.name not in _FLOATS:
        raise InvalidArgumentError(f"{who}: expected a floating dtype, received {x.dtype.name}")
    return x


def divide_no_nan(x, y, name=None):
    """``x / y``, but 0 wherever ``y`` is 0 (even when ``x`` is 0, inf or NaN).

    Integer inputs are divided in float64, as TensorFlow's ``truediv`` does.

    Args:
        x: A tensor.
        y: A tensor of ``x``'s dtype, broadcastable with ``x``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the broadcast shape.

    Gradient: ``divide_no_nan(g, y)`` for ``x`` and ``-g * x / y**2`` for ``y`` (0 where ``y``
    is 0).

    >>> import ferrotape as ft
    >>> ft.math.divide_no_nan(ft.constant([3.0, 1.0]), ft.constant([2.0, 0.0])).numpy()
    array([1.5, 0. ], dtype=float32)
    """
    del name
    x, y = _tensors(x, y)
    if x.dtype.name not in _FLOATS:
        x, y = _core.cast(x, "float64"), _core.cast(y, "float64")
    zero = _is_zero(y)
    quotient = _core.truediv(x, _core.select(zero, _core.ones_like(y), y))
    return _core.select(zero, _core.zeros_like(quotient), quotient)


def reciprocal_no_nan(x, name=None):
    """``1 / x``, but 0 where ``x`` is 0.

    Args:
        x: A floating tensor.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``x``'s shape and dtype.

    Gradient: ``-g / x**2``, 0 where ``x`` is 0.

    >>> import ferrotape as ft
    >>> ft.math.reciprocal_no_nan(ft.constant([2.0, 0.0])).numpy()
    array([0.5, 0. ], dtype=float32)
    """
    del name
    x = _floating("reciprocal_no_nan", _core.convert_to_tensor(x))
    return divide_no_nan(_core.ones_like(x), x)


def multiply_no_nan(x, y, name=None):
    """``x * y``, but 0 wherever ``y`` is 0 (even when ``x`` is inf or NaN).

    Args:
        x: A floating tensor.
        y: A tensor of ``x``'s dtype, broadcastable with ``x``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the broadcast shape.

    Gradient: ``g * y`` for ``x``; ``g * x`` for ``y`` (0 where ``y`` is 0 and ``x`` is not finite).

    >>> import ferrotape as ft
    >>> ft.math.multiply_no_nan(ft.constant([float("inf"), 2.0]), ft.constant([0.0, 3.0])).numpy()
    array([0., 6.], dtype=float32)
    """
    del name
    x, y = _tensors(x, y)
    # Only a non-finite x needs replacing where y is 0 (a finite x * 0 is already 0), which keeps
    # the gradient for y equal to x there, as TensorFlow's MulNoNan gradient has it.
    bad = _core.logical_and(_is_zero(y), _core.logical_not(is_finite(x)))
    return _core.multiply(_core.select(bad, _core.zeros_like(x), x), y)


def xlogy(x, y, name=None):
    """``x * log(y)``, but 0 wherever ``x`` is 0 (even when ``y`` is 0).

    Args:
        x: A floating tensor.
        y: A tensor of ``x``'s dtype, broadcastable with ``x``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the broadcast shape.

    Gradient: ``log(y)`` for ``x`` and ``x / y`` for ``y``, both 0 where ``x`` is 0.

    >>> import ferrotape as ft
    >>> ft.math.xlogy(ft.constant([0.0, 2.0]), ft.constant([0.0, 1.0])).numpy()
    array([0., 0.], dtype=float32)
    """
    del name
    x, y = _tensors(x, y)
    zero = _is_zero(x)
    product = _core.multiply(x, _core.log(_core.select(zero, _core.ones_like(y), y)))
    return _core.select(zero, _core.zeros_like(product), product)


def xlog1py(x, y, name=None):
    """``x * log1p(y)``, but 0 wherever ``x`` is 0 (even when ``y`` is -1).

    Args:
        x: A floating tensor.
        y: A tensor of ``x``'s dtype, broadcastable with ``x``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the broadcast shape.

    Gradient: ``log1p(y)`` for ``x`` and ``x / (1 + y)`` for ``y``, both 0 where ``x`` is 0.

    >>> import ferrotape as ft
    >>> ft.math.xlog1py(ft.constant([0.0, 2.0]), ft.constant([-1.0, 0.0])).numpy()
    array([0., 0.], dtype=float32)
    """
    del name
    x, y = _tensors(x, y)
    zero = _is_zero(x)
    product = _core.multiply(x, _core.log1p(_core.select(zero, _core.zeros_like(y), y)))
    return _core.select(zero, _core.zeros_like(product), product)


def xdivy(x, y, name=None):
    """``x / y``, but 0 wherever ``x`` is 0 (even when ``y`` is 0).

    Args:
        x: A floating tensor.
        y: A tensor of ``x``'s dtype, broadcastable with ``x``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the broadcast shape.

    Gradient: ``1 / y`` for ``x`` and ``-x / y**2`` for ``y``, both 0 where ``x`` is 0.

    >>> import ferrotape as ft
    >>> ft.math.xdivy(ft.constant([0.0, 3.0]), ft.constant([0.0, 2.0])).numpy()
    array([0. , 1.5], dtype=float32)
    """
    del name
    x, y = _tensors(x, y)
    zero = _is_zero(x)
    quotient = _core.truediv(x, _core.select(zero, _core.ones_like(y), y))
    return _core.select(zero, _core.zeros_like(quotient), quotient)


def lbeta(x, name=None):
    """``log(|B(x)|)``, the log of the multivariate beta function, over the last axis of ``x``.

    ``B(x) = prod(Gamma(x_i)) / Gamma(sum(x_i))``, so this is
    ``reduce_sum(lgamma(x), -1) - lgamma(reduce_sum(x, -1))``. An empty last axis gives
    ``-inf`` (``lgamma(0)``), as TensorFlow.

    Args:
        x: A floating tensor of rank at least 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``x``'s shape without its last axis, of ``x``'s dtype.

    Gradient: ``digamma(x_i) - digamma(sum(x))`` for each ``x_i``, through the ops above.

    >>> import ferrotape as ft
    >>> ft.math.lbeta(ft.constant([[1.0, 1.0], [2.0, 3.0]])).numpy().round(4)
    array([ 0.    , -2.4849], dtype=float32)
    """
    del name
    x = _floating("lbeta", _core.convert_to_tensor(x))
    if len(x.shape) == 0:
        raise InvalidArgumentError("lbeta: expected a tensor of rank at least 1, received a scalar")
    return _core.subtract(
        _core.reduce_sum(_core.lgamma(x), -1), _core.lgamma(_core.reduce_sum(x, -1))
    )


def is_inf(x, name=None):
    """Whether each element of ``x`` is +inf or -inf.

    Args:
        x: A floating tensor.
        name: Ignored (TensorFlow's op name).

    Returns:
        A bool tensor of ``x``'s shape.

    Raises:
        InvalidArgumentError: if ``x`` is not floating (as TensorFlow's ``IsInf``).

    >>> import ferrotape as ft
    >>> ft.math.is_inf(ft.constant([1.0, float("-inf"), float("nan")])).numpy()
    array([False,  True, False])
    """
    del name
    x = _floating("is_inf", _core.convert_to_tensor(x))
    return _core.equal(_core.abs(x), _core.fill(x.shape, np.array(np.inf, x.dtype.name)))


def is_finite(x, name=None):
    """Whether each element of ``x`` is neither inf nor NaN.

    Args:
        x: A floating tensor.
        name: Ignored (TensorFlow's op name).

    Returns:
        A bool tensor of ``x``'s shape.

    Raises:
        InvalidArgumentError: if ``x`` is not floating (as TensorFlow's ``IsFinite``).

    >>> import ferrotape as ft
    >>> ft.math.is_finite(ft.constant([1.0, float("inf"), float("nan")])).numpy()
    array([ True, False, False])
    """
    del name
    x = _floating("is_finite", _core.convert_to_tensor(x))
    return _core.logical_not(_core.logical_or(_core.is_nan(x), is_inf(x)))


def scalar_mul(scalar, x, name=None):
    """``scalar * x`` for a scalar (rank-0) ``scalar``.

    Args:
        scalar: A number or a rank-0 tensor, converted to ``x``'s dtype when not a tensor.
        x: A tensor.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``x``'s shape and dtype.

    Raises:
        ValueError: if ``scalar`` is not rank 0 (as TensorFlow).

    Gradient: ``g * scalar`` for ``x`` and ``sum(g * x)`` for ``scalar``.

    >>> import ferrotape as ft
    >>> ft.math.scalar_mul(2.0, ft.constant([1.0, 3.0])).numpy()
    array([2., 6.], dtype=float32)
    """
    del name
    x = _core.convert_to_tensor(x)
    if not _core.is_tensor(scalar):
        scalar = _core.convert_to_tensor(scalar, dtype=x.dtype)
    if len(scalar.shape) != 0:
        raise ValueError(
            f"scalar_mul: only scalar multiply works, received scalar of shape {scalar.shape}"
        )
    return _core.multiply(scalar, x)


def count_nonzero(input, axis=None, keepdims=None, dtype="int64", name=None):  # noqa: A002
    """The number of non-zero (for bool: true) elements of ``input`` over ``axis``.

    Args:
        input: A numeric or bool tensor.
        axis: The axes to reduce: ``None`` (all of them), an int or a list of ints.
        keepdims: If true, the reduced axes are kept with length 1.
        dtype: The output dtype (TensorFlow's default is int64).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``dtype`` holding the counts.

    >>> import ferrotape as ft
    >>> ft.math.count_nonzero(ft.constant([[0.0, 1.0], [2.0, 0.0]]), axis=1).numpy()
    array([1, 1])
    """
    del name
    x = _core.convert_to_tensor(input)
    nonzero = _core.not_equal(x, _core.zeros_like(x))
    return _core.reduce_sum(_core.cast(nonzero, dtype), axis, keepdims=bool(keepdims))


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """The Euclidean norm ``sqrt(sum(x**2))`` of ``input_tensor`` over ``axis``.

    Integer inputs are reduced in float64 and the result truncated back, as TensorFlow does.

    Args:
        input_tensor: A numeric tensor.
        axis: The axes to reduce: ``None`` (all of them), an int or a list of ints.
        keepdims: If true, the reduced axes are kept with length 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input_tensor``'s dtype.

    Gradient: ``x / norm`` times the upstream gradient.

    >>> import ferrotape as ft
    >>> ft.math.reduce_euclidean_norm(ft.constant([[3.0, 4.0], [6.0, 8.0]]), axis=1).numpy()
    array([ 5., 10.], dtype=float32)
    """
    del name
    x = _core.convert_to_tensor(input_tensor)
    original = x.dtype
    if original.name not in _FLOATS:
        x = _core.cast(x, "float64")
    norm = _core.sqrt(_core.reduce_sum(_core.square(x), axis, keepdims=keepdims))
    return norm if original.name in _FLOATS else _core.cast(norm, original)


def polyval(coeffs, x, name=None):
    """The polynomial ``coeffs[0] * x**(n-1) + ... + coeffs[n-1]`` evaluated by Horner's rule.

    Args:
        coeffs: A list of tensors (or numbers), the highest power's coefficient first.
        x: A tensor; broadcast against the coefficients.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the broadcast shape; ``zeros_like(x)`` for an empty ``coeffs``.

    Raises:
        ValueError: if ``coeffs`` is not a list (as TensorFlow).

    Gradient: through the Horner products and sums, for ``x`` and every coefficient.

    >>> import ferrotape as ft
    >>> ft.math.polyval([2.0, 0.0, 1.0], ft.constant([1.0, 2.0])).numpy()
    array([3., 9.], dtype=float32)
    """
    del name
    if not isinstance(coeffs, list):
        raise ValueError(
            f"polyval: argument coeffs must be list type, received {type(coeffs).__name__}"
        )
    x = _core.convert_to_tensor(x)
    if not coeffs:
        return _core.zeros_like(x)
    _, result = _tensors(x, coeffs[0])
    for c in coeffs[1:]:
        _, c = _tensors(x, c)
        result = _core.add(c, _core.multiply(result, x))
    return result


def _monotone(who, x, strict):
    x = _core.convert_to_tensor(x)
    if x.dtype.name == "bool":
        raise TypeError(f"{who}: expected x to be numeric, received dtype bool")
    flat = _core.reshape(x, [-1])
    n = flat.shape[0]
    if n < 2:
        return _core.constant(True)
    step = (_core.greater if strict else _core.greater_equal)(flat[1:], flat[: n - 1])
    return _core.reduce_all(step)


def is_non_decreasing(x, name=None):
    """Whether ``x``, read in row-major order, never decreases.

    Args:
        x: A numeric tensor; fewer than two elements count as non-decreasing.
        name: Ignored (TensorFlow's op name).

    Returns:
        A scalar bool tensor.

    Raises:
        TypeError: if ``x`` is not numeric (bool).

    >>> import ferrotape as ft
    >>> ft.math.is_non_decreasing(ft.constant([1, 1, 2])).numpy()
    np.True_
    """
    del name
    return _monotone("is_non_decreasing", x, strict=False)


def is_strictly_increasing(x, name=None):
    """Whether ``x``, read in row-major order, always increases.

    Args:
        x: A numeric tensor; fewer than two elements count as strictly increasing.
        name: Ignored (TensorFlow's op name).

    Returns:
        A scalar bool tensor.

    Raises:
        TypeError: if ``x`` is not numeric (bool).

    >>> import ferrotape as ft
    >>> ft.math.is_strictly_increasing(ft.constant([1, 1, 2])).numpy()
    np.False_
    """
    del name
    return _monotone("is_strictly_increasing", x, strict=True)


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """The element-wise sum of a list of same-shape tensors (TensorFlow's alias of ``add_n``).

    Args:
        inputs: A non-empty list of tensors of one shape and dtype.
        shape: Ignored (TensorFlow checks it against the inputs' shape).
        tensor_dtype: Ignored.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the inputs' shape and dtype.

    Gradient: the upstream gradient for every input.

    >>> import ferrotape as ft
    >>> ft.math.accumulate_n([ft.constant([1.0]), ft.constant([2.0])]).numpy()
    array([3.], dtype=float32)
    """
    del shape, tensor_dtype, name
    return _core.add_n(inputs)


def _scan(who, x, axis, exclusive, reverse, combine, identity):
    """The running ``combine`` of ``x``'s slices along ``axis``, one native op per slice."""
    x = _core.convert_to_tensor(x)
    rank = len(x.shape)
    if rank == 0:
        raise InvalidArgumentError(f"{who}: expected x to be at least 1-D, received a scalar")
    if not -rank <= int(axis) < rank:
        raise InvalidArgumentError(f"{who}: axis must be in [{-rank}, {rank}), received {axis}")
    axis = int(axis) % rank
    if x.shape[axis] == 0:
        return x
    slices = _core.unstack(x, axis=axis)
    if reverse:
        slices = slices[::-1]
    running = identity(slices[0]) if exclusive else slices[0]
    out = [running]
    for s in slices[:-1] if exclusive else slices[1:]:
        running = combine(running, s)
        out.append(running)
    if reverse:
        out = out[::-1]
    return _core.stack(out, axis=axis)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """The cumulative sum of ``x`` along ``axis``.

    Args:
        x: A numeric tensor of rank >= 1.
        axis: The axis to scan, in ``[-rank, rank)``.
        exclusive: If true, element ``i`` sums the elements before ``i`` (the first is 0).
        reverse: If true, the sum runs from the end of the axis.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``x``'s shape and dtype.

    Gradient: the reverse cumulative sum of the upstream gradient.

    >>> import ferrotape as ft
    >>> ft.math.cumsum(ft.constant([1, 2, 3])).numpy()
    array([1, 3, 6], dtype=int32)
    >>> ft.math.cumsum(ft.constant([1, 2, 3]), exclusive=True, reverse=True).numpy()
    array([5, 3, 0], dtype=int32)
    """
    del name
    return _scan("cumsum", x, axis, exclusive, reverse, _core.add, _core.zeros_like)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """The cumulative product of ``x`` along ``axis``.

    Args:
        x: A numeric tensor of rank >= 1.
        axis: The axis to scan, in ``[-rank, rank)``.
        exclusive: If true, element ``i`` multiplies the elements before ``i`` (the first is 1).
        reverse: If true, the product runs from the end of the axis.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``x``'s shape and dtype.

    Gradient: through the running products (exact with zeros, unlike a division-based formula).

    >>> import ferrotape as ft
    >>> ft.math.cumprod(ft.constant([1.0, 2.0, 3.0])).numpy()
    array([1., 2., 6.], dtype=float32)
    """
    del name
    return _scan("cumprod", x, axis, exclusive, reverse, _core.multiply, _core.ones_like)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """The cumulative ``log(sum(exp(x)))`` along ``axis``, computed stably.

    Args:
        x: A floating tensor of rank >= 1.
        axis: The axis to scan, in ``[-rank, rank)``.
        exclusive: If true, element ``i`` covers the elements before ``i`` (the first is -inf).
        reverse: If true, the scan runs from the end of the axis.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``x``'s shape and dtype.

    Gradient: ``softmax``-weighted, through each running ``reduce_logsumexp``.

    >>> import ferrotape as ft
    >>> ft.math.cumulative_logsumexp(ft.constant([0.0, 0.0])).numpy()
    array([0.       , 0.6931472], dtype=float32)
    """
    del name
    x = _floating("cumulative_logsumexp", _core.convert_to_tensor(x))

    def logaddexp(a, b):
        return _core.reduce_logsumexp(_core.stack([a, b]), 0)

    def minus_inf(t):
        return _core.fill(t.shape, np.array(-np.inf, t.dtype.name))

    return _scan("cumulative_logsumexp", x, axis, exclusive, reverse, logaddexp, minus_inf)


def _ids(who, segment_ids, data):
    """The segment ids as a NumPy int array, and ``data`` as a tensor whose leading axes match."""
    data = _core.convert_to_tensor(data)
    ids = np.asarray(segment_ids.numpy() if _core.is_tensor(segment_ids) else segment_ids)
    if ids.dtype.kind not in "iu":
        raise InvalidArgumentError(f"{who}: segment_ids must be integers, received {ids.dtype}")
    if list(data.shape[: ids.ndim]) != list(ids.shape):
        raise InvalidArgumentError(
            f"{who}: segment_ids shape {list(ids.shape)} must be a prefix of data shape "
            f"{data.shape}"
        )
    return ids.reshape(-1).astype(np.int64), _core.reshape(data, [-1, *data.shape[ids.ndim :]])


def _num_segments(who, ids, num_segments, rows):
    n = int(num_segments.numpy() if _core.is_tensor(num_segments) else num_segments)
    if n < 0:
        raise InvalidArgumentError(f"{who}: num_segments must be >= 0, received {n}")
    if ids.size and ids.max() >= n:
        raise InvalidArgumentError(f"{who}: segment id {ids.max()} out of range [0, {n})")
    return _checked_segments(who, n, rows)


def _checked_segments(who, n, rows):
    """``n`` once the output ``[n, ...]`` and the per-segment counts ``[n]`` fit."""
    check_host_size(who, [n, *rows.shape[1:]], rows.dtype)
    check_host_size(who, [n], np.int64)
    return n


def _segment_sum(ids, rows, n):
    """Rows with the same id summed into ``[n, ...]``; negative ids dropped (as TensorFlow)."""
    keep = np.flatnonzero(ids >= 0)
    if keep.size < ids.size:
        rows = _core.gather(rows, _core.constant(keep))
    return _core.scatter_nd(_core.constant(ids[keep][:, None]), rows, [n, *rows.shape[1:]])


def _counts(ids, n, rows):
    """The number of rows per segment, shaped to broadcast against ``[n, ...]``."""
    counts = np.bincount(ids[ids >= 0], minlength=n).astype(rows.dtype.name)
    return counts.reshape([n] + [1] * (len(rows.shape) - 1))


def _segment_reduce(who, ids, rows, n, reduce, fill):
    """``reduce`` over each segment's rows; ``fill`` stands in for the rows outside it."""
    # Every row is compared with every segment: the spread is [n, rows, ...].
    check_host_size(who, [n, *rows.shape], rows.dtype)
    member = ids[None, :] == np.arange(n)[:, None]
    member = member.reshape([n, ids.size] + [1] * (len(rows.shape) - 1))
    spread = _core.broadcast_to(_core.expand_dims(rows, 0), [n, *rows.shape])
    filler = _core.fill([n, *rows.shape], np.array(fill, rows.dtype.name))
    return reduce(_core.select(_core.constant(member), spread, filler), 1)


def _extreme(dtype, largest):
    info = np.finfo(dtype) if np.dtype(dtype).kind == "f" else np.iinfo(dtype)
    return info.max if largest else info.min


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """The sum of the rows of ``data`` that share a segment id.

    ``output[i, ...] = sum(data[j, ...] for j where segment_ids[j] == i)``; negative ids are
    dropped.

    Args:
        data: A numeric tensor whose leading axes have ``segment_ids``'s shape.
        segment_ids: An int tensor (or array-like) of ids in ``[0, num_segments)``, or negative.
        num_segments: The number of segments (an int).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[num_segments] + data.shape[rank(segment_ids):]``; empty segments are 0.

    Raises:
        InvalidArgumentError: if an id is ``>= num_segments`` or the shapes do not match.

    Gradient: each row of ``data`` gets its segment's upstream gradient.

    >>> import ferrotape as ft
    >>> ft.math.unsorted_segment_sum(ft.constant([1.0, 2.0, 3.0]), [0, 2, 0], 3).numpy()
    array([4., 0., 2.], dtype=float32)
    """
    del name
    ids, rows = _ids("unsorted_segment_sum", segment_ids, data)
    return _segment_sum(ids, rows, _num_segments("unsorted_segment_sum", ids, num_segments, rows))


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean of the rows of ``data`` that share a segment id (0 for an empty segment).

    Args:
        data: A floating tensor whose leading axes have ``segment_ids``'s shape.
        segment_ids: An int tensor (or array-like) of ids in ``[0, num_segments)``, or negative.
        num_segments: The number of segments (an int).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[num_segments] + data.shape[rank(segment_ids):]``.

    Raises:
        InvalidArgumentError: if an id is ``>= num_segments`` or the shapes do not match.

    Gradient: each row gets its segment's upstream gradient divided by the segment's size.

    >>> import ferrotape as ft
    >>> ft.math.unsorted_segment_mean(ft.constant([1.0, 2.0, 3.0]), [0, 1, 0], 2).numpy()
    array([2., 2.], dtype=float32)
    """
    del name
    ids, rows = _ids("unsorted_segment_mean", segment_ids, data)
    n = _num_segments("unsorted_segment_mean", ids, num_segments, rows)
    counts = np.maximum(_counts(ids, n, rows), 1)
    return _core.truediv(_segment_sum(ids, rows, n), _core.constant(counts))


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """The sum of each segment's rows divided by the square root of the segment's size.

    Args:
        data: A floating tensor whose leading axes have ``segment_ids``'s shape.
        segment_ids: An int tensor (or array-like) of ids in ``[0, num_segments)``, or negative.
        num_segments: The number of segments (an int).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[num_segments] + data.shape[rank(segment_ids):]``; empty segments are 0.

    Raises:
        InvalidArgumentError: if an id is ``>= num_segments`` or the shapes do not match.

    Gradient: each row gets its segment's upstream gradient divided by ``sqrt(size)``.

    >>> import ferrotape as ft
    >>> ft.math.unsorted_segment_sqrt_n(ft.constant([1.0, 3.0]), [0, 0], 1).numpy()
    array([2.828427], dtype=float32)
    """
    del name
    ids, rows = _ids("unsorted_segment_sqrt_n", segment_ids, data)
    n = _num_segments("unsorted_segment_sqrt_n", ids, num_segments, rows)
    scale = np.sqrt(np.maximum(_counts(ids, n, rows), 1))
    return _core.truediv(_segment_sum(ids, rows, n), _core.constant(scale))


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """The maximum of the rows of ``data`` that share a segment id.

    Args:
        data: A real tensor whose leading axes have ``segment_ids``'s shape.
        segment_ids: An int tensor (or array-like) of ids in ``[0, num_segments)``, or negative.
        num_segments: The number of segments (an int).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[num_segments] + data.shape[rank(segment_ids):]``; an empty segment
        holds the dtype's lowest value.

    Raises:
        InvalidArgumentError: if an id is ``>= num_segments`` or the shapes do not match.

    Gradient: the upstream gradient goes to the maximal rows, split evenly among ties.

    >>> import ferrotape as ft
    >>> ft.math.unsorted_segment_max(ft.constant([1, 5, 3]), [0, 0, 1], 2).numpy()
    array([5, 3], dtype=int32)
    """
    del name
    ids, rows = _ids("unsorted_segment_max", segment_ids, data)
    n = _num_segments("unsorted_segment_max", ids, num_segments, rows)
    return _segment_reduce(
        "unsorted_segment_max", ids, rows, n, _core.reduce_max, _extreme(rows.dtype.name, False)
    )


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """The minimum of the rows of ``data`` that share a segment id.

    Args:
        data: A real tensor whose leading axes have ``segment_ids``'s shape.
        segment_ids: An int tensor (or array-like) of ids in ``[0, num_segments)``, or negative.
        num_segments: The number of segments (an int).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[num_segments] + data.shape[rank(segment_ids):]``; an empty segment
        holds the dtype's largest value.

    Raises:
        InvalidArgumentError: if an id is ``>= num_segments`` or the shapes do not match.

    Gradient: the upstream gradient goes to the minimal rows, split evenly among ties.

    >>> import ferrotape as ft
    >>> ft.math.unsorted_segment_min(ft.constant([1, 5, 3]), [0, 0, 1], 2).numpy()
    array([1, 3], dtype=int32)
    """
    del name
    ids, rows = _ids("unsorted_segment_min", segment_ids, data)
    n = _num_segments("unsorted_segment_min", ids, num_segments, rows)
    return _segment_reduce(
        "unsorted_segment_min", ids, rows, n, _core.reduce_min, _extreme(rows.dtype.name, True)
    )


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """The product of the rows of ``data`` that share a segment id (1 for an empty segment).

    Args:
        data: A numeric tensor whose leading axes have ``segment_ids``'s shape.
        segment_ids: An int tensor (or array-like) of ids in ``[0, num_segments)``, or negative.
        num_segments: The number of segments (an int).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[num_segments] + data.shape[rank(segment_ids):]``.

    Raises:
        InvalidArgumentError: if an id is ``>= num_segments`` or the shapes do not match.

    Gradient: each row gets the upstream gradient times the product of its segment's other rows.

    >>> import ferrotape as ft
    >>> ft.math.unsorted_segment_prod(ft.constant([2.0, 5.0, 3.0]), [0, 0, 1], 3).numpy()
    array([10.,  3.,  1.], dtype=float32)
    """
    del name
    ids, rows = _ids("unsorted_segment_prod", segment_ids, data)
    n = _num_segments("unsorted_segment_prod", ids, num_segments, rows)
    return _segment_reduce("unsorted_segment_prod", ids, rows, n, _core.reduce_prod, 1)


def _sorted(who, segment_ids, data):
    """The ids of a sorted segment op, checked, and the implied number of segments."""
    ids, rows = _ids(who, segment_ids, data)
    if ids.ndim != 1 or len(np.shape(segment_ids)) != 1:
        raise InvalidArgumentError(f"{who}: segment_ids must be a vector")
    if ids.size and ids.min() < 0:
        raise InvalidArgumentError(f"{who}: segment ids must be >= 0, received {ids.min()}")
    if np.any(np.diff(ids) < 0):
        raise InvalidArgumentError(f"{who}: segment ids are not increasing")
    return ids, rows, _checked_segments(who, int(ids[-1]) + 1 if ids.size else 0, rows)


def _empty_to_zero(ids, n, out):
    """Zeros in the rows of segments no id names (TensorFlow's sorted ops output 0 there)."""
    empty = (np.bincount(ids, minlength=n) == 0).reshape([n] + [1] * (len(out.shape) - 1))
    if not empty.any():
        return out
    return _core.select(_core.constant(empty), _core.zeros_like(out), out)


def segment_sum(data, segment_ids, name=None):
    """The sum of the rows of ``data`` per segment, for sorted ``segment_ids``.

    Args:
        data: A numeric tensor whose first axis has ``segment_ids``'s length.
        segment_ids: A sorted 1-D int tensor (or array-like) of non-negative ids.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[segment_ids[-1] + 1] + data.shape[1:]``; empty segments are 0.

    Raises:
        InvalidArgumentError: if the ids are negative, not sorted or not a vector.

    Gradient: each row of ``data`` gets its segment's upstream gradient.

    >>> import ferrotape as ft
    >>> ft.math.segment_sum(ft.constant([1.0, 2.0, 3.0]), [0, 0, 2]).numpy()
    array([3., 0., 3.], dtype=float32)
    """
    del name
    ids, rows, n = _sorted("segment_sum", segment_ids, data)
    return _segment_sum(ids, rows, n)


def segment_mean(data, segment_ids, name=None):
    """The mean of the rows of ``data`` per segment, for sorted ``segment_ids``.

    Args:
        data: A floating tensor whose first axis has ``segment_ids``'s length.
        segment_ids: A sorted 1-D int tensor (or array-like) of non-negative ids.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[segment_ids[-1] + 1] + data.shape[1:]``; empty segments are 0.

    Raises:
        InvalidArgumentError: if the ids are negative, not sorted or not a vector.

    Gradient: each row gets its segment's upstream gradient divided by the segment's size.

    >>> import ferrotape as ft
    >>> ft.math.segment_mean(ft.constant([1.0, 3.0, 5.0]), [0, 0, 1]).numpy()
    array([2., 5.], dtype=float32)
    """
    del name
    ids, rows, n = _sorted("segment_mean", segment_ids, data)
    counts = np.maximum(_counts(ids, n, rows), 1)
    return _core.truediv(_segment_sum(ids, rows, n), _core.constant(counts))


def segment_max(data, segment_ids, name=None):
    """The maximum of the rows of ``data`` per segment, for sorted ``segment_ids``.

    Args:
        data: A real tensor whose first axis has ``segment_ids``'s length.
        segment_ids: A sorted 1-D int tensor (or array-like) of non-negative ids.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[segment_ids[-1] + 1] + data.shape[1:]``; empty segments are 0.

    Raises:
        InvalidArgumentError: if the ids are negative, not sorted or not a vector.

    Gradient: the upstream gradient goes to the maximal rows, split evenly among ties.

    >>> import ferrotape as ft
    >>> ft.math.segment_max(ft.constant([1.0, 4.0, 2.0]), [0, 0, 2]).numpy()
    array([4., 0., 2.], dtype=float32)
    """
    del name
    ids, rows, n = _sorted("segment_max", segment_ids, data)
    out = _segment_reduce(
        "segment_max", ids, rows, n, _core.reduce_max, _extreme(rows.dtype.name, False)
    )
    return _empty_to_zero(ids, n, out)


def segment_min(data, segment_ids, name=None):
    """The minimum of the rows of ``data`` per segment, for sorted ``segment_ids``.

    Args:
        data: A real tensor whose first axis has ``segment_ids``'s length.
        segment_ids: A sorted 1-D int tensor (or array-like) of non-negative ids.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[segment_ids[-1] + 1] + data.shape[1:]``; empty segments are 0.

    Raises:
        InvalidArgumentError: if the ids are negative, not sorted or not a vector.

    Gradient: the upstream gradient goes to the minimal rows, split evenly among ties.

    >>> import ferrotape as ft
    >>> ft.math.segment_min(ft.constant([1.0, 4.0, 2.0]), [0, 0, 2]).numpy()
    array([1., 0., 2.], dtype=float32)
    """
    del name
    ids, rows, n = _sorted("segment_min", segment_ids, data)
    out = _segment_reduce(
        "segment_min", ids, rows, n, _core.reduce_min, _extreme(rows.dtype.name, True)
    )
    return _empty_to_zero(ids, n, out)


def segment_prod(data, segment_ids, name=None):
    """The product of the rows of ``data`` per segment, for sorted ``segment_ids``.

    Args:
        data: A numeric tensor whose first axis has ``segment_ids``'s length.
        segment_ids: A sorted 1-D int tensor (or array-like) of non-negative ids.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[segment_ids[-1] + 1] + data.shape[1:]``; empty segments are 1.

    Raises:
        InvalidArgumentError: if the ids are negative, not sorted or not a vector.

    Gradient: each row gets the upstream gradient times the product of its segment's other rows.

    >>> import ferrotape as ft
    >>> ft.math.segment_prod(ft.constant([2.0, 5.0, 3.0]), [0, 0, 2]).numpy()
    array([10.,  1.,  3.], dtype=float32)
    """
    del name
    ids, rows, n = _sorted("segment_prod", segment_ids, data)
    return _segment_reduce("segment_prod", ids, rows, n, _core.reduce_prod, 1)


def _int_values(who, name, values):
    """An int argument (labels, counts) as a NumPy array; TensorFlow does not differentiate it."""
    array = np.asarray(values.numpy() if _core.is_tensor(values) else values)
    if array.size and array.dtype.kind not in "iu":
        raise InvalidArgumentError(f"{who}: {name} must be integers, received {array.dtype}")
    if array.size and array.min() < 0:
        raise InvalidArgumentError(f"{who}: {name} must be non-negative, received {array.min()}")
    return array.astype(np.int64)


def bincount(
    arr,
    weights=None,
    minlength=None,
    maxlength=None,
    dtype="int32",
    name=None,
    axis=None,
    binary_output=False,
):
    """How often each value ``0, 1, ...`` occurs in ``arr`` (or the sum of its ``weights``).

    Args:
        arr: A non-negative int tensor (or array-like).
        weights: ``None``, or a tensor of ``arr``'s shape whose entries are summed per value.
        minlength: The least output length (the default is ``max(arr) + 1``).
        maxlength: The most output length; values at or above it are ignored.
        dtype: The output dtype when ``weights`` is ``None``.
        name: Ignored (TensorFlow's op name).
        axis: ``None`` or 0 (count over the whole tensor) or -1 (count each row of a 2-D ``arr``).
        binary_output: If true, output 1 for every value present instead of its count.

    Returns:
        A tensor of shape ``[length]`` (or ``[rows, length]`` for ``axis=-1``).

    Raises:
        InvalidArgumentError: if ``arr`` holds negative values.

    Gradient: each weight gets its value's upstream gradient.

    >>> import ferrotape as ft
    >>> ft.math.bincount(ft.constant([1, 1, 3])).numpy()
    array([0, 2, 0, 1], dtype=int32)
    """
    del name
    values = _int_values("bincount", "arr", arr)
    length = int(values.max()) + 1 if values.size else 0
    if minlength is not None:
        length = max(length, int(minlength))
    if maxlength is not None:
        length = min(length, int(maxlength))
    if axis not in (None, 0, -1):
        raise InvalidArgumentError(f"bincount: axis must be None, 0 or -1, received {axis}")
    per_row = axis == -1
    if per_row and values.ndim != 2:
        raise InvalidArgumentError(
            f"bincount: axis=-1 needs a 2-D arr, received shape {values.shape}"
        )
    rows = values.shape[0] if per_row else 1
    if binary_output or weights is None:
        counted = _core.ones([values.size], dtype=dtype)
    else:
        counted = _core.reshape(_core.convert_to_tensor(weights), [-1])
    flat = values.reshape(-1)
    row_of = (
        np.repeat(np.arange(rows), values.size // max(rows, 1)) if per_row else np.zeros_like(flat)
    )
    keep = np.flatnonzero(flat < length)
    index = np.stack([row_of[keep], flat[keep]], axis=1)
    out = _core.scatter_nd(
        _core.constant(index), _core.gather(counted, _core.constant(keep)), [rows, length]
    )
    if binary_output:
        out = _core.cast(_core.greater(out, _core.zeros_like(out)), dtype)
    return out if per_row else _core.reshape(out, [length])


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype="int32", name=None):
    """The confusion matrix: entry ``[i, j]`` counts (or weighs) label ``i`` predicted as ``j``.

    Args:
        labels: A 1-D tensor of non-negative int class labels.
        predictions: A 1-D tensor of non-negative int predicted classes, of ``labels``'s length.
        num_classes: The number of classes (the default is the largest label or prediction + 1).
        weights: ``None``, or a 1-D tensor of per-example weights, cast to ``dtype``.
        dtype: The output dtype.
        name: Ignored (TensorFlow's op name).

    Returns:
        A ``[num_classes, num_classes]`` tensor of ``dtype``.

    Raises:
        InvalidArgumentError: for negative labels or predictions, or one ``>= num_classes``.

    >>> import ferrotape as ft
    >>> ft.math.confusion_matrix([0, 1, 1], [0, 1, 0]).numpy()
    array([[1, 0],
           [1, 1]], dtype=int32)
    """
    del name
    truth = _int_values("confusion_matrix", "labels", labels).reshape(-1)
    guess = _int_values("confusion_matrix", "predictions", predictions).reshape(-1)
    if truth.shape != guess.shape:
        raise InvalidArgumentError(
            f"confusion_matrix: labels and predictions must have one length, received "
            f"{truth.size} and {guess.size}"
        )
    if num_classes is None:
        n = int(max(truth.max(), guess.max())) + 1 if truth.size else 0
    else:
        n = int(num_classes)
        if truth.size and max(truth.max(), guess.max()) >= n:
            raise InvalidArgumentError(f"confusion_matrix: labels and predictions must be < {n}")
    if weights is None:
        counted = _core.ones([truth.size], dtype=dtype)
    else:
        counted = _core.cast(_core.reshape(_core.convert_to_tensor(weights), [-1]), dtype)
    return _core.scatter_nd(_core.constant(np.stack([truth, guess], axis=1)), counted, [n, n])


def invert_permutation(x, name=None):
    """The inverse permutation: ``y[x[i]] = i``.

    Args:
        x: A 1-D int tensor holding each of ``0 .. n-1`` once.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``x``'s shape and dtype.

    Raises:
        InvalidArgumentError: if ``x`` is not a permutation of ``0 .. n-1``.

    >>> import ferrotape as ft
    >>> ft.math.invert_permutation(ft.constant([2, 0, 1])).numpy()
    array([1, 2, 0], dtype=int32)
    """
    del name
    x = _core.convert_to_tensor(x)
    p = np.asarray(x.numpy())
    if p.ndim != 1 or p.dtype.kind not in "iu" or not np.array_equal(np.sort(p), np.arange(p.size)):
        raise InvalidArgumentError(
            f"invert_permutation: x must be a permutation of 0..{p.size - 1}"
        )
    inverse = np.empty_like(p)
    inverse[p] = np.arange(p.size, dtype=p.dtype)
    return _core.constant(inverse)


def rint(x, name=None):
    """The element-wise nearest integer, halves rounded to even (TensorFlow's ``rint``).

    Args:
        x: A floating tensor.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``x``'s shape and dtype.

    Gradient: zero, as ``round``'s.

    >>> import ferrotape as ft
    >>> ft.math.rint(ft.constant([0.5, 1.5, -2.5])).numpy()
    array([ 0.,  2., -2.], dtype=float32)
    """
    del name
    return _core.round(_floating("rint", _core.convert_to_tensor(x)))


def nextafter(x1, x2, name=None):
    """The next representable value after ``x1`` in the direction of ``x2``, element-wise.

    Args:
        x1: A float32 or float64 tensor.
        x2: A tensor of ``x1``'s dtype, broadcastable with it.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the broadcast shape and ``x1``'s dtype; not differentiable (as TensorFlow).

    Raises:
        InvalidArgumentError: if ``x1`` is not float32 or float64.

    >>> import ferrotape as ft
    >>> float(ft.math.nextafter(ft.constant(1.0, ft.float64), 2.0).numpy()) - 1.0
    2.220446049250313e-16
    """
    del name
    x1, x2 = _tensors(x1, x2)
    if x1.dtype.name not in ("float32", "float64") or x2.dtype != x1.dtype:
        raise InvalidArgumentError(
            f"nextafter: expected two float32 or float64 tensors of one dtype, received "
            f"{x1.dtype.name} and {x2.dtype.name}"
        )
    return _core.constant(np.nextafter(x1.numpy(), x2.numpy()))


def atan2(y, x, name=None):
    """The element-wise angle of the point ``(x, y)``: ``arctan(y / x)`` in the right quadrant.

    Computed by the half-angle identity ``2 * atan(y / (hypot(x, y) + x))``, which stays exact
    and differentiable everywhere except on the negative x-axis and at the origin; those points
    take ``+-pi`` (by the sign of ``y``, zeros included) and ``+-0`` or ``+-pi`` as IEEE's atan2.

    Args:
        y: A floating tensor.
        x: A tensor of ``y``'s dtype, broadcastable with ``y``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the broadcast shape, in ``[-pi, pi]``.

    Gradient: ``x / (x**2 + y**2)`` for ``y`` and ``-y / (x**2 + y**2)`` for ``x``.

    >>> import ferrotape as ft
    >>> ft.math.atan2(ft.constant([1.0, 1.0, -1.0]), ft.constant([1.0, -1.0, 0.0])).numpy().round(4)
    array([ 0.7854,  2.3562, -1.5708], dtype=float32)
    """
    del name
    y, x = _tensors(y, x)
    _floating("atan2", y)
    shape = list(np.broadcast_shapes(tuple(y.shape), tuple(x.shape)))
    y, x = _core.broadcast_to(y, shape), _core.broadcast_to(x, shape)
    yv, xv = y.numpy(), x.numpy()
    # The half-angle formula's denominator vanishes on the closed negative x-axis: those points
    # (a zero-measure set, with a zero or undefined gradient in TF too) take NumPy's value.
    axis = (yv == 0) & (xv <= 0)
    radius = _core.sqrt(_core.square(x) + _core.square(y))
    denominator = _core.select(_core.constant(axis), _core.ones_like(x), radius + x)
    angle = 2.0 * _core.atan(y / denominator)
    return _core.select(_core.constant(axis), _core.constant(np.arctan2(yv, xv)), angle)


def truncatemod(x, y, name=None):
    """The remainder of division rounded toward zero (C's ``fmod``): ``x - truncatediv(x, y) * y``,
    which has the sign of ``x``.

    Args:
        x: An int or floating tensor.
        y: A tensor of ``x``'s dtype, broadcastable with it.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the broadcast shape.

    Raises:
        InvalidArgumentError: for an integer division by zero.

    Not differentiable (TensorFlow registers no gradient).

    >>> import ferrotape as ft
    >>> ft.truncatemod([-7, 7], 2).numpy()
    array([-1,  1], dtype=int32)
    """
    del name
    x, y = _tensors(x, y)
    r = _core.floormod(x, y)
    # floormod's remainder has the sign of y; where it is non-zero and x's sign differs, the
    # truncated remainder is one y further.
    other_sign = _core.logical_and(
        _core.not_equal(r, _core.zeros_like(r)),
        _core.not_equal(_core.less(r, _core.zeros_like(r)), _core.less(x, _core.zeros_like(x))),
    )
    return _core.stop_gradient(_core.select(other_sign, _core.subtract(r, y), r))


def truncatediv(x, y, name=None):
    """Division rounded toward zero (C's integer division): ``-7 / 2 = -3``.

    Args:
        x: An int or floating tensor.
        y: A tensor of ``x``'s dtype, broadcastable with it.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the broadcast shape.

    Raises:
        InvalidArgumentError: for an integer division by zero.

    Not differentiable (TensorFlow returns no gradient).

    >>> import ferrotape as ft
    >>> ft.truncatediv([-7, 7], 2).numpy()
    array([-3,  3], dtype=int32)
    """
    del name
    x, y = _tensors(x, y)
    if x.dtype.is_floating:
        q = _core.divide(x, y)
        result = _core.multiply(_core.sign(q), _core.floor(_core.abs(q)))
    else:
        # x minus its truncated remainder is an exact multiple of y, so floordiv is exact.
        result = _core.floordiv(_core.subtract(x, truncatemod(x, y)), y)
    return _core.stop_gradient(result)


def _limits(dtype):
    """The smallest and largest value of a ferrotape dtype, as Python numbers."""
    if dtype.is_bool:
        return 0, 1
    if dtype.name == "bfloat16":
        return -3.3895313892515355e38, 3.3895313892515355e38
    info = np.iinfo if dtype.is_integer else np.finfo
    limits = info(dtype.as_numpy_dtype)
    return float(limits.min) if dtype.is_floating else int(limits.min), (
        float(limits.max) if dtype.is_floating else int(limits.max)
    )


def bitcast(input, type, name=None):  # noqa: A002 - TensorFlow's argument names
    """``input``'s bits read as ``type``, without changing them (no values are converted).

    The same size keeps the shape; a wider ``input`` gains a last axis of the size ratio (a
    float32 as four uint8); a narrower one needs a last axis of that ratio, which it loses.

    Args:
        input: A numeric tensor (not bool).
        type: The numeric dtype to read the bits as.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``type``. It has no gradient, as in TensorFlow.

    Raises:
        InvalidArgumentError: a bool dtype, or a last axis that does not fit the ratio.

    >>> import ferrotape as ft
    >>> ft.bitcast(ft.constant(1.0), ft.uint16).numpy()
    array([    0, 16256], dtype=uint16)
    """
    del name
    from .dtypes import as_dtype

    x = _core.convert_to_tensor(input)
    target = as_dtype(type)
    for d in (x.dtype, target):
        if d.is_bool:
            raise InvalidArgumentError(f"Bitcast: bool is not a bitcast dtype, received {d.name}")
    src = np.array(x.numpy(), order="C")  # (ascontiguousarray would make a scalar 1-D)
    dst = np.dtype(target.as_numpy_dtype) if target.name != "bfloat16" else None
    if dst is None:
        import ml_dtypes

        dst = np.dtype(ml_dtypes.bfloat16)
    (a, b), shape = (src.dtype.itemsize, dst.itemsize), src.shape
    if a < b and (not shape or shape[-1] != b // a):
        raise InvalidArgumentError(
            f"Bitcast: cannot bitcast from {x.dtype.name} to {target.name}: the last axis must "
            f"be {b // a}, received shape {list(shape)}"
        )
    out = (src.reshape(-1) if src.ndim == 0 else src).view(dst)
    out = out.reshape(shape + (a // b,)) if a > b else out.reshape(shape[:-1] if a < b else shape)
    return _core.constant(out)


def saturate_cast(value, dtype, name=None):
    """``value`` cast to ``dtype``, first clipped to the range ``dtype`` can hold, so that the
    cast never overflows (``cast`` of 300.0 to an 8-bit type would wrap; this gives the maximum).

    Args:
        value: A numeric tensor.
        dtype: The target dtype.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``value`` clipped and cast to ``dtype``.

    Gradient: the upstream gradient where ``value`` is inside the range, zero where it was
    clipped (between floating dtypes).

    >>> import ferrotape as ft
    >>> ft.saturate_cast(ft.constant([-1e10, 3e9, 2.7]), ft.int32).numpy()
    array([-2147483648,  2147483520,           2], dtype=int32)
    """
    del name
    from .dtypes import as_dtype

    x = _core.convert_to_tensor(value)
    target = as_dtype(dtype)
    (in_lo, in_hi), (out_lo, out_hi) = _limits(x.dtype), _limits(target)
    if in_lo < out_lo or in_hi > out_hi:
        # The bounds in x's own dtype, rounded inwards where that dtype cannot hold them
        # exactly (int32's maximum is not a float32: the nearest below it is 2147483520).
        kind = np.float32 if x.dtype.name == "bfloat16" else x.dtype.as_numpy_dtype
        lo, hi = np.array(max(in_lo, out_lo), kind), np.array(min(in_hi, out_hi), kind)
        if lo.item() < max(in_lo, out_lo):
            lo = np.nextafter(lo, kind(np.inf)) if lo.dtype.kind == "f" else lo
        if hi.item() > min(in_hi, out_hi):
            hi = np.nextafter(hi, kind(-np.inf)) if hi.dtype.kind == "f" else hi
        x = _core.clip_by_value(x, lo.item(), hi.item())
    return _core.cast(x, target)
