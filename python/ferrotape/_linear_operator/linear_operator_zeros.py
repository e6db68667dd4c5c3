"""``tf.linalg.LinearOperatorZeros``: the ``M x N`` zero matrix, known by its size."""

import numpy as _np

from .. import _core
from ..dtypes import as_dtype
from .linear_operator import LinearOperator
from .linear_operator_identity import _num_rows

__all__ = ["LinearOperatorZeros"]


class LinearOperatorZeros(LinearOperator):
    """The zero operator (with an optional batch shape): ``matmul`` gives zeros,
    ``add_to_tensor`` returns its argument, the determinant and trace are 0.

    >>> import ferrotape as ft
    >>> zeros = ft.linalg.LinearOperatorZeros(num_rows=2, num_columns=3, is_square=False,
    ...     is_self_adjoint=False)
    >>> zeros.matvec([1.0, 2.0, 3.0]).numpy()
    array([0., 0.], dtype=float32)
    """

    def __init__(
        self,
        num_rows,
        num_columns=None,
        batch_shape=None,
        dtype=None,
        is_non_singular=False,
        is_self_adjoint=True,
        is_positive_definite=False,
        is_square=True,
        assert_proper_shapes=False,
        name="LinearOperatorZeros",
    ):
        """Builds the zero operator.

        Args:
            num_rows: ``M``, a non-negative Python int (or int scalar tensor).
            num_columns: ``N`` (``M`` by default).
            batch_shape: An optional list of non-negative ints: the batch shape.
            dtype: The dtype (float32 by default).
            is_non_singular: Must be False.
            is_self_adjoint: Must be True for a square operator.
            is_positive_definite: Must be False.
            is_square: Whether ``M == N`` (must be False when they differ).
            assert_proper_shapes: Unused (the shapes are always checked).
            name: The operator's name.

        Raises:
            ValueError: for an impossible hint or an invalid shape argument.
        """
        del assert_proper_shapes
        if not is_self_adjoint and is_square:
            raise ValueError("A zero operator is always self adjoint.")
        if is_non_singular:
            raise ValueError("A zero operator is always singular.")
        if is_positive_definite:
            raise ValueError("A zero operator is always not positive-definite.")
        self._num_rows = _num_rows(num_rows)
        self._num_columns = self._num_rows if num_columns is None else _num_rows(num_columns)
        if is_square and self._num_rows != self._num_columns:
            raise ValueError(
                f"LinearOperatorZeros initialized as is_square=True, but got "
                f"num_rows({self._num_rows}) != num_columns({self._num_columns})"
            )
        if batch_shape is not None:
            batch = _np.asarray(batch_shape)
            if batch.ndim != 1 or (batch.size and (batch < 0).any()):
                raise ValueError(
                    f"Argument batch_shape must be a 1-D Tensor of non-negative integers. "
                    f"Found: {batch_shape}"
                )
            batch_shape = [int(b) for b in batch]
        self._batch_shape_arg = batch_shape
        super().__init__(
            dtype=as_dtype(dtype or "float32"),
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
            parameters={
                "num_rows": num_rows,
                "num_columns": num_columns,
                "batch_shape": batch_shape,
                "dtype": dtype,
            },
        )

    def _slice_param_ndims(self):
        return {}

    def _shape(self):
        return [*(self._batch_shape_arg or []), self._num_rows, self._num_columns]

    def _batch_with(self, x):
        batch = tuple(x.shape[:-2])
        if self._batch_shape_arg:
            batch = _np.broadcast_shapes(batch, tuple(self._batch_shape_arg))
        return list(batch)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        rows = self._num_columns if adjoint else self._num_rows
        columns = x.shape[-2] if adjoint_arg else x.shape[-1]
        return _core.zeros([*self._batch_with(x), rows, columns], self.dtype)

    def _zeros(self, shape):
        return _core.zeros([*(self._batch_shape_arg or []), *shape], self.dtype)

    def _determinant(self):
        return self._zeros([])

    def _trace(self):
        return self._zeros([])

    def _diag_part(self):
        return self._zeros([min(self._num_rows, self._num_columns)])

    def _to_dense(self):
        return self._zeros([self._num_rows, self._num_columns])

    def _eigvals(self):
        return self._diag_part()

    def add_to_tensor(self, mat, name="add_to_tensor"):
        """``mat`` itself, broadcast against the batch shape (``0 + mat``).

        Args:
            mat: A tensor ``[..., M, N]`` of the operator's dtype.
            name: Ignored (TensorFlow's op name).

        Returns:
            ``mat`` (batch axes broadcast).
        """
        del name
        mat = _core.convert_to_tensor(mat, dtype=self.dtype)
        batch = self._batch_with(mat)
        if tuple(batch) == tuple(mat.shape[:-2]):
            return mat
        return _core.broadcast_to(mat, [*batch, *mat.shape[-2:]])

    def _linop_matmul(self, left, right):
        if not left.is_square or not right.is_square:
            raise ValueError(
                "Matmul with non-square `LinearOperator`s or non-square `LinearOperatorZeros` "
                "not supported at this time."
            )
        return left
