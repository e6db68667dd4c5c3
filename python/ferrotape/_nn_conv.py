"""``ft.nn``'s convolutions and pools beyond the native 2-D ones, composed from them.

1-D ops add a height axis of 1 and call the 2-D op; depthwise convolution is a 2-D convolution
with a block-diagonal filter (each input channel feeds only its own outputs); 3-D convolution
sums one 2-D convolution per depth tap; 3-D pools pool height and width, then depth (both max
and mean over a box are separable). Gradients come from the 2-D ops.

The transposed and backprop forms that have no 2-D counterpart to call are vector-Jacobian
products of the forward op, taken with an inner tape: an outer tape records that gradient
computation too, so they are differentiable to any order like everything else.
"""

import operator
import reprlib

from . import _core
from .nn import _nhwc, _padding, _positive_ints, avg_pool2d, conv2d, conv2d_transpose, max_pool2d
from .tape import GradientTape


def _ints(op, name, value, count, default=None):
    """An int or 1, ``count`` or ``count + 2`` ints (batch and channel entries 1) as ``count``."""
    values = _positive_ints(op, name, default if value is None else value)
    if len(values) == 1:
        return values * count
    if len(values) == count:
        return values
    if len(values) == count + 2 and values[0] == values[-1] == 1:
        return values[1:-1]
    raise ValueError(
        f"{op}: {name} must be an int or a list of 1, {count} or {count + 2} ints "
        f"(batch and channel entries 1), received {name}={reprlib.repr(value)}"
    )


def _nwc(op, data_format):
    if data_format not in (None, "NWC", "channels_last"):
        raise ValueError(f"{op}: only the NWC data format is supported, received {data_format!r}")


def _rank(op, name, x, rank):
    x = _core.convert_to_tensor(x)
    if x.ndim != rank:
        raise ValueError(f"{op}: {name} must be {rank}-D, received shape {list(x.shape)}")
    return x


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):  # noqa: A002
    """The 1-D convolution (cross-correlation) of an NWC ``input`` with WIO ``filters``.

    Args:
        input: A 3-D floating tensor ``[batch, width, in_channels]``.
        filters: A 3-D tensor ``[filter_width, in_channels, out_channels]``.
        stride: An int, or 1 or 3 ints.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NWC"``.
        dilations: An int, or 1 or 3 ints; ``None`` means 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 3-D tensor ``[batch, out_width, out_channels]``.

    Gradient: that of ``conv2d`` on the input with a height axis of 1.

    >>> import ferrotape as ft
    >>> ft.nn.conv1d(ft.ones([1, 4, 1]), ft.ones([2, 1, 1]), 1, "VALID")[0, :, 0].numpy()
    array([2., 2., 2.], dtype=float32)
    """
    del name
    op = "conv1d"
    _nwc(op, data_format)
    x, f = _rank(op, "input", input, 3), _rank(op, "filters", filters, 3)
    (s,), (d,) = _ints(op, "stride", stride, 1), _ints(op, "dilations", dilations, 1, 1)
    y = conv2d(_core.expand_dims(x, 1), _core.expand_dims(f, 0), [1, s], padding, dilations=[1, d])
    return _core.squeeze(y, [1])


