"""``ft.keras.activations``: Keras 3's activation functions, by name, over ``ft.nn``/``ft.math``.

>>> import ferrotape as ft
>>> ft.keras.activations.get("relu")(ft.constant([-1.0, 2.0])).numpy().tolist()
[0.0, 2.0]
>>> ft.keras.activations.serialize(ft.nn.relu)
'relu'
"""

from .. import _core, nn
from .. import math as ft_math
from .. import where as _where


def _tensor(x):
    return x if isinstance(x, (_core.Tensor, _core.Variable)) else _core.convert_to_tensor(x)


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


def leaky_relu(x, negative_slope=0.2):
    """x for x >= 0, ``negative_slope * x`` below."""
    return nn.leaky_relu(x, alpha=negative_slope)


def relu6(x):
    """min(max(x, 0), 6)."""
    return nn.relu6(x)


def elu(x, alpha=1.0):
    """x for x > 0, ``alpha * (exp(x) - 1)`` below."""
    if alpha == 1.0:
        return nn.elu(x)
    x = _tensor(x)
    return _where(x > 0, x, alpha * ft_math.expm1(_core.minimum(x, 0.0)))


def selu(x):
    """scale * elu(x, alpha) with Klambauer et al.'s alpha = 1.6733 and scale = 1.0507."""
    return nn.selu(x)


def gelu(x, approximate=False):
    """x * Phi(x); ``approximate=True`` uses the tanh form."""
    return nn.gelu(x, approximate=approximate)


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return nn.sigmoid(x)


def tanh(x):
    return nn.tanh(x)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along ``axis``."""
    return nn.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    """x - logsumexp(x) along ``axis``."""
    return nn.log_softmax(x, axis=axis)


def softplus(x):
    """log(1 + exp(x))."""
    return nn.softplus(x)


def softsign(x):
    """x / (1 + |x|)."""
    x = _tensor(x)
    return x / (1.0 + _core.abs(x))


def silu(x):
    """x * sigmoid(x) (also called swish)."""
    return nn.silu(x)


swish = silu


def hard_sigmoid(x):
    """relu6(x + 3) / 6: 0 below -3, 1 above 3, linear in between (Keras 3's definition)."""
    return nn.relu6(_tensor(x) + 3.0) / 6.0


def hard_silu(x):
    """x * hard_sigmoid(x)."""
    x = _tensor(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def mish(x):
    """x * tanh(softplus(x))."""
    x = _tensor(x)
    return x * nn.tanh(nn.softplus(x))


def exponential(x):
    """exp(x)."""
    return _core.exp(x)


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
    "deserialize",
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
