"""``ft.nn``'s normalizations, losses and small ops composed from tensor ops (TensorFlow keeps
most of them in ``nn_impl.py``), each differentiable through its formula."""

import math
import operator

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from . import _core
from ._core.nn import relu


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """Divides ``x`` by its L2 norm along ``axis``: ``x / sqrt(max(sum(x ** 2), epsilon))``.

    Args:
        x: A floating tensor.
        axis: The axis or axes to normalize along; ``None`` means all.
        epsilon: The lower bound of the squared norm (keeps zero vectors finite).
        name: Ignored (TensorFlow's op name).
        dim: A deprecated alias of ``axis``.

    Returns:
        A tensor of ``x``'s shape and dtype.

    Gradient: ``(g - y * sum(g * y)) / norm`` where the norm is above the bound.

    >>> import ferrotape as ft
    >>> ft.nn.l2_normalize(ft.constant([3.0, 4.0])).numpy()
    array([0.6, 0.8], dtype=float32)
    """
    del name
    axis = dim if axis is None else axis
    x = _core.convert_to_tensor(x)
    square_sum = _core.reduce_sum(_core.square(x), axis, keepdims=True)
    return x * _core.rsqrt(_core.maximum(square_sum, epsilon))


def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None):
    """The mean and variance of ``x`` over ``axes``, each element counted ``frequency_weights``
    times.

    Args:
        x: A floating tensor.
        axes: The axes to reduce.
        frequency_weights: Non-negative weights, broadcastable to ``x``.
        keepdims: If true, the reduced axes are kept with length 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair ``(mean, variance)``.

    Gradient: that of the weighted sums, for ``x`` and the weights.

    >>> import ferrotape as ft
    >>> m, v = ft.nn.weighted_moments(ft.constant([1.0, 3.0]), [0], ft.constant([3.0, 1.0]))
    >>> m.numpy(), v.numpy()
    (np.float32(1.5), np.float32(0.75))
    """
    del name
    x = _core.convert_to_tensor(x)
    weights = _core.cast(frequency_weights, x.dtype)
    total = _core.reduce_sum(_core.broadcast_to(weights, x.shape), axes, keepdims=True)
    divisor = _core.reciprocal(total)
    mean = _core.reduce_sum(weights * x, axes, keepdims=True) * divisor
    variance = _core.reduce_sum(weights * _core.squared_difference(x, mean), axes, True) * divisor
    if not keepdims:
        mean, variance = _core.squeeze(mean, axes), _core.squeeze(variance, axes)
    return mean, variance


