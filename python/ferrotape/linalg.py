"""``ft.linalg``: matrix products and dense linear algebra.

The names defined here are compositions of native ops (masks, slices, ``matmul``, ``det``), so
their gradients come from the ops they are built from. The spectral decompositions (``eigh``,
``svd`` and the names built on them) are computed on the host with TensorFlow's derivatives
(``_linalg_decomp.py``), as is ``logm`` (``_linalg_logm.py``, which like TensorFlow has none).
"""

import numpy as _np

from . import _core
from ._exports.linalg import *  # noqa: F403 (the native names: scripts/gen_bindings.py)
from ._exports.linalg import __all__ as _native
from ._exports.linalg import det as _det
from ._exports.linalg import inv, matrix_transpose
from ._exports.linalg import matmul as _matmul
from ._exports.linalg import solve as _solve
from ._linalg_decomp import eig, eigh, eigvals, eigvalsh, matrix_rank, pinv, svd
from ._linalg_logm import logm
from ._linear_operator import *  # noqa: F403 (the LinearOperator family)
from ._linear_operator import __all__ as _linear_operators
from ._nn_impl import l2_normalize
from .clip import global_norm
from .einsum import einsum, tensordot
from .errors import FailedPreconditionError, InvalidArgumentError, UnimplementedError
from .norms import norm


def _matrix(who, x):
    """``x`` as a tensor of rank >= 2 (TF's matrix ops refuse vectors with InvalidArgumentError)."""
    x = _core.convert_to_tensor(x)
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"{who}: input must be at least 2-D, received shape {x.shape}")
    return x


def _scalar_k(who, k):
    if not isinstance(k, (int, _np.integer)):
        raise UnimplementedError(
            f"{who}: only a single diagonal offset k (an int) is supported, received {k!r}"
        )
    return int(k)


def _mask_where(mask, x):
    """``x`` where the constant boolean ``mask`` (broadcast over the batch axes) holds, else 0."""
    return _core.select(_core.broadcast_to(_core.constant(mask), x.shape), x, _core.zeros_like(x))


def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """The ``k``-th diagonal of each innermost matrix of ``input``.

    Args:
        input: A tensor of rank ``r >= 2`` and shape ``[..., M, N]``.
        name: Ignored (TensorFlow's op name).
        k: The diagonal offset: 0 is the main diagonal, positive above it, negative below.
            Only a single int is supported (TensorFlow also takes a band ``(k0, k1)``).
        padding_value: Unused for a single diagonal (TensorFlow pads only bands).
        align: Unused for a single diagonal.

    Returns:
        A tensor of shape ``[..., L]`` with ``L = min(M + min(k, 0), N - max(k, 0))``.

    Gradient: the upstream gradient placed back on the diagonal, zeros elsewhere.

    >>> import ferrotape as ft
    >>> ft.linalg.diag_part(ft.constant([[1.0, 2.0], [3.0, 4.0]])).numpy()
    array([1., 4.], dtype=float32)
    >>> ft.linalg.diag_part(ft.constant([[1.0, 2.0], [3.0, 4.0]]), k=1).numpy()
    array([2.], dtype=float32)
    """
    del name, padding_value, align
    x = _matrix("diag_part", input)
    k = _scalar_k("diag_part", k)
    m, n = x.shape[-2], x.shape[-1]
    if not -m < k < n:
        raise InvalidArgumentError(
            f"diag_part: k must be in ({-m}, {n}) for a {m}x{n} matrix, received {k}"
        )
    x = x[..., max(-k, 0) :, max(k, 0) :]
    size = min(x.shape[-2], x.shape[-1])
    x = x[..., :size, :size]
    return _core.reduce_sum(_mask_where(_np.eye(size, dtype=bool), x), -1)


def trace(x, name=None):
    """The sum of the main diagonal of each innermost matrix of ``x``.

    Args:
        x: A tensor of shape ``[..., M, N]``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[...]`` and ``x``'s dtype.

    Gradient: the identity matrix times the upstream gradient.

    >>> import ferrotape as ft
    >>> ft.linalg.trace(ft.constant([[1.0, 2.0], [3.0, 4.0]])).numpy()
    np.float32(5.0)
    """
    del name
    return _core.reduce_sum(diag_part(x), -1)


def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """A (batch of) square matrices with ``diagonal`` on the ``k``-th diagonal.

    Args:
        diagonal: A tensor of shape ``[..., L]``.
        name: Ignored (TensorFlow's op name).
        k: The diagonal offset (a single int): the result is ``(L + |k|) x (L + |k|)``.
        num_rows: Only -1 (derived from ``L`` and ``k``) is supported.
        num_cols: Only -1 is supported.
        padding_value: The value off the diagonal.
        align: Unused for a single diagonal.

    Returns:
        A tensor of shape ``[..., L + |k|, L + |k|]`` and ``diagonal``'s dtype.

    Gradient: the diagonal of the upstream gradient.

    >>> import ferrotape as ft
    >>> ft.linalg.diag(ft.constant([1.0, 2.0])).numpy()
    array([[1., 0.],
           [0., 2.]], dtype=float32)
    """
    del name, align
    d = _core.convert_to_tensor(diagonal)
    if len(d.shape) < 1:
        raise InvalidArgumentError(f"diag: diagonal must be at least 1-D, received shape {d.shape}")
    k = _scalar_k("diag", k)
    if num_rows != -1 or num_cols != -1:
        raise UnimplementedError("diag: num_rows and num_cols other than -1 are not supported")
    size = d.shape[-1]
    rows = _core.broadcast_to(_core.expand_dims(d, -2), [*d.shape, size])
    square = _mask_where(_np.eye(size, dtype=bool), rows)
    batch = [[0, 0]] * (len(d.shape) - 1)
    if k >= 0:
        square = _core.pad(square, [*batch, [0, k], [k, 0]])
    else:
        square = _core.pad(square, [*batch, [-k, 0], [0, -k]])
    if padding_value != 0:
        off = _np.logical_not(_np.eye(size + abs(k), k=k, dtype=bool))
        fill = _core.cast(_core.constant(padding_value), d.dtype)
        square = _core.select(
            _core.broadcast_to(_core.constant(off), square.shape),
            _core.broadcast_to(fill, square.shape),
            square,
        )
    return square


