"""The ``ft.linalg`` and ``ft.math`` names composed in Python from native ops.

Each is checked without TensorFlow: the forward against NumPy (or hand-computed values), the
gradient against float64 central finite differences of the NumPy reference, and bad input against
TensorFlow 2.21's exception type.
"""

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.errors import FailedPreconditionError, InvalidArgumentError

RNG = np.random.default_rng(13)


def check_grad(f, ref, *xs, eps=1e-6, tol=1e-6):
    """``tape.gradient(sum(f(*xs) * w))`` against central differences of ``sum(ref(*xs) * w)``."""
    xs = [np.asarray(x, np.float64) for x in xs]
    expected = ref(*xs)
    # Entries at +-inf or a dtype's extreme (an exclusive logsumexp's first, an empty segment's
    # max) are constants: weight 0 keeps them out of the finite differences.
    w = np.where(np.abs(expected) < 1e300, RNG.normal(size=np.shape(expected)), 0.0)
    vs = [ft.Variable(x) for x in xs]
    with ft.GradientTape() as tape:
        out = f(*vs)
        loss = ft.reduce_sum(out * ft.constant(w))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-12)
    grads = tape.gradient(loss, vs)
    for i, (x, g) in enumerate(zip(xs, grads, strict=True)):
        numeric = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            hi, lo = [a.copy() for a in xs], [a.copy() for a in xs]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            up, down = ref(*hi)[w != 0], ref(*lo)[w != 0]
            numeric[idx] = np.sum((up - down) * w[w != 0]) / (2 * eps)
        got = np.zeros_like(x) if g is None else g.numpy()
        np.testing.assert_allclose(got, numeric, rtol=tol, atol=tol)


# ----------------------------------------------------------------------------- ft.linalg


def np_diag_part(x, k=0):
    return np.diagonal(x, offset=k, axis1=-2, axis2=-1)


def np_diag(d, k=0, pad=0.0):
    n = d.shape[-1] + abs(k)
    out = np.full((*d.shape[:-1], n, n), pad, d.dtype)
    rows = np.arange(d.shape[-1]) + max(-k, 0)
    out[..., rows, rows + k] = d
    return out


def np_set_diag(x, d, k=0):
    out = x.copy()
    rows = np.arange(d.shape[-1]) + max(-k, 0)
    out[..., rows, rows + k] = d
    return out


def np_band(x, lo, up):
    m, n = x.shape[-2:]
    i, j = np.ogrid[:m, :n]
    keep = ((lo < 0) | (i - j <= lo)) & ((up < 0) | (j - i <= up))
    return np.where(keep, x, 0.0)


@pytest.mark.parametrize("k", [0, 1, 3, -1, -2])
def test_diag_part(k):
    check_grad(
        lambda x: ft.linalg.diag_part(x, k=k),
        lambda x: np_diag_part(x, k),
        RNG.normal(size=(2, 3, 4)),
    )


@pytest.mark.parametrize("k", [0, 2, -1])
def test_diag(k):
    check_grad(lambda d: ft.linalg.diag(d, k=k), lambda d: np_diag(d, k), RNG.normal(size=(2, 3)))
    d = RNG.normal(size=(3,))
    np.testing.assert_array_equal(
        ft.linalg.diag(d, k=k, padding_value=7).numpy(), np_diag(d, k, 7.0)
    )


@pytest.mark.parametrize("k", [0, 1, -1])
def test_set_diag(k):
    x = RNG.normal(size=(2, 3, 4))
    d = RNG.normal(size=np_diag_part(x, k).shape)
    check_grad(lambda a, b: ft.linalg.set_diag(a, b, k=k), lambda a, b: np_set_diag(a, b, k), x, d)


@pytest.mark.parametrize(("lo", "up"), [(0, -1), (-1, 0), (1, 2), (0, 0), (-1, -1)])
def test_band_part(lo, up):
    check_grad(
        lambda x: ft.linalg.band_part(x, lo, up),
        lambda x: np_band(x, lo, up),
        RNG.normal(size=(2, 3, 4)),
    )


def test_band_part_zeroes_nan_outside_the_band():
    x = np.array([[1.0, np.nan], [np.nan, 2.0]])
    np.testing.assert_array_equal(ft.linalg.band_part(x, 0, 0).numpy(), [[1.0, 0.0], [0.0, 2.0]])


def test_trace_and_int_dtypes():
    check_grad(
        ft.linalg.trace, lambda x: np.trace(x, axis1=-2, axis2=-1), RNG.normal(size=(2, 3, 3))
    )
    t = ft.linalg.trace(ft.constant([[1, 2], [3, 4]]))
    assert t.dtype == ft.int32 and t.numpy() == 5


