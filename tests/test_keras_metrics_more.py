"""ft.keras.metrics' IoU, F-score, R², correlation, top-k and wrapper metrics against numpy
references of Keras 3's definitions and values TF 2.21 computed (written in as constants)."""

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras import losses, metrics

RNG = np.random.default_rng(3)
Y = np.array([[1, 0, 1], [0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 0, 0]], np.float32)
P = np.array(
    [[0.9, 0.2, 0.6], [0.3, 0.5, 0.8], [0.7, 0.65, 0.1], [0.4, 0.55, 0.35], [0.2, 0.1, 0.0]],
    np.float32,
)
W = np.array([1.0, 0.5, 2.0, 1.0, 0.25], np.float32)


def run(metric):
    metric.update_state(Y[:3], P[:3])
    metric.update_state(Y[3:], P[3:], sample_weight=W[3:])
    return np.asarray(metric.result().numpy())


# ------------------------------------------------------------------------- IoU


def numpy_iou(labels, preds, weights, num_classes, targets):
    matrix = np.zeros((num_classes, num_classes))
    np.add.at(matrix, (labels, preds), weights)
    tp = np.diag(matrix)
    denominator = matrix.sum(0) + matrix.sum(1) - tp
    ious = [tp[c] / denominator[c] for c in targets if denominator[c] > 0]
    return np.mean(ious)


def test_iou_and_mean_iou():
    labels = np.array([0, 1, 2, 1, 3, 2, 2, 0])
    preds = np.array([0, 1, 1, 1, 2, 2, 0, 0])
    weights = np.array([1, 1, 1, 1, 1, 2, 3, 1], np.float32)
    m = metrics.IoU(num_classes=4, target_class_ids=[0, 2])
    m.update_state(labels[:5], preds[:5])
    m.update_state(labels[5:], preds[5:], sample_weight=weights[5:])
    assert m.name == "io_u" and m.dtype == ft.int64
    expected = numpy_iou(labels, preds, weights, 4, [0, 2])
    assert float(m.result()) == pytest.approx(expected, abs=1e-6)
    mean = metrics.MeanIoU(num_classes=4)
    mean.update_state(labels, preds)
    assert float(mean.result()) == pytest.approx(
        numpy_iou(labels, preds, np.ones(8), 4, range(4)), abs=1e-6
    )
    # ignore_class drops the entries labelled with it; out-of-range classes are skipped
    ignored = metrics.IoU(num_classes=4, target_class_ids=[1], ignore_class=2)
    ignored.update_state(np.append(labels, 9), np.append(preds, 0))
    keep = labels != 2
    assert float(ignored.result()) == pytest.approx(
        numpy_iou(labels[keep], preds[keep], np.ones(keep.sum()), 4, [1]), abs=1e-6
    )


def test_iou_truncates_fractional_weights_as_keras_counts_in_integers():
    m = metrics.IoU(num_classes=2, target_class_ids=[0, 1])
    m.update_state([0, 0, 1, 1], [0, 1, 0, 1], sample_weight=[0.3, 0.9, 1.7, 1.0])
    # weights 0, 0, 1, 1: class 0 has no true positive and union 1, class 1 IoU 1/2
    assert float(m.result()) == pytest.approx(0.25, abs=1e-6)
    floating = metrics.IoU(num_classes=2, target_class_ids=[0], dtype="float32")
    floating.update_state([0, 0, 1, 1], [0, 1, 0, 1], sample_weight=[0.3, 0.3, 0.3, 0.1])
    assert float(floating.result()) == pytest.approx(0.3 / 0.9, abs=1e-6)
    with pytest.raises(ValueError, match="out of range"):
        metrics.IoU(num_classes=2, target_class_ids=[2])


def test_binary_and_one_hot_iou():
    y = np.array([0, 1, 1, 0, 1])
    p = np.array([0.2, 0.3, 0.9, 0.6, 0.5], np.float32)
    m = metrics.BinaryIoU(target_class_ids=[0, 1], threshold=0.5)
    m.update_state(y, p)
    assert m.name == "binary_io_u"
    assert float(m.result()) == pytest.approx(
        numpy_iou(y, (p >= 0.5).astype(int), np.ones(5), 2, [0, 1]), abs=1e-6
    )
    one_hot = np.eye(3)[[0, 2, 1, 1]]
    scores = RNG.random((4, 3))
    oh = metrics.OneHotIoU(num_classes=3, target_class_ids=[1, 2])
    oh.update_state(one_hot, scores)
    expected = numpy_iou(one_hot.argmax(1), scores.argmax(1), np.ones(4), 3, [1, 2])
    assert float(oh.result()) == pytest.approx(expected, abs=1e-6)
    ohm = metrics.OneHotMeanIoU(num_classes=3)
    ohm.update_state(one_hot, scores)
    expected = numpy_iou(one_hot.argmax(1), scores.argmax(1), np.ones(4), 3, range(3))
    assert float(ohm.result()) == pytest.approx(expected, abs=1e-6)
    assert "sparse_y_true" not in ohm.get_config()


