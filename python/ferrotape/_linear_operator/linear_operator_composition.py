"""``tf.linalg.LinearOperatorComposition``: the product ``A1 A2 ... AJ`` of operators, applied
one after another, never multiplied out."""

import numpy as _np

from .. import _core
from .linear_operator import LinearOperator

__all__ = ["LinearOperatorComposition"]


class LinearOperatorComposition(LinearOperator):
    """``A = A1 A2 ... AJ``: ``matmul`` applies ``AJ`` first, ``solve`` inverts ``A1`` first,
    the determinant is the product of the factors' (batch shapes broadcast).

    >>> import ferrotape as ft
    >>> a = ft.linalg.LinearOperatorDiag([2.0, 3.0])
    >>> b = ft.linalg.LinearOperatorFullMatrix([[1.0, 1.0], [0.0, 1.0]])
    >>> product = ft.linalg.LinearOperatorComposition([a, b])
    >>> product.to_dense().numpy()
    array([[2., 2.],
           [0., 3.]], dtype=float32)
    >>> float(product.determinant())
    6.0
    """

    def __init__(
        self,
        operators,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
    ):
        """Builds the product of ``operators`` (in that order).

        Args:
            operators: A non-empty list of ``LinearOperator`` s of one dtype, each one's
                domain dimension equal to the next one's range dimension (checked, as by
                TensorFlow, when the shape is computed).
            is_non_singular: Expect the product to be non-singular (implied when every
                factor is).
            is_self_adjoint: Expect the product to equal its adjoint.
            is_positive_definite: Expect ``x^T A x > 0`` for all nonzero ``x``.
            is_square: Expect the product to be square.
            name: The operator's name (by default the factors' names joined by ``_o_``).

        Raises:
            ValueError: for an empty list or contradicting hints.
            TypeError: if the operators' dtypes differ.
        """
        operators = list(operators)
        if not operators:
            raise ValueError(f"Expected a non-empty list of operators. Found: {operators}")
        dtypes = {op.dtype for op in operators}
        if len(dtypes) > 1:
            raise TypeError(
                "Expected all operators to have the same dtype. Found "
                + " ".join(f"{op.name}: {op.dtype.name}" for op in operators)
            )
        if all(op.is_non_singular for op in operators):
            if is_non_singular is False:
                raise ValueError(
                    "The composition of non-singular operators is always non-singular."
                )
            is_non_singular = True
        self._operators = operators
        super().__init__(
            dtype=operators[0].dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name or "_o_".join(op.name for op in operators),
            parameters={"operators": operators, "name": name},
        )

    @property
    def operators(self):
        """The factors, in the order of the product."""
        return list(self._operators)

    def _slice_param_ndims(self):
        return {"operators": 0}

    def _shape(self):
        # TensorFlow checks the factors' dimensions here, when the shape is first asked for.
        operators = self._operators
        for left, right in zip(operators, operators[1:], strict=False):
            if left.domain_dimension != right.range_dimension:
                raise ValueError(
                    f"Operators are incompatible: {left.name} has domain dimension "
                    f"{left.domain_dimension} but {right.name} has range dimension "
                    f"{right.range_dimension}."
                )
        batch = _np.broadcast_shapes(*(tuple(op.batch_shape.as_list()) for op in self._operators))
        first, last = self._operators[0], self._operators[-1]
        return [*batch, first.range_dimension, last.domain_dimension]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        # A^H = AJ^H ... A1^H applies A1^H first; A applies AJ first.
        order = self._operators if adjoint else self._operators[::-1]
        result = order[0].matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in order[1:]:
            result = op.matmul(result, adjoint=adjoint)
        return result

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        # A^-1 = AJ^-1 ... A1^-1 applies A1^-1 first; A^-H applies AJ^-H first.
        order = self._operators[::-1] if adjoint else self._operators
        result = order[0].solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in order[1:]:
            result = op.solve(result, adjoint=adjoint)
        return result

    def _determinant(self):
        result = self._operators[0].determinant()
        for op in self._operators[1:]:
            result = result * op.determinant()
        return _core.broadcast_to(result, self.batch_shape.as_list())

    def _log_abs_determinant(self):
        result = self._operators[0].log_abs_determinant()
        for op in self._operators[1:]:
            result = result + op.log_abs_determinant()
        return _core.broadcast_to(result, self.batch_shape.as_list())
