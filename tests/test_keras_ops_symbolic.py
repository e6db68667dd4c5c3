"""``keras.ops`` and arithmetic on KerasTensors: ``x * 10.0``, ``x[:, 0]``, ``x @ w``,
``keras.ops.<fn>(x)`` and ``keras.activations.<fn>(x)`` on an ``Input`` become steps of a
functional model that computes, trains, and saves and loads in Keras 3's format. Hand-computed
values here; ``test_keras_ops_symbolic_tf.py`` compares with Keras itself."""

import json

import numpy as np
import pytest

import ferrotape as ft

keras = ft.keras
X = np.array([[-2.0, -0.5, 1.0, 3.0], [0.5, 2.0, -1.0, 4.0]], dtype="float32")


def test_arithmetic_builds_nodes_with_keras_shapes_and_dtypes():
    x = keras.Input((4,), name="x")
    assert (x * 10.0).shape == (None, 4)
    assert (1.0 - x).shape == (None, 4)
    assert (x @ np.ones((4, 3), "float32")).shape == (None, 3)
    assert x[:, 0].shape == (None,)
    assert x[:, None].shape == (None, 1, 4)
    assert x[..., 1:3].shape == (None, 2)
    assert (x > 0).dtype == "bool"
    assert keras.ops.sum(x).shape == ()
    assert keras.ops.mean(x, axis=1, keepdims=True).shape == (None, 1)
    assert keras.ops.concatenate([x, x], axis=0).shape == (None, 4)
    # Keras takes a fixed target shape at its word, the batch dim included.
    assert keras.ops.reshape(x, (2, 2)).shape == (2, 2)
    assert keras.ops.cast(x, "int32").dtype == "int32"


def test_model_of_ops_computes_the_hand_values():
    x = keras.Input((4,), name="x")
    y = -keras.ops.relu(x * 10.0 + 1)
    first = y[:, 0]
    capped = keras.activations.relu(x, max_value=2.0)
    scaled = 2.0 ** keras.ops.mean(x, axis=1, keepdims=True)
    model = keras.Model(x, [y, first, capped, scaled])
    got = [o.numpy() for o in model(X)]
    want_y = -np.maximum(X * 10.0 + 1, 0)
    np.testing.assert_allclose(got[0], want_y)
    np.testing.assert_allclose(got[1], want_y[:, 0])
    np.testing.assert_allclose(got[2], np.clip(X, 0, 2))
    np.testing.assert_allclose(got[3], 2.0 ** X.mean(axis=1, keepdims=True), rtol=1e-6)
    # Operations are nodes, not layers (Keras lists only the InputLayer here), but the
    # summary shows them, with their output shapes and no parameters.
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer"]
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    for row in ("(Multiply)", "(Relu)", "(GetItem)", "(ReLU)", "(Mean)", "(Power)"):
        assert row in text, row
    assert "Total params: 0" in text


def test_ops_compute_eagerly_on_tensors_and_arrays():
    ops = keras.ops
    np.testing.assert_allclose(ops.mean(X, axis=1).numpy(), X.mean(axis=1), rtol=1e-6)
    np.testing.assert_allclose(ops.clip(ft.constant(X), -1, 1).numpy(), np.clip(X, -1, 1))
    np.testing.assert_allclose(ops.flip(X, axis=1).numpy(), X[:, ::-1])
    np.testing.assert_allclose(ops.cumsum(X).numpy(), np.cumsum(X), rtol=1e-6)
    np.testing.assert_allclose(ops.where(X > 0, X, 0.0).numpy(), np.where(X > 0, X, 0.0))
    assert ops.mean(np.array([1, 2], "int32")).dtype == ft.float32
    with pytest.raises(TypeError, match=r"keras.ops.mean"):
        ops.mean(X, 1, False, "extra")


