"""Keras 3 masks: made by ``Embedding(mask_zero=True)`` and ``Masking``, carried on tensors as
``_keras_mask`` through Sequential, functional and subclassed models, honoured by the RNN
layers, pooling and attention, and weighting the losses and metrics of ``fit``/``evaluate``.
The references are numpy or the same layers run on the unpadded sequences; where TensorFlow is
importable, the same models (same weights) are compared with Keras 3's."""

import importlib.util
import warnings

import numpy as np
import pytest

import ferrotape as ft
from ferrotape import keras

LENGTHS = [5, 3, 1, 4]


def _padded_ids(steps=5, seed=0):
    ids = np.random.default_rng(seed).integers(1, 9, (len(LENGTHS), steps)).astype("int32")
    for row, n in enumerate(LENGTHS):
        ids[row, n:] = 0
    return ids


def _set_weights(model, seed=1):
    rng = np.random.default_rng(seed)
    model.set_weights(
        [rng.uniform(-0.5, 0.5, w.shape).astype("float32") for w in model.get_weights()]
    )


def test_embedding_mask_zero_makes_the_mask_and_keeps_it_in_the_config():
    layer = keras.layers.Embedding(9, 3, mask_zero=True)
    ids = _padded_ids()
    out = layer(ids)
    np.testing.assert_array_equal(out._keras_mask.numpy(), ids != 0)
    np.testing.assert_array_equal(layer.compute_mask(ft.constant(ids)).numpy(), ids != 0)
    assert layer.supports_masking and layer.get_config()["mask_zero"] is True
    plain = keras.layers.Embedding(9, 3)
    assert not plain.supports_masking and plain.compute_mask(ft.constant(ids)) is None
    assert getattr(plain(ids), "_keras_mask", None) is None


def test_masking_layer_zeroes_and_marks_the_padding():
    x = np.array([[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]], "float32")
    out = keras.layers.Masking(0.0)(x)
    np.testing.assert_array_equal(out._keras_mask.numpy(), [[True, False, True]])
    np.testing.assert_array_equal(out.numpy(), x)


def test_pass_through_layers_keep_the_mask_and_others_drop_it_with_a_warning():
    ids = _padded_ids()
    h = keras.layers.Embedding(9, 4, mask_zero=True)(ids)
    for layer in (
        keras.layers.Dense(3),
        keras.layers.Activation("relu"),
        keras.layers.Dropout(0.5),
    ):
        h = layer(h)
        np.testing.assert_array_equal(h._keras_mask.numpy(), ids != 0)
    with pytest.warns(UserWarning, match="does not support masking"):
        flat = keras.layers.Flatten()(h)
    assert getattr(flat, "_keras_mask", None) is None


class _Masked(keras.layers.Layer):
    """Records the masks it is called with."""

    def call(self, inputs, mask=None):
        self.seen = mask
        return inputs * 1.0


class _TwoMasks(keras.layers.Layer):
    def call(self, query, value, query_mask=None, value_mask=None):
        self.seen = (query_mask, value_mask)
        return query


def test_the_mask_argument_is_filled_from_the_inputs_unless_given():
    ids = _padded_ids()
    h = keras.layers.Embedding(9, 2, mask_zero=True)(ids)
    layer = _Masked()
    with pytest.warns(UserWarning, match="'_+masked' .* does not support masking"):
        out = layer(h)
    np.testing.assert_array_equal(layer.seen.numpy(), ids != 0)
    # A custom layer overriding nothing does not support masking: the mask stops (Keras 3).
    assert not layer.supports_masking and getattr(out, "_keras_mask", None) is None
    given = np.ones_like(ids, bool)
    with pytest.warns(UserWarning):
        layer(h, mask=given)
    assert layer.seen is given
    two = _TwoMasks()
    with pytest.warns(UserWarning, match="does not support masking"):
        two(h, ft.ones([4, 2, 2]))
    np.testing.assert_array_equal(two.seen[0].numpy(), ids != 0)
    assert two.seen[1] is None


