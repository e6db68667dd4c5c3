"""``tf.linalg.LinearOperatorDiag``: a (batch of) diagonal matrices held by their diagonals."""

from .. import _core
from .linear_operator import LinearOperator
from .linear_operator_util import adjoint_if, combined_non_singular_hint, keep_or_convert, read

__all__ = ["LinearOperatorDiag"]


def commuting_hints(left, right):
    """The hints of the product of two commuting operators (TensorFlow's rules)."""
    both_self_adjoint = left.is_self_adjoint is True and right.is_self_adjoint is True
    one_not = {left.is_self_adjoint, right.is_self_adjoint} == {True, False}
    self_adjoint = True if both_self_adjoint else (False if one_not else None)
    positive = (
        True
        if both_self_adjoint and left.is_positive_definite and right.is_positive_definite
        else None
    )
    return {
        "is_non_singular": combined_non_singular_hint(left, right),
        "is_self_adjoint": self_adjoint,
        "is_positive_definite": positive,
    }


class LinearOperatorDiag(LinearOperator):
    """``A = diag(d)`` for a (batch of) diagonals ``d`` of shape ``[B1, ..., Bb, N]``: products
    and solves are element-wise, the determinant a product, all in ``O(N)``.

    >>> import ferrotape as ft
    >>> operator = ft.linalg.LinearOperatorDiag([1.0, -2.0, 4.0])
    >>> operator.matvec([1.0, 1.0, 1.0]).numpy()
    array([ 1., -2.,  4.], dtype=float32)
    >>> float(operator.determinant()), operator.solvevec([1.0, 1.0, 1.0]).numpy()
    (-8.0, array([ 1.  , -0.5 ,  0.25], dtype=float32))
    """

    def __init__(
        self,
        diag,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorDiag",
    ):
        """Builds the operator from its diagonal.

        Args:
            diag: A floating tensor (or ``Variable``) of shape ``[B1, ..., Bb, N]``.
            is_non_singular: Expect no zero on the diagonal.
            is_self_adjoint: A real diagonal operator is always self-adjoint (``False`` raises).
            is_positive_definite: Expect a positive diagonal.
            is_square: A diagonal operator is always square (``False`` raises).
            name: The operator's name.

        Raises:
            ValueError: if ``diag`` is a scalar or a hint is impossible.
            TypeError: if ``diag`` is not floating.
        """
        self._diag = keep_or_convert(diag, name="diag")
        if not self._diag.shape:
            raise ValueError(f"Argument diag must have at least 1 dimension. Found: {diag}")
        if not self._diag.dtype.is_floating:
            raise TypeError(f"Argument diag must be floating. Found: {self._diag.dtype.name}")
        if is_self_adjoint is False:
            raise ValueError("A real diagonal operator is always self adjoint.")
        if is_square is False:
            raise ValueError("Only square diagonal operators currently supported.")
        super().__init__(
            dtype=self._diag.dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=True,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters={
                "diag": diag,
                "is_non_singular": is_non_singular,
                "is_self_adjoint": is_self_adjoint,
                "is_positive_definite": is_positive_definite,
                "is_square": is_square,
                "name": name,
            },
        )

    @property
    def diag(self):
        """The diagonal the operator was built from."""
        return self._diag

    def _slice_param_ndims(self):
        return {"diag": 1}

    def _shape(self):
        shape = self._diag.shape.as_list()
        return [*shape, shape[-1]]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _core.expand_dims(read(self._diag), -1) * adjoint_if(x, adjoint_arg)

    def _matvec(self, x, adjoint=False):
        return read(self._diag) * x

    def _determinant(self):
        return _core.reduce_prod(read(self._diag), -1)

    def _log_abs_determinant(self):
        return _core.reduce_sum(_core.log(_core.abs(read(self._diag))), -1)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return adjoint_if(rhs, adjoint_arg) / _core.expand_dims(read(self._diag), -1)

    def _to_dense(self):
        from .. import linalg

        return linalg.diag(read(self._diag))

    def _diag_part(self):
        return read(self._diag)

    def _add_to_tensor(self, x):
        from .. import linalg

        return linalg.set_diag(x, read(self._diag) + linalg.diag_part(x))

    def _eigvals(self):
        return read(self._diag)

    def _cond(self):
        magnitude = _core.abs(read(self._diag))
        return _core.reduce_max(magnitude, -1) / _core.reduce_min(magnitude, -1)

    def _linop_adjoint(self):
        return self

    def _linop_inverse(self):
        return LinearOperatorDiag(
            1.0 / read(self._diag),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )

    def _linop_cholesky(self):
        return LinearOperatorDiag(
            _core.sqrt(read(self._diag)),
            is_non_singular=True,
            is_self_adjoint=True,
            is_positive_definite=True,
            is_square=True,
        )

    def _linop_matmul(self, left, right):
        from .linear_operator_identity import LinearOperatorScaledIdentity
        from .linear_operator_lower_triangular import LinearOperatorLowerTriangular

        hints = commuting_hints(left, right)
        d = read(left.diag)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(d * read(right.diag), is_square=True, **hints)
        if isinstance(right, LinearOperatorScaledIdentity):
            return LinearOperatorDiag(d * read(right.multiplier), is_square=True, **hints)
        if isinstance(right, LinearOperatorLowerTriangular):
            hints["is_positive_definite"] = None
            return LinearOperatorLowerTriangular(
                _core.expand_dims(d, -1) * right.to_dense(), is_square=True, **hints
            )
        return super()._linop_matmul(left, right)

    def _linop_solve(self, left, right):
        from .linear_operator_identity import LinearOperatorScaledIdentity
        from .linear_operator_lower_triangular import LinearOperatorLowerTriangular

        hints = commuting_hints(left, right)
        d = read(left.diag)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(read(right.diag) / d, is_square=True, **hints)
        if isinstance(right, LinearOperatorScaledIdentity):
            return LinearOperatorDiag(read(right.multiplier) / d, is_square=True, **hints)
        if isinstance(right, LinearOperatorLowerTriangular):
            hints["is_positive_definite"] = None
            return LinearOperatorLowerTriangular(
                right.to_dense() / _core.expand_dims(d, -1), is_square=True, **hints
            )
        return super()._linop_solve(left, right)
