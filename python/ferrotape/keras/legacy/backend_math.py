"""The legacy backend's tensor functions (Keras 3's ``keras.src.legacy.backend``, first half):
element-wise math, reductions, comparisons, shapes and variables, with TF-Keras's semantics
(reductions over every axis by default, ``mean``/``std``/``var`` of booleans as floats,
``sqrt`` of negatives as 0, new tensors in ``floatx``).

>>> import ferrotape as ft
>>> K = ft.keras.backend
>>> K.sum(ft.constant([[1.0, 2.0], [3.0, 4.0]]), axis=0).numpy().tolist()
[4.0, 6.0]
>>> K.int_shape(K.batch_dot(ft.ones((2, 3, 4)), ft.ones((2, 4, 5))))
(2, 3, 5)
"""

import builtins
import math

import numpy as np

import ferrotape as ft

from ..backend_config import floatx


def _tensor(x):
    return x if isinstance(x, ft.Tensor | ft.Variable) else ft.convert_to_tensor(x)


def _as_float_if_bool(x):
    x = _tensor(x)
    return ft.cast(x, floatx()) if x.dtype == ft.bool else x


# ------------------------------------------------------------------ element-wise


def abs(x):
    """``|x|`` element-wise."""
    return ft.abs(x)


def cos(x):
    """``cos(x)`` element-wise."""
    return ft.cos(x)


def sin(x):
    """``sin(x)`` element-wise."""
    return ft.sin(x)


def exp(x):
    """``e ** x`` element-wise."""
    return ft.exp(x)


def log(x):
    """The natural logarithm, element-wise."""
    return ft.math.log(x)


def round(x):
    """``x`` rounded to the nearest integer, halves to even."""
    return ft.round(x)


def sign(x):
    """-1, 0 or 1 after the sign of ``x``."""
    return ft.sign(x)


def square(x):
    """``x * x`` element-wise."""
    return ft.square(x)


def sqrt(x):
    """``sqrt(max(x, 0))``: negative inputs give 0, not NaN, as in TF-Keras."""
    x = _tensor(x)
    return ft.sqrt(ft.maximum(x, ft.zeros_like(x)))


def pow(x, a):
    """``x ** a`` element-wise."""
    return ft.pow(x, a)


def clip(x, min_value, max_value):
    """``x`` clipped to ``[min_value, max_value]``; None means unbounded, and a maximum below
    the minimum is raised to it."""
    if isinstance(min_value, int | float) and isinstance(max_value, int | float):
        max_value = builtins.max(max_value, min_value)
    min_value = -np.inf if min_value is None else min_value
    max_value = np.inf if max_value is None else max_value
    return ft.clip_by_value(x, min_value, max_value)


def maximum(x, y):
    """The larger of ``x`` and ``y``, element-wise."""
    return ft.maximum(x, y)


def minimum(x, y):
    """The smaller of ``x`` and ``y``, element-wise."""
    return ft.minimum(x, y)


def cast(x, dtype):
    """``x`` converted to ``dtype``."""
    return ft.cast(x, dtype)


def stop_gradient(variables):
    """``x`` with no gradient flowing back; a list gives a list."""
    if isinstance(variables, list | tuple):
        return [ft.stop_gradient(v) for v in variables]
    return ft.stop_gradient(variables)


# -------------------------------------------------------------------- comparisons


def equal(x, y):
    """``x == y`` element-wise (bool)."""
    return ft.equal(x, y)


def not_equal(x, y):
    """``x != y`` element-wise (bool)."""
    return ft.not_equal(x, y)


def greater(x, y):
    """``x > y`` element-wise (bool)."""
    return ft.greater(x, y)


def greater_equal(x, y):
    """``x >= y`` element-wise (bool)."""
    return ft.greater_equal(x, y)


def less(x, y):
    """``x < y`` element-wise (bool)."""
    return ft.less(x, y)


def less_equal(x, y):
    """``x <= y`` element-wise (bool)."""
    return ft.less_equal(x, y)


