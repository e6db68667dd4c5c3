"""Keras 3's file formats in ferrotape alone (no TensorFlow): ``.keras`` model files,
``.weights.h5`` weight files in Keras 3's HDF5 layout, ``.safetensors`` weights, ``to_json``.
A model saved and loaded predicts the same and trains on exactly as the original would (the
optimizer state comes back). ``test_keras_cross_library.py`` checks the files against Keras."""

import json
import os
import warnings
import zipfile

import h5py
import numpy as np
import pytest

import ferrotape as ft

keras = ft.keras
layers = keras.layers
RNG = np.random.default_rng(0)


def mlp():
    return keras.Sequential(
        [keras.Input((8,)), layers.Dense(16, activation="relu"), layers.Dense(3)]
    )


def cnn():
    return keras.Sequential(
        [
            keras.Input((8, 8, 1)),
            layers.Conv2D(4, 3, padding="same", activation="relu"),
            layers.BatchNormalization(),
            layers.MaxPooling2D(),
            layers.Flatten(),
            layers.Dropout(0.25, seed=1),
            layers.Dense(3),
        ]
    )


def functional(dict_outputs=False):
    a, b = keras.Input((6,), name="a"), keras.Input((4,), name="b")
    shared = layers.Dense(4, activation="tanh")
    joined = layers.Concatenate()([shared(a), shared(layers.Dense(6)(b))])
    out = layers.Dense(2)(joined)
    return keras.Model([a, b], {"out": out, "hidden": joined} if dict_outputs else out)


@keras.saving.register_keras_serializable(package="FileFormatTests")
class TwoLayer(keras.Model):
    def __init__(self, units=5, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.hidden = layers.Dense(units, activation="relu")
        self.head = layers.Dense(2)

    def call(self, inputs):
        return self.head(self.hidden(inputs))

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def subclassed():
    model = TwoLayer(units=7)
    model.build((None, 8))
    return model


DATA = {
    "mlp": (RNG.normal(size=(12, 8)), RNG.normal(size=(12, 3))),
    "cnn": (RNG.normal(size=(12, 8, 8, 1)), RNG.normal(size=(12, 3))),
    "functional": (
        [RNG.normal(size=(12, 6)), RNG.normal(size=(12, 4))],
        RNG.normal(size=(12, 2)),
    ),
    "subclassed": (RNG.normal(size=(12, 8)), RNG.normal(size=(12, 2))),
}
BUILDERS = {"mlp": mlp, "cnn": cnn, "functional": functional, "subclassed": subclassed}


def as_float32(data):
    return ft.nest.map_structure(lambda a: np.asarray(a, "float32"), data)


def trained(name):
    x, y = as_float32(DATA[name])
    model = BUILDERS[name]()
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse", metrics=["mae"])
    model.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0)
    return model, x, y


def predictions(model, x):
    return ft.nest.flatten(model.predict(x, verbose=0))


def assert_same_predictions(a, b, x):
    for left, right in zip(predictions(a, x), predictions(b, x), strict=True):
        np.testing.assert_allclose(left, right, rtol=0, atol=1e-6)


# ----------------------------------------------------------------------------- .keras
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_a_saved_model_predicts_the_same_and_trains_on_as_the_original(name, tmp_path):
    model, x, y = trained(name)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert type(loaded).__name__ == type(model).__name__
    assert [type(layer) for layer in loaded.layers] == [type(layer) for layer in model.layers]
    assert_same_predictions(model, loaded, x)
    # The optimizer's slots and step count come back, so one more epoch moves both alike.
    for saved, restored in zip(model.optimizer.variables, loaded.optimizer.variables, strict=True):
        np.testing.assert_array_equal(saved.numpy(), restored.numpy())
    model.fit(x, y, epochs=1, batch_size=4, shuffle=False, verbose=0)
    loaded.fit(x, y, epochs=1, batch_size=4, shuffle=False, verbose=0)
    assert int(loaded.optimizer.iterations.numpy()) == 9
    if name != "cnn":  # Dropout's random stream is not part of the file (nor in Keras)
        assert_same_predictions(model, loaded, x)