def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """``input`` with its main (or ``k``-th) diagonal replaced by ``diagonal``.

    Args:
        input: A tensor of shape ``[..., M, N]``.
        diagonal: A tensor of shape ``[..., L]``, ``L`` the length of the ``k``-th diagonal.
        name: Ignored (TensorFlow's op name).
        k: The diagonal offset (a single int).
        align: Unused for a single diagonal.

    Returns:
        A tensor of ``input``'s shape and dtype.

    Gradient: ``input`` gets the upstream gradient off the diagonal, ``diagonal`` its diagonal.

    >>> import ferrotape as ft
    >>> ft.linalg.set_diag(ft.ones([2, 2]), ft.constant([5.0, 6.0])).numpy()
    array([[5., 1.],
           [1., 6.]], dtype=float32)
    """
    del name, align
    x = _matrix("set_diag", input)
    d = _core.convert_to_tensor(diagonal)
    k = _scalar_k("set_diag", k)
    m, n = x.shape[-2], x.shape[-1]
    if not -m < k < n:
        raise InvalidArgumentError(
            f"set_diag: k must be in ({-m}, {n}) for a {m}x{n} matrix, received {k}"
        )
    length = min(m + min(k, 0), n - max(k, 0))
    if len(d.shape) < 1 or d.shape[-1] != length:
        raise InvalidArgumentError(
            f"set_diag: diagonal must have shape [..., {length}] for input shape {x.shape}, "
            f"received {d.shape}"
        )
    placed = diag(d, k=k)  # square, (length + |k|) on each side
    rows, cols = placed.shape[-2], placed.shape[-1]
    batch = [[0, 0]] * (len(placed.shape) - 2)
    if rows < m or cols < n:
        placed = _core.pad(placed, [*batch, [0, max(m - rows, 0)], [0, max(n - cols, 0)]])
    placed = placed[..., :m, :n]
    on = _np.eye(m, n, k=k, dtype=bool)
    shape = _np.broadcast_shapes(tuple(x.shape), tuple(placed.shape))
    return _core.select(
        _core.broadcast_to(_core.constant(on), list(shape)),
        _core.broadcast_to(placed, list(shape)),
        _core.broadcast_to(x, list(shape)),
    )


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """``input`` with everything outside a central band of each innermost matrix set to 0.

    Entry ``(i, j)`` is kept when ``(num_lower < 0 or i - j <= num_lower)`` and
    ``(num_upper < 0 or j - i <= num_upper)``.

    Args:
        input: A tensor of shape ``[..., M, N]``.
        num_lower: The number of subdiagonals to keep; negative keeps the whole lower triangle.
        num_upper: The number of superdiagonals to keep; negative keeps the whole upper triangle.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape and dtype.

    Gradient: the upstream gradient inside the band, zeros outside.

    >>> import ferrotape as ft
    >>> ft.linalg.band_part(ft.ones([3, 3]), 0, -1).numpy()
    array([[1., 1., 1.],
           [0., 1., 1.],
           [0., 0., 1.]], dtype=float32)
    """
    del name
    x = _matrix("band_part", input)
    m, n = x.shape[-2], x.shape[-1]
    lower, upper = int(num_lower), int(num_upper)
    if lower > m or upper > n:
        raise InvalidArgumentError(
            f"band_part: num_lower must be <= {m} and num_upper <= {n}, "
            f"received {lower} and {upper}"
        )
    i, j = _np.ogrid[:m, :n]
    keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    return _mask_where(keep, x)


def tensor_diag(diagonal, name=None):
    """The tensor with ``diagonal`` on its diagonal: shape ``D`` becomes ``D + D``.

    ``output[i1, ..., ik, i1, ..., ik] = diagonal[i1, ..., ik]``, zeros elsewhere.

    Args:
        diagonal: A tensor of rank ``k >= 1``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of rank ``2k`` and ``diagonal``'s dtype.

    Gradient: the diagonal of the upstream gradient.

    >>> import ferrotape as ft
    >>> ft.linalg.tensor_diag(ft.constant([1, 2])).numpy()
    array([[1, 0],
           [0, 2]], dtype=int32)
    """
    del name
    d = _core.convert_to_tensor(diagonal)
    shape = list(d.shape)
    if not shape:
        raise InvalidArgumentError("tensor_diag: diagonal must be at least 1-D, received a scalar")
    return _core.reshape(diag(_core.reshape(d, [-1])), shape + shape)


def tensor_diag_part(input, name=None):  # noqa: A002
    """The diagonal of a tensor of shape ``D + D``: the inverse of ``tensor_diag``.

    Args:
        input: A tensor of even rank ``2k`` whose first ``k`` axes equal its last ``k``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``D`` (the first ``k`` axes) and ``input``'s dtype.

    Gradient: the upstream gradient placed on the diagonal.

    >>> import ferrotape as ft
    >>> ft.linalg.tensor_diag_part(ft.constant([[1, 2], [3, 4]])).numpy()
    array([1, 4], dtype=int32)
    """
    del name
    x = _core.convert_to_tensor(input)
    shape = list(x.shape)
    half = len(shape) // 2
    if not shape or len(shape) % 2 or shape[:half] != shape[half:]:
        raise InvalidArgumentError(
            "tensor_diag_part: input must have even rank 2k with shape D + D, "
            f"received shape {x.shape}"
        )
    size = int(_np.prod(shape[:half]))
    return _core.reshape(diag_part(_core.reshape(x, [size, size])), shape[:half])


