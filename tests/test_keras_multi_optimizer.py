"""``OptimizerMap`` and ``MultiOptimizer``: variables routed by path to their optimizers, the
same updates as the inner optimizers applied alone, state and config, training a model, and
Keras's results where TensorFlow is installed."""

import numpy as np
import pytest

import ferrotape as ft

opts = ft.keras.optimizers


def test_map_lookup_rules():
    adam, sgd, rms = opts.Adam(), opts.SGD(), opts.RMSprop()
    mapping = opts.OptimizerMap(rms)
    mapping["encoder/layer_0/dense"] = adam
    mapping["encoder/.*"] = sgd
    mapping["decoder"] = adam
    assert mapping["decoder"] is adam and mapping["encoder/layer_0/dense"] is adam
    assert mapping["encoder/layer_0/attention"] is sgd
    assert mapping["decoder/layer_0/dense"] is rms  # "decoder" must match the whole path
    mapping["enc.*"] = opts.SGD()
    with pytest.raises(ValueError, match="Multiple optimizers"):
        mapping["encoder/x"]
    with pytest.raises(ValueError, match="already exists"):
        mapping["decoder"] = sgd
    with pytest.raises(ValueError, match="LossScaleOptimizer"):
        mapping["other"] = opts.LossScaleOptimizer(opts.SGD())
    with pytest.raises(TypeError, match="default_optimizer"):
        opts.OptimizerMap("sgd")


def _variables():
    rng = np.random.default_rng(0)
    return [
        ft.Variable(rng.normal(size=(3, 2)), name="encoder/kernel"),
        ft.Variable(rng.normal(size=(2,)), name="encoder/bias"),
        ft.Variable(rng.normal(size=(2, 1)), name="head/kernel"),
    ]


def test_updates_equal_the_inner_optimizers_alone():
    grads = [np.full((3, 2), 0.5), np.full((2,), -1.0), np.full((2, 1), 2.0)]
    routed = _variables()
    multi = opts.MultiOptimizer(opts.OptimizerMap(opts.SGD(0.1), {"encoder/.*": opts.Adam(0.01)}))
    alone = _variables()
    adam, sgd = opts.Adam(0.01), opts.SGD(0.1)
    for _ in range(3):
        multi.apply_gradients(zip([ft.constant(g) for g in grads], routed, strict=True))
        adam.apply_gradients(zip([ft.constant(g) for g in grads[:2]], alone[:2], strict=True))
        sgd.apply_gradients([(ft.constant(grads[2]), alone[2])])
    for a, b in zip(routed, alone, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    assert int(multi.iterations.numpy()) == 3
    assert [int(o.iterations.numpy()) for o in multi.optimizers] == [3, 3]
    # Its own iteration and learning rate, then Adam's and SGD's variables.
    assert len(multi.variables) == 2 + len(adam.variables) + len(sgd.variables)
    with pytest.raises(AttributeError, match="sub-optimizers"):
        multi.learning_rate  # noqa: B018 - the property raises
    weights = multi.get_weights()
    multi.set_weights([w * 0 for w in weights])
    assert all(not np.any(w) for w in multi.get_weights())


def test_a_callable_map_config_round_trip_and_fit():
    def pick(variable):
        return fast if "head" in variable.name else slow

    fast, slow = opts.SGD(0.5), opts.SGD(0.0)
    routed = _variables()
    multi = opts.MultiOptimizer(pick)
    before = [v.numpy() for v in routed]
    multi.apply_gradients([(ft.ones_like(v), v) for v in routed])
    np.testing.assert_array_equal(routed[0].numpy(), before[0])  # learning rate 0
    np.testing.assert_allclose(routed[2].numpy(), before[2] - 0.5)

    mapped = opts.MultiOptimizer(opts.OptimizerMap(opts.Adam(0.02), {"head/.*": opts.SGD(0.1)}))
    again = opts.deserialize(opts.serialize(mapped))
    assert isinstance(again, opts.MultiOptimizer)
    assert [type(o).__name__ for o in again.optimizers] == ["SGD", "Adam"]

    keras = ft.keras
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input((4,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1)]
    )
    model.compile(optimizer=mapped, loss="mse")
    x = np.random.default_rng(1).normal(size=(64, 4)).astype("float32")
    history = model.fit(x, x.sum(axis=1, keepdims=True), epochs=15, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]


def test_matches_keras():
    keras = pytest.importorskip("keras", reason="Keras 3 (with TensorFlow) is not installed")
    import tensorflow as tf

    def run(lib, variable, constant):
        optimizers = lib.optimizers
        multi = optimizers.MultiOptimizer(
            optimizers.OptimizerMap(optimizers.SGD(0.1), {"encoder/.*": optimizers.Adam(0.05)})
        )
        rng = np.random.default_rng(0)
        values = [rng.normal(size=s).astype("float32") for s in [(3, 2), (2,), (2, 1)]]
        names = ["encoder/kernel", "encoder/bias", "head/kernel"]
        variables = [variable(v, n) for v, n in zip(values, names, strict=True)]
        for step in range(3):
            grads = [constant(np.sin(v * (step + 1))) for v in values]
            multi.apply_gradients(zip(grads, variables, strict=True))
        return [np.asarray(v.numpy()) for v in variables]

    def keras_variable(value, name):
        # Keras 3 builds a path from the name's last part under the enclosing scope.
        with keras.name_scope(name.split("/")[0]):
            return keras.Variable(value, name=name.split("/")[1])

    ours = run(ft.keras, lambda v, n: ft.Variable(v, name=n), ft.constant)
    theirs = run(keras, keras_variable, tf.constant)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
