"""RandomSharpness, RandomGaussianBlur, RandomColorJitter, RandomHeight and RandomWidth
without TensorFlow: zero-padded NumPy convolutions, hand-computed resizes, the random draws,
configs and errors. ``test_keras_image_augment_tf.py`` compares them with Keras itself."""

import numpy as np
import pytest
from test_keras_image_augment import check_input_gradient

import ferrotape as ft
from ferrotape.keras import layers

RNG = np.random.default_rng(31)
IMAGES = RNG.uniform(0, 255, (3, 5, 6, 2))


def filtered(images, kernel):
    """Each channel correlated with ``kernel``, zero padding, same size (plain loops)."""
    kh, kw = kernel.shape
    padded = np.pad(images, [(0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)])
    out = np.zeros_like(images)
    for i in range(kh):
        for j in range(kw):
            out += kernel[i, j] * padded[:, i : i + images.shape[1], j : j + images.shape[2]]
    return out


def test_sharpness_mixes_the_image_with_its_smoothed_version():
    kernel = np.full((3, 3), 1 / 13)
    kernel[1, 1] = 5 / 13
    smooth = filtered(IMAGES, kernel)
    for u in (0.0, 0.5, 0.9):
        got = layers.RandomSharpness((u, u), dtype="float64")(IMAGES).numpy()
        want = np.clip(IMAGES + (1 - 2 * np.float32(u)) * (smooth - IMAGES), 0, 255)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("size, sigma", [(3, 0.7), (5, 0.4), ((3, 3), (0.5, 0.5))])
def test_gaussian_blur_matches_the_gaussian_formula(size, sigma):
    n = size if isinstance(size, int) else size[0]
    s = sigma if isinstance(sigma, float) else sigma[0]
    x = np.arange(n) - (n - 1) / 2
    g = np.exp(-0.5 * (x / (s + 1e-6)) ** 2)
    g /= g.sum()
    layer = layers.RandomGaussianBlur((1.0, 1.0), size, (s, s), dtype="float64")
    got = layer(IMAGES).numpy()
    np.testing.assert_allclose(got, np.clip(filtered(IMAGES, np.outer(g, g)), 0, 255), rtol=1e-5)


def test_gaussian_blur_probability_is_per_image():
    x = np.tile(IMAGES[:1], (200, 1, 1, 1))
    got = layers.RandomGaussianBlur(0.6, seed=4)(x).numpy()  # p in [0, 0.6]: 30% on average
    blurred = np.mean(np.abs(got - x).max(axis=(1, 2, 3)) > 1e-3)
    assert 0.2 < blurred < 0.4


def test_color_jitter_applies_its_steps_in_turn():
    x = IMAGES[..., :1].repeat(3, -1) * [1.0, 0.5, 0.25]
    only = layers.RandomColorJitter(brightness_factor=(0.1, 0.1), dtype="float64")(x).numpy()
    np.testing.assert_allclose(only, np.clip(x + 25.5, 0, 255), rtol=1e-6)
    both = layers.RandomColorJitter(
        brightness_factor=(0.1, 0.1), saturation_factor=(0.5, 0.5), dtype="float64"
    )(x).numpy()
    np.testing.assert_allclose(both, only, rtol=1e-5)  # saturation 0.5 changes nothing
    np.testing.assert_array_equal(layers.RandomColorJitter()(x).numpy(), x.astype(np.float32))


def test_height_and_width_resize_one_axis():
    x = np.array([[[0.0], [4.0]], [[8.0], [12.0]]])  # 2 x 2
    taller = layers.RandomHeight((1.0, 1.0), dtype="float64")(x).numpy()[:, 0, 0]
    np.testing.assert_allclose(taller, [0.0, 2.0, 6.0, 8.0])  # half-pixel bilinear, clamped
    wider = layers.RandomWidth((1.0, 1.0), interpolation="nearest")(x[None]).numpy()
    np.testing.assert_array_equal(wider[0, 0, :, 0], [0.0, 0.0, 4.0, 4.0])
    np.testing.assert_array_equal(layers.RandomHeight(0.5)(x, training=False).numpy(), x)
    heights = {layers.RandomHeight(0.5, seed=s)(IMAGES).shape[1] for s in range(20)}
    assert heights <= set(range(2, 8)) and len(heights) > 2  # int(5 * f), f in [0.5, 1.5]


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.RandomSharpness((0.8, 0.8), value_range=(-10, 10), dtype="float64"),
        lambda: layers.RandomGaussianBlur((1, 1), 3, (0.6, 0.6), (-10, 10), dtype="float64"),
    ],
)
def test_input_gradients_against_finite_differences(make):
    check_input_gradient(make(), RNG.uniform(0.2, 0.8, (2, 4, 5, 2)), training=True)