def sufficient_statistics(x, axes, shift=None, keepdims=False, name=None):
    """The count, ``sum(x - shift)`` and ``sum((x - shift) ** 2)`` over ``axes``.

    Args:
        x: A floating tensor.
        axes: The axes to reduce.
        shift: A value subtracted first (for numerical stability), or ``None``.
        keepdims: If true, the reduced axes are kept with length 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(count, mean_ss, variance_ss, shift)``: ``count`` is a scalar of ``x``'s dtype.

    Gradient: that of the sums.

    >>> import ferrotape as ft
    >>> c, m, v, _ = ft.nn.sufficient_statistics(ft.constant([1.0, 2.0, 3.0]), [0])
    >>> c.numpy(), m.numpy(), v.numpy()
    (np.float32(3.0), np.float32(6.0), np.float32(14.0))
    """
    del name
    x = _core.convert_to_tensor(x)
    axes_list = [axes] if isinstance(axes, int) else list(axes)
    count = math.prod(x.shape[a] for a in axes_list)
    shifted = x if shift is None else x - _core.cast(shift, x.dtype)
    mean_ss = _core.reduce_sum(shifted, axes_list, keepdims=keepdims)
    variance_ss = _core.reduce_sum(_core.square(shifted), axes_list, keepdims=keepdims)
    shift = None if shift is None else _core.cast(shift, x.dtype)
    return _core.cast(float(count), x.dtype), mean_ss, variance_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """The mean and variance from ``sufficient_statistics``' sums.

    ``mean = mean_ss / counts + shift``, ``variance = variance_ss / counts - (mean_ss /
    counts) ** 2``.

    Args:
        counts: The number of elements summed.
        mean_ss: ``sum(x - shift)``.
        variance_ss: ``sum((x - shift) ** 2)``.
        shift: The shift used, or ``None``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair ``(mean, variance)``.

    Gradient: that of the formula.

    >>> import ferrotape as ft
    >>> m, v = ft.nn.normalize_moments(3.0, ft.constant(6.0), ft.constant(14.0), None)
    >>> m.numpy(), v.numpy().round(4)
    (np.float32(2.0), np.float32(0.6667))
    """
    del name
    mean_ss = _core.convert_to_tensor(mean_ss)
    divisor = _core.reciprocal(_core.cast(counts, mean_ss.dtype))
    shifted_mean = mean_ss * divisor
    mean = shifted_mean if shift is None else shifted_mean + _core.cast(shift, mean_ss.dtype)
    variance = variance_ss * divisor - _core.square(shifted_mean)
    return mean, variance


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """The negative Poisson log-likelihood of ``targets`` given the log-rate ``log_input``.

    ``exp(log_input) - log_input * targets``, plus, with ``compute_full_loss``, Stirling's
    ``targets * log(targets) - targets + 0.5 * log(2 pi targets)`` where ``targets > 1``.

    Args:
        targets: Observed counts, of ``log_input``'s shape.
        log_input: The predicted log-rates.
        compute_full_loss: Whether to add the Stirling term (constant in ``log_input``).
        name: Ignored (TensorFlow's op name).

    Returns:
        The element-wise loss, of ``log_input``'s shape.

    Gradient: ``exp(log_input) - targets`` for ``log_input``.

    >>> import ferrotape as ft
    >>> ft.nn.log_poisson_loss(ft.constant([1.0]), ft.constant([0.0])).numpy()
    array([1.], dtype=float32)
    """
    del name
    log_input = _core.convert_to_tensor(log_input)
    targets = _core.cast(targets, log_input.dtype)
    if list(targets.shape) != list(log_input.shape):
        raise ValueError(
            f"log_poisson_loss: targets and log_input must have the same shape, received "
            f"{list(targets.shape)} and {list(log_input.shape)}"
        )
    loss = _core.exp(log_input) - log_input * targets
    if not compute_full_loss:
        return loss
    ones, zeros = _core.ones_like(targets), _core.zeros_like(targets)
    safe = _core.select(targets > ones, targets, ones)
    stirling = safe * _core.log(safe) - safe + 0.5 * _core.log(2.0 * math.pi * safe)
    return loss + _core.select(targets > ones, stirling, zeros)


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """Sigmoid cross-entropy with the positive term weighted by ``pos_weight``.

    ``labels * -log(sigmoid(logits)) * pos_weight + (1 - labels) * -log(1 - sigmoid(logits))``,
    computed as ``(1 - labels) * logits + (1 + (pos_weight - 1) * labels) *
    (log1p(exp(-|logits|)) + relu(-logits))`` so that it stays finite.

    Args:
        labels: Targets in ``[0, 1]``, of ``logits``' shape.
        logits: Unnormalized log-odds.
        pos_weight: The weight of positive examples (above 1 favours recall).
        name: Ignored (TensorFlow's op name).

    Returns:
        The element-wise loss, of ``logits``' shape.

    Gradient: that of the stable form, for ``logits`` and ``labels``.

    >>> import ferrotape as ft
    >>> ft.nn.weighted_cross_entropy_with_logits(ft.constant([1.0]), ft.constant([0.0]), 2.0
    ...     ).numpy().round(4)
    array([1.3863], dtype=float32)
    """
    del name
    logits = _core.convert_to_tensor(logits)
    labels = _core.cast(labels, logits.dtype)
    log_weight = 1.0 + (pos_weight - 1.0) * labels
    softplus_neg = _core.log1p(_core.exp(-_core.abs(logits))) + relu(-logits)
    return (1.0 - labels) * logits + log_weight * softplus_neg


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """The sum of ``per_example_loss`` (times ``sample_weight``) over the global batch size.

    ferrotape runs on one replica, so the global batch is the first dimension of
    ``per_example_loss`` unless given.

    Args:
        per_example_loss: A floating tensor ``[batch, ...]``.
        sample_weight: Weights broadcastable to ``per_example_loss``, or ``None``.
        global_batch_size: The divisor, or ``None`` for ``per_example_loss.shape[0]``.

    Returns:
        A scalar of ``per_example_loss``' dtype.

    Gradient: ``sample_weight / global_batch_size``.

    >>> import ferrotape as ft
    >>> ft.nn.compute_average_loss(ft.constant([1.0, 2.0, 3.0])).numpy()
    np.float32(2.0)
    """
    loss = _core.convert_to_tensor(per_example_loss)
    if sample_weight is not None:
        loss = loss * _core.cast(sample_weight, loss.dtype)
    if global_batch_size is None:
        global_batch_size = loss.shape[0] if loss.ndim else 1
    elif operator.index(global_batch_size) <= 0:
        raise ValueError(
            f"compute_average_loss: global_batch_size must be positive, received "
            f"{global_batch_size}"
        )
    return _core.reduce_sum(loss) / _core.cast(float(global_batch_size), loss.dtype)


