"""ft.keras.metrics against numpy references of Keras 3's accumulation rules."""

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras import losses, metrics

RNG = np.random.default_rng(0)
PROBS = RNG.dirichlet(np.ones(4), size=6)
LABELS = np.array([0, 3, 1, 1, 2, 0])
ONE_HOT = np.eye(4)[LABELS]
HITS = (PROBS.argmax(-1) == LABELS).astype(np.float64)


def batches(*arrays, size=4):
    """The arrays cut into batches of ``size`` rows (the last one shorter)."""
    n = len(arrays[0])
    return [tuple(a[i : i + size] for a in arrays) for i in range(0, n, size)]


# ------------------------------------------------------------------ Mean, Sum


def test_mean_accumulates_over_batches():
    m = metrics.Mean(name="loss")
    assert m.name == "loss" and m.dtype == ft.float32
    m.update_state(ft.constant([1.0, 2.0, 3.0]))
    m.update_state(5.0)
    m.update_state(np.array([[1.0, 3.0], [5.0, 7.0]]))  # per-sample means 2 and 6
    assert float(m.result()) == pytest.approx((1 + 2 + 3 + 5 + 2 + 6) / 6)
    assert [v.name.split("/")[-1] for v in m.variables] == ["total:0", "count:0"]
    m.reset_state()
    assert float(m.result()) == 0.0
    assert float(m(4.0)) == 4.0


def test_mean_with_sample_weight():
    values = np.array([1.0, 2.0, 3.0, 4.0])
    weights = np.array([0.0, 1.0, 0.5, 2.0])
    m = metrics.Mean()
    m.update_state(values, sample_weight=weights)
    assert float(m.result()) == pytest.approx((values * weights).sum() / weights.sum())
    # a scalar weight weights the batch's mean (Keras reduces the values to the weight's rank)
    m.reset_state()
    m.update_state(values, sample_weight=2.0)
    m.update_state(np.array([10.0]), sample_weight=1.0)
    assert float(m.result()) == pytest.approx((2 * values.mean() + 10.0) / 3)
    # weights of rank 2 against per-element values
    m.reset_state()
    grid = np.arange(6.0).reshape(3, 2)
    w = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    m.update_state(grid, sample_weight=w)
    assert float(m.result()) == pytest.approx((grid * w).mean(1).sum() / w.mean(1).sum())


def test_sum():
    s = metrics.Sum()
    s.update_state([1.0, 2.0])
    s.update_state(np.array([[1.0, 1.0]]), sample_weight=[3.0])
    assert float(s.result()) == pytest.approx(3.0 + 6.0)
    assert s.name == "sum"


# ----------------------------------------------------------------- accuracies


def test_sparse_categorical_accuracy_over_batches():
    acc = metrics.SparseCategoricalAccuracy()
    assert acc.name == "sparse_categorical_accuracy"
    for labels, probs in batches(LABELS, PROBS):
        acc.update_state(labels, probs)
    assert float(acc.result()) == pytest.approx(HITS.mean())
    acc.reset_state()
    acc.update_state(LABELS[:, None].astype(np.float32), PROBS)  # (n, 1) float labels
    assert float(acc.result()) == pytest.approx(HITS.mean())


def test_categorical_accuracy_with_weights():
    acc = metrics.CategoricalAccuracy()
    weights = RNG.uniform(size=6)
    for one_hot, probs, w in batches(ONE_HOT, PROBS, weights):
        acc.update_state(one_hot, probs, sample_weight=w)
    assert float(acc.result()) == pytest.approx((HITS * weights).sum() / weights.sum(), rel=1e-6)


