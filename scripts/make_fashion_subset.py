#!/usr/bin/env python3
"""Writes the small Fashion-MNIST subset shipped with ferrotape.

Picks, with a fixed seed, 600 training and 100 test images of each of the 10 classes from the
full Fashion-MNIST IDX files (by default Debian's, ``apt install dataset-fashion-mnist``),
shuffles each split, rounds the pixels to 16 grey levels, and writes
``python/ferrotape/keras/datasets/data/fashion_mnist_small.npz``: ``x_train (6000, 28, 28)``,
``y_train (6000,)``, ``x_test (1000, 28, 28)``, ``y_test (1000,)`` (uint8). The rows taken from
the full files (``train_indices``/``test_indices`` of ``make_subset``) are not stored: the seed
reproduces them, and the 14 kB they took count against the wheel's limit. The output is
byte-for-byte reproducible: same inputs and seed, same file.

Why 16 grey levels and LZMA: the file ships inside the wheel, which must stay under 5 MB beside
a native module of about 3 MB compressed. The 7,000 images at 256 levels take 3.1 MB deflated
(2.6 MB with LZMA); at 16 levels (0, 17, ..., 255: each pixel within 8 of its value) and LZMA
they take 1.2 MB, and ``ferrotape train`` scores about 0.01 lower on them.

    python scripts/make_fashion_subset.py [--source DIR] [--output FILE] [--seed N]
"""

import argparse
import io
import sys
import zipfile
from pathlib import Path

import numpy as np

from ferrotape.keras.datasets import _idx, fashion_mnist

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO / "python/ferrotape/keras/datasets/data/fashion_mnist_small.npz"
TRAIN_PER_CLASS = 600
TEST_PER_CLASS = 100
SEED = 20170825  # Fashion-MNIST's release date
GREY_LEVELS = 16
# make_subset's arrays that record where the images came from, left out of the shipped file.
PROVENANCE = ("train_indices", "test_indices")


def balanced_indices(labels, per_class, rng):
    """``per_class`` distinct random row indices of each class, all classes shuffled together."""
    chosen = [
        rng.choice(np.flatnonzero(labels == c), size=per_class, replace=False)
        for c in range(len(fashion_mnist.class_names))
    ]
    return rng.permutation(np.concatenate(chosen))


def quantize(images, levels=GREY_LEVELS):
    """``images`` (uint8) rounded to the nearest of ``levels`` evenly spaced grey values from
    0 to 255, still uint8 0-255."""
    step = 255 / (levels - 1)
    return (np.round(images / step) * step).round().astype(np.uint8)


def make_subset(source_dir, seed=SEED):
    """The subset's arrays, by name, from the full IDX files in ``source_dir``."""
    source_dir = Path(source_dir)
    files = [source_dir / name for name in fashion_mnist.FILES]
    x_train, y_train = _idx.read_images_and_labels(files[0], files[1])
    x_test, y_test = _idx.read_images_and_labels(files[2], files[3])
    rng = np.random.default_rng(seed)
    train_rows = balanced_indices(y_train, TRAIN_PER_CLASS, rng)
    test_rows = balanced_indices(y_test, TEST_PER_CLASS, rng)
    return {
        "x_train": quantize(x_train[train_rows]),
        "y_train": y_train[train_rows],
        "x_test": quantize(x_test[test_rows]),
        "y_test": y_test[test_rows],
        "train_indices": train_rows.astype(np.uint16),
        "test_indices": test_rows.astype(np.uint16),
    }


def write_npz(path, arrays):
    """Writes ``arrays`` as an LZMA-compressed ``.npz`` readable by ``np.load`` (whose zipfile
    reads LZMA entries).

    Unlike ``np.savez_compressed``, every zip entry gets a fixed timestamp, so the same arrays
    always give the same bytes.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_LZMA) as zf:
        for name, array in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_LZMA
            zf.writestr(info, buffer.getvalue())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=fashion_mnist.SYSTEM_DIRS[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    arrays = make_subset(args.source, args.seed)
    write_npz(args.output, {k: v for k, v in arrays.items() if k not in PROVENANCE})
    size_mb = args.output.stat().st_size / 1e6
    print(f"wrote {args.output} ({size_mb:.2f} MB)", file=sys.stderr)


if __name__ == "__main__":
    main()
