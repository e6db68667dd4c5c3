"""ft.keras.saving: safetensors weight files, atomic writes, ordered names, checks on load."""

import json
import os
import struct

import numpy as np
import pytest
import safetensors.numpy

import ferrotape as ft
from ferrotape.keras import saving
from ferrotape.keras.saving.safetensors_file import ORDER_KEY


def sample_arrays():
    rng = np.random.default_rng(0)
    return {
        "0002/dense/kernel": rng.normal(size=(3, 4)).astype(np.float32),
        "0000/conv/bias": np.arange(5, dtype=np.float64),
        "0001/bn/moving_mean": rng.normal(size=(2,)).astype(np.float16),
        "z_int": np.array([[1, -2], [3, 4]], dtype=np.int64),
        "a_scalar": np.asarray(7, dtype=np.int32),
        "m_bool": np.array([True, False, True]),
        "empty": np.zeros((0, 3), dtype=np.float32),
        "bytes": np.arange(6, dtype=np.uint8).reshape(2, 3),
    }


def assert_arrays_equal(got, expected):
    assert list(got) == list(expected)
    for name, array in expected.items():
        assert got[name].dtype == array.dtype and got[name].shape == array.shape, name
        np.testing.assert_array_equal(got[name], array)


def header_and_data(path):
    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8 : 8 + size]), raw[8 + size :]


def write_raw(path, header, data):
    encoded = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + data)


def test_round_trip_keeps_dtypes_shapes_values_and_order(tmp_path):
    path = tmp_path / "w.safetensors"
    arrays = sample_arrays()
    saving.save_weights_file(path, arrays)
    assert_arrays_equal(saving.load_weights_file(path), arrays)
    # Pairs work as an ordered mapping too, in any order.
    reverse = list(arrays.items())[::-1]
    saving.save_weights_file(path, reverse)
    assert_arrays_equal(saving.load_weights_file(str(path)), dict(reverse))


def test_non_contiguous_arrays_and_variables_are_stored_by_value(tmp_path):
    path = tmp_path / "w.safetensors"
    transposed = np.arange(6, dtype=np.float32).reshape(2, 3).T
    strided = np.arange(10.0)[::3]
    variable = ft.Variable([[1.5, -2.0]], name="kernel")
    saving.save_weights_file(path, {"t": transposed, "s": strided, "v": variable})
    loaded = saving.load_weights_file(path)
    np.testing.assert_array_equal(loaded["t"], [[0, 3], [1, 4], [2, 5]])
    np.testing.assert_array_equal(loaded["s"], [0.0, 3.0, 6.0, 9.0])
    np.testing.assert_array_equal(loaded["v"], [[1.5, -2.0]])
    assert loaded["v"].dtype == np.float32


def test_metadata_round_trips_without_the_order_key(tmp_path):
    path = tmp_path / "w.safetensors"
    metadata = {"format": "ferrotape", "epoch": "12", "note": "ü ✓"}
    saving.save_weights_file(path, {"b": np.ones(2), "a": np.zeros(1)}, metadata)
    arrays, loaded = saving.load_weights_file(path, return_metadata=True)
    assert loaded == metadata and list(arrays) == ["b", "a"]
    header, _ = header_and_data(path)
    assert json.loads(header["__metadata__"][ORDER_KEY]) == ["b", "a"]


def test_files_are_plain_safetensors(tmp_path):
    path = tmp_path / "w.safetensors"
    arrays = sample_arrays()
    saving.save_weights_file(path, arrays)
    read_back = safetensors.numpy.load_file(str(path))
    assert set(read_back) == set(arrays)
    for name, array in arrays.items():
        np.testing.assert_array_equal(read_back[name], array)
        assert read_back[name].dtype == array.dtype


def test_files_from_other_writers_load_in_data_order(tmp_path):
    path = tmp_path / "other.safetensors"
    arrays = {"b": np.ones((2, 2), np.float32), "a": np.arange(3, dtype=np.int32)}
    safetensors.numpy.save_file(arrays, str(path), metadata={"k": "v"})
    header, _ = header_and_data(path)
    by_offset = sorted(arrays, key=lambda name: header[name]["data_offsets"][0])
    loaded, metadata = saving.load_weights_file(path, return_metadata=True)
    assert list(loaded) == by_offset and metadata == {"k": "v"}
    for name in arrays:
        np.testing.assert_array_equal(loaded[name], arrays[name])


