"""ft.linalg's spectral decompositions (eigh, eigvalsh, svd, pinv, matrix_rank): values against
numpy, TensorFlow's derivatives against float64 finite differences (first and second order),
and ft.function. Runs without TensorFlow; tests/test_linalg_tf.py compares with TensorFlow.

Eigen- and singular vectors are defined up to sign, so the differentiated functions of them are
gauge invariant: ``V diag(c) V^T`` and ``U diag(c) V^T`` for fixed weights ``c``.
"""

import warnings

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.errors import InvalidArgumentError, UnimplementedError

RNG = np.random.default_rng(13)


def fd_grad(f, x, eps=1e-6):
    """Central differences of the scalar numpy function f at x."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[idx] += eps
        lo[idx] -= eps
        g[idx] = (f(hi) - f(lo)) / (2 * eps)
    return g


def check_grads(fn, ref, x, rtol=1e-5, atol=1e-6, second=True):
    """The tape's gradient of sum(fn(x) * w) against finite differences of the numpy ``ref``,
    and (``second``) the nested tapes' gradient of sum(g * u) against differences of g."""
    w = RNG.standard_normal(np.shape(ref(x)))
    u = RNG.standard_normal(x.shape)
    t = ft.constant(x)
    with ft.GradientTape() as outer:
        outer.watch(t)
        with ft.GradientTape() as inner:
            inner.watch(t)
            y = ft.reduce_sum(fn(t) * w)
        g = inner.gradient(y, t)
        z = ft.reduce_sum(g * u)
    np.testing.assert_allclose(
        g.numpy(), fd_grad(lambda v: float(np.sum(ref(v) * w)), x), rtol, atol
    )
    if not second:
        return
    h = outer.gradient(z, t)

    def first(v):
        tv = ft.constant(v)
        with ft.GradientTape() as tape:
            tape.watch(tv)
            yv = ft.reduce_sum(fn(tv) * w)
        return float(np.sum(tape.gradient(yv, tv).numpy() * u))

    np.testing.assert_allclose(h.numpy(), fd_grad(first, x), 1e-4, 1e-5)


def spread_symmetric(shape):
    """Random symmetric matrices with well-separated eigenvalues (finite differences of the
    eigenvectors stay accurate)."""
    n = shape[-1]
    q, _ = np.linalg.qr(RNG.standard_normal(shape))
    values = np.arange(1, n + 1) * 1.5 + RNG.uniform(-0.3, 0.3, (*shape[:-2], n))
    return (q * values[..., None, :]) @ np.swapaxes(q, -1, -2)


def spread_matrix(shape):
    """Random matrices with well-separated, nonzero singular values."""
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(RNG.standard_normal((*shape[:-2], m, m)))
    v, _ = np.linalg.qr(RNG.standard_normal((*shape[:-2], n, n)))
    s = np.zeros(shape)
    idx = np.arange(k)
    s[..., idx, idx] = np.arange(k, 0, -1) * 1.2 + RNG.uniform(-0.2, 0.2, (*shape[:-2], k))
    return u @ s @ np.swapaxes(v, -1, -2)


# ----------------------------------------------------------------------------- numpy references


def np_eigh_weighted(a, c):
    """V diag(c) V^T (sign free) of the lower triangle's symmetric matrix."""
    _, v = np.linalg.eigh(a, UPLO="L")
    return (v * c) @ np.swapaxes(v, -1, -2)


def np_svd_weighted(a, c):
    """U[:, :k] diag(c) V[:, :k]^T (sign free)."""
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return (u * c) @ vh


# ----------------------------------------------------------------------------- eigh, eigvalsh


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 3, 3)])
def test_eigh_values_and_vectors(dtype, shape):
    a = spread_symmetric(shape).astype(dtype)
    e, v = ft.linalg.eigh(a)
    assert e.dtype.name == dtype and v.dtype.name == dtype
    assert e.shape == shape[:-1] and v.shape == shape
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(e.numpy(), np.linalg.eigvalsh(a), rtol=tol, atol=tol)
    assert np.all(np.diff(e.numpy(), axis=-1) > 0)  # ascending
    vv = v.numpy()
    np.testing.assert_allclose(a @ vv, vv * e.numpy()[..., None, :], atol=10 * tol)
    np.testing.assert_allclose(
        np.swapaxes(vv, -1, -2) @ vv, np.broadcast_to(np.eye(shape[-1]), shape), atol=tol
    )
    np.testing.assert_allclose(ft.linalg.eigvalsh(a).numpy(), e.numpy())


