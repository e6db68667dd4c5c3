"""Weight files are checked before they are read (issue 34): every dataset's shape and type is
compared with the model's variable from the file's metadata, so a small file declaring a huge
dataset fails at once with a shape error, and data stored outside the file (soft and external
links, virtual datasets, external storage) is refused. Memory stays the model's size."""

import time
import tracemalloc
import zipfile

import h5py
import numpy as np
import pytest

import ferrotape as ft

keras = ft.keras
KERNEL = "layers/dense/vars/0"


def model():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])


def _weights_file(tmp_path, name="m.weights.h5"):
    path = tmp_path / name
    model().save_weights(path)
    return path


def _replace_kernel(path, make):
    """Replaces the Dense kernel's dataset by what ``make(file, group, name)`` puts there."""
    with h5py.File(path, "r+") as h5:
        group = h5["layers/dense/vars"]
        del group["0"]
        make(h5, group, "0")


def _load_bounded(load, max_bytes=16 * 2**20, max_seconds=5.0):
    """Runs ``load()``, asserting that it raised a ValueError and took little memory and
    time; returns the error."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(ValueError) as raised:
            load()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < max_bytes, f"the load took {peak / 2**20:.0f} MiB"
    assert time.perf_counter() - start < max_seconds
    return raised.value


@pytest.mark.parametrize("shape", [(3, 2**29), (2**41,), (4, 2**40)])
def test_a_small_file_declaring_a_huge_dataset_fails_fast_with_a_shape_error(tmp_path, shape):
    path = _weights_file(tmp_path)
    # Declared and never written: the file stays a few KiB, a read would allocate it all.
    _replace_kernel(path, lambda h5, group, name: group.create_dataset(name, shape, "float32"))
    assert path.stat().st_size < 64 * 1024
    target = model()
    before = [w.copy() for w in target.get_weights()]
    error = _load_bounded(lambda: target.load_weights(path))
    assert "has shape (4, 3) but the stored value has shape" in str(error)
    assert str(shape) in str(error)
    for old, new in zip(before, target.get_weights(), strict=True):
        np.testing.assert_array_equal(old, new)


def test_a_keras_file_declaring_a_huge_dataset_fails_fast(tmp_path):
    source = model()
    path = tmp_path / "m.keras"
    source.save(path)
    with zipfile.ZipFile(path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    weights = tmp_path / "w.h5"
    weights.write_bytes(entries["model.weights.h5"])
    _replace_kernel(weights, lambda h5, group, name: group.create_dataset(name, (3, 2**29), "f4"))
    entries["model.weights.h5"] = weights.read_bytes()
    crafted = tmp_path / "crafted.keras"
    with zipfile.ZipFile(crafted, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    error = _load_bounded(lambda: keras.models.load_model(crafted))
    assert "(3, 536870912)" in str(error)
    target = model()
    error = _load_bounded(lambda: target.load_weights(crafted))
    assert "(3, 536870912)" in str(error)


def test_a_virtual_dataset_is_refused(tmp_path):
    source = tmp_path / "elsewhere.h5"
    with h5py.File(source, "w") as h5:
        h5["data"] = np.full((4, 3), 7.0, "float32")

    def virtual(h5, group, name):
        layout = h5py.VirtualLayout(shape=(4, 3), dtype="float32")
        layout[:] = h5py.VirtualSource(str(source), "data", shape=(4, 3))
        group.create_virtual_dataset(name, layout)

    path = _weights_file(tmp_path)
    _replace_kernel(path, virtual)
    with pytest.raises(ValueError, match=f"'{KERNEL}' is a virtual dataset"):
        model().load_weights(path)


def test_external_storage_is_refused(tmp_path):
    raw = tmp_path / "kernel.bin"
    raw.write_bytes(np.full((4, 3), 5.0, "float32").tobytes())

    def external(h5, group, name):
        group.create_dataset(name, (4, 3), "float32", external=[(str(raw), 0, 48)])

    path = _weights_file(tmp_path)
    _replace_kernel(path, external)
    with pytest.raises(ValueError, match=f"'{KERNEL}' is stored in external files"):
        model().load_weights(path)


def test_soft_and_external_links_are_refused(tmp_path):
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as h5:
        h5["kernel"] = np.ones((4, 3), "float32")
    links = {
        "a soft link": lambda h5, group, name: group.__setitem__(
            name, h5py.SoftLink("/layers/dense/vars/1")
        ),
        "an external link": lambda h5, group, name: group.__setitem__(
            name, h5py.ExternalLink(str(other), "/kernel")
        ),
    }
    for kind, make in links.items():
        path = _weights_file(tmp_path, f"{kind.split()[1]}.weights.h5")
        _replace_kernel(path, make)
        with pytest.raises(ValueError, match=f"'{KERNEL}' is {kind}"):
            model().load_weights(path)
    # A link higher up the path is refused too.
    path = _weights_file(tmp_path, "group.weights.h5")
    with h5py.File(path, "r+") as h5:
        h5.move("layers/dense", "layers/hidden")
        h5["layers/dense"] = h5py.SoftLink("/layers/hidden")
    with pytest.raises(ValueError, match="'layers/dense' is a soft link"):
        model().load_weights(path)


def test_a_non_numeric_dataset_is_refused_before_it_is_read(tmp_path):
    path = _weights_file(tmp_path)
    strings = np.array([[b"x"] * 3] * 4)
    _replace_kernel(path, lambda h5, group, name: group.create_dataset(name, data=strings))
    with pytest.raises(ValueError, match="non-numeric type"):
        model().load_weights(path)


def test_a_safetensors_load_reads_no_more_than_the_model_holds(tmp_path):
    path = tmp_path / "big.safetensors"
    # The right count of weights, the first 32 MiB where the model's kernel is 48 bytes.
    keras.saving.save_weights_file(
        path,
        {"0000/dense/kernel": np.zeros((2**23,), "float32"), "0001/dense/bias": np.zeros(3)},
    )
    target = model()
    error = _load_bounded(lambda: target.load_weights(path), max_bytes=4 * 2**20)
    assert "has shape (8388608,) but the model's weight" in str(error)


def test_files_that_fit_still_load(tmp_path):
    source = model()
    source.set_weights([np.arange(12, dtype="float32").reshape(4, 3), np.ones(3, "float32")])
    for name in ("m.weights.h5", "m.safetensors", "m.keras"):
        path = tmp_path / name
        if name.endswith(".keras"):
            source.save(path)
            target = keras.models.load_model(path)
        else:
            source.save_weights(path)
            target = model()
            target.load_weights(path)
        for want, got in zip(source.get_weights(), target.get_weights(), strict=True):
            np.testing.assert_array_equal(want, got)


def test_a_file_that_is_not_hdf5_gets_a_value_error_naming_it(tmp_path):
    path = tmp_path / "garbage.weights.h5"
    path.write_bytes(b"not an hdf5 file")
    with pytest.raises(OSError, match="garbage.weights.h5 is not an HDF5 weights file"):
        model().load_weights(path)
