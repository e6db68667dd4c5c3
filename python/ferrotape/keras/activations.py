"""``ft.keras.activations``: Keras 3's activation functions, by name, over ``ft.nn``/``ft.math``.

>>> import ferrotape as ft
>>> ft.keras.activations.get("relu")(ft.constant([-1.0, 2.0])).numpy().tolist()
[0.0, 2.0]
>>> ft.keras.activations.serialize(ft.nn.relu)
'relu'
"""

import functools
import operator

from .. import _core, nn
from .. import math as ft_math
from .. import where as _where
from ..errors import InvalidArgumentError
from .layers.keras_tensor import KerasTensor


def _symbolic(fn):
    """``fn``, which on a KerasTensor adds its operation to the functional graph (Keras 3's
    activations are ``keras.ops`` calls, so ``activations.relu(keras.Input(...))`` works)."""

    @functools.wraps(fn)
    def activation(x, *args, **kwargs):
        if isinstance(x, KerasTensor):
            from .ops import nn as ops_nn  # ops.nn computes with these functions

            return ops_nn.activation_call(fn, x, args, kwargs)
        return fn(x, *args, **kwargs)

    return activation


def _tensor(x):
    return x if isinstance(x, (_core.Tensor, _core.Variable)) else _core.convert_to_tensor(x)


@_symbolic
def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """max(x, 0), generalised as Keras: ``negative_slope * (x - threshold)`` below
    ``threshold``, and capped at ``max_value``."""
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return nn.relu(x)
    x = _tensor(x)
    if negative_slope < 0:
        raise ValueError(f"relu: negative_slope must be >= 0, received {negative_slope}")
    if max_value is not None and max_value < 0:
        raise ValueError(f"relu: max_value must be >= 0, received {max_value}")
    below = negative_slope * (x - threshold) if negative_slope else _core.zeros_like(x)
    y = _where(x >= threshold, x, below)
    if max_value is not None:
        y = _core.minimum(y, _core.cast(max_value, y.dtype))
    return y


@_symbolic
def leaky_relu(x, negative_slope=0.2):
    """x for x >= 0, ``negative_slope * x`` below."""
    return nn.leaky_relu(x, alpha=negative_slope)


@_symbolic
def relu6(x):
    """min(max(x, 0), 6)."""
    return nn.relu6(x)


@_symbolic
def elu(x, alpha=1.0):
    """x for x > 0, ``alpha * (exp(x) - 1)`` below."""
    if alpha == 1.0:
        return nn.elu(x)
    x = _tensor(x)
    return _where(x > 0, x, alpha * ft_math.expm1(_core.minimum(x, 0.0)))


@_symbolic
def selu(x):
    """scale * elu(x, alpha) with Klambauer et al.'s alpha = 1.6733 and scale = 1.0507."""
    return nn.selu(x)


@_symbolic
def gelu(x, approximate=False):
    """x * Phi(x); ``approximate=True`` uses the tanh form."""
    return nn.gelu(x, approximate=approximate)


@_symbolic
def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return nn.sigmoid(x)


@_symbolic
def tanh(x):
    return nn.tanh(x)