def test_the_keras_file_is_the_zip_keras_3_writes(tmp_path):
    model, _, _ = trained("mlp")
    path = tmp_path / "m.keras"
    keras.saving.save_model(model, path)
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == ["metadata.json", "config.json", "model.weights.h5"]
        metadata = json.loads(archive.read("metadata.json"))
        config = json.loads(archive.read("config.json"))
    assert metadata["keras_version"].startswith("3.") and "date_saved" in metadata
    assert metadata["ferrotape_version"] == ft.__version__
    assert set(config) == {
        "module",
        "class_name",
        "config",
        "registered_name",
        "build_config",
        "compile_config",
    }
    assert (config["module"], config["class_name"], config["registered_name"]) == (
        "keras",
        "Sequential",
        None,
    )
    assert config["build_config"] == {"input_shape": [None, 8]}
    compile_config = config["compile_config"]
    assert compile_config["optimizer"]["class_name"] == "Adam"
    assert compile_config["optimizer"]["module"] == "keras.optimizers"
    assert compile_config["optimizer"]["config"]["learning_rate"] == pytest.approx(0.01)
    assert (compile_config["loss"], compile_config["metrics"]) == ("mse", ["mae"])
    first, dense = config["config"]["layers"][:2]
    assert first["class_name"] == "InputLayer"
    assert first["config"]["batch_shape"] == [None, 8]
    assert (dense["module"], dense["class_name"]) == ("keras.layers", "Dense")
    assert dense["config"]["kernel_initializer"]["class_name"] == "GlorotUniform"
    assert dense["build_config"] == {"input_shape": [None, 8]}


def test_load_model_compiles_unless_asked_not_to(tmp_path):
    model, x, y = trained("mlp")
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert loaded.compiled and isinstance(loaded.optimizer, keras.optimizers.Adam)
    assert loaded.evaluate(x, y, verbose=0) == pytest.approx(model.evaluate(x, y, verbose=0))
    bare = keras.models.load_model(path, compile=False)
    assert not bare.compiled
    assert_same_predictions(model, bare, x)


def test_an_uncompiled_model_saves_without_compile_config(tmp_path):
    model = mlp()
    path = tmp_path / "m.keras"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        assert "compile_config" not in json.loads(archive.read("config.json"))
    loaded = keras.models.load_model(path)
    assert not loaded.compiled
    x = as_float32(DATA["mlp"][0])
    assert_same_predictions(model, loaded, x)


def test_custom_objects_name_unregistered_classes(tmp_path):
    class Doubler(layers.Layer):
        def call(self, inputs):
            return inputs * 2.0

    model = keras.Sequential([keras.Input((3,)), Doubler(), layers.Dense(2)])
    path = tmp_path / "m.keras"
    model.save(path)
    with pytest.raises(TypeError, match="could not locate class 'Doubler'"):
        keras.models.load_model(path)
    loaded = keras.models.load_model(path, custom_objects={"Doubler": Doubler})
    x = np.ones((2, 3), "float32")
    assert_same_predictions(model, loaded, x)


def test_model_file_names_and_contents_are_checked(tmp_path):
    model = mlp()
    with pytest.raises(ValueError, match="add a `.keras` extension"):
        model.save(tmp_path / "m.h5")
    with pytest.raises(ValueError, match="File format not supported"):
        keras.models.load_model(tmp_path / "m.weights")
    with pytest.raises(ValueError, match="legacy Keras 2 HDF5"):
        keras.models.load_model(tmp_path / "m.h5")
    with pytest.raises(FileNotFoundError):
        keras.models.load_model(tmp_path / "missing.keras")
    (tmp_path / "junk.keras").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a .keras file"):
        keras.models.load_model(tmp_path / "junk.keras")
    with zipfile.ZipFile(tmp_path / "partial.keras", "w") as archive:
        archive.writestr("config.json", "{}")
    with pytest.raises(ValueError, match="has no model.weights.h5"):
        keras.models.load_model(tmp_path / "partial.keras")
    model.save(tmp_path / "m.keras")
    with pytest.raises(FileExistsError):
        model.save(tmp_path / "m.keras", overwrite=False)


def test_an_interrupted_model_save_leaves_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "m.keras"
    mlp().save(path)
    before = path.read_bytes()

    def interrupted_replace(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt):
        mlp().save(path)
    with pytest.raises(KeyboardInterrupt):
        mlp().save_weights(tmp_path / "w.weights.h5")
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["m.keras"]


