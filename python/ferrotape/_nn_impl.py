"""``ft.nn``'s normalizations, losses and small ops composed from tensor ops (TensorFlow keeps
most of them in ``nn_impl.py``), each differentiable through its formula."""

import math
import operator
import reprlib

import numpy as np

from . import _core
from ._core.nn import relu
from .errors import InvalidArgumentError


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


def _statistics_axes(op, axes, rank):
    """``axes`` as distinct non-negative ints, each checked against ``rank``. TF 2.21 drops
    repeats (``set(axes)``) and lets an axis out of range escape as Python's ``IndexError``
    ("list index out of range"); here that is the op's InvalidArgumentError, naming it."""
    try:
        listed = [operator.index(axes)] if np.ndim(axes) == 0 else list(axes)
        listed = [operator.index(a) for a in listed]
    except TypeError:
        raise TypeError(f"{op}: axes must be a list of ints, received axes={axes!r}") from None
    for a in listed:
        if not -rank <= a < rank:
            raise InvalidArgumentError(
                f"{op}: axis {a} in axes={listed} is out of range for x of rank {rank} "
                f"(expected axes in [{-rank}, {rank}))"
            )
    return sorted({a % rank for a in listed})


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
    axes_list = _statistics_axes("sufficient_statistics", axes, len(x.shape))
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
    if labels.shape != logits.shape:
        raise ValueError(
            f"weighted_cross_entropy_with_logits: `logits` and `labels` must have the same "
            f"shape, received ({list(logits.shape)} vs {list(labels.shape)})."
        )
    numeric = isinstance(pos_weight, (int, float, np.number, np.bool_)) or _core.is_tensor(
        pos_weight
    )
    if not (numeric or isinstance(pos_weight, np.ndarray) and pos_weight.dtype.kind in "biufc"):
        # TensorFlow computes ``pos_weight - 1`` in Python: for a string array numpy's
        # UFuncTypeError escapes there; this is the TypeError it derives from, with the op.
        raise TypeError(
            f"weighted_cross_entropy_with_logits: pos_weight must be a number, a numeric array "
            f"or a tensor, received pos_weight={reprlib.repr(pos_weight)}"
        )
    # TensorFlow's own expression, integer literals included, so dtypes mix as they do there.
    log_weight = 1 + (pos_weight - 1) * labels
    softplus_neg = _core.log1p(_core.exp(-_core.abs(logits))) + relu(-logits)
    return (1 - labels) * logits + log_weight * softplus_neg


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


def _pool_adjacent_violators(row):
    """The non-increasing least-squares fit of ``row``: block means and each entry's block."""
    means, sizes = [], []
    for value in row.tolist():
        means.append(value)
        sizes.append(1)
        # A block above its predecessor breaks the order: merge them (equal ones stay apart).
        while len(means) > 1 and means[-2] < means[-1]:
            size = sizes[-2] + sizes[-1]
            means[-2:] = [(means[-2] * sizes[-2] + means[-1] * sizes[-1]) / size]
            sizes[-2:] = [size]
    segments = [i for i, size in enumerate(sizes) for _ in range(size)]
    return [m for m, size in zip(means, sizes, strict=True) for _ in range(size)], segments


def isotonic_regression(inputs, decreasing=True, axis=-1):
    """The monotone least-squares fit along ``axis``: for each vector ``x``, the ``y``
    minimising ``sum((x - y) ** 2)`` with ``y_1 >= y_2 >= ...`` (``<=`` when not
    ``decreasing``), found by pooling adjacent violators.

    Args:
        inputs: A tensor (floating or integer).
        decreasing: Whether the fit is non-increasing (default) or non-decreasing.
        axis: The axis the vectors lie along.

    Returns:
        ``(output, segments)``: the fit, of ``inputs``' floating dtype (float32 for 8- and
        16-bit integers, float64 for wider ones), and int32 block ids, counting from 0 along
        each vector; entries of one block share their mean.

    Gradient: each entry gets the mean of the upstream gradient over its block (the fit is
    each block's mean of ``inputs``, and the blocks are locally constant); none for integer
    inputs or through ``segments``.

    >>> import ferrotape as ft
    >>> output, segments = ft.nn.isotonic_regression([[1.0, 3.0, 2.0, 4.0]])
    >>> output.numpy(), segments.numpy()
    (array([[2.5, 2.5, 2.5, 2.5]], dtype=float32), array([[0, 0, 0, 0]], dtype=int32))
    """
    x = _core.convert_to_tensor(inputs)
    name = x.dtype.name
    if name == "bool" or name.startswith("complex"):
        raise InvalidArgumentError(
            f"isotonic_regression: expected a real floating or integer tensor, received {name}"
        )
    if name in ("float16", "bfloat16", "float32", "float64"):
        out_dtype = name
    else:
        out_dtype = "float32" if name in ("int8", "int16", "uint8", "uint16") else "float64"
    rank = len(x.shape)
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(
            f"isotonic_regression: axis must be an int, received axis={axis!r}"
        ) from None
    if not -rank <= axis < rank:  # TF 2.21: InvalidArgumentError, "`dim` must be in the range"
        raise InvalidArgumentError(
            f"isotonic_regression: axis must be in the range [{-rank}, {rank}) for inputs of "
            f"rank {rank}, received axis={axis}"
        )
    # Read through identity, so that an ft.function being traced runs this eagerly instead of
    # baking the argument's value into its replay.
    values = np.moveaxis(_core.identity(x).numpy().astype(np.float64), axis, -1)
    rows = values.reshape(-1, values.shape[-1]) if values.ndim else values.reshape(1, 1)
    sign = 1.0 if decreasing else -1.0
    fits, segments = zip(*(_pool_adjacent_violators(sign * r) for r in rows), strict=True)
    output = (sign * np.asarray(fits, dtype=np.float64)).reshape(values.shape)
    blocks = np.asarray(segments, dtype=np.int32).reshape(values.shape)
    output = _core.cast(_core.constant(np.moveaxis(output, -1, axis)), out_dtype)
    segments = _core.constant(np.moveaxis(blocks, -1, axis))
    if x.dtype.is_floating:
        backward = _block_mean(blocks, axis % max(values.ndim, 1))
        _core.record_custom_gradient([x], [output, segments], lambda g, _: [backward(g)])
    return output, segments


def _block_mean(segments, axis):
    """The derivative of ``isotonic_regression`` for the block ids ``segments`` (their vectors
    along the last axis, ``axis`` in the tensor): ``g -> each entry's block mean of g``."""
    if segments.ndim == 0:
        return lambda g: g
    n = segments.shape[-1]
    # One id per block over the whole tensor: the vector's index times n, plus the block id.
    ids = (segments.reshape(-1, n) + n * np.arange(segments.size // max(n, 1))[:, None]).ravel()
    counts = np.maximum(np.bincount(ids, minlength=ids.size), 1)
    perm = [d for d in range(segments.ndim) if d != axis] + [axis]
    inverse = list(np.argsort(perm))

    def backward(g):
        flat = _core.reshape(_core.transpose(g, perm), [-1])
        sums = _core.scatter_nd(_core.constant(ids[:, None]), flat, [ids.size])
        means = _core.gather(sums / _core.constant(counts.astype(g.dtype.name)), ids)
        return _core.transpose(_core.reshape(means, segments.shape), inverse)

    return backward
