"""The tf.linalg.LinearOperator family: every operator's methods against its dense numpy
matrix (products and solves with every adjoint flag, determinants, diagonal, trace, derived
operators), float64 finite-difference gradients through the operators' parameters, the hints'
rules and errors. Runs without TensorFlow; tests/test_linalg_tf.py compares with TensorFlow.
"""

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.errors import InvalidArgumentError

L = ft.linalg
RNG = np.random.default_rng(8)


def rand(*shape):
    return RNG.standard_normal(shape)


def spd(n, batch=()):
    a = rand(*batch, n, n)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def well(n, batch=()):
    return rand(*batch, n, n) + 3.0 * np.eye(n)


def tril(n, batch=()):
    return np.tril(rand(*batch, n, n)) + 3.0 * np.eye(n)


def tridiag_dense(diagonals):
    upper, diagonal, lower = diagonals[..., 0, :], diagonals[..., 1, :], diagonals[..., 2, :]
    n = diagonal.shape[-1]
    dense = np.zeros(diagonals.shape[:-2] + (n, n))
    idx = np.arange(n)
    dense[..., idx, idx] = diagonal
    dense[..., idx[:-1], idx[1:]] = upper[..., :-1]
    dense[..., idx[1:], idx[:-1]] = lower[..., 1:]
    return dense


def toeplitz_dense(col, row):
    n = col.shape[-1]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    return np.where(i >= j, col[..., np.abs(i - j)], row[..., np.abs(j - i)])


def block_diag_dense(*blocks):
    rows = sum(b.shape[-2] for b in blocks)
    cols = sum(b.shape[-1] for b in blocks)
    out = np.zeros((rows, cols))
    r = c = 0
    for b in blocks:
        out[r : r + b.shape[-2], c : c + b.shape[-1]] = b
        r, c = r + b.shape[-2], c + b.shape[-1]
    return out


# Each case: a name and a builder returning (operator, its dense float64 matrix). The
# parameters are drawn once so that the dense reference is that of the same numbers.
A3, S3, T3, W2, W3 = well(3), spd(3), tril(3), well(2), well(3)
D3 = np.array([1.5, -2.0, 3.0])
U3, DU, V3 = rand(3, 2), np.array([2.0, 3.0]), rand(3, 2)
TRI = np.stack([rand(4), rand(4) + 4.0, rand(4)])
COL, ROW = np.array([4.0, 1.0, 0.5]), np.array([4.0, -1.0, 0.3])
AXIS = rand(3)
PERM = np.array([2, 0, 3, 1])
BATCH_A = well(3, (2,))


def perm_dense(perm):
    return (np.arange(len(perm)) == perm[:, None]).astype(float)