# ----------------------------------------------------------------------------- .weights.h5
def h5_listing(path):
    entries = []

    def visit(name, item):
        if isinstance(item, h5py.Dataset):
            entries.append((name, item.shape))
        elif "name" in item.attrs:
            entries.append((name, item.attrs["name"]))

    with h5py.File(path, "r") as h5:
        h5.visititems(visit)
    return sorted(entries)


def test_weights_h5_uses_keras_3_layout(tmp_path):
    model, _, _ = trained("cnn")
    path = tmp_path / "cnn.weights.h5"
    model.save_weights(path)
    names = [layer.name for layer in model.layers]
    expected = [
        ("layers/conv2d/vars", names[0]),
        ("layers/conv2d/vars/0", (3, 3, 1, 4)),
        ("layers/conv2d/vars/1", (4,)),
        ("layers/batch_normalization/vars", names[1]),
        *[(f"layers/batch_normalization/vars/{i}", (4,)) for i in range(4)],
        ("layers/max_pooling2d/vars", names[2]),
        ("layers/flatten/vars", names[3]),
        ("layers/dropout/vars", names[4]),
        ("layers/dense/vars", names[5]),
        ("layers/dense/vars/0", (64, 3)),
        ("layers/dense/vars/1", (3,)),
        ("optimizer/vars", "adam"),
        # iterations and learning rate, then (momentum, velocity) variable by variable
        ("optimizer/vars/0", ()),
        ("optimizer/vars/1", ()),
        *[
            (f"optimizer/vars/{i}", shape)
            for i, shape in zip(
                range(2, 14),
                [
                    (3, 3, 1, 4),
                    (3, 3, 1, 4),
                    (4,),
                    (4,),
                    (4,),
                    (4,),
                    (4,),
                    (4,),
                    (64, 3),
                    (64, 3),
                    (3,),
                    (3,),
                ],
                strict=True,
            )
        ],  # fmt: skip
        ("vars", model.name),
    ]
    assert h5_listing(path) == sorted(expected)
    bn = model.layers[1]
    with h5py.File(path, "r") as h5:
        np.testing.assert_array_equal(
            h5["layers/batch_normalization/vars/2"][()], bn.moving_mean.numpy()
        )
        assert h5["optimizer/vars/0"][()] == 6


def test_layers_are_matched_by_position_and_class_not_by_name(tmp_path):
    model, x, _ = trained("functional")
    path = tmp_path / "f.weights.h5"
    model.save_weights(path)
    with h5py.File(path, "r") as h5:
        assert sorted(h5["layers"]) == [
            "concatenate", "dense", "dense_1", "dense_2", "input_layer", "input_layer_1"
        ]  # fmt: skip
    fresh = functional()  # new layer names (dense_7, ...), same architecture
    fresh.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    fresh.optimizer.build(fresh.trainable_variables)
    fresh.load_weights(path)
    assert_same_predictions(model, fresh, x)
    assert int(fresh.optimizer.iterations.numpy()) == 6


def test_weights_that_do_not_fit_are_refused_before_anything_changes(tmp_path):
    path = tmp_path / "w.weights.h5"
    mlp().save_weights(path)
    narrower = keras.Sequential(
        [keras.Input((8,)), layers.Dense(16, activation="relu"), layers.Dense(2)]
    )
    before = narrower.get_weights()
    with pytest.raises(ValueError, match=r"layer 'dense_\d+' \(at 'layers/dense_1'\).*\(16, 2\)"):
        narrower.load_weights(path)
    for kept, original in zip(narrower.get_weights(), before, strict=True):
        np.testing.assert_array_equal(kept, original)
    with pytest.warns(UserWarning, match="skipping layer"):
        narrower.load_weights(path, skip_mismatch=True)
    assert not np.array_equal(narrower.get_weights()[0], before[0])  # the first layer loaded
    unbuilt = keras.Sequential([layers.Dense(16, activation="relu"), layers.Dense(3)])
    with pytest.raises(ValueError, match="has no weights yet: build the model first"):
        unbuilt.load_weights(path)
    shorter = keras.Sequential([keras.Input((8,)), layers.Dense(16, use_bias=False)])
    with pytest.raises(ValueError, match="expected 1 variables, but received 2"):
        shorter.load_weights(path)


