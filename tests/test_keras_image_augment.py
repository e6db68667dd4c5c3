"""The geometric image augmentation layers (RandomRotation, RandomZoom, RandomTranslation,
RandomShear) and the ``affine_transform`` they share, without TensorFlow: against a
pixel-by-pixel NumPy transcription of TensorFlow's ``ImageProjectiveTransformV3`` kernel,
hand-computed images, the layers' distribution rules and float64 finite differences.
``test_keras_image_augment_tf.py`` compares the same things with Keras itself."""

import math
import warnings

import numpy as np
import pytest
from test_keras_layers import fd_grad

import ferrotape as ft
from ferrotape.keras import layers
from ferrotape.keras.layers.preprocessing.image_preprocessing.affine import affine_transform

RNG = np.random.default_rng(11)
FILL_MODES = ("reflect", "wrap", "constant", "nearest")


def check_input_gradient(layer, x, training=True, rtol=1e-5, atol=1e-7):
    """d/dx sum(layer(x) * w) from the tape against finite differences (the image test
    files' own copy of test_keras_layers's, drawing ``w`` from their own generator so that
    they leave that module's random draws as they are)."""
    w = np.random.default_rng(5).standard_normal(layer(x, training=training).shape)

    def loss(xv):
        return float(ft.reduce_sum(layer(ft.constant(xv), training=training) * w))

    xt = ft.constant(x)
    with ft.GradientTape() as tape:
        tape.watch(xt)
        y = ft.reduce_sum(layer(xt, training=training) * w)
    np.testing.assert_allclose(tape.gradient(y, xt).numpy(), fd_grad(loss, x), rtol, atol)


# ------------------------------------------------------------ a reference for affine_transform
def _map(c, size, mode):
    """TF's MapCoordinate for one float coordinate (C++ truncation of positive quotients)."""
    if mode == "constant":
        return c
    if size <= 1:
        return 0.0
    if mode == "reflect":
        if c < 0:
            c = 2 * size * int(-c / (2 * size)) + c
            c = c + 2 * size if c < -size else -c - 1
        elif c > size - 1:
            c -= 2 * size * int(c / (2 * size))
            if c >= size:
                c = 2 * size - c - 1
    elif mode == "wrap":
        if c < 0:
            c += size * (int(-c / (size - 1)) + 1)
        elif c > size - 1:
            c -= size * int(c / (size - 1))
    return min(max(c, 0.0), size - 1.0)


def reference_transform(images, transforms, interpolation, fill_mode, fill_value):
    n, h, w, channels = images.shape
    out = np.empty_like(images)

    def read(b, y, x):
        inside = 0 <= y < h and 0 <= x < w
        return images[b, int(y), int(x)] if inside else np.full(channels, fill_value)

    for b in range(n):
        a0, a1, a2, b0, b1, b2, c0, c1 = transforms[b].astype(np.float32)
        for oy in range(h):
            for ox in range(w):
                k = c0 * ox + c1 * oy + np.float32(1)
                x = _map(float((a0 * ox + a1 * oy + a2) / k), w, fill_mode)
                y = _map(float((b0 * ox + b1 * oy + b2) / k), h, fill_mode)
                if interpolation == "nearest":  # std::round: halves away from zero
                    out[b, oy, ox] = read(
                        b,
                        math.copysign(math.floor(abs(y) + 0.5), y),
                        math.copysign(math.floor(abs(x) + 0.5), x),
                    )
                    continue
                y0, x0 = math.floor(y), math.floor(x)
                top = (x0 + 1 - x) * read(b, y0, x0) + (x - x0) * read(b, y0, x0 + 1)
                bottom = (x0 + 1 - x) * read(b, y0 + 1, x0) + (x - x0) * read(b, y0 + 1, x0 + 1)
                out[b, oy, ox] = (y0 + 1 - y) * top + (y - y0) * bottom
    return out


