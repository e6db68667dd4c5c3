"""ft.image against numpy (and the standard library's colorsys) references, without TensorFlow:
values, shapes, errors, the random ops' seed behaviour, and float64 finite-difference gradients
of the differentiable ops."""

import colorsys

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from test_keras_layers import fd_grad

import ferrotape as ft
from ferrotape.image.resizing import _resize

RNG = np.random.default_rng(7)


def rand(*shape, low=0.0, high=1.0):
    return RNG.uniform(low, high, shape)


def check_grad(fn, x, rtol=1e-5, atol=1e-7):
    """d/dx sum(fn(x) * w) from the tape against central differences, in float64."""
    w = RNG.standard_normal(np.shape(fn(ft.constant(x)).numpy()))

    def loss(xv):
        return float(ft.reduce_sum(fn(ft.constant(xv)) * w))

    xt = ft.constant(x)
    with ft.GradientTape() as tape:
        tape.watch(xt)
        y = ft.reduce_sum(fn(xt) * w)
    np.testing.assert_allclose(tape.gradient(y, xt).numpy(), fd_grad(loss, x), rtol, atol)


# --- geometry -------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5, 6, 3), (2, 5, 6, 3)])
def test_flips_transpose_and_rot90_match_numpy(shape):
    x = rand(*shape)
    h, w = len(shape) - 3, len(shape) - 2
    np.testing.assert_array_equal(ft.image.flip_left_right(x).numpy(), np.flip(x, w))
    np.testing.assert_array_equal(ft.image.flip_up_down(x).numpy(), np.flip(x, h))
    np.testing.assert_array_equal(ft.image.transpose(x).numpy(), np.swapaxes(x, h, w))
    for k in range(-2, 6):
        want = np.rot90(x, k, axes=(h, w))
        np.testing.assert_array_equal(ft.image.rot90(x, k).numpy(), want)


def test_crops_and_pads_match_numpy_slicing():
    x = rand(2, 7, 9, 3)
    np.testing.assert_array_equal(
        ft.image.crop_to_bounding_box(x, 1, 2, 3, 4).numpy(), x[:, 1:4, 2:6]
    )
    padded = ft.image.pad_to_bounding_box(x[0], 1, 2, 10, 14).numpy()
    want = np.zeros((10, 14, 3))
    want[1:8, 2:11] = x[0]
    np.testing.assert_array_equal(padded, want)
    # central_crop: start int((n - n * f) / 2) on each axis, symmetric.
    np.testing.assert_array_equal(ft.image.central_crop(x, 0.5).numpy(), x[:, 1:6, 2:7])
    np.testing.assert_array_equal(ft.image.central_crop(x, 1.0).numpy(), x)


def test_resize_with_crop_or_pad_centres_and_puts_the_odd_pixel_last():
    x = rand(5, 4, 1)
    out = ft.image.resize_with_crop_or_pad(x, 2, 7).numpy()
    # height 5 -> 2: crop from row (5 - 2) // 2 = 1; width 4 -> 7: pad 3 // 2 = 1 left, 2 right
    want = np.zeros((2, 7, 1))
    want[:, 1:5] = x[1:3]
    np.testing.assert_array_equal(out, want)
    assert ft.image.resize_with_crop_or_pad(rand(2, 5, 4, 1), 6, 3).shape == [2, 6, 3, 1]


