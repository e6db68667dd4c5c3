"""Mixed precision in the layers (Keras 3's ``"mixed_float16"`` and ``"mixed_bfloat16"``
policies): float32 variables, inputs cast to the compute dtype, variables read in it inside the
layer's call (the autocast scope), outputs in it; the normalization layers compute their
statistics in float32. Checked per layer (output dtypes, values against the float32 computation
with the same weights, gradients reaching the float32 variables), for the scope's rules, and
for ``fit`` with the ``LossScaleOptimizer``; compared with Keras on TensorFlow where it is
installed (``test_keras_loss_scale.py`` checks the loss scale's own rules)."""

import copy
import importlib.util
import pickle

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras.layers import layer_utils

keras = ft.keras
layers = keras.layers
HAS_TF = importlib.util.find_spec("tensorflow") is not None
POLICIES = ["mixed_float16", "mixed_bfloat16"]
COMPUTE = {"mixed_float16": "float16", "mixed_bfloat16": "bfloat16"}
# How far a half-precision computation may stray from float32's, relative to the output's
# scale: float16 keeps 11 significant bits, bfloat16 8.
TOLERANCE = {"float16": 1e-2, "bfloat16": 5e-2}


@pytest.fixture(params=POLICIES)
def policy(request):
    # Restored to "none set" (not to "float32", which would stop the policy following
    # `set_floatx` in the tests that run after these).
    saved = layer_utils._GLOBAL_POLICY[0]
    keras.mixed_precision.set_global_policy(request.param)
    yield request.param
    layer_utils._GLOBAL_POLICY[0] = saved


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


def _attend(layer, x):
    return layer([x, x[:, :3]])


def _self_attend(layer, x):
    return layer(x, x)


# name -> (make the layer, input, how to call it): every layer with a native form (Dense, the
# 2-D convolutions, BatchNormalization, LayerNormalization, Dropout, Activation, Embedding), and
# the ones written in ops that read weights (other convolutions, recurrent, attention).
LAYERS = {
    "Dense": (lambda L: L.Dense(3, activation="relu"), _rand(2, 4), None),
    "Dense_rank3": (lambda L: L.Dense(3), _rand(2, 5, 4), None),
    "EinsumDense": (lambda L: L.EinsumDense("ab,bc->ac", 3, bias_axes="c"), _rand(2, 4), None),
    "Conv1D": (lambda L: L.Conv1D(2, 3), _rand(2, 6, 3), None),
    "Conv2D": (
        lambda L: L.Conv2D(2, 3, padding="same", activation="tanh"),
        _rand(2, 6, 6, 3),
        None,
    ),
    "Conv3D": (lambda L: L.Conv3D(2, 2), _rand(1, 4, 4, 4, 2), None),
    "DepthwiseConv2D": (
        lambda L: L.DepthwiseConv2D(3, depth_multiplier=2),
        _rand(2, 6, 6, 3),
        None,
    ),
    "SeparableConv2D": (lambda L: L.SeparableConv2D(2, 3), _rand(2, 6, 6, 3), None),
    "DepthwiseConv1D": (lambda L: L.DepthwiseConv1D(3), _rand(2, 6, 3), None),
    "SeparableConv1D": (lambda L: L.SeparableConv1D(2, 3), _rand(2, 6, 3), None),
    "Conv2DTranspose": (lambda L: L.Conv2DTranspose(2, 3, strides=2), _rand(2, 4, 4, 3), None),
    "BatchNormalization": (lambda L: L.BatchNormalization(), _rand(8, 3) * 4 + 1, None),
    "LayerNormalization": (lambda L: L.LayerNormalization(), _rand(4, 6) * 3 + 2, None),
    "GroupNormalization": (lambda L: L.GroupNormalization(groups=2), _rand(2, 5, 4) + 1, None),
    "SpectralNormalization": (
        lambda L: L.SpectralNormalization(L.Dense(3)),
        _rand(4, 5),
        None,
    ),
    "Dropout": (lambda L: L.Dropout(0.5), _rand(4, 3), None),
    "Activation": (lambda L: L.Activation("softmax"), _rand(4, 3), None),
    "SimpleRNN": (lambda L: L.SimpleRNN(3), _rand(2, 5, 4), None),
    "LSTM": (lambda L: L.LSTM(3, return_sequences=True), _rand(2, 5, 4), None),
    "GRU": (lambda L: L.GRU(3), _rand(2, 5, 4), None),
    "Attention": (lambda L: L.Attention(use_scale=True), _rand(2, 5, 4), _attend),
    "AdditiveAttention": (lambda L: L.AdditiveAttention(), _rand(2, 5, 4), _attend),
    "Bidirectional": (lambda L: L.Bidirectional(L.GRU(2)), _rand(2, 4, 3), None),
    "ConvLSTM2D": (lambda L: L.ConvLSTM2D(2, 3), _rand(1, 3, 5, 5, 2), None),
    "TimeDistributed": (lambda L: L.TimeDistributed(L.Dense(2)), _rand(2, 4, 3), None),
    "Conv1DTranspose": (lambda L: L.Conv1DTranspose(2, 3), _rand(2, 5, 3), None),
    "PReLU": (lambda L: L.PReLU(), _rand(2, 4), None),
    "RMSNormalization": (lambda L: L.RMSNormalization(), _rand(2, 4) + 1, None),
    "UnitNormalization": (lambda L: L.UnitNormalization(), _rand(2, 4), None),
    "MultiHeadAttention": (lambda L: L.MultiHeadAttention(2, 3), _rand(2, 5, 4), _self_attend),
}


