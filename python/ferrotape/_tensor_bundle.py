"""TensorFlow's checkpoint files (TensorBundle), read and written with numpy arrays.

A checkpoint at prefix ``P`` is ``P.index`` (a table of every tensor's dtype, shape and place)
and ``P.data-00000-of-00001`` (the tensors' bytes); the Rust crate ``ferrotape-checkpoint``
documents the format and writes it byte for byte as TensorFlow 2.21 does. This module converts
between those files and numpy: the dtypes of ``_DTYPES`` as arrays, DT_STRING tensors as object
arrays of ``bytes`` (a scalar as ``bytes``), and the ``TrackableObjectGraph`` proto stored under
``OBJECT_GRAPH_KEY`` as the dataclasses below.

Failures raise ferrotape's TensorFlow exceptions: ``NotFoundError`` for a missing key or file,
``DataLossError`` for a corrupt or truncated file (the message names the file and key),
``UnimplementedError`` for an entry this reader does not handle (a partitioned variable), and
``InvalidArgumentError`` or ``TypeError`` for tensors that cannot be written.

>>> import os, tempfile
>>> import numpy as np
>>> from ferrotape import _tensor_bundle as tb
>>> prefix = os.path.join(tempfile.mkdtemp(), "ckpt")
>>> tb.write_bundle(prefix, {"w": np.array([1.5, -2.0], np.float32), "name": b"w"})
>>> tb.read_index(prefix)
{'name': ('string', ()), 'w': (dtype('float32'), (2,))}
>>> tb.read_tensor(prefix, "w")
array([ 1.5, -2. ], dtype=float32)
>>> tb.read_tensor(prefix, "name")
b'w'
"""

import os
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

from ferrotape._core import checkpoint as _native

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"

# TensorFlow's DataType numbers (tensorflow/core/framework/types.proto) of the fixed-size types,
# with the numpy dtype of the same little-endian layout.
_DTYPES = {
    1: np.dtype(np.float32),
    2: np.dtype(np.float64),
    3: np.dtype(np.int32),
    4: np.dtype(np.uint8),
    5: np.dtype(np.int16),
    6: np.dtype(np.int8),
    8: np.dtype(np.complex64),
    9: np.dtype(np.int64),
    10: np.dtype(np.bool_),
    14: np.dtype(ml_dtypes.bfloat16),
    17: np.dtype(np.uint16),
    18: np.dtype(np.complex128),
    19: np.dtype(np.float16),
    22: np.dtype(np.uint32),
    23: np.dtype(np.uint64),
}
_NUMBERS = {dtype: number for number, dtype in _DTYPES.items()}
_STRING = 7
# Types a checkpoint may hold that have no numpy form here, named for read_index.
_OTHER_NAMES = {20: "resource", 21: "variant"}


def write_bundle(prefix, tensors):
    """Writes ``tensors`` ({key: value}) as the checkpoint at ``prefix``.

    A value is a numpy array (or anything ``np.asarray`` takes) of a dtype in ``_DTYPES``, or a
    string tensor: ``bytes``/``str`` for a scalar, an array of ``bytes``/``str`` (object or
    ``S``/``U`` dtype) otherwise; ``str`` is stored as UTF-8. Tensors are stored in the order
    given. Missing directories are created; the files are complete before they replace an
    earlier checkpoint at the same prefix.
    """
    entries = [_entry(key, value) for key, value in tensors.items()]
    _native.write_bundle(os.fspath(prefix), entries)


def _entry(key, value):
    if isinstance(value, (bytes, str)):
        return (key, _STRING, [], [_as_bytes(key, value)])
    array = np.asarray(value)
    if array.dtype.kind in "OSU":
        items = [_as_bytes(key, item) for item in array.reshape(-1).tolist()]
        return (key, _STRING, list(array.shape), items)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    number = _NUMBERS.get(array.dtype)
    if number is None:
        expected = ", ".join(sorted(d.name for d in _NUMBERS)) + ", bytes or str"
        raise TypeError(
            f"write_bundle: tensor {key!r} has dtype {array.dtype}; expected one of {expected}"
        )
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    return (key, number, list(array.shape), raw)


def _as_bytes(key, item):
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode("utf-8")
    raise TypeError(
        f"write_bundle: string tensor {key!r} holds {type(item).__name__} {item!r}; "
        "expected bytes or str"
    )


