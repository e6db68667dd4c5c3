"""TensorFlow's raw convolution entry points, composed from ``ft.nn``'s convolutions: the
general ``tf.conv`` (any batch rank, groups, explicit padding), ``conv2d_backprop_filter_v2``
and ``conv2d_backprop_input_v2`` (``conv2d``'s two gradients given the tensors whose shapes
they take), ``tf.extract_volume_patches`` and ``tf.nn.with_space_to_batch``. Each is
differentiable through the ops it is made of.
"""

import operator

import numpy as np

from . import _core
from ._nn_array import batch_to_space, required_space_to_batch_paddings, space_to_batch
from ._nn_conv import _vjp, convolution
from .nn import conv2d


def _full_ints(op, name, value, rank, default):
    """``rank`` ints, one per dimension of the input (TensorFlow's raw-op convention)."""
    if value is None or (not np.isscalar(value) and len(value) == 0):
        return [default] * rank
    ints = [operator.index(v) for v in np.atleast_1d(value)]
    if len(ints) != rank or min(ints) < 1:
        raise ValueError(f"{op}: {name} must be {rank} positive ints, received {value!r}")
    return ints


def _explicit(op, x, padding, explicit_paddings):
    """``(x padded, padding)``: ``"EXPLICIT"`` becomes zero padding then ``"VALID"``."""
    if padding not in ("SAME", "VALID", "EXPLICIT"):
        raise ValueError(f"{op}: padding must be SAME, VALID or EXPLICIT, received {padding!r}")
    if padding != "EXPLICIT":
        return x, padding
    pads = np.asarray(explicit_paddings, dtype=np.int64).reshape(-1, 2)
    if pads.shape[0] != x.ndim or (pads < 0).any() or pads[0].any() or pads[-1].any():
        raise ValueError(
            f"{op}: explicit_paddings must be {2 * x.ndim} non-negative ints, zero for the batch "
            f"and channel dimensions; received {list(explicit_paddings)}"
        )
    return _core.pad(x, pads.tolist()), "VALID"