def matvec(
    a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False, name=None
):
    """The matrix-vector product ``a @ b`` over the innermost axes (batch axes broadcast).

    Args:
        a: A tensor of shape ``[..., M, N]``.
        b: A tensor of shape ``[..., N]`` and ``a``'s dtype.
        transpose_a: If true, ``a`` is transposed first (``[..., N, M]`` is then expected).
        adjoint_a: Same as ``transpose_a`` for real dtypes.
        a_is_sparse: Ignored (a TensorFlow performance hint).
        b_is_sparse: Ignored.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[..., M]``.

    Gradient: as ``matmul``'s.

    >>> import ferrotape as ft
    >>> ft.linalg.matvec(ft.constant([[1.0, 2.0], [3.0, 4.0]]), ft.constant([1.0, 1.0])).numpy()
    array([3., 7.], dtype=float32)
    """
    del a_is_sparse, b_is_sparse, name
    b = _core.convert_to_tensor(b)
    if len(b.shape) < 1:
        raise InvalidArgumentError(f"matvec: b must be at least 1-D, received shape {b.shape}")
    product = _matmul(
        _matrix("matvec", a), _core.expand_dims(b, -1), transpose_a=transpose_a or adjoint_a
    )
    return _core.squeeze(product, [-1])


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002
    """``tensor`` divided by its norm, and the norm: ``(tensor / norm, norm)``.

    Args:
        tensor: A floating tensor.
        ord: The norm's order, as for ``ft.linalg.norm``.
        axis: The axes of the norm, as for ``ft.linalg.norm`` (``None``: the whole tensor).
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair: the normalized tensor (``tensor``'s shape) and the norm (kept dimensions).

    Gradient: through ``norm`` and the division.

    >>> import ferrotape as ft
    >>> unit, n = ft.linalg.normalize(ft.constant([3.0, 4.0]))
    >>> unit.numpy(), n.numpy()
    (array([0.6, 0.8], dtype=float32), array([5.], dtype=float32))
    """
    del name
    magnitude = norm(tensor, ord=ord, axis=axis, keepdims=True)
    return _core.truediv(tensor, magnitude), magnitude


def cross(a, b, name=None):
    """The pairwise cross product of the 3-vectors on the last axis of ``a`` and ``b``.

    Args:
        a: A tensor of shape ``[..., 3]``.
        b: A tensor of ``a``'s shape and dtype.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[..., 3]``.

    Gradient: ``da = b x g`` and ``db = g x a``.

    >>> import ferrotape as ft
    >>> ft.linalg.cross(ft.constant([1.0, 0.0, 0.0]), ft.constant([0.0, 1.0, 0.0])).numpy()
    array([0., 0., 1.], dtype=float32)
    """
    del name
    a, b = _core.convert_to_tensor(a), _core.convert_to_tensor(b)
    if list(a.shape) != list(b.shape):
        raise InvalidArgumentError(
            f"cross: a and b must have the same shape, received {a.shape} and {b.shape}"
        )
    if not a.shape or a.shape[-1] != 3:
        # TensorFlow's Cross kernel reports this as a failed precondition.
        raise FailedPreconditionError(
            f"cross: the last axis must have length 3, received shape {a.shape}"
        )
    a1, a2, a3 = _core.unstack(a, axis=-1)
    b1, b2, b3 = _core.unstack(b, axis=-1)
    return _core.stack([a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1], axis=-1)


def slogdet(input, name=None):  # noqa: A002
    """The sign and the log of the absolute determinant of each innermost square matrix.

    Computed from ``det``, so it overflows where the determinant itself leaves the dtype's range
    (TensorFlow works from an LU factorisation instead).

    Args:
        input: A floating tensor of shape ``[..., N, N]``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair ``(sign, log_abs_determinant)`` of tensors of shape ``[...]``.

    Gradient: ``log_abs_determinant`` has gradient ``inverse(input)^T``; ``sign`` has none.

    >>> import ferrotape as ft
    >>> sign, logabs = ft.linalg.slogdet(ft.constant([[0.0, 2.0], [1.0, 0.0]]))
    >>> sign.numpy(), round(float(logabs.numpy()), 4)
    (np.float32(-1.0), 0.6931)
    """
    del name
    d = _det(input)
    return _core.sign(_core.stop_gradient(d)), _core.log(_core.abs(d))


def logdet(matrix, name=None):
    """The log of the determinant of each innermost Hermitian positive-definite matrix.

    Computed as ``log(det(matrix))`` (TensorFlow uses a Cholesky factorisation), so it overflows
    where the determinant leaves the dtype's range.

    Args:
        matrix: A floating tensor of shape ``[..., N, N]``, positive definite.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[...]``.

    Gradient: ``inverse(matrix)^T`` times the upstream gradient.

    >>> import ferrotape as ft
    >>> round(float(ft.linalg.logdet(ft.constant([[2.0, 0.0], [0.0, 3.0]])).numpy()), 4)
    1.7918
    """
    del name
    return _core.log(_det(matrix))


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """``x`` with ``matrix @ x = rhs`` for a lower (or upper) triangular ``matrix``.

    Only the triangle named by ``lower`` is read; the other one may hold anything.

    Args:
        matrix: A floating tensor of shape ``[..., M, M]``.
        rhs: A tensor of shape ``[..., M, K]`` and ``matrix``'s dtype.
        lower: If true, ``matrix`` is lower triangular, else upper triangular.
        adjoint: If true, solve with the transpose of ``matrix`` instead.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[..., M, K]``.

    Gradient: as ``solve``'s, restricted to the triangle read.

    >>> import ferrotape as ft
    >>> ft.linalg.triangular_solve([[2.0, 9.0], [1.0, 1.0]], [[2.0], [2.0]]).numpy()
    array([[1.],
           [1.]], dtype=float32)
    """
    del name
    triangle = band_part(matrix, -1, 0) if lower else band_part(matrix, 0, -1)
    return _solve(triangle, rhs, adjoint=adjoint)


