"""Hypothesis property tests: random shapes and short random op chains against NumPy, gradients
against finite differences or closed forms, in float64."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ferrotape as tf

FAST = settings(max_examples=40, deadline=None, derandomize=True, database=None)
SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)
SEEDS = st.integers(0, 2**32 - 1)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# Smooth elementwise ops whose values stay moderate for inputs in (-2, 2).
UNARY = {
    "tanh": (lambda x: tf.tanh(x), np.tanh),
    "sin": (lambda x: tf.sin(x), np.sin),
    "sigmoid": (lambda x: tf.sigmoid(x), sigmoid),
    "square": (lambda x: tf.square(x), np.square),
    "softplus": (lambda x: tf.math.softplus(x), lambda x: np.log1p(np.exp(x))),
    "exp_half": (lambda x: tf.exp(x * 0.5), lambda x: np.exp(x * 0.5)),
    "affine": (lambda x: 1.5 - x * 0.5, lambda x: 1.5 - x * 0.5),
    "atan": (lambda x: tf.math.atan(x), np.arctan),
    "silu": (lambda x: tf.nn.silu(x), lambda x: x * sigmoid(x)),
}
REDUCE = {
    "sum": (lambda: tf.reduce_sum, np.sum),
    "mean": (lambda: tf.reduce_mean, np.mean),
    "max": (lambda: tf.reduce_max, np.max),
    "logsumexp": (
        lambda: tf.reduce_logsumexp,
        lambda x, axis, keepdims: np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims)),
    ),
}


def draw_step(data, shape, rng):
    """One random step valid for ``shape``: (label, ferrotape fn, numpy fn)."""
    kinds = ["unary", "scale"] + (["reduce", "reshape", "transpose", "softmax"] if shape else [])
    kind = data.draw(st.sampled_from(kinds))
    nd = len(shape)
    if kind == "unary":
        name = data.draw(st.sampled_from(sorted(UNARY)))
        return (name, *UNARY[name])
    if kind == "scale":  # multiply by a constant that broadcasts into the current shape
        cshape = data.draw(hnp.broadcastable_shapes(shape, min_dims=0, max_dims=nd))
        c = rng.uniform(0.5, 1.5, cshape)
        return f"*c{cshape}", lambda x: x * tf.constant(c), lambda x: x * c
    if kind == "reduce":
        name = data.draw(st.sampled_from(sorted(REDUCE)))
        axis = data.draw(
            st.none()
            | st.integers(-nd, nd - 1)
            | st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True)
        )
        keep = data.draw(st.booleans())
        get, ref = REDUCE[name]
        np_axis = tuple(axis) if isinstance(axis, list) else axis
        return (
            f"reduce_{name}({axis},{keep})",
            lambda x: get()(x, axis=axis, keepdims=keep),
            lambda x: ref(x, axis=np_axis, keepdims=keep),
        )
    if kind == "reshape":
        new = data.draw(st.sampled_from([[-1], list(shape[::-1]), [1, *shape], [-1, shape[-1]]]))
        return f"reshape{new}", lambda x: tf.reshape(x, new), lambda x: x.reshape(new)
    if kind == "transpose":
        perm = data.draw(st.permutations(range(nd)))
        return f"transpose{perm}", lambda x: tf.transpose(x, perm), lambda x: x.transpose(perm)
    axis = data.draw(st.integers(-nd, nd - 1))
    e = lambda x: np.exp(x - x.max(axis, keepdims=True))  # noqa: E731
    return (
        f"softmax({axis})",
        lambda x: tf.nn.softmax(x, axis=axis),
        lambda x: e(x) / e(x).sum(axis, keepdims=True),
    )


def finite_diff(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[idx] += eps
        lo[idx] -= eps
        g[idx] = (f(hi) - f(lo)) / (2 * eps)
    return g


@FAST
@given(shape=SHAPES, seed=SEEDS, n=st.integers(2, 4), data=st.data())
def test_random_chain_forward_and_gradient(shape, seed, n, data):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, shape)
    steps, y = [], x
    for _ in range(n):
        step = draw_step(data, y.shape, rng)
        steps.append(step)
        y = np.asarray(step[2](y))
    w = rng.standard_normal(y.shape)
    labels = [s[0] for s in steps]

    def np_chain(v):
        for _, _, f in steps:
            v = np.asarray(f(v))
        return v

    t = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(t)
        out = t
        for _, f, _ in steps:
            out = f(out)
        loss = tf.reduce_sum(out * tf.constant(w))
    assert out.dtype == tf.float64
    assert tuple(out.shape) == y.shape, labels
    np.testing.assert_allclose(out.numpy(), y, rtol=1e-9, atol=1e-12, err_msg=str(labels))
    grad = tape.gradient(loss, t)
    want = finite_diff(lambda v: np.sum(np_chain(v) * w), x)
    assert grad is not None and tuple(grad.shape) == shape
    np.testing.assert_allclose(grad.numpy(), want, rtol=1e-5, atol=1e-6, err_msg=str(labels))


def unbroadcast(g, shape):
    """Sum ``g`` down to ``shape`` (undo NumPy broadcasting)."""
    g = g.sum(axis=tuple(range(g.ndim - len(shape))))
    return g.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)


# name: (ferrotape, numpy forward, (dL/dx, dL/dy) given upstream w, before unbroadcasting)
BINARY = {
    "add": (lambda x, y: x + y, np.add, lambda x, y, w: (w, w)),
    "subtract": (lambda x, y: tf.subtract(x, y), np.subtract, lambda x, y, w: (w, -w)),
    "multiply": (lambda x, y: x * y, np.multiply, lambda x, y, w: (w * y, w * x)),
    "divide": (lambda x, y: x / y, np.divide, lambda x, y, w: (w / y, -w * x / y**2)),
    "maximum": (
        lambda x, y: tf.maximum(x, y),
        np.maximum,
        lambda x, y, w: (w * (x >= y), w * (x < y)),
    ),
    "minimum": (
        lambda x, y: tf.minimum(x, y),
        np.minimum,
        lambda x, y, w: (w * (x <= y), w * (x > y)),
    ),
    "squared_difference": (
        lambda x, y: tf.math.squared_difference(x, y),
        lambda x, y: (x - y) ** 2,
        lambda x, y, w: (2 * w * (x - y), -2 * w * (x - y)),
    ),
    "pow": (lambda x, y: tf.pow(x, y), np.power, lambda x, y, w: (w * y * x ** (y - 1), None)),
}
PAIRS = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3)


@FAST
@given(pair=PAIRS, op=st.sampled_from(sorted(BINARY)), seed=SEEDS)
def test_broadcasting_binary_ops(pair, op, seed):
    (sx, sy), out_shape = pair.input_shapes, pair.result_shape
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 2.0, sx) if op == "pow" else rng.uniform(-2.0, 2.0, sx)
    y = np.asarray(rng.choice([-1.0, 1.0], sy) * rng.uniform(0.5, 2.0, sy))  # |y| >= 0.5
    fn, ref, vjp = BINARY[op]
    w = rng.standard_normal(out_shape)
    tx, ty = tf.constant(x), tf.constant(y)
    with tf.GradientTape() as tape:
        tape.watch([tx, ty])
        out = fn(tx, ty)
        loss = tf.reduce_sum(out * tf.constant(w))
    assert out.dtype == tf.float64 and tuple(out.shape) == out_shape
    np.testing.assert_allclose(out.numpy(), ref(x, y), rtol=1e-12, atol=1e-12)
    gx, gy = tape.gradient(loss, [tx, ty])
    xb, yb = np.broadcast_to(x, out_shape), np.broadcast_to(y, out_shape)
    want_x, want_y = vjp(xb, yb, w)
    if op == "pow":
        want_y = w * np.log(xb) * xb**yb
    for g, want, s in [(gx, want_x, sx), (gy, want_y, sy)]:
        assert g is not None and tuple(g.shape) == s
        np.testing.assert_allclose(g.numpy(), unbroadcast(want, s), rtol=1e-10, atol=1e-12)


@st.composite
def matmul_shapes(draw):
    batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    (ba, bb), out = batch.input_shapes, batch.result_shape
    return (*ba, m, k), (*bb, k, n), (*out, m, n)


@FAST
@given(shapes=matmul_shapes(), seed=SEEDS)
def test_batched_matmul_broadcasting(shapes, seed):
    sa, sb, so = shapes
    rng = np.random.default_rng(seed)
    a, b, w = rng.standard_normal(sa), rng.standard_normal(sb), rng.standard_normal(so)
    ta, tb = tf.constant(a), tf.constant(b)
    with tf.GradientTape() as tape:
        tape.watch([ta, tb])
        out = tf.matmul(ta, tb)
        loss = tf.reduce_sum(out * tf.constant(w))
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-10, atol=1e-12)
    ga, gb = tape.gradient(loss, [ta, tb])
    want_a = unbroadcast(w @ np.swapaxes(np.broadcast_to(b, (*so[:-2], *sb[-2:])), -1, -2), sa)
    want_b = unbroadcast(np.swapaxes(np.broadcast_to(a, (*so[:-2], *sa[-2:])), -1, -2) @ w, sb)
    np.testing.assert_allclose(ga.numpy(), want_a, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gb.numpy(), want_b, rtol=1e-10, atol=1e-12)


@FAST
@given(
    shape=SHAPES,
    seed=SEEDS,
    op=st.sampled_from(["sum", "mean", "max", "min"]),
    keep=st.booleans(),
    data=st.data(),
)
def test_reductions_over_random_axes(shape, seed, op, keep, data):
    nd = len(shape)
    axes = data.draw(
        st.none() | st.lists(st.integers(-nd, nd - 1), max_size=nd, unique_by=lambda a: a % nd)
    )
    rng = np.random.default_rng(seed)
    x = rng.permutation(np.prod(shape)).reshape(shape) / 7.0  # distinct values: no ties
    # axis=None reduces everything; an empty list (TF and NumPy alike) reduces nothing
    np_axes = None if axes is None else tuple(a % nd for a in axes)
    ref = getattr(np, op)(x, axis=np_axes, keepdims=keep)
    w = rng.standard_normal(ref.shape)
    t = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(t)
        out = getattr(tf, f"reduce_{op}")(t, axis=axes, keepdims=keep)
        loss = tf.reduce_sum(out * tf.constant(w))
    assert tuple(out.shape) == ref.shape
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    wk = w.reshape(getattr(np, op)(x, axis=np_axes, keepdims=True).shape)
    if op == "sum":
        want = np.broadcast_to(wk, shape)
    elif op == "mean":
        want = np.broadcast_to(wk, shape) * (ref.size / x.size)
    else:
        hit = x == getattr(np, op)(x, axis=np_axes, keepdims=True)
        want = hit * wk
    np.testing.assert_allclose(tape.gradient(loss, t).numpy(), want, rtol=1e-12, atol=1e-15)


@FAST
@given(shape=SHAPES, seed=SEEDS, data=st.data())
def test_transpose_and_reshape_round_trip(shape, seed, data):
    perm = data.draw(st.permutations(range(len(shape))))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    t = tf.constant(x)
    tt = tf.transpose(t, perm)
    np.testing.assert_array_equal(tt.numpy(), x.transpose(perm))
    flat = tf.reshape(tt, [-1])
    np.testing.assert_array_equal(flat.numpy(), x.transpose(perm).reshape(-1))
    back = tf.transpose(tf.reshape(flat, tt.shape), np.argsort(perm))
    np.testing.assert_array_equal(back.numpy(), x)
    # a non-contiguous view through an elementwise op and a reduction
    np.testing.assert_allclose(
        tf.reduce_sum(tf.exp(tt), axis=0).numpy(), np.exp(x.transpose(perm)).sum(0), rtol=1e-12
    )
