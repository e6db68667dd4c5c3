"""keras.layers.Hashing and the FarmHash fingerprint under it, against values TensorFlow 2.21 /
Keras 3 computes (recorded here, so the test runs without TensorFlow)."""

import numpy as np
import pytest

import ferrotape as ft
from ferrotape._farmhash import fingerprint64
from ferrotape.keras import layers

# tf.strings.to_hash_bucket_fast(s, 2**63 - 1) for strings covering each of FarmHash's length
# classes (0-16, 17-32, 33-64 bytes and the 64-byte block loop): Fingerprint64(s) mod 2**63 - 1.
FINGERPRINTS = {
    "": 1936946117179621456,
    "a": 3694432073954588132,
    "hello": 3786372426573024489,
    "thal_reversible": 1148258458972782480,
    "abcdefghijklmnopqrstuvwxyz": 6822236678030897597,
    "the quick brown fox jumps over the lazy dog.": 860533476459904600,
    "x" * 65: 4935023790501551929,
    "0123456789" * 13: 1497403020669705477,
}


@pytest.mark.parametrize(("text", "bucket"), sorted(FINGERPRINTS.items()))
def test_fingerprint64_is_farmhash(text, bucket):
    assert fingerprint64(text.encode()) % (2**63 - 1) == bucket


def test_integers_hash_by_their_decimal_text_and_strings_by_their_bytes():
    # Keras 3: Hashing(num_bins=5) on [[0], [1], [17], [9999], [-3]] and on "A".."E".
    ints = layers.Hashing(num_bins=5)(np.array([[0], [1], [17], [9999], [-3]]))
    assert ints.dtype == ft.int64 and ints.shape == (5, 1)
    assert ints.numpy().ravel().tolist() == [0, 4, 3, 4, 4]
    letters = layers.Hashing(num_bins=5)(np.array([["A"], ["B"], ["C"], ["D"], ["E"]]))
    assert letters.numpy().ravel().tolist() == [4, 3, 2, 0, 2]
    assert layers.Hashing(num_bins=5)([b"A", b"B"]).numpy().tolist() == [4, 3]
    # Float inputs are cast to the layer's int64 first (Keras's autocast): 1.5 hashes as 1.
    assert layers.Hashing(num_bins=5)(np.array([[1.5]])).numpy().tolist() == [[4]]


def test_mask_value_takes_bin_zero():
    masked = layers.Hashing(num_bins=5, mask_value="")(np.array([["A"], [""], ["C"]]))
    assert masked.numpy().ravel().tolist() == [1, 0, 4]
    masked = layers.Hashing(num_bins=5, mask_value=0)(np.array([[0], [1], [2]]))
    assert masked.numpy().ravel().tolist() == [0, 2, 4]


def test_encoded_output_modes():
    one_hot = layers.Hashing(num_bins=4, output_mode="one_hot")(np.array([[1], [2]]))
    assert one_hot.dtype == ft.float32
    assert one_hot.numpy().tolist() == [[0, 1, 0, 0], [0, 0, 0, 1]]
    multi = layers.Hashing(num_bins=4, output_mode="multi_hot")(np.array([[1, 2]]))
    assert multi.numpy().tolist() == [[0, 1, 0, 1]]
    count = layers.Hashing(num_bins=4, output_mode="count")(np.array([[1, 1, 2]]))
    assert count.numpy().tolist() == [[0, 2, 0, 1]]
    # In a functional model on an int64 Input.
    ids = ft.keras.Input(shape=(1,), dtype="int64")
    encoded = layers.Hashing(num_bins=8, output_mode="one_hot")(ids)
    assert encoded.shape == (None, 8)


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_bins"):
        layers.Hashing(num_bins=0)
    with pytest.raises(ValueError, match="output_mode"):
        layers.Hashing(num_bins=3, output_mode="x")
    with pytest.raises(ValueError, match="salt is not supported"):
        layers.Hashing(num_bins=3, salt=1)
    with pytest.raises(TypeError, match="Hashing: expected integer or string inputs"):
        layers.Hashing(num_bins=3)(np.array([True, False]))