CASES = {
    "full_matrix": lambda: (L.LinearOperatorFullMatrix(A3), A3),
    "full_matrix_spd": lambda: (
        L.LinearOperatorFullMatrix(S3, is_self_adjoint=True, is_positive_definite=True),
        S3,
    ),
    "full_matrix_batched": lambda: (L.LinearOperatorFullMatrix(BATCH_A), BATCH_A),
    "diag": lambda: (L.LinearOperatorDiag(D3), np.diag(D3)),
    "identity": lambda: (L.LinearOperatorIdentity(3, dtype=ft.float64), np.eye(3)),
    "identity_batched": lambda: (
        L.LinearOperatorIdentity(3, batch_shape=[2], dtype=ft.float64),
        np.broadcast_to(np.eye(3), (2, 3, 3)),
    ),
    "scaled_identity": lambda: (
        L.LinearOperatorScaledIdentity(3, np.array([2.0, -0.5])),
        np.array([2.0, -0.5])[:, None, None] * np.eye(3),
    ),
    "lower_triangular": lambda: (L.LinearOperatorLowerTriangular(T3 + np.triu(rand(3, 3), 1)), T3),
    "composition": lambda: (
        L.LinearOperatorComposition([L.LinearOperatorFullMatrix(A3), L.LinearOperatorDiag(D3)]),
        A3 @ np.diag(D3),
    ),
    "adjoint": lambda: (L.LinearOperatorAdjoint(L.LinearOperatorFullMatrix(A3)), A3.T),
    "inversion": lambda: (
        L.LinearOperatorInversion(L.LinearOperatorFullMatrix(A3)),
        np.linalg.inv(A3),
    ),
    "block_diag": lambda: (
        L.LinearOperatorBlockDiag([L.LinearOperatorFullMatrix(W2), L.LinearOperatorDiag(D3)]),
        block_diag_dense(W2, np.diag(D3)),
    ),
    "kronecker": lambda: (
        L.LinearOperatorKronecker([L.LinearOperatorFullMatrix(W2), L.LinearOperatorFullMatrix(W3)]),
        np.kron(W2, W3),
    ),
    "low_rank_update": lambda: (
        L.LinearOperatorLowRankUpdate(L.LinearOperatorFullMatrix(A3), U3, DU, V3),
        A3 + U3 @ np.diag(DU) @ V3.T,
    ),
    "low_rank_update_spd": lambda: (
        L.LinearOperatorLowRankUpdate(
            L.LinearOperatorDiag(np.abs(D3), is_positive_definite=True), U3
        ),
        np.diag(np.abs(D3)) + U3 @ U3.T,
    ),
    "zeros": lambda: (L.LinearOperatorZeros(3, dtype=ft.float64), np.zeros((3, 3))),
    "toeplitz": lambda: (L.LinearOperatorToeplitz(COL, ROW), toeplitz_dense(COL, ROW)),
    "tridiag": lambda: (L.LinearOperatorTridiag(TRI), tridiag_dense(TRI)),
    "tridiag_matrix": lambda: (
        L.LinearOperatorTridiag(tridiag_dense(TRI), "matrix"),
        tridiag_dense(TRI),
    ),
    "tridiag_sequence": lambda: (
        L.LinearOperatorTridiag(list(TRI), "sequence"),
        tridiag_dense(TRI),
    ),
    "permutation": lambda: (L.LinearOperatorPermutation(PERM, dtype=ft.float64), perm_dense(PERM)),
    "householder": lambda: (
        L.LinearOperatorHouseholder(AXIS),
        np.eye(3) - 2.0 * np.outer(AXIS, AXIS) / AXIS.dot(AXIS),
    ),
    "block_lower_triangular": lambda: (
        L.LinearOperatorBlockLowerTriangular(
            [
                [L.LinearOperatorFullMatrix(W2)],
                [L.LinearOperatorFullMatrix(U3), L.LinearOperatorLowerTriangular(T3)],
            ]
        ),
        np.block([[W2, np.zeros((2, 3))], [U3, T3]]),
    ),
}
SINGULAR = {"zeros"}


@pytest.fixture(params=sorted(CASES))
def case(request):
    operator, dense = CASES[request.param]()
    return request.param, operator, np.asarray(dense, dtype=np.float64)


def close(got, want, tol=1e-9):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def test_dense_shape_and_dtype(case):
    _, op, dense = case
    assert op.shape.as_list() == list(dense.shape)
    assert op.batch_shape.as_list() == list(dense.shape[:-2])
    assert (op.range_dimension, op.domain_dimension) == dense.shape[-2:]
    assert op.tensor_rank == dense.ndim
    np.testing.assert_array_equal(op.shape_tensor().numpy(), dense.shape)
    assert op.dtype == ft.float64
    close(op.to_dense().numpy(), dense)


@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("adjoint_arg", [False, True])
def test_matmul_and_matvec(case, adjoint, adjoint_arg):
    _, op, dense = case
    a = np.swapaxes(dense, -1, -2) if adjoint else dense
    x = rand(a.shape[-1], 2)
    arg = x.T if adjoint_arg else x
    close(op.matmul(arg, adjoint=adjoint, adjoint_arg=adjoint_arg).numpy(), a @ x)
    vec = rand(a.shape[-1])
    close(op.matvec(vec, adjoint=adjoint).numpy(), a @ vec)
    if not adjoint and not adjoint_arg:
        close((op @ x).numpy(), a @ x)


@pytest.mark.parametrize("adjoint", [False, True])
def test_solve_and_solvevec(case, adjoint):
    name, op, dense = case
    if name in SINGULAR:
        with pytest.raises(NotImplementedError, match="singular"):
            op.solve(rand(3, 1))
        return
    a = np.swapaxes(dense, -1, -2) if adjoint else dense
    rhs = rand(*dense.shape[:-2], a.shape[-1], 2)
    close(op.solve(rhs, adjoint=adjoint).numpy(), np.linalg.solve(a, rhs), 1e-8)
    close(
        op.solve(np.swapaxes(rhs, -1, -2), adjoint=adjoint, adjoint_arg=True).numpy(),
        np.linalg.solve(a, rhs),
        1e-8,
    )
    vec = rand(a.shape[-1])
    close(
        op.solvevec(vec, adjoint=adjoint).numpy(), np.linalg.solve(a, vec[..., None])[..., 0], 1e-8
    )


