"""``tf.linalg.LinearOperator`` and its concrete operators, one file per operator as
TensorFlow lays them out (``tensorflow/python/ops/linalg/linear_operator_*.py``); exported
from ``ft.linalg``.

``ft.linalg`` imports this package, so its modules reach ``ft.linalg``'s own functions
(``cholesky``, ``solve``, ``diag_part``...) by importing it inside the methods that use them."""

from .linear_operator import LinearOperator
from .linear_operator_adjoint import LinearOperatorAdjoint
from .linear_operator_block_diag import LinearOperatorBlockDiag
from .linear_operator_block_lower_triangular import LinearOperatorBlockLowerTriangular
from .linear_operator_circulant import (
    LinearOperatorCirculant,
    LinearOperatorCirculant2D,
    LinearOperatorCirculant3D,
)
from .linear_operator_composition import LinearOperatorComposition
from .linear_operator_diag import LinearOperatorDiag
from .linear_operator_full_matrix import LinearOperatorFullMatrix
from .linear_operator_householder import LinearOperatorHouseholder
from .linear_operator_identity import LinearOperatorIdentity, LinearOperatorScaledIdentity
from .linear_operator_inversion import LinearOperatorInversion
from .linear_operator_kronecker import LinearOperatorKronecker
from .linear_operator_low_rank_update import LinearOperatorLowRankUpdate
from .linear_operator_lower_triangular import LinearOperatorLowerTriangular
from .linear_operator_permutation import LinearOperatorPermutation
from .linear_operator_toeplitz import LinearOperatorToeplitz
from .linear_operator_tridiag import LinearOperatorTridiag
from .linear_operator_zeros import LinearOperatorZeros

__all__ = [
    "LinearOperator",
    "LinearOperatorAdjoint",
    "LinearOperatorBlockDiag",
    "LinearOperatorBlockLowerTriangular",
    "LinearOperatorCirculant",
    "LinearOperatorCirculant2D",
    "LinearOperatorCirculant3D",
    "LinearOperatorComposition",
    "LinearOperatorDiag",
    "LinearOperatorFullMatrix",
    "LinearOperatorHouseholder",
    "LinearOperatorIdentity",
    "LinearOperatorInversion",
    "LinearOperatorKronecker",
    "LinearOperatorLowRankUpdate",
    "LinearOperatorLowerTriangular",
    "LinearOperatorPermutation",
    "LinearOperatorScaledIdentity",
    "LinearOperatorToeplitz",
    "LinearOperatorTridiag",
    "LinearOperatorZeros",
]