def test_tensor_diag_and_part():
    d = RNG.normal(size=(2, 3))
    full = np.zeros((2, 3, 2, 3))
    for i, j in np.ndindex(2, 3):
        full[i, j, i, j] = d[i, j]
    check_grad(
        ft.linalg.tensor_diag,
        lambda a: np.einsum("ij,ik,jl->ijkl", a, np.eye(2), np.eye(3)),
        d,
    )
    np.testing.assert_array_equal(ft.linalg.tensor_diag(d).numpy(), full)
    check_grad(
        ft.linalg.tensor_diag_part,
        lambda a: np.einsum("ijij->ij", a),
        RNG.normal(size=(2, 3, 2, 3)),
    )


@pytest.mark.parametrize("transpose", [False, True])
def test_matvec(transpose):
    a = RNG.normal(size=(2, 3, 4))
    b = RNG.normal(size=(3,) if transpose else (4,))

    def ref(a, b):
        return np.einsum("...ji,j->...i" if transpose else "...ij,j->...i", a, b)

    check_grad(lambda a, b: ft.linalg.matvec(a, b, transpose_a=transpose), ref, a, b)


def test_cross():
    check_grad(ft.linalg.cross, np.cross, RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3)))


def test_slogdet_logdet():
    m = RNG.normal(size=(2, 3, 3)) + 2.0 * np.eye(3)
    sign, logabs = ft.linalg.slogdet(m)
    np.testing.assert_array_equal(sign.numpy(), np.linalg.slogdet(m)[0])
    check_grad(lambda a: ft.linalg.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1], m, tol=1e-5)
    spd = m @ np.swapaxes(m, -1, -2) + np.eye(3)
    check_grad(ft.linalg.logdet, lambda a: np.linalg.slogdet(a)[1], spd, tol=1e-5)


def test_normalize_and_aliases():
    x = RNG.normal(size=(2, 3))
    unit, n = ft.linalg.normalize(x, axis=-1)
    ref = np.linalg.norm(x, axis=-1, keepdims=True)
    np.testing.assert_allclose(n.numpy(), ref)
    np.testing.assert_allclose(unit.numpy(), x / ref)
    check_grad(lambda a: ft.linalg.normalize(a)[0], lambda a: a / np.linalg.norm(a), x)
    np.testing.assert_allclose(
        ft.linalg.global_norm([x, 2 * x]).numpy(), np.sqrt(5) * np.linalg.norm(x)
    )
    np.testing.assert_allclose(ft.linalg.l2_normalize(x, axis=-1).numpy(), x / ref)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: ft.linalg.diag_part(np.ones(3)), InvalidArgumentError),
        (lambda: ft.linalg.band_part(np.ones((3, 3)), 4, 0), InvalidArgumentError),
        (lambda: ft.linalg.set_diag(np.ones((3, 3)), np.ones(2)), InvalidArgumentError),
        (lambda: ft.linalg.tensor_diag_part(np.ones((2, 3))), InvalidArgumentError),
        (lambda: ft.linalg.tensor_diag(np.float32(1.0)), InvalidArgumentError),
        (lambda: ft.linalg.cross(np.ones(2), np.ones(2)), FailedPreconditionError),
        (lambda: ft.linalg.cross(np.ones(3), np.ones((2, 3))), InvalidArgumentError),
        (lambda: ft.linalg.matvec(np.ones(3), np.ones(3)), InvalidArgumentError),
    ],
)
def test_linalg_bad_input(call, error):
    with pytest.raises(error):
        call()


# ----------------------------------------------------------------------------- ft.math: *_no_nan

X = np.array([0.0, 1.0, -2.0, 0.0, np.inf, 3.0])
Y = np.array([0.0, 0.0, 2.0, np.nan, 0.0, -1.0])


def test_no_nan_forward():
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(
            ft.math.divide_no_nan(X, Y).numpy(), np.where(Y == 0, 0.0, X / Y)
        )
        np.testing.assert_allclose(
            ft.math.multiply_no_nan(X, Y).numpy(), np.where(Y == 0, 0.0, X * Y)
        )
        np.testing.assert_allclose(
            ft.math.xlogy(X, Y).numpy(), np.where(X == 0, 0.0, X * np.log(Y))
        )
        np.testing.assert_allclose(
            ft.math.xlog1py(X, Y).numpy(), np.where(X == 0, 0.0, X * np.log1p(Y))
        )
        np.testing.assert_allclose(ft.math.xdivy(X, Y).numpy(), np.where(X == 0, 0.0, X / Y))
        np.testing.assert_allclose(
            ft.math.reciprocal_no_nan(X).numpy(), np.where(X == 0, 0.0, 1 / X)
        )
    q = ft.math.divide_no_nan(np.array([1, 2]), np.array([0, 4]))
    assert q.dtype == ft.float64
    np.testing.assert_array_equal(q.numpy(), [0.0, 0.5])
    np.testing.assert_array_equal(ft.math.is_inf(X).numpy(), np.isinf(X))
    np.testing.assert_array_equal(ft.math.is_finite(Y).numpy(), np.isfinite(Y))


