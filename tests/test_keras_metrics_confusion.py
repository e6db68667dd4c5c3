"""ft.keras.metrics' threshold metrics (confusion counts, precision/recall, the *At* metrics,
AUC) against numpy references of Keras 3's rules and against values TF 2.21 computed for the
data below (written in as constants, so the tests run without TensorFlow)."""

import numpy as np
import pytest

from ferrotape.keras import metrics

# Two batches: the first three rows unweighted, the last two with sample weights.
Y = np.array([[1, 0, 1], [0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 0, 0]], np.float32)
P = np.array(
    [[0.9, 0.2, 0.6], [0.3, 0.5, 0.8], [0.7, 0.65, 0.1], [0.4, 0.55, 0.35], [0.2, 0.1, 0.0]],
    np.float32,
)
W = np.array([1.0, 0.5, 2.0, 1.0, 0.25], np.float32)
ROW_WEIGHTS = np.array([1.0, 1.0, 1.0, 1.0, 0.25])[:, None] * np.ones((1, 3))


def run(metric, weighted=True):
    metric.update_state(Y[:3], P[:3])
    metric.update_state(Y[3:], P[3:], sample_weight=W[3:] if weighted else None)
    return np.asarray(metric.result().numpy())


def counts(threshold, y=Y, p=P, w=ROW_WEIGHTS):
    predicted, actual = p > threshold, y != 0
    return {
        "tp": (w * (predicted & actual)).sum(),
        "fp": (w * (predicted & ~actual)).sum(),
        "tn": (w * (~predicted & ~actual)).sum(),
        "fn": (w * (~predicted & actual)).sum(),
    }


@pytest.mark.parametrize(
    "cls, key",
    [
        (metrics.TruePositives, "tp"),
        (metrics.FalsePositives, "fp"),
        (metrics.TrueNegatives, "tn"),
        (metrics.FalseNegatives, "fn"),
    ],
)
def test_confusion_counts_at_one_and_several_thresholds(cls, key):
    assert run(cls()) == pytest.approx(counts(0.5)[key])
    several = run(cls(thresholds=[0.2, 0.5, 0.9]))
    assert several.shape == (3,)
    assert several == pytest.approx([counts(t)[key] for t in (0.2, 0.5, 0.9)])
    m = cls()
    assert m.name == {"tp": "true_positives", "fp": "false_positives"}.get(
        key, {"tn": "true_negatives", "fn": "false_negatives"}.get(key)
    )
    m.update_state([1, 0], [0.7, 0.6])
    m.reset_state()
    assert float(m.result()) == 0.0


def test_precision_and_recall():
    c = counts(0.5)
    assert float(run(metrics.Precision())) == pytest.approx(c["tp"] / (c["tp"] + c["fp"]))
    assert float(run(metrics.Recall())) == pytest.approx(c["tp"] / (c["tp"] + c["fn"]))
    both = [counts(t) for t in (0.3, 0.7)]
    precisions = run(metrics.Precision(thresholds=[0.3, 0.7]))
    assert precisions == pytest.approx([c["tp"] / (c["tp"] + c["fp"]) for c in both])
    # class_id: only that column; top_k: only each row's k largest may be positive
    col = counts(0.5, Y[:, 1:2], P[:, 1:2], ROW_WEIGHTS[:, 1:2])
    assert float(run(metrics.Recall(class_id=1))) == pytest.approx(
        col["tp"] / (col["tp"] + col["fn"])
    )
    top1 = P == P.max(axis=1, keepdims=True)
    tp = (ROW_WEIGHTS * (top1 & (Y != 0))).sum()
    fp = (ROW_WEIGHTS * (top1 & (Y == 0))).sum()
    assert float(run(metrics.Precision(top_k=1))) == pytest.approx(tp / (tp + fp))
    # nothing predicted positive: 0, not NaN
    m = metrics.Precision()
    m.update_state([1, 0], [0.1, 0.2])
    assert float(m.result()) == 0.0


def test_thresholds_outside_0_1_and_class_id_on_a_vector_are_rejected():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        metrics.Precision(thresholds=1.5)
    with pytest.raises(ValueError, match="class_id"):
        metrics.Recall(class_id=0).update_state([1, 0], [0.2, 0.9])
    with pytest.raises(ValueError, match="same shape"):
        metrics.TruePositives().update_state([[1, 0]], [[0.2, 0.9, 0.1]])


