"""``tf.linalg.LinearOperator`` and its concrete operators, one file per operator as
TensorFlow lays them out (``tensorflow/python/ops/linalg/linear_operator_*.py``); exported
from ``ft.linalg``."""

from .linear_operator import LinearOperator
from .linear_operator_adjoint import LinearOperatorAdjoint
from .linear_operator_composition import LinearOperatorComposition
from .linear_operator_diag import LinearOperatorDiag
from .linear_operator_full_matrix import LinearOperatorFullMatrix
from .linear_operator_identity import LinearOperatorIdentity, LinearOperatorScaledIdentity
from .linear_operator_inversion import LinearOperatorInversion
from .linear_operator_lower_triangular import LinearOperatorLowerTriangular
from .linear_operator_zeros import LinearOperatorZeros

__all__ = [
    "LinearOperator",
    "LinearOperatorAdjoint",
    "LinearOperatorComposition",
    "LinearOperatorDiag",
    "LinearOperatorFullMatrix",
    "LinearOperatorIdentity",
    "LinearOperatorInversion",
    "LinearOperatorLowerTriangular",
    "LinearOperatorScaledIdentity",
    "LinearOperatorZeros",
]
