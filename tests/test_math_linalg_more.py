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
    w = RNG.normal(size=np.shape(ref(*xs)))
    vs = [ft.Variable(x) for x in xs]
    with ft.GradientTape() as tape:
        out = f(*vs)
        loss = ft.reduce_sum(out * ft.constant(w))
    np.testing.assert_allclose(out.numpy(), ref(*xs), rtol=1e-10, atol=1e-12)
    grads = tape.gradient(loss, vs)
    for i, (x, g) in enumerate(zip(xs, grads, strict=True)):
        numeric = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            hi, lo = [a.copy() for a in xs], [a.copy() for a in xs]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            numeric[idx] = (np.sum(ref(*hi) * w) - np.sum(ref(*lo) * w)) / (2 * eps)
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
