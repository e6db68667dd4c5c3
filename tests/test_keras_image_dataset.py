"""``keras.utils.image_dataset_from_directory`` on a directory of PNG files: Keras's indexing
(classes by subdirectory, sorted files, seeded shuffles, validation splits), label modes,
decoded pixel values, and Keras's own results where TensorFlow is installed."""

import os

import numpy as np
import pytest

import ferrotape as ft

Image = pytest.importorskip("PIL.Image", reason="Pillow decodes the image files")
from_directory = ft.keras.utils.image_dataset_from_directory
COUNTS = {"cats": 5, "dogs": 4, "zebra": 3}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(0)
    for name, count in COUNTS.items():
        os.makedirs(root / name)
        for i in range(count):
            pixels = rng.integers(0, 255, (6, 8, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / name / f"img_{i}.png")
    (root / "cats" / "notes.txt").write_text("not an image")
    return root


def _pixels(path):
    return np.asarray(Image.open(path), dtype="float32")


def test_indexing_labels_and_pixels(folder):
    ds = from_directory(folder, image_size=(6, 8), batch_size=5, shuffle=False, verbose=False)
    assert ds.class_names == ["cats", "dogs", "zebra"]
    names = [os.path.relpath(p, folder) for p in ds.file_paths]
    assert names == [f"{c}/img_{i}.png" for c, n in COUNTS.items() for i in range(n)]
    batches = list(ds)
    assert [b[0].shape.as_list() for b in batches] == [[5, 6, 8, 3], [5, 6, 8, 3], [2, 6, 8, 3]]
    images = np.concatenate([b[0].numpy() for b in batches])
    labels = np.concatenate([b[1].numpy() for b in batches])
    assert labels.tolist() == [0] * 5 + [1] * 4 + [2] * 3 and labels.dtype == np.int32
    # At its own size an image is resized to itself: the decoded pixels, as float32.
    np.testing.assert_allclose(images[6], _pixels(ds.file_paths[6]), atol=1e-4)


def test_seeded_shuffle_keeps_labels_with_their_files(folder):
    ds = from_directory(folder, image_size=(6, 8), batch_size=None, seed=7, verbose=False)
    again = from_directory(folder, image_size=(6, 8), batch_size=None, seed=7, verbose=False)
    assert ds.file_paths == again.file_paths
    assert ds.file_paths != sorted(ds.file_paths)
    for image, label in ds:
        match = [p for p in ds.file_paths if np.allclose(_pixels(p), image.numpy(), atol=1e-4)]
        assert len(match) == 1
        assert os.path.basename(os.path.dirname(match[0])) == ds.class_names[int(label)]


def test_validation_split_and_label_modes(folder):
    train, val = from_directory(
        folder, image_size=(3, 4), validation_split=0.25, subset="both", seed=1, verbose=False
    )
    assert len(train.file_paths) == 9 and len(val.file_paths) == 3
    assert not set(train.file_paths) & set(val.file_paths)
    with pytest.raises(ValueError, match="seed"):
        from_directory(folder, validation_split=0.25, subset="training", verbose=False)
    one_hot = from_directory(
        folder, label_mode="categorical", batch_size=12, shuffle=False, image_size=(3, 4)
    )
    assert next(iter(one_hot))[1].numpy().sum(axis=0).tolist() == [5.0, 4.0, 3.0]
    binary = from_directory(
        folder, label_mode="binary", class_names=["zebra", "dogs"], shuffle=False, batch_size=7
    )
    assert next(iter(binary))[1].numpy().ravel().tolist() == [0.0] * 3 + [1.0] * 4
    with pytest.raises(ValueError, match="exactly 2"):
        from_directory(folder, label_mode="binary")
    unlabelled = from_directory(folder, labels=None, batch_size=12, image_size=(3, 4))
    assert next(iter(unlabelled)).shape.as_list() == [12, 3, 4, 3]
    given = from_directory(folder, labels=[1] * 6 + [0] * 6, shuffle=False, batch_size=12)
    assert given.class_names == ["0", "1"]
    with pytest.raises(ValueError, match="color_mode"):
        from_directory(folder, color_mode="cmyk")


def test_matches_keras(folder):
    keras = pytest.importorskip("keras", reason="Keras 3 (with TensorFlow) is not installed")
    for kwargs in [
        {"image_size": (5, 7)},
        {"image_size": (4, 9), "pad_to_aspect_ratio": True, "interpolation": "bicubic"},
        {"image_size": (5, 5), "crop_to_aspect_ratio": True, "label_mode": "categorical"},
        {"image_size": (5, 7), "validation_split": 0.4, "subset": "validation"},
    ]:
        args = dict(kwargs, shuffle="subset" in kwargs, seed=4, batch_size=12, verbose=False)
        ours, theirs = (
            from_directory(folder, **args),
            keras.utils.image_dataset_from_directory(str(folder), **args),
        )
        assert ours.file_paths == theirs.file_paths and ours.class_names == theirs.class_names
        if "subset" in kwargs:
            continue  # the data sets' own shuffles draw from different random streams
        (x_ours, y_ours), (x_theirs, y_theirs) = next(iter(ours)), next(iter(theirs))
        np.testing.assert_allclose(x_ours.numpy(), np.asarray(x_theirs), atol=1e-3)
        np.testing.assert_array_equal(y_ours.numpy(), np.asarray(y_theirs))
