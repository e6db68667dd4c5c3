"""The shape, dtype and hints of a ``LinearOperator`` (the half of TensorFlow's
``linear_operator.py`` that describes an operator rather than applies it).

The hints (``is_non_singular``, ``is_self_adjoint``, ``is_positive_definite``, ``is_square``)
follow TensorFlow's consistency rules: positive definite implies non-singular, non-singular
and self-adjoint imply square, and a contradiction raises ``ValueError``.
"""

import numpy as _np

from .. import _core
from ..dtypes import as_dtype
from ..errors import InvalidArgumentError
from ..module import Module
from ..tensor_shape import TensorShape


class OperatorProperties(Module):
    """What every ``LinearOperator`` knows about itself: its name, dtype, shape and hints,
    and the checks of its arguments (the base of ``LinearOperator``)."""

    def __init__(
        self,
        dtype,
        graph_parents=None,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
        parameters=None,
    ):
        """Sets the dtype and the hints (for subclasses).

        Args:
            dtype: The operator's dtype; arguments of ``matmul`` and ``solve`` must have it.
            graph_parents: Deprecated in TensorFlow; ignored.
            is_non_singular: Expect the operator to be non-singular.
            is_self_adjoint: Expect the operator to equal its adjoint (its transpose).
            is_positive_definite: Expect ``x^T A x > 0`` for all nonzero ``x``.
            is_square: Expect the operator to be square.
            name: The operator's name (by default the class name).
            parameters: The arguments the operator was built from, as a dict.

        Raises:
            ValueError: if the hints contradict each other.
        """
        del graph_parents
        super().__init__(name=name or type(self).__name__)
        self._name = name or type(self).__name__
        if is_positive_definite:
            if is_non_singular is False:
                raise ValueError("A positive definite matrix is always non-singular.")
            is_non_singular = True
        if is_non_singular:
            if is_square is False:
                raise ValueError("A non-singular matrix is always square.")
            is_square = True
        if is_self_adjoint:
            if is_square is False:
                raise ValueError("A self-adjoint matrix is always square.")
            is_square = True
        self._is_square_hint = is_square
        self._dtype = as_dtype(dtype) if dtype is not None else None
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._parameters = dict(parameters or {})

    # ------------------------------------------------------------------------- properties

    @property
    def parameters(self):
        """The arguments the operator was built from, as a dict."""
        return dict(self._parameters)

    @property
    def dtype(self):
        """The dtype of the matrix this operator represents."""
        return self._dtype

    @property
    def graph_parents(self):
        """Deprecated in TensorFlow: always an empty list."""
        return []

    @property
    def is_non_singular(self):
        """The non-singular hint (``None``: unknown)."""
        return self._is_non_singular

    @property
    def is_self_adjoint(self):
        """The self-adjoint hint (``None``: unknown)."""
        return self._is_self_adjoint

    @property
    def is_positive_definite(self):
        """The positive-definite hint (``None``: unknown)."""
        return self._is_positive_definite

    @property
    def is_square(self):
        """Whether the operator is square: the hint, else whether its dimensions agree."""
        square = self.domain_dimension == self.range_dimension
        if self._is_square_hint is False and square:
            raise ValueError("User set is_square hint to False, but the operator was square.")
        return square if self._is_square_hint is None else self._is_square_hint

    @property
    def shape(self):
        """The static shape ``[B1, ..., Bb, M, N]``, a ``TensorShape``."""
        return TensorShape([int(d) for d in self._shape()])

    def shape_tensor(self, name="shape_tensor"):
        """The shape as an int32 tensor.

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A 1-D int32 tensor.
        """
        del name
        return _core.constant(_np.array(self.shape.as_list(), _np.int32))

    @property
    def batch_shape(self):
        """The batch part ``[B1, ..., Bb]`` of the shape, a ``TensorShape``."""
        return TensorShape(self.shape.as_list()[:-2])

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        """The batch shape as an int32 tensor.

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A 1-D int32 tensor.
        """
        del name
        return _core.constant(_np.array(self.batch_shape.as_list(), _np.int32))

    @property
    def tensor_rank(self):
        """The rank of the matrix's tensor: ``b + 2``."""
        return len(self.shape)

    def tensor_rank_tensor(self, name="tensor_rank_tensor"):
        """The tensor rank as an int32 scalar tensor.

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            An int32 scalar tensor.
        """
        del name
        return _core.constant(_np.int32(self.tensor_rank))

    @property
    def domain_dimension(self):
        """``N``: the size of the vectors the operator acts on."""
        return self.shape[-1]

    def domain_dimension_tensor(self, name="domain_dimension_tensor"):
        """``N`` as an int32 scalar tensor.

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            An int32 scalar tensor.
        """
        del name
        return _core.constant(_np.int32(self.domain_dimension))

    @property
    def range_dimension(self):
        """``M``: the size of the vectors the operator returns."""
        return self.shape[-2]

    def range_dimension_tensor(self, name="range_dimension_tensor"):
        """``M`` as an int32 scalar tensor.

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            An int32 scalar tensor.
        """
        del name
        return _core.constant(_np.int32(self.range_dimension))

    # ------------------------------------------------------------------------- checks

    def _check_input_dtype(self, x):
        if self.dtype is not None and x.dtype != self.dtype:
            raise TypeError(
                f"Expected argument to have dtype {self.dtype.name}. Found: {x.dtype.name} in "
                f"tensor of shape {x.shape}"
            )

    def _check_dimension(self, who, expected, got):
        if expected != got:
            raise ValueError(
                f"{self.name}.{who}: dimensions {expected} and {got} are not compatible"
            )

    def assert_non_singular(self, name="assert_non_singular"):
        """Checks that the operator is non-singular (condition number below ``1/eps``).

        Args:
            name: Ignored (TensorFlow's op name).

        Raises:
            InvalidArgumentError: if it is singular up to precision.
        """
        del name
        if self._can_use_cholesky():
            return self.assert_positive_definite()
        s = _np.linalg.svd(self.to_dense().numpy(), compute_uv=False)
        eps = (
            max(100.0, self.range_dimension, self.domain_dimension) * _np.finfo(self.dtype.name).eps
        )
        with _np.errstate(divide="ignore"):
            if not _np.all(s.max(-1) / s.min(-1) < 1.0 / eps):
                raise InvalidArgumentError("Singular matrix up to precision epsilon.")
        return None

    def assert_positive_definite(self, name="assert_positive_definite"):
        """Checks that the (self-adjoint) operator is positive definite.

        Args:
            name: Ignored (TensorFlow's op name).

        Raises:
            InvalidArgumentError: if its Cholesky decomposition fails.
        """
        del name
        values = _np.linalg.eigvalsh(self.to_dense().numpy())
        if not _np.all(values > 0):
            raise InvalidArgumentError("Cholesky decomposition was not successful.")
        return None

    def assert_self_adjoint(self, name="assert_self_adjoint"):
        """Checks that the operator equals its adjoint.

        Args:
            name: Ignored (TensorFlow's op name).

        Raises:
            InvalidArgumentError: if it is not.
        """
        del name
        dense = self.to_dense().numpy()
        if not _np.array_equal(dense, _np.swapaxes(dense, -1, -2)):
            raise InvalidArgumentError("Matrix was not equal to its adjoint.")
        return None

    def _can_use_cholesky(self):
        return bool(self.is_self_adjoint and self.is_positive_definite)

    def __repr__(self):
        return (
            f'<ferrotape.linalg.{type(self).__name__} "{self.name}" '
            f"batch_shape={self.batch_shape.as_list()} shape={self.shape.as_list()} "
            f"dtype={self.dtype.name if self.dtype is not None else None}>"
        )