def test_an_optimizer_that_does_not_match_is_skipped_with_a_warning(tmp_path):
    model, x, _ = trained("mlp")
    path = tmp_path / "w.weights.h5"
    model.save_weights(path)
    target = mlp()
    target.compile(optimizer="sgd", loss="mse")  # not built: only iterations and learning rate
    with pytest.warns(UserWarning, match="skipping optimizer 'SGD'"):
        target.load_weights(path)
    assert_same_predictions(model, target, x)


def test_weight_file_names_pick_the_format(tmp_path):
    model, x, _ = trained("mlp")
    model.save_weights(tmp_path / "w.safetensors")
    model.save_weights(tmp_path / "w.weights.h5")
    model.save(tmp_path / "m.keras")
    assert h5py.is_hdf5(tmp_path / "w.weights.h5")
    assert not h5py.is_hdf5(tmp_path / "w.safetensors")
    for name in ("w.safetensors", "w.weights.h5", "m.keras"):
        target = mlp()
        target.load_weights(tmp_path / name)
        assert_same_predictions(model, target, x)
    for bad in ("w.h5", "w.weights", "w.ckpt", "w.keras"):
        with pytest.raises(ValueError, match="must end in `.weights.h5`"):
            model.save_weights(tmp_path / bad)
    with pytest.raises(ValueError, match="must end in `.weights.h5`"):
        model.load_weights(tmp_path / "w.h5")
    with pytest.raises(FileNotFoundError):
        model.load_weights(tmp_path / "missing.weights.h5")
    with pytest.raises(FileExistsError):
        model.save_weights(tmp_path / "w.weights.h5", overwrite=False)


# ----------------------------------------------------------------------------- configs
@pytest.mark.parametrize("name", ["mlp", "cnn", "functional"])
def test_to_json_and_model_from_json_rebuild_the_architecture(name):
    model, x, _ = trained(name)
    text = model.to_json()
    rebuilt = keras.models.model_from_json(text)
    assert json.loads(rebuilt.to_json())["config"]["layers"] == json.loads(text)["config"]["layers"]
    assert [tuple(w.shape) for w in rebuilt.weights] == [tuple(w.shape) for w in model.weights]
    shapes = [p.shape for p in predictions(model, x)]
    assert [p.shape for p in predictions(rebuilt, x)] == shapes
    assert rebuilt.compiled  # to_json carries the compile config, as Keras's does


def test_sequential_from_config_rebuilds_its_layers():
    model = cnn()
    clone = keras.Sequential.from_config(model.get_config())
    assert [type(layer) for layer in clone.layers] == [type(layer) for layer in model.layers]
    assert clone.built and clone.input_shape == (None, 8, 8, 1)
    assert [tuple(w.shape) for w in clone.weights] == [tuple(w.shape) for w in model.weights]
    # A config without an Input, built from its recorded input shape.
    plain = keras.Sequential([layers.Dense(3), layers.Dense(1)])
    plain.build((None, 4))
    again = keras.Sequential.from_config(plain.get_config())
    assert again.built and [tuple(w.shape) for w in again.weights] == [(4, 3), (3,), (3, 1), (1,)]


def test_functional_config_names_each_call_of_a_shared_layer():
    model = functional(dict_outputs=True)
    config = model.get_config()
    shared = next(entry for entry in config["layers"] if len(entry["inbound_nodes"]) == 2)
    first, second = (node["args"][0]["config"] for node in shared["inbound_nodes"])
    assert first["keras_history"] == ["a", 0, 0]
    assert second["keras_history"][1:] == [0, 0] and second["shape"] == [None, 6]
    assert config["input_layers"] == [["a", 0, 0], ["b", 0, 0]]
    concatenate = next(e for e in config["layers"] if e["class_name"] == "Concatenate")
    histories = [t["config"]["keras_history"] for t in concatenate["inbound_nodes"][0]["args"][0]]
    assert histories == [[shared["name"], 0, 0], [shared["name"], 1, 0]]
    assert config["output_layers"] == {
        "out": [config["layers"][-1]["name"], 0, 0],
        "hidden": [concatenate["name"], 0, 0],
    }
    rebuilt = keras.Model.from_config(json.loads(json.dumps(config)))
    assert isinstance(rebuilt, keras.models.Functional)
    x = as_float32(DATA["functional"][0])
    assert set(rebuilt.predict(x, verbose=0)) == {"out", "hidden"}
    assert [p.shape for p in predictions(rebuilt, x)] == [p.shape for p in predictions(model, x)]


