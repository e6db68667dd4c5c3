"""``tf.linalg.LinearOperatorHouseholder``: the reflection ``I - 2 v v^H / |v|^2``."""

from .. import _core
from .._exports.linalg import matmul as _matmul
from .._nn_impl import l2_normalize
from .linear_operator import LinearOperator
from .linear_operator_util import adjoint_if, keep_or_convert, read

__all__ = ["LinearOperatorHouseholder"]


class LinearOperatorHouseholder(LinearOperator):
    """The reflection through the hyperplane orthogonal to ``v``: ``A = I - 2 v̂ v̂^T`` with
    ``v̂ = v / |v|``. It is its own adjoint and inverse; ``det A = -1``.

    >>> import ferrotape as ft
    >>> h = ft.linalg.LinearOperatorHouseholder([0.0, 1.0])
    >>> h.to_dense().numpy()
    array([[ 1.,  0.],
           [ 0., -1.]], dtype=float32)
    >>> float(h.determinant()), h.inverse() is h
    (-1.0, True)
    """

    def __init__(
        self,
        reflection_axis,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorHouseholder",
    ):
        """Builds the reflection.

        Args:
            reflection_axis: A floating tensor (or ``Variable``) ``v`` of shape
                ``[B1, ..., Bb, N]``.
            is_non_singular: Expect the operator to be non-singular (it always is).
            is_self_adjoint: Must not be False.
            is_positive_definite: Must not be True.
            is_square: Must not be False.
            name: The operator's name.

        Raises:
            ValueError: for an impossible hint or a scalar ``reflection_axis``.
        """
        self._reflection_axis = keep_or_convert(reflection_axis, name="reflection_axis")
        if is_self_adjoint is False:
            raise ValueError("A Householder operator is always self adjoint.")
        if is_positive_definite is True:
            raise ValueError("A Householder operator is always non-positive definite.")
        if is_square is False:
            raise ValueError("A Householder operator is always square.")
        if not self._reflection_axis.shape:
            raise ValueError(
                f"Argument reflection_axis must have at least 1 dimension.  Found: "
                f"{reflection_axis}"
            )
        super().__init__(
            dtype=self._reflection_axis.dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=True,
            is_positive_definite=False,
            is_square=True,
            name=name,
            parameters={"reflection_axis": reflection_axis, "name": name},
        )

    @property
    def reflection_axis(self):
        """The vector ``v`` the operator reflects along."""
        return self._reflection_axis

    def _unit(self):
        return l2_normalize(read(self._reflection_axis), axis=-1)

    def _slice_param_ndims(self):
        return {"reflection_axis": 1}

    def _shape(self):
        shape = self._reflection_axis.shape.as_list()
        return [*shape, shape[-1]]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_if(x, adjoint_arg)
        column = _core.expand_dims(self._unit(), -1)
        return x - 2.0 * column * _matmul(column, x, transpose_a=True)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint, adjoint_arg)

    def _batch_ones(self):
        return _core.ones(self.batch_shape.as_list(), self.dtype)

    def _trace(self):
        return self._batch_ones() * float(self.domain_dimension - 2)

    def _determinant(self):
        return -self._batch_ones()

    def _log_abs_determinant(self):
        return _core.zeros(self.batch_shape.as_list(), self.dtype)

    def _to_dense(self):
        from .linear_operator_util import eye

        column = _core.expand_dims(self._unit(), -1)
        reflection = 2.0 * _matmul(column, column, transpose_b=True)
        return eye(self.domain_dimension, self.batch_shape.as_list(), self.dtype) - reflection

    def _diag_part(self):
        unit = self._unit()
        return 1.0 - 2.0 * unit * unit

    def _eigvals(self):
        batch = self.batch_shape.as_list()
        n = self.domain_dimension
        return _core.concat(
            [-_core.ones([*batch, 1], self.dtype), _core.ones([*batch, n - 1], self.dtype)], -1
        )

    def _cond(self):
        return self._batch_ones()

    def _linop_adjoint(self):
        return self

    def _linop_inverse(self):
        return self
