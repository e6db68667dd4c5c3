"""Minimal PNG and WAV encoders for image and audio summaries, on the standard library alone.

TensorBoard stores each image summary as PNG bytes and each audio clip as WAV bytes. A PNG is
its framing (a signature and three chunks, each with a CRC-32) around zlib-compressed
scanlines; a WAV is a 44-byte RIFF header before 16-bit little-endian samples. So summaries
need neither Pillow nor TensorFlow's ``encode_png``/``encode_wav``. Every PNG scanline uses
filter 0 (none): the pixels are exact and the files somewhat larger than libpng's adaptive
filtering makes them, which for logged weights and samples does not matter.
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


def encode_wav(audio, sample_rate):
    """Encodes one ``[frames, channels]`` clip of samples in ``[-1, 1]`` as 16-bit PCM WAV bytes.

    Samples are scaled by 32768, rounded half away from zero and clamped to the int16 range,
    as TF's ``encode_wav`` does.

    Args:
        audio: A float array of shape ``[frames, channels]``.
        sample_rate: The sample rate in Hz, a positive int.

    Returns:
        The WAV file's bytes.

    Raises:
        ValueError: if ``audio`` is not a 2-D float array or ``sample_rate`` is not positive.

    >>> import numpy as np
    >>> wav = encode_wav(np.array([[0.0], [0.5], [-1.0]], np.float32), 8000)
    >>> wav[:4], wav[8:12], len(wav)
    (b'RIFF', b'WAVE', 50)
    """
    audio = np.asarray(audio)
    if audio.ndim != 2 or not np.issubdtype(audio.dtype, np.floating):
        raise ValueError(
            "encode_wav: expected a float array of shape [frames, channels], received "
            f"dtype={audio.dtype} shape={audio.shape}"
        )
    if int(sample_rate) <= 0 or int(sample_rate) != sample_rate:
        raise ValueError(f"encode_wav: sample_rate must be a positive int, received {sample_rate}")
    # float32 as TF reads the samples; times 32768 (exact) and rounded in float64 (exact too).
    scaled = audio.astype(np.float32).astype(np.float64) * 32768.0
    rounded = np.trunc(scaled + np.copysign(0.5, scaled))
    samples = np.clip(np.nan_to_num(rounded), -32768, 32767).astype("<i2").tobytes()
    channels = audio.shape[1]
    rate = int(sample_rate)
    header = b"".join(
        [
            b"RIFF",
            struct.pack("<I", 36 + len(samples)),
            b"WAVE",
            b"fmt ",
            # PCM (format 1): channels, rate, bytes per second, bytes per frame, bits per sample.
            struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * 2 * channels, 2 * channels, 16),
            b"data",
            struct.pack("<I", len(samples)),
        ]
    )
    return header + samples
