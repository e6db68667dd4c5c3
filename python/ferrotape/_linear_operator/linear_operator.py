"""``tf.linalg.LinearOperator``: a matrix known by how it acts, without forming it.

The base class holds what TensorFlow's does: the shape, dtype and hints (inherited from
``linear_operator_properties.py``), and the public methods, which check their arguments and call
the subclass's ``_matmul``, ``_solve``, ``_determinant`` and so on. The defaults of the optional
ones go through the dense matrix (``to_dense``), as TensorFlow's do.

Everything is composed of ferrotape ops, so the operators differentiate on a tape with respect
to the tensors and variables they were built from. Variables are kept as they are and read when
the operator is used, so a tape opened after the operator was built still sees the reads.
"""

from .. import _core
from .linear_operator_properties import OperatorProperties
from .linear_operator_util import (
    adjoint_if,
    broadcast_batch,
    combined_non_singular_hint,
    eye,
    is_square_product,
)

__all__ = ["LinearOperator"]


# ----------------------------------------------------------------------------- the base class


class LinearOperator(OperatorProperties):
    """Base class for a (batch of) linear operators ``A``: ``[B1, ..., Bb, M, N]`` matrices
    known by their action ``x -> A x``.

    Subclasses define ``_shape`` (the static shape as a list) and ``_matmul``; every other
    method has a default going through ``to_dense`` that a subclass overrides where its
    structure gives something cheaper (a diagonal solves by division, a triangle by
    substitution). The methods differentiate through the operator's tensors and variables.

    >>> import ferrotape as ft
    >>> operator = ft.linalg.LinearOperatorFullMatrix([[1.0, 2.0], [3.0, 4.0]])
    >>> operator.shape
    TensorShape([2, 2])
    >>> operator.matvec([1.0, 1.0]).numpy()
    array([3., 7.], dtype=float32)
    >>> float(operator.determinant())
    -2.0
    """

    # ------------------------------------------------------------------------- products

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        """``A @ x`` (``A^T`` with ``adjoint``, ``x^T`` with ``adjoint_arg``).

        Args:
            x: A tensor ``[..., N, R]`` (``[..., R, N]`` with ``adjoint_arg``) of the
                operator's dtype, or a ``LinearOperator`` (the result is then an operator).
            adjoint: Multiply by the adjoint ``A^H`` instead.
            adjoint_arg: Multiply ``x``'s adjoint instead.
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor ``[..., M, R]`` (batch axes broadcast), or a ``LinearOperator``.

        Raises:
            ValueError: if the dimensions do not match.
            TypeError: if ``x``'s dtype is not the operator's.
        """
        del name
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            if right.range_dimension != left.domain_dimension:
                raise ValueError(
                    "Operators are incompatible. Expected `x` to have dimension "
                    f"{left.domain_dimension} but got {right.range_dimension}."
                )
            return left._linop_matmul(left, right)
        x = _core.convert_to_tensor(x)
        self._check_input_dtype(x)
        self._check_dimension(
            "matmul",
            self.shape[-2 if adjoint else -1],
            x.shape[-1 if adjoint_arg else -2],
        )
        return self._matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def __matmul__(self, other):
        return self.matmul(other)

    def __getitem__(self, slices):
        from .slicing import batch_slice

        return batch_slice(self, slices)

    def _slice_param_ndims(self):
        """For batch slicing: each tensor parameter's number of matrix (non-batch) axes;
        operator parameters are sliced themselves. Subclasses that can be sliced say so."""
        raise NotImplementedError(f"{type(self).__name__} does not support batch slicing")

    def _linop_matmul(self, left, right):
        from .linear_operator_composition import LinearOperatorComposition
        from .linear_operator_identity import LinearOperatorIdentity
        from .linear_operator_zeros import LinearOperatorZeros

        if isinstance(right, LinearOperatorIdentity):
            return left
        if isinstance(right, LinearOperatorZeros):
            if not right.is_square or not left.is_square:
                raise ValueError(
                    "Matmul with non-square `LinearOperator`s or non-square "
                    "`LinearOperatorZeros` not supported at this time."
                )
            return right
        is_square = is_square_product(left, right)
        hints = {"is_non_singular": None, "is_self_adjoint": None, "is_positive_definite": None}
        if is_square:
            hints["is_non_singular"] = combined_non_singular_hint(left, right)
        elif is_square is False:
            hints = dict.fromkeys(hints, False)
        return LinearOperatorComposition([left, right], is_square=is_square, **hints)

    def _matvec(self, x, adjoint=False):
        return _core.squeeze(self.matmul(_core.expand_dims(x, -1), adjoint=adjoint), [-1])

    def matvec(self, x, adjoint=False, name="matvec"):
        """``A @ x`` for (batched) vectors ``x``.

        Args:
            x: A tensor ``[..., N]`` (``[..., M]`` with ``adjoint``) of the operator's dtype.
            adjoint: Multiply by the adjoint ``A^H`` instead.
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor ``[..., M]`` (``[..., N]`` with ``adjoint``).
        """
        del name
        x = _core.convert_to_tensor(x)
        self._check_input_dtype(x)
        self._check_dimension("matvec", self.shape[-2 if adjoint else -1], x.shape[-1])
        return self._matvec(x, adjoint=adjoint)

    # ------------------------------------------------------------------------- determinants

    def _require_square(self):
        if self.is_square is False:
            raise NotImplementedError(
                "Determinant not implemented for an operator that is expected to not be square."
            )

    def _determinant(self):
        if self._can_use_cholesky():
            return _core.exp(self.log_abs_determinant())
        from .._exports.linalg import det

        return det(self.to_dense())

    def determinant(self, name="det"):
        """The determinant of each batch member.

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor of shape ``[B1, ..., Bb]``.

        Raises:
            NotImplementedError: if the operator is expected not to be square.
        """
        del name
        self._require_square()
        return self._determinant()

    def _log_abs_determinant(self):
        from .. import linalg

        if self._can_use_cholesky():
            diagonal = linalg.diag_part(linalg.cholesky(self.to_dense()))
            return 2.0 * _core.reduce_sum(_core.log(diagonal), -1)
        return linalg.slogdet(self.to_dense())[1]

    def log_abs_determinant(self, name="log_abs_det"):
        """``log |det A|`` for each batch member.

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor of shape ``[B1, ..., Bb]``.

        Raises:
            NotImplementedError: if the operator is expected not to be square.
        """
        del name
        self._require_square()
        return self._log_abs_determinant()

    # ------------------------------------------------------------------------- solves

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        from .. import linalg

        rhs = adjoint_if(rhs, adjoint_arg)
        if self._can_use_cholesky():
            chol, rhs = broadcast_batch(linalg.cholesky(self.to_dense()), rhs)
            return linalg.cholesky_solve(chol, rhs)
        matrix, rhs = broadcast_batch(adjoint_if(self.to_dense(), adjoint), rhs)
        return linalg.solve(matrix, rhs)

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        """``X`` with ``A @ X = rhs`` (``A^H`` with ``adjoint``, ``rhs^H`` with
        ``adjoint_arg``).

        Args:
            rhs: A tensor ``[..., M, R]`` of the operator's dtype, or a ``LinearOperator``
                (the result is then the operator ``A^-1 rhs``).
            adjoint: Solve with the adjoint ``A^H`` instead.
            adjoint_arg: Use ``rhs``'s adjoint.
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor ``[..., N, R]``, or a ``LinearOperator``.

        Raises:
            NotImplementedError: if the operator is expected to be singular or not square.
            ValueError: if the dimensions do not match.
        """
        del name
        if self.is_non_singular is False:
            raise NotImplementedError(
                "Exact solve not implemented for an operator that is expected to be singular."
            )
        if self.is_square is False:
            raise NotImplementedError(
                "Exact solve not implemented for an operator that is expected to not be square."
            )
        if isinstance(rhs, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = rhs.adjoint() if adjoint_arg else rhs
            if right.range_dimension != left.domain_dimension:
                raise ValueError(
                    "Operators are incompatible. Expected `rhs` to have dimension "
                    f"{left.domain_dimension} but got {right.range_dimension}."
                )
            return left._linop_solve(left, right)
        rhs = _core.convert_to_tensor(rhs)
        self._check_input_dtype(rhs)
        self._check_dimension(
            "solve", self.shape[-1 if adjoint else -2], rhs.shape[-1 if adjoint_arg else -2]
        )
        return self._solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _linop_solve(self, left, right):
        from .linear_operator_composition import LinearOperatorComposition
        from .linear_operator_identity import LinearOperatorIdentity

        if isinstance(right, LinearOperatorIdentity):
            return left.inverse()
        is_square = is_square_product(left, right)
        hints = {"is_non_singular": None, "is_self_adjoint": None, "is_positive_definite": None}
        if is_square:
            hints["is_non_singular"] = combined_non_singular_hint(left, right)
        elif is_square is False:
            hints = dict.fromkeys(hints, False)
        return LinearOperatorComposition([left.inverse(), right], is_square=is_square, **hints)

    def _solvevec(self, rhs, adjoint=False):
        return _core.squeeze(self.solve(_core.expand_dims(rhs, -1), adjoint=adjoint), [-1])

    def solvevec(self, rhs, adjoint=False, name="solve"):
        """``x`` with ``A @ x = rhs`` for (batched) vectors.

        Args:
            rhs: A tensor ``[..., M]`` of the operator's dtype.
            adjoint: Solve with the adjoint ``A^H`` instead.
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor ``[..., N]``.
        """
        del name
        rhs = _core.convert_to_tensor(rhs)
        self._check_input_dtype(rhs)
        self._check_dimension("solvevec", self.shape[-1 if adjoint else -2], rhs.shape[-1])
        return self._solvevec(rhs, adjoint=adjoint)

    # ------------------------------------------------------------------------- derived operators

    def adjoint(self, name="adjoint"):
        """The adjoint operator ``A^H`` (``self`` when the operator is self-adjoint).

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A ``LinearOperator``.
        """
        del name
        if self.is_self_adjoint is True:
            return self
        return self._linop_adjoint()

    H = property(adjoint, None, None, "The adjoint operator ``A^H`` (see ``adjoint``).")

    def _linop_adjoint(self):
        from .linear_operator_adjoint import LinearOperatorAdjoint

        return LinearOperatorAdjoint(
            self,
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=self.is_square,
        )

    def inverse(self, name="inverse"):
        """The inverse operator ``A^-1``.

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A ``LinearOperator``.

        Raises:
            ValueError: if the operator is expected to be singular or not square.
        """
        del name
        if self.is_square is False:
            raise ValueError(
                "Cannot take the Inverse: This operator represents a non square matrix."
            )
        if self.is_non_singular is False:
            raise ValueError("Cannot take the Inverse: This operator represents a singular matrix.")
        return self._linop_inverse()

    def _linop_inverse(self):
        from .linear_operator_inversion import LinearOperatorInversion

        return LinearOperatorInversion(
            self,
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=self.is_square,
        )

    def cholesky(self, name="cholesky"):
        """The lower-triangular Cholesky factor ``L`` (``A = L L^H``) as an operator.

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A ``LinearOperator``.

        Raises:
            ValueError: unless the operator is hinted self-adjoint and positive definite.
        """
        del name
        if not self._can_use_cholesky():
            raise ValueError(
                "Cannot take the Cholesky decomposition: Not a positive definite self adjoint "
                "matrix."
            )
        return self._linop_cholesky()

    def _linop_cholesky(self):
        from .. import linalg
        from .linear_operator_lower_triangular import LinearOperatorLowerTriangular

        return LinearOperatorLowerTriangular(
            linalg.cholesky(self.to_dense()),
            is_non_singular=True,
            is_self_adjoint=False,
            is_square=True,
        )

    # ------------------------------------------------------------------------- dense views

    def _to_dense(self):
        return self.matmul(eye(self.domain_dimension, self.batch_shape.as_list(), self.dtype))

    def to_dense(self, name="to_dense"):
        """The dense (batch) matrix this operator represents.

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor of shape ``[B1, ..., Bb, M, N]``.
        """
        del name
        return self._to_dense()

    def _diag_part(self):
        from .. import linalg

        return linalg.diag_part(self.to_dense())

    def diag_part(self, name="diag_part"):
        """The main diagonal of each batch member.

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor of shape ``[B1, ..., Bb, min(M, N)]``.
        """
        del name
        return self._diag_part()

    def _trace(self):
        return _core.reduce_sum(self.diag_part(), -1)

    def trace(self, name="trace"):
        """The sum of the main diagonal of each batch member.

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor of shape ``[B1, ..., Bb]``.
        """
        del name
        return self._trace()

    def _add_to_tensor(self, x):
        return self.to_dense() + x

    def add_to_tensor(self, x, name="add_to_tensor"):
        """``A + x`` as a dense tensor.

        Args:
            x: A tensor ``[..., M, N]`` of the operator's dtype.
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor of ``x``'s shape (batch axes broadcast).
        """
        del name
        x = _core.convert_to_tensor(x)
        self._check_input_dtype(x)
        return self._add_to_tensor(x)

    def _eigvals(self):
        from .. import linalg

        return linalg.eigvalsh(self.to_dense())

    def eigvals(self, name="eigvals"):
        """The eigenvalues of each batch member (self-adjoint operators only).

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor of shape ``[B1, ..., Bb, N]``.

        Raises:
            NotImplementedError: unless the operator is hinted self-adjoint.
        """
        del name
        if not self.is_self_adjoint:
            raise NotImplementedError("Only self-adjoint matrices are supported.")
        return self._eigvals()

    def _cond(self):
        from .. import linalg

        if not self.is_self_adjoint:
            values = linalg.svd(self.to_dense(), compute_uv=False)
        else:
            values = _core.abs(self.eigvals())
        return _core.reduce_max(values, -1) / _core.reduce_min(values, -1)

    def cond(self, name="cond"):
        """The condition number of each batch member (largest over smallest singular value).

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor of shape ``[B1, ..., Bb]``.
        """
        del name
        return self._cond()