def _dtype(number):
    if number == _STRING:
        return "string"
    if number in _DTYPES:
        return _DTYPES[number]
    return _OTHER_NAMES.get(number, f"DataType {number}")


class BundleReader:
    """An opened checkpoint: the index is read once, tensors on demand (as
    ``tf.train.load_checkpoint``'s reader does)."""

    def __init__(self, prefix):
        self._native = _native.BundleReader(os.fspath(prefix))
        self._entries = {
            key: (_dtype(number), tuple(shape), num_slices)
            for key, number, shape, _shard, _offset, _size, num_slices in self._native.index()
        }

    def index(self):
        """``{key: (numpy dtype or "string", shape)}`` of every tensor, keys sorted; a type with
        no numpy form here is named ("variant")."""
        return {key: (dtype, shape) for key, (dtype, shape, _) in self._entries.items()}

    def read(self, key):
        """The tensor ``key``: a numpy array, an object array of ``bytes`` for a string tensor,
        or ``bytes`` for a scalar string."""
        data = self._native.read(key)
        dtype, shape, _ = self._entries[key]
        if dtype == "string":
            if shape == ():
                return data[0]
            array = np.empty(len(data), dtype=object)
            array[:] = data
            return array.reshape(shape)
        return data.view(dtype).reshape(shape)


def read_index(prefix):
    """``{key: (numpy dtype or "string", shape)}`` of every tensor in the checkpoint at ``prefix``,
    without reading tensor data."""
    return BundleReader(prefix).index()


def read_tensor(prefix, key):
    """The tensor ``key`` of the checkpoint at ``prefix`` (see ``BundleReader.read``)."""
    return BundleReader(prefix).read(key)


# ----------------------------------------------------------------------------- object graph
# TensorFlow's TrackableObjectGraph (tensorflow/core/protobuf/trackable_object_graph.proto),
# one dataclass per message, fields as TensorFlow 2.21 names them.


@dataclass
class ObjectReference:
    """An edge to ``nodes[node_id]``, named ``local_name`` (the attribute name)."""

    node_id: int
    local_name: str


@dataclass
class SerializedTensor:
    """A value the object saved: ``name`` "VARIABLE_VALUE" for a variable, stored under
    ``checkpoint_key``."""

    name: str
    full_name: str
    checkpoint_key: str


@dataclass
class SlotVariableReference:
    """An optimizer's slot ``slot_name`` ("m") for the variable ``original_variable_node_id``,
    held by ``slot_variable_node_id``."""

    original_variable_node_id: int
    slot_name: str
    slot_variable_node_id: int


@dataclass
class RegisteredSaver:
    """A saver function registered under ``name`` that saves this object."""

    name: str
    object_name: str


@dataclass
class TrackableObject:
    """One node of the graph; node 0 is the root. ``has_checkpoint_values`` is None when the
    writer did not say (TensorFlow 2.21 always does)."""

    children: list[ObjectReference] = field(default_factory=list)
    attributes: list[SerializedTensor] = field(default_factory=list)
    slot_variables: list[SlotVariableReference] = field(default_factory=list)
    registered_saver: RegisteredSaver | None = None
    has_checkpoint_values: bool | None = None


def encode_object_graph(nodes):
    """The serialized ``TrackableObjectGraph`` of ``nodes`` (a list of ``TrackableObject``),
    byte for byte as TensorFlow serializes it."""
    return _native.encode_object_graph(
        [
            (
                [(c.node_id, c.local_name) for c in n.children],
                [(a.name, a.full_name, a.checkpoint_key) for a in n.attributes],
                [
                    (s.original_variable_node_id, s.slot_name, s.slot_variable_node_id)
                    for s in n.slot_variables
                ],
                (
                    None
                    if n.registered_saver is None
                    else (n.registered_saver.name, n.registered_saver.object_name)
                ),
                n.has_checkpoint_values,
            )
            for n in nodes
        ]
    )


def decode_object_graph(data):
    """The nodes (``TrackableObject``) of a serialized ``TrackableObjectGraph``; every node id
    they hold is checked to name a node (``DataLossError`` otherwise)."""
    return [
        TrackableObject(
            children=[ObjectReference(*c) for c in children],
            attributes=[SerializedTensor(*a) for a in attributes],
            slot_variables=[SlotVariableReference(*s) for s in slots],
            registered_saver=None if saver is None else RegisteredSaver(*saver),
            has_checkpoint_values=has_values,
        )
        for children, attributes, slots, saver, has_values in _native.decode_object_graph(data)
    ]
