"""Forwards of non-differentiable, shape and creation ops against NumPy, with TF 2.21's dtype
rules, odd shapes, non-contiguous inputs and bad-input errors."""

import numpy as np
import pytest

import ferrotape as tf

RNG = np.random.default_rng(1234)
A_INT = RNG.integers(-3, 4, (3, 4)).astype(np.int32)  # small ints: many ties
B_INT = RNG.integers(-3, 4, (4,)).astype(np.int32)
A_F = RNG.standard_normal((3, 4))
B_F = np.round(RNG.standard_normal((4,)), 1)
X3 = np.arange(60, dtype=np.float64).reshape(3, 4, 5)


def check(t, want, dtype=None, exact=True):
    """``t`` has ``want``'s shape and values, and dtype ``dtype`` when given."""
    want = np.asarray(want)
    if dtype is not None:
        assert t.dtype == dtype, f"dtype {t.dtype} != {dtype}"
    assert tuple(t.shape) == want.shape
    if exact:
        np.testing.assert_array_equal(t.numpy(), want)
    else:
        np.testing.assert_allclose(t.numpy(), want, rtol=1e-6, atol=1e-12)


# ----------------------------------------------------------------------------- comparisons, logic

COMPARE = [
    ("equal", lambda a, b: tf.equal(a, b), np.equal),
    ("not_equal", lambda a, b: tf.not_equal(a, b), np.not_equal),
    ("greater", lambda a, b: tf.greater(a, b), np.greater),
    ("greater_equal", lambda a, b: tf.greater_equal(a, b), np.greater_equal),
    ("less", lambda a, b: tf.less(a, b), np.less),
    ("less_equal", lambda a, b: tf.less_equal(a, b), np.less_equal),
    ("math.equal", lambda a, b: tf.math.equal(a, b), np.equal),
    ("==", lambda a, b: a == b, np.equal),
    ("!=", lambda a, b: a != b, np.not_equal),
    ("<", lambda a, b: a < b, np.less),
    ("<=", lambda a, b: a <= b, np.less_equal),
    (">", lambda a, b: a > b, np.greater),
    (">=", lambda a, b: a >= b, np.greater_equal),
]


@pytest.mark.parametrize("name,fn,ref", COMPARE, ids=[c[0] for c in COMPARE])
@pytest.mark.parametrize(
    "a,b", [(A_INT, B_INT), (A_F, B_F), (A_F, np.float64(0.5))], ids=["int32", "float64", "scalar"]
)
def test_comparison(name, fn, ref, a, b):
    check(fn(tf.constant(a), tf.constant(b)), ref(a, b), tf.bool)


P = np.array([[True, True, False, False]])
Q = np.array([[True], [False]])
LOGIC = [
    ("logical_and", lambda p, q: tf.logical_and(p, q), np.logical_and),
    ("logical_or", lambda p, q: tf.logical_or(p, q), np.logical_or),
    ("logical_xor", lambda p, q: tf.math.logical_xor(p, q), np.logical_xor),
    ("logical_not", lambda p, q: tf.logical_not(p), lambda p, q: np.logical_not(p)),
    ("&", lambda p, q: p & q, np.logical_and),
    ("|", lambda p, q: p | q, np.logical_or),
    ("^", lambda p, q: p ^ q, np.logical_xor),
    ("~", lambda p, q: ~p, lambda p, q: ~p),
]


@pytest.mark.parametrize("name,fn,ref", LOGIC, ids=[c[0] for c in LOGIC])
def test_logical(name, fn, ref):
    check(fn(tf.constant(P), tf.constant(Q)), ref(P, Q), tf.bool)


ARG = np.array([[3.0, 1.0, 3.0, 0.0], [-1.0, 5.0, 5.0, 2.0], [0.0, 0.0, 0.0, 0.0]])


@pytest.mark.parametrize(
    "fn,ref,dtype",
    [
        (lambda x: tf.argmax(x), lambda a: a.argmax(0), tf.int64),  # TF's default axis is 0
        (lambda x: tf.argmax(x, axis=1), lambda a: a.argmax(1), tf.int64),
        (lambda x: tf.argmax(x, -1), lambda a: a.argmax(-1), tf.int64),
        (lambda x: tf.argmin(x), lambda a: a.argmin(0), tf.int64),
        (lambda x: tf.argmin(x, axis=1), lambda a: a.argmin(1), tf.int64),
        (lambda x: tf.argmax(x, 1, output_type=tf.int32), lambda a: a.argmax(1), tf.int32),
        (lambda x: tf.math.argmin(x, 1, output_type=tf.int32), lambda a: a.argmin(1), tf.int32),
    ],
)
def test_argmax_argmin_first_index_on_ties(fn, ref, dtype):
    check(fn(tf.constant(ARG)), ref(ARG), dtype)
    check(fn(tf.constant(ARG.astype(np.int32))), ref(ARG), dtype)


