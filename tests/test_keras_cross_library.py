"""Files move between Keras 3 (with TensorFlow) and ferrotape, both ways: a model saved by one
library as ``.keras`` or ``.weights.h5`` loads in the other, predicts the same (atol 1e-5),
keeps its optimizer state and trains on. Skipped where TensorFlow is not installed; the
round trips within ferrotape are in ``test_keras_file_formats.py``. To run it:

    pip install tensorflow-cpu
"""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
pytest.importorskip("tensorflow", reason="TensorFlow is not installed (pip install tensorflow-cpu)")
import keras  # noqa: E402 - Keras 3, installed with TensorFlow

import ferrotape as ft  # noqa: E402

if not keras.__version__.startswith("3."):
    pytest.skip(f"needs Keras 3, found {keras.__version__}", allow_module_level=True)

LIBRARIES = {"keras": keras, "ferrotape": ft.keras}
RNG = np.random.default_rng(0)


def mlp(k):
    return k.Sequential([k.Input((8,)), k.layers.Dense(16, activation="relu"), k.layers.Dense(3)])


def cnn(k):
    return k.Sequential(
        [
            k.Input((8, 8, 1)),
            k.layers.Conv2D(4, 3, padding="same", activation="relu"),
            k.layers.BatchNormalization(),
            k.layers.MaxPooling2D(),
            k.layers.Flatten(),
            k.layers.Dropout(0.25),
            k.layers.Dense(3, activation="softmax"),
        ]
    )


def functional(k):
    # A shared layer and two inputs: the layers' order (and so the weight file's groups)
    # depends on Keras's graph walk, which ferrotape must reproduce.
    a, b = k.Input((6,), name="a"), k.Input((4,), name="b")
    shared = k.layers.Dense(4, activation="tanh")
    joined = k.layers.Concatenate()([shared(a), shared(k.layers.Dense(6)(b))])
    return k.Model([a, b], k.layers.Dense(2)(joined))


MODELS = {"mlp": mlp, "cnn": cnn, "functional": functional}
DATA = {
    "mlp": (RNG.normal(size=(16, 8)), RNG.normal(size=(16, 3))),
    "cnn": (RNG.normal(size=(16, 8, 8, 1)), np.eye(3)[RNG.integers(0, 3, 16)]),
    "functional": ([RNG.normal(size=(16, 6)), RNG.normal(size=(16, 4))], RNG.normal(size=(16, 2))),
}


def data(name):
    x, y = DATA[name]
    as32 = lambda a: np.asarray(a, "float32")  # noqa: E731
    return ([as32(a) for a in x] if isinstance(x, list) else as32(x)), as32(y)


def trained(library, name):
    k = LIBRARIES[library]
    x, y = data(name)
    model = MODELS[name](k)
    model.compile(optimizer=k.optimizers.Adam(0.01), loss="mse", metrics=["mae"])
    model.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0)
    return model, x, y


def values(variables):
    return [np.asarray(v.numpy() if hasattr(v, "numpy") else v) for v in variables]


def assert_same_state(saved, loaded, x):
    np.testing.assert_allclose(
        np.asarray(loaded.predict(x, verbose=0)),
        np.asarray(saved.predict(x, verbose=0)),
        rtol=0,
        atol=1e-5,
    )
    assert [v.shape for v in values(loaded.weights)] == [v.shape for v in values(saved.weights)]
    for a, b in zip(values(loaded.weights), values(saved.weights), strict=True):
        np.testing.assert_array_equal(a, b)
    optimizer_saved, optimizer_loaded = (values(m.optimizer.variables) for m in (saved, loaded))
    assert len(optimizer_loaded) == len(optimizer_saved) == 2 + 2 * len(saved.trainable_weights)
    for a, b in zip(optimizer_loaded, optimizer_saved, strict=True):
        np.testing.assert_array_equal(a, b)


PAIRS = [("keras", "ferrotape"), ("ferrotape", "keras")]


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize(("source", "target"), PAIRS)
def test_a_keras_file_from_one_library_loads_in_the_other(name, source, target, tmp_path):
    model, x, y = trained(source, name)
    path = str(tmp_path / "model.keras")
    model.save(path)
    loaded = LIBRARIES[target].models.load_model(path)
    assert [type(layer).__name__ for layer in loaded.layers] == [
        type(layer).__name__ for layer in model.layers
    ]
    assert_same_state(model, loaded, x)
    history = loaded.fit(x, y, epochs=1, batch_size=4, verbose=0)
    assert np.isfinite(history.history["loss"][-1])
    assert int(np.asarray(loaded.optimizer.iterations.numpy())) == 12


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize(("source", "target"), PAIRS)
def test_a_weights_h5_file_from_one_library_loads_in_the_other(name, source, target, tmp_path):
    model, x, _ = trained(source, name)
    path = str(tmp_path / "model.weights.h5")
    model.save_weights(path)
    k = LIBRARIES[target]
    fresh = MODELS[name](k)
    fresh.compile(optimizer=k.optimizers.Adam(0.01), loss="mse")
    fresh.optimizer.build(fresh.trainable_variables)
    fresh.load_weights(path)
    assert_same_state(model, fresh, x)


def test_configs_ferrotape_writes_are_accepted_by_keras_layer_by_layer():
    # Each layer's config, as written into config.json, rebuilds the same layer in Keras.
    model = cnn(ft.keras)
    for layer in model.layers:
        serialized = ft.keras.saving.serialize_keras_object(layer)
        rebuilt = keras.saving.deserialize_keras_object(serialized)
        assert type(rebuilt).__name__ == type(layer).__name__
        assert rebuilt.name == layer.name


def two_stage(k):
    """A subclassed model holding layers in attributes and in a list, the same class in both
    libraries, registered under the same name."""

    @k.saving.register_keras_serializable(package="CrossLibraryTests", name="TwoStage")
    class TwoStage(k.Model):
        def __init__(self, width=4, **kwargs):
            super().__init__(**kwargs)
            self.width = width
            self.hidden = k.layers.Dense(5, activation="relu")
            self.blocks = [k.layers.Dense(width), k.layers.Dense(width)]
            self.head = k.layers.Dense(2)

        def call(self, inputs):
            x = self.hidden(inputs)
            for block in self.blocks:
                x = block(x)
            return self.head(x)

        def get_config(self):
            return {**super().get_config(), "width": self.width}

    model = TwoStage(width=3)
    model(np.zeros((1, 8), "float32"))  # Keras builds a subclassed model by calling it
    return model


@pytest.mark.parametrize(("source", "target"), PAIRS)
def test_a_subclassed_model_moves_between_the_libraries(source, target, tmp_path):
    x, y = data("mlp")
    y = y[:, :2]
    model = two_stage(LIBRARIES[source])
    model.compile(optimizer=LIBRARIES[source].optimizers.Adam(0.01), loss="mse")
    model.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0)
    weights = str(tmp_path / "model.weights.h5")
    model.save_weights(weights)
    fresh = two_stage(LIBRARIES[target])
    fresh.load_weights(weights)
    np.testing.assert_allclose(fresh.predict(x, verbose=0), model.predict(x, verbose=0), atol=1e-5)
    two_stage(LIBRARIES[target])  # registers the class in the target library
    path = str(tmp_path / "model.keras")
    model.save(path)
    loaded = LIBRARIES[target].models.load_model(path)
    assert loaded.width == 3
    assert_same_state(model, loaded, x)
