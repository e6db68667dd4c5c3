"""``tf.linalg.LinearOperatorIdentity`` and ``LinearOperatorScaledIdentity``: ``I`` and
``c I`` known by their size (and ``c``), never formed."""

import numpy as _np

from .. import _core
from ..dtypes import as_dtype
from .linear_operator import LinearOperator
from .linear_operator_util import adjoint_if, combined_non_singular_hint, eye, keep_or_convert, read

__all__ = ["LinearOperatorIdentity", "LinearOperatorScaledIdentity"]


def _num_rows(num_rows):
    value = _np.asarray(num_rows.numpy() if _core.is_tensor(num_rows) else num_rows)
    if value.ndim != 0:
        raise ValueError(f"Argument num_rows must be a 0-D Tensor. Found: {num_rows}")
    if not _np.issubdtype(value.dtype, _np.integer):
        raise TypeError(f"Argument num_rows must be integer type. Found: {num_rows}")
    if value < 0:
        raise ValueError(f"Argument num_rows must be non-negative. Found: {num_rows}")
    return int(value)


def _set_diagonal(x, add):
    """``x`` with ``add`` added to each innermost matrix's main diagonal."""
    from .. import linalg

    diagonal = linalg.diag_part(x)
    return linalg.set_diag(x, diagonal + add)