def cholesky_solve(chol, rhs, name=None):
    """``x`` with ``A @ x = rhs``, given the Cholesky factor ``chol`` of ``A = chol @ chol^T``.

    Args:
        chol: A floating tensor of shape ``[..., M, M]``; its lower triangle is the factor.
        rhs: A tensor of shape ``[..., M, K]`` and ``chol``'s dtype.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[..., M, K]``.

    Gradient: through the two triangular solves.

    >>> import ferrotape as ft
    >>> ft.linalg.cholesky_solve([[2.0, 0.0], [0.0, 1.0]], [[4.0], [3.0]]).numpy()
    array([[1.],
           [3.]], dtype=float32)
    """
    del name
    y = triangular_solve(chol, rhs, lower=True)
    return triangular_solve(chol, y, lower=True, adjoint=True)


def _tridiagonals(who, diagonals, diagonals_format):
    """The super-, main and subdiagonal, each ``[..., M]`` (TF's compact layout rules)."""
    if diagonals_format == "sequence":
        if len(diagonals) != 3:
            raise ValueError(
                f"{who}: expected a sequence of 3 diagonals, received {len(diagonals)}"
            )
        return [_core.convert_to_tensor(d) for d in diagonals]
    if diagonals_format == "matrix":
        m = _matrix(who, diagonals)
        size = m.shape[-1]
        zero = _core.zeros_like(m[..., :1, 0])
        upper = _core.concat([diag_part(m, k=1), zero], -1) if size > 1 else zero
        lower = _core.concat([zero, diag_part(m, k=-1)], -1) if size > 1 else zero
        return [upper, diag_part(m), lower]
    if diagonals_format != "compact":
        raise ValueError(
            f"{who}: diagonals_format must be 'compact', 'sequence' or 'matrix', "
            f"received {diagonals_format!r}"
        )
    d = _matrix(who, diagonals)
    if d.shape[-2] != 3:
        raise ValueError(
            f"{who}: compact diagonals must have shape [..., 3, M], received {d.shape}"
        )
    return _core.unstack(d, axis=-2)


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """The product of a tridiagonal matrix, given by its three diagonals, and ``rhs``.

    Args:
        diagonals: ``[..., 3, M]`` (compact: super-, main, subdiagonal; the superdiagonal's last and
            the subdiagonal's first element are ignored), a list of three ``[..., M]`` tensors
            (sequence) or the ``[..., M, M]`` matrix (matrix).
        rhs: A tensor of shape ``[..., M, N]``.
        diagonals_format: ``"compact"``, ``"sequence"`` or ``"matrix"``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[..., M, N]``.

    Raises:
        ValueError: for an unknown ``diagonals_format`` or a malformed ``diagonals``.

    Gradient: for the diagonals and ``rhs``, through the shifted products.

    >>> import ferrotape as ft
    >>> d = ft.constant([[1.0, 1.0, 0.0], [2.0, 2.0, 2.0], [0.0, 1.0, 1.0]])
    >>> ft.linalg.tridiagonal_matmul(d, ft.ones([3, 1])).numpy()
    array([[3.],
           [4.],
           [3.]], dtype=float32)
    """
    del name
    upper, main, lower = _tridiagonals("tridiagonal_matmul", diagonals, diagonals_format)
    rhs = _matrix("tridiagonal_matmul", rhs)
    batch = [[0, 0]] * (len(rhs.shape) - 2)
    after = _core.pad(rhs[..., 1:, :], [*batch, [0, 1], [0, 0]])  # row i holds rhs[i + 1]
    before = _core.pad(rhs[..., :-1, :], [*batch, [1, 0], [0, 0]])  # row i holds rhs[i - 1]
    # The ignored corner entries meet the zero padding, so they drop out as TF's kernel has it.
    return (
        _core.expand_dims(upper, -1) * after
        + _core.expand_dims(main, -1) * rhs
        + _core.expand_dims(lower, -1) * before
    )


