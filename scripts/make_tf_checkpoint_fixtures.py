"""Writes the TensorFlow checkpoints under ``tests/data/tf_checkpoints/`` that the tests read
without TensorFlow: files TensorFlow 2.21 itself wrote, and what TensorFlow reads back from them.

Run with an interpreter that has TensorFlow (``pip install tensorflow-cpu==2.21.*``):

    python scripts/make_tf_checkpoint_fixtures.py [--out DIR]

(``--out`` writes elsewhere: tests/test_tensor_bundle.py runs it into a temporary folder where
TensorFlow is available, to check a fresh TensorFlow's files as it checks the committed ones.)

Each fixture is a folder holding ``ckpt.index``, ``ckpt.data-*`` and ``expected.json``: every
key's dtype, shape and stored bytes (hex) as ``tf.train.load_checkpoint`` returns them, the
variable list of ``tf.train.list_variables``, and the object graph parsed by TensorFlow's own
``TrackableObjectGraph`` proto. Values are fixed (no random initializers), so a rerun writes the
same files.
"""

import argparse
import json
import os
import shutil
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.protobuf import trackable_object_graph_pb2  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "data" / "tf_checkpoints"
GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


def values(dtype, shape):
    """A fixed, non-trivial array: negatives, fractions and large magnitudes where they fit."""
    n = int(np.prod(shape))
    base = np.arange(n, dtype=np.float64) * 1.75 - 3.0
    if dtype == np.bool_:
        return (np.arange(n) % 3 == 0).reshape(shape)
    if np.issubdtype(dtype, np.complexfloating):
        return (base + 1j * (base[::-1] / 4)).astype(dtype).reshape(shape)
    if np.issubdtype(np.dtype(dtype), np.unsignedinteger):
        return (np.arange(n) * 37 + 200).astype(dtype).reshape(shape)
    if np.issubdtype(np.dtype(dtype), np.integer):
        return (np.arange(n) * 37 - 100).astype(dtype).reshape(shape)
    return base.astype(dtype).reshape(shape)


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


def dtypes_checkpoint():
    """A variable of every dtype, plus a scalar, an empty tensor and strings."""
    root = tf.train.Checkpoint()
    for dtype in DTYPES:
        name = np.dtype(dtype).name
        setattr(root, name, tf.Variable(values(dtype, (2, 3)), dtype=tf.as_dtype(dtype)))
    root.scalar = tf.Variable(np.float64(-0.5))
    root.empty = tf.Variable(np.zeros((0, 3), np.float32))
    strings = np.array([[b"", b"ab"], [b"\x00\xff bytes", b"x" * 200]], dtype=object)
    root.strings = tf.Variable(strings, dtype=tf.string)
    root.text = tf.Variable(b"a scalar string", dtype=tf.string)
    return root


def keras_checkpoint():
    """A small Keras model and its Adam optimizer after one step (Keras 3 tracks the optimizer's
    variables as lists, not slot variables)."""
    model = tf.keras.Sequential(
        [
            tf.keras.Input((3,)),
            tf.keras.layers.Dense(4, activation="relu"),
            tf.keras.layers.Dense(2),
        ]
    )
    model.set_weights([values(np.float32, w.shape) / 10 for w in model.get_weights()])
    optimizer = tf.keras.optimizers.Adam(0.01)
    x = tf.constant(values(np.float32, (5, 3)))
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x) ** 2)
    optimizer.apply_gradients(
        zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables, strict=True)
    )
    return tf.train.Checkpoint(model=model, optimizer=optimizer)


def slot_checkpoint():
    """A TF1-style optimizer, which records its "m"/"v" slots as slot_variables in the graph."""
    v = tf.Variable([1.0, -2.0, 3.0])
    w = tf.Variable([[0.5]])
    optimizer = tf.compat.v1.train.AdamOptimizer(0.1)
    optimizer.minimize(lambda: tf.reduce_sum(v**2) + tf.reduce_sum(w), var_list=[v, w])
    return tf.train.Checkpoint(v=v, w=w, optimizer=optimizer)


