"""``ft.keras.metrics``: Keras 3's metrics (running means of per-sample values, accuracies).

A metric accumulates over batches in its variables: ``update_state(y_true, y_pred,
sample_weight=None)`` adds a batch, ``result()`` returns the value so far (a float32 scalar
tensor), ``reset_state()`` starts over, and calling the metric does an update then returns the
result. The per-sample values are computed with ferrotape ops and then reduced on the host:
one ``.numpy()`` per update, nothing recorded by a tape.

>>> import ferrotape as ft
>>> acc = ft.keras.metrics.SparseCategoricalAccuracy()
>>> acc.update_state([1, 0], [[0.1, 0.9], [0.2, 0.8]])  # one right, one wrong
>>> float(acc.result())
0.5
>>> float(acc([0], [[0.7, 0.3]]))  # two right out of three
0.6666666865348816
"""

import re

import numpy as np

import ferrotape as ft

from . import losses as _losses


def _snake_case(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


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


def _reduce_to_samplewise(values, sample_weight, reduce_fn, who="Metric"):
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
        self._dtype = ft.float32 if dtype is None else ft.as_dtype(dtype)
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
        dtype = self._dtype if dtype is None else ft.as_dtype(dtype)
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


class Sum(Metric):
    """The running (weighted) sum of the values."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(dtype=dtype, name=name)
        self.total = self.add_variable((), "zeros", name="total")

    def update_state(self, values, sample_weight=None):
        weights = None if sample_weight is None else _numpy(sample_weight)
        values, _ = _reduce_to_samplewise(_numpy(values), weights, np.sum, self.name)
        self.total.assign_add(float(values.sum()))

    def result(self):
        return ft.identity(self.total.read_value())


class Mean(Metric):
    """The running (weighted) mean: ``total / count``, where each update adds the sum of its
    per-sample values (values of rank > 1 are first averaged per sample) and its number of
    samples, or the sum of the sample weights."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(dtype=dtype, name=name)
        self.total = self.add_variable((), "zeros", name="total")
        self.count = self.add_variable((), "zeros", name="count")

    def update_state(self, values, sample_weight=None):
        weights = None if sample_weight is None else _numpy(sample_weight)
        values, weights = _reduce_to_samplewise(_numpy(values), weights, np.mean, self.name)
        if weights is not None:
            count = float(weights.sum())
        else:
            count = float(values.shape[0]) if values.ndim >= 1 else 1.0
        # ndarray.sum, not np.sum: the function's dispatch costs microseconds per batch.
        self.total.assign_add(float(values.sum()))
        self.count.assign_add(count)

    def result(self):
        count = float(self.count.numpy())
        value = float(self.total.numpy()) / count if count else 0.0
        return ft.constant(value, dtype=self._dtype)


class MeanMetricWrapper(Mean):
    """The running mean of ``fn(y_true, y_pred, **kwargs)``, a per-sample function."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", None) or "mean", dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        super().update_state(values, sample_weight=sample_weight)

    def get_config(self):
        config = super().get_config()
        config.update(self._fn_kwargs)
        if type(self) is MeanMetricWrapper:
            config["fn"] = getattr(self._fn, "__name__", self._fn)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("fn"), str):
            config["fn"] = ALL_OBJECTS_DICT[config["fn"]]
        return cls(**config)


# ------------------------------------------------------------- per-sample values


def _pred_and_true(y_true, y_pred, who):
    """``y_pred`` as a tensor, ``y_true`` as a tensor of its dtype, ranks matched and shapes
    checked (a mismatch names ``who``)."""
    y_pred = _losses._tensor(y_pred)
    y_true = _losses._tensor(y_true, y_pred.dtype)
    return _losses._same_rank(who, y_true, y_pred)


def accuracy(y_true, y_pred):
    """The fraction of entries (over the last axis) where ``y_pred == y_true``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred, "accuracy")
    return ft.reduce_mean(ft.cast(ft.equal(y_true, y_pred), ft.float32), axis=-1)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """The fraction (over the last axis) of ``(y_pred > threshold) == y_true``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred, "binary_accuracy")
    predicted = ft.cast(y_pred > threshold, y_true.dtype)
    return ft.reduce_mean(ft.cast(ft.equal(y_true, predicted), ft.float32), axis=-1)


def categorical_accuracy(y_true, y_pred):
    """1 where ``argmax(y_pred) == argmax(y_true)`` (one-hot labels), else 0."""
    y_pred = _losses._tensor(y_pred)
    y_true = _losses._tensor(y_true)
    matches = ft.equal(ft.argmax(y_true, axis=-1), ft.argmax(y_pred, axis=-1))
    return ft.cast(matches, ft.float32)


def sparse_categorical_accuracy(y_true, y_pred):
    """1 where ``argmax(y_pred) == y_true`` (integer labels, optionally with a trailing
    axis of 1), else 0."""
    y_pred = _losses._tensor(y_pred)
    y_true = _losses._tensor(y_true)
    if len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
        y_true = ft.squeeze(y_true, -1)
    predicted = ft.argmax(y_pred, axis=-1)
    if predicted.dtype != y_true.dtype:
        predicted = ft.cast(predicted, y_true.dtype)
    matches = ft.cast(ft.equal(y_true, predicted), ft.float32)
    if len(matches.shape) > 1 and matches.shape[-1] == 1:
        matches = ft.squeeze(matches, -1)
    return matches


# ----------------------------------------------------------------- the metrics


class Accuracy(MeanMetricWrapper):
    """How often ``y_pred`` equals ``y_true``."""

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """How often ``y_pred > threshold`` matches the binary labels."""

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        if threshold is not None and not 0 < threshold < 1:
            raise ValueError(
                "BinaryAccuracy: invalid value for argument `threshold`. Expected a value in "
                f"interval (0, 1). Received: threshold={threshold}"
            )
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)
        self.threshold = threshold


class CategoricalAccuracy(MeanMetricWrapper):
    """How often the largest prediction is the one-hot label's class."""

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the largest prediction is the integer label."""

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


class MeanSquaredError(MeanMetricWrapper):
    """The running mean of ``mean((y_true - y_pred) ** 2, axis=-1)``."""

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(_losses.mean_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    """The running mean of ``mean(abs(y_true - y_pred), axis=-1)``."""

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(_losses.mean_absolute_error, name=name, dtype=dtype)


class RootMeanSquaredError(Mean):
    """``sqrt`` of the running mean of the squared errors."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _pred_and_true(y_true, y_pred, "RootMeanSquaredError")
        super().update_state(ft.square(y_pred - y_true), sample_weight=sample_weight)

    def result(self):
        return ft.sqrt(super().result())