def _lstm_on_each_sequence(layer, vectors, lengths):
    """The layer run on every sequence cut to its length (no mask): the masked reference."""
    return np.concatenate([layer(vectors[i : i + 1, :n]).numpy() for i, n in enumerate(lengths)])


@pytest.mark.parametrize("make", [keras.layers.SimpleRNN, keras.layers.LSTM, keras.layers.GRU])
def test_an_rnn_skips_the_masked_steps(make):
    ids = _padded_ids()
    embed = keras.layers.Embedding(9, 3, mask_zero=True)
    rnn = make(4)
    vectors = embed(ids)
    last = rnn(vectors).numpy()
    np.testing.assert_allclose(last, _lstm_on_each_sequence(rnn, vectors, LENGTHS), atol=1e-6)
    assert getattr(rnn(vectors), "_keras_mask", None) is None  # the steps are gone
    seq_layer = make(4, return_sequences=True)
    seq = seq_layer(vectors)
    np.testing.assert_array_equal(seq._keras_mask.numpy(), ids != 0)
    seq = seq.numpy()
    # Keras 3: a masked step repeats the previous output.
    for row, n in enumerate(LENGTHS):
        np.testing.assert_array_equal(
            seq[row, n:], np.broadcast_to(seq[row, n - 1], seq[row, n:].shape)
        )


def test_bidirectional_with_a_mask_reads_each_sequence_from_its_own_end():
    ids = _padded_ids()
    vectors = keras.layers.Embedding(9, 3, mask_zero=True)(ids)
    layer = keras.layers.Bidirectional(keras.layers.LSTM(2, return_sequences=True))
    seq = layer(vectors)
    np.testing.assert_array_equal(seq._keras_mask.numpy(), ids != 0)
    cut = [layer(vectors[i : i + 1, :n]).numpy()[0] for i, n in enumerate(LENGTHS)]
    seq = seq.numpy()
    for row, n in enumerate(LENGTHS):
        np.testing.assert_allclose(seq[row, :n], cut[row], atol=1e-6)
        np.testing.assert_array_equal(seq[row, n:], 0.0)  # both directions: zeros
    last = keras.layers.Bidirectional(keras.layers.GRU(2))
    pooled = last(vectors).numpy()
    cut = np.concatenate([last(vectors[i : i + 1, :n]).numpy() for i, n in enumerate(LENGTHS)])
    np.testing.assert_allclose(pooled, cut, atol=1e-6)


def test_global_average_pooling_averages_the_real_steps():
    ids = _padded_ids()
    vectors = keras.layers.Embedding(9, 3, mask_zero=True)(ids)
    pooled = keras.layers.GlobalAveragePooling1D()(vectors)
    expected = [vectors.numpy()[i, :n].mean(0) for i, n in enumerate(LENGTHS)]
    np.testing.assert_allclose(pooled.numpy(), expected, rtol=1e-6)
    assert getattr(pooled, "_keras_mask", None) is None


def test_multi_head_attention_takes_the_query_and_value_masks_from_the_tensors():
    ids = _padded_ids()
    vectors = keras.layers.Embedding(9, 4, mask_zero=True)(ids)
    layer = keras.layers.MultiHeadAttention(num_heads=2, key_dim=2)
    out = layer(vectors, vectors)
    np.testing.assert_array_equal(out._keras_mask.numpy(), ids != 0)
    keep = ids != 0
    explicit = layer(
        ft.constant(vectors.numpy()),
        ft.constant(vectors.numpy()),
        attention_mask=keep[:, :, None] & keep[:, None, :],
    )
    np.testing.assert_allclose(out.numpy(), explicit.numpy(), atol=1e-6)


def test_time_distributed_passes_the_mask_through():
    ids = _padded_ids()
    vectors = keras.layers.Embedding(9, 4, mask_zero=True)(ids)
    out = keras.layers.TimeDistributed(keras.layers.Dense(2))(vectors)
    np.testing.assert_array_equal(out._keras_mask.numpy(), ids != 0)


