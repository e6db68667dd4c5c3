"""The legacy backend's neural-network functions (Keras 3's ``keras.src.legacy.backend``,
second half): activations, cross-entropies on whole tensors (``target, output`` order, no
reduction), dropout, bias and batch normalization, 1D/2D (also depthwise and separable)
convolutions and pooling, padding and resizing by repetition. Only ``channels_last`` layouts
exist in ferrotape.

>>> import ferrotape as ft
>>> K = ft.keras.backend
>>> K.hard_sigmoid(ft.constant([-3.0, 0.0, 1.0])).numpy().tolist()  # clip(0.2 x + 0.5, 0, 1)
[0.0, 0.5, 0.699999988079071]
"""

import numpy as np

import ferrotape as ft

from ..backend_config import epsilon, image_data_format
from .backend_math import _tensor, repeat_elements


def _check_data_format(data_format, who):
    data_format = data_format or image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"{who}: unknown data_format: {data_format}")
    if data_format != "channels_last":
        raise ValueError(
            f"{who}: ferrotape supports only data_format='channels_last'. Received: {data_format!r}"
        )


def _padding(padding, who):
    if padding not in ("same", "valid"):
        raise ValueError(f"{who}: invalid padding: {padding!r}; expected 'same' or 'valid'.")
    return padding.upper()


# --------------------------------------------------------------------- activations


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """TF-Keras's generalised ReLU: ``x`` above ``threshold`` (0 below), capped at
    ``max_value``, minus ``alpha * relu(threshold - x)`` for the leak.

    Args:
        x: the input tensor.
        alpha: the slope below the threshold.
        max_value: the cap, or None.
        threshold: where the function switches.

    Returns:
        A tensor of ``x``'s shape.
    """
    x = _tensor(x)
    if alpha != 0.0:
        if max_value is None and threshold == 0:
            return ft.nn.leaky_relu(x, alpha=alpha)
        negative_part = ft.nn.relu(-x + threshold) if threshold != 0 else ft.nn.relu(-x)
    clip_max = max_value is not None
    if threshold != 0:
        y = x * ft.cast(ft.greater(x, threshold), x.dtype)
    elif max_value == 6:
        y, clip_max = ft.nn.relu6(x), False
    else:
        y = ft.nn.relu(x)
    if clip_max:
        y = ft.clip_by_value(y, 0.0, float(max_value))
    if alpha != 0.0:
        y = y - alpha * negative_part
    return y


def elu(x, alpha=1.0):
    """``x`` above 0, ``alpha * (exp(x) - 1)`` below."""
    result = ft.nn.elu(x)
    if alpha == 1:
        return result
    return ft.where(_tensor(x) > 0, result, alpha * result)


def sigmoid(x):
    """``1 / (1 + exp(-x))``."""
    return ft.sigmoid(x)


def hard_sigmoid(x):
    """TF-Keras's piecewise-linear sigmoid, ``clip(0.2 * x + 0.5, 0, 1)`` (Keras 3's
    ``activations.hard_sigmoid`` has slope 1/6 instead)."""
    return ft.clip_by_value(_tensor(x) * 0.2 + 0.5, 0.0, 1.0)


def tanh(x):
    """The hyperbolic tangent."""
    return ft.tanh(x)


def softplus(x):
    """``log(1 + exp(x))``."""
    return ft.math.softplus(x)


def softsign(x):
    """``x / (1 + |x|)``."""
    x = _tensor(x)
    return x / (1.0 + ft.abs(x))


def softmax(x, axis=-1):
    """The softmax over ``axis`` (an int or a tuple of axes); ``x`` must have rank >= 2."""
    x = _tensor(x)
    if len(x.shape) <= 1:
        raise ValueError(
            f"softmax: cannot apply softmax to a tensor that is 1D. Received input: {x}"
        )
    if isinstance(axis, int):
        return ft.nn.softmax(x, axis=axis)
    numerator = ft.exp(x - ft.reduce_max(x, axis=axis, keepdims=True))
    return numerator / ft.reduce_sum(numerator, axis=axis, keepdims=True)


# -------------------------------------------------------------------- cross-entropy


def binary_crossentropy(target, output, from_logits=False):
    """Element-wise binary cross-entropy (no mean): with probabilities, clipped to
    ``[eps, 1 - eps]``, ``-(t * log(p + eps) + (1 - t) * log(1 - p + eps))``."""
    output = _tensor(output)
    target = ft.cast(_tensor(target), output.dtype)
    if from_logits:
        return ft.nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    eps = epsilon()
    output = ft.clip_by_value(output, eps, 1.0 - eps)
    log_p = ft.math.log(output + eps)
    log_not_p = ft.math.log(1.0 - output + eps)
    return -(target * log_p + (1.0 - target) * log_not_p)


