"""``ft.keras.losses``: Keras 3's loss functions and loss classes, built from ferrotape ops so
gradients flow through ``y_pred``.

Functions (``categorical_crossentropy``, ``mean_squared_error``, ...) return one value per
sample, reducing the last axis where Keras does. Classes (``CategoricalCrossentropy``, ...)
apply ``sample_weight`` and reduce to a scalar (``reduction="sum_over_batch_size"``, the mean
over every element, by default).

Probabilities are clipped to ``[1e-7, 1 - 1e-7]`` before their logarithm, as Keras does; the
clipped region has zero gradient.

>>> import ferrotape as ft
>>> y_true = [[0.0, 1.0], [1.0, 0.0]]
>>> y_pred = [[0.2, 0.8], [0.6, 0.4]]
>>> [round(float(x), 4) for x in ft.keras.losses.categorical_crossentropy(y_true, y_pred)]
[0.2231, 0.5108]
>>> round(float(ft.keras.losses.CategoricalCrossentropy()(y_true, y_pred)), 4)  # their mean
0.367

Keras 3 keeps these in ``keras.src.losses.losses``.
"""

import math
import warnings

import numpy as np

import ferrotape as ft

from ... import _core
from .loss import (
    EPSILON,
    Loss,
    _check_axis,
    _check_same_shape,
    _pred_and_true,
    _same_rank,
    _tensor,
    squeeze_or_expand_to_same_rank,
)


