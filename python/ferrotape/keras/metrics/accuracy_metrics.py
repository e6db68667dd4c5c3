"""The accuracy metrics (Keras 3's ``keras.src.metrics.accuracy_metrics``): exact matches,
binary/categorical/sparse accuracies and the top-k accuracies, as per-sample functions and as
running means of them; also what ``compile(metrics=["accuracy"])`` resolves to.

>>> import ferrotape as ft
>>> m = ft.keras.metrics.TopKCategoricalAccuracy(k=1)
>>> m.update_state([[0, 0, 1], [0, 1, 0]], [[0.1, 0.2, 0.7], [0.5, 0.3, 0.2]])
>>> float(m.result())
0.5
"""

import numpy as np

import ferrotape as ft

from .. import losses as _losses
from .reduction_metrics import MeanMetricWrapper


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


def _in_top_k(targets, predictions, k):
    """``tf.math.in_top_k`` in numpy: whether each row's target class is among its ``k`` largest
    predictions; ties at the boundary count as inside, a non-finite or out-of-range target as
    outside."""
    n, classes = predictions.shape
    valid = (targets >= 0) & (targets < classes)
    score = predictions[np.arange(n), np.where(valid, targets, 0)]
    above = (predictions > score[:, None]).sum(axis=1)
    return valid & np.isfinite(score) & (above < k)


def _top_k_matches(labels, y_pred, k, who):
    """1.0 where ``labels`` (integer classes) is in the top ``k`` of ``y_pred``, shaped as
    ``labels``."""
    y_pred = _numpy_array(y_pred)
    labels = np.asarray(labels)
    if y_pred.ndim < 1 or labels.size * max(y_pred.shape[-1], 1) != y_pred.size:
        raise ValueError(
            f"{who}: `y_true` must hold one label per row of `y_pred`. Received: "
            f"y_true.shape={labels.shape}, y_pred.shape={y_pred.shape}"
        )
    matches = _in_top_k(
        labels.reshape(-1).astype(np.int64), y_pred.reshape(-1, y_pred.shape[-1]), k
    )
    return ft.constant(matches.reshape(labels.shape).astype(np.float32))


def _numpy_array(x):
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1 where the one-hot label's class is among the ``k`` largest predictions, else 0.

    Args:
        y_true: one-hot labels, shape ``(..., classes)``.
        y_pred: scores, the same shape.
        k: how many of the largest scores count as a hit.

    Returns:
        A float32 tensor of shape ``y_true.shape[:-1]``.
    """
    labels = np.argmax(_numpy_array(y_true), axis=-1)
    return _top_k_matches(labels, y_pred, k, "top_k_categorical_accuracy")


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    """1 where the integer label is among the ``k`` largest predictions, else 0.

    Args:
        y_true: integer labels, shape ``(batch,)`` or ``(batch, 1)``.
        y_pred: scores ``(batch, classes)``, or with ``from_sorted_ids=True`` the class ids
            already sorted by score (best first), of which the first ``k`` are compared.
        k: how many of the largest scores count as a hit.
        from_sorted_ids: whether ``y_pred`` holds sorted class ids rather than scores.

    Returns:
        A float32 tensor of ``y_true``'s shape.
    """
    labels = _numpy_array(y_true)
    if from_sorted_ids:
        ids = _numpy_array(y_pred)
        ids = ids.reshape(-1, ids.shape[-1])[:, :k]
        matches = (ids == labels.reshape(-1, 1)).any(axis=1)
        return ft.constant(matches.reshape(labels.shape).astype(np.float32))
    return _top_k_matches(labels, y_pred, k, "sparse_top_k_categorical_accuracy")


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


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot label's class is among the ``k`` largest predictions.

    Args:
        k: how many of the largest scores count as a hit (5).
        name: the metric's name.
        dtype: the result's dtype.
    """

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self.k = k


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label is among the ``k`` largest predictions.

    Args:
        k: how many of the largest scores count as a hit (5).
        name: the metric's name.
        dtype: the result's dtype.
        from_sorted_ids: whether ``y_pred`` holds class ids sorted by score.
    """

    def __init__(
        self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None, from_sorted_ids=False
    ):
        super().__init__(
            sparse_top_k_categorical_accuracy,
            name=name,
            dtype=dtype,
            k=k,
            from_sorted_ids=from_sorted_ids,
        )
        self.k = k
        self.from_sorted_ids = from_sorted_ids


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