def test_no_nan_gradients_away_from_zero():
    x = RNG.uniform(0.5, 2.0, size=(2, 3))
    y = RNG.uniform(0.5, 2.0, size=(3,))
    check_grad(ft.math.divide_no_nan, lambda a, b: a / b, x, y)
    check_grad(ft.math.multiply_no_nan, lambda a, b: a * b, x, y)
    check_grad(ft.math.xlogy, lambda a, b: a * np.log(b), x, y)
    check_grad(ft.math.xlog1py, lambda a, b: a * np.log1p(b), x, y)
    check_grad(ft.math.xdivy, lambda a, b: a / b, x, y)
    check_grad(ft.math.reciprocal_no_nan, lambda a: 1 / a, x)


def test_no_nan_gradients_at_zero():
    """TF's gradients at the guarded points: finite (0) where the plain formula gives inf/NaN."""
    x, y = ft.Variable([0.0, 2.0], dtype=ft.float64), ft.Variable([0.0, 0.0], dtype=ft.float64)
    for f, want_x, want_y in [
        (ft.math.divide_no_nan, [0.0, 0.0], [0.0, 0.0]),
        (ft.math.xlogy, [0.0, -np.inf], [0.0, np.inf]),
        (ft.math.xdivy, [0.0, np.inf], [0.0, -np.inf]),
        (ft.math.multiply_no_nan, [0.0, 0.0], [0.0, 2.0]),
    ]:
        with ft.GradientTape() as tape:
            out = ft.reduce_sum(f(x, y))
        gx, gy = tape.gradient(out, [x, y])
        np.testing.assert_array_equal(gx.numpy()[0], want_x[0])
        np.testing.assert_array_equal(gy.numpy()[0], want_y[0])
    np.testing.assert_array_equal(gy.numpy(), [0.0, 2.0])  # multiply_no_nan: d/dy = x, as TF


def test_scalar_mul_count_nonzero_norm_polyval():
    x = RNG.normal(size=(3, 4))
    check_grad(lambda s, a: ft.math.scalar_mul(s, a), lambda s, a: s * a, np.float64(1.5), x)
    with pytest.raises(ValueError):
        ft.math.scalar_mul([1.0, 2.0], x)
    nz = ft.math.count_nonzero(np.array([[0, 1], [2, 0]]), axis=0, keepdims=True)
    assert nz.dtype == ft.int64
    np.testing.assert_array_equal(nz.numpy(), [[1, 1]])
    assert ft.math.count_nonzero(np.array([True, False, True])).numpy() == 2
    check_grad(
        lambda a: ft.math.reduce_euclidean_norm(a, axis=1), lambda a: np.sqrt((a**2).sum(1)), x
    )
    as_int = ft.math.reduce_euclidean_norm(np.array([[3, 4], [1, 1]], np.int32), axis=1)
    assert as_int.dtype == ft.int32
    np.testing.assert_array_equal(as_int.numpy(), [5, 1])
    coeffs = [np.float64(2.0), np.float64(-1.0), np.float64(0.5)]
    check_grad(
        lambda a, b, c, t: ft.math.polyval([a, b, c], t),
        lambda a, b, c, t: np.polyval([a, b, c], t),
        *coeffs,
        x,
    )
    np.testing.assert_array_equal(ft.math.polyval([], ft.constant([1.0, 2.0])).numpy(), [0.0, 0.0])
    with pytest.raises(ValueError):
        ft.math.polyval(3.0, x)
    np.testing.assert_array_equal(ft.math.accumulate_n([x, 2 * x]).numpy(), 3 * x)


def test_monotonicity():
    assert ft.math.is_non_decreasing([1, 2, 2]).numpy()
    assert not ft.math.is_strictly_increasing([[1, 2], [3, 3]]).numpy()
    assert ft.math.is_strictly_increasing([[1, 2], [3, 4]]).numpy()
    assert not ft.math.is_non_decreasing([1.0, 0.5]).numpy()
    assert ft.math.is_strictly_increasing([5]).numpy()
    with pytest.raises(TypeError):
        ft.math.is_non_decreasing([True, False])


# ----------------------------------------------------------------------------- ft.math: scans