def conv1d_transpose(
    input,  # noqa: A002
    filters,
    output_shape,
    strides,
    padding="SAME",
    data_format="NWC",
    dilations=None,
    name=None,
):
    """The transpose of ``conv1d`` (its input gradient), mapping ``conv1d``'s output shape back.

    Args:
        input: A 3-D tensor ``[batch, width, in_channels]``.
        filters: A 3-D tensor ``[filter_width, out_channels, in_channels]``.
        output_shape: The 3 ints ``[batch, out_width, out_channels]`` of the result.
        strides: An int, or 1 or 3 ints.
        padding: ``"SAME"`` or ``"VALID"``, as in the matching ``conv1d``.
        data_format: ``"NWC"``.
        dilations: An int, or 1 or 3 ints; ``None`` means 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``output_shape``.

    Gradient: ``conv1d`` of the upstream gradient for ``input``.

    >>> import ferrotape as ft
    >>> ft.nn.conv1d_transpose(ft.ones([1, 2, 1]), ft.ones([2, 1, 1]), [1, 4, 1], 2).shape
    TensorShape([1, 4, 1])
    """
    del name
    op = "conv1d_transpose"
    _nwc(op, data_format)
    x, f = _rank(op, "input", input, 3), _rank(op, "filters", filters, 3)
    shape = [operator.index(d) for d in _core.convert_to_tensor(output_shape).numpy()]
    if len(shape) != 3:
        raise ValueError(f"{op}: output_shape must be 3 ints (NWC), received {shape}")
    (s,), (d,) = _ints(op, "strides", strides, 1), _ints(op, "dilations", dilations, 1, 1)
    y = conv2d_transpose(
        _core.expand_dims(x, 1),
        _core.expand_dims(f, 0),
        [shape[0], 1, shape[1], shape[2]],
        [1, s],
        padding,
        dilations=[1, d],
    )
    return _core.squeeze(y, [1])


def _same_padding(size, kernel, stride, dilation):
    """TensorFlow's SAME padding of one axis: ``(before, after)``, the extra one after."""
    out = -(-size // stride)
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):  # noqa: A002
    """The 3-D convolution (cross-correlation) of an NDHWC ``input`` with DHWIO ``filters``.

    Computed as one 2-D convolution per depth tap of the filter, summed.

    Args:
        input: A 5-D floating tensor ``[batch, depth, height, width, in_channels]``.
        filters: A 5-D tensor ``[filter_depth, filter_height, filter_width, in_channels,
            out_channels]``.
        strides: 5 ints ``[1, d, h, w, 1]`` (or 1 or 3 ints).
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NDHWC"``.
        dilations: 5 ints ``[1, d, h, w, 1]`` (or 1 or 3 ints); ``None`` means 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 5-D tensor ``[batch, out_depth, out_height, out_width, out_channels]``.

    Gradient: that of the 2-D convolutions.

    >>> import ferrotape as ft
    >>> ft.nn.conv3d(ft.ones([1, 3, 3, 3, 1]), ft.ones([2, 2, 2, 1, 1]), 1, "VALID")[0, 0, 0, 0]
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([8.], dtype=float32)>
    """
    del name
    op = "conv3d"
    if data_format not in (None, "NDHWC", "channels_last"):
        raise ValueError(f"{op}: only the NDHWC data format is supported, received {data_format!r}")
    x, f = _rank(op, "input", input, 5), _rank(op, "filters", filters, 5)
    sd, sh, sw = _ints(op, "strides", strides, 3)
    dd, dh, dw = _ints(op, "dilations", dilations, 3, 1)
    kd = f.shape[0]
    if _padding(op, padding) == "SAME":
        before, after = _same_padding(x.shape[1], kd, sd, dd)
        x = _core.pad(x, [[0, 0], [before, after], [0, 0], [0, 0], [0, 0]])
    out_depth = (x.shape[1] - (kd - 1) * dd - 1) // sd + 1
    if out_depth < 1:
        raise ValueError(
            f"{op}: the filter's depth {kd} (dilation {dd}) exceeds the input's depth {x.shape[1]}"
        )
    total = None
    for t in range(kd):
        start = t * dd
        taps = x[:, start : start + (out_depth - 1) * sd + 1 : sd]
        flat = _core.reshape(taps, [-1, *x.shape[2:]])
        y = conv2d(flat, f[t], [sh, sw], padding, dilations=[dh, dw])
        total = y if total is None else total + y
    return _core.reshape(total, [x.shape[0], out_depth, *total.shape[1:]])


