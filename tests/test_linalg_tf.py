"""tf.linalg's decompositions (eigh, eigvalsh, svd, pinv, matrix_rank) and the LinearOperator
family, run in TensorFlow 2.21 and in ferrotape and compared: values, dtypes, shapes, float64
gradients, and the kind of error.

Each program takes the module (``tensorflow`` or ``ferrotape``) as ``tf`` and returns a nest of
results: tensors become (dtype name, shape, values), an expected error becomes its kind.
Eigen- and singular vectors are compared through sign-free functions of them (their signs are
unspecified and differ between Eigen and LAPACK). Skipped without TensorFlow
(``pip install tensorflow-cpu``); tests/test_linalg_decomp.py and tests/test_linear_operator.py
cover the same names without it.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
real_tf = pytest.importorskip(
    "tensorflow", reason="TensorFlow is not installed (pip install tensorflow-cpu)"
)

import ferrotape  # noqa: E402 - after the skip

PROGRAMS = []
RNG = np.random.default_rng(5)
SYM = RNG.standard_normal((2, 4, 4))
SYM = SYM + np.swapaxes(SYM, -1, -2) + np.diag([0.0, 2.0, 4.0, 6.0])
SYM[:, 0, 3] += 1.0  # the upper triangle is not read
WIDE = RNG.standard_normal((2, 3, 4))
TALL = RNG.standard_normal((5, 3))
SQUARE = RNG.standard_normal((3, 3))
NEAR_SQUARE = (RNG.standard_normal((3, 4)), RNG.standard_normal((4, 3)))


def program(fn):
    PROGRAMS.append(fn)
    return fn


def kind(fn):
    """Run fn; the kind of exception it raises, or 'no error'."""
    try:
        fn()
    except Exception as err:  # noqa: BLE001 - the kind is the result being compared
        if type(err).__name__ in ("InvalidArgumentError", "ValueError"):
            return "InvalidArgumentError or ValueError"
        for k in (NotImplementedError, TypeError, RuntimeError):
            if isinstance(err, k):
                return k.__name__
        return type(err).__name__
    return "no error"


def grads(tf, fn, *arrays):
    """fn's value and the gradient of sum(fn(*xs) * weights) for each float64 input."""
    xs = [tf.constant(a) for a in arrays]
    with tf.GradientTape() as tape:
        tape.watch(xs)
        y = fn(*xs)
        weights = np.linspace(0.5, 2.0, int(np.prod(y.shape))).reshape(y.shape)
        loss = tf.reduce_sum(y * tf.constant(weights))
    return y, tape.gradient(loss, xs)


def projector(tf, vectors, weights):
    """sum_i w_i x_i x_i^T over the columns x_i: free of the columns' signs."""
    return tf.matmul(vectors * weights, vectors, transpose_b=True)


@program
def eigh_values_vectors_and_gradients(tf):
    w = tf.constant([0.5, -1.0, 2.0, 1.5], tf.float64)
    return [
        tf.linalg.eigh(SYM)[0],
        tf.linalg.eigvalsh(SYM.astype(np.float32)),
        grads(tf, lambda a: tf.linalg.eigh(a)[0], SYM),
        grads(tf, lambda a: tf.linalg.eigvalsh(a), SYM),
        grads(tf, lambda a: projector(tf, tf.linalg.eigh(a)[1], w), SYM),
        grads(
            tf, lambda a: projector(tf, tf.linalg.eigh(a)[1], tf.linalg.eigh(a)[0][:, None, :]), SYM
        ),
        kind(lambda: tf.linalg.eigh(np.ones((2, 3)))),
    ]


