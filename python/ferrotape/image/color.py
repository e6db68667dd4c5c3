"""Pixel-value changes: dtype conversion, brightness, contrast, gamma, and colour spaces
(grayscale, HSV, YIQ, YUV). All are elementwise or per-pixel ops on float images, so they are
differentiable where the formula is (``where`` picks the branch of the piecewise HSV maps)."""

import numpy as np

from .. import _core
from ..dtypes import as_dtype
from ..einsum import tensordot
from ._common import as_float, image_tensor, scalar


def _source_dtype(image):
    """The dtype ``image`` carries: a numpy integer array keeps its own (uint8 pixel data)."""
    if isinstance(image, np.ndarray | np.generic):
        return np.dtype(image.dtype)
    return np.dtype(_core.convert_to_tensor(image).dtype.as_numpy_dtype)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Converts ``image`` to ``dtype``, rescaling values between the conventions of the dtypes.

    Floats hold values in ``[0, 1]``; integers in ``[0, MAX]`` of their dtype. So int to float
    divides by the source's ``MAX``, float to int multiplies by ``MAX + 0.5`` and truncates,
    int to int rescales by the ratio of the ranges, float to float only casts.

    Args:
        image: An image tensor or a numpy array (a ``uint8`` image's range is 255).
        dtype: The target dtype: a floating dtype, or an integer one (``uint8``, ``uint16``,
            ``int8`` ... ``int64``).
        saturate: If true, clip to the target's range before casting to an integer dtype.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``image`` in ``dtype``.

    Gradient: the scale factor, for float to float and int to float; none into integers.

    >>> import ferrotape as ft
    >>> import numpy as np
    >>> ft.image.convert_image_dtype(np.array([0, 255], np.uint8), ft.float32).numpy()
    array([0., 1.], dtype=float32)
    """
    del name
    source = _source_dtype(image)
    target = as_dtype(dtype)
    target_np = np.dtype(target.as_numpy_dtype)
    if source.kind == "b" or target.is_bool:
        raise ValueError("convert_image_dtype: bool images are not supported")
    if source.kind == "f":
        x = _core.convert_to_tensor(image)
        if target.is_floating:
            return _core.cast(x, target)
        return _from_float(x, target_np, saturate, target)
    source_max = np.iinfo(source).max
    values = np.asarray(image.numpy() if hasattr(image, "numpy") else image).astype(source)
    if target.is_floating:
        x = _core.cast(_core.constant(values.astype(np.float64)), target)
        return x * scalar(1.0 / source_max, target)
    target_max = np.iinfo(target_np).max
    # Integer to integer: multiply or divide by the ratio of the ranges (powers of two).
    if target_max > source_max:
        out = values.astype(np.int64) * ((target_max + 1) // (source_max + 1))
    else:
        out = values.astype(np.int64) // ((source_max + 1) // (target_max + 1))
    return _core.constant(out.astype(target_np))


def _from_float(x, integer, saturate, dtype):
    """Float pixels scaled to the range of the numpy ``integer`` dtype, stored as ``dtype``."""
    info = np.iinfo(integer)
    x = x * scalar(float(info.max) + 0.5, x.dtype)
    if saturate:
        # The largest float of x's dtype not above MAX (float32(2**31 - 1) rounds up to 2**31).
        floats = np.dtype(x.dtype.as_numpy_dtype)
        top = np.array(info.max, floats)
        if int(top) > info.max:
            top = np.nextafter(top, floats.type(0))
        x = _core.clip_by_value(x, float(info.min), float(top))
    return _core.cast(x, dtype)


def _float_op(op, image, fn):
    """Applies ``fn`` to a float image; an integer image goes through ``[0, 1]`` floats and back."""
    source = _source_dtype(image)
    if source.kind == "f":
        return fn(_core.convert_to_tensor(image))
    # Back to the source's range; uint8 (and other narrow) data comes back as int32 values in
    # that range, as ferrotape has no uint8 tensors.
    out = fn(convert_image_dtype(image, "float32"))
    return _from_float(out, source, True, _core.convert_to_tensor(image).dtype)


def adjust_brightness(image, delta):
    """Adds ``delta`` to every value of ``image``.

    Args:
        image: An image tensor (float values in ``[0, 1]``, or an integer image).
        delta: The amount to add (a fraction of the range for integer images).

    Returns:
        The adjusted image, of ``image``'s shape and dtype.

    Gradient: 1 with respect to ``image``.

    >>> import ferrotape as ft
    >>> ft.image.adjust_brightness(ft.constant([[[0.25]]]), 0.5).numpy().item()
    0.75
    """
    return _float_op("adjust_brightness", image, lambda x: x + scalar(delta, x.dtype))


def adjust_contrast(images, contrast_factor):
    """Scales each channel's distance from its mean: ``(x - mean) * contrast_factor + mean``.

    The mean is taken per image and channel over height and width.

    Args:
        images: A tensor ``[..., height, width, channels]`` (at least 3-D).
        contrast_factor: The multiplier.

    Returns:
        The adjusted images, of ``images``' shape and dtype.

    Gradient: that of the formula (the mean's dependence on ``images`` included).

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.constant([0.0, 1.0]), [1, 2, 1])
    >>> ft.image.adjust_contrast(x, 2.0)[0, :, 0].numpy()
    array([-0.5,  1.5], dtype=float32)
    """

    def fn(x):
        image_tensor("adjust_contrast", x, ranks=(3, 4, 5))
        mean = _core.reduce_mean(x, [-3, -2], keepdims=True)
        return (x - mean) * scalar(contrast_factor, x.dtype) + mean

    return _float_op("adjust_contrast", images, fn)


def adjust_gamma(image, gamma=1, gain=1):
    """Gamma correction: ``gain * image ** gamma``.

    Args:
        image: An image tensor (float values in ``[0, 1]``, or an integer image).
        gamma: A non-negative exponent; below 1 brightens, above 1 darkens.
        gain: A multiplier.

    Returns:
        The adjusted image, of ``image``'s shape and dtype.

    Raises:
        ValueError: if ``gamma`` is negative.

    Gradient: ``gain * gamma * image ** (gamma - 1)``.

    >>> import ferrotape as ft
    >>> ft.image.adjust_gamma(ft.constant([[[0.25]]]), gamma=0.5).numpy().item()
    0.5
    """
    if as_float(gamma) < 0:
        raise ValueError(f"adjust_gamma: gamma must be non-negative, received gamma={gamma}")
    return _float_op(
        "adjust_gamma",
        image,
        lambda x: scalar(gain, x.dtype) * _core.pow(x, scalar(gamma, x.dtype)),
    )


_GRAY_WEIGHTS = [0.2989, 0.5870, 0.1140]


def _channels(op, images, count):
    x = _core.convert_to_tensor(images)
    if x.ndim < 1 or x.shape[-1] != count:
        raise ValueError(
            f"{op}: the last dimension of images must be {count}, received shape {list(x.shape)}"
        )
    return x


def rgb_to_grayscale(images, name=None):
    """The luma ``0.2989 R + 0.5870 G + 0.1140 B`` of RGB ``images``.

    Args:
        images: A tensor whose last dimension is 3 (RGB).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the same shape with a last dimension of 1.

    Gradient: the weights above.

    >>> import ferrotape as ft
    >>> ft.image.rgb_to_grayscale(ft.constant([[1.0, 1.0, 1.0]])).numpy().round(4)
    array([[0.9999]], dtype=float32)
    """
    del name
    _channels("rgb_to_grayscale", images, 3)

    def fn(x):
        weights = _core.cast(_core.constant(np.array(_GRAY_WEIGHTS)), x.dtype)
        return _core.reduce_sum(x * weights, -1, keepdims=True)

    return _float_op("rgb_to_grayscale", images, fn)


def grayscale_to_rgb(images, name=None):
    """Repeats the single channel of ``images`` three times (R = G = B).

    Args:
        images: A tensor whose last dimension is 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the same shape with a last dimension of 3.

    Gradient: the upstream gradient summed over the three channels.

    >>> import ferrotape as ft
    >>> ft.image.grayscale_to_rgb(ft.constant([[0.5]])).numpy()
    array([[0.5, 0.5, 0.5]], dtype=float32)
    """
    del name
    x = _channels("grayscale_to_rgb", images, 1)
    return _core.tile(x, [1] * (x.ndim - 1) + [3])


def _rgb(op, images):
    x = _channels(op, images, 3)
    if not x.dtype.is_floating:
        raise ValueError(f"{op}: images must be a floating tensor, received {x.dtype.name}")
    return x[..., 0], x[..., 1], x[..., 2]


def rgb_to_hsv(images, name=None):
    """Converts RGB ``images`` (values in ``[0, 1]``) to hue, saturation and value.

    ``value = max(R, G, B)``, ``saturation = (value - min) / value``, and the hue in ``[0, 1)``
    from the channel that is the maximum; grey pixels have hue and saturation 0.

    Args:
        images: A floating tensor whose last dimension is 3.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``images``' shape: hue, saturation, value in the last axis.

    Gradient: that of the branch each pixel takes.

    >>> import ferrotape as ft
    >>> ft.image.rgb_to_hsv(ft.constant([[0.0, 1.0, 0.0]])).numpy()
    array([[0.33333334, 1.        , 1.        ]], dtype=float32)
    """
    del name
    r, g, b = _rgb("rgb_to_hsv", images)
    value = _core.maximum(_core.maximum(r, g), b)
    spread = value - _core.minimum(_core.minimum(r, g), b)
    zero, one = _core.zeros_like(value), _core.ones_like(value)
    # Guarded denominators keep the unused branch of each `select` finite (and its gradient).
    saturation = _core.select(value > zero, spread / _core.select(value > zero, value, one), zero)
    norm = 1.0 / (6.0 * _core.select(spread > zero, spread, one))
    hue = _core.select(
        _core.equal(r, value),
        norm * (g - b),
        _core.select(_core.equal(g, value), norm * (b - r) + 2.0 / 6.0, norm * (r - g) + 4.0 / 6.0),
    )
    hue = _core.select(spread > zero, hue, zero)
    hue = _core.select(hue < zero, hue + 1.0, hue)
    return _core.stack([hue, saturation, value], axis=-1)


def hsv_to_rgb(images, name=None):
    """Converts hue, saturation, value ``images`` (each in ``[0, 1]``) back to RGB.

    Args:
        images: A floating tensor whose last dimension is 3 (hue, saturation, value).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``images``' shape: red, green, blue in the last axis.

    Gradient: that of ``v * (1 - s + s * clip(tent(6 h), 0, 1))`` per channel.

    >>> import ferrotape as ft
    >>> ft.image.hsv_to_rgb(ft.constant([[1.0 / 3.0, 1.0, 1.0]])).numpy().round(4)
    array([[0., 1., 0.]], dtype=float32)
    """
    del name
    h, s, v = _rgb("hsv_to_rgb", images)
    dh = h * 6.0
    # TensorFlow's kernel: each channel's share of the chroma is a clipped tent in 6 * hue.
    shares = [
        _core.abs(dh - 3.0) - 1.0,
        2.0 - _core.abs(dh - 2.0),
        2.0 - _core.abs(dh - 4.0),
    ]
    one_minus_s = 1.0 - s
    return _core.stack(
        [(one_minus_s + s * _core.clip_by_value(t, 0.0, 1.0)) * v for t in shares], axis=-1
    )


def adjust_hue(image, delta, name=None):
    """Rotates the hue of RGB ``image`` by ``delta`` (a fraction of the hue circle).

    Args:
        image: A floating RGB tensor (last dimension 3), values in ``[0, 1]``.
        delta: The hue shift, in ``[-1, 1]``.
        name: Ignored (TensorFlow's op name).

    Returns:
        The adjusted image, of ``image``'s shape and dtype.

    Gradient: through the HSV round trip.

    >>> import ferrotape as ft
    >>> ft.image.adjust_hue(ft.constant([[1.0, 0.0, 0.0]]), 1.0 / 3.0).numpy().round(4)
    array([[0., 1., 0.]], dtype=float32)
    """
    del name
    hsv = rgb_to_hsv(image)
    hue = _core.floormod(hsv[..., 0] + scalar(delta, hsv.dtype), 1.0)
    return hsv_to_rgb(_core.stack([hue, hsv[..., 1], hsv[..., 2]], axis=-1))


def adjust_saturation(image, saturation_factor, name=None):
    """Multiplies the saturation of RGB ``image`` by ``saturation_factor`` (clipped to
    ``[0, 1]``).

    Args:
        image: A floating RGB tensor (last dimension 3), values in ``[0, 1]``.
        saturation_factor: The multiplier, non-negative.
        name: Ignored (TensorFlow's op name).

    Returns:
        The adjusted image, of ``image``'s shape and dtype.

    Gradient: through the HSV round trip (zero where the saturation is clipped).

    >>> import ferrotape as ft
    >>> ft.image.adjust_saturation(ft.constant([[1.0, 0.5, 0.5]]), 0.0).numpy()
    array([[1., 1., 1.]], dtype=float32)
    """
    del name
    hsv = rgb_to_hsv(image)
    saturation = _core.clip_by_value(hsv[..., 1] * scalar(saturation_factor, hsv.dtype), 0, 1)
    return hsv_to_rgb(_core.stack([hsv[..., 0], saturation, hsv[..., 2]], axis=-1))


def _matrix_op(op, images, matrix):
    x = _channels(op, images, 3)
    return tensordot(x, _core.cast(_core.constant(np.array(matrix)), x.dtype), [[x.ndim - 1], [0]])


# TensorFlow's matrices (the inverses rounded as TensorFlow rounds them).
_RGB_TO_YIQ = [
    [0.299, 0.59590059, 0.2115],
    [0.587, -0.27455667, -0.52273617],
    [0.114, -0.32134392, 0.31119955],
]
_YIQ_TO_RGB = [
    [1, 1, 1],
    [0.95598634, -0.27201283, -1.10674021],
    [0.6208248, -0.64720424, 1.70423049],
]
_RGB_TO_YUV = [
    [0.299, -0.14714119, 0.61497538],
    [0.587, -0.28886916, -0.51496512],
    [0.114, 0.43601035, -0.10001026],
]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def rgb_to_yiq(images):
    """Converts RGB ``images`` to YIQ (luma and two chroma channels) with a 3x3 matrix.

    Args:
        images: A floating tensor whose last dimension is 3.

    Returns:
        A tensor of ``images``' shape.

    Gradient: the matrix, transposed.

    >>> import ferrotape as ft
    >>> ft.image.rgb_to_yiq(ft.constant([[1.0, 0.0, 0.0]])).numpy().round(4)
    array([[0.299 , 0.5959, 0.2115]], dtype=float32)
    """
    return _matrix_op("rgb_to_yiq", images, _RGB_TO_YIQ)


def yiq_to_rgb(images):
    """Converts YIQ ``images`` back to RGB (the inverse of ``rgb_to_yiq``).

    Args:
        images: A floating tensor whose last dimension is 3.

    Returns:
        A tensor of ``images``' shape.

    Gradient: the matrix, transposed.

    >>> import ferrotape as ft
    >>> ft.image.yiq_to_rgb(ft.constant([[1.0, 0.0, 0.0]])).numpy().round(4)
    array([[1., 1., 1.]], dtype=float32)
    """
    return _matrix_op("yiq_to_rgb", images, _YIQ_TO_RGB)


def rgb_to_yuv(images):
    """Converts RGB ``images`` to YUV (luma and two chroma channels) with a 3x3 matrix.

    Args:
        images: A floating tensor whose last dimension is 3.

    Returns:
        A tensor of ``images``' shape.

    Gradient: the matrix, transposed.

    >>> import ferrotape as ft
    >>> ft.image.rgb_to_yuv(ft.constant([[1.0, 1.0, 1.0]])).numpy().round(4)
    array([[1., 0., 0.]], dtype=float32)
    """
    return _matrix_op("rgb_to_yuv", images, _RGB_TO_YUV)


def yuv_to_rgb(images):
    """Converts YUV ``images`` back to RGB (the inverse of ``rgb_to_yuv``).

    Args:
        images: A floating tensor whose last dimension is 3.

    Returns:
        A tensor of ``images``' shape.

    Gradient: the matrix, transposed.

    >>> import ferrotape as ft
    >>> ft.image.yuv_to_rgb(ft.constant([[1.0, 0.0, 0.0]])).numpy().round(4)
    array([[1., 1., 1.]], dtype=float32)
    """
    return _matrix_op("yuv_to_rgb", images, _YUV_TO_RGB)