def test_bad_arguments_are_rejected(tmp_path):
    path = tmp_path / "w.safetensors"
    with pytest.raises(TypeError, match="metadata must map strings to strings"):
        saving.save_weights_file(path, {"a": np.ones(1)}, {"epoch": 3})
    with pytest.raises(ValueError, match="reserved"):
        saving.save_weights_file(path, {"a": np.ones(1)}, {ORDER_KEY: "[]"})
    with pytest.raises(ValueError, match="appears twice"):
        saving.save_weights_file(path, [("a", np.ones(1)), ("a", np.ones(1))])
    with pytest.raises(TypeError, match="non-empty strings"):
        saving.save_weights_file(path, {3: np.ones(1)})
    with pytest.raises(TypeError, match="cannot store"):
        saving.save_weights_file(path, {"a": np.array(["text"])})
    assert not path.exists()


# ---------------------------------------------------------------- atomic writes
def test_an_interrupted_write_leaves_the_existing_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "w.safetensors"
    old = {"a": np.arange(4.0)}
    saving.save_weights_file(path, old)
    before = path.read_bytes()

    def failing_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError, match="disk full"):
        saving.save_weights_file(path, {"a": np.zeros(1000)})
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["w.safetensors"]  # no temporary file left behind

    def interrupted_replace(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt):
        saving.save_weights_file(path, {"a": np.zeros(1000)})
    monkeypatch.undo()
    assert_arrays_equal(saving.load_weights_file(path), old)
    assert os.listdir(tmp_path) == ["w.safetensors"]


def test_the_temporary_file_is_in_the_target_directory(tmp_path, monkeypatch):
    renames = []
    real_replace = os.replace

    def recording_replace(src, dst):
        renames.append((os.path.dirname(src), os.path.dirname(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", recording_replace)
    saving.save_weights_file(tmp_path / "w.safetensors", {"a": np.ones(2)})
    assert renames == [(str(tmp_path), str(tmp_path))]


# ---------------------------------------------------------------- checks on load
def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        saving.load_weights_file(tmp_path / "nothing.safetensors")


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "shorter than the 8-byte header length"),
        (b"hello world, this is not a weights file", "points past the end"),
        (b"PK\x03\x04" + bytes(60), "points past the end"),
        (struct.pack("<Q", 4) + b"nope", "header is not JSON"),
        (struct.pack("<Q", 2) + b"[]", "not a JSON object"),
    ],
)
def test_not_a_safetensors_file(tmp_path, content, message):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message) as info:
        saving.load_weights_file(path)
    assert str(path) in str(info.value)


def test_truncated_files_are_reported(tmp_path):
    path = tmp_path / "w.safetensors"
    saving.save_weights_file(path, {"a": np.arange(10.0), "b": np.ones(3, np.float32)})
    whole = path.read_bytes()
    path.write_bytes(whole[:-5])  # data cut short
    with pytest.raises(ValueError, match="truncated safetensors file") as info:
        saving.load_weights_file(path)
    assert str(path) in str(info.value)
    path.write_bytes(whole[:40])  # cut inside the header
    with pytest.raises(ValueError, match="points past the end of the file"):
        saving.load_weights_file(path)


def test_headers_that_disagree_with_the_data_are_reported(tmp_path):
    path = tmp_path / "w.safetensors"
    data = np.arange(4, dtype=np.float32).tobytes()
    entry = {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}
    write_raw(path, {"x": {**entry, "data_offsets": [0, 32]}}, data)
    with pytest.raises(ValueError, match="past the end of the data"):
        saving.load_weights_file(path)
    write_raw(path, {"x": {**entry, "shape": [5]}}, data)
    with pytest.raises(ValueError, match=r"F32 \[5\] \(20 bytes\)"):
        saving.load_weights_file(path)
    write_raw(path, {"x": {**entry, "dtype": "F31"}}, data)
    with pytest.raises(ValueError, match="bad entry for 'x'"):
        saving.load_weights_file(path)
    write_raw(path, {"x": entry}, data + b"extra")
    with pytest.raises(ValueError, match="cover 16 bytes of data but 21 follow"):
        saving.load_weights_file(path)
    write_raw(path, {"x": entry, "__metadata__": {ORDER_KEY: '["y"]'}}, data)
    with pytest.raises(ValueError, match="does not list the tensors"):
        saving.load_weights_file(path)
    write_raw(path, {"x": entry}, data)  # the same header, consistent, loads
    np.testing.assert_array_equal(saving.load_weights_file(path)["x"], [0, 1, 2, 3])
