"""``ft.nn``: activations, softmax, cross-entropies and a few layer helpers."""

import operator
import reprlib

import numpy as np

from . import _core
from ._exports.nn import *  # noqa: F403 (the native names: scripts/gen_bindings.py)
from ._exports.nn import __all__ as _native


def bias_add(value, bias, data_format=None, name=None):
    """``value + bias`` with ``bias`` along the last axis."""
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
    if isinstance(rate, (_core.Tensor, _core.Variable)):
        rate = float(rate)
    if isinstance(rate, bool) or not isinstance(rate, (int, float, np.number)) or not 0 <= rate < 1:
        raise ValueError(
            f"dropout: rate must be a number in [0, 1), received rate={reprlib.repr(rate)}"
        )
    shape = x.shape if noise_shape is None else noise_shape
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
    """2-D convolution of an NHWC ``input`` with HWIO ``filters`` (cross-correlation, as TF).

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
    """The transpose (the input gradient) of ``conv2d``; ``filters`` is ``[h, w, out, in]``."""
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
    """The maximum over each ``ksize`` window of an NHWC ``input``."""
    del name
    _nhwc("max_pool2d", data_format)
    return _core.nn.max_pool_nhwc(
        input,
        _spatial("max_pool2d", "ksize", ksize),
        _spatial("max_pool2d", "strides", strides),
        _padding("max_pool2d", padding),
    )


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """The mean over each ``ksize`` window of an NHWC ``input`` (padding not counted)."""
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
    """``(x - mean) / sqrt(variance + variance_epsilon) * scale + offset``, computed as TF does
    (one multiply and one add over ``x``)."""
    del name
    inv = _core.rsqrt(_core.add(variance, variance_epsilon))
    if scale is not None:
        inv = inv * scale
    shift = -mean * inv if offset is None else offset - mean * inv
    return x * inv + shift


__all__ = [
    *_native,
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
