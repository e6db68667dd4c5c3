"""tests/test_python_value_rules.py's rules run side by side with TensorFlow 2.21: Python
ints converted by binary ops and constants, tf.range's dtype, tf.concat of one tensor, and
Python types as dtypes. Skipped without TensorFlow (``pip install tensorflow-cpu``)."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed")

import ferrotape as ft  # noqa: E402 - after the skip

INTS = [2**31 - 1, 2**31, 2**32 + 5, 2**40, -(2**40), 2**53 + 1, 2**62, 2**63 - 1, -(2**63)]
DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "float16", "float32"]


def outcome(make):
    try:
        t = make()
    except (TypeError, ValueError) as error:
        return type(error).__name__
    return t.dtype.name, t.numpy().tolist()


@pytest.mark.parametrize("value", INTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_python_int_conversion_matches(value, dtype):
    assert outcome(lambda: ft.constant(value, dtype)) == outcome(lambda: tf.constant(value, dtype))


@pytest.mark.parametrize("value", INTS)
@pytest.mark.parametrize("op", ["__add__", "__mul__", "__sub__", "__rsub__", "__eq__", "__lt__"])
def test_binary_op_with_python_int_matches(value, op):
    def run(lib):
        x = lib.constant([1, 2, -3])
        return getattr(x, op)(value)

    assert outcome(lambda: run(ft)) == outcome(lambda: run(tf))


@pytest.mark.parametrize(
    "args",
    [
        (2**31, 2**31 + 3),
        (0, 2**31, 2**30),
        (-(2**31) - 1, -(2**31) + 1),
        (2**62 + 1, 2**62 + 10, 3),
        (np.int64(3),),
        (np.float64(3),),
        (0, 2.5),
        (5, 0, -2),
    ],
)
def test_range_matches(args):
    assert outcome(lambda: ft.range(*args)) == outcome(lambda: tf.range(*args))


@pytest.mark.parametrize("axis", [0, 1, 3, -1])
def test_concat_of_one_value_matches(axis):
    x = np.arange(6.0).reshape(2, 3)
    for wrap in (lambda v: v, lambda v: [v]):
        want = tf.concat(wrap(tf.constant(x)), axis)
        got = ft.concat(wrap(ft.constant(x)), axis)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("python_type", [int, float, bool, complex])
def test_python_types_as_dtypes_match(python_type):
    def dtype_of(lib):
        try:
            return lib.cast(lib.constant([1]), python_type).dtype.name
        except TypeError:
            return "TypeError"

    assert dtype_of(ft) == dtype_of(tf)
    big = [2**63 - 1]
    want = tf.keras.ops.cast(tf.constant(big, tf.int64), python_type)
    got = ft.keras.ops.cast(ft.constant(big, ft.int64), python_type)
    assert got.dtype.name == want.dtype.name
    assert got.numpy().tolist() == want.numpy().tolist()
