"""``ft.nn``'s pools beyond the native 2-D ones, composed from them, the morphological
``dilation2d``/``erosion2d``, and the fractional max and average pools (random windows,
reduced with slices).

1-D pools add a height axis of 1 and call the 2-D pool; 3-D pools pool height and width, then
depth (both max and mean over a box are separable); dilation takes the maximum over one strided
slice per filter tap. Gradients come from the ops they are built of.
"""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from . import _core
from ._nn_conv import _ints, _nwc, _rank, _same_padding
from .nn import _nhwc, _padding, _positive_ints, _spatial, avg_pool2d, max_pool2d


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


def max_pool_with_argmax(
    input,  # noqa: A002
    ksize,
    strides,
    padding,
    data_format="NHWC",
    output_dtype="int64",
    include_batch_in_index=False,
    name=None,
):
    """``max_pool2d`` and the flattened position of each window's maximum.

    The position is ``(y * width + x) * channels + c`` (with ``include_batch_in_index``,
    ``((b * height + y) * width + x) * channels + c``); among equal values the first in
    row-major window order wins, padding never does.

    Args:
        input: A 4-D NHWC float tensor.
        ksize: An int, or 1, 2 or 4 ints.
        strides: An int, or 1, 2 or 4 ints.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NHWC"``.
        output_dtype: int32 or int64 for the positions.
        include_batch_in_index: Whether the position counts the batch too.
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair ``(output, argmax)`` of ``[batch, out_height, out_width, channels]`` tensors.

    Gradient: for ``output``, that of ``max_pool2d``; ``argmax`` has none.

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.constant([1.0, 4.0, 3.0, 2.0]), [1, 2, 2, 1])
    >>> ft.nn.max_pool_with_argmax(x, 2, 2, "VALID")[1].numpy().ravel()
    array([1])
    """
    del name
    op = "max_pool_with_argmax"
    _nhwc(op, data_format)
    x = _core.convert_to_tensor(input)
    if x.ndim != 4:
        raise ValueError(f"{op}: input must be 4-D NHWC, received shape {list(x.shape)}")
    output = max_pool2d(x, ksize, strides, padding)
    (kh, kw), (sh, sw) = _spatial(op, "ksize", ksize), _spatial(op, "strides", strides)
    values = x.numpy().astype(np.float64)
    b, h, w, c = values.shape
    top = left = 0
    if padding == "SAME":
        (top, bottom), (left, right) = _same_padding(h, kh, sh, 1), _same_padding(w, kw, sw, 1)
        values = np.pad(
            values, [(0, 0), (top, bottom), (left, right), (0, 0)], constant_values=-np.inf
        )
    windows = sliding_window_view(values, (kh, kw), axis=(1, 2))[:, ::sh, ::sw]
    flat = windows.reshape(*windows.shape[:4], kh * kw)
    best = np.argmax(flat, axis=-1)  # the first maximum in row-major window order
    oh, ow = np.arange(windows.shape[1]), np.arange(windows.shape[2])
    rows = oh[None, :, None, None] * sh + best // kw - top
    cols = ow[None, None, :, None] * sw + best % kw - left
    position = (rows * w + cols) * c + np.arange(c)
    if include_batch_in_index:
        position = position + np.arange(b)[:, None, None, None] * h * w * c
    return output, _core.cast(_core.constant(position.astype(np.int64)), output_dtype)


