"""Attention and AdditiveAttention: values against a numpy softmax attention (dot, concat and
additive scores; value, query and causal masks; returned scores), gradients against float64
finite differences, dropout in training only, get_config round trips and bad arguments."""

import numpy as np
import pytest
from test_keras_layers import fd_grad, rand

import ferrotape as ft
from ferrotape.keras import layers


def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def attention_ref(q, v, k, scores, value_mask=None, query_mask=None, causal=False):
    keep = np.ones(scores.shape, bool)
    if value_mask is not None:
        keep &= value_mask[:, None, :]
    if causal:
        keep &= np.tril(np.ones(scores.shape[-2:], bool))[None]
    weights = softmax(np.where(keep, scores, scores - 1e9))
    out = weights @ v
    if query_mask is not None:
        out = np.where(query_mask[..., None], out, 0.0)
    return out, weights


Q, V, K = rand(2, 3, 4), rand(2, 5, 4), rand(2, 5, 4)
QMASK = np.array([[1, 1, 0], [1, 1, 1]], bool)
VMASK = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 1]], bool)


@pytest.mark.parametrize("use_scale", [False, True])
@pytest.mark.parametrize("with_key", [False, True])
def test_dot_attention_matches_numpy(use_scale, with_key):
    layer = layers.Attention(use_scale=use_scale, dtype="float64")
    inputs = [Q, V, K] if with_key else [Q, V]
    layer(inputs)
    scale = 1.0
    if use_scale:
        layer.scale.assign(0.7)
        scale = 0.7
    key = K if with_key else V
    out, weights = layer(inputs, return_attention_scores=True)
    expected, expected_weights = attention_ref(Q, V, key, scale * Q @ key.transpose(0, 2, 1))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    np.testing.assert_allclose(weights.numpy(), expected_weights, rtol=1e-10)


def test_concat_and_additive_scores_match_numpy():
    layer = layers.Attention(score_mode="concat", use_scale=True, dtype="float64")
    layer([Q, V])
    layer.scale.assign(0.5)
    layer.concat_score_weight.assign(1.5)
    pairs = Q[:, :, None, :] + V[:, None, :, :]
    scores = 1.5 * np.tanh(0.5 * pairs).sum(-1)
    np.testing.assert_allclose(layer([Q, V]).numpy(), attention_ref(Q, V, V, scores)[0], rtol=1e-10)
    additive = layers.AdditiveAttention(dtype="float64")
    additive([Q, V])
    assert additive.scale.shape.as_list() == [4]
    scale = additive.scale.numpy()
    scores = (scale * np.tanh(pairs)).sum(-1)
    np.testing.assert_allclose(
        additive([Q, V]).numpy(), attention_ref(Q, V, V, scores)[0], rtol=1e-10
    )


@pytest.mark.parametrize("causal", [False, True])
def test_masks(causal):
    layer = layers.Attention(dtype="float64")
    out = layer([Q, V], mask=[QMASK, VMASK], use_causal_mask=causal).numpy()
    expected, _ = attention_ref(Q, V, V, Q @ V.transpose(0, 2, 1), VMASK, QMASK, causal)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(out[0, 2], 0.0)  # a masked query step outputs 0
    assert layer.compute_mask([Q, V], mask=[QMASK, VMASK]).numpy().tolist() == QMASK.tolist()


@pytest.mark.parametrize(
    "make", [lambda: layers.Attention(use_scale=True), lambda: layers.AdditiveAttention()]
)
def test_attention_gradients(make):
    with_float64 = ft.keras.backend.floatx()
    ft.keras.backend.set_floatx("float64")
    try:
        layer = make()
    finally:
        ft.keras.backend.set_floatx(with_float64)
    w = rand(2, 3, 4)

    def loss(q, v):
        return ft.reduce_sum(layer([q, v], mask=[None, VMASK]) * w)

    q, v = ft.constant(Q), ft.constant(V)
    with ft.GradientTape() as tape:
        tape.watch([q, v])
        total = loss(q, v)
    gq, gv, gs = tape.gradient(total, [q, v, layer.scale])
    np.testing.assert_allclose(
        gq.numpy(), fd_grad(lambda x: float(loss(ft.constant(x), v)), Q), rtol=1e-5, atol=1e-8
    )
    np.testing.assert_allclose(
        gv.numpy(), fd_grad(lambda x: float(loss(q, ft.constant(x))), V), rtol=1e-5, atol=1e-8
    )
    saved = layer.scale.numpy()

    def by_scale(value):
        layer.scale.assign(value)
        return float(loss(q, v))

    numeric = fd_grad(by_scale, np.asarray(saved, dtype=np.float64))
    layer.scale.assign(saved)
    np.testing.assert_allclose(gs.numpy(), numeric, rtol=1e-5, atol=1e-8)


def test_dropout_acts_in_training_only():
    layer = layers.Attention(dropout=0.5, seed=3, dtype="float64")
    plain = layers.Attention(dtype="float64")
    np.testing.assert_allclose(layer([Q, V]).numpy(), plain([Q, V]).numpy())
    _, weights = layer([Q, V], training=True, return_attention_scores=True)
    w = weights.numpy()
    assert (w == 0).any() and not np.allclose(w.sum(-1), 1.0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.Attention(use_scale=True, score_mode="concat", dropout=0.1, seed=2),
        lambda: layers.AdditiveAttention(use_scale=False, dropout=0.2),
    ],
)
def test_get_config_round_trips(make):
    layer = make()
    config = layer.get_config()
    assert type(layer).from_config(config).get_config() == config
    if isinstance(layer, layers.AdditiveAttention):
        assert "score_mode" not in config


def test_bad_arguments_and_inputs_raise_value_error():
    with pytest.raises(ValueError, match="score_mode"):
        layers.Attention(score_mode="general")
    with pytest.raises(ValueError, match="dropout"):
        layers.Attention(dropout=1.0)
    with pytest.raises(ValueError, match="list of inputs"):
        layers.Attention()(ft.constant(Q))
    with pytest.raises(ValueError, match="length 2 or 3"):
        layers.Attention()([Q])
    with pytest.raises(ValueError, match="mask"):
        layers.Attention()([Q, V], mask=[QMASK])
