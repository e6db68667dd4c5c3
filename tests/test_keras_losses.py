"""ft.keras.losses against numpy references of Keras 3's formulas, and gradients against
finite differences."""

import math

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras import losses

EPS = 1e-7
RNG = np.random.default_rng(0)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


LOGITS = RNG.normal(size=(5, 4))
PROBS = softmax(LOGITS)
LABELS = np.array([0, 3, 1, 1, 2])
ONE_HOT = np.eye(4)[LABELS]
BINARY_TRUE = RNG.integers(0, 2, size=(5, 3)).astype(np.float64)
BINARY_LOGITS = RNG.normal(size=(5, 3))
REG_TRUE = RNG.normal(size=(5, 3))
REG_PRED = REG_TRUE + RNG.normal(scale=1.5, size=(5, 3))


# ------------------------------------------------------------ numpy references


def cce_ref(y_true, probs, label_smoothing=0.0):
    if label_smoothing:
        y_true = y_true * (1 - label_smoothing) + label_smoothing / y_true.shape[-1]
    p = np.clip(probs / probs.sum(-1, keepdims=True), EPS, 1 - EPS)
    return -(y_true * np.log(p)).sum(-1)


def bce_ref(y_true, probs, label_smoothing=0.0):
    if label_smoothing:
        y_true = y_true * (1 - label_smoothing) + 0.5 * label_smoothing
    p = np.clip(probs, EPS, 1 - EPS)
    return -(y_true * np.log(p) + (1 - y_true) * np.log(1 - p)).mean(-1)


def huber_ref(y_true, y_pred, delta=1.0):
    e = y_pred - y_true
    return np.where(np.abs(e) <= delta, 0.5 * e**2, delta * np.abs(e) - 0.5 * delta**2).mean(-1)


# ------------------------------------------------------------------- functions


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_categorical_crossentropy(dtype):
    out = losses.categorical_crossentropy(ONE_HOT.astype(dtype), PROBS.astype(dtype))
    assert out.shape == (5,) and out.dtype == ft.as_dtype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out.numpy(), cce_ref(ONE_HOT, PROBS), rtol=tol)


def test_categorical_crossentropy_renormalises_and_clips():
    unnormalised = np.array([[0.0, 2.0, 2.0], [1.0, 1.0, 0.0]])
    y_true = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    out = losses.categorical_crossentropy(y_true, unnormalised).numpy()
    np.testing.assert_allclose(out, [math.log(2.0), -math.log(EPS)], rtol=1e-6)


def test_categorical_crossentropy_from_logits_and_smoothing():
    out = losses.categorical_crossentropy(ONE_HOT, LOGITS, from_logits=True)
    np.testing.assert_allclose(out.numpy(), cce_ref(ONE_HOT, softmax(LOGITS)), rtol=1e-10)
    out = losses.categorical_crossentropy(ONE_HOT, PROBS, label_smoothing=0.2)
    np.testing.assert_allclose(out.numpy(), cce_ref(ONE_HOT, PROBS, 0.2), rtol=1e-10)
    out = losses.categorical_crossentropy(ONE_HOT, LOGITS, from_logits=True, label_smoothing=0.1)
    np.testing.assert_allclose(out.numpy(), cce_ref(ONE_HOT, softmax(LOGITS), 0.1), rtol=1e-10)


def test_categorical_crossentropy_axis():
    out = losses.categorical_crossentropy(ONE_HOT.T, PROBS.T, axis=0)
    np.testing.assert_allclose(out.numpy(), cce_ref(ONE_HOT, PROBS), rtol=1e-10)


def test_categorical_crossentropy_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="categorical_crossentropy.*same shape"):
        losses.categorical_crossentropy(np.eye(3), PROBS)
    with pytest.raises(ValueError, match="categorical_crossentropy.*axis"):
        losses.categorical_crossentropy(ONE_HOT, PROBS, axis=True)


@pytest.mark.parametrize("labels", [LABELS, LABELS[:, None], LABELS.astype(np.float32)])
def test_sparse_categorical_crossentropy(labels):
    out = losses.sparse_categorical_crossentropy(labels, PROBS)
    assert out.shape == (5,)
    np.testing.assert_allclose(out.numpy(), cce_ref(ONE_HOT, PROBS), rtol=1e-10)
    out = losses.sparse_categorical_crossentropy(labels, LOGITS, from_logits=True)
    np.testing.assert_allclose(out.numpy(), cce_ref(ONE_HOT, softmax(LOGITS)), rtol=1e-10)


def test_sparse_categorical_crossentropy_keras_example():
    out = losses.sparse_categorical_crossentropy([1, 2], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]])
    np.testing.assert_allclose(out.numpy(), [0.0513, 2.303], atol=1e-3)