def conv(
    input,  # noqa: A002
    filter,  # noqa: A002
    strides,
    padding,
    explicit_paddings=(),
    data_format="CHANNELS_LAST",
    dilations=(),
    batch_dims=1,
    groups=1,
    name=None,
):
    """TensorFlow's general N-D convolution (cross-correlation): 1 to 3 spatial dimensions after
    ``batch_dims`` batch dimensions, channels last, in ``groups`` independent channel groups.

    Args:
        input: ``[batch..., spatial..., in_channels]``.
        filter: ``[spatial..., in_channels / groups, out_channels]``.
        strides: ``spatial + 2`` ints: 1 for the batch (all ``batch_dims`` as one), one per
            spatial dimension, 1 for the channels.
        padding: ``"SAME"``, ``"VALID"`` or ``"EXPLICIT"``.
        explicit_paddings: With ``"EXPLICIT"``, ``[before, after]`` for the batch, each spatial
            dimension and the channels (flattened; zero but for the spatial ones).
        data_format: ``"CHANNELS_LAST"``; channels first is not supported on the CPU.
        dilations: ``spatial + 2`` ints like ``strides``; empty means 1.
        batch_dims: How many leading dimensions are batch dimensions.
        groups: How many groups the channels split into (each group its own filters).
        name: Ignored (TensorFlow's op name).

    Returns:
        ``[batch..., out_spatial..., out_channels]``.

    Raises:
        ValueError: for mismatched ranks or channels, bad strides/dilations/paddings, or a
            channels-first format.

    Gradient: that of ``ft.nn.convolution`` on each group.

    >>> import ferrotape as ft
    >>> ft.conv(ft.ones([2, 1, 4, 1]), ft.ones([2, 1, 1]), [1, 1, 1], "VALID", batch_dims=2).shape
    TensorShape([2, 1, 3, 1])
    """
    del name
    op = "conv"
    if data_format != "CHANNELS_LAST":
        raise ValueError(f"{op}: only data_format='CHANNELS_LAST' is supported on the CPU")
    x, w = _core.convert_to_tensor(input), _core.convert_to_tensor(filter)
    spatial = w.ndim - 2
    if not 1 <= spatial <= 3 or x.ndim != batch_dims + spatial + 1 or batch_dims < 1:
        raise ValueError(
            f"{op}: input must have batch_dims={batch_dims} + {spatial} spatial + 1 channel "
            f"dimensions for a filter of shape {list(w.shape)}; received {list(x.shape)}"
        )
    if groups < 1 or x.shape[-1] != w.shape[-2] * groups or w.shape[-1] % groups:
        raise ValueError(
            f"{op}: in_channels ({x.shape[-1]}) must be groups ({groups}) * the filter's "
            f"in_channels ({w.shape[-2]}) and out_channels ({w.shape[-1]}) a multiple of groups"
        )
    # Strides, dilations and paddings count the batch dimensions as one: spatial + 2 entries.
    steps = _full_ints(op, "strides", strides, spatial + 2, 1)
    rates = _full_ints(op, "dilations", dilations, spatial + 2, 1)
    if max(steps[0], steps[-1], rates[0], rates[-1]) > 1:
        raise ValueError(f"{op}: strides and dilations must be 1 on batch and channel dimensions")
    outer = list(x.shape[:batch_dims])
    x = _core.reshape(x, [-1, *x.shape[batch_dims:]])
    x, padding = _explicit(op, x, padding, explicit_paddings)
    steps, rates = steps[1:-1], rates[1:-1]
    width_in, width_out = w.shape[-2], w.shape[-1] // groups
    outs = [
        convolution(
            x[..., g * width_in : (g + 1) * width_in],
            w[..., g * width_out : (g + 1) * width_out],
            steps,
            padding,
            dilations=rates,
        )
        for g in range(groups)
    ]
    y = outs[0] if groups == 1 else _core.concat(outs, axis=-1)
    return _core.reshape(y, outer + list(y.shape[1:]))


def _conv2d_explicit(x, w, strides, padding, explicit_paddings, dilations):
    x, padding = _explicit("conv2d", x, padding, explicit_paddings)
    return conv2d(x, w, strides, padding, dilations=dilations)


def conv2d_backprop_filter_v2(
    input,  # noqa: A002
    filter,  # noqa: A002
    out_backprop,
    strides,
    padding,
    use_cudnn_on_gpu=True,
    explicit_paddings=(),
    data_format="NHWC",
    dilations=(1, 1, 1, 1),
    name=None,
):
    """The gradient of ``conv2d`` with respect to its filter, ``filter`` giving only the shape.

    Args:
        input: The 4-D NHWC input.
        filter: A tensor of the filter's shape ``[height, width, in_channels, out_channels]``.
        out_backprop: The gradient of ``conv2d``'s output.
        strides: 1, 2 or 4 ints.
        padding: ``"SAME"``, ``"VALID"`` or ``"EXPLICIT"``.
        use_cudnn_on_gpu: Ignored.
        explicit_paddings: With ``"EXPLICIT"``, 8 ints: ``[before, after]`` per NHWC dimension.
        data_format: ``"NHWC"``.
        dilations: 1, 2 or 4 ints.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``filter``'s shape.

    >>> import ferrotape as ft
    >>> ft.conv2d_backprop_filter_v2(ft.ones([1, 3, 3, 1]), ft.zeros([2, 2, 1, 1]),
    ...                              ft.ones([1, 2, 2, 1]), 1, "VALID").numpy().ravel()
    array([4., 4., 4., 4.], dtype=float32)
    """
    del use_cudnn_on_gpu, name
    if data_format != "NHWC":
        raise ValueError("conv2d_backprop_filter_v2: only data_format='NHWC' is supported")
    x = _core.convert_to_tensor(input)
    zeros = _core.zeros_like(_core.convert_to_tensor(filter))
    return _vjp(
        lambda t: _conv2d_explicit(x, t, strides, padding, explicit_paddings, dilations),
        zeros,
        out_backprop,
    )


