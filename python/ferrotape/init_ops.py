"""TensorFlow's own initializer classes, ``tf.zeros_initializer``, ``tf.ones_initializer``,
``tf.constant_initializer``, ``tf.random_normal_initializer`` and
``tf.random_uniform_initializer`` (TensorFlow's ``init_ops_v2``).

They differ from Keras's (``ft.keras.initializers``): ``dtype`` defaults to float32 and may be
an integer dtype for zeros, ones, constants and uniform draws; a seeded random initializer draws
the same values on every call (TensorFlow uses a stateless draw seeded ``[seed, 0]``; ferrotape
too, with its own generator, so the values differ from TensorFlow's); and they accept only
TensorFlow's partition keywords.
"""

import numpy as np

from . import _core, random
from .dtypes import as_dtype, float32

_PARTITION_KEYS = ["partition_shape", "partition_offset"]


class Initializer:
    """The base of TensorFlow's initializers: ``initializer(shape, dtype)`` gives a tensor.

    Subclasses define ``__call__`` and ``get_config``.

    >>> import ferrotape as ft
    >>> ft.zeros_initializer()([2]).numpy()
    array([0., 0.], dtype=float32)
    """

    def __call__(self, shape, dtype=None, **kwargs):
        raise NotImplementedError

    def get_config(self):
        """The arguments that rebuild this initializer (``from_config``).

        Returns:
            A dict.
        """
        return {}

    @classmethod
    def from_config(cls, config):
        """The initializer ``cls(**config)``.

        Args:
            config: A dict from ``get_config``.

        Returns:
            An initializer.
        """
        config = dict(config)
        config.pop("dtype", None)
        return cls(**config)


def _dtype(who, dtype, kwargs, floating=False):
    """The checked dtype of a call; refuses keywords other than TensorFlow's partition ones."""
    for key in kwargs:
        if key not in _PARTITION_KEYS:
            raise TypeError(
                f"{who}: Keyword argument should be one of {_PARTITION_KEYS}. Received: {key}"
            )
    dtype = float32 if dtype is None else as_dtype(dtype)
    if floating and not dtype.is_floating:
        raise ValueError(
            f"{who}: Argument `dtype` is expected to be floating point. Received: {dtype}."
        )
    return dtype


def _seeded(seed):
    return None if seed is None else [int(seed), 0]


class Zeros(Initializer):
    """Fills with zeros (``tf.zeros_initializer``).

    >>> import ferrotape as ft
    >>> ft.zeros_initializer()([2], dtype=ft.int32).numpy()
    array([0, 0], dtype=int32)
    """

    def __call__(self, shape, dtype=None, **kwargs):
        return _core.zeros(shape, _dtype("zeros_initializer", dtype, kwargs))


class Ones(Initializer):
    """Fills with ones (``tf.ones_initializer``).

    >>> import ferrotape as ft
    >>> ft.ones_initializer()([2]).numpy()
    array([1., 1.], dtype=float32)
    """

    def __call__(self, shape, dtype=None, **kwargs):
        return _core.ones(shape, _dtype("ones_initializer", dtype, kwargs))


class Constant(Initializer):
    """Fills with ``value``: one number everywhere, or a list of exactly as many elements as
    the shape holds, laid out in row-major order (``tf.constant_initializer``).

    >>> import ferrotape as ft
    >>> ft.constant_initializer([1, 2, 3, 4])([2, 2]).numpy()
    array([[1., 2.],
           [3., 4.]], dtype=float32)
    """

    def __init__(self, value=0, support_partition=False):
        """An initializer filling with ``value``.

        Args:
            value: A Python number, list, tuple or numpy array.
            support_partition: Accepted for TensorFlow's signature.

        Raises:
            TypeError: for another kind of ``value`` (a tensor included, as in TensorFlow);
                a call raises it for a list whose size is not the shape's.
        """
        if not isinstance(value, (int, float, list, tuple, np.ndarray, np.generic)):
            raise TypeError(
                f"constant_initializer: Invalid type for initial value: {type(value).__name__}. "
                f"Expected Python scalar, list or tuple of values, or numpy.ndarray."
            )
        self.value = value
        self.support_partition = support_partition

    def __call__(self, shape, dtype=None, **kwargs):
        dtype = _dtype("constant_initializer", dtype, kwargs)
        values = np.asarray(self.value)
        shape = [int(d) for d in shape]
        if values.size == 1:
            return _core.fill(shape, _core.constant(values.reshape(()), dtype))
        if values.size != int(np.prod(shape)):
            raise TypeError(
                f"constant_initializer: {values.size} values cannot fill shape {shape} of "
                f"{int(np.prod(shape))} elements"
            )
        return _core.constant(values.reshape(shape), dtype)

    def get_config(self):
        return {"value": self.value}


class RandomNormal(Initializer):
    """Draws from a normal distribution (``tf.random_normal_initializer``); a call with a
    non-floating ``dtype`` raises ``ValueError``.

    >>> import ferrotape as ft
    >>> init = ft.random_normal_initializer(stddev=0.1, seed=3)
    >>> bool((init([4]) == init([4])).numpy().all())
    True
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        """An initializer drawing from ``N(mean, stddev**2)``.

        Args:
            mean: The mean.
            stddev: The standard deviation.
            seed: ``None`` (a new draw each call) or an int (the same values on every call).
        """
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, **kwargs):
        dtype = _dtype("random_normal_initializer", dtype, kwargs, floating=True)
        if self.seed is None:
            return random.normal(shape, self.mean, self.stddev, dtype)
        return random.stateless_normal(shape, _seeded(self.seed), self.mean, self.stddev, dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(Initializer):
    """Draws uniformly from ``[minval, maxval)`` (``tf.random_uniform_initializer``); an
    integer ``dtype`` draws integers.

    >>> import ferrotape as ft
    >>> values = ft.random_uniform_initializer(0.0, 1.0)([100]).numpy()
    >>> bool(((values >= 0) & (values < 1)).all())
    True
    """

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        """An initializer drawing uniformly from ``[minval, maxval)``.

        Args:
            minval: The lower bound (inclusive).
            maxval: The upper bound (exclusive).
            seed: ``None`` (a new draw each call) or an int (the same values on every call).
        """
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None, **kwargs):
        dtype = _dtype("random_uniform_initializer", dtype, kwargs)
        if not (dtype.is_floating or dtype.is_integer):
            raise ValueError(
                f"random_uniform_initializer: Argument `dtype` expected to be numeric. "
                f"Received {dtype}."
            )
        if self.seed is None:
            return random.uniform(shape, self.minval, self.maxval, dtype)
        return random.stateless_uniform(shape, _seeded(self.seed), self.minval, self.maxval, dtype)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_normal_initializer = RandomNormal
random_uniform_initializer = RandomUniform
