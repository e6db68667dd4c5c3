"""The focal, overlap, metric-learning and noise-robust losses: binary and categorical focal
cross-entropy, Dice, Tversky, Circle and the generalized cross-entropy, as functions and
``LossFunctionWrapper`` classes. Keras 3 keeps them in ``keras.src.losses.losses`` with the
others; they live here so each file stays readable.

>>> import ferrotape as ft
>>> round(float(ft.keras.losses.dice([[1.0, 0.0]], [[0.8, 0.2]])), 4)
0.2
"""

import warnings

import ferrotape as ft

from .. import backend
from .loss import Loss, _check_axis, _pred_and_true
from .losses import LossFunctionWrapper


def binary_focal_crossentropy(
    y_true,
    y_pred,
    apply_class_balancing=False,
    alpha=0.25,
    gamma=2.0,
    from_logits=False,
    label_smoothing=0.0,
    axis=-1,
):
    """The binary cross-entropy scaled by ``(1 - p_t) ** gamma`` (Lin et al., 2017), which
    down-weights the examples already classified well, averaged over ``axis``.

    ``p_t`` is ``y_pred`` where the label is 1 and ``1 - y_pred`` where it is 0. With
    ``apply_class_balancing``, positives are further weighted by ``alpha`` and negatives by
    ``1 - alpha``.

    Args:
        y_true: binary labels.
        y_pred: probabilities, or logits with ``from_logits=True``.
        apply_class_balancing: whether to weight by ``alpha``.
        alpha: the weight of the positive class (0.25).
        gamma: the focusing exponent (2.0; 0 gives the binary cross-entropy).
        from_logits: whether ``y_pred`` holds logits.
        label_smoothing: moves the labels toward 0.5: ``t * (1 - s) + 0.5 * s``.
        axis: the axis averaged over.

    Returns:
        One value per sample (``axis`` reduced).
    """
    _check_axis("binary_focal_crossentropy", axis)
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = ft.sigmoid(y_pred)
    eps = backend.epsilon()
    clipped = ft.clip_by_value(y_pred, eps, 1.0 - eps)
    bce = -(y_true * ft.math.log(clipped) + (1.0 - y_true) * ft.math.log(1.0 - clipped))
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = ft.pow(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return ft.reduce_mean(focal, axis=axis)


def categorical_focal_crossentropy(
    y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1
):
    """The categorical cross-entropy with each class's term scaled by
    ``alpha * (1 - p) ** gamma``, summed over ``axis``.

    Args:
        y_true: one-hot (or soft) labels.
        y_pred: probabilities (renormalised to sum to 1 and clipped to ``[eps, 1 - eps]``),
            or logits with ``from_logits=True``.
        alpha: the weighting factor (0.25).
        gamma: the focusing exponent (2.0).
        from_logits: whether ``y_pred`` holds logits.
        label_smoothing: mixes the labels with the uniform distribution.
        axis: the class axis.

    Returns:
        One value per sample (``axis`` reduced).
    """
    if isinstance(axis, bool):
        raise ValueError(
            f"categorical_focal_crossentropy: `axis` must be of type `int`. Received: "
            f"axis={axis} of type {type(axis)}"
        )
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    if y_pred.shape and y_pred.shape[-1] == 1:
        warnings.warn(
            "In loss categorical_focal_crossentropy, expected y_pred.shape to be (batch_size, "
            f"num_classes) with num_classes > 1. Received: y_pred.shape={tuple(y_pred.shape)}. "
            "Consider using 'binary_crossentropy' if you only have 2 classes.",
            SyntaxWarning,
            stacklevel=2,
        )
    if label_smoothing:
        num_classes = y_true.shape[-1]
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / num_classes
    if from_logits:
        y_pred = ft.nn.softmax(y_pred, axis=axis)
    eps = backend.epsilon()
    output = y_pred / ft.reduce_sum(y_pred, axis=axis, keepdims=True)
    output = ft.clip_by_value(output, eps, 1.0 - eps)
    cross_entropy = -y_true * ft.math.log(output)
    focal = ft.pow(1.0 - output, gamma) * alpha * cross_entropy
    return ft.reduce_sum(focal, axis=axis)


def dice(y_true, y_pred, axis=None):
    """The Dice loss, ``1 - 2 * sum(y_true * y_pred) / (sum(y_true) + sum(y_pred) + eps)``.

    Args:
        y_true: the target masks.
        y_pred: the predicted masks, the same shape.
        axis: the axes summed over (None: all, one value for the batch).

    Returns:
        The loss, with ``axis`` reduced.
    """
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    intersection = ft.reduce_sum(y_true * y_pred, axis=axis)
    total = ft.reduce_sum(y_true, axis=axis) + ft.reduce_sum(y_pred, axis=axis)
    return 1.0 - 2.0 * intersection / (total + backend.epsilon())


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """The Tversky loss, ``1 - TP / (TP + alpha * FP + beta * FN + eps)`` with soft counts
    (``alpha = beta = 0.5`` gives the Dice loss).

    As in Keras 3, ``alpha`` weighs ``sum((1 - y_pred) * y_true)`` and ``beta`` weighs
    ``sum(y_pred * (1 - y_true))``.

    Args:
        y_true: the target masks.
        y_pred: the predicted masks, the same shape.
        alpha: the weight of the missed positives (0.5).
        beta: the weight of the false alarms (0.5).
        axis: the axes summed over (None: all).

    Returns:
        The loss, with ``axis`` reduced.
    """
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    intersection = ft.reduce_sum(y_true * y_pred, axis=axis)
    missed = ft.reduce_sum((1.0 - y_pred) * y_true, axis=axis)
    false_alarms = ft.reduce_sum(y_pred * (1.0 - y_true), axis=axis)
    denominator = intersection + missed * alpha + false_alarms * beta + backend.epsilon()
    return 1.0 - intersection / denominator


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    """The generalized cross-entropy (Zhang & Sabuncu, 2018), robust to noisy labels:
    ``(1 - p ** q) / q`` where ``p`` is the predicted probability of the labelled class.

    Args:
        y_true: integer labels, shape ``y_pred.shape[:-1]``.
        y_pred: class probabilities.
        q: in (0, 1): towards 0 the cross-entropy, at 1 the mean absolute error.

    Returns:
        One value per sample.
    """
    y_pred = ft.convert_to_tensor(y_pred)
    labels = ft.cast(ft.convert_to_tensor(y_true), ft.int32)
    one_hot = ft.one_hot(labels, y_pred.shape[-1], dtype=y_pred.dtype)
    p = ft.reduce_sum(y_pred * one_hot, axis=-1)
    return (1.0 - ft.pow(p, q)) / q


def _masked_logsumexp(values, mask):
    """``log(sum(exp(values)))`` over the ``mask``ed entries of each row; -inf for a row with
    none, reached without a NaN gradient (the empty rows' sums are replaced by 1 before the
    logarithm and their result selected away)."""
    has_any = ft.reduce_any(mask, axis=1)
    minus_inf = ft.constant(float("-inf"), dtype=values.dtype)
    masked = ft.where(mask, values, ft.fill(values.shape, minus_inf))
    peak = ft.stop_gradient(ft.reduce_max(masked, axis=1))
    peak = ft.where(has_any, peak, ft.zeros_like(peak))
    shifted = ft.where(mask, ft.exp(values - ft.expand_dims(peak, 1)), ft.zeros_like(values))
    total = ft.reduce_sum(shifted, axis=1)
    total = ft.where(has_any, total, ft.ones_like(total))
    lse = peak + ft.math.log(total)
    return ft.where(has_any, lse, ft.fill(lse.shape, minus_inf))


def circle(
    y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True, gamma=80, margin=0.4
):
    """The Circle loss (Sun et al., 2020) of embeddings against reference embeddings, one
    value per query: ``softplus(logsumexp(positives) + logsumexp(negatives))`` over the
    weighted, margin-shifted cosine distances of same-label and other-label pairs.

    Args:
        y_true: integer labels of the queries, shape ``(batch,)`` or ``(batch, 1)``.
        y_pred: L2-normalised query embeddings ``(batch, dim)``.
        ref_labels: the references' labels (default: ``y_true``).
        ref_embeddings: the references' embeddings (default: ``y_pred``).
        remove_diagonal: leave out each query paired with itself as a positive.
        gamma: the scale of the similarities (80).
        margin: the relaxation margin (0.4).

    Returns:
        One value per query; a query without positives or negatives gets 0.
    """
    y_pred = ft.convert_to_tensor(y_pred)
    labels = ft.cast(ft.convert_to_tensor(y_true), ft.int32)
    references = y_pred if ref_embeddings is None else ft.convert_to_tensor(ref_embeddings)
    ref = labels if ref_labels is None else ft.cast(ft.convert_to_tensor(ref_labels), ft.int32)
    labels, ref = ft.reshape(labels, [-1, 1]), ft.reshape(ref, [1, -1])
    positive = ft.equal(labels, ref)
    negative = ft.logical_not(positive)
    if remove_diagonal:
        diagonal = ft.cast(ft.eye(labels.shape[0], ref.shape[1]), ft.bool)
        positive = ft.logical_and(positive, ft.logical_not(diagonal))
    distances = ft.maximum(1.0 - ft.matmul(y_pred, references, transpose_b=True), 0.0)
    positive_f, negative_f = ft.cast(positive, distances.dtype), ft.cast(negative, distances.dtype)
    positive_weights = ft.maximum((margin + distances) * positive_f, 0.0)
    negative_weights = ft.maximum((1.0 + margin - distances) * negative_f, 0.0)
    positive_terms = -gamma * positive_weights * (margin - distances)
    negative_terms = gamma * negative_weights * ((1.0 - margin) - distances)
    return ft.math.softplus(
        _masked_logsumexp(positive_terms, positive) + _masked_logsumexp(negative_terms, negative)
    )


class _ConfiguredWrapper(LossFunctionWrapper):
    """A wrapper whose function arguments are also attributes, saved by ``get_config``."""

    def __init__(self, fn, reduction, name, dtype, **kwargs):
        super().__init__(fn, reduction=reduction, name=name, dtype=dtype, **kwargs)
        for key, value in kwargs.items():
            setattr(self, key, value)

    def get_config(self):
        return {**Loss.get_config(self), **self._fn_kwargs}


class BinaryFocalCrossentropy(_ConfiguredWrapper):
    """``binary_focal_crossentropy`` as a loss class; arguments as the function's, then
    ``reduction``, ``name`` and ``dtype``."""

    def __init__(
        self,
        apply_class_balancing=False,
        alpha=0.25,
        gamma=2.0,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction="sum_over_batch_size",
        name="binary_focal_crossentropy",
        dtype=None,
    ):
        super().__init__(
            binary_focal_crossentropy,
            reduction,
            name,
            dtype,
            apply_class_balancing=apply_class_balancing,
            alpha=alpha,
            gamma=gamma,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )


class CategoricalFocalCrossentropy(_ConfiguredWrapper):
    """``categorical_focal_crossentropy`` as a loss class; arguments as the function's, then
    ``reduction``, ``name`` and ``dtype``."""

    def __init__(
        self,
        alpha=0.25,
        gamma=2.0,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction="sum_over_batch_size",
        name="categorical_focal_crossentropy",
        dtype=None,
    ):
        super().__init__(
            categorical_focal_crossentropy,
            reduction,
            name,
            dtype,
            alpha=alpha,
            gamma=gamma,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )


class Dice(_ConfiguredWrapper):
    """``dice`` as a loss class (``axis=None``: one value over the whole batch)."""

    def __init__(self, reduction="sum_over_batch_size", name="dice", axis=None, dtype=None):
        super().__init__(dice, reduction, name, dtype, axis=axis)


class Tversky(_ConfiguredWrapper):
    """``tversky`` as a loss class."""

    def __init__(
        self,
        alpha=0.5,
        beta=0.5,
        reduction="sum_over_batch_size",
        name="tversky",
        axis=None,
        dtype=None,
    ):
        super().__init__(tversky, reduction, name, dtype, alpha=alpha, beta=beta, axis=axis)


class CategoricalGeneralizedCrossEntropy(_ConfiguredWrapper):
    """``categorical_generalized_cross_entropy`` as a loss class (``q`` in (0, 1))."""

    def __init__(
        self,
        q=0.5,
        reduction="sum_over_batch_size",
        name="categorical_generalized_cross_entropy",
        dtype=None,
    ):
        if not 0 < q < 1:
            raise ValueError(
                f"CategoricalGeneralizedCrossEntropy: q must be in the interval (0, 1). "
                f"Received: q={q}"
            )
        super().__init__(categorical_generalized_cross_entropy, reduction, name, dtype, q=q)


class Circle(_ConfiguredWrapper):
    """``circle`` as a loss class: queries whose loss is 0 (no positive or no negative pair)
    are left out of the mean, as Keras masks them."""

    def __init__(
        self,
        gamma=80.0,
        margin=0.4,
        remove_diagonal=True,
        reduction="sum_over_batch_size",
        name="circle",
        dtype=None,
    ):
        super().__init__(
            circle,
            reduction,
            name,
            dtype,
            gamma=gamma,
            margin=margin,
            remove_diagonal=remove_diagonal,
        )

    def _mask(self, y_true, y_pred):
        return ft.stop_gradient(self.call(y_true, y_pred)) > 0