def test_prod_cumsum_and_concatenate_follow_keras_tensorflow_backend():
    ops, x = keras.ops, ft.constant([[1, 2], [3, 4]])

    def got(t):
        return t.dtype.name, t.numpy().tolist()

    # Keras 3 checks prod's dtype, then its TensorFlow backend ignores it (int32 stays int32);
    # without one, bool and narrow ints are widened first.
    assert got(ops.prod(x, dtype=float)) == ("int32", 24)
    assert got(ops.prod(x, axis=0, dtype="float32")) == ("int32", [3, 8])
    assert got(ops.prod(ft.constant([[1.5, 2.0]]), dtype=int)) == ("float32", 3.0)
    assert got(ops.prod(ft.constant([True, False]))) == ("int32", 0)
    assert got(ops.prod(ft.constant([2, 3], ft.int8))) == ("int32", 6)
    assert got(ops.prod(ft.constant([2, 3], ft.uint16))) == ("uint32", 6)
    with pytest.raises(ValueError, match="Invalid dtype: bogus"):
        ops.prod(x, dtype="bogus")
    assert got(ops.cumsum(ft.constant([True, False]))) == ("int32", [1, 1])
    # One tensor is not a list of tensors (Keras: ValueError); a list or tuple is.
    for one in (x, np.ones([2, 2])):
        with pytest.raises(ValueError, match="keras.ops.concatenate: xs must be a list"):
            ops.concatenate(one)
    assert got(ops.concatenate((x, x), axis=1)) == ("int32", [[1, 2, 1, 2], [3, 4, 3, 4]])


def test_tf_ops_on_a_keras_tensor_raise_keras_value_error():
    x = keras.Input((4,))
    for call in (
        lambda: ft.nn.relu(x),
        lambda: ft.matmul(x, ft.ones((4, 2))),
        lambda: ft.reduce_sum(x),
        lambda: ft.concat([x, x], 1),
    ):
        with pytest.raises(ValueError, match="cannot be used as input to a TensorFlow function"):
            call()
    with pytest.raises(TypeError, match="boolean"):
        bool(x)
    with pytest.raises(NotImplementedError, match="Iterating"):
        iter(x)


def test_config_names_keras_op_classes_and_round_trips():
    x = keras.Input((4,), name="x")
    h = keras.layers.Dense(3, name="d")(x * 0.5)
    out = keras.activations.relu(h[:, 1:], max_value=6.0) @ np.ones((2, 1), "float32")
    model = keras.Model(x, out)
    config = json.loads(json.dumps(model.get_config()))  # as a .keras file stores it
    entries = {layer["class_name"]: layer for layer in config["layers"]}
    assert entries["Multiply"]["module"] == "keras.src.ops.numpy"
    assert entries["Multiply"]["name"].startswith("multiply")  # unique per process
    assert entries["Multiply"]["inbound_nodes"][0]["args"][1] == 0.5
    relu = entries["ReLU"]
    assert relu["module"] == "keras.src.activations.activations"
    assert relu["config"]["max_value"] == 6.0
    key = entries["GetItem"]["inbound_nodes"][0]["args"][1]
    assert key[1] == {"class_name": "__slice__", "config": {"start": 1, "stop": None, "step": None}}
    assert entries["Matmul"]["inbound_nodes"][0]["args"][1]["class_name"] == "__numpy__"
    rebuilt = keras.Model.from_config(config)
    rebuilt.set_weights(model.get_weights())
    np.testing.assert_allclose(rebuilt(X).numpy(), model(X).numpy(), rtol=1e-6)


