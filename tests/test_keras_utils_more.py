"""ft.keras.utils' pad_sequences, Progbar, Config, PyDataset (also through fit), the batch
packing helpers, interactive logging and the re-exported backend helpers."""

import io
import logging

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras import utils

SEQUENCES = [[1, 2, 3], [4], [5, 6, 7, 8, 9], []]


def test_pad_sequences_padding_and_truncating():
    # TF 2.21's tf.keras.utils.pad_sequences on the same input
    assert utils.pad_sequences(SEQUENCES).tolist() == [
        [0, 0, 1, 2, 3],
        [0, 0, 0, 0, 4],
        [5, 6, 7, 8, 9],
        [0, 0, 0, 0, 0],
    ]
    post = utils.pad_sequences(SEQUENCES, maxlen=3, padding="post", truncating="post", value=-1)
    assert post.tolist() == [[1, 2, 3], [4, -1, -1], [5, 6, 7], [-1, -1, -1]]
    pre = utils.pad_sequences(SEQUENCES, maxlen=2)
    assert pre.tolist() == [[2, 3], [0, 4], [8, 9], [0, 0]] and pre.dtype == np.int32
    floats = utils.pad_sequences([[0.5, 1.5]], maxlen=3, dtype="float32", value=0.25)
    assert floats.tolist() == [[0.25, 0.5, 1.5]]
    vectors = utils.pad_sequences([np.ones((2, 3)), np.ones((1, 3))], dtype="float32")
    assert vectors.shape == (2, 2, 3) and vectors[1, 0].tolist() == [0, 0, 0]
    strings = utils.pad_sequences([["a", "b"], ["c"]], dtype=object, value="")
    assert strings.tolist() == [["a", "b"], ["", "c"]]


def test_pad_sequences_errors():
    with pytest.raises(ValueError, match="padding type"):
        utils.pad_sequences(SEQUENCES, padding="middle")
    with pytest.raises(ValueError, match="truncating type"):
        utils.pad_sequences(SEQUENCES, truncating="middle")
    with pytest.raises(ValueError, match="non-iterable"):
        utils.pad_sequences([[1], 2])
    with pytest.raises(ValueError, match="dtype=object"):
        utils.pad_sequences([["a"]], value="x")
    with pytest.raises(ValueError, match="different from expected shape"):
        utils.pad_sequences([np.ones((2, 3)), np.ones((1, 4))])


def test_progbar_averages_values_over_steps_except_stateful_metrics():
    out = io.StringIO()
    bar = utils.Progbar(4, verbose=2, stateful_metrics=["lr"])
    bar._bar.file = out
    bar.update(1, [("loss", 4.0), ("lr", 0.1)])
    bar.update(3, [("loss", 1.0), ("lr", 0.01)])  # two steps at 1.0
    bar.add(1, [("loss", 2.0)])
    line = out.getvalue()
    assert line.startswith("4/4 - ")
    assert "loss: 2.0000" in line  # (4 + 2 * 1 + 2) / 4
    assert "lr: 0.0100" in line


def test_config_attribute_access_and_freezing():
    config = utils.Config(learning_rate=0.1, layers=[8, 4])
    config.epochs = 5
    assert config["epochs"] == 5 and config.layers == [8, 4] and len(config) == 3
    assert list(config) == ["epochs", "layers", "learning_rate"]
    assert config.to_json() == '{"learning_rate": 0.1, "layers": [8, 4], "epochs": 5}'
    config.freeze()
    assert config.frozen
    with pytest.raises(ValueError, match="frozen"):
        config.epochs = 6
    with pytest.raises(ValueError, match="frozen"):
        del config["epochs"]
    config.unfreeze()
    config.update(epochs=7)
    assert config.as_dict()["epochs"] == 7
    with pytest.raises(AttributeError, match="Did you mean 'epochs'"):
        _ = config.epoch


