"""``ft.nn``: activations, softmax, cross-entropies and a few layer helpers."""

from . import _core
from ._core import sigmoid, tanh
from ._core.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    relu6,
    selu,
    sigmoid_cross_entropy_with_logits,
    silu,
    softmax,
    softmax_cross_entropy_with_logits,
    softplus,
    sparse_softmax_cross_entropy_with_logits,
)

swish = silu


def bias_add(value, bias, data_format=None, name=None):
    """``value + bias`` with ``bias`` along the last axis."""
    del data_format, name
    return _core.add(value, bias)


def l2_loss(t, name=None):
    """sum(t ** 2) / 2."""
    del name
    return _core.reduce_sum(_core.square(t)) / 2


def moments(x, axes, shift=None, keepdims=False, name=None):
    """Mean and variance of ``x`` over ``axes``."""
    del shift, name
    mean = _core.reduce_mean(x, axes, keepdims=True)
    variance = _core.reduce_mean(_core.squared_difference(x, mean), axes, keepdims=True)
    if not keepdims:
        mean = _core.squeeze(mean, axes)
        variance = _core.squeeze(variance, axes)
    return mean, variance


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zeros elements with probability ``rate`` and scales the rest by 1 / (1 - rate)."""
    del name
    x = _core.convert_to_tensor(x)
    if not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must be in [0, 1), received {rate}")
    shape = x.shape if noise_shape is None else noise_shape
    keep = _core.random.uniform(shape, dtype=x.dtype, seed=seed) >= rate
    return x * _core.cast(keep, x.dtype) / (1.0 - rate)


__all__ = [
    "bias_add",
    "dropout",
    "elu",
    "gelu",
    "l2_loss",
    "leaky_relu",
    "log_softmax",
    "moments",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "sigmoid_cross_entropy_with_logits",
    "silu",
    "softmax",
    "softmax_cross_entropy_with_logits",
    "softplus",
    "sparse_softmax_cross_entropy_with_logits",
    "swish",
    "tanh",
]
