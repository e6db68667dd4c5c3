"""``ft.linalg.logm`` and the circulant operators (2-D and 3-D, and the spectrum solves the
1-D one now shares) without TensorFlow: closed forms, numpy references (an eigendecomposition
for well-conditioned matrices, ``expm`` of the result for non-normal ones) and finite
differences (tests/test_complex_tf.py compares both with TensorFlow itself)."""

import numpy as np
import pytest

import ferrotape as ft

RNG = np.random.default_rng(7)


def np_expm(a):
    """The matrix exponential by scaling, a 30-term Taylor series and squaring (a reference
    independent of ferrotape's own ``expm``, which is real-only)."""
    squarings = max(0, int(np.ceil(np.log2(max(np.abs(a).sum(axis=0).max(), 1e-300)))) + 1)
    a = a / 2.0**squarings
    term, total = np.eye(len(a), dtype=a.dtype), np.eye(len(a), dtype=a.dtype)
    for k in range(1, 30):
        term = term @ a / k
        total = total + term
    for _ in range(squarings):
        total = total @ total
    return total


def logm(a, dtype=ft.complex128):
    return ft.linalg.logm(ft.constant(np.asarray(a).astype(dtype.name)))


def test_logm_closed_forms():
    # A Jordan block: log(I + N) = N for nilpotent N with N^2 = 0.
    np.testing.assert_allclose(logm([[1.0, 1.0], [0.0, 1.0]]).numpy(), [[0, 1], [0, 0]], atol=1e-15)
    # Eigenvalues on the negative real axis take the principal branch, +i*pi.
    np.testing.assert_allclose(
        logm(np.diag([-1.0, -2.0])).numpy(),
        np.diag([1j * np.pi, np.log(2.0) + 1j * np.pi]),
        atol=1e-14,
    )
    # A -1 Jordan block: log(-1 (I - N)) = i*pi I - N.
    np.testing.assert_allclose(
        logm([[-1.0, 1.0], [0.0, -1.0]]).numpy(), [[1j * np.pi, -1.0], [0, 1j * np.pi]], atol=1e-14
    )
    # A rotation by pi/2 is the exponential of the generator scaled by pi/2.
    np.testing.assert_allclose(
        logm([[0.0, -1.0], [1.0, 0.0]]).numpy(), [[0, -np.pi / 2], [np.pi / 2, 0]], atol=1e-14
    )


def test_logm_matches_eigendecomposition_and_keeps_dtype():
    a = RNG.normal(size=(3, 5, 5)) + 1j * RNG.normal(size=(3, 5, 5))
    e, v = np.linalg.eig(a)
    want = v @ (np.log(e)[..., None] * np.linalg.inv(v))
    got = logm(a)
    assert got.dtype == ft.complex128 and got.shape == (3, 5, 5)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    single = logm(a, ft.complex64)
    assert single.dtype == ft.complex64
    np.testing.assert_allclose(single.numpy(), want, atol=2e-5)


@pytest.mark.parametrize(
    "a",
    [
        # strongly non-normal: a large strictly upper part over a positive diagonal
        np.triu(RNG.normal(size=(6, 6)) * 10, 1) + np.diag(RNG.uniform(0.5, 2.0, 6)),
        np.array([[1.0, 1e4], [0.0, 1.0]]),
        # nearly singular: an eigenvalue of 1e-8
        np.diag([1e-8, 1.0, 2.0]) + np.triu(np.ones((3, 3)), 1),
        RNG.normal(size=(7, 7)) + 1j * RNG.normal(size=(7, 7)),
    ],
    ids=["non-normal", "jordan-like", "nearly-singular", "complex"],
)
def test_expm_of_logm_gives_back_the_matrix(a):
    log = logm(a).numpy()
    # logm's eigenvalues lie in the principal strip.
    assert np.all(np.abs(np.linalg.eigvals(log).imag) <= np.pi + 1e-12)
    scale = np.abs(a).max()
    np.testing.assert_allclose(np_expm(log), a, atol=1e-10 * scale)
    if np.isrealobj(a):
        # A real matrix with positive eigenvalues has a real logarithm, which ferrotape's own
        # (real) expm takes back.
        np.testing.assert_allclose(log.imag, 0.0, atol=1e-12)
        back = ft.linalg.expm(ft.constant(log.real)).numpy()
        np.testing.assert_allclose(back, a, atol=1e-10 * scale)


def test_logm_singular_empty_errors_and_no_gradient():
    assert np.isnan(logm(np.zeros((2, 2))).numpy()).all()
    assert logm(np.zeros((2, 0, 0))).shape == (2, 0, 0)
    for bad, match in [
        (ft.constant([[1.0, 2.0], [3.0, 4.0]], ft.float64), "logm: expected a complex64"),
        (ft.ones([2, 3], ft.complex64), "logm: input must be square"),
        (ft.ones([3], ft.complex64), "logm: input must be at least 2-D"),
    ]:
        with pytest.raises(ft.errors.InvalidArgumentError, match=match):
            ft.linalg.logm(bad)
    # TensorFlow registers no gradient for MatrixLogarithm.
    z = ft.Variable(np.array([[2.0, 1.0], [0.0, 3.0]], np.complex128))
    with ft.GradientTape() as tape:
        y = ft.reduce_sum(ft.math.real(ft.linalg.logm(z)))
    with pytest.raises(LookupError, match="MatrixLogarithm"):
        tape.gradient(y, z)


