"""The confusion metrics (Keras 3's ``keras.src.metrics.confusion_metrics``): weighted counts of
true/false positives/negatives at thresholds, precision and recall, the sensitivity,
specificity, precision or recall reached under a constraint on its partner, and ``AUC``.

A prediction is positive at a threshold when it is strictly greater than it; a label is
positive when nonzero.

>>> import ferrotape as ft
>>> m = ft.keras.metrics.Precision()
>>> m.update_state([0, 1, 1, 1], [1, 0, 1, 1])
>>> round(float(m.result()), 4)
0.6667
>>> auc = ft.keras.metrics.AUC(num_thresholds=3)
>>> auc.update_state([0, 0, 1, 1], [0.0, 0.5, 0.3, 0.9])
>>> round(float(auc.result()), 4)
0.75
"""

import numpy as np

import ferrotape as ft

from .. import backend
from . import metrics_utils
from .metric import Metric, _numpy, computed_on_host, divide_no_nan


def _scalar_or_vector(values, dtype):
    """One threshold gives a scalar result, several a vector (as Keras returns them)."""
    return ft.constant(values[0] if len(values) == 1 else values, dtype=dtype)


class _ConfusionMatrixConditionCount(Metric):
    """The weighted count of one confusion-matrix cell at each threshold."""

    _condition = None

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.thresholds = metrics_utils.parse_init_thresholds(thresholds, 0.5, type(self).__name__)
        self._thresholds_distributed_evenly = False
        self.accumulator = self.add_variable((len(self.thresholds),), "zeros", name="accumulator")

    @computed_on_host
    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds the batch's count (``sample_weight`` weighs each prediction)."""
        metrics_utils.update_confusion_matrix_variables(
            {self._condition: self.accumulator},
            y_true,
            y_pred,
            thresholds=self.thresholds,
            sample_weight=sample_weight,
        )

    @computed_on_host
    def result(self):
        return _scalar_or_vector(_numpy(self.accumulator), self.dtype)

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds}


class TruePositives(_ConfusionMatrixConditionCount):
    """The weighted number of positive labels predicted positive (above ``thresholds``,
    0.5 by default; a list of thresholds gives one count per threshold)."""

    _condition = "true_positives"


class FalsePositives(_ConfusionMatrixConditionCount):
    """The weighted number of negative labels predicted positive."""

    _condition = "false_positives"


class TrueNegatives(_ConfusionMatrixConditionCount):
    """The weighted number of negative labels predicted negative."""

    _condition = "true_negatives"


class FalseNegatives(_ConfusionMatrixConditionCount):
    """The weighted number of positive labels predicted negative."""

    _condition = "false_negatives"


class _PrecisionRecall(Metric):
    """Shared by ``Precision`` and ``Recall``: two counts per threshold, optionally restricted
    to the top k predictions of each row or to one class."""

    _counts = ()

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.top_k = top_k
        self.class_id = class_id
        default = 0.5 if top_k is None else metrics_utils.NEG_INF
        self.thresholds = metrics_utils.parse_init_thresholds(
            thresholds, default, type(self).__name__
        )
        self._thresholds_distributed_evenly = False
        for count in self._counts:
            setattr(self, count, self.add_variable((len(self.thresholds),), "zeros", name=count))

    @computed_on_host
    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds the batch's counts (``sample_weight`` weighs each prediction)."""
        metrics_utils.update_confusion_matrix_variables(
            {count: getattr(self, count) for count in self._counts},
            y_true,
            y_pred,
            thresholds=self.thresholds,
            top_k=self.top_k,
            class_id=self.class_id,
            sample_weight=sample_weight,
        )

    @computed_on_host
    def result(self):
        hits, misses = (_numpy(getattr(self, count)) for count in self._counts)
        return _scalar_or_vector(divide_no_nan(hits, hits + misses), self.dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "thresholds": self.init_thresholds,
            "top_k": self.top_k,
            "class_id": self.class_id,
        }