TRANSFORMS = np.array(
    [
        [1.0, 0.3, -5.2, 0.2, 1.1, 3.7, 0.0, 0.0],
        [0.5, 0.1, 2.3, -0.4, 0.8, -6.1, 0.01, -0.02],  # projective
        [1.0, 0.0, 37.3, 0.0, 1.0, -29.6, 0.0, 0.0],  # several periods away
    ],
    np.float32,
)


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
@pytest.mark.parametrize("fill_mode", FILL_MODES)
def test_affine_transform_matches_tensorflows_kernel(fill_mode, interpolation):
    images = RNG.uniform(0, 1, (3, 6, 8, 2))
    got = affine_transform(images, TRANSFORMS, interpolation, fill_mode, fill_value=0.5).numpy()
    want = reference_transform(images, TRANSFORMS, interpolation, fill_mode, 0.5)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_affine_transform_hand_values_and_forms():
    image = np.arange(6.0).reshape(2, 3, 1)
    shift = [1.0, 0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 0.0]  # output x reads input x - 1
    cases = {
        "constant": [[9.0, 0.0, 1.0], [9.0, 3.0, 4.0]],
        "nearest": [[0.0, 0.0, 1.0], [3.0, 3.0, 4.0]],
        "wrap": [[2.0, 0.0, 1.0], [5.0, 3.0, 4.0]],
        "reflect": [[0.0, 0.0, 1.0], [3.0, 3.0, 4.0]],
    }
    for mode, want in cases.items():
        got = affine_transform(image, shift, "nearest", mode, fill_value=9.0)
        assert got[:, :, 0].numpy().tolist() == want, mode
    # One transform for a batch; channels_first; integer images stay integers.
    batch = RNG.uniform(size=(2, 3, 4, 2))
    one = affine_transform(batch, [shift], "bilinear", "wrap").numpy()
    np.testing.assert_allclose(one[1], affine_transform(batch[1], shift, fill_mode="wrap"))
    first = affine_transform(np.transpose(batch, (0, 3, 1, 2)), shift, data_format="channels_first")
    np.testing.assert_allclose(
        np.transpose(first.numpy(), (0, 2, 3, 1)), affine_transform(batch, shift)
    )
    ints = affine_transform(np.arange(6, dtype=np.int32).reshape(2, 3, 1), shift, "nearest")
    assert ints.dtype == ft.int32 and ints[:, :, 0].numpy().tolist() == [[0, 0, 1], [0, 3, 4]]