def test_determinants_diagonal_and_trace(case):
    _, op, dense = case
    close(op.determinant().numpy(), np.linalg.det(dense), 1e-8)
    with np.errstate(divide="ignore"):
        close(op.log_abs_determinant().numpy(), np.linalg.slogdet(dense)[1], 1e-8)
    close(op.diag_part().numpy(), np.diagonal(dense, axis1=-2, axis2=-1))
    close(op.trace().numpy(), np.trace(dense, axis1=-2, axis2=-1))
    x = rand(*dense.shape)
    close(op.add_to_tensor(x).numpy(), dense + x)


def test_derived_operators(case):
    name, op, dense = case
    close(op.adjoint().to_dense().numpy(), np.swapaxes(dense, -1, -2))
    close(op.H.to_dense().numpy(), np.swapaxes(dense, -1, -2))
    if name in SINGULAR:
        with pytest.raises(ValueError, match="singular"):
            op.inverse()
    else:
        close(op.inverse().to_dense().numpy(), np.linalg.inv(dense), 1e-8)
    if op.is_self_adjoint:
        close(
            op.eigvals().numpy(),
            np.sort(np.linalg.eigvalsh(dense), -1) if name != "diag" else np.diag(dense),
        )
    else:
        with pytest.raises(NotImplementedError, match="self-adjoint"):
            op.eigvals()
    if name not in SINGULAR:
        s = np.linalg.svd(dense, compute_uv=False)
        close(op.cond().numpy(), s.max(-1) / s.min(-1), 1e-8)


def test_cholesky_of_positive_definite_operators():
    for op, dense in [CASES["full_matrix_spd"](), CASES["low_rank_update_spd"]()]:
        chol = op.cholesky()
        close(chol.to_dense().numpy(), np.linalg.cholesky(dense), 1e-9)
    diag = L.LinearOperatorDiag([4.0, 9.0], is_positive_definite=True).cholesky()
    assert isinstance(diag, L.LinearOperatorDiag)
    close(diag.diag.numpy(), [2.0, 3.0])
    with pytest.raises(ValueError, match="Cholesky"):
        L.LinearOperatorFullMatrix(A3).cholesky()


def test_operator_products_and_solves_keep_structure():
    d1, d2 = L.LinearOperatorDiag([1.0, 2.0]), L.LinearOperatorDiag([3.0, 4.0])
    product = d1 @ d2
    assert isinstance(product, L.LinearOperatorDiag)
    close(product.diag.numpy(), [3.0, 8.0])
    quotient = d1.solve(d2)
    assert isinstance(quotient, L.LinearOperatorDiag)
    close(quotient.diag.numpy(), [3.0, 2.0])
    identity = L.LinearOperatorIdentity(2)
    assert d1 @ identity is d1 and identity @ d1 is d1
    full = L.LinearOperatorFullMatrix(W2)
    composed = full.matmul(full, adjoint_arg=True)
    assert isinstance(composed, L.LinearOperatorComposition)
    close(composed.to_dense().numpy(), W2 @ W2.T)
    close(full.solve(full).to_dense().numpy(), np.eye(2), 1e-12)
    assert full.inverse().inverse() is full
    assert full.adjoint().adjoint() is full
    householder = L.LinearOperatorHouseholder(AXIS)
    assert householder.inverse() is householder and householder.adjoint() is householder
    inv = L.LinearOperatorScaledIdentity(2, 4.0).inverse()
    assert isinstance(inv, L.LinearOperatorScaledIdentity)
    assert float(inv.multiplier) == 0.25


def test_tridiag_matrix_format_reads_only_the_band():
    # As TensorFlow: to_dense gives the matrix as passed, products and solves its band only.
    full = tridiag_dense(TRI) + np.triu(np.ones((4, 4)), 2)
    op = L.LinearOperatorTridiag(full, "matrix")
    close(op.to_dense().numpy(), full)
    x = rand(4, 2)
    close(op.matmul(x).numpy(), tridiag_dense(TRI) @ x)
    close(op.solve(x).numpy(), np.linalg.solve(tridiag_dense(TRI), x))