def convolution(
    input, filters, strides=None, padding="VALID", data_format=None, dilations=None, name=None
):  # noqa: A002
    """An N-D convolution, dispatched on ``input``'s rank to ``conv1d``, ``conv2d`` or ``conv3d``.

    Args:
        input: A 3-D, 4-D or 5-D channels-last tensor.
        filters: The matching filter (``[spatial..., in_channels, out_channels]``).
        strides: An int or one int per spatial axis; ``None`` means 1.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``None`` or a channels-last format.
        dilations: An int or one int per spatial axis; ``None`` means 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        The convolution, channels last.

    Gradient: that of the dispatched op.

    >>> import ferrotape as ft
    >>> ft.nn.convolution(ft.ones([1, 4, 1]), ft.ones([2, 1, 1])).shape
    TensorShape([1, 3, 1])
    """
    del name, data_format
    x = _core.convert_to_tensor(input)
    strides = 1 if strides is None else strides
    if x.ndim == 3:
        return conv1d(x, filters, strides, padding, dilations=dilations)
    if x.ndim == 4:
        return conv2d(x, filters, strides, padding, dilations=dilations)
    if x.ndim == 5:
        return conv3d(x, filters, strides, padding, dilations=dilations)
    raise ValueError(f"convolution: input must be 3-D, 4-D or 5-D, received shape {list(x.shape)}")


def conv_transpose(
    input,
    filters,
    output_shape,
    strides,
    padding="SAME",
    data_format=None,
    dilations=None,
    name=None,
):  # noqa: A002
    """The transpose of ``convolution``, dispatched on ``input``'s rank (1-D, 2-D or 3-D).

    Args:
        input: A 3-D, 4-D or 5-D channels-last tensor.
        filters: ``[spatial..., out_channels, in_channels]``.
        output_shape: The shape of the result.
        strides: An int or one int per spatial axis.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``None`` or a channels-last format.
        dilations: An int or one int per spatial axis; ``None`` means 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``output_shape``.

    Raises:
        ValueError: for another rank.

    >>> import ferrotape as ft
    >>> ft.nn.conv_transpose(ft.ones([1, 2, 1]), ft.ones([2, 1, 1]), [1, 4, 1], 2).shape
    TensorShape([1, 4, 1])
    """
    del name, data_format
    x = _core.convert_to_tensor(input)
    if x.ndim == 3:
        return conv1d_transpose(x, filters, output_shape, strides, padding, dilations=dilations)
    if x.ndim == 4:
        return conv2d_transpose(x, filters, output_shape, strides, padding, dilations=dilations)
    if x.ndim == 5:
        return conv3d_transpose(x, filters, output_shape, strides, padding, dilations=dilations)
    raise ValueError(
        f"conv_transpose: input must be 3-D, 4-D or 5-D, received shape {list(x.shape)}"
    )


def atrous_conv2d(value, filters, rate, padding, name=None):
    """``conv2d`` with stride 1 and dilation ``rate`` (a dilated, or atrous, convolution).

    Args:
        value: A 4-D NHWC tensor.
        filters: A 4-D HWIO filter.
        rate: A positive int: the step between the filter's taps.
        padding: ``"SAME"`` or ``"VALID"``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 4-D NHWC tensor.

    Gradient: that of ``conv2d``.

    >>> import ferrotape as ft
    >>> ft.nn.atrous_conv2d(ft.ones([1, 5, 5, 1]), ft.ones([2, 2, 1, 1]), 2, "VALID").shape
    TensorShape([1, 3, 3, 1])
    """
    del name
    return conv2d(value, filters, 1, padding, dilations=rate)


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """The transpose of ``atrous_conv2d`` (stride 1, dilation ``rate``).

    Args:
        value: A 4-D NHWC tensor.
        filters: A 4-D filter ``[height, width, out_channels, in_channels]``.
        output_shape: The 4 ints of the result.
        rate: A positive int.
        padding: ``"SAME"`` or ``"VALID"``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``output_shape``.

    >>> import ferrotape as ft
    >>> y = ft.nn.atrous_conv2d_transpose(
    ...     ft.ones([1, 3, 3, 1]), ft.ones([2, 2, 1, 1]), [1, 5, 5, 1], 2, "VALID")
    >>> y.shape
    TensorShape([1, 5, 5, 1])
    """
    del name
    return conv2d_transpose(value, filters, output_shape, 1, padding, dilations=rate)