def scale_regularization_loss(regularization_loss):
    """The regularization loss (summed if a list) scaled for one replica: divided by 1.

    Args:
        regularization_loss: A scalar tensor, or a list of them.

    Returns:
        A scalar tensor.

    Gradient: 1 for each term.

    >>> import ferrotape as ft
    >>> ft.nn.scale_regularization_loss([ft.constant(1.0), ft.constant(2.0)]).numpy()
    np.float32(3.0)
    """
    if isinstance(regularization_loss, (list, tuple)):
        return _core.add_n(list(regularization_loss))
    return _core.convert_to_tensor(regularization_loss)


def zero_fraction(value, name=None):
    """The fraction of zeros in ``value`` (e.g. the sparsity of ReLU activations), as float32.

    Args:
        value: A tensor.
        name: Ignored (TensorFlow's op name).

    Returns:
        A float32 scalar in ``[0, 1]``.

    >>> import ferrotape as ft
    >>> ft.nn.zero_fraction(ft.constant([0.0, 1.0, 0.0, 2.0])).numpy()
    np.float32(0.5)
    """
    del name
    value = _core.convert_to_tensor(value)
    zeros = _core.equal(value, _core.zeros_like(value))
    return _core.reduce_mean(_core.cast(zeros, "float32"))


def softsign(features, name=None):
    """The element-wise ``features / (1 + |features|)``.

    Args:
        features: A floating tensor.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``features``' shape, in ``(-1, 1)``.

    Gradient: ``1 / (1 + |features|) ** 2``.

    >>> import ferrotape as ft
    >>> ft.nn.softsign(ft.constant([-1.0, 3.0])).numpy()
    array([-0.5 ,  0.75], dtype=float32)
    """
    del name
    features = _core.convert_to_tensor(features)
    return features / (1.0 + _core.abs(features))


def crelu(features, axis=-1, name=None):
    """The concatenated ReLU ``concat([relu(features), relu(-features)], axis)``.

    Args:
        features: A floating tensor.
        axis: The axis to concatenate along (its length doubles).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor twice as long along ``axis``.

    Gradient: that of the two ReLUs.

    >>> import ferrotape as ft
    >>> ft.nn.crelu(ft.constant([1.0, -2.0])).numpy()
    array([1., 0., 0., 2.], dtype=float32)
    """
    del name
    features = _core.convert_to_tensor(features)
    return _core.concat([relu(features), relu(-features)], axis)


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


def _last_axis_rows(x):
    """``x`` as a 2-D ``[rows, last]`` numpy view and its leading shape."""
    values = x.numpy()
    return values.reshape(-1, values.shape[-1]) if values.ndim else values.reshape(1, 1)


