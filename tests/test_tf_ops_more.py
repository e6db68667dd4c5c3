"""TensorFlow's top-level sorting, rearranging, scattering, math and framework utilities
(sort_ops.py, array_ops.py, scatter_ops.py, framework_ops.py, init_ops.py, the truncating math
of _math_impl.py, grad_pass_through, and ft.debugging's dtype checks): values against numpy
references or hand values, errors, float64 finite-difference gradients, and runs inside
``ft.function`` and ``ft.device``. Runs without TensorFlow (tests/test_tf_ops_more_tf.py
compares with it)."""

import logging
import time
import warnings

import numpy as np
import pytest
from test_nn_more import check_grad

import ferrotape as ft

RNG = np.random.default_rng(13)


def rand(*shape):
    return RNG.standard_normal(shape)


# --- sorting and searching ------------------------------------------------------------------


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("direction", ["ASCENDING", "DESCENDING"])
def test_sort_and_argsort_match_numpy(axis, direction):
    x = rand(3, 4, 5)
    x[0, 0, :2] = 7.0  # a tie, which keeps index order in both directions
    got = ft.sort(x, axis=axis, direction=direction).numpy()
    order = ft.argsort(x, axis=axis, direction=direction).numpy()
    keys = x if direction == "ASCENDING" else -x
    want_order = np.argsort(keys, axis=axis, kind="stable")
    np.testing.assert_array_equal(order, want_order)
    assert order.dtype == np.int32
    np.testing.assert_array_equal(got, np.take_along_axis(x, want_order, axis=axis))


def test_sort_integers_ties_and_errors():
    np.testing.assert_array_equal(ft.sort([3, 1, 2, 1]).numpy(), [1, 1, 2, 3])
    np.testing.assert_array_equal(ft.argsort([3, 1, 2, 1], direction="DESCENDING"), [0, 2, 1, 3])
    np.testing.assert_array_equal(ft.sort([[3, 1], [2, 0]], axis=ft.constant(0)), [[2, 0], [3, 1]])
    # NaN comes first both ways (ft.nn.top_k takes it for the largest value).
    with_nan = ft.constant([1.0, np.nan, -np.inf])
    np.testing.assert_array_equal(ft.sort(with_nan).numpy(), [np.nan, -np.inf, 1.0])
    np.testing.assert_array_equal(ft.argsort(with_nan, direction="DESCENDING"), [1, 0, 2])
    y, idx = ft.unique(ft.constant([np.nan, np.nan, 1.0]))  # NaN differs from NaN
    assert y.shape == [3] and idx.numpy().tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="sort: .*direction.*Received: direction=UP"):
        ft.sort([1, 2], direction="UP")
    with pytest.raises(ft.errors.InvalidArgumentError, match=r"argsort: axis must be in \[-1, 1\)"):
        ft.argsort([1, 2], axis=1)
    with pytest.raises(ft.errors.InvalidArgumentError, match="sort: axis"):
        ft.sort(ft.constant(5.0))


def test_sort_gradient_goes_to_the_moved_entries():
    check_grad(lambda x: ft.sort(x, axis=0), rand(4, 3))
    check_grad(lambda x: ft.sort(x, direction="DESCENDING") * x, rand(2, 5))
    x = ft.constant([2.0, 0.0, 1.0])
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = ft.sort(x) * ft.constant([1.0, 10.0, 100.0])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [100.0, 1.0, 10.0])


def test_searchsorted():
    seq = np.array([[1.0, 2.0, 2.0, 3.0], [0.0, 1.0, 5.0, 9.0]])
    vals = np.array([[2.0, 0.5, 4.0], [1.0, 10.0, -1.0]])
    for side in ("left", "right"):
        got = ft.searchsorted(seq, vals, side=side, out_type=ft.int64).numpy()
        want = [np.searchsorted(s, v, side=side) for s, v in zip(seq, vals, strict=True)]
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.int64
    assert ft.searchsorted([1, 3], [2]).dtype == ft.int32
    with pytest.raises(ValueError, match="searchsorted: Argument `side`"):
        ft.searchsorted([1, 2], [1], side="middle")
    with pytest.raises(ft.errors.InvalidArgumentError, match="leading dimensions"):
        ft.searchsorted(seq, [1.0, 2.0])