def conv2d_backprop_input_v2(
    input,  # noqa: A002
    filter,  # noqa: A002
    out_backprop,
    strides,
    padding,
    use_cudnn_on_gpu=True,
    explicit_paddings=(),
    data_format="NHWC",
    dilations=(1, 1, 1, 1),
    name=None,
):
    """The gradient of ``conv2d`` with respect to its input, ``input`` giving only the shape.

    Args:
        input: A tensor of the input's shape (NHWC).
        filter: The 4-D filter ``[height, width, in_channels, out_channels]``.
        out_backprop: The gradient of ``conv2d``'s output.
        strides: 1, 2 or 4 ints.
        padding: ``"SAME"``, ``"VALID"`` or ``"EXPLICIT"``.
        use_cudnn_on_gpu: Ignored.
        explicit_paddings: With ``"EXPLICIT"``, 8 ints: ``[before, after]`` per NHWC dimension.
        data_format: ``"NHWC"``.
        dilations: 1, 2 or 4 ints.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape.

    >>> import ferrotape as ft
    >>> dx = ft.conv2d_backprop_input_v2(ft.zeros([1, 3, 3, 1]), ft.ones([2, 2, 1, 1]),
    ...                                  ft.ones([1, 2, 2, 1]), 1, "VALID")
    >>> dx[0, :, :, 0].numpy()[1]
    array([2., 4., 2.], dtype=float32)
    """
    del use_cudnn_on_gpu, name
    if data_format != "NHWC":
        raise ValueError("conv2d_backprop_input_v2: only data_format='NHWC' is supported")
    w = _core.convert_to_tensor(filter)
    zeros = _core.zeros_like(_core.convert_to_tensor(input))
    return _vjp(
        lambda t: _conv2d_explicit(t, w, strides, padding, explicit_paddings, dilations),
        zeros,
        out_backprop,
    )


def extract_volume_patches(input, ksizes, strides, padding, name=None):  # noqa: A002
    """The 3-D patches of a volume: each ``[kd, kh, kw]`` block of ``input``, flattened with
    its channels (depth, then rows, columns, channels) into the last dimension.

    Args:
        input: A 5-D tensor ``[batch, depth, height, width, channels]``.
        ksizes: ``[1, kd, kh, kw, 1]``.
        strides: ``[1, sd, sh, sw, 1]``: the step between patch starts.
        padding: ``"VALID"`` or ``"SAME"`` (zeros outside the volume).
        name: Ignored (TensorFlow's op name).

    Returns:
        ``[batch, out_depth, out_height, out_width, kd * kh * kw * channels]``.

    Gradient: the upstream gradient summed back onto the entries each patch read.

    >>> import numpy as np, ferrotape as ft
    >>> x = ft.constant(np.arange(8.0).reshape(1, 2, 2, 2, 1))
    >>> ft.extract_volume_patches(x, [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID").numpy().ravel()
    array([0., 1., 2., 3., 4., 5., 6., 7.])
    """
    del name
    op = "extract_volume_patches"
    x = _core.convert_to_tensor(input)
    sizes = _full_ints(op, "ksizes", ksizes, 5, 1)
    steps = _full_ints(op, "strides", strides, 5, 1)
    if x.ndim != 5 or sizes[0] != 1 or sizes[4] != 1 or steps[0] != 1 or steps[4] != 1:
        raise ValueError(
            f"{op}: input must be 5-D and ksizes/strides 1 on the batch and channel dimensions; "
            f"received input {list(x.shape)}, ksizes {ksizes}, strides {strides}"
        )
    kd, kh, kw = sizes[1:4]
    depth = kd * kh * kw * x.shape[-1]
    # A convolution with the identity filter copies each patch into the channels.
    identity = _core.reshape(_core.eye(depth, dtype=x.dtype), [kd, kh, kw, x.shape[-1], depth])
    return convolution(x, identity, steps[1:4], padding)


