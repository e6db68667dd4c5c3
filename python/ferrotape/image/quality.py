"""Whole-image statistics and filters: standardization, total variation, finite-difference
gradients, Sobel edges, PSNR and SSIM, composed of reductions and depthwise convolutions."""

import math

import numpy as np

from .. import _core
from ._common import image_tensor, scalar
from .color import _source_dtype, convert_image_dtype


def _float_image(op, image, ranks=(3, 4)):
    """``image`` checked for rank, with integer pixel data converted to ``[0, 1]`` float32."""
    image_tensor(op, image, ranks)
    x = _core.convert_to_tensor(image)
    return x if x.dtype.is_floating else convert_image_dtype(image, "float32")


def per_image_standardization(image):
    """Scales each image to mean 0 and variance 1: ``(x - mean) / max(stddev, 1 / sqrt(N))``.

    ``N`` is the number of values per image (height * width * channels); the lower bound keeps
    uniform images finite.

    Args:
        image: A 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width, channels]``
            tensor; integer images become float32.

    Returns:
        A float tensor of ``image``'s shape.

    Gradient: that of the formula (mean and standard deviation included).

    >>> import ferrotape as ft
    >>> ft.image.per_image_standardization(ft.constant([[[1.0], [3.0]]]))[0, :, 0].numpy()
    array([-1.,  1.], dtype=float32)
    """
    x = _core.convert_to_tensor(image)
    image_tensor("per_image_standardization", x)
    if not x.dtype.is_floating:
        x = _core.cast(x, "float32")
    count = x.shape[-1] * x.shape[-2] * x.shape[-3]
    mean = _core.reduce_mean(x, [-3, -2, -1], keepdims=True)
    stddev = _core.sqrt(_core.reduce_mean(_core.squared_difference(x, mean), [-3, -2, -1], True))
    floor = _core.cast(1.0 / math.sqrt(count), x.dtype)
    return (x - mean) / _core.maximum(stddev, floor)


def total_variation(images, name=None):
    """The sum of absolute differences between neighbouring pixels, down and across.

    Args:
        images: A 3-D ``[height, width, channels]`` or 4-D ``[batch, height, width, channels]``
            float tensor.
        name: Ignored (TensorFlow's op name).

    Returns:
        A scalar for a 3-D image, a ``[batch]`` tensor for a 4-D one.

    Gradient: the signs of the differences, accumulated onto each pixel.

    >>> import ferrotape as ft
    >>> ft.image.total_variation(ft.constant([[[0.0], [1.0]], [[3.0], [1.0]]])).numpy()
    np.float32(6.0)
    """
    del name
    x = image_tensor("total_variation", images)
    down = _core.abs(x[..., 1:, :, :] - x[..., :-1, :, :])
    across = _core.abs(x[..., :, 1:, :] - x[..., :, :-1, :])
    return _core.reduce_sum(down, [-3, -2, -1]) + _core.reduce_sum(across, [-3, -2, -1])


def image_gradients(image):
    """Forward differences ``(dy, dx)`` of a batch of images, zero in the last row / column.

    ``dy[b, i, j, c] = image[b, i + 1, j, c] - image[b, i, j, c]``, and likewise ``dx`` along
    the width.

    Args:
        image: A 4-D tensor ``[batch, height, width, channels]``.

    Returns:
        A pair ``(dy, dx)`` of tensors of ``image``'s shape.

    Gradient: that of the differences.

    >>> import ferrotape as ft
    >>> dy, dx = ft.image.image_gradients(ft.reshape(ft.range(4.0), [1, 2, 2, 1]))
    >>> dy[0, :, :, 0].numpy(), dx[0, :, :, 0].numpy()
    (array([[2., 2.],
           [0., 0.]], dtype=float32), array([[1., 0.],
           [1., 0.]], dtype=float32))
    """
    x = image_tensor("image_gradients", image, ranks=(4,))
    dy = _core.pad(x[:, 1:] - x[:, :-1], [[0, 0], [0, 1], [0, 0], [0, 0]])
    dx = _core.pad(x[:, :, 1:] - x[:, :, :-1], [[0, 0], [0, 0], [0, 1], [0, 0]])
    return dy, dx


def _filter_each_channel(x, kernel, padding="VALID"):
    """Correlates every channel of the 4-D ``x`` with each 2-D kernel in ``kernel`` ``[k, h, w]``;
    the result has ``channels * k`` channels, the kernels of one channel adjacent."""
    from .. import nn

    kernel = np.asarray(kernel, dtype=np.float64)
    depthwise = np.tile(np.transpose(kernel, (1, 2, 0))[:, :, None, :], (1, 1, x.shape[-1], 1))
    return nn.depthwise_conv2d(x, _core.cast(_core.constant(depthwise), x.dtype), 1, padding)