def test_unique_and_counts_keep_first_occurrence_order():
    y, idx = ft.unique([3, 1, 3, 2, 1, 7])
    np.testing.assert_array_equal(y, [3, 1, 2, 7])
    np.testing.assert_array_equal(idx, [0, 1, 0, 2, 1, 3])
    assert idx.dtype == ft.int32
    result = ft.unique_with_counts(ft.constant([0.5, -1.0, 0.5]), out_idx=ft.int64)
    np.testing.assert_array_equal(result.y, [0.5, -1.0])
    np.testing.assert_array_equal(result.count, [2, 1])
    assert result.idx.dtype == ft.int64 and result.count.dtype == ft.int64
    with pytest.raises(ft.errors.InvalidArgumentError, match="unique: unique expects a 1D"):
        ft.unique([[1, 2]])


def test_unravel_index():
    got = ft.unravel_index([22, 41, 37], (7, 6)).numpy()
    np.testing.assert_array_equal(got, np.stack(np.unravel_index([22, 41, 37], (7, 6))))
    np.testing.assert_array_equal(ft.unravel_index(5, [7, 6]), [0, 5])
    assert ft.unravel_index(ft.constant([3], ft.int64), [2, 2]).dtype == ft.int64
    with pytest.raises(ft.errors.InvalidArgumentError, match="unravel_index: index is out"):
        ft.unravel_index(42, [7, 6])


# --- rearranging ----------------------------------------------------------------------------


def test_roll_matches_numpy_and_sums_repeated_axes():
    x = rand(3, 4, 5)
    np.testing.assert_array_equal(ft.roll(x, 2, 1).numpy(), np.roll(x, 2, 1))
    np.testing.assert_array_equal(ft.roll(x, [1, -7], [0, 2]).numpy(), np.roll(x, (1, -7), (0, 2)))
    np.testing.assert_array_equal(ft.roll([1, 2, 3, 4], [1, 1], [0, 0]).numpy(), [3, 4, 1, 2])
    with pytest.raises(ft.errors.InvalidArgumentError, match="roll: shift and axis"):
        ft.roll([1, 2], [1, 1], [0])
    check_grad(lambda t: ft.roll(t, [1, -2], [0, 1]), rand(3, 4))


def test_repeat_matches_numpy():
    x = rand(2, 3)
    np.testing.assert_array_equal(ft.repeat(x, 2).numpy(), np.repeat(x, 2))
    uneven = ft.repeat(x, [1, 0, 2], axis=1).numpy()
    np.testing.assert_array_equal(uneven, np.repeat(x, [1, 0, 2], 1))
    np.testing.assert_array_equal(ft.repeat(x, 3, axis=-2).numpy(), np.repeat(x, 3, -2))
    with pytest.raises(ValueError, match="repeat: .*Dimensions 2 and 3 are not compatible"):
        ft.repeat(x, [1, 2, 3], axis=0)
    check_grad(lambda t: ft.repeat(t, [2, 1, 3], axis=1), rand(2, 3))


def test_reverse_and_reverse_sequence():
    x = rand(2, 3, 4)
    np.testing.assert_array_equal(ft.reverse(x, [0, -1]).numpy(), np.flip(x, (0, 2)))
    with pytest.raises(ft.errors.InvalidArgumentError, match="reverse: axis 0 specified more"):
        ft.reverse(x, [0, -3])
    with pytest.raises(ft.errors.InvalidArgumentError, match="reverse: 'dims' must be 1-dim"):
        ft.reverse(x, 1)
    got = ft.reverse_sequence(x, [2, 0, 3], seq_axis=2, batch_axis=1).numpy()
    want = x.copy()
    for b, n in enumerate([2, 0, 3]):
        want[:, b, :n] = x[:, b, :n][..., ::-1]
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ft.errors.InvalidArgumentError, match="reverse_sequence: seq_lengths"):
        ft.reverse_sequence([[1, 2, 3], [4, 5, 6]], [2, 4], seq_axis=1)
    check_grad(lambda t: ft.reverse(t, [1]), rand(2, 3))
    check_grad(lambda t: ft.reverse_sequence(t, [1, 3], seq_axis=0, batch_axis=1), rand(3, 2))


def test_boolean_mask():
    x = rand(2, 3, 4)
    mask = RNG.random((3, 4)) > 0.5
    np.testing.assert_array_equal(ft.boolean_mask(x, mask, axis=1).numpy(), x[:, mask])
    np.testing.assert_array_equal(ft.boolean_mask(x, [True, False]).numpy(), x[[True, False]])
    with pytest.raises(ValueError, match="boolean_mask: mask cannot be scalar"):
        ft.boolean_mask(x, True)
    with pytest.raises(ValueError, match=r"boolean_mask: .*Shapes \(2,\) and \(3,\)"):
        ft.boolean_mask(x, [True, False, True])
    check_grad(lambda t: ft.boolean_mask(t, mask[:2, :3], axis=0), rand(2, 3, 2))