def _run(name, layer, x, training=False):
    call = LAYERS[name][2]
    if call is not None:
        return call(layer, x)
    return layer(x, training=training)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_outputs_are_in_the_compute_dtype_and_weights_stay_float32(policy, name):
    make, x, _ = LAYERS[name]
    layer = make(layers)
    y = _run(name, layer, x, training=True)
    assert y.dtype.name == COMPUTE[policy]
    assert layer.compute_dtype == COMPUTE[policy]
    assert {w.dtype.name for w in layer.weights} <= {"float32"}


def _float32_twin(name, layer, x):
    """The same layer computing in float32, with the mixed one's weights."""
    keras.mixed_precision.set_global_policy("float32")
    twin = LAYERS[name][0](layers)
    _run(name, twin, x)
    twin.set_weights(layer.get_weights())
    return twin


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_values_and_gradients_match_the_float32_computation(policy, name):
    make, x, _ = LAYERS[name]
    layer = make(layers)
    _run(name, layer, x)
    twin = _float32_twin(name, layer, x)
    tol = TOLERANCE[COMPUTE[policy]]
    results = []
    for each in (layer, twin):
        with ft.GradientTape() as tape:
            y = ft.cast(_run(name, each, x), "float32")
            loss = ft.reduce_sum(y * ft.constant(_rand(*y.shape, seed=1)))
        grads = tape.gradient(loss, each.trainable_weights)
        results.append((y.numpy(), [None if g is None else g for g in grads]))
    (y, grads), (want, want_grads) = results
    scale = max(np.abs(want).max(), 1.0)
    np.testing.assert_allclose(y, want, rtol=tol, atol=tol * scale)
    for g, w, v in zip(grads, want_grads, layer.trainable_weights, strict=True):
        # The gradient reaches the float32 variable through the read's cast, in float32.
        assert g is not None and w is not None, v.name
        assert g.dtype.name == "float32", v.name
        g_scale = max(np.abs(w.numpy()).max(), 1.0)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=4 * tol, atol=4 * tol * g_scale)


