"""NumPy-style ``keras.ops`` (Keras 3's ``keras.src.ops.numpy``), each over ferrotape's ops
and usable on KerasTensors (see ``operation``)."""

import numpy as np

import ferrotape as ft

from ... import _core
from ... import math as ft_math
from ..backend_dtypes import standardize_dtype
from .op_table import as_tensor, binary, make_op

_M = "keras.src.ops.numpy"
_X = ("x",)
_X12 = ("x1", "x2")
_AXIS = (("axis", None), ("keepdims", False))


def _reduce(fn):
    return lambda x, axis=None, keepdims=False: fn(as_tensor(x), axis=axis, keepdims=keepdims)


_INITIAL = (("initial", None),)


def _extremum(reduce, combine):
    def compute(x, axis=None, keepdims=False, initial=None):
        result = reduce(as_tensor(x), axis=axis, keepdims=keepdims)
        return result if initial is None else combine(result, as_tensor(initial, like=result))

    return compute


def _dtype(dtype):
    """An optional ``dtype`` argument as Keras reads it (``int`` is int64); None stays None."""
    return None if dtype is None else standardize_dtype(dtype)


def _cast(x, dtype):
    """``x`` in the optional ``dtype``."""
    return x if dtype is None else _core.cast(x, standardize_dtype(dtype))


# The dtype Keras 3's TensorFlow backend widens a product's operand to when no dtype is given.
_PROD_WIDENED = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32"}
_PROD_WIDENED["uint16"] = "uint32"


def _prod(x, axis=None, keepdims=False, dtype=None):
    # Keras 3 checks ``dtype`` and its TensorFlow backend then ignores it: the product keeps
    # ``x``'s dtype (prod(int32, dtype=float) is int32); only without one are narrow ints widened.
    x = as_tensor(x)
    if dtype is None:
        x = _core.cast(x, _PROD_WIDENED.get(x.dtype.name, x.dtype))
    else:
        standardize_dtype(dtype)
    return ft_math.reduce_prod(x, axis, keepdims)


def _arg_extremum(fn):
    def compute(x, axis=None, keepdims=False):
        x = as_tensor(x)
        if axis is None:  # Keras: the index into the flattened tensor, of x's rank if kept
            result = _core.cast(fn(_core.reshape(x, [-1]), 0), "int32")
            return _core.reshape(result, [1] * len(x.shape)) if keepdims else result
        result = _core.cast(fn(x, axis), "int32")
        return _core.expand_dims(result, axis) if keepdims else result

    return compute


def _unary(fn):
    return lambda x: fn(as_tensor(x))


def _get_item(x, key):
    # A key saved in a config comes back as a list: Keras reads it as a tuple of indices.
    return as_tensor(x)[tuple(key) if isinstance(key, list) else key]


def _mean(x, axis=None, keepdims=False):
    x = as_tensor(x)
    if not x.dtype.is_floating:  # Keras averages integers in float32
        x = _core.cast(x, "float32")
    return ft_math.reduce_mean(x, axis=axis, keepdims=keepdims)


def _clip(x, x_min, x_max):
    x = as_tensor(x)
    return _core.clip_by_value(x, as_tensor(x_min, like=x), as_tensor(x_max, like=x))


def _where(condition, x1=None, x2=None):
    condition = as_tensor(condition)
    if x1 is None and x2 is None:
        return ft.where(condition)
    x1 = as_tensor(x1, like=x2 if not isinstance(x2, (bool, int, float)) else None)
    return ft.where(condition, x1, as_tensor(x2, like=x1))


def _transpose(x, axes=None):
    return _core.transpose(as_tensor(x), perm=axes)


def _squeeze(x, axis=None):
    return _core.squeeze(as_tensor(x), axis=axis)


def _flip(x, axis=None):
    x = as_tensor(x)
    axes = list(range(len(x.shape))) if axis is None else np.atleast_1d(axis).tolist()
    return ft.reverse(x, axes)


def _cumsum(x, axis=None, dtype=None):
    x = _cast(as_tensor(x), dtype)
    if x.dtype == "bool":  # as Keras's TensorFlow backend: bools count as int32
        x = _core.cast(x, "int32")
    if axis is None:
        x, axis = _core.reshape(x, [-1]), 0
    return ft_math.cumsum(x, axis=axis)


def _concatenate(xs, axis=0):
    if isinstance(xs, (_core.Tensor, _core.Variable, np.ndarray)) and np.ndim(xs) > 0:
        # Keras's TensorFlow backend refuses one tensor (a ValueError, from numpy); reading its
        # rows as the list, as numpy does, would return what TensorFlow never gives.
        raise ValueError(
            f"keras.ops.concatenate: xs must be a list or tuple of tensors, received one "
            f"tensor of shape {list(np.shape(xs))}"
        )
    return _core.concat(list(xs), axis)