def top_k(input, k=1, sorted=True, index_type="int32", name=None):  # noqa: A002
    """The ``k`` largest entries of the last axis and their indices (ties: lower index first).

    Args:
        input: A tensor of rank at least 1 with at least ``k`` entries in its last axis.
        k: How many entries to keep.
        sorted: Ignored: the values are always in descending order.
        index_type: The dtype of the indices (int32 or int64).
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair ``(values, indices)``, each ``input.shape[:-1] + [k]``.

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
    rows = _last_axis_rows(x)
    # A stable sort of the negated values keeps the lower index first among ties; NaN sorts as
    # the largest, as in TensorFlow.
    keys = np.where(np.isnan(rows), -np.inf, -rows.astype(np.float64))
    order = np.argsort(keys, axis=-1, kind="stable")[:, :k]
    flat = order + np.arange(rows.shape[0])[:, None] * rows.shape[1]
    values = _core.gather(_core.reshape(x, [-1]), _core.constant(flat.reshape(-1)))
    shape = [*x.shape[:-1], k]
    indices = _core.cast(_core.constant(order.reshape(shape)), index_type)
    return _core.reshape(values, shape), indices


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


def local_response_normalization(
    input,
    depth_radius=5,
    bias=1.0,
    alpha=1.0,
    beta=0.5,
    name=None,  # noqa: A002
):
    """Normalizes each channel by its neighbours:
    ``input / (bias + alpha * sum(input[..., c - r : c + r + 1] ** 2)) ** beta``.

    Args:
        input: A 4-D NHWC floating tensor.
        depth_radius: ``r``: how many channels on each side are summed.
        bias: The offset (usually positive, to avoid dividing by 0).
        alpha: The scale of the sum.
        beta: The exponent.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape.

    Gradient: that of the formula.

    >>> import ferrotape as ft
    >>> ft.nn.local_response_normalization(ft.ones([1, 1, 1, 2]), 1, 1.0, 1.0, 1.0).numpy()
    array([[[[0.33333334, 0.33333334]]]], dtype=float32)
    """
    del name
    x = _core.convert_to_tensor(input)
    if x.ndim != 4:
        raise ValueError(f"local_response_normalization: input must be 4-D, received {x.shape}")
    r = operator.index(depth_radius)
    squared = _core.pad(_core.square(x), [[0, 0], [0, 0], [0, 0], [r, r]])
    channels = x.shape[-1]
    window = _core.add_n([squared[..., i : i + channels] for i in range(2 * r + 1)])
    return x / (bias + alpha * window) ** beta


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


def batch_norm_with_global_normalization(
    t=None,
    m=None,
    v=None,
    beta=None,
    gamma=None,
    variance_epsilon=None,
    scale_after_normalization=None,
    name=None,
    input=None,  # noqa: A002
    mean=None,
    variance=None,
):
    """``batch_normalization`` under TensorFlow's older argument names.

    Args:
        t: The input (or ``input``).
        m: The mean (or ``mean``).
        v: The variance (or ``variance``).
        beta: The offset.
        gamma: The scale, used only if ``scale_after_normalization``.
        variance_epsilon: A small float added to the variance.
        scale_after_normalization: Whether to multiply by ``gamma``.
        name: Ignored (TensorFlow's op name).
        input: An alias of ``t``.
        mean: An alias of ``m``.
        variance: An alias of ``v``.

    Returns:
        The normalized tensor.

    Gradient: that of ``batch_normalization``.

    >>> import ferrotape as ft
    >>> ft.nn.batch_norm_with_global_normalization(
    ...     ft.constant([1.0, 3.0]), 2.0, 1.0, 0.0, 1.0, 0.0, True).numpy()
    array([-1.,  1.], dtype=float32)
    """
    del name
    from .nn import batch_normalization

    t = input if t is None else t
    m = mean if m is None else m
    v = variance if v is None else v
    scale = gamma if scale_after_normalization else None
    return batch_normalization(t, m, v, beta, scale, variance_epsilon)


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


def max_pool_with_argmax(
    input,  # noqa: A002
    ksize,
    strides,
    padding,
    data_format="NHWC",
    output_dtype="int64",
    include_batch_in_index=False,
    name=None,
):
    """``max_pool2d`` and the flattened position of each window's maximum.

    The position is ``(y * width + x) * channels + c`` (with ``include_batch_in_index``,
    ``((b * height + y) * width + x) * channels + c``); among equal values the first in
    row-major window order wins, padding never does.

    Args:
        input: A 4-D NHWC float tensor.
        ksize: An int, or 1, 2 or 4 ints.
        strides: An int, or 1, 2 or 4 ints.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NHWC"``.
        output_dtype: int32 or int64 for the positions.
        include_batch_in_index: Whether the position counts the batch too.
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair ``(output, argmax)`` of ``[batch, out_height, out_width, channels]`` tensors.

    Gradient: for ``output``, that of ``max_pool2d``; ``argmax`` has none.

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.constant([1.0, 4.0, 3.0, 2.0]), [1, 2, 2, 1])
    >>> ft.nn.max_pool_with_argmax(x, 2, 2, "VALID")[1].numpy().ravel()
    array([1])
    """
    del name
    from .nn import _nhwc, _spatial, max_pool2d

    op = "max_pool_with_argmax"
    _nhwc(op, data_format)
    x = _core.convert_to_tensor(input)
    if x.ndim != 4:
        raise ValueError(f"{op}: input must be 4-D NHWC, received shape {list(x.shape)}")
    output = max_pool2d(x, ksize, strides, padding)
    (kh, kw), (sh, sw) = _spatial(op, "ksize", ksize), _spatial(op, "strides", strides)
    values = x.numpy().astype(np.float64)
    b, h, w, c = values.shape
    top = left = 0
    if padding == "SAME":
        from ._nn_conv import _same_padding

        (top, bottom), (left, right) = _same_padding(h, kh, sh, 1), _same_padding(w, kw, sw, 1)
        values = np.pad(
            values, [(0, 0), (top, bottom), (left, right), (0, 0)], constant_values=-np.inf
        )
    windows = sliding_window_view(values, (kh, kw), axis=(1, 2))[:, ::sh, ::sw]
    flat = windows.reshape(*windows.shape[:4], kh * kw)
    best = np.argmax(flat, axis=-1)  # the first maximum in row-major window order
    oh, ow = np.arange(windows.shape[1]), np.arange(windows.shape[2])
    rows = oh[None, :, None, None] * sh + best // kw - top
    cols = ow[None, None, :, None] * sw + best % kw - left
    position = (rows * w + cols) * c + np.arange(c)
    if include_batch_in_index:
        position = position + np.arange(b)[:, None, None, None] * h * w * c
    return output, _core.cast(_core.constant(position.astype(np.int64)), output_dtype)