def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None, name=None):  # noqa: A002
    """Convolves each input channel with its own filters: ``in_channels * multiplier`` outputs.

    Output channel ``c * multiplier + m`` is input channel ``c`` correlated with
    ``filter[:, :, c, m]``.

    Args:
        input: A 4-D NHWC tensor ``[batch, height, width, in_channels]``.
        filter: A 4-D tensor ``[filter_height, filter_width, in_channels, multiplier]``.
        strides: 4 ints ``[1, h, w, 1]`` (or 1 or 2 ints).
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NHWC"``.
        dilations: 2 ints (or 1); ``None`` means 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 4-D tensor ``[batch, out_height, out_width, in_channels * multiplier]``.

    Gradient: that of ``conv2d`` with the block-diagonal filter.

    >>> import ferrotape as ft
    >>> x = ft.concat([ft.ones([1, 3, 3, 1]), 2 * ft.ones([1, 3, 3, 1])], axis=-1)
    >>> ft.nn.depthwise_conv2d(x, ft.ones([2, 2, 2, 1]), [1, 1, 1, 1], "VALID")[0, 0, 0].numpy()
    array([4., 8.], dtype=float32)
    """
    del name
    op = "depthwise_conv2d"
    _nhwc(op, data_format)
    x, f = _rank(op, "input", input, 4), _rank(op, "filter", filter, 4)
    channels, multiplier = f.shape[2], f.shape[3]
    if x.shape[-1] != channels:
        raise ValueError(
            f"{op}: filter's in_channels ({channels}) must match input's ({x.shape[-1]})"
        )
    # [kh, kw, C, 1, M] * eye(C)[:, :, None]: filter[..., c, c', m] is zero unless c == c'.
    eye = _core.reshape(_core.eye(channels, dtype=f.dtype), [1, 1, channels, channels, 1])
    block = _core.reshape(
        _core.expand_dims(f, 3) * eye, [f.shape[0], f.shape[1], channels, channels * multiplier]
    )
    return conv2d(x, block, strides, padding, dilations=dilations)


def separable_conv2d(
    input,  # noqa: A002
    depthwise_filter,
    pointwise_filter,
    strides,
    padding,
    data_format=None,
    dilations=None,
    name=None,
):
    """A ``depthwise_conv2d`` followed by a 1x1 ``conv2d`` that mixes the channels.

    Args:
        input: A 4-D NHWC tensor.
        depthwise_filter: ``[filter_height, filter_width, in_channels, multiplier]``.
        pointwise_filter: ``[1, 1, in_channels * multiplier, out_channels]``.
        strides: 4 ints ``[1, h, w, 1]`` (or 1 or 2 ints), for the depthwise step.
        padding: ``"SAME"`` or ``"VALID"``, for the depthwise step.
        data_format: ``"NHWC"``.
        dilations: 2 ints (or 1); ``None`` means 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 4-D tensor ``[batch, out_height, out_width, out_channels]``.

    Gradient: that of the two convolutions.

    >>> import ferrotape as ft
    >>> y = ft.nn.separable_conv2d(
    ...     ft.ones([1, 3, 3, 2]), ft.ones([2, 2, 2, 1]), ft.ones([1, 1, 2, 3]), 1, "VALID")
    >>> y.shape
    TensorShape([1, 2, 2, 3])
    """
    del name
    depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format, dilations)
    return conv2d(depthwise, pointwise_filter, 1, "VALID")


