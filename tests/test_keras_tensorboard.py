"""keras.callbacks.TensorBoard: model.fit writes the event files Keras 3 writes (train/ and
validation/, epoch_*, batch_*, evaluation_*, weight histograms and images), read back with
TensorBoard's reader; where TensorFlow is installed, the tags and steps are compared with Keras's.
"""

import os

import numpy as np
import pytest

pytest.importorskip("tensorboard", reason="the tensorboard extra is not installed")

from test_summary import read_events  # noqa: E402

import ferrotape as ft  # noqa: E402
from ferrotape.summary.summaries import histogram_buckets  # noqa: E402

keras = ft.keras
RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 3)).astype(np.float32)
Y = X.sum(axis=1, keepdims=True)


def small_model(lib):
    # Named, because Keras numbers unnamed layers per process and the tags hold the names.
    model = lib.Sequential(
        [
            lib.Input((3,)),
            lib.layers.Dense(4, activation="relu", name="hidden"),
            lib.layers.Dense(1, name="out"),
        ],
        name="net",
    )
    model.compile(optimizer=lib.optimizers.SGD(0.01), loss="mse", metrics=["mae"])
    return model


def steps(events):
    return {tag: [s for s, _, _ in series] for tag, series in events.items()}


def test_epoch_logs_go_to_train_and_validation(tmp_path):
    model = small_model(keras)
    history = model.fit(
        X,
        Y,
        epochs=3,
        batch_size=10,
        validation_split=0.25,
        verbose=0,
        callbacks=[keras.callbacks.TensorBoard(tmp_path)],
    )
    train, validation = read_events(tmp_path / "train"), read_events(tmp_path / "validation")
    # write_graph (on by default) adds the model's Keras config as the `keras` tag at step 0.
    graph = train.pop("keras")
    assert [s for s, _, _ in graph] == [0]
    assert steps(train) == {
        t: [0, 1, 2] for t in ("epoch_loss", "epoch_mae", "epoch_learning_rate")
    }
    assert steps(validation) == {
        "epoch_loss": [0, 1, 2],
        "epoch_mae": [0, 1, 2],
        # 30 training samples in batches of 10: 3 optimizer steps per epoch.
        "evaluation_loss_vs_iterations": [3, 6, 9],
        "evaluation_mae_vs_iterations": [3, 6, 9],
    }
    for name in ("loss", "mae"):
        written = [v.item() for _, v, _ in train[f"epoch_{name}"]]
        np.testing.assert_allclose(written, history.history[name], rtol=1e-6)
        written = [v.item() for _, v, _ in validation[f"epoch_{name}"]]
        np.testing.assert_allclose(written, history.history[f"val_{name}"], rtol=1e-6)
        written = [v.item() for _, v, _ in validation[f"evaluation_{name}_vs_iterations"]]
        np.testing.assert_allclose(written, history.history[f"val_{name}"], rtol=1e-6)
    assert [v.item() for _, v, _ in train["epoch_learning_rate"]] == pytest.approx([0.01] * 3)
    assert {p for series in train.values() for _, _, p in series} == {"scalars"}


def test_batch_level_scalars_every_n_batches(tmp_path):
    batch_losses = []
    record = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: batch_losses.append(logs["loss"])
    )
    model = small_model(keras)
    model.fit(
        X,
        Y,
        epochs=2,
        batch_size=10,
        verbose=0,
        callbacks=[keras.callbacks.TensorBoard(tmp_path, update_freq=3), record],
    )
    train = read_events(tmp_path / "train")
    assert steps(train)["batch_loss"] == [3, 6] and steps(train)["batch_mae"] == [3, 6]
    written = [v.item() for _, v, _ in train["batch_loss"]]
    np.testing.assert_allclose(written, [batch_losses[2], batch_losses[5]], rtol=1e-6)
    assert not os.path.exists(tmp_path / "validation")


class SummarizingDense(keras.layers.Dense):
    """Writes a custom summary from inside call, as Keras's docs show for update_freq."""

    def call(self, inputs, *args, **kwargs):
        outputs = super().call(inputs, *args, **kwargs)
        ft.summary.histogram("outputs", outputs)
        return outputs


