"""MixUp, CutMix and RandomErasing, and the dict inputs (images with labels) of the image
augmentation layers, without TensorFlow: the structure of each output (which pixels come
from where, with which weights), the draws' ranges, configs and errors."""

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras import layers

RNG = np.random.default_rng(41)
IMAGES = RNG.uniform(0, 255, (6, 8, 10, 3))
LABELS = np.eye(3)[[0, 1, 2, 0, 1, 2]]


def blend_of(out, own, images):
    """``(j, w)`` such that ``out == w * own + (1 - w) * images[j]``, or ``(None, None)``."""
    for j, other in enumerate(images):
        diff = own - other
        if not np.any(diff):
            continue
        w = np.sum((out - other) * diff) / np.sum(diff * diff)
        if np.allclose(out, w * own + (1 - w) * other, atol=1e-6):
            return j, w
    return None, None


def test_mix_up_blends_images_and_labels_with_the_same_weights():
    out = layers.MixUp(alpha=0.8, seed=3, dtype="float64")({"images": IMAGES, "labels": LABELS})
    images, labels = out["images"].numpy(), out["labels"].numpy()
    mixed = 0
    for i in range(len(IMAGES)):
        if np.allclose(images[i], IMAGES[i]):  # paired with itself
            np.testing.assert_allclose(labels[i], LABELS[i], atol=1e-6)
            continue
        j, w = blend_of(images[i], IMAGES[i], IMAGES)
        assert j is not None and 0 <= w <= 1, i
        np.testing.assert_allclose(labels[i], w * LABELS[i] + (1 - w) * LABELS[j], atol=1e-6)
        mixed += 1
    assert mixed >= 3


def test_mix_up_weights_follow_the_beta_distribution():
    # Beta(a, a) has mean 1/2 and variance 1 / (4 (2a + 1)); with images 0 and 1 only,
    # every weight can be read back.
    x = np.stack([np.zeros((1, 1, 1)), np.ones((1, 1, 1))] * 200)
    out = layers.MixUp(alpha=0.5, seed=1)(x).numpy().ravel()
    partner_is_other = out != x.ravel()
    w = np.where(x.ravel() == 0, 1 - out, out)[partner_is_other]
    assert abs(w.mean() - 0.5) < 0.06 and abs(w.var() - 1 / 8) < 0.03


def test_cut_mix_pastes_a_box_from_a_partner_and_weights_labels_by_area():
    own = np.eye(len(IMAGES))  # a label per image, to read the weights back
    out = layers.CutMix(seed=5, dtype="float64")({"images": IMAGES, "labels": own})
    images, labels = out["images"].numpy(), out["labels"].numpy()
    cut = 0
    for i in range(len(IMAGES)):
        changed = np.any(images[i] != IMAGES[i], axis=-1)
        if not changed.any():
            continue
        cut += 1
        rows, cols = np.nonzero(changed)
        box = np.s_[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
        assert changed[box].all()  # one rectangle
        partners = [j for j in range(len(IMAGES)) if np.array_equal(images[i][box], IMAGES[j][box])]
        assert partners, i
        w = labels[i, i]
        np.testing.assert_allclose(labels[i, partners[0]], 1 - w, atol=1e-6)
        # The label weight is the box's real-valued area, the pixels its rounding.
        area = changed.sum() / changed.size
        assert abs((1 - w) - area) < 0.3, (i, w, area)
    assert cut >= 3


def test_cut_mix_leaves_single_images_and_inference_alone():
    layer = layers.CutMix(seed=1)
    np.testing.assert_array_equal(layer(IMAGES[0]).numpy(), IMAGES[0].astype(np.float32))
    np.testing.assert_array_equal(layer(IMAGES, training=False).numpy(), IMAGES.astype(np.float32))


def test_erasing_fills_one_box_per_image_with_the_fill_value():
    layer = layers.RandomErasing((1.0, 1.0), scale=(0.25, 0.25), fill_value=[1.0, 2.0, 3.0])
    out = layer(IMAGES).numpy()
    for image in out:
        erased = np.all(image == [1.0, 2.0, 3.0], axis=-1)
        rows, cols = np.nonzero(erased)
        # Each side is sqrt(0.25) = half the image: 4 or 5 rows of 8, 5 or 6 columns of 10.
        assert rows.max() - rows.min() + 1 in (4, 5) and cols.max() - cols.min() + 1 in (5, 6)
        assert erased[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1].all()
    whole = layers.RandomErasing((1.0, 1.0), (1.0, 1.0), fill_value=300.0)(IMAGES).numpy()
    np.testing.assert_array_equal(whole, np.full_like(IMAGES, 255.0))  # fills are clipped
    never = layers.RandomErasing((0.0, 0.0), dtype="float64")(IMAGES).numpy()
    np.testing.assert_array_equal(never, IMAGES)


def test_erasing_with_noise_and_seeds():
    a, b = layers.RandomErasing(seed=4), layers.RandomErasing(seed=4)
    first = a(IMAGES).numpy()
    np.testing.assert_array_equal(first, b(IMAGES).numpy())
    assert not np.array_equal(first, a(IMAGES).numpy())
    changed = first != IMAGES.astype(np.float32)
    assert 0 < changed.mean() < 0.5 and first.min() >= 0 and first.max() <= 255


def test_dict_inputs_pass_labels_through_the_other_layers():
    out = layers.RandomRotation((0.25, 0.25))({"images": IMAGES[0], "labels": LABELS[0]})
    assert set(out) == {"images", "labels"} and out["images"].shape == IMAGES[0].shape
    np.testing.assert_array_equal(out["labels"].numpy(), LABELS[0])
    with pytest.raises(ValueError, match="bounding boxes"):
        layers.RandomZoom(0.1)({"images": IMAGES, "bounding_boxes": np.zeros((6, 1, 4))})


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: layers.MixUp(alpha=0), "alpha"),
        (lambda: layers.CutMix(factor=2.0), "factor"),
        (lambda: layers.RandomErasing(scale=(1.5, 2.0)), "scale"),
        (lambda: layers.RandomErasing(fill_value="black"), "fill_value"),
    ],
)
def test_bad_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_beta_samples():
    draws = ft.keras.random.beta([4000], 2.0, 5.0, seed=3).numpy()
    assert abs(draws.mean() - 2 / 7) < 0.01 and draws.min() >= 0 and draws.max() <= 1
    with pytest.raises(ValueError, match="positive"):
        ft.keras.random.beta([2], 0.0, 1.0)
