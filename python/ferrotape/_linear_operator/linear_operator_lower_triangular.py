"""``tf.linalg.LinearOperatorLowerTriangular``: a lower-triangular (batch of) matrices."""

from .. import _core
from .._exports.linalg import matmul as _matmul
from .linear_operator import LinearOperator
from .linear_operator_util import adjoint_if, broadcast_batch, keep_or_convert, read

__all__ = ["LinearOperatorLowerTriangular"]


class LinearOperatorLowerTriangular(LinearOperator):
    """``A`` the lower triangle of ``tril`` (``[B1, ..., Bb, N, N]``; the entries above the
    diagonal are ignored): solves by substitution, the determinant the diagonal's product.

    >>> import ferrotape as ft
    >>> operator = ft.linalg.LinearOperatorLowerTriangular([[2.0, 9.0], [1.0, 4.0]])
    >>> operator.to_dense().numpy()
    array([[2., 0.],
           [1., 4.]], dtype=float32)
    >>> operator.solvevec([2.0, 5.0]).numpy(), float(operator.determinant())
    (array([1., 1.], dtype=float32), 8.0)
    """

    def __init__(
        self,
        tril,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorLowerTriangular",
    ):
        """Builds the operator from a matrix whose lower triangle it keeps.

        Args:
            tril: A floating tensor (or ``Variable``) of shape ``[B1, ..., Bb, N, N]``.
            is_non_singular: Expect no zero on the diagonal.
            is_self_adjoint: Expect the operator to equal its adjoint (it is then diagonal).
            is_positive_definite: Expect ``x^T A x > 0`` for all nonzero ``x``.
            is_square: A triangular operator is always square (``False`` raises).
            name: The operator's name.

        Raises:
            ValueError: if ``tril`` has rank below 2 or ``is_square`` is False.
        """
        if is_square is False:
            raise ValueError("Only square lower triangular operators supported at this time.")
        self._tril = keep_or_convert(tril, name="tril")
        if len(self._tril.shape) < 2:
            raise ValueError(
                f"Argument tril must have at least 2 dimensions. Found: {self._tril.shape}"
            )
        super().__init__(
            dtype=self._tril.dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters={
                "tril": tril,
                "is_non_singular": is_non_singular,
                "is_self_adjoint": is_self_adjoint,
                "is_positive_definite": is_positive_definite,
                "is_square": is_square,
                "name": name,
            },
        )

    @property
    def tril(self):
        """The matrix the operator was built from (its lower triangle is the operator)."""
        return self._tril

    def _lower(self):
        from .. import linalg

        return linalg.band_part(read(self._tril), -1, 0)

    def _slice_param_ndims(self):
        return {"tril": 2}

    def _shape(self):
        return self._tril.shape.as_list()

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _matmul(self._lower(), x, transpose_a=adjoint, transpose_b=adjoint_arg)

    def _diag_part(self):
        from .. import linalg

        return linalg.diag_part(read(self._tril))

    def _determinant(self):
        return _core.reduce_prod(self._diag_part(), -1)

    def _log_abs_determinant(self):
        return _core.reduce_sum(_core.log(_core.abs(self._diag_part())), -1)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        from .. import linalg

        lower, rhs = broadcast_batch(self._lower(), adjoint_if(rhs, adjoint_arg))
        return linalg.triangular_solve(lower, rhs, lower=True, adjoint=adjoint)

    def _to_dense(self):
        return self._lower()

    def _eigvals(self):
        return self._diag_part()

    def _linop_matmul(self, left, right):
        if isinstance(right, LinearOperatorLowerTriangular):
            from .linear_operator_util import combined_non_singular_hint

            return LinearOperatorLowerTriangular(
                _matmul(left.to_dense(), right.to_dense()),
                is_non_singular=combined_non_singular_hint(left, right),
                is_square=True,
            )
        return super()._linop_matmul(left, right)
