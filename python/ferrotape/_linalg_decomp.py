"""``ft.linalg``'s spectral decompositions: ``eigh``, ``eigvalsh``, ``eig``, ``eigvals``, ``svd``,
``pinv``, ``matrix_rank``.

The values come from LAPACK through numpy on the host, as TensorFlow's CPU kernels compute them
with Eigen; the derivatives are TensorFlow's (``linalg_grad.py``), written in ferrotape's ops on
the recorded outputs, so an outer tape records them (second derivatives) and they agree with
TensorFlow's where TensorFlow defines them. Reading the input on the host means an
``ft.function`` containing these ops runs eagerly, with its one-time warning.
"""

import numpy as _np

from . import _core
from ._exports.linalg import adjoint as _adjoint
from ._exports.linalg import matmul as _matmul
from ._exports.linalg import matrix_transpose as _transpose
from ._exports.linalg import solve as _solve
from .errors import InvalidArgumentError, UnimplementedError

__all__ = ["eig", "eigh", "eigvals", "eigvalsh", "matrix_rank", "pinv", "svd"]


def _floating_matrix(who, x, square=False):
    """``x`` as a float32/float64 tensor of rank >= 2 (square if asked), else a clear error."""
    x = _core.convert_to_tensor(x)
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"{who}: input must be at least 2-D, received shape {x.shape}")
    if square and x.shape[-2] != x.shape[-1]:
        raise InvalidArgumentError(f"{who}: input must be square, received shape {x.shape}")
    if x.dtype.name not in ("float32", "float64"):
        raise InvalidArgumentError(
            f"{who}: expected a float32 or float64 input, received {x.dtype.name}"
        )
    return x


def _host_value(x):
    """``x``'s value as numpy, read so that an ``ft.function`` being traced refuses the trace
    (and runs eagerly, saying so). The read goes through ``identity`` because the trace today
    refuses reads of the values computed inside it but not of the function's own arguments,
    whose values a replay would then have baked in."""
    return _core.identity(x).numpy()


def _record(inputs, values, backward):
    """Tensors holding the host-computed ``values``, recorded as a function of ``inputs`` whose
    derivative is ``backward(outputs, *output_grads)`` (unused outputs get zero gradients)."""
    outputs = [_core.constant(_np.ascontiguousarray(v)) for v in values]
    _core.record_custom_gradient(inputs, outputs, lambda *grads: [backward(outputs, *grads)])
    return outputs


def _safe_reciprocal(x, epsilon=1e-20):
    """``x / (x^2 + eps)``: ``1/x`` away from 0 and 0 at 0, as TensorFlow's gradients use it for
    the ``1 / (λ_j - λ_i)`` terms (repeated values give large, not infinite, gradients)."""
    return x / (x * x + epsilon)


def _off_diagonal(x):
    """``x`` with each innermost square matrix's diagonal set to 0."""
    n = x.shape[-1]
    return x * _core.constant((1.0 - _np.eye(n)).astype(x.dtype.name))


def _diag_matrix(d):
    """The square matrices with the vectors ``d`` (``[..., N]``) on their diagonals."""
    n = d.shape[-1]
    return _core.expand_dims(d, -1) * _core.constant(_np.eye(n, dtype=d.dtype.name))


def _differences(x):
    """``D[..., i, j] = x[..., j] - x[..., i]``."""
    return _core.expand_dims(x, -2) - _core.expand_dims(x, -1)


def _eigh_grad(outputs, grad_e, grad_v):
    """TensorFlow's SelfAdjointEigV2 gradient: ``V (diag(g_e) + F ∘ (V^T g_V)) V^T`` with
    ``F_ij = 1/(λ_j - λ_i)`` off the diagonal, then symmetrised onto the lower triangle (the only
    part of the input the forward reads), the diagonal halved."""
    e, v = outputs
    f = _off_diagonal(_safe_reciprocal(_differences(e)))
    inner = _diag_matrix(grad_e) + f * _matmul(v, grad_v, transpose_a=True)
    grad_a = _matmul(v, _matmul(inner, v, transpose_b=True))
    n = e.shape[-1]
    dtype = e.dtype.name
    strictly_lower = _core.constant(_np.tril(_np.ones((n, n)), -1).astype(dtype))
    half_diagonal = _core.constant((0.5 * _np.eye(n)).astype(dtype))
    return (grad_a + _transpose(grad_a)) * (strictly_lower + half_diagonal)