def test_binary_accuracy_and_threshold():
    y_true = np.array([[1.0], [0.0], [1.0], [0.0]])
    y_pred = np.array([[0.7], [0.6], [0.4], [0.1]])
    acc = metrics.BinaryAccuracy()
    assert float(acc(y_true, y_pred)) == pytest.approx(0.5)
    acc = metrics.BinaryAccuracy(threshold=0.65)
    assert float(acc(y_true, y_pred)) == pytest.approx(0.75)
    # several outputs per sample: the mean over the last axis, then over samples
    y_true = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    y_pred = np.array([[0.9, 0.2, 0.3], [0.8, 0.1, 0.6]])
    assert float(metrics.BinaryAccuracy()(y_true, y_pred)) == pytest.approx((2 / 3 + 2 / 3) / 2)


def test_accuracy_compares_values():
    acc = metrics.Accuracy()
    assert float(acc([[1], [2], [3], [4]], [[0], [2], [3], [4]])) == pytest.approx(0.75)


def test_accuracy_functions_per_sample():
    np.testing.assert_array_equal(metrics.sparse_categorical_accuracy(LABELS, PROBS).numpy(), HITS)
    np.testing.assert_array_equal(metrics.categorical_accuracy(ONE_HOT, PROBS).numpy(), HITS)
    out = metrics.binary_accuracy(np.array([1.0, 0.0]), np.array([0.9, 0.9]))
    assert float(out) == 0.5  # rank 1: one sample of two outputs


# -------------------------------------------------------------- error metrics


def test_regression_metrics():
    y_true = RNG.normal(size=(6, 3))
    y_pred = y_true + RNG.normal(size=(6, 3))
    squared = ((y_true - y_pred) ** 2).mean(-1)
    absolute = np.abs(y_true - y_pred).mean(-1)
    cases = [
        (metrics.MeanSquaredError(), squared.mean(), "mean_squared_error"),
        (metrics.MeanAbsoluteError(), absolute.mean(), "mean_absolute_error"),
        (metrics.RootMeanSquaredError(), np.sqrt(squared.mean()), "root_mean_squared_error"),
    ]
    for metric, expected, name in cases:
        for t, p in batches(y_true, y_pred):
            metric.update_state(t, p)
        assert metric.name == name
        assert float(metric.result()) == pytest.approx(expected, rel=1e-6), name


def test_crossentropy_metrics():
    ce = metrics.CategoricalCrossentropy()
    sce = metrics.SparseCategoricalCrossentropy()
    for one_hot, labels, probs in batches(ONE_HOT, LABELS, PROBS):
        ce.update_state(one_hot, probs)
        sce.update_state(labels, probs)
    expected = -np.log(PROBS[np.arange(6), LABELS]).mean()
    assert float(ce.result()) == pytest.approx(expected, rel=1e-5)
    assert float(sce.result()) == pytest.approx(expected, rel=1e-5)
    bce = metrics.BinaryCrossentropy(from_logits=True)
    logits = RNG.normal(size=(6, 1))
    targets = (RNG.uniform(size=(6, 1)) > 0.5).astype(np.float64)
    p = 1 / (1 + np.exp(-logits))
    expected = -(targets * np.log(p) + (1 - targets) * np.log(1 - p)).mean()
    assert float(bce(targets, logits)) == pytest.approx(expected, rel=1e-5)


def test_mean_metric_wrapper_with_a_custom_function():
    def max_error(y_true, y_pred):
        return ft.reduce_max(ft.abs(ft.convert_to_tensor(y_true) - y_pred), axis=-1)

    m = metrics.MeanMetricWrapper(max_error)
    assert m.name == "max_error"
    y_true = np.array([[0.0, 1.0], [2.0, 2.0]])
    y_pred = np.array([[0.5, 1.0], [0.0, 2.5]])
    assert float(m(y_true, y_pred)) == pytest.approx((0.5 + 2.0) / 2)


def test_custom_metric_subclass():
    class Count(metrics.Metric):
        def __init__(self, name="count", dtype=None):
            super().__init__(dtype=dtype, name=name)
            self.n = self.add_variable((), initializer="zeros", name="n")

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.n.assign_add(ft.constant(float(len(y_true))))

        def result(self):
            return self.n.read_value()

    c = Count()
    c.update_state([1, 2], [1, 2])
    assert float(c([3], [3])) == 3.0
    c.reset_state()
    assert float(c.result()) == 0.0


