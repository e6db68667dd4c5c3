"""A model file names modeling objects only (Keras 3's rule, issue 34): a ``.keras`` file or a
JSON config naming any other callable (``keras.utils.get_file``, ``keras.backend.set_floatx``,
callbacks, ``os.system``, ``eval``) is refused before anything is built, and nothing changes on
disk or in the process. ``safe_mode`` refuses Python bytecode (Keras's ``__lambda__``)."""

import inspect
import json
import os
import zipfile

import numpy as np
import pytest

import ferrotape as ft

keras = ft.keras
layers = keras.layers
NON_MODELING = "Non-modeling APIs are disallowed during deserialization"

_MODELING_CLASSES = (
    keras.layers.Layer,
    keras.losses.Loss,
    keras.metrics.Metric,
    keras.optimizers.Optimizer,
    keras.optimizers.schedules.LearningRateSchedule,
    keras.initializers.Initializer,
    keras.regularizers.Regularizer,
    keras.mixed_precision.DTypePolicy,
)


def _modeling_function(obj):
    return any(
        obj is getattr(namespace, name, None)
        for namespace in (keras.activations, keras.losses, keras.metrics)
        for name in namespace.__all__
        if name not in ("get", "serialize", "deserialize")
    )


def _non_modeling_callables():
    """(module, name) of every public callable of these namespaces that is not a modeling
    class or function."""
    found = []
    for namespace in ("utils", "backend", "saving", "callbacks", "mixed_precision", "models"):
        module = getattr(keras, namespace)
        for name in sorted(dir(module)):
            obj = getattr(module, name)
            if name.startswith("_") or not callable(obj) or inspect.ismodule(obj):
                continue
            if inspect.isclass(obj) and issubclass(obj, _MODELING_CLASSES):
                continue
            if _modeling_function(obj):
                continue
            found.append((f"keras.{namespace}", name))
    return found


NON_MODELING_CALLABLES = _non_modeling_callables()


def test_the_namespaces_expose_the_dangerous_callables():
    # The list the tests below walk holds what issue 34 found a file could call.
    names = {f"{module}.{name}" for module, name in NON_MODELING_CALLABLES}
    for name in (
        "keras.utils.get_file",
        "keras.backend.set_floatx",
        "keras.saving.load_model",
        "keras.callbacks.CSVLogger",
        "keras.mixed_precision.set_global_policy",
        "keras.models.save_model",
    ):
        assert name in names


def _process_state():
    return {
        "floatx": keras.backend.floatx(),
        "epsilon": keras.backend.epsilon(),
        "image_data_format": keras.backend.image_data_format(),
        "policy": keras.mixed_precision.global_policy().name,
        "custom_objects": dict(keras.saving.get_custom_objects()),
        "cwd": sorted(os.listdir(os.getcwd())),
    }


def _tree(root):
    return sorted(
        os.path.relpath(os.path.join(top, name), root)
        for top, dirs, files in os.walk(root)
        for name in dirs + files
    )