def eigh(tensor, name=None):
    """The eigen decomposition of each innermost real symmetric matrix.

    ``tensor[..., :, :] @ v[..., :, i] = e[..., i] * v[..., :, i]``, the eigenvalues ascending.
    Only the lower triangle of ``tensor`` is read, as TensorFlow does. Each eigenvector is
    defined up to its sign (and, for a repeated eigenvalue, up to a rotation within its
    eigenspace): as in TensorFlow, which sign comes out is not specified.

    Args:
        tensor: A float32 or float64 tensor of shape ``[..., N, N]``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair ``(e, v)``: the eigenvalues ``[..., N]`` and the eigenvectors ``[..., N, N]``
        (column ``i`` belongs to ``e[..., i]``).

    Raises:
        InvalidArgumentError: for a non-square, lower-rank or non-floating input.

    Gradient (TensorFlow's): ``V (diag(ḡ_e) + F ∘ (V^T ḡ_V)) V^T`` with
    ``F_ij = 1/(λ_j - λ_i)`` for ``i != j`` (infinite for repeated eigenvalues, where the
    eigenvectors are not unique), added to its transpose and kept on the lower triangle, the
    diagonal halved.

    >>> import ferrotape as ft
    >>> e, v = ft.linalg.eigh(ft.constant([[2.0, 1.0], [1.0, 2.0]], ft.float64))
    >>> e.numpy()
    array([1., 3.])
    >>> abs(v.numpy()).round(4)
    array([[0.7071, 0.7071],
           [0.7071, 0.7071]])
    """
    del name
    a = _floating_matrix("eigh", tensor, square=True)
    e, v = _np.linalg.eigh(_host_value(a), UPLO="L")
    e, v = _record([a], [e, v], _eigh_grad)
    return e, v


def eigvalsh(tensor, name=None):
    """The eigenvalues, ascending, of each innermost real symmetric matrix.

    Only the lower triangle of ``tensor`` is read, as TensorFlow does.

    Args:
        tensor: A float32 or float64 tensor of shape ``[..., N, N]``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[..., N]``, each row ascending.

    Raises:
        InvalidArgumentError: for a non-square, lower-rank or non-floating input.

    Gradient: ``V diag(ḡ) V^T`` (the eigenvectors ``V``), symmetrised onto the lower triangle
    as ``eigh``'s.

    >>> import ferrotape as ft
    >>> ft.linalg.eigvalsh(ft.constant([[2.0, 1.0], [1.0, 2.0]], ft.float64)).numpy()
    array([1., 3.])
    """
    del name
    try:
        return eigh(tensor)[0]
    except InvalidArgumentError as err:
        raise InvalidArgumentError(str(err).replace("eigh:", "eigvalsh:", 1)) from None


