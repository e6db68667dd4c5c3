"""``ft.math``: element-wise math, comparisons, logic and reductions (TensorFlow's names)."""

# Used below; `as` keeps them exported (the star import would otherwise be shadowed for mypy).
from ._core import negative as negative
from ._core import reduce_mean as reduce_mean
from ._core import sqrt as sqrt
from ._core import squared_difference as squared_difference
from ._core.nn import log_softmax as log_softmax
from ._core.nn import softmax as softmax
from ._core.nn import softplus as softplus
from ._exports import math_special as special  # ft.math.special (TF's tf.math.special)
from ._exports.math import *  # noqa: F403 (the native names: scripts/gen_bindings.py)
from ._exports.math import __all__ as _native
from ._math_impl import (
    accumulate_n,
    atan2,
    bincount,
    confusion_matrix,
    count_nonzero,
    cumprod,
    cumsum,
    cumulative_logsumexp,
    divide_no_nan,
    invert_permutation,
    is_finite,
    is_inf,
    is_non_decreasing,
    is_strictly_increasing,
    lbeta,
    multiply_no_nan,
    nextafter,
    polyval,
    reciprocal_no_nan,
    reduce_euclidean_norm,
    rint,
    scalar_mul,
    segment_max,
    segment_mean,
    segment_min,
    segment_prod,
    segment_sum,
    unsorted_segment_max,
    unsorted_segment_mean,
    unsorted_segment_min,
    unsorted_segment_prod,
    unsorted_segment_sqrt_n,
    unsorted_segment_sum,
    xdivy,
    xlog1py,
    xlogy,
)
from ._nn_array import approx_max_k, approx_min_k, in_top_k, top_k
from ._nn_impl import l2_normalize, softsign, zero_fraction


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The variance of ``input_tensor`` over ``axis``: the mean of squared deviations from the mean.

    Args:
        input_tensor: A floating tensor (or anything ``convert_to_tensor`` accepts).
        axis: The axes to reduce: ``None`` (all of them), an int or a list of ints in
            ``[-rank, rank)``.
        keepdims: If true, the reduced axes are kept with length 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the same dtype holding the population variance (divided by N, not N - 1).

    Gradient: ``2 * (x - mean) / N`` times the upstream gradient.

    >>> import ferrotape as ft
    >>> ft.math.reduce_variance(ft.constant([[1.0, 2.0], [3.0, 4.0]])).numpy()
    np.float32(1.25)
    >>> ft.math.reduce_variance(ft.constant([[1.0, 2.0], [3.0, 4.0]]), axis=0).numpy()
    array([1., 1.], dtype=float32)
    """
    del name
    mean = reduce_mean(input_tensor, axis, keepdims=True)
    return reduce_mean(squared_difference(input_tensor, mean), axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The standard deviation of ``input_tensor`` over ``axis``: ``sqrt(reduce_variance(...))``.

    Args:
        input_tensor: A floating tensor (or anything ``convert_to_tensor`` accepts).
        axis: The axes to reduce: ``None`` (all of them), an int or a list of ints in
            ``[-rank, rank)``.
        keepdims: If true, the reduced axes are kept with length 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the same dtype holding the population standard deviation.

    Gradient: ``(x - mean) / (N * std)`` times the upstream gradient.

    >>> import ferrotape as ft
    >>> ft.math.reduce_std(ft.constant([1.0, 3.0])).numpy()
    np.float32(1.0)
    """
    del name
    return sqrt(reduce_variance(input_tensor, axis, keepdims))


def log_sigmoid(x, name=None):
    """The element-wise ``log(sigmoid(x))``, computed as ``-softplus(-x)`` so it stays finite.

    Args:
        x: A floating tensor.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the same shape and dtype as ``x``; every value is at most 0.

    Gradient: ``1 - sigmoid(x)``.

    >>> import ferrotape as ft
    >>> ft.math.log_sigmoid(ft.constant([0.0, -100.0])).numpy()
    array([  -0.6931472, -100.       ], dtype=float32)
    """
    del name
    return negative(softplus(negative(x)))


__all__ = [
    *_native,
    "atan2",
    "bincount",
    "confusion_matrix",
    "invert_permutation",
    "rint",
    "accumulate_n",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "cumulative_logsumexp",
    "divide_no_nan",
    "is_finite",
    "is_inf",
    "is_non_decreasing",
    "is_strictly_increasing",
    "lbeta",
    "special",
    "multiply_no_nan",
    "nextafter",
    "polyval",
    "reciprocal_no_nan",
    "reduce_euclidean_norm",
    "scalar_mul",
    "segment_max",
    "segment_mean",
    "segment_min",
    "segment_prod",
    "segment_sum",
    "unsorted_segment_max",
    "unsorted_segment_mean",
    "unsorted_segment_min",
    "unsorted_segment_prod",
    "unsorted_segment_sqrt_n",
    "unsorted_segment_sum",
    "xdivy",
    "xlog1py",
    "xlogy",
    "approx_max_k",
    "approx_min_k",
    "in_top_k",
    "l2_normalize",
    "log_sigmoid",
    "log_softmax",
    "softmax",
    "softsign",
    "top_k",
    "zero_fraction",
    "reduce_std",
    "reduce_variance",
]
