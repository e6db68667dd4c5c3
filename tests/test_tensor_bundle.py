"""TensorFlow's checkpoint files through ``ferrotape._tensor_bundle``: round trips of every dtype
and of strings, TensorFlow 2.21's own files (``tests/data/tf_checkpoints/``, written by
``scripts/make_tf_checkpoint_fixtures.py``) read as TensorFlow reads them, corrupt files refused
by name, and the object graph proto.

The last tests run TensorFlow itself, in this interpreter if it imports TensorFlow or else in
the one named by FERROTAPE_TF_PYTHON, and skip without either (CI has no TensorFlow): a fresh
TensorFlow's checkpoints read here, and checkpoints written here read and restored by TensorFlow.
"""

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ferrotape import _tensor_bundle as tb
from ferrotape.errors import (
    DataLossError,
    InvalidArgumentError,
    NotFoundError,
    UnimplementedError,
)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "data" / "tf_checkpoints"
FIXTURE_NAMES = ["dtypes", "keras_model", "slot_variables", "sharded", "sliced"]

DTYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    ml_dtypes.bfloat16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
]


def sample(dtype, shape):
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return (np.arange(n) % 3 == 1).reshape(shape)
    values = np.arange(n, dtype=np.float64) * 1.5 - 2
    if np.issubdtype(np.dtype(dtype), np.unsignedinteger):
        values = np.arange(n) * 3 + 250
    if np.issubdtype(np.dtype(dtype), np.complexfloating):
        values = values - 1j * values
    return values.astype(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(), (0, 3), (2, 3, 4)], ids=str)
def test_every_dtype_round_trips(tmp_path, dtype, shape):
    prefix = tmp_path / "sub" / "ckpt"
    value = sample(dtype, shape)
    tb.write_bundle(prefix, {"v": value})
    assert tb.read_index(prefix) == {"v": (np.dtype(dtype), shape)}
    got = tb.read_tensor(prefix, "v")
    assert got.dtype == np.dtype(dtype) and got.shape == shape
    assert got.tobytes() == value.tobytes()


def test_layouts_numpy_can_hold_are_stored_as_tensorflow_stores_them(tmp_path):
    prefix = tmp_path / "ckpt"
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    big_endian = np.arange(5, dtype=">i4")
    tb.write_bundle(prefix, {"t": base.T, "be": big_endian, "list": [[1.0, 2.0]]})
    np.testing.assert_array_equal(tb.read_tensor(prefix, "t"), base.T)
    got = tb.read_tensor(prefix, "be")
    assert got.dtype == np.dtype("<i4")
    np.testing.assert_array_equal(got, big_endian)
    assert tb.read_index(prefix)["list"] == (np.dtype(np.float64), (1, 2))


def test_string_tensors_round_trip(tmp_path):
    prefix = tmp_path / "ckpt"
    grid = np.array([[b"", b"ab"], [b"\x00\xff", b"x" * 300]], dtype=object)
    tb.write_bundle(
        prefix,
        {
            "grid": grid,
            "scalar": b"graph bytes",
            "text": "héllo",
            "fixed": np.array([b"a", b"bc"]),
            "unicode": np.array(["é", "z"]),
            "empty": np.array([], dtype=object),
        },
    )
    index = tb.read_index(prefix)
    assert index["grid"] == ("string", (2, 2)) and index["scalar"] == ("string", ())
    got = tb.read_tensor(prefix, "grid")
    assert got.dtype == object and got.shape == (2, 2) and got.tolist() == grid.tolist()
    assert tb.read_tensor(prefix, "scalar") == b"graph bytes"
    assert tb.read_tensor(prefix, "text") == "héllo".encode()
    assert tb.read_tensor(prefix, "fixed").tolist() == [b"a", b"bc"]
    assert tb.read_tensor(prefix, "unicode").tolist() == ["é".encode(), b"z"]
    assert tb.read_tensor(prefix, "empty").shape == (0,)


def test_an_empty_bundle_and_a_rewritten_prefix(tmp_path):
    prefix = tmp_path / "ckpt"
    tb.write_bundle(prefix, {})
    assert tb.read_index(prefix) == {}
    tb.write_bundle(prefix, {"a": np.int8(1)})
    tb.write_bundle(prefix, {"b": np.int8(2)})
    assert list(tb.read_index(prefix)) == ["b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.data-00000-of-00001", "ckpt.index"]