class Batches(utils.PyDataset):
    def __init__(self, x, y, batch_size):
        super().__init__()
        self.x, self.y, self.batch_size = x, y, batch_size
        self.epochs_ended = 0

    def __len__(self):
        return -(-len(self.x) // self.batch_size)

    def __getitem__(self, index):
        rows = slice(index * self.batch_size, (index + 1) * self.batch_size)
        return self.x[rows], self.y[rows]

    def on_epoch_end(self):
        self.epochs_ended += 1


def test_fit_reads_a_py_dataset_batch_by_batch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    data = Batches(x, y, 8)
    assert utils.Sequence is utils.PyDataset and data.num_batches == 5 and data.workers == 1
    model = ft.keras.Sequential([ft.keras.Input((3,)), ft.keras.layers.Dense(1, use_bias=False)])
    model.compile(optimizer=ft.keras.optimizers.SGD(0.1), loss="mse")
    history = model.fit(data, epochs=15, verbose=0)
    assert data.epochs_ended == 15
    assert history.history["loss"][-1] < 1e-3
    assert model.predict(data, verbose=0).shape == (40, 1)
    with pytest.raises(ValueError, match="PyDataset"):
        model.fit(data, y, verbose=0)

    class NoLength(utils.PyDataset):
        def __getitem__(self, index):
            return x, y

    with pytest.raises(ValueError, match="__len__"):
        model.fit(NoLength(), verbose=0)


def test_pack_and_unpack_x_y_sample_weight():
    x, y, w = np.ones(2), np.zeros(2), np.ones(2)
    assert utils.pack_x_y_sample_weight(x) is x
    assert utils.pack_x_y_sample_weight((x, x)) == ((x, x),)
    assert utils.pack_x_y_sample_weight(x, y) == (x, y)
    assert len(utils.pack_x_y_sample_weight(x, y, w)) == 3
    assert utils.unpack_x_y_sample_weight((x, y)) == (x, y, None)
    assert utils.unpack_x_y_sample_weight([x, y, w])[2] is w
    assert utils.unpack_x_y_sample_weight(x) == (x, None, None)


def test_interactive_logging_routes_lines_to_the_logger(caplog):
    assert utils.is_interactive_logging_enabled()
    utils.disable_interactive_logging()
    try:
        assert not utils.is_interactive_logging_enabled()
        out = io.StringIO()
        bar = utils.ProgressBar(2, verbose=2, file=out)
        bar.update(2, {"loss": 0.5})
        with caplog.at_level(logging.INFO, logger="ferrotape"):
            bar.close()
        assert out.getvalue() == ""
        assert "loss: 0.5000" in caplog.text
    finally:
        utils.enable_interactive_logging()
    assert utils.is_interactive_logging_enabled()


def test_backend_helpers_are_reexported():
    assert utils.standardize_dtype("float64") == "float64"
    assert utils.clear_session is ft.keras.backend.clear_session
    assert utils.is_keras_tensor(ft.keras.Input((2,))) and not utils.is_keras_tensor(ft.ones(2))


def rows(dataset):
    return [tuple(t.numpy().tolist() for t in s) for s in dataset]


def test_split_dataset_sizes_and_structure():
    x, y = np.arange(20).reshape(10, 2), np.arange(10)
    left, right = utils.split_dataset((x, y), left_size=0.8)
    assert rows(left) == [(x[i].tolist(), int(y[i])) for i in range(8)]
    assert rows(right) == [(x[i].tolist(), int(y[i])) for i in (8, 9)]
    left, right = utils.split_dataset(x, left_size=4, right_size=3)  # the middle is dropped
    assert [s.numpy().tolist() for s in right] == x[7:].tolist()
    assert len(list(left)) == 4
    # shuffled with Python's random seeded as Keras seeds it: TF 2.21 gives this order
    left, _ = utils.split_dataset(y, left_size=0.5, shuffle=True, seed=1)
    import random

    order = list(range(10))
    random.Random(1).shuffle(order)
    assert [int(s) for s in left] == order[:5]
    with pytest.raises(ValueError, match="at least one"):
        utils.split_dataset(x)
    with pytest.raises(ValueError, match="left_size"):
        utils.split_dataset(x, left_size=1.5)
    with pytest.raises(ValueError, match="same length"):
        utils.split_dataset((x, y[:3]), left_size=0.5)
    with pytest.raises(TypeError, match="numpy array"):
        utils.split_dataset("abc", left_size=0.5)


def test_timeseries_windows_and_targets():
    data, targets = np.arange(30).reshape(15, 2), np.arange(15) * 10
    windows = list(
        utils.timeseries_dataset_from_array(
            data, targets, 4, sequence_stride=2, sampling_rate=2, batch_size=None, start_index=1
        )
    )
    # starts 0, 2, 4, 6 within data[1:], steps 2 apart: 1 + (6 + 3 * 2) < 15
    assert len(windows) == 4
    for i, (window, target) in enumerate(windows):
        start = 1 + 2 * i
        assert window.numpy().tolist() == data[start : start + 8 : 2].tolist()
        assert int(target) == targets[start]
    batches = list(utils.timeseries_dataset_from_array(data, None, 5, batch_size=4))
    assert [b.shape[0] for b in batches] == [4, 4, 3]
    with pytest.raises(ValueError, match="sampling_rate"):
        utils.timeseries_dataset_from_array(data, None, 3, sampling_rate=0)


def test_get_source_inputs_walks_back_to_the_inputs():
    a, b = ft.keras.Input((3,)), ft.keras.Input((3,))
    out = ft.keras.layers.Add()([ft.keras.layers.Dense(2)(a), ft.keras.layers.Dense(2)(b)])
    sources = utils.get_source_inputs(out)
    assert len(sources) == 2 and sources[0] is a and sources[1] is b
    assert utils.get_source_inputs(a)[0] is a


def test_img_to_array_layouts_and_a_missing_pillow(monkeypatch):
    gray = np.arange(6, dtype=np.uint8).reshape(2, 3)
    assert utils.img_to_array(gray).shape == (2, 3, 1)
    assert utils.img_to_array(gray, data_format="channels_first").shape == (1, 2, 3)
    assert utils.img_to_array(np.zeros((2, 3, 4))).dtype == np.float32
    with pytest.raises(ValueError, match="Unsupported image shape"):
        utils.img_to_array(np.zeros(3))
    monkeypatch.setitem(__import__("sys").modules, "PIL", None)
    with pytest.raises(ImportError, match="requires PIL"):
        utils.array_to_img(np.zeros((2, 2, 3)))


def test_images_round_trip_through_files(tmp_path):
    pytest.importorskip("PIL", reason="Pillow is optional (image files)")
    x = np.random.default_rng(0).random((6, 8, 3)).astype(np.float32) * 3 - 1
    img = utils.array_to_img(x)
    scaled = (x - x.min()) / (x.max() - x.min()) * 255
    np.testing.assert_array_equal(np.asarray(img), scaled.astype(np.uint8))
    assert utils.array_to_img(np.full((2, 2, 1), 1000.0), scale=False).mode == "I"
    path = tmp_path / "image.png"
    utils.save_img(path, x)
    loaded = utils.img_to_array(utils.load_img(path))
    np.testing.assert_array_equal(loaded, scaled.astype(np.uint8).astype(np.float32))
    assert utils.img_to_array(utils.load_img(path, color_mode="grayscale")).shape == (6, 8, 1)
    assert np.asarray(utils.load_img(path, target_size=(3, 4))).shape == (3, 4, 3)
    cropped = utils.load_img(path, target_size=(4, 4), keep_aspect_ratio=True)
    assert np.asarray(cropped).shape == (4, 4, 3)
    with pytest.warns(UserWarning, match="JPEG"):
        utils.save_img(tmp_path / "image.jpg", np.ones((2, 2, 4)))
    with pytest.raises(ValueError, match="interpolation"):
        utils.load_img(path, target_size=(3, 3), interpolation="cubic-ish")
    with pytest.raises(ValueError, match="color_mode"):
        utils.load_img(path, color_mode="cmyk")
