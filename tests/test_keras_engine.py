"""ft.keras Layer / Model / Sequential / Input: naming, tracking, building, the training flag,
losses, weights, summaries and weight files. The layers are defined here, so the tests also show
that subclassing works."""

import re
import warnings

import numpy as np
import pytest

import ferrotape as ft
from ferrotape import keras
from ferrotape.keras import saving


class Linear(keras.Layer):
    """A Dense-like layer written against the public Layer API."""

    def __init__(self, units, activation=None, kernel_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.activation = keras.activations.get(activation)
        self.kernel_regularizer = kernel_regularizer
        self.seen_input_shape = None

    def build(self, input_shape):
        self.seen_input_shape = input_shape
        self.kernel = self.add_weight(
            shape=(input_shape[-1], self.units),
            initializer="glorot_uniform",
            regularizer=self.kernel_regularizer,
            name="kernel",
        )
        self.bias = self.add_weight(shape=(self.units,), initializer="zeros", name="bias")

    def call(self, inputs):
        return self.activation(ft.matmul(inputs, self.kernel) + self.bias)


class Recorder(keras.Layer):
    """Passes inputs through and remembers the training value it was called with."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.calls = []

    def call(self, inputs, training=None):
        self.calls.append(training)
        return inputs


class Counter(keras.Layer):
    """A layer with a trainable and a non-trainable weight (like BatchNormalization)."""

    def build(self, input_shape):
        self.count = self.add_weight(shape=(), initializer="zeros", trainable=False, name="count")
        self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="scale")

    def call(self, inputs):
        return inputs * self.scale


# ----------------------------------------------------------------------------- names


def test_automatic_names_are_snake_case_and_unique():
    class NamingProbeBlock(keras.Layer):
        pass

    first, second, third = NamingProbeBlock(), NamingProbeBlock(), NamingProbeBlock(name="mine")
    assert first.name == "naming_probe_block"
    assert second.name == "naming_probe_block_1"
    assert third.name == "mine"
    assert NamingProbeBlock().name == "naming_probe_block_2"

    class Conv9D(keras.Layer):
        pass

    assert Conv9D().name == "conv9d"
    assert re.fullmatch(r"sequential(_\d+)?", keras.Sequential().name)


def test_unknown_keyword_and_missing_super_init_are_clear_errors():
    with pytest.raises(ValueError, match="Unrecognized keyword arguments passed to Linear"):
        Linear(3, units_typo=4)

    class Forgetful(keras.Layer):
        def __init__(self):
            self.inner = Linear(2)

    with pytest.raises(RuntimeError, match="super\\(\\).__init__\\(\\)"):
        Forgetful()

    class SettingsFirst(keras.Layer):
        def __init__(self):
            self.kernel_size = (3, 3)  # plain settings may come before super().__init__()
            super().__init__()

    assert SettingsFirst().kernel_size == (3, 3)


# ----------------------------------------------------------------------------- building


def test_build_on_first_call_with_the_batch_shape_and_numpy_inputs():
    layer = Linear(4)
    assert not layer.built and layer.weights == []
    out = layer(np.ones((5, 3)))  # float64 numpy: converted and cast to float32
    assert layer.built
    assert layer.seen_input_shape == (5, 3)
    assert out.dtype == ft.float32 and tuple(out.shape) == (5, 4)
    assert [w.name for w in layer.weights] == [f"{layer.name}/kernel:0", f"{layer.name}/bias:0"]
    kernel, bias = layer.get_weights()
    np.testing.assert_allclose(out.numpy(), np.ones((5, 3)) @ kernel + bias, rtol=1e-6)
    # Python lists are inputs too; the weights are not created again.
    assert tuple(layer([[1.0, 2.0, 3.0]]).shape) == (1, 4)
    assert len(layer.weights) == 2


def test_build_called_directly_marks_the_layer_built_once():
    layer = Linear(2)
    layer.build((None, 6))
    assert layer.built and layer.seen_input_shape == (None, 6)
    layer(np.zeros((1, 6), np.float32))
    assert len(layer.weights) == 2


def test_add_weight_defaults_and_errors():
    layer = keras.Layer()
    kernel = layer.add_weight(shape=(30, 20))
    limit = np.sqrt(6 / 50)
    assert np.abs(kernel.numpy()).max() <= limit and kernel.dtype == ft.float32
    steps = layer.add_weight(shape=(2,), dtype="int32", name="steps")
    np.testing.assert_array_equal(steps.numpy(), [0, 0])
    legacy = layer.add_weight("legacy", shape=(3,), initializer="ones")  # Keras 2: name first
    np.testing.assert_array_equal(legacy.numpy(), [1.0, 1.0, 1.0])
    assert layer.weights[-1] is legacy and legacy.name == f"{layer.name}/legacy:0"
    positional = layer.add_weight((2, 2), "ones", "float64")  # Keras 3: shape first
    assert positional.dtype == ft.float64 and positional.numpy().sum() == 4.0
    with pytest.raises(TypeError, match="multiple values for argument 'shape'"):
        layer.add_weight((2,), shape=(3,))
    with pytest.raises(ValueError, match="fully defined"):
        layer.add_weight(shape=(None, 3))


def test_float64_layer_computes_in_float64():
    layer = Linear(2, dtype="float64")
    assert (layer.dtype, layer.compute_dtype) == ("float64", "float64")
    out = layer(np.ones((1, 3), np.float32))
    assert out.dtype == ft.float64 and layer.kernel.dtype == ft.float64


def test_compute_output_shape_runs_the_layer():
    layer = Linear(7)
    assert layer.compute_output_shape((None, 3)) == (None, 7)
    assert layer.seen_input_shape == (None, 3)


# ----------------------------------------------------------------------------- tracking


def test_weights_order_is_own_then_sublayers_in_assignment_order():
    class Block(keras.Layer):
        def __init__(self):
            super().__init__()
            self.second = Linear(3, name="second")
            self.first = Linear(2, name="first")
            self.extra = ft.Variable([1.0, 2.0], name="extra")

        def build(self, input_shape):
            self.counter = Counter()
            self.own = self.add_weight(shape=(1,), name="own")

        def call(self, inputs):
            return self.first(self.second(self.counter(inputs)))

    block = Block()
    block(np.ones((2, 4), np.float32))
    names = [w.name.split(":")[0] for w in block.weights]
    counter = block.counter.name
    assert names == [
        "extra",
        f"{block.name}/own",
        "second/kernel",
        "second/bias",
        "first/kernel",
        "first/bias",
        f"{counter}/scale",
        f"{counter}/count",
    ]
    assert [w.name.split(":")[0] for w in block.non_trainable_weights] == [f"{counter}/count"]
    assert len(block.trainable_weights) == 7
    assert block.count_params() == 2 + 1 + (4 * 3 + 3) + (3 * 2 + 2) + 4 + 1


def test_lists_and_dicts_of_layers_are_tracked_even_when_appended_later():
    class Stack(keras.Model):
        def __init__(self):
            super().__init__()
            self.blocks = []
            self.heads = {"a": Linear(1, name="head_a")}

        def call(self, inputs):
            for block in self.blocks:
                inputs = block(inputs)
            return self.heads["a"](inputs)

    model = Stack()
    model.blocks.append(Linear(4, name="b0"))
    model(np.ones((2, 3), np.float32))
    assert len(model.trainable_variables) == 4
    model.blocks.append(Linear(4, name="b1"))
    assert [layer.name for layer in model.layers] == ["b0", "b1", "head_a"]
    assert tuple(model(np.ones((2, 3), np.float32)).shape) == (2, 1)
    assert len(model.trainable_variables) == 6
    model.heads["b"] = Linear(1, name="head_b")
    assert [layer.name for layer in model.layers][-1] == "head_b"
    del model.heads["b"]
    model.blocks.pop()
    assert [layer.name for layer in model.layers] == ["b0", "head_a"]


def test_freezing_a_layer_moves_its_weights_to_non_trainable():
    model = keras.Sequential([keras.Input(shape=(3,)), Linear(4), Linear(2)])
    first = model.layers[0]
    first.trainable = False
    assert len(model.trainable_weights) == 2 and len(model.non_trainable_weights) == 2
    assert model.non_trainable_weights[0] is first.kernel
    model.trainable = False
    assert model.trainable_weights == [] and not model.layers[1].trainable
    model.trainable = True
    assert len(model.trainable_variables) == 4


def test_get_and_set_weights_check_count_and_shapes():
    layer = Linear(2)
    layer(np.ones((1, 3), np.float32))
    new = [np.arange(6, dtype=np.float32).reshape(3, 2), np.array([1.0, -1.0], np.float32)]
    layer.set_weights(new)
    np.testing.assert_array_equal(layer.get_weights()[0], new[0])
    np.testing.assert_allclose(layer([[1.0, 1.0, 1.0]]).numpy(), [[7.0, 8.0]])
    with pytest.raises(ValueError, match="expected 2 weight arrays, received 1"):
        layer.set_weights(new[:1])
    with pytest.raises(ValueError, match="kernel' has shape \\(3, 2\\)"):
        layer.set_weights([np.zeros((2, 3)), new[1]])
    with pytest.raises(ValueError, match="isn't built"):
        Linear(3).count_params()


# ----------------------------------------------------------------------------- training flag


def test_training_propagates_only_when_passed_explicitly():
    class Outer(keras.Model):
        def __init__(self):
            super().__init__()
            self.inner = Recorder()
            self.forced = Recorder()

        def call(self, inputs):
            return self.forced(self.inner(inputs), training=False)

    model = Outer()
    x = np.ones((1, 2), np.float32)
    model(x)
    model(x, training=True)
    model(x, training=False)
    assert model.inner.calls == [None, True, False]
    assert model.forced.calls == [False, False, False]


def test_signature_default_of_the_outer_call_propagates():
    class Wrapper(keras.Layer):
        def __init__(self):
            super().__init__()
            self.inner = Recorder()

        def call(self, inputs, training=True):
            return self.inner(inputs)

    wrapper = Wrapper()
    wrapper(np.ones((1, 1), np.float32))
    wrapper(np.ones((1, 1), np.float32), training=False)
    assert wrapper.inner.calls == [True, False]


def test_sequential_passes_training_to_its_layers():
    recorder = Recorder()
    model = keras.Sequential([keras.Input(shape=(2,)), recorder])
    recorder.calls.clear()  # the build ran it once in inference mode
    model(np.ones((1, 2), np.float32), training=True)
    model(np.ones((1, 2), np.float32))
    assert recorder.calls == [True, None]


# ----------------------------------------------------------------------------- losses


def test_regularization_losses_follow_the_current_weights():
    layer = Linear(3, kernel_regularizer=keras.regularizers.L2(0.1))
    layer(np.ones((1, 2), np.float32))
    (penalty,) = layer.losses
    assert float(penalty) == pytest.approx(0.1 * (layer.kernel.numpy() ** 2).sum(), rel=1e-6)
    layer.kernel.assign(np.ones((2, 3), np.float32))
    assert float(layer.losses[0]) == pytest.approx(0.6)
    model = keras.Sequential([keras.Input(shape=(2,)), layer])
    assert float(model.losses[0]) == pytest.approx(0.6)
    # The penalty is differentiable with respect to the weight.
    with ft.GradientTape() as tape:
        total = ft.add_n(model.losses)
    np.testing.assert_allclose(tape.gradient(total, layer.kernel).numpy(), 0.2 * np.ones((2, 3)))
    layer.trainable = False
    assert model.losses == []


def test_add_loss_and_activity_regularizer_are_reset_by_the_next_outer_call():
    class Penalized(keras.Layer):
        def call(self, inputs):
            self.add_loss(ft.reduce_sum(inputs))
            return inputs

    inner = Penalized()
    activity = Linear(2, activity_regularizer=keras.regularizers.L1(0.5))
    model = keras.Sequential([keras.Input(shape=(2,)), inner, activity])
    x = np.array([[1.0, 2.0]], np.float32)
    out = model(x)
    losses = [float(v) for v in model.losses]
    assert losses == pytest.approx([3.0, 0.5 * np.abs(out.numpy()).sum()])
    model(2 * x)
    assert len(model.losses) == 2 and float(model.losses[0]) == pytest.approx(6.0)


# ----------------------------------------------------------------------------- Sequential


def test_sequential_builds_from_input_shape_kwarg_with_a_warning():
    with pytest.warns(UserWarning, match="Do not pass an `input_shape`") as record:
        first = Linear(4, input_shape=(3,))
    assert record[0].filename == __file__  # the warning points at the user's line
    model = keras.Sequential([first, Linear(2)])
    assert model.built and first.seen_input_shape == (None, 3)
    assert model.input_shape == (None, 3) and model.output_shape == (None, 2)
    assert len(model.weights) == 4
    with pytest.warns(UserWarning):
        assert Linear(1, input_dim=5)._input_batch_shape == (None, 5)


def test_sequential_add_pop_and_validation():
    model = keras.Sequential(name="stack")
    assert not model.built
    model.add(keras.Input(shape=(5,)))
    model.add(Linear(3, name="one"))
    assert model.built and model.output_shape == (None, 3)
    model.add(Linear(2, name="two"))
    assert model.output_shape == (None, 2)
    assert [layer.name for layer in model.layers] == ["one", "two"]
    assert model.pop().name == "two"
    assert model.output_shape == (None, 3) and len(model.weights) == 2
    with pytest.raises(ValueError, match="unique names"):
        model.add(Linear(3, name="one"))
    with pytest.raises(ValueError, match="Only instances of `keras.Layer`"):
        model.add(lambda x: x)
    model.pop()
    with pytest.raises(TypeError, match="no layers"):
        model.pop()


def test_sequential_without_input_builds_on_first_call():
    model = keras.Sequential([Linear(4), Linear(1)])
    assert not model.built
    assert tuple(model(np.zeros((6, 2), np.float32)).shape) == (6, 1)
    assert model.built and model.layers[0].seen_input_shape == (6, 2)
    model2 = keras.Sequential([Linear(4), Linear(1)])
    model2.build((None, 8))
    assert model2.layers[0].seen_input_shape == (None, 8)
    assert model2.output_shape == (None, 1)


def test_subclassed_model_like_seed_002():
    class LinearModel(keras.Model):
        def __init__(self):
            super(LinearModel, self).__init__()  # noqa: UP008 - as seed 002 writes it
            self.dense = Linear(1)

        def call(self, inputs):
            return self.dense(inputs)

    model = LinearModel()
    assert model.name.startswith("linear_model")
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(-1, 1)
    with ft.GradientTape() as tape:
        loss = ft.reduce_mean(ft.square(model(x) - 1.0))
    grads = tape.gradient(loss, model.trainable_variables)
    kernel, bias = model.dense.get_weights()
    residual = x @ kernel + bias - 1.0
    np.testing.assert_allclose(grads[0].numpy(), 2 * x.T @ residual / 8, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(grads[1].numpy(), 2 * residual.mean(0), rtol=1e-5, atol=1e-7)
    assert model.layers == [model.dense]
    assert (
        model.get_layer(model.dense.name) is model.dense and model.get_layer(index=0) is model.dense
    )


def test_functional_model_from_input_tensors():
    inputs = keras.Input(shape=(3,), name="features")
    assert inputs.shape == (None, 3) and inputs.dtype == "float32"
    hidden = Linear(4, activation="relu")(inputs)
    outputs = Linear(2)(hidden)
    assert outputs.shape == (None, 2)
    model = keras.Model(inputs=inputs, outputs=outputs, name="mlp")
    assert isinstance(model, keras.Model) and model.name == "mlp"
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "Linear", "Linear"]
    x = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    w1, b1, w2, b2 = model.get_weights()
    expected = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    np.testing.assert_allclose(model(x).numpy(), expected, rtol=1e-5, atol=1e-6)
    # Two inputs, merged by a layer taking a list.

    class Sum(keras.Layer):
        def call(self, inputs):
            return inputs[0] + inputs[1]

    a, b = keras.Input(shape=(2,)), keras.Input(shape=(2,))
    merged = keras.Model([a, b], Sum()([a, b]))
    np.testing.assert_allclose(merged([np.ones((1, 2)), np.ones((1, 2))]).numpy(), [[2.0, 2.0]])


# ----------------------------------------------------------------------------- summary


def summary_of(model, **kwargs):
    lines = []
    model.summary(print_fn=lines.append, **kwargs)
    assert len(lines) == 1
    return lines[0]


def test_summary_table_matches_keras_layout():
    model = keras.Sequential(
        [keras.Input(shape=(784,)), Linear(64, name="hidden"), Linear(10, name="logits")],
        name="classifier",
    )
    expected = """\
Model: "classifier"
┏━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━┓
┃ Layer (type)            ┃ Output Shape       ┃   Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━┩
│ hidden (Linear)         │ (None, 64)         │    50,240 │
├─────────────────────────┼────────────────────┼───────────┤
│ logits (Linear)         │ (None, 10)         │       650 │
└─────────────────────────┴────────────────────┴───────────┘
 Total params: 50,890 (198.79 KB)
 Trainable params: 50,890 (198.79 KB)
 Non-trainable params: 0 (0.00 B)"""
    assert summary_of(model, line_length=60) == expected
    assert all(len(line) == 60 for line in expected.splitlines()[1:-3])


def test_summary_of_unbuilt_and_non_trainable_layers():
    model = keras.Sequential([Linear(3, name="pending")], name="unbuilt")
    text = summary_of(model, line_length=70)
    assert "│ pending (Linear)" in text and "0 (unbuilt)" in text and "│ ?" in text
    counted = keras.Sequential([keras.Input(shape=(4,)), Counter(name="counter")], name="c")
    text = summary_of(counted, line_length=100, show_trainable=True)
    assert " Total params: 5 (20.00 B)" in text
    assert " Trainable params: 4 (16.00 B)" in text
    assert " Non-trainable params: 1 (4.00 B)" in text
    assert "Trainable" in text.splitlines()[2]


# ----------------------------------------------------------------------------- weight files


def make_model():
    return keras.Sequential([keras.Input(shape=(3,)), Linear(4), Counter(), Linear(2)])


def test_save_and_load_weights_round_trip(tmp_path):
    path = tmp_path / "model.weights.safetensors"
    source = make_model()
    source.save_weights(path)
    stored, metadata = saving.load_weights_file(path, return_metadata=True)
    layers = source.layers
    assert list(stored) == [
        f"0000/{layers[0].name}/kernel",
        f"0001/{layers[0].name}/bias",
        f"0002/{layers[1].name}/scale",
        f"0003/{layers[1].name}/count",
        f"0004/{layers[2].name}/kernel",
        f"0005/{layers[2].name}/bias",
    ]
    assert metadata["format_version"] == "1" and metadata["ferrotape_version"] == ft.__version__
    target = make_model()
    x = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    assert not np.allclose(target(x).numpy(), source(x).numpy())
    target.load_weights(path)
    for a, b in zip(target.get_weights(), source.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(target(x).numpy(), source(x).numpy())


def test_load_weights_reports_count_and_shape_mismatches(tmp_path):
    path = tmp_path / "w.safetensors"
    make_model().save_weights(path)
    smaller = keras.Sequential([keras.Input(shape=(3,)), Linear(4)])
    with pytest.raises(ValueError, match="holds 6 weights but model .* has 2"):
        smaller.load_weights(path)
    wider = keras.Sequential([keras.Input(shape=(5,)), Linear(4), Counter(), Linear(2)])
    with pytest.raises(ValueError, match=r"'0000/.*/kernel' .* shape \(3, 4\) .* shape \(5, 4\)"):
        wider.load_weights(path)
    unbuilt = keras.Sequential([Linear(4), Counter(), Linear(2)])
    with pytest.raises(ValueError, match="no weights yet"):
        unbuilt.load_weights(path)
    with pytest.raises(FileNotFoundError):
        make_model().load_weights(tmp_path / "missing.safetensors")


class ConfigurableLinear(Linear):
    def get_config(self):
        return {**super().get_config(), "units": self.units}


def test_clone_model_rebuilds_layers_with_fresh_weights():
    model = keras.Sequential([keras.Input(shape=(3,)), ConfigurableLinear(4, name="hidden")])
    clone = keras.models.clone_model(model)
    assert clone is not model and clone.built and clone.output_shape == (None, 4)
    assert clone.layers[0].name == "hidden" and clone.layers[0] is not model.layers[0]
    assert not np.array_equal(clone.get_weights()[0], model.get_weights()[0])
    config = model.get_config()
    assert config["layers"][0]["class_name"] == "InputLayer"
    # Keras 3's serialized form: an unregistered class is named by its module and class.
    assert config["layers"][1] == {
        "module": __name__,
        "class_name": "ConfigurableLinear",
        "config": {"name": "hidden", "trainable": True, "dtype": "float32", "units": 4},
        "registered_name": "ConfigurableLinear",
        "build_config": {"input_shape": [None, 3]},
    }


def test_input_validation():
    with pytest.raises(ValueError, match="shape"):
        keras.Input()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        keras.Sequential([keras.Input(shape=(2,)), Linear(1)])  # no warning with Input