def test_affine_transform_bad_arguments():
    image = np.zeros((4, 4, 1))
    with pytest.raises(ValueError, match="interpolation"):
        affine_transform(image, np.eye(3).ravel()[:8], interpolation="bicubic")
    with pytest.raises(ValueError, match="fill_mode"):
        affine_transform(image, np.eye(3).ravel()[:8], fill_mode="mirror")
    with pytest.raises(ValueError, match="rank"):
        affine_transform(np.zeros((4, 4)), np.eye(3).ravel()[:8])
    with pytest.raises(ValueError, match="8 numbers"):
        affine_transform(image, [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="3 transforms for 2 images"):
        affine_transform(np.zeros((2, 4, 4, 1)), np.zeros((3, 8)))


# ------------------------------------------------------------ the layers, hand-computed
SQUARE = np.arange(9.0).reshape(3, 3, 1)


def test_rotation_quarter_turns_and_half_turn():
    ccw = layers.RandomRotation((0.25, 0.25), dtype="float64")(SQUARE)
    np.testing.assert_allclose(ccw[:, :, 0], np.rot90(SQUARE[:, :, 0]), atol=1e-5)
    cw = layers.RandomRotation((-0.25, -0.25), dtype="float64")(SQUARE)
    np.testing.assert_allclose(cw[:, :, 0], np.rot90(SQUARE[:, :, 0], -1), atol=1e-5)
    half = layers.RandomRotation((0.5, 0.5), interpolation="nearest")(SQUARE[None])
    np.testing.assert_allclose(half[0, :, :, 0], SQUARE[::-1, ::-1, 0])


def test_translation_by_whole_pixels_with_every_fill_mode():
    row = np.arange(4.0).reshape(1, 4, 1)
    want = {
        "constant": [-1.0, 0.0, 1.0, 2.0],
        "nearest": [0.0, 0.0, 1.0, 2.0],
        "wrap": [3.0, 0.0, 1.0, 2.0],
        "reflect": [0.0, 0.0, 1.0, 2.0],
    }
    for mode, values in want.items():
        layer = layers.RandomTranslation(0.0, (0.25, 0.25), fill_mode=mode, fill_value=-1.0)
        assert layer(row)[0, :, 0].numpy().tolist() == values, mode


def test_zoom_keeps_the_centre_and_scales_about_it():
    x = np.arange(25.0).reshape(5, 5, 1)
    zoomed = layers.RandomZoom((-0.5, -0.5), dtype="float64")(x)[:, :, 0].numpy()
    # A window half as large about pixel (2, 2): output (i, j) reads (1 + i/2, 1 + j/2).
    rows, cols = np.meshgrid(1 + np.arange(5) / 2, 1 + np.arange(5) / 2, indexing="ij")
    np.testing.assert_allclose(zoomed, 5 * rows + cols)
    # Only the width: rows are untouched.
    wide = layers.RandomZoom(0.0, (-0.5, -0.5), dtype="float64")(x)[:, :, 0].numpy()
    np.testing.assert_allclose(wide, 5 * np.arange(5)[:, None] + 1 + np.arange(5) / 2)


def test_shear_reads_along_the_sheared_axis():
    x = np.arange(16.0).reshape(4, 4, 1)
    out = layers.RandomShear(x_factor=(0.5, 0.5), fill_mode="constant", dtype="float64")(x)
    out = out[:, :, 0].numpy()
    # Output (x, y) reads (x + s y, y), with s = 0.5 or -0.5 (Keras negates at random).
    for s in (0.5, -0.5):
        want = reference_transform(
            x[None], np.array([[1, s, 0, 0, 1, 0, 0, 0]], np.float32), "bilinear", "constant", 0
        )
        if np.allclose(out, want[0, :, :, 0]):
            break
    else:
        raise AssertionError(out)


# ------------------------------------------------------------ distribution and bookkeeping
def test_each_image_gets_its_own_draw_within_the_range():
    images = np.tile(np.arange(8.0).reshape(1, 1, 8, 1), (64, 1, 1, 1))
    layer = layers.RandomTranslation(0.0, 0.25, fill_mode="constant", fill_value=-1, seed=3)
    out = layer(images, training=True).numpy()[:, 0, :, 0]
    # A shift right by s in [-2, 2] pixels. Bilinear sampling of a ramp is exact, so away
    # from the border output column x holds x - s.
    inside = out[:, 2:6]
    shifts = (np.arange(2, 6) - inside).mean(axis=1)
    assert np.all(np.abs(shifts) <= 2.0 + 1e-5)
    assert np.unique(np.round(shifts, 4)).size > 32  # a draw per image
    assert shifts.min() < -1.0 and shifts.max() > 1.0


@pytest.mark.parametrize(
    "make",
    [
        lambda **k: layers.RandomRotation(0.2, **k),
        lambda **k: layers.RandomZoom(0.3, 0.2, **k),
        lambda **k: layers.RandomTranslation(0.2, 0.1, **k),
        lambda **k: layers.RandomShear(0.3, 0.2, **k),
    ],
)
def test_seeds_inference_and_single_images(make):
    images = RNG.uniform(size=(3, 6, 5, 2)).astype(np.float32)
    a, b = make(seed=5), make(seed=5)
    first = a(images).numpy()  # Keras's augmentation layers train by default
    np.testing.assert_array_equal(first, b(images).numpy())
    assert not np.allclose(first, a(images).numpy())  # the next call draws again
    np.testing.assert_array_equal(a(images, training=False).numpy(), images)
    assert a(images[0]).shape == images[0].shape
    assert a(images.astype(np.uint8), training=False).dtype == ft.float32


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.RandomRotation((0.1, 0.1), fill_mode="constant", dtype="float64"),
        lambda: layers.RandomZoom((-0.3, -0.3), fill_mode="wrap", dtype="float64"),
        lambda: layers.RandomTranslation((0.2, 0.2), (0.1, 0.1), dtype="float64"),
        lambda: layers.RandomZoom((0.2, 0.2), interpolation="nearest", dtype="float64"),
        # RandomShear negates its factors at random, so the layer itself cannot be checked
        # this way; the projective transform below covers its sampling.
        lambda: layers.Lambda(
            lambda x: affine_transform(x, TRANSFORMS[1], fill_mode="reflect"), dtype="float64"
        ),
    ],
)
def test_input_gradients_against_finite_differences(make):
    # Fixed factors make the transform the same on every call, as finite differences need
    # (the output is then linear in the pixels).
    check_input_gradient(make(), RNG.uniform(size=(2, 5, 6, 2)), training=True)


