"""TensorFlow 2.21's rules for Python values given to ops, with the values TensorFlow gives
(observed with TF 2.21 / Keras 3.15; tests/test_python_value_rules_tf.py runs both side by
side): a Python int converted to an integer dtype wraps to its bits, tf.range infers int64
past int32, a single tensor given to tf.concat comes back as it is, and Python's int as a
dtype is refused by TensorFlow's ops but means int64 to Keras's."""

import operator

import numpy as np
import pytest

import ferrotape as ft
from ferrotape import keras


def values(t):
    return t.dtype.name, t.numpy().tolist()


# ------------------------------------------------------------- Python ints, wrapped
@pytest.mark.parametrize(
    "make, want",
    [
        (lambda: ft.constant([1, 2]) + 2**40, ("int32", [1, 2])),
        (lambda: 2**40 + ft.constant([1, 2]), ("int32", [1, 2])),
        (lambda: ft.constant([1, 2]) + (2**32 + 5), ("int32", [6, 7])),
        (lambda: ft.constant([1, 2]) + (-(2**40)), ("int32", [1, 2])),
        (lambda: ft.constant([1, 2]) + 2**31, ("int32", [-2147483647, -2147483646])),
        (lambda: ft.constant([1, 2]) - 2**32, ("int32", [1, 2])),
        (lambda: ft.constant([1, 2]) * 2**40, ("int32", [0, 0])),
        (lambda: ft.add(ft.constant([1, 2]), 2**40), ("int32", [1, 2])),
        (lambda: ft.maximum(ft.constant([1, 2]), 2**40), ("int32", [1, 2])),
        (lambda: ft.clip_by_value(ft.constant([1, 2]), 0, 2**40), ("int32", [0, 0])),
        (lambda: ft.constant(2**40, ft.int32), ("int32", 0)),
        (lambda: ft.convert_to_tensor(2**40, ft.int32), ("int32", 0)),
        (lambda: ft.constant(300, ft.int8), ("int8", 44)),
        (lambda: ft.constant(300, ft.uint8), ("uint8", 44)),
        (lambda: ft.constant(-1, ft.uint8), ("uint8", 255)),
        (lambda: ft.constant(-1, ft.uint32), ("uint32", 4294967295)),
        (lambda: ft.constant(2**40 + 7, ft.int16), ("int16", 7)),
        (lambda: ft.constant(1, ft.int8) + 300, ("int8", 45)),
        (lambda: ft.Variable(1).assign(2**40), ("int32", 0)),
        (lambda: ft.Variable(1).assign_add(2**40), ("int32", 1)),
    ],
)
def test_python_int_wraps_to_the_integer_dtype(make, want):
    assert values(make()) == want


@pytest.mark.parametrize(
    "make, want",
    [
        # int64 values past 2**53 stay exact (they never go through a float).
        (lambda: ft.constant(2**53 + 1, ft.int64), ("int64", 9007199254740993)),
        (lambda: ft.constant(2**63 - 1, ft.int64), ("int64", 9223372036854775807)),
        (lambda: ft.constant([1], ft.int64) * 2**62, ("int64", [4611686018427387904])),
        (lambda: ft.constant(2**63, ft.uint64), ("uint64", 9223372036854775808)),
        (lambda: ft.constant(2**64 - 1, ft.uint64), ("uint64", 18446744073709551615)),
        (lambda: ft.constant(2**40), ("int64", 1099511627776)),
        # To a float: rounded, inf past the type's range.
        (lambda: ft.constant(2**63, ft.float32), ("float32", 9.223372036854776e18)),
        (lambda: ft.constant(2**200, ft.float32), ("float32", float("inf"))),
        (lambda: ft.constant(2**200, ft.float64), ("float64", 2.0**200)),
        (lambda: ft.constant([1.0]) + 2**200, ("float32", [float("inf")])),
        (lambda: ft.constant(2**40, ft.float16), ("float16", float("inf"))),
        (lambda: ft.constant(2**70, ft.complex128), ("complex128", complex(2.0**70))),
    ],
)
def test_python_int_past_int32_keeps_its_value(make, want):
    assert values(make()) == want