# --------------------------------------------------------------------- F-scores

# Computed with TF 2.21: (F1Score(average, threshold), FBetaScore(average, 0.5, threshold)).
F_TF = {
    (None, None): ([1.0, 0.666666567, 0.666666567], [0.99999994, 0.83333313, 0.83333313]),
    (None, 0.5): ([0.94117647, 1.0, 1.0], [0.97560972, 0.99999994, 0.99999994]),
    ("micro", None): (0.80952370, 0.91397834),
    ("micro", 0.5): (0.97959173, 0.99173540),
    ("macro", None): (0.77777767, 0.88888866),
    ("macro", 0.5): (0.98039216, 0.99186987),
    ("weighted", None): (0.78666663, 0.89333314),
    ("weighted", 0.5): (0.97882354, 0.99121940),
}


@pytest.mark.parametrize("average, threshold", sorted(F_TF, key=str))
def test_f_scores_match_tf(average, threshold):
    f1, f_half = F_TF[(average, threshold)]
    assert run(metrics.F1Score(average, threshold)) == pytest.approx(f1, abs=1e-6)
    assert run(metrics.FBetaScore(average, 0.5, threshold)) == pytest.approx(f_half, abs=1e-6)


def test_f1_is_the_harmonic_mean_of_precision_and_recall():
    m = metrics.F1Score(average="micro", threshold=0.5)
    m.update_state(Y, P)
    predicted = P > 0.5
    tp = (predicted & (Y == 1)).sum()
    precision, recall = tp / predicted.sum(), tp / Y.sum()
    expected = 2 * precision * recall / (precision + recall)
    assert float(m.result()) == pytest.approx(expected, abs=1e-5)
    with pytest.raises(ValueError, match="beta"):
        metrics.FBetaScore(beta=1)
    with pytest.raises(ValueError, match="average"):
        metrics.F1Score(average="samples")
    with pytest.raises(ValueError, match="2D"):
        metrics.F1Score().update_state([1, 0], [0.2, 0.3])
    assert "beta" not in metrics.F1Score().get_config()


# --------------------------------------------------------------------------- R²


def weighted_r2(y, p, w):
    mean = (w * y).sum(0) / w.sum(0)
    total = (w * (y - mean) ** 2).sum(0)
    residual = (w * (y - p) ** 2).sum(0)
    return 1 - residual / total, total


def test_r2_score_aggregations_and_adjustment():
    y = RNG.normal(size=(12, 3))
    p = y + RNG.normal(size=(12, 3)) * 0.4
    w = RNG.random(12)
    raw, total = weighted_r2(y, p, np.broadcast_to(w[:, None], y.shape))

    def fed(**kwargs):
        m = metrics.R2Score(**kwargs)
        m.update_state(y[:7], p[:7], sample_weight=w[:7])
        m.update_state(y[7:], p[7:], sample_weight=w[7:])
        return m.result().numpy()

    assert fed() == pytest.approx(raw.mean(), abs=1e-5)
    assert fed(class_aggregation=None) == pytest.approx(raw, abs=1e-5)
    weighted = (total * raw).sum() / total.sum()
    assert fed(class_aggregation="variance_weighted_average") == pytest.approx(weighted, abs=1e-5)
    n = y.size  # Keras counts every element as a sample
    adjusted = 1 - (1 - raw.mean()) * (n - 1) / (n - 2 - 1)
    assert fed(num_regressors=2) == pytest.approx(adjusted, abs=1e-5)
    with pytest.warns(UserWarning, match="More independent predictors"):
        fed(num_regressors=100)
    with pytest.raises(ValueError, match="2D"):
        metrics.R2Score().update_state([1.0, 2.0], [1.0, 2.5])
    with pytest.raises(ValueError, match="class_aggregation"):
        metrics.R2Score(class_aggregation="median")


# ------------------------------------------------------------------ correlations