def test_block_lower_triangular_inverse_stays_block_lower_triangular():
    op, dense = CASES["block_lower_triangular"]()
    inverse = op.inverse()
    assert isinstance(inverse, L.LinearOperatorBlockLowerTriangular)
    close(inverse.to_dense().numpy(), np.linalg.inv(dense), 1e-10)


def test_batch_broadcasting():
    op = L.LinearOperatorFullMatrix(BATCH_A)
    x = rand(3, 2)
    close(op.matmul(x).numpy(), BATCH_A @ x)
    close(op.solve(x).numpy(), np.linalg.solve(BATCH_A, np.broadcast_to(x, (2, 3, 2))))
    scaled = L.LinearOperatorScaledIdentity(3, np.array([2.0, 3.0]))
    composed = L.LinearOperatorComposition([scaled, L.LinearOperatorFullMatrix(A3)])
    assert composed.batch_shape.as_list() == [2]
    close(composed.determinant().numpy(), np.array([8.0, 27.0]) * np.linalg.det(A3), 1e-9)


# ----------------------------------------------------------------------------- gradients


def fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[idx] += eps
        lo[idx] -= eps
        g[idx] = (f(hi) - f(lo)) / (2 * eps)
    return g


RHS = rand(3, 2)
W_OUT = rand(3, 2)


def summary(op):
    """A scalar touching products, solves and the log-determinant."""
    y = op.matmul(RHS) + op.solve(RHS)
    return ft.reduce_sum(y * W_OUT) + op.log_abs_determinant() + ft.reduce_sum(op.diag_part())


