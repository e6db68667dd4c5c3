"""The narrow integer dtypes (int8, int16, uint8, uint16, uint32, uint64), checked against numpy
(which wraps integers as TensorFlow does) and against values TensorFlow 2.21 gives on x86.
TensorFlow itself is compared in tests/test_dtypes_narrow_tf.py (skipped without it)."""

import numpy as np
import pytest

import ferrotape as ft

NARROW = ["int8", "int16", "uint8", "uint16", "uint32", "uint64"]
SIGNED = ["int8", "int16"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]


def sample(dtype, shape=(3, 4), seed=0):
    """Values spread over the whole range of ``dtype``, its extremes included."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    v = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    flat = v.reshape(-1)
    flat[:3] = [info.min, info.max, 0]
    return v


def check(t, expected):
    """``t`` is a tensor of ``expected``'s dtype holding exactly its values."""
    got = t.numpy()
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", NARROW)
def test_dtype_objects_and_properties(name):
    d = getattr(ft, name)
    info = np.iinfo(name)
    assert d is getattr(ft.dtypes, name) or d == getattr(ft.dtypes, name)
    assert d == name and d == np.dtype(name) and ft.as_dtype(np.dtype(name)) == d
    assert (d.name, d.size, d.is_integer, d.is_floating) == (name, info.bits // 8, True, False)
    assert d.is_unsigned == name.startswith("u")
    assert (d.min, d.max) == (int(info.min), int(info.max))
    assert d.as_numpy_dtype is np.dtype(name).type
    assert d.limits() == (0, int(info.max)) and d.limits(False) == (int(info.min), int(info.max))
    assert repr(d) == f"tf.{name}"


def test_float_limits_and_bool():
    assert ft.float32.max == float(np.finfo(np.float32).max) and ft.float64.min < -1e308
    assert ft.float32.limits() == (0, 1) and ft.float32.limits(False) == (-1, 1)
    assert not ft.int32.is_unsigned and ft.int64.min == -(2**63)
    with pytest.raises(TypeError):
        ft.bool.min  # noqa: B018 - the property raises, as TensorFlow's


@pytest.mark.parametrize("name", NARROW)
def test_numpy_round_trip_keeps_dtype_and_every_value(name):
    v = sample(name)
    t = ft.constant(v)
    assert t.dtype == name
    check(t, v)
    np.testing.assert_array_equal(np.asarray(t), v)
    # A strided view goes through the copy kernels of its width.
    check(ft.transpose(t), v.T)
    check(t[:, ::-2], v[:, ::-2])
    # DLPack, both ways.
    np.testing.assert_array_equal(np.from_dlpack(t), v)
    check(ft.experimental.dlpack.from_dlpack(v), v)


@pytest.mark.parametrize("name", NARROW)
def test_dlpack_import_lends_the_memory_without_a_copy(name):
    source = np.arange(4, dtype=name)
    shared = ft._core.share_numpy(source)
    assert shared is not None and shared.dtype == name
    source[0] = 9  # the producer's later writes show through, as with TensorFlow's import
    check(shared, np.array([9, 1, 2, 3], name))
    v = ft.Variable(shared)
    v.assign_add(ft.ones([4], name))  # copies first: the producer's memory is never written
    np.testing.assert_array_equal(source, [9, 1, 2, 3])
    check(v.read_value(), np.array([10, 2, 3, 4], name))


@pytest.mark.parametrize("name", NARROW)
def test_constant_zeros_ones_fill(name):
    np_t = np.dtype(name)
    check(ft.zeros([2, 3], name), np.zeros((2, 3), np_t))
    check(ft.ones([2], name), np.ones(2, np_t))
    check(ft.fill([2], ft.constant(7, name)), np.full(2, 7, np_t))
    check(ft.constant([1, 2, 3], dtype=name), np.array([1, 2, 3], np_t))
    check(ft.zeros_like(ft.constant([5, 6], name)), np.zeros(2, np_t))


def test_python_ints_wrap_into_narrow_dtypes_as_tensorflow():
    # TensorFlow 2.21: constant(300, uint8) is 44, constant(-1, uint8) 255, (128, int8) -128.
    check(ft.constant(300, ft.uint8), np.uint8(44))
    check(ft.constant(-1, ft.uint8), np.uint8(255))
    check(ft.constant(128, ft.int8), np.int8(-128))
    check(ft.constant([1, -1], ft.uint16), np.array([1, 65535], np.uint16))
    check(ft.constant(2**64 - 1, ft.uint64), np.uint64(2**64 - 1))
    check(ft.constant(2**63, ft.uint64), np.uint64(2**63))
    with pytest.raises(TypeError):
        ft.constant(1.5, ft.uint8)


ALL = NARROW + ["int32", "int64", "float16", "float32", "float64", "bool"]


@pytest.mark.parametrize("src", NARROW + ["int32", "int64"])
@pytest.mark.parametrize("dst", ALL)
def test_cast_between_integers_wraps_like_numpy(src, dst):
    v = sample(src, (20,), seed=1)
    with np.errstate(over="ignore"):
        expected = v.astype(dst) if dst != "bool" else v != 0
    got = ft.cast(ft.constant(v), dst).numpy()
    if dst.startswith("float"):
        np.testing.assert_allclose(got, expected, rtol=1e-3 if dst == "float16" else 1e-7)
        assert got.dtype == expected.dtype
    else:
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype


@pytest.mark.parametrize("dst", NARROW)
@pytest.mark.parametrize("src", ["float16", "float32", "float64", "bool"])
def test_cast_in_range_floats_truncate_like_numpy(src, dst):
    info = np.iinfo(dst)
    hi = min(float(info.max), 2000.0 if src == "float16" else 1e6)
    lo = max(float(info.min), -hi)
    v = np.linspace(lo, hi, 37).astype(src)
    if src == "bool":
        v = np.array([True, False, True])
    check(ft.cast(ft.constant(v), dst), v.astype(dst))


def test_cast_out_of_range_floats_as_tensorflow_on_x86():
    # Pinned from TensorFlow 2.21 on x86 (its vectorised conversion).
    x = ft.constant([300.0, -1.0, 1e10, float("nan"), 255.9, -0.5, 70000.0, -200.0])
    check(ft.cast(x, ft.uint8), np.array([44, 255, 0, 0, 255, 0, 112, 56], np.uint8))
    check(ft.cast(x, ft.int8), np.array([44, -1, 0, 0, -1, 0, 112, 56], np.int8))
    check(ft.cast(x, ft.uint16), np.array([300, 65535, 0, 0, 255, 0, 4464, 65336], np.uint16))
    check(
        ft.cast(x, ft.uint32),
        np.array([300, 2**32 - 1, 2**31, 2**31, 255, 0, 70000, 2**32 - 200], np.uint32),
    )
    y = ft.constant([-1.0, 1e19, 3e19, float("nan")], ft.float64)
    check(ft.cast(y, ft.uint64), np.array([2**64 - 1, 10**19, 2**63, 2**63], np.uint64))
    # int64 to int32 keeps the low bits (it used to go through float64).
    big = ft.constant([2**40 + 5, -(2**63)], ft.int64)
    check(ft.cast(big, ft.int32), np.array([5, 0], np.int32))


def test_saturate_cast_clamps_to_the_target_range():
    x = ft.constant([-5.0, 300.0, 1e20, 7.9])
    check(ft.saturate_cast(x, ft.uint8), np.array([0, 255, 255, 7], np.uint8))
    check(
        ft.saturate_cast(ft.constant([-5, 300, 70000]), ft.uint8),
        np.array([0, 255, 255], np.uint8),
    )
    check(ft.saturate_cast(ft.constant([250], ft.uint8), ft.int8), np.array([127], np.int8))
    check(
        ft.saturate_cast(ft.constant([-5.0, 3e9, 1e20]), ft.uint32),
        np.array([0, 3_000_000_000, 4_294_967_040], np.uint32),
    )


def test_convert_image_dtype_scales_as_tensorflow():
    u8 = ft.constant([0, 1, 128, 255], ft.uint8)
    np.testing.assert_allclose(
        ft.image.convert_image_dtype(u8, ft.float32).numpy(), np.array([0, 1, 128, 255]) / 255
    )
    f = ft.constant([0.0, 0.5, 1.0, 1.2, -0.1])
    check(ft.image.convert_image_dtype(f, ft.uint8), np.array([0, 127, 255, 50, 231], np.uint8))
    check(
        ft.image.convert_image_dtype(f, ft.uint8, saturate=True),
        np.array([0, 127, 255, 255, 0], np.uint8),
    )
    check(ft.image.convert_image_dtype(u8, ft.uint16), np.array([0, 256, 32768, 65280], np.uint16))
    u16 = ft.constant([0, 1, 300, 65535], ft.uint16)
    check(ft.image.convert_image_dtype(u16, ft.uint8), np.array([0, 0, 1, 255], np.uint8))
    np.testing.assert_allclose(
        ft.image.convert_image_dtype(u16, ft.float64).numpy(), np.array([0, 1, 300, 65535]) / 65535
    )
    check(
        ft.image.convert_image_dtype(ft.constant([0.0, 0.5, 1.0], ft.float64), ft.uint16),
        np.array([0, 32767, 65535], np.uint16),
    )


@pytest.mark.parametrize("name", NARROW)
def test_shape_ops_move_elements_exactly(name):
    v = sample(name, (3, 4), seed=2)
    w = sample(name, (3, 4), seed=3)
    t, u = ft.constant(v), ft.constant(w)
    check(ft.reshape(t, [4, 3]), v.reshape(4, 3))
    check(ft.transpose(t), v.T)
    check(ft.concat([t, u], 1), np.concatenate([v, w], 1))
    check(ft.stack([t, u]), np.stack([v, w]))
    check(ft.gather(t, [2, 0], axis=1), v[:, [2, 0]])
    check(ft.gather_nd(t, [[1, 2], [0, 0]]), v[[1, 0], [2, 0]])
    check(ft.tile(t, [2, 1]), np.tile(v, (2, 1)))
    check(ft.reverse(t, [1]), v[:, ::-1])
    check(ft.broadcast_to(t[:1], [3, 4]), np.broadcast_to(v[:1], (3, 4)))
    mask = v > w
    check(ft.where(ft.constant(mask), t, u), np.where(mask, v, w))
    check(ft.pad(t, [[1, 0], [0, 2]]), np.pad(v, [(1, 0), (0, 2)]))
    fill = np.array(-2).astype(name)  # wraps for the unsigned ones, as TensorFlow's does
    check(
        ft.pad(t, [[0, 0], [1, 1]], constant_values=-2),
        np.pad(v, [(0, 0), (1, 1)], constant_values=fill),
    )
    check(ft.squeeze(ft.expand_dims(t, 0), [0]), v)
    check(ft.one_hot([0, 2], 3, dtype=name), np.eye(3, dtype=name)[[0, 2]])


def wrap_ref(name, f, *arrays):
    """numpy's result of ``f`` with the operands' own dtype (numpy wraps as TensorFlow does)."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        return f(*arrays).astype(name)


def truncated_quotient(a, b):
    """a / b rounded toward zero, exactly (no float detour, which rounds 64-bit values)."""
    q = np.floor_divide(a, b)
    inexact = np.mod(a, b) != 0
    if np.issubdtype(a.dtype, np.signedinteger):
        q = np.where(inexact & ((a < 0) != (b < 0)), q + 1, q)
    return q


@pytest.mark.parametrize("name", NARROW)
def test_arithmetic_wraps_like_numpy(name):
    v, w = sample(name, (4, 5), seed=4), sample(name, (5,), seed=5)
    w[w == 0] = 3
    t, u = ft.constant(v), ft.constant(w)
    check(t + u, wrap_ref(name, np.add, v, w))
    check(t - u, wrap_ref(name, np.subtract, v, w))
    check(t * u, wrap_ref(name, np.multiply, v, w))
    check(ft.maximum(t, u), np.maximum(v, w))
    check(ft.minimum(t, u), np.minimum(v, w))
    check(ft.square(t), wrap_ref(name, np.multiply, v, v))
    check(t // u, wrap_ref(name, np.floor_divide, v, w))
    check(ft.math.floormod(t, u), wrap_ref(name, np.mod, v, w))
    check(ft.truncatediv(t, u), wrap_ref(name, truncated_quotient, v, w))
    for op in (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal):
        check(getattr(ft.math, op.__name__)(t, u), op(v, w))


@pytest.mark.parametrize("name", SIGNED)
def test_signed_unary_ops_wrap(name):
    v = sample(name, (10,), seed=6)
    t = ft.constant(v)
    check(-t, wrap_ref(name, np.negative, v))
    check(ft.abs(t), wrap_ref(name, np.abs, v))  # abs(-128) is -128 in int8, as in TensorFlow
    check(ft.sign(t), np.sign(v))
    check(ft.nn.relu(t), np.maximum(v, 0))


def test_division_corner_cases_match_tensorflow():
    # TensorFlow 2.21: int8 -128 // -1 wraps to -128; floormod follows the divisor's sign.
    check(ft.constant([-128], ft.int8) // ft.constant([-1], ft.int8), np.array([-128], np.int8))
    check(ft.math.floormod(ft.constant([-7], ft.int8), 3), np.array([2], np.int8))
    big = ft.constant([2**63 + 7, 2**64 - 1], ft.uint64)
    check(
        big // ft.constant([2, 10], ft.uint64), np.array([2**62 + 3, (2**64 - 1) // 10], np.uint64)
    )
    check(ft.math.floormod(big, ft.constant([2, 10], ft.uint64)), np.array([1, 5], np.uint64))
    check(ft.maximum(big, ft.constant([5], ft.uint64)), np.array([2**63 + 7, 2**64 - 1], np.uint64))
    check(ft.argmax(ft.constant([5, 2**63], ft.uint64)), np.int64(1))
    for name in NARROW:
        with pytest.raises(ft.errors.InvalidArgumentError, match="division by zero"):
            ft.constant([1], name) // ft.constant([0], name)


@pytest.mark.parametrize("name", NARROW)
def test_reductions_wrap_like_numpy_and_mean_does_not(name):
    v = sample(name, (3, 4), seed=7)
    t = ft.constant(v)
    with np.errstate(over="ignore"):
        for axis in (None, 0, 1):
            check(ft.reduce_sum(t, axis), np.sum(v, axis, dtype=name))
            check(ft.reduce_prod(t, axis), np.prod(v, axis, dtype=name))
            check(ft.reduce_max(t, axis), np.max(v, axis))
            check(ft.reduce_min(t, axis), np.min(v, axis))
        if name != "uint64":
            mean = np.trunc(v.astype(np.float64).mean(1)).astype(name)
            check(ft.reduce_mean(t, 1), mean)
    check(ft.argmax(t, 1), np.argmax(v, 1).astype(np.int64))
    check(ft.argmin(t, 0), np.argmin(v, 0).astype(np.int64))
    info = np.iinfo(name)
    check(ft.reduce_max(ft.zeros([0], name)), np.array(info.min, name))
    check(ft.reduce_min(ft.zeros([0], name)), np.array(info.max, name))
    # TensorFlow: the mean of uint8 [255, 255] is 255 (no wrapping before the division).
    check(ft.reduce_mean(ft.constant([255, 255], ft.uint8)), np.uint8(255))


@pytest.mark.parametrize("name", UNSIGNED)
def test_ops_tensorflow_lacks_for_unsigned_dtypes_raise(name):
    t = ft.constant([1, 2], name)
    for f in (ft.abs, ft.negative, ft.sign):
        with pytest.raises(ft.errors.InvalidArgumentError, match=name):
            f(t)
    with pytest.raises(ft.errors.InvalidArgumentError, match=name):
        ft.pow(t, t)


@pytest.mark.parametrize("name", NARROW)
def test_mixed_dtypes_and_float_ops_raise(name):
    t = ft.constant([1, 2], name)
    with pytest.raises(ft.errors.InvalidArgumentError, match="squared_difference|Squared"):
        ft.math.squared_difference(t, t)
    with pytest.raises(ft.errors.InvalidArgumentError):
        ft.add(t, ft.constant([1, 2], ft.int32 if name != "int32" else ft.int64))
    with pytest.raises(ft.errors.InvalidArgumentError, match=name):
        ft.exp(t)


@pytest.mark.parametrize("name", NARROW)
def test_narrow_tensors_are_not_differentiable(name):
    x = ft.constant([1, 2], name)
    with pytest.warns(UserWarning):
        with ft.GradientTape() as tape:
            tape.watch(x)
            y = x * x
    assert tape.gradient(y, x) is None
    v = ft.Variable(ft.constant([3], name))
    with ft.GradientTape() as tape:
        z = v * v
    assert tape.gradient(z, v) is None
    v.assign_add(ft.constant([2], name))
    check(v.read_value(), np.array([5], name))


def test_bitcast_reads_the_same_bits():
    x = np.array([1.0, -2.5], np.float32)
    check(ft.bitcast(ft.constant(x), ft.uint8), x.view(np.uint8).reshape(2, 4))
    check(ft.bitcast(ft.constant([-1, 2], ft.int8), ft.uint8), np.array([255, 2], np.uint8))
    u = np.arange(8, dtype=np.uint8).reshape(2, 4)
    check(ft.bitcast(ft.constant(u), ft.int32), u.view(np.int32).reshape(2))
    check(ft.bitcast(ft.constant(1.0), ft.uint16), np.array([0, 16256], np.uint16))
    with pytest.raises(ft.errors.InvalidArgumentError, match="last axis must be 2"):
        ft.bitcast(ft.constant([1, 2, 3], ft.uint8), ft.uint16)
    with pytest.raises(ft.errors.InvalidArgumentError, match="bool"):
        ft.bitcast(ft.constant([True]), ft.uint8)


@pytest.mark.parametrize("name", NARROW)
def test_narrow_indices_are_read_as_integers(name):
    table = ft.constant([10.0, 20.0, 30.0])
    idx = np.array([2, 0], name)
    np.testing.assert_array_equal(ft.gather(table, idx).numpy(), [30.0, 10.0])
    np.testing.assert_array_equal(ft.one_hot(ft.constant(idx), 3).numpy(), np.eye(3)[[2, 0]])
    if name == "uint64":
        with pytest.raises(ft.errors.InvalidArgumentError):
            ft.gather(table, ft.constant([2**64 - 1], name))


def test_sparse_labels_of_a_narrow_dtype_train_a_keras_model():
    x = np.random.default_rng(0).integers(0, 255, size=(8, 4), dtype=np.uint8)
    y = np.arange(8, dtype=np.uint8) % 3
    model = ft.keras.Sequential([ft.keras.layers.Rescaling(1 / 255), ft.keras.layers.Dense(3)])
    model.compile("sgd", ft.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(x, y, epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