def sobel_edges(image):
    """The Sobel filter responses ``[dy, dx]`` of each channel (edges reflected at the border).

    Args:
        image: A 4-D float tensor ``[batch, height, width, channels]``.

    Returns:
        A tensor ``[batch, height, width, channels, 2]``: the vertical then the horizontal
        response.

    Gradient: the upstream gradient correlated back with the Sobel kernels.

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.range(9.0), [1, 3, 3, 1])
    >>> ft.image.sobel_edges(x)[0, 1, 1, 0].numpy()
    array([24.,  8.], dtype=float32)
    """
    x = image_tensor("sobel_edges", image, ranks=(4,))
    dy = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]])
    padded = _core.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    out = _filter_each_channel(padded, [dy, dy.T])
    return _core.reshape(out, [*x.shape, 2])


def _pair(op, a, b, max_val):
    """Both images as floats of one dtype (integers become ``[0, 1]`` float32) and ``max_val``
    rescaled to match."""
    x, y = _float_image(op, a, (3, 4, 5)), _float_image(op, b, (3, 4, 5))
    if list(x.shape[-3:]) != list(y.shape[-3:]) or x.dtype != y.dtype:
        raise ValueError(
            f"{op}: the images must have the same height, width, channels and dtype, received "
            f"{list(x.shape)} {x.dtype.name} and {list(y.shape)} {y.dtype.name}"
        )
    source = _source_dtype(a)
    scale = 1.0 if source.kind == "f" else float(np.iinfo(source).max)
    return x, y, _core.convert_to_tensor(scalar(max_val, x.dtype), dtype=x.dtype) / scale


def psnr(a, b, max_val, name=None):
    """The peak signal-to-noise ratio ``20 log10(max_val) - 10 log10(mse)`` of each image pair.

    Args:
        a: Images ``[..., height, width, channels]``.
        b: Images of ``a``'s shape.
        max_val: The dynamic range (1 for floats in ``[0, 1]``, 255 for 8-bit data).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of the leading (batch) shape, in decibels; identical images give ``inf``.

    Gradient: ``-10 / ln(10) * d(mse) / mse``.

    >>> import ferrotape as ft
    >>> ft.image.psnr(ft.zeros([2, 2, 1]), ft.fill([2, 2, 1], 0.1), 1.0).numpy().round(3)
    np.float32(20.0)
    """
    del name
    x, y, peak = _pair("psnr", a, b, max_val)
    mse = _core.reduce_mean(_core.squared_difference(x, y), [-3, -2, -1])
    ln10 = math.log(10.0)
    return 20.0 / ln10 * _core.log(peak) - 10.0 / ln10 * _core.log(mse)


def _gaussian(size, sigma):
    coords = np.arange(size, dtype=np.float64) - (size - 1) / 2.0
    g = np.exp(-0.5 * coords**2 / sigma**2)
    g = np.outer(g, g)
    return g / g.sum()


def ssim(
    img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False
):
    """The structural similarity (SSIM) of each image pair, averaged over pixels and channels.

    Local means, variances and covariance come from a ``filter_size`` Gaussian window
    (``filter_sigma``) over the valid region; ``ssim = l * cs`` with
    ``l = (2 mu_x mu_y + c1) / (mu_x^2 + mu_y^2 + c1)`` and
    ``cs = (2 cov_xy + c2) / (var_x + var_y + c2)``, ``c1 = (k1 max_val)^2``,
    ``c2 = (k2 max_val)^2`` (Wang et al., 2004).

    Args:
        img1: Images ``[..., height, width, channels]``, height and width at least
            ``filter_size``.
        img2: Images of ``img1``'s shape.
        max_val: The dynamic range (1 for floats in ``[0, 1]``).
        filter_size: The Gaussian window's size.
        filter_sigma: The Gaussian window's width.
        k1: The luminance constant.
        k2: The contrast-structure constant.
        return_index_map: If true, return the local SSIM map (averaged over channels) instead
            of its mean.

    Returns:
        A tensor of the leading (batch) shape, 1 for identical images; with
        ``return_index_map``, the map ``[..., out_height, out_width]``.

    Raises:
        ValueError: for images smaller than the filter.

    Gradient: that of the formula through the Gaussian filtering.

    >>> import ferrotape as ft
    >>> x = ft.random.stateless_uniform([16, 16, 1], seed=[1, 2])
    >>> ft.image.ssim(x, x, 1.0).numpy().round(4)
    np.float32(1.0)
    """
    x, y, peak = _pair("ssim", img1, img2, max_val)
    ssim_map, _ = _ssim_maps("ssim", x, y, peak, filter_size, filter_sigma, k1, k2)
    if return_index_map:
        return _core.reduce_mean(ssim_map, -1)
    return _core.reduce_mean(ssim_map, [-3, -2, -1])


