"""Attention and AdditiveAttention: values against a numpy softmax attention (dot, concat and
additive scores; value, query and causal masks; returned scores), gradients against float64
finite differences, dropout in training only, get_config round trips and bad arguments."""

import numpy as np
import pytest
from test_keras_layers import check_input_gradient, check_weight_gradients, fd_grad, rand

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


# ------------------------------------------------------------------ EinsumDense


@pytest.mark.parametrize(
    "equation, output_shape, bias_axes, shape, kernel, bias",
    [
        ("ab,bc->ac", 4, None, (2, 5), [5, 4], None),
        ("abc,cd->abd", (None, 7), "d", (2, 3, 5), [5, 7], [7]),
        ("abc,cde->abde", (None, 2, 4), "de", (2, 3, 5), [5, 2, 4], [2, 4]),
        ("...b,bc->...c", 6, "c", (2, 3, 4, 5), [5, 6], [6]),
        ("bc...,cd->bd...", (6,), "d", (2, 5, 3), [5, 6], [6, 1]),
    ],
)
def test_einsum_dense_shapes_and_values(equation, output_shape, bias_axes, shape, kernel, bias):
    layer = layers.EinsumDense(
        equation, output_shape, bias_axes=bias_axes, bias_initializer="ones", dtype="float64"
    )
    x = rand(*shape)
    y = layer(x).numpy()
    assert layer.kernel.shape.as_list() == kernel
    assert (layer.bias is None and bias is None) or layer.bias.shape.as_list() == bias
    expected = np.einsum(equation, x, layer.kernel.numpy()) + (0.0 if bias is None else 1.0)
    np.testing.assert_allclose(y, expected, rtol=1e-12)


def test_einsum_dense_gradients_config_and_errors():
    layer = layers.EinsumDense(
        "abc,cde->abde", (None, 2, 3), bias_axes="e", activation="tanh", dtype="float64"
    )
    x = rand(2, 3, 4)
    check_input_gradient(layer, x)
    check_weight_gradients(layer, x)
    config = layer.get_config()
    assert layers.EinsumDense.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="Invalid einsum equation"):
        layers.EinsumDense("ab,bc", 3)(ft.ones([2, 4]))
    with pytest.raises(ValueError, match="Bias dimension 'x'"):
        layers.EinsumDense("ab,bc->ac", 3, bias_axes="x")(ft.ones([2, 4]))
    with pytest.raises(ValueError, match="did not have a match"):
        layers.EinsumDense("ab,bcz->ac", 3)(ft.ones([2, 4]))


# ------------------------------------------------------------------ MultiHeadAttention


def mha_ref(layer, q, v, k, mask=None, fused=False):
    """The heads computed in numpy from the layer's weights. `fused`: Keras 3's
    `dot_product_attention` case (no dropout, no scores returned), where a query step with every
    key masked weighs all keys equally instead of none."""
    w = {x.name.split(":")[0]: x.numpy() for x in layer.weights}
    qp = np.einsum("abc,cde->abde", q, w["query/kernel"]) + w["query/bias"]
    kp = np.einsum("abc,cde->abde", k, w["key/kernel"]) + w["key/bias"]
    vp = np.einsum("abc,cde->abde", v, w["value/kernel"]) + w["value/bias"]
    scores = np.einsum("aecd,abcd->acbe", kp, qp / np.sqrt(layer.key_dim))
    if mask is not None:
        scores = np.where(mask[:, None], scores, -1e9)
    weights = softmax(scores)
    if mask is not None:
        weights = np.where(mask[:, None], weights, 0.0)
        if fused:
            empty = ~mask[:, None].any(-1, keepdims=True)
            weights = np.where(empty, 1.0 / weights.shape[-1], weights)
    heads = np.einsum("acbe,aecd->abcd", weights, vp)
    out = np.einsum("abcd,cde->abe", heads, w["attention_output/kernel"])
    return out + w["attention_output/bias"], weights