def test_dynamic_partition_and_stitch_invert_each_other():
    data = rand(5, 2)
    parts = np.array([1, 0, 2, 1, 0])
    out = ft.dynamic_partition(data, parts, 3)
    for p in range(3):
        np.testing.assert_array_equal(out[p].numpy(), data[parts == p])
    where = [np.flatnonzero(parts == p) for p in range(3)]
    np.testing.assert_array_equal(ft.dynamic_stitch(where, out).numpy(), data)
    # A repeated index takes its last value; an index nobody names is zeros.
    np.testing.assert_array_equal(
        ft.dynamic_stitch([[0, 3], [0]], [[1.0, 2.0], [5.0]]).numpy(), [5.0, 0.0, 0.0, 2.0]
    )
    with pytest.raises(ft.errors.InvalidArgumentError, match=r"dynamic_partition: .*\[0, 2\)"):
        ft.dynamic_partition([1, 2], [0, 2], 2)
    check_grad(lambda t: ft.dynamic_partition(t, [[0, 1], [1, 1]], 2)[1], rand(2, 2, 3))
    check_grad(lambda a, b: ft.dynamic_stitch([[2, 0], [1]], [a, b]), rand(2, 3), rand(1, 3))


def test_dynamic_partition_checks_its_arguments_as_tf_does():
    x = ft.constant([1.0, 2.0])
    # Partitions are int32: a tensor of another dtype is refused (issue 34: under a tape this
    # leaked an AttributeError), and Python ints wrap to int32 as TensorFlow converts them.
    with ft.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(ft.errors.InvalidArgumentError, match="int32 tensor but is a float"):
            ft.dynamic_partition(x, ft.constant([1.0, 0.0]), 2)
    with pytest.raises(ft.errors.InvalidArgumentError, match="int32 tensor but is a int64"):
        ft.dynamic_partition(x, ft.constant([0, 1], ft.int64), 2)
    wrapped = ft.dynamic_partition(x, [0, 2**40], 2)
    assert [p.numpy().tolist() for p in wrapped] == [[1.0, 2.0], []]
    # num_partitions is an int attribute: TensorFlow's make_int truncates floats and reads
    # scalar tensors, refuses strings, non-scalars and counts past int32 or below 1.
    assert [p.numpy().tolist() for p in ft.dynamic_partition(x, [0, 0], 1.5)] == [[1.0, 2.0]]
    assert len(ft.dynamic_partition(x, [0, 1], ft.constant(3))) == 3
    for bad in ["2", None, ft.constant([2])]:
        with pytest.raises(TypeError, match="Expected int for argument 'num_partitions'"):
            ft.dynamic_partition(x, [0, 1], bad)
    with pytest.raises(ValueError, match="Number of outputs is too big: 1099511627776"):
        ft.dynamic_partition(x, [0, 1], 2**40)
    with pytest.raises(ft.errors.InvalidArgumentError, match="of 0 must be at least minimum 1"):
        ft.dynamic_partition(x, [0, 0], 0)