def _ssim_maps(op, x, y, peak, filter_size, filter_sigma, k1, k2):
    """The local SSIM and contrast-structure maps ``[..., out_h, out_w, channels]``."""
    if min(x.shape[-3], x.shape[-2]) < filter_size:
        raise ValueError(
            f"{op}: height and width must be at least filter_size={filter_size} at every "
            f"scale, received shape {list(x.shape)}"
        )
    lead = list(x.shape[:-3])
    kernel = [_gaussian(filter_size, filter_sigma)]

    def local_mean(t):
        flat = _core.reshape(t, [-1, *t.shape[-3:]])
        out = _filter_each_channel(flat, kernel)
        return _core.reshape(out, [*lead, *out.shape[1:]])

    c1, c2 = (k1 * peak) ** 2, (k2 * peak) ** 2
    mean_x, mean_y = local_mean(x), local_mean(y)
    num0 = mean_x * mean_y * 2.0
    den0 = _core.square(mean_x) + _core.square(mean_y)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = local_mean(x * y) * 2.0
    den1 = local_mean(_core.square(x) + _core.square(y))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return luminance * cs, cs


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _halve(t):
    """Averages 2x2 blocks, padding an odd height or width by mirroring its last row/column."""
    flat = _core.reshape(t, [-1, *t.shape[-3:]])
    pads = [[0, 0], [0, flat.shape[1] % 2], [0, flat.shape[2] % 2], [0, 0]]
    if pads[1][1] or pads[2][1]:
        flat = _core.pad(flat, pads, mode="SYMMETRIC")
    from .. import nn

    out = nn.avg_pool2d(flat, 2, 2, "VALID")
    return _core.reshape(out, [*t.shape[:-3], *out.shape[1:]])


def ssim_multiscale(
    img1,
    img2,
    max_val,
    power_factors=_MSSSIM_WEIGHTS,
    filter_size=11,
    filter_sigma=1.5,
    k1=0.01,
    k2=0.03,
):
    """Multi-scale SSIM: ``prod_i cs_i ** power_factors[i]``, with the last scale's full SSIM
    in place of its ``cs`` (Wang, Simoncelli and Bovik, 2003).

    Scale ``i + 1`` averages 2x2 blocks of scale ``i``; each factor is the mean over pixels of
    the (ReLU-clipped) per-channel map, and the result is averaged over channels.

    Args:
        img1: Images ``[..., height, width, channels]``, large enough for ``filter_size`` at the
            coarsest scale (176 pixels for the defaults).
        img2: Images of ``img1``'s shape.
        max_val: The dynamic range.
        power_factors: One exponent per scale (the defaults are Wang et al.'s five).
        filter_size: The Gaussian window's size.
        filter_sigma: The Gaussian window's width.
        k1: The luminance constant.
        k2: The contrast-structure constant.

    Returns:
        A tensor of the leading (batch) shape, 1 for identical images.

    Raises:
        ValueError: for images too small for the filter at some scale.

    Gradient: that of the formula through the filtering and pooling.

    >>> import ferrotape as ft
    >>> x = ft.random.stateless_uniform([12, 12, 1], seed=[1, 2])
    >>> ft.image.ssim_multiscale(x, x, 1.0, (0.5, 0.5), filter_size=5).numpy().round(4)
    np.float32(1.0)
    """
    op = "ssim_multiscale"
    x, y, peak = _pair(op, img1, img2, max_val)
    factors = [float(p) for p in power_factors]
    terms = []
    for k in range(len(factors)):
        if k:
            x, y = _halve(x), _halve(y)
        ssim_map, cs_map = _ssim_maps(op, x, y, peak, filter_size, filter_sigma, k1, k2)
        last = k == len(factors) - 1
        terms.append(_core.nn.relu(_core.reduce_mean(ssim_map if last else cs_map, [-3, -2])))
    stacked = _core.stack(terms, -1)
    weights = _core.cast(_core.constant(np.array(factors)), stacked.dtype)
    return _core.reduce_mean(_core.reduce_prod(_core.pow(stacked, weights), -1), -1)