def tridiagonal_solve(
    diagonals,
    rhs,
    diagonals_format="compact",
    transpose_rhs=False,
    conjugate_rhs=False,
    name=None,
    partial_pivoting=True,
    perturb_singular=False,
):
    """``x`` with ``T @ x = rhs`` for the tridiagonal matrix ``T`` given by its three diagonals.

    Solved as a dense system (``solve``, LU with partial pivoting).

    Args:
        diagonals: As for ``tridiagonal_matmul``.
        rhs: A tensor of shape ``[..., M]`` or ``[..., M, K]``.
        diagonals_format: ``"compact"``, ``"sequence"`` or ``"matrix"``.
        transpose_rhs: If true, ``rhs`` is ``[..., K, M]`` and is transposed first.
        conjugate_rhs: Ignored for real dtypes.
        name: Ignored (TensorFlow's op name).
        partial_pivoting: Only true is supported (the dense solve always pivots).
        perturb_singular: Only false is supported.

    Returns:
        A tensor of shape ``[..., M]`` or ``[..., M, K]`` (also with ``transpose_rhs``, as TF).

    Gradient: as ``solve``'s, for the diagonals and ``rhs``.

    >>> import ferrotape as ft
    >>> d = ft.constant([[1.0, 1.0, 0.0], [2.0, 2.0, 2.0], [0.0, 1.0, 1.0]])
    >>> ft.linalg.tridiagonal_solve(d, ft.constant([3.0, 4.0, 3.0])).numpy()
    array([1., 1., 1.], dtype=float32)
    """
    del conjugate_rhs, name
    if not partial_pivoting or perturb_singular:
        raise UnimplementedError(
            "tridiagonal_solve: only partial_pivoting=True, perturb_singular=False"
        )
    upper, main, lower = _tridiagonals("tridiagonal_solve", diagonals, diagonals_format)
    size = main.shape[-1]
    dense = diag(main)
    if size > 1:
        dense = dense + diag(upper[..., : size - 1], k=1) + diag(lower[..., 1:], k=-1)
    rhs = _core.convert_to_tensor(rhs)
    vector = len(rhs.shape) == len(main.shape)
    if vector:
        rhs = _core.expand_dims(rhs, -1)
    elif transpose_rhs:
        rhs = matrix_transpose(rhs)
    x = _solve(dense, rhs)
    return _core.squeeze(x, [-1]) if vector else x


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """The least-squares solution ``x`` minimising ``||matrix @ x - rhs||^2 + l2 ||x||^2``.

    TensorFlow's ``fast`` path: the normal equations ``(A^T A + l2 I) x = A^T rhs`` when
    ``M >= N``, else ``x = A^T (A A^T + l2 I)^-1 rhs`` (the minimum-norm solution).

    Args:
        matrix: A floating tensor of shape ``[..., M, N]`` of full rank (or ``l2 > 0``).
        rhs: A tensor of shape ``[..., M, K]`` and ``matrix``'s dtype.
        l2_regularizer: A non-negative float, the ridge penalty.
        fast: Only true is supported (TF's orthogonal-decomposition path is not).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[..., N, K]``.

    Raises:
        UnimplementedError: for ``fast=False``.

    Gradient: through the products and the solve.

    >>> import ferrotape as ft
    >>> ft.linalg.lstsq([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[1.0], [1.0], [2.0]]).numpy()
    array([[1.],
           [1.]], dtype=float32)
    """
    del name
    if not fast:
        raise UnimplementedError("lstsq: only fast=True (the normal equations) is supported")
    a = _matrix("lstsq", matrix)
    m, n = a.shape[-2], a.shape[-1]
    small = min(m, n)
    gram = _matmul(a, a, transpose_a=m >= n, transpose_b=m < n)
    if l2_regularizer:
        ridge = _core.constant(float(l2_regularizer) * _np.eye(small, dtype=a.dtype.name))
        gram = gram + ridge
    if m >= n:
        return _solve(gram, _matmul(a, rhs, transpose_a=True))
    return _matmul(a, _solve(gram, rhs), transpose_a=True)


# Padé(13) coefficients of exp (Higham 2005, "The scaling and squaring method for the matrix
# exponential revisited"), with the 1-norm bound below which the approximant is exact in float64.
_PADE13 = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)
_THETA13 = 5.371920351148152


def expm(input, name=None):  # noqa: A002
    """The matrix exponential of each innermost square matrix, by scaling and squaring.

    ``input`` is scaled by ``2^-s`` so that its 1-norm is below Padé(13)'s bound, the Padé
    approximant is solved for, and the result squared ``s`` times (``s`` read from the values).

    Args:
        input: A floating tensor of shape ``[..., N, N]``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape and dtype.

    Gradient: through the matrix products and the solve.

    >>> import ferrotape as ft
    >>> ft.linalg.expm(ft.constant([[0.0, 0.0], [0.0, 1.0]], ft.float64)).numpy()
    array([[1.        , 0.        ],
           [0.        , 2.71828183]])
    """
    del name
    a = _matrix("expm", input)
    n = a.shape[-1]
    if a.shape[-2] != n:
        raise InvalidArgumentError(f"expm: input must be square, received shape {a.shape}")
    norm1 = _np.abs(a.numpy()).sum(axis=-2).max() if a.numpy().size else 0.0
    squarings = max(0, int(_np.ceil(_np.log2(norm1 / _THETA13)))) if norm1 > 0 else 0
    a = a * _core.constant(_np.array(2.0**-squarings, a.dtype.name))
    eye = _core.constant(_np.eye(n, dtype=a.dtype.name))
    b = [_core.constant(_np.array(c, a.dtype.name)) for c in _PADE13]
    a2 = _matmul(a, a)
    a4 = _matmul(a2, a2)
    a6 = _matmul(a4, a2)
    u = (
        _matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
        + b[7] * a6
        + b[5] * a4
        + b[3] * a2
        + b[1] * eye
    )
    u = _matmul(a, u)
    v = (
        _matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2)
        + b[6] * a6
        + b[4] * a4
        + b[2] * a2
        + b[0] * eye
    )
    result = _solve(v - u, v + u)
    for _ in range(squarings):
        result = _matmul(result, result)
    return result


def _square(who, x):
    x = _matrix(who, x)
    if x.shape[-2] != x.shape[-1]:
        raise InvalidArgumentError(f"{who}: input must be square, received shape {x.shape}")
    return x


