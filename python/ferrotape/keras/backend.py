"""``ft.keras.backend``: Keras's global settings (the default float type, the fuzz factor, the
image layout) and the ``tf.keras.backend`` helpers TF2 programs still call.

>>> import ferrotape as ft
>>> ft.keras.backend.floatx(), ft.keras.backend.epsilon(), ft.keras.backend.image_data_format()
('float32', 1e-07, 'channels_last')
"""

import numpy as np

from .. import _core

_FLOAT_TYPES = ("float16", "bfloat16", "float32", "float64")
_settings = {"floatx": "float32", "epsilon": 1e-7}


def backend():
    """The name of the backend Keras computes with: ferrotape stands in for TensorFlow."""
    return "tensorflow"


def floatx():
    """The default float type of new layers' weights and of ``Input`` ("float32")."""
    return _settings["floatx"]


def set_floatx(value):
    """Sets the default float type ("float16", "bfloat16", "float32" or "float64")."""
    if value not in _FLOAT_TYPES:
        raise ValueError(
            f"set_floatx: unknown floatx type {value!r}; expected one of {_FLOAT_TYPES}"
        )
    _settings["floatx"] = str(value)


def epsilon():
    """The fuzz factor added to denominators (1e-7)."""
    return _settings["epsilon"]


def set_epsilon(value):
    _settings["epsilon"] = float(value)


def image_data_format():
    """ferrotape's images are ``channels_last`` (NHWC)."""
    return "channels_last"


def set_image_data_format(data_format):
    if data_format != "channels_last":
        raise ValueError(
            "set_image_data_format: ferrotape supports only 'channels_last' (NHWC). "
            f"Received: {data_format!r}"
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


__all__ = [
    "backend",
    "batch_get_value",
    "batch_set_value",
    "cast_to_floatx",
    "clear_session",
    "count_params",
    "dtype",
    "epsilon",
    "floatx",
    "get_uid",
    "get_value",
    "image_data_format",
    "int_shape",
    "is_keras_tensor",
    "ndim",
    "random_bernoulli",
    "random_normal",
    "random_uniform",
    "set_epsilon",
    "set_floatx",
    "set_image_data_format",
    "set_value",
    "truncated_normal",
]
