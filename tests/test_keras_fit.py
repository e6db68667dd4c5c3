"""Model.compile / fit / evaluate / predict against numpy references: exact SGD updates, the
logged running means, validation, datasets, callbacks, sample and class weights."""

import numpy as np
import pytest

import ferrotape as ft
from ferrotape import keras


class Linear(keras.Layer):
    """A Dense-like layer written against the public Layer API."""

    def __init__(self, units, activation=None, kernel_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.activation = keras.activations.get(activation)
        self.kernel_regularizer = kernel_regularizer

    def build(self, input_shape):
        self.kernel = self.add_weight(
            shape=(input_shape[-1], self.units), regularizer=self.kernel_regularizer, name="kernel"
        )
        self.bias = self.add_weight(shape=(self.units,), initializer="zeros", name="bias")

    def call(self, inputs):
        return self.activation(ft.matmul(inputs, self.kernel) + self.bias)


class Recorder(keras.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.calls = []

    def call(self, inputs, training=None):
        self.calls.append(training)
        return inputs


def regression_data(n=96, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    w = np.array([[1.5, -0.5], [-2.0, 1.0], [0.5, 2.0]], np.float32)
    return x, x @ w + np.array([0.3, -0.7], np.float32), w


def blobs(n_per_class=60, seed=0):
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 3.0], [3.0, -2.0], [-3.0, -2.0]])
    x = np.concatenate([c + rng.normal(size=(n_per_class, 2)) for c in centers])
    y = np.repeat(np.arange(3), n_per_class)
    order = rng.permutation(len(y))
    return x[order].astype(np.float32), y[order]


def linear_model(inputs=3, units=2, **kwargs):
    return keras.Sequential([keras.Input(shape=(inputs,)), Linear(units, **kwargs)])


# ----------------------------------------------------------------------------- fit


def test_fit_linear_regression_converges_to_the_true_weights():
    ft.random.set_seed(0)
    x, y, w = regression_data()
    model = linear_model()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="mse")
    history = model.fit(x, y, batch_size=16, epochs=40, verbose=0)
    assert history.history["loss"][-1] < 1e-6
    kernel, bias = model.get_weights()
    np.testing.assert_allclose(kernel, w, atol=1e-3)
    np.testing.assert_allclose(bias, [0.3, -0.7], atol=1e-3)


def test_fit_follows_the_sgd_update_rule_and_logs_the_sample_weighted_mean_loss():
    x, y, _ = regression_data(n=40)
    model = linear_model()
    kernel, bias = (w.astype(np.float64) for w in model.get_weights())
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.05), loss="mean_squared_error")
    history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    expected_losses = []
    for _ in range(3):
        total = 0.0
        for start in range(0, 40, 16):  # batches of 16, 16 and 8
            xb, yb = x[start : start + 16], y[start : start + 16]
            residual = xb @ kernel + bias - yb
            total += (residual**2).mean() * len(xb)
            kernel -= 0.05 * 2 * xb.T @ residual / residual.size
            bias -= 0.05 * 2 * residual.sum(0) / residual.size
        expected_losses.append(total / 40)
    np.testing.assert_allclose(history.history["loss"], expected_losses, rtol=1e-5)
    np.testing.assert_allclose(model.get_weights()[0], kernel, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.get_weights()[1], bias, rtol=1e-5, atol=1e-6)
    assert history.epoch == [0, 1, 2] and model.history is history
    assert int(model.optimizer.iterations.numpy()) == 9


def test_softmax_classifier_reaches_high_accuracy_with_history_keys():
    ft.random.set_seed(1)
    x, y = blobs()
    model = keras.Sequential(
        [keras.Input(shape=(2,)), Linear(16, activation="relu"), Linear(3, activation="softmax")]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=0.05),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    history = model.fit(x, y, batch_size=32, epochs=25, validation_split=0.25, verbose=0)
    assert list(history.history) == ["loss", "accuracy", "val_loss", "val_accuracy"]
    assert all(len(values) == 25 for values in history.history.values())
    assert history.history["accuracy"][-1] > 0.95 and history.history["val_accuracy"][-1] > 0.95
    assert history.history["loss"][-1] < history.history["loss"][0] / 5
    loss, accuracy = model.evaluate(x, y, verbose=0)
    probabilities = model.predict(x, verbose=0)
    assert probabilities.shape == (180, 3)
    np.testing.assert_allclose(probabilities.sum(1), 1.0, rtol=1e-5)
    assert accuracy == pytest.approx((probabilities.argmax(1) == y).mean())
    reference = -np.log(probabilities[np.arange(len(y)), y]).mean()
    assert loss == pytest.approx(reference, rel=1e-4)
    assert model.metrics_names == ["loss", "accuracy"]