@_symbolic
def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along ``axis`` (over all elements for ``axis=None``, as Keras)."""
    return _over_all_elements(nn.softmax, x, axis)


@_symbolic
def log_softmax(x, axis=-1):
    """x - logsumexp(x) along ``axis`` (over all elements for ``axis=None``, as Keras)."""
    return _over_all_elements(nn.log_softmax, x, axis)


def _over_all_elements(fn, x, axis):
    # Keras normalizes over every element for axis=None, where tf.nn's functions (which
    # compute these) read None as the last axis.
    if axis is not None:
        return fn(x, axis=axis)
    x = _tensor(x)
    return _core.reshape(fn(_core.reshape(x, [-1]), axis=-1), _core.shape(x))


@_symbolic
def softplus(x):
    """log(1 + exp(x))."""
    return nn.softplus(x)


@_symbolic
def softsign(x):
    """x / (1 + |x|)."""
    x = _tensor(x)
    return x / (1.0 + _core.abs(x))


@_symbolic
def silu(x):
    """x * sigmoid(x) (also called swish)."""
    return nn.silu(x)


swish = silu


@_symbolic
def hard_sigmoid(x):
    """relu6(x + 3) / 6: 0 below -3, 1 above 3, linear in between (Keras 3's definition)."""
    return nn.relu6(_tensor(x) + 3.0) / 6.0


@_symbolic
def hard_silu(x):
    """x * hard_sigmoid(x)."""
    x = _tensor(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


@_symbolic
def mish(x):
    """x * tanh(softplus(x))."""
    x = _tensor(x)
    return x * nn.tanh(nn.softplus(x))


@_symbolic
def exponential(x):
    """exp(x)."""
    return _core.exp(x)


@_symbolic
def celu(x, alpha=1.0):
    """Continuously differentiable ELU: ``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``.

    Args:
        x: the input tensor.
        alpha: the scale of the negative part (1.0).

    Returns:
        A tensor of ``x``'s shape.
    """
    x = _tensor(x)
    return _core.maximum(x, 0.0) + alpha * ft_math.expm1(_core.minimum(x, 0.0) / alpha)


@_symbolic
def glu(x, axis=-1):
    """Gated linear unit: ``a * sigmoid(b)`` where ``a`` and ``b`` are the two halves of ``x``
    along ``axis``.

    Args:
        x: the input tensor; its size along ``axis`` must be even.
        axis: the axis split in two.

    Returns:
        A tensor with ``axis`` halved.
    """
    x = _tensor(x)
    if x.shape[axis] % 2 != 0:
        raise ValueError(
            f"glu: axis size must be divisible by 2. Received: x.shape={tuple(x.shape)} with "
            f"axis={axis}"
        )
    a, b = _core.split(x, 2, axis=axis)
    return a * nn.sigmoid(b)


@_symbolic
def hard_tanh(x):
    """``x`` clipped to [-1, 1]."""
    return _core.clip_by_value(_tensor(x), -1.0, 1.0)


@_symbolic
def hard_shrink(x, threshold=0.5):
    """``x`` where ``|x| > threshold``, else 0.

    Args:
        x: the input tensor.
        threshold: the half-width of the zeroed band (0.5).

    Returns:
        A tensor of ``x``'s shape.
    """
    x = _tensor(x)
    return _where(_core.abs(x) > threshold, x, _core.zeros_like(x))


@_symbolic
def soft_shrink(x, threshold=0.5):
    """``x`` moved ``threshold`` toward 0, and 0 where ``|x| <= threshold``.

    Args:
        x: the input tensor.
        threshold: the amount of shrinkage (0.5).

    Returns:
        A tensor of ``x``'s shape.
    """
    x = _tensor(x)
    inner = _where(x < -threshold, x + threshold, _core.zeros_like(x))
    return _where(x > threshold, x - threshold, inner)


@_symbolic
def tanh_shrink(x):
    """``x - tanh(x)``."""
    x = _tensor(x)
    return x - nn.tanh(x)


@_symbolic
def threshold(x, threshold, default_value):
    """``x`` where ``x > threshold``, else ``default_value``.

    Args:
        x: the input tensor.
        threshold: the value ``x`` must exceed to be kept.
        default_value: the value put elsewhere.

    Returns:
        A tensor of ``x``'s shape.
    """
    x = _tensor(x)
    return _where(x > threshold, x, _core.fill(x.shape, _core.cast(default_value, x.dtype)))


@_symbolic
def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``, computed stably."""
    return ft_math.log_sigmoid(x)


@_symbolic
def sparse_plus(x):
    """A smooth ReLU with compact support: 0 for ``x <= -1``, ``(x + 1)² / 4`` for
    ``-1 < x < 1``, ``x`` for ``x >= 1``."""
    x = _tensor(x)
    middle = _where(x < 1.0, 0.25 * _core.square(x + 1.0), x)
    return _where(x <= -1.0, _core.zeros_like(x), middle)


@_symbolic
def sparse_sigmoid(x):
    """A piecewise-linear sigmoid: 0 for ``x <= -1``, ``(x + 1) / 2`` in between, 1 for
    ``x >= 1``."""
    x = _tensor(x)
    middle = _where(x >= 1.0, _core.ones_like(x), 0.5 * (x + 1.0))
    return _where(x <= -1.0, _core.zeros_like(x), middle)


@_symbolic
def squareplus(x, b=4):
    """``(x + sqrt(x² + b)) / 2``, a smooth ReLU (Barron, 2021).

    Args:
        x: the input tensor.
        b: the smoothness, >= 0 (4).

    Returns:
        A tensor of ``x``'s shape.
    """
    x = _tensor(x)
    return (x + _core.sqrt(_core.square(x) + float(b))) / 2.0


def _sparsemax_axis(axis, rank):
    """``axis`` as a non-negative int; a scalar has no axis to project along (TF 2.21's Keras
    fails there in a strided slice: "slice index -1 of dimension 0 out of bounds")."""
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"sparsemax: axis must be an int, received axis={axis!r}") from None
    if rank == 0:
        raise InvalidArgumentError(
            f"sparsemax: x must have at least one dimension, received a scalar (axis={axis})"
        )
    if not -rank <= axis < rank:
        raise InvalidArgumentError(
            f"sparsemax: axis {axis} is out of range for an input of rank {rank} "
            f"(expected an axis in [{-rank}, {rank}))"
        )
    return axis % rank


@_symbolic
def sparsemax(x, axis=-1):
    """Sparsemax (Martins & Astudillo, 2016): the Euclidean projection of ``x`` onto the
    probability simplex along ``axis``, ``max(x - tau, 0)``, which sums to 1 and is exactly 0
    for low scores.

    ``tau`` is found without sorting: an entry is in the support when
    ``1 + k * x_i > s``, with ``k`` the number of entries >= ``x_i`` and ``s`` their sum
    (ties are all in or all out, as with a sort); ``tau = (sum of the support - 1) / size``.
    Keras 3 as shipped with TF 2.21 sums the support's partial sums instead, so its output
    does not sum to 1 once the support has two entries (keras-team/keras#23425, fixed by
    keras-team/keras#23469); this follows the definition, as the fixed Keras does.

    Args:
        x: the input tensor.
        axis: the axis the projection runs along.

    Returns:
        A tensor of ``x``'s shape.
    """
    x = _tensor(x)
    rank = len(x.shape)
    axis = _sparsemax_axis(axis, rank)
    if axis != rank - 1:
        perm = [*range(axis), *range(axis + 1, rank), axis]
        inverse = [perm.index(i) for i in range(rank)]
        return _core.transpose(sparsemax(_core.transpose(x, perm), -1), inverse)
    # [..., i, j] = 1 where x_j >= x_i
    at_least = _core.cast(_core.expand_dims(x, -2) >= _core.expand_dims(x, -1), x.dtype)
    count = _core.reduce_sum(at_least, axis=-1)
    total = _core.reduce_sum(at_least * _core.expand_dims(x, -2), axis=-1)
    support = _core.cast(1.0 + count * x > total, x.dtype)
    size = _core.reduce_sum(support, axis=-1, keepdims=True)
    tau = (_core.reduce_sum(support * x, axis=-1, keepdims=True) - 1.0) / size
    return _core.maximum(x - tau, 0.0)


def linear(x):
    """The identity (no activation)."""
    return x


_BY_NAME = {
    fn.__name__: fn
    for fn in (
        relu,
        leaky_relu,
        relu6,
        elu,
        selu,
        gelu,
        sigmoid,
        tanh,
        softmax,
        log_softmax,
        softplus,
        softsign,
        silu,
        hard_sigmoid,
        hard_silu,
        mish,
        exponential,
        linear,
        celu,
        glu,
        hard_tanh,
        hard_shrink,
        soft_shrink,
        tanh_shrink,
        threshold,
        log_sigmoid,
        sparse_plus,
        sparse_sigmoid,
        squareplus,
        sparsemax,
    )
}
_BY_NAME.update({"swish": silu, "hard_swish": hard_silu})

# ft.nn/ft.math functions that users pass directly (Dense(activation=tf.nn.relu)) and the names
# they serialize to.
_NATIVE_NAMES = {
    id(nn.relu): "relu",
    id(nn.relu6): "relu6",
    id(nn.elu): "elu",
    id(nn.selu): "selu",
    id(nn.gelu): "gelu",
    id(nn.sigmoid): "sigmoid",
    id(nn.tanh): "tanh",
    id(nn.softmax): "softmax",
    id(nn.log_softmax): "log_softmax",
    id(nn.softplus): "softplus",
    id(nn.silu): "silu",
    id(nn.leaky_relu): "leaky_relu",
    id(_core.exp): "exponential",
    id(ft_math.sigmoid): "sigmoid",
    id(ft_math.tanh): "tanh",
    id(ft_math.softplus): "softplus",
}


def serialize(activation):
    """The Keras name of an activation function ("relu", "softmax", ...)."""
    if activation is None:
        return "linear"
    name = _NATIVE_NAMES.get(id(activation))
    if name is not None:
        return name
    fn_name = getattr(activation, "__name__", None)
    if fn_name in _BY_NAME and _BY_NAME[fn_name] is activation:
        return fn_name
    if fn_name is not None:
        return fn_name
    raise ValueError(f"activations.serialize: cannot name activation {activation!r}")


def deserialize(name):
    """The activation function called ``name``."""
    fn = _BY_NAME.get(name)
    if fn is None:
        raise ValueError(
            f"Could not interpret activation function identifier: {name!r} "
            f"(known: {', '.join(sorted(_BY_NAME))})"
        )
    return fn


def get(identifier):
    """An activation function from a name, a callable (returned as is) or ``None`` (linear)."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        return deserialize(identifier)
    if isinstance(identifier, dict):
        return deserialize(identifier.get("config", identifier.get("class_name")))
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret activation function identifier: {identifier!r}")


__all__ = [
    "celu",
    "deserialize",
    "glu",
    "hard_shrink",
    "hard_tanh",
    "log_sigmoid",
    "soft_shrink",
    "sparse_plus",
    "sparse_sigmoid",
    "sparsemax",
    "squareplus",
    "tanh_shrink",
    "threshold",
    "elu",
    "exponential",
    "gelu",
    "get",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "leaky_relu",
    "linear",
    "log_softmax",
    "mish",
    "relu",
    "relu6",
    "selu",
    "serialize",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "softsign",
    "swish",
    "tanh",
]