def sharded_checkpoint():
    """Four 64-byte variables, for the sharding policies of ``main``."""
    root = tf.train.Checkpoint()
    for i in range(4):
        setattr(root, f"v{i}", tf.Variable(values(np.float32, (16,)) + i))
    return root


def graph_nodes(serialized):
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(serialized)
    nodes = []
    for node in graph.nodes:
        nodes.append(
            {
                "children": [
                    {"node_id": c.node_id, "local_name": c.local_name} for c in node.children
                ],
                "attributes": [
                    {
                        "name": a.name,
                        "full_name": a.full_name,
                        "checkpoint_key": a.checkpoint_key,
                    }
                    for a in node.attributes
                ],
                "slot_variables": [
                    {
                        "original_variable_node_id": s.original_variable_node_id,
                        "slot_name": s.slot_name,
                        "slot_variable_node_id": s.slot_variable_node_id,
                    }
                    for s in node.slot_variables
                ],
                "registered_saver": (
                    {
                        "name": node.registered_saver.name,
                        "object_name": node.registered_saver.object_name,
                    }
                    if node.HasField("registered_saver")
                    else None
                ),
                "has_checkpoint_values": (
                    node.has_checkpoint_values.value
                    if node.HasField("has_checkpoint_values")
                    else None
                ),
            }
        )
    return nodes


def expected(prefix):
    reader = tf.train.load_checkpoint(prefix)
    dtypes = reader.get_variable_to_dtype_map()
    tensors = {}
    for key, shape in sorted(reader.get_variable_to_shape_map().items()):
        value = reader.get_tensor(key)
        entry = {"dtype": dtypes[key].name, "shape": list(shape)}
        if dtypes[key] == tf.string:
            flat = np.asarray(value, dtype=object).reshape(-1)
            entry["strings_hex"] = [bytes(s).hex() for s in flat]
        else:
            entry["hex"] = np.ascontiguousarray(value).tobytes().hex()
        tensors[key] = entry
    out = {
        "list_variables": [[k, list(s)] for k, s in tf.train.list_variables(prefix)],
        "tensors": tensors,
    }
    if GRAPH_KEY in tensors:
        out["object_graph"] = graph_nodes(reader.get_tensor(GRAPH_KEY))
    return out


def dump(path, data):
    """JSON with one tensor or graph node a line: small, and a change shows as a line's diff."""
    lines = []
    for field, value in data.items():
        if isinstance(value, dict):
            items = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items()]
        else:
            items = [f"  {json.dumps(v)}" for v in value]
        lines.append(
            f"{json.dumps(field)}: {{\n" if isinstance(value, dict) else f"{json.dumps(field)}: [\n"
        )
        lines[-1] += ",\n".join(items) + ("\n}" if isinstance(value, dict) else "\n]")
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n")


def write(out, name, root, options=None):
    folder = out / name
    shutil.rmtree(folder, ignore_errors=True)
    prefix = root.write(str(folder / "ckpt"), options=options)
    dump(folder / "expected.json", expected(prefix))
    print(f"wrote {folder}: {sorted(p.name for p in folder.iterdir())}")


def sharding(max_bytes):
    policy = tf.train.experimental.MaxShardSizePolicy(max_shard_size=max_bytes)
    return tf.train.CheckpointOptions(experimental_sharding_callback=policy)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=FIXTURES, help="folder of the fixtures")
    out = parser.parse_args().out
    write(out, "dtypes", dtypes_checkpoint())
    write(out, "keras_model", keras_checkpoint())
    write(out, "slot_variables", slot_checkpoint())
    # Shards of at most 128 bytes: two 64-byte variables each, none split.
    write(out, "sharded", sharded_checkpoint(), sharding(128))
    # At most 100 bytes: TensorFlow splits variables across shards, saving them as slices.
    write(out, "sliced", sharded_checkpoint(), sharding(100))


if __name__ == "__main__":
    main()
