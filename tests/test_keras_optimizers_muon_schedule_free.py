"""Muon and ScheduleFreeAdamW against numpy implementations of Keras 3's rules (as TensorFlow
2.21 runs them), in float64, and against Keras itself where TensorFlow is installed."""

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras import optimizers

RNG = np.random.default_rng(3)
INITIAL = {"dense/kernel": RNG.normal(size=(3, 5)), "dense/bias": RNG.normal(size=(5,))}
INITIAL["embedding/embeddings"] = RNG.normal(size=(4, 3))
GRADS = [{k: RNG.normal(size=v.shape) for k, v in INITIAL.items()} for _ in range(4)]
LR = float(np.float32(0.05))  # the learning rate as its float32 variable holds it


def run_ft(optimizer):
    variables = {k: ft.Variable(v.copy(), name=k) for k, v in INITIAL.items()}
    for grads in GRADS:
        optimizer.apply_gradients([(ft.constant(grads[k]), variables[k]) for k in variables])
    return {k: v.numpy() for k, v in variables.items()}


def schedule_free_ref(warmup_steps=0, weight_decay=None, beta_1=0.9, beta_2=0.999, eps=1e-8):
    out = {}
    for key, w in INITIAL.items():
        w, z, v = w.copy(), w.copy(), np.zeros_like(w)
        for t, grads in enumerate(GRADS, start=1):
            g = grads[key]
            if weight_decay is not None:
                w = w - w * weight_decay * LR
            lr = LR * min(t / warmup_steps, 1.0) if warmup_steps else LR
            v = v + (g * g - v) * (1 - beta_2)
            z = z - lr * g / (np.sqrt(v / (1 - beta_2**t)) + eps)
            x = (w - (1 - beta_1) * z) / beta_1  # the new z: what TensorFlow's Keras reads
            x = (1 - 1 / t) * x + z / t
            w = (1 - beta_1) * z + beta_1 * x
        out[key] = w
    return out


def newton_schulz5(x, steps=5, a=3.4445, b=-4.7750, c=2.0315):
    tall = x.shape[0] > x.shape[1]
    x = x.T if tall else x
    x = x / (np.linalg.norm(x) + 1e-7)
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if tall else x


def muon_ref(momentum=0.95, nesterov=True, rms_rate=0.2, wd=0.004, adam_wd=0.004, excluded=()):
    out = {}
    for key, w in INITIAL.items():
        adam = w.ndim != 2 or "embedding" in key or any(e in key for e in excluded)
        w, m, v = w.copy(), np.zeros_like(w), np.zeros_like(w)
        for t, grads in enumerate(GRADS, start=1):
            g = grads[key]
            decay = adam_wd if adam else wd
            if decay is not None:
                w = w - w * decay * LR
            if adam:
                alpha = LR * np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
                m = m + (g - m) * 0.1
                v = v + (g * g - v) * 0.001
                w = w - m * alpha / (np.sqrt(v) + 1e-7)
                continue
            m = m + g + m * (momentum - 1)
            update = LR * newton_schulz5(g + momentum * m if nesterov else m)
            if rms_rate is not None:
                update = update * np.sqrt(max(w.shape)) * rms_rate
            w = w - update
        out[key] = w
    return out


CASES = {
    "schedule_free": (lambda: optimizers.ScheduleFreeAdamW(0.05), schedule_free_ref()),
    "schedule_free_warmup_decay": (
        lambda: optimizers.ScheduleFreeAdamW(0.05, warmup_steps=3, weight_decay=0.01),
        schedule_free_ref(warmup_steps=3, weight_decay=0.01),
    ),
    "muon": (lambda: optimizers.Muon(0.05), muon_ref()),
    "muon_plain": (
        lambda: optimizers.Muon(
            0.05, nesterov=False, rms_rate=None, weight_decay=None, exclude_layers=["kernel"]
        ),
        muon_ref(nesterov=False, rms_rate=None, wd=None, excluded=("kernel",)),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_numpy(name):
    make, expected = CASES[name]
    actual = run_ft(make())
    for key in INITIAL:
        np.testing.assert_allclose(actual[key], expected[key], rtol=1e-9, atol=1e-12)


def test_names_slots_and_config_round_trip():
    muon = optimizers.Muon(exclude_layers=["head"])
    assert muon.name == "muon" and optimizers.ScheduleFreeAdamW().name == "schedule_free_adam_w"
    variables = [ft.Variable(np.ones((2, 3)), name="dense/kernel"), ft.Variable(np.ones(3))]
    muon.build(variables)
    # A Muon matrix keeps a momentum; an AdamW variable a momentum and a velocity.
    assert [len(muon._slots_of(v)) for v in variables] == [1, 2]
    again = optimizers.deserialize(optimizers.serialize(muon))
    assert isinstance(again, optimizers.Muon) and again.exclude_layers == ["head"]
    assert optimizers.get("schedulefreeadamw").warmup_steps == 0


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_keras(name):
    keras = pytest.importorskip("keras", reason="Keras 3 (with TensorFlow) is not installed")
    import tensorflow as tf

    make, _ = CASES[name]
    theirs = getattr(keras.optimizers, type(make()).__name__).from_config(make().get_config())
    variables = {
        k: keras.Variable(v.astype("float32"), name=k.replace("/", "_")) for k, v in INITIAL.items()
    }
    for grads in GRADS:
        theirs.apply_gradients([(tf.constant(grads[k], tf.float32), variables[k]) for k in INITIAL])
    ours = make()
    ours_vars = {k: ft.Variable(v.astype("float32"), name=k) for k, v in INITIAL.items()}
    for grads in GRADS:
        ours.apply_gradients([(ft.constant(grads[k], ft.float32), ours_vars[k]) for k in INITIAL])
    for key in INITIAL:
        np.testing.assert_allclose(ours_vars[key].numpy(), variables[key].numpy(), atol=2e-5)