def _pooling_sequence(rng, length, out, pseudo_random):
    """The ``out + 1`` boundaries of fractional pooling's windows over ``length`` entries
    (Graham, 2014), as TensorFlow draws them: window sizes ``k = length // out`` or ``k + 1``,
    shuffled (random), or ``ceil(alpha * (i + u))`` for one uniform ``u`` (pseudo-random)."""
    if pseudo_random:
        alpha, k = length / out, length // out
        u = rng.uniform(0.0, min((k + 2) / alpha - 1, (length + 1 - k) / alpha - (out - 1)))
        cuts = [1] + [int(np.ceil(alpha * (i + u))) for i in range(1, out)] + [length + 1]
        sizes = np.diff(cuts)
    else:
        sizes = np.full(out, length // out)
        sizes[: length % out] += 1
        rng.shuffle(sizes)
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def _fractional_pool(op, reduce, value, pooling_ratio, pseudo_random, overlapping, seed):
    x = _rank(op, "value", value, 4)
    ratio = [float(r) for r in np.broadcast_to(np.asarray(pooling_ratio, dtype=float), (4,))]
    if np.ndim(pooling_ratio) == 0:
        ratio[0] = ratio[3] = 1.0
    if ratio[0] != 1.0 or ratio[3] != 1.0:
        raise ValueError(
            "`pooling_ratio` should have first and last elements with value 1.0. Received: "
            f"pooling_ratio={pooling_ratio}"
        )
    if min(ratio) < 1.0:
        raise ValueError(
            f"`pooling_ratio` elements should be >= 1.0. Received: pooling_ratio={pooling_ratio}"
        )
    outs = [int(np.floor(x.shape[i] / ratio[i])) for i in (1, 2)]
    if min(outs) < 1:
        raise ValueError(f"{op}: pooling_ratio {ratio} leaves no output for {list(x.shape)}")
    if seed:
        rng = np.random.default_rng(seed)  # a nonzero seed makes the windows repeatable
    else:
        from .random import _op_rng  # ft.random imports ft.nn: resolved at call time

        rng = _op_rng(None)
    rows = _pooling_sequence(rng, x.shape[1], outs[0], pseudo_random)
    cols = _pooling_sequence(rng, x.shape[2], outs[1], pseudo_random)
    return (
        _pool_windows(reduce, x, rows, cols, overlapping),
        _core.constant(rows),
        _core.constant(cols),
    )


def _pool_windows(reduce, x, rows, cols, overlapping):
    """``reduce`` over each window ``[rows[i], rows[i + 1])`` x ``[cols[j], cols[j + 1])``
    (closed at the end when ``overlapping``); max and mean over a box are separable."""
    for axis, cuts in ((1, rows), (2, cols)):
        length, extra = x.shape[axis], 1 if overlapping else 0
        pieces = []
        for start, stop in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
            window = (
                x[:, start : min(stop + extra, length)]
                if axis == 1
                else x[:, :, start : min(stop + extra, length)]
            )
            pieces.append(reduce(window, axis=axis))
        x = _core.stack(pieces, axis=axis)
    return x


def fractional_max_pool(
    value, pooling_ratio, pseudo_random=False, overlapping=False, seed=0, name=None
):
    """Max pooling by a fractional ratio: rows and columns are cut into windows of uneven
    sizes (``floor(n / ratio)`` of them) drawn at random, and each window keeps its maximum.

    Args:
        value: A 4-D NHWC tensor.
        pooling_ratio: A float >= 1 for rows and columns, or 4 floats ``[1, rows, cols, 1]``.
        pseudo_random: Draw the windows pseudo-randomly (one uniform offset) instead of by
            shuffling their sizes.
        overlapping: Each window also takes the first entry of the next one.
        seed: 0 for fresh windows each call; another int makes them a function of it.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(output, row_pooling_sequence, col_pooling_sequence)``: the pooled tensor and the
        int64 window boundaries (``out + 1`` each, from 0 to the input's size).

    Raises:
        ValueError: for ratios below 1, or not 1 on the batch and channel dimensions.

    Gradient: to each window's maximum (split equally among ties).

    >>> import numpy as np, ferrotape as ft
    >>> x = ft.constant(np.arange(16.0).reshape(1, 4, 4, 1))
    >>> out, rows, cols = ft.nn.fractional_max_pool(x, [1.0, 2.0, 2.0, 1.0], seed=7)
    >>> out[0, :, :, 0].numpy(), rows.numpy()
    (array([[ 5.,  7.],
           [13., 15.]]), array([0, 2, 4]))
    """
    del name
    return _fractional_pool(
        "fractional_max_pool",
        _core.reduce_max,
        value,
        pooling_ratio,
        pseudo_random,
        overlapping,
        seed,
    )


def fractional_avg_pool(
    value, pooling_ratio, pseudo_random=False, overlapping=False, seed=0, name=None
):
    """Average pooling by a fractional ratio: as ``fractional_max_pool``, each window keeping
    its mean.

    Args:
        value: A 4-D NHWC tensor.
        pooling_ratio: A float >= 1 for rows and columns, or 4 floats ``[1, rows, cols, 1]``.
        pseudo_random: Draw the windows pseudo-randomly instead of by shuffling their sizes.
        overlapping: Each window also takes the first entry of the next one.
        seed: 0 for fresh windows each call; another int makes them a function of it.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(output, row_pooling_sequence, col_pooling_sequence)``.

    Raises:
        ValueError: for ratios below 1, or not 1 on the batch and channel dimensions.

    Gradient: spread evenly over each window.

    >>> import numpy as np, ferrotape as ft
    >>> x = ft.constant(np.arange(16.0).reshape(1, 4, 4, 1))
    >>> ft.nn.fractional_avg_pool(x, [1.0, 2.0, 2.0, 1.0], seed=7)[0][0, :, :, 0].numpy()
    array([[ 2.5,  4.5],
           [10.5, 12.5]])
    """
    del name
    return _fractional_pool(
        "fractional_avg_pool",
        _core.reduce_mean,
        value,
        pooling_ratio,
        pseudo_random,
        overlapping,
        seed,
    )
