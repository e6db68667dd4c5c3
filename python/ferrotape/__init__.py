"""ferrotape: eager automatic differentiation with TensorFlow 2's ``GradientTape`` API.

``import ferrotape as tf`` runs typical tape code unchanged; the engine is Rust.
"""

import builtins as _builtins
import reprlib as _reprlib

import numpy as _np

from . import (
    _core,
    _public_api,
    autodiff,
    autograph,
    config,
    data,
    debugging,
    dtypes,
    errors,
    experimental,
    image,
    linalg,
    math,
    nest,
    nn,
    random,
    saved_model,
    signal,
    train,
)
from ._conv_ops import (
    conv,
    conv2d_backprop_filter_v2,
    conv2d_backprop_input_v2,
    extract_volume_patches,
)

# Used below; `as` keeps them exported (the star import would otherwise be shadowed for mypy).
from ._core import constant as constant
from ._exports.toplevel import *  # noqa: F403 (the native names: scripts/gen_bindings.py)
from ._exports.toplevel import __all__ as _native
from ._index_shuffle import random_index_shuffle
from ._math_impl import bitcast, saturate_cast, truncatediv, truncatemod
from ._nn_array import approx_top_k, required_space_to_batch_paddings
from .array_ops import (
    boolean_mask,
    broadcast_dynamic_shape,
    broadcast_static_shape,
    dynamic_partition,
    dynamic_stitch,
    meshgrid,
    parallel_stack,
    repeat,
    reverse,
    reverse_sequence,
    roll,
    sequence_mask,
    shape_n,
)
from .clip import clip_by_global_norm, clip_by_norm
from .control_flow import (
    Assert,
    case,
    cond,
    control_dependencies,
    get_static_value,
    group,
    identity_n,
    no_op,
    switch_case,
    while_loop,
)
from .debugging import assert_equal, assert_greater, assert_less, assert_rank
from .device_spec import DeviceSpec
from .dtypes import (
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .einsum import einsum, tensordot
from .framework_ops import (
    convert_to_tensor,
    ensure_shape,
    get_current_name_scope,
    get_logger,
    init_scope,
    name_scope,
    numpy_function,
    py_function,
    register_tensor_conversion_function,
    timestamp,
    tuple,
)
from .functional_ops import foldl, foldr, map_fn, scan, vectorized_map
from .gradients import (
    custom_gradient,
    grad_pass_through,
    hessians,
    recompute_grad,
    stop_gradient,
)
from .init_ops import (
    constant_initializer,
    ones_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    zeros_initializer,
)
from .linalg import eig, eigvals
from .linalg import sqrtm as matrix_square_root
from .math import atan2, cumsum, realdiv, scalar_mul
from .module import Module
from .nn import batch_to_space, space_to_batch
from .norms import norm
from .polymorphic_function import function
from .printing import print  # tf.print; it shadows the builtin in this module (and its doctests)
from .scatter_ops import (
    tensor_scatter_nd_add,
    tensor_scatter_nd_max,
    tensor_scatter_nd_min,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
)
from .sort_ops import (
    argsort,
    histogram_fixed_width,
    histogram_fixed_width_bins,
    searchsorted,
    sort,
    unique,
    unique_with_counts,
    unravel_index,
)
from .tape import GradientTape, UnconnectedGradients
from .tensor_array import TensorArray
from .tensor_shape import TensorShape
from .tensor_spec import TensorSpec, TypeSpec

__version__ = "0.1.0"

newaxis = None
space_to_batch_nd = space_to_batch


def where(condition, x=None, y=None, name=None):
    """Picks from ``x`` where ``condition`` is true and from ``y`` elsewhere, with broadcasting.

    With only ``condition``, returns the coordinates of its true (non-zero) elements instead.

    Args:
        condition: A bool tensor (or array-like).
        x: The values where ``condition`` is true; broadcastable with ``condition`` and ``y``.
        y: The values where ``condition`` is false, of ``x``'s dtype.
        name: Ignored (TensorFlow's op name).

    Returns:
        The selected tensor of the broadcast shape, or, without ``x`` and ``y``, an int64
        tensor of shape ``[n, rank(condition)]`` with one row per true element.

    Raises:
        ValueError: if only one of ``x`` and ``y`` is given.

    Gradient: the upstream gradient flows to ``x`` where ``condition`` holds, to ``y`` elsewhere.

    >>> import ferrotape as ft
    >>> ft.where([True, False, True], ft.constant([1.0, 2.0, 3.0]), ft.constant(0.0)).numpy()
    array([1., 0., 3.], dtype=float32)
    >>> ft.where([[True, False], [False, True]]).numpy()
    array([[0, 0],
           [1, 1]])
    """
    del name
    if x is None and y is None:
        return constant(_np.argwhere(_np.asarray(condition)).astype(_np.int64))
    if x is None or y is None:
        raise ValueError("where: x and y must both be given, or neither")
    return _core.select(condition, x, y)


def strided_slice(input_, begin, end, strides=None, name=None):
    """The slice ``input_[begin[0]:end[0]:strides[0], ...]`` (without TensorFlow's bit masks).

    Args:
        input_: A tensor (or array-like).
        begin: One start index per sliced axis (a list of ints, or a 1-D int tensor).
        end: One stop index per sliced axis, exclusive.
        strides: One non-zero step per sliced axis; ``None`` means steps of 1.
        name: Ignored (TensorFlow's op name).

    Returns:
        The sliced tensor.

    Raises:
        ValueError: if the three lists differ in length, hold non-ints, or a stride is 0.

    Gradient: the upstream gradient scattered back into the sliced positions, zeros elsewhere.

    >>> import ferrotape as ft
    >>> ft.strided_slice(ft.constant([0.0, 1.0, 2.0, 3.0, 4.0]), [1], [5], [2]).numpy()
    array([1., 3.], dtype=float32)
    """
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
    # ``tuple`` is TensorFlow's ``tf.tuple`` in this module.
    bounds = zip(begin, end, strides, strict=True)
    index = _builtins.tuple(_builtins.slice(b, e, s) for b, e, s in bounds)
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


def device(device_name):
    """A device placement scope: ops inside it run on ``device_name`` and new tensors and
    variables live there (``ft.identity`` copies its input there).

    With soft placement (``ft.config.set_soft_device_placement``, on by default) a device that
    does not exist means the CPU, and an op the device has no kernel for runs on the CPU, its
    result living there, as in TensorFlow.

    Args:
        device_name: TensorFlow's device name (``"/CPU:0"``, ``"/GPU:0"``,
            ``"/job:localhost/replica:0/task:0/device:GPU:0"``, ...); ``None`` or ``""`` keep
            the enclosing scope's device.

    Returns:
        A context manager.

    Raises:
        ValueError: for a name TensorFlow's parser refuses.
        InvalidArgumentError: on entering the scope of a device that does not exist, with soft
            placement off.

    >>> import ferrotape as ft
    >>> with ft.device("/CPU:0"):
    ...     x = ft.constant(1.0)
    >>> x.device
    '/job:localhost/replica:0/task:0/device:CPU:0'
    """
    return config._DeviceScope("" if device_name is None else device_name)


def executing_eagerly():
    """Whether ops run eagerly: ``False`` only while ``ft.function`` traces a function (as
    TensorFlow's, inside a ``tf.function``), ``True`` everywhere else (a traced function's
    Python runs once per trace, its replays run no Python).

    Returns:
        A bool.

    >>> import ferrotape as ft
    >>> ft.executing_eagerly(), ft.function(lambda: ft.constant(ft.executing_eagerly()))().numpy()
    (True, np.False_)
    """
    return not _core.is_tracing()


def inside_function():
    """Whether ``ft.function`` is tracing a function on this thread (TensorFlow's
    ``tf.inside_function``).

    Returns:
        A bool.

    >>> import ferrotape as ft
    >>> ft.inside_function(), ft.function(lambda: ft.constant(ft.inside_function()))().numpy()
    (False, np.True_)
    """
    return _core.is_tracing()


def __getattr__(name):
    # ``ft.keras`` (and TensorFlow's ``tf.optimizers`` alias) load on first use, so that
    # ``import ferrotape`` stays quick for tape-only programs.
    if name in ("keras", "optimizers"):
        import importlib

        keras = importlib.import_module(".keras", __name__)
        return keras if name == "keras" else keras.optimizers
    if name == "summary":
        # ft.summary loads on first use too (its encoders and thread state cost a few ms).
        import importlib

        return importlib.import_module(".summary", __name__)
    raise AttributeError(f"module 'ferrotape' has no attribute {name!r}")


# The names defined in Python; the native ones come from the generated _exports.toplevel.
__all__ = [
    *_native,
    "atan2",
    "autodiff",
    "autograph",
    "cumsum",
    "inside_function",
    "init_scope",
    "matrix_square_root",
    "realdiv",
    "scalar_mul",
    "DType",
    "DeviceSpec",
    "conv",
    "conv2d_backprop_filter_v2",
    "conv2d_backprop_input_v2",
    "extract_volume_patches",
    "random_index_shuffle",
    "GradientTape",
    "Module",
    "TensorShape",
    "UnconnectedGradients",
    "as_dtype",
    "assert_equal",
    "assert_greater",
    "assert_less",
    "assert_rank",
    "batch_to_space",
    "bfloat16",
    "bitcast",
    "bool",
    "clip_by_global_norm",
    "clip_by_norm",
    "config",
    "experimental",
    "custom_gradient",
    "data",
    "debugging",
    "device",
    "double",
    "dtypes",
    "einsum",
    "errors",
    "executing_eagerly",
    "float16",
    "float32",
    "float64",
    "function",
    "half",
    "image",
    "signal",
    "eig",
    "eigvals",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "complex64",
    "complex128",
    "linalg",
    "math",
    "nest",
    "newaxis",
    "nn",
    "norm",
    "random",
    "space_to_batch",
    "space_to_batch_nd",
    "stop_gradient",
    "strided_slice",
    "tensordot",
    "saved_model",
    "train",
    "where",
    # control flow (control_flow.py, functional_ops.py), print (printing.py), TensorSpec
    "TensorSpec",
    "TypeSpec",
    "case",
    "cond",
    "control_dependencies",
    "foldl",
    "foldr",
    "get_static_value",
    "group",
    "identity_n",
    "map_fn",
    "no_op",
    "print",
    "scan",
    "switch_case",
    "vectorized_map",
    "while_loop",
    # sorting, rearranging, scattering, math and framework utilities (sort_ops.py, array_ops.py,
    # scatter_ops.py, _math_impl.py, framework_ops.py, gradients.py, init_ops.py)
    "Assert",
    "TensorArray",
    "approx_top_k",
    "argsort",
    "boolean_mask",
    "broadcast_dynamic_shape",
    "broadcast_static_shape",
    "constant_initializer",
    "dynamic_partition",
    "dynamic_stitch",
    "ensure_shape",
    "get_current_name_scope",
    "get_logger",
    "grad_pass_through",
    "hessians",
    "histogram_fixed_width",
    "histogram_fixed_width_bins",
    "meshgrid",
    "name_scope",
    "numpy_function",
    "ones_initializer",
    "parallel_stack",
    "py_function",
    "random_normal_initializer",
    "random_uniform_initializer",
    "recompute_grad",
    "repeat",
    "required_space_to_batch_paddings",
    "reverse",
    "reverse_sequence",
    "roll",
    "saturate_cast",
    "searchsorted",
    "sequence_mask",
    "shape_n",
    "sort",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_max",
    "tensor_scatter_nd_min",
    "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update",
    "register_tensor_conversion_function",
    "timestamp",
    "truncatediv",
    "truncatemod",
    "tuple",
    "unique",
    "unique_with_counts",
    "unravel_index",
    "zeros_initializer",
]

# Errors leaving a public Python function name it (native ops name theirs in the bindings).
_public_api.name_errors()
