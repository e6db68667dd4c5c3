"""TensorFlow's exception types (``ft.errors``).

``InvalidArgumentError`` also derives from ``ValueError`` so that code catching the builtin
type, as many of TensorFlow's callers do, keeps working.
"""


class OpError(Exception):
    """An op failed; the message names the op and what it received versus expected."""


class InvalidArgumentError(OpError, ValueError):
    """An op received an argument it cannot use (shape, dtype or value)."""


class UnimplementedError(OpError, NotImplementedError):
    """TensorFlow offers this, ferrotape does not (yet)."""


class FailedPreconditionError(OpError, RuntimeError):
    """An API was used out of order."""


__all__ = ["OpError", "InvalidArgumentError", "UnimplementedError", "FailedPreconditionError"]
