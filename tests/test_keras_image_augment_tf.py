"""The image augmentation layers and ``affine_transform`` against Keras 3 on TensorFlow 2.21,
with factors that make Keras's random draw a fixed value (``factor=(f, f)``), for every
``fill_mode`` and both interpolations: the outputs must agree within float32 rounding.
Skipped without TensorFlow; ``test_keras_image_augment.py`` checks the same layers without
it."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
pytest.importorskip("tensorflow", reason="TensorFlow is not installed (pip install tensorflow-cpu)")
import keras  # noqa: E402 - Keras 3, installed with TensorFlow

import ferrotape as ft  # noqa: E402
from ferrotape.keras.layers.preprocessing.image_preprocessing.affine import (  # noqa: E402
    affine_transform,
)

RNG = np.random.default_rng(5)
IMAGES = RNG.uniform(0, 255, (2, 7, 9, 3)).astype(np.float32)
SAMPLING = [
    (m, i) for m in ("reflect", "wrap", "constant", "nearest") for i in ("bilinear", "nearest")
]


def both(name, x, **kwargs):
    theirs = getattr(keras.layers, name)(**kwargs)(x, training=True)
    ours = getattr(ft.keras.layers, name)(**kwargs)(x, training=True)
    return keras.ops.convert_to_numpy(theirs), ours.numpy()


@pytest.mark.parametrize("fill_mode, interpolation", SAMPLING)
def test_affine_transform_matches_keras(fill_mode, interpolation):
    transforms = np.array(
        [
            [1.2, 0.3, -5.2, 0.2, 0.9, 3.7, 0.0, 0.0],
            [0.5, 0.1, 20.3, -0.4, 0.8, -16.1, 0.01, -0.02],
        ],
        np.float32,
    )
    args = dict(interpolation=interpolation, fill_mode=fill_mode, fill_value=7.0)
    theirs = keras.ops.image.affine_transform(IMAGES, transforms, **args)
    ours = affine_transform(IMAGES, transforms, **args)
    np.testing.assert_allclose(ours.numpy(), keras.ops.convert_to_numpy(theirs), atol=1e-3)


@pytest.mark.parametrize("fill_mode, interpolation", SAMPLING)
@pytest.mark.parametrize(
    "name, factors",
    [
        ("RandomRotation", {"factor": (0.1, 0.1)}),
        ("RandomRotation", {"factor": (-0.3, -0.3)}),
        ("RandomZoom", {"height_factor": (0.3, 0.3), "width_factor": (-0.4, -0.4)}),
        ("RandomZoom", {"height_factor": (-0.25, -0.25)}),
        ("RandomTranslation", {"height_factor": (0.2, 0.2), "width_factor": (-0.35, -0.35)}),
    ],
)
def test_fixed_geometric_augmentations_match_keras(name, factors, fill_mode, interpolation):
    args = dict(factors, fill_mode=fill_mode, interpolation=interpolation, fill_value=3.0)
    theirs, ours = both(name, IMAGES, **args)
    np.testing.assert_allclose(ours, theirs, atol=1e-3)
    theirs, ours = both(name, IMAGES[0], **args)  # a single image
    np.testing.assert_allclose(ours, theirs, atol=1e-3)


def test_channels_first_and_inference_match_keras():
    first = np.transpose(IMAGES, (0, 3, 1, 2))
    theirs, ours = both("RandomRotation", first, factor=(0.1, 0.1), data_format="channels_first")
    np.testing.assert_allclose(ours, theirs, atol=1e-3)
    for name, args in [("RandomRotation", {"factor": 0.3}), ("RandomZoom", {"height_factor": 0.3})]:
        theirs = getattr(keras.layers, name)(**args)(IMAGES.astype(np.uint8), training=False)
        ours = getattr(ft.keras.layers, name)(**args)(IMAGES.astype(np.uint8), training=False)
        assert ours.dtype.name == keras.ops.convert_to_numpy(theirs).dtype.name == "float32"
        np.testing.assert_array_equal(ours.numpy(), keras.ops.convert_to_numpy(theirs))


@pytest.mark.parametrize("fill_mode, interpolation", SAMPLING)
def test_shear_matches_keras_up_to_its_random_sign(fill_mode, interpolation):
    # Keras negates both shears for a random half of the images: each image must match
    # Keras's output for one sign.
    args = dict(x_factor=(0.3, 0.3), y_factor=(0.2, 0.2), fill_mode=fill_mode)
    ours = ft.keras.layers.RandomShear(interpolation=interpolation, **args)(IMAGES).numpy()
    for sign in (1.0, -1.0):
        matrix = np.array([[1, 0.3 * sign, 0, 0.2 * sign, 1, 0, 0, 0]], np.float32)
        theirs = keras.ops.convert_to_numpy(
            keras.ops.image.affine_transform(IMAGES, matrix, interpolation, fill_mode)
        )
        for i in range(len(IMAGES)):
            if np.allclose(ours[i], theirs[i], atol=1e-3):
                ours[i] = np.nan
    assert np.isnan(ours).all()


def test_factor_rules_match_keras():
    for name, args in [
        ("RandomRotation", {"factor": 0.2}),
        ("RandomRotation", {"factor": (0.3, -0.1)}),
        ("RandomShear", {"x_factor": 0.4, "y_factor": (0.1, 0.3)}),
    ]:
        theirs = getattr(keras.layers, name)(**args)
        ours = getattr(ft.keras.layers, name)(**args)
        for attr in ("factor", "x_factor", "y_factor"):
            if hasattr(theirs, attr):
                assert tuple(getattr(ours, attr)) == tuple(getattr(theirs, attr)), (name, attr)
    for name, args in [("RandomZoom", {"height_factor": -1.0}), ("RandomShear", {"x_factor": 2})]:
        with pytest.raises(ValueError):
            getattr(keras.layers, name)(**args)
        with pytest.raises(ValueError):
            getattr(ft.keras.layers, name)(**args)


# ------------------------------------------------------------ colour layers
UNIT = RNG.uniform(0, 1, (3, 5, 6, 3)).astype(np.float32)


@pytest.mark.parametrize(
    "name, args, x",
    [
        ("RandomBrightness", {"factor": (0.2, 0.2)}, IMAGES),
        ("RandomBrightness", {"factor": (-0.3, -0.3), "value_range": (0, 1)}, UNIT),
        ("RandomGrayscale", {"factor": 1.0}, IMAGES),
        ("RandomGrayscale", {"factor": 0.0}, IMAGES),
        ("RandomInvert", {"factor": (1.0, 1.0)}, IMAGES),
        ("RandomInvert", {"factor": (1.0, 1.0), "value_range": (0, 1)}, UNIT),
        ("Solarization", {}, IMAGES),
        ("Solarization", {"value_range": (0, 1)}, UNIT),
        ("RandomColorDegeneration", {"factor": (0.5, 0.5)}, IMAGES),
        ("RandomColorDegeneration", {"factor": (-0.3, -0.3), "value_range": (0, 1)}, UNIT),
        ("RandomSaturation", {"factor": (0.3, 0.3)}, IMAGES),
        ("RandomSaturation", {"factor": (0.8, 0.8), "value_range": (0, 1)}, UNIT),
        ("RandomPosterization", {"factor": (2, 2)}, IMAGES),
        ("RandomPosterization", {"factor": (5, 5), "value_range": (0, 1)}, UNIT),
        ("AutoContrast", {}, IMAGES),
        ("RandomSharpness", {"factor": (0.2, 0.2)}, IMAGES),
        ("RandomSharpness", {"factor": (0.9, 0.9), "value_range": (0, 1)}, UNIT),
        ("RandomGaussianBlur", {"factor": (1.0, 1.0), "sigma": (0.7, 0.7)}, IMAGES),
        ("RandomGaussianBlur", {"factor": (1.0, 1.0), "sigma": 0.0, "kernel_size": 5}, UNIT),
        ("RandomGaussianBlur", {"factor": (0.0, 0.0)}, IMAGES),
        ("RandomErasing", {"factor": (1.0, 1.0), "scale": (1.0, 1.0), "fill_value": 9.0}, IMAGES),
        ("RandomErasing", {"factor": (0.0, 0.0)}, IMAGES),
        ("Equalization", {}, IMAGES),
        ("RandomElasticTransform", {"factor": (0.0, 0.0)}, IMAGES),
        ("Equalization", {"bins": 16, "value_range": (0, 1)}, UNIT),
        ("RandomPerspective", {"factor": (1.0, 1.0), "scale": 0.0}, IMAGES),
        # Contrast is left out: Keras draws its factor from [1 - lower, 1 + upper], never fixed.
        (
            "RandomColorJitter",
            {"brightness_factor": (0.1, 0.1), "saturation_factor": (0.6, 0.6)},
            IMAGES,
        ),
        (
            "AutoContrast",
            {"value_range": (0, 1)},
            np.concatenate([UNIT[..., :2], 0.5 + 0 * UNIT[..., :1]], -1),
        ),
    ],
)
def test_fixed_colour_augmentations_match_keras(name, args, x):
    theirs, ours = both(name, x, **args)
    scale = 255.0 if x is IMAGES else 1.0
    np.testing.assert_allclose(ours, theirs, atol=1e-6 * scale)
    theirs, ours = both(name, x[0], **args)
    np.testing.assert_allclose(ours, theirs, atol=1e-6 * scale)


def test_auto_contrast_runs_in_inference_too_as_keras():
    theirs = keras.layers.AutoContrast()(IMAGES, training=False)
    ours = ft.keras.layers.AutoContrast()(IMAGES, training=False)
    np.testing.assert_allclose(ours.numpy(), keras.ops.convert_to_numpy(theirs), atol=5e-3)


def test_hue_matches_keras_up_to_its_random_sign():
    # Keras picks the direction of the turn at random; several seeded Keras calls show
    # both directions for every image, and each of ours must be one of them.
    keras_layer = keras.layers.RandomHue((0.4, 0.4), seed=0)
    seen = [keras.ops.convert_to_numpy(keras_layer(IMAGES)) for _ in range(8)]
    ours = ft.keras.layers.RandomHue((0.4, 0.4), seed=2)(IMAGES).numpy()
    for i in range(len(IMAGES)):
        assert any(np.allclose(ours[i], s[i], atol=5e-3) for s in seen), i


@pytest.mark.parametrize(
    "name, args, x",
    [
        ("RandomHeight", {"factor": (0.5, 0.5)}, IMAGES),
        ("RandomHeight", {"factor": (-0.3, -0.3), "interpolation": "nearest"}, IMAGES),
        ("RandomWidth", {"factor": (-0.3, -0.3)}, IMAGES[0]),
        ("RandomWidth", {"factor": (0.4, 0.4), "interpolation": "bicubic"}, IMAGES),
    ],
)
def test_random_height_and_width_match_tf_keras(name, args, x):
    import tensorflow as tf  # the legacy layers are tf.keras's, not keras's

    theirs = getattr(tf.keras.layers, name)(**args)(x, training=True)
    ours = getattr(ft.keras.layers, name)(**args)(x, training=True)
    np.testing.assert_allclose(ours.numpy(), keras.ops.convert_to_numpy(theirs), atol=1e-3)


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
def test_perspective_transform_matches_keras(interpolation):
    from ferrotape.keras.layers.preprocessing.image_preprocessing.affine import (
        perspective_transform,
    )

    start = np.array([[[0, 0], [8, 0], [0, 6], [8, 6]]] * 2, np.float32)
    end = start + start * RNG.uniform(-0.3, 0.3, (2, 4, 2)).astype(np.float32)
    args = dict(interpolation=interpolation, fill_value=5.0)
    theirs = keras.ops.image.perspective_transform(IMAGES, start, end, **args)
    ours = perspective_transform(IMAGES, start, end, **args)
    # The 8 x 8 solve rounds differently in float32: coordinates agree to ~1e-6 pixels.
    np.testing.assert_allclose(ours.numpy(), keras.ops.convert_to_numpy(theirs), atol=1e-3)


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("fill_mode", ["constant", "nearest", "wrap", "reflect"])
def test_map_coordinates_matches_keras(fill_mode, order):
    # "mirror" is left out: Keras's TF backend reads past the edge for it (an error).
    from ferrotape.keras.layers.preprocessing.image_preprocessing.random_elastic_transform import (
        map_coordinates_2d,
    )

    image = RNG.uniform(0, 255, (1, 5, 7, 1)).astype(np.float32)
    y = RNG.uniform(-12, 16, (1, 6, 8)).astype(np.float32)
    x = RNG.uniform(-12, 18, (1, 6, 8)).astype(np.float32)
    y[0, 0, :3] = [-0.5, 2.5, 3.5]  # halves: rounded to even
    theirs = keras.ops.image.map_coordinates(
        image[0, :, :, 0], np.stack([y[0], x[0]]), order, fill_mode=fill_mode, fill_value=3.0
    )
    ours = map_coordinates_2d(ft.constant(image), y, x, order, fill_mode, 3.0)
    np.testing.assert_allclose(
        ours.numpy()[0, :, :, 0], keras.ops.convert_to_numpy(theirs), atol=1e-3
    )