def _pool1d(op, pool, input, ksize, strides, padding, data_format):  # noqa: A002
    _nwc(op, data_format)
    x = _rank(op, "input", input, 3)
    (k,), (s,) = _ints(op, "ksize", ksize, 1), _ints(op, "strides", strides, 1)
    return _core.squeeze(pool(_core.expand_dims(x, 1), [1, k], [1, s], padding), [1])


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """The maximum over each ``ksize`` window of an NWC ``input``.

    Args:
        input: A 3-D tensor ``[batch, width, channels]``.
        ksize: An int, or 1 or 3 ints.
        strides: An int, or 1 or 3 ints.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NWC"``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 3-D tensor ``[batch, out_width, channels]``.

    Gradient: the upstream gradient routed to each window's maximum.

    >>> import ferrotape as ft
    >>> ft.nn.max_pool1d(ft.reshape(ft.range(4.0), [1, 4, 1]), 2, 2, "VALID")[0, :, 0].numpy()
    array([1., 3.], dtype=float32)
    """
    del name
    return _pool1d("max_pool1d", max_pool2d, input, ksize, strides, padding, data_format)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """The mean over each ``ksize`` window of an NWC ``input`` (padded positions not counted).

    Args:
        input: A 3-D tensor ``[batch, width, channels]``.
        ksize: An int, or 1 or 3 ints.
        strides: An int, or 1 or 3 ints.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NWC"``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 3-D tensor ``[batch, out_width, channels]``.

    Gradient: the upstream gradient shared equally among each window's elements.

    >>> import ferrotape as ft
    >>> ft.nn.avg_pool1d(ft.reshape(ft.range(4.0), [1, 4, 1]), 2, 2, "VALID")[0, :, 0].numpy()
    array([0.5, 2.5], dtype=float32)
    """
    del name
    return _pool1d("avg_pool1d", avg_pool2d, input, ksize, strides, padding, data_format)


def _pool3d(op, pool, input, ksize, strides, padding, data_format):  # noqa: A002
    if data_format not in (None, "NDHWC", "channels_last"):
        raise ValueError(f"{op}: only the NDHWC data format is supported, received {data_format!r}")
    x = _rank(op, "input", input, 5)
    kd, kh, kw = _ints(op, "ksize", ksize, 3)
    sd, sh, sw = _ints(op, "strides", strides, 3)
    batch, depth, _, _, channels = x.shape
    # Height and width first, then depth over the flattened plane: a box's max (or mean, the
    # same count in every plane of a window) is that of its planes'.
    planes = pool(_core.reshape(x, [-1, *x.shape[2:]]), [kh, kw], [sh, sw], padding)
    height, width = planes.shape[1], planes.shape[2]
    stacked = _core.reshape(planes, [batch, depth, height * width, channels])
    out = pool(stacked, [kd, 1], [sd, 1], padding)
    return _core.reshape(out, [batch, out.shape[1], height, width, channels])


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """The maximum over each ``ksize`` box of an NDHWC ``input``.

    Args:
        input: A 5-D tensor ``[batch, depth, height, width, channels]``.
        ksize: An int, or 1, 3 or 5 ints.
        strides: An int, or 1, 3 or 5 ints.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NDHWC"``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 5-D tensor ``[batch, out_depth, out_height, out_width, channels]``.

    Gradient: the upstream gradient routed to each box's maximum.

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.range(8.0), [1, 2, 2, 2, 1])
    >>> ft.nn.max_pool3d(x, 2, 2, "VALID").numpy().ravel()
    array([7.], dtype=float32)
    """
    del name
    return _pool3d("max_pool3d", max_pool2d, input, ksize, strides, padding, data_format)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """The mean over each ``ksize`` box of an NDHWC ``input`` (padded positions not counted).

    Args:
        input: A 5-D tensor ``[batch, depth, height, width, channels]``.
        ksize: An int, or 1, 3 or 5 ints.
        strides: An int, or 1, 3 or 5 ints.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NDHWC"``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 5-D tensor ``[batch, out_depth, out_height, out_width, channels]``.

    Gradient: the upstream gradient shared equally among each box's elements.

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.range(8.0), [1, 2, 2, 2, 1])
    >>> ft.nn.avg_pool3d(x, 2, 2, "VALID").numpy().ravel()
    array([3.5], dtype=float32)
    """
    del name
    return _pool3d("avg_pool3d", avg_pool2d, input, ksize, strides, padding, data_format)


