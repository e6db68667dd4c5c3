"""TensorFlow's dtype objects. ``ft.float32 == "float32" == np.float32`` all hold."""

from ._core import DType

float16 = half = DType("float16")
bfloat16 = DType("bfloat16")
float32 = DType("float32")
float64 = double = DType("float64")
int8 = DType("int8")
int16 = DType("int16")
int32 = DType("int32")
int64 = DType("int64")
uint8 = DType("uint8")
uint16 = DType("uint16")
uint32 = DType("uint32")
uint64 = DType("uint64")
complex64 = DType("complex64")
complex128 = DType("complex128")
bool = DType("bool")  # noqa: A001 - TensorFlow's name


def as_dtype(type_value):
    """Converts ``type_value`` to a ``DType``.

    Args:
        type_value: A ``DType``, a name (``"float32"``), a numpy dtype or type, or Python's
            ``float`` (float32) or ``bool``. Python's ``int`` and ``complex`` are refused, as
            TensorFlow refuses them (Keras's APIs read ``int`` as int64: see
            ``keras.backend.standardize_dtype``).

    Returns:
        The matching ``DType``.

    Raises:
        TypeError: if the value names no supported dtype.

    >>> import ferrotape as ft
    >>> import numpy as np
    >>> ft.as_dtype(np.float64) == ft.float64
    True
    """
    return DType(type_value)


__all__ = [
    "DType",
    "as_dtype",
    "bfloat16",
    "bool",
    "complex128",
    "complex64",
    "double",
    "float16",
    "float32",
    "float64",
    "half",
    "int16",
    "int32",
    "int64",
    "int8",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
]
