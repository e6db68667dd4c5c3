"""The summary functions TensorBoard's dashboards read: ``scalar``, ``histogram``, ``image``,
``audio``, ``text``.

Each turns its data into the tensor layout TensorBoard's plugin expects, names the plugin in
the summary's metadata (built by ``tensorboard``'s own plugin modules, imported only when a
summary is recorded) and hands both to ``writer.write``, which applies the default writer, step
and recording condition. As in TF, the checks that need no writer (a scalar's shape, text's
dtype) run on every call; the heavier work (bucketing, PNG encoding) runs only when recorded.
"""

import importlib

import numpy as np

from .._host_memory import check_host_size
from ..polymorphic_function import host_output
from .encoders import encode_png, encode_wav
from .writer import _numpy, _traced_state, write

DEFAULT_BUCKET_COUNT = 30


def _metadata(plugin, description, extra=None):
    """A callable building plugin ``plugin``'s ``SummaryMetadata`` when the summary is written;
    ``extra(module)`` gives further keyword arguments from the plugin's metadata module."""

    def build():
        module = importlib.import_module(f"tensorboard.plugins.{plugin}.metadata")
        kwargs = extra(module) if extra is not None else {}
        return module.create_summary_metadata(display_name=None, description=description, **kwargs)

    return build


@host_output(context=_traced_state)
def scalar(name, data, step=None, description=None):
    """Writes a scalar summary (a point of a curve in TensorBoard's Scalars dashboard).

    Args:
        name: The summary's tag.
        data: A real scalar (a Python number, 0-d array or tensor), written as float32.
        step: The step (an int, scalar tensor or Variable); the default step when ``None``.
        description: An optional Markdown description shown by TensorBoard.

    Returns:
        A 0-d bool tensor: ``True`` if written, ``False`` without a default writer or when
        ``record_if`` is off.

    Raises:
        ValueError: if ``data`` is not a real scalar, or the summary is recorded and no step
            is given or set.

    >>> import ferrotape as ft
    >>> bool(ft.summary.scalar("loss", 0.25, step=1))  # no default writer: nothing written
    False
    """
    value = np.asarray(_numpy(data))
    if value.ndim != 0:
        raise ValueError(
            f"scalar: data must be a scalar, received shape {value.shape} for {name!r}"
        )
    if not (np.issubdtype(value.dtype, np.number) or value.dtype == np.bool_):
        raise ValueError(f"scalar: data must be a real number, received {data!r} for {name!r}")
    return write(name, value.astype(np.float32), step, _metadata("scalar", description))


@host_output(context=_traced_state)
def histogram(name, data, step=None, buckets=None, description=None):
    """Writes a histogram summary of all the elements of ``data`` (Histograms dashboard).

    The range ``[min, max]`` of the values is cut into ``buckets`` equal buckets, each stored as
    ``[left_edge, right_edge, count]`` (float64): a value ``v`` falls in bucket
    ``floor((v - min) / width)``, the maximum in the last one, so the buckets are closed-open
    except the last. When every value is equal, all edges are that value and the last bucket
    holds the count; empty data gives ``buckets`` all-zero rows, and ``buckets=0`` no rows.

    Args:
        name: The summary's tag.
        data: A tensor or array of any shape with real values.
        step: The step; the default step when ``None``.
        buckets: The number of buckets, 30 when ``None``; a negative count counts as 0.
        description: An optional Markdown description shown by TensorBoard.

    Returns:
        A 0-d bool tensor: ``True`` if written, ``False`` if not (see ``scalar``).

    Raises:
        TypeError: if ``buckets`` is not an int.
        ValueError: if the summary is recorded and no step is given or set.

    >>> import ferrotape as ft
    >>> bool(ft.summary.histogram("weights", [0.0, 1.0, 2.0], step=0))
    False
    """
    count = DEFAULT_BUCKET_COUNT if buckets is None else np.asarray(_numpy(buckets))
    if buckets is not None and (count.ndim != 0 or count.dtype.kind not in "iu"):
        raise TypeError(f"histogram: buckets must be an int, received buckets={buckets!r}")
    if not -(2**31) <= int(count) < 2**31:  # TensorFlow takes an int32
        raise TypeError(f"histogram: buckets must be an int32, received buckets={buckets!r}")
    count = int(count)
    return write(
        name,
        lambda: histogram_buckets(_numpy(data), count),
        step,
        _metadata("histogram", description),
    )