def test_warnings_are_not_raised_by_a_plain_round_trip(tmp_path):
    model, _, _ = trained("cnn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.save(tmp_path / "m.keras")
        keras.models.load_model(tmp_path / "m.keras")


def test_model_checkpoint_writes_keras_files_and_weights_h5(tmp_path):
    model, x, y = trained("mlp")
    callbacks = [
        keras.callbacks.ModelCheckpoint(str(tmp_path / "e{epoch}.keras")),
        keras.callbacks.ModelCheckpoint(
            str(tmp_path / "w{epoch}.weights.h5"), save_weights_only=True
        ),
    ]
    model.fit(x, y, epochs=2, batch_size=4, callbacks=callbacks, verbose=0)
    assert sorted(os.listdir(tmp_path)) == [
        "e1.keras",
        "e2.keras",
        "w1.weights.h5",
        "w2.weights.h5",
    ]
    assert_same_predictions(model, keras.models.load_model(tmp_path / "e2.keras"), x)
    target = mlp()
    target.load_weights(tmp_path / "w2.weights.h5")
    assert_same_predictions(model, target, x)


def test_clone_model_rebuilds_a_functional_model_with_fresh_weights():
    model = functional()
    clone = keras.models.clone_model(model)
    assert clone is not model and isinstance(clone, keras.models.Functional)
    assert [layer.name for layer in clone.layers] == [layer.name for layer in model.layers]
    assert all(a is not b for a, b in zip(clone.layers, model.layers, strict=True))
    assert not np.array_equal(clone.get_weights()[0], model.get_weights()[0])
    x = as_float32(DATA["functional"][0])
    assert [p.shape for p in predictions(clone, x)] == [p.shape for p in predictions(model, x)]


# A Dense entry exactly as Keras 3.15 writes it into config.json.
KERAS_DENSE = {
    "module": "keras.layers",
    "class_name": "Dense",
    "config": {
        "name": "dense",
        "trainable": True,
        "dtype": {
            "module": "keras",
            "class_name": "DTypePolicy",
            "config": {"name": "float32"},
            "registered_name": None,
            "shared_object_id": 140401749420112,
        },
        "units": 3,
        "activation": "relu",
        "use_bias": True,
        "kernel_initializer": {
            "module": "keras.initializers",
            "class_name": "GlorotUniform",
            "config": {"seed": None, "input_axes": None, "output_axes": None},
            "registered_name": None,
        },
        "bias_initializer": {
            "module": "keras.initializers",
            "class_name": "Zeros",
            "config": {},
            "registered_name": None,
        },
        "kernel_regularizer": None,
        "bias_regularizer": None,
        "kernel_constraint": None,
        "bias_constraint": None,
        "quantization_config": None,
    },
    "registered_name": None,
    "build_config": {"input_shape": [None, 4]},
}


def test_keras_configs_load_and_features_ferrotape_lacks_are_refused():
    dense = keras.saving.deserialize_keras_object(KERAS_DENSE)
    assert (dense.units, dense.dtype, dense.built) == (3, "float32", True)
    assert [tuple(w.shape) for w in dense.weights] == [(4, 3), (3,)]
    quantized = json.loads(json.dumps(KERAS_DENSE))
    quantized["config"]["quantization_config"] = {"mode": "int8"}
    with pytest.raises(ValueError, match="Unrecognized keyword arguments.*quantization_config"):
        keras.saving.deserialize_keras_object(quantized)


def test_sequential_configs_without_modules_still_load():
    # The form ferrotape wrote before it followed Keras 3: class_name and config only.
    legacy = {
        "name": "old",
        "trainable": True,
        "layers": [
            {"class_name": "InputLayer", "config": {"batch_shape": [None, 4], "name": "in"}},
            {"class_name": "Dense", "config": {"name": "d", "units": 2}},
        ],
    }
    model = keras.Sequential.from_config(legacy)
    assert model.built and model.output_shape == (None, 2) and model.layers[0].name == "d"
