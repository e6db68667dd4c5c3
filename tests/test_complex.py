"""complex64/complex128 without TensorFlow: numpy references for conversion, shape ops,
arithmetic, casts, errors and TensorFlow's gradient convention (tests/test_complex_tf.py runs
the same kind of programs against TensorFlow itself)."""

import numpy as np
import pytest

import ferrotape as ft

Z = np.array([[1.0 + 2.0j, -0.5 + 0.25j], [3.0 - 1.0j, 0.75 + 1.5j]])
W = np.array([[0.5 - 1.0j, 2.0 + 0.5j], [-1.0 + 0.5j, 1.25 - 0.75j]])


def same(t, want, dtype):
    assert t.dtype == dtype
    single = dtype in (ft.complex64, ft.float32)
    np.testing.assert_allclose(
        t.numpy(), want, rtol=1e-6 if single else 1e-12, atol=1e-7 if single else 1e-12
    )


def test_dtypes_and_conversion():
    assert ft.complex64.is_complex and ft.complex128.is_complex and not ft.float32.is_complex
    assert ft.complex64.real_dtype == ft.float32 and ft.complex128.real_dtype == ft.float64
    assert ft.complex64.size == 8 and ft.complex128.size == 16
    assert not ft.complex64.is_floating and not ft.complex64.is_integer
    assert ft.as_dtype(np.complex64) == ft.complex64 and ft.complex128 == "complex128"
    with pytest.raises(TypeError, match="minimum"):
        _ = ft.complex64.min
    # Python complex numbers are complex128; numpy arrays keep their dtype, both ways.
    assert ft.constant(1 + 2j).dtype == ft.complex128
    assert ft.constant(1 + 2j).numpy() == 1 + 2j
    same(ft.constant([1 + 2j, 3j]), np.array([1 + 2j, 3j]), ft.complex128)
    for dtype in (np.complex64, np.complex128):
        t = ft.constant(Z.astype(dtype))
        assert t.numpy().dtype == dtype and t.dtype == dtype
        np.testing.assert_array_equal(t.numpy(), Z.astype(dtype))
        # a non-contiguous view keeps its values
        np.testing.assert_array_equal(ft.constant(Z.astype(dtype).T).numpy(), Z.T.astype(dtype))
    same(ft.constant([1, 2], dtype=ft.complex64), np.array([1, 2]), ft.complex64)
    same(ft.constant(1.5, dtype=ft.complex128), np.array(1.5), ft.complex128)
    with pytest.raises(TypeError, match="dtype float32"):
        ft.constant(1 + 2j, ft.float32)
    assert repr(ft.constant(1 + 2j)) == ("<tf.Tensor: shape=(), dtype=complex128, numpy=(1+2j)>")
    assert str(ft.constant([1 + 2j])) == "tf.Tensor([1.+2.j], shape=(1,), dtype=complex128)"


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_shape_ops_move_complex_values(dtype):
    z = ft.constant(Z.astype(dtype))
    zn = Z.astype(dtype)
    np.testing.assert_array_equal(ft.reshape(z, [4]).numpy(), zn.reshape(4))
    np.testing.assert_array_equal(ft.transpose(z).numpy(), zn.T)
    np.testing.assert_array_equal(ft.concat([z, z], 1).numpy(), np.concatenate([zn, zn], 1))
    np.testing.assert_array_equal(ft.stack([z, z]).numpy(), np.stack([zn, zn]))
    np.testing.assert_array_equal(ft.gather(z, [1, 0, 1]).numpy(), zn[[1, 0, 1]])
    np.testing.assert_array_equal(z[::-1, 1].numpy(), zn[::-1, 1])
    np.testing.assert_array_equal(ft.expand_dims(z, 0).numpy(), zn[None])
    np.testing.assert_array_equal(ft.tile(z, [1, 2]).numpy(), np.tile(zn, [1, 2]))
    mask = np.array([[True, False], [False, True]])
    np.testing.assert_array_equal(
        ft.where(mask, z, ft.zeros_like(z)).numpy(), np.where(mask, zn, 0)
    )
    np.testing.assert_array_equal(ft.zeros_like(z).numpy(), np.zeros_like(zn))
    np.testing.assert_array_equal(ft.ones_like(z).numpy(), np.ones_like(zn))