def test_eigh_reads_only_the_lower_triangle():
    a = spread_symmetric((3, 3))
    upper_garbage = a + np.triu(RNG.standard_normal((3, 3)), 1)
    np.testing.assert_allclose(ft.linalg.eigh(upper_garbage)[0].numpy(), np.linalg.eigvalsh(a))
    np.testing.assert_allclose(ft.linalg.eigvalsh(upper_garbage).numpy(), np.linalg.eigvalsh(a))


def test_eigh_gradients_match_finite_differences():
    # A full (non-symmetric) input: the gradient lands on the lower triangle, as the forward
    # reads only that, which the finite differences of the reference see too.
    a = spread_symmetric((4, 4)) + np.triu(RNG.standard_normal((4, 4)), 1)
    c = np.array([0.3, -1.0, 2.0, 0.5])
    check_grads(lambda t: ft.linalg.eigh(t)[0], lambda x: np.linalg.eigvalsh(x), a)
    check_grads(
        lambda t: ft.linalg.matmul(
            ft.linalg.eigh(t)[1] * c, ft.linalg.eigh(t)[1], transpose_b=True
        ),
        lambda x: np_eigh_weighted(x, c),
        a,
    )
    # Values and vectors together, batched.
    b = spread_symmetric((2, 3, 3))

    def both(t):
        e, v = ft.linalg.eigh(t)
        return ft.linalg.matmul(v * ft.expand_dims(e, -2), v, transpose_b=True) + ft.expand_dims(
            e, -1
        )

    def both_ref(x):
        e, v = np.linalg.eigh(x)
        return (v * e[..., None, :]) @ np.swapaxes(v, -1, -2) + e[..., :, None]

    check_grads(both, both_ref, b)


def test_eigvalsh_gradient_is_v_diag_v_transposed_on_the_lower_triangle():
    a = spread_symmetric((3, 3))
    g = RNG.standard_normal(3)
    t = ft.constant(a)
    with ft.GradientTape() as tape:
        tape.watch(t)
        y = ft.reduce_sum(ft.linalg.eigvalsh(t) * g)
    _, v = np.linalg.eigh(a)
    full = (v * g) @ v.T
    want = np.tril(2 * full, -1) + np.diag(np.diag(full))
    np.testing.assert_allclose(tape.gradient(y, t).numpy(), want, atol=1e-12)
    check_grads(ft.linalg.eigvalsh, np.linalg.eigvalsh, spread_symmetric((2, 3, 3)))


def test_eigh_repeated_eigenvalues_give_finite_value_gradients():
    # TF's safe reciprocal: a repeated eigenvalue makes F large, never inf/nan, and the values'
    # gradient (which does not involve F) stays exact.
    t = ft.constant(np.eye(3))
    with ft.GradientTape() as tape:
        tape.watch(t)
        e, v = ft.linalg.eigh(t)
        y = ft.reduce_sum(e * [1.0, 2.0, 3.0]) + 0.0 * ft.reduce_sum(v)
    g = tape.gradient(y, t).numpy()
    assert np.all(np.isfinite(g))


# ----------------------------------------------------------------------------- svd


@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 5), (2, 3, 4), (0, 3)])
def test_svd_matches_numpy(shape, full):
    a = RNG.standard_normal(shape)
    s, u, v = ft.linalg.svd(a, full_matrices=full)
    m, n = shape[-2:]
    k = min(m, n)
    assert s.shape == (*shape[:-2], k)
    assert u.shape == (*shape[:-2], m, m if full else k)
    assert v.shape == (*shape[:-2], n, n if full else k)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a, compute_uv=False), atol=1e-12)
    uk, vk = u.numpy()[..., :k], v.numpy()[..., :k]
    np.testing.assert_allclose(
        (uk * s.numpy()[..., None, :]) @ np.swapaxes(vk, -1, -2), a, atol=1e-12
    )
    eye_v = np.broadcast_to(np.eye(v.shape[-1]), v.shape[:-2] + (v.shape[-1],) * 2)
    np.testing.assert_allclose(np.swapaxes(v.numpy(), -1, -2) @ v.numpy(), eye_v, atol=1e-12)
    only = ft.linalg.svd(a, full_matrices=full, compute_uv=False)
    assert ft.is_tensor(only)
    np.testing.assert_allclose(only.numpy(), s.numpy())


