"""``ft.linalg``: matrix products and dense linear algebra."""

from ._exports.linalg import *  # noqa: F403 (the native names: scripts/gen_bindings.py)
from ._exports.linalg import __all__ as _native
from .einsum import einsum, tensordot
from .norms import norm

__all__ = [*_native, "einsum", "norm", "tensordot"]