def test_sparse_categorical_crossentropy_ignore_class():
    labels = np.array([0, -1, 1, -1, 2])
    out = losses.sparse_categorical_crossentropy(labels, PROBS, ignore_class=-1).numpy()
    expected = cce_ref(ONE_HOT, PROBS)
    expected[[1, 3]] = 0.0
    expected[[0, 2, 4]] = cce_ref(np.eye(4)[[0, 1, 2]], PROBS[[0, 2, 4]])
    np.testing.assert_allclose(out, expected, rtol=1e-10)
    loss = losses.SparseCategoricalCrossentropy(ignore_class=-1, dtype="float64")
    # the mean runs over the three valid entries only
    np.testing.assert_allclose(float(loss(labels, PROBS)), expected.sum() / 3, rtol=1e-6)


def test_sparse_categorical_crossentropy_bad_shapes():
    with pytest.raises(ValueError, match="sparse_categorical_crossentropy.*shape"):
        losses.sparse_categorical_crossentropy(LABELS[:3], PROBS)
    with pytest.raises(ValueError, match="axis=-1"):
        losses.sparse_categorical_crossentropy(LABELS, PROBS, axis=0)


def test_binary_crossentropy():
    probs = sigmoid(BINARY_LOGITS)
    out = losses.binary_crossentropy(BINARY_TRUE, probs)
    assert out.shape == (5,)
    np.testing.assert_allclose(out.numpy(), bce_ref(BINARY_TRUE, probs), rtol=1e-10)
    out = losses.binary_crossentropy(BINARY_TRUE, BINARY_LOGITS, from_logits=True)
    np.testing.assert_allclose(out.numpy(), bce_ref(BINARY_TRUE, probs), rtol=1e-8)
    out = losses.binary_crossentropy(BINARY_TRUE, probs, label_smoothing=0.3)
    np.testing.assert_allclose(out.numpy(), bce_ref(BINARY_TRUE, probs, 0.3), rtol=1e-10)
    # saturated probabilities are clipped, not infinite
    out = losses.binary_crossentropy(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])).numpy()
    np.testing.assert_allclose(out, [-math.log(EPS)], rtol=1e-6)
    # in float32, 1 - 1e-7 rounds to 1 - 2 ** -23, as in Keras
    out = losses.binary_crossentropy([[1.0, 0.0]], [[0.0, 1.0]]).numpy()
    np.testing.assert_allclose(out, [-(math.log(EPS) + math.log(2.0**-23)) / 2], rtol=1e-6)


def test_binary_crossentropy_rank_1_labels_against_column_predictions():
    probs = sigmoid(BINARY_LOGITS[:, :1])
    out = losses.binary_crossentropy(BINARY_TRUE[:, 0], probs)
    assert out.shape == (5,)
    np.testing.assert_allclose(out.numpy(), bce_ref(BINARY_TRUE[:, :1], probs), rtol=1e-10)


@pytest.mark.parametrize(
    "fn, ref",
    [
        (losses.mean_squared_error, lambda t, p: ((t - p) ** 2).mean(-1)),
        (losses.mse, lambda t, p: ((t - p) ** 2).mean(-1)),
        (losses.mean_absolute_error, lambda t, p: np.abs(t - p).mean(-1)),
        (losses.mae, lambda t, p: np.abs(t - p).mean(-1)),
        (
            losses.mean_absolute_percentage_error,
            lambda t, p: 100 * np.abs((t - p) / np.maximum(np.abs(t), EPS)).mean(-1),
        ),
        (
            losses.mean_squared_logarithmic_error,
            lambda t, p: (
                (np.log(np.maximum(p, EPS) + 1) - np.log(np.maximum(t, EPS) + 1)) ** 2
            ).mean(-1),
        ),
        (losses.huber, huber_ref),
        (lambda t, p: losses.huber(t, p, delta=0.5), lambda t, p: huber_ref(t, p, 0.5)),
        (losses.log_cosh, lambda t, p: np.log(np.cosh(p - t)).mean(-1)),
        (
            losses.poisson,
            lambda t, p: (p - t * np.log(p + EPS)).mean(-1),
        ),
        (
            losses.cosine_similarity,
            lambda t, p: -(t * p).sum(-1) / np.linalg.norm(t, axis=-1) / np.linalg.norm(p, axis=-1),
        ),
        (losses.hinge, lambda t, p: np.maximum(1 - t * p, 0).mean(-1)),
        (losses.squared_hinge, lambda t, p: (np.maximum(1 - t * p, 0) ** 2).mean(-1)),
    ],
    ids=[
        "mse",
        "mse_alias",
        "mae",
        "mae_alias",
        "mape",
        "msle",
        "huber",
        "huber_delta",
        "log_cosh",
        "poisson",
        "cosine_similarity",
        "hinge",
        "squared_hinge",
    ],
)
def test_regression_functions(fn, ref):
    y_pred = REG_PRED
    if fn is losses.poisson:
        y_pred = np.abs(REG_PRED)  # Poisson takes positive rates
    out = fn(REG_TRUE, y_pred)
    assert out.shape == (5,)
    np.testing.assert_allclose(out.numpy(), ref(REG_TRUE, y_pred), rtol=1e-9, atol=1e-12)