def test_pearson_and_concordance_correlation():
    pearson = [np.corrcoef(a, b)[0, 1] for a, b in zip(Y, P, strict=True)]
    assert metrics.pearson_correlation(Y, P).numpy() == pytest.approx(pearson, abs=1e-5)
    # Keras 3's concordance centres y_true on mean(y_pred) in the covariance term.
    mt, mp = Y.mean(1, keepdims=True), P.mean(1, keepdims=True)
    covariance = ((Y - mp) * (P - mp)).mean(1)
    norm = Y.var(1) + P.var(1) + (mt - mp)[:, 0] ** 2
    concordance = 2 * covariance / (norm + 1e-7)
    assert metrics.concordance_correlation(Y, P).numpy() == pytest.approx(concordance, abs=1e-5)
    # the running means, constants from TF 2.21
    assert float(run(metrics.PearsonCorrelation())) == pytest.approx(0.94265074, abs=1e-5)
    assert float(run(metrics.ConcordanceCorrelation())) == pytest.approx(0.59295028, abs=1e-5)


# ------------------------------------------------------------------------ top-k


def test_top_k_accuracies():
    labels = np.array([0, 3, 1, 2, 2, 0])
    scores = RNG.random((6, 4)).astype(np.float32)
    rank = (scores > scores[np.arange(6), labels][:, None]).sum(1)  # classes scored higher
    for k in (1, 2, 3):
        hits = (rank < k).astype(np.float32)
        assert metrics.sparse_top_k_categorical_accuracy(labels, scores, k).numpy().tolist() == (
            hits.tolist()
        )
        one_hot = np.eye(4)[labels]
        assert metrics.top_k_categorical_accuracy(one_hot, scores, k).numpy().tolist() == (
            hits.tolist()
        )
        m = metrics.SparseTopKCategoricalAccuracy(k=k)
        m.update_state(labels[:, None], scores)
        assert float(m.result()) == pytest.approx(hits.mean())
    # ties at the boundary count as in, as tf.math.in_top_k does
    tied = np.array([[0.2, 0.2, 0.2, 0.4]], np.float32)
    assert metrics.sparse_top_k_categorical_accuracy([0], tied, k=2).numpy().tolist() == [1.0]
    ids = np.argsort(-scores, axis=1)
    sorted_ids = metrics.sparse_top_k_categorical_accuracy(labels, ids, 2, from_sorted_ids=True)
    assert sorted_ids.numpy().tolist() == (rank < 2).astype(np.float32).tolist()
    assert metrics.TopKCategoricalAccuracy().name == "top_k_categorical_accuracy"


# ------------------------------------------------------------- wrapper metrics


@pytest.mark.parametrize(
    "cls, fn, name",
    [
        (metrics.KLDivergence, losses.kl_divergence, "kl_divergence"),
        (metrics.Poisson, losses.poisson, "poisson"),
        (metrics.Hinge, losses.hinge, "hinge"),
        (metrics.SquaredHinge, losses.squared_hinge, "squared_hinge"),
        (metrics.CategoricalHinge, losses.categorical_hinge, "categorical_hinge"),
        (metrics.LogCoshError, losses.log_cosh, "logcosh"),
        (metrics.MeanAbsolutePercentageError, losses.mape, "mean_absolute_percentage_error"),
        (metrics.MeanSquaredLogarithmicError, losses.msle, "mean_squared_logarithmic_error"),
    ],
)
def test_running_means_of_loss_functions(cls, fn, name):
    m = cls()
    assert m.name == name
    values = fn(Y, P).numpy()
    expected = (values[:3].sum() + (values[3:] * W[3:]).sum()) / (3 + W[3:].sum())
    assert float(run(m)) == pytest.approx(expected, rel=1e-5)


def test_cosine_similarity_metric_is_positive_for_aligned_vectors():
    m = metrics.CosineSimilarity()
    m.update_state([[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [1.0, 1.0]])
    assert float(m.result()) == pytest.approx((1.0 + np.sqrt(0.5)) / 2, abs=1e-6)


def test_function_exports_and_lookup():
    assert metrics.kld is metrics.kullback_leibler_divergence is losses.kl_divergence
    assert metrics.logcosh is losses.log_cosh and metrics.MSLE is losses.msle
    assert metrics.binary_focal_crossentropy is losses.binary_focal_crossentropy
    for name in ("AUC", "Precision", "F1Score", "R2Score", "MeanIoU", "top_k_categorical_accuracy"):
        assert name in metrics.ALL_OBJECTS_DICT
    auc = metrics.get("AUC")
    assert isinstance(auc, metrics.AUC)
    restored = metrics.deserialize(metrics.serialize(metrics.Precision(thresholds=0.3)))
    assert isinstance(restored, metrics.Precision) and restored.thresholds == [0.3]
    wrapped = metrics.get("top_k_categorical_accuracy")
    wrapped.update_state(np.eye(3)[[0, 1]], [[0.5, 0.3, 0.2], [0.5, 0.3, 0.2]])
    assert float(wrapped.result()) == 1.0  # k=5 covers all three classes