# ------------------------------------------------------------------------ get


@pytest.mark.parametrize(
    "y_true, y_pred, loss, expected",
    [
        (ONE_HOT, PROBS, None, metrics.categorical_accuracy),
        (LABELS, PROBS, None, metrics.sparse_categorical_accuracy),
        (LABELS[:, None], PROBS, None, metrics.sparse_categorical_accuracy),
        (ONE_HOT[:, :1], PROBS[:, :1], None, metrics.binary_accuracy),
        (LABELS, PROBS, "sparse_categorical_crossentropy", metrics.sparse_categorical_accuracy),
        (ONE_HOT, PROBS, "categorical_crossentropy", metrics.categorical_accuracy),
        (ONE_HOT, PROBS, losses.BinaryCrossentropy(), metrics.binary_accuracy),
        (ONE_HOT, PROBS, losses.binary_crossentropy, metrics.binary_accuracy),
        (
            LABELS,
            PROBS,
            losses.SparseCategoricalCrossentropy(),
            metrics.sparse_categorical_accuracy,
        ),
        (LABELS[:4].astype(float), PROBS[:4, 0], "binary_crossentropy", metrics.binary_accuracy),
        (LABELS[:4].astype(float), PROBS[:4, 0], None, metrics.binary_accuracy),
    ],
)
def test_get_accuracy_resolves_on_first_update(y_true, y_pred, loss, expected):
    for name in ("accuracy", "acc", "Accuracy"):
        metric = metrics.get(name, loss=loss)
        assert metric.name == name
        metric.update_state(y_true, y_pred)
        assert metric._fn is expected
        values = expected(y_true, y_pred).numpy()
        assert float(metric.result()) == pytest.approx(values.mean(), rel=1e-6)


def test_get_by_name_and_alias():
    for name, cls in [
        ("mse", metrics.MeanMetricWrapper),
        ("mae", metrics.MeanMetricWrapper),
        ("categorical_accuracy", metrics.MeanMetricWrapper),
        ("CategoricalAccuracy", metrics.CategoricalAccuracy),
        ("SparseCategoricalAccuracy", metrics.SparseCategoricalAccuracy),
    ]:
        metric = metrics.get(name)
        assert isinstance(metric, cls) and metric.name == name
    mse = metrics.get("mse")
    mse.update_state(np.array([[1.0, 2.0]]), np.array([[0.0, 0.0]]))
    assert float(mse.result()) == pytest.approx(2.5)
    acc = metrics.get("categorical_accuracy")
    acc.update_state(ONE_HOT, PROBS)
    assert float(acc.result()) == pytest.approx(HITS.mean())


def test_get_instances_classes_callables_and_errors():
    metric = metrics.BinaryAccuracy(threshold=0.3)
    assert metrics.get(metric) is metric
    assert isinstance(metrics.get(metrics.MeanSquaredError), metrics.MeanSquaredError)
    wrapped = metrics.get(losses.mean_absolute_error)
    assert isinstance(wrapped, metrics.MeanMetricWrapper)
    assert wrapped.name == "mean_absolute_error"
    assert metrics.get(None) is None
    again = metrics.get(metrics.serialize(metric))
    assert isinstance(again, metrics.BinaryAccuracy) and again.threshold == 0.3
    wrapper = metrics.deserialize(metrics.serialize(metrics.MeanMetricWrapper(metrics.accuracy)))
    assert wrapper._fn is metrics.accuracy
    with pytest.raises(ValueError, match="could not interpret metric identifier"):
        metrics.get("top_7_accuracy")
    with pytest.raises(ValueError, match="could not interpret"):
        metrics.get(3.5)