class LinearOperatorIdentity(LinearOperator):
    """The ``N x N`` identity (with an optional batch shape): ``matmul`` and ``solve`` return
    their argument (broadcast against the batch shape), the determinant is 1.

    >>> import ferrotape as ft
    >>> operator = ft.linalg.LinearOperatorIdentity(num_rows=2, batch_shape=[3])
    >>> operator.shape
    TensorShape([3, 2, 2])
    >>> operator.matvec([1.0, 2.0]).numpy()
    array([[1., 2.],
           [1., 2.],
           [1., 2.]], dtype=float32)
    """

    def __init__(
        self,
        num_rows,
        batch_shape=None,
        dtype=None,
        is_non_singular=True,
        is_self_adjoint=True,
        is_positive_definite=True,
        is_square=True,
        assert_proper_shapes=False,
        name="LinearOperatorIdentity",
    ):
        """Builds ``I``.

        Args:
            num_rows: ``N``, a non-negative Python int (or int scalar tensor).
            batch_shape: An optional list of non-negative ints: the batch shape.
            dtype: The dtype (float32 by default).
            is_non_singular: Must be True (the identity is).
            is_self_adjoint: Must be True.
            is_positive_definite: Must be True.
            is_square: Must be True.
            assert_proper_shapes: Unused (the shapes are always checked).
            name: The operator's name.

        Raises:
            ValueError: if a hint is not True or a shape argument is invalid.
        """
        del assert_proper_shapes
        for hint, text in [
            (is_non_singular, "An identity operator is always non-singular."),
            (is_positive_definite, "An identity operator is always positive-definite."),
            (is_self_adjoint, "An identity operator is always self-adjoint."),
            (is_square, "An identity operator is always square."),
        ]:
            if not hint:
                raise ValueError(text)
        self._num_rows = _num_rows(num_rows)
        if batch_shape is not None:
            batch = _np.asarray(
                batch_shape.numpy() if _core.is_tensor(batch_shape) else batch_shape
            )
            if batch.ndim != 1 or (batch.size and (batch < 0).any()):
                raise ValueError(
                    f"Argument batch_shape must be a 1-D Tensor of non-negative integers. "
                    f"Found: {batch_shape}"
                )
            batch_shape = [int(b) for b in batch]
        self._batch_shape_arg = batch_shape
        super().__init__(
            dtype=as_dtype(dtype or "float32"),
            is_non_singular=True,
            is_self_adjoint=True,
            is_positive_definite=True,
            is_square=True,
            name=name,
            parameters={"num_rows": num_rows, "batch_shape": batch_shape, "dtype": dtype},
        )

    def _slice_param_ndims(self):
        return {}

    def _shape(self):
        return [*(self._batch_shape_arg or []), self._num_rows, self._num_rows]

    def _broadcast(self, x):
        """``x`` broadcast against the batch shape (an identity without one leaves it)."""
        if not self._batch_shape_arg:
            return x
        batch = _np.broadcast_shapes(tuple(x.shape[:-2]), tuple(self._batch_shape_arg))
        return _core.broadcast_to(x, [*batch, *x.shape[-2:]])

    def _ones(self, shape):
        return _core.ones([*(self._batch_shape_arg or []), *shape], self.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._broadcast(adjoint_if(x, adjoint_arg))

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return self._ones([])

    def _log_abs_determinant(self):
        return _core.zeros(self._batch_shape_arg or [], self.dtype)

    def _diag_part(self):
        return self._ones([self._num_rows])

    def _trace(self):
        return self._ones([]) * float(self._num_rows)

    def _to_dense(self):
        return eye(self._num_rows, self._batch_shape_arg or [], self.dtype)

    def _add_to_tensor(self, x):
        return _set_diagonal(self._broadcast(x), 1.0)

    def _eigvals(self):
        return self._diag_part()

    def _cond(self):
        return self._ones([])

    def _linop_adjoint(self):
        return self

    def _linop_inverse(self):
        return self

    def _linop_cholesky(self):
        return self

    def _linop_matmul(self, left, right):
        return right

    def _linop_solve(self, left, right):
        return right


class LinearOperatorScaledIdentity(LinearOperator):
    """``c I`` for a (batch of) scalar multipliers ``c`` of shape ``[B1, ..., Bb]``.

    >>> import ferrotape as ft
    >>> operator = ft.linalg.LinearOperatorScaledIdentity(num_rows=3, multiplier=2.0)
    >>> operator.matvec([1.0, 2.0, 3.0]).numpy()
    array([2., 4., 6.], dtype=float32)
    >>> float(operator.determinant()), float(operator.trace())
    (8.0, 6.0)
    """

    def __init__(
        self,
        num_rows,
        multiplier,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        assert_proper_shapes=False,
        name="LinearOperatorScaledIdentity",
    ):
        """Builds ``c I``.

        Args:
            num_rows: ``N``, a non-negative Python int (or int scalar tensor).
            multiplier: A floating tensor (or ``Variable``) ``c`` of shape ``[B1, ..., Bb]``.
            is_non_singular: Expect ``c != 0``.
            is_self_adjoint: A real ``c I`` is always self-adjoint (``False`` raises).
            is_positive_definite: Expect ``c > 0``.
            is_square: Must be True.
            assert_proper_shapes: Unused (the shapes are always checked).
            name: The operator's name.

        Raises:
            ValueError: if ``is_square`` is False or ``num_rows`` is invalid.
        """
        del assert_proper_shapes
        if not is_square:
            raise ValueError("A ScaledIdentity operator is always square.")
        if is_self_adjoint is False:
            raise ValueError("A real diagonal operator is always self adjoint.")
        self._num_rows = _num_rows(num_rows)
        self._multiplier = keep_or_convert(multiplier, name="multiplier")
        super().__init__(
            dtype=self._multiplier.dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=True,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters={"num_rows": num_rows, "multiplier": multiplier},
        )

    @property
    def multiplier(self):
        """The scalar (batch) ``c``."""
        return self._multiplier

    def _c(self, extra_axes=0):
        c = read(self._multiplier)
        for _ in range(extra_axes):
            c = _core.expand_dims(c, -1)
        return c

    def _slice_param_ndims(self):
        return {"multiplier": 0}

    def _shape(self):
        return [*self._multiplier.shape.as_list(), self._num_rows, self._num_rows]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return adjoint_if(x, adjoint_arg) * self._c(2)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return adjoint_if(rhs, adjoint_arg) / self._c(2)

    def _determinant(self):
        return self._c() ** float(self._num_rows)

    def _log_abs_determinant(self):
        return float(self._num_rows) * _core.log(_core.abs(self._c()))

    def _diag_part(self):
        return self._c(1) * _core.ones([self._num_rows], self.dtype)

    def _trace(self):
        return self._c() * float(self._num_rows)

    def _to_dense(self):
        return self._c(2) * eye(self._num_rows, [], self.dtype)

    def _add_to_tensor(self, x):
        return _set_diagonal(x, self._c(1))

    def _eigvals(self):
        return self._diag_part()

    def _cond(self):
        return _core.ones_like(self._c())

    def _scaled(self, multiplier, **hints):
        return LinearOperatorScaledIdentity(self._num_rows, multiplier, **hints)

    def _linop_adjoint(self):
        return self._scaled(
            self._c(),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
        )

    def _linop_inverse(self):
        return self._scaled(
            1.0 / self._c(),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=True,
            is_positive_definite=self.is_positive_definite,
        )

    def _linop_cholesky(self):
        return self._scaled(
            _core.sqrt(self._c()),
            is_non_singular=True,
            is_self_adjoint=True,
            is_positive_definite=True,
        )

    def _linop_matmul(self, left, right):
        from .linear_operator_diag import LinearOperatorDiag

        hints = {"is_non_singular": combined_non_singular_hint(left, right)}
        if isinstance(right, LinearOperatorScaledIdentity):
            return self._scaled(left._c() * right._c(), **hints)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(read(right.diag) * left._c(1), is_square=True, **hints)
        return super()._linop_matmul(left, right)

    def _linop_solve(self, left, right):
        from .linear_operator_diag import LinearOperatorDiag

        hints = {"is_non_singular": combined_non_singular_hint(left, right)}
        if isinstance(right, LinearOperatorScaledIdentity):
            return self._scaled(right._c() / left._c(), **hints)
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(read(right.diag) / left._c(1), is_square=True, **hints)
        return super()._linop_solve(left, right)