def test_dynamic_stitch_lists_as_tf_reads_them():
    # Two tensors are read as the lists of their rows, as TensorFlow's fast path does.
    got = ft.dynamic_stitch(ft.constant([[1, 0], [2, 3]]), ft.constant([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(got.numpy(), [2.0, 1.0, 3.0, 4.0])
    for bad in [1, "ab", None, ft.constant(1)]:
        with pytest.raises(TypeError, match="Expected list for 'indices' argument"):
            ft.dynamic_stitch(bad, bad)
    with pytest.raises(ValueError, match="expected a sequence for attr N, got an ndarray"):
        ft.dynamic_stitch(np.array([[0, 1]]), np.array([[1.0, 2.0]]))
    with pytest.raises(ft.errors.InvalidArgumentError, match="int32 tensor but is a float"):
        ft.dynamic_stitch([ft.constant(1.0)], [ft.constant(1.0)])
    # 2**40 wraps to index 0 (TensorFlow: [2.0]).
    np.testing.assert_array_equal(ft.dynamic_stitch([[0, 2**40]], [[1.0, 2.0]]).numpy(), [2.0])


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_matches_numpy(indexing):
    a, b, c = rand(3), rand(4), rand(2)
    got = ft.meshgrid(a, b, c, indexing=indexing)
    for g, w in zip(got, np.meshgrid(a, b, c, indexing=indexing), strict=True):
        np.testing.assert_array_equal(g.numpy(), w)
    with pytest.raises(ValueError, match="meshgrid: Argument `indexing`"):
        ft.meshgrid(a, indexing="foo")
    with pytest.raises(TypeError, match="'sparse' is an invalid keyword"):
        ft.meshgrid(a, sparse=True)

    def weighted(x, y):
        gx, gy = ft.meshgrid(x, y, indexing=indexing)
        return gx * 2.0 - gy

    check_grad(weighted, rand(3), rand(2))


def test_sequence_mask():
    lengths = np.array([[1, 3], [2, 0]])
    got = ft.sequence_mask(lengths).numpy()
    np.testing.assert_array_equal(got, np.arange(3) < lengths[..., None])
    as_float = ft.sequence_mask([1, 2], maxlen=4, dtype=ft.float32)
    np.testing.assert_array_equal(as_float.numpy(), [[1, 0, 0, 0], [1, 1, 0, 0]])
    assert as_float.dtype == ft.float32
    with pytest.raises(ValueError, match="sequence_mask: Argument `maxlen` must be scalar"):
        ft.sequence_mask([1], maxlen=[2, 3])


def test_shape_n_parallel_stack_and_tuple():
    shapes = ft.shape_n([ft.zeros([2, 3]), ft.zeros([])], out_type=ft.int64)
    assert [s.numpy().tolist() for s in shapes] == [[2, 3], []]
    assert shapes[0].dtype == ft.int64
    np.testing.assert_array_equal(ft.parallel_stack([[1, 2], [3, 4]]).numpy(), [[1, 2], [3, 4]])
    a = ft.constant(1.0)
    assert ft.tuple([a, None], control_inputs=[a]) == [a, None]


# --- scattering -----------------------------------------------------------------------------


COMBINE = {
    "update": lambda old, new: new,
    "add": np.add,
    "sub": np.subtract,
    "min": np.minimum,
    "max": np.maximum,
}


def np_scatter(kind, tensor, indices, updates):
    """The scatter as a loop over index rows, in order (a repeated index: the last update wins)."""
    out = tensor.copy()
    k = indices.shape[-1]
    rows = updates.reshape(-1, *tensor.shape[k:])
    for i, u in zip(indices.reshape(-1, k), rows, strict=True):
        out[tuple(i)] = COMBINE[kind](out[tuple(i)], u)
    return out


@pytest.mark.parametrize("kind", ["update", "add", "sub", "min", "max"])
def test_tensor_scatter_nd_matches_a_loop(kind):
    op = getattr(ft, f"tensor_scatter_nd_{kind}")
    tensor = rand(4, 3, 2)
    indices = np.array([[[1, 2], [3, 0]], [[1, 2], [0, 1]]])  # a repeated index
    updates = rand(2, 2, 2)
    got = op(tensor, indices, updates).numpy()
    np.testing.assert_allclose(got, np_scatter(kind, tensor, indices, updates), rtol=1e-12)
    rows = np.array([[2], [0]])
    got = op(tensor, rows, rand(2, 3, 2) * 0 + 1.5).numpy()
    np.testing.assert_allclose(got, np_scatter(kind, tensor, rows, np.full((2, 3, 2), 1.5)))
    with pytest.raises(ft.errors.InvalidArgumentError, match=rf"{kind}: indices\[1\] = \[4\]"):
        op(tensor, [[0], [4]], rand(2, 3, 2))
    with pytest.raises(ft.errors.InvalidArgumentError, match="Outer dimensions of indices"):
        op(tensor, [[0], [1]], rand(3, 3, 2))


@pytest.mark.parametrize("kind", ["update", "add", "sub", "min", "max"])
def test_tensor_scatter_nd_gradients(kind):
    op = getattr(ft, f"tensor_scatter_nd_{kind}")
    check_grad(lambda t, u: op(t, [[1, 0], [2, 1]], u), rand(3, 2, 2), rand(2, 2))


def test_tensor_scatter_nd_max_splits_the_gradient_among_ties():
    x, u = ft.constant([1.0, 2.0, 3.0]), ft.constant([2.0, 2.0, 0.0])
    with ft.GradientTape() as tape:
        tape.watch([x, u])
        y = ft.tensor_scatter_nd_max(x, [[1], [1], [2]], u)
    dx, du = tape.gradient(y, [x, u])
    np.testing.assert_allclose(dx.numpy(), [1.0, 1 / 3, 1.0])
    np.testing.assert_allclose(du.numpy(), [1 / 3, 1 / 3, 0.0])


# --- math -----------------------------------------------------------------------------------


def test_truncatediv_truncatemod_and_saturate_cast():
    x, y = np.array([-7, 7, -8, 8, 0]), np.array([2, -2, 3, 3, 5])
    np.testing.assert_array_equal(ft.truncatediv(x, y).numpy(), np.trunc(x / y).astype(int))
    np.testing.assert_array_equal(ft.truncatemod(x, y).numpy(), np.fmod(x, y))
    xf, yf = rand(20) * 10, rand(20) + 3.0
    np.testing.assert_allclose(ft.truncatemod(xf, yf).numpy(), np.fmod(xf, yf), atol=1e-12)
    np.testing.assert_array_equal(ft.truncatediv(xf, yf).numpy(), np.trunc(xf / yf))
    with pytest.raises(ft.errors.InvalidArgumentError, match="division by zero"):
        ft.truncatediv([1], [0])
    sat = ft.saturate_cast(ft.constant([-1e10, 3e9, 2.7, -2.7]), ft.int32).numpy()
    np.testing.assert_array_equal(sat, [-(2**31), 2147483520, 2, -2])
    big = ft.constant([2**40, -3], ft.int64)
    np.testing.assert_array_equal(ft.saturate_cast(big, ft.int32).numpy(), [2**31 - 1, -3])
    half = ft.saturate_cast(ft.constant([1e6, -1e300, 1.5], ft.float64), ft.float16).numpy()
    np.testing.assert_array_equal(half, np.array([65504, -65504, 1.5], np.float16))
    x = ft.constant([1.0, 1e6])
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = ft.saturate_cast(x, ft.float16)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 0.0])


# --- framework utilities --------------------------------------------------------------------


def test_name_scope_paths():
    assert ft.get_current_name_scope() == ""
    with ft.name_scope("outer") as outer:
        assert outer == "outer/" and ft.get_current_name_scope() == "outer"
        with ft.name_scope("inner") as inner:
            assert inner == "outer/inner/"
        with ft.name_scope("abs/") as absolute:
            assert absolute == "abs/" and ft.get_current_name_scope() == "abs"
        with ft.name_scope("") as top:
            assert top == "" and ft.get_current_name_scope() == ""
        assert ft.get_current_name_scope() == "outer"
    assert ft.name_scope("x").name == "x"
    assert ft.keras.backend.name_scope is ft.name_scope
    with pytest.raises(ValueError, match="name for name_scope must be a string"):
        ft.name_scope(3)


def test_ensure_shape_logger_and_timestamp():
    x = ft.zeros([2, 3])
    assert ft.ensure_shape(x, [None, 3]) is x
    assert ft.ensure_shape(x, None) is x
    with pytest.raises(ft.errors.InvalidArgumentError, match=r"input \[2, 3\] is not compatible"):
        ft.ensure_shape(x, [3, None])
    assert isinstance(ft.get_logger(), logging.Logger)
    stamp = ft.timestamp()
    assert stamp.dtype == ft.float64 and abs(float(stamp) - time.time()) < 60


def test_py_function_is_differentiable_and_numpy_function_is_not():
    x = ft.constant(3.0)
    with ft.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = ft.py_function(lambda a: a * a, [x], ft.float32)
        pair = ft.py_function(lambda a: (a, 2), [x], [ft.float32, ft.float32])
        z = ft.numpy_function(lambda a: a * a, [x], ft.float32)
    assert float(tape.gradient(y, x)) == 6.0
    assert [float(p) for p in pair] == [3.0, 2.0] and pair[1].dtype == ft.float32
    assert float(z) == 9.0 and tape.gradient(z, x) is None
    assert ft.numpy_function(lambda a: a.astype(np.float64), [x], ft.float32).dtype == ft.float64
    assert ft.py_function(lambda a: None, [x], None) is None
    with pytest.raises(ft.errors.InvalidArgumentError, match="py_function: .*float32 tensor"):
        ft.py_function(lambda a: a, [x], ft.int32)


def test_grad_pass_through_and_hessians():
    x = ft.constant([0.4, 1.6])
    v = ft.Variable(0.0)
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = ft.grad_pass_through(ft.round)(x * 3.0)
        z = ft.grad_pass_through(v.assign)(ft.reduce_sum(x))
    np.testing.assert_array_equal(y.numpy(), [1.0, 5.0])
    dx, dv = tape.gradient([y, z], [x, v])
    np.testing.assert_allclose(dx.numpy(), [4.0, 4.0])
    assert dv is None and float(v) == pytest.approx(2.0)
    with pytest.raises(RuntimeError, match="hessians: .*GradientTape"):
        ft.hessians(x, x)


def test_tf_initializers():
    np.testing.assert_array_equal(ft.zeros_initializer()([2], dtype=ft.int32).numpy(), [0, 0])
    ones = ft.ones_initializer()([2, 1])
    assert ones.dtype == ft.float32 and ones.numpy().tolist() == [[1.0], [1.0]]
    const = ft.constant_initializer([1, 2, 3, 4])([2, 2], ft.int64)
    np.testing.assert_array_equal(const.numpy(), [[1, 2], [3, 4]])
    assert ft.constant_initializer(2.5)([3]).numpy().tolist() == [2.5] * 3
    with pytest.raises(TypeError, match="constant_initializer: 3 values cannot fill"):
        ft.constant_initializer([1, 2, 3])([2])
    with pytest.raises(TypeError, match="Invalid type for initial value"):
        ft.constant_initializer(ft.constant(1.0))
    with pytest.raises(TypeError, match="Keyword argument should be one of"):
        ft.zeros_initializer()([2], partition_info=None)
    seeded = ft.random_normal_initializer(0.0, 2.0, seed=5)
    draw = seeded([2000])
    np.testing.assert_array_equal(draw.numpy(), seeded([2000]).numpy())
    assert abs(float(ft.math.reduce_std(draw)) - 2.0) < 0.15
    with pytest.raises(ValueError, match="expected to be floating point"):
        seeded([2], ft.int32)
    ints = ft.random_uniform_initializer(0, 5)([200], ft.int32).numpy()
    assert ints.dtype == np.int32 and ints.min() >= 0 and ints.max() < 5
    config = ft.random_uniform_initializer(-1.0, 1.0, seed=2).get_config()
    assert config == {"minval": -1.0, "maxval": 1.0, "seed": 2}
    assert ft.constant_initializer.from_config({"value": 3})([1]).numpy().tolist() == [3.0]


def test_debugging_dtype_checks_and_switches():
    ft.debugging.assert_integer(ft.constant([1]))
    with pytest.raises(TypeError, match='hi.  assert_integer: Expected "x" to be integer'):
        ft.debugging.assert_integer(ft.constant(1.0), message="hi")
    same = ft.debugging.assert_same_float_dtype
    assert same() == ft.float32 and same(None, ft.float64) == ft.float64
    assert same([ft.constant(1.0, ft.float64)]) == ft.float64
    with pytest.raises(ValueError, match="must be of the same type"):
        same([ft.constant(1.0), ft.constant(1.0, ft.float64)])
    with pytest.raises(ValueError, match="Expected floating point type, got"):
        same([ft.constant(1)])
    assert ft.debugging.is_numeric_tensor(ft.constant(1))
    assert not ft.debugging.is_numeric_tensor(ft.constant(True))
    assert not ft.debugging.is_numeric_tensor(1.0)
    ft.debugging.assert_proper_iterable((1, 2))
    for single in ("ab", b"ab", np.zeros(2), ft.zeros([2])):
        with pytest.raises(TypeError, match='"proper" iterable'):
            ft.debugging.assert_proper_iterable(single)
    with pytest.raises(TypeError, match="to be iterable"):
        ft.debugging.assert_proper_iterable(3)
    ft.debugging.set_log_device_placement(True)
    assert ft.debugging.get_log_device_placement() is True
    ft.debugging.set_log_device_placement(False)
    assert ft.debugging.enable_check_numerics() is None
    assert ft.debugging.disable_check_numerics() is None


# --- inside ft.function and ft.device -------------------------------------------------------


def test_ops_with_python_arguments_trace_and_replay():
    # Shifts, counts, axes, indices and masks given as Python values need no host read of a
    # traced tensor, so the function is traced once and replayed (a warning would be an error).
    def program(x):
        return [
            ft.roll(ft.repeat(x, [1, 2, 0], axis=1), 1, 0),
            ft.reverse(x, [0]),
            ft.reverse_sequence(x, [1, 2, 3], seq_axis=0, batch_axis=1),
            ft.meshgrid(x[0], x[1])[1],
            ft.tensor_scatter_nd_add(x, [[0]], ft.ones([1, 3])),
            ft.tensor_scatter_nd_update(x, [[2]], ft.ones([1, 3])),
            ft.boolean_mask(x, [True, False, True, False]),
            ft.sequence_mask([1, 2], 3),
            ft.TensorArray(x.dtype, size=2).write(0, x[1]).write(1, x[0] * 2.0).stack(),
        ]

    traced = ft.function(program)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        traced(ft.constant(rand(4, 3).astype(np.float32)))
        x = ft.constant(rand(4, 3).astype(np.float32))
        for got, want in zip(traced(x), program(x), strict=True):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert traced.experimental_get_tracing_count() == 1


def test_the_ops_run_inside_a_function_with_the_same_results():
    def program(x):
        s = ft.sort(x, axis=0, direction="DESCENDING")
        r = ft.roll(ft.repeat(x, 2, axis=1), 1, 0)
        m = ft.boolean_mask(x, x[:, 0] > 0.0)
        u = ft.tensor_scatter_nd_add(x, [[0]], ft.ones([1, 3], x.dtype))
        g = ft.meshgrid(x[0], x[1])[1]
        return [s, r, ft.reduce_sum(m), u, ft.reverse(g, [0]), ft.sequence_mask([1, 2], 3)]

    x = ft.constant(rand(4, 3))
    traced = ft.function(program)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a host read runs the function eagerly, saying so
        for got, want in zip(traced(x), program(x), strict=True):
            np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_results_live_on_the_scope_device():
    x = ft.constant(rand(3, 4))
    with ft.device("/CPU:0"):
        results = [
            ft.sort(x),
            ft.roll(x, 1, 1),
            ft.repeat(x, 2),
            ft.reverse(x, [1]),
            ft.boolean_mask(x, [True, False, True]),
            ft.tensor_scatter_nd_update(x, [[1]], ft.zeros([1, 4], x.dtype)),
            ft.meshgrid(x[0], x[1])[0],
        ]
    for r in results:
        assert r.device.endswith("device:CPU:0")


# --- assertions, broadcast shapes, histograms, recompute_grad ---------------------------------


def test_assert_and_broadcast_shapes():
    assert ft.Assert(ft.constant(True), ["never shown"]) is None
    summary = r"Summarized data: x is\n1, 2, \.\.\."
    with pytest.raises(ft.errors.InvalidArgumentError, match=summary):
        ft.debugging.Assert(ft.constant(False), ["x is", ft.constant([1, 2, 3, 4]), 5], 2)
    assert ft.broadcast_static_shape(ft.TensorShape([2, 1]), ft.TensorShape([3])) == [2, 3]
    with pytest.raises(ValueError, match="broadcast_static_shape: Incompatible shapes"):
        ft.broadcast_static_shape(ft.TensorShape([2, 2]), ft.TensorShape([3]))
    dynamic = ft.broadcast_dynamic_shape(ft.constant([5, 1, 3], ft.int64), [4, 1])
    assert dynamic.dtype == ft.int64 and dynamic.numpy().tolist() == [5, 4, 3]
    with pytest.raises(ft.errors.InvalidArgumentError, match="broadcast_dynamic_shape"):
        ft.broadcast_dynamic_shape([2, 2], [3])


def test_histograms_match_numpy():
    values = rand(200) * 3
    counts = ft.histogram_fixed_width(values, [-2.0, 2.0], nbins=8).numpy()
    inside = np.clip(values, -2.0, 2.0 - 1e-12)  # outside values count in the end bins
    np.testing.assert_array_equal(counts, np.histogram(inside, bins=8, range=(-2.0, 2.0))[0])
    bins = ft.histogram_fixed_width_bins(values, [-2.0, 2.0], nbins=8, dtype=ft.int64).numpy()
    np.testing.assert_array_equal(np.bincount(bins, minlength=8), counts)
    assert bins.dtype == np.int32  # TensorFlow ignores dtype here
    with pytest.raises(ft.errors.InvalidArgumentError, match="value_range should satisfy"):
        ft.histogram_fixed_width([1.0], [5.0, 0.0])
    with pytest.raises(ft.errors.InvalidArgumentError, match="nbins should be a positive"):
        ft.histogram_fixed_width([1.0], [0.0, 5.0], nbins=0)


def test_recompute_grad_gives_the_function_s_gradients():
    v = ft.Variable(np.array([2.0, -1.0]))

    def f(x):
        return ft.sin(x) * v

    x = ft.constant([1.0, 2.0], ft.float64)
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = ft.recompute_grad(f)(x)
    dx, dv = tape.gradient(y, [x, v])
    np.testing.assert_allclose(y.numpy(), np.sin([1.0, 2.0]) * [2.0, -1.0])
    np.testing.assert_allclose(dx.numpy(), np.cos([1.0, 2.0]) * [2.0, -1.0])
    np.testing.assert_allclose(dv.numpy(), np.sin([1.0, 2.0]))
    check_grad(ft.recompute_grad(lambda t: t * ft.exp(t)), rand(3))


def test_approx_top_k_is_exact_and_paddings_fill_blocks():
    x = rand(3, 5)
    top = ft.approx_top_k(x, 2)
    np.testing.assert_array_equal(top.indices.numpy(), np.argsort(-x, axis=-1)[:, :2])
    low = ft.approx_top_k(x, 1, reduction_dimension=0, is_max_k=False)
    np.testing.assert_array_equal(low.values.numpy(), x.min(axis=0, keepdims=True))
    check_grad(lambda t: ft.approx_top_k(t, 2).values, x)
    paddings, crops = ft.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [0, 1]])
    # 5 + 1 is a multiple of 2 already; 7 + 1 needs one more to reach 9.
    assert paddings.numpy().tolist() == [[1, 0], [0, 2]]
    assert crops.numpy().tolist() == [[0, 0], [0, 1]]
    with pytest.raises(ValueError, match="required_space_to_batch_paddings: block_shape"):
        ft.required_space_to_batch_paddings([5], [0])