def test_layers_run_inside_ft_function_and_a_model():
    layer = layers.RandomRotation((0.1, 0.1))
    images = RNG.uniform(size=(2, 5, 5, 1)).astype(np.float32)
    traced = ft.function(lambda x: layer(x, training=True))
    np.testing.assert_allclose(traced(images), layer(images), atol=1e-6)
    model = ft.keras.Sequential(
        [ft.keras.Input((5, 5, 1)), layers.RandomZoom(0.2), layers.RandomTranslation(0.1, 0.1)]
    )
    np.testing.assert_array_equal(model.predict(images, verbose=0), images)


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.RandAugment(seed=3),
        lambda: layers.AugMix(seed=3),
        lambda: layers.RandomElasticTransform(seed=3),
        lambda: layers.RandomGaussianBlur(seed=3),
        lambda: layers.CutMix(seed=3),
        lambda: layers.Equalization(),
        lambda: layers.ContrastLimitedAdaptiveHistogramEqualization(),
    ],
    ids=[
        "RandAugment",
        "AugMix",
        "RandomElasticTransform",
        "RandomGaussianBlur",
        "CutMix",
        "Equalization",
        "CLAHE",
    ],
)
def test_layers_that_compute_in_python_trace_once_and_compute_on_every_call(make):
    # Their draws decide in Python (which augmentation, a kernel size), or numpy computes their
    # histograms: inside ft.function the layer is a host computation of the trace, so each call
    # draws and computes anew, as eagerly, and the function traces once instead of running
    # eagerly.
    eager_layer, traced_layer = make(), make()
    traced = ft.function(lambda x: traced_layer(x, training=True))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no eager fallback
        for _ in range(3):
            images = RNG.uniform(0, 255, size=(2, 12, 12, 3)).astype(np.float32)
            expected = eager_layer(images, training=True).numpy()
            np.testing.assert_allclose(traced(images).numpy(), expected, atol=1e-4)
    assert traced.experimental_get_tracing_count() == 1


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: layers.RandomRotation(1.5), "factor"),
        (lambda: layers.RandomRotation((0.1, 0.2, 0.3)), "factor"),
        (lambda: layers.RandomZoom(-1.0), "height_factor"),
        (lambda: layers.RandomZoom(0.2, (0.1, 1.2)), "width_factor"),
        (lambda: layers.RandomTranslation(0.1, "a"), "width_factor"),
        (lambda: layers.RandomShear(x_factor=-0.1), "x_factor"),
        (lambda: layers.RandomRotation(0.1, fill_value="red"), "fill_value"),
        (lambda: layers.RandomRotation(0.1, data_format="NCHW"), "data_format"),
    ],
)
def test_bad_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_unknown_modes_raise_not_implemented_as_keras():
    with pytest.raises(NotImplementedError, match="fill_mode"):
        layers.RandomRotation(0.1, fill_mode="mirror")
    with pytest.raises(NotImplementedError, match="interpolation"):
        layers.RandomZoom(0.1, interpolation="bicubic")
    with pytest.raises(ValueError, match="rank 3"):
        layers.RandomRotation(0.1)(np.zeros((4, 4)))


def test_factor_rules_follow_keras():
    assert layers.RandomRotation(0.2).factor == (-0.2, 0.2)
    assert layers.RandomRotation((0.3, -0.1)).factor == (-0.1, 0.3)
    zoom = layers.RandomZoom(-0.3)
    assert (zoom.height_lower, zoom.height_upper) == (-0.3, 0.3)
    assert layers.RandomShear(x_factor=0.4).x_factor == (-0.4, 0.4)


# ------------------------------------------------------------ perspective
def test_homography_maps_the_output_corners_to_the_input_corners():
    from ferrotape.keras.layers.preprocessing.image_preprocessing.affine import (
        compute_homography_matrix,
    )

    start = np.array([[[0, 0], [8, 0], [0, 6], [8, 6]]], np.float32)
    end = start + RNG.uniform(-2, 2, start.shape).astype(np.float32)
    a0, a1, a2, b0, b1, b2, c0, c1 = compute_homography_matrix(start, end).numpy()[0]
    for (sx, sy), (ex, ey) in zip(start[0], end[0], strict=True):
        k = c0 * ex + c1 * ey + 1
        np.testing.assert_allclose(
            [(a0 * ex + a1 * ey + a2) / k, (b0 * ex + b1 * ey + b2) / k], [sx, sy], atol=1e-4
        )


def test_perspective_transform_of_a_scaling_is_that_affine_transform():
    from ferrotape.keras.layers.preprocessing.image_preprocessing.affine import (
        perspective_transform,
    )

    images = RNG.uniform(size=(2, 6, 7, 2))
    start = np.array([[0, 0], [6, 0], [0, 5], [6, 5]], np.float32)
    got = perspective_transform(images, start, 2 * start, fill_value=1.5).numpy()
    want = affine_transform(images, [0.5, 0, 0, 0, 0.5, 0, 0, 0], fill_value=1.5).numpy()
    np.testing.assert_allclose(got, want, atol=1e-5)
    same = perspective_transform(images, start, start, "nearest").numpy()
    np.testing.assert_allclose(same, images, atol=1e-6)
    with pytest.raises(ValueError, match="4, 2"):
        perspective_transform(images, start[:3], start[:3])


