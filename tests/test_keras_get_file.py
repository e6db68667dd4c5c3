"""``keras.utils.get_file`` on local files (a path or a ``file://`` URL): the cache layout of
Keras 3 (``cache_dir/cache_subdir/fname``, ``<name>_archive`` and extraction directories),
hashes, ``force_download``, tar and zip extraction, and a clear error when the origin cannot be
reached. ``test_get_file_layout_matches_keras`` compares the paths with Keras's own."""

import hashlib
import io
import os
import socket
import tarfile
import zipfile

import pytest

import ferrotape as ft

get_file = ft.keras.utils.get_file


@pytest.fixture
def archives(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    (source / "notes.txt").write_text("first")
    with tarfile.open(source / "bundle.tar.gz", "w:gz") as tar:
        data = b"inside the tar"
        info = tarfile.TarInfo("bundle/a.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with zipfile.ZipFile(source / "pack.zip", "w") as zipped:
        zipped.writestr("pack/b.txt", "inside the zip")
    return source


def test_a_local_path_is_cached_and_reused(archives, tmp_path):
    cache = tmp_path / "cache"
    path = get_file(origin=str(archives / "notes.txt"), cache_dir=cache)
    assert path == os.path.join(cache, "datasets", "notes.txt")
    assert open(path).read() == "first"
    (archives / "notes.txt").write_text("second")
    # Cached: the changed origin is not read again, unless force_download.
    assert open(get_file(origin=str(archives / "notes.txt"), cache_dir=cache)).read() == "first"
    again = get_file(origin=str(archives / "notes.txt"), cache_dir=cache, force_download=True)
    assert open(again).read() == "second"


def test_file_url_fname_and_absolute_cache_subdir(archives, tmp_path):
    url = (archives / "notes.txt").as_uri()
    path = get_file("renamed.txt", url, cache_subdir=str(tmp_path / "elsewhere"))
    assert path == str(tmp_path / "elsewhere" / "renamed.txt")
    with pytest.raises(ValueError, match="Paths are no longer accepted"):
        get_file("sub/renamed.txt", url, cache_dir=tmp_path)
    with pytest.raises(ValueError, match="origin"):
        get_file("x.txt", cache_dir=tmp_path)


def test_hashes_are_checked(archives, tmp_path):
    origin = str(archives / "notes.txt")
    sha256 = hashlib.sha256(b"first").hexdigest()
    md5 = hashlib.md5(b"first").hexdigest()  # noqa: S324 - the hash Keras accepts
    assert get_file(origin=origin, cache_dir=tmp_path / "a", file_hash=sha256)
    assert get_file(origin=origin, cache_dir=tmp_path / "b", md5_hash=md5)
    with pytest.raises(ValueError, match="Incomplete or corrupted file"):
        get_file(origin=origin, cache_dir=tmp_path / "c", file_hash="0" * 64)
    assert not (tmp_path / "c" / "datasets" / "notes.txt").exists()  # no bad file is kept


def test_tar_and_zip_archives_are_extracted(archives, tmp_path):
    cache = tmp_path / "cache"
    tar_dir = get_file(origin=str(archives / "bundle.tar.gz"), extract=True, cache_dir=cache)
    assert tar_dir == os.path.join(cache, "datasets", "bundle.tar.gz")
    assert open(os.path.join(tar_dir, "bundle", "a.txt")).read() == "inside the tar"
    assert os.path.isfile(os.path.join(cache, "datasets", "bundle.tar.gz_archive"))
    zip_dir = get_file("pack.zip", str(archives / "pack.zip"), extract=True, cache_dir=cache)
    assert zip_dir == os.path.join(cache, "datasets", "pack_extracted")
    assert open(os.path.join(zip_dir, "pack", "b.txt")).read() == "inside the zip"
    with pytest.warns(UserWarning, match="Could not extract"):
        get_file("plain", str(archives / "notes.txt"), extract=True, cache_dir=cache)


def test_unreachable_origin_is_a_clear_error(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ConnectionError, match=r"URL fetch failure on http://127.0.0.1"):
        get_file(origin=f"http://127.0.0.1:{port}/data.npz", cache_dir=tmp_path)
    assert os.listdir(tmp_path / "datasets") == []


def test_get_file_layout_matches_keras(archives, tmp_path):
    keras = pytest.importorskip("keras", reason="Keras 3 (with TensorFlow) is not installed")
    # Keras falls back to /tmp/.keras for a cache_dir that does not exist yet (ferrotape
    # creates it): both exist here.
    (tmp_path / "k").mkdir()
    (tmp_path / "f").mkdir()
    for fname, name, extract in [
        (None, "notes.txt", False),
        (None, "bundle.tar.gz", True),
        ("pack.zip", "pack.zip", True),
        ("packdir", "pack.zip", True),
    ]:
        url = (archives / name).as_uri()
        theirs = keras.utils.get_file(fname, url, extract=extract, cache_dir=tmp_path / "k")
        ours = get_file(fname, url, extract=extract, cache_dir=tmp_path / "f")
        assert os.path.relpath(ours, tmp_path / "f") == os.path.relpath(theirs, tmp_path / "k")
        assert sorted(os.listdir(tmp_path / "f" / "datasets")) == sorted(
            os.listdir(tmp_path / "k" / "datasets")
        )