def test_hinge_converts_binary_labels():
    out = losses.hinge(BINARY_TRUE, BINARY_LOGITS).numpy()
    signed = 2 * BINARY_TRUE - 1
    np.testing.assert_allclose(out, np.maximum(1 - signed * BINARY_LOGITS, 0).mean(-1))


def test_kl_divergence_and_categorical_hinge():
    q = softmax(RNG.normal(size=(5, 4)))
    out = losses.kl_divergence(PROBS, q).numpy()
    np.testing.assert_allclose(out, (PROBS * np.log(PROBS / q)).sum(-1), rtol=1e-9)
    assert losses.kld is losses.kl_divergence
    out = losses.categorical_hinge(ONE_HOT, LOGITS).numpy()
    pos = (ONE_HOT * LOGITS).sum(-1)
    neg = ((1 - ONE_HOT) * LOGITS).max(-1)
    np.testing.assert_allclose(out, np.maximum(neg - pos + 1, 0), rtol=1e-12)


def test_mse_squeezes_a_trailing_axis():
    y_true = REG_TRUE[:, 0]
    out = losses.mean_squared_error(y_true, REG_PRED[:, :1])
    np.testing.assert_allclose(out.numpy(), (y_true - REG_PRED[:, 0]) ** 2, rtol=1e-12)


# --------------------------------------------------------------------- classes


def test_loss_classes_reduce_to_the_mean():
    cases = [
        (losses.MeanSquaredError(), REG_TRUE, REG_PRED, ((REG_TRUE - REG_PRED) ** 2).mean(-1)),
        (losses.MeanAbsoluteError(), REG_TRUE, REG_PRED, np.abs(REG_TRUE - REG_PRED).mean(-1)),
        (losses.Huber(delta=0.7), REG_TRUE, REG_PRED, huber_ref(REG_TRUE, REG_PRED, 0.7)),
        (losses.CategoricalCrossentropy(), ONE_HOT, PROBS, cce_ref(ONE_HOT, PROBS)),
        (
            losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1),
            ONE_HOT,
            LOGITS,
            cce_ref(ONE_HOT, softmax(LOGITS), 0.1),
        ),
        (losses.SparseCategoricalCrossentropy(), LABELS, PROBS, cce_ref(ONE_HOT, PROBS)),
        (
            losses.SparseCategoricalCrossentropy(from_logits=True),
            LABELS,
            LOGITS,
            cce_ref(ONE_HOT, softmax(LOGITS)),
        ),
        (
            losses.BinaryCrossentropy(from_logits=True),
            BINARY_TRUE,
            BINARY_LOGITS,
            bce_ref(BINARY_TRUE, sigmoid(BINARY_LOGITS)),
        ),
    ]
    for loss, y_true, y_pred, per_sample in cases:
        out = loss(y_true, y_pred)
        assert out.shape == () and out.dtype == ft.float32, loss.name
        np.testing.assert_allclose(float(out), per_sample.mean(), rtol=1e-5, err_msg=loss.name)


def test_reductions_and_sample_weight():
    per_sample = ((REG_TRUE - REG_PRED) ** 2).mean(-1)
    weights = np.array([0.0, 1.0, 2.0, 0.5, 1.0])
    mean = losses.MeanSquaredError(dtype="float64")
    np.testing.assert_allclose(
        float(mean(REG_TRUE, REG_PRED, weights)), (per_sample * weights).mean()
    )
    total = losses.MeanSquaredError(reduction="sum", dtype="float64")
    np.testing.assert_allclose(
        float(total(REG_TRUE, REG_PRED, weights)), (per_sample * weights).sum()
    )
    none = losses.MeanSquaredError(reduction=None, dtype="float64")
    np.testing.assert_allclose(none(REG_TRUE, REG_PRED, weights).numpy(), per_sample * weights)
    none = losses.MeanSquaredError(reduction="none", dtype="float64")
    np.testing.assert_allclose(none(REG_TRUE, REG_PRED).numpy(), per_sample)
    weighted = losses.MeanSquaredError(reduction="mean_with_sample_weight", dtype="float64")
    np.testing.assert_allclose(
        float(weighted(REG_TRUE, REG_PRED, weights)), (per_sample * weights).sum() / weights.sum()
    )
    # a (batch, 1) weight column is squeezed to match the per-sample values
    np.testing.assert_allclose(
        float(mean(REG_TRUE, REG_PRED, weights[:, None])), (per_sample * weights).mean()
    )
    # a scalar weight scales everything
    np.testing.assert_allclose(float(mean(REG_TRUE, REG_PRED, 2.0)), 2 * per_sample.mean())


