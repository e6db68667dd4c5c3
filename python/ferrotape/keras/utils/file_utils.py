"""``get_file``: a file fetched once into Keras's cache (Keras 3's
``keras.src.utils.file_utils``). Downloads go through the data sets' one downloader
(``datasets/_files.py``: atomic, no partial file left behind)."""

import hashlib
import os
import tarfile
import tempfile
import urllib.error
import urllib.parse
import warnings
import zipfile
from pathlib import Path

from ..datasets import _files


def _keras_home():
    return os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")


def _hash_file(path, algorithm):
    digest = hashlib.sha256() if algorithm == "sha256" else hashlib.md5()  # noqa: S324
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _algorithm(file_hash, hash_algorithm):
    """Keras's ``"auto"``: a 64-digit hash is sha256, any other md5."""
    if hash_algorithm == "auto":
        return "sha256" if len(file_hash) == 64 else "md5"
    if hash_algorithm not in ("sha256", "md5"):
        raise ValueError(
            f"get_file: hash_algorithm must be 'auto', 'sha256' or 'md5'. "
            f"Received: hash_algorithm={hash_algorithm!r}"
        )
    return hash_algorithm


def _as_url(origin):
    """``origin`` as a URL: a local path (no scheme, or a Windows drive) becomes ``file://``."""
    scheme = urllib.parse.urlsplit(str(origin)).scheme
    if len(scheme) <= 1:
        return Path(origin).resolve().as_uri()
    return str(origin)


def _extract(archive, destination, archive_format):
    """Unpacks ``archive`` into ``destination`` (tar, tar.gz, tar.bz2 or zip, as
    ``archive_format`` allows); members that would land outside it are refused."""
    formats = {"auto": ["tar", "zip"], None: []}.get(archive_format, archive_format)
    formats = [formats] if isinstance(formats, str) else list(formats)
    for kind in formats:
        if kind == "tar" and tarfile.is_tarfile(archive):
            with tarfile.open(archive) as tar:
                tar.extractall(destination, filter="data")  # no escaping paths or devices
            return True
        if kind == "zip" and zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zipped:
                root = Path(destination).resolve()
                for name in zipped.namelist():
                    if not (root / name).resolve().is_relative_to(root):
                        raise ValueError(f"get_file: zip member {name!r} escapes {destination}")
                zipped.extractall(destination)
            return True
    return False


def get_file(
    fname=None,
    origin=None,
    untar=False,
    md5_hash=None,
    file_hash=None,
    cache_subdir="datasets",
    hash_algorithm="auto",
    extract=False,
    archive_format="auto",
    cache_dir=None,
    force_download=False,
):
    """Downloads a file from a URL if it is not already in the cache.

    The file at ``origin`` goes to ``cache_dir/cache_subdir/fname`` (by default
    ``~/.keras/datasets/``, or ``$KERAS_HOME/datasets/``) and later calls find it there. A
    local path or a ``file://`` URL works as ``origin`` too. With ``extract=True`` a tar or
    zip archive is unpacked and the directory returned.

    Args:
        fname: the file's name in the cache (default: the last part of ``origin``'s path). With
            ``extract``, a name without an extension names the extraction directory.
        origin: the URL (or local path) of the file.
        untar: deprecated form of ``extract=True`` for tar archives.
        md5_hash: deprecated form of ``file_hash`` with ``hash_algorithm="md5"``.
        file_hash: the expected sha256 or md5 hex digest; a cached file that does not match is
            fetched again, a fetched file that does not match is an error.
        cache_subdir: the subdirectory of the cache (an absolute path is used as it is).
        hash_algorithm: ``"auto"``, ``"sha256"`` or ``"md5"``.
        extract: whether to unpack the archive.
        archive_format: ``"auto"`` (tar then zip), ``"tar"``, ``"zip"``, a list of them, or
            ``None``.
        cache_dir: the cache directory (default ``$KERAS_HOME`` or ``~/.keras``).
        force_download: fetch again even if the file is cached.

    Returns:
        The path of the file, or of the extraction directory with ``extract``.

    >>> import pathlib, tempfile, ferrotape as ft
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "notes.txt").write_text("hello")
    >>> path = ft.keras.utils.get_file(origin=str(folder / "notes.txt"), cache_dir=folder / "c")
    >>> pathlib.Path(path).read_text()
    'hello'
    """
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    algorithm = _algorithm(file_hash, hash_algorithm) if file_hash is not None else None
    base = os.path.expanduser(str(cache_dir) if cache_dir is not None else _keras_home())
    if not os.access(base, os.W_OK) and os.path.exists(base):
        base = os.path.join(tempfile.gettempdir(), ".keras")  # Keras's fallback, read-only home
    datadir = os.path.join(base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)

    given = fname
    fname = os.fspath(fname) if fname is not None else ""
    if not fname:
        fname = os.path.basename(urllib.parse.urlsplit(str(origin)).path)
        if not fname:
            raise ValueError(
                f"Can't parse the file name from the origin provided: '{origin}'. Please "
                "specify the `fname` argument."
            )
    elif os.sep in fname:
        raise ValueError(
            "Paths are no longer accepted as the `fname` argument. To specify the file's "
            f"parent directory, use the `cache_dir` argument. Received: fname={fname}"
        )
    if extract or untar:
        if given and "." in fname:
            target = os.path.join(datadir, fname)
            extraction_dir = os.path.join(datadir, f"{fname[: fname.find('.')]}_extracted")
        else:
            extraction_dir = os.path.join(datadir, fname)
            target = os.path.join(datadir, f"{fname}_archive")
    else:
        target = os.path.join(datadir, fname)

    download = force_download or not os.path.exists(target)
    if not download and file_hash is not None and _hash_file(target, algorithm) != file_hash:
        print(
            f"A local file was found, but it seems to be incomplete or outdated because the "
            f"{algorithm} file hash does not match the original value of {file_hash} so we "
            "will re-download the data."
        )
        download = True
    if download:
        _fetch(origin, target, file_hash, algorithm)
    if extract or untar:
        if not _extract(target, extraction_dir, "tar" if untar else archive_format):
            warnings.warn("Could not extract archive.", stacklevel=2)
        return extraction_dir
    return target


def _fetch(origin, target, file_hash, algorithm):
    def check(path):
        if file_hash is not None and _hash_file(path, algorithm) != file_hash:
            raise ValueError(
                f"Incomplete or corrupted file detected. The {algorithm} file hash does not "
                f"match the provided value of {file_hash}."
            )

    try:
        _files.download(_as_url(origin), target, check)
    except urllib.error.HTTPError as error:
        message = f"URL fetch failure on {origin}: {error.code} -- {error.msg}"
        raise ConnectionError(message) from error
    except urllib.error.URLError as error:
        raise ConnectionError(
            f"URL fetch failure on {origin}: {getattr(error, 'errno', None)} -- "
            f"{error.reason} (no network? A local path or file:// URL also works as origin)"
        ) from error
