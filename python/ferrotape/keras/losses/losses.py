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
"""

import math
import re
import warnings

import numpy as np

import ferrotape as ft

EPSILON = 1e-7
_REDUCTIONS = ("sum_over_batch_size", "sum", "none", None, "mean", "mean_with_sample_weight")


def _tensor(x, dtype=None):
    """``x`` as a tensor (a variable is read), cast to ``dtype`` when given."""
    if not isinstance(x, ft.Tensor):
        x = ft.convert_to_tensor(x)
    if dtype is not None and x.dtype != dtype:
        x = ft.cast(x, dtype)
    return x


def _pred_and_true(y_true, y_pred):
    """``y_pred`` as a tensor and ``y_true`` as a tensor of the same dtype."""
    y_pred = _tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = ft.cast(y_pred, ft.float32)
    return _tensor(y_true, y_pred.dtype), y_pred


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """Makes ranks that differ by a trailing axis of size 1 equal: squeezes that axis, or,
    when the other tensor has rank 1 (and ``expand_rank_1``), expands it instead."""
    rank_1, rank_2 = len(x1.shape), len(x2.shape)
    if rank_1 == rank_2 + 1 and x1.shape[-1] == 1:
        if rank_2 == 1 and expand_rank_1:
            x2 = ft.expand_dims(x2, -1)
        else:
            x1 = ft.squeeze(x1, -1)
    elif rank_2 == rank_1 + 1 and x2.shape[-1] == 1:
        if rank_1 == 1 and expand_rank_1:
            x1 = ft.expand_dims(x1, -1)
        else:
            x2 = ft.squeeze(x2, -1)
    return x1, x2


def _same_rank(function, y_true, y_pred):
    """``squeeze_or_expand_to_same_rank``, then a check that the shapes broadcast, so that a
    mismatch names the loss rather than the subtraction inside it."""
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    _check_broadcast(
        function,
        "`y_true` and `y_pred`",
        tuple(y_true.shape),
        tuple(y_pred.shape),
        f"y_true.shape={tuple(y_true.shape)}, y_pred.shape={tuple(y_pred.shape)}",
    )
    return y_true, y_pred


def _check_broadcast(function, what, shape_1, shape_2, received):
    try:
        np.broadcast_shapes(shape_1, shape_2)
    except ValueError:
        raise ValueError(
            f"{function}: {what} have incompatible shapes. Received: {received}"
        ) from None


def _check_same_shape(function, y_true, y_pred):
    if len(y_true.shape) != len(y_pred.shape):
        raise ValueError(
            f"{function}: arguments `y_true` and `y_pred` must have the same rank (ndim). "
            f"Received: y_true.shape={tuple(y_true.shape)}, y_pred.shape={tuple(y_pred.shape)}"
        )
    if tuple(y_true.shape) != tuple(y_pred.shape):
        raise ValueError(
            f"{function}: arguments `y_true` and `y_pred` must have the same shape. "
            f"Received: y_true.shape={tuple(y_true.shape)}, y_pred.shape={tuple(y_pred.shape)}"
        )


def _check_axis(function, axis):
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer):
        raise ValueError(f"{function}: `axis` must be an int. Received: axis={axis!r}")


# --------------------------------------------------------------- regression


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
    if len(y_pred.shape) < 1:
        raise ValueError(
            "categorical_crossentropy: arguments `y_true` and `y_pred` must be at least rank 1. "
            f"Received: y_pred.shape={tuple(y_pred.shape)}"
        )
    _check_same_shape("categorical_crossentropy", y_true, y_pred)
    if y_pred.shape[-1] == 1:
        warnings.warn(
            "In loss categorical_crossentropy, expected y_pred.shape to be (batch_size, "
            f"num_classes) with num_classes > 1. Received: y_pred.shape={tuple(y_pred.shape)}. "
            "Consider using 'binary_crossentropy' if you only have 2 classes.",
            SyntaxWarning,
            stacklevel=2,
        )
    if label_smoothing:
        num_classes = y_true.shape[-1]
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
    if len(y_pred.shape) < 1:
        raise ValueError(
            "sparse_categorical_crossentropy: argument `y_pred` must be at least rank 1. "
            f"Received: y_pred.shape={tuple(y_pred.shape)}"
        )
    if axis != -1 and axis != len(y_pred.shape) - 1:
        raise ValueError(
            f"sparse_categorical_crossentropy: only axis=-1 is supported. Received: axis={axis}"
        )
    if len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
        y_true = ft.squeeze(y_true, -1)
    if tuple(y_true.shape) != tuple(y_pred.shape[:-1]):
        raise ValueError(
            "sparse_categorical_crossentropy: `y_true` must have the shape of `y_pred` "
            "without its last axis (the classes). Received: "
            f"y_true.shape={tuple(y_true.shape)}, y_pred.shape={tuple(y_pred.shape)}"
        )
    valid = None
    if ignore_class is not None:
        valid = ft.not_equal(y_true, ft.cast(ignore_class, y_true.dtype))
        y_true = ft.where(valid, y_true, ft.zeros_like(y_true))
    labels = y_true if y_true.dtype.is_integer else ft.cast(y_true, ft.int64)
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


# ---------------------------------------------------------------- reduction


def standardize_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(
            f"Loss: invalid value for argument `reduction`. Expected one of {_REDUCTIONS}. "
            f"Received: reduction={reduction!r}"
        )
    return reduction


def _apply_mask(sample_weight, mask, dtype, reduction):
    """Merges a validity mask into the sample weights; for mean reductions the valid entries
    are reweighted by ``total / valid`` so the mean runs over the valid entries only."""
    if mask is None:
        return sample_weight
    mask = ft.cast(mask, dtype)
    if reduction in ("mean", "sum_over_batch_size"):
        total = float(np.prod(mask.shape))
        mask = mask * (total / (ft.reduce_sum(mask) + EPSILON))
    if sample_weight is None:
        return mask
    mask, sample_weight = squeeze_or_expand_to_same_rank(mask, sample_weight)
    return sample_weight * mask


def reduce_weighted_values(
    values, sample_weight=None, mask=None, reduction="sum_over_batch_size", dtype=None, who="Loss"
):
    """Keras's reduction: weights (``sample_weight`` broadcast against ``values``, merged
    with ``mask``), then ``"sum"`` or ``"sum_over_batch_size"`` (the sum divided by the number
    of elements, 0 for none); ``"none"``/None returns the weighted values."""
    reduction = standardize_reduction(reduction)
    values = _tensor(values, dtype)
    if sample_weight is not None:
        sample_weight = _tensor(sample_weight, values.dtype)
    sample_weight = _apply_mask(sample_weight, mask, values.dtype, reduction)
    if sample_weight is not None:
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        _check_broadcast(
            who,
            "`sample_weight` and the per-sample losses",
            tuple(sample_weight.shape),
            tuple(values.shape),
            f"sample_weight.shape={tuple(sample_weight.shape)}, losses.shape={tuple(values.shape)}",
        )
        values = values * sample_weight
    if reduction is None or reduction == "none":
        return values
    shape = tuple(values.shape)
    if shape in ((), (0,)):
        return values
    loss = ft.reduce_sum(values)
    if reduction == "sum":
        return loss
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        # The sum divided by the total weight, 0 when that is 0 (Keras's divide_no_nan).
        divisor = ft.reduce_sum(sample_weight)
        nonzero = ft.not_equal(divisor, 0.0)
        safe_divisor = ft.where(nonzero, divisor, ft.ones_like(divisor))
        return ft.where(nonzero, loss / safe_divisor, ft.zeros_like(loss))
    count = int(np.prod(shape))
    return loss / float(count) if count else loss * 0.0


# ------------------------------------------------------------------ classes


def _snake_case(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Loss:
    """Base class of the loss classes: ``__call__(y_true, y_pred, sample_weight=None)``
    computes ``call(y_true, y_pred)`` (one value per sample), weights it and reduces it.

    Args:
        name: the loss's name.
        reduction: ``"sum_over_batch_size"`` (default: the mean over all elements), ``"sum"``,
            ``"mean_with_sample_weight"``, or ``"none"``/None (no reduction).
        dtype: the dtype the inputs are cast to; float32 by default.
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or _snake_case(type(self).__name__)
        self.reduction = standardize_reduction(reduction)
        self._dtype = ft.float32 if dtype is None else ft.as_dtype(dtype)

    @property
    def dtype(self):
        return self._dtype

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_pred = _tensor(y_pred, self._dtype)
        y_true = _tensor(y_true, self._dtype)
        losses = self.call(y_true, y_pred)
        return reduce_weighted_values(
            losses,
            sample_weight=sample_weight,
            mask=self._mask(y_true, y_pred),
            reduction=self.reduction,
            dtype=self._dtype,
            who=type(self).__name__,
        )

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"{type(self).__name__} must implement `call(y_true, y_pred)`.")

    def _mask(self, y_true, y_pred):
        """The entries that count (None: all of them)."""
        del y_true, y_pred
        return None

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


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