def cholesky(input, name=None):  # noqa: A002
    """The lower-triangular Cholesky factor ``L`` of each symmetric positive-definite matrix.

    ``input = L @ L^T``; computed column by column (one batched step per column), reading only
    the lower triangle of ``input``, as TensorFlow does.

    Args:
        input: A floating tensor of shape ``[..., N, N]``, symmetric positive definite.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape and dtype, zero above the diagonal.

    Raises:
        InvalidArgumentError: if a matrix is not positive definite.

    Gradient: TensorFlow's, symmetric: ``(G + G^T) / 2`` for the gradient ``G`` of the column
    recurrences, which read only the lower triangle.

    >>> import ferrotape as ft
    >>> ft.linalg.cholesky(ft.constant([[4.0, 2.0], [2.0, 5.0]])).numpy()
    array([[2., 0.],
           [1., 2.]], dtype=float32)
    """
    del name
    a = _square("cholesky", input)
    # The value of `a`, with the gradient of its symmetric part: the recurrences' gradient G
    # (on the lower triangle) then reaches `input` as (G + G^T) / 2, as TensorFlow's does.
    symmetric = (a + matrix_transpose(a)) * 0.5
    a = symmetric + _core.stop_gradient(a - symmetric)
    n = a.shape[-1]
    columns = []  # column j of L, rows j..n-1
    for j in range(n):
        c = a[..., j:, j]
        if j:
            done = _core.stack([col[..., j - i :] for i, col in enumerate(columns)], axis=-1)
            row_j = _core.stack([col[..., j - i] for i, col in enumerate(columns)], axis=-1)
            c = c - _core.squeeze(_matmul(done, _core.expand_dims(row_j, -1)), [-1])
        pivot = c[..., 0]
        # A bool read (inside ft.function, a guard of the trace: a replay with a matrix that is
        # not positive definite takes another path, which raises this error).
        if not bool(_core.reduce_all(pivot > 0)):
            raise InvalidArgumentError(
                "cholesky: the input is not positive definite (Cholesky decomposition was not "
                "successful)"
            )
        columns.append(c / _core.expand_dims(_core.sqrt(pivot), -1))
    batch = [[0, 0]] * (len(a.shape) - 2)
    padded = [_core.pad(col, [*batch, [j, 0]]) for j, col in enumerate(columns)]
    return _core.stack(padded, axis=-1)


def _per_matrix(fn, *tensors):
    """``fn`` applied to each innermost matrix (for ops whose pivots differ per matrix)."""
    batch = list(tensors[0].shape[:-2])
    if not batch:
        return fn(*tensors)
    flat = [_core.unstack(_core.reshape(t, [-1, *t.shape[len(batch) :]])) for t in tensors]
    outs = [fn(*parts) for parts in zip(*flat, strict=True)]
    if isinstance(outs[0], tuple):
        return tuple(
            _core.reshape(_core.stack(list(o)), [*batch, *o[0].shape])
            for o in zip(*outs, strict=True)
        )
    return _core.reshape(_core.stack(outs), [*batch, *outs[0].shape])


def _lu_one(a, index_dtype):
    n = a.shape[-1]
    rows = _core.unstack(a) if n else []
    perm = list(range(n))
    for k in range(n - 1):
        column = _np.abs(_np.array([r[k].numpy() for r in rows[k:]]))
        p = k + int(_np.argmax(column))  # the first largest, as LAPACK's partial pivoting
        rows[k], rows[p] = rows[p], rows[k]
        perm[k], perm[p] = perm[p], perm[k]
        below = _core.stack(rows[k + 1 :])
        factors = below[:, k : k + 1] / rows[k][k]
        tail = below[:, k + 1 :] - factors * _core.expand_dims(rows[k][k + 1 :], 0)
        rows[k + 1 :] = _core.unstack(_core.concat([below[:, :k], factors, tail], 1))
    lu_packed = _core.stack(rows) if n else a
    return lu_packed, _core.constant(_np.array(perm, dtype=index_dtype))


def lu(input, output_idx_type="int32", name=None):  # noqa: A002
    """The LU decomposition with partial pivoting of each innermost square matrix.

    ``input[perm] = L @ U`` with ``L`` unit lower triangular and ``U`` upper triangular, both
    packed into one matrix (``L``'s unit diagonal is implied).

    Args:
        input: A floating tensor of shape ``[..., N, N]``.
        output_idx_type: The dtype of ``perm`` (``"int32"`` or ``"int64"``).
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair ``(lower_upper, perm)``: ``[..., N, N]`` and ``[..., N]``.

    Gradient: ``lower_upper`` differentiates through the elimination steps; ``perm`` is an index.

    >>> import ferrotape as ft
    >>> lower_upper, perm = ft.linalg.lu(ft.constant([[1.0, 2.0], [4.0, 4.0]]))
    >>> lower_upper.numpy(), perm.numpy()
    (array([[4.  , 4.  ],
           [0.25, 1.  ]], dtype=float32), array([1, 0], dtype=int32))
    """
    del name
    a = _square("lu", input)
    index_dtype = _np.dtype(getattr(output_idx_type, "name", output_idx_type))
    return _per_matrix(lambda m: _lu_one(m, index_dtype), a)