class Precision(_PrecisionRecall):
    """``true_positives / (true_positives + false_positives)``: the fraction of positive
    predictions that are right.

    Args:
        thresholds: a float or list of floats in [0, 1] (default 0.5, or no threshold with
            ``top_k``); a list gives one precision per threshold.
        top_k: only the k largest predictions of each row count as positive.
        class_id: only this class (index of the last axis) is measured.
        name: the metric's name.
        dtype: the result's dtype.
    """

    _counts = ("true_positives", "false_positives")


class Recall(_PrecisionRecall):
    """``true_positives / (true_positives + false_negatives)``: the fraction of positive
    labels predicted positive. Arguments as ``Precision``'s."""

    _counts = ("true_positives", "false_negatives")


class SensitivitySpecificityBase(Metric):
    """The four confusion counts at ``num_thresholds`` evenly spaced thresholds in [0, 1];
    subclasses return the best of one rate among the thresholds where its partner reaches
    ``value`` (0 when none does)."""

    _value_name = "value"

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        if num_thresholds <= 0:
            raise ValueError(
                f"{type(self).__name__}: argument `num_thresholds` must be an integer > 0. "
                f"Received: num_thresholds={num_thresholds}"
            )
        if not 0 <= value <= 1:
            raise ValueError(
                f"{type(self).__name__}: argument `{self._value_name}` must be in the range "
                f"[0, 1]. Received: {self._value_name}={value}"
            )
        self.value = value
        self.class_id = class_id
        self.num_thresholds = num_thresholds
        if num_thresholds == 1:
            self.thresholds = [0.5]
            self._thresholds_distributed_evenly = False
        else:
            inner = metrics_utils.evenly_spaced_thresholds(num_thresholds)
            self.thresholds = [0.0, *inner, 1.0]
            self._thresholds_distributed_evenly = True
        for key in metrics_utils.CONFUSION_KEYS:
            setattr(self, key, self.add_variable((len(self.thresholds),), "zeros", name=key))

    @computed_on_host
    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds the batch's counts (``sample_weight`` weighs each prediction)."""
        metrics_utils.update_confusion_matrix_variables(
            {key: getattr(self, key) for key in metrics_utils.CONFUSION_KEYS},
            y_true,
            y_pred,
            thresholds=self.thresholds,
            class_id=self.class_id,
            sample_weight=sample_weight,
            thresholds_distributed_evenly=self._thresholds_distributed_evenly,
        )

    def _rates(self):
        tp, fp, tn, fn = (_numpy(getattr(self, k)) for k in metrics_utils.CONFUSION_KEYS)
        return {
            "sensitivity": divide_no_nan(tp, tp + fn),
            "specificity": divide_no_nan(tn, tn + fp),
            "precision": divide_no_nan(tp, tp + fp),
        }

    def _best_where(self, constrained, dependent):
        """The largest ``dependent`` over the thresholds where ``constrained >= value``."""
        feasible = constrained >= self.value
        return ft.constant(max(0.0, float(np.where(feasible, dependent, 0.0).max())), self.dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "num_thresholds": self.num_thresholds,
            "class_id": self.class_id,
            self._value_name: self.value,
        }


class SensitivityAtSpecificity(SensitivitySpecificityBase):
    """The best sensitivity (recall) at a threshold whose specificity is at least
    ``specificity``.

    Args:
        specificity: the required specificity, in [0, 1].
        num_thresholds: how many evenly spaced thresholds are tried (200).
        class_id: only this class is measured.
        name: the metric's name.
        dtype: the result's dtype.
    """

    _value_name = "specificity"

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(specificity, num_thresholds, class_id, name=name, dtype=dtype)
        self.specificity = specificity

    @computed_on_host
    def result(self):
        rates = self._rates()
        return self._best_where(rates["specificity"], rates["sensitivity"])


class SpecificityAtSensitivity(SensitivitySpecificityBase):
    """The best specificity at a threshold whose sensitivity is at least ``sensitivity``.
    Arguments as ``SensitivityAtSpecificity``'s."""

    _value_name = "sensitivity"

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(sensitivity, num_thresholds, class_id, name=name, dtype=dtype)
        self.sensitivity = sensitivity

    @computed_on_host
    def result(self):
        rates = self._rates()
        return self._best_where(rates["sensitivity"], rates["specificity"])


