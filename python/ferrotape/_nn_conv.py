"""``ft.nn``'s convolutions beyond the native 2-D ones, composed from them.

1-D ops add a height axis of 1 and call the 2-D op; depthwise convolution is a 2-D convolution
with a block-diagonal filter (each input channel feeds only its own outputs); 3-D convolution
sums one 2-D convolution per depth tap. Gradients come from the 2-D ops.

The transposed and backprop forms that have no 2-D counterpart to call are vector-Jacobian
products of the forward op, taken with an inner tape: an outer tape records that gradient
computation too, so they are differentiable to any order like everything else.
"""

import operator
import reprlib

from . import _core
from .nn import _nhwc, _padding, _positive_ints, conv2d, conv2d_transpose
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
