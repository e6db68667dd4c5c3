"""The colour augmentation layers (RandomBrightness, RandomGrayscale, RandomInvert,
Solarization, RandomColorDegeneration, RandomSaturation, RandomHue, RandomPosterization,
AutoContrast) without TensorFlow: NumPy and ``colorsys`` references with fixed factors, the
distribution of the random draws, configs, errors and finite differences.
``test_keras_image_augment_tf.py`` compares them with Keras itself."""

import colorsys

import numpy as np
import pytest
from test_keras_image_augment import check_input_gradient

import ferrotape as ft
from ferrotape.keras import layers

RNG = np.random.default_rng(23)
IMAGES = RNG.uniform(0, 255, (4, 5, 6, 3))
LUMA = np.array([0.2989, 0.5870, 0.1140])


def run(layer, x=IMAGES, **kwargs):
    return layer(x, **kwargs).numpy()


def hsv_map(images, fn):
    """``images`` with ``fn(h, s, v)`` applied pixel by pixel through ``colorsys``."""
    out = np.empty_like(images)
    for index in np.ndindex(images.shape[:-1]):
        out[index] = colorsys.hsv_to_rgb(*fn(*colorsys.rgb_to_hsv(*images[index])))
    return out


def test_brightness_adds_a_fraction_of_the_range_and_clips():
    got = run(layers.RandomBrightness((0.2, 0.2), dtype="float64"))
    np.testing.assert_allclose(got, np.clip(IMAGES + 0.2 * 255, 0, 255), rtol=1e-6)
    unit = IMAGES / 255
    got = run(layers.RandomBrightness((-0.3, -0.3), value_range=(1, 0), dtype="float64"), unit)
    np.testing.assert_allclose(got, np.clip(unit - 0.3, 0, 1), atol=1e-7)  # float32 draws


def test_brightness_draws_one_delta_per_image_within_the_factor():
    flat = np.full((64, 2, 2, 1), 100.0)
    got = run(layers.RandomBrightness((-0.1, 0.2), seed=4, dtype="float64"), flat)
    deltas = (got - 100.0)[:, 0, 0, 0] / 255
    assert np.all((deltas >= -0.1) & (deltas <= 0.2))
    assert np.unique(deltas).size == 64 and np.all(got == got[:, :1, :1])


def test_grayscale_and_invert_with_probability_one_and_zero():
    grey = (IMAGES @ LUMA)[..., None]
    np.testing.assert_allclose(run(layers.RandomGrayscale(1.0, dtype="float64")), grey + 0 * IMAGES)
    np.testing.assert_array_equal(run(layers.RandomGrayscale(0.0, dtype="float64")), IMAGES)
    inverted = run(layers.RandomInvert((1.0, 1.0), dtype="float64"))
    np.testing.assert_allclose(inverted, 255 - IMAGES)
    np.testing.assert_array_equal(run(layers.RandomInvert((0.0, 0.0), dtype="float64")), IMAGES)


def test_probabilities_are_per_image():
    x = np.tile(IMAGES[:1], (400, 1, 1, 1))
    grey = run(layers.RandomGrayscale(0.25, seed=1), x)
    turned = np.mean(np.ptp(grey, axis=-1).max(axis=(1, 2)) < 1e-3)
    assert 0.18 < turned < 0.32
    # RandomInvert's default factor=1.0 draws p in [0, 1], so half the images invert.
    inverted = run(layers.RandomInvert(seed=2), x)
    share = np.mean(np.abs(inverted - (255 - x)).max(axis=(1, 2, 3)) < 1e-3)
    assert 0.42 < share < 0.58


def test_solarization_inverts_above_the_threshold():
    np.testing.assert_allclose(run(layers.Solarization(dtype="float64")), 255 - IMAGES)
    unit = IMAGES / 255
    got = run(layers.Solarization(value_range=(0, 1), dtype="float64"), unit)
    np.testing.assert_allclose(got, 1 - unit, atol=1e-12)
    # A random threshold t in [0, 255 * 0.5]: pixels below t are kept, the rest inverted.
    got = run(layers.Solarization(threshold_factor=0.5, seed=3, dtype="float64"))
    kept = np.isclose(got, IMAGES)
    assert np.all(kept | np.isclose(got, 255 - IMAGES))
    for image, keep in zip(IMAGES, kept, strict=True):
        assert image[keep].max(initial=0) <= image[~keep].min(initial=255) <= 127.5


def test_color_degeneration_moves_towards_grey():
    grey = (IMAGES @ LUMA)[..., None]
    got = run(layers.RandomColorDegeneration((0.5, 0.5), dtype="float64"))
    np.testing.assert_allclose(got, IMAGES + 0.5 * (grey - IMAGES), rtol=1e-6)
    got = run(layers.RandomColorDegeneration((-0.3, -0.3), dtype="float64"))
    np.testing.assert_allclose(got, np.clip(IMAGES - 0.3 * (grey - IMAGES), 0, 255), atol=1e-5)


def test_saturation_scales_s_by_u_over_one_minus_u():
    for u in (0.3, 0.5, 0.8):
        got = run(layers.RandomSaturation((u, u), dtype="float64"))
        scale = u / (1 - u + 1e-7)
        want = hsv_map(IMAGES, lambda h, s, v, k=scale: (h, min(s * k, 255), v))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)  # float32 draws


def test_hue_turns_by_half_the_factor_either_way():
    got = run(layers.RandomHue((0.4, 0.4), seed=5, dtype="float64"))
    unit = IMAGES / 255
    for i in range(len(IMAGES)):
        options = [
            255 * hsv_map(unit[i], lambda h, s, v, d=d: ((h + d) % 1, s, v)) for d in (0.2, -0.2)
        ]
        assert any(np.allclose(got[i], o, atol=1e-4) for o in options), i