@program
def svd_values_vectors_and_gradients(tf):
    out = []
    for a in (SQUARE, TALL, WIDE):
        k = min(a.shape[-2:])
        w = tf.constant(np.linspace(-1.0, 1.0, k))
        out += [
            tf.linalg.svd(a, compute_uv=False),
            grads(tf, lambda t: tf.linalg.svd(t, compute_uv=False), a),
            grads(tf, lambda t: tf.linalg.svd(t)[0], a),
            grads(
                tf,
                lambda t, w=w: tf.matmul(
                    tf.linalg.svd(t)[1] * w, tf.linalg.svd(t)[2], transpose_b=True
                ),
                a,
            ),
            grads(tf, lambda t, w=w: projector(tf, tf.linalg.svd(t)[1], w), a),
            grads(tf, lambda t, w=w: projector(tf, tf.linalg.svd(t)[2], w), a),
            [x.shape.as_list() for x in tf.linalg.svd(a, full_matrices=True)],
        ]
    for a in NEAR_SQUARE:
        wu, wv = (tf.constant(np.linspace(-1.0, 2.0, d)) for d in a.shape)
        out.append(
            grads(
                tf,
                lambda t, wu=wu, wv=wv: tf.concat(
                    [
                        tf.reshape(
                            projector(tf, tf.linalg.svd(t, full_matrices=True)[1], wu), [-1]
                        ),
                        tf.reshape(
                            projector(tf, tf.linalg.svd(t, full_matrices=True)[2], wv), [-1]
                        ),
                    ],
                    0,
                ),
                a,
            )
        )
    out.append(kind(lambda: grads(tf, lambda t: tf.linalg.svd(t, full_matrices=True)[0], TALL)))
    out.append(kind(lambda: tf.linalg.svd(np.ones(3))))
    return out


@program
def pinv_and_matrix_rank(tf):
    singular = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])
    return [
        grads(tf, tf.linalg.pinv, SQUARE),
        grads(tf, tf.linalg.pinv, WIDE),
        grads(tf, tf.linalg.pinv, singular),
        tf.linalg.pinv(np.diag([1.0, 1e-9])),
        tf.linalg.pinv(np.diag([1.0, 1e-9]), rcond=1e-6),
        tf.linalg.pinv(np.diag([1.0, 1e-7]).astype(np.float32)),
        tf.linalg.matrix_rank(np.stack([singular[:2], np.eye(2), np.zeros((2, 2))])),
        tf.linalg.matrix_rank(WIDE),
        tf.linalg.matrix_rank(np.diag([1.0, 1e-3]), tol=1e-2),
        tf.linalg.matrix_rank(np.diag([1.0, 1e-17])),
    ]


# ----------------------------------------------------------------------------- LinearOperators

W2 = RNG.standard_normal((2, 2)) + 3.0 * np.eye(2)
W3 = RNG.standard_normal((3, 3)) + 3.0 * np.eye(3)
SPD3 = W3 @ W3.T
D3 = np.array([1.5, -2.0, 3.0])
U32 = RNG.standard_normal((3, 2))
X62 = RNG.standard_normal((6, 2))
W66 = RNG.standard_normal((6, 6))
TRI = np.stack([RNG.standard_normal(3), RNG.standard_normal(3) + 4.0, RNG.standard_normal(3)])