def test_values_that_cannot_be_written_are_refused_before_any_file(tmp_path):
    prefix = tmp_path / "ckpt"
    with pytest.raises(TypeError, match=r"tensor 'd' has dtype datetime64\[s\]; expected one of"):
        tb.write_bundle(prefix, {"d": np.array(["2020-01-01"], dtype="datetime64[s]")})
    with pytest.raises(TypeError, match="string tensor 's' holds int 3; expected bytes or str"):
        tb.write_bundle(prefix, {"s": np.array([b"a", 3], dtype=object)})
    with pytest.raises(InvalidArgumentError, match="the empty key is the bundle's header"):
        tb.write_bundle(prefix, {"": np.float32(1)})
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------- TensorFlow's files


def check_against_tensorflow(folder):
    """The checkpoint in ``folder`` reads as ``folder/expected.json`` says TensorFlow read it."""
    expected = json.loads((folder / "expected.json").read_text())
    reader = tb.BundleReader(folder / "ckpt")
    index = reader.index()
    assert [[key, list(shape)] for key, (_, shape) in index.items()] == expected["list_variables"]
    partitioned = 0
    for key, want in expected["tensors"].items():
        dtype, shape = index[key]
        assert (getattr(dtype, "name", dtype), list(shape)) == (want["dtype"], want["shape"])
        try:
            value = reader.read(key)
        except UnimplementedError as error:
            assert "partitioned variable saved as" in str(error) and key in str(error)
            partitioned += 1
            continue
        if dtype == "string":
            items = [value] if shape == () else list(np.asarray(value).reshape(-1))
            assert [bytes(s).hex() for s in items] == want["strings_hex"], key
        else:
            assert value.dtype == dtype and value.shape == tuple(shape), key
            assert value.tobytes().hex() == want["hex"], key
    graph_bytes = reader.read(tb.OBJECT_GRAPH_KEY)
    graph = tb.decode_object_graph(graph_bytes)
    assert [dataclasses.asdict(node) for node in graph] == expected["object_graph"]
    assert tb.encode_object_graph(graph) == graph_bytes
    return partitioned


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_tensorflow_checkpoints_read_as_tensorflow_reads_them(name):
    partitioned = check_against_tensorflow(FIXTURES / name)
    # TensorFlow's MaxShardSizePolicy splits variables that do not fit one shard into slices.
    assert (partitioned > 0) == (name == "sliced")


def test_the_fixtures_have_slots_shards_and_a_keras_model():
    """What each fixture is there for is in it (a regenerated fixture keeps testing it)."""
    slots = json.loads((FIXTURES / "slot_variables" / "expected.json").read_text())
    assert any(node["slot_variables"] for node in slots["object_graph"])
    assert len(list((FIXTURES / "sharded").glob("ckpt.data-*"))) == 2
    keras = json.loads((FIXTURES / "keras_model" / "expected.json").read_text())
    assert any("dense" in key for key in json.dumps(keras["object_graph"]).split('"'))