def test_posterization_keeps_the_high_bits():
    for bits in (1, 3, 8):
        got = run(layers.RandomPosterization((bits, bits), dtype="float64"))
        step = 2.0 ** (8 - bits)
        np.testing.assert_array_equal(got, np.floor(np.trunc(IMAGES) / step) * step)
    # Drawn per image among [2, 5): the values show the step each image used.
    got = run(layers.RandomPosterization((2, 5), seed=1), np.tile(IMAGES[:1], (40, 1, 1, 1)))
    steps = {int(2 ** np.ceil(np.log2(max(np.gcd.reduce(g.astype(int).ravel()), 1)))) for g in got}
    assert steps <= {64, 32, 16} and len(steps) > 1


def test_auto_contrast_stretches_each_channel_in_inference_too():
    x = IMAGES.copy()
    x[1, :, :, 2] = 7.0  # a constant channel is left as it is
    got = run(layers.AutoContrast(dtype="float64"), x, training=False)
    low, high = x.min(axis=(1, 2), keepdims=True), x.max(axis=(1, 2), keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        want = np.where(high > low, (x - low) * 255 / (high - low), x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize(
    "make",
    [
        lambda **k: layers.RandomBrightness(0.3, **k),
        lambda **k: layers.RandomGrayscale(0.5, **k),
        lambda **k: layers.RandomInvert(**k),
        lambda **k: layers.Solarization(0.3, 0.6, **k),
        lambda **k: layers.RandomColorDegeneration(0.5, **k),
        lambda **k: layers.RandomSaturation(0.5, **k),
        lambda **k: layers.RandomHue(0.5, **k),
        lambda **k: layers.RandomPosterization((2, 7), **k),
    ],
)
def test_seeds_inference_and_single_images(make):
    x = IMAGES.astype(np.float32)
    a, b = make(seed=7), make(seed=7)
    first = run(a, x)
    np.testing.assert_array_equal(first, run(b, x))
    later = [run(a, x) for _ in range(3)]
    assert any(not np.allclose(first, other) for other in later)
    np.testing.assert_array_equal(run(a, x, training=False), x)
    assert a(x[0]).shape == x[0].shape
    assert a(x.astype(np.uint8)).dtype == ft.float32


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.RandomBrightness((0.1, 0.1), value_range=(0, 1), dtype="float64"),
        lambda: layers.RandomColorDegeneration((0.4, 0.4), (0, 1), dtype="float64"),
        lambda: layers.RandomSaturation((0.3, 0.3), dtype="float64"),
        lambda: layers.AutoContrast((0, 1), dtype="float64"),
    ],
)
def test_input_gradients_against_finite_differences(make):
    # Values inside the range, so that the clipping is not at a kink.
    check_input_gradient(make(), RNG.uniform(0.15, 0.8, (2, 3, 4, 3)), training=True)


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: layers.RandomBrightness(1.5), ValueError, "factor"),
        (lambda: layers.RandomBrightness(0.1, value_range=(0,)), ValueError, "value_range"),
        (lambda: layers.RandomGrayscale(1.2), ValueError, "factor"),
        (lambda: layers.RandomInvert(-0.5), ValueError, "factor"),
        (lambda: layers.Solarization(addition_factor=(0.1, 2.0)), ValueError, "addition_factor"),
        (lambda: layers.RandomHue("big"), ValueError, "factor"),
        (lambda: layers.RandomPosterization(9), ValueError, "factor"),
        (lambda: layers.AutoContrast(value_range=5), ValueError, "value_range"),
    ],
)
def test_bad_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_grayscale_needs_rgb():
    with pytest.raises(ValueError, match="channel"):
        layers.RandomGrayscale(1.0)(np.zeros((1, 2, 2, 2)))


def reference_equalize(images, bins=256):
    """Keras's equalization with NumPy: per channel, over the whole batch."""
    out = np.empty_like(images)
    for c in range(images.shape[-1]):
        channel = images[..., c]
        index = np.clip((channel * (bins - 1) / 255).astype(int), 0, bins - 1)
        hist = np.bincount(index.ravel(), minlength=bins)
        if np.count_nonzero(hist) <= 1:
            out[..., c] = channel
            continue
        cdf = np.cumsum(hist)
        low = cdf[np.nonzero(cdf)[0][0]]
        lookup = np.clip(np.round((cdf - low) * 255 / max(cdf[-1] - low, 1)), 0, 255)
        out[..., c] = lookup[np.clip(channel / 255 * (bins - 1), 0, bins - 1).astype(int)]
    return out


@pytest.mark.parametrize("bins", [256, 16])
def test_equalization_matches_a_numpy_reference(bins):
    x = np.round(IMAGES / 8) * 8  # repeated values, as in real images
    x[..., 2] = 9.0  # one bin only: left as it is
    got = run(layers.Equalization(bins=bins, dtype="float64"), x)
    np.testing.assert_allclose(got, reference_equalize(x, bins), atol=1e-9)
    unit = run(layers.Equalization(value_range=(0, 1), bins=bins, dtype="float64"), x / 255)
    np.testing.assert_allclose(unit * 255, reference_equalize(x, bins), atol=1e-6)
    np.testing.assert_array_equal(run(layers.Equalization(), x, training=False), x)
    with pytest.raises(ValueError, match="bins"):
        layers.Equalization(bins=0)