def test_batch_normalization_keeps_float32_statistics(policy):
    layer = layers.BatchNormalization(momentum=0.5)
    # Values whose squares overflow float16 (max 65504): statistics in float32 stay finite.
    x = (_rand(16, 2) * 10 + 300).astype("float32")
    y = layer(x, training=True)
    assert y.dtype.name == COMPUTE[policy]
    assert np.isfinite(y.numpy().astype("float32")).all()
    mean, variance = layer.moving_mean.numpy(), layer.moving_variance.numpy()
    assert mean.dtype == variance.dtype == np.float32
    # The float16 input's mean (the input is cast to the compute dtype first), half-folded in.
    seen = x.astype(COMPUTE[policy] if policy == "mixed_float16" else "float32")
    np.testing.assert_allclose(mean, 0.5 * seen.astype("float64").mean(0), rtol=1e-2)
    assert (variance > 1.0).all()


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [("BatchNormalization", {}), ("LayerNormalization", {}), ("GroupNormalization", {"groups": 2})],
)
@pytest.mark.parametrize(
    ("layer_dtype", "input_dtype"), [("float64", "float32"), ("float32", "float64")]
)
def test_normalization_returns_its_compute_dtype_for_other_float_inputs(
    name, kwargs, layer_dtype, input_dtype
):
    # LayerNormalization and GroupNormalization do not autocast their inputs (Keras's
    # autocast=False): they compute in the wider dtype and return the compute dtype.
    x = LAYERS[name][1]
    layer = getattr(layers, name)(dtype=layer_dtype, **kwargs)
    y = layer(x.astype(input_dtype), training=True)
    assert y.dtype.name == layer_dtype
    same = layer(x.astype(layer_dtype), training=True)
    np.testing.assert_allclose(y.numpy(), same.numpy(), rtol=1e-5, atol=1e-5)


def test_embedding_gives_compute_dtype_rows_and_keeps_float_ids_exact(policy):
    layer = layers.Embedding(4000, 3)
    # Float ids are not autocast (Embedding's autocast is off, as Keras's): 3001 has no
    # float16 or bfloat16 of its own.
    y = layer(np.array([[3001.0, 2.0]], dtype="float32"))
    assert y.dtype.name == COMPUTE[policy]
    table = layer.embeddings.numpy()
    np.testing.assert_array_equal(y.numpy(), table[[[3001, 2]]].astype(COMPUTE[policy]))
    with ft.GradientTape() as tape:
        loss = ft.reduce_sum(ft.cast(layer(np.array([1, 1, 3])), "float32"))
    (grad,) = tape.gradient(loss, layer.trainable_weights)
    dense = ft.convert_to_tensor(grad).numpy()
    assert dense.dtype == np.float32
    assert dense[1].tolist() == [2.0, 2.0, 2.0] and dense[3].tolist() == [1.0, 1.0, 1.0]


class _Scaled(layers.Layer):
    """A custom layer: one weight that autocasts, one that opts out (Keras's
    ``add_weight(autocast=False)``), and a plain variable."""

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")
        self.kept = self.add_weight(shape=(), initializer="ones", autocast=False)
        self.plain = ft.Variable(1.0)

    def call(self, inputs):
        self.seen = (self.w.value().dtype.name, self.kept.value().dtype.name)
        self.seen += (self.plain.value().dtype.name,)
        return inputs * self.w


def test_the_autocast_scope_follows_keras_rules(policy):
    compute = COMPUTE[policy]
    inner = _Scaled()
    y = inner(_rand(2, 3))
    assert y.dtype.name == compute
    assert inner.seen == (compute, "float32", "float32")
    # A float32 layer inside a mixed model reads its weights as float32 (its own scope).
    exact = _Scaled(dtype="float32")
    outer = keras.Sequential([keras.Input((3,)), _Scaled(), exact])
    assert outer(_rand(2, 3)).dtype.name == "float32"
    assert exact.seen[0] == "float32"
    # Outside any layer's call nothing is cast, and the scope is closed after an error.
    assert inner.w.value().dtype.name == "float32"
    dense = layers.Dense(2)
    dense(_rand(2, 3))
    with pytest.raises(ft.errors.InvalidArgumentError, match="3 features"):
        dense(_rand(2, 5))
    assert inner.w.value().dtype.name == "float32"
    assert ft._core.keras.set_autocast_dtype(None) is None
    with pytest.raises(ValueError, match="floating dtype"):
        ft._core.keras.set_autocast_dtype("int32")


def test_copies_keep_the_autocast_marks(policy):
    for layer in (layers.LSTM(2), layers.BatchNormalization()):
        layer(_rand(2, 3, 4))
        for copied in (copy.deepcopy(layer), pickle.loads(pickle.dumps(layer))):
            assert [v._autocast for v in copied.weights] == [v._autocast for v in layer.weights]
            assert copied(_rand(2, 3, 4)).dtype.name == COMPUTE[policy]
    # add_weight's mark: BatchNormalization's weights opt out (Keras's autocast=False).
    assert {v._autocast for v in layer.weights} == {False}


