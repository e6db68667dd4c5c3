"""safetensors files: named numpy arrays, written atomically, checked on load (what
``save_weights("x.safetensors")`` writes, and ``ft.train.Checkpoint``'s index).

A safetensors file is an 8-byte little-endian header length, a JSON header mapping each name to
its ``dtype``, ``shape`` and ``data_offsets`` (plus an optional ``__metadata__`` of strings),
then the raw little-endian data. safetensors does not keep the order of the names, so the order
is stored in the metadata under ``ferrotape.names`` and restored on load. The files are plain
safetensors: ``safetensors.numpy.load_file`` and other readers open them.

>>> import os, tempfile, numpy as np
>>> path = os.path.join(tempfile.mkdtemp(), "weights.safetensors")
>>> save_weights_file(path, {"b": np.zeros(2), "a": np.eye(2, dtype="float32")}, {"epoch": "3"})
>>> weights, metadata = load_weights_file(path, return_metadata=True)
>>> list(weights), weights["a"].dtype.name, metadata
(['b', 'a'], 'float32', {'epoch': '3'})
"""

import json
import math
import os
import struct
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import safetensors
import safetensors.numpy

from .file_io import _open_regular_file, _write_atomically

ORDER_KEY = "ferrotape.names"
# A header takes about 100 bytes per tensor, so 16 MiB is room for over 100,000 tensors while
# keeping a hostile header from costing seconds and gigabytes to parse (safetensors itself
# allows 100 MB).
_MAX_HEADER_BYTES = 16 * 1024 * 1024
# Little-endian numpy types of the safetensors dtypes ferrotape reads; BF16 has no numpy type
# and is widened to float32 (exactly: a bfloat16 is the top half of a float32).
_NUMPY_TYPES = {
    "BOOL": "|b1",
    "U8": "|u1",
    "I8": "|i1",
    "I16": "<i2",
    "U16": "<u2",
    "F16": "<f2",
    "BF16": "<u2",
    "I32": "<i4",
    "U32": "<u4",
    "F32": "<f4",
    "I64": "<i8",
    "U64": "<u8",
    "F64": "<f8",
}
_DTYPE_SIZES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E5M2": 1,
    "F8_E4M3": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "I64": 8,
    "U64": 8,
    "F64": 8,
}


def save_weights_file(path, named_arrays, metadata=None):
    """Writes ``named_arrays`` (a mapping, or pairs, name → array) to ``path`` as safetensors.

    The order of the names is kept; ``metadata`` is an optional dict of strings stored in the
    header. The file is written atomically: to a temporary file in the same directory, synced,
    then renamed over ``path``, so a reader never sees a half-written file and an interrupted
    save leaves the previous file intact.
    """
    arrays = _ordered_arrays(named_arrays)
    header_metadata = _checked_metadata(metadata)
    header_metadata[ORDER_KEY] = json.dumps(list(arrays))
    try:
        data = safetensors.numpy.save(arrays, metadata=header_metadata)
    except (safetensors.SafetensorError, ValueError, TypeError) as error:
        raise TypeError(f"save_weights_file: cannot store the arrays: {error}") from None
    _write_atomically(Path(path), data)


def load_weights_file(path, return_metadata=False):
    """Reads a safetensors file: a dict name → numpy array, in the order they were saved.

    With ``return_metadata=True`` returns ``(arrays, metadata)``, the metadata a dict of strings
    (without ferrotape's own ``ferrotape.names``). Raises ``FileNotFoundError`` for a missing
    file and ``ValueError`` naming the file for one that is not safetensors, truncated or corrupt.
    """
    with WeightsFileReader(path) as reader:
        ordered = {name: reader.read(name) for name in reader.names}
        return (ordered, reader.metadata) if return_metadata else ordered


class WeightsFileReader:
    """A safetensors file opened for reading tensor by tensor: the header is read and checked
    on opening, each tensor's data only when ``read`` asks for it, so a caller can check the
    names, dtypes and shapes (``entry``) before it reads (and allocates) anything.

    Attributes:
        names: the tensor names, in saved order.
        metadata: the header's metadata (without ``ferrotape.names``).
    """

    def __init__(self, path):
        self.path = Path(path)
        self._file = _open_regular_file(self.path)
        try:
            self._header, self._data_start = _checked_header(self.path, self._file)
            metadata = self._header.get("__metadata__") or {}
            if not isinstance(metadata, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
            ):
                raise ValueError(
                    f"{self.path}: corrupt safetensors header: __metadata__ must map strings"
                )
            self.metadata = dict(metadata)
            order = self.metadata.pop(ORDER_KEY, None)
            self.names = _stored_order(self.path, order, self._header)
        except BaseException:
            self._file.close()
            raise

    def entry(self, name):
        """``(dtype, shape)`` of a tensor: its safetensors dtype name and a tuple."""
        entry = self._header[name]
        return entry["dtype"], tuple(entry["shape"])

    def read(self, name):
        """One tensor's array (a copy, native byte order), BF16 widened to float32."""
        entry = self._header[name]
        begin, end = entry["data_offsets"]
        self._file.seek(self._data_start + begin)
        data = self._file.read(end - begin)
        if len(data) != end - begin:
            raise ValueError(f"{self.path}: truncated safetensors file: {name!r} is cut short")
        return _decoded(data, entry)

    def close(self):
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