def operators(tf):
    """One operator of each kind, as a function of one float64 parameter tensor each."""
    la = tf.linalg
    return {
        "full_matrix": (lambda p: la.LinearOperatorFullMatrix(p), W3),
        "full_matrix_spd": (
            lambda p: la.LinearOperatorFullMatrix(
                p, is_self_adjoint=True, is_positive_definite=True
            ),
            SPD3,
        ),
        "diag": (lambda p: la.LinearOperatorDiag(p), D3),
        "scaled_identity": (lambda p: la.LinearOperatorScaledIdentity(3, p), np.array(1.7)),
        "lower_triangular": (lambda p: la.LinearOperatorLowerTriangular(p), W3),
        "composition": (
            lambda p: la.LinearOperatorComposition(
                [la.LinearOperatorFullMatrix(p), la.LinearOperatorDiag(tf.constant(D3))]
            ),
            W3,
        ),
        "adjoint": (lambda p: la.LinearOperatorAdjoint(la.LinearOperatorFullMatrix(p)), W3),
        "inversion": (lambda p: la.LinearOperatorInversion(la.LinearOperatorFullMatrix(p)), W3),
        "block_diag": (
            lambda p: la.LinearOperatorBlockDiag(
                [la.LinearOperatorFullMatrix(p[:2, :2]), la.LinearOperatorDiag(p[2, :1])]
            ),
            W3,
        ),
        "kronecker": (
            lambda p: la.LinearOperatorKronecker(
                [la.LinearOperatorFullMatrix(tf.constant(W2)), la.LinearOperatorFullMatrix(p)]
            ),
            W3,
        ),
        "low_rank_update": (
            lambda p: la.LinearOperatorLowRankUpdate(
                la.LinearOperatorFullMatrix(tf.constant(W3)), p, tf.constant([2.0, 3.0], tf.float64)
            ),
            U32,
        ),
        "low_rank_update_spd": (
            lambda p: la.LinearOperatorLowRankUpdate(
                la.LinearOperatorDiag(tf.constant(np.abs(D3)), is_positive_definite=True), p
            ),
            U32,
        ),
        "householder": (lambda p: la.LinearOperatorHouseholder(p), D3),
        "toeplitz": (
            lambda p: la.LinearOperatorToeplitz(p, tf.constant([4.0, -1.0, 0.3], tf.float64)),
            D3 + 3.0,
        ),
        "tridiag": (lambda p: la.LinearOperatorTridiag(p), TRI),
        "block_lower_triangular": (
            lambda p: la.LinearOperatorBlockLowerTriangular(
                [
                    [la.LinearOperatorFullMatrix(p[:1, :1])],
                    [
                        la.LinearOperatorFullMatrix(p[1:, :1]),
                        la.LinearOperatorFullMatrix(p[1:, 1:]),
                    ],
                ]
            ),
            W3,
        ),
    }


def operator_program(name):
    def run(tf):
        build, p0 = operators(tf)[name]
        op = build(tf.constant(p0))
        n = op.domain_dimension
        x, w = X62[:n], W66[:n, :n]
        out = [
            op.shape.as_list(),
            [op.is_non_singular, op.is_self_adjoint, op.is_positive_definite, op.is_square],
            op.to_dense(),
            op.matmul(x),
            op.matmul(x.T, adjoint=True, adjoint_arg=True),
            op.matvec(x[:, 0]),
            op.solve(x),
            op.solvevec(x[:, 1], adjoint=True),
            op.determinant(),
            op.log_abs_determinant(),
            op.diag_part(),
            op.trace(),
            op.add_to_tensor(w),
            type(op.adjoint()).__name__,
            op.adjoint().to_dense(),
            type(op.inverse()).__name__,
            op.inverse().to_dense(),
        ]
        if op.is_self_adjoint:
            out.append(op.eigvals())
        if op.is_self_adjoint and op.is_positive_definite:
            out += [type(op.cholesky()).__name__, op.cholesky().to_dense()]

        def scalar(p):
            o = build(p)
            y = o.matmul(x) + o.solve(x)
            return tf.reduce_sum(y * x) + o.log_abs_determinant()

        value, (gradient,) = grads(tf, scalar, p0)
        out.append([value, gradient])
        return out

    run.__name__ = f"linear_operator_{name}"
    return run


for _name in sorted(operators(ferrotape)):
    program(operator_program(_name))


