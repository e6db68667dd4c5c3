"""ft.keras.losses' focal, Dice, Tversky and generalized cross-entropy losses: values against
numpy transcriptions of Keras 3's formulas and TF 2.21 constants, classes' reductions and
configs, and float64 gradients against finite differences."""

import numpy as np
import pytest
from test_keras_layers import fd_grad

import ferrotape as ft
from ferrotape.keras import losses

EPS = 1e-7
RNG = np.random.default_rng(11)
T = (RNG.random((4, 3)) > 0.5).astype(np.float64)
P = RNG.uniform(0.05, 0.95, (4, 3))
LABELS = np.array([0, 2, 1, 1])
PROBS = RNG.dirichlet(np.ones(3), size=4)
ONE_HOT = np.eye(3)[LABELS]


def np_binary_focal(t, p, balance=False, alpha=0.25, gamma=2.0, smoothing=0.0):
    t = t * (1 - smoothing) + 0.5 * smoothing
    clipped = np.clip(p, EPS, 1 - EPS)
    bce = -(t * np.log(clipped) + (1 - t) * np.log(1 - clipped))
    p_t = t * p + (1 - t) * (1 - p)
    focal = (1 - p_t) ** gamma * bce
    if balance:
        focal = (t * alpha + (1 - t) * (1 - alpha)) * focal
    return focal.mean(-1)


def np_categorical_focal(t, p, alpha=0.25, gamma=2.0):
    p = np.clip(p / p.sum(-1, keepdims=True), EPS, 1 - EPS)
    return (alpha * (1 - p) ** gamma * -t * np.log(p)).sum(-1)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"apply_class_balancing": True, "alpha": 0.3}, {"gamma": 0.0}, {"label_smoothing": 0.1}],
)
def test_binary_focal_crossentropy(kwargs):
    got = losses.binary_focal_crossentropy(T, P, **kwargs).numpy()
    expected = np_binary_focal(
        T,
        P,
        kwargs.get("apply_class_balancing", False),
        kwargs.get("alpha", 0.25),
        kwargs.get("gamma", 2.0),
        kwargs.get("label_smoothing", 0.0),
    )
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    logits = np.log(P / (1 - P))
    from_logits = losses.binary_focal_crossentropy(T, logits, from_logits=True, **kwargs)
    np.testing.assert_allclose(from_logits.numpy(), expected, rtol=1e-8)


def test_binary_focal_with_gamma_0_is_binary_crossentropy():
    np.testing.assert_allclose(
        losses.binary_focal_crossentropy(T, P, gamma=0.0).numpy(),
        losses.binary_crossentropy(T, P).numpy(),
        rtol=1e-10,
    )


def test_categorical_focal_crossentropy():
    np.testing.assert_allclose(
        losses.categorical_focal_crossentropy(ONE_HOT, PROBS).numpy(),
        np_categorical_focal(ONE_HOT, PROBS),
        rtol=1e-10,
    )
    logits = np.log(PROBS)
    np.testing.assert_allclose(
        losses.categorical_focal_crossentropy(ONE_HOT, logits, 0.5, 1.0, from_logits=True).numpy(),
        np_categorical_focal(ONE_HOT, PROBS, 0.5, 1.0),
        rtol=1e-8,
    )
    with pytest.raises(ValueError, match="axis"):
        losses.categorical_focal_crossentropy(ONE_HOT, PROBS, axis=True)


def test_dice_and_tversky():
    dice = 1 - 2 * (T * P).sum() / (T.sum() + P.sum() + EPS)
    assert float(losses.dice(T, P)) == pytest.approx(dice, rel=1e-10)
    per_row = 1 - 2 * (T * P).sum(1) / (T.sum(1) + P.sum(1) + EPS)
    np.testing.assert_allclose(losses.dice(T, P, axis=-1).numpy(), per_row, rtol=1e-10)
    tp, missed, alarms = (T * P).sum(), ((1 - P) * T).sum(), (P * (1 - T)).sum()
    tversky = 1 - tp / (tp + 0.3 * missed + 0.7 * alarms + EPS)
    assert float(losses.tversky(T, P, alpha=0.3, beta=0.7)) == pytest.approx(tversky, rel=1e-10)
    # alpha = beta = 0.5 is the Dice loss
    assert float(losses.tversky(T, P)) == pytest.approx(dice, rel=1e-8)


