"""``ft.nn``: activations, softmax, cross-entropies and a few layer helpers."""

import operator
import reprlib

import numpy as np

from . import _core
from . import random as _random
from ._exports.nn import *  # noqa: F403 (the native names: scripts/gen_bindings.py)
from ._exports.nn import __all__ as _native


def bias_add(value, bias, data_format=None, name=None):
    """Adds the 1-D ``bias`` to ``value`` along its last (channels) axis.

    Args:
        value: A tensor of rank at least 1.
        bias: A 1-D tensor of ``value``'s dtype, as long as ``value``'s last dimension.
        data_format: ``None``, ``"NHWC"``, ``"N...C"`` or ``"channels_last"``; channels-first
            formats are not supported.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``value + bias``, of ``value``'s shape.

    Raises:
        ValueError: for a channels-first format, or a ``bias`` that does not match.

    Gradient: the upstream gradient for ``value``; its sum over all but the last axis for ``bias``.

    >>> import ferrotape as ft
    >>> ft.nn.bias_add(ft.zeros([2, 2]), ft.constant([1.0, 2.0])).numpy()
    array([[1., 2.],
           [1., 2.]], dtype=float32)
    """
    del name
    if data_format not in (None, "NHWC", "N...C", "channels_last"):
        raise ValueError(
            f"bias_add: only channels-last data formats are supported, received "
            f"data_format={data_format!r}"
        )
    value, bias = _core.convert_to_tensor(value), _core.convert_to_tensor(bias)
    if bias.ndim != 1 or value.ndim < 1 or value.shape[-1] != bias.shape[0]:
        raise ValueError(
            f"bias_add: bias must be 1-D with as many entries as the last dimension of value; "
            f"received value.shape={list(value.shape)}, bias.shape={list(bias.shape)}"
        )
    return _core.add(value, bias)


def l2_loss(t, name=None):
    """Half the sum of squares of ``t``: ``sum(t ** 2) / 2`` (no square root).

    Args:
        t: A floating tensor.
        name: Ignored (TensorFlow's op name).

    Returns:
        A scalar of ``t``'s dtype.

    Gradient: ``t``.

    >>> import ferrotape as ft
    >>> ft.nn.l2_loss(ft.constant([1.0, 2.0, 3.0])).numpy()
    np.float32(7.0)
    """
    del name
    return _core.reduce_sum(_core.square(t)) / 2