@program
def linear_operator_products_and_errors(tf):
    la = tf.linalg
    d1, d2 = la.LinearOperatorDiag(D3), la.LinearOperatorDiag(D3 + 1.0)
    full = la.LinearOperatorFullMatrix(W3)
    identity = la.LinearOperatorIdentity(3, dtype=tf.float64)
    zeros = la.LinearOperatorZeros(3, dtype=tf.float64)
    return [
        type(d1 @ d2).__name__,
        (d1 @ d2).to_dense(),
        type(d1.solve(d2)).__name__,
        type(full @ identity).__name__,
        type(full @ full).__name__,
        (full @ full).name,
        type(full.solve(full)).__name__,
        type(zeros @ full).__name__,
        la.LinearOperatorIdentity(2, batch_shape=[3]).matvec([1.0, 2.0]),
        la.LinearOperatorScaledIdentity(2, [2.0, 3.0]).determinant(),
        la.LinearOperatorPermutation([2, 0, 1]).matvec([10.0, 20.0, 30.0]),
        la.LinearOperatorPermutation([2, 0, 1]).solvevec([10.0, 20.0, 30.0]),
        la.LinearOperatorPermutation([2, 0, 1]).determinant(),
        la.LinearOperatorPermutation([1, 0, 2]).determinant(),
        la.LinearOperatorHouseholder([1.0, 1.0]).eigvals(),
        zeros.matvec(D3),
        tf.convert_to_tensor(zeros.add_to_tensor(W3)),  # TF hands a numpy argument back
        la.LinearOperatorTridiag(list(TRI), "sequence").to_dense(),
        la.LinearOperatorTridiag(W3, "matrix").to_dense(),
        la.LinearOperatorFullMatrix(np.stack([W3, SPD3]))[1].to_dense(),
        la.LinearOperatorScaledIdentity(2, [2.0, 3.0, 4.0])[1:].to_dense(),
        la.LinearOperatorComposition([la.LinearOperatorDiag(np.stack([D3, D3 + 1.0])), full])[
            ..., 1
        ].to_dense(),
        la.LinearOperatorIdentity(2, batch_shape=[3])[None, 1:].shape.as_list(),
        kind(lambda: full.matvec(np.ones(2))),
        kind(lambda: full.matmul(np.ones((3, 1), np.float32))),
        kind(lambda: la.LinearOperatorFullMatrix(np.ones((2, 3))).determinant()),
        kind(lambda: la.LinearOperatorFullMatrix(np.ones((2, 3))).solve(np.ones((2, 1)))),
        kind(lambda: la.LinearOperatorFullMatrix(np.ones((2, 3))).inverse()),
        kind(lambda: full.cholesky()),
        kind(lambda: full.eigvals()),
        kind(lambda: la.LinearOperatorDiag(D3, is_self_adjoint=False)),
        kind(lambda: la.LinearOperatorIdentity(3, is_non_singular=False)),
        kind(lambda: la.LinearOperatorZeros(2, 3)),
        kind(lambda: la.LinearOperatorComposition([])),
        kind(lambda: la.LinearOperatorComposition([full, la.LinearOperatorFullMatrix(W2)]).shape),
        kind(lambda: la.LinearOperatorInversion(zeros)),
        kind(lambda: la.LinearOperatorPermutation([0, 0, 1])),
        kind(lambda: la.LinearOperatorHouseholder([1.0, 0.0], is_positive_definite=True)),
        kind(lambda: zeros.solve(np.ones((3, 1)))),
    ]


def to_plain(value):
    if isinstance(value, (real_tf.Tensor, ferrotape.Tensor)):
        return (value.dtype.name, tuple(value.shape), value.numpy().tolist())
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


def assert_same(expected, actual, path="result"):
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), path
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_same(e, a, f"{path}[{i}]")
    elif isinstance(expected, tuple) and len(expected) == 3 and isinstance(expected[0], str):
        assert actual[0] == expected[0] and actual[1] == expected[1], (path, expected, actual)
        tol = 1e-5 if expected[0] == "float32" else 1e-8
        np.testing.assert_allclose(actual[2], expected[2], rtol=tol, atol=tol, err_msg=path)
    else:
        assert actual == expected, (path, expected, actual)


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda fn: fn.__name__)
def test_matches_tensorflow(prog):
    assert_same(to_plain(prog(real_tf)), to_plain(prog(ferrotape)))