def test_loss_names_and_bad_reduction():
    assert losses.MeanSquaredError().name == "mean_squared_error"
    assert losses.Huber().name == "huber_loss"
    assert losses.SparseCategoricalCrossentropy().name == "sparse_categorical_crossentropy"
    assert losses.CategoricalCrossentropy(name="ce").name == "ce"
    with pytest.raises(ValueError, match="reduction"):
        losses.MeanSquaredError(reduction="auto")


def test_custom_loss_subclass():
    class Cubed(losses.Loss):
        def call(self, y_true, y_pred):
            return ft.reduce_mean(ft.abs(y_true - y_pred) ** 3, axis=-1)

    loss = Cubed()
    assert loss.name == "cubed"
    expected = (np.abs(REG_TRUE - REG_PRED) ** 3).mean(-1).mean()
    np.testing.assert_allclose(float(loss(REG_TRUE, REG_PRED)), expected, rtol=1e-5)


# ------------------------------------------------------------------- gradients


def numeric_gradient(f, x, h=1e-6):
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[index] += h
        minus[index] -= h
        grad[index] = (f(plus) - f(minus)) / (2 * h)
    return grad


@pytest.mark.parametrize(
    "loss, y_true, y_pred",
    [
        (losses.CategoricalCrossentropy(dtype="float64"), ONE_HOT, PROBS),
        (losses.CategoricalCrossentropy(from_logits=True, dtype="float64"), ONE_HOT, LOGITS),
        (losses.SparseCategoricalCrossentropy(dtype="float64"), LABELS, PROBS),
        (losses.BinaryCrossentropy(dtype="float64"), BINARY_TRUE, sigmoid(BINARY_LOGITS)),
        (
            losses.BinaryCrossentropy(from_logits=True, dtype="float64"),
            BINARY_TRUE,
            BINARY_LOGITS,
        ),
        (losses.Huber(delta=0.8, dtype="float64"), REG_TRUE, REG_PRED),
        (losses.MeanSquaredError(dtype="float64"), REG_TRUE, REG_PRED),
    ],
    ids=["cce", "cce_logits", "scce", "bce", "bce_logits", "huber", "mse"],
)
def test_gradient_matches_finite_differences(loss, y_true, y_pred):
    x = ft.Variable(y_pred.copy())
    with ft.GradientTape() as tape:
        value = loss(y_true, x)
    grad = tape.gradient(value, x).numpy()
    expected = numeric_gradient(lambda p: float(loss(y_true, p)), y_pred)
    np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-8)


def test_function_gradient_through_float32_model_output():
    x = ft.Variable(LOGITS.astype(np.float32))
    with ft.GradientTape() as tape:
        value = ft.reduce_mean(losses.categorical_crossentropy(ONE_HOT, ft.nn.softmax(x)))
    grad = tape.gradient(value, x).numpy()
    # d mean(CE(softmax(x))) / dx = (softmax(x) - y) / batch
    np.testing.assert_allclose(grad, (softmax(LOGITS) - ONE_HOT) / 5, atol=1e-6)


# ------------------------------------------------------------------------- get


@pytest.mark.parametrize(
    "name, fn",
    [
        ("categorical_crossentropy", losses.categorical_crossentropy),
        ("sparse_categorical_crossentropy", losses.sparse_categorical_crossentropy),
        ("binary_crossentropy", losses.binary_crossentropy),
        ("mse", losses.mean_squared_error),
        ("MSE", losses.mean_squared_error),
        ("mean_squared_error", losses.mean_squared_error),
        ("mae", losses.mean_absolute_error),
        ("huber", losses.huber),
        ("bce", losses.binary_crossentropy),
    ],
)
def test_get_function_names(name, fn):
    assert losses.get(name) is fn


def test_get_classes_callables_and_errors():
    assert isinstance(losses.get("MeanSquaredError"), losses.MeanSquaredError)
    loss = losses.Huber(delta=2.0)
    assert losses.get(loss) is loss
    assert losses.get(None) is None

    def custom(y_true, y_pred):
        return y_pred

    assert losses.get(custom) is custom
    again = losses.get(losses.serialize(losses.CategoricalCrossentropy(from_logits=True)))
    assert isinstance(again, losses.CategoricalCrossentropy) and again.from_logits
    with pytest.raises(ValueError, match="could not interpret loss identifier"):
        losses.get("categorical_cross_entropy")
    with pytest.raises(ValueError, match="could not interpret"):
        losses.get(3)