def test_generalized_cross_entropy():
    picked = PROBS[np.arange(4), LABELS]
    np.testing.assert_allclose(
        losses.categorical_generalized_cross_entropy(LABELS, PROBS, 0.7).numpy(),
        (1 - picked**0.7) / 0.7,
        rtol=1e-10,
    )
    loss = losses.CategoricalGeneralizedCrossEntropy(q=0.3)
    weights = np.array([1.0, 0.5, 2.0, 0.0])
    expected = ((1 - picked**0.3) / 0.3 * weights).mean()
    assert float(loss(LABELS, PROBS, sample_weight=weights)) == pytest.approx(expected)
    with pytest.raises(ValueError, match="q must be in the interval"):
        losses.CategoricalGeneralizedCrossEntropy(q=1.0)


# Computed with TF 2.21 on float32 inputs.
TF_VALUES = [
    (
        lambda: losses.BinaryFocalCrossentropy(),
        [[0, 1], [1, 1]],
        [[0.2, 0.7], [0.6, 0.9]],
        0.030953044,
    ),
    (
        lambda: losses.BinaryFocalCrossentropy(apply_class_balancing=True, gamma=1.0),
        [[0, 1], [1, 1]],
        [[0.2, 0.7], [0.6, 0.9]],
        0.028484680,
    ),
    (
        lambda: losses.CategoricalFocalCrossentropy(),
        [[0, 1, 0], [0, 0, 1]],
        [[0.1, 0.8, 0.1], [0.3, 0.3, 0.4]],
        0.042348798,
    ),
    (lambda: losses.Dice(), [[1, 0], [1, 1]], [[0.8, 0.3], [0.6, 0.9]], 0.178571343),
    (lambda: losses.Tversky(0.3, 0.7), [[1, 0], [1, 1]], [[0.8, 0.3], [0.6, 0.9]], 0.154411793),
]


@pytest.mark.parametrize("make, y_true, y_pred, expected", TF_VALUES)
def test_loss_classes_match_tf(make, y_true, y_pred, expected):
    y_true, y_pred = np.float32(y_true), np.float32(y_pred)
    assert float(make()(y_true, y_pred)) == pytest.approx(expected, abs=1e-6)


def test_classes_config_round_trip_and_lookup():
    loss = losses.BinaryFocalCrossentropy(apply_class_balancing=True, alpha=0.4, gamma=1.5)
    config = loss.get_config()
    assert config["alpha"] == 0.4 and config["gamma"] == 1.5 and config["apply_class_balancing"]
    assert config["name"] == "binary_focal_crossentropy"
    clone = losses.BinaryFocalCrossentropy.from_config(config)
    assert float(clone(T, P)) == pytest.approx(float(loss(T, P)))
    assert losses.Tversky(0.2, 0.8).get_config()["beta"] == 0.8
    assert isinstance(losses.get("Dice"), losses.Dice)
    assert losses.get("categorical_focal_crossentropy") is losses.categorical_focal_crossentropy
    restored = losses.deserialize(losses.serialize(losses.Tversky(alpha=0.1)))
    assert isinstance(restored, losses.Tversky) and restored.alpha == 0.1


@pytest.mark.parametrize(
    "fn",
    [
        lambda t, p: losses.binary_focal_crossentropy(t, p, apply_class_balancing=True),
        lambda t, p: losses.binary_focal_crossentropy(t, p, from_logits=True),
        lambda t, p: losses.categorical_focal_crossentropy(t, p),
        lambda t, p: losses.categorical_focal_crossentropy(t, p, from_logits=True),
        lambda t, p: losses.dice(t, p, axis=-1),
        lambda t, p: losses.tversky(t, p, 0.3, 0.7),
    ],
)
def test_gradients_match_finite_differences(fn):
    t = ONE_HOT
    p = PROBS * 0.8 + 0.05  # inside (0, 1), away from the clip

    def value(x):
        return float(ft.reduce_sum(fn(t, ft.constant(x))))

    x = ft.constant(p)
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = ft.reduce_sum(fn(t, x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), fd_grad(value, p), rtol=1e-5, atol=1e-8)