@pytest.mark.parametrize("dtype", [ft.complex64, ft.complex128])
def test_arithmetic_matches_numpy(dtype):
    zn, wn = Z.astype(dtype.name), W.astype(dtype.name)
    z, w = ft.constant(zn), ft.constant(wn)
    part = dtype.real_dtype
    same(ft.math.real(z), zn.real, part)
    same(ft.math.imag(z), zn.imag, part)
    same(ft.math.conj(z), np.conj(zn), dtype)
    same(ft.abs(z), np.abs(zn), part)
    same(ft.math.angle(z), np.angle(zn), part)
    same(ft.complex(ft.math.real(z), ft.math.imag(z)), zn, dtype)
    same(z + w, zn + wn, dtype)
    same(z - w, zn - wn, dtype)
    same(z * w, zn * wn, dtype)
    same(z / w, zn / wn, dtype)
    same(-z, -zn, dtype)
    same(z + 1, zn + 1, dtype)
    same(z * 1j, zn * 1j, dtype)
    same(ft.square(z), zn * zn, dtype)
    same(ft.exp(z), np.exp(zn), dtype)
    same(ft.math.log(z), np.log(zn), dtype)
    same(ft.sqrt(z), np.sqrt(zn), dtype)
    same(ft.math.reciprocal(z), 1 / zn, dtype)
    same(ft.sign(z), zn / np.abs(zn), dtype)
    same(ft.reduce_sum(z, axis=0), zn.sum(0), dtype)
    same(ft.reduce_mean(z), zn.mean(), dtype)
    same(ft.reduce_prod(z, axis=1), zn.prod(1), dtype)
    same(ft.reduce_prod(z, keepdims=True), zn.prod(keepdims=True), dtype)
    same(ft.linalg.matmul(z, w), zn @ wn, dtype)
    same(ft.linalg.matmul(z, w, adjoint_a=True), np.conj(zn).T @ wn, dtype)
    same(ft.linalg.matmul(z, w, adjoint_b=True), zn @ np.conj(wn).T, dtype)
    same(ft.linalg.adjoint(z), np.conj(zn).T, dtype)
    np.testing.assert_array_equal(ft.equal(z, w).numpy(), zn == wn)
    np.testing.assert_array_equal(ft.not_equal(z, z).numpy(), np.zeros((2, 2), bool))


def test_casts_follow_tensorflow():
    z = ft.constant(Z)
    same(ft.cast(z, ft.float32), Z.real, ft.float32)  # the real part is kept
    np.testing.assert_array_equal(ft.cast(z, ft.int32).numpy(), Z.real.astype(np.int32))
    same(ft.cast(ft.constant([1, 2]), ft.complex64), np.array([1, 2]), ft.complex64)
    same(ft.cast(z, ft.complex64), Z, ft.complex64)
    # zero at the imaginary part, and the parts of real inputs
    same(ft.math.imag(ft.cast(ft.constant([1.5]), ft.complex128)), np.zeros(1), ft.float64)
    same(ft.math.real(ft.constant([1.0, -2.0])), np.array([1.0, -2.0]), ft.float32)
    same(ft.math.imag(ft.constant([1.0, -2.0])), np.zeros(2), ft.float32)
    same(ft.math.angle(ft.constant([1.0, -2.0])), np.array([0.0, np.pi]), ft.float32)


def test_ops_not_defined_for_complex_name_op_and_dtype():
    z = ft.constant(Z)
    for fn, op in [
        (lambda: ft.floor(z), "Floor"),
        (lambda: ft.reduce_max(z), "Max"),
        (lambda: ft.argmax(z), "ArgMax"),
        (lambda: ft.less(z, z), "Compare"),
        (lambda: ft.maximum(z, z), "Maximum"),
    ]:
        with pytest.raises(ft.errors.InvalidArgumentError, match=f"{op}.*complex128"):
            fn()
    with pytest.raises(ft.errors.InvalidArgumentError, match="float32 and complex128"):
        _ = ft.constant([1.0]) + z
    with pytest.raises(ft.errors.InvalidArgumentError, match="int32 int32"):
        ft.complex(1, 2)


