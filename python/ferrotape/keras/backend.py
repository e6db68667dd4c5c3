"""``ft.keras.backend``: Keras's global settings (the default float type, the fuzz factor, the
image layout, from ``backend_config``), the dtype helpers (``backend_dtypes``) and the
TF-Keras backend functions TF2 programs still call (``legacy/backend_math.py``,
``legacy/backend_loops.py`` and ``legacy/backend_nn.py``: ``K.mean``, ``K.dot``,
``K.batch_dot``, ``K.rnn``, ``K.categorical_crossentropy``, ...).

>>> import ferrotape as ft
>>> ft.keras.backend.floatx(), ft.keras.backend.epsilon(), ft.keras.backend.image_data_format()
('float32', 1e-07, 'channels_last')
"""

import numpy as np

from .. import _core
from ..framework_ops import name_scope  # TF-Keras's K.name_scope is tf.name_scope
from .backend_config import (
    backend,
    epsilon,
    floatx,
    image_data_format,
    set_epsilon,
    set_floatx,
    set_image_data_format,
)
from .backend_dtypes import (
    is_float_dtype,
    is_int_dtype,
    result_type,
    standardize_dtype,
)
from .legacy.backend_loops import cumprod, cumsum, foldl, foldr, map_fn, rnn
from .legacy.backend_math import (
    abs,
    all,
    any,
    arange,
    argmax,
    argmin,
    batch_dot,
    batch_flatten,
    cast,
    clip,
    concatenate,
    constant,
    cos,
    dot,
    equal,
    eval,
    exp,
    expand_dims,
    eye,
    flatten,
    gather,
    gradients,
    greater,
    greater_equal,
    l2_normalize,
    less,
    less_equal,
    log,
    max,
    maximum,
    mean,
    min,
    minimum,
    moving_average_update,
    not_equal,
    one_hot,
    ones,
    ones_like,
    permute_dimensions,
    pow,
    prod,
    repeat,
    repeat_elements,
    reshape,
    reverse,
    round,
    shape,
    sign,
    sin,
    sqrt,
    square,
    squeeze,
    stack,
    std,
    stop_gradient,
    sum,
    switch,
    tile,
    transpose,
    update,
    update_add,
    update_sub,
    var,
    variable,
    zeros,
    zeros_like,
)
from .legacy.backend_nn import (
    batch_normalization,
    bias_add,
    binary_crossentropy,
    binary_focal_crossentropy,
    categorical_crossentropy,
    categorical_focal_crossentropy,
    conv1d,
    conv2d,
    conv2d_transpose,
    conv3d,
    ctc_batch_cost,
    ctc_decode,
    depthwise_conv2d,
    dropout,
    elu,
    hard_sigmoid,
    in_top_k,
    pool2d,
    pool3d,
    relu,
    resize_images,
    resize_volumes,
    separable_conv2d,
    sigmoid,
    softmax,
    softplus,
    softsign,
    sparse_categorical_crossentropy,
    spatial_2d_padding,
    spatial_3d_padding,
    tanh,
    temporal_padding,
)


def clear_session(free_memory=True):
    """Resets Keras's layer-name counters, as Keras does between models in one process."""
    del free_memory
    # Imported here: the layers read floatx() from this module, so it loads before them.
    from .layers import layer_utils

    layer_utils._NAME_UIDS.clear()


def get_uid(prefix=""):
    """1, 2, ... for each call with the same ``prefix`` (the counters of layer names)."""
    from .layers import layer_utils

    layer_utils._NAME_UIDS[prefix] += 1
    return layer_utils._NAME_UIDS[prefix]


def is_keras_tensor(x):
    from .layers.keras_tensor import KerasTensor

    return isinstance(x, KerasTensor)


def int_shape(x):
    """The shape as a tuple of ints (None for unknown dims)."""
    return tuple(x.shape)


def ndim(x):
    return len(x.shape)


def dtype(x):
    return x.dtype.name


def cast_to_floatx(x):
    return np.asarray(x, dtype=floatx())