GRADIENT_CASES = {
    "full_matrix": (lambda p: L.LinearOperatorFullMatrix(p), A3),
    "full_matrix_spd": (
        lambda p: L.LinearOperatorFullMatrix(p, is_self_adjoint=True, is_positive_definite=True),
        S3,
    ),
    "diag": (lambda p: L.LinearOperatorDiag(p), D3),
    "scaled_identity": (lambda p: L.LinearOperatorScaledIdentity(3, p), np.array(1.7)),
    "lower_triangular": (lambda p: L.LinearOperatorLowerTriangular(p), T3),
    "low_rank_update_u": (
        lambda p: L.LinearOperatorLowRankUpdate(L.LinearOperatorFullMatrix(A3), p, DU, V3),
        U3,
    ),
    "low_rank_update_spd": (
        lambda p: L.LinearOperatorLowRankUpdate(
            L.LinearOperatorDiag(np.abs(D3), is_positive_definite=True), p
        ),
        U3,
    ),
    "householder": (lambda p: L.LinearOperatorHouseholder(p), AXIS),
    "toeplitz": (lambda p: L.LinearOperatorToeplitz(p, ROW), COL),
    "tridiag": (lambda p: L.LinearOperatorTridiag(p), TRI[:, :3]),
    "kronecker": (
        lambda p: L.LinearOperatorKronecker(
            [L.LinearOperatorDiag(p), L.LinearOperatorFullMatrix(np.ones((1, 1)))]
        ),
        D3,
    ),
    "inversion": (lambda p: L.LinearOperatorInversion(L.LinearOperatorFullMatrix(p)), A3),
    "block_lower_triangular": (
        lambda p: L.LinearOperatorBlockLowerTriangular(
            [
                [L.LinearOperatorDiag(p[:1])],
                [
                    L.LinearOperatorFullMatrix(ft.expand_dims(p[1:3], -1)),
                    L.LinearOperatorDiag(p[3:]),
                ],
            ]
        ),
        np.array([2.0, 0.3, -0.7, 3.0, 1.5]),
    ),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_through_the_parameters(name):
    build, p0 = GRADIENT_CASES[name]

    def scalar(p):
        return summary(build(p))

    t = ft.constant(p0)
    with ft.GradientTape() as tape:
        tape.watch(t)
        y = scalar(t)
    got = tape.gradient(y, t).numpy()
    want = fd_grad(lambda v: float(scalar(ft.constant(v))), np.asarray(p0, dtype=float))
    if name == "full_matrix_spd":
        # A positive-definite operator solves through its Cholesky factor, whose gradient is
        # TF's symmetric one, not the entry-by-entry differences of the lower triangle it reads:
        # the two agree along symmetric directions.
        got, want = got + got.T, want + want.T
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_variables_are_read_when_the_operator_is_used():
    v = ft.Variable(D3)
    op = L.LinearOperatorDiag(v)
    assert op.trainable_variables == (v,)
    with ft.GradientTape() as tape:  # opened after the operator was built
        y = ft.reduce_sum(op.matvec(np.ones(3)))
    close(tape.gradient(y, v).numpy(), np.ones(3))
    v.assign(2.0 * D3)
    close(op.to_dense().numpy(), np.diag(2.0 * D3))


# ----------------------------------------------------------------------------- hints, errors


def test_hint_rules():
    op = L.LinearOperatorFullMatrix(S3, is_positive_definite=True)
    assert op.is_non_singular is True and op.is_square is True
    assert L.LinearOperatorDiag(D3).is_self_adjoint is True
    assert L.LinearOperatorIdentity(2).is_positive_definite is True
    assert L.LinearOperatorFullMatrix(rand(2, 3)).is_square is False
    assert L.LinearOperatorHouseholder(AXIS).is_positive_definite is False
    product = L.LinearOperatorComposition(
        [
            L.LinearOperatorDiag(D3, is_non_singular=True),
            L.LinearOperatorIdentity(3, dtype=ft.float64),
        ]
    )
    assert product.is_non_singular is True
    assert product.name == "LinearOperatorDiag_o_LinearOperatorIdentity"
    assert L.LinearOperatorAdjoint(op).name == "LinearOperatorFullMatrix_adjoint"
    assert L.LinearOperatorInversion(op).is_positive_definite is True


@pytest.mark.parametrize(
    "build, error, match",
    [
        (
            lambda: L.LinearOperatorFullMatrix(
                S3, is_positive_definite=True, is_non_singular=False
            ),
            ValueError,
            "positive definite matrix is always non-singular",
        ),
        (
            lambda: L.LinearOperatorFullMatrix(S3, is_self_adjoint=True, is_square=False),
            ValueError,
            "self-adjoint matrix is always square",
        ),
        (lambda: L.LinearOperatorFullMatrix(np.ones(3)), ValueError, "at least 2 dimensions"),
        (
            lambda: L.LinearOperatorDiag(D3, is_self_adjoint=False),
            ValueError,
            "always self adjoint",
        ),
        (lambda: L.LinearOperatorIdentity(3, is_non_singular=False), ValueError, "non-singular"),
        (lambda: L.LinearOperatorIdentity(-1), ValueError, "non-negative"),
        (lambda: L.LinearOperatorZeros(3, is_non_singular=True), ValueError, "always singular"),
        (lambda: L.LinearOperatorZeros(2, 3), ValueError, "is_square=True"),
        (lambda: L.LinearOperatorComposition([]), ValueError, "non-empty"),
        (
            lambda: (
                L.LinearOperatorComposition(
                    [L.LinearOperatorFullMatrix(A3), L.LinearOperatorFullMatrix(W2)]
                ).shape
            ),
            ValueError,
            "incompatible",
        ),
        (
            lambda: L.LinearOperatorComposition(
                [L.LinearOperatorFullMatrix(A3), L.LinearOperatorFullMatrix(A3.astype(np.float32))]
            ),
            TypeError,
            "same dtype",
        ),
        (
            lambda: L.LinearOperatorInversion(L.LinearOperatorZeros(3)),
            ValueError,
            "is_non_singular",
        ),
        (lambda: L.LinearOperatorPermutation([0, 0, 1]), ValueError, "unique integers"),
        (lambda: L.LinearOperatorPermutation([0.0, 1.0]), TypeError, "integer"),
        (
            lambda: L.LinearOperatorHouseholder(AXIS, is_positive_definite=True),
            ValueError,
            "non-positive definite",
        ),
        (lambda: L.LinearOperatorToeplitz(COL, ROW[:2]), ValueError, "mismatched"),
        (
            lambda: L.LinearOperatorTridiag(TRI, "banded"),
            ValueError,
            "compact, matrix, or sequence",
        ),
        (
            lambda: L.LinearOperatorBlockLowerTriangular([[L.LinearOperatorFullMatrix(W2)], []]),
            ValueError,
            "must contain `2` blocks",
        ),
        (
            lambda: L.LinearOperatorLowRankUpdate(L.LinearOperatorFullMatrix(A3), rand(2, 1)),
            ValueError,
            "N = 3",
        ),
        (lambda: L.LinearOperatorFullMatrix(A3).matvec(np.ones(2)), ValueError, "not compatible"),
        (
            lambda: L.LinearOperatorFullMatrix(A3).matmul(np.ones((3, 1), np.float32)),
            TypeError,
            "dtype",
        ),
        (
            lambda: L.LinearOperatorFullMatrix(rand(2, 3)).determinant(),
            NotImplementedError,
            "not be square",
        ),
        (
            lambda: L.LinearOperatorFullMatrix(rand(2, 3)).solve(np.ones((2, 1))),
            NotImplementedError,
            "not be square",
        ),
        (lambda: L.LinearOperatorFullMatrix(rand(2, 3)).inverse(), ValueError, "non square"),
        (
            lambda: L.LinearOperatorFullMatrix(A3) @ L.LinearOperatorFullMatrix(W2),
            ValueError,
            "incompatible",
        ),
    ],
)
def test_bad_arguments_raise_as_tensorflow(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_asserts():
    L.LinearOperatorFullMatrix(S3).assert_self_adjoint()
    L.LinearOperatorFullMatrix(S3).assert_positive_definite()
    L.LinearOperatorFullMatrix(A3).assert_non_singular()
    with pytest.raises(InvalidArgumentError, match="not equal to its adjoint"):
        L.LinearOperatorFullMatrix(A3).assert_self_adjoint()
    with pytest.raises(InvalidArgumentError, match="Cholesky"):
        L.LinearOperatorFullMatrix(-S3).assert_positive_definite()
    with pytest.raises(InvalidArgumentError, match="Singular"):
        L.LinearOperatorFullMatrix(np.ones((3, 3))).assert_non_singular()


# ----------------------------------------------------------------------------- batch slicing

BD = rand(4, 3) + 3.0
BM = well(3, (4,))


SLICED = {
    "full_matrix": (lambda: L.LinearOperatorFullMatrix(BM, is_non_singular=True), BM),
    "diag": (lambda: L.LinearOperatorDiag(BD), np.eye(3) * BD[:, None, :]),
    "scaled_identity": (
        lambda: L.LinearOperatorScaledIdentity(3, BD[:, 0]),
        BD[:, 0, None, None] * np.eye(3),
    ),
    "identity": (
        lambda: L.LinearOperatorIdentity(3, batch_shape=[4], dtype=ft.float64),
        np.broadcast_to(np.eye(3), (4, 3, 3)),
    ),
    "composition": (
        lambda: L.LinearOperatorComposition(
            [L.LinearOperatorDiag(BD), L.LinearOperatorFullMatrix(A3)]
        ),
        (np.eye(3) * BD[:, None, :]) @ A3,
    ),
    "low_rank_update": (
        lambda: L.LinearOperatorLowRankUpdate(L.LinearOperatorFullMatrix(BM), rand(4, 3, 1)),
        None,
    ),
    "tridiag_sequence": (
        lambda: L.LinearOperatorTridiag([BD, BD[0] + 1.0, BD], "sequence"),
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(SLICED))
@pytest.mark.parametrize("index", [1, slice(1, 3), (Ellipsis,), (None, 2)])
def test_batch_slicing_matches_the_sliced_dense_matrix(name, index):
    build, dense = SLICED[name]
    op = build()
    dense = op.to_dense().numpy() if dense is None else dense
    sliced = op[index]
    assert type(sliced) is type(op)
    key = index if isinstance(index, tuple) else (index,)
    want = dense[key]
    assert sliced.shape.as_list() == list(want.shape)
    close(sliced.to_dense().numpy(), want)
    assert sliced.is_non_singular == op.is_non_singular


def test_batch_slicing_errors():
    with pytest.raises(ValueError, match="cannot slice the batch shape"):
        L.LinearOperatorFullMatrix(BM)[0, 0]

    class Bare(L.LinearOperator):
        """An operator that says nothing about its parameters."""

        def __init__(self):
            super().__init__(dtype=ft.float64)

        def _shape(self):
            return [2, 3, 3]

        def _matmul(self, x, adjoint=False, adjoint_arg=False):
            return x

    with pytest.raises(NotImplementedError, match="batch slicing"):
        Bare()[0]