def grad(loss, *values):
    xs = [ft.Variable(v) for v in values]
    with ft.GradientTape() as tape:
        y = loss(*xs)
    return [g.numpy() for g in tape.gradient(y, xs)]


def test_gradients_follow_tensorflows_convention():
    # For a real loss L(z), TensorFlow's gradient is dL/dx + i dL/dy (z = x + iy): for a
    # holomorphic f inside, the upstream gradient times conj(f'(z)).
    (g,) = grad(lambda z: ft.reduce_sum(ft.math.real(z * ft.math.conj(z))), Z)
    np.testing.assert_allclose(g, 2 * Z)
    (g,) = grad(lambda z: ft.reduce_sum(ft.abs(z)), Z)
    np.testing.assert_allclose(g, Z / np.abs(Z))
    g, h = grad(lambda z, w: ft.math.real(ft.reduce_sum(ft.exp(z) * w)), Z, W)
    np.testing.assert_allclose(g, np.conj(np.exp(Z) * W))
    np.testing.assert_allclose(h, np.conj(np.exp(Z)))
    (g,) = grad(lambda z: ft.reduce_sum(ft.math.angle(z)), Z)
    # d angle = (x dy - y dx)/|z|^2, so the gradient is (-y + ix)/|z|^2 = i z / |z|^2
    np.testing.assert_allclose(g, 1j * Z / np.abs(Z) ** 2)
    g, h = grad(lambda a, b: ft.math.real(ft.reduce_sum(ft.linalg.matmul(a, b))), Z, W)
    ones = np.ones((2, 2))
    np.testing.assert_allclose(g, ones @ np.conj(W).T)
    np.testing.assert_allclose(h, np.conj(Z).T @ ones)
    # |z| at 0 has gradient 0, as TensorFlow's sign(0)
    (g,) = grad(lambda z: ft.reduce_sum(ft.abs(z)), np.array([0j, 3 + 4j]))
    np.testing.assert_allclose(g, [0, 0.6 + 0.8j])
    # real inputs through complex and back
    (g,) = grad(lambda x: ft.reduce_sum(ft.abs(ft.complex(x, 2.0 * x))), np.array([1.0, -2.0]))
    np.testing.assert_allclose(g, np.sign([1.0, -2.0]) * np.sqrt(5))
    # a complex target is seeded with ones: the gradient of sum(z * z) is conj(2z)
    (g,) = grad(lambda z: ft.reduce_sum(z * z), Z)
    np.testing.assert_allclose(g, np.conj(2 * Z))


def test_second_order_through_complex():
    x = ft.Variable(np.array([0.5, -1.5]))
    with ft.GradientTape() as outer:
        with ft.GradientTape() as inner:
            y = ft.reduce_sum(ft.math.real(ft.exp(ft.complex(x, x))))
        g = inner.gradient(y, x)
    # y = e^x cos x: y' = e^x (cos x - sin x), y'' = -2 e^x sin x
    xs = np.array([0.5, -1.5])
    np.testing.assert_allclose(g.numpy(), np.exp(xs) * (np.cos(xs) - np.sin(xs)))
    np.testing.assert_allclose(outer.gradient(g, x).numpy(), -2 * np.exp(xs) * np.sin(xs))


