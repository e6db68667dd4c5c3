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
import math
import os
import re
import stat
import struct
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import safetensors
import safetensors.numpy

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
    path = Path(path)
    data = _read_regular_file(path)
    header = _checked_header(path, data)
    metadata = header.get("__metadata__") or {}
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise ValueError(f"{path}: corrupt safetensors header: __metadata__ must map strings")
    metadata = dict(metadata)
    names = _stored_order(path, metadata.pop(ORDER_KEY, None), header)
    start = 8 + struct.unpack("<Q", data[:8])[0]
    ordered = {name: _decoded(data, start, header[name]) for name in names}
    return (ordered, metadata) if return_metadata else ordered


def _read_regular_file(path):
    """The bytes of ``path``, which must be a regular file: a FIFO would block for ever and a
    device such as /dev/zero never ends. Opened without blocking, then checked on the open
    descriptor, so a file swapped for a FIFO after a first look is caught too."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except IsADirectoryError:
        raise IsADirectoryError(f"{path}: is a directory, not a weights file") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{path}: not a regular file (a device, FIFO or socket)")
        return file.read()


def _decoded(data, start, entry):
    """One tensor's array (a copy, native byte order), BF16 widened to float32."""
    begin, shape = entry["data_offsets"][0], entry["shape"]
    array = np.frombuffer(
        data, _NUMPY_TYPES[entry["dtype"]], offset=start + begin, count=math.prod(shape)
    ).reshape(shape)
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


def _write_atomically(path, data):
    """Writes ``data`` to ``path`` so that a reader sees the old file or the new one, never a
    mix, and an interrupted write leaves the old file as it was.

    The data goes to a hidden temporary file beside the target (the target of a symbolic
    link: the link itself stays), is synced, and is renamed over the target. The new file gets
    the mode of the file it replaces, or 0666 less the umask as ``open`` would give. A
    temporary left by a save that was killed outright is removed by the next save of the same
    file (its name holds the writer's process id, which is then no longer alive).
    """
    path = Path(os.path.realpath(path))
    prefix = f".{path.name}.{os.getpid()}."
    _remove_stale_temporaries(path)
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            os.fchmod(file.fileno(), _mode_for(path))
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
    _sync_directory(path.parent)


def _mode_for(path):
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask():
    """The process's umask, read without changing it where Linux reports it."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    mask = os.umask(0o022)  # elsewhere: set and restore (not atomic, but nothing better exists)
    os.umask(mask)
    return mask


def _remove_stale_temporaries(path):
    """Removes ``.NAME.PID.*.tmp`` files of ``path`` whose writer process is gone."""
    pattern = re.compile(rf"^\.{re.escape(path.name)}\.(\d+)\.[^.]+\.tmp$")
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            match = pattern.match(entry.name)
            if match and not _process_alive(int(match.group(1))):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists but belongs to someone else
    return True


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
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise ValueError(
            f"{path}: not a safetensors file: the header is not JSON ({reason})"
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


__all__ = ["load_weights_file", "save_weights_file"]