def np_circle(labels, e, gamma=80.0, margin=0.4, remove_diagonal=True):
    """Sun et al.'s Circle loss as Keras 3 writes it, row by row."""
    distances = np.maximum(1 - e @ e.T, 0)
    out = []
    for i in range(len(labels)):
        positive = labels == labels[i]
        if remove_diagonal:
            positive[i] = False
        negative = labels != labels[i]
        pos = -gamma * np.maximum(margin + distances[i], 0) * (margin - distances[i])
        neg = gamma * np.maximum(1 + margin - distances[i], 0) * ((1 - margin) - distances[i])
        lse_p = np.log(np.exp(pos[positive]).sum()) if positive.any() else -np.inf
        lse_n = np.log(np.exp(neg[negative]).sum()) if negative.any() else -np.inf
        out.append(np.logaddexp(0, lse_p + lse_n))
    return np.array(out)


def test_circle_loss_values_mask_and_gradients():
    e = RNG.standard_normal((6, 4))
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    labels = np.array([0, 1, 0, 2, 1, 3])  # classes 2 and 3 have no positive pair
    for kwargs in ({}, {"remove_diagonal": False}, {"gamma": 10.0, "margin": 0.25}):
        expected = np_circle(labels, e, **kwargs)
        got = losses.circle(labels, e, **kwargs).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-9)
    per_query = np_circle(labels, e, gamma=10.0)
    # the class averages over the queries with a nonzero loss only (Keras masks the zeros)
    loss = losses.Circle(gamma=10.0, dtype="float64")
    assert float(loss(labels, e)) == pytest.approx(per_query[per_query > 0].mean(), rel=1e-6)
    assert loss.get_config()["gamma"] == 10.0

    def value(x):
        return float(losses.Circle(gamma=10.0, dtype="float64")(labels, ft.constant(x)))

    x = ft.constant(e)
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = loss(labels, x)
    gradient = tape.gradient(y, x).numpy()
    assert np.isfinite(gradient).all()
    np.testing.assert_allclose(gradient, fd_grad(value, e), rtol=1e-5, atol=1e-8)


def brute_force_ctc(labels, log_probs, blank):
    """-log of the summed probability of every alignment that collapses to ``labels``."""
    import itertools

    steps, classes = log_probs.shape
    total = 0.0
    for path in itertools.product(range(classes), repeat=steps):
        collapsed = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
        if collapsed == list(labels):
            total += np.exp(sum(log_probs[t, c] for t, c in enumerate(path)))
    return -np.log(total)


def log_softmax(x):
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_ctc_against_every_alignment_and_its_gradient():
    logits = RNG.standard_normal((4, 5, 3))
    labels = np.array([[1, 2, 0], [2, 2, 0], [0, 0, 0], [1, 0, 0]])  # 0 is blank and padding
    got = losses.ctc(labels, logits).numpy()
    for b in range(4):
        sequence = [c for c in labels[b] if c != 0]
        expected = brute_force_ctc(sequence, log_softmax(logits[b]), blank=0)
        assert got[b] == pytest.approx(expected, rel=1e-9)
    loss = losses.CTC(dtype="float64")
    assert loss.name == "ctc" and isinstance(losses.get("CTC"), losses.CTC)

    def value(x):
        return float(loss(labels, ft.constant(x)))

    x = ft.constant(logits)
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = loss(labels, x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), fd_grad(value, logits), atol=1e-8)
    with pytest.raises(ValueError, match="2D"):
        losses.ctc([1, 2], logits)


def test_backend_ctc_batch_cost_and_greedy_decode():
    K = ft.keras.backend
    probs = RNG.dirichlet(np.ones(4), size=(2, 4))  # the last class is the blank here
    labels = np.array([[0, 1], [2, 0]])
    cost = K.ctc_batch_cost(labels, ft.constant(probs), [[4], [3]], [[2], [1]]).numpy()
    assert cost.shape == (2, 1)
    eps = 1e-7
    for b, (length, sequence) in enumerate([(4, [0, 1]), (3, [2])]):
        log_probs = log_softmax(np.log(probs[b, :length] + eps))
        assert cost[b, 0] == pytest.approx(brute_force_ctc(sequence, log_probs, 3), rel=1e-6)
    peaked = np.full((1, 5, 3), 0.05)
    for t, c in enumerate([0, 0, 2, 1, 0]):  # 2 is the blank
        peaked[0, t, c] = 0.9
    (decoded,), log_prob = K.ctc_decode(ft.constant(peaked), [5])
    assert decoded.numpy().tolist() == [[0, 1, 0, -1, -1]]
    assert float(log_prob[0, 0]) == pytest.approx(-5 * np.log(0.9 + eps))
    with pytest.raises(NotImplementedError, match="greedy"):
        K.ctc_decode(ft.constant(peaked), [5], greedy=False)