def test_multi_head_attention_weights_and_values():
    layer = layers.MultiHeadAttention(num_heads=3, key_dim=4, value_dim=5, dtype="float64")
    q, v, k = rand(2, 3, 8), rand(2, 5, 6), rand(2, 5, 6)
    out, scores = layer(q, v, k, return_attention_scores=True)
    names = [x.name.split(":")[0] for x in layer.weights]
    assert names == [
        f"{p}/{n}"
        for p in ("query", "key", "value", "attention_output")
        for n in ("kernel", "bias")
    ]
    assert [x.shape.as_list() for x in layer.weights] == [
        [8, 3, 4],
        [3, 4],
        [6, 3, 4],
        [3, 4],
        [6, 3, 5],
        [3, 5],
        [3, 5, 8],
        [8],
    ]
    for x in layer.weights:
        x.assign(rand(*x.shape.as_list()) * 0.5)
    out, scores = layer(q, v, k, return_attention_scores=True)
    expected, expected_scores = mha_ref(layer, q, v, k)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    np.testing.assert_allclose(scores.numpy(), expected_scores, rtol=1e-10)


def test_multi_head_attention_masks():
    layer = layers.MultiHeadAttention(num_heads=2, key_dim=3, dtype="float64")
    q, v = rand(2, 3, 4), rand(2, 5, 4)
    layer(q, v)
    for x in layer.weights:
        x.assign(rand(*x.shape.as_list()))
    causal = np.tril(np.ones((3, 5), bool))[None]
    out = layer(q, v, value_mask=VMASK, use_causal_mask=True).numpy()
    np.testing.assert_allclose(
        out, mha_ref(layer, q, v, v, VMASK[:, None] & causal, fused=True)[0], rtol=1e-10
    )
    attention_mask = np.random.default_rng(1).random((2, 3, 5)) > 0.4
    # As Keras 3: the query's mask is the one its tensor carries; a `query_mask` argument is
    # replaced by it (here: none), and the output carries it.
    out = layer(q, v, attention_mask=attention_mask, query_mask=QMASK).numpy()
    np.testing.assert_allclose(
        out, mha_ref(layer, q, v, v, attention_mask, fused=True)[0], rtol=1e-10
    )
    query = ft.constant(q)
    query._keras_mask = ft.constant(QMASK)
    out = layer(query, v, attention_mask=attention_mask)
    combined = attention_mask & QMASK[:, :, None]
    np.testing.assert_allclose(
        out.numpy(), mha_ref(layer, q, v, v, combined, fused=True)[0], rtol=1e-10
    )
    np.testing.assert_array_equal(out._keras_mask.numpy(), QMASK)


def test_multi_head_attention_gradients_and_dropout():
    layer = layers.MultiHeadAttention(num_heads=2, key_dim=2, dropout=0.5, seed=1, dtype="float64")
    q, v = rand(1, 2, 3), rand(1, 3, 3)
    w = rand(1, 2, 3)

    def loss(query):
        return ft.reduce_sum(layer(query, v) * w)

    qt = ft.constant(q)
    with ft.GradientTape() as tape:
        tape.watch(qt)
        total = loss(qt)
    numeric = fd_grad(lambda x: float(loss(ft.constant(x))), q)
    np.testing.assert_allclose(tape.gradient(total, qt).numpy(), numeric, rtol=1e-5, atol=1e-8)
    with ft.GradientTape() as tape:
        total = loss(qt)
    grads = tape.gradient(total, layer.trainable_weights)
    assert len(grads) == 8 and all(g is not None for g in grads)
    _, scores = layer(q, v, training=True, return_attention_scores=True)
    inference = layer(q, v).numpy()
    trained = layer(q, v, training=True).numpy()
    assert not np.allclose(inference, trained)  # dropout on the attention weights
    np.testing.assert_allclose(scores.numpy().sum(-1), 1.0)  # the scores are before dropout


def test_multi_head_attention_config_and_errors():
    layer = layers.MultiHeadAttention(
        4, 8, value_dim=6, dropout=0.1, output_shape=5, use_bias=False
    )
    config = layer.get_config()
    assert layers.MultiHeadAttention.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="num_heads"):
        layers.MultiHeadAttention(0, 4)
    with pytest.raises(ValueError, match="key_dim"):
        layers.MultiHeadAttention(2, None)
    with pytest.raises(ValueError, match="attention_axes"):
        layers.MultiHeadAttention(2, 4, attention_axes=(1, 2))
    with pytest.raises(ValueError, match="rank 3"):
        layers.MultiHeadAttention(2, 4)(ft.ones([2, 3, 4, 5]), ft.ones([2, 3, 4, 5]))


