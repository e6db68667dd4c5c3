"""ft.random_index_shuffle and ft.image.extract_glimpse compared with TensorFlow 2.21:
the shuffle bit for bit over seeds, dtypes, shapes and block sizes; the glimpses with
``noise="zero"`` (the other fills are random in both). Skipped without TensorFlow
(``pip install tensorflow-cpu``)."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed")

import ferrotape as ft  # noqa: E402 - after the skip

SHUFFLES = [
    (np.arange(10, dtype=np.int32), [1, 2, 3], np.int32(9), 4),
    (np.arange(20, dtype=np.int64), [[i, 2 * i, -i] for i in range(20)], np.int64(70000), 6),
    (np.int64(5), [7, 8, 9], np.int64(2**40), 4),
    (np.array([0, 1, 2], np.uint32), [5, 5, 5], np.array([3, 100, 2**20], np.uint32), 8),
    (np.arange(50, dtype=np.int64), [0, 0, 0], np.int64(2**16), 4),
]


@pytest.mark.parametrize("index, seed, max_index, rounds", SHUFFLES)
def test_random_index_shuffle_matches(index, seed, max_index, rounds):
    want = tf.random_index_shuffle(index, seed, max_index, rounds=rounds)
    got = ft.random_index_shuffle(index, seed, max_index, rounds=rounds)
    assert got.dtype.name == want.dtype.name and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("centered", [True, False])
@pytest.mark.parametrize("normalized", [True, False])
def test_extract_glimpse_matches_with_zero_noise(centered, normalized):
    x = np.random.default_rng(3).standard_normal((4, 7, 6, 2)).astype(np.float32)
    rng = np.random.default_rng(4)
    scale = 1.2 if normalized else 6.0
    for _ in range(5):
        offsets = rng.uniform(-scale, scale, (4, 2)).astype(np.float32)
        for size in ([3, 4], [9, 2]):
            kwargs = {"centered": centered, "normalized": normalized, "noise": "zero"}
            want = tf.image.extract_glimpse(x, size, offsets, **kwargs)
            got = ft.image.extract_glimpse(x, size, offsets, **kwargs)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
