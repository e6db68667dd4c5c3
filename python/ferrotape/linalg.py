"""``ft.linalg``: matrix products and dense linear algebra."""

from ._core import eye
from ._core.linalg import det, inv, matmul, matrix_transpose, solve
from .einsum import einsum, tensordot
from .norms import norm

adjoint = matrix_transpose

__all__ = [
    "adjoint",
    "det",
    "einsum",
    "eye",
    "inv",
    "matmul",
    "matrix_transpose",
    "norm",
    "solve",
    "tensordot",
]
