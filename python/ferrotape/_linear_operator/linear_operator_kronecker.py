"""``tf.linalg.LinearOperatorKronecker``: the Kronecker product ``A1 ⊗ A2 ⊗ ... ⊗ AJ``,
whose determinant, trace, diagonal and eigenvalues come from the factors'."""

import numpy as _np

from .. import _core
from .._exports.linalg import matmul as _matmul
from .linear_operator import LinearOperator
from .linear_operator_util import adjoint_if, check_same_dtype, implied_hint

__all__ = ["LinearOperatorKronecker"]


def _kron(a, b):
    """The Kronecker product of (batched) matrices ``a`` ``[..., p, q]`` and ``b``
    ``[..., r, s]``: ``[..., p r, q s]``."""
    p, q = a.shape[-2:]
    r, s = b.shape[-2:]
    product = _core.expand_dims(_core.expand_dims(a, -1), -3) * _core.expand_dims(
        _core.expand_dims(b, -3), -2
    )  # [..., p, r, q, s]
    return _core.reshape(product, [*product.shape[:-4], p * r, q * s])


def _outer(a, b):
    """``a_i b_j`` flattened: the Kronecker product of (batched) vectors."""
    product = _core.expand_dims(a, -1) * _core.expand_dims(b, -2)
    return _core.reshape(product, [*product.shape[:-2], a.shape[-1] * b.shape[-1]])


class LinearOperatorKronecker(LinearOperator):
    """``A = A1 ⊗ A2 ⊗ ... ⊗ AJ``: ``det A = prod_j det(Aj)^(N / n_j)``,
    ``trace A = prod_j trace(Aj)``; products and solves go through the dense factors.

    >>> import ferrotape as ft
    >>> a = ft.linalg.LinearOperatorFullMatrix([[1.0, 2.0], [3.0, 4.0]])
    >>> b = ft.linalg.LinearOperatorDiag([1.0, -1.0])
    >>> k = ft.linalg.LinearOperatorKronecker([a, b])
    >>> k.shape, float(k.determinant()), float(k.trace())
    (TensorShape([4, 4]), 4.0, 0.0)
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
        """Builds the Kronecker product of ``operators``.

        Args:
            operators: A non-empty list of ``LinearOperator`` s of one dtype.
            is_non_singular: Expect the product to be non-singular (implied when every
                factor is).
            is_self_adjoint: Expect it to be self-adjoint (implied when every factor is).
            is_positive_definite: Expect it to be positive definite (implied likewise).
            is_square: Expect it to be square.
            name: The operator's name (by default the factors' names joined by ``_x_``).

        Raises:
            ValueError: for an empty list or hints contradicting the factors'.
            TypeError: if the factors' dtypes differ.
        """
        operators = list(operators)
        if not operators:
            raise ValueError(
                f"Argument `operators` must be a list of >=1 operators. Received: {operators}."
            )
        check_same_dtype(operators)
        is_non_singular = implied_hint(
            operators,
            "is_non_singular",
            is_non_singular,
            "The Kronecker product of non-singular operators is always non-singular.",
        )
        is_self_adjoint = implied_hint(
            operators,
            "is_self_adjoint",
            is_self_adjoint,
            "The Kronecker product of self-adjoint operators is always self-adjoint.",
        )
        is_positive_definite = implied_hint(
            operators,
            "is_positive_definite",
            is_positive_definite,
            "The Kronecker product of positive-definite operators is always positive-definite.",
        )
        self._operators = operators
        super().__init__(
            dtype=operators[0].dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name or "_x_".join(op.name for op in operators),
            parameters={"operators": operators, "name": name},
        )

    @property
    def operators(self):
        """The factors, in the order of the product."""
        return list(self._operators)

    def _batch(self):
        return list(
            _np.broadcast_shapes(*(tuple(op.batch_shape.as_list()) for op in self._operators))
        )

    def _slice_param_ndims(self):
        return {"operators": 0}

    def _shape(self):
        rows = int(_np.prod([op.range_dimension for op in self._operators]))
        columns = int(_np.prod([op.domain_dimension for op in self._operators]))
        return [*self._batch(), rows, columns]

    def _fold(self, values, combine):
        result = values[0]
        for value in values[1:]:
            result = combine(result, value)
        return result

    def _to_dense(self):
        return self._fold([op.to_dense() for op in self._operators], _kron)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _matmul(self.to_dense(), x, transpose_a=adjoint, transpose_b=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        # (A1 ⊗ ... ⊗ AJ)^-1 = A1^-1 ⊗ ... ⊗ AJ^-1.
        inverse = self._fold([op.inverse().to_dense() for op in self._operators], _kron)
        return _matmul(inverse, adjoint_if(rhs, adjoint_arg), transpose_a=adjoint)

    def _power_per_factor(self, method, power):
        n = self.domain_dimension
        values = [power(getattr(op, method)(), n // op.domain_dimension) for op in self._operators]
        return _core.broadcast_to(self._fold(values, lambda a, b: a * b), self._batch())

    def _determinant(self):
        return self._power_per_factor("determinant", lambda d, k: d ** float(k))

    def _log_abs_determinant(self):
        n = self.domain_dimension
        values = [
            op.log_abs_determinant() * float(n // op.domain_dimension) for op in self._operators
        ]
        return _core.broadcast_to(self._fold(values, lambda a, b: a + b), self._batch())

    def _trace(self):
        values = [op.trace() for op in self._operators]
        return _core.broadcast_to(self._fold(values, lambda a, b: a * b), self._batch())

    def _diag_part(self):
        if not all(op.is_square for op in self._operators):
            return super()._diag_part()
        return self._fold([op.diag_part() for op in self._operators], _outer)

    def _eigvals(self):
        return self._fold([op.eigvals() for op in self._operators], _outer)

    def _derived(self, method, **hints):
        return LinearOperatorKronecker([getattr(op, method)() for op in self._operators], **hints)

    def _linop_adjoint(self):
        return self._derived(
            "adjoint",
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )

    def _linop_inverse(self):
        return self._derived(
            "inverse",
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )

    def _linop_cholesky(self):
        return self._derived("cholesky", is_non_singular=True, is_self_adjoint=None, is_square=True)
