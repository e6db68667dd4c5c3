"""``ft.math``: element-wise math, comparisons, logic and reductions (TensorFlow's names)."""

from ._core import (
    abs,
    acos,
    add,
    add_n,
    argmax,
    argmin,
    asin,
    atan,
    ceil,
    cos,
    cosh,
    divide,
    equal,
    erf,
    exp,
    expm1,
    floor,
    floordiv,
    floormod,
    greater,
    greater_equal,
    is_nan,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    pow,
    realdiv,
    reciprocal,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    squared_difference,
    subtract,
    tan,
    tanh,
    truediv,
)
from ._core import floormod as mod
from ._core.nn import softplus


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


__all__ = [n for n in dir() if not n.startswith("_")]