def switch(condition, then_expression, else_expression):
    """``then_expression`` where ``condition`` holds, else ``else_expression``.

    A scalar condition picks one of the two (callables are called only for the branch
    taken); a tensor condition selects element-wise, its shape padded with trailing 1s to
    the expressions' rank.

    Args:
        condition: a bool (or castable) scalar or tensor.
        then_expression: a tensor or a callable returning one.
        else_expression: a tensor or a callable returning one.

    Returns:
        The selected tensor.
    """
    condition = _tensor(condition)
    if condition.dtype != ft.bool:
        condition = ft.cast(condition, ft.bool)
    cond_ndim = len(condition.shape)
    if not cond_ndim:
        chosen = then_expression if bool(condition.numpy()) else else_expression
        return chosen() if callable(chosen) else chosen
    then_expression = then_expression() if callable(then_expression) else then_expression
    else_expression = else_expression() if callable(else_expression) else else_expression
    then_expression = _tensor(then_expression)
    expr_ndim = len(then_expression.shape)
    if cond_ndim > expr_ndim:
        raise ValueError(
            "switch: rank of `condition` should be less than or equal to rank of "
            f"`then_expression` and `else_expression`. ndim(condition)={cond_ndim}, "
            f"ndim(then_expression)={expr_ndim}"
        )
    if cond_ndim > 1:
        shape = tuple(condition.shape) + (1,) * (expr_ndim - cond_ndim)
        condition = ft.broadcast_to(ft.reshape(condition, shape), then_expression.shape)
    return ft.where(condition, then_expression, else_expression)


# --------------------------------------------------------------------- reductions