def test_seeds_repeat_and_calls_differ():
    for make in (
        lambda: layers.RandomSharpness(0.8, seed=3),
        lambda: layers.RandomGaussianBlur(seed=3),
        lambda: layers.RandomColorJitter(brightness_factor=0.3, hue_factor=0.2, seed=3),
    ):
        a, b = make(), make()
        rgb = IMAGES[..., [0, 1, 1]]
        first = a(rgb).numpy()
        np.testing.assert_array_equal(first, b(rgb).numpy())
        assert any(not np.allclose(first, a(rgb).numpy()) for _ in range(3))
        assert a(rgb, training=False).dtype == ft.float32


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: layers.RandomSharpness(1.5), "factor"),
        (lambda: layers.RandomGaussianBlur(kernel_size=4), "odd"),
        (lambda: layers.RandomGaussianBlur(sigma=(2.0, 3.0)), "sigma"),
        (lambda: layers.RandomHeight((0.3, 0.1)), "upper bound"),
        (lambda: layers.RandomWidth((-1.5, 0.2)), "larger than -1"),
        (lambda: layers.RandomWidth(0.2, interpolation="area"), "interpolation"),
    ],
)
def test_bad_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_rand_augment_applies_num_ops_of_its_augmentations():
    x = RNG.uniform(0, 255, (2, 6, 6, 3)).astype(np.float32)
    np.testing.assert_array_equal(layers.RandAugment(num_ops=0)(x).numpy(), x)
    np.testing.assert_array_equal(layers.RandAugment(seed=1)(x, training=False).numpy(), x)
    for seed in range(6):
        got = layers.RandAugment(num_ops=1, factor=0.3, seed=seed)(x).numpy()
        # Each candidate, made as RandAugment makes it, draws what RandAugment's drew.
        candidates = [
            layers.RandomShear((0, 0.3), (0, 0.3), seed=seed),
            layers.RandomTranslation((0, 0.3), (0, 0.3), seed=seed),
            layers.RandomRotation((0, 0.3), seed=seed),
            layers.RandomBrightness((0, 0.3), seed=seed),
            layers.RandomColorDegeneration((0, 0.3), seed=seed),
            layers.RandomContrast((0, 0.3), seed=seed),
            layers.RandomSharpness((0, 0.3), seed=seed),
            layers.RandomPosterization(2, seed=seed),
            layers.Solarization((0, 0.3), (0, 0.3), seed=seed),
            layers.AutoContrast(),
            layers.Equalization(),
        ]
        assert any(np.allclose(got, c(x).numpy(), atol=1e-4) for c in candidates), seed
    with pytest.raises(ValueError, match="num_ops"):
        layers.RandAugment(num_ops=-1)


def test_aug_mix_mixes_chains_of_augmentations():
    from ferrotape.keras.layers.preprocessing.image_preprocessing.rand_augment import (
        apply_augmentation,
    )

    x = ft.constant(RNG.uniform(0, 255, (3, 6, 6, 3)).astype(np.float32))
    for seed in range(4):
        # all_ops=False: RandomContrast (which draws when applied) is not among them.
        layer = layers.AugMix(num_chains=3, chain_depth=2, alpha=0.7, all_ops=False, seed=seed)
        weights, keep, chains = layer.get_random_transformation(x)
        weights, keep = weights.numpy(), float(keep)
        assert np.isclose(weights.sum(), 1.0) and weights.min() >= 0 and 0 <= keep <= 1
        assert len(chains) == 3 and all(len(chain) <= 2 for chain in chains)
        mixed = 0.0
        for w, chain in zip(weights, chains, strict=True):
            augmented = x
            for i, drawn in chain:
                augmented = apply_augmentation(layer._augmentations[i], augmented, drawn)
            mixed = mixed + w * augmented.numpy()
        want = np.clip(keep * x.numpy() + (1 - keep) * mixed, 0, 255)
        got = layer.transform_images(x, (ft.constant(weights), keep, chains)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3)
    a, b = layers.AugMix(seed=3), layers.AugMix(seed=3)
    first = a(x).numpy()
    np.testing.assert_array_equal(first, b(x).numpy())
    assert first.min() >= 0 and first.max() <= 255 and not np.allclose(first, x.numpy())
    np.testing.assert_array_equal(a(x, training=False).numpy(), x.numpy())
    with pytest.raises(ValueError, match="num_chains"):
        layers.AugMix(num_chains=0)
    with pytest.raises(ValueError, match="alpha"):
        layers.AugMix(alpha=0)


def test_gamma_samples():
    draws = ft.keras.random.gamma([4000], 2.0, seed=1).numpy()
    assert abs(draws.mean() - 2.0) < 0.1 and draws.min() > 0
    with pytest.raises(ValueError, match="positive"):
        ft.keras.random.gamma([2], -1.0)