class PrecisionAtRecall(SensitivitySpecificityBase):
    """The best precision at a threshold whose recall is at least ``recall``.
    Arguments as ``SensitivityAtSpecificity``'s."""

    _value_name = "recall"

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(recall, num_thresholds, class_id, name=name, dtype=dtype)
        self.recall = recall

    @computed_on_host
    def result(self):
        rates = self._rates()
        return self._best_where(rates["sensitivity"], rates["precision"])


class RecallAtPrecision(SensitivitySpecificityBase):
    """The best recall at a threshold whose precision is at least ``precision``.
    Arguments as ``SensitivityAtSpecificity``'s."""

    _value_name = "precision"

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(precision, num_thresholds, class_id, name=name, dtype=dtype)
        self.precision = precision

    @computed_on_host
    def result(self):
        rates = self._rates()
        return self._best_where(rates["precision"], rates["sensitivity"])


_CURVES = ("ROC", "PR", "PRGAIN")
_SUMMATIONS = ("interpolation", "minoring", "majoring")


class AUC(Metric):
    """The area under the ROC curve (default) or the precision-recall curve, approximated by
    a Riemann sum over the confusion counts at ``num_thresholds`` thresholds.

    Args:
        num_thresholds: how many thresholds (> 1): evenly spaced in [0, 1] with the two ends
            moved just outside it.
        curve: ``"ROC"``, ``"PR"`` or ``"PRGAIN"``.
        summation_method: ``"interpolation"`` (trapezoids; for PR, Davis & Goadrich's
            interpolation), ``"minoring"`` or ``"majoring"``.
        name: the metric's name.
        dtype: the result's dtype.
        thresholds: explicit thresholds in [0, 1] instead of evenly spaced ones.
        multi_label: one curve per label (last axis), averaged, instead of one curve over
            every label pooled.
        num_labels: the number of labels with ``multi_label`` (else read at the first update).
        label_weights: per-label weights (pooled counts, or the average of per-label areas).
        from_logits: whether predictions are logits (passed through a sigmoid first).
    """

    def __init__(
        self,
        num_thresholds=200,
        curve="ROC",
        summation_method="interpolation",
        name=None,
        dtype=None,
        thresholds=None,
        multi_label=False,
        num_labels=None,
        label_weights=None,
        from_logits=False,
    ):
        super().__init__(name=name, dtype=dtype)
        if str(curve).upper() not in _CURVES:
            raise ValueError(
                f"AUC: invalid `curve` {curve!r}; expected one of {_CURVES} (any case)."
            )
        if str(summation_method).lower() not in _SUMMATIONS:
            raise ValueError(
                f"AUC: invalid `summation_method` {summation_method!r}; expected one of "
                f"{_SUMMATIONS}."
            )
        self.curve = str(curve).upper()
        self.summation_method = str(summation_method).lower()
        if thresholds is not None:
            inner = sorted(metrics_utils.parse_init_thresholds(thresholds, who="AUC"))
            self.num_thresholds = len(inner) + 2
            self._thresholds_distributed_evenly = False
            self._init_from_thresholds = True
        else:
            if num_thresholds <= 1:
                raise ValueError(
                    "AUC: argument `num_thresholds` must be an integer > 1. "
                    f"Received: num_thresholds={num_thresholds}"
                )
            self.num_thresholds = num_thresholds
            self._init_from_thresholds = False
            inner = metrics_utils.evenly_spaced_thresholds(num_thresholds)
            self._thresholds_distributed_evenly = True
        epsilon = backend.epsilon()
        self._thresholds = np.array([0.0 - epsilon, *inner, 1.0 + epsilon])
        self.multi_label = multi_label
        self.num_labels = num_labels
        self.label_weights = None if label_weights is None else _numpy(label_weights)
        self._from_logits = from_logits
        self._built = False
        if multi_label and num_labels:
            self._build(num_labels)
        elif not multi_label:
            self._build(None)

    @property
    def thresholds(self):
        """The thresholds, the two ends included."""
        return list(self._thresholds)

    def _build(self, num_labels):
        shape = (self.num_thresholds,) if num_labels is None else (self.num_thresholds, num_labels)
        for key in metrics_utils.CONFUSION_KEYS:
            setattr(self, key, self.add_variable(shape, "zeros", name=key))
        self._num_labels = num_labels
        self._built = True

    @computed_on_host
    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds the batch's counts (``sample_weight`` weighs each prediction)."""
        y_pred = _numpy(y_pred)
        if not self._built:
            self._build(y_pred.shape[-1] if y_pred.ndim > 1 else 1)
        if self._from_logits:
            y_pred = 1.0 / (1.0 + np.exp(-y_pred))
        metrics_utils.update_confusion_matrix_variables(
            {key: getattr(self, key) for key in metrics_utils.CONFUSION_KEYS},
            y_true,
            y_pred,
            list(self._thresholds),
            sample_weight=sample_weight,
            multi_label=self.multi_label,
            label_weights=None if self.multi_label else self.label_weights,
            thresholds_distributed_evenly=self._thresholds_distributed_evenly,
        )

    def _average(self, increments):
        """The area: summed over thresholds, and per label averaged when multi-label."""
        if not self.multi_label:
            return increments.sum()
        by_label = increments.sum(axis=0)
        if self.label_weights is None:
            return by_label.mean()
        return divide_no_nan((by_label * self.label_weights).sum(), self.label_weights.sum())

    def interpolate_pr_auc(self):
        """The PR area with precision interpolated between thresholds as in Davis & Goadrich
        (2006): within a step, TP and TP + FP vary linearly, which integrates to a log."""
        tp, fp, fn = (
            _numpy(getattr(self, k))
            for k in ("true_positives", "false_positives", "false_negatives")
        )
        dtp = tp[:-1] - tp[1:]
        positives = tp + fp
        dp = positives[:-1] - positives[1:]
        slope = divide_no_nan(dtp, np.maximum(dp, 0))
        intercept = tp[1:] - slope * positives[1:]
        both = (positives[:-1] > 0) & (positives[1:] > 0)
        ratio = np.where(both, divide_no_nan(positives[:-1], np.maximum(positives[1:], 0)), 1.0)
        increments = divide_no_nan(
            slope * (dtp + intercept * np.log(ratio)), np.maximum(tp[1:] + fn[1:], 0)
        )
        return ft.constant(self._average(increments), dtype=self.dtype)

    @computed_on_host
    def result(self):
        if not self._built:
            return ft.constant(0.0, dtype=self.dtype)
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self.interpolate_pr_auc()
        tp, fp, tn, fn = (_numpy(getattr(self, k)) for k in metrics_utils.CONFUSION_KEYS)
        recall = divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = divide_no_nan(fp, fp + tn), recall
        elif self.curve == "PR":
            x, y = recall, divide_no_nan(tp, tp + fp)
        else:
            # Precision/recall gain (Flach & Kull 2015); no true positives gives gains 0 and 1,
            # a negative recall gain is clipped to 0, as in Keras.
            scale = divide_no_nan(tp + fn, tn + fp)
            x = np.where(tp == 0, 0.0, 1.0 - scale * divide_no_nan(fn, tp))
            y = np.where(tp == 0, 1.0, 1.0 - scale * divide_no_nan(fp, tp))
            x = np.maximum(x, 0.0)
        if self.summation_method == "interpolation":
            heights = (y[:-1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = np.minimum(y[:-1], y[1:])
        else:
            heights = np.maximum(y[:-1], y[1:])
        return ft.constant(self._average((x[:-1] - x[1:]) * heights), dtype=self.dtype)

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        config = {
            **super().get_config(),
            "num_thresholds": self.num_thresholds,
            "curve": self.curve,
            "summation_method": self.summation_method,
            "multi_label": self.multi_label,
            "num_labels": self.num_labels,
            "label_weights": None if self.label_weights is None else self.label_weights.tolist(),
            "from_logits": self._from_logits,
        }
        if self._init_from_thresholds:
            # Generated thresholds are not saved: num_thresholds rebuilds them.
            config["thresholds"] = self.thresholds[1:-1]
        return config
