"""``Normalization`` (Keras 3's ``keras.src.layers.preprocessing.normalization``).

>>> import numpy as np, ferrotape as ft
>>> layer = ft.keras.layers.Normalization()
>>> layer.adapt(np.array([[1.0], [2.0], [3.0]]))
>>> layer(ft.constant([[1.0], [2.0], [3.0]])).numpy().astype(float).round(4).tolist()
[[-1.2247], [0.0], [1.2247]]
"""

import numpy as np

from .... import _core
from .... import data as ft_data
from ..layer import Layer

# Keras's backend.epsilon(): the smallest standard deviation divided by.
_EPSILON = 1e-7


def _as_array(data):
    """``adapt``'s data (an array, a tensor, a Dataset or another iterable of batches) as one
    float64 array of samples."""
    if isinstance(data, ft_data.Dataset) or (
        hasattr(data, "__iter__") and not isinstance(data, (np.ndarray, list, _core.Tensor))
    ):
        batches = [np.asarray(b.numpy() if hasattr(b, "numpy") else b) for b in data]
        return np.concatenate(batches, axis=0).astype(np.float64)
    return np.asarray(data.numpy() if hasattr(data, "numpy") else data, dtype=np.float64)


class Normalization(Layer):
    """``(x - mean) / max(sqrt(variance), 1e-7)`` per feature along ``axis`` (``None``: one
    mean and variance for everything), or its inverse ``mean + x * sqrt(variance)`` with
    ``invert=True``. The statistics are given as ``mean`` and ``variance`` or learned from
    data by ``adapt(data)`` (then kept as the non-trainable weights ``mean``, ``variance`` and
    ``count``)."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, int) and not isinstance(axis, bool):
            axis = (axis,)
        elif not isinstance(axis, (tuple, list)):
            raise ValueError(
                f"Normalization: axis must be an int, a tuple of ints or None. Received: "
                f"axis={axis!r}"
            )
        self.axis = tuple(int(a) for a in axis)
        if (mean is None) != (variance is None):
            raise ValueError(
                "When setting values directly, both `mean` and `variance` must be set. "
                f"Received: mean={mean} and variance={variance}"
            )
        self.input_mean, self.input_variance = mean, variance
        self.invert = bool(invert)

    def build(self, input_shape):
        rank = len(input_shape)
        if any(not -rank <= a < rank for a in self.axis):
            raise ValueError(
                "All `axis` values must be in the range [-ndim, ndim). "
                f"Received inputs with ndim={rank}, while axis={self.axis}"
            )
        keep = sorted(a % rank for a in self.axis)
        if any(input_shape[d] is None for d in keep):
            raise ValueError(
                f"All `axis` values to be kept must have a known shape. Received "
                f"axis={self.axis}, inputs.shape={tuple(input_shape)}"
            )
        self._keep_axis = tuple(keep)
        self._reduce_axis = tuple(d for d in range(rank) if d not in keep)
        self._broadcast_shape = [input_shape[d] if d in keep else 1 for d in range(rank)]
        shape = tuple(input_shape[d] for d in keep)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(
                name="mean", shape=shape, initializer="zeros", trainable=False
            )
            self.adapt_variance = self.add_weight(
                name="variance", shape=shape, initializer="ones", trainable=False
            )
            # Keras creates `count` but leaves it at 0 (its adapt keeps no running count);
            # it is kept for the same weight list.
            self.count = self.add_weight(
                name="count", shape=(), dtype="int64", initializer="zeros", trainable=False
            )

    def adapt(self, data):
        """Sets the mean and variance to those of ``data`` along the kept axes.

        Args:
            data: A NumPy array, a tensor, a ``Dataset`` or an iterable of batches, each of
                shape ``[batch, ...]`` like the layer's inputs.
        """
        values = _as_array(data)
        if values.ndim == 0 or values.shape[0] == 0:
            raise ValueError(f"Normalization.adapt: no data to adapt to, shape {values.shape}")
        if not self.built:
            self.build(tuple(values.shape))
        if self.input_mean is not None:
            raise ValueError("Normalization: cannot adapt a layer given `mean` and `variance`")
        self.adapt_mean.assign(values.mean(axis=self._reduce_axis))
        self.adapt_variance.assign(values.var(axis=self._reduce_axis))

    def _statistics(self, dtype):
        if self.input_mean is None:
            mean, variance = self.adapt_mean, self.adapt_variance
        else:
            mean, variance = np.asarray(self.input_mean), np.asarray(self.input_variance)
        shape = self._broadcast_shape
        mean = _core.reshape(_core.cast(_core.convert_to_tensor(mean), dtype), [-1])
        variance = _core.reshape(_core.cast(_core.convert_to_tensor(variance), dtype), [-1])
        if mean.shape[0] == 1:  # one statistic for every feature
            return (
                _core.reshape(mean, [1] * len(shape)),
                _core.reshape(variance, [1] * len(shape)),
            )
        return _core.reshape(mean, shape), _core.reshape(variance, shape)

    @property
    def mean(self):
        """The mean in use, shaped to broadcast against the inputs (Keras 3 keeps it as a
        tensor refreshed after ``adapt``), e.g. ``(1, features)`` for ``axis=-1``."""
        return self._statistics(self.compute_dtype)[0]

    @property
    def variance(self):
        """The variance in use, shaped like ``mean``."""
        return self._statistics(self.compute_dtype)[1]

    def call(self, inputs):
        inputs = _core.cast(inputs, self.compute_dtype)
        mean, variance = self._statistics(inputs.dtype)
        std = _core.maximum(_core.sqrt(variance), _EPSILON)
        if self.invert:
            return mean + inputs * std
        return (inputs - mean) / std

    def get_config(self):
        def plain(value):
            return np.asarray(value).tolist() if value is not None else None

        return {
            **super().get_config(),
            "axis": self.axis,
            "invert": self.invert,
            "mean": plain(self.input_mean),
            "variance": plain(self.input_variance),
        }