# Arguments that would make a call write, download or reconfigure, were it ever made.
def _harmful_arguments(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("secret")
    return {
        "get_file": {
            "fname": "copied.txt",
            "origin": f"file://{victim}",
            "cache_dir": str(tmp_path / "cache"),
            "extract": True,
        },
        "set_floatx": {"value": "float16"},
        "set_epsilon": {"value": 0.5},
        "set_image_data_format": {"data_format": "channels_first"},
        "set_global_policy": {"policy": "mixed_float16"},
        "CSVLogger": {"filename": str(tmp_path / "log.csv")},
        "JSONLogger": {"filename": str(tmp_path / "log.json")},
        "TensorBoard": {"log_dir": str(tmp_path / "logs")},
        "BackupAndRestore": {"backup_dir": str(tmp_path / "backup")},
        "ModelCheckpoint": {"filepath": str(tmp_path / "ckpt.keras")},
        "save_img": {"path": str(tmp_path / "img.png"), "x": [[[0.0]]]},
        "register_keras_serializable": {"package": "Evil"},
    }


def _keras_file(tmp_path, layer_entries):
    """A real ``.keras`` file whose config names ``layer_entries`` as its layers."""
    model = keras.Sequential([keras.Input((3,)), layers.Dense(2)])
    path = tmp_path / "model.keras"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    config = json.loads(entries["config.json"])
    config["config"]["layers"] = config["config"]["layers"][:1] + layer_entries
    entries["config.json"] = json.dumps(config).encode()
    crafted = tmp_path / "crafted.keras"
    with zipfile.ZipFile(crafted, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return crafted


def _entry(module, name, arguments):
    return {"module": module, "class_name": name, "config": arguments, "registered_name": None}


@pytest.mark.parametrize(("module", "name"), NON_MODELING_CALLABLES)
def test_a_keras_file_naming_a_non_modeling_callable_is_refused(tmp_path, module, name):
    arguments = _harmful_arguments(tmp_path).get(name, {})
    path = _keras_file(tmp_path, [_entry(module, name, arguments)])
    before_disk, before_process = _tree(tmp_path), _process_state()
    with pytest.raises(ValueError, match=NON_MODELING) as raised:
        keras.models.load_model(path)
    assert f"`{module}.{name}`" in str(raised.value)
    assert _tree(tmp_path) == before_disk
    assert _process_state() == before_process


@pytest.mark.parametrize(("module", "name"), NON_MODELING_CALLABLES)
def test_a_json_config_naming_a_non_modeling_callable_is_refused(tmp_path, module, name):
    entry = _entry(module, name, _harmful_arguments(tmp_path).get(name, {}))
    before_disk, before_process = _tree(tmp_path), _process_state()
    with pytest.raises(ValueError, match=NON_MODELING):
        keras.saving.deserialize_keras_object(entry)
    with pytest.raises(ValueError, match=NON_MODELING):
        keras.models.model_from_json(json.dumps(entry))
    with pytest.raises(ValueError, match=NON_MODELING):  # unsafe mode keeps the rule
        keras.saving.deserialize_keras_object(entry, safe_mode=False)
    assert _tree(tmp_path) == before_disk
    assert _process_state() == before_process


def test_a_refused_name_anywhere_fails_the_load_before_anything_is_built(tmp_path):
    built = []

    @keras.saving.register_keras_serializable(package="SafeLoadTests")
    class Recording(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            built.append(self)

        def call(self, inputs):
            return inputs

    recording = keras.saving.serialize_keras_object(Recording())
    built.clear()
    refused = _entry("keras.backend", "set_floatx", {"value": "float16"})
    path = _keras_file(tmp_path, [recording, layers.serialize(layers.Dense(2)), refused])
    with pytest.raises(ValueError, match="keras.backend.set_floatx"):
        keras.models.load_model(path)
    assert built == []
    assert keras.backend.floatx() == "float32"


@pytest.mark.parametrize(
    "entry",
    [
        _entry("os", "system", {"command": "touch pwned"}),
        _entry("subprocess", "run", {"args": ["touch", "pwned"]}),
        _entry("subprocess", "Popen", {"args": ["touch", "pwned"]}),
        _entry("builtins", "eval", {"source": "open('pwned', 'w')"}),
        _entry("builtins", "exec", {"source": "open('pwned', 'w')"}),
        _entry("builtins", "open", {"file": "pwned", "mode": "w"}),
        _entry("importlib", "import_module", {"name": "antigravity"}),
        _entry("keras.layers", "os", {}),
        _entry("keras.utils", "__class__", {"name": "pwned"}),
        {"module": "builtins", "class_name": "function", "config": "eval"},
        {"module": "os", "class_name": "function", "config": "system"},
        {"module": "keras.utils", "class_name": "function", "config": "get_file"},
    ],
)
def test_python_modules_and_builtins_are_never_reached(tmp_path, monkeypatch, entry):
    monkeypatch.chdir(tmp_path)
    lambda_layer = layers.serialize(layers.Lambda(keras.activations.relu))
    lambda_layer["config"]["function"] = entry
    for layer_entries in ([entry], [lambda_layer]):
        path = _keras_file(tmp_path, layer_entries)
        before = _tree(tmp_path)
        with pytest.raises((TypeError, ValueError), match="locate|Non-modeling"):
            keras.models.load_model(path, safe_mode=False)
        assert _tree(tmp_path) == before
    assert not os.path.exists(tmp_path / "pwned")


def test_a_keras_lambda_is_refused_in_safe_mode_before_anything_is_built(tmp_path):
    built = []

    @keras.saving.register_keras_serializable(package="SafeLoadTests")
    class Counted(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            built.append(self)

        def call(self, inputs):
            return inputs

    counted = keras.saving.serialize_keras_object(Counted())
    built.clear()
    # What Keras writes for `Lambda(lambda x: x + 1)`: the function's marshalled bytecode.
    bytecode = {"class_name": "__lambda__", "config": {"code": "4wEAAAA=", "defaults": None}}
    lambda_layer = layers.serialize(layers.Lambda(keras.activations.relu))
    lambda_layer["config"]["function"] = bytecode
    path = _keras_file(tmp_path, [counted, lambda_layer])
    with pytest.raises(ValueError, match="deserialization of a Python lambda"):
        keras.models.load_model(path)
    assert built == []
    with pytest.raises(ValueError, match="does not load Python bytecode"):
        keras.models.load_model(path, safe_mode=False)
    with pytest.raises(ValueError, match="deserialization of a Python lambda"):
        keras.saving.deserialize_keras_object(bytecode)


def test_modeling_objects_still_load(tmp_path):
    inputs = keras.Input((3,))
    hidden = layers.Dense(
        4, activation="relu", kernel_regularizer="l2", kernel_initializer="he_normal"
    )(inputs)
    outputs = layers.Lambda(keras.activations.tanh)(keras.ops.mean(hidden, axis=-1) * 2.0)
    model = keras.Model(inputs, outputs)
    schedule = keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.9)
    model.compile(keras.optimizers.Adam(schedule), loss="mse", metrics=["mae", "accuracy"])
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    x = np.ones((2, 3), "float32")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert loaded.layers[-1].function is keras.activations.tanh


def test_a_registered_or_custom_function_names_a_lambda_function():
    def doubled_in_safe_load_test(x):
        return x * 2.0

    model = keras.Sequential([keras.Input((3,)), layers.Lambda(doubled_in_safe_load_test)])
    loaded = keras.models.model_from_json(
        model.to_json(), custom_objects={"doubled_in_safe_load_test": doubled_in_safe_load_test}
    )
    np.testing.assert_allclose(loaded(np.ones((1, 3), "float32")).numpy(), 2.0)
    # Keras writes a named function as a "function" entry of the "builtins" module.
    config = json.loads(model.to_json())
    config["config"]["layers"][-1]["config"]["function"] = {
        "module": "builtins",
        "class_name": "function",
        "config": "doubled_in_safe_load_test",
        "registered_name": "function",
    }
    text = json.dumps(config)
    loaded = keras.models.model_from_json(
        text, custom_objects={"doubled_in_safe_load_test": doubled_in_safe_load_test}
    )
    np.testing.assert_allclose(loaded(np.ones((1, 3), "float32")).numpy(), 2.0)
    with pytest.raises(TypeError, match="could not locate function 'doubled_in_safe_load_test'"):
        keras.models.model_from_json(text)
