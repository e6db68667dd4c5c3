"""``ContrastLimitedAdaptiveHistogramEqualization``: hand values for one tile, the
arguments' effects, and Keras's outputs where TensorFlow is installed."""

import numpy as np
import pytest

import ferrotape as ft

CLAHE = ft.keras.layers.ContrastLimitedAdaptiveHistogramEqualization
IMAGES = (np.random.default_rng(0).random((2, 21, 18, 3)) ** 2 * 255).astype("float32")


def test_one_tile_without_clipping_is_histogram_equalization():
    # Four pixels, one per level: the cumulative counts 1..4 map to (count - 1) * 255 / 3.
    image = np.array([[[0.0], [50.0], [100.0], [200.0]]])
    out = CLAHE(clip_limit=0, tile_grid_size=(1, 1))(image).numpy()
    np.testing.assert_allclose(out[0, :, 0], [0.0, 85.0, 170.0, 255.0], rtol=1e-6)


def test_clipping_limits_the_contrast_gain():
    flat = np.full((8, 8, 1), 120.0, "float32")
    flat[0, 0, 0] = 121.0
    # Unclipped, the mid-grey tile is pushed to near white (63 of 64 pixels at or below 120);
    # clipped hard, the histogram is nearly uniform and the mapping nearly the identity.
    stretched = CLAHE(clip_limit=0, tile_grid_size=(1, 1))(flat).numpy()
    limited = CLAHE(clip_limit=1.0, tile_grid_size=(1, 1))(flat).numpy()
    np.testing.assert_allclose(stretched[1:, :, 0], 63 * 255 / 64, rtol=1e-6)
    assert np.all(np.abs(limited - flat) < 2.0)


def test_formats_ranges_and_dtypes_agree():
    layer = CLAHE(clip_limit=2.0, tile_grid_size=(3, 4))
    base = layer(IMAGES).numpy()
    assert base.shape == IMAGES.shape and base.min() >= 0 and base.max() <= 255
    first = CLAHE(clip_limit=2.0, tile_grid_size=(3, 4), data_format="channels_first")
    np.testing.assert_allclose(
        first(IMAGES.transpose(0, 3, 1, 2)).numpy(), base.transpose(0, 3, 1, 2), atol=1e-4
    )
    unit = CLAHE(clip_limit=2.0, tile_grid_size=(3, 4), value_range=(0, 1))(IMAGES / 255.0)
    np.testing.assert_allclose(unit.numpy() * 255.0, base, atol=1e-3)
    as_uint8 = layer(IMAGES.astype("uint8"))
    assert as_uint8.dtype == ft.uint8
    np.testing.assert_array_equal(layer(IMAGES[0]).numpy(), base[0])
    # A filter, not an augmentation: inference applies it too.
    np.testing.assert_array_equal(layer(IMAGES, training=False).numpy(), base)
    again = CLAHE.from_config(layer.get_config())
    assert (again.clip_limit, again.tile_grid_size) == (2.0, (3, 4))


def test_matches_keras():
    keras = pytest.importorskip("keras", reason="Keras 3 (with TensorFlow) is not installed")
    theirs_layer = keras.layers.ContrastLimitedAdaptiveHistogramEqualization
    for kwargs in [{}, {"clip_limit": 2.0, "tile_grid_size": (3, 4)}, {"clip_limit": 0}]:
        ours = CLAHE(**kwargs)(IMAGES).numpy()
        theirs = np.asarray(theirs_layer(**kwargs)(IMAGES))
        np.testing.assert_allclose(ours, theirs, atol=1e-3)
    ours = CLAHE(tile_grid_size=(2, 3))(IMAGES.astype("uint8")).numpy()
    theirs = np.asarray(theirs_layer(tile_grid_size=(2, 3))(IMAGES.astype("uint8")))
    np.testing.assert_array_equal(ours, theirs)