def _classifier(steps, layers=None):
    layers = layers or [
        keras.layers.Embedding(9, 4, mask_zero=True),
        keras.layers.LSTM(3, return_sequences=True),
        keras.layers.GRU(3),
        keras.layers.Dense(1),
    ]
    return keras.Sequential([keras.Input((steps,), dtype="int32"), *layers]), layers


def test_sequential_and_functional_models_carry_the_mask_and_ignore_more_padding():
    model, layers = _classifier(5)
    wider, _ = _classifier(8, layers)
    ids = _padded_ids()
    more = np.concatenate([ids, np.zeros((4, 3), "int32")], 1)
    np.testing.assert_allclose(
        model.predict(ids, verbose=0), wider.predict(more, verbose=0), atol=1e-6
    )
    inputs = keras.Input((None,), dtype="int32")
    h = layers[0](inputs)
    outputs = layers[3](layers[2](layers[1](h)))
    functional = keras.Model(inputs, outputs)
    np.testing.assert_allclose(functional(more).numpy(), model(ids).numpy(), atol=1e-6)


def test_a_model_called_with_mask_puts_it_on_its_inputs():
    x = np.random.default_rng(0).random((4, 5, 3)).astype("float32")
    keep = _padded_ids() != 0
    inputs = keras.Input((5, 3))
    model = keras.Model(inputs, keras.layers.LSTM(2)(inputs))
    cut = np.concatenate([model.layers[1](x[i : i + 1, :n]).numpy() for i, n in enumerate(LENGTHS)])
    # Keras 3 warns that the model itself (not its layers) does not support masking.
    with pytest.warns(UserWarning, match="Functional"):
        np.testing.assert_allclose(model(x, mask=keep).numpy(), cut, atol=1e-6)
    seq = keras.Sequential([keras.layers.LSTM(2)])
    seq.build((None, 5, 3))
    seq.set_weights(model.get_weights())
    with pytest.warns(UserWarning, match="Sequential"):
        np.testing.assert_allclose(seq(x, mask=keep).numpy(), cut, atol=1e-6)


class _Subclassed(keras.Model):
    def __init__(self):
        super().__init__()
        self.embed = keras.layers.Embedding(9, 3, mask_zero=True)
        self.rnn = keras.layers.GRU(2)

    def call(self, ids):
        vectors = self.embed(ids)
        return self.rnn(vectors, mask=self.embed.compute_mask(ids))


def test_a_subclassed_model_passes_masks_by_hand_or_by_tensor():
    model = _Subclassed()
    ids = _padded_ids()
    by_hand = model(ids).numpy()
    by_tensor = model.rnn(model.embed(ids)).numpy()
    np.testing.assert_allclose(by_hand, by_tensor, atol=1e-7)
    unmasked = model.rnn(model.embed(ids), mask=np.ones_like(ids, bool)).numpy()
    assert np.abs(unmasked - by_hand).max() > 1e-4  # the mask did something


