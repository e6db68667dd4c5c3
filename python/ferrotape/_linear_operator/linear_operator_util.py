"""Helpers shared by the ``LinearOperator`` files (TensorFlow's ``linear_operator_util.py``
and ``property_hint_util.py``): argument conversion, batch broadcasting and the hint rules of
products."""

import numpy as _np

from .. import _core
from .._exports.linalg import adjoint as _adjoint
from ..dtypes import as_dtype


def keep_or_convert(x, dtype=None, name="argument"):
    """A ``Variable`` as it is (read at each use), anything else as a tensor of ``dtype``."""
    if isinstance(x, _core.Variable):
        if dtype is not None and x.dtype != as_dtype(dtype):
            raise TypeError(
                f"{name}: expected dtype {as_dtype(dtype).name}, received {x.dtype.name}"
            )
        return x
    if dtype is not None and _core.is_tensor(x) and x.dtype != as_dtype(dtype):
        raise TypeError(f"{name}: expected dtype {as_dtype(dtype).name}, received {x.dtype.name}")
    return _core.convert_to_tensor(x, dtype=dtype)


def read(x):
    """The current value of a kept argument, as a tensor."""
    return _core.convert_to_tensor(x)


def adjoint_if(x, flag):
    """``x``'s (batched) adjoint if ``flag``: the conjugate transpose (the transpose for real
    dtypes)."""
    return _adjoint(x) if flag else x


def broadcast_batch(a, b):
    """``a`` and ``b`` with their batch axes (all but the last two) broadcast to each other."""
    batch = _np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    a = a if tuple(a.shape[:-2]) == batch else _core.broadcast_to(a, [*batch, *a.shape[-2:]])
    b = b if tuple(b.shape[:-2]) == batch else _core.broadcast_to(b, [*batch, *b.shape[-2:]])
    return a, b


def eye(n, batch_shape, dtype):
    """``n x n`` identity matrices of ``dtype`` with the given batch shape."""
    identity = _core.constant(_np.eye(n, dtype=dtype.name))
    return _core.broadcast_to(identity, [*batch_shape, n, n]) if batch_shape else identity


def combined_non_singular_hint(*operators):
    """True if every operator is non-singular, False if one is singular, else None."""
    hints = [op.is_non_singular for op in operators]
    if any(h is False for h in hints):
        return False
    return True if all(h is True for h in hints) else None


def implied_hint(operators, key, given, message):
    """``True`` when every operator has hint ``key`` (then ``given`` must not be False), else
    ``given``: a direct sum or Kronecker product inherits what all its factors share."""
    if all(getattr(op, key) for op in operators):
        if given is False:
            raise ValueError(message)
        return True
    return given


def check_same_dtype(operators):
    """Raises TypeError unless the operators share one dtype."""
    if len({op.dtype for op in operators}) > 1:
        found = ", ".join(f"({op.name}, {op.dtype.name})" for op in operators)
        raise TypeError(f"Expected all operators to have the same dtype. Found {found}")


def is_square_product(left, right):
    """Whether ``left @ right`` is square, as far as their hints tell (TensorFlow's rule)."""
    if left.is_square and right.is_square:
        return True
    if left.is_square is False and right.is_square is False:
        return left.range_dimension == right.domain_dimension
    if left.is_square is not None and right.is_square is not None:
        return False
    return None
