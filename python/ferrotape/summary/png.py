"""A minimal PNG encoder for image summaries: 8-bit, 1 to 4 channels, zlib-compressed.

TensorBoard stores each image summary as PNG bytes. Writing them needs only the PNG framing
(a signature and three chunks, each with a CRC-32) around zlib-compressed scanlines, all in
the standard library; so image summaries need neither Pillow nor TensorFlow's ``encode_png``.
Every scanline uses filter 0 (none): the pixels are exact and the files somewhat larger than
libpng's adaptive filtering makes them, which for logged weights and samples does not matter.
"""

import struct
import zlib

import numpy as np

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# PNG colour types by channel count: greyscale, greyscale + alpha, RGB, RGBA.
_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}


def encode_png(image):
    """Encodes one ``[height, width, channels]`` uint8 image as PNG bytes.

    Args:
        image: A uint8 array of shape ``[height, width, channels]`` with 1 to 4 channels
            (grey, grey + alpha, RGB, RGBA).

    Returns:
        The PNG file's bytes.

    Raises:
        ValueError: if ``image`` is not a 3-D uint8 array with 1 to 4 channels.

    >>> import numpy as np
    >>> encode_png(np.zeros((2, 3, 1), np.uint8))[:8]
    b'\\x89PNG\\r\\n\\x1a\\n'
    """
    image = np.asarray(image)
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[-1] not in _COLOR_TYPES:
        raise ValueError(
            "encode_png: expected a uint8 array of shape [height, width, channels] with 1 to 4 "
            f"channels, received dtype={image.dtype} shape={image.shape}"
        )
    height, width, channels = image.shape
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPES[channels], 0, 0, 0)
    # Each scanline starts with its filter byte (0: the row as it is).
    rows = np.zeros((height, 1 + width * channels), np.uint8)
    rows[:, 1:] = image.reshape(height, width * channels)
    return b"".join(
        [
            _SIGNATURE,
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", zlib.compress(rows.tobytes())),
            _chunk(b"IEND", b""),
        ]
    )


def _chunk(kind, data):
    """A PNG chunk: length, type, data, and the CRC-32 of type and data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
