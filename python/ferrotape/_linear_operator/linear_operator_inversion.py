"""``tf.linalg.LinearOperatorInversion``: the inverse ``A^-1`` of an operator, whose products
are ``A``'s solves and whose solves are ``A``'s products."""

from .linear_operator import LinearOperator
from .linear_operator_adjoint import inherited_hints

__all__ = ["LinearOperatorInversion"]


class LinearOperatorInversion(LinearOperator):
    """``A^-1`` for a square, non-singular operator ``A``, never formed: ``matmul`` calls
    ``A.solve``, ``solve`` calls ``A.matmul``, ``log|det|`` is ``-log|det A|``.

    >>> import ferrotape as ft
    >>> a = ft.linalg.LinearOperatorFullMatrix([[2.0, 0.0], [0.0, 4.0]])
    >>> ft.linalg.LinearOperatorInversion(a).matvec([1.0, 1.0]).numpy()
    array([0.5 , 0.25], dtype=float32)
    """

    def __init__(
        self,
        operator,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
    ):
        """Builds ``operator``'s inverse.

        Args:
            operator: The ``LinearOperator`` ``A``; not hinted singular or non-square.
            is_non_singular: Must agree with ``operator``'s hint (taken from it if None).
            is_self_adjoint: Must agree with ``operator``'s hint.
            is_positive_definite: Must agree with ``operator``'s hint.
            is_square: Must agree with ``operator``'s hint.
            name: The operator's name (by default ``operator.name + "_inv"``).

        Raises:
            ValueError: if ``operator`` is hinted singular or non-square, or a hint
                contradicts its.
        """
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(
                f"operator and supplied hints must have is_non_singular equal to True or "
                f"None. Found operator.is_non_singular = {operator.is_non_singular}, "
                f"is_non_singular = {is_non_singular}."
            )
        if operator.is_square is False or is_square is False:
            raise ValueError(
                f"operator and supplied hints must have is_square equal to True or None. "
                f"Found operator.is_square = {operator.is_square}, is_square = {is_square}."
            )
        self._operator = operator
        hints = inherited_hints(
            operator,
            "inverse",
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
        )
        super().__init__(
            dtype=operator.dtype,
            name=name or operator.name + "_inv",
            parameters={"operator": operator, "name": name},
            **hints,
        )

    @property
    def operator(self):
        """The operator this is the inverse of."""
        return self._operator

    def _slice_param_ndims(self):
        return {"operator": 0}

    def _shape(self):
        return self._operator.shape.as_list()

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return 1.0 / self._operator.determinant()

    def _log_abs_determinant(self):
        return -self._operator.log_abs_determinant()

    def _linop_inverse(self):
        return self._operator
