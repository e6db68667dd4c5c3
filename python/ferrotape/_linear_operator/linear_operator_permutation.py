"""``tf.linalg.LinearOperatorPermutation``: the permutation matrix ``A[i, perm[i]] = 1``."""

import numpy as _np

from .. import _core
from .._exports.linalg import matmul as _matmul
from ..dtypes import as_dtype
from .linear_operator import LinearOperator
from .linear_operator_util import adjoint_if

__all__ = ["LinearOperatorPermutation"]


class LinearOperatorPermutation(LinearOperator):
    """The permutation ``(A x)[i] = x[perm[i]]``; its adjoint is its inverse.

    >>> import ferrotape as ft
    >>> p = ft.linalg.LinearOperatorPermutation([2, 0, 1])
    >>> p.matvec([10.0, 20.0, 30.0]).numpy()
    array([30., 10., 20.], dtype=float32)
    >>> p.solvevec([30.0, 10.0, 20.0]).numpy()
    array([10., 20., 30.], dtype=float32)
    """

    def __init__(
        self,
        perm,
        dtype="float32",
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorPermutation",
    ):
        """Builds the permutation matrix of ``perm``.

        Args:
            perm: An integer tensor ``[B1, ..., Bb, N]``, each row a permutation of
                ``0 .. N-1``.
            dtype: The operator's dtype (float32 by default).
            is_non_singular: Must not be False.
            is_self_adjoint: Expect the permutation to be its own inverse.
            is_positive_definite: Expect ``x^T A x > 0`` for all nonzero ``x``.
            is_square: Must not be False.
            name: The operator's name.

        Raises:
            ValueError: for a hint that cannot hold or a ``perm`` that is not a permutation.
            TypeError: if ``perm`` is not integer.
        """
        self._perm = _core.convert_to_tensor(perm)
        if not self._perm.shape:
            raise ValueError(f"Argument `perm` must have at least 1 dimension. Received: {perm}.")
        if not self._perm.dtype.is_integer:
            raise TypeError(f"Argument `perm` must be integer dtype. Received: {perm}.")
        values = self._perm.numpy()
        if _np.any(_np.sort(values, axis=-1) != _np.arange(values.shape[-1])):
            raise ValueError(
                f"Argument `perm` must be a vector of unique integers from 0 to "
                f"{values.shape[-1] - 1}."
            )
        if is_non_singular is False:
            raise ValueError(
                f"A Permutation operator is always non-singular. Expected argument "
                f"`is_non_singular` to be True. Received: {is_non_singular}."
            )
        if is_square is False:
            raise ValueError(
                f"A Permutation operator is always square. Expected argument `is_square` to "
                f"be True. Received: {is_square}."
            )
        self._values = values
        super().__init__(
            dtype=as_dtype(dtype),
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters={"perm": perm, "dtype": dtype, "name": name},
        )

    @property
    def perm(self):
        """The permutation, an integer tensor."""
        return self._perm

    def _slice_param_ndims(self):
        return {"perm": 1}

    def _shape(self):
        shape = self._perm.shape.as_list()
        return [*shape, shape[-1]]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_if(x, adjoint_arg)
        if self._values.ndim == 1:
            # Row i of A x is row perm[i] of x; A^T = A^-1 gathers by the inverse permutation.
            order = _np.argsort(self._values) if adjoint else self._values
            return _core.gather(x, _core.constant(order.astype(_np.int32)), axis=-2)
        return _matmul(self.to_dense(), x, transpose_a=adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _to_dense(self):
        n = self._values.shape[-1]
        dense = (_np.arange(n) == self._values[..., None]).astype(self.dtype.name)
        return _core.constant(dense)

    def _diag_part(self):
        n = self._values.shape[-1]
        return _core.constant((_np.arange(n) == self._values).astype(self.dtype.name))

    def _determinant(self):
        # The sign of the permutation: the parity of its inversions.
        values = self._values.reshape(-1, self._values.shape[-1])
        signs = [
            (-1.0) ** sum(int(a > b) for i, a in enumerate(row) for b in row[i + 1 :])
            for row in values
        ]
        shape = self.batch_shape.as_list()
        return _core.constant(_np.array(signs, self.dtype.name).reshape(shape))

    def _log_abs_determinant(self):
        return _core.zeros(self.batch_shape.as_list(), self.dtype)

    def _cond(self):
        return _core.ones(self.batch_shape.as_list(), self.dtype)
