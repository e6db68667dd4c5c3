"""Weight files: named numpy arrays in the safetensors format, written atomically, checked on load.

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

import contextlib
import json
import os
import struct
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import safetensors
import safetensors.numpy

ORDER_KEY = "ferrotape.names"
# safetensors refuses headers larger than this (100 MB); so do we, with a clearer message.
_MAX_HEADER_BYTES = 100_000_000
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
    path = Path(path)
    data = path.read_bytes()
    header = _checked_header(path, data)
    try:
        arrays = safetensors.numpy.load(data)
    except safetensors.SafetensorError as error:
        raise ValueError(f"{path}: corrupt safetensors file: {error}") from None
    metadata = dict(header.get("__metadata__") or {})
    names = _stored_order(path, metadata.pop(ORDER_KEY, None), header)
    ordered = {name: arrays[name] for name in names}
    return (ordered, metadata) if return_metadata else ordered


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


def _write_atomically(path, data):
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
    _sync_directory(path.parent)


def _sync_directory(directory):
    """Makes the rename durable where the platform allows syncing a directory."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _checked_header(path, data):
    """The parsed JSON header, after checking the framing safetensors relies on."""
    if len(data) < 8:
        raise ValueError(
            f"{path}: not a safetensors file: {len(data)} bytes, shorter than the 8-byte header "
            "length"
        )
    (header_size,) = struct.unpack("<Q", data[:8])
    if header_size > _MAX_HEADER_BYTES or 8 + header_size > len(data):
        raise ValueError(
            f"{path}: not a safetensors file, or truncated: the header length {header_size} "
            f"points past the end of the file ({len(data)} bytes)"
        )
    try:
        header = json.loads(data[8 : 8 + header_size])
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(
            f"{path}: not a safetensors file: the header is not JSON ({error})"
        ) from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: not a safetensors file: the header is not a JSON object")
    data_size = len(data) - 8 - header_size
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
    return header


def _checked_entry(path, name, entry, data_size):
    """Checks one tensor's header entry against the data; returns where its data ends."""
    try:
        dtype, shape, (begin, end) = entry["dtype"], entry["shape"], entry["data_offsets"]
        nbytes = _DTYPE_SIZES[dtype] * int(np.prod(shape, dtype=np.int64))
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(
            f"{path}: corrupt safetensors header: bad entry for {name!r} ({error!r})"
        ) from None
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


__all__ = ["load_weights_file", "save_weights_file"]