_CLASSES = (
    Loss,
    LossFunctionWrapper,
    MeanSquaredError,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError,
    LogCosh,
    Poisson,
    KLDivergence,
    Hinge,
    SquaredHinge,
    CategoricalHinge,
    Huber,
    CosineSimilarity,
    CategoricalCrossentropy,
    BinaryCrossentropy,
    SparseCategoricalCrossentropy,
)
_FUNCTIONS = {
    fn.__name__: fn
    for fn in (
        mean_squared_error,
        mean_absolute_error,
        mean_absolute_percentage_error,
        mean_squared_logarithmic_error,
        huber,
        log_cosh,
        poisson,
        kl_divergence,
        cosine_similarity,
        hinge,
        squared_hinge,
        categorical_hinge,
        categorical_crossentropy,
        sparse_categorical_crossentropy,
        binary_crossentropy,
    )
}
_ALIASES = {
    "mse": mse,
    "MSE": mse,
    "mae": mae,
    "MAE": mae,
    "mape": mape,
    "MAPE": mape,
    "msle": msle,
    "MSLE": msle,
    "kld": kld,
    "KLD": kld,
    "kullback_leibler_divergence": kld,
    "logcosh": log_cosh,
    "bce": bce,
    "BCE": bce,
}
ALL_OBJECTS_DICT = {**{cls.__name__: cls for cls in _CLASSES}, **_FUNCTIONS, **_ALIASES}


