"""``tf.linalg.LinearOperatorBlockDiag``: the direct sum of operators, a block-diagonal
matrix applied block by block."""

import numpy as _np

from .. import _core
from .linear_operator import LinearOperator
from .linear_operator_util import adjoint_if, check_same_dtype, implied_hint

__all__ = ["LinearOperatorBlockDiag"]


def _broadcast_to_batch(x, batch):
    if tuple(x.shape[:-2]) == tuple(batch):
        return x
    return _core.broadcast_to(x, [*batch, *x.shape[-2:]])


class LinearOperatorBlockDiag(LinearOperator):
    """``A = diag(A1, ..., AJ)``: ``matmul`` and ``solve`` split their argument's rows into
    the blocks' sizes, apply each block and concatenate; the determinant is the product of
    the blocks'.

    >>> import ferrotape as ft
    >>> a = ft.linalg.LinearOperatorFullMatrix([[1.0, 2.0], [3.0, 4.0]])
    >>> b = ft.linalg.LinearOperatorDiag([5.0])
    >>> ft.linalg.LinearOperatorBlockDiag([a, b]).to_dense().numpy()
    array([[1., 2., 0.],
           [3., 4., 0.],
           [0., 0., 5.]], dtype=float32)
    """

    def __init__(
        self,
        operators,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name=None,
    ):
        """Builds the direct sum of ``operators``.

        Args:
            operators: A non-empty list of ``LinearOperator`` s of one dtype, the blocks.
            is_non_singular: Expect the sum to be non-singular (implied when every block is).
            is_self_adjoint: Expect it to be self-adjoint (implied when every block is).
            is_positive_definite: Expect it to be positive definite (implied likewise).
            is_square: Expect it to be square.
            name: The operator's name (by default the blocks' names joined by ``_ds_``).

        Raises:
            ValueError: for an empty list or hints contradicting the blocks'.
            TypeError: if the blocks' dtypes differ.
        """
        operators = list(operators)
        if not operators:
            raise ValueError(f"Expected a non-empty list of operators. Found: {operators}")
        check_same_dtype(operators)
        is_non_singular = implied_hint(
            operators,
            "is_non_singular",
            is_non_singular,
            "The direct sum of non-singular operators is always non-singular.",
        )
        is_self_adjoint = implied_hint(
            operators,
            "is_self_adjoint",
            is_self_adjoint,
            "The direct sum of self-adjoint operators is always self-adjoint.",
        )
        is_positive_definite = implied_hint(
            operators,
            "is_positive_definite",
            is_positive_definite,
            "The direct sum of positive definite operators is always positive definite.",
        )
        self._operators = operators
        super().__init__(
            dtype=operators[0].dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name or "_ds_".join(op.name for op in operators),
            parameters={"operators": operators, "name": name},
        )

    @property
    def operators(self):
        """The diagonal blocks."""
        return list(self._operators)

    def _batch(self):
        return _np.broadcast_shapes(*(tuple(op.batch_shape.as_list()) for op in self._operators))

    def _slice_param_ndims(self):
        return {"operators": 0}

    def _shape(self):
        rows = sum(op.range_dimension for op in self._operators)
        columns = sum(op.domain_dimension for op in self._operators)
        return [*self._batch(), rows, columns]

    def _blockwise(self, apply, x, sizes):
        """``apply(block, piece)`` on each block and its rows of ``x``, concatenated."""
        pieces = _core.split(x, sizes, axis=-2) if len(sizes) > 1 else [x]
        results = [apply(op, piece) for op, piece in zip(self._operators, pieces, strict=True)]
        batch = _np.broadcast_shapes(*(tuple(r.shape[:-2]) for r in results))
        return _core.concat([_broadcast_to_batch(r, batch) for r in results], -2)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_if(x, adjoint_arg)
        sizes = [op.range_dimension if adjoint else op.domain_dimension for op in self._operators]
        return self._blockwise(lambda op, piece: op.matmul(piece, adjoint=adjoint), x, sizes)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjoint_if(rhs, adjoint_arg)
        sizes = [op.domain_dimension if adjoint else op.range_dimension for op in self._operators]
        return self._blockwise(lambda op, piece: op.solve(piece, adjoint=adjoint), rhs, sizes)

    def _combine(self, method, combine):
        values = [getattr(op, method)() for op in self._operators]
        result = values[0]
        for value in values[1:]:
            result = combine(result, value)
        return _core.broadcast_to(result, list(self._batch()))

    def _determinant(self):
        return self._combine("determinant", lambda a, b: a * b)

    def _log_abs_determinant(self):
        return self._combine("log_abs_determinant", lambda a, b: a + b)

    def _trace(self):
        return self._combine("trace", lambda a, b: a + b)

    def _concat_vectors(self, method):
        values = [getattr(op, method)() for op in self._operators]
        batch = list(self._batch())
        return _core.concat([_core.broadcast_to(v, [*batch, v.shape[-1]]) for v in values], -1)

    def _diag_part(self):
        if not all(op.is_square for op in self._operators):
            return super()._diag_part()
        return self._concat_vectors("diag_part")

    def _eigvals(self):
        return self._concat_vectors("eigvals")

    def _to_dense(self):
        batch = list(self._batch())
        columns = self.domain_dimension
        rows, start = [], 0
        for op in self._operators:
            dense = op.to_dense()
            dense = _core.broadcast_to(dense, [*batch, *dense.shape[-2:]])
            end = start + op.domain_dimension
            pad = [[0, 0]] * len(batch) + [[0, 0], [start, columns - end]]
            rows.append(_core.pad(dense, pad))
            start = end
        return _core.concat(rows, -2)

    def _derived(self, method, **hints):
        return LinearOperatorBlockDiag([getattr(op, method)() for op in self._operators], **hints)

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
