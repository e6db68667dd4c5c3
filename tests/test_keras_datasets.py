"""ft.keras.datasets: IDX parsing, the search order, atomic downloads and the shipped subset."""

import gzip
import hashlib
import importlib.util
import io
import urllib.request
from pathlib import Path

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras.datasets import _files, _idx, fashion_mnist, mnist

DEBIAN_DIR = Path("/usr/share/datasets/fashion-mnist")
needs_debian = pytest.mark.skipif(
    not all((DEBIAN_DIR / f).is_file() for f in fashion_mnist.FILES),
    reason="Debian's dataset-fashion-mnist is not installed",
)


def idx_bytes(array):
    """IDX bytes written here from the format's definition, independently of the module."""
    codes = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C, np.float32: 0x0D}
    array = np.asarray(array)
    header = bytes([0, 0, codes[array.dtype.type], array.ndim])
    header += b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def fake_split(n, seed):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=n, dtype=np.uint8)
    return images, labels


def write_fake_files(directory, n_train=12, n_test=5, seed=0):
    """The four gzipped IDX files of a tiny fake data set; returns its arrays."""
    directory.mkdir(parents=True, exist_ok=True)
    train, test = fake_split(n_train, seed), fake_split(n_test, seed + 1)
    arrays = [*train, *test]
    for name, array in zip(fashion_mnist.FILES, arrays, strict=True):
        (directory / name).write_bytes(gzip.compress(idx_bytes(array)))
    return (train, test)