def finite_difference(f, x, eps=1e-6):
    """d f / dx of a real-valued numpy function of a real array, by central differences."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


R = np.array([[0.5, -1.0, 2.0, 0.25, 1.5, -0.75], [1.0, 0.0, -2.0, 0.5, 0.25, 1.25]])
X = R + 1j * R[::-1]


def test_fourier_transforms_match_numpy():
    x, r = ft.constant(X), ft.constant(R)
    same(ft.signal.fft(x), np.fft.fft(X), ft.complex128)
    same(ft.signal.ifft(x), np.fft.ifft(X), ft.complex128)
    same(ft.signal.fft2d(x), np.fft.fft2(X), ft.complex128)
    same(ft.signal.ifft2d(x), np.fft.ifft2(X), ft.complex128)
    same(ft.signal.fft3d(x[None]), np.fft.fftn(X[None]), ft.complex128)
    same(ft.signal.ifft3d(x[None]), np.fft.ifftn(X[None]), ft.complex128)
    same(ft.signal.fft(ft.cast(x, ft.complex64)), np.fft.fft(X), ft.complex64)
    same(ft.signal.rfft(r), np.fft.rfft(R), ft.complex128)
    same(ft.signal.rfft(ft.cast(r, ft.float32), [4]), np.fft.rfft(R, 4), ft.complex64)
    same(ft.signal.rfft(r, [9]), np.fft.rfft(R, 9), ft.complex128)
    y = np.fft.rfft(R)
    same(ft.signal.irfft(ft.constant(y)), np.fft.irfft(y), ft.float64)
    same(ft.signal.irfft(ft.constant(y), [7]), np.fft.irfft(y, 7), ft.float64)
    same(ft.signal.rfft2d(r), np.fft.rfft2(R), ft.complex128)
    y2 = np.fft.rfft2(R)
    same(ft.signal.irfft2d(ft.constant(y2)), np.fft.irfft2(y2), ft.float64)
    same(ft.signal.irfft2d(ft.constant(y2), [3, 5]), np.fft.irfft2(y2, [3, 5]), ft.float64)
    np.testing.assert_array_equal(ft.signal.fftshift(r).numpy(), np.fft.fftshift(R))
    np.testing.assert_array_equal(ft.signal.ifftshift(r, axes=1).numpy(), np.fft.ifftshift(R, 1))
    with pytest.raises(ft.errors.InvalidArgumentError, match="fft: expected a complex64"):
        ft.signal.fft(r)


@pytest.mark.parametrize(
    "name, f, ref",
    [
        (
            "fft",
            lambda r: ft.math.real(ft.reduce_sum(ft.signal.fft(ft.complex(r, r * r)) * X)),
            lambda r: (np.fft.fft(r + 1j * r * r) * X).sum().real,
        ),
        (
            "ifft2d",
            lambda r: ft.math.imag(ft.reduce_sum(ft.signal.ifft2d(ft.complex(r, -r)) * X)),
            lambda r: (np.fft.ifft2(r - 1j * r) * X).sum().imag,
        ),
        (
            "rfft[fft_length=4]",
            lambda r: ft.reduce_sum(ft.abs(ft.signal.rfft(r, [4]))),
            lambda r: np.abs(np.fft.rfft(r, 4)).sum(),
        ),
        (
            "rfft2d[fft_length=3,8]",
            lambda r: ft.reduce_sum(ft.abs(ft.signal.rfft2d(r, [3, 8]))),
            lambda r: np.abs(np.fft.rfft2(r, [3, 8])).sum(),
        ),
        (
            "irfft",
            lambda r: ft.reduce_sum(ft.signal.irfft(ft.complex(r, r[::-1])) * np.arange(10.0)),
            lambda r: (np.fft.irfft(r + 1j * r[::-1]) * np.arange(10.0)).sum(),
        ),
        (
            "irfft2d[fft_length=2,7]",
            lambda r: ft.reduce_sum(ft.signal.irfft2d(ft.complex(r, r * r), [2, 7]) ** 2),
            lambda r: (np.fft.irfft2(r + 1j * r * r, [2, 7]) ** 2).sum(),
        ),
        (
            "fftshift",
            lambda r: ft.reduce_sum(ft.signal.fftshift(r) * np.arange(12.0).reshape(2, 6)),
            lambda r: (np.fft.fftshift(r) * np.arange(12.0).reshape(2, 6)).sum(),
        ),
    ],
)
def test_fourier_gradients_match_finite_differences(name, f, ref):
    x = ft.Variable(R)
    with ft.GradientTape() as tape:
        y = f(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), finite_difference(ref, R), atol=1e-6)


def test_fft_second_order():
    # y = sum |fft(r)|^2 = n sum r^2 (Parseval): gradient 2n r, Hessian-vector product 2n v
    x = ft.Variable(R)
    with ft.GradientTape() as outer:
        with ft.GradientTape() as inner:
            y = ft.reduce_sum(ft.square(ft.abs(ft.signal.fft(ft.complex(x, 0 * x)))))
        g = inner.gradient(y, x)
        gv = ft.reduce_sum(g * ft.constant(R[::-1].copy()))
    np.testing.assert_allclose(g.numpy(), 12 * R, atol=1e-12)
    np.testing.assert_allclose(outer.gradient(gv, x).numpy(), 12 * R[::-1], atol=1e-12)


A = np.array([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5], [-1.5, 0.75, 1.0]])


def test_eig_solves_the_eigenproblem():
    for a, dtype in [
        (A, ft.complex128),
        (A.astype(np.float32), ft.complex64),
        (A + 1j * A.T, ft.complex128),
    ]:
        e, v = ft.linalg.eig(ft.constant(a))
        assert e.dtype == dtype and v.dtype == dtype
        tol = 1e-5 if dtype == ft.complex64 else 1e-12
        np.testing.assert_allclose(a @ v.numpy(), v.numpy() * e.numpy(), atol=tol)
        np.testing.assert_allclose(np.linalg.norm(v.numpy(), axis=0), 1.0, rtol=tol)
        np.testing.assert_allclose(ft.eigvals(a).numpy(), e.numpy())
    with pytest.raises(ft.errors.InvalidArgumentError, match="eigvals: input must be square"):
        ft.linalg.eigvals(ft.ones([2, 3]))
    with pytest.raises(ft.errors.InvalidArgumentError, match="eig: expected a float32"):
        ft.linalg.eig(ft.constant([[1, 2], [3, 4]]))


@pytest.mark.parametrize(
    "name, f, ref",
    [
        (
            "eigvals",
            lambda a: ft.reduce_sum(ft.abs(ft.linalg.eigvals(a))),
            lambda a: np.abs(np.linalg.eigvals(a)).sum(),
        ),
        (
            "eig[vectors]",
            lambda a: ft.reduce_sum(
                ft.abs(ft.linalg.eig(a)[1]) ** 2 * np.arange(9.0).reshape(3, 3)
            ),
            lambda a: (np.abs(np.linalg.eig(a)[1]) ** 2 * np.arange(9.0).reshape(3, 3)).sum(),
        ),
    ],
)
def test_eig_gradients_match_finite_differences(name, f, ref):
    x = ft.Variable(A)
    with ft.GradientTape() as tape:
        y = f(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), finite_difference(ref, A), atol=1e-7)


def test_complex_variables_update():
    v = ft.Variable(Z.astype(np.complex64))
    v.assign_add(ft.constant(W.astype(np.complex64)))
    v.assign_sub(ft.constant(Z.astype(np.complex64)) * 0.5)
    np.testing.assert_allclose(v.numpy(), Z + W - 0.5 * Z, rtol=1e-6)
    assert v.dtype == ft.complex64


def test_circulant_operator():
    spectrum = np.array([6 + 0j, 1 + 2j, 1 - 2j])
    h = np.fft.ifft(spectrum)
    dense = np.array([[h[(i - j) % 3] for j in range(3)] for i in range(3)])
    op = ft.linalg.LinearOperatorCirculant(ft.constant(spectrum), input_output_dtype=ft.complex128)
    same(op.to_dense(), dense, ft.complex128)
    same(op.convolution_kernel(), h, ft.complex128)
    x = X[:, :3].T
    same(op.matmul(ft.constant(x)), dense @ x, ft.complex128)
    same(op.matmul(ft.constant(x), adjoint=True), np.conj(dense).T @ x, ft.complex128)
    same(op.determinant(), np.prod(spectrum), ft.complex128)
    same(op.diag_part(), np.diag(dense), ft.complex128)
    # a real operator keeps the real part of the kernel
    real = ft.linalg.LinearOperatorCirculant(
        ft.constant([6.0, 1.0, 1.0]), input_output_dtype=ft.float32
    )
    hr = np.fft.ifft([6.0, 1.0, 1.0]).real
    same(
        real.to_dense(),
        np.array([[hr[(i - j) % 3] for j in range(3)] for i in range(3)]),
        ft.float32,
    )
    with pytest.raises(ValueError, match="at least 1 dimension"):
        ft.linalg.LinearOperatorCirculant(ft.constant(1.0))
