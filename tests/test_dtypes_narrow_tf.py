"""The narrow integer dtypes in TensorFlow and in ferrotape, compared value by value (the
pattern of tests/test_tf_reference.py). Without TensorFlow the module is skipped; the same
behaviours are pinned without it in tests/test_dtypes_narrow.py."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
real_tf = pytest.importorskip(
    "tensorflow", reason="TensorFlow is not installed (pip install tensorflow-cpu)"
)

import ferrotape  # noqa: E402 - after the skip, so that a missing TensorFlow skips cleanly

NARROW = ["int8", "int16", "uint8", "uint16", "uint32", "uint64"]
PROGRAMS = []


def program(fn):
    PROGRAMS.append(fn)
    return fn


def outcome(fn):
    """fn's result as (dtype name, values), or the kind of error it raises."""
    try:
        r = fn()
    except Exception as err:  # noqa: BLE001 - the kind of error is the result compared
        if isinstance(err, ValueError) or type(err).__name__ in (
            "InvalidArgumentError",
            "NotFoundError",
            "InternalError",
        ):
            return "ValueError or InvalidArgumentError"
        return type(err).__name__
    return r.dtype.name, r.numpy().tolist()


def values(name, seed):
    info = np.iinfo(name)
    rng = np.random.default_rng(seed)
    v = rng.integers(info.min, info.max, size=(2, 5), dtype=name, endpoint=True)
    v.reshape(-1)[:3] = [info.min, info.max, 0]
    return v


@program
def arithmetic(tf, name):
    a, b = tf.constant(values(name, 0)), tf.constant(values(name, 1))
    b = tf.where(tf.equal(b, tf.zeros_like(b)), tf.ones_like(b), b)
    ops = [tf.add, tf.subtract, tf.multiply, tf.maximum, tf.minimum, tf.math.floordiv]
    ops += [tf.math.floormod, tf.truncatediv, tf.math.less, tf.math.greater_equal, tf.equal]
    ops += [tf.math.squared_difference, tf.pow]
    return [outcome(lambda f=f: f(a, b)) for f in ops]


@program
def unary_and_reductions(tf, name):
    a = tf.constant(values(name, 2))
    ops = [tf.abs, tf.negative, tf.sign, tf.square, tf.nn.relu, tf.exp]
    ops += [tf.reduce_sum, tf.reduce_prod, tf.reduce_max, tf.reduce_min]
    ops += [lambda x: tf.reduce_mean(x, 1), lambda x: tf.argmax(x, 1)]
    ops += [lambda x: tf.argmin(x, 0), lambda x: tf.reduce_sum(x, 0)]
    return [outcome(lambda f=f: f(a)) for f in ops]


@program
def casts(tf, name):
    # 16 values: TensorFlow converts them in SIMD lanes (a scalar tail differs out of range).
    floats = [300.0, -1.0, 1e10, -1e10, float("nan"), -0.5, 70000.0, -200.0]
    out = [outcome(lambda: tf.cast(tf.constant(floats * 2), name))]
    # float64 out of range: TensorFlow's result depends on the tensor's size (its float64 SIMD
    # path saturates, its scalar path wraps), so only values in range are compared.
    in_range = [0.0, 1.0, 99.9, 127.0, 0.5, -0.5, -0.9, 126.99]
    if name.startswith("int"):
        in_range += [-1.0, -99.9, -128.0, -127.5]
    out += [outcome(lambda: tf.cast(tf.constant(in_range * 2, tf.float64), name))]
    ints = tf.constant([-1, 300, -70000, 2**40 + 5, -(2**63)], tf.int64)
    out += [outcome(lambda: tf.cast(ints, name))]
    a = tf.constant(values(name, 3))
    for other in NARROW + ["int32", "int64", "float32", "float64", "bool"]:
        out.append(outcome(lambda other=other: tf.cast(a, other)))
    # 1e20 to uint64: TensorFlow clips to float32(2**64 - 1), which rounds up to 2**64, and the
    # cast then overflows to 2**63; ferrotape clips to the largest float32 below 2**64 instead,
    # as saturate_cast promises ("without overflow").
    top = 1e20 if name != "uint64" else 1e18
    out.append(outcome(lambda: tf.saturate_cast(tf.constant([-5.0, 300.0, top]), name)))
    return out


@program
def images(tf, name):
    if name not in ("uint8", "uint16", "int8", "int16"):
        return None
    ci = tf.image.convert_image_dtype
    a = tf.constant(values(name, 4))
    f = tf.constant([0.0, 0.25, 0.5, 1.0, 1.2, -0.1])
    out = [outcome(lambda: ci(a, tf.float32)), outcome(lambda: ci(f, name))]
    out += [outcome(lambda: ci(f, name, saturate=True))]
    out += [outcome(lambda o=o: ci(a, o)) for o in ("uint8", "uint16", "int32")]
    return out


@program
def shapes(tf, name):
    a, b = tf.constant(values(name, 5)), tf.constant(values(name, 6))
    return [
        outcome(lambda: tf.concat([a, b], 0)),
        outcome(lambda: tf.stack([a, b], 1)),
        outcome(lambda: tf.transpose(a)),
        outcome(lambda: a[:, ::-2]),
        outcome(lambda: tf.gather(a, [1, 0, 1], axis=0)),
        outcome(lambda: tf.pad(a, [[1, 0], [0, 1]])),
        # TensorFlow registers no CPU Tile for uint16 (UnimplementedError); ferrotape moves
        # every dtype with the same copy loops, so it tiles them all.
        outcome(lambda: tf.tile(a, [1, 2]) if name != "uint16" else a),
        outcome(lambda: tf.where(tf.greater(a, b), a, b)),
        outcome(lambda: tf.reshape(a, [5, 2])),
    ]


@pytest.mark.parametrize("name", NARROW)
@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__)
def test_same_as_tensorflow(prog, name):
    assert prog(ferrotape, name) == prog(real_tf, name)