def corrupt_copy(tmp_path, name="dtypes"):
    prefix = tmp_path / "ckpt"
    for path in (FIXTURES / name).glob("ckpt.*"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    return prefix


def test_a_file_that_is_not_an_index_is_refused_by_name(tmp_path):
    prefix = corrupt_copy(tmp_path)
    index = tmp_path / "ckpt.index"
    good = index.read_bytes()
    for data, part in [
        (b"PK\x03\x04 a zip file, not a table" * 3, "bad magic number"),
        (good[: len(good) // 2], "bad magic number"),
        (good[:20], "shorter than the 48-byte table footer"),
        (good[:40] + bytes([good[40] ^ 1]) + good[41:], "checksum mismatch"),
    ]:
        index.write_bytes(data)
        with pytest.raises(DataLossError, match="not a TensorFlow checkpoint index: ") as info:
            tb.read_index(prefix)
        assert part in str(info.value) and "ckpt.index" in str(info.value)


def test_missing_files_and_keys_are_not_found(tmp_path):
    prefix = corrupt_copy(tmp_path)
    with pytest.raises(NotFoundError, match="Key nope not found in checkpoint"):
        tb.read_tensor(prefix, "nope")
    with pytest.raises(NotFoundError, match="absent.index"):
        tb.read_index(tmp_path / "absent")
    (tmp_path / "ckpt.data-00000-of-00001").unlink()
    with pytest.raises(NotFoundError, match="ckpt.data-00000-of-00001"):
        tb.read_tensor(prefix, "float32/.ATTRIBUTES/VARIABLE_VALUE")


def test_corrupt_data_names_file_and_key(tmp_path):
    prefix = tmp_path / "ckpt"
    tb.write_bundle(prefix, {"w": np.arange(4, dtype=np.float32), "s": np.array([b"ab", b"c"])})
    data = tmp_path / "ckpt.data-00000-of-00001"
    good = data.read_bytes()
    data.write_bytes(bytes([good[0] ^ 1]) + good[1:])
    with pytest.raises(DataLossError, match="key w in .*ckpt.data-00000-of-00001: checksum"):
        tb.read_tensor(prefix, "w")
    data.write_bytes(good[:20])
    with pytest.raises(DataLossError, match=r"key s .*\[16, 16 \+ 9\) but the file is 20 bytes"):
        tb.read_tensor(prefix, "s")


def test_an_index_declaring_more_than_the_file_holds_is_refused_before_reading(tmp_path):
    # The index of a bundle with a 4 MB tensor over the data of a 4-byte one: the reader must
    # compare the declared size with the file's, not allocate it (the Rust tests declare 4 TB).
    big = tmp_path / "big"
    small = tmp_path / "small"
    tb.write_bundle(big, {"w": np.ones(1_000_000, np.float32)})
    tb.write_bundle(small, {"w": np.float32(1)})
    (tmp_path / "big.data-00000-of-00001").write_bytes(
        (tmp_path / "small.data-00000-of-00001").read_bytes()
    )
    with pytest.raises(
        DataLossError, match=r"\[0, 0 \+ 4000000\) but the file is 4 bytes; it is truncated"
    ):
        tb.read_tensor(big, "w")


def test_object_graphs_round_trip_through_the_dataclasses():
    nodes = [
        tb.TrackableObject(
            children=[tb.ObjectReference(1, "v"), tb.ObjectReference(2, "opt")],
            has_checkpoint_values=True,
        ),
        tb.TrackableObject(
            attributes=[tb.SerializedTensor("VARIABLE_VALUE", "v", "v/.ATTRIBUTES/VARIABLE_VALUE")],
            slot_variables=[tb.SlotVariableReference(1, "m", 2)],
            has_checkpoint_values=False,
        ),
        tb.TrackableObject(registered_saver=tb.RegisteredSaver("saver", "obj")),
    ]
    data = tb.encode_object_graph(nodes)
    assert tb.decode_object_graph(data) == nodes
    # Node 2 has no has_checkpoint_values field; node 1's False is an empty BoolValue.
    assert data.endswith(b"\x0a\x0e\x22\x0c\x0a\x05saver\x12\x03obj")
    assert b"\x2a\x00" in data
    with pytest.raises(DataLossError, match="not a TrackableObjectGraph proto"):
        tb.decode_object_graph(b"\x0a\xff\xff")
    dangling = [tb.TrackableObject(children=[tb.ObjectReference(5, "x")])]
    with pytest.raises(DataLossError, match='child "x" refers to node 5, but the graph has 1'):
        tb.decode_object_graph(tb.encode_object_graph(dangling))


# ----------------------------------------------------------------------------- TensorFlow itself


def tensorflow_python():
    if importlib.util.find_spec("tensorflow") is not None:
        return sys.executable
    python = os.environ.get("FERROTAPE_TF_PYTHON")
    if not python:
        pytest.skip("TensorFlow is not importable (set FERROTAPE_TF_PYTHON to an interpreter)")
    return python


def run_tensorflow(*args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(
        [tensorflow_python(), *map(str, args)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def test_a_fresh_tensorflows_checkpoints_read_here(tmp_path):
    run_tensorflow(ROOT / "scripts" / "make_tf_checkpoint_fixtures.py", "--out", tmp_path)
    for name in FIXTURE_NAMES:
        check_against_tensorflow(tmp_path / name)


# Reads the checkpoint that ours() wrote with TensorFlow's readers, restores it into the same
# structure built with TensorFlow, and saves that structure itself for a byte comparison.
READ_WITH_TENSORFLOW = """
import json, sys
import numpy as np
import tensorflow as tf

prefix, copy = sys.argv[1], sys.argv[2]
reader = tf.train.load_checkpoint(prefix)
dtypes = reader.get_variable_to_dtype_map()
tensors = {}
for key, shape in tf.train.list_variables(prefix):
    value = reader.get_tensor(key)
    if dtypes[key] == tf.string:
        flat = np.asarray(value, dtype=object).reshape(-1)
        tensors[key] = [dtypes[key].name, shape, [bytes(s).hex() for s in flat]]
    else:
        tensors[key] = [dtypes[key].name, shape, np.ascontiguousarray(value).tobytes().hex()]

def hexof(variable):
    value = variable.numpy()
    return value.hex() if isinstance(value, bytes) else np.asarray(value).tobytes().hex()

def zeros(key):
    return tf.Variable(tf.zeros(reader.get_variable_to_shape_map()[key], dtypes[key]))

graph_key = "_CHECKPOINTABLE_OBJECT_GRAPH"
names = sorted({k.split("/")[0] for k in dtypes if k != graph_key} - {"model", "save_counter"})
root = tf.train.Checkpoint()
for name in names:
    setattr(root, name, zeros(f"{name}/.ATTRIBUTES/VARIABLE_VALUE"))
root.model = tf.Module()
root.model.layers = [zeros(f"model/layers/{i}/.ATTRIBUTES/VARIABLE_VALUE") for i in range(2)]
root.model.w = zeros("model/w/.ATTRIBUTES/VARIABLE_VALUE")
# restore() creates save_counter (as save() does) and binds it to the checkpoint's value.
root.restore(prefix).assert_consumed()
restored = {name: hexof(getattr(root, name)) for name in names + ["save_counter"]}
restored["model/layers"] = [hexof(v) for v in root.model.layers]
restored["model/w"] = hexof(root.model.w)
root.write(copy)
print(json.dumps({"tensors": tensors, "restored": restored}))
"""


def object_graph(tree, full_names):
    """The nodes of ``tree`` ({name: subtree or checkpoint key}), numbered breadth-first from
    the root as TensorFlow numbers them; a variable's ``full_name`` is its TensorFlow name."""
    nodes = [tb.TrackableObject(has_checkpoint_values=True)]
    queue = [(tree, nodes[0])]
    while queue:
        subtree, node = queue.pop(0)
        for name, child in subtree.items():
            node.children.append(tb.ObjectReference(len(nodes), name))
            if isinstance(child, dict):
                nodes.append(tb.TrackableObject(has_checkpoint_values=True))
                queue.append((child, nodes[-1]))
            else:
                value = tb.SerializedTensor(
                    "VARIABLE_VALUE", full_names.get(child, "Variable"), child
                )
                nodes.append(tb.TrackableObject(attributes=[value], has_checkpoint_values=True))
    return nodes


def ours(prefix):
    """Variables of every dtype, a string and a nested module with a list, written as
    ``tf.train.Checkpoint(v_<dtype>=..., text=..., model=Module(layers=[...], w=...))`` saves
    them after a restore (which adds its ``save_counter``)."""
    key = "{}/.ATTRIBUTES/VARIABLE_VALUE".format
    tensors = {key(f"v_{np.dtype(d).name}"): sample(d, (2, 3)) for d in DTYPES}
    tensors[key("text")] = b"a string variable"
    tensors[key("model/layers/0")] = sample(np.float64, (2,))
    tensors[key("model/layers/1")] = sample(np.int64, ())
    tensors[key("model/w")] = sample(np.float32, (3,))
    tensors[key("save_counter")] = np.int64(3)
    names = sorted({k.split("/")[0] for k in tensors} - {"model", "save_counter"})
    tree = {name: key(name) for name in names}
    layers = {str(i): key(f"model/layers/{i}") for i in range(2)}
    tree["model"] = {"layers": layers, "w": key("model/w")}
    tree["save_counter"] = key("save_counter")
    nodes = object_graph(tree, {key("save_counter"): "save_counter"})
    # TensorFlow stores the values in node order, then the graph.
    ordered = {a.checkpoint_key: tensors[a.checkpoint_key] for n in nodes for a in n.attributes}
    ordered[tb.OBJECT_GRAPH_KEY] = tb.encode_object_graph(nodes)
    tb.write_bundle(prefix, ordered)
    return tensors


def test_tensorflow_reads_and_restores_what_is_written_here(tmp_path):
    prefix, copy = tmp_path / "ours" / "ckpt", tmp_path / "theirs" / "ckpt"
    tensors = ours(prefix)
    out = run_tensorflow("-c", READ_WITH_TENSORFLOW, prefix, copy)
    result = json.loads(out.splitlines()[-1])
    for key, value in tensors.items():
        dtype, shape, data = result["tensors"][key]
        if isinstance(value, bytes):
            assert (dtype, shape, data) == ("string", [], [value.hex()])
        else:
            want = (np.asarray(value).dtype.name, list(np.shape(value)), value.tobytes().hex())
            assert (dtype, shape, data) == want, key
    restored = result["restored"]
    for key, value in tensors.items():
        name = key.removesuffix("/.ATTRIBUTES/VARIABLE_VALUE")
        if name.startswith("model/layers/"):
            got = restored["model/layers"][int(name[-1])]
        else:
            got = restored[name]
        assert got == (value if isinstance(value, bytes) else value.tobytes()).hex(), key
    # TensorFlow saving the same structure writes the same two files, object graph included.
    for suffix in (".index", ".data-00000-of-00001"):
        theirs = Path(f"{copy}{suffix}").read_bytes()
        assert Path(f"{prefix}{suffix}").read_bytes() == theirs, suffix
