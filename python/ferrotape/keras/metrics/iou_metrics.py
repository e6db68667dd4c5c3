"""The intersection-over-union metrics (Keras 3's ``keras.src.metrics.iou_metrics``): a
confusion matrix accumulated over batches, from which each class's
``TP / (TP + FP + FN)`` is computed and averaged over the target classes.

>>> import ferrotape as ft
>>> m = ft.keras.metrics.IoU(num_classes=2, target_class_ids=[0])
>>> m.update_state([0, 0, 1, 1], [0, 1, 0, 1])
>>> round(float(m.result()), 4)
0.3333
"""

import numpy as np

import ferrotape as ft

from .. import backend
from . import metrics_utils
from .metric import Metric, _numpy, computed_on_host


class _IoUBase(Metric):
    """Accumulates the confusion matrix (rows the true class, columns the predicted one), in
    int64 unless ``dtype`` says otherwise; the result is float32."""

    def __init__(
        self,
        num_classes,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_true=True,
        sparse_y_pred=True,
        axis=-1,
    ):
        # Keras counts in integers unless told otherwise, so fractional weights truncate.
        super().__init__(name=name, dtype=dtype or "int64")
        self.num_classes = num_classes
        self.ignore_class = ignore_class
        self.sparse_y_true = sparse_y_true
        self.sparse_y_pred = sparse_y_pred
        self.axis = axis
        self.total_cm = self.add_variable((num_classes, num_classes), "zeros", name="total_cm")

    def _classes(self, y_true, y_pred):
        """Integer class arrays from the (possibly one-hot) labels and predictions."""
        y_true, y_pred = _numpy(y_true), _numpy(y_pred)
        if not self.sparse_y_true:
            y_true = np.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = np.argmax(y_pred, axis=self.axis)
        return y_true, y_pred

    @computed_on_host
    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds the batch to the confusion matrix (``sample_weight`` weighs each entry; 0
        masks it). Entries whose class is out of range, or ``ignore_class``, are skipped."""
        y_true, y_pred = self._classes(y_true, y_pred)
        # Cast through the metric's dtype as Keras does: float predictions truncate.
        y_true = y_true.astype(np.float32).reshape(-1).astype(np.int64)
        y_pred = y_pred.astype(np.float32).reshape(-1).astype(np.int64)
        weights = np.ones(1) if sample_weight is None else _numpy(sample_weight).reshape(-1)
        if self.dtype.is_integer:
            weights = np.trunc(weights)
        try:
            weights = np.broadcast_to(weights, y_true.shape)
        except ValueError:
            raise ValueError(
                f"{type(self).__name__}: `sample_weight` cannot be broadcast to the labels. "
                f"Received: sample_weight.size={weights.size}, y_true.size={y_true.size}"
            ) from None
        if y_pred.shape != y_true.shape:
            raise ValueError(
                f"{type(self).__name__}: `y_true` and `y_pred` must hold as many entries. "
                f"Received: {y_true.size} and {y_pred.size}"
            )
        keep = (y_true >= 0) & (y_true < self.num_classes)
        keep &= (y_pred >= 0) & (y_pred < self.num_classes)
        if self.ignore_class is not None:
            keep &= y_true != self.ignore_class
        matrix = metrics_utils.confusion_matrix(
            y_true[keep], y_pred[keep], self.num_classes, weights[keep]
        )
        self.total_cm.assign_add(matrix.astype(self.dtype.as_numpy_dtype))


class IoU(_IoUBase):
    """The mean IoU of the classes in ``target_class_ids``; a class absent from both labels
    and predictions is left out of the mean.

    Args:
        num_classes: the number of classes.
        target_class_ids: the classes averaged over (one id gives that class's IoU).
        name: the metric's name.
        dtype: the result's dtype.
        ignore_class: a label value to skip (a "void" class).
        sparse_y_true: labels are integers (else one-hot/scores, argmax taken).
        sparse_y_pred: predictions are integers (else scores, argmax taken).
        axis: the class axis of non-sparse inputs.
    """

    def __init__(
        self,
        num_classes,
        target_class_ids,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_true=True,
        sparse_y_pred=True,
        axis=-1,
    ):
        super().__init__(
            num_classes,
            name=name,
            dtype=dtype,
            ignore_class=ignore_class,
            sparse_y_true=sparse_y_true,
            sparse_y_pred=sparse_y_pred,
            axis=axis,
        )
        if max(target_class_ids) >= num_classes:
            raise ValueError(
                f"{type(self).__name__}: target class id {max(target_class_ids)} is out of "
                f"range, which is [0, {num_classes})."
            )
        self.target_class_ids = list(target_class_ids)

    @computed_on_host
    def result(self):
        matrix = _numpy(self.total_cm)
        true_positives = np.diag(matrix)
        denominator = matrix.sum(axis=0) + matrix.sum(axis=1) - true_positives
        ids = self.target_class_ids
        true_positives, denominator = true_positives[ids], denominator[ids]
        valid = denominator > 1e-9
        iou = np.where(valid, true_positives / (denominator + backend.epsilon()), 0.0)
        dtype = self.dtype if self.dtype.is_floating else ft.float32
        return ft.constant(iou.sum() / (valid.sum() + backend.epsilon()), dtype=dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "num_classes": self.num_classes,
            "target_class_ids": self.target_class_ids,
            "ignore_class": self.ignore_class,
            "sparse_y_true": self.sparse_y_true,
            "sparse_y_pred": self.sparse_y_pred,
            "axis": self.axis,
        }


class BinaryIoU(IoU):
    """IoU of binary labels, predictions at or above ``threshold`` counting as class 1.

    Args:
        target_class_ids: the classes averaged over, among (0, 1).
        threshold: the prediction at or above which class 1 is predicted (0.5).
        name: the metric's name.
        dtype: the result's dtype.
    """

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(num_classes=2, target_class_ids=target_class_ids, name=name, dtype=dtype)
        self.threshold = threshold

    @computed_on_host
    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds the batch, ``y_pred >= threshold`` as the predicted class."""
        y_pred = (_numpy(y_pred) >= self.threshold).astype(np.float32)
        super().update_state(y_true, y_pred, sample_weight)

    def get_config(self):
        return {
            "name": self.name,
            "dtype": self.dtype.name,
            "target_class_ids": self.target_class_ids,
            "threshold": self.threshold,
        }


class MeanIoU(IoU):
    """The IoU averaged over every class. Arguments as ``IoU``'s, less ``target_class_ids``."""

    def __init__(
        self,
        num_classes,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_true=True,
        sparse_y_pred=True,
        axis=-1,
    ):
        super().__init__(
            num_classes,
            list(range(num_classes)),
            name=name,
            dtype=dtype,
            ignore_class=ignore_class,
            sparse_y_true=sparse_y_true,
            sparse_y_pred=sparse_y_pred,
            axis=axis,
        )

    def get_config(self):
        config = super().get_config()
        del config["target_class_ids"]
        return config


class OneHotIoU(IoU):
    """``IoU`` of one-hot labels and score predictions (argmax taken of both).

    Args:
        num_classes: the number of classes.
        target_class_ids: the classes averaged over.
        name: the metric's name.
        dtype: the result's dtype.
        ignore_class: a class to skip.
        sparse_y_pred: predictions are integers rather than scores.
        axis: the class axis.
    """

    def __init__(
        self,
        num_classes,
        target_class_ids,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_pred=False,
        axis=-1,
    ):
        super().__init__(
            num_classes,
            target_class_ids,
            name=name,
            dtype=dtype,
            ignore_class=ignore_class,
            sparse_y_true=False,
            sparse_y_pred=sparse_y_pred,
            axis=axis,
        )

    def get_config(self):
        config = super().get_config()
        del config["sparse_y_true"]
        return config


class OneHotMeanIoU(MeanIoU):
    """``MeanIoU`` of one-hot labels and score predictions. Arguments as ``OneHotIoU``'s,
    less ``target_class_ids``."""

    def __init__(
        self,
        num_classes,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_pred=False,
        axis=-1,
    ):
        super().__init__(
            num_classes,
            name=name,
            dtype=dtype,
            ignore_class=ignore_class,
            sparse_y_true=False,
            sparse_y_pred=sparse_y_pred,
            axis=axis,
        )

    def get_config(self):
        config = super().get_config()
        del config["sparse_y_true"]
        return config