_rows = [
    # name, class, compute, tensor arguments, configuration
    ("add", "Add", binary(_core.add), _X12, ()),
    ("subtract", "Subtract", binary(_core.subtract), _X12, ()),
    ("multiply", "Multiply", binary(_core.multiply), _X12, ()),
    ("divide", "Divide", binary(ft_math.truediv), _X12, ()),
    ("true_divide", "TrueDivide", binary(ft_math.truediv), _X12, ()),
    ("floor_divide", "FloorDivide", binary(ft_math.floordiv), _X12, ()),
    ("mod", "Mod", binary(ft_math.floormod), _X12, ()),
    ("power", "Power", binary(_core.pow), _X12, ()),
    ("maximum", "Maximum", binary(_core.maximum), _X12, ()),
    ("minimum", "Minimum", binary(_core.minimum), _X12, ()),
    ("matmul", "Matmul", binary(ft.matmul), _X12, ()),
    ("equal", "Equal", binary(_core.equal), _X12, ()),
    ("not_equal", "NotEqual", binary(_core.not_equal), _X12, ()),
    ("greater", "Greater", binary(_core.greater), _X12, ()),
    ("greater_equal", "GreaterEqual", binary(_core.greater_equal), _X12, ()),
    ("less", "Less", binary(_core.less), _X12, ()),
    ("less_equal", "LessEqual", binary(_core.less_equal), _X12, ()),
    ("logical_and", "LogicalAnd", binary(_core.logical_and), _X12, ()),
    ("logical_or", "LogicalOr", binary(_core.logical_or), _X12, ()),
    ("logical_not", "LogicalNot", _unary(_core.logical_not), _X, ()),
    ("negative", "Negative", _unary(_core.negative), _X, ()),
    ("absolute", "Absolute", _unary(_core.abs), _X, ()),
    ("sign", "Sign", _unary(_core.sign), _X, ()),
    ("exp", "Exp", _unary(_core.exp), _X, ()),
    ("log", "Log", _unary(_core.log), _X, ()),
    ("log1p", "Log1p", _unary(ft_math.log1p), _X, ()),
    ("expm1", "Expm1", _unary(ft_math.expm1), _X, ()),
    ("sqrt", "Sqrt", _unary(_core.sqrt), _X, ()),
    ("square", "Square", _unary(_core.square), _X, ()),
    ("sin", "Sin", _unary(_core.sin), _X, ()),
    ("cos", "Cos", _unary(_core.cos), _X, ()),
    ("tanh", "Tanh", _unary(_core.tanh), _X, ()),
    ("floor", "Floor", _unary(_core.floor), _X, ()),
    ("ceil", "Ceil", _unary(_core.ceil), _X, ()),
    ("mean", "Mean", _mean, _X, _AXIS),
    ("sum", "Sum", _reduce(ft_math.reduce_sum), _X, _AXIS),
    ("max", "Max", _extremum(ft_math.reduce_max, _core.maximum), _X, _AXIS + _INITIAL),
    ("min", "Min", _extremum(ft_math.reduce_min, _core.minimum), _X, _AXIS + _INITIAL),
    ("prod", "Prod", _prod, _X, _AXIS + (("dtype", None),)),
    ("std", "Std", _reduce(ft_math.reduce_std), _X, _AXIS),
    ("var", "Var", _reduce(ft_math.reduce_variance), _X, _AXIS),
    (
        "argmax",
        "Argmax",
        _arg_extremum(_core.argmax),
        _X,
        (("axis", None), ("keepdims", False)),
    ),
    (
        "argmin",
        "Argmin",
        _arg_extremum(_core.argmin),
        _X,
        (("axis", None), ("keepdims", False)),
    ),
    (
        "reshape",
        "Reshape",
        lambda x, newshape: _core.reshape(as_tensor(x), newshape),
        _X,
        (("newshape", None),),
    ),
    ("transpose", "Transpose", _transpose, _X, (("axes", None),)),
    (
        "expand_dims",
        "ExpandDims",
        lambda x, axis: _core.expand_dims(as_tensor(x), axis),
        _X,
        (("axis", 0),),
    ),
    ("squeeze", "Squeeze", _squeeze, _X, (("axis", None),)),
    (
        "concatenate",
        "Concatenate",
        _concatenate,
        ("xs",),
        (("axis", 0),),
    ),
    ("stack", "Stack", lambda x, axis=0: _core.stack(list(x), axis), _X, (("axis", 0),)),
    ("clip", "Clip", _clip, _X, (("x_min", None), ("x_max", None))),
    ("where", "Where", _where, ("condition", "x1", "x2"), ()),
    ("cumsum", "Cumsum", _cumsum, _X, (("axis", None), ("dtype", None))),
    ("flip", "Flip", _flip, _X, (("axis", None),)),
    (
        "tile",
        "Tile",
        lambda x, repeats: _core.tile(as_tensor(x), repeats),
        _X,
        (("repeats", None),),
    ),
    (
        "zeros_like",
        "ZerosLike",
        lambda x, dtype=None: _core.zeros_like(as_tensor(x), dtype=_dtype(dtype)),
        _X,
        (("dtype", None),),
    ),
    (
        "ones_like",
        "OnesLike",
        lambda x, dtype=None: _core.ones_like(as_tensor(x), dtype=_dtype(dtype)),
        _X,
        (("dtype", None),),
    ),
    (
        "take",
        "Take",
        lambda x, indices, axis=None: _core.gather(as_tensor(x), indices, axis=axis or 0),
        ("x", "indices"),
        (("axis", None),),
    ),
    ("get_item", "GetItem", _get_item, ("x", "key"), ()),
]

for _row in _rows:
    make_op(globals(), *_row[:2], _M, *_row[2:])
# Keras's two names for one operation; set through globals() as the rows are, since these
# names (abs, sum, max, min) shadow builtins that this module never uses after this point.
globals()["abs"] = globals()["absolute"]

__all__ = sorted([row[0] for row in _rows] + ["abs"])
