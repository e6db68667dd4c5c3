"""``tf.linalg.LinearOperatorTridiag``: a tridiagonal matrix held by its three diagonals."""

import numpy as _np

from .. import _core
from .._exports.linalg import matmul as _matmul
from .linear_operator import LinearOperator
from .linear_operator_util import adjoint_if, broadcast_batch, keep_or_convert, read

__all__ = ["LinearOperatorTridiag"]

_FORMATS = ("compact", "matrix", "sequence")


class LinearOperatorTridiag(LinearOperator):
    """A (batch of) ``N x N`` tridiagonal matrices, given in one of TensorFlow's three
    formats: ``"compact"`` (``[..., 3, N]``: the superdiagonal left-aligned, the diagonal, the
    subdiagonal right-aligned), ``"matrix"`` (``[..., N, N]``, only the three diagonals read)
    or ``"sequence"`` (a list of the three ``[..., N]`` vectors, aligned as in compact).

    >>> import ferrotape as ft
    >>> t = ft.linalg.LinearOperatorTridiag(
    ...     [[1.0, 2.0, 0.0], [4.0, 5.0, 6.0], [0.0, 7.0, 8.0]])
    >>> t.to_dense().numpy()
    array([[4., 1., 0.],
           [7., 5., 2.],
           [0., 8., 6.]], dtype=float32)
    """

    def __init__(
        self,
        diagonals,
        diagonals_format="compact",
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorTridiag",
    ):
        """Builds the tridiagonal operator.

        Args:
            diagonals: The diagonals in ``diagonals_format`` (tensors or ``Variable`` s).
            diagonals_format: ``"compact"``, ``"matrix"`` or ``"sequence"``.
            is_non_singular: Expect the operator to be non-singular.
            is_self_adjoint: Expect the operator to equal its adjoint.
            is_positive_definite: Expect ``x^T A x > 0`` for all nonzero ``x``.
            is_square: Expect the operator to be square (it is).
            name: The operator's name.

        Raises:
            ValueError: for an unknown format.
        """
        if diagonals_format not in _FORMATS:
            raise ValueError(
                f"Argument `diagonals_format` must be one of compact, matrix, or sequence. "
                f"Received : {diagonals_format}."
            )
        if diagonals_format == "sequence":
            self._diagonals = [
                keep_or_convert(d, name=f"diag_{i}") for i, d in enumerate(diagonals)
            ]
            dtype = self._diagonals[0].dtype
        else:
            self._diagonals = keep_or_convert(diagonals, name="diagonals")
            dtype = self._diagonals.dtype
        self._diagonals_format = diagonals_format
        super().__init__(
            dtype=dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
            parameters={"diagonals": diagonals, "diagonals_format": diagonals_format},
        )

    @property
    def diagonals(self):
        """The diagonals, in ``diagonals_format``."""
        return self._diagonals

    @property
    def diagonals_format(self):
        """``"compact"``, ``"matrix"`` or ``"sequence"``."""
        return self._diagonals_format

    def _slice_param_ndims(self):
        return {"diagonals": 1 if self._diagonals_format == "sequence" else 2}

    def _shape(self):
        if self._diagonals_format == "matrix":
            return self._diagonals.shape.as_list()
        if self._diagonals_format == "compact":
            shape = self._diagonals.shape.as_list()
            return [*shape[:-2], shape[-1], shape[-1]]
        batch = _np.broadcast_shapes(*(tuple(d.shape[:-1]) for d in self._diagonals))
        n = self._diagonals[1].shape[-1]
        return [*batch, n, n]

    def _three(self):
        """The superdiagonal, diagonal and subdiagonal as ``[..., N]`` tensors (aligned as in
        the compact format)."""
        if self._diagonals_format == "sequence":
            batch = self._shape()[:-1]
            return [_core.broadcast_to(read(d), batch) for d in self._diagonals]
        d = read(self._diagonals)
        if self._diagonals_format == "compact":
            return [d[..., 0, :], d[..., 1, :], d[..., 2, :]]
        from .. import linalg

        zero = _core.zeros_like(d[..., :1, 0])
        return [
            _core.concat([linalg.diag_part(d, k=1), zero], -1),
            linalg.diag_part(d),
            _core.concat([zero, linalg.diag_part(d, k=-1)], -1),
        ]

    def _to_dense(self):
        if self._diagonals_format == "matrix":
            # As TensorFlow: the matrix as given, though products read only its band.
            return read(self._diagonals)
        return self._banded()

    def _banded(self):
        from .. import linalg

        if self._diagonals_format == "matrix":
            return linalg.band_part(read(self._diagonals), 1, 1)
        upper, diagonal, lower = self._three()
        dense = linalg.diag(diagonal)
        if diagonal.shape[-1] > 1:
            dense = dense + linalg.diag(upper[..., :-1], k=1) + linalg.diag(lower[..., 1:], k=-1)
        return dense

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _matmul(self._banded(), x, transpose_a=adjoint, transpose_b=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        from .. import linalg

        matrix, rhs = broadcast_batch(
            adjoint_if(self._banded(), adjoint), adjoint_if(rhs, adjoint_arg)
        )
        return linalg.solve(matrix, rhs)

    def _diag_part(self):
        return self._three()[1]