def test_a_traced_step_replays_the_reads_and_their_casts(policy):
    model = keras.Sequential([keras.Input((3, 4)), layers.Dense(3), layers.GRU(2)])
    x = _rand(2, 3, 4)

    def step(x):
        with ft.GradientTape() as tape:
            y = ft.cast(model(x), "float32")
            loss = ft.reduce_sum(y * y)
        return loss, tape.gradient(loss, model.trainable_variables)

    traced = ft.function(step)
    kernel = model.layers[0].kernel
    for _ in range(3):
        (loss, grads), (want, want_grads) = traced(x), step(x)
        # The replay reads the variables' current values and casts them again.
        assert float(loss) == float(want)
        for g, w in zip(grads, want_grads, strict=True):
            assert g.dtype.name == "float32"
            np.testing.assert_array_equal(g.numpy(), w.numpy())
        kernel.assign_add(ft.fill(kernel.shape, 0.1))


class _Recording(layers.Layer):
    def call(self, inputs):
        self.seen = inputs.dtype.name
        return inputs


def test_a_layer_with_autocast_off_keeps_its_inputs_dtype(policy):
    layer = _Recording(autocast=False)
    assert layer.autocast is False
    layer(_rand(2, 3))
    assert layer.seen == "float32"
    layer.autocast = True
    layer(_rand(2, 3))
    assert layer.seen == COMPUTE[policy]


def _classifier(k):
    return k.Sequential(
        [
            k.Input((6, 6, 2)),
            k.layers.Conv2D(4, 3, activation="relu"),
            k.layers.BatchNormalization(),
            k.layers.Flatten(),
            k.layers.Dense(8, activation="relu"),
            k.layers.Dense(3),
            k.layers.Activation("softmax", dtype="float32"),
        ]
    )


def _classifier_data():
    rng = np.random.default_rng(3)
    return rng.normal(size=(32, 6, 6, 2)).astype("float32"), rng.integers(0, 3, 32)


def _sequence_model(k):
    return k.Sequential(
        [
            k.Input((5,), dtype="int32"),
            k.layers.Embedding(10, 4),
            k.layers.LSTM(4),
            k.layers.LayerNormalization(),
            k.layers.Dense(1, dtype="float32"),
        ]
    )


def _sequence_data():
    rng = np.random.default_rng(4)
    return rng.integers(0, 10, (32, 5)), rng.normal(size=(32, 1)).astype("float32")


def _regression(k):
    # Half-precision outputs: the loss casts them to float32, as Keras's losses do.
    return k.Sequential([k.Input((4,)), k.layers.Dense(8, activation="tanh"), k.layers.Dense(1)])


def _regression_data():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(32, 4)).astype("float32")
    return x, (x @ np.array([[1.0], [-2.0], [0.5], [0.0]])).astype("float32")


# name -> (model, data, loss, metric)
FITS = {
    "classifier": (_classifier, _classifier_data, "sparse_categorical_crossentropy", "accuracy"),
    "sequence": (_sequence_model, _sequence_data, "mse", "mae"),
    "regression": (_regression, _regression_data, "mse", "mae"),
}


def _fit(k, which, weights, optimizer=None):
    """Two epochs of SGD from ``weights``: the model, and its losses then metric values."""
    make, data, loss, metric = FITS[which]
    model = make(k)
    model.set_weights(weights)
    optimizer = optimizer or k.optimizers.SGD(0.05)
    model.compile(optimizer=optimizer, loss=loss, metrics=[metric])
    x, y = data()
    history = model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False).history
    return model, history["loss"] + history[metric]


def _initial_weights(which):
    keras.mixed_precision.set_global_policy("float32")
    keras.utils.set_random_seed(7)  # the same start whatever ran before
    return FITS[which][0](keras).get_weights()