@pytest.mark.parametrize(
    "make",
    [
        lambda: ft.constant(2**63),
        lambda: ft.constant([1, 2]) + 2**63,
        lambda: ft.constant([1], ft.int64) + 2**64,
        lambda: ft.constant(2**64, ft.uint64),
        lambda: ft.constant(2**2000, ft.float64),
    ],
)
def test_python_int_past_every_dtype_is_refused(make):
    with pytest.raises(ValueError, match="out of int64 range"):
        make()


# ------------------------------------------------------------- tf.range
@pytest.mark.parametrize(
    "make, want",
    [
        (lambda: ft.range(2**31, 2**31 + 3), ("int64", [2147483648, 2147483649, 2147483650])),
        (lambda: ft.range(0, 2**31, 2**30), ("int64", [0, 1073741824])),
        (lambda: ft.range(-(2**31) - 1, -(2**31) + 1), ("int64", [-2147483649, -2147483648])),
        (lambda: ft.range(0, 3, 2**31), ("int64", [0])),
        (
            lambda: ft.range(2**62 + 1, 2**62 + 10, 3),
            ("int64", [4611686018427387905, 4611686018427387908, 4611686018427387911]),
        ),
        (
            lambda: ft.range(2**63 - 3, 2**63 - 1),
            ("int64", [9223372036854775805, 9223372036854775806]),
        ),
        (lambda: ft.range(ft.constant(2**31 - 2), 2**31), ("int64", [2147483646, 2147483647])),
        (lambda: ft.range(ft.constant(3, ft.int64)), ("int64", [0, 1, 2])),
        (lambda: ft.range(np.int64(3)), ("int64", [0, 1, 2])),
        (lambda: ft.range(np.float64(3)), ("float64", [0.0, 1.0, 2.0])),
        (lambda: ft.range(ft.constant(0, ft.float64), 3), ("float64", [0.0, 1.0, 2.0])),
        (lambda: ft.range(ft.constant(0, ft.int64), 1.5), ("float32", [0.0, 1.0])),
        (lambda: ft.range(2**31 - 1.5, 2**31 + 1), ("float32", [])),
        (lambda: ft.range(2**31, 2**31 + 2, dtype=ft.int32), ("int32", [-2147483648, -2147483647])),
        (lambda: ft.range(1, 5, dtype=ft.float64), ("float64", [1.0, 2.0, 3.0, 4.0])),
        (lambda: ft.range(5, 0, -2), ("int32", [5, 3, 1])),
        (lambda: ft.range(5), ("int32", [0, 1, 2, 3, 4])),
    ],
)
def test_range_infers_the_widest_dtype_of_its_arguments(make, want):
    assert values(make()) == want


def test_range_refuses_what_tensorflow_refuses():
    with pytest.raises(ft.errors.InvalidArgumentError, match="Requires delta != 0"):
        ft.range(0, 3, 0)
    with pytest.raises(ft.errors.InvalidArgumentError, match="start <= limit"):
        ft.range(2**40, 0)
    with pytest.raises(TypeError, match="range: limit has dtype int8"):
        ft.range(ft.constant(3, ft.int8))
    with pytest.raises(TypeError):
        ft.range(0, 1.5, dtype=ft.int32)


# ------------------------------------------------------------- a tensor where a list is expected
def test_concat_of_one_tensor_returns_it():
    t = ft.constant([[1.0, 2.0], [3.0, 4.0]])
    for axis in (0, 1, 5):  # a list of one is returned as it is: the axis is not checked
        assert values(ft.concat(t, axis)) == ("float32", [[1.0, 2.0], [3.0, 4.0]])
        assert ft.concat([t], axis).shape == [2, 2]
    assert ft.concat((t,), 0).shape == [2, 2]
    assert ft.concat(ft.ones([3, 2, 2]), 0).shape == [3, 2, 2]
    assert ft.concat(ft.Variable(t), 0).shape == [2, 2]
    assert values(ft.concat(np.ones((2, 2)), 0)) == ("float64", [[1.0, 1.0], [1.0, 1.0]])
    # A list of several values is joined as before.
    assert values(ft.concat([[1, 2], [3, 4]], 0)) == ("int32", [1, 2, 3, 4])
    # Gradients flow through the tensor given alone.
    x = ft.constant([1.0, 2.0])
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = ft.reduce_sum(ft.concat(x, 0) * 3.0)
    assert tape.gradient(y, x).numpy().tolist() == [3.0, 3.0]