# --- TensorArray ----------------------------------------------------------------------------


def test_tensor_array_write_stack_and_gradient():
    x = ft.constant(rand(3, 2))
    with ft.GradientTape() as tape:
        tape.watch(x)
        ta = ft.TensorArray(ft.float64, size=0, dynamic_size=True)
        for i in range(3):
            ta = ta.write(i, x[i] * float(i + 1))
        stacked = ta.stack()
        loss = ft.reduce_sum(stacked * stacked)
    scale = np.arange(1.0, 4.0)[:, None]
    np.testing.assert_allclose(stacked.numpy(), x.numpy() * scale)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), 2 * x.numpy() * scale**2)
    assert int(ta.size()) == 3 and ta.element_shape == [2]


def test_tensor_array_reads_gathers_splits_and_errors():
    ta = ft.TensorArray(ft.float32, size=3, element_shape=[2])
    np.testing.assert_array_equal(ta.stack().numpy(), np.zeros((3, 2)))  # unwritten: zeros
    ta = ta.scatter([2, 0], ft.constant([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(ta.gather([0, 2]).numpy(), [[3.0, 4.0], [1.0, 2.0]])
    assert ta.read(2).numpy().tolist() == [1.0, 2.0]
    with pytest.raises(ft.errors.InvalidArgumentError, match="Could not read index 2 twice"):
        ta.read(2)
    with pytest.raises(ft.errors.OutOfRangeError, match="Tried to read from index 3"):
        ta.read(3)
    with pytest.raises(ft.errors.OutOfRangeError, match="not resizeable and size is: 3"):
        ta.write(3, ft.zeros([2]))
    with pytest.raises(ValueError, match=r"Incompatible shape for value \(\[3\]\)"):
        ta.write(0, ft.zeros([3]))
    with pytest.raises(ft.errors.InvalidArgumentError, match="dtype is float32 but Op"):
        ta.write(0, ft.zeros([2], ft.int32))
    with pytest.raises(ValueError, match="Size must be declared"):
        ft.TensorArray(ft.float32)
    pieces = ft.TensorArray(ft.float32, size=2, clear_after_read=False)
    pieces = pieces.split(ft.range(5.0), [2, 3])
    assert pieces.read(1).numpy().tolist() == [2.0, 3.0, 4.0]
    assert pieces.concat().numpy().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    pieces.read(1)  # still there: reads do not clear it
    with pytest.raises(ft.errors.InvalidArgumentError, match="not marked as dynamically"):
        ft.TensorArray(ft.float32, size=3).split(ft.range(4.0), [1, 3])
    with pytest.raises(ValueError, match="Cannot unstack 3 tensors"):
        ft.TensorArray(ft.float32, size=2).unstack(ft.zeros([3]))
    assert ft.TensorArray(ft.float32, size=0, element_shape=[3]).stack().shape == [0, 3]


def test_tensor_array_as_a_while_loop_variable():
    def body(i, ta):
        return i + 1, ta.write(i, ft.cast(i, ft.float32) ** 2)

    start = [ft.constant(0), ft.TensorArray(ft.float32, size=0, dynamic_size=True)]
    i, ta = ft.while_loop(lambda i, ta: i < 4, body, start)
    assert int(i) == 4 and ta.stack().numpy().tolist() == [0.0, 1.0, 4.0, 9.0]
    with pytest.raises(TypeError, match="loop variable 1 must stay a TensorArray"):
        ft.while_loop(lambda i, ta: i < 1, lambda i, ta: (i + 1, ft.zeros([1])), start)