# Computed with TF 2.21 (tf.keras.metrics.AUC(**kwargs)) over the two batches above.
AUC_TF = {
    "roc": ({}, 0.9723076820373535),
    "pr": ({"curve": "PR"}, 0.9830762147903442),
    "pr_minoring": ({"curve": "PR", "summation_method": "minoring"}, 0.8222222328186035),
    "roc_majoring": ({"summation_method": "majoring"}, 0.9753845930099487),
    "prgain": ({"curve": "PRGAIN"}, 0.9717496633529663),
    "multi_label": ({"multi_label": True}, 0.9629629254341125),
    "label_weights": ({"multi_label": True, "label_weights": [1.0, 2.0, 0.5]}, 0.968253970),
    "five": ({"num_thresholds": 5}, 0.9676922559738159),
    "thresholds": ({"thresholds": [0.3, 0.6]}, 0.8969230651855469),
}


@pytest.mark.parametrize("case", sorted(AUC_TF))
def test_auc_matches_tf(case):
    kwargs, expected = AUC_TF[case]
    assert float(run(metrics.AUC(**kwargs))) == pytest.approx(expected, abs=1e-6)


def test_auc_roc_is_the_trapezoid_rule_over_its_thresholds():
    # Unweighted, pooled: the ROC points at the 200 thresholds, integrated by trapezoids.
    m = metrics.AUC()
    m.update_state(Y, P)
    thresholds = np.array(m.thresholds)
    assert thresholds[0] == pytest.approx(-1e-7) and thresholds[-1] == pytest.approx(1 + 1e-7)
    ones = np.ones_like(P)
    c = [counts(t, w=ones) for t in thresholds]
    tpr = np.array([k["tp"] / (k["tp"] + k["fn"]) for k in c])
    fpr = np.array([k["fp"] / (k["fp"] + k["tn"]) for k in c])
    expected = ((fpr[:-1] - fpr[1:]) * (tpr[:-1] + tpr[1:]) / 2).sum()
    assert float(m.result()) == pytest.approx(expected, abs=1e-6)
    # a perfect ranking gives 1, an inverted one 0
    perfect = metrics.AUC()
    perfect.update_state([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9])
    assert float(perfect.result()) == pytest.approx(1.0)
    inverted = metrics.AUC()
    inverted.update_state([1, 1, 0, 0], [0.1, 0.2, 0.8, 0.9])
    assert float(inverted.result()) == pytest.approx(0.0, abs=1e-6)


def test_auc_from_logits_config_and_errors():
    logits = np.log(P / (1 - P + 1e-12) + 1e-12)
    a, b = metrics.AUC(), metrics.AUC(from_logits=True)
    a.update_state(Y, P)
    b.update_state(Y, logits)
    assert float(b.result()) == pytest.approx(float(a.result()), abs=1e-6)
    config = metrics.AUC(num_thresholds=50, curve="pr").get_config()
    assert config["curve"] == "PR" and "thresholds" not in config
    assert metrics.AUC.from_config(config).num_thresholds == 50
    assert metrics.AUC(thresholds=[0.6, 0.2]).get_config()["thresholds"] == [0.2, 0.6]
    assert metrics.AUC().name == "auc"
    with pytest.raises(ValueError, match="curve"):
        metrics.AUC(curve="XY")
    with pytest.raises(ValueError, match="num_thresholds"):
        metrics.AUC(num_thresholds=1)


# Computed with TF 2.21 over the two batches above.
AT_TF = {
    "SensitivityAtSpecificity": (0.8, 0.9599999785423279),
    "SpecificityAtSensitivity": (0.8, 1.0),
    "PrecisionAtRecall": (0.5, 1.0),
    "RecallAtPrecision": (0.75, 0.9599999785423279),
}


@pytest.mark.parametrize("name", sorted(AT_TF))
def test_rate_at_rate_metrics_match_tf(name):
    value, expected = AT_TF[name]
    assert float(run(getattr(metrics, name)(value))) == pytest.approx(expected, abs=1e-6)


def test_sensitivity_at_specificity_is_the_best_feasible_threshold():
    # Unweighted, 11 thresholds 0, 0.1, ..., 1: the best recall where specificity >= 0.5.
    m = metrics.SensitivityAtSpecificity(0.5, num_thresholds=11)
    m.update_state(Y, P)
    ones = np.ones_like(P)
    best = 0.0
    for t in np.linspace(0, 1, 11):
        c = counts(t, w=ones)
        if c["tn"] / (c["tn"] + c["fp"]) >= 0.5:
            best = max(best, c["tp"] / (c["tp"] + c["fn"]))
    assert float(m.result()) == pytest.approx(best)
    with pytest.raises(ValueError, match="specificity"):
        metrics.SensitivityAtSpecificity(1.5)
    with pytest.raises(ValueError, match="num_thresholds"):
        metrics.RecallAtPrecision(0.5, num_thresholds=0)
    assert metrics.PrecisionAtRecall(0.3).get_config()["recall"] == 0.3
