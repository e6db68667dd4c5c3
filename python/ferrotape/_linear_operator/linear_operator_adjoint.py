"""``tf.linalg.LinearOperatorAdjoint``: the adjoint ``A^H`` of an operator, by its adjoint
products and solves."""

from .._exports.linalg import matrix_transpose as _transpose
from .linear_operator import LinearOperator

__all__ = ["LinearOperatorAdjoint"]


def inherited_hints(operator, relation, **hints):
    """The hints of an operator derived from ``operator`` that shares them all (its adjoint
    or inverse): a given hint must agree with ``operator``'s, a missing one is taken from it."""
    result = {}
    for key, given in hints.items():
        known = getattr(operator, key)
        if given is not None and known is not None and given != known:
            text = key.removeprefix("is_").replace("_", "-")
            raise ValueError(f"An operator is {text} if and only if its {relation} is {text}.")
        result[key] = known if given is None else given
    return result


class LinearOperatorAdjoint(LinearOperator):
    """``A^H`` for an operator ``A``: ``matmul``/``solve`` are ``A``'s with ``adjoint``
    flipped; the determinant, trace and diagonal are ``A``'s (real dtypes).

    >>> import ferrotape as ft
    >>> a = ft.linalg.LinearOperatorFullMatrix([[1.0, 2.0], [3.0, 4.0]])
    >>> ft.linalg.LinearOperatorAdjoint(a).to_dense().numpy()
    array([[1., 3.],
           [2., 4.]], dtype=float32)
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
        """Builds ``operator``'s adjoint.

        Args:
            operator: The ``LinearOperator`` ``A``.
            is_non_singular: Must agree with ``operator``'s hint (taken from it if None).
            is_self_adjoint: Must agree with ``operator``'s hint.
            is_positive_definite: Must agree with ``operator``'s hint.
            is_square: Must agree with ``operator``'s hint.
            name: The operator's name (by default ``operator.name + "_adjoint"``).

        Raises:
            ValueError: if a hint contradicts ``operator``'s.
        """
        self._operator = operator
        hints = inherited_hints(
            operator,
            "adjoint",
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
        )
        super().__init__(
            dtype=operator.dtype,
            name=name or operator.name + "_adjoint",
            parameters={"operator": operator, "name": name},
            **hints,
        )

    @property
    def operator(self):
        """The operator this is the adjoint of."""
        return self._operator

    def _slice_param_ndims(self):
        return {"operator": 0}

    def _shape(self):
        shape = self._operator.shape.as_list()
        return [*shape[:-2], shape[-1], shape[-2]]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _matvec(self, x, adjoint=False):
        return self._operator.matvec(x, adjoint=not adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solvevec(self, rhs, adjoint=False):
        return self._operator.solvevec(rhs, adjoint=not adjoint)

    def _determinant(self):
        return self._operator.determinant()

    def _log_abs_determinant(self):
        return self._operator.log_abs_determinant()

    def _trace(self):
        return self._operator.trace()

    def _diag_part(self):
        return self._operator.diag_part()

    def _eigvals(self):
        return self._operator.eigvals()

    def _to_dense(self):
        return _transpose(self._operator.to_dense())

    def _linop_adjoint(self):
        return self._operator
