"""ft.random_index_shuffle (a permutation per seed, TensorFlow's values pinned for a few
seeds, dtypes and shapes) and ft.image.extract_glimpse (offset conventions against a numpy
reference, the noise fills). Runs without TensorFlow (tests/test_shuffle_glimpse_tf.py compares
with it)."""

import numpy as np
import pytest

import ferrotape as ft


@pytest.mark.parametrize("max_index", [0, 1, 9, 1000, 70000])
def test_index_shuffle_is_a_permutation(max_index):
    n = min(max_index, 3000) + 1
    out = ft.random_index_shuffle(ft.range(n, dtype=ft.int64), [4, 5, 6], max_index).numpy()
    assert out.dtype == np.int64 and len(set(out.tolist())) == n
    assert out.min() >= 0 and out.max() <= max_index
    if max_index < 3000:
        assert sorted(out.tolist()) == list(range(max_index + 1))


def test_index_shuffle_pinned_values_seeds_and_shapes():
    # Values TensorFlow 2.21 gives (tests/test_shuffle_glimpse_tf.py checks the same calls).
    got = ft.random_index_shuffle(ft.range(10), [1, 2, 3], 9).numpy()
    np.testing.assert_array_equal(got[:5], [2, 0, 6, 4, 8])
    assert got.dtype == np.int32
    scalar = ft.random_index_shuffle(
        ft.constant(5, ft.int64), [7, 8, 9], ft.constant(2**40, ft.int64)
    )
    assert scalar.shape == () and int(scalar) == 300218818
    # One seed row per index, and seeds taken modulo 2 ** 32.
    rows = ft.random_index_shuffle(ft.constant([3, 3]), [[1, 2, 3], [1, 2, 3 + 2**32]], 9)
    assert rows.numpy()[0] == rows.numpy()[1]
    other = ft.random_index_shuffle(ft.range(10), [1, 2, 4], 9).numpy()
    assert other.tolist() != got.tolist()
    assert (
        ft.random_index_shuffle(ft.range(10), [1, 2, 3], 9, rounds=8).numpy().tolist()
        != got.tolist()
    )


def test_index_shuffle_bad_input():
    with pytest.raises(ValueError, match="rounds must be even"):
        ft.random_index_shuffle(1, [1, 2, 3], 9, rounds=5)
    with pytest.raises(ValueError, match="seed"):
        ft.random_index_shuffle(1, [1, 2], 9)
    with pytest.raises(ValueError, match="index must be int32"):
        ft.random_index_shuffle(1.0, [1, 2, 3], 9)


IMAGE = np.arange(2 * 5 * 6 * 2, dtype=np.float32).reshape(2, 5, 6, 2)


def np_glimpse(image, size, top, left):
    out = np.zeros((size[0], size[1], image.shape[2]), np.float32)
    for r in range(size[0]):
        for c in range(size[1]):
            if 0 <= top + r < image.shape[0] and 0 <= left + c < image.shape[1]:
                out[r, c] = image[top + r, left + c]
    return out


@pytest.mark.parametrize(
    "centered, normalized, offsets, corners",
    [
        # centre at (0.3 * 5 / 2 + 2.5, ...), minus half the window, truncated toward zero
        (True, True, [[0.3, -0.6], [-0.9, 0.75]], [(1, 0), (-1, 3)]),
        (True, False, [[1.6, -2.5], [-3.5, 0.4]], [(4, 0), (-1, 3)]),
        (False, True, [[0.3, -0.6], [0.5, 0.9]], [(1, -3), (2, 5)]),
        (False, False, [[1.6, -2.5], [3.5, 4.4]], [(1, -2), (3, 4)]),
    ],
)
def test_extract_glimpse_offsets(centered, normalized, offsets, corners):
    got = ft.image.extract_glimpse(
        IMAGE, [3, 4], offsets, centered=centered, normalized=normalized, noise="zero"
    )
    assert got.shape == (2, 3, 4, 2) and got.dtype == ft.float32
    for b, (top, left) in enumerate(corners):
        np.testing.assert_array_equal(got.numpy()[b], np_glimpse(IMAGE[b], (3, 4), top, left))


def test_extract_glimpse_noise_fills_only_outside():
    x = np.random.default_rng(0).uniform(2.0, 3.0, (1, 4, 4, 1)).astype(np.float32)
    for noise in ("uniform", "gaussian"):
        got = ft.image.extract_glimpse(
            x, [3, 3], [[-1.0, -1.0]], centered=False, normalized=False, noise=noise
        ).numpy()[0, :, :, 0]
        np.testing.assert_array_equal(got[1:, 1:], x[0, :2, :2, 0])
        outside = np.concatenate([got[0], got[1:, 0]])
        assert (outside >= x.min()).all() and (outside <= x.max()).all()
        assert len(set(outside.tolist())) > 1
    with pytest.raises(ValueError, match="noise must be"):
        ft.image.extract_glimpse(x, [3, 3], [[0.0, 0.0]], noise="pink")
    with pytest.raises(ValueError, match=r"offsets must be \[batch, 2\]"):
        ft.image.extract_glimpse(x, [3, 3], [0.0, 0.0])


def test_extract_glimpse_sizes_and_offsets_as_tf():
    image = ft.reshape(ft.range(4.0), [1, 2, 2, 1])
    # size is int32: 2**40 wraps to 0 (TensorFlow: an empty [1, 0, 2, 1] glimpse).
    assert ft.image.extract_glimpse(image, [2**40, 2], [[0.0, 0.0]]).shape == (1, 0, 2, 1)
    # A NaN or infinite offset is nowhere: zeros (TensorFlow), not numpy's ValueError.
    for far in (float("nan"), float("inf")):
        glimpse = ft.image.extract_glimpse(image, [2, 2], [[far, 0.0]], noise="zero")
        assert glimpse.numpy().tolist() == [[[[0.0], [0.0]], [[0.0], [0.0]]]]
    with pytest.raises(ft.errors.ResourceExhaustedError, match="extract_glimpse: OOM"):
        ft.image.extract_glimpse(image, [2**31 - 1, 2**31 - 1], [[0.0, 0.0]])
    with pytest.raises(ValueError, match=r"size must be 2 ints"):
        ft.image.extract_glimpse(image, [2, 2, 2], [[0.0, 0.0]])
