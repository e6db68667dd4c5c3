"""Complex dtypes: the same programs in TensorFlow and ferrotape, compared value by value
(values, dtypes, errors and gradients, TensorFlow's convention for complex gradients).

TensorFlow is only needed here (tests/test_complex.py checks the same ops without it); without
it the module is skipped.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
real_tf = pytest.importorskip(
    "tensorflow", reason="TensorFlow is not installed (pip install tensorflow-cpu)"
)

import ferrotape  # noqa: E402 - after the skip, so that a missing TensorFlow skips cleanly

Z = np.array([[1.0 + 2.0j, -0.5 + 0.25j], [3.0 - 1.0j, 0.75 + 1.5j]])
W = np.array([[0.5 - 1.0j, 2.0 + 0.5j], [-1.0 + 0.5j, 1.25 - 0.75j]])

PROGRAMS = []


def program(fn):
    PROGRAMS.append(fn)
    return fn


def grad_of(tf, loss, *values):
    """The tape gradient of the real `loss(*variables)` w.r.t. each of `values` (as variables)."""
    xs = [tf.Variable(v) for v in values]
    with tf.GradientTape() as tape:
        y = loss(*xs)
    return tape.gradient(y, xs)


@program
def constants_and_dtypes(tf):
    return [
        tf.constant([1 + 2j]),
        tf.constant(1.5 - 1j),
        tf.constant(Z.astype(np.complex64)),
        tf.constant([1, 2], dtype=tf.complex64),
        tf.constant(np.array([1.5]), dtype=tf.complex128),
        tf.zeros([2], tf.complex64),
        tf.ones_like(tf.constant(Z)),
        tf.complex(1.0, [2.0, 3.0]),
        tf.complex(np.float64(1.0), np.array([2.0])),
        tf.cast(tf.constant(Z), tf.float32),
        tf.cast(tf.constant([1, 2]), tf.complex64),
        tf.cast(tf.constant(Z), tf.complex64),
        tf.cast(tf.constant(Z), tf.int32),
    ]


@program
def shape_ops(tf):
    z = tf.constant(Z)
    return [
        tf.reshape(z, [4]),
        tf.transpose(z),
        tf.concat([z, z], 1),
        tf.stack([z, z]),
        tf.gather(z, [1, 0, 1]),
        z[::-1, 1],
        tf.expand_dims(z, 0),
        tf.tile(z, [1, 2]),
        tf.where([[True, False], [False, True]], z, tf.zeros_like(z)),
    ]


@program
def elementwise(tf):
    z, w = tf.constant(Z), tf.constant(W)
    return [
        tf.math.real(z),
        tf.math.imag(z),
        tf.math.conj(z),
        tf.abs(z),
        tf.math.angle(z),
        z + w,
        z - w,
        z * w,
        z / w,
        -z,
        z + 1,
        2.0 * z,
        z * 1j,
        tf.square(z),
        tf.exp(z),
        tf.math.log(z),
        tf.sqrt(z),
        tf.math.reciprocal(z),
        tf.sign(z),
        tf.equal(z, w),
        tf.not_equal(z, z),
        tf.math.real(tf.constant([1.0, -2.0])),
        tf.math.imag(tf.constant([1.0, -2.0])),
        tf.math.angle(tf.constant([1.0, -2.0])),
    ]


@program
def reductions_and_matmul(tf):
    z, w = tf.constant(Z), tf.constant(W)
    return [
        tf.reduce_sum(z),
        tf.reduce_sum(z, axis=0),
        tf.reduce_mean(z, axis=1, keepdims=True),
        tf.reduce_prod(z, axis=0),
        tf.reduce_prod(z),
        tf.linalg.matmul(z, w),
        tf.linalg.matmul(z, w, adjoint_a=True),
        tf.linalg.matmul(z, w, adjoint_b=True),
        tf.linalg.matmul(z, w, transpose_a=True),
        tf.linalg.adjoint(z),
        tf.linalg.matrix_transpose(z, conjugate=True),
        z @ w,
    ]


@program
def errors(tf):
    z = tf.constant(Z)
    return [
        error_name(lambda: tf.floor(z)),
        error_name(lambda: tf.reduce_max(z)),
        error_name(lambda: tf.less(z, z)),
        error_name(lambda: tf.constant(1 + 2j, tf.float32)),
        error_name(lambda: tf.constant([1.0]) + z),
    ]


@program
def gradients(tf):
    z, w = Z, W
    return [
        # |z|^2, |z|, holomorphic and mixed functions, and a matmul
        grad_of(tf, lambda z: tf.math.real(z * tf.math.conj(z)), z),
        grad_of(tf, lambda z: tf.reduce_sum(tf.abs(z)), z),
        grad_of(tf, lambda z, w: tf.math.real(tf.reduce_sum(tf.exp(z) * w)), z, w),
        grad_of(tf, lambda z, w: tf.math.imag(tf.reduce_sum(z / w)), z, w),
        grad_of(tf, lambda z: tf.reduce_sum(tf.math.angle(z)), z),
        grad_of(tf, lambda z: tf.math.real(tf.reduce_sum(tf.math.log(z) + tf.sqrt(z))), z),
        grad_of(
            tf,
            lambda z, w: tf.math.real(tf.reduce_sum(tf.linalg.matmul(z, w, adjoint_b=True))),
            z,
            w,
        ),
        grad_of(tf, lambda x: tf.reduce_sum(tf.abs(tf.complex(x, 2.0 * x))), np.array([1.0, -2.0])),
        grad_of(tf, lambda z: tf.reduce_sum(tf.cast(z * z, tf.float64)), z),
        grad_of(
            tf,
            lambda x: tf.math.real(tf.reduce_sum(tf.cast(x, tf.complex128) * Z)),
            np.array([1.0, 2.0]),
        ),
        grad_of(tf, lambda z: tf.math.real(tf.reduce_prod(z * W)), z),
        # a complex loss: TensorFlow seeds it with ones
        grad_of(tf, lambda z: tf.reduce_sum(z * z), z),
    ]


R = np.array([[0.5, -1.0, 2.0, 0.25, 1.5, -0.75], [1.0, 0.0, -2.0, 0.5, 0.25, 1.25]])
X = R + 1j * R[::-1]


@program
def fourier_transforms(tf):
    x, r = tf.constant(X), tf.constant(R)
    y = tf.signal.rfft(r)
    return [
        tf.signal.fft(x),
        tf.signal.ifft(x),
        tf.signal.fft2d(x),
        tf.signal.ifft2d(x),
        tf.signal.fft3d(x[None]),
        tf.signal.ifft3d(x[None]),
        tf.signal.fft(tf.cast(x, tf.complex64)),
        y,
        tf.signal.rfft(tf.cast(r, tf.float32), [4]),
        tf.signal.rfft(r, [9]),
        tf.signal.irfft(y),
        tf.signal.irfft(y, [7]),
        tf.signal.rfft2d(r),
        tf.signal.irfft2d(tf.signal.rfft2d(r)),
        tf.signal.irfft2d(tf.signal.rfft2d(r), [3, 5]),
        tf.signal.fftshift(r),
        tf.signal.ifftshift(r, axes=1),
        error_name(lambda: tf.signal.fft(r)),
    ]


@program
def fourier_gradients(tf):
    weights = np.cos(np.arange(12.0)).reshape(2, 6)
    return [
        grad_of(tf, lambda x: tf.math.real(tf.reduce_sum(tf.signal.fft(x) * X)), X),
        grad_of(tf, lambda x: tf.math.imag(tf.reduce_sum(tf.signal.ifft2d(x) * X)), X),
        grad_of(tf, lambda r: tf.reduce_sum(tf.abs(tf.signal.rfft(r))), R),
        grad_of(tf, lambda r: tf.math.real(tf.reduce_sum(tf.signal.rfft(r, [6]) * X[:, :4])), R),
        grad_of(tf, lambda r: tf.reduce_sum(tf.abs(tf.signal.rfft2d(r))), R),
        grad_of(
            tf,
            lambda x: tf.reduce_sum(tf.signal.irfft(x) * np.cos(np.arange(20.0)).reshape(2, 10)),
            X,
        ),
        grad_of(tf, lambda r: tf.reduce_sum(tf.signal.fftshift(r) * weights), R),
    ]


A = np.array([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5], [-1.5, 0.75, 1.0]])


@program
def eigen_decomposition(tf):
    # TensorFlow (Eigen) and ferrotape (LAPACK) order the eigenvalues differently and give the
    # eigenvectors other phases: compare what is free of both.
    e = tf.linalg.eigvals(tf.constant(A))
    sort = lambda t: tf.constant(np.sort_complex(t.numpy()))  # noqa: E731
    weights = np.arange(9.0).reshape(3, 3)
    return [
        sort(e),
        sort(tf.eigvals(tf.constant(A, tf.float32))),
        sort(tf.linalg.eig(tf.constant(A + 1j * A.T))[0]),
        grad_of(tf, lambda a: tf.reduce_sum(tf.abs(tf.linalg.eigvals(a))), A),
        grad_of(tf, lambda a: tf.math.real(tf.reduce_sum(tf.square(tf.linalg.eigvals(a)))), A),
        grad_of(
            tf,
            lambda a: tf.reduce_sum(tf.abs(tf.linalg.eig(a)[1]) ** 2 * weights[:, :1]),
            A,
        ),
    ]


@program
def circulant_operator(tf):
    la = tf.linalg
    op = la.LinearOperatorCirculant(tf.constant([6 + 0j, 1 + 2j, 1 - 2j], tf.complex128))
    real = la.LinearOperatorCirculant(tf.constant([6.0, 1.0, 1.0]), input_output_dtype=tf.float32)
    x = tf.constant(X[:, :3].T.astype(np.complex64))
    return [
        op.to_dense(),
        op.convolution_kernel(),
        op.matmul(x),
        op.matmul(x, adjoint=True),
        op.diag_part(),
        op.determinant(),
        real.to_dense(),
        real.matmul(tf.ones([3, 2])),
        grad_of(
            tf,
            lambda s: tf.reduce_sum(
                la.LinearOperatorCirculant(s, input_output_dtype=tf.float64).to_dense()
                * np.arange(9.0).reshape(3, 3)
            ),
            np.array([6.0, 1.0, 1.0]),
        ),
    ]


LOGM_INPUTS = [
    np.array([[1.0, 2.0], [0.5, 3.0]]),
    # non-normal, nearly singular, on the branch cut (negative eigenvalues), a rotation
    np.triu(np.arange(1.0, 26.0).reshape(5, 5) * 3, 1) + np.diag([0.5, 1.0, 1.5, 2.0, 2.5]),
    np.diag([1e-8, 1.0, 2.0]) + np.triu(np.ones((3, 3)), 1),
    np.array([[-1.0, 2.0, 0.0], [0.0, -1.0, 3.0], [0.0, 0.0, 1.0]]),
    np.array([[0.0, -1.0], [1.0, 0.0]]),
    np.zeros((2, 2)),
]


def normwise(tf, x):
    """``x`` over its largest magnitude: the elementwise comparison then bounds the normwise
    error, the accuracy a logarithm of a non-normal matrix has (its small entries are not each
    accurate to 1e-12 relative to themselves, in TensorFlow's either)."""
    return x / tf.cast(tf.reduce_max(tf.abs(x)), x.dtype)


@program
def logm(tf):
    rng = np.random.default_rng(3)
    batch = rng.normal(size=(2, 4, 4)) + 1j * rng.normal(size=(2, 4, 4))
    out = [normwise(tf, tf.linalg.logm(tf.constant(a.astype(np.complex128)))) for a in LOGM_INPUTS]
    out += [tf.linalg.logm(tf.constant(batch)), tf.linalg.logm(tf.constant(batch, tf.complex64))]
    return [
        *out,
        error_name(lambda: tf.linalg.logm(tf.constant(np.eye(2)))),
        error_name(lambda: tf.linalg.logm(tf.ones([2, 3], tf.complex64))),
        error_name(
            lambda: grad_of(tf, lambda z: tf.reduce_sum(tf.math.real(tf.linalg.logm(z))), Z)
        ),
    ]


@program
def block_circulant_operators(tf):
    la = tf.linalg
    rng = np.random.default_rng(4)
    out = []
    for cls, shape in [
        (la.LinearOperatorCirculant2D, (2, 3)),
        (la.LinearOperatorCirculant3D, (2, 2, 2, 3)),
    ]:
        spectrum = rng.normal(size=shape) + 1j * rng.normal(size=shape)
        n = int(np.prod(shape[-3:] if cls is la.LinearOperatorCirculant3D else shape[-2:]))
        op = cls(tf.constant(spectrum), input_output_dtype=tf.complex128)
        x = tf.constant(rng.normal(size=(n, 2)) + 1j * rng.normal(size=(n, 2)))
        real = cls(tf.constant(np.fft.fftn(rng.normal(size=shape))), input_output_dtype=tf.float64)
        out += [
            op.to_dense(),
            op.convolution_kernel(),
            op.matmul(x),
            op.matmul(x, adjoint=True),
            op.solve(x),
            op.solve(x, adjoint=True),
            op.diag_part(),
            op.determinant(),
            op.log_abs_determinant(),
            real.to_dense(),
            real.solve(tf.ones([n, 1], tf.float64)),
            tf.constant(op.block_shape_tensor()),
            grad_of(
                tf,
                lambda s, cls=cls, n=n: tf.reduce_sum(
                    cls(s, input_output_dtype=tf.float64).to_dense()
                    * np.arange(float(n * n)).reshape(n, n)
                ),
                spectrum.real + 3.0,
            ),
        ]
    return out


def error_name(fn):
    try:
        fn()
    except Exception as err:  # noqa: BLE001 - the class name is the result being compared
        if isinstance(err, ValueError) or type(err).__name__ == "InvalidArgumentError":
            return "InvalidArgumentError"
        return type(err).__name__
    return "no error"


def normalise(x):
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, (list, tuple)):
        return [normalise(v) for v in x]
    return (x.dtype.name, tuple(x.shape), np.asarray(x.numpy()))


def compare(got, want, where):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            compare(g, w, f"{where}[{i}]")
        return
    if want is None or isinstance(want, str):
        assert got == want, where
        return
    assert got[:2] == want[:2], where
    tol = 1e-5 if want[0] in ("complex64", "float32") else 1e-12
    np.testing.assert_allclose(got[2], want[2], rtol=tol, atol=tol, err_msg=where)


@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_same_as_tensorflow(fn):
    compare(normalise(fn(ferrotape)), normalise(fn(real_tf)), fn.__name__)
