"""``ft.linalg.logm``: the principal matrix logarithm, computed on the host with numpy.

numpy has no ``logm`` and no Schur decomposition, so this is the transformation-free inverse
scaling and squaring method (Higham, *Functions of Matrices*, §11.5; Al-Mohy and Higham 2012):
take square roots ``A^(1/2^s)`` (the scaled product form of the Denman–Beavers iteration, which
is numerically stable) until ``X = A^(1/2^s) - I`` has 1-norm at most 1/2, then
``log A = 2^s r(X)`` with ``r`` the [12/12] Padé approximant of ``log(1 + x)``, evaluated as its
Gauss–Legendre partial fractions ``sum_j w_j X (I + x_j X)^-1``. Kenney and Laub's bound puts the
Padé error for ``||X||_1 <= 1/2`` below float64's rounding. Working on the whole matrix (not on
eigenvectors) keeps the result accurate for non-normal matrices. (``ft.linalg.sqrtm`` runs the
unscaled iteration on real tensors so that it is differentiable; with no gradient to keep and a
complex input, the square roots here run in numpy.)

TensorFlow registers no gradient for ``MatrixLogarithm``; asking for one here raises the same
``LookupError``.
"""

import numpy as _np

from . import _core
from ._linalg_decomp import _host_value
from .errors import InvalidArgumentError

__all__ = ["logm"]

# [12/12] Padé of log(1 + x) as Gauss–Legendre quadrature of the integral of x / (1 + t x) over
# t in [0, 1]: nodes and weights moved from [-1, 1] to [0, 1].
_NODES, _WEIGHTS = _np.polynomial.legendre.leggauss(12)
_NODES, _WEIGHTS = (_NODES + 1.0) / 2.0, _WEIGHTS / 2.0
_PADE_RADIUS = 0.5
_MAX_SQUARE_ROOTS = 100
_MAX_ITERATIONS = 100


def _sqrtm(a, eye):
    """The principal square root of ``a`` (no eigenvalue on the closed negative real axis) by the
    product-form Denman–Beavers iteration, determinant-scaled until it is close (Higham 2008,
    eq. 6.29): ``M -> I`` and ``Y -> a^(1/2)``."""
    n = a.shape[0]
    m, y = a, a
    for _ in range(_MAX_ITERATIONS):
        m_inv = _np.linalg.inv(m)
        distance = _np.abs(m - eye).sum(axis=0).max()
        # Scaling speeds up the early steps; near convergence it only adds rounding.
        mu = _np.exp(-_np.linalg.slogdet(m)[1] / (2 * n)) if distance > 1e-2 else 1.0
        y = 0.5 * mu * y @ (eye + m_inv / mu**2)
        m = 0.5 * (eye + (mu**2 * m + m_inv / mu**2) / 2.0)
        if distance <= 1e-15 * n:
            break
    return y


def _branch_rotation(a):
    """An angle ``phi`` such that ``e^(-i phi) a`` has no eigenvalue on the negative real axis
    while ``log(a) = log(e^(-i phi) a) + i phi I`` stays the principal logarithm: half the gap
    below the lowest eigenvalue argument, used only when an eigenvalue lies on the cut (where the
    square-root iteration breaks down). An eigenvalue on the cut takes argument +pi, the principal
    branch's, whatever the sign of its rounding-level imaginary part."""
    e = _np.linalg.eigvals(a)
    scale = _np.abs(e).max()
    on_cut = (e.real < 0) & (_np.abs(e.imag) <= 1e-12 * scale)
    if not on_cut.any():
        return 0.0
    angles = _np.where(on_cut, _np.pi, _np.angle(e))
    return (angles.min() + _np.pi) / 2.0


def _logm_one(a):
    """The principal logarithm of one complex128 matrix; NaN where it is undefined (a singular
    matrix), as TensorFlow gives."""
    n = a.shape[0]
    eye = _np.eye(n, dtype=a.dtype)
    if not _np.isfinite(a).all():
        return _np.full(a.shape, complex(_np.nan, _np.nan))
    phi = _branch_rotation(a)
    a = a * _np.exp(-1j * phi)
    try:
        squarings = 0
        while _np.abs(a - eye).sum(axis=0).max() > _PADE_RADIUS:
            if squarings == _MAX_SQUARE_ROOTS or _np.linalg.cond(a) > 1e300:
                return _np.full(a.shape, complex(_np.nan, _np.nan))
            a = _sqrtm(a, eye)
            squarings += 1
    except _np.linalg.LinAlgError:
        return _np.full(a.shape, complex(_np.nan, _np.nan))
    x = a - eye
    r = sum(w * _np.linalg.solve(eye + t * x, x) for t, w in zip(_NODES, _WEIGHTS, strict=True))
    return 2.0**squarings * r + 1j * phi * eye


def _no_gradient(*grads):
    del grads
    raise LookupError("gradient registry has no entry for: MatrixLogarithm")


def logm(input, name=None):  # noqa: A002
    """Computes the matrix logarithm of one or more square matrices.

    The principal logarithm ``log(A)``: the matrix whose exponential is ``A`` and whose
    eigenvalues have imaginary parts in ``(-pi, pi]``. It is undefined for a singular matrix (the
    result is then NaN, as TensorFlow's). Computed on the host by inverse scaling and squaring
    (repeated square roots, then a Padé approximant), accurate for non-normal matrices; a
    complex64 input is computed in double precision and rounded.

    Args:
        input: A complex64 or complex128 tensor of shape ``[..., M, M]``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape and dtype.

    Raises:
        InvalidArgumentError: for a real or integer input (TensorFlow's kernel takes complex
            only), a non-square or a lower-rank input.

    Gradient: none. TensorFlow registers no gradient for ``MatrixLogarithm``, so differentiating
    through ``logm`` raises ``LookupError`` as it does there.

    >>> import ferrotape as ft
    >>> ft.linalg.logm(ft.constant([[1.0, 1.0], [0.0, 1.0]], ft.complex128)).numpy().real
    array([[0., 1.],
           [0., 0.]])
    """
    del name
    x = _core.convert_to_tensor(input)
    if x.dtype.name not in ("complex64", "complex128"):
        raise InvalidArgumentError(
            f"logm: expected a complex64 or complex128 input, received {x.dtype.name}"
        )
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"logm: input must be at least 2-D, received shape {x.shape}")
    if x.shape[-2] != x.shape[-1]:
        raise InvalidArgumentError(f"logm: input must be square, received shape {x.shape}")
    value = _host_value(x).astype(_np.complex128)
    if value.size == 0:
        result = value
    else:
        result = _np.stack([_logm_one(a) for a in value.reshape(-1, *value.shape[-2:])])
    output = _core.constant(_np.ascontiguousarray(result.reshape(value.shape).astype(x.dtype.name)))
    _core.record_custom_gradient([x], [output], _no_gradient)
    return output