def _svd_grad(m, n, full_matrices):
    """TensorFlow's Svd gradient for an ``m x n`` input (``linalg_grad.py``, real case)."""

    def grad(outputs, grad_s, grad_u, grad_v):
        s, u, v = outputs
        rows, cols = m, n
        if rows > cols:
            # The gradient of A^T = V S U^T, transposed at the end.
            rows, cols = cols, rows
            u, v = v, u
            grad_u, grad_v = grad_v, grad_u
        if full_matrices and cols - rows > 1:
            raise UnimplementedError(
                "svd: the gradient is not implemented for abs(m - n) > 1 when full_matrices "
                f"is True. Received: m={m} and n={n}"
            )
        s_mat = _diag_matrix(s)
        f = _off_diagonal(_safe_reciprocal(_differences(_core.square(s))))
        v1, grad_v1 = v[..., :, :rows], grad_v[..., :, :rows]
        f_u = f * _matmul(u, grad_u, transpose_a=True)
        f_v = f * _matmul(v1, grad_v1, transpose_a=True)
        inner = (
            _diag_matrix(grad_s)
            + _matmul(f_u + _transpose(f_u), s_mat)
            + _matmul(s_mat, f_v + _transpose(f_v))
        )
        grad_a = _matmul(u, _matmul(inner, v1, transpose_b=True))
        if rows != cols:
            gv1t = _transpose(grad_v1)
            term = gv1t - _matmul(_matmul(gv1t, v1), v1, transpose_b=True)
            if full_matrices:
                v2, grad_v2 = v[..., :, rows:], grad_v[..., :, rows:]
                term = term - _matmul(_matmul(v1, grad_v2, transpose_a=True), v2, transpose_b=True)
            u_s_inv = u * _core.expand_dims(_safe_reciprocal(s), -2)
            grad_a = grad_a + _matmul(u_s_inv, term)
        return _transpose(grad_a) if m > n else grad_a

    return grad


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """The singular value decomposition of each innermost matrix.

    ``tensor = u @ diag(s) @ transpose(v)``, the singular values descending. TensorFlow's order
    and layout: ``s, u, v``, with ``v`` itself (not its transpose, unlike numpy's ``vh``). Each
    pair of singular vectors is defined up to a common sign, which is not specified.

    Args:
        tensor: A float32 or float64 tensor of shape ``[..., M, N]``.
        full_matrices: If true, ``u`` is ``[..., M, M]`` and ``v`` ``[..., N, N]``; else
            ``[..., M, P]`` and ``[..., N, P]`` with ``P = min(M, N)``.
        compute_uv: If false, only ``s`` is computed and returned.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``s`` of shape ``[..., P]`` if ``compute_uv`` is false, else the triple ``(s, u, v)``.

    Raises:
        InvalidArgumentError: for a lower-rank or non-floating input.
        UnimplementedError: when a gradient is taken with ``full_matrices=True`` and
            ``|M - N| > 1`` (as TensorFlow).

    Gradient (TensorFlow's, Townsend's formula): with ``F_ij = 1/(s_j^2 - s_i^2)`` off the
    diagonal, ``U (diag(ḡ_s) + (F∘U^Tḡ_U + (F∘U^Tḡ_U)^T) S + S (F∘V^Tḡ_V + (..)^T)) V^T``, plus
    ``U S^-1 (ḡ_V^T (I - V V^T))`` for a non-square input (on the transposed problem when
    ``M > N``); repeated singular values give unbounded gradients.

    >>> import ferrotape as ft
    >>> s, u, v = ft.linalg.svd(ft.constant([[3.0, 0.0], [0.0, -4.0]], ft.float64))
    >>> s.numpy()
    array([4., 3.])
    >>> (u.numpy() @ ft.linalg.diag(s).numpy() @ v.numpy().T).round(6)
    array([[ 3.,  0.],
           [ 0., -4.]])
    """
    del name
    a = _floating_matrix("svd", tensor)
    m, n = a.shape[-2], a.shape[-1]
    # The values-only case differentiates as TensorFlow's (U diag(ḡ_s) V^T) through the same
    # recorded decomposition, so its second derivative is recorded too.
    full = bool(full_matrices) and bool(compute_uv)
    u, s, vh = _np.linalg.svd(_host_value(a), full_matrices=full)
    s, u, v = _record([a], [s, u, _np.swapaxes(vh, -1, -2)], _svd_grad(m, n, full))
    return (s, u, v) if compute_uv else s


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse of each innermost matrix, from its SVD.

    Singular values at most ``rcond * max(s)`` count as zero: ``pinv(a) = V diag(1/s) U^T`` over
    the others (TensorFlow's construction, so the gradient is ``svd``'s through it).

    Args:
        a: A float32 or float64 tensor of shape ``[..., M, N]``.
        rcond: The relative cutoff; by default ``10 * max(M, N) * eps`` of the dtype.
        validate_args: Unused (the input is always checked).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[..., N, M]`` and ``a``'s dtype.

    Raises:
        InvalidArgumentError: for a lower-rank or non-floating input.

    >>> import ferrotape as ft
    >>> ft.linalg.pinv(ft.constant([[1.0, 0.0], [0.0, 0.0]], ft.float64)).numpy()
    array([[1., 0.],
           [0., 0.]])
    """
    del validate_args, name
    a = _floating_matrix("pinv", a)
    dtype = a.dtype.name
    if rcond is None:
        rcond = 10.0 * max(a.shape[-2], a.shape[-1]) * _np.finfo(dtype).eps
    rcond = _core.convert_to_tensor(rcond, dtype=a.dtype)
    s, u, v = svd(a)
    cutoff = rcond * _core.reduce_max(s, -1, keepdims=True)
    # Small singular values become inf, so that 1/s is 0 without a NaN gradient.
    infinite = _core.constant(_np.full(s.shape.as_list(), _np.inf, dtype))
    s = _core.select(_core.greater(s, cutoff), s, infinite)
    return _matmul(v / _core.expand_dims(s, -2), u, transpose_b=True)


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The rank of each innermost matrix: how many singular values exceed ``tol``.

    Args:
        a: A float32 or float64 tensor of shape ``[..., M, N]``.
        tol: The threshold; by default ``eps * max(M, N) * max(s)`` (TensorFlow's).
        validate_args: Unused (the input is always checked).
        name: Ignored (TensorFlow's op name).

    Returns:
        An int32 tensor of shape ``[...]``.

    Raises:
        InvalidArgumentError: for a lower-rank or non-floating input.

    >>> import ferrotape as ft
    >>> ft.linalg.matrix_rank(ft.constant([[1.0, 2.0], [2.0, 4.0]])).numpy()
    np.int32(1)
    """
    del validate_args, name
    a = _floating_matrix("matrix_rank", a)
    s = svd(a, compute_uv=False)
    if tol is None:
        eps = _np.finfo(a.dtype.name).eps
        tol = eps * max(a.shape[-2], a.shape[-1]) * _core.reduce_max(s, -1, keepdims=True)
    tol = _core.convert_to_tensor(tol, dtype=a.dtype)
    return _core.reduce_sum(_core.cast(_core.greater(s, tol), "int32"), -1)