def test_one_hot_labels_with_acc_keep_the_metric_name():
    x, y = blobs(n_per_class=20)
    model = linear_model(inputs=2, units=3, activation="softmax")
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["acc"])
    history = model.fit(x, keras.utils.to_categorical(y, 3), epochs=2, verbose=0)
    assert list(history.history) == ["loss", "acc"]


def test_validation_split_holds_out_the_last_samples():
    x, y, _ = regression_data(n=50)
    model = linear_model()
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse", metrics=["mae"])
    history = model.fit(x, y, epochs=2, validation_split=0.2, verbose=0)
    # The last epoch's validation ran on the final weights: evaluate the last 10 samples.
    val_loss, val_mae = model.evaluate(x[40:], y[40:], verbose=0)
    assert history.history["val_loss"][-1] == pytest.approx(val_loss, rel=1e-6)
    assert history.history["val_mae"][-1] == pytest.approx(val_mae, rel=1e-6)
    # validation_data given explicitly, evaluated every second epoch.
    history = model.fit(
        x, y, epochs=4, validation_data=(x[:8], y[:8]), validation_freq=2, verbose=0
    )
    assert len(history.history["val_loss"]) == 2 and len(history.history["loss"]) == 4


def test_fit_on_a_dataset_and_with_steps_per_epoch():
    x, y, w = regression_data(n=64)
    model = linear_model()
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    dataset = ft.data.Dataset.from_tensor_slices((x, y)).shuffle(64, seed=1).batch(16)
    history = model.fit(dataset, epochs=30, validation_data=dataset, verbose=0)
    assert history.history["loss"][-1] < 1e-4 and "val_loss" in history.history
    np.testing.assert_allclose(model.get_weights()[0], w, atol=1e-2)
    steps_before = int(model.optimizer.iterations.numpy())
    model.fit(dataset.repeat(), epochs=2, steps_per_epoch=3, verbose=0)
    assert int(model.optimizer.iterations.numpy()) == steps_before + 6
    assert model.evaluate(dataset, verbose=0) == pytest.approx(
        model.evaluate(x, y, verbose=0), rel=1e-5
    )
    with pytest.raises(ValueError, match="`y` is not supported"):
        model.fit(dataset, y, verbose=0)


@pytest.mark.parametrize(("run_eagerly", "train_calls"), [(True, 2), (False, 1)])
def test_training_flag_in_fit_evaluate_and_predict(run_eagerly, train_calls):
    recorder = Recorder()
    model = keras.Sequential([keras.Input(shape=(3,)), recorder, Linear(2)])
    model.compile(optimizer="sgd", loss="mse", run_eagerly=run_eagerly)
    x, y, _ = regression_data(n=8)
    recorder.calls.clear()
    model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    # Two batches: the Python call runs for each, or once while the step is traced.
    assert recorder.calls == [True] * train_calls
    recorder.calls.clear()
    model.evaluate(x, y, batch_size=8, verbose=0)
    model.predict(x, batch_size=8, verbose=0)
    assert recorder.calls == [False, False]


def test_regularization_is_part_of_the_loss():
    x, y, _ = regression_data(n=16)
    model = linear_model(kernel_regularizer=keras.regularizers.L2(0.1))
    model.compile(optimizer="sgd", loss="mse")
    kernel, bias = model.get_weights()
    expected = ((x @ kernel + bias - y) ** 2).mean() + 0.1 * (kernel**2).sum()
    assert model.evaluate(x, y, verbose=0) == pytest.approx(expected, rel=1e-5)
    assert model.test_on_batch(x, y) == pytest.approx(expected, rel=1e-5)