def moments(x, axes, shift=None, keepdims=False, name=None):
    """The mean and the (population) variance of ``x`` over ``axes``.

    Args:
        x: A floating tensor.
        axes: The axes to reduce, an int or a list of ints.
        shift: Ignored (TensorFlow no longer uses it either).
        keepdims: If true, the reduced axes are kept with length 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair ``(mean, variance)`` of tensors.

    Gradient: as ``reduce_mean`` and ``math.reduce_variance``.

    >>> import ferrotape as ft
    >>> mean, variance = ft.nn.moments(ft.constant([1.0, 2.0, 3.0, 4.0]), axes=[0])
    >>> mean.numpy(), variance.numpy()
    (np.float32(2.5), np.float32(1.25))
    """
    del shift, name
    mean = _core.reduce_mean(x, axes, keepdims=True)
    variance = _core.reduce_mean(_core.squared_difference(x, mean), axes, keepdims=True)
    if not keepdims:
        mean = _core.squeeze(mean, axes)
        variance = _core.squeeze(variance, axes)
    return mean, variance


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zeroes each element with probability ``rate`` and scales the others by ``1 / (1 - rate)``.

    The expected value of every element is unchanged.

    Args:
        x: A floating tensor.
        rate: The probability of dropping each element, a number in ``[0, 1)``.
        noise_shape: The shape of the keep/drop mask, broadcast against ``x``'s shape
            (e.g. ``[batch, 1, features]`` to drop the same features at every step);
            ``None`` for ``x``'s shape.
        seed: An int seed for the mask (see ``random.set_seed``).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``x``'s shape and dtype.

    Raises:
        ValueError: if ``rate`` is not a number in ``[0, 1)``.

    Gradient: the mask times ``1 / (1 - rate)``.

    >>> import ferrotape as ft
    >>> ft.nn.dropout(ft.ones([4]), rate=0.0).numpy()
    array([1., 1., 1., 1.], dtype=float32)
    """
    del name
    x = _core.convert_to_tensor(x)
    if isinstance(rate, (_core.Tensor, _core.Variable)):
        rate = float(rate)
    if isinstance(rate, bool) or not isinstance(rate, (int, float, np.number)) or not 0 <= rate < 1:
        raise ValueError(
            f"dropout: rate must be a number in [0, 1), received rate={reprlib.repr(rate)}"
        )
    shape = x.shape if noise_shape is None else noise_shape
    seed = _random._seed_int("dropout", seed)  # any int, reduced as TensorFlow reduces seeds
    keep = _core.random.uniform(shape, dtype=x.dtype, seed=seed) >= rate
    return x * _core.cast(keep, x.dtype) / (1.0 - rate)


def _spatial(op, name, value, default=None):
    """TensorFlow's forms of a per-axis argument (an int, or 1, 2 or 4 ints for NHWC) as
    ``(height, width)``."""
    if value is None:
        value = default
    values = _positive_ints(op, name, value)
    if len(values) == 1:
        return (values[0], values[0])
    if len(values) == 2:
        return tuple(values)
    if len(values) == 4:
        if values[0] != 1 or values[3] != 1:
            raise ValueError(
                f"{op}: {name} along the batch and channel axes must be 1, received {values}"
            )
        return (values[1], values[2])
    raise ValueError(f"{op}: {name} must be an int or a list of 1, 2 or 4 ints, received {value}")


def _positive_ints(op, name, value):
    """An int or a sequence of ints, each at least 1, as a list."""
    items = [value] if isinstance(value, (int, np.integer)) else value
    try:
        values = [operator.index(v) for v in items]
    except TypeError:
        values = None
    if values is None or any(v < 1 for v in values):
        raise ValueError(
            f"{op}: {name} must be a positive int or a list of 1, 2 or 4 positive ints, "
            f"received {name}={reprlib.repr(value)}"
        )
    return values


def _nhwc(op, data_format):
    if data_format not in (None, "NHWC", "channels_last"):
        raise ValueError(
            f"{op}: only the NHWC data format is supported on the CPU, received {data_format!r}"
        )


def _padding(op, padding):
    if not isinstance(padding, str):
        raise ValueError(f"{op}: padding must be 'SAME' or 'VALID', received {padding!r}")
    return padding


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    """The 2-D convolution (cross-correlation, as in TF) of an NHWC ``input`` with HWIO ``filters``.

    Args:
        input: A 4-D floating tensor ``[batch, height, width, in_channels]``.
        filters: A 4-D tensor ``[filter_height, filter_width, in_channels, out_channels]``.
        strides: An int, or 1, 2 or 4 ints (NHWC, batch and channel strides 1).
        padding: ``"SAME"`` (output size ``ceil(in / stride)``) or ``"VALID"`` (no padding).
        data_format: ``"NHWC"``; channels-first formats are not supported on the CPU.
        dilations: An int, or 1, 2 or 4 ints; ``None`` means 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 4-D tensor ``[batch, out_height, out_width, out_channels]``.

    Raises:
        ValueError: for an unsupported format or padding, or ints below 1.

    Gradient: ``conv2d_transpose`` of the upstream gradient for ``input``; the correlation of
    ``input`` with the upstream gradient for ``filters``.

    >>> import ferrotape as ft
    >>> x = ft.ones([1, 4, 4, 1])
    >>> ft.nn.conv2d(x, ft.ones([3, 3, 1, 2]), 1, "SAME")[0, :, :, 0].numpy()[0]
    array([4., 6., 6., 4.], dtype=float32)
    """
    del name
    _nhwc("conv2d", data_format)
    return _core.nn.conv2d_nhwc(
        input,
        filters,
        _spatial("conv2d", "strides", strides),
        _spatial("conv2d", "dilations", dilations, 1),
        _padding("conv2d", padding),
    )


def conv2d_transpose(
    input,  # noqa: A002
    filters,
    output_shape,
    strides,
    padding="SAME",
    data_format="NHWC",
    dilations=None,
    name=None,
):
    """The transpose of ``conv2d`` (its input gradient), mapping ``conv2d``'s output shape back.

    Args:
        input: A 4-D NHWC tensor ``[batch, height, width, in_channels]``.
        filters: A 4-D tensor ``[filter_height, filter_width, out_channels, in_channels]``.
        output_shape: The 4 ints (NHWC) of the result, as ``conv2d``'s input would have.
        strides: An int, or 1, 2 or 4 ints.
        padding: ``"SAME"`` or ``"VALID"``, as in the matching ``conv2d``.
        data_format: ``"NHWC"``.
        dilations: An int, or 1, 2 or 4 ints; ``None`` means 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``output_shape``.

    Raises:
        ValueError: for a malformed ``output_shape``, format or padding.

    Gradient: ``conv2d`` of the upstream gradient for ``input``.

    >>> import ferrotape as ft
    >>> y = ft.nn.conv2d_transpose(ft.ones([1, 2, 2, 1]), ft.ones([2, 2, 1, 1]), [1, 4, 4, 1], 2)
    >>> y.shape
    TensorShape([1, 4, 4, 1])
    """
    del name
    _nhwc("conv2d_transpose", data_format)
    output_shape = _core.convert_to_tensor(output_shape).numpy()
    if output_shape.shape != (4,) or output_shape.dtype.kind not in "iu":
        raise ValueError(
            f"conv2d_transpose: output_shape must be 4 ints (NHWC), received "
            f"{output_shape.tolist()!r}"
        )
    output_shape = [int(d) for d in output_shape]
    return _core.nn.conv2d_backprop_input_nhwc(
        output_shape,
        filters,
        input,
        _spatial("conv2d_transpose", "strides", strides),
        _spatial("conv2d_transpose", "dilations", dilations, 1),
        _padding("conv2d_transpose", padding),
    )


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """The maximum over each ``ksize`` window of an NHWC ``input``.

    Args:
        input: A 4-D floating tensor ``[batch, height, width, channels]``.
        ksize: The window size: an int, or 1, 2 or 4 ints.
        strides: The window step: an int, or 1, 2 or 4 ints.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NHWC"``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 4-D tensor ``[batch, out_height, out_width, channels]``.

    Gradient: the upstream gradient routed to each window's maximum.

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.range(16.0), [1, 4, 4, 1])
    >>> ft.nn.max_pool2d(x, 2, 2, "VALID")[0, :, :, 0].numpy()
    array([[ 5.,  7.],
           [13., 15.]], dtype=float32)
    """
    del name
    _nhwc("max_pool2d", data_format)
    return _core.nn.max_pool_nhwc(
        input,
        _spatial("max_pool2d", "ksize", ksize),
        _spatial("max_pool2d", "strides", strides),
        _padding("max_pool2d", padding),
    )


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """The mean over each ``ksize`` window of an NHWC ``input`` (padded positions not counted).

    Args:
        input: A 4-D floating tensor ``[batch, height, width, channels]``.
        ksize: The window size: an int, or 1, 2 or 4 ints.
        strides: The window step: an int, or 1, 2 or 4 ints.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NHWC"``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 4-D tensor ``[batch, out_height, out_width, channels]``.

    Gradient: the upstream gradient shared equally among each window's elements.

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.range(16.0), [1, 4, 4, 1])
    >>> ft.nn.avg_pool2d(x, 2, 2, "VALID")[0, :, :, 0].numpy()
    array([[ 2.5,  4.5],
           [10.5, 12.5]], dtype=float32)
    """
    del name
    _nhwc("avg_pool2d", data_format)
    return _core.nn.avg_pool_nhwc(
        input,
        _spatial("avg_pool2d", "ksize", ksize),
        _spatial("avg_pool2d", "strides", strides),
        _padding("avg_pool2d", padding),
    )


max_pool = max_pool2d
avg_pool = avg_pool2d


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """Normalizes ``x``: ``(x - mean) / sqrt(variance + variance_epsilon) * scale + offset``.

    Computed as TF does, as one multiply and one add over ``x``.

    Args:
        x: A floating tensor.
        mean: The mean, broadcastable to ``x`` (e.g. from ``moments``).
        variance: The variance, broadcastable to ``x``.
        offset: The shift (beta), broadcastable to ``x``, or ``None``.
        scale: The scale (gamma), broadcastable to ``x``, or ``None``.
        variance_epsilon: A small float that keeps the division finite.
        name: Ignored (TensorFlow's op name).

    Returns:
        The normalized tensor, of ``x``'s shape.

    Gradient: that of the expression above, for every argument.

    >>> import ferrotape as ft
    >>> ft.nn.batch_normalization(ft.constant([1.0, 3.0]), 2.0, 1.0, None, None, 0.0).numpy()
    array([-1.,  1.], dtype=float32)
    """
    del name
    inv = _core.rsqrt(_core.add(variance, variance_epsilon))
    if scale is not None:
        inv = inv * scale
    shift = -mean * inv if offset is None else offset - mean * inv
    return x * inv + shift


from ._candidate_sampling import (  # noqa: E402
    all_candidate_sampler,
    compute_accidental_hits,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from ._conv_ops import with_space_to_batch  # noqa: E402
from ._nn_array import (  # noqa: E402 (they build on the ops above)
    approx_max_k,
    approx_min_k,
    batch_to_space,
    depth_to_space,
    embedding_lookup,
    in_top_k,
    space_to_batch,
    space_to_depth,
    top_k,
)
from ._nn_conv import (  # noqa: E402
    atrous_conv2d,
    atrous_conv2d_transpose,
    conv1d,
    conv1d_transpose,
    conv3d,
    conv3d_transpose,
    conv_transpose,
    convolution,
    depthwise_conv2d,
    depthwise_conv2d_backprop_filter,
    depthwise_conv2d_backprop_input,
    separable_conv2d,
)
from ._nn_ctc import (  # noqa: E402
    collapse_repeated,
    ctc_beam_search_decoder,
    ctc_greedy_decoder,
    ctc_loss,
    ctc_unique_labels,
)
from ._nn_impl import (  # noqa: E402
    batch_norm_with_global_normalization,
    compute_average_loss,
    crelu,
    isotonic_regression,
    l2_normalize,
    local_response_normalization,
    log_poisson_loss,
    normalize_moments,
    scale_regularization_loss,
    softsign,
    sufficient_statistics,
    weighted_cross_entropy_with_logits,
    weighted_moments,
    zero_fraction,
)
from ._nn_pool import (  # noqa: E402
    avg_pool1d,
    avg_pool3d,
    dilation2d,
    erosion2d,
    fractional_avg_pool,
    fractional_max_pool,
    max_pool1d,
    max_pool3d,
    max_pool_with_argmax,
    pool,
)
from ._nn_sampled import nce_loss, sampled_softmax_loss  # noqa: E402

lrn = local_response_normalization

__all__ = [
    *_native,
    "approx_max_k",
    "approx_min_k",
    "atrous_conv2d",
    "atrous_conv2d_transpose",
    "avg_pool1d",
    "avg_pool3d",
    "batch_norm_with_global_normalization",
    "batch_to_space",
    "all_candidate_sampler",
    "collapse_repeated",
    "compute_accidental_hits",
    "ctc_beam_search_decoder",
    "ctc_greedy_decoder",
    "ctc_loss",
    "ctc_unique_labels",
    "fixed_unigram_candidate_sampler",
    "learned_unigram_candidate_sampler",
    "log_uniform_candidate_sampler",
    "nce_loss",
    "sampled_softmax_loss",
    "uniform_candidate_sampler",
    "max_pool_with_argmax",
    "space_to_batch",
    "compute_average_loss",
    "conv1d",
    "conv1d_transpose",
    "conv3d",
    "conv3d_transpose",
    "conv_transpose",
    "convolution",
    "crelu",
    "depth_to_space",
    "depthwise_conv2d",
    "depthwise_conv2d_backprop_filter",
    "depthwise_conv2d_backprop_input",
    "dilation2d",
    "erosion2d",
    "fractional_avg_pool",
    "fractional_max_pool",
    "embedding_lookup",
    "in_top_k",
    "isotonic_regression",
    "l2_normalize",
    "local_response_normalization",
    "log_poisson_loss",
    "lrn",
    "max_pool1d",
    "max_pool3d",
    "normalize_moments",
    "pool",
    "scale_regularization_loss",
    "separable_conv2d",
    "softsign",
    "space_to_depth",
    "sufficient_statistics",
    "top_k",
    "weighted_cross_entropy_with_logits",
    "weighted_moments",
    "with_space_to_batch",
    "zero_fraction",
    "avg_pool",
    "avg_pool2d",
    "batch_normalization",
    "bias_add",
    "conv2d",
    "conv2d_transpose",
    "dropout",
    "l2_loss",
    "max_pool",
    "max_pool2d",
    "moments",
]
