"""``tf.linalg.LinearOperatorFullMatrix``: an operator holding its dense matrix."""

from .._exports.linalg import matmul as _matmul
from .linear_operator import LinearOperator
from .linear_operator_util import keep_or_convert, read

__all__ = ["LinearOperatorFullMatrix"]


class LinearOperatorFullMatrix(LinearOperator):
    """A (batch of) ``[M, N]`` matrices held densely: ``matmul`` is a matrix product, ``solve``
    and the determinants go through LU (or Cholesky when hinted self-adjoint positive
    definite), as TensorFlow's.

    >>> import ferrotape as ft
    >>> operator = ft.linalg.LinearOperatorFullMatrix([[4.0, 1.0], [1.0, 3.0]],
    ...     is_self_adjoint=True, is_positive_definite=True)
    >>> operator.solvevec([1.0, 2.0]).numpy().round(4)
    array([0.0909, 0.6364], dtype=float32)
    >>> float(operator.log_abs_determinant())  # log(11), through Cholesky
    2.397895336151123
    """

    def __init__(
        self,
        matrix,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorFullMatrix",
    ):
        """Builds the operator from its matrix.

        Args:
            matrix: A floating tensor (or ``Variable``) of shape ``[B1, ..., Bb, M, N]``.
            is_non_singular: Expect the operator to be non-singular.
            is_self_adjoint: Expect the operator to equal its adjoint.
            is_positive_definite: Expect ``x^T A x > 0`` for all nonzero ``x``.
            is_square: Expect the operator to be square.
            name: The operator's name.

        Raises:
            ValueError: if ``matrix`` has rank below 2 or the hints contradict each other.
            TypeError: if ``matrix`` is not floating.
        """
        self._matrix = keep_or_convert(matrix, name="matrix")
        if len(self._matrix.shape) < 2:
            raise ValueError(
                f"Argument matrix must have at least 2 dimensions. Found: {self._matrix.shape}"
            )
        if not self._matrix.dtype.is_floating:
            raise TypeError(
                f"Argument matrix must have dtype float16, bfloat16, float32 or float64. "
                f"Found: {self._matrix.dtype.name}"
            )
        super().__init__(
            dtype=self._matrix.dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
            parameters={
                "matrix": matrix,
                "is_non_singular": is_non_singular,
                "is_self_adjoint": is_self_adjoint,
                "is_positive_definite": is_positive_definite,
                "is_square": is_square,
                "name": name,
            },
        )

    @property
    def matrix(self):
        """The matrix the operator was built from."""
        return self._matrix

    def _slice_param_ndims(self):
        return {"matrix": 2}

    def _shape(self):
        return self._matrix.shape.as_list()

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _matmul(read(self._matrix), x, transpose_a=adjoint, transpose_b=adjoint_arg)

    def _to_dense(self):
        return read(self._matrix)