def _decoded(data, entry):
    """One tensor's array from its bytes (a copy, native byte order), BF16 widened."""
    array = np.frombuffer(data, _NUMPY_TYPES[entry["dtype"]]).reshape(entry["shape"])
    if entry["dtype"] == "BF16":
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array.astype(array.dtype.newbyteorder("="))


def _ordered_arrays(named_arrays):
    pairs = named_arrays.items() if isinstance(named_arrays, Mapping) else named_arrays
    arrays = {}
    for name, value in pairs:
        if not isinstance(name, str) or not name:
            raise TypeError(
                f"save_weights_file: names must be non-empty strings, received {name!r}"
            )
        if name in arrays:
            raise ValueError(f"save_weights_file: the name {name!r} appears twice")
        if name == "__metadata__":
            raise ValueError("save_weights_file: '__metadata__' is reserved by safetensors")
        value = value.numpy() if hasattr(value, "numpy") else value
        # safetensors reads the raw buffer: it must be C-contiguous.
        arrays[name] = np.asarray(value, order="C")
    return arrays


def _checked_metadata(metadata):
    metadata = dict(metadata or {})
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(
                "save_weights_file: metadata must map strings to strings, "
                f"received {key!r}: {value!r}"
            )
    if ORDER_KEY in metadata:
        raise ValueError(f"save_weights_file: the metadata key {ORDER_KEY!r} is reserved")
    return metadata


def _checked_header(path, file):
    """The parsed JSON header and where the data starts, after checking the framing safetensors
    relies on against the file's size (only the header is read)."""
    size = os.fstat(file.fileno()).st_size
    if size < 8:
        raise ValueError(
            f"{path}: not a safetensors file: {size} bytes, shorter than the 8-byte header length"
        )
    (header_size,) = struct.unpack("<Q", file.read(8))
    if header_size > _MAX_HEADER_BYTES or 8 + header_size > size:
        raise ValueError(
            f"{path}: not a safetensors file, or truncated: the header length {header_size} "
            f"points past the end of the file ({size} bytes)"
        )
    try:
        header = json.loads(file.read(header_size))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise ValueError(
            f"{path}: not a safetensors file: the header is not JSON ({reason})"
        ) from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: not a safetensors file: the header is not a JSON object")
    data_size = size - 8 - header_size
    covered = 0
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        covered = max(covered, _checked_entry(path, name, entry, data_size))
    if covered != data_size:
        raise ValueError(
            f"{path}: corrupt safetensors file: the tensors cover {covered} bytes of data but "
            f"{data_size} follow the header"
        )
    return header, 8 + header_size


def _checked_entry(path, name, entry, data_size):
    """Checks one tensor's header entry against the data; returns where its data ends."""
    try:
        dtype, shape, (begin, end) = entry["dtype"], entry["shape"], entry["data_offsets"]
        if not all(type(d) is int and d >= 0 for d in shape) or not all(
            type(o) is int for o in (begin, end)
        ):
            raise ValueError("shape and data_offsets must hold non-negative integers")
        nbytes = _DTYPE_SIZES[dtype] * math.prod(shape)
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(
            f"{path}: corrupt safetensors header: bad entry for {name!r} ({error!r})"
        ) from None
    if dtype not in _NUMPY_TYPES:
        raise ValueError(f"{path}: {name!r} has dtype {dtype}, which ferrotape cannot load")
    if end > data_size:
        raise ValueError(
            f"{path}: truncated safetensors file: {name!r} ends at data byte {end}, past the "
            f"end of the data ({data_size} bytes)"
        )
    if not 0 <= begin <= end or end - begin != nbytes:
        raise ValueError(
            f"{path}: corrupt safetensors header: {name!r} is {dtype} {shape} ({nbytes} bytes) "
            f"but its data_offsets are [{begin}, {end}]"
        )
    return end


def _stored_order(path, order_json, header):
    """The names in saved order; files from other writers keep their data order."""
    names = [name for name in header if name != "__metadata__"]
    if order_json is None:
        return sorted(names, key=lambda name: header[name]["data_offsets"][0])
    try:
        order = json.loads(order_json)
    except json.JSONDecodeError:
        order = None
    if not isinstance(order, list) or sorted(order) != sorted(names):
        raise ValueError(f"{path}: corrupt metadata: {ORDER_KEY} does not list the tensors")
    return order


__all__ = ["WeightsFileReader", "load_weights_file", "save_weights_file"]
