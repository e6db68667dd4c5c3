"""``tf.linalg.LinearOperatorBlockLowerTriangular``: a block lower-triangular matrix of
operators, applied block by block and solved by block forward substitution."""

import numpy as _np

from .. import _core
from .linear_operator import LinearOperator
from .linear_operator_util import adjoint_if, check_same_dtype, implied_hint

__all__ = ["LinearOperatorBlockLowerTriangular"]


def _to_batch(x, batch):
    if tuple(x.shape[:-2]) == tuple(batch):
        return x
    return _core.broadcast_to(x, [*batch, *x.shape[-2:]])


class LinearOperatorBlockLowerTriangular(LinearOperator):
    """``A`` with blocks ``A_ij`` for ``j <= i`` and zeros above: ``operators[i]`` lists row
    ``i``'s ``i + 1`` blocks, the last one on the diagonal (square). The determinant is the
    product of the diagonal blocks'.

    >>> import ferrotape as ft
    >>> d1 = ft.linalg.LinearOperatorDiag([2.0])
    >>> d2 = ft.linalg.LinearOperatorDiag([4.0])
    >>> below = ft.linalg.LinearOperatorFullMatrix([[1.0]])
    >>> a = ft.linalg.LinearOperatorBlockLowerTriangular([[d1], [below, d2]])
    >>> a.to_dense().numpy()
    array([[2., 0.],
           [1., 4.]], dtype=float32)
    >>> a.solvevec([2.0, 5.0]).numpy(), float(a.determinant())
    (array([1., 1.], dtype=float32), 8.0)
    """

    def __init__(
        self,
        operators,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorBlockLowerTriangular",
    ):
        """Builds the block lower-triangular operator.

        Args:
            operators: A list of lists: row ``i`` holds ``i + 1`` ``LinearOperator`` s of one
                dtype, the last square; blocks in a row share the range dimension, blocks in a
                column the domain dimension.
            is_non_singular: Expect the operator to be non-singular (implied when every
                diagonal block is).
            is_self_adjoint: Expect the operator to be self-adjoint.
            is_positive_definite: Expect it to be positive definite.
            is_square: Must not be False.
            name: The operator's name.

        Raises:
            ValueError: for a malformed list, mismatched dimensions or ``is_square=False``.
            TypeError: if the blocks' dtypes differ.
        """
        operators = [list(row) for row in operators]
        if not operators:
            raise ValueError(
                f"Argument `operators` must be a list of >=1 operators. Received: {operators}."
            )
        for i, row in enumerate(operators):
            if len(row) != i + 1:
                raise ValueError(
                    f"Argument `operators[{i}]` must contain `{i + 1}` blocks. Received: "
                    f"{len(row)} blocks."
                )
        flat = [op for row in operators for op in row]
        check_same_dtype(flat)
        diagonal = [row[-1] for row in operators]
        for i, row in enumerate(operators):
            for j, op in enumerate(row):
                if op.domain_dimension != diagonal[j].domain_dimension:
                    raise ValueError(
                        f"Argument `operators[{i}][{j}].domain_dimension` "
                        f"({op.domain_dimension}) must be the same as "
                        f"`operators[{j}][{j}].domain_dimension` "
                        f"({diagonal[j].domain_dimension})."
                    )
                if op.range_dimension != diagonal[i].range_dimension:
                    raise ValueError(
                        f"Argument `operators[{i}][{j}].range_dimension` "
                        f"({op.range_dimension}) must be the same as "
                        f"`operators[{i}][{i}].range_dimension` "
                        f"({diagonal[i].range_dimension})."
                    )
        if is_square is False:
            raise ValueError(
                "`LinearOperatorBlockLowerTriangular` must be square. Expected argument "
                "`is_square` to be True. Received: False."
            )
        is_non_singular = implied_hint(
            diagonal,
            "is_non_singular",
            is_non_singular,
            "A blockwise lower-triangular operator with non-singular operators on the main "
            "diagonal is always non-singular.",
        )
        self._operators = operators
        super().__init__(
            dtype=flat[0].dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters={"operators": operators, "name": name},
        )

    @property
    def operators(self):
        """The blocks, row by row."""
        return [list(row) for row in self._operators]

    def _diagonal(self):
        return [row[-1] for row in self._operators]

    def _batch(self):
        flat = [op for row in self._operators for op in row]
        return list(_np.broadcast_shapes(*(tuple(op.batch_shape.as_list()) for op in flat)))

    def _slice_param_ndims(self):
        return {"operators": 0}

    def _shape(self):
        n = sum(op.domain_dimension for op in self._diagonal())
        return [*self._batch(), n, n]

    def _split(self, x, sizes):
        pieces = _core.split(x, sizes, axis=-2) if len(sizes) > 1 else [x]
        return list(pieces)

    def _concat(self, pieces):
        batch = list(_np.broadcast_shapes(*(tuple(p.shape[:-2]) for p in pieces)))
        return _core.concat([_to_batch(p, batch) for p in pieces], -2)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_if(x, adjoint_arg)
        sizes = [op.domain_dimension for op in self._diagonal()]
        pieces = self._split(x, sizes)
        n = len(self._operators)
        results = []
        for i in range(n):
            # Row i of A sums A_ij x_j over j <= i; row i of A^T sums A_ji^T x_j over j >= i.
            if adjoint:
                terms = [self._operators[j][i].matmul(pieces[j], adjoint=True) for j in range(i, n)]
            else:
                terms = [self._operators[i][j].matmul(pieces[j]) for j in range(i + 1)]
            total = terms[0]
            for term in terms[1:]:
                total = total + term
            results.append(total)
        return self._concat(results)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjoint_if(rhs, adjoint_arg)
        sizes = [op.domain_dimension for op in self._diagonal()]
        pieces = self._split(rhs, sizes)
        n = len(self._operators)
        solved = [None] * n
        # Forward substitution for A, backward for A^T (upper block-triangular).
        order = range(n - 1, -1, -1) if adjoint else range(n)
        for i in order:
            remainder = pieces[i]
            others = range(i + 1, n) if adjoint else range(i)
            for j in others:
                block = self._operators[j][i] if adjoint else self._operators[i][j]
                remainder = remainder - block.matmul(solved[j], adjoint=adjoint)
            solved[i] = self._operators[i][i].solve(remainder, adjoint=adjoint)
        return self._concat(solved)

    def _combine(self, method, combine):
        values = [getattr(op, method)() for op in self._diagonal()]
        result = values[0]
        for value in values[1:]:
            result = combine(result, value)
        return _core.broadcast_to(result, self._batch())

    def _determinant(self):
        return self._combine("determinant", lambda a, b: a * b)

    def _log_abs_determinant(self):
        return self._combine("log_abs_determinant", lambda a, b: a + b)

    def _trace(self):
        return self._combine("trace", lambda a, b: a + b)

    def _diag_part(self):
        batch = self._batch()
        parts = [op.diag_part() for op in self._diagonal()]
        return _core.concat([_core.broadcast_to(p, [*batch, p.shape[-1]]) for p in parts], -1)

    def _linop_inverse(self):
        """The inverse, block lower-triangular too: ``X_ii = A_ii^-1`` and, below the diagonal,
        ``X_ij = -A_ii^-1 sum_{j <= k < i} A_ik X_kj`` (dense blocks)."""
        from .linear_operator_full_matrix import LinearOperatorFullMatrix

        n = len(self._operators)
        inverse = [[None] * (i + 1) for i in range(n)]
        for i in range(n):
            inverse[i][i] = self._operators[i][i].inverse()
            for j in range(i):
                total = None
                for k in range(j, i):
                    term = self._operators[i][k].matmul(inverse[k][j].to_dense())
                    total = term if total is None else total + term
                inverse[i][j] = LinearOperatorFullMatrix(-inverse[i][i].matmul(total))
        return LinearOperatorBlockLowerTriangular(
            inverse,
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )

    def _to_dense(self):
        batch = self._batch()
        sizes = [op.domain_dimension for op in self._diagonal()]
        rows = []
        for i, row in enumerate(self._operators):
            blocks = [_to_batch(op.to_dense(), batch) for op in row]
            rest = sum(sizes[i + 1 :])
            if rest:
                blocks.append(_core.zeros([*batch, sizes[i], rest], self.dtype))
            rows.append(_core.concat(blocks, -1))
        return _core.concat(rows, -2)