def binary_focal_crossentropy(
    target, output, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False
):
    """Element-wise focal cross-entropy: ``binary_crossentropy`` scaled by
    ``(1 - p_t) ** gamma``, and by ``alpha``/``1 - alpha`` with ``apply_class_balancing``."""
    output = _tensor(output)
    target = ft.cast(_tensor(target), output.dtype)
    probabilities = ft.sigmoid(output) if from_logits else output
    p_t = target * probabilities + (1.0 - target) * (1.0 - probabilities)
    focal = ft.pow(1.0 - p_t, gamma) * binary_crossentropy(target, output, from_logits)
    if apply_class_balancing:
        focal = (target * alpha + (1.0 - target) * (1.0 - alpha)) * focal
    return focal


def _check_compatible(target, output, who):
    if tuple(target.shape) != tuple(output.shape):
        raise ValueError(
            f"{who}: shapes {tuple(target.shape)} and {tuple(output.shape)} are incompatible."
        )


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy of one-hot ``target`` against ``output`` (probabilities, renormalised and
    clipped, or logits), reduced over ``axis``."""
    output = _tensor(output)
    target = ft.cast(_tensor(target), output.dtype)
    _check_compatible(target, output, "categorical_crossentropy")
    if from_logits:
        return ft.nn.softmax_cross_entropy_with_logits(labels=target, logits=output, axis=axis)
    output = output / ft.reduce_sum(output, axis, True)
    output = ft.clip_by_value(output, epsilon(), 1.0 - epsilon())
    return -ft.reduce_sum(target * ft.math.log(output), axis)


def categorical_focal_crossentropy(
    target, output, alpha=0.25, gamma=2.0, from_logits=False, axis=-1
):
    """``categorical_crossentropy`` with each class's term scaled by
    ``alpha * (1 - p) ** gamma``, reduced over ``axis``."""
    output = _tensor(output)
    target = ft.cast(_tensor(target), output.dtype)
    _check_compatible(target, output, "categorical_focal_crossentropy")
    if from_logits:
        output = ft.nn.softmax(output, axis=axis)
    output = output / ft.reduce_sum(output, axis=axis, keepdims=True)
    output = ft.clip_by_value(output, epsilon(), 1.0 - epsilon())
    focal = ft.pow(1.0 - output, gamma) * alpha * (-target * ft.math.log(output))
    return ft.reduce_sum(focal, axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1, ignore_class=None):
    """Cross-entropy of integer ``target`` against ``output``'s class axis ``axis``. A target
    whose rank is not one less than the output's (e.g. ``(batch, 1)``) is flattened. Entries
    labelled ``ignore_class`` get 0."""
    output = _tensor(output)
    target = ft.cast(_tensor(target), ft.int64)
    if not from_logits:
        output = ft.math.log(ft.clip_by_value(output, epsilon(), 1.0 - epsilon()))
    rank = len(output.shape)
    axis %= rank
    if axis != rank - 1:
        output = ft.transpose(output, [*range(axis), *range(axis + 1, rank), axis])
    out_shape = tuple(output.shape)
    reshaped = len(target.shape) != rank - 1
    if reshaped:
        target = ft.reshape(target, [-1])
        output = ft.reshape(output, [-1, out_shape[-1]])
    valid = None
    if ignore_class is not None:
        valid = ft.not_equal(target, ft.cast(ignore_class, ft.int64))
        target = ft.where(valid, target, ft.zeros_like(target))
    result = ft.nn.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)
    if valid is not None:
        result = ft.where(valid, result, ft.zeros_like(result))
    if reshaped and rank >= 3:
        result = ft.reshape(result, out_shape[:-1])
    return result


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """The CTC loss of each sample, TF-Keras's way: ``y_pred`` holds softmax probabilities
    ``(batch, time, classes)`` whose last class is the blank.

    Args:
        y_true: int labels ``(batch, max_label_length)``.
        y_pred: probabilities ``(batch, time, classes)``.
        input_length: ``(batch, 1)``: the steps of each sample that count.
        label_length: ``(batch, 1)``: the labels of each sample that count.

    Returns:
        A ``(batch, 1)`` tensor.
    """
    from ..losses.ctc import ctc_negative_log_likelihood

    y_pred = _tensor(y_pred)
    log_probs = ft.nn.log_softmax(ft.math.log(y_pred + epsilon()), axis=-1)
    labels = np.asarray(y_true.numpy() if hasattr(y_true, "numpy") else y_true)
    lengths = [
        np.asarray(v.numpy() if hasattr(v, "numpy") else v).reshape(-1)
        for v in (label_length, input_length)
    ]
    loss = ctc_negative_log_likelihood(
        labels, lengths[0], log_probs, lengths[1], blank=y_pred.shape[-1] - 1
    )
    return ft.expand_dims(loss, 1)


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1):
    """Greedy CTC decoding of softmax outputs (the last class is the blank): each step's most
    likely class, repeats merged, blanks removed.

    Args:
        y_pred: probabilities ``(batch, time, classes)``.
        input_length: ``(batch,)``: the steps of each sample that count.
        greedy: must be True (beam search is not implemented in ferrotape).
        beam_width: unused (beam search).
        top_paths: unused (beam search).

    Returns:
        ``([decoded], log_probabilities)``: ``decoded`` is ``(batch, time)`` int64, padded
        with -1; ``log_probabilities`` ``(batch, 1)`` is minus the sum of each counted step's
        largest log-probability.
    """
    del beam_width, top_paths
    if not greedy:
        raise NotImplementedError(
            "ctc_decode: ferrotape implements greedy decoding only (greedy=True)."
        )
    probs = _tensor(y_pred).numpy()
    lengths = np.asarray(input_length.numpy() if hasattr(input_length, "numpy") else input_length)
    lengths = lengths.reshape(-1)
    batch, steps, classes = probs.shape
    logs = np.log(probs + epsilon())
    best = logs.argmax(-1)
    decoded = np.full((batch, steps), -1, dtype=np.int64)
    scores = np.zeros((batch, 1), dtype=probs.dtype)
    for b in range(batch):
        length = int(lengths[b])
        path = best[b, :length]
        scores[b, 0] = -logs[b, np.arange(length), path].sum()
        kept = [c for i, c in enumerate(path) if c != classes - 1 and (i == 0 or c != path[i - 1])]
        decoded[b, : len(kept)] = kept
    return [ft.constant(decoded)], ft.constant(scores)


# ---------------------------------------------------------------- layers' arithmetic


def dropout(x, level, noise_shape=None, seed=None):
    """Zeroes each entry with probability ``level`` and scales the rest by
    ``1 / (1 - level)``."""
    return ft.nn.dropout(x, rate=level, noise_shape=noise_shape, seed=seed)


def bias_add(x, bias, data_format=None):
    """``x + bias``, the bias (1D, or of ``x``'s rank - 1) along the channels (last) axis."""
    _check_data_format(data_format, "bias_add")
    x, bias = _tensor(x), _tensor(bias)
    if len(bias.shape) not in (1, len(x.shape) - 1):
        raise ValueError(
            f"bias_add: unexpected bias dimensions {len(bias.shape)}. Expected it to be 1 or "
            f"{len(x.shape) - 1} dimensions"
        )
    if len(bias.shape) == 1:
        return ft.nn.bias_add(x, bias)
    return x + ft.reshape(bias, (1,) + tuple(bias.shape))


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta``."""
    del axis
    return ft.nn.batch_normalization(x, mean, var, beta, gamma, epsilon)


def in_top_k(predictions, targets, k):
    """Whether each row's ``targets`` class is among its ``k`` largest ``predictions``
    (ties at the boundary count as in, as in TF)."""
    predictions = _tensor(predictions)
    targets = ft.cast(_tensor(targets), ft.int32)
    picked = ft.reduce_sum(
        predictions * ft.one_hot(targets, predictions.shape[-1], dtype=predictions.dtype), -1
    )
    above = ft.reduce_sum(ft.cast(predictions > ft.expand_dims(picked, -1), ft.int32), axis=-1)
    return ft.less(above, k)


# ------------------------------------------------------------- convolution, pooling


def conv1d(x, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """1D convolution of ``x`` (batch, steps, channels) with ``kernel`` (width, in, out);
    ``padding="causal"`` pads the start only."""
    _check_data_format(data_format, "conv1d")
    x, kernel = _tensor(x), _tensor(kernel)
    if padding == "causal":
        x = temporal_padding(x, (dilation_rate * (kernel.shape[0] - 1), 0))
        padding = "valid"
    out = ft.nn.conv2d(
        ft.expand_dims(x, 1),
        ft.expand_dims(kernel, 0),
        strides=[1, 1, strides, 1],
        padding=_padding(padding, "conv1d"),
        dilations=[1, 1, dilation_rate, 1],
    )
    return ft.squeeze(out, 1)


def conv2d(x, kernel, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1)):
    """2D convolution of NHWC ``x`` with an HWIO ``kernel``."""
    _check_data_format(data_format, "conv2d")
    return ft.nn.conv2d(
        x,
        kernel,
        strides=[1, *strides, 1],
        padding=_padding(padding, "conv2d"),
        dilations=[1, *dilation_rate, 1],
    )


def conv2d_transpose(
    x,
    kernel,
    output_shape,
    strides=(1, 1),
    padding="valid",
    data_format=None,
    dilation_rate=(1, 1),
):
    """The transpose (gradient) of ``conv2d``, producing ``output_shape`` (NHWC; a None batch
    is read from ``x``)."""
    _check_data_format(data_format, "conv2d_transpose")
    if dilation_rate[0] != dilation_rate[1]:
        raise ValueError(
            "conv2d_transpose: expected the 2 dimensions of the `dilation_rate` argument to be "
            f"equal to each other. Received: dilation_rate={dilation_rate}"
        )
    x = _tensor(x)
    output_shape = tuple(output_shape)
    if output_shape[0] is None:
        output_shape = (x.shape[0],) + output_shape[1:]
    return ft.nn.conv2d_transpose(
        x,
        kernel,
        list(output_shape),
        strides=[1, *strides, 1],
        padding=_padding(padding, "conv2d_transpose"),
        dilations=[1, *dilation_rate, 1],
    )


def depthwise_conv2d(
    x,
    depthwise_kernel,
    strides=(1, 1),
    padding="valid",
    data_format=None,
    dilation_rate=(1, 1),
):
    """Each input channel convolved with its own ``channel_multiplier`` filters: ``x`` NHWC,
    ``depthwise_kernel`` of shape ``(kh, kw, channels, multiplier)``; output channel
    ``c * multiplier + m`` comes from input channel ``c``."""
    _check_data_format(data_format, "depthwise_conv2d")
    x, depthwise_kernel = _tensor(x), _tensor(depthwise_kernel)
    channels = x.shape[-1]
    if depthwise_kernel.shape[2] != channels:
        raise ValueError(
            f"depthwise_conv2d: the kernel's input channels ({depthwise_kernel.shape[2]}) must "
            f"match the input's ({channels})."
        )
    per_channel = [
        conv2d(xc, kc, strides, padding, data_format, dilation_rate)
        for xc, kc in zip(
            ft.split(x, channels, axis=3), ft.split(depthwise_kernel, channels, axis=2), strict=True
        )
    ]
    return ft.concat(per_channel, 3)


def separable_conv2d(
    x,
    depthwise_kernel,
    pointwise_kernel,
    strides=(1, 1),
    padding="valid",
    data_format=None,
    dilation_rate=(1, 1),
):
    """``depthwise_conv2d`` followed by a 1x1 convolution with ``pointwise_kernel``
    ``(1, 1, channels * multiplier, filters)``."""
    if len(strides) != 2:
        raise ValueError("separable_conv2d: `strides` must be a tuple of 2 integers.")
    depthwise = depthwise_conv2d(x, depthwise_kernel, strides, padding, data_format, dilation_rate)
    return ft.nn.conv2d(depthwise, pointwise_kernel, strides=[1, 1, 1, 1], padding="VALID")


def pool2d(x, pool_size, strides=(1, 1), padding="valid", data_format=None, pool_mode="max"):
    """2D max (``pool_mode="max"``) or average (``"avg"``) pooling of NHWC ``x``."""
    _check_data_format(data_format, "pool2d")
    if len(pool_size) != 2:
        raise ValueError("pool2d: `pool_size` must be a tuple of 2 integers.")
    if len(strides) != 2:
        raise ValueError("pool2d: `strides` must be a tuple of 2 integers.")
    pools = {"max": ft.nn.max_pool2d, "avg": ft.nn.avg_pool2d}
    if pool_mode not in pools:
        raise ValueError(f"pool2d: invalid pooling mode: {pool_mode}")
    ksize, strides = [1, *pool_size, 1], [1, *strides, 1]
    return pools[pool_mode](x, ksize, strides, _padding(padding, "pool2d"))


# ---------------------------------------------------- 3D, as 2D operations over depth


def _depth_windows(size, window, stride, dilation, padding):
    """For each output depth, the input depths its window covers (padding left out), with
    TF's "SAME" split of the padding (the smaller half before)."""
    span = (window - 1) * dilation + 1
    if padding == "same":
        out = -(-size // stride)
        before = max((out - 1) * stride + span - size, 0) // 2
    else:
        out = (size - span) // stride + 1
        before = 0
    windows = []
    for d in range(max(out, 0)):
        start = d * stride - before
        taps = [(k, start + k * dilation) for k in range(window)]
        windows.append([(k, z) for k, z in taps if 0 <= z < size])
    return windows


def conv3d(
    x, kernel, strides=(1, 1, 1), padding="valid", data_format=None, dilation_rate=(1, 1, 1)
):
    """3D convolution of NDHWC ``x`` with a DHWIO ``kernel``: each output depth is the sum of
    2D convolutions of the input depths under the kernel's depth taps."""
    _check_data_format(data_format, "conv3d")
    mode = _padding(padding, "conv3d")
    x, kernel = _tensor(x), _tensor(kernel)
    windows = _depth_windows(x.shape[1], kernel.shape[0], strides[0], dilation_rate[0], padding)
    planes = []
    for taps in windows:
        terms = [
            ft.nn.conv2d(
                ft.gather(x, z, axis=1),
                ft.gather(kernel, k, axis=0),
                strides=[1, strides[1], strides[2], 1],
                padding=mode,
                dilations=[1, dilation_rate[1], dilation_rate[2], 1],
            )
            for k, z in taps
        ]
        planes.append(ft.add_n(terms))
    return ft.stack(planes, axis=1)


def pool3d(x, pool_size, strides=(1, 1, 1), padding="valid", data_format=None, pool_mode="max"):
    """3D max or average pooling of NDHWC ``x`` (averages over the window's non-padded
    entries, as TF)."""
    _check_data_format(data_format, "pool3d")
    pools = {"max": ft.nn.max_pool2d, "avg": ft.nn.avg_pool2d}
    if pool_mode not in pools:
        raise ValueError(f"pool3d: invalid pooling mode: {pool_mode}")
    mode = _padding(padding, "pool3d")
    x = _tensor(x)
    windows = _depth_windows(x.shape[1], pool_size[0], strides[0], 1, padding)
    ksize, steps = [1, pool_size[1], pool_size[2], 1], [1, strides[1], strides[2], 1]
    planes = []
    for taps in windows:
        pooled = [pools[pool_mode](ft.gather(x, z, axis=1), ksize, steps, mode) for _, z in taps]
        stacked = ft.stack(pooled, axis=0)
        combine = ft.reduce_max if pool_mode == "max" else ft.reduce_mean
        planes.append(combine(stacked, axis=0))
    return ft.stack(planes, axis=1)


# ------------------------------------------------------------------ padding, resizing


def temporal_padding(x, padding=(1, 1)):
    """Zeros added before and after the steps axis of a 3D ``x``."""
    if len(padding) != 2:
        raise ValueError(
            f"temporal_padding: expected `padding` to be a tuple of 2 integers. Received: "
            f"padding={padding}"
        )
    return ft.pad(x, [[0, 0], list(padding), [0, 0]])


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """Zeros added around the rows and columns of a 4D NHWC ``x``."""
    if len(padding) != 2 or len(padding[0]) != 2 or len(padding[1]) != 2:
        raise ValueError(
            "spatial_2d_padding: expected `padding` to be a tuple of 2 tuples of 2 integers. "
            f"Received: padding={padding}"
        )
    _check_data_format(data_format, "spatial_2d_padding")
    return ft.pad(x, [[0, 0], list(padding[0]), list(padding[1]), [0, 0]])


def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    """Zeros added around the three spatial axes of a 5D NDHWC ``x``."""
    if len(padding) != 3 or any(len(p) != 2 for p in padding):
        raise ValueError(
            "spatial_3d_padding: expected `padding` to be a tuple of 3 tuples of 2 integers. "
            f"Received: padding={padding}"
        )
    _check_data_format(data_format, "spatial_3d_padding")
    return ft.pad(x, [[0, 0], *(list(p) for p in padding), [0, 0]])


def resize_images(x, height_factor, width_factor, data_format, interpolation="nearest"):
    """A 4D NHWC ``x`` scaled up by integer factors, by nearest-neighbour repetition (the
    only interpolation ferrotape has)."""
    _check_data_format(data_format, "resize_images")
    if interpolation != "nearest":
        raise ValueError(
            f"resize_images: ferrotape supports only interpolation='nearest'. Received: "
            f"{interpolation!r}"
        )
    return repeat_elements(repeat_elements(x, height_factor, 1), width_factor, 2)


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """A 5D NDHWC ``x`` scaled up by integer factors, each voxel repeated."""
    _check_data_format(data_format, "resize_volumes")
    x = repeat_elements(x, depth_factor, 1)
    return repeat_elements(repeat_elements(x, height_factor, 2), width_factor, 3)