def np_scan(ufunc, x, axis, exclusive, reverse, identity):
    x = np.flip(x, axis) if reverse else x
    out = ufunc.accumulate(x, axis=axis)
    if exclusive:
        first = np.full_like(np.take(x, [0], axis=axis), identity)
        out = np.concatenate([first, np.delete(out, -1, axis=axis)], axis=axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_scans(axis, exclusive, reverse):
    x = RNG.normal(size=(3, 4))
    kw = {"axis": axis, "exclusive": exclusive, "reverse": reverse}
    check_grad(
        lambda a: ft.math.cumsum(a, **kw),
        lambda a: np_scan(np.add, a, axis, exclusive, reverse, 0.0),
        x,
    )
    check_grad(
        lambda a: ft.math.cumprod(a, **kw),
        lambda a: np_scan(np.multiply, a, axis, exclusive, reverse, 1.0),
        x,
    )
    check_grad(
        lambda a: ft.math.cumulative_logsumexp(a, **kw),
        lambda a: np_scan(np.logaddexp, a, axis, exclusive, reverse, -np.inf),
        x,
    )


def test_scans_keep_int_dtype_and_refuse_scalars():
    s = ft.math.cumsum(ft.constant([1, 2, 3]), exclusive=True)
    assert s.dtype == ft.int32
    np.testing.assert_array_equal(s.numpy(), [0, 1, 3])
    with pytest.raises(InvalidArgumentError):
        ft.math.cumsum(ft.constant(1.0))
    with pytest.raises(InvalidArgumentError):
        ft.math.cumprod(ft.constant([1.0]), axis=1)


# ----------------------------------------------------------------------------- ft.math: segments


def np_segments(reduce, data, ids, n, empty):
    out = np.full((n, *data.shape[ids.ndim :]), empty, data.dtype)
    flat_ids, rows = ids.reshape(-1), data.reshape(-1, *data.shape[ids.ndim :])
    for s in range(n):
        members = rows[flat_ids == s]
        if len(members):
            out[s] = reduce(members, axis=0)
    return out


SORTED = np.array([0, 0, 2, 2, 2, 4])
UNSORTED = np.array([3, -1, 0, 3, 1, 0])


def np_mean(a, axis):
    return a.mean(axis)


def np_sqrt_n(a, axis):
    return a.sum(axis) / np.sqrt(len(a))


@pytest.mark.parametrize(
    ("name", "reduce", "empty_sorted", "empty_unsorted"),
    [
        ("sum", np.sum, 0.0, 0.0),
        ("mean", np_mean, 0.0, 0.0),
        ("max", np.max, 0.0, np.finfo(np.float64).min),
        ("min", np.min, 0.0, np.finfo(np.float64).max),
        ("prod", np.prod, 1.0, 1.0),
    ],
)
def test_segment_reductions(name, reduce, empty_sorted, empty_unsorted):
    data = RNG.normal(size=(6, 2))
    check_grad(
        lambda d: getattr(ft.math, "segment_" + name)(d, SORTED),
        lambda d: np_segments(reduce, d, SORTED, 5, empty_sorted),
        data,
    )
    check_grad(
        lambda d: getattr(ft.math, "unsorted_segment_" + name)(d, UNSORTED, 5),
        lambda d: np_segments(reduce, d, UNSORTED, 5, empty_unsorted),
        data,
    )


def test_unsorted_segment_sqrt_n_and_2d_ids():
    data = RNG.normal(size=(6, 2))
    check_grad(
        lambda d: ft.math.unsorted_segment_sqrt_n(d, UNSORTED, 5),
        lambda d: np_segments(np_sqrt_n, d, UNSORTED, 5, 0.0),
        data,
    )
    ids = np.array([[0, 1], [1, 2], [0, 0]])
    data = RNG.normal(size=(3, 2, 4))
    check_grad(
        lambda d: ft.math.unsorted_segment_sum(d, ids, 3),
        lambda d: np_segments(np.sum, d, ids, 3, 0.0),
        data,
    )
    ints = ft.math.unsorted_segment_max(np.arange(6, dtype=np.int32), UNSORTED, 5)
    assert ints.dtype == ft.int32
    np.testing.assert_array_equal(
        ints.numpy(), [5, 4, np.iinfo(np.int32).min, 3, np.iinfo(np.int32).min]
    )


def test_segment_max_splits_ties():
    d = ft.Variable([1.0, 3.0, 3.0], dtype=ft.float64)
    with ft.GradientTape() as tape:
        out = ft.reduce_sum(ft.math.segment_max(d, [0, 0, 0]))
    np.testing.assert_array_equal(tape.gradient(out, d).numpy(), [0.0, 0.5, 0.5])


@pytest.mark.parametrize(
    "call",
    [
        lambda: ft.math.unsorted_segment_sum([1.0, 2.0, 3.0], [0, 5, 1], 3),
        lambda: ft.math.unsorted_segment_sum([1.0, 2.0, 3.0], [0, 0], 3),
        lambda: ft.math.segment_sum([1.0, 2.0, 3.0], [1, 0, 2]),
        lambda: ft.math.segment_sum([1.0, 2.0, 3.0], [-1, 0, 2]),
        lambda: ft.math.segment_max([1.0, 2.0, 3.0], [0.0, 1.0, 2.0]),
        lambda: ft.math.is_inf(ft.constant([1])),
        lambda: ft.math.cumulative_logsumexp(ft.constant([1, 2])),
    ],
)
def test_math_bad_input(call):
    with pytest.raises(InvalidArgumentError):
        call()


def test_top_level_aliases():
    assert ft.cumsum is ft.math.cumsum
    assert ft.scalar_mul is ft.math.scalar_mul
    assert ft.realdiv is ft.math.realdiv


# ----------------------------------------------------------------------------- ft.linalg: solves


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_triangular_solve(lower, adjoint):
    m = RNG.normal(size=(2, 3, 3)) + 3.0 * np.eye(3)
    rhs = RNG.normal(size=(2, 3, 2))

    def ref(a, b):
        t = np.tril(a) if lower else np.triu(a)
        return np.linalg.solve(np.swapaxes(t, -1, -2) if adjoint else t, b)

    check_grad(
        lambda a, b: ft.linalg.triangular_solve(a, b, lower=lower, adjoint=adjoint), ref, m, rhs
    )


def test_cholesky_solve():
    a = RNG.normal(size=(3, 3))
    chol = np.linalg.cholesky(a @ a.T + np.eye(3))
    rhs = RNG.normal(size=(3, 2))
    check_grad(
        ft.linalg.cholesky_solve,
        lambda c, b: np.linalg.solve(np.tril(c) @ np.tril(c).T, b),
        chol,
        rhs,
    )


def np_tridiagonal(d):
    """The dense matrix of compact diagonals ``[3, M]``."""
    m = d.shape[-1]
    return np.diag(d[1]) + np.diag(d[0, : m - 1], 1) + np.diag(d[2, 1:], -1)


def test_tridiagonal_matmul_and_solve():
    d = RNG.normal(size=(3, 4)) + np.array([0.0, 4.0, 0.0])[:, None]
    rhs = RNG.normal(size=(4, 2))
    check_grad(ft.linalg.tridiagonal_matmul, lambda a, b: np_tridiagonal(a) @ b, d, rhs)
    check_grad(
        ft.linalg.tridiagonal_solve, lambda a, b: np.linalg.solve(np_tridiagonal(a), b), d, rhs
    )
    dense = np_tridiagonal(d)
    np.testing.assert_allclose(
        ft.linalg.tridiagonal_matmul(list(d), rhs, diagonals_format="sequence").numpy(), dense @ rhs
    )
    np.testing.assert_allclose(
        ft.linalg.tridiagonal_matmul(dense, rhs, diagonals_format="matrix").numpy(), dense @ rhs
    )
    np.testing.assert_allclose(
        ft.linalg.tridiagonal_solve(d, rhs[:, 0]).numpy(), np.linalg.solve(dense, rhs[:, 0])
    )
    np.testing.assert_allclose(
        ft.linalg.tridiagonal_solve(d, rhs.T, transpose_rhs=True).numpy(),
        np.linalg.solve(dense, rhs),
    )
    with pytest.raises(ValueError):
        ft.linalg.tridiagonal_matmul(d, rhs, diagonals_format="banded")
    with pytest.raises(ValueError):
        ft.linalg.tridiagonal_matmul(d[:2], rhs)


# ----------------------------------------------------------------------------- ft.math: counting


def test_bincount():
    arr = np.array([1, 1, 3, 0])
    np.testing.assert_array_equal(ft.math.bincount(arr).numpy(), np.bincount(arr))
    np.testing.assert_array_equal(
        ft.math.bincount(arr, minlength=6).numpy(), np.bincount(arr, minlength=6)
    )
    np.testing.assert_array_equal(ft.math.bincount(arr, maxlength=2).numpy(), [1, 2])
    np.testing.assert_array_equal(ft.math.bincount(arr, binary_output=True).numpy(), [1, 1, 0, 1])
    w = np.array([0.5, 1.0, 2.0, 4.0])
    check_grad(lambda v: ft.math.bincount(arr, weights=v), lambda v: np.bincount(arr, weights=v), w)
    rows = ft.math.bincount([[1, 2], [0, 0]], axis=-1, minlength=4)
    np.testing.assert_array_equal(rows.numpy(), [[0, 1, 1, 0], [2, 0, 0, 0]])
    assert ft.math.bincount(np.zeros(0, np.int32)).shape == [0]
    with pytest.raises(InvalidArgumentError):
        ft.math.bincount([1, -1, 3])


def test_confusion_matrix_and_invert_permutation():
    cm = ft.math.confusion_matrix([0, 1, 2, 1], [1, 1, 0, 2])
    assert cm.dtype == ft.int32
    np.testing.assert_array_equal(cm.numpy(), [[0, 1, 0], [0, 1, 1], [1, 0, 0]])
    weighted = ft.math.confusion_matrix(
        [0, 1], [1, 1], num_classes=3, weights=[2.5, 3.0], dtype=ft.float32
    )
    np.testing.assert_array_equal(weighted.numpy(), [[0, 2.5, 0], [0, 3, 0], [0, 0, 0]])
    with pytest.raises(InvalidArgumentError):
        ft.math.confusion_matrix([0, -1], [1, 1])
    with pytest.raises(InvalidArgumentError):
        ft.math.confusion_matrix([0, 4], [1, 3], num_classes=4)
    np.testing.assert_array_equal(ft.math.invert_permutation([3, 0, 2, 1]).numpy(), [1, 3, 2, 0])
    with pytest.raises(InvalidArgumentError):
        ft.math.invert_permutation([2, 0, 0])


def test_real_input_complex_accessors_and_rint():
    x = np.array([1.0, -2.0, 0.0, 2.5, -0.5])
    np.testing.assert_array_equal(ft.math.real(x).numpy(), x)
    np.testing.assert_array_equal(ft.math.conj(x).numpy(), x)
    np.testing.assert_array_equal(ft.math.imag(x).numpy(), np.zeros(5))
    np.testing.assert_array_equal(ft.math.angle(x).numpy(), np.angle(x))
    np.testing.assert_array_equal(ft.math.rint(x).numpy(), np.rint(x))
    with pytest.raises(InvalidArgumentError):
        ft.math.rint(ft.constant([1, 2]))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("l2", [0.0, 0.5])
def test_lstsq(shape, l2):
    a = RNG.normal(size=shape)
    b = RNG.normal(size=(*shape[:-1], 2))

    def ref(a, b):
        # The ridge solution, from the stacked system [A; sqrt(l2) I] x = [b; 0].
        n = a.shape[-1]
        out = []
        for a_i, b_i in zip(
            a.reshape(-1, *a.shape[-2:]), b.reshape(-1, *b.shape[-2:]), strict=True
        ):
            if a_i.shape[0] >= n or l2:
                stacked = np.concatenate([a_i, np.sqrt(l2) * np.eye(n)])
                rhs = np.concatenate([b_i, np.zeros((n, b_i.shape[1]))])
                out.append(np.linalg.lstsq(stacked, rhs, rcond=None)[0])
            else:
                out.append(np.linalg.lstsq(a_i, b_i, rcond=None)[0])  # minimum norm
        return np.reshape(out, (*a.shape[:-2], n, b.shape[-1]))

    check_grad(lambda x, y: ft.linalg.lstsq(x, y, l2_regularizer=l2), ref, a, b, tol=1e-5)


def test_lstsq_slow_path_is_refused():
    with pytest.raises(NotImplementedError):
        ft.linalg.lstsq(np.eye(2), np.ones((2, 1)), fast=False)


def np_expm(a):
    """exp(a) by a long Taylor series of a / 2^12, squared back: slow but plainly right."""
    scaled = a / 2.0**12
    term, total = np.broadcast_to(np.eye(a.shape[-1]), a.shape).copy(), 0.0
    for k in range(1, 30):
        total = total + term
        term = term @ scaled / k
    for _ in range(12):
        total = total @ total
    return total


@pytest.mark.parametrize("scale", [0.1, 1.0, 6.0])
def test_expm(scale):
    a = RNG.normal(size=(2, 3, 3)) * scale
    np.testing.assert_allclose(ft.linalg.expm(a).numpy(), np_expm(a), rtol=1e-9)
    check_grad(ft.linalg.expm, np_expm, a, tol=1e-5 * max(1.0, scale**2))
    with pytest.raises(InvalidArgumentError):
        ft.linalg.expm(np.ones((2, 3)))


# ----------------------------------------------------------------------------- ft.linalg: factors


def test_cholesky():
    m = RNG.normal(size=(2, 4, 4))
    spd = m @ np.swapaxes(m, -1, -2) + np.eye(4)
    np.testing.assert_allclose(ft.linalg.cholesky(spd).numpy(), np.linalg.cholesky(spd), rtol=1e-12)

    # TF's gradient is symmetric: that of the factor of the matrix's symmetric part.
    def ref(a):
        return np.linalg.cholesky((a + np.swapaxes(a, -1, -2)) / 2)

    check_grad(ft.linalg.cholesky, ref, spd, tol=1e-5)
    # The value reads only the lower triangle, as TF's does.
    skewed = spd + np.triu(np.ones((4, 4)), 1)
    np.testing.assert_allclose(
        ft.linalg.cholesky(skewed).numpy(), np.linalg.cholesky(spd), rtol=1e-12
    )
    with pytest.raises(InvalidArgumentError):
        ft.linalg.cholesky(-np.eye(2))
    with pytest.raises(InvalidArgumentError):
        ft.linalg.cholesky(np.ones((2, 3)))


def np_lu(a):
    """Doolittle LU with partial pivoting (the first largest pivot), packed as TF's lu."""
    a = a.copy()
    n = a.shape[0]
    perm = np.arange(n)
    for k in range(n - 1):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        a[[k, p]], perm[[k, p]] = a[[p, k]], perm[[p, k]]
        a[k + 1 :, k] /= a[k, k]
        a[k + 1 :, k + 1 :] -= np.outer(a[k + 1 :, k], a[k, k + 1 :])
    return a, perm


def test_lu_family():
    m = RNG.normal(size=(2, 4, 4))
    lower_upper, perm = ft.linalg.lu(m)
    assert perm.dtype == ft.int32
    for i in range(2):
        want, want_perm = np_lu(m[i])
        np.testing.assert_allclose(lower_upper.numpy()[i], want, rtol=1e-12)
        np.testing.assert_array_equal(perm.numpy()[i], want_perm)
    check_grad(
        lambda a: ft.linalg.lu(a)[0], lambda a: np.stack([np_lu(x)[0] for x in a]), m, tol=1e-5
    )
    rhs = RNG.normal(size=(2, 4, 3))
    check_grad(
        lambda a, b: ft.linalg.lu_solve(*ft.linalg.lu(a), b),
        lambda a, b: np.linalg.solve(a, b),
        m,
        rhs,
        tol=1e-5,
    )
    np.testing.assert_allclose(
        ft.linalg.lu_matrix_inverse(lower_upper, perm).numpy(), np.linalg.inv(m), rtol=1e-10
    )
    np.testing.assert_allclose(ft.linalg.lu_reconstruct(lower_upper, perm).numpy(), m, rtol=1e-12)
    assert ft.linalg.lu(m[0], output_idx_type=ft.int64)[1].dtype == ft.int64


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("full", [False, True])
def test_qr(shape, full):
    a = RNG.normal(size=shape)
    mode = "complete" if full else "reduced"
    q, r = ft.linalg.qr(a, full_matrices=full)
    want_q, want_r = np.linalg.qr(a, mode=mode)  # LAPACK's Householder signs, as TF
    np.testing.assert_allclose(q.numpy(), want_q, atol=1e-12)
    np.testing.assert_allclose(r.numpy(), want_r, atol=1e-12)
    # Gradients are checked on the reduced factors, which (with LAPACK's sign rule) are smooth
    # functions of a full-rank input.
    check_grad(lambda x: ft.linalg.qr(x)[0], lambda x: np.linalg.qr(x)[0], a, tol=1e-5)
    check_grad(lambda x: ft.linalg.qr(x)[1], lambda x: np.linalg.qr(x)[1], a, tol=1e-5)


def test_qr_leaves_zero_columns_alone():
    a = np.array([[-1.0, 2.0], [0.0, 3.0], [0.0, 1.0]])
    q, r = ft.linalg.qr(a)
    want_q, want_r = np.linalg.qr(a)
    np.testing.assert_allclose(q.numpy(), want_q, atol=1e-12)
    np.testing.assert_allclose(r.numpy(), want_r, atol=1e-12)


def test_sqrtm():
    m = RNG.normal(size=(2, 3, 3))
    spd = m @ np.swapaxes(m, -1, -2) + np.eye(3)
    root = ft.linalg.sqrtm(spd).numpy()
    w, v = np.linalg.eigh(spd)
    np.testing.assert_allclose(
        root, v @ (np.sqrt(w)[..., None] * np.swapaxes(v, -1, -2)), rtol=1e-10
    )
    general = RNG.normal(size=(3, 3)) + 3.0 * np.eye(3)
    np.testing.assert_allclose(
        ft.linalg.sqrtm(general).numpy() @ ft.linalg.sqrtm(general).numpy(), general
    )

    def ref(a):  # the principal root of a symmetric positive-definite matrix
        w, v = np.linalg.eigh(a)
        return v @ (np.sqrt(w)[..., None] * np.swapaxes(v, -1, -2))

    # Symmetric perturbations keep the eigh reference valid: differentiate through (a + a^T) / 2.
    check_grad(
        lambda a: ft.linalg.sqrtm((a + ft.linalg.matrix_transpose(a)) * 0.5),
        lambda a: ref((a + a.T) / 2),
        spd[0],
        tol=1e-5,
    )
    assert ft.matrix_square_root is ft.linalg.sqrtm
    with pytest.raises(InvalidArgumentError):
        ft.linalg.sqrtm(-np.eye(2))


def test_nextafter():
    x1 = np.array([1.0, 0.0, -1.0])
    x2 = np.array([2.0, -1.0, -1.0])
    out = ft.math.nextafter(x1, x2)
    assert out.dtype == ft.float64
    np.testing.assert_array_equal(out.numpy(), np.nextafter(x1, x2))
    f32 = ft.math.nextafter(ft.constant([1.0]), ft.constant([0.0]))
    np.testing.assert_array_equal(f32.numpy(), np.nextafter(np.float32(1.0), np.float32(0.0)))
    with pytest.raises(InvalidArgumentError):
        ft.math.nextafter(ft.constant([1]), ft.constant([2]))


def test_eigvalsh():
    m = RNG.normal(size=(2, 4, 4))
    sym = m + np.swapaxes(m, -1, -2)
    np.testing.assert_allclose(ft.linalg.eigvalsh(sym).numpy(), np.linalg.eigvalsh(sym), atol=1e-12)
    # Only the lower triangle is read (NumPy's default UPLO="L" too).
    np.testing.assert_allclose(ft.linalg.eigvalsh(m).numpy(), np.linalg.eigvalsh(m), atol=1e-12)
    np.testing.assert_allclose(
        ft.linalg.eigvalsh(np.ones((3, 3))).numpy(), [0.0, 0.0, 3.0], atol=1e-12
    )
    check_grad(ft.linalg.eigvalsh, np.linalg.eigvalsh, m[0], tol=1e-5)
    with pytest.raises(InvalidArgumentError):
        ft.linalg.eigvalsh(np.ones((2, 3)))


def test_atan2():
    y = np.array([1.0, 1.0, -1.0, 0.0, -0.0, 0.0, 0.0, -2.0, 3.0])
    x = np.array([1.0, -1.0, 0.0, -1.0, -1.0, 0.0, 2.0, -0.5, 0.0])
    np.testing.assert_allclose(ft.math.atan2(y, x).numpy(), np.arctan2(y, x), rtol=1e-15)
    assert np.signbit(ft.math.atan2(y, x).numpy()[4])  # atan2(-0, -1) = -pi
    assert ft.atan2 is ft.math.atan2
    yy, xx = RNG.normal(size=(2, 3)), RNG.normal(size=(3,))
    check_grad(ft.math.atan2, np.arctan2, yy, xx)
    with pytest.raises(InvalidArgumentError):
        ft.math.atan2(ft.constant([1]), ft.constant([1]))


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_banded_triangular_solve(lower, adjoint):
    k, m = 3, 4
    bands = RNG.normal(size=(k, m)) + 3.0 * (np.arange(k) == (0 if lower else k - 1))[:, None]
    rhs = RNG.normal(size=(m, 2))

    def ref(b, r):
        a = np.zeros((m, m))
        for i in range(k):
            for j in range(m - i):
                if lower:
                    a[j + i, j] = b[i, j + i]  # right-aligned subdiagonal i
                else:
                    a[j, j + i] = b[k - 1 - i, j]  # left-aligned superdiagonal i
        return np.linalg.solve(a.T if adjoint else a, r)

    check_grad(
        lambda b, r: ft.linalg.banded_triangular_solve(b, r, lower=lower, adjoint=adjoint),
        ref,
        bands,
        rhs,
    )


def test_eigh_tridiagonal():
    alpha, beta = RNG.normal(size=5), RNG.normal(size=4)

    def ref(a, b):
        return np.linalg.eigvalsh(np.diag(a) + np.diag(b, 1) + np.diag(b, -1))

    check_grad(ft.linalg.eigh_tridiagonal, ref, alpha, beta, tol=1e-5)
    with pytest.raises(NotImplementedError):
        ft.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False)
    with pytest.raises(InvalidArgumentError):
        ft.linalg.eigh_tridiagonal(alpha, beta[:2])