def pool(
    input,  # noqa: A002
    window_shape,
    pooling_type,
    strides=None,
    padding="VALID",
    data_format=None,
    dilations=None,
    name=None,
):
    """Max or average pooling over 1, 2 or 3 spatial axes, by ``input``'s rank.

    Args:
        input: A 3-D, 4-D or 5-D channels-last tensor.
        window_shape: One int per spatial axis.
        pooling_type: ``"MAX"`` or ``"AVG"``.
        strides: One int per spatial axis; ``None`` means 1.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``None`` or a channels-last format.
        dilations: ``None`` or all ones (dilated pooling is not implemented).
        name: Ignored (TensorFlow's op name).

    Returns:
        The pooled tensor.

    Raises:
        ValueError: for another pooling type, rank or a dilation above 1.

    >>> import ferrotape as ft
    >>> ft.nn.pool(ft.ones([1, 4, 4, 1]), [2, 2], "AVG", strides=[2, 2]).shape
    TensorShape([1, 2, 2, 1])
    """
    del name, data_format
    if dilations is not None and any(
        d != 1 for d in _positive_ints("pool", "dilations", dilations)
    ):
        raise ValueError(f"pool: dilations other than 1 are not implemented, received {dilations}")
    x = _core.convert_to_tensor(input)
    table = {
        ("MAX", 3): max_pool1d,
        ("AVG", 3): avg_pool1d,
        ("MAX", 4): max_pool2d,
        ("AVG", 4): avg_pool2d,
        ("MAX", 5): max_pool3d,
        ("AVG", 5): avg_pool3d,
    }
    fn = table.get((pooling_type, x.ndim))
    if fn is None:
        raise ValueError(
            f"pool: pooling_type must be 'MAX' or 'AVG' and input 3-D to 5-D, received "
            f"pooling_type={pooling_type!r} and shape {list(x.shape)}"
        )
    return fn(x, window_shape, 1 if strides is None else strides, padding)


def _sizes(op, name, value, rank):
    sizes = [operator.index(d) for d in _core.convert_to_tensor(value).numpy().reshape(-1)]
    if len(sizes) != rank or min(sizes) < 0:
        raise ValueError(f"{op}: {name} must be {rank} non-negative ints, received {sizes}")
    return sizes


def _vjp(forward, primal, cotangent):
    """``d/dprimal sum(forward(primal) * cotangent)``: the transpose of the linear ``forward``."""
    with GradientTape() as tape:
        tape.watch(primal)
        out = forward(primal)
    return tape.gradient(out, primal, output_gradients=cotangent)


