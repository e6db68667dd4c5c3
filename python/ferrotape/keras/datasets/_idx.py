"""Reading IDX files, the format of MNIST and Fashion-MNIST, plain or gzip-compressed.

An IDX file is a 4-byte magic number ``00 00 <type code> <number of dimensions>``, then one
big-endian uint32 per dimension, then the values in C order, big-endian.
"""

import gzip
import math
import struct
import zlib
from pathlib import Path

import numpy as np

# The IDX type codes and the big-endian numpy dtype of each.
_IDX_DTYPES = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_GZIP_MAGIC = b"\x1f\x8b"


def parse_idx(data, source="<bytes>"):
    """The array stored in the IDX bytes ``data`` (native byte order, a fresh writable array).

    Raises ``ValueError`` naming ``source`` when the header is malformed or the size of the data
    does not match the dimensions the header declares.

    >>> parse_idx(bytes([0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 4, 5, 6]))
    array([[1, 2, 3],
           [4, 5, 6]], dtype=uint8)
    """
    if len(data) < 4:
        raise ValueError(f"{source}: not an IDX file: {len(data)} bytes, shorter than the header")
    zero, type_code, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or type_code not in _IDX_DTYPES:
        raise ValueError(
            f"{source}: not an IDX file: the magic number is 0x{data[:4].hex()}, expected "
            "0x0000 then a type code (08, 09, 0B, 0C, 0D, 0E) and the number of dimensions"
        )
    header_size = 4 + 4 * ndim
    if len(data) < header_size:
        raise ValueError(
            f"{source}: truncated IDX header: {ndim} dimensions need {header_size} bytes, "
            f"the file has {len(data)}"
        )
    shape = struct.unpack(f">{ndim}I", data[4:header_size])
    dtype = _IDX_DTYPES[type_code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    actual = len(data) - header_size
    if actual != expected:
        raise ValueError(
            f"{source}: corrupt IDX file: the header declares shape {shape} ({expected} bytes of "
            f"{dtype.newbyteorder('=').name}) but {actual} bytes of data follow"
        )
    values = np.frombuffer(data, dtype=dtype, offset=header_size).reshape(shape)
    # astype to the native byte order copies, which also makes the array writable.
    return values.astype(dtype.newbyteorder("="))


# The largest IDX payload read (4 GiB, 60 times the full Fashion-MNIST training images): a
# header declaring more is refused before anything is allocated.
MAX_IDX_BYTES = 1 << 32


def read_idx(path):
    """The array in the IDX file at ``path``, decompressing it if it is gzip-compressed.

    Reads only as many bytes as the header declares (plus one, to notice extra data), so a
    small gzip file that would expand without end (a "gzip bomb") costs no more than the
    array it claims to hold.
    """
    path = Path(path)
    with open(path, "rb") as file:
        compressed = file.read(2) == _GZIP_MAGIC
        file.seek(0)
        stream = gzip.GzipFile(fileobj=file) if compressed else file
        try:
            head = stream.read(4)
            ndim = head[3] if len(head) == 4 else 0
            head += stream.read(4 * ndim)
            if len(head) == 4 + 4 * ndim and head[:2] == b"\0\0" and head[2] in _IDX_DTYPES:
                shape = struct.unpack(f">{ndim}I", head[4:])
                size = math.prod(shape) * _IDX_DTYPES[head[2]].itemsize
                if size > MAX_IDX_BYTES:
                    raise ValueError(
                        f"{path}: the IDX header declares shape {shape} ({size} bytes), more "
                        f"than the {MAX_IDX_BYTES} bytes ferrotape reads"
                    )
                head += stream.read(size + 1)
        except (OSError, EOFError, zlib.error) as error:
            raise ValueError(f"{path}: truncated or corrupt gzip data ({error})") from None
    return parse_idx(head, source=str(path))


def read_images_and_labels(images_path, labels_path, num_classes=10):
    """``(images, labels)`` from a pair of IDX files.

    The images must be uint8 ``(n, rows, cols)``, the labels uint8 ``(n,)`` below
    ``num_classes``; a file of another shape or type raises ``ValueError`` naming it.
    """
    images, labels = read_idx(images_path), read_idx(labels_path)
    if images.dtype != np.uint8 or images.ndim != 3:
        raise ValueError(
            f"{images_path}: expected uint8 images of shape (n, rows, cols), "
            f"found {images.dtype} {images.shape}"
        )
    if labels.dtype != np.uint8 or labels.ndim != 1:
        raise ValueError(
            f"{labels_path}: expected uint8 labels of shape (n,), "
            f"found {labels.dtype} {labels.shape}"
        )
    if len(images) != len(labels):
        raise ValueError(
            f"{images_path} holds {len(images)} images but {labels_path} holds {len(labels)} labels"
        )
    if labels.size and labels.max() >= num_classes:
        raise ValueError(
            f"{labels_path}: labels must be below {num_classes}, found {int(labels.max())}"
        )
    return images, labels


def write_idx(array):
    """The IDX bytes of ``array`` (the inverse of :func:`parse_idx`; used by tests and tools)."""
    array = np.asarray(array)
    for code, dtype in _IDX_DTYPES.items():
        if dtype.newbyteorder("=") == array.dtype:
            header = struct.pack(f">HBB{array.ndim}I", 0, code, array.ndim, *array.shape)
            return header + array.astype(dtype).tobytes()
    raise ValueError(f"write_idx: IDX has no type for dtype {array.dtype}")