def test_svd_float32():
    a = RNG.standard_normal((3, 2)).astype(np.float32)
    s, u, v = ft.linalg.svd(a)
    assert (s.dtype.name, u.dtype.name, v.dtype.name) == ("float32",) * 3
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a, compute_uv=False), rtol=1e-5)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 4)])
def test_svd_gradients_match_finite_differences(shape):
    a = spread_matrix(shape)
    k = min(shape[-2:])
    c = RNG.standard_normal(k)
    check_grads(
        lambda t: ft.linalg.svd(t, compute_uv=False),
        lambda x: np.linalg.svd(x, compute_uv=False),
        a,
    )
    check_grads(lambda t: ft.linalg.svd(t)[0], lambda x: np.linalg.svd(x, compute_uv=False), a)

    def weighted(t):
        _, u, v = ft.linalg.svd(t)
        return ft.linalg.matmul(u * c, v, transpose_b=True)

    check_grads(weighted, lambda x: np_svd_weighted(x, c), a)

    def left_projector(t):  # U U^T alone: exercises the u-only path
        _, u, _ = ft.linalg.svd(t)
        return ft.linalg.matmul(u * c, u, transpose_b=True)

    def left_ref(x):
        u = np.linalg.svd(x, full_matrices=False)[0]
        return (u * c) @ np.swapaxes(u, -1, -2)

    check_grads(left_projector, left_ref, a)


@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (3, 3)])
def test_svd_full_matrices_gradient_where_tf_defines_it(shape):
    # |m - n| <= 1: the extra column of the longer side is unique up to sign, so its projector
    # is a smooth function of the input.
    a = spread_matrix(shape)
    m, n = shape
    cu, cv = RNG.standard_normal(m), RNG.standard_normal(n)

    def projectors(t):
        _, u, v = ft.linalg.svd(t, full_matrices=True)
        pu = ft.linalg.matmul(u * cu, u, transpose_b=True)
        pv = ft.linalg.matmul(v * cv, v, transpose_b=True)
        return ft.concat([ft.reshape(pu, [-1]), ft.reshape(pv, [-1])], 0)

    def ref(x):
        u, _, vh = np.linalg.svd(x, full_matrices=True)
        v = vh.T
        return np.concatenate([((u * cu) @ u.T).ravel(), ((v * cv) @ v.T).ravel()])

    check_grads(projectors, ref, a)


def test_svd_full_matrices_gradient_refused_as_tf_does():
    t = ft.constant(spread_matrix((2, 4)))
    with ft.GradientTape() as tape:
        tape.watch(t)
        s, u, v = ft.linalg.svd(t, full_matrices=True)
        y = ft.reduce_sum(s)
    with pytest.raises(UnimplementedError, match=r"abs\(m - n\) > 1.*m=2 and n=4"):
        tape.gradient(y, t)
    with pytest.raises(NotImplementedError):  # UnimplementedError is one, like TF's error
        t2 = ft.constant(spread_matrix((5, 3)))
        with ft.GradientTape() as tape:
            tape.watch(t2)
            y = ft.reduce_sum(ft.linalg.svd(t2, full_matrices=True)[1])
        tape.gradient(y, t2)


# ----------------------------------------------------------------------------- pinv, matrix_rank


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 5), (2, 3, 4)])
def test_pinv_matches_numpy_and_differentiates(shape):
    a = spread_matrix(shape)
    np.testing.assert_allclose(ft.linalg.pinv(a).numpy(), np.linalg.pinv(a), atol=1e-12)
    check_grads(ft.linalg.pinv, np.linalg.pinv, a, second=False)