def test_save_load_and_train_through_ops(tmp_path):
    keras.utils.set_random_seed(0)
    x = keras.Input((4,))
    h = keras.layers.Dense(8, activation="tanh")(x)
    y = keras.layers.Dense(1)(h * 2.0 - keras.ops.mean(h, axis=-1, keepdims=True))
    model = keras.Model(x, y)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    rng = np.random.default_rng(0)
    data = rng.normal(size=(64, 4)).astype("float32")
    target = data.sum(axis=1, keepdims=True)
    history = model.fit(data, target, epochs=20, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    path = tmp_path / "ops.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(data, verbose=0), model.predict(data, verbose=0))


def _keras_op_entry(cls, name, source, extra=(), **config):
    """One operation as Keras 3 writes it into a functional config."""
    tensor = {"shape": [None, 4], "dtype": "float32", "keras_history": [source, 0, 0]}
    return {
        "module": "keras.src.ops.numpy",
        "class_name": cls,
        "config": {"name": name, **config},
        "registered_name": cls,
        "name": name,
        "inbound_nodes": [
            {"args": [{"class_name": "__keras_tensor__", "config": tensor}, *extra], "kwargs": {}}
        ],
    }


def _slice(start):
    return {"class_name": "__slice__", "config": {"start": start, "stop": None, "step": None}}


# What Keras 3 writes for Model(x, keras.ops.mean(-x[:, 1:] * 10.0, axis=1)), so loading
# Keras's files is tested without TensorFlow.
KERAS_WRITTEN = {
    "name": "functional",
    "trainable": True,
    "layers": [
        {
            "module": "keras.layers",
            "class_name": "InputLayer",
            "config": {"batch_shape": [None, 4], "dtype": "float32", "name": "x"},
            "registered_name": None,
            "name": "x",
            "inbound_nodes": [],
        },
        _keras_op_entry("GetItem", "get_item", "x", [[_slice(None), _slice(1)]]),
        _keras_op_entry("Negative", "negative", "get_item"),
        _keras_op_entry("Multiply", "multiply", "negative", [10.0]),
        _keras_op_entry("Mean", "mean", "multiply", axis=1, keepdims=False),
    ],
    "input_layers": ["x", 0, 0],
    "output_layers": ["mean", 0, 0],
}


def test_loads_a_keras_written_op_graph():
    model = keras.Model.from_config(json.loads(json.dumps(KERAS_WRITTEN)))
    np.testing.assert_allclose(model(X).numpy(), (-X[:, 1:] * 10.0).mean(axis=1), rtol=1e-6)


def _halved_mse(y_true, y_pred):
    return 0.5 * keras.ops.mean(keras.ops.square(y_true - y_pred), axis=-1)


def test_a_custom_loss_function_is_found_by_name_when_loading(tmp_path):
    x = keras.Input((4,))
    model = keras.Model(x, keras.layers.Dense(1)(x) * 2.0)
    model.compile(optimizer="sgd", loss=_halved_mse)
    model.save(tmp_path / "custom_loss.keras")
    loaded = keras.models.load_model(
        tmp_path / "custom_loss.keras", custom_objects={"_halved_mse": _halved_mse}
    )
    target = X[:, :1]
    assert loaded.evaluate(X, target, verbose=0) == pytest.approx(
        0.5 * np.mean((model.predict(X, verbose=0) - target) ** 2), rel=1e-5
    )
    # Keras 3 writes a plain function into a compile config as this entry.
    keras_entry = {"module": "builtins", "class_name": "function", "config": "_halved_mse"}
    with keras.saving.custom_object_scope({"_halved_mse": _halved_mse}):
        assert keras.losses.deserialize(keras_entry) is _halved_mse
    with pytest.raises(ValueError, match="_halved_mse"):
        keras.losses.get("_halved_mse")  # out of scope: unknown, as before


def test_a_tensor_on_the_left_hands_the_operator_to_the_symbolic_tensor():
    # TensorFlow's operators try the other operand's reflected method when it does not convert
    # to a tensor: `tf.constant(2.0) * keras.Input(...)` is a KerasTensor.
    x = keras.Input((3,))
    doubled = ft.constant(2.0) * x
    shifted = ft.Variable(1.0) - x
    powered = ft.constant(2.0) ** x
    assert all(isinstance(t, type(x)) for t in (doubled, shifted, powered))
    model = keras.Model(x, [doubled, shifted, powered])
    outs = model(np.array([[0.0, 1.0, 3.0]], np.float32))
    np.testing.assert_allclose(outs[0].numpy(), [[0.0, 2.0, 6.0]])
    np.testing.assert_allclose(outs[1].numpy(), [[1.0, 0.0, -2.0]])
    np.testing.assert_allclose(outs[2].numpy(), [[1.0, 2.0, 8.0]])


def test_an_operand_whose_reflected_method_fails_keeps_the_conversion_error():
    class Refuses:
        def __rmul__(self, other):
            raise TypeError("not me")

    for other in (object(), Refuses()):
        with pytest.raises(TypeError, match="Attempt to convert a value"):
            ft.constant(1.0) * other