def conv3d_transpose(
    input,  # noqa: A002
    filters,
    output_shape,
    strides,
    padding="SAME",
    data_format="NDHWC",
    dilations=None,
    name=None,
):
    """The transpose of ``conv3d`` (its input gradient), mapping ``conv3d``'s output shape back.

    Args:
        input: A 5-D tensor ``[batch, depth, height, width, in_channels]``.
        filters: A 5-D tensor ``[depth, height, width, out_channels, in_channels]``.
        output_shape: The 5 ints of the result.
        strides: An int, or 1, 3 or 5 ints.
        padding: ``"SAME"`` or ``"VALID"``, as in the matching ``conv3d``.
        data_format: ``"NDHWC"``.
        dilations: An int, or 1, 3 or 5 ints; ``None`` means 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``output_shape``.

    Gradient: ``conv3d`` of the upstream gradient for ``input``.

    >>> import ferrotape as ft
    >>> ft.nn.conv3d_transpose(ft.ones([1, 2, 2, 2, 1]), ft.ones([2, 2, 2, 1, 1]),
    ...                        [1, 4, 4, 4, 1], 2).shape
    TensorShape([1, 4, 4, 4, 1])
    """
    del name
    op = "conv3d_transpose"
    x, f = _rank(op, "input", input, 5), _rank(op, "filters", filters, 5)
    shape = _sizes(op, "output_shape", output_shape, 5)
    zeros = _core.zeros(shape, dtype=x.dtype)
    return _vjp(lambda t: conv3d(t, f, strides, padding, data_format, dilations), zeros, x)


def depthwise_conv2d_backprop_input(
    input_sizes,
    filter,  # noqa: A002
    out_backprop,
    strides,
    padding,
    data_format="NHWC",
    dilations=None,
    name=None,
):
    """The gradient of ``depthwise_conv2d`` with respect to its input.

    Args:
        input_sizes: The 4 ints of the input's shape.
        filter: The 4-D filter ``[height, width, in_channels, multiplier]``.
        out_backprop: The gradient of the output, ``[batch, out_height, out_width,
            in_channels * multiplier]``.
        strides: 4 ints ``[1, h, w, 1]`` (or 1 or 2 ints).
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NHWC"``.
        dilations: 2 or 4 ints; ``None`` means 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``input_sizes``.

    >>> import ferrotape as ft
    >>> dx = ft.nn.depthwise_conv2d_backprop_input(
    ...     [1, 3, 3, 1], ft.ones([2, 2, 1, 1]), ft.ones([1, 2, 2, 1]), 1, "VALID")
    >>> dx[0, :, :, 0].numpy()
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]], dtype=float32)
    """
    del name
    op = "depthwise_conv2d_backprop_input"
    f = _core.convert_to_tensor(filter)
    zeros = _core.zeros(_sizes(op, "input_sizes", input_sizes, 4), dtype=f.dtype)
    dilations = None if dilations is None else _ints(op, "dilations", dilations, 2)
    return _vjp(
        lambda t: depthwise_conv2d(t, f, strides, padding, data_format, dilations),
        zeros,
        out_backprop,
    )


def depthwise_conv2d_backprop_filter(
    input,  # noqa: A002
    filter_sizes,
    out_backprop,
    strides,
    padding,
    data_format="NHWC",
    dilations=None,
    name=None,
):
    """The gradient of ``depthwise_conv2d`` with respect to its filter.

    Args:
        input: The 4-D NHWC input.
        filter_sizes: The 4 ints of the filter's shape ``[height, width, in_channels,
            multiplier]``.
        out_backprop: The gradient of the output.
        strides: 4 ints ``[1, h, w, 1]`` (or 1 or 2 ints).
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NHWC"``.
        dilations: 2 or 4 ints; ``None`` means 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``filter_sizes``.

    >>> import ferrotape as ft
    >>> ft.nn.depthwise_conv2d_backprop_filter(
    ...     ft.ones([1, 3, 3, 1]), [2, 2, 1, 1], ft.ones([1, 2, 2, 1]), 1, "VALID").numpy().ravel()
    array([4., 4., 4., 4.], dtype=float32)
    """
    del name
    op = "depthwise_conv2d_backprop_filter"
    x = _rank(op, "input", input, 4)
    zeros = _core.zeros(_sizes(op, "filter_sizes", filter_sizes, 4), dtype=x.dtype)
    dilations = None if dilations is None else _ints(op, "dilations", dilations, 2)
    return _vjp(
        lambda t: depthwise_conv2d(x, t, strides, padding, data_format, dilations),
        zeros,
        out_backprop,
    )