@pytest.mark.parametrize("which", sorted(FITS))
def test_fit_trains_the_float32_variables_as_float32_training_does(policy, which):
    weights = _initial_weights(which)
    _, want = _fit(keras, which, weights)
    keras.mixed_precision.set_global_policy(policy)
    optimizer = keras.optimizers.SGD(0.05)
    if policy == "mixed_float16":
        # A scale small enough that no step overflows (and is skipped): the float32 steps.
        optimizer = keras.optimizers.LossScaleOptimizer(optimizer, initial_scale=2.0**7)
    model, got = _fit(keras, which, weights, optimizer)
    assert int(model.optimizer.iterations.numpy()) == 8
    assert {w.dtype.name for w in model.weights} == {"float32"}
    assert not np.array_equal(model.get_weights()[0], weights[0])  # trained
    x, _ = FITS[which][1]()
    assert model.layers[0](x[:2]).dtype.name == COMPUTE[policy]
    # The float32 training's losses, to half precision's rounding.
    np.testing.assert_allclose(got, want, rtol=3 * TOLERANCE[COMPUTE[policy]])


def test_compile_wraps_the_optimizer_for_float16_only(policy):
    weights = _initial_weights("regression")
    keras.mixed_precision.set_global_policy(policy)
    model = _regression(keras)
    model.set_weights(weights)
    model.compile(optimizer=keras.optimizers.SGD(1e-4), loss="mse")
    x, y = _regression_data()
    # Targets large enough that the first steps' gradients, scaled by 2**15, overflow float16.
    losses = model.fit(x, 100 * y, batch_size=8, epochs=2, verbose=0).history["loss"]
    assert np.isfinite(losses).all()
    if policy == "mixed_bfloat16":
        # bfloat16 has float32's range: Keras leaves the optimizer as it is.
        assert not isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
        assert int(model.optimizer.iterations.numpy()) == 8
        return
    assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
    # Each step whose scaled gradients overflowed float16 was skipped, halving the scale from
    # 2**15; the others were applied.
    skipped = 15 - np.log2(float(model.optimizer.dynamic_scale.numpy()))
    assert skipped >= 1
    assert int(model.optimizer.iterations.numpy()) + skipped == 8


# ----------------------------------------------------------------------------- against Keras


@pytest.fixture
def tf_keras(policy):
    if not HAS_TF:
        pytest.skip("TensorFlow is not installed")
    import keras as tk  # Keras 3, installed with TensorFlow

    tk.mixed_precision.set_global_policy(policy)
    yield tk
    tk.mixed_precision.set_global_policy("float32")


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_output_dtypes_match_keras(tf_keras, name):
    make, x, call = LAYERS[name]
    ours, theirs = make(layers), make(tf_keras.layers)
    got = _run(name, ours, x, training=True)
    want = call(theirs, x) if call is not None else theirs(x, training=True)
    assert got.dtype.name == want.dtype.name
    assert [w.dtype.name for w in ours.weights] == [w.dtype for w in theirs.weights]


@pytest.mark.parametrize("which", sorted(FITS))
def test_fit_losses_match_keras(tf_keras, policy, which):
    weights = [np.asarray(w) for w in FITS[which][0](tf_keras).get_weights()]
    _, want = _fit(tf_keras, which, weights)
    _, got = _fit(keras, which, weights)
    # Both compute in half precision: the same trajectory to its rounding.
    np.testing.assert_allclose(got, want, rtol=TOLERANCE[COMPUTE[policy]])


def test_traced_fit_scales_by_the_current_dynamic_scale():
    # The first traced step used to run before the LossScaleOptimizer was built and scaled the
    # loss by its initial value, a constant every replay kept: every later step overflowed and
    # was skipped. Traced and eager fits must skip the same steps.
    results, weights = [], None
    for run_eagerly in (True, False):
        keras.mixed_precision.set_global_policy("mixed_float16")
        try:
            model = _sequence_model(keras)
            # Glorot-initialised weights, the same in both fits: with them the first scaled
            # gradients overflow float16, as in the program.
            weights = weights or [w.numpy() for w in model.weights]
            model.set_weights(weights)
            model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", run_eagerly=run_eagerly)
            x, y = _sequence_data()
            history = model.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
        finally:
            keras.mixed_precision.set_global_policy("float32")
        results.append(
            (
                float(model.optimizer.dynamic_scale.numpy()),
                history.history["loss"],
                int(model.optimizer.iterations.numpy()),
            )
        )
    (eager_scale, eager_loss, eager_steps), (traced_scale, traced_loss, traced_steps) = results
    assert traced_scale == eager_scale and traced_steps == eager_steps > 0
    np.testing.assert_allclose(traced_loss, eager_loss, rtol=1e-3)