def test_losses_and_metrics_count_only_the_unmasked_steps():
    ids = _padded_ids()
    labels = np.random.default_rng(2).integers(0, 3, ids.shape)
    inputs = keras.Input((5,), dtype="int32")
    h = keras.layers.Embedding(9, 4, mask_zero=True)(inputs)
    h = keras.layers.LSTM(4, return_sequences=True)(h)
    model = keras.Model(inputs, keras.layers.Dense(3, activation="softmax")(h))
    _set_weights(model)
    probs = model.predict(ids, verbose=0)
    keep = ids != 0
    picked = np.take_along_axis(probs, labels[..., None], -1)[..., 0]
    expected_loss = -np.log(picked)[keep].mean()
    expected_accuracy = (probs.argmax(-1) == labels)[keep].mean()
    for loss, metric in [
        ("sparse_categorical_crossentropy", "accuracy"),
        (keras.losses.SparseCategoricalCrossentropy(), keras.metrics.SparseCategoricalAccuracy()),
    ]:
        model.compile(loss=loss, metrics=[metric])
        result = model.evaluate(ids, labels, verbose=0, return_dict=True)
        np.testing.assert_allclose(result["loss"], expected_loss, rtol=1e-5)
        accuracy = [v for k, v in result.items() if k != "loss"][0]
        np.testing.assert_allclose(accuracy, expected_accuracy, rtol=1e-6)
    history = model.fit(ids, labels, epochs=3, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_no_warning_without_masks():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        keras.layers.Flatten()(keras.layers.Dense(2)(np.ones((2, 3, 4), "float32")))


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="needs TensorFlow")
def test_masked_models_match_keras():
    import tensorflow as tf

    ids = _padded_ids()
    labels = np.random.default_rng(2).integers(0, 3, ids.shape)

    def build(lib):
        k = lib.keras
        inputs = k.Input((5,), dtype="int32")
        h = k.layers.Embedding(9, 4, mask_zero=True)(inputs)
        h = k.layers.Bidirectional(k.layers.LSTM(3, return_sequences=True))(h)
        h = k.layers.MultiHeadAttention(num_heads=2, key_dim=2)(h, h)
        h = k.layers.GroupQueryAttention(2, num_query_heads=2, num_key_value_heads=1)(h, h)
        seq = k.layers.Dense(3, activation="softmax")(h)
        pooled = k.layers.GlobalAveragePooling1D()(h)
        model = k.Model(inputs, [seq, k.layers.Dense(1)(k.layers.GRU(2)(h)), pooled])
        _set_weights(model)
        return model

    ours, theirs = build(ft), build(tf)
    for a, b in zip(ours(ids), theirs(ids), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-5)
    single_ours = keras.Model(ours.inputs, ours.outputs[0])
    single_theirs = tf.keras.Model(theirs.inputs, theirs.outputs[0])
    for model in (single_ours, single_theirs):
        model.compile(loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    got = single_ours.evaluate(ids, labels, verbose=0, return_dict=True)
    want = single_theirs.evaluate(ids, labels, verbose=0, return_dict=True)
    for key, value in want.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-5)


def test_merging_layers_combine_the_masks_as_keras_3():
    ids = _padded_ids()
    short = ids.copy()
    short[:, 2:] = 0
    embed = keras.layers.Embedding(9, 2, mask_zero=True)
    a, b = embed(ids), embed(short)
    np.testing.assert_array_equal(keras.layers.Add()([a, b])._keras_mask.numpy(), ids != 0)
    np.testing.assert_array_equal(
        keras.layers.Concatenate(axis=1)([a, b])._keras_mask.numpy(),
        np.concatenate([ids != 0, short != 0], 1),
    )
    # Concatenating features: a step is kept where any input keeps it; an unmasked input keeps
    # every step.
    unmasked = ft.ones([4, 5, 3])
    joined = keras.layers.Concatenate()([a, unmasked])
    np.testing.assert_array_equal(joined._keras_mask.numpy(), np.ones_like(ids, bool))
    assert getattr(keras.layers.Add()([a, unmasked[..., :2]]), "_keras_mask", None) is None
    assert getattr(keras.layers.Dot(axes=2)([a, b]), "_keras_mask", None) is None


def test_lambda_mask_argument():
    ids = _padded_ids()
    h = keras.layers.Embedding(9, 2, mask_zero=True)(ids)
    shifted = keras.layers.Lambda(lambda x: x + 1.0, mask=lambda x, m: ft.logical_not(m))(h)
    np.testing.assert_array_equal(shifted._keras_mask.numpy(), ids == 0)
    seen = []
    layer = keras.layers.Lambda(lambda x, mask=None: seen.append(mask) or x * 2.0)
    with pytest.warns(UserWarning, match="does not support masking"):
        out = layer(h)
    np.testing.assert_array_equal(seen[0].numpy(), ids != 0)
    assert getattr(out, "_keras_mask", None) is None
