"""``tf.linalg.LinearOperatorLowRankUpdate``: ``A = L + U D V^H`` for an operator ``L`` and a
rank-``K`` update, solved by the Woodbury identity and the matrix determinant lemma."""

import numpy as _np

from .. import _core
from .._exports.linalg import matmul as _matmul
from .linear_operator import LinearOperator
from .linear_operator_diag import LinearOperatorDiag
from .linear_operator_identity import LinearOperatorIdentity
from .linear_operator_util import broadcast_batch, keep_or_convert, read

__all__ = ["LinearOperatorLowRankUpdate"]


class LinearOperatorLowRankUpdate(LinearOperator):
    """``A = L + U D V^H`` (``V = U`` and ``D = I`` by default), ``U``, ``V`` ``[..., N, K]``.

    With the capacitance ``C = D^-1 + V^H L^-1 U`` (``K x K``): ``A^-1 = L^-1 - L^-1 U C^-1
    V^H L^-1`` (Woodbury) and ``det A = det C det D det L`` (the determinant lemma); when
    ``L`` is self-adjoint positive definite, ``V = U`` and ``D > 0``, ``C`` is factored by
    Cholesky, as TensorFlow does.

    >>> import ferrotape as ft
    >>> base = ft.linalg.LinearOperatorDiag([1.0, 2.0], is_positive_definite=True)
    >>> a = ft.linalg.LinearOperatorLowRankUpdate(base, u=[[1.0], [1.0]])
    >>> a.to_dense().numpy()
    array([[2., 1.],
           [1., 3.]], dtype=float32)
    >>> round(float(a.determinant()), 4), a.is_positive_definite
    (5.0, True)
    """

    def __init__(
        self,
        base_operator,
        u,
        diag_update=None,
        v=None,
        is_diag_update_positive=None,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorLowRankUpdate",
    ):
        """Builds ``L + U D V^H``.

        Args:
            base_operator: The ``LinearOperator`` ``L``.
            u: A tensor (or ``Variable``) ``[..., N, K]`` of ``L``'s dtype.
            diag_update: The diagonal of ``D``, ``[..., K]`` (the identity if None).
            v: A tensor ``[..., N, K]`` (``u`` if None).
            is_diag_update_positive: Expect ``D > 0`` (implied when ``D`` is the identity).
            is_non_singular: Expect ``A`` to be non-singular.
            is_self_adjoint: Expect ``A`` to be self-adjoint (implied for ``L`` self-adjoint
                and ``V = U``).
            is_positive_definite: Expect ``A`` to be positive definite.
            is_square: Expect ``A`` to be square.
            name: The operator's name.

        Raises:
            ValueError: for hints contradicting the arguments or mismatched shapes.
        """
        if diag_update is None:
            if is_diag_update_positive is False:
                raise ValueError(
                    "Default diagonal is the identity, which is positive.  However, user set "
                    "'is_diag_update_positive' to False."
                )
            is_diag_update_positive = True
        self._use_cholesky = bool(
            base_operator.is_positive_definite
            and base_operator.is_self_adjoint
            and is_diag_update_positive
            and v is None
        )
        if base_operator.is_self_adjoint and v is None:
            if is_self_adjoint is False:
                raise ValueError(
                    "A = L + UDU^H, with L self-adjoint and D real diagonal.  Since UDU^H is "
                    "self-adjoint, this must be a self-adjoint operator."
                )
            is_self_adjoint = True
        if self._use_cholesky:
            if (
                is_positive_definite is False
                or is_self_adjoint is False
                or is_non_singular is False
            ):
                raise ValueError("Arguments imply this is self-adjoint positive-definite operator.")
            is_positive_definite = True
            is_self_adjoint = True
        dtype = base_operator.dtype
        self._base_operator = base_operator
        self._u = keep_or_convert(u, dtype, name="u")
        self._v = self._u if v is None else keep_or_convert(v, dtype, name="v")
        self._diag_update = (
            None if diag_update is None else keep_or_convert(diag_update, dtype, name="diag_update")
        )
        self._is_diag_update_positive = is_diag_update_positive
        rank = self._u.shape[-1]
        if self._diag_update is None:
            self._diag_operator = LinearOperatorIdentity(rank, dtype=dtype)
        else:
            self._diag_operator = LinearOperatorDiag(
                self._diag_update, is_positive_definite=is_diag_update_positive
            )
        self._check_shapes()
        super().__init__(
            dtype=dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
            parameters={
                "base_operator": base_operator,
                "u": u,
                "diag_update": diag_update,
                "v": v,
                "is_diag_update_positive": is_diag_update_positive,
                "name": name,
            },
        )

    def _check_shapes(self):
        u, v = self._u.shape.as_list(), self._v.shape.as_list()
        if len(u) < 2 or u[-2:] != v[-2:] or u[-2] != self._base_operator.domain_dimension:
            raise ValueError(
                f"LinearOperatorLowRankUpdate: u and v must be [..., N, K] with N = "
                f"{self._base_operator.domain_dimension}; received {u} and {v}"
            )
        if self._diag_update is not None and self._diag_update.shape[-1] != u[-1]:
            raise ValueError(
                f"LinearOperatorLowRankUpdate: diag_update must have K = {u[-1]} entries, "
                f"received shape {self._diag_update.shape}"
            )

    @property
    def u(self):
        """``U``."""
        return self._u

    @property
    def v(self):
        """``V`` (``U`` itself when not given)."""
        return self._v

    @property
    def diag_update(self):
        """The diagonal of ``D`` (None for the identity)."""
        return self._diag_update

    @property
    def diag_operator(self):
        """``D`` as an operator (a ``LinearOperatorDiag`` or ``LinearOperatorIdentity``)."""
        return self._diag_operator

    @property
    def base_operator(self):
        """``L``."""
        return self._base_operator

    @property
    def is_diag_update_positive(self):
        """The hint that ``D > 0``."""
        return self._is_diag_update_positive

    def _uv(self):
        u = read(self._u)
        return u, (u if self._v is self._u else read(self._v))

    def _slice_param_ndims(self):
        return {"base_operator": 0, "u": 2, "v": 2, "diag_update": 1}

    def _shape(self):
        batch = _np.broadcast_shapes(
            tuple(self._base_operator.batch_shape.as_list()),
            tuple(self._diag_operator.batch_shape.as_list()),
            tuple(self._u.shape[:-2]),
            tuple(self._v.shape[:-2]),
        )
        return [*batch, *self._base_operator.shape.as_list()[-2:]]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        u, v = self._uv()
        leading = self._base_operator.matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        # A^H = L^H + V D U^H: the roles of U and V swap.
        left, right = (v, u) if adjoint else (u, v)
        inner = self._diag_operator.matmul(
            _matmul(right, x, transpose_a=True, transpose_b=adjoint_arg)
        )
        return leading + _matmul(left, inner)

    def _capacitance(self, u, v, adjoint=False):
        """``D^-1 + V^H L^-1 U`` (with ``L^H`` for the adjoint, whose U and V swap)."""
        l_inv_u = self._base_operator.solve(u, adjoint=adjoint)
        return self._diag_operator.inverse().add_to_tensor(_matmul(v, l_inv_u, transpose_a=True))

    def _determinant(self):
        if self.is_positive_definite:
            return _core.exp(self.log_abs_determinant())
        from .._exports.linalg import det

        u, v = self._uv()
        return (
            det(self._capacitance(u, v))
            * self._diag_operator.determinant()
            * self._base_operator.determinant()
        )

    def _log_abs_determinant(self):
        from .. import linalg

        u, v = self._uv()
        capacitance = self._capacitance(u, v)
        if self._use_cholesky:
            chol_diag = linalg.diag_part(linalg.cholesky(capacitance))
            log_abs_c = 2.0 * _core.reduce_sum(_core.log(chol_diag), -1)
        else:
            log_abs_c = linalg.slogdet(capacitance)[1]
        return (
            log_abs_c
            + self._diag_operator.log_abs_determinant()
            + self._base_operator.log_abs_determinant()
        )

    def _diag_part(self):
        u, v = self._uv()
        product = u * v
        if self._diag_update is not None:
            product = product * _core.expand_dims(read(self._diag_update), -2)
        return _core.reduce_sum(product, -1) + self._base_operator.diag_part()

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        from .. import linalg

        if self._base_operator.is_non_singular is False:
            raise ValueError(
                "Solve not implemented unless this is a perturbation of a non-singular "
                "LinearOperator."
            )
        u, v = self._uv()
        if adjoint:  # A^H = L^H + V D U^H
            u, v = v, u
        capacitance = self._capacitance(u, v, adjoint=adjoint)
        l_inv_rhs = self._base_operator.solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        vh_l_inv_rhs = _matmul(v, l_inv_rhs, transpose_a=True)
        if self._use_cholesky:
            chol, vh_l_inv_rhs = broadcast_batch(linalg.cholesky(capacitance), vh_l_inv_rhs)
            c_inv = linalg.cholesky_solve(chol, vh_l_inv_rhs)
        else:
            capacitance, vh_l_inv_rhs = broadcast_batch(capacitance, vh_l_inv_rhs)
            c_inv = linalg.solve(capacitance, vh_l_inv_rhs)
        return l_inv_rhs - self._base_operator.solve(_matmul(u, c_inv), adjoint=adjoint)