def test_random_perspective_moves_corners_by_at_most_half_the_scale():
    images = RNG.uniform(size=(64, 6, 6, 1)).astype(np.float32)
    layer = layers.RandomPerspective((1.0, 1.0), scale=0.4, seed=2)
    out = layer(images).numpy()
    # The top-left corner never moves; every image is warped (p = 1).
    np.testing.assert_allclose(out[:, 0, 0], images[:, 0, 0], atol=1e-5)
    assert all(not np.allclose(o, i) for o, i in zip(out, images, strict=True))
    np.testing.assert_array_equal(layers.RandomPerspective((0.0, 0.0))(images).numpy(), images)
    np.testing.assert_array_equal(layer(images, training=False).numpy(), images)
    with pytest.raises(ValueError, match="scale"):
        layers.RandomPerspective(scale=1.5)


# ------------------------------------------------------------ elastic
def test_elastic_transform_moves_both_coordinates_by_one_smooth_field():
    rows, cols = np.meshgrid(np.arange(32.0), np.arange(32.0), indexing="ij")
    ramps = np.stack([rows * 4, cols * 4], axis=-1)[None]  # bilinear samples ramps exactly
    layer = layers.RandomElasticTransform((1.0, 1.0), scale=(1.0, 1.0), seed=5, dtype="float64")
    out = layer(ramps).numpy()[0]
    dy, dx = out[..., 0] / 4 - rows, out[..., 1] / 4 - cols
    inside = (out > 8).all(-1) & (out < 116).all(-1)  # points read well inside the image
    assert inside.mean() > 0.5
    # Keras draws both noise fields from one seed: the two displacements are equal.
    np.testing.assert_allclose(dy[inside], dx[inside], atol=1e-6)
    # alpha = 0.1 * 32; the blurred noise moves neighbours alike.
    assert 0.05 < np.abs(dy[inside]).max() < 3.2 * 3
    pairs = inside[1:] & inside[:-1]
    assert np.corrcoef(dy[1:][pairs], dy[:-1][pairs])[0, 1] > 0.5  # blurred: neighbours agree


def test_elastic_transform_probability_scale_and_settings():
    x = RNG.uniform(0, 255, (3, 16, 16, 3)).astype(np.float32)
    np.testing.assert_array_equal(layers.RandomElasticTransform((0.0, 0.0))(x).numpy(), x)
    np.testing.assert_array_equal(layers.RandomElasticTransform(scale=0.0)(x).numpy(), x)
    layer = layers.RandomElasticTransform(seed=1)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    again = layers.RandomElasticTransform(seed=1)
    np.testing.assert_array_equal(layer(x).numpy(), again(x).numpy())
    with pytest.raises(NotImplementedError, match="fill_mode"):
        layers.RandomElasticTransform(fill_mode="bounce")
    with pytest.raises(ValueError, match="scale"):
        layers.RandomElasticTransform(scale=2.0)


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("fill_mode", ["constant", "nearest", "wrap", "reflect", "mirror"])
def test_map_coordinates_against_a_scalar_reference(fill_mode, order):
    from ferrotape.keras.layers.preprocessing.image_preprocessing.random_elastic_transform import (
        map_coordinates_2d,
    )

    image = RNG.uniform(size=(1, 5, 7, 1))
    y, x = RNG.uniform(-12, 16, (1, 6, 8)), RNG.uniform(-12, 18, (1, 6, 8))

    def fix(i, size):  # Keras's rules (its TF backend's), one integer at a time
        if fill_mode == "nearest":
            return min(max(i, 0), size - 1)
        if fill_mode == "wrap":
            return i % size
        if fill_mode in ("reflect", "mirror"):
            # |i| folded with period 2 * size; above size, mirrored (one less for reflect).
            i = abs(i) % (2 * size)
            if i >= size:
                i = 2 * size - i - (fill_mode == "reflect")
            return min(i, size - 1)
        return i

    def read(i, j):
        if fill_mode == "constant" and not (0 <= i < 5 and 0 <= j < 7):
            return 3.0
        return image[0, fix(i, 5), fix(j, 7), 0]

    want = np.empty((6, 8))
    for r in range(6):
        for c in range(8):
            yy, xx = y[0, r, c], x[0, r, c]
            if order == 0:
                want[r, c] = read(int(np.round(yy)), int(np.round(xx)))
                continue
            y0, x0 = int(np.floor(yy)), int(np.floor(xx))
            fy, fx = yy - y0, xx - x0
            want[r, c] = (
                (1 - fy) * (1 - fx) * read(y0, x0)
                + (1 - fy) * fx * read(y0, x0 + 1)
                + fy * (1 - fx) * read(y0 + 1, x0)
                + fy * fx * read(y0 + 1, x0 + 1)
            )
    got = map_coordinates_2d(ft.constant(image), y, x, order, fill_mode, 3.0).numpy()[0, :, :, 0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