def assert_splits_equal(loaded, expected):
    for (x, y), (ex, ey) in zip(loaded, expected, strict=True):
        assert x.dtype == np.uint8 and y.dtype == np.uint8
        np.testing.assert_array_equal(x, ex)
        np.testing.assert_array_equal(y, ey)


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No $FERROTAPE_DATA, a fresh home, no system directories, no network."""
    monkeypatch.delenv(_files.DATA_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(fashion_mnist, "SYSTEM_DIRS", ())

    def no_network(url, timeout=None):
        raise OSError(f"network disabled in tests: {url}")

    monkeypatch.setattr(_files, "urlopen", no_network)
    return tmp_path


# ---------------------------------------------------------------- IDX format
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32])
def test_parse_idx_reads_every_type_in_native_order(dtype):
    array = (np.arange(24).reshape(2, 3, 4) - 5).astype(dtype)
    parsed = _idx.parse_idx(idx_bytes(array))
    assert parsed.dtype == np.dtype(dtype) and parsed.dtype.isnative and parsed.flags.writeable
    np.testing.assert_array_equal(parsed, array)
    assert _idx.write_idx(array) == idx_bytes(array)


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\x00\x00", "shorter than the header"),
        (b"\x50\x4b\x03\x04rest", "magic number"),
        (bytes([0, 0, 0x07, 1, 0, 0, 0, 1, 0]), "magic number"),
        (bytes([0, 0, 8, 3, 0, 0, 0, 1]), "truncated IDX header"),
        (bytes([0, 0, 8, 1, 0, 0, 0, 4, 1, 2, 3]), "4 bytes of uint8"),
        (bytes([0, 0, 8, 1, 0, 0, 0, 2, 1, 2, 3]), "3 bytes of data follow"),
    ],
)
def test_parse_idx_rejects_corrupt_data(data, message):
    with pytest.raises(ValueError, match=message) as info:
        _idx.parse_idx(data, source="some/file.gz")
    assert "some/file.gz" in str(info.value)


def test_read_idx_names_a_truncated_gzip_file(tmp_path):
    path = tmp_path / "train-images-idx3-ubyte.gz"
    whole = gzip.compress(idx_bytes(np.zeros((4, 28, 28), np.uint8)))
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match="truncated or corrupt gzip") as info:
        _idx.read_idx(path)
    assert str(path) in str(info.value)
    path.write_bytes(idx_bytes(np.arange(6, dtype=np.uint8)))  # uncompressed is read too
    np.testing.assert_array_equal(_idx.read_idx(path), np.arange(6))


def test_images_and_labels_must_agree(tmp_path):
    images, labels = tmp_path / "images", tmp_path / "labels"
    images.write_bytes(idx_bytes(np.zeros((3, 28, 28), np.uint8)))
    labels.write_bytes(idx_bytes(np.zeros(2, np.uint8)))
    with pytest.raises(ValueError, match="3 images but .* 2 labels"):
        _idx.read_images_and_labels(images, labels)
    labels.write_bytes(idx_bytes(np.array([0, 1, 10], np.uint8)))
    with pytest.raises(ValueError, match="labels must be below 10, found 10"):
        _idx.read_images_and_labels(images, labels)
    labels.write_bytes(idx_bytes(np.zeros((3, 1), np.uint8)))
    with pytest.raises(ValueError, match=r"shape \(n,\)"):
        _idx.read_images_and_labels(images, labels)


# ---------------------------------------------------------------- where the files are found
@needs_debian
def test_full_fashion_mnist_from_debian(monkeypatch, tmp_path):
    monkeypatch.delenv(_files.DATA_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    (x_train, y_train), (x_test, y_test) = ft.keras.datasets.fashion_mnist.load_data()
    assert x_train.shape == (60000, 28, 28) and y_train.shape == (60000,)
    assert x_test.shape == (10000, 28, 28) and y_test.shape == (10000,)
    assert {a.dtype for a in (x_train, y_train, x_test, y_test)} == {np.dtype(np.uint8)}
    # Known values of the published files.
    assert y_train[:10].tolist() == [9, 0, 0, 3, 0, 2, 7, 2, 5, 5]
    assert y_test[:10].tolist() == [9, 2, 1, 1, 6, 1, 4, 6, 5, 7]
    assert np.bincount(y_train).tolist() == [6000] * 10
    assert int(x_test.sum(dtype=np.int64)) == 573469082


def test_ferrotape_data_subdirectory_wins_over_the_directory_itself(isolated, monkeypatch):
    root = isolated / "data"
    top = write_fake_files(root, seed=10)
    monkeypatch.setenv(_files.DATA_ENV, str(root))
    assert_splits_equal(fashion_mnist.load_data(), top)
    sub = write_fake_files(root / "fashion-mnist", n_train=7, seed=20)
    assert_splits_equal(fashion_mnist.load_data(), sub)


def test_ferrotape_data_wins_over_the_home_cache(isolated, monkeypatch):
    cached = write_fake_files(isolated / "home/.ferrotape/datasets/fashion-mnist", seed=1)
    assert_splits_equal(fashion_mnist.load_data(), cached)
    own = write_fake_files(isolated / "mine", seed=2)
    monkeypatch.setenv(_files.DATA_ENV, str(isolated / "mine"))
    assert_splits_equal(fashion_mnist.load_data(), own)


def test_an_incomplete_directory_is_skipped(isolated, monkeypatch):
    write_fake_files(isolated / "partial", seed=3)
    (isolated / "partial" / fashion_mnist.FILES[3]).unlink()
    cached = write_fake_files(isolated / "home/.ferrotape/datasets/fashion-mnist", seed=4)
    monkeypatch.setenv(_files.DATA_ENV, str(isolated / "partial"))
    assert_splits_equal(fashion_mnist.load_data(), cached)


def test_system_directory_is_searched_last(isolated, monkeypatch):
    system = write_fake_files(isolated / "usr-share", seed=5)
    monkeypatch.setattr(fashion_mnist, "SYSTEM_DIRS", (str(isolated / "usr-share"),))
    assert_splits_equal(fashion_mnist.load_data(), system)


def test_a_corrupt_file_is_an_error_naming_it(isolated, monkeypatch):
    write_fake_files(isolated / "data", seed=6)
    bad = isolated / "data" / "t10k-labels-idx1-ubyte.gz"
    bad.write_bytes(gzip.compress(b"\x00\x00\x08\x01\x00\x00\x00\x05\x01"))
    monkeypatch.setenv(_files.DATA_ENV, str(isolated / "data"))
    with pytest.raises(ValueError, match="corrupt IDX file") as info:
        fashion_mnist.load_data()
    assert str(bad) in str(info.value)


# ---------------------------------------------------------------- downloads
def test_download_fills_the_cache_through_a_url(isolated, monkeypatch):
    served = write_fake_files(isolated / "server", seed=7)
    monkeypatch.setattr(_files, "urlopen", urllib.request.urlopen)
    monkeypatch.setattr(fashion_mnist, "ORIGIN", (isolated / "server").as_uri() + "/")
    assert_splits_equal(fashion_mnist.load_data(), served)
    cache = isolated / "home/.ferrotape/datasets/fashion-mnist"
    assert sorted(p.name for p in cache.iterdir()) == sorted(fashion_mnist.FILES)


class InterruptedResponse(io.BytesIO):
    """A response that delivers its first chunk and then loses the connection."""

    def read(self, size=-1):
        if self.tell() > 0:
            raise ConnectionResetError("connection reset by peer")
        return super().read(10)


def test_an_interrupted_download_leaves_no_partial_file(isolated, monkeypatch):
    served = write_fake_files(isolated / "server", seed=8)
    fetched = []

    def opener(url, timeout=None):
        name = url.rsplit("/", 1)[1]
        fetched.append(name)
        data = (isolated / "server" / name).read_bytes()
        return InterruptedResponse(data) if name.startswith("t10k-images") else io.BytesIO(data)

    monkeypatch.setattr(_files, "urlopen", opener)
    with pytest.raises(FileNotFoundError, match="connection reset"):
        fashion_mnist.load_data()
    cache = isolated / "home/.ferrotape/datasets/fashion-mnist"
    # The two files before the failure arrived whole; nothing else is left behind.
    assert sorted(p.name for p in cache.iterdir()) == sorted(fashion_mnist.FILES[:2])
    # The next call fetches only what is missing.
    fetched.clear()
    monkeypatch.setattr(
        _files,
        "urlopen",
        lambda url, timeout=None: io.BytesIO(
            (isolated / "server" / url.rsplit("/", 1)[1]).read_bytes()
        ),
    )
    assert_splits_equal(fashion_mnist.load_data(), served)


def test_a_corrupt_download_is_not_kept(isolated, monkeypatch):
    monkeypatch.setattr(_files, "urlopen", lambda url, timeout=None: io.BytesIO(b"<html>404"))
    with pytest.raises(FileNotFoundError, match="not an IDX file"):
        fashion_mnist.load_data()
    cache = isolated / "home/.ferrotape/datasets/fashion-mnist"
    assert list(cache.iterdir()) == []


def test_download_does_not_replace_an_existing_file_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "file.bin"
    target.write_bytes(b"old contents")
    monkeypatch.setattr(_files, "urlopen", lambda url, timeout=None: InterruptedResponse(b"x" * 50))
    with pytest.raises(ConnectionResetError):
        _files.download("http://example.invalid/file.bin", target)
    assert target.read_bytes() == b"old contents"
    assert [p.name for p in tmp_path.iterdir()] == ["file.bin"]


def test_the_failure_message_says_where_to_put_the_files(isolated, monkeypatch):
    monkeypatch.setenv(_files.DATA_ENV, str(isolated / "mine"))
    monkeypatch.setattr(fashion_mnist, "SYSTEM_DIRS", ("/usr/share/datasets/fashion-mnist-x",))
    with pytest.raises(FileNotFoundError) as info:
        fashion_mnist.load_data()
    message = str(info.value)
    for expected in [
        *fashion_mnist.FILES,
        str(isolated / "mine"),
        str(isolated / "mine" / "fashion-mnist"),
        str(isolated / "home/.ferrotape/datasets/fashion-mnist"),
        "/usr/share/datasets/fashion-mnist-x",
        "apt install dataset-fashion-mnist",
        "https://storage.googleapis.com/tensorflow/tf-keras-datasets/",
        "network disabled in tests",
    ]:
        assert expected in message
    assert not (isolated / "home/.ferrotape/datasets/fashion-mnist").exists() or not any(
        (isolated / "home/.ferrotape/datasets/fashion-mnist").iterdir()
    )


# ---------------------------------------------------------------- the shipped subset
def test_small_subset_shape_balance_and_size():
    (x_train, y_train), (x_test, y_test) = fashion_mnist.load_data(subset="small")
    assert x_train.shape == (6000, 28, 28) and y_train.shape == (6000,)
    assert x_test.shape == (1000, 28, 28) and y_test.shape == (1000,)
    assert {a.dtype for a in (x_train, y_train, x_test, y_test)} == {np.dtype(np.uint8)}
    assert np.bincount(y_train).tolist() == [600] * 10
    assert np.bincount(y_test).tolist() == [100] * 10
    assert y_train[:50].tolist() != sorted(y_train[:50].tolist())  # classes are shuffled
    # It ships in the wheel, which must stay under 5 MB with the native module (about 3 MB).
    assert fashion_mnist.SMALL_SUBSET.stat().st_size < 1_300_000
    # 16 grey levels, all used, in the training and the test images alike.
    for images in (x_train, x_test):
        assert np.unique(images).tolist() == list(range(0, 256, 17))
    assert len(fashion_mnist.class_names) == 10 and fashion_mnist.class_names[9] == "Ankle boot"
    with pytest.raises(ValueError, match="subset must be None or 'small'"):
        fashion_mnist.load_data(subset="tiny")


def load_script():
    path = Path(__file__).resolve().parent.parent / "scripts" / "make_fashion_subset.py"
    spec = importlib.util.spec_from_file_location("make_fashion_subset", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_debian
def test_small_subset_is_the_scripts_output_from_the_full_files():
    script = load_script()
    made = script.make_subset(DEBIAN_DIR)
    files = [DEBIAN_DIR / f for f in fashion_mnist.FILES]
    x_full, y_full = _idx.read_images_and_labels(files[0], files[1])
    x_full_test, y_full_test = _idx.read_images_and_labels(files[2], files[3])
    rows, test_rows = made["train_indices"], made["test_indices"]
    assert len(set(rows.tolist())) == 6000 and len(set(test_rows.tolist())) == 1000
    np.testing.assert_array_equal(made["x_train"], script.quantize(x_full[rows]))
    np.testing.assert_array_equal(made["y_train"], y_full[rows])
    np.testing.assert_array_equal(made["x_test"], script.quantize(x_full_test[test_rows]))
    assert np.abs(made["x_train"].astype(int) - x_full[rows]).max() <= 8
    np.testing.assert_array_equal(made["y_test"], y_full_test[test_rows])
    shipped = {k: v for k, v in made.items() if k not in script.PROVENANCE}
    with np.load(fashion_mnist.SMALL_SUBSET) as stored:
        assert sorted(stored.files) == sorted(shipped)
        for name, array in shipped.items():
            assert stored[name].dtype == array.dtype
            np.testing.assert_array_equal(stored[name], array)


def test_quantize_rounds_to_the_nearest_of_16_grey_levels():
    script = load_script()
    pixels = np.arange(256, dtype=np.uint8)
    levels = script.quantize(pixels)
    assert levels.dtype == np.uint8
    assert np.unique(levels).tolist() == list(range(0, 256, 17))
    assert np.abs(levels.astype(int) - pixels).max() == 8  # halfway between two levels
    assert levels[[0, 8, 9, 17, 246, 247, 255]].tolist() == [0, 0, 17, 17, 238, 255, 255]


def test_subset_writer_is_byte_for_byte_reproducible(tmp_path):
    script = load_script()
    arrays = {
        "x": np.arange(60, dtype=np.uint8).reshape(3, 4, 5),
        "y": np.arange(3, dtype=np.uint16),
    }
    script.write_npz(tmp_path / "a.npz", arrays)
    script.write_npz(tmp_path / "b.npz", arrays)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    with np.load(tmp_path / "a.npz") as stored:
        for name, array in arrays.items():
            assert stored[name].dtype == array.dtype
            np.testing.assert_array_equal(stored[name], array)


# ---------------------------------------------------------------- MNIST
@pytest.fixture
def isolated_mnist(isolated, monkeypatch):
    monkeypatch.setattr(mnist, "ORIGIN", "http://example.invalid/")
    return isolated


def write_fake_npz(path, seed):
    train, test = fake_split(9, seed), fake_split(4, seed + 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, x_train=train[0], y_train=train[1], x_test=test[0], y_test=test[1])
    return train, test


def test_mnist_reads_idx_files_or_mnist_npz(isolated_mnist, monkeypatch):
    root = isolated_mnist / "data"
    monkeypatch.setenv(_files.DATA_ENV, str(root))
    from_npz = write_fake_npz(root / "mnist" / "mnist.npz", seed=30)
    assert_splits_equal(ft.keras.datasets.mnist.load_data(), from_npz)
    from_idx = write_fake_files(root / "mnist", seed=31)  # IDX files win in the same directory
    assert_splits_equal(mnist.load_data(), from_idx)
    absolute = write_fake_npz(isolated_mnist / "elsewhere.npz", seed=32)
    assert_splits_equal(mnist.load_data(str(isolated_mnist / "elsewhere.npz")), absolute)


def test_mnist_download_checks_the_hash(isolated_mnist, monkeypatch):
    served = write_fake_npz(isolated_mnist / "server" / "mnist.npz", seed=33)
    payload = (isolated_mnist / "server" / "mnist.npz").read_bytes()
    monkeypatch.setattr(_files, "urlopen", lambda url, timeout=None: io.BytesIO(payload))
    cache = isolated_mnist / "home/.ferrotape/datasets/mnist"
    with pytest.raises(FileNotFoundError, match="SHA-256") as info:
        mnist.load_data()
    assert "mnist.npz" in str(info.value) and str(cache) in str(info.value)
    assert list(cache.iterdir()) == []
    monkeypatch.setattr(mnist, "NPZ_SHA256", hashlib.sha256(payload).hexdigest())
    assert_splits_equal(mnist.load_data(), served)
    assert [p.name for p in cache.iterdir()] == ["mnist.npz"]


def test_mnist_rejects_a_bad_npz(isolated_mnist, monkeypatch):
    monkeypatch.setenv(_files.DATA_ENV, str(isolated_mnist))
    bad = isolated_mnist / "mnist.npz"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ValueError, match="not a valid mnist.npz") as info:
        mnist.load_data()
    assert str(bad) in str(info.value)
    np.savez(
        bad,
        x_train=np.zeros((2, 28, 28), np.float32),
        y_train=np.zeros(2, np.uint8),
        x_test=np.zeros((1, 28, 28), np.uint8),
        y_test=np.zeros(1, np.uint8),
    )
    with pytest.raises(ValueError, match="expected uint8 images"):
        mnist.load_data()