def sum(x, axis=None, keepdims=False):
    """The sum over ``axis`` (every axis when None)."""
    return ft.reduce_sum(x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    """The product over ``axis`` (every axis when None)."""
    return ft.reduce_prod(x, axis, keepdims)


def max(x, axis=None, keepdims=False):
    """The maximum over ``axis`` (every axis when None)."""
    return ft.reduce_max(x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    """The minimum over ``axis`` (every axis when None)."""
    return ft.reduce_min(x, axis, keepdims)


def mean(x, axis=None, keepdims=False):
    """The mean over ``axis`` (every axis when None); booleans count as ``floatx`` 0/1."""
    return ft.reduce_mean(_as_float_if_bool(x), axis, keepdims)


def std(x, axis=None, keepdims=False):
    """The (population) standard deviation over ``axis``; booleans count as 0/1."""
    return ft.math.reduce_std(_as_float_if_bool(x), axis=axis, keepdims=keepdims)


def var(x, axis=None, keepdims=False):
    """The (population) variance over ``axis``; booleans count as 0/1."""
    return ft.math.reduce_variance(_as_float_if_bool(x), axis=axis, keepdims=keepdims)


def all(x, axis=None, keepdims=False):
    """Whether every element along ``axis`` is nonzero (bool)."""
    return ft.reduce_all(ft.cast(x, ft.bool), axis, keepdims)


def any(x, axis=None, keepdims=False):
    """Whether some element along ``axis`` is nonzero (bool)."""
    return ft.reduce_any(ft.cast(x, ft.bool), axis, keepdims)


def argmax(x, axis=-1):
    """The index of the largest value along ``axis`` (int64)."""
    return ft.argmax(x, axis)


def argmin(x, axis=-1):
    """The index of the smallest value along ``axis`` (int64)."""
    return ft.argmin(x, axis)


def l2_normalize(x, axis=None):
    """``x / sqrt(max(sum(x ** 2, axis), 1e-12))``: unit L2 norm along ``axis``."""
    x = _tensor(x)
    squares = ft.reduce_sum(ft.square(x), axis=axis, keepdims=True)
    return x * ft.math.rsqrt(ft.maximum(squares, 1e-12))


# -------------------------------------------------------------------------- shapes


def shape(x):
    """The dynamic shape of ``x`` as an int32 tensor."""
    return ft.shape(x)


def reshape(x, shape):
    """``x`` with the given shape (-1 inferred)."""
    return ft.reshape(x, shape)


def flatten(x):
    """``x`` as a vector."""
    return ft.reshape(x, [-1])


def batch_flatten(x):
    """``x`` as a matrix: the first axis kept, the others flattened."""
    x = _tensor(x)
    return ft.reshape(x, [-1, math.prod(x.shape[1:])])


def expand_dims(x, axis=-1):
    """``x`` with a new axis of size 1 at ``axis``."""
    return ft.expand_dims(x, axis)


def squeeze(x, axis):
    """``x`` without its axis ``axis`` (which must have size 1)."""
    return ft.squeeze(x, [axis])


def permute_dimensions(x, pattern):
    """``x`` with its axes reordered as ``pattern``."""
    return ft.transpose(x, perm=pattern)


def transpose(x):
    """``x`` with its axes reversed."""
    return ft.transpose(x)


def concatenate(tensors, axis=-1):
    """The tensors joined along ``axis``."""
    if axis < 0:
        rank = len(_tensor(tensors[0]).shape)
        axis = axis % rank if rank else 0
    return ft.concat(list(tensors), axis)


def stack(x, axis=0):
    """The tensors of the list ``x`` stacked along a new axis ``axis``."""
    return ft.stack(x, axis=axis)


def tile(x, n):
    """``x`` repeated ``n`` times (an int, or one count per axis)."""
    return ft.tile(x, [n] if isinstance(n, int) else n)


def repeat(x, n):
    """A 2D ``x`` of shape ``(batch, d)`` repeated ``n`` times: ``(batch, n, d)``."""
    x = _tensor(x)
    if len(x.shape) != 2:
        raise ValueError(
            f"repeat: expected input `x` to have rank 2. Received: rank(x)={len(x.shape)}"
        )
    return ft.tile(ft.expand_dims(x, 1), [1, n, 1])


def repeat_elements(x, rep, axis):
    """Each slice of ``x`` along ``axis`` repeated ``rep`` times in place
    (``[a, b]`` -> ``[a, a, b, b]`` for ``rep=2``)."""
    x = _tensor(x)
    rank = len(x.shape)
    axis = axis % rank
    multiples = [1] * (rank + 1)
    multiples[axis + 1] = rep
    repeated = ft.tile(ft.expand_dims(x, axis + 1), multiples)
    new_shape = list(x.shape)
    new_shape[axis] *= rep
    return ft.reshape(repeated, new_shape)


def reverse(x, axes):
    """``x`` reversed along ``axes`` (an int or a list)."""
    x = _tensor(x)
    for axis in [axes] if isinstance(axes, int) else axes:
        size = x.shape[axis]
        x = ft.gather(x, ft.range(size - 1, -1, -1), axis=axis % len(x.shape))
    return x


def gather(reference, indices):
    """The rows ``indices`` of ``reference`` (along the first axis)."""
    return ft.gather(reference, indices)


def one_hot(indices, num_classes):
    """Integer ``indices`` as one-hot vectors along a new last axis."""
    return ft.one_hot(indices, depth=num_classes, axis=-1)


def arange(start, stop=None, step=1, dtype="int32"):
    """``start, start + step, ...`` below ``stop`` (one argument: ``0 .. start - 1``, empty
    when negative), cast to ``dtype`` unless it is "int32"."""
    if stop is None and start < 0:
        start = 0
    result = ft.range(start, stop, step)
    return result if dtype == "int32" else ft.cast(result, dtype)


# ------------------------------------------------------------------- products


def dot(x, y):
    """The matrix product; for ranks above 2, ``x``'s last axis against ``y``'s second to
    last: the result has shape ``x.shape[:-1] + y.shape[:-2] + y.shape[-1:]``."""
    x, y = _tensor(x), _tensor(y)
    if len(x.shape) > 2 or len(y.shape) > 2:
        return ft.tensordot(x, y, axes=[[len(x.shape) - 1], [len(y.shape) - 2]])
    return ft.matmul(x, y)


def batch_dot(x, y, axes=None):
    """The dot product of each pair of samples: ``x[i]`` and ``y[i]`` contracted over
    ``axes`` (default: ``x``'s last axis with ``y``'s last for a 2D ``y``, else with its
    second to last). The result keeps the batch axis, then ``x``'s remaining axes, then
    ``y``'s; a 2D operand's contracted axis leaves no trace.

    Args:
        x: a tensor of rank >= 2.
        y: a tensor of rank >= 2 with the same batch size.
        axes: an int (the same axis in both) or a pair; never 0 (the batch axis).

    Returns:
        A tensor of rank ``ndim(x) + ndim(y) - 2`` (at least 2).
    """
    x, y = _tensor(x), _tensor(y)
    x_shape, y_shape = tuple(x.shape), tuple(y.shape)
    x_ndim, y_ndim = len(x_shape), len(y_shape)
    if x_ndim < 2 or y_ndim < 2:
        raise ValueError(
            "batch_dot: cannot do batch_dot on inputs with rank < 2. Received inputs with "
            f"shapes {x_shape} and {y_shape}."
        )
    if x_shape[0] != y_shape[0]:
        raise ValueError(
            "batch_dot: cannot do batch_dot on inputs with different batch sizes. Received "
            f"inputs with shapes {x_shape} and {y_shape}."
        )
    if isinstance(axes, int):
        axes = [axes, axes]
    if axes is None:
        axes = [x_ndim - 1, y_ndim - 1] if y_ndim == 2 else [x_ndim - 1, y_ndim - 2]
    if builtins.any(isinstance(a, list | tuple) for a in axes):
        raise ValueError(
            "batch_dot: multiple target dimensions are not supported. Expected: None, int, "
            f"(int, int). Provided: {axes}"
        )
    a0, a1 = axes[0] % x_ndim, axes[1] % y_ndim
    if 0 in (a0, a1):
        raise ValueError(
            "batch_dot: cannot perform batch_dot over axis 0. If your inputs are not batched, "
            "add a dummy batch dimension to your inputs using K.expand_dims(x, 0)"
        )
    if x_shape[a0] != y_shape[a1]:
        raise ValueError(
            f"batch_dot: cannot do batch_dot on inputs with shapes {x_shape} and {y_shape} "
            f"with axes={[a0, a1]}. x.shape[{a0}] != y.shape[{a1}] "
            f"({x_shape[a0]} != {y_shape[a1]})."
        )
    if x_ndim == 2:
        x, a0 = ft.expand_dims(x, 1), a0 + 1
    if y_ndim == 2:
        y = ft.expand_dims(y, 2)
    # x: (batch, rest..., contracted); y: (batch, contracted, rest...)
    x_rank, y_rank = len(x.shape), len(y.shape)
    x = ft.transpose(x, [i for i in range(x_rank) if i != a0] + [a0])
    y = ft.transpose(y, [0, a1] + [i for i in range(1, y_rank) if i != a1])
    x_mid, y_trail = tuple(x.shape[1:-1]), tuple(y.shape[2:])
    x = ft.reshape(x, [x.shape[0], -1, x.shape[-1]])
    y = ft.reshape(y, [y.shape[0], y.shape[1], -1])
    result = ft.reshape(ft.matmul(x, y), (x.shape[0],) + x_mid + y_trail)
    if x_ndim == 2:
        result = ft.squeeze(result, 1)
    elif y_ndim == 2:
        result = ft.squeeze(result, -1)
    return result


# ------------------------------------------------------------------------ variables


def variable(value, dtype=None, name=None, constraint=None):
    """A ``Variable`` holding ``value``, of ``dtype`` (default ``floatx``)."""
    return ft.Variable(value, dtype=dtype or floatx(), name=name, constraint=constraint)


def constant(value, dtype=None, shape=None, name=None):
    """A constant tensor of ``dtype`` (default ``floatx``)."""
    return ft.constant(value, dtype=dtype or floatx(), shape=shape, name=name)


def _variable_unless_empty(value, dtype, name):
    # TF-Keras returns a variable, except for a shape with a zero dimension.
    if builtins.all(value.shape):
        return variable(value, dtype=dtype, name=name)
    return value


def zeros(shape, dtype=None, name=None):
    """A variable of zeros (a tensor when ``shape`` has a 0), of ``dtype`` (``floatx``)."""
    dtype = dtype or floatx()
    return _variable_unless_empty(ft.zeros(shape, dtype=dtype), dtype, name)


def ones(shape, dtype=None, name=None):
    """A variable of ones (a tensor when ``shape`` has a 0), of ``dtype`` (``floatx``)."""
    dtype = dtype or floatx()
    return _variable_unless_empty(ft.ones(shape, dtype=dtype), dtype, name)


def eye(size, dtype=None, name=None):
    """A variable holding the ``size x size`` identity matrix."""
    dtype = dtype or floatx()
    return variable(ft.eye(size, dtype=dtype), dtype, name)


def zeros_like(x, dtype=None, name=None):
    """Zeros of ``x``'s shape (and dtype, unless given)."""
    return ft.zeros_like(x, dtype=dtype)


def ones_like(x, dtype=None, name=None):
    """Ones of ``x``'s shape (and dtype, unless given)."""
    return ft.ones_like(x, dtype=dtype)


def update(x, new_x):
    """Assigns ``new_x`` to the variable ``x``; returns it."""
    return x.assign(new_x)


def update_add(x, increment):
    """Adds ``increment`` to the variable ``x``; returns it."""
    return x.assign_add(increment)


def update_sub(x, decrement):
    """Subtracts ``decrement`` from the variable ``x``; returns it."""
    return x.assign_sub(decrement)


def moving_average_update(x, value, momentum):
    """``x = momentum * x + (1 - momentum) * value`` on the variable ``x``; returns it."""
    value = ft.cast(value, x.dtype)
    return x.assign_sub((x - value) * (1.0 - float(momentum)))


def eval(x):
    """The value of ``x`` as a numpy array."""
    return x.numpy() if hasattr(x, "numpy") else x


def gradients(loss, variables):
    """Graph-mode symbolic gradients, which TF 2 refuses when executing eagerly (as
    ferrotape always does): raises the same RuntimeError; use ``GradientTape``."""
    raise RuntimeError(
        "tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape "
        "instead."
    )