def test_extract_patches_match_sliding_windows():
    x = rand(2, 6, 7, 2)
    for (kh, kw), (sh, sw), (rh, rw) in [((2, 3), (1, 2), (1, 1)), ((2, 2), (2, 2), (2, 1))]:
        got = ft.image.extract_patches(
            x, [1, kh, kw, 1], [1, sh, sw, 1], [1, rh, rw, 1], "VALID"
        ).numpy()
        span_h, span_w = (kh - 1) * rh + 1, (kw - 1) * rw + 1
        windows = sliding_window_view(x, (span_h, span_w), axis=(1, 2))[..., ::rh, ::rw]
        # windows: [n, oh, ow, c, kh, kw] -> patches flattened as [kh, kw, c]
        want = np.transpose(windows, (0, 1, 2, 4, 5, 3))[:, ::sh, ::sw]
        np.testing.assert_allclose(got, want.reshape(*want.shape[:3], -1), atol=1e-12)
    same = ft.image.extract_patches(x, [1, 3, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
    assert same.shape == [2, 3, 4, 18]


def test_geometry_rejects_bad_arguments_by_name():
    x = rand(4, 4, 1)
    with pytest.raises(ValueError, match="image must be 3-D"):
        ft.image.flip_left_right(rand(4, 4))
    with pytest.raises(ValueError, match="central_fraction"):
        ft.image.central_crop(x, 0.0)
    with pytest.raises(ValueError, match="leaves the image"):
        ft.image.crop_to_bounding_box(x, 2, 0, 3, 1)
    with pytest.raises(ValueError, match="offset_height"):
        ft.image.crop_to_bounding_box(x, -1, 0, 1, 1)
    with pytest.raises(ValueError, match="does not fit"):
        ft.image.pad_to_bounding_box(x, 1, 0, 4, 4)
    with pytest.raises(ValueError, match="target_width"):
        ft.image.resize_with_crop_or_pad(x, 2, 0)


# --- resize ---------------------------------------------------------------------------------


def bilinear_ref(x, out_h, out_w):
    """Half-pixel bilinear sampling, pixel by pixel."""
    n, in_h, in_w, c = x.shape
    out = np.zeros((n, out_h, out_w, c))

    def taps(i, size_in, size_out):
        pos = (i + 0.5) * size_in / size_out - 0.5
        lo = np.floor(pos)
        frac = pos - lo
        return int(np.clip(lo, 0, size_in - 1)), int(np.clip(lo + 1, 0, size_in - 1)), frac

    for i in range(out_h):
        y0, y1, fy = taps(i, in_h, out_h)
        for j in range(out_w):
            x0, x1, fx = taps(j, in_w, out_w)
            top = x[:, y0, x0] * (1 - fx) + x[:, y0, x1] * fx
            bottom = x[:, y1, x0] * (1 - fx) + x[:, y1, x1] * fx
            out[:, i, j] = top * (1 - fy) + bottom * fy
    return out


@pytest.mark.parametrize("size", [(4, 4), (10, 5), (8, 12), (7, 9), (3, 20)])
def test_bilinear_and_nearest_resize_match_pixel_references(size):
    x = rand(2, 7, 9, 3)
    got = ft.image.resize(x, size).numpy()
    assert got.dtype == np.float32  # TensorFlow's resize returns float32 for every input dtype
    np.testing.assert_allclose(got, bilinear_ref(x, *size), atol=2e-6)
    rows = np.minimum(np.floor((np.arange(size[0]) + 0.5) * 7 / size[0]), 6).astype(int)
    cols = np.minimum(np.floor((np.arange(size[1]) + 0.5) * 9 / size[1]), 8).astype(int)
    nearest = ft.image.resize(x, size, method="nearest")
    assert nearest.dtype == ft.float64
    np.testing.assert_array_equal(nearest.numpy(), x[:, rows][:, :, cols])


def test_bicubic_reproduces_constants_and_interior_ramps():
    flat = np.full((1, 5, 6, 1), 0.3)
    np.testing.assert_allclose(ft.image.resize(flat, [9, 13], "bicubic").numpy(), 0.3, atol=1e-6)
    ramp = np.tile(np.arange(8.0)[None, :, None], (4, 1, 1))
    out = ft.image.resize(ramp, [4, 16], method=ft.image.ResizeMethod.BICUBIC).numpy()[0, :, 0]
    # Keys' cubic reproduces linear data away from the clamped edges; weights are read from a
    # table of 1/1024 steps, so positions are exact to about 1e-3.
    pos = (np.arange(16) + 0.5) * 0.5 - 0.5
    np.testing.assert_allclose(out[3:13], pos[3:13], atol=2e-3)


def test_resize_preserve_aspect_ratio_and_resize_with_pad():
    x = rand(6, 8, 1)
    assert ft.image.resize(x, [3, 10], preserve_aspect_ratio=True).shape == [3, 4, 1]
    padded = ft.image.resize_with_pad(np.ones((2, 4, 1)), 4, 4).numpy()[:, :, 0]
    np.testing.assert_array_equal(padded, [[0] * 4, [1] * 4, [1] * 4, [0] * 4])


def test_resize_rejects_bad_sizes_and_methods():
    with pytest.raises(ValueError, match="size must be 2 positive ints"):
        ft.image.resize(rand(4, 4, 1), [0, 2])
    with pytest.raises(ValueError, match="method must be one of"):
        ft.image.resize(rand(4, 4, 1), [2, 2], method="area")
    with pytest.raises(ValueError, match="antialias"):
        ft.image.resize(rand(4, 4, 1), [2, 2], antialias=True)


# --- colour ---------------------------------------------------------------------------------


def test_convert_image_dtype_rescales_between_conventions():
    u8 = np.array([0, 51, 128, 255], np.uint8)
    np.testing.assert_allclose(
        ft.image.convert_image_dtype(u8, ft.float32).numpy(), u8 / 255.0, rtol=1e-6
    )
    f = np.array([0.0, 0.5, 1.0])
    want = np.trunc(f * (2**31 - 1 + 0.5)).clip(max=2**31 - 1)
    got = ft.image.convert_image_dtype(f, ft.int32, saturate=True).numpy()
    np.testing.assert_array_equal(got[:2], want[:2])
    assert got[2] == 2**31 - 1
    top = ft.image.convert_image_dtype(np.float32([1.0]), ft.int32, saturate=True).numpy()
    assert top[0] == 2**31 - 128  # the largest float32 below 2**31
    np.testing.assert_array_equal(
        ft.image.convert_image_dtype(u8, ft.int32).numpy(), u8.astype(np.int64) << 23
    )
    assert ft.image.convert_image_dtype(f, ft.float32).dtype == ft.float32


def test_adjustments_match_their_formulas():
    x = rand(2, 3, 4, 3)
    np.testing.assert_allclose(ft.image.adjust_brightness(x, 0.2).numpy(), x + 0.2)
    mean = x.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(
        ft.image.adjust_contrast(x, 1.7).numpy(), (x - mean) * 1.7 + mean, rtol=1e-12
    )
    np.testing.assert_allclose(ft.image.adjust_gamma(x, 0.7, 1.3).numpy(), 1.3 * x**0.7)
    gray = ft.image.rgb_to_grayscale(x).numpy()
    np.testing.assert_allclose(gray, x @ np.array([[0.2989], [0.5870], [0.1140]]), rtol=1e-12)
    np.testing.assert_array_equal(ft.image.grayscale_to_rgb(gray).numpy(), np.repeat(gray, 3, -1))
    # Integer images go through [0, 1] floats and come back in their own range.
    u8 = np.array([[[10], [250]]], np.uint8)
    np.testing.assert_array_equal(ft.image.adjust_brightness(u8, 0.1).numpy()[..., 0], [[35, 255]])


def test_hsv_conversions_match_colorsys():
    x = rand(50, 3)
    x[0] = [0.2, 0.2, 0.2]  # grey: hue and saturation 0
    x[1] = 0.0
    hsv = ft.image.rgb_to_hsv(x).numpy()
    np.testing.assert_allclose(hsv, [colorsys.rgb_to_hsv(*p) for p in x], atol=1e-12)
    np.testing.assert_allclose(
        ft.image.hsv_to_rgb(hsv).numpy(), [colorsys.hsv_to_rgb(*p) for p in hsv], atol=1e-12
    )
    for delta in (-0.7, 0.2, 0.45):
        shifted = [(np.mod(h + delta, 1.0), s, v) for h, s, v in hsv]
        np.testing.assert_allclose(
            ft.image.adjust_hue(x, delta).numpy(),
            [colorsys.hsv_to_rgb(*p) for p in shifted],
            atol=1e-12,
        )
    for factor in (0.3, 1.7):
        scaled = [(h, min(s * factor, 1.0), v) for h, s, v in hsv]
        np.testing.assert_allclose(
            ft.image.adjust_saturation(x, factor).numpy(),
            [colorsys.hsv_to_rgb(*p) for p in scaled],
            atol=1e-12,
        )


def test_yiq_and_yuv_round_trip():
    x = rand(4, 5, 3)
    # TensorFlow's inverse matrices are rounded to about 1e-5.
    np.testing.assert_allclose(ft.image.yiq_to_rgb(ft.image.rgb_to_yiq(x)).numpy(), x, atol=1e-4)
    np.testing.assert_allclose(ft.image.yuv_to_rgb(ft.image.rgb_to_yuv(x)).numpy(), x, atol=1e-4)
    # Luma is the same weighted sum in both.
    np.testing.assert_allclose(
        ft.image.rgb_to_yuv(x).numpy()[..., 0], x @ [0.299, 0.587, 0.114], rtol=1e-12
    )


def test_colour_ops_reject_wrong_channel_counts():
    with pytest.raises(ValueError, match="last dimension of images must be 3"):
        ft.image.rgb_to_hsv(rand(2, 2, 4))
    with pytest.raises(ValueError, match="last dimension of images must be 1"):
        ft.image.grayscale_to_rgb(rand(2, 2, 3))
    with pytest.raises(ValueError, match="gamma must be non-negative"):
        ft.image.adjust_gamma(rand(2, 2, 1), -1.0)


# --- statistics and quality -----------------------------------------------------------------


def test_standardization_total_variation_and_gradients_match_numpy():
    x = rand(2, 4, 5, 3)
    mean = x.mean(axis=(1, 2, 3), keepdims=True)
    std = np.maximum(x.std(axis=(1, 2, 3), keepdims=True), 1 / np.sqrt(60))
    np.testing.assert_allclose(
        ft.image.per_image_standardization(x).numpy(), (x - mean) / std, rtol=1e-10
    )
    # A constant image: the 1/sqrt(N) floor keeps the result finite (zeros).
    np.testing.assert_array_equal(ft.image.per_image_standardization(np.ones((2, 2, 1))), 0.0)
    tv = np.abs(np.diff(x, axis=1)).sum(axis=(1, 2, 3)) + np.abs(np.diff(x, axis=2)).sum(
        axis=(1, 2, 3)
    )
    np.testing.assert_allclose(ft.image.total_variation(x).numpy(), tv)
    np.testing.assert_allclose(ft.image.total_variation(x[0]).numpy(), tv[0])
    dy, dx = ft.image.image_gradients(x)
    np.testing.assert_allclose(dy.numpy()[:, :-1], np.diff(x, axis=1))
    np.testing.assert_allclose(dx.numpy()[:, :, :-1], np.diff(x, axis=2))
    assert not dy.numpy()[:, -1].any() and not dx.numpy()[:, :, -1].any()


def test_sobel_edges_match_a_reflect_padded_correlation():
    x = rand(1, 5, 6, 2)
    padded = np.pad(x, [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect")
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], float)
    windows = sliding_window_view(padded, (3, 3), axis=(1, 2))  # [n, h, w, c, 3, 3]
    want = np.stack([np.einsum("nhwcij,ij->nhwc", windows, k) for k in (ky, ky.T)], axis=-1)
    np.testing.assert_allclose(ft.image.sobel_edges(x).numpy(), want, atol=1e-12)


def ssim_ref(a, b, size, sigma=1.5, k1=0.01, k2=0.03):
    coords = np.arange(size) - (size - 1) / 2
    g = np.exp(-0.5 * coords**2 / sigma**2)
    g = np.outer(g, g) / np.outer(g, g).sum()

    def mean(t):
        return np.einsum("nhwcij,ij->nhwc", sliding_window_view(t, (size, size), axis=(1, 2)), g)

    c1, c2 = k1**2, k2**2
    mx, my = mean(a), mean(b)
    vx, vy, cov = mean(a * a) - mx**2, mean(b * b) - my**2, mean(a * b) - mx * my
    ssim_map = (2 * mx * my + c1) / (mx**2 + my**2 + c1) * (2 * cov + c2) / (vx + vy + c2)
    return ssim_map.mean(axis=(1, 2, 3))


def test_psnr_and_ssim_match_numpy():
    a = rand(2, 8, 9, 3)
    b = np.clip(a + RNG.normal(0, 0.1, a.shape), 0, 1)
    mse = ((a - b) ** 2).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(ft.image.psnr(a, b, 1.0).numpy(), -10 * np.log10(mse), rtol=1e-10)
    np.testing.assert_allclose(
        ft.image.ssim(a, b, 1.0, filter_size=5).numpy(), ssim_ref(a, b, 5), rtol=1e-8
    )
    np.testing.assert_allclose(ft.image.ssim(a, a, 1.0, filter_size=3).numpy(), 1.0)
    assert ft.image.ssim(a, b, 1.0, filter_size=3, return_index_map=True).shape == [2, 6, 7]
    with pytest.raises(ValueError, match="filter_size"):
        ft.image.ssim(a, b, 1.0)
    # 8-bit data: max_val 255 on uint8 arrays is the same as 1.0 on their [0, 1] floats.
    a8, b8 = (a * 255).astype(np.uint8), (b * 255).astype(np.uint8)
    np.testing.assert_allclose(
        ft.image.psnr(a8, b8, 255).numpy(),
        ft.image.psnr(a8 / 255.0, b8 / 255.0, 1.0).numpy(),
        rtol=1e-5,
    )


def ms_ssim_ref(a, b, factors, size):
    def halve(t):
        t = np.pad(t, [(0, 0), (0, t.shape[1] % 2), (0, t.shape[2] % 2), (0, 0)], "symmetric")
        return t.reshape(t.shape[0], t.shape[1] // 2, 2, t.shape[2] // 2, 2, -1).mean((2, 4))

    def maps(x, y):
        coords = np.arange(size) - (size - 1) / 2
        g = np.exp(-0.5 * coords**2 / 1.5**2)
        g = np.outer(g, g) / np.outer(g, g).sum()

        def mean(t):
            win = sliding_window_view(t, (size, size), axis=(1, 2))
            return np.einsum("nhwcij,ij->nhwc", win, g)

        mx, my = mean(x), mean(y)
        cov, var = mean(x * y) - mx * my, mean(x * x) + mean(y * y) - mx**2 - my**2
        cs = (2 * cov + 0.03**2) / (var + 0.03**2)
        return (2 * mx * my + 0.01**2) / (mx**2 + my**2 + 0.01**2) * cs, cs

    terms = []
    for k in range(len(factors)):
        if k:
            a, b = halve(a), halve(b)
        ssim_map, cs = maps(a, b)
        last = ssim_map if k == len(factors) - 1 else cs
        terms.append(np.maximum(last.mean(axis=(1, 2)), 0))
    return np.prod(np.stack(terms, -1) ** np.array(factors), -1).mean(-1)


def test_ssim_multiscale_matches_numpy():
    a = rand(2, 21, 18, 2)
    b = np.clip(a + RNG.normal(0, 0.15, a.shape), 0, 1)
    got = ft.image.ssim_multiscale(a, b, 1.0, (0.3, 0.3, 0.4), filter_size=3).numpy()
    np.testing.assert_allclose(got, ms_ssim_ref(a, b, (0.3, 0.3, 0.4), 3), rtol=1e-8)
    with pytest.raises(ValueError, match="at every scale"):
        ft.image.ssim_multiscale(a, b, 1.0, filter_size=5)


# --- random augmentations -------------------------------------------------------------------


def test_stateless_augmentations_are_functions_of_the_seed():
    x = rand(8, 4, 5, 3)
    for op, args in [
        (ft.image.stateless_random_flip_left_right, ()),
        (ft.image.stateless_random_flip_up_down, ()),
        (ft.image.stateless_random_brightness, (0.3,)),
        (ft.image.stateless_random_contrast, (0.2, 1.8)),
        (ft.image.stateless_random_saturation, (0.2, 1.8)),
        (ft.image.stateless_random_hue, (0.3,)),
    ]:
        first = op(x, *args, seed=[3, 4]).numpy()
        np.testing.assert_array_equal(op(x, *args, seed=[3, 4]).numpy(), first)
        assert not np.array_equal(op(x, *args, seed=[5, 6]).numpy(), first) or op in (
            ft.image.stateless_random_flip_left_right,
            ft.image.stateless_random_flip_up_down,
        )
    crop = ft.image.stateless_random_crop(x, [8, 2, 3, 3], seed=[1, 1]).numpy()
    np.testing.assert_array_equal(ft.image.stateless_random_crop(x, [8, 2, 3, 3], [1, 1]), crop)


def test_random_flips_decide_per_image_and_follow_set_seed():
    x = rand(32, 3, 4, 1)
    ft.random.set_seed(11)
    flipped = ft.image.random_flip_left_right(x).numpy()
    ft.random.set_seed(11)
    np.testing.assert_array_equal(ft.image.random_flip_left_right(x).numpy(), flipped)
    same = [np.array_equal(flipped[i], x[i]) for i in range(32)]
    mirrored = [np.array_equal(flipped[i], x[i, :, ::-1]) for i in range(32)]
    assert all(s or m for s, m in zip(same, mirrored, strict=True))
    assert 4 <= sum(mirrored) <= 28  # each image tossed its own coin
    up = ft.image.random_flip_up_down(x[0], seed=3).numpy()
    assert np.array_equal(up, x[0]) or np.array_equal(up, x[0, ::-1])


def test_random_adjustments_stay_in_their_ranges():
    x = rand(4, 5, 3)
    for seed in range(5):
        delta = ft.image.random_brightness(x, 0.2, seed=seed).numpy() - x
        assert np.allclose(delta, delta.flat[0]) and -0.2 <= delta.flat[0] < 0.2
        crop = ft.image.random_crop(x, [2, 3, 3], seed=seed).numpy()
        windows = sliding_window_view(x, (2, 3), axis=(0, 1))  # [3, 3, 3ch, 2, 3]
        assert any(
            np.array_equal(np.moveaxis(windows[i, j], 0, -1), crop)
            for i in range(3)
            for j in range(3)
        )
    mean = x.mean(axis=(0, 1))
    out = ft.image.random_contrast(x, 0.5, 1.5, seed=1).numpy()
    factor = (out - mean) / (x - mean)
    assert np.allclose(factor, factor.flat[0]) and 0.5 <= factor.flat[0] < 1.5


def test_sample_distorted_bounding_box_respects_its_constraints():
    box = [[[0.1, 0.2, 0.6, 0.9]]]
    cropped = 0
    for seed in range(40):
        begin, size, crop = ft.image.stateless_sample_distorted_bounding_box(
            [40, 60, 3], box, [seed, 7], min_object_covered=0.6, area_range=(0.2, 0.9)
        )
        (y, x, zero), (h, w, minus_one) = begin.numpy(), size.numpy()
        assert zero == 0 and minus_one == -1 and y + h <= 40 and x + w <= 60
        if (h, w) == (40, 60):
            continue  # no attempt succeeded: the whole image
        cropped += 1
        assert 0.2 * 2400 <= h * w <= 0.9 * 2400
        assert 0.75 - 1 / h <= w / h <= 1.33 + 1 / h  # the width is rounded from h * ratio
        covered = max(0, min(24, y + h) - max(4, y)) * max(0, min(54, x + w) - max(12, x))
        assert covered >= 0.6 * 20 * 42
        np.testing.assert_allclose(crop.numpy(), [[[y / 40, x / 60, (y + h) / 40, (x + w) / 60]]])
    assert cropped >= 30  # the checks above ran on real crops
    again = ft.image.stateless_sample_distorted_bounding_box([40, 60, 3], box, [3, 7])
    first = ft.image.stateless_sample_distorted_bounding_box([40, 60, 3], box, [3, 7])
    np.testing.assert_array_equal(again[1].numpy(), first[1].numpy())
    # An impossible request falls back to the whole image.
    begin, size, _ = ft.image.sample_distorted_bounding_box(
        [40, 60, 3], box, seed=1, min_object_covered=1.0, area_range=(0.01, 0.02)
    )
    assert begin.numpy().tolist() == [0, 0, 0] and size.numpy().tolist() == [40, 60, -1]
    with pytest.raises(ValueError, match="no bounding boxes"):
        ft.image.sample_distorted_bounding_box([40, 60, 3], np.zeros((1, 0, 4)))


def test_random_ops_validate_their_ranges():
    x = rand(2, 2, 3)
    with pytest.raises(ValueError, match="max_delta must be non-negative"):
        ft.image.random_brightness(x, -0.1)
    with pytest.raises(ValueError, match="upper must be > lower"):
        ft.image.random_contrast(x, 1.0, 0.5)
    with pytest.raises(ValueError, match="lower must be non-negative"):
        ft.image.random_saturation(x, -1.0, 0.5)
    with pytest.raises(ValueError, match="max_delta must be <= 0.5"):
        ft.image.random_hue(x, 0.7)
    with pytest.raises(ValueError, match="must be non-negative and fit"):
        ft.image.random_crop(x, [3, 2, 3])


# --- gradients (float64 finite differences) -------------------------------------------------


def _distinct_rgb(*shape):
    """Colours whose channels differ clearly, keeping finite differences off the HSV kinks."""
    x = rand(*shape, 3, low=0.1, high=0.9)
    x[..., 0] += 0.05 * np.sign(x[..., 0] - x[..., 1])
    return np.clip(x, 0.05, 0.95)


GRADIENT_CASES = {
    "flip_rot90_transpose": (
        lambda t: ft.image.rot90(ft.image.flip_up_down(ft.image.transpose(t)), 3),
        (2, 3, 4, 2),
    ),
    "crop_and_pad": (
        lambda t: ft.image.resize_with_crop_or_pad(ft.image.central_crop(t, 0.6), 4, 6),
        (5, 5, 2),
    ),
    "resize_bilinear": (lambda t: _resize(t, 5, 3, "bilinear"), (1, 3, 4, 2)),
    "resize_bicubic": (lambda t: _resize(t, 2, 7, "bicubic"), (1, 4, 4, 1)),
    "extract_patches": (
        lambda t: ft.image.extract_patches(t, [1, 2, 2, 1], [1, 1, 2, 1], [1, 1, 1, 1], "SAME"),
        (1, 3, 4, 2),
    ),
    "contrast_gamma": (
        lambda t: ft.image.adjust_gamma(ft.image.adjust_contrast(t, 0.8), 1.5, 0.9),
        (3, 4, 2),
    ),
    "grayscale_yiq": (lambda t: ft.image.rgb_to_yiq(ft.image.rgb_to_grayscale(t) + t), (2, 3, 3)),
    "standardization": (ft.image.per_image_standardization, (2, 3, 3, 2)),
    "total_variation": (ft.image.total_variation, (2, 3, 4, 2)),
    "image_gradients": (lambda t: ft.concat(ft.image.image_gradients(t), -1), (1, 3, 4, 2)),
    "sobel_edges": (ft.image.sobel_edges, (1, 4, 4, 1)),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_match_finite_differences(name):
    fn, shape = GRADIENT_CASES[name]
    check_grad(fn, rand(*shape, low=0.1, high=0.9))


@pytest.mark.parametrize(
    "fn",
    [
        ft.image.rgb_to_hsv,
        lambda t: ft.image.hsv_to_rgb(ft.image.rgb_to_hsv(t) * 0.9),
        lambda t: ft.image.adjust_hue(t, 0.3),
        lambda t: ft.image.adjust_saturation(t, 0.7),
    ],
    ids=["rgb_to_hsv", "hsv_to_rgb", "adjust_hue", "adjust_saturation"],
)
def test_hsv_gradients_match_finite_differences(fn):
    check_grad(fn, _distinct_rgb(4, 3))


def test_psnr_and_ssim_gradients_match_finite_differences():
    b = rand(1, 4, 4, 2)
    check_grad(lambda t: ft.image.psnr(t, b, 1.0), rand(1, 4, 4, 2), rtol=1e-5)
    check_grad(lambda t: ft.image.ssim(t, b, 1.0, filter_size=3), rand(1, 4, 4, 2), rtol=1e-5)
