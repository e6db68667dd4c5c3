"""TensorFlow's exception types (``ft.errors``).

``InvalidArgumentError`` also derives from ``ValueError`` so that code catching the builtin
type, as many of TensorFlow's callers do, keeps working; ``ResourceExhaustedError`` (a tensor too
large for the machine) is also a ``MemoryError`` for the same reason.
"""


class OpError(Exception):
    """An op failed; the message names the op and what it received versus expected."""


class InvalidArgumentError(OpError, ValueError):
    """An op received an argument it cannot use (shape, dtype or value)."""


class UnimplementedError(OpError, NotImplementedError):
    """TensorFlow offers this, ferrotape does not (yet)."""


class ResourceExhaustedError(OpError, MemoryError):
    """A tensor too large to allocate ("OOM when allocating tensor with shape ...")."""


class FailedPreconditionError(OpError, RuntimeError):
    """An API was used out of order."""


class NotFoundError(OpError):
    """Something asked for does not exist (a key not in a checkpoint)."""


class OutOfRangeError(OpError):
    """A read past the end of a sequence (``scan``/``foldl`` over zero elements)."""


class DataLossError(OpError):
    """Stored data is corrupt or truncated (a checkpoint whose checksum does not match)."""


__all__ = [
    "OpError",
    "InvalidArgumentError",
    "UnimplementedError",
    "ResourceExhaustedError",
    "FailedPreconditionError",
    "NotFoundError",
    "OutOfRangeError",
    "DataLossError",
]