def get_value(x):
    return x.numpy()


def batch_get_value(tensors):
    return [x.numpy() for x in tensors]


def set_value(x, value):
    x.assign(np.asarray(value, dtype=x.dtype.name))


def batch_set_value(tuples):
    for x, value in tuples:
        set_value(x, value)


def count_params(x):
    return int(np.prod(x.shape, dtype=np.int64))


def _seed_of(seed):
    return None if seed is None else int(seed)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    from . import random

    return random.normal(shape, mean, stddev, dtype, _seed_of(seed))


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    from . import random

    return random.uniform(shape, minval, maxval, dtype, _seed_of(seed))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    from . import random

    return random.truncated_normal(shape, mean, stddev, dtype, _seed_of(seed))


def random_bernoulli(shape, p=0.0, dtype=None, seed=None):
    """1 with probability ``p``, else 0."""
    from . import random

    draws = random.uniform(shape, dtype="float32", seed=_seed_of(seed))
    return _core.cast(draws < p, dtype or floatx())


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    """A variable of normal draws with mean ``mean`` and standard deviation ``scale``."""
    dtype = dtype or floatx()
    return variable(random_normal(shape, mean, scale, dtype, seed), dtype=dtype, name=name)


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    """A variable of uniform draws in ``[low, high)``."""
    dtype = dtype or floatx()
    return variable(random_uniform(shape, low, high, dtype, seed), dtype=dtype, name=name)


__all__ = [
    "abs",
    "all",
    "any",
    "arange",
    "argmax",
    "argmin",
    "backend",
    "batch_dot",
    "batch_flatten",
    "batch_get_value",
    "batch_normalization",
    "batch_set_value",
    "bias_add",
    "binary_crossentropy",
    "binary_focal_crossentropy",
    "cast",
    "cast_to_floatx",
    "categorical_crossentropy",
    "categorical_focal_crossentropy",
    "clear_session",
    "clip",
    "concatenate",
    "constant",
    "conv1d",
    "conv2d",
    "conv2d_transpose",
    "conv3d",
    "cos",
    "count_params",
    "ctc_batch_cost",
    "ctc_decode",
    "cumprod",
    "cumsum",
    "depthwise_conv2d",
    "dot",
    "dropout",
    "dtype",
    "elu",
    "epsilon",
    "equal",
    "eval",
    "exp",
    "expand_dims",
    "eye",
    "flatten",
    "floatx",
    "foldl",
    "foldr",
    "gather",
    "get_uid",
    "get_value",
    "gradients",
    "greater",
    "greater_equal",
    "hard_sigmoid",
    "image_data_format",
    "in_top_k",
    "int_shape",
    "is_float_dtype",
    "is_int_dtype",
    "is_keras_tensor",
    "l2_normalize",
    "less",
    "less_equal",
    "log",
    "map_fn",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "moving_average_update",
    "name_scope",
    "ndim",
    "not_equal",
    "one_hot",
    "ones",
    "ones_like",
    "permute_dimensions",
    "pool2d",
    "pool3d",
    "pow",
    "prod",
    "random_bernoulli",
    "random_normal",
    "random_normal_variable",
    "random_uniform",
    "random_uniform_variable",
    "relu",
    "repeat",
    "repeat_elements",
    "reshape",
    "resize_images",
    "resize_volumes",
    "result_type",
    "reverse",
    "rnn",
    "round",
    "separable_conv2d",
    "set_epsilon",
    "set_floatx",
    "set_image_data_format",
    "set_value",
    "shape",
    "sigmoid",
    "sign",
    "sin",
    "softmax",
    "softplus",
    "softsign",
    "sparse_categorical_crossentropy",
    "spatial_2d_padding",
    "spatial_3d_padding",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "standardize_dtype",
    "std",
    "stop_gradient",
    "sum",
    "switch",
    "tanh",
    "temporal_padding",
    "tile",
    "transpose",
    "truncated_normal",
    "update",
    "update_add",
    "update_sub",
    "var",
    "variable",
    "zeros",
    "zeros_like",
]