def serialize(loss):
    """A loss as its name (a function) or ``{"class_name", "config"}`` (a class instance)."""
    if isinstance(loss, Loss):
        return {
            "module": "keras.losses",
            "class_name": type(loss).__name__,
            "config": loss.get_config(),
            "registered_name": None,
        }
    return getattr(loss, "__name__", str(loss))


def deserialize(config, custom_objects=None):
    """A loss from ``serialize``'s output."""
    objects = {**ALL_OBJECTS_DICT, **(custom_objects or {})}
    if isinstance(config, str):
        obj = objects.get(config)
        if obj is None:
            raise ValueError(f"losses.deserialize: unknown loss {config!r}.")
        return obj() if isinstance(obj, type) else obj
    if not isinstance(config, dict) or config.get("class_name") not in objects:
        raise ValueError(f"losses.deserialize: could not interpret {config!r}.")
    cls = objects[config["class_name"]]
    return cls.from_config(config.get("config") or {})


def get(identifier):
    """A loss from a name (a function name such as ``"categorical_crossentropy"``, an alias
    such as ``"mse"``, or a class name such as ``"MeanSquaredError"``, which is instantiated),
    a ``serialize`` dict, or a callable (returned as is). None gives None."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        obj = ALL_OBJECTS_DICT.get(identifier)
        if obj is None:
            raise ValueError(
                f"losses.get: could not interpret loss identifier: {identifier!r}. Expected a "
                "Keras loss name such as 'categorical_crossentropy', 'mse' or 'huber'."
            )
        return obj() if isinstance(obj, type) else obj
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"losses.get: could not interpret loss identifier: {identifier!r}.")


__all__ = [
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "CategoricalHinge",
    "CosineSimilarity",
    "Hinge",
    "Huber",
    "KLDivergence",
    "LogCosh",
    "Loss",
    "LossFunctionWrapper",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanSquaredError",
    "MeanSquaredLogarithmicError",
    "Poisson",
    "SparseCategoricalCrossentropy",
    "SquaredHinge",
    "binary_crossentropy",
    "categorical_crossentropy",
    "categorical_hinge",
    "cosine_similarity",
    "deserialize",
    "get",
    "hinge",
    "huber",
    "kl_divergence",
    "log_cosh",
    "mae",
    "mape",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_error",
    "mean_squared_logarithmic_error",
    "mse",
    "msle",
    "poisson",
    "serialize",
    "sparse_categorical_crossentropy",
    "squared_hinge",
]