def gqa_ref(layer, q, v, mask=None):
    """Grouped-query attention in numpy: each key/value head serves consecutive query heads."""
    w = {x.name.split(":")[0]: x.numpy() for x in layer.weights}
    qp = np.einsum("bqm,muh->bquh", q, w["query/kernel"]) + w["query/bias"]
    kp = np.einsum("bkm,mvh->bkvh", v, w["key/kernel"]) + w["key/bias"]
    vp = np.einsum("bkm,mvh->bkvh", v, w["value/kernel"]) + w["value/bias"]
    kp, vp = (np.repeat(t, layer.num_repeats, axis=2) for t in (kp, vp))
    scores = np.einsum("bquh,bkuh->buqk", qp / np.sqrt(layer.head_dim), kp)
    if mask is not None:
        scores = np.where(mask[:, None], scores, -1e9)
    weights = softmax(scores)
    if mask is not None:
        weights = np.where(mask[:, None], weights, 0.0)
    out = np.einsum("buqk,bkuh->bquh", weights, vp)
    return (
        np.einsum("bquh,uhm->bqm", out, w["attention_output/kernel"]) + w["attention_output/bias"]
    )


def test_grouped_query_attention_matches_numpy():
    layer = layers.GroupQueryAttention(
        head_dim=3, num_query_heads=4, num_key_value_heads=2, dtype="float64"
    )
    assert layers.GroupedQueryAttention is layers.GroupQueryAttention
    q, v = rand(2, 3, 5), rand(2, 4, 6)
    layer(q, v)
    assert [x.shape.as_list() for x in layer.weights] == [
        [5, 4, 3],
        [4, 3],
        [6, 2, 3],
        [2, 3],
        [6, 2, 3],
        [2, 3],
        [4, 3, 5],
        [5],
    ]
    for x in layer.weights:
        x.assign(rand(*x.shape.as_list()))
    np.testing.assert_allclose(layer(q, v).numpy(), gqa_ref(layer, q, v), rtol=1e-10)
    vmask = np.array([[1, 1, 0, 1], [1, 1, 1, 0]], bool)
    causal = np.tril(np.ones((3, 4), bool))[None]
    out = layer(q, v, value_mask=vmask, use_causal_mask=True).numpy()
    np.testing.assert_allclose(out, gqa_ref(layer, q, v, vmask[:, None] & causal), rtol=1e-10)
    config = layer.get_config()
    assert layers.GroupQueryAttention.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="divisible"):
        layers.GroupQueryAttention(4, num_query_heads=3, num_key_value_heads=2)
    with pytest.raises(ValueError, match="sliding_window"):
        layers.GroupQueryAttention(4, 2, 1, sliding_window=8)


def test_attention_layers_in_a_functional_model_take_symbolic_second_inputs():
    query, context = ft.keras.Input((4, 6)), ft.keras.Input((5, 3))
    attended = layers.MultiHeadAttention(2, 4, name="mha")(query, context)
    mixed = layers.Attention()([attended, query])
    outputs = layers.Dense(1)(layers.GlobalAveragePooling1D()(mixed))
    model = ft.keras.Model([query, context], outputs)
    assert len(model.trainable_weights) == 10  # the MHA's 8 and the Dense's 2
    q, c = rand(2, 4, 6).astype(np.float32), rand(2, 5, 3).astype(np.float32)
    mha = model.get_layer("mha")
    assert mha.key_dense.kernel.shape.as_list() == [3, 2, 4]  # built on the second Input
    dense = model.layers[-1]
    manual = dense(layers.GlobalAveragePooling1D()(layers.Attention()([mha(q, c), q])))
    np.testing.assert_allclose(model([q, c]).numpy(), manual.numpy(), rtol=1e-5)
    np.testing.assert_allclose(model([q, c]).numpy(), model.predict([q, c], verbose=0), rtol=1e-5)
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit([q, c], np.zeros((2, 1), np.float32), epochs=2, verbose=0)
    assert history.history["loss"][1] < history.history["loss"][0]