def test_sample_weight_and_class_weight():
    x, y, _ = regression_data(n=12)
    model = linear_model()
    model.compile(optimizer="sgd", loss="mse")
    kernel, bias = model.get_weights()
    weights = np.linspace(0.0, 2.0, 12).astype(np.float32)
    per_sample = ((x @ kernel + bias - y) ** 2).mean(1)
    result = model.evaluate(x, y, sample_weight=weights, batch_size=12, verbose=0)
    assert result == pytest.approx((per_sample * weights).mean(), rel=1e-5)
    # class_weight is sample_weight looked up from the labels.
    labels = np.array([0, 1, 1, 2], np.int64)
    inputs = np.eye(4, 3, dtype=np.float32)
    first, second = (linear_model(units=3) for _ in range(2))
    second.set_weights(first.get_weights())
    for model in (first, second):
        model.compile(optimizer=keras.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy")
    class_weight = {0: 1.0, 1: 0.25, 2: 3.0}
    first.train_on_batch(inputs, labels, class_weight=class_weight)
    second.train_on_batch(inputs, labels, sample_weight=np.array([1.0, 0.25, 0.25, 3.0]))
    for a, b in zip(first.get_weights(), second.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


# ----------------------------------------------------------------------------- callbacks


class HookLog(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.events = []

    def on_train_begin(self, logs=None):
        self.events.append(("train_begin", sorted(self.params)))

    def on_epoch_begin(self, epoch, logs=None):
        self.events.append(("epoch_begin", epoch))

    def on_train_batch_end(self, batch, logs=None):
        self.events.append(("batch_end", batch, sorted(logs)))

    def on_epoch_end(self, epoch, logs=None):
        self.events.append(("epoch_end", epoch, sorted(logs)))

    def on_test_end(self, logs=None):
        self.events.append(("test_end", sorted(logs)))

    def on_train_end(self, logs=None):
        self.events.append(("train_end",))


def test_callback_hooks_params_and_logs():
    x, y, _ = regression_data(n=20)
    model = linear_model()
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    log = HookLog()
    model.fit(x, y, batch_size=10, epochs=2, validation_data=(x, y), callbacks=[log], verbose=0)
    assert log.model is model
    assert log.events[0] == ("train_begin", ["epochs", "steps", "verbose"])
    assert log.events[1:5] == [
        ("epoch_begin", 0),
        ("batch_end", 0, ["loss", "mae"]),
        ("batch_end", 1, ["loss", "mae"]),
        ("test_end", ["loss", "mae"]),
    ]
    assert log.events[5] == ("epoch_end", 0, ["loss", "mae", "val_loss", "val_mae"])
    assert log.events[-1] == ("train_end",)
    assert log.params == {"verbose": 0, "epochs": 2, "steps": 2}


def test_stop_training_and_early_stopping():
    class StopAfterThree(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 2:
                self.model.stop_training = True

    x, y, _ = regression_data(n=64)
    model = linear_model()
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(x, y, batch_size=8, epochs=5, callbacks=[StopAfterThree()], verbose=0)
    assert history.epoch == [0] and int(model.optimizer.iterations.numpy()) == 3
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="mse")
    stopper = keras.callbacks.EarlyStopping(monitor="loss", patience=1)
    history = model.fit(x, y, epochs=10, callbacks=[stopper], verbose=0)
    assert len(history.epoch) == 2


def test_metric_results_are_read_only_when_needed():
    class CountingMSE(keras.metrics.MeanSquaredError):
        reads = 0

        def result(self):
            CountingMSE.reads += 1
            return super().result()

    x, y, _ = regression_data(n=80)
    model = linear_model()
    model.compile(optimizer="sgd", loss="mse", metrics=[CountingMSE(name="mse")])
    model.fit(x, y, batch_size=8, epochs=2, verbose=0)  # 20 batches, no per-batch reader
    assert CountingMSE.reads <= 4


def test_progress_output(capsys):
    x, y, _ = regression_data(n=32)
    model = linear_model()
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    model.fit(x, y, epochs=2, verbose=2)
    err = capsys.readouterr().err
    assert "Epoch 1/2" in err and "Epoch 2/2" in err and "loss:" in err and "mae:" in err
    model.fit(x, y, epochs=1, verbose=0)
    assert capsys.readouterr().err == ""


# ----------------------------------------------------------------------------- evaluate/predict


def test_evaluate_return_forms_and_batch_methods():
    x, y, _ = regression_data(n=30)
    model = linear_model()
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    kernel, bias = model.get_weights()
    mse = ((x @ kernel + bias - y) ** 2).mean()
    assert isinstance(model.evaluate(x, y, batch_size=7, verbose=0), float)
    assert model.evaluate(x, y, batch_size=7, verbose=0) == pytest.approx(mse, rel=1e-5)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    loss, mae = model.evaluate(x, y, verbose=0)
    assert mae == pytest.approx(np.abs(x @ kernel + bias - y).mean(), rel=1e-5)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert logs == {"loss": pytest.approx(loss), "mae": pytest.approx(mae)}
    predictions = model.predict(x, batch_size=7, verbose=0)
    assert isinstance(predictions, np.ndarray) and predictions.shape == (30, 2)
    np.testing.assert_allclose(predictions, x @ kernel + bias, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict_on_batch(x[:3]), predictions[:3], rtol=1e-6)
    loss_before = model.train_on_batch(x, y)
    assert loss_before[0] == pytest.approx(mse, rel=1e-5)
    residual = x @ kernel + bias - y
    np.testing.assert_allclose(
        model.get_weights()[0], kernel - 0.1 * 2 * x.T @ residual / residual.size, rtol=1e-5
    )


def test_python_lists_are_arrays():
    model = linear_model(inputs=2, units=1)
    model.compile(optimizer="sgd", loss="mse")
    kernel, bias = model.get_weights()
    x = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    np.testing.assert_allclose(model.predict(x, verbose=0), np.array(x) @ kernel + bias, rtol=1e-6)
    history = model.fit(x, [[1.0], [2.0], [3.0]], epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2


def test_predict_multiple_outputs():
    inputs = keras.Input(shape=(3,))
    model = keras.Model(inputs, [Linear(2)(inputs), Linear(1)(inputs)])
    first, second = model.predict(np.ones((5, 3), np.float32), batch_size=2, verbose=0)
    assert first.shape == (5, 2) and second.shape == (5, 1)


def test_custom_train_step():
    class CustomModel(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = Linear(2)

        def call(self, inputs):
            return self.dense(inputs)

        def train_step(self, data):
            x, y = data
            with ft.GradientTape() as tape:
                loss = ft.reduce_mean(ft.abs(self(x, training=True) - y))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables, strict=True))
            return {"l1": loss}

    x, y, _ = regression_data(n=32)
    model = CustomModel()
    model.compile(optimizer=keras.optimizers.SGD(0.05))
    history = model.fit(x, y, batch_size=32, epochs=3, verbose=0)
    assert list(history.history) == ["l1"] and history.history["l1"][2] < history.history["l1"][0]


def test_fit_errors_are_clear():
    x, y, _ = regression_data(n=10)
    model = linear_model()
    with pytest.raises(ValueError, match=r"^You must call `compile\(\)` before using the model\.$"):
        model.fit(x, y, verbose=0)
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="cardinality"):
        model.fit(x, y[:9], verbose=0)
    with pytest.raises(ValueError, match="validation_split"):
        model.fit(x, y, validation_split=1.5, verbose=0)
    with pytest.raises(ValueError, match="batch_size"):
        model.fit(x, y, batch_size=0, verbose=0)
    with pytest.raises(ValueError, match="metrics by keyword"):
        model.compile("sgd", "mse", ["mae"])  # Keras 3: the third argument is loss_weights
    no_loss = linear_model()
    no_loss.compile(optimizer="sgd")
    with pytest.raises(ValueError, match="No loss to compute"):
        no_loss.fit(x, y, verbose=0)


def test_fit_on_the_shipped_fashion_mnist_subset_reaches_a_stated_accuracy():
    """Real data: Dense layers and a small CNN trained with compile/fit on the embedded
    Fashion-MNIST subset, judged on its held-out test images."""
    from ferrotape.keras import layers
    from ferrotape.keras.datasets import fashion_mnist

    ft.random.set_seed(1)
    (x_train, y_train), (x_test, y_test) = fashion_mnist.load_data(subset="small")
    x_train = x_train[:3000].astype("float32")[..., None] / 255.0
    y_train = y_train[:3000]
    x_test = x_test.astype("float32")[..., None] / 255.0

    mlp = ft.keras.Sequential(
        [
            ft.keras.Input(shape=(28, 28, 1)),
            layers.Flatten(),
            layers.Dense(64, activation="relu"),
            layers.Dense(10, activation="softmax"),
        ]
    )
    mlp.compile(
        optimizer=ft.keras.optimizers.Adam(1e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    mlp.fit(x_train, y_train, batch_size=64, epochs=3, verbose=0)
    _, accuracy = mlp.evaluate(x_test, y_test, verbose=0)
    assert accuracy >= 0.72, accuracy

    cnn = ft.keras.Sequential(
        [
            ft.keras.Input(shape=(28, 28, 1)),
            layers.Conv2D(8, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(),
            layers.Conv2D(16, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(),
            layers.Flatten(),
            layers.Dense(10, activation="softmax"),
        ]
    )
    cnn.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    cnn.fit(x_train, y_train, batch_size=64, epochs=3, verbose=0)
    _, accuracy = cnn.evaluate(x_test, y_test, verbose=0)
    assert accuracy >= 0.7, accuracy