def test_other_list_ops_read_a_tensor_as_its_rows():
    t = ft.constant([[1.0, 2.0], [3.0, 4.0]])
    assert values(ft.stack(t)) == ("float32", [[1.0, 2.0], [3.0, 4.0]])
    assert values(ft.stack(t, 1)) == ("float32", [[1.0, 3.0], [2.0, 4.0]])
    assert values(ft.add_n(t)) == ("float32", [4.0, 6.0])


# ------------------------------------------------------------- Python types as dtypes
@pytest.mark.parametrize("python_type", [int, complex])
@pytest.mark.parametrize(
    "call",
    [
        lambda d: ft.as_dtype(d),
        lambda d: ft.cast(ft.constant([3]), d),
        lambda d: ft.constant(1, d),
        lambda d: ft.zeros([1], d),
        lambda d: ft.range(3, dtype=d),
        lambda d: ft.Variable(1, dtype=d),
        lambda d: ft.TensorSpec([1], d),
    ],
)
def test_tensorflow_ops_refuse_python_int_and_complex_as_dtypes(python_type, call):
    with pytest.raises(TypeError, match="to a TensorFlow DType"):
        call(python_type)


def test_tensorflow_ops_read_python_float_and_bool():
    assert ft.as_dtype(float) == ft.float32 and ft.as_dtype(bool) == ft.bool
    assert ft.cast(ft.constant([1]), float).dtype == ft.float32
    assert operator.eq(ft.int64, int) is False  # a type that names no dtype compares unequal


def test_keras_reads_python_int_as_int64():
    big = ft.constant([2**63 - 1], ft.int64)
    assert values(keras.ops.cast(big, int)) == ("int64", [9223372036854775807])
    assert values(keras.ops.cast(ft.constant([3]), int)) == ("int64", [3])
    assert values(keras.ops.cast(ft.constant([3]), complex)) == ("complex128", [3 + 0j])
    assert values(keras.ops.cast(ft.constant([1]), float)) == ("float32", [1.0])
    assert values(keras.ops.cast(ft.constant([1]), bool)) == ("bool", [True])
    assert keras.ops.cast(ft.constant([3]), None).dtype == ft.float32  # floatx
    i32 = ft.constant([3])
    assert keras.ops.one_hot(i32, 4, dtype=int).dtype == ft.int64
    assert keras.ops.cumsum(i32, dtype=int).dtype == ft.int64
    assert keras.ops.zeros_like(i32, dtype=int).dtype == ft.int64
    assert keras.ops.ones_like(i32, dtype=int).dtype == ft.int64
    assert keras.initializers.Zeros()([1], dtype=int).dtype == ft.int64
    assert keras.layers.Dense(1, dtype=int).dtype == "int64"
    assert keras.layers.Embedding(3, 2, dtype=int).dtype == "int64"
    assert keras.Input((1,), dtype=int).dtype == "int64"
    assert keras.backend.standardize_dtype(int) == "int64"


@pytest.mark.parametrize("python_type", [int, bool])
def test_keras_random_float_draws_refuse_other_dtypes(python_type):
    with pytest.raises(ValueError, match="`keras.random.uniform` requires a floating point"):
        keras.random.uniform([1], dtype=python_type)
    with pytest.raises(ValueError, match="`keras.random.normal` requires a floating point"):
        keras.random.normal([1], dtype=python_type)


def test_keras_random_randint_takes_integer_dtypes():
    assert keras.random.randint([2], 0, 3, dtype=int).dtype == ft.int64
    with pytest.raises(ValueError, match="`keras.random.randint` requires an integer"):
        keras.random.randint([2], 0, 3, dtype=float)