class CategoricalCrossentropy(MeanMetricWrapper):
    """The running mean of ``categorical_crossentropy``."""

    def __init__(
        self,
        name="categorical_crossentropy",
        dtype=None,
        from_logits=False,
        label_smoothing=0,
        axis=-1,
    ):
        super().__init__(
            _losses.categorical_crossentropy,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    """The running mean of ``sparse_categorical_crossentropy``."""

    def __init__(
        self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False, axis=-1
    ):
        super().__init__(
            _losses.sparse_categorical_crossentropy,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            axis=axis,
        )


class BinaryCrossentropy(MeanMetricWrapper):
    """The running mean of ``binary_crossentropy``."""

    def __init__(
        self, name="binary_crossentropy", dtype=None, from_logits=False, label_smoothing=0
    ):
        super().__init__(
            _losses.binary_crossentropy,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
        )


# ------------------------------------------------------------- "accuracy" and get


def _loss_kind(loss):
    """ "binary", "sparse" or "categorical" for a cross-entropy loss (name, function or
    instance), else None."""
    if loss is None:
        return None
    if isinstance(loss, str):
        loss = _losses.ALL_OBJECTS_DICT.get(loss, loss)
    if isinstance(loss, _losses.LossFunctionWrapper):
        loss = loss.fn
    elif isinstance(loss, type) and issubclass(loss, _losses.LossFunctionWrapper):
        loss = {
            _losses.BinaryCrossentropy: _losses.binary_crossentropy,
            _losses.SparseCategoricalCrossentropy: _losses.sparse_categorical_crossentropy,
            _losses.CategoricalCrossentropy: _losses.categorical_crossentropy,
        }.get(loss)
    if loss is _losses.binary_crossentropy:
        return "binary"
    if loss is _losses.sparse_categorical_crossentropy:
        return "sparse"
    if loss is _losses.categorical_crossentropy:
        return "categorical"
    return None


def _pick_accuracy(y_true, y_pred, loss):
    """The accuracy function "accuracy" means for these targets, predictions and loss: binary
    when the predictions have one column (or no class axis) or the loss is a binary
    cross-entropy, sparse or categorical after the loss, else from the shapes as Keras does
    (sparse when the labels have a lower rank or one column)."""
    pred_shape = tuple(np.shape(y_pred) if not hasattr(y_pred, "shape") else y_pred.shape)
    true_shape = tuple(np.shape(y_true) if not hasattr(y_true, "shape") else y_true.shape)
    if len(pred_shape) <= 1 or pred_shape[-1] == 1:
        return binary_accuracy
    kind = _loss_kind(loss)
    if kind == "binary":
        return binary_accuracy
    if kind == "sparse":
        return sparse_categorical_accuracy
    if kind == "categorical":
        return categorical_accuracy
    if len(true_shape) < len(pred_shape) or (true_shape and true_shape[-1] == 1):
        return sparse_categorical_accuracy
    return categorical_accuracy


class _ResolvingAccuracy(MeanMetricWrapper):
    """``"accuracy"``/``"acc"`` in ``compile``: binary, categorical or sparse categorical
    accuracy, decided at the first update (see ``_pick_accuracy``), keeping the given name."""

    def __init__(self, name="accuracy", loss=None, dtype=None):
        super().__init__(None, name=name, dtype=dtype)
        self._loss = loss

    def update_state(self, y_true, y_pred, sample_weight=None):
        if self._fn is None:
            self._fn = _pick_accuracy(y_true, y_pred, self._loss)
        super().update_state(y_true, y_pred, sample_weight=sample_weight)


mse = MSE = _losses.mean_squared_error
mae = MAE = _losses.mean_absolute_error

_CLASSES = (
    Metric,
    Mean,
    Sum,
    MeanMetricWrapper,
    Accuracy,
    BinaryAccuracy,
    CategoricalAccuracy,
    SparseCategoricalAccuracy,
    MeanSquaredError,
    MeanAbsoluteError,
    RootMeanSquaredError,
    CategoricalCrossentropy,
    SparseCategoricalCrossentropy,
    BinaryCrossentropy,
)
_FUNCTIONS = {
    fn.__name__: fn
    for fn in (
        accuracy,
        binary_accuracy,
        categorical_accuracy,
        sparse_categorical_accuracy,
        _losses.mean_squared_error,
        _losses.mean_absolute_error,
        _losses.mean_absolute_percentage_error,
        _losses.mean_squared_logarithmic_error,
        _losses.categorical_crossentropy,
        _losses.sparse_categorical_crossentropy,
        _losses.binary_crossentropy,
        _losses.kl_divergence,
        _losses.poisson,
        _losses.hinge,
        _losses.squared_hinge,
        _losses.categorical_hinge,
        _losses.log_cosh,
    )
}
_ALIASES = {
    "mse": mse,
    "MSE": mse,
    "mae": mae,
    "MAE": mae,
    "mape": _losses.mape,
    "MAPE": _losses.mape,
    "msle": _losses.msle,
    "MSLE": _losses.msle,
    "kld": _losses.kld,
    "KLD": _losses.kld,
    "bce": _losses.bce,
    "BCE": _losses.bce,
    "logcosh": _losses.log_cosh,
}
ALL_OBJECTS_DICT = {**{cls.__name__: cls for cls in _CLASSES}, **_FUNCTIONS, **_ALIASES}


def serialize(metric):
    """A metric as ``{"module", "class_name", "config", "registered_name"}``."""
    return {
        "module": "keras.metrics",
        "class_name": type(metric).__name__,
        "config": metric.get_config(),
        "registered_name": None,
    }


def deserialize(config, custom_objects=None):
    """A metric from ``serialize``'s dict."""
    objects = {**ALL_OBJECTS_DICT, **(custom_objects or {})}
    if not isinstance(config, dict) or config.get("class_name") not in objects:
        raise ValueError(f"metrics.deserialize: could not interpret {config!r}.")
    return objects[config["class_name"]].from_config(config.get("config") or {})


def get(identifier, loss=None):
    """A Metric for ``compile(metrics=[...])``.

    ``identifier`` is a Metric (returned as is), a Metric class (instantiated), a name
    (``"accuracy"``/``"acc"``: resolved at the first update from ``loss`` and the shapes; a
    class name such as ``"CategoricalAccuracy"``; a function name or alias such as
    ``"categorical_accuracy"``, ``"mse"``, ``"mae"``, wrapped in a running mean), a
    per-sample function ``fn(y_true, y_pred)`` (wrapped, named after it), or a ``serialize``
    dict. A name given as a string is kept as the metric's name, as Keras's ``compile`` does.
    """
    if identifier is None:
        return None
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier.lower() in ("accuracy", "acc"):
            return _ResolvingAccuracy(name=identifier, loss=loss)
        obj = ALL_OBJECTS_DICT.get(identifier)
        if obj is None:
            raise ValueError(
                f"metrics.get: could not interpret metric identifier: {identifier!r}. Expected "
                "a Keras metric name such as 'accuracy', 'mse' or 'categorical_accuracy'."
            )
        metric = obj() if isinstance(obj, type) else MeanMetricWrapper(obj)
        metric.name = identifier
        return metric
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if callable(identifier):
        return MeanMetricWrapper(identifier, name=getattr(identifier, "__name__", None))
    raise ValueError(f"metrics.get: could not interpret metric identifier: {identifier!r}.")


__all__ = [
    "Accuracy",
    "BinaryAccuracy",
    "BinaryCrossentropy",
    "CategoricalAccuracy",
    "CategoricalCrossentropy",
    "Mean",
    "MeanAbsoluteError",
    "MeanMetricWrapper",
    "MeanSquaredError",
    "Metric",
    "RootMeanSquaredError",
    "SparseCategoricalAccuracy",
    "SparseCategoricalCrossentropy",
    "Sum",
    "accuracy",
    "binary_accuracy",
    "categorical_accuracy",
    "deserialize",
    "get",
    "mae",
    "mse",
    "serialize",
    "sparse_categorical_accuracy",
]