def test_pinv_cuts_small_singular_values_by_rcond():
    a = np.array([[1.0, 0.0], [0.0, 1e-9]])
    # Default rcond = 10 * max(m, n) * eps: 1e-9 survives in float64, dropping it needs rcond.
    np.testing.assert_allclose(ft.linalg.pinv(a).numpy(), np.diag([1.0, 1e9]), rtol=1e-9)
    np.testing.assert_allclose(ft.linalg.pinv(a, rcond=1e-6).numpy(), np.diag([1.0, 0.0]))
    # float32's default cutoff (20 * 1.19e-7) drops it; the gradient stays finite.
    t = ft.constant(a.astype(np.float32))
    with ft.GradientTape() as tape:
        tape.watch(t)
        p = ft.linalg.pinv(t)
        y = ft.reduce_sum(p)
    np.testing.assert_allclose(p.numpy(), np.diag([1.0, 0.0]))
    assert np.all(np.isfinite(tape.gradient(y, t).numpy()))


def test_matrix_rank():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    full = RNG.standard_normal((3, 4))
    r = ft.linalg.matrix_rank(np.stack([a, np.eye(2), np.zeros((2, 2))]))
    assert r.dtype.name == "int32"
    np.testing.assert_array_equal(r.numpy(), [1, 2, 0])
    assert int(ft.linalg.matrix_rank(full)) == 3
    assert int(ft.linalg.matrix_rank(np.diag([1.0, 1e-3]), tol=1e-2)) == 1
    near = np.diag([1.0, 1e-17])  # under eps * 2 * max(s): numerically rank 1
    assert int(ft.linalg.matrix_rank(near)) == np.linalg.matrix_rank(near) == 1


# ----------------------------------------------------------------------------- errors, ft.function


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: ft.linalg.eigh(np.ones((2, 3))), "eigh: input must be square"),
        (lambda: ft.linalg.eigvalsh(np.ones((2, 3))), "eigvalsh: input must be square"),
        (lambda: ft.linalg.eigh(np.ones(3)), "eigh: input must be at least 2-D"),
        (lambda: ft.linalg.eigh(np.ones((2, 2), np.int32)), "eigh: expected a float32 or float64"),
        (lambda: ft.linalg.svd(np.ones(3)), "svd: input must be at least 2-D"),
        (lambda: ft.linalg.svd(np.ones((2, 2), np.int32)), "svd: expected a float32 or float64"),
        (lambda: ft.linalg.pinv(np.ones(2)), "pinv: input must be at least 2-D"),
        (lambda: ft.linalg.matrix_rank(np.ones(2)), "matrix_rank: input must be at least 2-D"),
    ],
)
def test_bad_input_raises_naming_the_op(call, match):
    with pytest.raises(InvalidArgumentError, match=match):
        call()


def test_inside_function_runs_eagerly_with_the_same_results():
    a = spread_symmetric((3, 3))

    def program(x):
        e, v = ft.linalg.eigh(x)
        s = ft.linalg.svd(x, compute_uv=False)
        return e, ft.abs(v), s, ft.linalg.pinv(x), ft.linalg.matrix_rank(x)

    traced = ft.function(program)
    with pytest.warns(RuntimeWarning, match="runs eagerly"):
        got = traced(ft.constant(a))
    for g, w in zip(got, program(ft.constant(a)), strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once
        again = traced(ft.constant(2.0 * a))  # a function argument read on the host is not
        # baked into a trace: the second call computes its own values
    np.testing.assert_allclose(again[0].numpy(), 2.0 * np.linalg.eigvalsh(a))


def test_forward_accumulator_jvp_matches_finite_differences():
    a, t = spread_symmetric((3, 3)), RNG.standard_normal((3, 3))
    b = spread_matrix((3, 2))
    eps = 1e-6
    x = ft.constant(a)
    with ft.autodiff.ForwardAccumulator(x, ft.constant(t)) as acc:
        e = ft.linalg.eigvalsh(x)
    want = (np.linalg.eigvalsh(a + eps * t) - np.linalg.eigvalsh(a - eps * t)) / (2 * eps)
    np.testing.assert_allclose(acc.jvp(e).numpy(), want, rtol=1e-5, atol=1e-7)
    y = ft.constant(b)
    tb = RNG.standard_normal(b.shape)
    with ft.autodiff.ForwardAccumulator(y, ft.constant(tb)) as acc:
        p = ft.linalg.pinv(y)
    want = (np.linalg.pinv(b + eps * tb) - np.linalg.pinv(b - eps * tb)) / (2 * eps)
    np.testing.assert_allclose(acc.jvp(p).numpy(), want, rtol=1e-5, atol=1e-7)