def _unit_lower(lower_upper):
    ones = _core.ones_like(diag_part(lower_upper))
    return set_diag(band_part(lower_upper, -1, 0), ones)


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """``x`` with ``A @ x = rhs``, given ``lu(A)``.

    Args:
        lower_upper: The packed factors from ``lu``, ``[..., N, N]``.
        perm: The permutation from ``lu``, ``[..., N]``.
        rhs: A tensor of shape ``[..., N, K]``.
        validate_args: Ignored.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[..., N, K]``.

    Gradient: through the two triangular solves (``perm`` is an index).

    >>> import ferrotape as ft
    >>> a = ft.constant([[1.0, 2.0], [4.0, 4.0]])
    >>> ft.linalg.lu_solve(*ft.linalg.lu(a), ft.constant([[3.0], [8.0]])).numpy()
    array([[1.],
           [1.]], dtype=float32)
    """
    del validate_args, name
    lower_upper = _square("lu_solve", lower_upper)
    rhs = _matrix("lu_solve", rhs)
    perm = _core.convert_to_tensor(perm)
    shape = _np.broadcast_shapes(tuple(lower_upper.shape[:-2]), tuple(rhs.shape[:-2]))
    lower_upper = _core.broadcast_to(lower_upper, [*shape, *lower_upper.shape[-2:]])
    rhs = _core.broadcast_to(rhs, [*shape, *rhs.shape[-2:]])
    perm = _core.broadcast_to(perm, [*shape, perm.shape[-1]])
    permuted = _per_matrix(lambda b, p: _core.gather(b, p), rhs, perm)
    y = triangular_solve(_unit_lower(lower_upper), permuted, lower=True)
    return triangular_solve(lower_upper, y, lower=False)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """The inverse of ``A``, given ``lu(A)``.

    Args:
        lower_upper: The packed factors from ``lu``, ``[..., N, N]``.
        perm: The permutation from ``lu``, ``[..., N]``.
        validate_args: Ignored.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[..., N, N]``.

    Gradient: as ``lu_solve``'s.

    >>> import ferrotape as ft
    >>> a = ft.constant([[2.0, 0.0], [0.0, 4.0]])
    >>> ft.linalg.lu_matrix_inverse(*ft.linalg.lu(a)).numpy()
    array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float32)
    """
    del validate_args, name
    lower_upper = _square("lu_matrix_inverse", lower_upper)
    n = lower_upper.shape[-1]
    eye = _core.constant(_np.eye(n, dtype=lower_upper.dtype.name))
    return lu_solve(lower_upper, perm, _core.broadcast_to(eye, lower_upper.shape))


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """The matrix ``A`` whose ``lu`` is ``(lower_upper, perm)``.

    Args:
        lower_upper: The packed factors from ``lu``, ``[..., N, N]``.
        perm: The permutation from ``lu``, ``[..., N]``.
        validate_args: Ignored.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[..., N, N]``.

    Gradient: through ``L @ U`` (``perm`` is an index).

    >>> import ferrotape as ft
    >>> a = ft.constant([[1.0, 2.0], [4.0, 4.0]])
    >>> ft.linalg.lu_reconstruct(*ft.linalg.lu(a)).numpy()
    array([[1., 2.],
           [4., 4.]], dtype=float32)
    """
    del validate_args, name
    lower_upper = _square("lu_reconstruct", lower_upper)
    product = _matmul(_unit_lower(lower_upper), band_part(lower_upper, 0, -1))
    perm = _core.convert_to_tensor(perm)

    def unpermute(m, p):
        inverse = _np.argsort(p.numpy()).astype(p.numpy().dtype)
        return _core.gather(m, _core.constant(inverse))

    return _per_matrix(unpermute, product, perm)


def qr(input, full_matrices=False, name=None):  # noqa: A002
    """The QR decomposition of each innermost matrix, by Householder reflections.

    ``input = Q @ R`` with ``Q`` orthonormal columns and ``R`` upper triangular; the reflections
    follow LAPACK's convention (``R``'s diagonal takes the opposite sign of the column's leading
    entry), so the signs agree with TensorFlow's.

    Args:
        input: A floating tensor of shape ``[..., M, N]``.
        full_matrices: If true, ``Q`` is ``[..., M, M]`` and ``R`` ``[..., M, N]``; else ``Q`` is
            ``[..., M, K]`` and ``R`` ``[..., K, N]`` with ``K = min(M, N)``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair ``(q, r)``.

    Gradient: through the reflections, for both outputs.

    >>> import ferrotape as ft
    >>> q, r = ft.linalg.qr(ft.constant([[3.0, 1.0], [4.0, 2.0]], ft.float64))
    >>> r.numpy().round(4)
    array([[-5. , -2.2],
           [ 0. ,  0.4]])
    """
    del name
    a = _matrix("qr", input)
    m, n = a.shape[-2], a.shape[-1]
    k_max = min(m, n)
    dtype = a.dtype.name
    r = a
    q = _core.broadcast_to(_core.constant(_np.eye(m, dtype=dtype)), [*a.shape[:-2], m, m])
    for k in range(min(m - 1, n)):  # the last row of a tall matrix needs no reflection
        x = r[..., k:, k]
        alpha = x[..., 0]
        norm_x = _core.sqrt(_core.reduce_sum(_core.square(x), -1))
        sign = _core.select(
            _core.less(alpha, _core.zeros_like(alpha)),
            -_core.ones_like(alpha),
            _core.ones_like(alpha),
        )
        beta = -sign * norm_x
        v = _core.concat([_core.expand_dims(alpha - beta, -1), x[..., 1:]], -1)
        # LAPACK leaves a column whose entries below the diagonal are all 0 as it is (H = I).
        tail_zero = _core.constant(~(_np.abs(x[..., 1:].numpy()).sum(-1) > 0))
        vv = _core.reduce_sum(_core.square(v), -1)
        safe = _core.select(tail_zero, _core.ones_like(vv), vv)
        coef = _core.select(tail_zero, _core.zeros_like(vv), 2.0 / safe)
        v_col = _core.expand_dims(v, -1)
        coef = _core.expand_dims(_core.expand_dims(coef, -1), -1)
        block = r[..., k:, :]
        block = block - coef * _matmul(v_col, _matmul(v_col, block, transpose_a=True))
        r = _core.concat([r[..., :k, :], block], -2)
        q_block = q[..., :, k:]
        q_block = q_block - coef * _matmul(_matmul(q_block, v_col), v_col, transpose_b=True)
        q = _core.concat([q[..., :, :k], q_block], -1)
    r = band_part(r, 0, -1)
    if full_matrices:
        return q, r
    return q[..., :, :k_max], r[..., :k_max, :]


