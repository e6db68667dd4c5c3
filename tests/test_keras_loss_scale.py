"""``keras.optimizers.LossScaleOptimizer`` and ``keras.mixed_precision``: the dynamic loss
scale's rule step by step (the values TF 2.21 gives for the same steps), its configuration,
``fit``'s loss scaling, and the mixed_float16 policy; compared with TensorFlow where it is
installed."""

import importlib.util

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras.layers import layer_utils

keras = ft.keras
HAS_TF = importlib.util.find_spec("tensorflow") is not None


@pytest.fixture
def mixed_policy():
    # Restored to "none set" (not to "float32", which would stop the policy following
    # `set_floatx` in the tests that run after these).
    saved = layer_utils._GLOBAL_POLICY[0]
    keras.mixed_precision.set_global_policy("mixed_float16")
    yield
    layer_utils._GLOBAL_POLICY[0] = saved


def test_the_scale_halves_on_a_non_finite_step_and_doubles_after_the_growth_steps():
    v = ft.Variable([1.0, 2.0])
    opt = keras.optimizers.LossScaleOptimizer(
        keras.optimizers.SGD(0.1), initial_scale=8.0, dynamic_growth_steps=2
    )
    assert float(opt.scale_loss(ft.constant(2.0))) == 16.0  # the initial scale, unbuilt
    states = []
    for grad in ([8.0, 16.0], [8.0, 16.0], [np.inf, 16.0], [8.0, np.nan], [8.0, 16.0]):
        opt.apply([ft.constant(grad)], [v])
        states.append(
            (
                v.numpy().tolist(),
                float(opt.dynamic_scale.numpy()),
                int(opt.step_counter.numpy()),
                int(opt.iterations.numpy()),
            )
        )
    # TF 2.21 (Keras 3.13), the same five steps: unscaled by 8, then by 16 after two finite
    # steps; each non-finite step is skipped and halves the scale.
    expected = [
        ([0.9, 1.8], 8.0, 1, 1),
        ([0.8, 1.6], 16.0, 0, 2),
        ([0.8, 1.6], 8.0, 0, 2),
        ([0.8, 1.6], 4.0, 0, 2),
        ([0.6, 1.2], 4.0, 1, 3),
    ]
    for (values, *rest), (want_values, *want_rest) in zip(states, expected, strict=True):
        np.testing.assert_allclose(values, want_values, rtol=1e-6)
        assert rest == want_rest
    assert float(opt.scale_loss(ft.constant(2.0))) == 8.0


def test_variables_learning_rate_and_config_follow_keras():
    inner = keras.optimizers.Adam(0.01)
    opt = keras.optimizers.LossScaleOptimizer(inner, dynamic_growth_steps=10)
    opt.build([ft.Variable([1.0])])
    names = [str(v.name).split("/")[-1].split(":")[0] for v in opt.variables]
    assert names[:4] == ["iteration", "learning_rate", "step_counter", "dynamic_scale"]
    assert len(opt.variables) == 4 + len(inner.variables)
    assert opt.iterations is inner.iterations
    opt.learning_rate = 0.5
    assert float(inner.learning_rate) == 0.5
    config = opt.get_config()
    assert (config["initial_scale"], config["dynamic_growth_steps"]) == (2.0**15, 10)
    assert config["inner_optimizer"]["class_name"] == "Adam"
    copy = keras.optimizers.LossScaleOptimizer.from_config(config)
    assert isinstance(copy.inner_optimizer, keras.optimizers.Adam)
    assert float(copy.inner_optimizer.learning_rate) == 0.5
    restored = keras.optimizers.deserialize(keras.optimizers.serialize(opt))
    assert isinstance(restored, keras.optimizers.LossScaleOptimizer)
    assert keras.mixed_precision.LossScaleOptimizer is keras.optimizers.LossScaleOptimizer


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dynamic": False}, "no longer supports `dynamic=False`"),
        ({"clipnorm": 1.0}, "does not support `clipnorm`"),
        ({"loss_scale_factor": 2.0}, "does not support `loss_scale_factor`"),
        ({"beta_1": 0.5}, "does not support arguments: `beta_1`"),
    ],
)
def test_arguments_of_the_inner_optimizer_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(), **kwargs)


def test_an_inner_optimizer_is_required():
    with pytest.raises(TypeError, match="inner_optimizer"):
        keras.optimizers.LossScaleOptimizer("sgd")


def _data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(64, 8)).astype("float32"), rng.integers(0, 3, 64)


def _model(weights=None):
    model = keras.Sequential(
        [
            keras.Input((8,)),
            keras.layers.Dense(16, activation="relu"),
            keras.layers.Dense(3),
            keras.layers.Activation("softmax", dtype="float32"),
        ]
    )
    if weights is not None:
        model.set_weights(weights)
    return model


def _fit(model, optimizer):
    x, y = _data()
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy")
    history = model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
    return history.history["loss"]


def test_fit_scales_the_loss_by_the_optimizers_factor():
    # loss_scale_factor: the loss is multiplied before the gradient and the gradients divided
    # after it, so the trajectory is the plain one (up to rounding).
    weights = _model().get_weights()
    plain = _fit(_model(weights), keras.optimizers.SGD(0.1))
    factor = _model(weights)
    scaled = _fit(factor, keras.optimizers.SGD(0.1, loss_scale_factor=1024.0))
    np.testing.assert_allclose(scaled, plain, rtol=1e-5)


def test_mixed_float16_computes_in_float16_and_wraps_the_optimizer(mixed_policy):
    weights = _model().get_weights()
    model = _model(weights)
    dense = model.layers[0]
    assert (dense.compute_dtype, dense.variable_dtype) == ("float16", "float32")
    losses = _fit(model, keras.optimizers.SGD(0.1))
    assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
    assert model.optimizer.name == "loss_scale_optimizer"
    assert float(model.optimizer.dynamic_scale.numpy()) == 2.0**15
    assert int(model.optimizer.iterations.numpy()) == 8
    keras.mixed_precision.set_global_policy("float32")
    reference = _fit(_model(weights), keras.optimizers.SGD(0.1))
    # The same training in float32: float16's rounding (about 1e-3) apart.
    np.testing.assert_allclose(losses, reference, rtol=1e-2)


def test_the_global_policy_takes_names_and_policies_only():
    assert keras.mixed_precision.global_policy() == keras.mixed_precision.Policy("float32")
    with pytest.raises(ValueError, match="Invalid `policy` argument|invalid `policy` argument"):
        keras.mixed_precision.set_global_policy(None)
    with pytest.raises(ValueError, match="float dtype"):
        keras.mixed_precision.set_global_policy("int32")


@pytest.mark.skipif(not HAS_TF, reason="TensorFlow is not installed")
def test_mixed_float16_fit_matches_tensorflow(mixed_policy):
    import tensorflow as tf

    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        reference = tf.keras.Sequential(
            [
                tf.keras.Input((8,)),
                tf.keras.layers.Dense(16, activation="relu"),
                tf.keras.layers.Dense(3),
                tf.keras.layers.Activation("softmax", dtype="float32"),
            ]
        )
        weights = [np.asarray(w) for w in reference.get_weights()]
        x, y = _data()
        reference.compile(
            optimizer=tf.keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy"
        )
        want = reference.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    got = _fit(_model(weights), keras.optimizers.SGD(0.1))
    np.testing.assert_allclose(got, want.history["loss"], rtol=2e-3)