# ------------------------------------------- Python sequences to a dtype, scalar attributes
@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: ft.constant([1.0, 2], dtype=ft.int32), "Cannot convert [1.0, 2] to EagerTensor"),
        (lambda: ft.constant([[1, 2.0]], dtype=ft.int64), "of dtype int64"),
        (
            lambda: ft.constant([1], dtype=ft.bool),
            "Cannot convert [1] to EagerTensor of dtype bool",
        ),
        (lambda: ft.constant([1.5], dtype=ft.bool), "of dtype bool"),
        (lambda: ft.constant([1 + 2j], dtype=ft.float32), "Cannot convert [(1+2j)]"),
        (lambda: ft.convert_to_tensor([0.0], dtype=ft.int32), "Cannot convert [0.0]"),
        (lambda: ft.constant(1.0, dtype=ft.int32), "Cannot convert 1.0 to EagerTensor"),
    ],
)
def test_a_sequence_of_floats_is_not_narrowed_to_integers(make, message):
    # TF 2.21 raises TypeError for each; the message is its own.
    with pytest.raises(TypeError) as caught:
        make()
    assert message in str(caught.value)


def test_bools_and_numpy_arrays_convert_to_any_dtype_as_in_tensorflow():
    assert values(ft.constant([True, False], dtype=ft.int32)) == ("int32", [1, 0])
    assert values(ft.constant(np.array([1.5, 2.7]), dtype=ft.int32)) == ("int32", [1, 2])
    assert values(ft.constant([1, 2], dtype=ft.float32)) == ("float32", [1.0, 2.0])


def test_pad_converts_constant_values_to_the_tensors_dtype():
    x = ft.constant([1, 2])
    assert values(ft.pad(x, [[1, 1]], constant_values=2**40)) == ("int32", [0, 1, 2, 0])
    assert values(ft.pad(ft.constant([1.0]), [[1, 0]], constant_values=3)) == ("float32", [3, 1])
    with pytest.raises(TypeError, match="Cannot convert 2.7 to EagerTensor of dtype int32"):
        ft.pad(x, [[1, 1]], constant_values=2.7)
    with pytest.raises(ft.errors.InvalidArgumentError, match="int32 tensor but is a int64"):
        ft.pad(x, [[1, 1]], constant_values=ft.constant(3, ft.int64))
    with pytest.raises(ft.errors.InvalidArgumentError, match="must be a scalar"):
        ft.pad(x, [[1, 1]], constant_values=[3])


def test_one_hot_matches_its_value_dtypes_as_tensorflow():
    assert values(ft.one_hot([0, 1], 2, on_value=5, dtype=ft.float32)) == (
        "float32",
        [[5.0, 0.0], [0.0, 5.0]],
    )
    assert values(ft.one_hot([0, 1], 2, on_value=2**40, dtype=ft.int32)) == (
        "int32",
        [[0, 0], [0, 0]],
    )
    assert values(ft.one_hot([0], 2, on_value=2**40))[0] == "int64"
    with pytest.raises(TypeError, match="of on_value does not match dtype <dtype: 'int32'> of"):
        ft.one_hot([0, 1], 2, on_value=1.0, off_value=0)
    with pytest.raises(TypeError, match="of on_value does not match dtype parameter"):
        ft.one_hot([0, 1], 2, on_value=ft.constant(3, ft.int64), dtype=ft.int32)
    with pytest.raises(ft.errors.InvalidArgumentError, match="must be a scalar"):
        ft.one_hot([0, 1], 2, on_value=[1.0])


@pytest.mark.parametrize("draw", [ft.random.uniform, ft.random.normal, ft.random.truncated_normal])
def test_op_seeds_of_any_size_reduce_as_tensorflow_reduces_them(draw):
    ft.random.set_seed(3)
    big = draw([4], seed=2**70).numpy()
    ft.random.set_seed(3)
    reduced = draw([4], seed=2**70 % (2**31 - 1)).numpy()
    np.testing.assert_array_equal(big, reduced)
    ft.random.set_seed(3)
    negative = draw([4], seed=-1).numpy()
    ft.random.set_seed(3)
    np.testing.assert_array_equal(negative, draw([4], seed=2**31 - 2).numpy())
    with pytest.raises(TypeError, match="int seed"):
        draw([4], seed=1.5)


def test_shuffle_and_keras_dropout_take_negative_seeds():
    assert sorted(ft.random.shuffle(ft.range(4), seed=-1).numpy().tolist()) == [0, 1, 2, 3]
    layer = keras.layers.Dropout(0.5, seed=-1)
    assert layer(ft.ones([2, 8]), training=True).shape == (2, 8)
