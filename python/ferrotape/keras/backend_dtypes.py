"""Keras's dtype helpers (Keras 3's ``keras.src.backend.common.dtypes``): dtype names, kinds
and the type-promotion rule of ``result_type``, which ``ft.keras.backend`` exports.

Promotion follows Keras's lattice (JAX's): ``bool < int (Python) < uint8/int8 < ...``, the
widest unsigned and signed integers meet in a weak float, floats above every integer,
``bfloat16`` and ``float16`` meeting in ``float32``. A Python ``int`` or ``float`` is weak:
it takes the other operand's type when that is wide enough.

>>> result_type("int8", "uint8"), result_type("int32", float), result_type("float16", float)
('int16', 'float32', 'float16')
"""

import numpy as np

import ferrotape as ft

from .backend_config import floatx

_ALLOWED = {
    "bool",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "int8",
    "int16",
    "int32",
    "int64",
    "bfloat16",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "string",
}
# What Keras means by a Python type given as a dtype (TensorFlow's own ops refuse int and complex).
_PYTHON_TYPES = {bool: "bool", int: "int64", float: "float32", complex: "complex128", str: "string"}
# Each type's immediate successors in the promotion lattice; "int*"/"float*" are the weak
# Python int and float.
_LATTICE = {
    "bool": ("int*",),
    "int*": ("uint8", "int8"),
    "uint8": ("uint16", "int16"),
    "uint16": ("uint32", "int32"),
    "uint32": ("uint64", "int64"),
    "uint64": ("float*",),
    "int8": ("int16",),
    "int16": ("int32",),
    "int32": ("int64",),
    "int64": ("float*",),
    "float*": ("bfloat16", "float16"),
    "bfloat16": ("float32",),
    "float16": ("float32",),
    "float32": ("float64",),
    "float64": (),
}


def standardize_dtype(dtype):
    """The Keras name of ``dtype`` (a name, a ferrotape/numpy dtype or a Python type; None
    gives ``floatx()``).

    Args:
        dtype: the dtype to name.

    Returns:
        A string such as "float32".
    """
    if dtype is None:
        return floatx()
    if dtype in _PYTHON_TYPES:
        return _PYTHON_TYPES[dtype]
    if isinstance(dtype, str):
        name = dtype
    elif isinstance(dtype, ft.DType):
        name = dtype.name
    else:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            name = getattr(dtype, "name", getattr(dtype, "__name__", str(dtype)))
    if name == "int":
        name = "int64"
    if name not in _ALLOWED:
        raise ValueError(f"Invalid dtype: {dtype}")
    return name


def as_dtype(dtype):
    """The ``ft.DType`` a Keras API means by ``dtype`` (not None): a Python type by Keras's
    rule (``int`` is int64, ``float`` float32, ``complex`` complex128), anything else as
    ``ft.as_dtype`` reads it.

    >>> as_dtype(int).name, as_dtype("float16").name
    ('int64', 'float16')
    """
    if isinstance(dtype, type) and dtype in _PYTHON_TYPES:
        dtype = _PYTHON_TYPES[dtype]
    return ft.as_dtype(dtype)


def is_float_dtype(dtype):
    """Whether ``dtype`` is a floating-point type."""
    return standardize_dtype(dtype).startswith(("float", "bfloat"))


def is_int_dtype(dtype):
    """Whether ``dtype`` is a (signed or unsigned) integer type."""
    return standardize_dtype(dtype).startswith(("int", "uint"))


def _upper_bounds(node):
    bounds, frontier = {node}, [node]
    while frontier:
        for successor in _LATTICE[frontier.pop()]:
            if successor not in bounds:
                bounds.add(successor)
                frontier.append(successor)
    return bounds


def _least(candidates):
    # The least element: the one every other candidate is above.
    for node in candidates:
        if all(other in _upper_bounds(node) for other in candidates):
            return node
    raise AssertionError(f"promotion lattice has no least element among {candidates}")


def result_type(*dtypes):
    """The dtype that operands of ``dtypes`` promote to (see the module's doc); no argument
    gives ``floatx()``.

    Args:
        *dtypes: dtype names, dtypes or the Python types ``bool``, ``int``, ``float``.

    Returns:
        A dtype name.
    """
    if not dtypes:
        return floatx()
    nodes = []
    for dtype in dtypes:
        if dtype is int:
            nodes.append("int*")
        elif dtype is float:
            nodes.append("float*")
        else:
            name = standardize_dtype(dtype)
            if name not in _LATTICE:
                raise ValueError(f"result_type: cannot promote dtype {name!r}.")
            nodes.append(name)
    common = set.intersection(*(_upper_bounds(node) for node in nodes))
    result = _least(common)
    return {"int*": "int32", "float*": floatx()}.get(result, result)