def histogram_buckets(data, bucket_count=DEFAULT_BUCKET_COUNT):
    """The ``[bucket_count, 3]`` float64 rows ``[left_edge, right_edge, count]`` of ``data``.

    TensorBoard's bucketing (see ``histogram``), computed in float64 with NumPy.

    Args:
        data: An array of any shape with real values.
        bucket_count: The number of buckets; 0 or less gives an empty ``[0, 3]`` array.

    Returns:
        A float64 array of shape ``[max(bucket_count, 0), 3]``.

    >>> histogram_buckets([0.0, 1.0, 1.0, 4.0], 2)
    array([[0., 2., 3.],
           [2., 4., 1.]])
    """
    bucket_count = max(int(bucket_count), 0)
    check_host_size("histogram", [bucket_count, 3], "float64")
    values = np.asarray(data, dtype=np.float64).reshape(-1)
    if bucket_count == 0 or values.size == 0:
        return np.zeros((bucket_count, 3))
    low, high = values.min(), values.max()
    if low == high:
        counts = np.zeros(bucket_count)
        counts[-1] = values.size
        return np.stack([np.full(bucket_count, high), np.full(bucket_count, high), counts], 1)
    width = (high - low) / bucket_count
    # Rounding can put a value just below max one past the last bucket; the clamp keeps it in.
    index = np.minimum(np.floor((values - low) / width).astype(np.int64), bucket_count - 1)
    counts = np.bincount(index, minlength=bucket_count).astype(np.float64)
    edges = np.linspace(low, high, bucket_count + 1)
    edges[-1] = high
    return np.stack([edges[:-1], edges[1:], counts], 1)


@host_output(context=_traced_state)
def image(name, data, step=None, max_outputs=3, description=None):
    """Writes an image summary: up to ``max_outputs`` images of a batch, as PNG (Images dashboard).

    Args:
        name: The summary's tag.
        data: A ``[k, height, width, channels]`` batch with 1 to 4 channels (grey, grey + alpha,
            RGB, RGBA): floats in ``[0, 1]`` (scaled by 255.5 and truncated, out-of-range values
            saturating, as TF's ``convert_image_dtype``) or uint8 values.
        step: The step; the default step when ``None``.
        max_outputs: How many of the ``k`` images to write (the first ones).
        description: An optional Markdown description shown by TensorBoard.

    Returns:
        A 0-d bool tensor: ``True`` if written, ``False`` if not (see ``scalar``).

    Raises:
        ValueError: if the summary is recorded and ``data`` is not a rank-4 batch with 1 to 4
            channels, ``max_outputs`` is negative, or no step is given or set.
        TypeError: if the summary is recorded and ``data`` is neither float nor uint8.

    >>> import numpy as np, ferrotape as ft
    >>> bool(ft.summary.image("samples", np.zeros((2, 8, 8, 1)), step=0))
    False
    """
    return write(
        name,
        lambda: _image_tensor(_numpy(data), max_outputs),
        step,
        _metadata("image", description),
    )


def _image_tensor(data, max_outputs):
    """The image plugin's layout: ``[width, height, png_0, png_1, ...]`` as bytes strings."""
    images = np.asarray(data)
    if images.ndim != 4 or not 1 <= images.shape[-1] <= 4:
        raise ValueError(
            "image: data must be a [k, height, width, channels] batch with 1 to 4 channels, "
            f"received shape {images.shape}"
        )
    max_outputs = int(_numpy(max_outputs))
    if max_outputs < 0:
        raise ValueError(f"image: max_outputs must be non-negative, received {max_outputs}")
    pixels = _to_uint8(images[:max_outputs])
    height, width = images.shape[1:3]
    strings = [str(width).encode(), str(height).encode(), *map(encode_png, pixels)]
    return np.array(strings, dtype=object)


