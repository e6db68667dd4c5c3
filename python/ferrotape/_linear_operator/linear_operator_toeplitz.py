"""``tf.linalg.LinearOperatorToeplitz``: a Toeplitz matrix held by its first column and row."""

import numpy as _np

from .. import _core
from .._exports.linalg import matmul as _matmul
from .linear_operator import LinearOperator
from .linear_operator_util import keep_or_convert, read

__all__ = ["LinearOperatorToeplitz"]


class LinearOperatorToeplitz(LinearOperator):
    """``A[i, j] = col[i - j]`` for ``i >= j`` and ``row[j - i]`` above the diagonal (``row[0]``
    is ignored: the diagonal is ``col[0]``). Products and solves go through the dense matrix.

    >>> import ferrotape as ft
    >>> t = ft.linalg.LinearOperatorToeplitz(col=[1.0, 2.0, 3.0], row=[1.0, 4.0, 5.0])
    >>> t.to_dense().numpy()
    array([[1., 4., 5.],
           [2., 1., 4.],
           [3., 2., 1.]], dtype=float32)
    """

    def __init__(
        self,
        col,
        row,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorToeplitz",
    ):
        """Builds the Toeplitz operator.

        Args:
            col: A floating tensor (or ``Variable``) ``[B1, ..., Bb, N]``: the first column.
            row: A tensor ``[B1, ..., Bb, N]`` of ``col``'s dtype: the first row.
            is_non_singular: Expect the operator to be non-singular.
            is_self_adjoint: Expect ``col == row``.
            is_positive_definite: Expect ``x^T A x > 0`` for all nonzero ``x``.
            is_square: Must not be False.
            name: The operator's name.

        Raises:
            ValueError: for scalar or mismatched ``col``/``row``, or ``is_square=False``.
        """
        self._col = keep_or_convert(col, name="col")
        self._row = keep_or_convert(row, self._col.dtype, name="row")
        for label, tensor in (("row", self._row), ("col", self._col)):
            if not tensor.shape:
                raise ValueError(
                    f"Argument {label} must have at least 1 dimension.  Found: {tensor}"
                )
        if self._row.shape[-1] != self._col.shape[-1]:
            raise ValueError("Expected square matrix, got row and col with mismatched dimensions.")
        if is_square is False:
            raise ValueError("Only square Toeplitz operators currently supported.")
        super().__init__(
            dtype=self._col.dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters={"col": col, "row": row, "name": name},
        )

    @property
    def col(self):
        """The first column."""
        return self._col

    @property
    def row(self):
        """The first row (its first entry is ignored)."""
        return self._row

    def _slice_param_ndims(self):
        return {"col": 1, "row": 1}

    def _shape(self):
        batch = _np.broadcast_shapes(tuple(self._col.shape), tuple(self._row.shape))
        return [*batch, batch[-1]]

    def _to_dense(self):
        shape = self._shape()[:-1]
        n = shape[-1]
        col = _core.broadcast_to(read(self._col), shape)
        row = _core.broadcast_to(read(self._row), shape)
        # A[i, j] is col[i - j] on and below the diagonal, row[j - i] above: entry i - j or
        # n + j - i of the concatenation [col, row].
        i, j = _np.arange(n)[:, None], _np.arange(n)[None, :]
        index = _np.where(i >= j, i - j, n + j - i).astype(_np.int32)
        elements = _core.concat([col, row], -1)
        return _core.gather(elements, _core.constant(index), axis=-1)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _matmul(self.to_dense(), x, transpose_a=adjoint, transpose_b=adjoint_arg)

    def _diag_part(self):
        col = read(self._col)
        return _core.broadcast_to(col[..., :1], self._shape()[:-1])
