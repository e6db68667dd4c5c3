"""Fashion-MNIST: 60,000 training and 10,000 test 28x28 grey images of 10 kinds of clothing.

Fashion-MNIST is Copyright (c) 2017 Zalando SE, under the MIT licence
(https://github.com/zalandoresearch/fashion-mnist). ``load_data()`` reads the four IDX ``.gz``
files from the first directory that holds them:

1. ``$FERROTAPE_DATA/fashion-mnist/``, then ``$FERROTAPE_DATA``;
2. ``~/.ferrotape/datasets/fashion-mnist/``;
3. ``/usr/share/datasets/fashion-mnist/`` (Debian: ``apt install dataset-fashion-mnist``);

and failing that downloads them from Keras's mirror into ``~/.ferrotape/datasets/fashion-mnist/``.
``load_data(subset="small")`` returns a class-balanced subset of 6,000 training and 1,000 test
images shipped with ferrotape, for examples and tests that must run offline; to keep the package
small its pixels are rounded to 16 grey levels (0, 17, ..., 255).

>>> from ferrotape.keras.datasets import fashion_mnist
>>> (x_train, y_train), (x_test, y_test) = fashion_mnist.load_data(subset="small")
>>> x_train.shape, y_train.shape, x_test.shape, x_train.dtype.name
((6000, 28, 28), (6000,), (1000, 28, 28), 'uint8')
>>> fashion_mnist.class_names[y_train[0]] in fashion_mnist.class_names
True
"""

from pathlib import Path

import numpy as np

from . import _files, _idx

NAME = "fashion-mnist"
# Keras's mirror of the Fashion-MNIST files.
ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
FILES = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)
SYSTEM_DIRS = ("/usr/share/datasets/fashion-mnist",)
SMALL_SUBSET = Path(__file__).parent / "data" / "fashion_mnist_small.npz"

# The label of each class, by index (as in TensorFlow's classification tutorial).
class_names = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)


def load_data(subset=None):
    """Loads Fashion-MNIST as ``(x_train, y_train), (x_test, y_test)``.

    ``x_*`` are uint8 arrays of shape ``(n, 28, 28)`` (0 to 255), ``y_*`` uint8 labels 0-9 of
    shape ``(n,)``: n is 60,000 and 10,000 for the full data set, 6,000 and 1,000 for
    ``subset="small"`` (shipped with ferrotape, no download; its pixels rounded to 16 grey
    levels, 0, 17, ..., 255). Raises ``FileNotFoundError`` saying where to put the files when
    they are nowhere and cannot be downloaded, and ``ValueError`` naming the file when one is
    corrupt.
    """
    if subset is not None:
        if subset != "small":
            raise ValueError(
                f"fashion_mnist.load_data: subset must be None or 'small', received {subset!r}"
            )
        return _load_small()
    directory = _files.find_dir(_files.search_dirs(NAME, SYSTEM_DIRS), FILES)
    if directory is None:
        directory = _download()
    train = _idx.read_images_and_labels(directory / FILES[0], directory / FILES[1])
    test = _idx.read_images_and_labels(directory / FILES[2], directory / FILES[3])
    return train, test


def _load_small():
    with np.load(SMALL_SUBSET) as stored:
        train = (stored["x_train"], stored["y_train"])
        test = (stored["x_test"], stored["y_test"])
    return train, test


def _download():
    """Downloads the files missing from the cache directory; returns that directory."""
    target = _files.cache_dir(NAME)
    try:
        for filename in FILES:
            if not (target / filename).is_file():
                _files.download(ORIGIN + filename, target / filename, check=_idx.read_idx)
    except (OSError, ValueError) as error:
        dirs = _files.search_dirs(NAME, SYSTEM_DIRS)
        raise FileNotFoundError(
            "fashion_mnist.load_data: the Fashion-MNIST files "
            f"({', '.join(FILES)}) are in none of these directories:\n"
            f"{_files.describe_dirs(dirs)}\n"
            f"and downloading them from {ORIGIN} failed: {error}\n"
            "Put the four files in one of those directories (or point $FERROTAPE_DATA at the "
            "directory that holds them), or on Debian/Ubuntu run "
            "`apt install dataset-fashion-mnist`, which installs them in "
            "/usr/share/datasets/fashion-mnist. For a small offline subset, use "
            'load_data(subset="small").'
        ) from error
    return target
