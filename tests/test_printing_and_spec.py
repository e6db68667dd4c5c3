"""``ft.print`` (printing.py) and ``ft.TensorSpec`` (tensor_spec.py) against hand-written
TensorFlow 2.21 output; tests/test_control_flow_tf.py compares with TensorFlow itself when it is
installed."""

import logging
import pickle
import sys

import numpy as np
import pytest

import ferrotape as tf

# What TensorFlow 2.21 printed for each input (tf.print, default summarize=3).
PRINTED = [
    (lambda: tf.constant(0.1), "0.1"),
    (lambda: tf.constant(0.1, tf.float64), "0.1"),
    (lambda: tf.constant([1 / 3, 2 / 3, 100 / 3]), "[0.333333343 0.666666687 33.3333321]"),
    (
        lambda: tf.constant([1 / 3, 2 / 3, 100 / 3], tf.float64),
        "[0.33333333333333331 0.66666666666666663 33.333333333333336]",
    ),
    (lambda: tf.constant([1.0, 2.5, 1e-7]), "[1 2.5 1e-07]"),
    (lambda: tf.constant([np.nan, np.inf, -np.inf]), "[nan inf -inf]"),
    (lambda: tf.constant([1e6, 1.5e7, 12345678.0, 1e16]), "[1e+06 1.5e+07 12345678 1e+16]"),
    (
        lambda: tf.constant([1e6, 1.5e7, 123456789012.0, 1e16, 1e-5, 0.1], tf.float64),
        "[1000000 15000000 123456789012 1e+16 1e-05 0.1]",
    ),
    (lambda: tf.constant([0.1, 1.5], tf.float16), "[0.0999755859 1.5]"),
    (lambda: tf.range(10), "[0 1 2 ... 7 8 9]"),
    (lambda: tf.range(6), "[0 1 2 3 4 5]"),
    (lambda: tf.reshape(tf.range(6), [2, 3]), "[[0 1 2]\n [3 4 5]]"),
    (
        lambda: tf.reshape(tf.range(24), [2, 3, 4]),
        "[[[0 1 2 3]\n  [4 5 6 7]\n  [8 9 10 11]]\n\n"
        " [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]]",
    ),
    (
        lambda: tf.reshape(tf.range(16), [2, 2, 2, 2]),
        "[[[[0 1]\n   [2 3]]\n\n  [[4 5]\n   [6 7]]]\n\n\n"
        " [[[8 9]\n   [10 11]]\n\n  [[12 13]\n   [14 15]]]]",
    ),
    (lambda: tf.constant([True, False]), "[1 0]"),
    (lambda: tf.constant(True), "1"),
    (lambda: tf.zeros([0]), "[]"),
    (lambda: tf.zeros([2, 0]), "[\n ...]"),
    (lambda: tf.zeros([0, 2]), "[]"),
    (lambda: tf.constant([[5]]), "[[5]]"),
    (lambda: tf.constant([-1.5, 2.0]), "[-1.5 2]"),
    (lambda: tf.Variable([1.0, 2.0]), "[1 2]"),
]


@pytest.mark.parametrize("make,expected", PRINTED)
def test_tensor_formatting(make, expected, capsys):
    tf.print(make())
    assert capsys.readouterr().err == expected + "\n"


def test_2d_summary():
    text = tf.printing.format_tensor(tf.reshape(tf.range(100), [10, 10]))
    assert text == (
        "[[0 1 2 ... 7 8 9]\n [10 11 12 ... 17 18 19]\n [20 21 22 ... 27 28 29]\n ...\n"
        " [70 71 72 ... 77 78 79]\n [80 81 82 ... 87 88 89]\n [90 91 92 ... 97 98 99]]"
    )


@pytest.mark.parametrize(
    "summarize,expected",
    [(1, "[0 ... 9]"), (0, "[ ...]"), (-1, "[0 1 2 3 4 5 6 7 8 9]"), (None, "[0 1 2 ... 7 8 9]")],
)
def test_summarize(summarize, expected, capsys):
    tf.print(tf.range(10), summarize=summarize)
    assert capsys.readouterr().err == expected + "\n"


def test_mixed_inputs_sep_end_and_streams(capsys, tmp_path):
    tf.print("loss:", tf.constant(1.5), 3, 2.5, None, True)
    assert capsys.readouterr().err == "loss: 1.5 3 2.5 None True\n"
    tf.print("a", tf.constant(1), sep="|", end="<END>\n", output_stream=sys.stdout)
    assert capsys.readouterr().out == "a|1<END>\n"
    tf.print([tf.constant(1), "x", 2.0], {"b": tf.constant([1, 2]), "a": "s"})
    assert capsys.readouterr().err == "[1, 'x', 2.0] {'a': 's', 'b': [1 2]}\n"
    tf.print({"k": [tf.constant(1.0), (2, tf.constant([3, 4]))]}, (tf.constant(1),))
    assert capsys.readouterr().err == "{'k': [1, (2, [3 4])]} (1,)\n"
    tf.print("100% {}", tf.constant(1))  # a "{}" in the text does not take a tensor's place
    assert capsys.readouterr().err == "100% {} 1\n"
    tf.print(np.array([1.0, 2.0]))  # not a tensor: pprint's text
    assert capsys.readouterr().err == "array([1., 2.])\n"
    tf.print()
    assert capsys.readouterr().err == "\n"
    path = tmp_path / "out.txt"
    tf.print("f1", tf.constant([1, 2]), output_stream=f"file://{path}")
    tf.print("f2", output_stream=f"file://{path}")
    assert path.read_text() == "f1 [1 2]\nf2\n"


