"""MNIST: 60,000 training and 10,000 test 28x28 grey images of handwritten digits.

MNIST is by Yann LeCun, Corinna Cortes and Christopher J.C. Burges (CC BY-SA 3.0).
``load_data()`` reads it from the first directory that holds either the four IDX ``.gz`` files
(``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz``, ``t10k-images-idx3-ubyte.gz``,
``t10k-labels-idx1-ubyte.gz``) or Keras's ``mnist.npz``:

1. ``$FERROTAPE_DATA/mnist/``, then ``$FERROTAPE_DATA``;
2. ``~/.ferrotape/datasets/mnist/``;

and failing that downloads ``mnist.npz`` from Keras's mirror into ``~/.ferrotape/datasets/mnist/``
(checking its SHA-256).
"""

import hashlib
import zipfile
from pathlib import Path

import numpy as np

from . import _files, _idx

NAME = "mnist"
ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
FILES = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)
NPZ_FILE = "mnist.npz"
# The SHA-256 of Keras's mnist.npz, the hash Keras checks its download against.
NPZ_SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
SYSTEM_DIRS = ()


def load_data(path=NPZ_FILE):
    """Loads MNIST as ``(x_train, y_train), (x_test, y_test)``.

    ``x_*`` are uint8 arrays of shape ``(n, 28, 28)`` (0 to 255), ``y_*`` uint8 digit labels of
    shape ``(n,)`` (60,000 and 10,000). ``path`` is the name of the ``.npz`` file looked for in
    the data directories (as in Keras, relative to the cache directory), or an absolute path to
    one. Raises ``FileNotFoundError`` saying where to put the files when they are nowhere and
    cannot be downloaded, and ``ValueError`` naming the file when one is corrupt.
    """
    if Path(path).is_absolute() and Path(path).is_file():
        return _read_npz(Path(path))
    dirs = _files.search_dirs(NAME, SYSTEM_DIRS)
    for directory in dirs:
        if _files.find_dir([directory], FILES):
            train = _idx.read_images_and_labels(directory / FILES[0], directory / FILES[1])
            test = _idx.read_images_and_labels(directory / FILES[2], directory / FILES[3])
            return train, test
        if (directory / path).is_file():
            return _read_npz(directory / path)
    return _read_npz(_download(Path(path).name))


def _read_npz(path):
    """The four arrays of a Keras-style ``mnist.npz``, validated."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            arrays = [stored[key] for key in ("x_train", "y_train", "x_test", "y_test")]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(f"{path}: not a valid mnist.npz ({error})") from None
    x_train, y_train, x_test, y_test = arrays
    for images, labels in ((x_train, y_train), (x_test, y_test)):
        if images.dtype != np.uint8 or images.ndim != 3 or labels.shape != images.shape[:1]:
            raise ValueError(
                f"{path}: expected uint8 images (n, 28, 28) and n labels, found "
                f"{images.dtype} {images.shape} and {labels.dtype} {labels.shape}"
            )
    return (x_train, y_train), (x_test, y_test)


def _check_sha256(path):
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    if digest != NPZ_SHA256:
        raise ValueError(f"{path}: SHA-256 {digest} does not match the expected {NPZ_SHA256}")


def _download(filename):
    target = _files.cache_dir(NAME) / filename
    try:
        return _files.download(ORIGIN + NPZ_FILE, target, check=_check_sha256)
    except (OSError, ValueError) as error:
        raise FileNotFoundError(
            f"mnist.load_data: neither the MNIST IDX files ({', '.join(FILES)}) nor "
            f"{filename} are in any of these directories:\n"
            f"{_files.describe_dirs(_files.search_dirs(NAME, SYSTEM_DIRS))}\n"
            f"and downloading {ORIGIN + NPZ_FILE} failed: {error}\n"
            "Put the four IDX files or mnist.npz in one of those directories (or point "
            "$FERROTAPE_DATA at the directory that holds them). Fashion-MNIST, a drop-in "
            "replacement, is packaged by Debian/Ubuntu: `apt install dataset-fashion-mnist`, "
            "then ft.keras.datasets.fashion_mnist.load_data()."
        ) from error