def with_space_to_batch(
    input,  # noqa: A002
    dilation_rate,
    padding,
    op,
    filter_shape=None,
    spatial_dims=None,
    data_format=None,
):
    """Runs ``op`` on ``input`` turned into batches of every ``dilation_rate``-th position
    (``space_to_batch``), then turns the result back (``batch_to_space``): an ``op`` with unit
    dilation then acts as if dilated.

    Args:
        input: ``[batch, spatial..., channels]`` (channels first with an ``"NC..."`` format).
        dilation_rate: One int per spatial dimension.
        padding: ``"VALID"`` or ``"SAME"``; ``"SAME"`` needs ``filter_shape``.
        op: ``op(converted_input, num_spatial_dims, padding)``, called with ``"VALID"`` when
            a rate is above 1 (the padding is done here), else with ``padding``.
        filter_shape: The filter's spatial shape (for ``"SAME"``).
        spatial_dims: The spatial dimensions (ascending); default 1 to N, or 2 to N + 1 for a
            channels-first ``data_format``.
        data_format: ``None``, ``"N...C"`` or ``"NC..."``.

    Returns:
        ``op``'s result, mapped back.

    Raises:
        ValueError: for a rate below 1, ``"SAME"`` without ``filter_shape``, or a bad padding.

    >>> import ferrotape as ft
    >>> x, w = ft.ones([1, 5, 1]), ft.ones([2, 1, 1])
    >>> y = ft.nn.with_space_to_batch(x, [2], "VALID", lambda t, n, p: ft.nn.conv1d(t, w, 1, p))
    >>> y.numpy().ravel()  # a width-2 filter dilated by 2 spans 3 positions
    array([2., 2., 2.], dtype=float32)
    """
    x = _core.convert_to_tensor(input)
    rates = [operator.index(r) for r in np.atleast_1d(dilation_rate)]
    if min(rates, default=1) < 1:
        raise ValueError(f"with_space_to_batch: dilation_rate must be >= 1, received {rates}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(
            f"with_space_to_batch: padding must be SAME or VALID, received {padding!r}"
        )
    n = len(rates)
    if max(rates, default=1) == 1:
        return op(x, n, padding)
    first = 2 if data_format is not None and data_format.startswith("NC") else 1
    dims = list(range(first, first + n)) if spatial_dims is None else list(spatial_dims)
    if dims != sorted(dims) or len(dims) != n:
        raise ValueError(
            f"with_space_to_batch: spatial_dims must be {n} ascending ints, received {dims}"
        )
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("with_space_to_batch: filter_shape must be given for SAME padding")
        extra = (np.asarray(filter_shape, dtype=np.int64) - 1) * rates
        base = np.stack([extra // 2, extra - extra // 2], axis=1)
    else:
        base = np.zeros((n, 2), dtype=np.int64)
    # space_to_batch acts on the dimensions right after the batch: every dimension up to the
    # last spatial one is a block dimension, of rate 1 where it is not spatial (channels first).
    if dims[0] < 1:
        raise ValueError(f"with_space_to_batch: spatial_dims must be >= 1, received {dims}")
    block = [1] * dims[-1]
    base_full = np.zeros((dims[-1], 2), dtype=np.int64)
    for i, d in enumerate(dims):
        block[d - 1] = rates[i]
        base_full[d - 1] = base[i]
    paddings, crops = required_space_to_batch_paddings(
        x.shape[1 : dims[-1] + 1], block, base_paddings=base_full
    )
    converted = space_to_batch(x, block, paddings)
    return batch_to_space(op(converted, n, "VALID"), block, crops)
