"""``Metric``, the base class of ``ft.keras.metrics`` (Keras 3's ``keras.src.metrics.metric``),
and the numpy helpers the metrics accumulate with.

A metric's per-batch values are computed with ferrotape ops or numpy and reduced on the host:
one ``.numpy()`` per update, nothing recorded by a tape. Inside a function ``ft.function`` is
tracing (``fit``'s step), that read would refuse the trace, so ``Sum`` and ``Mean`` (and the
metrics built on them, such as the accuracies and ``MeanMetricWrapper``) reduce with recorded
ops there instead; the metrics whose arithmetic is numpy (the confusion-matrix ones, ``AUC``,
F-scores, IoU, R²) mark their ``update_state`` and ``result`` with ``computed_on_host``, which
turns each call into a host callback of the trace, run again on every replay.
"""

import functools
import re

import numpy as np

import ferrotape as ft

from ... import _core
from ...polymorphic_function import host_computed, tensor_arguments
from ..backend_dtypes import as_dtype


def computed_on_host(method):
    """Marks a metric's ``update_state`` or ``result`` whose arithmetic runs in numpy on the
    host, so that a step ``ft.function`` traces can still use it (``ft.function``'s
    ``host_computed``): inside a trace the call becomes a host callback run again on every
    replay with that call's tensors, in order with the step's other effects."""

    @functools.wraps(method)
    def traced(self, *args, **kwargs):
        if not _core.is_tracing():
            return method(self, *args, **kwargs)
        tensors, call = tensor_arguments(functools.partial(method, self), args, kwargs)

        def compute(*values):
            result = call(*values)
            return [] if result is None else [result]

        results = host_computed(compute, tensors)
        return results[0] if results else None

    return traced


def _snake_case(name):
    """Keras's default metric name for a class: ``AUC`` -> ``auc``, ``BinaryIoU`` ->
    ``binary_io_u``, ``TruePositives`` -> ``true_positives``."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def _numpy(x):
    """``x`` as a float64 numpy array (a tensor or variable is read once)."""
    if hasattr(x, "numpy"):
        x = x.numpy()
    return np.asarray(x, dtype=np.float64)


def _np_squeeze_or_expand(x1, x2):
    """``losses.squeeze_or_expand_to_same_rank`` on numpy arrays."""
    if x1.ndim == x2.ndim + 1 and x1.shape[-1] == 1:
        if x2.ndim == 1:
            x2 = x2[..., None]
        else:
            x1 = x1[..., 0]
    elif x2.ndim == x1.ndim + 1 and x2.shape[-1] == 1:
        if x1.ndim == 1:
            x1 = x1[..., None]
        else:
            x2 = x2[..., 0]
    return x1, x2


def reduce_to_samplewise(values, sample_weight, reduce_fn, who="Metric"):
    """Keras's ``reduce_to_samplewise_values`` in numpy: weights broadcast against the values
    (which are first reduced to the weights' rank), then one value per sample."""
    if sample_weight is not None:
        values, sample_weight = _np_squeeze_or_expand(values, sample_weight)
        weight_ndim = sample_weight.ndim
        if values.ndim > weight_ndim:
            values = reduce_fn(values, axis=tuple(range(weight_ndim, values.ndim)))
        try:
            sample_weight = np.broadcast_to(sample_weight, values.shape)
        except ValueError:
            raise ValueError(
                f"{who}: `sample_weight` cannot be broadcast to the values' shape. Received: "
                f"sample_weight.shape={sample_weight.shape}, values.shape={values.shape}"
            ) from None
        values = values * sample_weight
        if weight_ndim > 1:
            sample_weight = reduce_fn(sample_weight, axis=tuple(range(1, weight_ndim)))
    if values.ndim > 1:
        values = reduce_fn(values, axis=tuple(range(1, values.ndim)))
    return values, sample_weight


class Metric:
    """Base class of the metrics.

    Subclasses create their state with ``add_variable`` in ``__init__`` and implement
    ``update_state`` and ``result``; ``reset_state`` sets every variable to zeros.

    Args:
        dtype: the dtype of the state and of the result; float32 by default.
        name: the metric's name (the key under which ``fit`` reports it).
    """

    def __init__(self, dtype=None, name=None):
        self.name = name or _snake_case(type(self).__name__)
        self._dtype = ft.float32 if dtype is None else as_dtype(dtype)
        self._variables = []

    @property
    def dtype(self):
        return self._dtype

    @property
    def variables(self):
        """The state variables, in creation order."""
        return list(self._variables)

    def add_variable(self, shape, initializer, dtype=None, aggregation="sum", name=None):
        """Creates a non-trainable state variable (``initializer``: "zeros", "ones", a number
        or a callable ``(shape, dtype)``)."""
        del aggregation
        dtype = self._dtype if dtype is None else as_dtype(dtype)
        shape = tuple(int(d) for d in shape)
        if isinstance(initializer, str) and initializer.lower() in ("zeros", "ones"):
            value = (ft.zeros if initializer.lower() == "zeros" else ft.ones)(shape, dtype=dtype)
        elif isinstance(initializer, int | float):
            value = ft.constant(float(initializer), dtype=dtype, shape=shape)
        else:
            if isinstance(initializer, str):
                from . import initializers

                initializer = initializers.get(initializer)
            value = ft.convert_to_tensor(initializer(shape, dtype=dtype), dtype=dtype)
        variable = ft.Variable(value, trainable=False, name=f"{self.name}/{name or 'variable'}")
        self._variables.append(variable)
        return variable

    def add_weight(self, name=None, shape=(), initializer="zeros", dtype=None, aggregation="sum"):
        """Keras 2's name for ``add_variable``."""
        return self.add_variable(
            shape, initializer, dtype=dtype, aggregation=aggregation, name=name
        )

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must implement `update_state`.")

    def result(self):
        raise NotImplementedError(f"{type(self).__name__} must implement `result`.")

    def reset_state(self):
        """Sets every state variable to zeros."""
        for variable in self._variables:
            variable.assign(ft.zeros(tuple(variable.shape), dtype=variable.dtype))

    def reset_states(self):
        """Keras 2's name for ``reset_state``."""
        self.reset_state()

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self._dtype.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r}>"


def divide_no_nan(numerator, denominator):
    """``numerator / denominator``, 0 where the denominator is 0 (numpy arrays)."""
    numerator, denominator = np.broadcast_arrays(
        np.asarray(numerator, np.float64), np.asarray(denominator, np.float64)
    )
    out = np.zeros(numerator.shape)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out