BOOLS = np.array([[True, False, True], [True, True, True]])


@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, False), (1, True)])
def test_reduce_any_all(axis, keepdims):
    b = tf.constant(BOOLS)
    check(tf.reduce_any(b, axis=axis, keepdims=keepdims), BOOLS.any(axis, keepdims=keepdims))
    check(tf.reduce_all(b, axis=axis, keepdims=keepdims), BOOLS.all(axis, keepdims=keepdims))
    check(tf.reduce_all(b, axis=axis), BOOLS.all(axis), tf.bool)


# ----------------------------------------------------------------------------- rounding, division

HALVES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -1.2, 1.7, 0.0, 3.5])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floor_ceil_round(dtype):
    x = tf.constant(HALVES.astype(dtype))
    check(tf.floor(x), np.floor(HALVES).astype(dtype), x.dtype)
    check(tf.math.floor(x), np.floor(HALVES).astype(dtype), x.dtype)
    check(tf.math.ceil(x), np.ceil(HALVES).astype(dtype), x.dtype)
    check(tf.round(x), np.array([-2, -2, -0, 0, 2, 2, -1, 2, 0, 4], dtype), x.dtype)  # to even
    check(tf.math.round(x), np.round(HALVES).astype(dtype), x.dtype)


NUM = np.array([-7, 7, -7, 7, 0, -1, 6], np.int32)
DEN = np.array([2, 2, -2, -2, 3, 5, -4], np.int32)
DIVS = [
    ("floordiv", lambda a, b: tf.math.floordiv(a, b), np.floor_divide),
    ("//", lambda a, b: a // b, np.floor_divide),
    ("floormod", lambda a, b: tf.math.floormod(a, b), np.mod),
    ("mod", lambda a, b: tf.math.mod(a, b), np.mod),
    ("%", lambda a, b: a % b, np.mod),
]


@pytest.mark.parametrize("name,fn,ref", DIVS, ids=[d[0] for d in DIVS])
@pytest.mark.parametrize("np_dtype,dtype", [(np.int32, "int32"), (np.int64, "int64")])
def test_floordiv_floormod_python_semantics(name, fn, ref, np_dtype, dtype):
    a, b = NUM.astype(np_dtype), DEN.astype(np_dtype)
    check(fn(tf.constant(a), tf.constant(b)), ref(a, b), getattr(tf, dtype))


@pytest.mark.parametrize("name,fn,ref", DIVS, ids=[d[0] for d in DIVS])
def test_floordiv_floormod_floats(name, fn, ref):
    a, b = np.array([-7.5, 7.5, -7.5, 2.0]), np.array([2.0, -2.0, -2.0, 0.5])
    check(fn(tf.constant(a), tf.constant(b)), ref(a, b), tf.float64)


def test_floordiv_python_scalar():
    check(tf.constant(NUM) // 2, NUM // 2, tf.int32)
    check(tf.constant(NUM) % 3, NUM % 3, tf.int32)


# ----------------------------------------------------------------------------- casts

FLOATS = np.array([-1.7, -0.5, 0.5, 1.7, 2.999, -0.0, 0.0, 3.0])


CASTS = [
    (FLOATS, "int32", np.array([-1, 0, 0, 1, 2, 0, 0, 3], np.int32)),  # truncation
    (FLOATS, "int64", np.array([-1, 0, 0, 1, 2, 0, 0, 3], np.int64)),
    (FLOATS.astype(np.float32), "int32", np.array([-1, 0, 0, 1, 2, 0, 0, 3], np.int32)),
    (FLOATS, "bool", FLOATS != 0),
    (FLOATS, "float32", FLOATS.astype(np.float32)),
    (FLOATS.astype(np.float32), "float64", FLOATS.astype(np.float32).astype(np.float64)),
    (np.array([-2, 0, 3], np.int32), "float32", np.array([-2.0, 0.0, 3.0], np.float32)),
    (np.array([-2, 0, 3], np.int32), "int64", np.array([-2, 0, 3], np.int64)),
    (np.array([-2, 0, 3], np.int64), "bool", np.array([True, False, True])),
    (np.array([True, False]), "float32", np.array([1.0, 0.0], np.float32)),
    (np.array([True, False]), "int32", np.array([1, 0], np.int32)),
]


@pytest.mark.parametrize(
    "src,dst,want", CASTS, ids=[f"{c[0].dtype}->{c[1]}-{i}" for i, c in enumerate(CASTS)]
)
def test_cast(src, dst, want):
    check(tf.cast(tf.constant(src), getattr(tf, dst)), want, getattr(tf, dst))


# ----------------------------------------------------------------------------- creation


def one_hot(idx, depth, on=1.0, off=0.0):
    idx = np.asarray(idx)
    out = np.where(idx[..., None] == np.arange(depth), on, off)
    return out.astype(np.float32)


@pytest.mark.parametrize(
    "fn,want,dtype",
    [
        (lambda: tf.one_hot([0, 2, -1, 3], 3), one_hot([0, 2, -1, 3], 3), "float32"),
        (lambda: tf.one_hot([[0, 1], [2, 0]], 3), one_hot([[0, 1], [2, 0]], 3), "float32"),
        (
            lambda: tf.one_hot([1, 0], 3, on_value=5.0, off_value=-1.0),
            one_hot([1, 0], 3, 5, -1),
            "float32",
        ),
        (lambda: tf.one_hot([1, 0], 3, axis=0), one_hot([1, 0], 3).T, "float32"),
        (lambda: tf.one_hot([1, 0], 2, dtype=tf.int32), np.eye(2, dtype=np.int32)[[1, 0]], "int32"),
        (  # the dtype follows on_value/off_value
            lambda: tf.one_hot([[0, 5], [1, -2]], 4, on_value=2, off_value=0),
            2 * one_hot([[0, 5], [1, -2]], 4).astype(np.int32),
            "int32",
        ),
        (
            lambda: tf.one_hot(tf.constant(np.array([2, 1])), 3, dtype=tf.float64),
            one_hot([2, 1], 3).astype(np.float64),
            "float64",
        ),
    ],
)
def test_one_hot(fn, want, dtype):
    check(fn(), want, getattr(tf, dtype))


@pytest.mark.parametrize(
    "fn,want,dtype",
    [
        (lambda: tf.range(5), np.arange(5), "int32"),
        (lambda: tf.range(2, 11, 3), np.arange(2, 11, 3), "int32"),
        (lambda: tf.range(5, 0, -2), np.arange(5, 0, -2), "int32"),
        (lambda: tf.range(0), np.arange(0), "int32"),
        (lambda: tf.range(0.0, 1.0, 0.25), np.arange(0, 1, 0.25, dtype=np.float32), "float32"),
        (lambda: tf.range(3, dtype=tf.float64), np.arange(3.0), "float64"),
        (lambda: tf.range(1, 4, dtype=tf.int64), np.arange(1, 4), "int64"),
    ],
)
def test_range(fn, want, dtype):
    check(fn(), want, getattr(tf, dtype))


@pytest.mark.parametrize("start,stop,num", [(0.0, 1.0, 5), (-1.0, 1.0, 1), (2.0, -3.0, 7)])
def test_linspace(start, stop, num):
    check(
        tf.linspace(start, stop, num),
        np.linspace(start, stop, num, dtype=np.float32),
        tf.float32,
        exact=False,
    )


def test_linspace_float64():
    t = tf.linspace(tf.constant(0.0, tf.float64), tf.constant(2.0, tf.float64), 9)
    check(t, np.linspace(0.0, 2.0, 9), tf.float64, exact=False)


@pytest.mark.parametrize(
    "fn,want,dtype",
    [
        (lambda: tf.eye(3), np.eye(3, dtype=np.float32), "float32"),
        (lambda: tf.eye(2, 3), np.eye(2, 3, dtype=np.float32), "float32"),
        (lambda: tf.eye(2, dtype=tf.int32), np.eye(2, dtype=np.int32), "int32"),
        (lambda: tf.eye(2, batch_shape=[3]), np.broadcast_to(np.eye(2), (3, 2, 2)), "float32"),
        (lambda: tf.zeros([2, 3]), np.zeros((2, 3)), "float32"),
        (lambda: tf.zeros((2, 3), dtype=tf.int32), np.zeros((2, 3)), "int32"),
        (lambda: tf.zeros([]), np.zeros(()), "float32"),
        (lambda: tf.zeros([0]), np.zeros((0,)), "float32"),
        (lambda: tf.ones([3]), np.ones(3), "float32"),
        (lambda: tf.ones([2, 2], tf.float64), np.ones((2, 2)), "float64"),
        (lambda: tf.ones((2,), dtype=tf.bool), np.ones(2, bool), "bool"),
        (lambda: tf.fill([2, 3], 9), np.full((2, 3), 9), "int32"),
        (lambda: tf.fill([2], 1.5), np.full(2, 1.5), "float32"),
        (lambda: tf.zeros_like(tf.constant(A_INT)), np.zeros_like(A_INT), "int32"),
        (lambda: tf.ones_like(tf.constant(A_F)), np.ones_like(A_F), "float64"),
        (lambda: tf.zeros_like(tf.constant(BOOLS)), np.zeros_like(BOOLS), "bool"),
        (lambda: tf.ones_like(tf.constant(A_F), dtype=tf.int32), np.ones((3, 4)), "int32"),
    ],
)
def test_creation(fn, want, dtype):
    check(fn(), want, getattr(tf, dtype))


# ----------------------------------------------------------------------------- shape ops

M = np.arange(12, dtype=np.float64).reshape(3, 4)
SHAPE_OPS = [
    ("tile", lambda x: tf.tile(x, [2, 3]), lambda a: np.tile(a, (2, 3))),
    ("tile[1,1]", lambda x: tf.tile(x, [1, 1]), lambda a: a),
    ("pad", lambda x: tf.pad(x, [[1, 2], [0, 1]]), lambda a: np.pad(a, [[1, 2], [0, 1]])),
    (
        "pad[constant_values=2]",
        lambda x: tf.pad(x, [[1, 0], [2, 2]], constant_values=2),
        lambda a: np.pad(a, [[1, 0], [2, 2]], constant_values=2),
    ),
    (
        "pad[REFLECT]",
        lambda x: tf.pad(x, [[2, 1], [3, 1]], "REFLECT"),
        lambda a: np.pad(a, [[2, 1], [3, 1]], "reflect"),
    ),
    (
        "pad[SYMMETRIC]",
        lambda x: tf.pad(x, [[3, 1], [4, 2]], mode="SYMMETRIC"),
        lambda a: np.pad(a, [[3, 1], [4, 2]], "symmetric"),
    ),
    (
        "pad[reflect lowercase]",
        lambda x: tf.pad(x, [[1, 1], [1, 1]], mode="reflect"),
        lambda a: np.pad(a, 1, "reflect"),
    ),
    ("gather", lambda x: tf.gather(x, [2, 0, 2]), lambda a: a[[2, 0, 2]]),
    ("gather[axis=1]", lambda x: tf.gather(x, [3, 0], axis=1), lambda a: a[:, [3, 0]]),
    (
        "gather[axis=-1,2d]",
        lambda x: tf.gather(x, [[1, 2], [0, 0]], axis=-1),
        lambda a: a[:, np.array([[1, 2], [0, 0]])],
    ),
    ("gather[scalar index]", lambda x: tf.gather(x, 1), lambda a: a[1]),
    ("gather_nd", lambda x: tf.gather_nd(x, [[0, 1], [2, 3]]), lambda a: a[[0, 2], [1, 3]]),
    ("gather_nd[rows]", lambda x: tf.gather_nd(x, [[2], [0]]), lambda a: a[[2, 0]]),
    (
        "gather_nd[2d batch]",
        lambda x: tf.gather_nd(x, [[[0, 0]], [[1, 1]]]),
        lambda a: a[[[0], [1]], [[0], [1]]],
    ),
    ("concat[axis=0]", lambda x: tf.concat([x, x[:1]], 0), lambda a: np.concatenate([a, a[:1]])),
    (
        "concat[axis=-1]",
        lambda x: tf.concat([x, x, x[:, :1]], axis=-1),
        lambda a: np.concatenate([a, a, a[:, :1]], -1),
    ),
    ("stack", lambda x: tf.stack([x, x + 1]), lambda a: np.stack([a, a + 1])),
    ("stack[axis=-1]", lambda x: tf.stack([x, x + 1], axis=-1), lambda a: np.stack([a, a + 1], -1)),
    ("reshape[-1]", lambda x: tf.reshape(x, [-1]), lambda a: a.reshape(-1)),
    ("reshape[2,-1,3]", lambda x: tf.reshape(x, [2, -1, 3]), lambda a: a.reshape(2, -1, 3)),
    ("reshape[tuple]", lambda x: tf.reshape(x, (4, 3)), lambda a: a.reshape(4, 3)),
    ("transpose", lambda x: tf.transpose(x), lambda a: a.T),
    (
        "transpose[perm]",
        lambda x: tf.transpose(tf.reshape(x, [2, 3, 2]), [1, 2, 0]),
        lambda a: a.reshape(2, 3, 2).transpose(1, 2, 0),
    ),
    ("expand_dims[0]", lambda x: tf.expand_dims(x, 0), lambda a: a[None]),
    ("expand_dims[-1]", lambda x: tf.expand_dims(x, -1), lambda a: a[..., None]),
    ("expand_dims[-2]", lambda x: tf.expand_dims(x, -2), lambda a: a[:, None, :]),
    ("squeeze", lambda x: tf.squeeze(tf.reshape(x, [1, 3, 1, 4])), lambda a: a),
    ("squeeze[axis]", lambda x: tf.squeeze(tf.reshape(x, [1, 3, 1, 4]), axis=2), lambda a: a[None]),
    (
        "squeeze[axis=-4]",
        lambda x: tf.squeeze(tf.reshape(x, [1, 3, 1, 4]), [-4]),
        lambda a: a[:, None],
    ),
    (
        "broadcast_to",
        lambda x: tf.broadcast_to(x[:1], [2, 3, 4]),
        lambda a: np.broadcast_to(a[:1], (2, 3, 4)),
    ),
    ("slice", lambda x: tf.slice(x, [1, 1], [2, -1]), lambda a: a[1:3, 1:]),
]


@pytest.mark.parametrize("name,fn,ref", SHAPE_OPS, ids=[s[0] for s in SHAPE_OPS])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_shape_op(name, fn, ref, dtype):
    a = M.astype(dtype)
    check(fn(tf.constant(a)), ref(a), tf.constant(a).dtype)


def test_scatter_nd():
    idx = tf.constant(np.array([[0], [2], [0]]))
    upd = tf.constant(np.array([[1.0, 2], [3, 4], [5, 6]]))
    check(tf.scatter_nd(idx, upd, [4, 2]), [[6.0, 8], [0, 0], [3, 4], [0, 0]], tf.float64)
    upd_i = tf.constant(np.array([1, 2, 3], np.int32))
    check(tf.scatter_nd([[1, 1], [0, 2], [1, 1]], upd_i, [2, 3]), [[0, 0, 2], [0, 4, 0]], tf.int32)


def test_unstack_and_split():
    x = tf.constant(X3)
    parts = tf.unstack(x, axis=1)
    assert isinstance(parts, list) and len(parts) == 4
    for i, p in enumerate(parts):
        check(p, X3[:, i])
    assert len(tf.unstack(x)) == 3
    assert len(tf.unstack(x, num=5, axis=-1)) == 5
    for got, want in zip(tf.split(x, 2, axis=1), np.split(X3, 2, axis=1), strict=True):
        check(got, want)
    for got, want in zip(tf.split(x, [1, 3, 1], axis=2), np.split(X3, [1, 4], axis=2), strict=True):
        check(got, want)
    for got, want in zip(tf.split(x, [2, -1], axis=1), np.split(X3, [2], axis=1), strict=True):
        check(got, want)


SLICES = [
    ("x[0]", lambda x: x[0]),
    ("x[1:3]", lambda x: x[1:3]),
    ("x[:,0]", lambda x: x[:, 0]),
    ("x[...,None]", lambda x: x[..., None]),
    ("x[None]", lambda x: x[None]),
    ("x[::-1]", lambda x: x[::-1]),
    ("x[::2,1:]", lambda x: x[::2, 1:]),
    ("x[-1]", lambda x: x[-1]),
    ("x[:,-2:]", lambda x: x[:, -2:]),
    ("x[1,2,3]", lambda x: x[1, 2, 3]),
    ("x[:,None,1]", lambda x: x[:, None, 1]),
    ("x[...,::-2]", lambda x: x[..., ::-2]),
    ("x[1,...,2]", lambda x: x[1, ..., 2]),
    ("x[5:]", lambda x: x[5:]),
    ("x[:,3:1]", lambda x: x[:, 3:1]),
    ("x[-10:10]", lambda x: x[-10:10]),
    ("x[2:0:-1,::3]", lambda x: x[2:0:-1, ::3]),
]


@pytest.mark.parametrize("name,fn", SLICES, ids=[s[0] for s in SLICES])
def test_indexing(name, fn):
    check(fn(tf.constant(X3)), fn(X3), tf.float64)
    check(fn(tf.constant(X3.astype(np.int32))), fn(X3.astype(np.int32)), tf.int32)


def test_indexing_newaxis_and_tensor_index():
    x = tf.constant(X3)
    check(x[tf.newaxis, 0], X3[None, 0])
    check(x[:, tf.constant(1)], X3[:, 1])


# ----------------------------------------------------------------------------- dtype rules


def test_python_and_numpy_dtype_rules():
    assert tf.constant(1.5).dtype == tf.float32
    assert tf.constant(1).dtype == tf.int32
    assert tf.constant([1, 2]).dtype == tf.int32
    assert tf.constant([1.0, 2]).dtype == tf.float32
    assert tf.constant(True).dtype == tf.bool
    assert tf.constant(np.array([1, 2])).dtype == tf.int64
    assert tf.constant(np.array([1.0, 2.0])).dtype == tf.float64
    assert tf.constant(np.float64(2.0)).dtype == tf.float64
    assert tf.constant(np.ones(2, np.float32)).dtype == tf.float32
    assert tf.constant(np.ones(2, np.int32)).dtype == tf.int32
    assert tf.constant(1, dtype=tf.float64).dtype == tf.float64
    assert tf.constant([1, 2], dtype=tf.float32).dtype == tf.float32
    assert tf.convert_to_tensor(1.5).dtype == tf.float32
    assert tf.convert_to_tensor(np.array([1.5])).dtype == tf.float64


def test_python_scalars_adopt_the_tensor_dtype():
    check(tf.constant(np.array([1.0, 2.0], np.float32)) * 2, [2.0, 4.0], tf.float32)
    check(tf.constant(np.array([1.0, 2.0])) + 1.5, [2.5, 3.5], tf.float64)
    check(tf.constant(np.array([1, 2], np.int64)) + 1, [2, 3], tf.int64)
    check(2.0 - tf.constant(np.array([1.0, 2.0])), [1.0, 0.0], tf.float64)
    check(tf.constant([1, 2]) * 3, [3, 6], tf.int32)


def test_integer_arithmetic_keeps_dtype():
    for dt, name in [(np.int32, "int32"), (np.int64, "int64")]:
        a, b = A_INT.astype(dt), B_INT.astype(dt)
        ta, tb = tf.constant(a), tf.constant(b)
        for got, want in [
            (ta + tb, a + b),
            (ta - tb, a - b),
            (ta * tb, a * b),
            (-ta, -a),
            (tf.abs(ta), np.abs(a)),
            (tf.square(ta), a * a),
            (tf.maximum(ta, tb), np.maximum(a, b)),
            (tf.reduce_sum(ta, 0), a.sum(0)),
            (tf.reduce_max(ta), a.max()),
            (tf.matmul(ta, tf.transpose(ta)), a @ a.T),
            (tf.nn.relu(ta), np.maximum(a, 0)),
        ]:
            check(got, want.astype(dt), getattr(tf, name))


def test_int_truediv_gives_float64():
    a, b = np.array([1, 7, -3], np.int32), np.array([2, 2, 4], np.int32)
    check(tf.constant(a) / tf.constant(b), a / b, tf.float64)
    check(tf.divide(tf.constant(a), tf.constant(b)), a / b, tf.float64)
    check(tf.math.truediv(tf.constant(a.astype(np.int64)), b.astype(np.int64)), a / b, tf.float64)
    check(tf.constant(a) / 2, a / 2, tf.float64)
    check(tf.constant(np.array([1.0, 3.0], np.float32)) / 2, [0.5, 1.5], tf.float32)


def test_reduce_mean_of_ints_is_integer_division():
    # TF's reduce_mean keeps the integer dtype (it truncates).
    check(tf.reduce_mean(tf.constant([1, 2])), np.int32(1), tf.int32)


# ----------------------------------------------------------------------------- odd shapes


def test_empty_tensors():
    e = tf.constant(np.zeros((0,)))
    e2 = tf.constant(np.zeros((2, 0)))
    check(e + 1.0, np.zeros(0), tf.float64)
    check(tf.exp(e2), np.zeros((2, 0)))
    check(tf.reduce_sum(e), np.float64(0))
    check(tf.reduce_prod(e), np.float64(1))
    check(tf.reduce_sum(e2, axis=1), np.zeros(2))
    check(tf.reduce_sum(e2, axis=0), np.zeros(0))
    check(tf.reduce_max(e), np.float64(-np.inf))
    assert np.isnan(tf.reduce_mean(e).numpy())
    check(tf.concat([e2, tf.ones((2, 3), tf.float64)], 1), np.ones((2, 3)))
    check(tf.matmul(e2, tf.zeros((0, 3), tf.float64)), np.zeros((2, 3)))
    check(tf.transpose(e2), np.zeros((0, 2)))
    check(tf.reshape(e2, [0, 5]), np.zeros((0, 5)))
    check(tf.zeros((0, 1)) + tf.ones((1, 3)), np.zeros((0, 3)), tf.float32)
    check(tf.constant(X3)[3:], X3[3:])
    check(tf.gather(tf.constant(M), tf.constant(np.zeros(0, np.int32))), M[[]])


def test_awkward_shapes():
    row, col = RNG.standard_normal((1, 7)), RNG.standard_normal((7, 1))
    check(tf.constant(row) + tf.constant(col), row + col, tf.float64, exact=False)
    check(tf.matmul(tf.constant(row), tf.constant(col)), row @ col, exact=False)
    check(tf.matmul(tf.constant(col), tf.constant(row)), col @ row, exact=False)
    a, b = RNG.standard_normal((7, 13)), RNG.standard_normal((13, 5))
    check(tf.matmul(tf.constant(a), tf.constant(b)), a @ b, exact=False)
    check(tf.reduce_sum(tf.constant(a), 0), a.sum(0), exact=False)
    check(tf.reduce_max(tf.constant(a), 1), a.max(1))
    big = RNG.standard_normal(1001)
    check(tf.reduce_sum(tf.constant(big)), big.sum(), exact=False)
    check(tf.reduce_mean(tf.constant(big)), big.mean(), exact=False)
    big3 = RNG.standard_normal((3, 1, 67))
    check(tf.reduce_sum(tf.constant(big3), [0, 2]), big3.sum((0, 2)), exact=False)
    check(tf.constant(big3) * tf.constant(col[:5]), big3 * col[:5], exact=False)


def test_non_contiguous_inputs():
    a = RNG.standard_normal((3, 4))
    at = tf.transpose(tf.constant(a))  # a logical (4, 3) view
    sl = tf.constant(a)[::2, ::-1]  # (2, 4), strided
    b = RNG.standard_normal((3, 2))
    check(at + 1.0, a.T + 1.0)
    check(tf.exp(at), np.exp(a.T), exact=False)
    check(tf.reshape(at, [-1]), a.T.reshape(-1))
    check(tf.reshape(sl, [4, 2]), a[::2, ::-1].reshape(4, 2))
    check(tf.matmul(at, b), a.T @ b, exact=False)
    check(tf.matmul(sl, at), a[::2, ::-1] @ a.T, exact=False)
    check(tf.reduce_sum(at, 0), a.T.sum(0), exact=False)
    check(tf.reduce_max(sl, 1), a[::2, ::-1].max(1))
    check(tf.concat([at, at[:, :1]], 1), np.concatenate([a.T, a.T[:, :1]], 1))
    check(tf.gather(at, [3, 0]), a.T[[3, 0]])
    check(at[1:, ::2], a.T[1:, ::2])
    check(tf.transpose(sl), a[::2, ::-1].T)
    check(tf.reduce_sum(tf.nn.softmax(at), -1), np.ones(4), exact=False)
    check(at * tf.constant(a[0])[:3], a.T * a[0, :3], exact=False)
    check(tf.cast(at > 0, tf.int32), (a.T > 0).astype(np.int32), tf.int32)
    check(tf.argmax(at, axis=1), a.T.argmax(1), tf.int64)
    check(tf.tile(sl, [1, 2]), np.tile(a[::2, ::-1], (1, 2)))


def test_numpy_inputs_in_any_memory_layout():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    views = [a.T, np.asfortranarray(a), a[:, ::2], a[::-1, 1:], a.T[::2], a.reshape(2, 3, 4).T]
    for v in views:
        check(tf.constant(v), v, tf.float64)
        check(tf.convert_to_tensor(v), v, tf.float64)
        check(tf.constant(v.astype(np.float32).T), v.astype(np.float32).T, tf.float32)
        check(tf.constant(v.astype(np.int32)), v.astype(np.int32), tf.int32)
    check(tf.matmul(tf.constant(a), tf.constant(a.T)), a @ a.T)
    check(tf.einsum("ij,jk", tf.constant(a), tf.constant(a.T)), a @ a.T)


@pytest.mark.parametrize(
    "cond",
    [
        np.array([True, False, True, True]),
        np.array([[False, True, True], [True, False, False]]),
        A_F > 0,
        RNG.random((2, 3, 4)) > 0.5,
        np.zeros((2, 3), bool),
    ],
    ids=["1d", "2d", "3x4", "3d", "none"],
)
def test_where_single_argument_is_argwhere(cond):
    check(tf.where(tf.constant(cond)), np.argwhere(cond), tf.int64)


def test_special_values():
    inf, nan = np.inf, np.nan
    f32 = lambda v: tf.constant(np.array(v, np.float32))  # noqa: E731
    cases = [
        (tf.math.log(f32([0.0, -1.0])), [-inf, nan]),
        (tf.sqrt(f32([-1.0, 0.0])), [nan, 0.0]),
        (tf.math.reciprocal(f32([0.0, -0.0])), [inf, -inf]),
        (f32([1.0, -1.0, 0.0]) / 0.0, [inf, -inf, nan]),
        (tf.exp(f32([1000.0])), [inf]),
        (tf.nn.relu(f32([nan, -1.0])), [nan, 0.0]),
        (tf.maximum(f32([nan, 1.0]), f32([0.0, nan])), [nan, nan]),
        (tf.minimum(f32([nan, 1.0]), f32([0.0, nan])), [nan, nan]),
        (tf.reduce_max(f32([1.0, nan, 3.0])), nan),
        (tf.clip_by_value(f32([nan, 5.0]), 0.0, 1.0), [nan, 1.0]),
        (tf.reduce_logsumexp(f32([-inf, -inf])), -inf),
        (tf.reduce_logsumexp(f32([1000.0, 1000.0])), 1000.0 + np.log(2.0)),
        (tf.nn.softmax(f32([1000.0, 0.0])), [1.0, 0.0]),
        (tf.nn.log_softmax(f32([1000.0, 0.0])), [0.0, -1000.0]),
        (tf.sigmoid(f32([-1000.0, 1000.0])), [0.0, 1.0]),
        (tf.math.softplus(f32([-1000.0, 1000.0, 30.0])), [0.0, 1000.0, 30.0]),
    ]
    for got, want in cases:
        check(got, np.asarray(want, np.float32), tf.float32, exact=False)


# ----------------------------------------------------------------------------- errors


def raises_invalid(fn, *names):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        fn()
    msg = str(info.value).lower()
    for n in names:
        assert n in msg, f"{n!r} not in error message {msg!r}"


def test_invalid_argument_error_is_an_exception():
    assert issubclass(tf.errors.InvalidArgumentError, Exception)


def test_eq_operator_edge_cases():
    a64, a32 = tf.constant(np.array([1.0, 2.0])), tf.constant([1.0, 2.0])
    raises_invalid(lambda: a64 == a32)  # TF: "cannot compute Equal ..."
    assert not bool(tf.ones(2) == tf.ones(3))  # incompatible shapes compare unequal (scalar)
    assert (a64 == None) is False  # noqa: E711


def test_add_mismatched_dtypes():
    f32, f64 = tf.constant([1.0]), tf.constant(np.array([1.0]))
    raises_invalid(lambda: tf.add(f32, f64), "add")
    raises_invalid(lambda: f32 + f64, "add")
    raises_invalid(lambda: tf.constant([1]) + tf.constant(np.array([1])), "add")  # int32 + int64


def test_incompatible_broadcast():
    raises_invalid(lambda: tf.add(tf.ones((2, 3)), tf.ones((4,))), "add")
    raises_invalid(lambda: tf.multiply(tf.ones((2, 3)), tf.ones((3, 2))))
    raises_invalid(lambda: tf.ones((2, 3)) - tf.ones((2,)))


def test_matmul_inner_dimension_mismatch():
    raises_invalid(lambda: tf.matmul(tf.ones((2, 3)), tf.ones((4, 5))), "matmul")
    raises_invalid(lambda: tf.ones((2, 2, 3)) @ tf.ones((2, 2, 3)))


def test_gather_index_out_of_range():
    x = tf.constant(M)
    raises_invalid(lambda: tf.gather(x, [0, 5]), "gather")
    raises_invalid(lambda: tf.gather(x, [7], axis=1), "gather")
    raises_invalid(lambda: tf.gather_nd(x, [[3, 0]]))


def test_other_shape_errors():
    x = tf.constant(M)
    raises_invalid(lambda: tf.range(-3))  # start > limit with delta > 0
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        tf.tensordot(x, tf.transpose(x), 3)  # more axes than dimensions
    raises_invalid(lambda: tf.reshape(x, [5, -1]))
    raises_invalid(lambda: tf.reshape(x, [5, 5]))
    raises_invalid(lambda: tf.concat([x, tf.ones((2, 3), tf.float64)], 0))
    raises_invalid(lambda: tf.transpose(x, [0, 0]))
