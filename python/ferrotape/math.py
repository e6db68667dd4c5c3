"""``ft.math``: element-wise math, comparisons, logic and reductions (TensorFlow's names)."""

# Used below; `as` keeps them exported (the star import would otherwise be shadowed for mypy).
from ._core import negative as negative
from ._core import reduce_mean as reduce_mean
from ._core import sqrt as sqrt
from ._core import squared_difference as squared_difference
from ._core.nn import softplus as softplus
from ._exports.math import *  # noqa: F403 (the native names: scripts/gen_bindings.py)
from ._exports.math import __all__ as _native


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The variance over ``axis``: mean of squared deviations from the mean."""
    del name
    mean = reduce_mean(input_tensor, axis, keepdims=True)
    return reduce_mean(squared_difference(input_tensor, mean), axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The standard deviation over ``axis``."""
    del name
    return sqrt(reduce_variance(input_tensor, axis, keepdims))


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    del name
    return negative(softplus(negative(x)))


__all__ = [
    *_native,
    "log_sigmoid",
    "reduce_std",
    "reduce_variance",
]
