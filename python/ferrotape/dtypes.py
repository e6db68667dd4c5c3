"""TensorFlow's dtype objects. ``ft.float32 == "float32" == np.float32`` all hold."""

from ._core import DType

float16 = half = DType("float16")
bfloat16 = DType("bfloat16")
float32 = DType("float32")
float64 = double = DType("float64")
int32 = DType("int32")
int64 = DType("int64")
bool = DType("bool")  # noqa: A001 - TensorFlow's name


def as_dtype(type_value):
    """The DType for a DType, a name, a numpy dtype or a Python type."""
    return DType(type_value)


__all__ = [
    "DType",
    "as_dtype",
    "bfloat16",
    "bool",
    "double",
    "float16",
    "float32",
    "float64",
    "half",
    "int32",
    "int64",
]