def test_custom_summaries_in_call_use_the_callbacks_writer_and_the_traced_step(tmp_path):
    model = keras.Sequential([keras.Input((3,)), SummarizingDense(2)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(
        X,
        Y,
        epochs=1,
        batch_size=20,
        verbose=0,
        callbacks=[keras.callbacks.TensorBoard(tmp_path, update_freq="batch")],
    )
    # fit traces its step with the callback's writer and step of that moment, and each call
    # writes there: Keras 3 on TensorFlow 2.21 writes this summary at steps [1, 1] too.
    assert steps(read_events(tmp_path / "train"))["outputs"] == [1, 1]
    # Outside fit there is no default writer again: the summary is a no-op.
    model.predict(X[:2], verbose=0)
    assert not bool(ft.summary.should_record_summaries())


def test_weight_histograms_and_images(tmp_path):
    weights_at_epoch_end = []
    record = keras.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: weights_at_epoch_end.append(
            [w.numpy().copy() for w in model.weights]
        )
    )
    model = small_model(keras)
    model.fit(
        X,
        Y,
        epochs=3,
        batch_size=10,
        verbose=0,
        callbacks=[
            keras.callbacks.TensorBoard(tmp_path, histogram_freq=2, write_images=True),
            record,
        ],
    )
    train = read_events(tmp_path / "train")
    names = ["net/hidden/kernel", "net/hidden/bias", "net/out/kernel", "net/out/bias"]
    for name in names:
        assert steps(train)[f"{name}/histogram"] == [0, 2]
        assert train[f"{name}/histogram"][0][2] == "histograms"
    # The last bias has one element: squeezed to a scalar it is no image, as in Keras.
    assert {t for t in train if t.endswith("/image")} == {f"{n}/image" for n in names[:3]}
    for name, weight in zip(names, weights_at_epoch_end[2], strict=True):
        np.testing.assert_array_equal(train[f"{name}/histogram"][1][1], histogram_buckets(weight))
    width, height = train["net/hidden/kernel/image"][0][1][:2]
    assert (int(width), int(height)) == (4, 3)  # a [3, 4] kernel drawn as it is


def test_write_graph_writes_the_keras_config_where_the_model_has_to_json(tmp_path, monkeypatch):
    model = small_model(keras)
    config = '{"class_name": "Sequential"}'
    monkeypatch.setattr(type(model), "to_json", lambda self: config, raising=False)
    model.fit(X, Y, epochs=1, verbose=0, callbacks=[keras.callbacks.TensorBoard(tmp_path)])
    ((step, value, plugin),) = read_events(tmp_path / "train")["keras"]
    assert (step, plugin, value.item()) == (0, "graph_keras_model", config.encode())
    no_graph = keras.callbacks.TensorBoard(tmp_path / "off", write_graph=False)
    model.fit(X, Y, epochs=1, verbose=0, callbacks=[no_graph])
    assert "keras" not in read_events(tmp_path / "off" / "train")


def test_evaluate_alone_writes_evaluation_scalars(tmp_path):
    model = small_model(keras)
    model.fit(X, Y, epochs=1, batch_size=20, verbose=0)
    model.evaluate(X, Y, verbose=0, callbacks=[keras.callbacks.TensorBoard(tmp_path)])
    validation = read_events(tmp_path / "validation")
    assert steps(validation) == {
        "evaluation_loss_vs_iterations": [2],
        "evaluation_mae_vs_iterations": [2],
    }


def test_profile_batch_is_checked_as_keras_checks_it(tmp_path):
    for accepted in (0, 3, (1, 2), "2,4"):
        keras.callbacks.TensorBoard(tmp_path, profile_batch=accepted)
    for rejected in (-1, (5, 2), "a,b", 1.5):
        with pytest.raises(ValueError, match="profile_batch must be"):
            keras.callbacks.TensorBoard(tmp_path, profile_batch=rejected)


def fit_and_read(lib, logdir):
    model = small_model(lib)
    model.fit(
        X,
        Y,
        epochs=2,
        batch_size=10,
        validation_split=0.25,
        verbose=0,
        callbacks=[
            lib.callbacks.TensorBoard(
                str(logdir), histogram_freq=1, write_images=True, update_freq=2
            )
        ],
    )
    return {d: steps(read_events(logdir / d)) for d in ("train", "validation")}


def test_tags_and_steps_match_keras(tmp_path):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
    real_keras = pytest.importorskip("keras")
    theirs = fit_and_read(real_keras, tmp_path / "keras")
    ours = fit_and_read(keras, tmp_path / "ft")
    # Keras also writes the model's config (tag "keras") where ferrotape's model has no to_json.
    if not hasattr(keras.Model, "to_json"):
        theirs["train"].pop("keras")
    assert ours == theirs