def _to_uint8(images):
    """uint8 pixels from uint8 or [0, 1] floats, as TF's ``convert_image_dtype(saturate=True)``."""
    if images.dtype == np.uint8:
        return images
    if not np.issubdtype(images.dtype, np.floating):
        raise TypeError(
            f"image: data must be float (in [0, 1]) or uint8, received dtype {images.dtype}"
        )
    # 255.5 rather than 255 so that truncation rounds the half-way points up, as TF does.
    scaled = np.nan_to_num(images.astype(np.float64) * 255.5, nan=0.0)
    return np.clip(scaled, 0, 255).astype(np.uint8)


@host_output(context=_traced_state)
def audio(name, data, sample_rate, step=None, max_outputs=3, encoding=None, description=None):
    """Writes an audio summary: up to ``max_outputs`` clips of a batch, as WAV (Audio dashboard).

    Args:
        name: The summary's tag.
        data: A ``[k, frames, channels]`` float batch of samples in ``[-1, 1]``, written as
            16-bit PCM (values outside the range saturate).
        sample_rate: The sample rate in Hz, a positive int.
        step: The step; the default step when ``None``.
        max_outputs: How many of the ``k`` clips to write (the first ones).
        encoding: ``"wav"`` or ``None`` (meaning ``"wav"``), the only encoding, as in TF.
        description: An optional Markdown description shown by TensorBoard.

    Returns:
        A 0-d bool tensor: ``True`` if written, ``False`` if not (see ``scalar``).

    Raises:
        ValueError: if ``encoding`` is not ``"wav"``; if the summary is recorded and ``data`` is
            not a rank-3 float batch, ``sample_rate`` is not positive, ``max_outputs`` is
            negative, or no step is given or set.

    >>> import numpy as np, ferrotape as ft
    >>> bool(ft.summary.audio("clip", np.zeros((1, 100, 1)), sample_rate=8000, step=0))
    False
    """
    if encoding is None:
        encoding = "wav"
    if encoding != "wav":
        raise ValueError(f"audio: unknown encoding {encoding!r}, only 'wav' is supported")
    return write(
        name,
        lambda: _audio_tensor(_numpy(data), int(_numpy(sample_rate)), max_outputs),
        step,
        _metadata("audio", description, lambda module: {"encoding": module.Encoding.Value("WAV")}),
    )


def _audio_tensor(data, sample_rate, max_outputs):
    """The audio plugin's layout: one ``[wav bytes, label]`` row per clip (labels empty)."""
    clips = np.asarray(data)
    if clips.ndim != 3:
        raise ValueError(
            f"audio: data must be a [k, frames, channels] batch, received shape {clips.shape}"
        )
    max_outputs = int(_numpy(max_outputs))
    if max_outputs < 0:
        raise ValueError(f"audio: max_outputs must be non-negative, received {max_outputs}")
    rows = np.empty((len(clips[:max_outputs]), 2), dtype=object)
    for row, clip in zip(rows, clips[:max_outputs], strict=True):
        row[:] = [encode_wav(clip, sample_rate), b""]
    return rows


@host_output(context=_traced_state)
def text(name, data, step=None, description=None):
    """Writes a text summary (Markdown shown in TensorBoard's Text dashboard).

    Args:
        name: The summary's tag.
        data: A string, or an array / nested list of strings (a 2-D one shows as a table).
        step: The step; the default step when ``None``.
        description: An optional Markdown description shown by TensorBoard.

    Returns:
        A 0-d bool tensor: ``True`` if written, ``False`` if not (see ``scalar``).

    Raises:
        TypeError: if ``data`` holds anything but strings.
        ValueError: if the summary is recorded and no step is given or set.

    >>> import ferrotape as ft
    >>> bool(ft.summary.text("notes", "**first run**", step=0))
    False
    """
    values = np.asarray(_numpy(data), dtype=object)
    flat = values.reshape(-1).tolist()
    if not all(isinstance(item, (str, bytes, np.str_, np.bytes_)) for item in flat):
        raise TypeError(f"text: data must be strings, received {data!r} for {name!r}")
    encoded = [item.encode() if isinstance(item, str) else bytes(item) for item in flat]
    strings = np.empty(len(encoded), dtype=object)
    strings[:] = encoded
    return write(name, strings.reshape(values.shape), step, _metadata("text", description))
