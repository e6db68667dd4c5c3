"""Keras model features: functional subclassing, the serializable registry, compile options."""

import warnings

import numpy as np
import pytest

import ferrotape as tf

keras = tf.keras


class _CustomStep(keras.Model):
    """The keras.io "customizing what happens in fit" model: its own train_step."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        grads = tape.gradient(loss, self.trainable_variables)
        # Written as the keras.io guide writes it.
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))  # noqa: B905
        self.steps_seen = getattr(self, "steps_seen", 0) + 1
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def _data():
    rng = np.random.default_rng(0)
    return rng.random((64, 4)).astype("float32"), rng.random((64, 1)).astype("float32")


def test_subclass_built_functionally_runs_its_train_step():
    inputs = keras.Input(shape=(4,))
    model = _CustomStep(inputs, keras.layers.Dense(1)(inputs))
    assert isinstance(model, _CustomStep) and isinstance(model, keras.Model)
    assert type(model).__name__ == "_CustomStep"
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    x, y = _data()
    history = model.fit(x, y, batch_size=16, epochs=3, verbose=0)
    # The step is traced once (one batch shape), so its Python side effect ran once, as with
    # Keras on TensorFlow; the replays stepped the optimizer on every batch.
    assert model.steps_seen == 1
    assert int(model.optimizer.iterations.numpy()) == 12
    assert history.history["loss"][-1] < history.history["loss"][0]
    # The model's own forward is the functional graph: a Dense on the inputs.
    kernel, bias = model.layers[-1].get_weights()
    # float32 sums in another order: an output near 0 needs an absolute tolerance too.
    np.testing.assert_allclose(model.predict(x, verbose=0), x @ kernel + bias, rtol=1e-5, atol=1e-6)


def test_subclass_with_own_init_forwards_inputs_outputs():
    class WithInit(keras.Model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.extra = 5

    inputs = keras.Input(shape=(3,))
    model = WithInit(inputs=inputs, outputs=keras.layers.Dense(2)(inputs), name="w")
    assert model.extra == 5 and model.name == "w"
    assert tuple(model(np.ones((2, 3), "float32")).shape) == (2, 2)
    # The same class still works subclass-style, and its variant class is reused.
    again = WithInit(inputs, keras.layers.Dense(1)(inputs))
    assert type(again) is type(model)


def test_subclass_without_inputs_is_still_a_plain_model():
    class Plain(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    model = Plain()
    assert type(model) is Plain
    assert tuple(model(np.ones((1, 3), "float32")).shape) == (1, 2)


@pytest.mark.parametrize("jit_compile", [True, False, "auto"])
def test_compile_accepts_jit_compile_without_warning(jit_compile):
    inputs = keras.Input(shape=(4,))
    model = keras.Model(inputs, keras.layers.Dense(1)(inputs))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.compile(optimizer="adam", loss="mse", jit_compile=jit_compile)
        model.fit(*_data(), epochs=1, verbose=0)


def test_register_keras_serializable_round_trip():
    @keras.saving.register_keras_serializable(package="Tests")
    class Scale(keras.layers.Layer):
        def __init__(self, factor=2.0, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def call(self, x):
            return x * self.factor

        def get_config(self):
            return {**super().get_config(), "factor": self.factor}

    assert keras.saving.get_registered_name(Scale) == "Tests>Scale"
    assert keras.saving.get_registered_object("Tests>Scale") is Scale
    data = keras.saving.serialize_keras_object(Scale(3.0, name="s"))
    assert data["registered_name"] == "Tests>Scale" and data["config"]["factor"] == 3.0
    back = keras.saving.deserialize_keras_object(data)
    assert type(back) is Scale and back.factor == 3.0 and back.name == "s"
    np.testing.assert_allclose(back(np.ones(2, "float32")).numpy(), [3.0, 3.0])


def test_utils_alias_and_function_registration():
    assert keras.utils.register_keras_serializable is keras.saving.register_keras_serializable

    @keras.utils.register_keras_serializable(package="Tests", name="double")
    def double(x):
        return x * 2

    assert keras.saving.serialize_keras_object(double) == "Tests>double"
    assert keras.saving.deserialize_keras_object("Tests>double") is double


def test_register_rejects_class_without_get_config():
    class NoConfig:
        pass

    with pytest.raises(ValueError, match="get_config"):
        keras.saving.register_keras_serializable()(NoConfig)


def test_unknown_class_names_the_fix():
    with pytest.raises(TypeError, match="register_keras_serializable"):
        keras.saving.deserialize_keras_object({"class_name": "Nope", "config": {}})


def test_custom_object_scope_resolves_unregistered_class():
    class Local(keras.layers.Layer):
        pass

    data = {"class_name": "Local", "config": {"name": "loc"}, "registered_name": None}
    with keras.saving.custom_object_scope({"Local": Local}):
        assert type(keras.saving.deserialize_keras_object(data)) is Local
    with pytest.raises(TypeError):
        keras.saving.deserialize_keras_object(data)


_LAYERS = [
    lambda L: L.Dense(3, activation="relu", use_bias=False),
    lambda L: L.Dropout(0.25),
    lambda L: L.Conv2D(4, 3, strides=2, padding="same"),
    lambda L: L.LayerNormalization(epsilon=1e-5),
    lambda L: L.BatchNormalization(momentum=0.9),
    lambda L: L.Embedding(10, 4),
    lambda L: L.Flatten(),
    lambda L: L.LeakyReLU(negative_slope=0.2),
    lambda L: L.Reshape((2, 3)),
]


@pytest.mark.parametrize("make", _LAYERS)
def test_builtin_layer_config_round_trip(make):
    layer = make(keras.layers)
    data = keras.saving.serialize_keras_object(layer)
    assert data["module"] == "keras.layers"
    back = keras.saving.deserialize_keras_object(data)
    assert type(back) is type(layer)
    assert back.get_config() == layer.get_config()
    assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()


def test_subclass_with_positional_constructor_arguments_is_not_functional():
    # Keras 3 decides by what reaches Model.__init__, not by the subclass's own arguments:
    # ActorCritic(2, 16) (the TF actor-critic tutorial) is a plain subclassed model.
    class ActorCritic(keras.Model):
        def __init__(self, num_actions, num_hidden):
            super().__init__()
            self.common = keras.layers.Dense(num_hidden, activation="relu")
            self.actor = keras.layers.Dense(num_actions)
            self.critic = keras.layers.Dense(1)

        def call(self, inputs):
            x = self.common(inputs)
            return self.actor(x), self.critic(x)

    model = ActorCritic(2, 16)
    assert type(model) is ActorCritic
    logits, value = model(np.ones((3, 4), "float32"))
    assert tuple(logits.shape) == (3, 2) and tuple(value.shape) == (3, 1)
    with pytest.raises(TypeError, match="positional arguments"):
        keras.Model(1)


def test_functional_layers_and_weights_follow_keras_depth_order():
    # A residual block with a projection shortcut: Keras 3 orders layers by depth (inputs'
    # side first), ties in the order the walk back from the outputs meets them, so the
    # shortcut's conv comes before the main branch's last BatchNormalization. set_weights
    # from a Keras model's get_weights() relies on this order.
    layers = keras.layers
    inputs = keras.Input(shape=(6, 6, 2), name="in")
    h = layers.Conv2D(4, 3, padding="same", name="main_conv1")(inputs)
    h = layers.BatchNormalization(name="main_bn1")(h)
    h = layers.Conv2D(4, 3, padding="same", name="main_conv2")(h)
    h = layers.BatchNormalization(name="main_bn2")(h)
    shortcut = layers.Conv2D(4, 1, name="short_conv")(inputs)
    shortcut = layers.BatchNormalization(name="short_bn")(shortcut)
    outputs = layers.add([h, shortcut], name="sum")
    model = keras.Model(inputs, outputs)
    assert [layer.name for layer in model.layers] == [
        "in",
        "main_conv1",
        "main_bn1",
        "main_conv2",
        "short_conv",
        "main_bn2",
        "short_bn",
        "sum",
    ]
    assert [tuple(w.shape) for w in model.get_weights()][6:9] == [(3, 3, 4, 4), (4,), (1, 1, 2, 4)]


def test_compile_dicts_keyed_by_output_names_for_list_outputs():
    # The functional guide's multi-output model: outputs given as a list, losses, loss weights
    # and metrics as dicts keyed by the output layers' names, targets as a dict.
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 3)).astype("float32")
    score_y = rng.normal(size=(8, 1)).astype("float32")
    class_y = np.array([0, 1, 2, 1, 0, 2, 2, 1])
    inputs = keras.Input(shape=(3,))
    score = keras.layers.Dense(1, name="score")(inputs)
    kind = keras.layers.Dense(3, activation="softmax", name="kind")(inputs)
    model = keras.Model(inputs, [score, kind])
    assert model.output_names == ["score", "kind"]
    model.compile(
        optimizer="sgd",
        loss={"kind": "sparse_categorical_crossentropy", "score": "mse"},
        loss_weights={"score": 2.0, "kind": 0.5},
        metrics={"kind": ["accuracy"]},
    )
    logs = model.evaluate(
        x, {"score": score_y, "kind": class_y}, batch_size=8, verbose=0, return_dict=True
    )
    predicted_score, predicted_kind = model.predict(x, verbose=0)
    mse = np.mean((predicted_score - score_y) ** 2)
    cross_entropy = -np.mean(np.log(predicted_kind[np.arange(8), class_y]))
    accuracy = np.mean(np.argmax(predicted_kind, axis=1) == class_y)
    assert sorted(logs) == ["kind_accuracy", "kind_loss", "loss", "score_loss"]
    np.testing.assert_allclose(logs["score_loss"], mse, rtol=1e-5)
    np.testing.assert_allclose(logs["kind_loss"], cross_entropy, rtol=1e-5)
    np.testing.assert_allclose(logs["loss"], 2.0 * mse + 0.5 * cross_entropy, rtol=1e-5)
    np.testing.assert_allclose(logs["kind_accuracy"], accuracy)
    history = model.fit(x, [score_y, class_y], epochs=2, batch_size=4, verbose=0)
    assert sorted(history.history) == ["kind_accuracy", "kind_loss", "loss", "score_loss"]
    with pytest.raises(ValueError, match="'other' is not one of the model's outputs"):
        model.compile(optimizer="sgd", loss={"other": "mse", "kind": "mse"})
        model.evaluate(x, [score_y, class_y], verbose=0)


def test_functional_inputs_by_name_and_rank_adjustment():
    """Keras 3: a dict fed to a model built on a list of Inputs is read by the Inputs' names;
    a batch one axis of size 1 short of (or beyond) an Input's shape is expanded (squeezed)."""
    age = tf.keras.Input(shape=(1,), name="age")
    city = tf.keras.Input(shape=(2,), name="city")
    out = tf.keras.layers.concatenate([tf.keras.layers.Rescaling(10.0)(age), city])
    model = tf.keras.Model([age, city], out)
    features = {"city": np.array([[1.0, 2.0], [3.0, 4.0]], "float32"), "age": np.array([5.0, 6.0])}
    # "age" is a batch of scalars, shape (2,): it becomes (2, 1).
    assert model(features).numpy().tolist() == [[50.0, 1.0, 2.0], [60.0, 3.0, 4.0]]
    squeezed = model([np.ones((2, 1)), np.ones((2, 2, 1))])  # (2, 2, 1) -> (2, 2)
    assert squeezed.shape == (2, 3)
    with pytest.raises(ValueError, match=r"no entry for the input\(s\) named \['age'\]"):
        model({"city": features["city"]})
    with pytest.raises(ValueError, match="Invalid input shape"):
        model([np.ones((2, 1)), np.ones((2, 2, 3))])
    # fit reads a dataset of feature dicts the same way.
    model.compile(loss="mse")
    ds = tf.data.Dataset.from_tensor_slices((features, np.zeros((2, 3), "float32"))).batch(2)
    assert model.evaluate(ds, verbose=0) == pytest.approx(
        np.mean(np.array([[50.0, 1, 2], [60, 3, 4]]) ** 2)
    )