def dilation2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    """Grayscale morphological dilation: the maximum of ``input + filters`` over each window.

    ``out[b, y, x, c] = max_{dy, dx} input[b, y*sy + dy*ry, x*sx + dx*rx, c] + filters[dy, dx,
    c]``, positions outside the image left out (SAME padding is taken as ``-inf``).

    Args:
        input: A 4-D NHWC float tensor.
        filters: A 3-D tensor ``[filter_height, filter_width, channels]``.
        strides: 4 ints ``[1, h, w, 1]`` (or 1 or 2 ints).
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NHWC"``.
        dilations: 4 ints ``[1, h, w, 1]`` (or 1 or 2 ints); ``None`` means 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 4-D tensor ``[batch, out_height, out_width, channels]``.

    Gradient: the upstream gradient to the maximizing input pixel and filter tap.

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.constant([0.0, 1.0, 0.0, 0.0]), [1, 2, 2, 1])
    >>> ft.nn.dilation2d(x, ft.zeros([2, 2, 1]), [1, 1, 1, 1], "SAME")[0, :, :, 0].numpy()
    array([[1., 1.],
           [0., 0.]], dtype=float32)
    """
    del name
    op = "dilation2d"
    _nhwc(op, data_format)
    x, f = _rank(op, "input", input, 4), _rank(op, "filters", filters, 3)
    if f.shape[2] != x.shape[3]:
        raise ValueError(
            f"{op}: filters must have input's {x.shape[3]} channels, received {list(f.shape)}"
        )
    sh, sw = _ints(op, "strides", strides, 2)
    rh, rw = _ints(op, "dilations", dilations, 2, 1)
    kh, kw = f.shape[0], f.shape[1]
    span_h, span_w = (kh - 1) * rh + 1, (kw - 1) * rw + 1
    if _padding(op, padding) == "SAME":
        top, bottom = _same_padding(x.shape[1], kh, sh, rh)
        left, right = _same_padding(x.shape[2], kw, sw, rw)
        x = _core.pad(
            x, [[0, 0], [top, bottom], [left, right], [0, 0]], constant_values=-float("inf")
        )
    out_h, out_w = (x.shape[1] - span_h) // sh + 1, (x.shape[2] - span_w) // sw + 1
    if out_h < 1 or out_w < 1:
        raise ValueError(f"{op}: the filter's span exceeds the input, received {list(x.shape)}")
    taps = [
        x[
            :,
            i * rh : i * rh + (out_h - 1) * sh + 1 : sh,
            j * rw : j * rw + (out_w - 1) * sw + 1 : sw,
        ]
        + f[i, j]
        for i in range(kh)
        for j in range(kw)
    ]
    return _core.reduce_max(_core.stack(taps, 0), 0)


def erosion2d(value, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """Grayscale morphological erosion: ``-dilation2d(-value, filters reversed in height and
    width)``, the minimum of ``value - filters`` over each window.

    Args:
        value: A 4-D NHWC float tensor.
        filters: A 3-D tensor ``[filter_height, filter_width, channels]``.
        strides: 4 ints ``[1, h, w, 1]`` (or 1 or 2 ints).
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NHWC"``.
        dilations: 4 ints ``[1, h, w, 1]`` (or 1 or 2 ints); ``None`` means 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A 4-D tensor ``[batch, out_height, out_width, channels]``.

    Gradient: the upstream gradient to the minimizing input pixel and filter tap.

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.constant([2.0, 1.0, 3.0, 4.0]), [1, 2, 2, 1])
    >>> ft.nn.erosion2d(x, ft.zeros([2, 2, 1]), [1, 1, 1, 1], "VALID").numpy().ravel()
    array([1.], dtype=float32)
    """
    del name
    f = _rank("erosion2d", "filters", filters, 3)
    return -dilation2d(
        -_core.convert_to_tensor(value), f[::-1, ::-1], strides, padding, data_format, dilations
    )