def _complex_solve(a, b):
    """``a^-1 b`` for complex ``a`` and ``b``, through the real system
    ``[[ar, -ai], [ai, ar]] [xr; xi] = [br; bi]`` (``ft.linalg.solve`` is real), so that its
    gradient comes from the real solve's."""
    ar, ai, br, bi = _core.real(a), _core.imag(a), _core.real(b), _core.imag(b)
    big = _core.concat([_core.concat([ar, _core.negative(ai)], -1), _core.concat([ai, ar], -1)], -2)
    x = _solve(big, _core.concat([br, bi], -2))
    n = a.shape[-1]
    return _core.complex(x[..., :n, :], x[..., n:, :])


def _eig_grad(source_dtype):
    """TensorFlow's Eig gradient (``linalg_grad.py``): with ``F_ij = conj(1/(λ_j - λ_i))`` off
    the diagonal, ``V^-H (diag(g_e) + F ∘ (V^H g_V - V^H V diag(Re diag(V^H g_V)))) V^H``, cast
    back to the input's dtype (the real part for a real input)."""

    def grad(outputs, grad_e, grad_v):
        e, v = outputs
        vt = _adjoint(v)
        f = _core.conj(_off_diagonal(_safe_reciprocal(_differences(e))))
        vgv = _matmul(vt, grad_v)
        eye = _core.constant(_np.eye(e.shape[-1], dtype=e.dtype.name))
        diagonal = _core.cast(_core.real(_core.reduce_sum(vgv * eye, -1)), e.dtype)
        mid = _diag_matrix(grad_e) + f * (vgv - _matmul(_matmul(vt, v), _diag_matrix(diagonal)))
        return _core.cast(_complex_solve(vt, _matmul(mid, vt)), source_dtype)

    return grad


def eig(tensor, name=None):
    """The eigen decomposition of each innermost square matrix (not necessarily symmetric).

    The eigenvalues come in LAPACK's order and each eigenvector has unit norm with its largest
    component real (numpy's ``eig``); TensorFlow (Eigen) may order them differently and give
    the vectors another phase, so compare order- and phase-free quantities.

    Args:
        tensor: A float32, float64, complex64 or complex128 tensor of shape ``[..., N, N]``.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(e, v)``: the eigenvalues ``[..., N]`` and eigenvectors (columns) ``[..., N, N]``,
        complex64 for float32/complex64 input and complex128 otherwise.

    Raises:
        InvalidArgumentError: for a non-square, lower-rank or integer input.

    Gradient: TensorFlow's (``V^-H (diag(g_e) + F ∘ (V^H g_V - ...)) V^H``); repeated
    eigenvalues give large, not infinite, gradients.

    >>> import ferrotape as ft
    >>> e, v = ft.linalg.eig(ft.constant([[2.0, 0.0], [0.0, 3.0]], ft.float64))
    >>> e.numpy()
    array([2.+0.j, 3.+0.j])
    """
    del name
    x = _core.convert_to_tensor(tensor)
    if x.dtype.name not in ("float32", "float64", "complex64", "complex128"):
        raise InvalidArgumentError(
            f"eig: expected a float32, float64, complex64 or complex128 input, "
            f"received {x.dtype.name}"
        )
    if len(x.shape) < 2 or x.shape[-2] != x.shape[-1]:
        raise InvalidArgumentError(f"eig: input must be square matrices, received shape {x.shape}")
    out = "complex64" if x.dtype.name in ("float32", "complex64") else "complex128"
    e, v = _np.linalg.eig(_host_value(x))
    e, v = _record([x], [e.astype(out), v.astype(out)], _eig_grad(x.dtype))
    return e, v


def eigvals(tensor, name=None):
    """The eigenvalues of each innermost square matrix (not necessarily symmetric).

    Args:
        tensor: A float32, float64, complex64 or complex128 tensor of shape ``[..., N, N]``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A complex tensor of shape ``[..., N]``, in ``eig``'s order (see its note on ordering).

    Raises:
        InvalidArgumentError: for a non-square, lower-rank or integer input.

    Gradient: TensorFlow's, ``V^-H diag(g) V^H`` with ``V`` the eigenvectors.

    >>> import ferrotape as ft
    >>> ft.linalg.eigvals(ft.constant([[0.0, -1.0], [1.0, 0.0]], ft.float64)).numpy()
    array([0.+1.j, 0.-1.j])
    """
    del name
    try:
        return eig(tensor)[0]
    except InvalidArgumentError as err:
        raise InvalidArgumentError(str(err).replace("eig:", "eigvals:", 1)) from None