def sqrtm(input, name=None):  # noqa: A002
    """The principal square root ``X`` (``X @ X = input``) of each innermost square matrix.

    Computed by the Denman-Beavers iteration ``Y <- (Y + Z^-1) / 2``, ``Z <- (Z + Y^-1) / 2``
    from ``Y = input``, ``Z = I``, run until ``Y`` stops changing (TensorFlow uses a Schur
    method; both give the principal root). The input must have no eigenvalue on the closed
    negative real axis.

    Args:
        input: A floating tensor of shape ``[..., N, N]``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``input``'s shape and dtype.

    Raises:
        InvalidArgumentError: if the iteration does not converge (no principal root).

    Gradient: through the iterations (which converge with their derivatives).

    >>> import ferrotape as ft
    >>> ft.linalg.sqrtm(ft.constant([[4.0, 0.0], [0.0, 9.0]], ft.float64)).numpy()
    array([[2., 0.],
           [0., 3.]])
    """
    del name
    a = _square("sqrtm", input)
    y = a
    z = _core.broadcast_to(_core.constant(_np.eye(a.shape[-1], dtype=a.dtype.name)), a.shape)
    tolerance = 10 * _np.finfo(a.dtype.name).eps
    for _ in range(100):
        y_next = (y + inv(z)) * 0.5
        z = (z + inv(y)) * 0.5
        change = _np.abs(y_next.numpy() - y.numpy()).max(initial=0.0)
        scale = max(_np.abs(y_next.numpy()).max(initial=0.0), 1.0)
        y = y_next
        if not _np.isfinite(change):
            break
        if change <= tolerance * scale:
            # One more step settles the derivative as well as the value.
            return (y + inv(z)) * 0.5
    raise InvalidArgumentError(
        "sqrtm: the iteration did not converge; the input has no principal square root"
    )


def banded_triangular_solve(bands, rhs, lower=True, adjoint=False, name=None):
    """``x`` with ``A @ x = rhs`` for a banded triangular ``A`` given by its ``K`` bands.

    Args:
        bands: A floating tensor of shape ``[..., K, M]``. With ``lower``, row 0 is the diagonal
            and row ``i`` the ``i``-th subdiagonal, right-aligned; otherwise row ``K - 1`` is the
            diagonal and row ``K - 1 - i`` the ``i``-th superdiagonal, left-aligned (TensorFlow's
            LEFT_RIGHT layout). Entries outside the matrix are ignored.
        rhs: A tensor of shape ``[..., M, N]``.
        lower: Whether ``A`` is lower (else upper) triangular.
        adjoint: If true, solve with the transpose of ``A``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[..., M, N]``.

    Gradient: as ``triangular_solve``'s, for the bands read and ``rhs``.

    >>> import ferrotape as ft
    >>> ft.linalg.banded_triangular_solve([[2.0, 2.0], [0.0, 1.0]], [[2.0], [3.0]]).numpy()
    array([[1.],
           [1.]], dtype=float32)
    """
    del name
    b = _matrix("banded_triangular_solve", bands)
    k, m = b.shape[-2], b.shape[-1]
    if k > m:
        raise InvalidArgumentError(f"banded_triangular_solve: K = {k} bands exceed M = {m}")
    dense = None
    for i in range(k):
        band = b[..., i, i:] if lower else b[..., k - 1 - i, : m - i]
        part = diag(band, k=-i if lower else i)
        dense = part if dense is None else dense + part
    return triangular_solve(dense, rhs, lower=lower, adjoint=adjoint)


def eigh_tridiagonal(
    alpha, beta, eigvals_only=True, select="a", select_range=None, tol=None, name=None
):
    """The eigenvalues, ascending, of the symmetric tridiagonal matrix with diagonal ``alpha``
    and off-diagonal ``beta``.

    Computed as ``eigvalsh`` of the dense matrix; only ``eigvals_only=True`` with
    ``select="a"`` (all eigenvalues) is supported.

    Args:
        alpha: A floating 1-D tensor of length ``N``, the diagonal.
        beta: A 1-D tensor of length ``N - 1`` and ``alpha``'s dtype, the off-diagonal.
        eigvals_only: Only true is supported.
        select: Only ``"a"`` is supported.
        select_range: Unused with ``select="a"``.
        tol: Ignored (LAPACK runs to full precision).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``[N]``, ascending.

    Raises:
        UnimplementedError: for eigenvectors or a selected subset.
        InvalidArgumentError: if ``beta`` is not one shorter than ``alpha``.

    Gradient: as ``eigvalsh``'s, for ``alpha`` and ``beta``.

    >>> import ferrotape as ft
    >>> alpha, beta = ft.constant([2.0, 2.0], ft.float64), ft.constant([1.0], ft.float64)
    >>> ft.linalg.eigh_tridiagonal(alpha, beta).numpy()
    array([1., 3.])
    """
    del select_range, tol, name
    if not eigvals_only or select != "a":
        raise UnimplementedError(
            "eigh_tridiagonal: only eigvals_only=True with select='a' is supported"
        )
    alpha = _core.convert_to_tensor(alpha)
    if not _core.is_tensor(beta):
        beta = _core.convert_to_tensor(beta, dtype=alpha.dtype)
    n = alpha.shape[-1] if alpha.shape else 0
    if len(alpha.shape) != 1 or list(beta.shape) != [n - 1]:
        raise InvalidArgumentError(
            f"eigh_tridiagonal: expected alpha of shape [N] and beta of shape [N - 1], received "
            f"{alpha.shape} and {beta.shape}"
        )
    dense = diag(alpha)
    if n > 1:
        dense = dense + diag(beta, k=1) + diag(beta, k=-1)
    return eigvalsh(dense)


__all__ = [
    *_native,
    *_linear_operators,
    "band_part",
    "banded_triangular_solve",
    "cholesky",
    "cholesky_solve",
    "cross",
    "diag",
    "diag_part",
    "expm",
    "eig",
    "eigh",
    "eigvals",
    "eigh_tridiagonal",
    "eigvalsh",
    "einsum",
    "global_norm",
    "l2_normalize",
    "logdet",
    "logm",
    "lstsq",
    "lu",
    "lu_matrix_inverse",
    "lu_reconstruct",
    "lu_solve",
    "matrix_rank",
    "matvec",
    "norm",
    "normalize",
    "pinv",
    "qr",
    "set_diag",
    "slogdet",
    "sqrtm",
    "svd",
    "tensor_diag",
    "tensor_diag_part",
    "tensordot",
    "trace",
    "triangular_solve",
    "tridiagonal_matmul",
    "tridiagonal_solve",
]