def mean_squared_error(y_true, y_pred):
    """``mean((y_true - y_pred) ** 2, axis=-1)``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = _same_rank("mean_squared_error", y_true, y_pred)
    return ft.reduce_mean(ft.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    """``mean(abs(y_true - y_pred), axis=-1)``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = _same_rank("mean_absolute_error", y_true, y_pred)
    return ft.reduce_mean(ft.abs(y_true - y_pred), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    """``100 * mean(abs((y_true - y_pred) / max(abs(y_true), 1e-7)), axis=-1)``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = _same_rank("mean_absolute_percentage_error", y_true, y_pred)
    relative = ft.abs((y_true - y_pred) / ft.maximum(ft.abs(y_true), EPSILON))
    return ft.reduce_mean(relative, axis=-1) * 100.0


def mean_squared_logarithmic_error(y_true, y_pred):
    """``mean((log(max(y_pred, 1e-7) + 1) - log(max(y_true, 1e-7) + 1)) ** 2, axis=-1)``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = _same_rank("mean_squared_logarithmic_error", y_true, y_pred)
    log_pred = ft.math.log(ft.maximum(y_pred, EPSILON) + 1.0)
    log_true = ft.math.log(ft.maximum(y_true, EPSILON) + 1.0)
    return ft.reduce_mean(ft.square(log_pred - log_true), axis=-1)


def huber(y_true, y_pred, delta=1.0):
    """Mean over the last axis of ``0.5 * e ** 2`` where ``|e| <= delta`` and
    ``delta * |e| - 0.5 * delta ** 2`` elsewhere, with ``e = y_pred - y_true``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = _same_rank("huber", y_true, y_pred)
    delta = float(delta)
    error = y_pred - y_true
    abs_error = ft.abs(error)
    quadratic = ft.square(error) * 0.5
    linear = abs_error * delta - 0.5 * delta * delta
    return ft.reduce_mean(ft.where(abs_error <= delta, quadratic, linear), axis=-1)


def log_cosh(y_true, y_pred):
    """``mean(log(cosh(y_pred - y_true)), axis=-1)``, computed as
    ``x + softplus(-2x) - log(2)`` so that large errors do not overflow."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = _same_rank("log_cosh", y_true, y_pred)
    error = y_pred - y_true
    return ft.reduce_mean(error + ft.nn.softplus(error * -2.0) - math.log(2.0), axis=-1)


def poisson(y_true, y_pred):
    """``mean(y_pred - y_true * log(y_pred + 1e-7), axis=-1)``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = _same_rank("poisson", y_true, y_pred)
    return ft.reduce_mean(y_pred - y_true * ft.math.log(y_pred + EPSILON), axis=-1)


def kl_divergence(y_true, y_pred):
    """``sum(t * log(t / p), axis=-1)`` with both clipped to ``[1e-7, 1]``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = _same_rank("kl_divergence", y_true, y_pred)
    y_true = ft.clip_by_value(y_true, EPSILON, 1.0)
    y_pred = ft.clip_by_value(y_pred, EPSILON, 1.0)
    return ft.reduce_sum(y_true * ft.math.log(y_true / y_pred), axis=-1)


def cosine_similarity(y_true, y_pred, axis=-1):
    """``-sum(l2_normalize(y_true) * l2_normalize(y_pred), axis)``: -1 for the same
    direction, 0 for orthogonal vectors."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = _same_rank("cosine_similarity", y_true, y_pred)
    y_true = _l2_normalize(y_true, axis)
    y_pred = _l2_normalize(y_pred, axis)
    return -ft.reduce_sum(y_true * y_pred, axis=axis)


def _l2_normalize(x, axis):
    squares = ft.reduce_sum(ft.square(x), axis=axis, keepdims=True)
    return x * ft.math.rsqrt(ft.maximum(squares, 1e-12))


# ------------------------------------------------------------------- hinge


def _hinge_labels(y_true):
    """Labels in {0, 1} become {-1, 1}; other labels are kept."""
    values = y_true.numpy()
    if np.all((values == 0) | (values == 1)):
        return y_true * 2.0 - 1.0
    return y_true


def hinge(y_true, y_pred):
    """``mean(max(1 - y_true * y_pred, 0), axis=-1)``, labels -1/1 (0/1 are converted)."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = _same_rank("hinge", y_true, y_pred)
    y_true = _hinge_labels(y_true)
    return ft.reduce_mean(ft.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    """``mean(max(1 - y_true * y_pred, 0) ** 2, axis=-1)``, labels -1/1 (0/1 are converted)."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = _same_rank("squared_hinge", y_true, y_pred)
    y_true = _hinge_labels(y_true)
    return ft.reduce_mean(ft.square(ft.maximum(1.0 - y_true * y_pred, 0.0)), axis=-1)


def categorical_hinge(y_true, y_pred):
    """``max(0, 1 + max((1 - y_true) * y_pred) - sum(y_true * y_pred))`` over the last axis."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = _same_rank("categorical_hinge", y_true, y_pred)
    positive = ft.reduce_sum(y_true * y_pred, axis=-1)
    negative = ft.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return ft.maximum(negative - positive + 1.0, 0.0)


# ------------------------------------------------------------ cross-entropies


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Cross-entropy of one-hot (or soft) labels, one value per sample.

    With probabilities, ``y_pred`` is first renormalised to sum to 1 along ``axis`` and
    clipped to ``[1e-7, 1 - 1e-7]``: ``-sum(y_true * log(p), axis)``. With
    ``from_logits=True``: ``-sum(y_true * log_softmax(y_pred), axis)``. ``label_smoothing``
    mixes the labels with the uniform distribution:
    ``y_true * (1 - label_smoothing) + label_smoothing / num_classes``.
    """
    _check_axis("categorical_crossentropy", axis)
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    if y_pred.ndim < 1:
        raise ValueError(
            "categorical_crossentropy: arguments `y_true` and `y_pred` must be at least rank 1. "
            f"Received: y_pred.shape={tuple(y_pred.shape)}"
        )
    _check_same_shape("categorical_crossentropy", y_true, y_pred)
    if _core.checked_shape(y_pred)[-1] == 1:
        warnings.warn(
            "In loss categorical_crossentropy, expected y_pred.shape to be (batch_size, "
            f"num_classes) with num_classes > 1. Received: y_pred.shape={tuple(y_pred.shape)}. "
            "Consider using 'binary_crossentropy' if you only have 2 classes.",
            SyntaxWarning,
            stacklevel=2,
        )
    if label_smoothing:
        (num_classes,) = _core.trace_dims(y_true, [y_true.ndim - 1])
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / num_classes
    if from_logits:
        return ft.nn.softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred, axis=axis)
    # Renormalise so the probabilities of each sample sum to 1, as Keras does.
    y_pred = y_pred / ft.reduce_sum(y_pred, axis=axis, keepdims=True)
    y_pred = ft.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
    return -ft.reduce_sum(y_true * ft.math.log(y_pred), axis=axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """Cross-entropy of integer labels ``y_true`` (shape ``y_pred.shape[:-1]``, or with a
    trailing 1) against ``y_pred`` (probabilities, or logits with ``from_logits=True``), one
    value per sample. Entries labelled ``ignore_class`` get a loss of 0.

    Probabilities are clipped to ``[1e-7, 1 - 1e-7]``; their logarithms then go through a
    softmax cross-entropy, which renormalises them.
    """
    y_pred = _tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = ft.cast(y_pred, ft.float32)
    y_true = _tensor(y_true)
    # Shapes checked, sizes compared with 1 only (see `_core.checked_shape`).
    pred_shape = tuple(_core.checked_shape(y_pred))
    if not pred_shape:
        raise ValueError(
            "sparse_categorical_crossentropy: argument `y_pred` must be at least rank 1. "
            f"Received: y_pred.shape={pred_shape}"
        )
    if axis != -1 and axis != len(pred_shape) - 1:
        raise ValueError(
            f"sparse_categorical_crossentropy: only axis=-1 is supported. Received: axis={axis}"
        )
    if y_true.ndim == len(pred_shape) and _core.checked_shape(y_true)[-1] == 1:
        y_true = ft.squeeze(y_true, -1)
    if tuple(_core.checked_shape(y_true)) != pred_shape[:-1]:
        raise ValueError(
            "sparse_categorical_crossentropy: `y_true` must have the shape of `y_pred` "
            "without its last axis (the classes). Received: "
            f"y_true.shape={tuple(_core.checked_shape(y_true))}, y_pred.shape={pred_shape}"
        )
    valid = None
    if ignore_class is not None:
        valid = ft.not_equal(y_true, ft.cast(ignore_class, y_true.dtype))
        y_true = ft.where(valid, y_true, ft.zeros_like(y_true))
    labels = y_true if y_true.dtype in (ft.int32, ft.int64) else ft.cast(y_true, ft.int64)
    logits = y_pred
    if not from_logits:
        logits = ft.math.log(ft.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON))
    losses = ft.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    if valid is not None:
        losses = ft.where(valid, losses, ft.zeros_like(losses))
    return losses


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Binary cross-entropy averaged over ``axis``: with probabilities (clipped to
    ``[1e-7, 1 - 1e-7]``) ``-(t * log(p) + (1 - t) * log(1 - p))``; with
    ``from_logits=True`` the stable ``sigmoid_cross_entropy_with_logits``.
    ``label_smoothing`` moves the labels toward 0.5: ``t * (1 - s) + 0.5 * s``.
    """
    _check_axis("binary_crossentropy", axis)
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    _check_same_shape("binary_crossentropy", y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        elementwise = ft.nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    else:
        y_pred = ft.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
        log_p = ft.math.log(y_pred)
        log_not_p = ft.math.log(1.0 - y_pred)
        elementwise = -(y_true * log_p + (1.0 - y_true) * log_not_p)
    return ft.reduce_mean(elementwise, axis=axis)


class LossFunctionWrapper(Loss):
    """A ``Loss`` around a per-sample function ``fn(y_true, y_pred, **kwargs)``."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        config = super().get_config()
        config.update(self._fn_kwargs)
        return config


def _wrapper_class(class_name, fn, default_name, doc):
    """A ``LossFunctionWrapper`` subclass for a function without extra arguments."""

    def __init__(self, reduction="sum_over_batch_size", name=default_name, dtype=None):
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        return Loss.get_config(self)

    return type(
        class_name,
        (LossFunctionWrapper,),
        {
            "__init__": __init__,
            "get_config": get_config,
            "__doc__": doc,
            "__module__": __name__,
            "__qualname__": class_name,
        },
    )


MeanSquaredError = _wrapper_class(
    "MeanSquaredError", mean_squared_error, "mean_squared_error", "Mean of squared errors."
)
MeanAbsoluteError = _wrapper_class(
    "MeanAbsoluteError", mean_absolute_error, "mean_absolute_error", "Mean of absolute errors."
)
MeanAbsolutePercentageError = _wrapper_class(
    "MeanAbsolutePercentageError",
    mean_absolute_percentage_error,
    "mean_absolute_percentage_error",
    "Mean absolute percentage error.",
)
MeanSquaredLogarithmicError = _wrapper_class(
    "MeanSquaredLogarithmicError",
    mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error",
    "Mean squared logarithmic error.",
)
LogCosh = _wrapper_class("LogCosh", log_cosh, "log_cosh", "Logarithm of the hyperbolic cosine.")
Poisson = _wrapper_class("Poisson", poisson, "poisson", "Poisson loss.")
KLDivergence = _wrapper_class(
    "KLDivergence", kl_divergence, "kl_divergence", "Kullback-Leibler divergence."
)
Hinge = _wrapper_class("Hinge", hinge, "hinge", "Hinge loss.")
SquaredHinge = _wrapper_class("SquaredHinge", squared_hinge, "squared_hinge", "Squared hinge.")
CategoricalHinge = _wrapper_class(
    "CategoricalHinge", categorical_hinge, "categorical_hinge", "Categorical hinge loss."
)


class Huber(LossFunctionWrapper):
    """The Huber loss: quadratic for errors up to ``delta``, linear beyond."""

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss", dtype=None):
        super().__init__(huber, reduction=reduction, name=name, dtype=dtype, delta=delta)


class CosineSimilarity(LossFunctionWrapper):
    """The negated cosine similarity along ``axis``."""

    def __init__(
        self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity", dtype=None
    ):
        super().__init__(cosine_similarity, reduction=reduction, name=name, dtype=dtype, axis=axis)


class CategoricalCrossentropy(LossFunctionWrapper):
    """``categorical_crossentropy`` as a loss class (labels one-hot, or soft)."""

    def __init__(
        self,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction="sum_over_batch_size",
        name="categorical_crossentropy",
        dtype=None,
    ):
        super().__init__(
            categorical_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )
        self.from_logits = from_logits
        self.label_smoothing = label_smoothing
        self.axis = axis


class BinaryCrossentropy(LossFunctionWrapper):
    """``binary_crossentropy`` as a loss class."""

    def __init__(
        self,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction="sum_over_batch_size",
        name="binary_crossentropy",
        dtype=None,
    ):
        super().__init__(
            binary_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )
        self.from_logits = from_logits
        self.label_smoothing = label_smoothing
        self.axis = axis


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """``sparse_categorical_crossentropy`` as a loss class. With ``ignore_class``, the mean
    runs over the entries whose label is not ``ignore_class``."""

    def __init__(
        self,
        from_logits=False,
        ignore_class=None,
        reduction="sum_over_batch_size",
        name="sparse_categorical_crossentropy",
        dtype=None,
    ):
        super().__init__(
            sparse_categorical_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            ignore_class=ignore_class,
        )
        self.from_logits = from_logits
        self.ignore_class = ignore_class

    def _mask(self, y_true, y_pred):
        if self.ignore_class is None:
            return None
        if len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
            y_true = ft.squeeze(y_true, -1)
        return ft.not_equal(y_true, ft.cast(self.ignore_class, y_true.dtype))


# ---------------------------------------------------------------------- get

mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh
bce = BCE = binary_crossentropy