def test_logging_stream_and_errors(caplog):
    with caplog.at_level(logging.INFO, logger="ferrotape"):
        tf.print("hello", tf.constant(2), output_stream=logging.info)
    assert caplog.records[-1].getMessage() == "hello 2"
    with pytest.raises(ValueError, match="output stream"):
        tf.print("x", output_stream="bad")
    with pytest.raises(ValueError, match="unrecognized keyword"):
        tf.print("x", foo=1)


def test_tensor_spec_basics():
    spec = tf.TensorSpec([None, 2], tf.float32, name="x")
    assert repr(spec) == "TensorSpec(shape=(None, 2), dtype=tf.float32, name='x')"
    assert spec.shape == [None, 2] and spec.dtype == tf.float32 and spec.name == "x"
    assert repr(tf.TensorSpec(None)) == "TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)"
    assert tf.TensorSpec(None).shape is None
    assert tf.TensorSpec(3).shape == [3] and tf.TensorSpec([]).shape == []
    assert tf.TensorSpec(np.array([2, 3])).shape == [2, 3]
    assert tf.TensorSpec(tf.constant([2, 3])).shape == [2, 3]
    assert tf.TensorSpec([2], "float64").dtype == tf.float64
    assert tf.TensorSpec.from_tensor(tf.zeros([2, 3], tf.int32)) == tf.TensorSpec([2, 3], tf.int32)
    assert tf.TensorSpec.from_spec(spec, name="z").name == "z"
    assert tf.TensorSpec.from_spec(spec).name == "x"
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert spec.value_type is tf.Tensor


def test_tensor_spec_equality_and_hash_as_tf():
    a = tf.TensorSpec([2], tf.float32, "a")
    assert a == tf.TensorSpec([2], tf.float32, "a")
    assert a != tf.TensorSpec([2], tf.float32, "b")  # names count for equality...
    assert hash(a) == hash(tf.TensorSpec([2], tf.float32, "b"))  # ...but not for the hash
    assert tf.TensorSpec([None]) != tf.TensorSpec([2])
    assert tf.TensorSpec([2]) != tf.TensorSpec([2], tf.float64)
    assert tf.TensorSpec([2]) != 3
    assert len({tf.TensorSpec([2]), tf.TensorSpec([2]), tf.TensorSpec([3])}) == 2


def test_tensor_spec_compatibility():
    spec = tf.TensorSpec([None, 2])
    assert spec.is_compatible_with(tf.zeros([3, 2]))
    assert not spec.is_compatible_with(tf.zeros([3, 2], tf.float64))
    assert not spec.is_compatible_with(tf.zeros([3, 3]))
    assert spec.is_compatible_with(tf.TensorSpec([5, 2]))
    assert tf.TensorSpec([5, 2]).is_compatible_with(spec)
    assert tf.TensorSpec(None).is_compatible_with(tf.TensorSpec([5, 2]))
    assert tf.TensorSpec([2], name="a").is_compatible_with(tf.TensorSpec([2], name="b"))
    # As in TF, only tensors and specs can be compatible: arrays, numbers, variables are not.
    for other in (np.zeros([2], np.float32), [1.0, 2.0], 1.0, tf.Variable([1.0, 2.0]), "x"):
        assert not tf.TensorSpec([2]).is_compatible_with(other)
    merged = tf.TensorSpec([2, 3]).most_specific_common_supertype([tf.TensorSpec([2, 4])])
    assert merged == tf.TensorSpec([2, None])
    assert tf.TensorSpec([2, 3]).is_subtype_of(tf.TensorSpec([None, 3]))
    assert not tf.TensorSpec([None, 3]).is_subtype_of(tf.TensorSpec([2, 3]))


@pytest.mark.parametrize(
    "call,error",
    [
        (lambda: tf.TensorSpec([2], "foo"), TypeError),
        (lambda: tf.TensorSpec([2], None), TypeError),
        (lambda: tf.TensorSpec("ab"), TypeError),
        (lambda: tf.TensorSpec([-1]), ValueError),
        (lambda: tf.TensorSpec.from_tensor(np.zeros([2])), ValueError),
        (lambda: tf.TensorSpec.from_tensor(tf.Variable([1.0])), ValueError),
    ],
)
def test_tensor_spec_errors(call, error):
    with pytest.raises(error):
        call()