def circulant_reference(spectrum, depth):
    """The dense (block-)circulant matrix of ``spectrum`` built entry by entry."""
    h = np.fft.ifftn(spectrum, axes=tuple(range(-depth, 0)))
    shape = spectrum.shape[-depth:]
    index = list(np.ndindex(*shape))
    dense = np.empty((*spectrum.shape[:-depth], len(index), len(index)), complex)
    for r, i in enumerate(index):
        for c, j in enumerate(index):
            dense[..., r, c] = h[(..., *((np.array(i) - j) % shape))]
    return dense


OPERATORS = {
    1: ft.linalg.LinearOperatorCirculant,
    2: ft.linalg.LinearOperatorCirculant2D,
    3: ft.linalg.LinearOperatorCirculant3D,
}


@pytest.mark.parametrize(
    "depth, shape", [(1, (2, 4)), (2, (2, 3)), (2, (2, 2, 3)), (3, (2, 2, 3)), (3, (2, 1, 2, 2))]
)
def test_block_circulant_matches_numpy(depth, shape):
    spectrum = RNG.normal(size=shape) + 1j * RNG.normal(size=shape)
    dense = circulant_reference(spectrum, depth)
    n = dense.shape[-1]
    op = OPERATORS[depth](ft.constant(spectrum), input_output_dtype=ft.complex128)
    assert op.shape == dense.shape and op.block_depth == depth
    assert op.block_shape == list(shape[-depth:])
    np.testing.assert_array_equal(op.block_shape_tensor().numpy(), shape[-depth:])
    np.testing.assert_allclose(op.to_dense().numpy(), dense, atol=1e-12)
    np.testing.assert_allclose(
        op.convolution_kernel().numpy(), np.fft.ifftn(spectrum, axes=range(-depth, 0)), atol=1e-12
    )
    x = RNG.normal(size=(n, 2)) + 1j * RNG.normal(size=(n, 2))
    adj = np.conj(np.swapaxes(dense, -1, -2))
    np.testing.assert_allclose(op.matmul(ft.constant(x)).numpy(), dense @ x, atol=1e-12)
    np.testing.assert_allclose(op.matmul(ft.constant(x), adjoint=True).numpy(), adj @ x, atol=1e-12)
    np.testing.assert_allclose(
        op.solve(ft.constant(x)).numpy(), np.linalg.solve(dense, x), atol=1e-10
    )
    np.testing.assert_allclose(
        op.solve(ft.constant(np.conj(x.T)), adjoint=True, adjoint_arg=True).numpy(),
        np.linalg.solve(adj, x),
        atol=1e-10,
    )
    np.testing.assert_allclose(op.determinant().numpy(), np.linalg.det(dense), rtol=1e-10)
    np.testing.assert_allclose(
        op.log_abs_determinant().numpy(), np.linalg.slogdet(dense)[1], rtol=1e-10
    )
    np.testing.assert_allclose(
        op.diag_part().numpy(), np.diagonal(dense, axis1=-2, axis2=-1), atol=1e-12
    )


def test_block_circulant_real_dtype_and_errors():
    # A Hermitian spectrum (the DFT of a real kernel) gives a real operator exactly.
    kernel = RNG.normal(size=(2, 3, 2))
    op = ft.linalg.LinearOperatorCirculant3D(
        ft.constant(np.fft.fftn(kernel)), input_output_dtype=ft.float64
    )
    dense = circulant_reference(np.fft.fftn(kernel), 3)
    assert op.dtype == ft.float64
    np.testing.assert_allclose(op.to_dense().numpy(), dense.real, atol=1e-12)
    np.testing.assert_allclose(op.convolution_kernel().numpy(), kernel, atol=1e-12)
    rhs = RNG.normal(size=(12, 3))
    np.testing.assert_allclose(
        op.solve(ft.constant(rhs)).numpy(), np.linalg.solve(dense.real, rhs), atol=1e-10
    )
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        ft.linalg.LinearOperatorCirculant2D(ft.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        ft.linalg.LinearOperatorCirculant3D(ft.ones([2, 2]))
    with pytest.raises(ValueError, match="always square"):
        ft.linalg.LinearOperatorCirculant2D(ft.ones([2, 2]), is_square=False)


@pytest.mark.parametrize("depth", [2, 3])
def test_gradient_through_the_spectrum(depth):
    shape = (2, 3) if depth == 2 else (2, 1, 3)
    spectrum = np.fft.fftn(RNG.normal(size=shape)).real + 3.0  # no zero: solve is defined
    n = int(np.prod(shape))
    weights, rhs = RNG.normal(size=(n, n)), RNG.normal(size=(n, 2))

    def loss(s):
        op = OPERATORS[depth](s, input_output_dtype=ft.float64)
        return ft.reduce_sum(op.to_dense() * weights) + ft.reduce_sum(
            op.solve(ft.constant(rhs)) * rhs
        )

    s = ft.Variable(spectrum)
    with ft.GradientTape() as tape:
        y = loss(s)
    got = tape.gradient(y, s).numpy()
    want = np.zeros_like(spectrum)
    eps = 1e-6
    for index in np.ndindex(*shape):
        step = np.zeros_like(spectrum)
        step[index] = eps
        up = loss(ft.constant(spectrum + step)).numpy()
        down = loss(ft.constant(spectrum - step)).numpy()
        want[index] = (up - down) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
