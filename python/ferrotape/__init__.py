"""ferrotape: eager automatic differentiation with TensorFlow 2's ``GradientTape`` API.

``import ferrotape as tf`` runs typical tape code unchanged; the engine is Rust.
"""

import builtins as _builtins
import contextlib as _contextlib
import reprlib as _reprlib

import numpy as _np

from . import _core, config, data, debugging, errors, linalg, math, nest, nn, random, train
from ._core import (
    Tensor,
    Variable,
    abs,
    acos,
    add,
    add_n,
    argmax,
    argmin,
    asin,
    atan,
    broadcast_to,
    cast,
    ceil,
    clip_by_value,
    concat,
    constant,
    convert_to_tensor,
    cos,
    cosh,
    divide,
    equal,
    exp,
    expand_dims,
    eye,
    fill,
    floor,
    gather,
    gather_nd,
    greater,
    greater_equal,
    identity,
    is_tensor,
    less,
    less_equal,
    linspace,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    one_hot,
    ones,
    ones_like,
    pad,
    pow,
    range,
    rank,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    reshape,
    round,
    scatter_nd,
    shape,
    sigmoid,
    sign,
    sin,
    sinh,
    size,
    slice,
    split,
    sqrt,
    square,
    squeeze,
    stack,
    subtract,
    tan,
    tanh,
    tile,
    transpose,
    truediv,
    unstack,
    zeros,
    zeros_like,
)
from ._core.linalg import matmul
from .clip import clip_by_global_norm, clip_by_norm
from .debugging import assert_equal, assert_greater, assert_less, assert_rank
from .dtypes import (
    DType,
    as_dtype,
    bfloat16,
    bool,
    double,
    float16,
    float32,
    float64,
    half,
    int32,
    int64,
)
from .einsum import einsum, tensordot
from .gradients import custom_gradient, stop_gradient
from .module import Module
from .norms import norm
from .tape import GradientTape, UnconnectedGradients
from .tensor_shape import TensorShape

__version__ = "0.1.0"

newaxis = None


def where(condition, x=None, y=None, name=None):
    """``condition ? x : y`` with broadcasting; with only ``condition``, the int64 indices
    of its true elements, shape ``[n, rank]``."""
    del name
    if x is None and y is None:
        return constant(_np.argwhere(_np.asarray(condition)).astype(_np.int64))
    if x is None or y is None:
        raise ValueError("where: x and y must both be given, or neither")
    return _core.select(condition, x, y)


def strided_slice(input_, begin, end, strides=None, name=None):
    """``input_[begin[0]:end[0]:strides[0], ...]`` (without TensorFlow's bit masks)."""
    del name
    begin, end = _int_list("begin", begin), _int_list("end", end)
    strides = [1] * len(begin) if strides is None else _int_list("strides", strides)
    if not len(begin) == len(end) == len(strides):
        raise ValueError(
            f"strided_slice: begin, end and strides must have the same length, received "
            f"{len(begin)}, {len(end)} and {len(strides)}"
        )
    if 0 in strides:
        raise ValueError(f"strided_slice: strides must be non-zero, received strides={strides}")
    index = tuple(_builtins.slice(b, e, s) for b, e, s in zip(begin, end, strides, strict=True))
    return convert_to_tensor(input_)[index]


def _int_list(name, values):
    """A 1-D list of ints from a list, tuple, array or tensor (strided_slice's arguments)."""
    array = _np.asarray(values.numpy() if hasattr(values, "numpy") else values, dtype=object)
    items = array.reshape(-1).tolist() if array.ndim <= 1 else None
    if items is None or not all(
        isinstance(v, (_builtins.int, _np.integer)) and not isinstance(v, _builtins.bool)
        for v in items
    ):
        raise ValueError(
            f"strided_slice: {name} must be a list of ints, received {name}={_reprlib.repr(values)}"
        )
    return [_builtins.int(v) for v in items]


def function(func=None, **kwargs):
    """``tf.function`` compiles a graph in TensorFlow; ferrotape is eager and fast as it is,
    so the decorated function runs unchanged."""
    del kwargs
    if func is None:
        return lambda f: f
    return func


def device(device_name):
    """Device placement scope; ferrotape runs on the CPU, so this is a no-op."""
    del device_name
    return _contextlib.nullcontext()


def executing_eagerly():
    return True


def __getattr__(name):
    # ``ft.keras`` (and TensorFlow's ``tf.optimizers`` alias) load on first use, so that
    # ``import ferrotape`` stays quick for tape-only programs.
    if name in ("keras", "optimizers"):
        import importlib

        keras = importlib.import_module(".keras", __name__)
        return keras if name == "keras" else keras.optimizers
    raise AttributeError(f"module 'ferrotape' has no attribute {name!r}")


__all__ = [
    "DType",
    "GradientTape",
    "Module",
    "Tensor",
    "TensorShape",
    "UnconnectedGradients",
    "Variable",
    "abs",
    "acos",
    "add",
    "add_n",
    "argmax",
    "argmin",
    "as_dtype",
    "asin",
    "assert_equal",
    "assert_greater",
    "assert_less",
    "assert_rank",
    "atan",
    "bfloat16",
    "bool",
    "broadcast_to",
    "cast",
    "ceil",
    "clip_by_global_norm",
    "clip_by_norm",
    "clip_by_value",
    "concat",
    "config",
    "constant",
    "convert_to_tensor",
    "cos",
    "cosh",
    "data",
    "debugging",
    "custom_gradient",
    "device",
    "divide",
    "double",
    "dtypes",
    "einsum",
    "equal",
    "errors",
    "executing_eagerly",
    "exp",
    "expand_dims",
    "eye",
    "fill",
    "float16",
    "float32",
    "float64",
    "floor",
    "function",
    "gather",
    "gather_nd",
    "greater",
    "greater_equal",
    "half",
    "identity",
    "int32",
    "int64",
    "is_tensor",
    "less",
    "less_equal",
    "linalg",
    "linspace",
    "logical_and",
    "logical_not",
    "logical_or",
    "math",
    "matmul",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "nest",
    "newaxis",
    "nn",
    "norm",
    "not_equal",
    "one_hot",
    "ones",
    "ones_like",
    "pad",
    "pow",
    "random",
    "range",
    "rank",
    "reduce_all",
    "reduce_any",
    "reduce_logsumexp",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_sum",
    "reshape",
    "round",
    "scatter_nd",
    "shape",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "size",
    "slice",
    "split",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "stop_gradient",
    "strided_slice",
    "subtract",
    "tan",
    "tanh",
    "tensordot",
    "tile",
    "train",
    "transpose",
    "truediv",
    "unstack",
    "where",
    "zeros",
    "zeros_like",
]
