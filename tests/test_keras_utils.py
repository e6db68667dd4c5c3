"""ft.keras.utils: to_categorical and normalize against numpy, the progress bar's lines."""

import io

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras import utils
from ferrotape.keras.utils import progbar


def one_hot_reference(labels, num_classes):
    return np.eye(num_classes, dtype=np.float32)[np.asarray(labels)]


# ---------------------------------------------------------------- to_categorical
def test_to_categorical_matches_an_identity_lookup():
    labels = np.array([3, 0, 2, 2, 1])
    out = utils.to_categorical(labels)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == (5, 4)
    np.testing.assert_array_equal(out, one_hot_reference(labels, 4))
    np.testing.assert_array_equal(
        ft.keras.utils.to_categorical(labels, 6), one_hot_reference(labels, 6)
    )


@pytest.mark.parametrize(
    "shape, expected",
    [
        ((6,), (6, 5)),
        ((6, 1), (6, 5)),
        ((2, 3), (2, 3, 5)),
        ((3, 2, 1), (3, 2, 5)),
        ((6, 1, 1), (6, 1, 5)),
        ((1,), (1, 5)),
        ((1, 1), (1, 5)),
    ],
)
def test_to_categorical_shape_rules(shape, expected):
    labels = np.arange(np.prod(shape)).reshape(shape) % 5
    out = utils.to_categorical(labels, num_classes=5)
    assert out.shape == expected
    flat = labels.reshape(-1)
    np.testing.assert_array_equal(out.reshape(-1, 5), one_hot_reference(flat, 5))


def test_to_categorical_inputs_and_dtypes():
    assert utils.to_categorical(2, 3).tolist() == [0.0, 0.0, 1.0]  # a scalar: (num_classes,)
    assert utils.to_categorical([1, 0], dtype="int32").dtype == np.int32
    assert utils.to_categorical(np.array([1.0, 2.0]), 3).tolist() == [[0, 1, 0], [0, 0, 1]]
    tensor = ft.constant([[2], [0]])
    np.testing.assert_array_equal(utils.to_categorical(tensor, 3), one_hot_reference([2, 0], 3))
    assert utils.to_categorical([], num_classes=4).shape == (0, 4)


@pytest.mark.parametrize(
    "labels, num_classes, message",
    [
        ([0, 3], 3, r"labels must be in \[0, 3\)"),
        ([0, -1], None, r"found values from -1"),
        (["cat"], None, "expected integer class labels"),
        ([], None, "num_classes is required"),
    ],
)
def test_to_categorical_rejects_bad_labels(labels, num_classes, message):
    with pytest.raises(ValueError, match=message):
        utils.to_categorical(labels, num_classes)


# ---------------------------------------------------------------- normalize
def test_normalize_numpy_matches_the_norm_division():
    x = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [1.0, -2.0, 2.0]])
    np.testing.assert_allclose(
        utils.normalize(x), x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-300)
    )
    column_norms = np.abs(x).sum(axis=0, keepdims=True)
    np.testing.assert_allclose(utils.normalize(x, axis=0, order=1), x / column_norms)
    np.testing.assert_allclose(utils.normalize(x, axis=None), x / np.sqrt((x**2).sum()))


def test_normalize_tensor_is_differentiable_and_matches_numpy():
    x = ft.Variable([[3.0, 4.0], [1.0, 1.0]])
    with ft.GradientTape() as tape:
        y = utils.normalize(x)
        total = ft.reduce_sum(y[:, 0])
    np.testing.assert_allclose(y.numpy(), [[0.6, 0.8], [2**-0.5, 2**-0.5]], rtol=1e-6)
    # d(x0/|x|)/dx = (|x|^2 e0 - x0 x) / |x|^3, row by row.
    xs = x.numpy()
    norms = np.linalg.norm(xs, axis=1, keepdims=True)
    expected = (norms**2 * np.array([[1.0, 0.0]]) - xs[:, :1] * xs) / norms**3
    np.testing.assert_allclose(tape.gradient(total, x).numpy(), expected, rtol=1e-5)


# ---------------------------------------------------------------- formatting
def test_format_logs_uses_keras_precision():
    logs = {"loss": 0.123456, "acc": np.float32(0.5), "lr": 0.0001, "t": ft.constant(2.0)}
    assert utils.format_logs(logs) == "loss: 0.1235 - acc: 0.5000 - lr: 1.0000e-04 - t: 2.0000"
    assert utils.format_logs({"loss": float("nan"), "name": "x"}) == "loss: nan - name: x"
    assert utils.format_logs({}) == ""


@pytest.mark.parametrize(
    "seconds, text",
    [(2.4, "2s/step"), (0.5, "500ms/step"), (0.0042, "4ms/step"), (0.0005, "500us/step")],
)
def test_step_times_are_formatted_as_keras(seconds, text):
    assert progbar._format_step_time(seconds) == text


# ---------------------------------------------------------------- ProgressBar
class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def fake_clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(progbar, "clock", fake)  # the module that reads it
    return fake


def run_epoch(bar, clock, steps=10, seconds_per_step=0.5, batch_size=32):
    for step in range(1, steps + 1):
        clock.now += seconds_per_step
        bar.update(step, {"loss": 1.0 / step, "acc": step / steps}, samples_seen=step * batch_size)


def test_verbose_2_writes_one_line_per_epoch(fake_clock):
    out = io.StringIO()
    bar = utils.ProgressBar(10, description="Epoch 1/3", verbose=2, file=out)
    run_epoch(bar, fake_clock)
    assert out.getvalue() == ""  # nothing until the epoch ends
    bar.close({"loss": 0.25, "acc": 0.75, "val_loss": 0.5})
    bar.close()  # a second close writes nothing
    # 10 steps in 5 s: 500 ms per step, 320 samples in 5 s = 64 samples/s.
    assert out.getvalue() == (
        "Epoch 1/3: 10/10 - 5s - 500ms/step - loss: 0.2500 - acc: 0.7500 - val_loss: 0.5000 "
        "- 64 samples/s\n"
    )


def test_verbose_1_on_a_file_writes_only_the_final_line_with_a_full_bar(fake_clock):
    out = io.StringIO()
    with utils.ProgressBar(10, verbose=1, file=out) as bar:
        run_epoch(bar, fake_clock, batch_size=100)
    assert out.getvalue() == (
        "10/10 " + "━" * 20 + " 5s 500ms/step - loss: 0.1000 - acc: 1.0000 - 200 samples/s\n"
    )


def test_verbose_1_on_a_terminal_draws_a_live_bar(fake_clock):
    out = Terminal()
    bar = utils.ProgressBar(4, description="Epoch 2/2", verbose=1, file=out)
    fake_clock.now += 1.0
    bar.update(1, {"loss": 0.5}, samples_seen=8)
    # One step in 1 s, three to go: the ETA is 3 s.
    assert bar._info(final=False) == "ETA 3s 1s/step - loss: 0.5000 - 8.00 samples/s"
    fake_clock.now += 3.0
    bar.update(4, {"loss": 0.25}, samples_seen=32)
    bar.close()
    text = out.getvalue()
    assert text.startswith("\rEpoch 2/2: 0/4") and text.endswith("\n")
    final = text.rstrip("\n").rsplit("\r", 1)[1].rstrip()
    assert final == "Epoch 2/2: 4/4 " + "━" * 20 + " 4s 1s/step - loss: 0.2500 - 8.00 samples/s"


def test_stop_ends_the_bar_at_its_step_where_close_fills_it(fake_clock):
    out = Terminal()
    bar = utils.ProgressBar(4, description="Epoch 2/2", verbose=1, file=out)
    fake_clock.now += 1.0
    bar.update(1, {"loss": 0.5}, samples_seen=8)
    bar.stop()
    bar.close()  # after stop, nothing more
    final = out.getvalue().rstrip("\n").rsplit("\r", 1)[1].rstrip()
    assert final.startswith("Epoch 2/2: 1/4 ━━━━━ ") and final.endswith(
        "loss: 0.5000 - 8.00 samples/s"
    )
    plain = io.StringIO()
    bar = utils.ProgressBar(4, description="Epoch 2/2", verbose=1, file=plain)
    fake_clock.now += 1.0
    bar.update(1, {"loss": 0.5}, samples_seen=8)
    bar.stop()
    assert (
        plain.getvalue() == "Epoch 2/2: 1/4 (stopped) - 1s/step - loss: 0.5000 - 8.00 samples/s\n"
    )


def test_unknown_total_and_no_samples(fake_clock):
    out = io.StringIO()
    bar = utils.ProgressBar(None, verbose=2, file=out)
    fake_clock.now += 0.07
    bar.update(7, {"loss": 0.002})
    bar.close()
    assert out.getvalue() == "7/7 - 0s - 10ms/step - loss: 0.0020\n"


def test_verbose_0_is_silent_and_bad_arguments_are_rejected(fake_clock):
    out = Terminal()
    bar = utils.ProgressBar(3, verbose=0, file=out)
    run_epoch(bar, fake_clock, steps=3)
    bar.close()
    assert out.getvalue() == ""
    assert utils.ProgressBar(3, verbose="auto", file=io.StringIO()).verbose == 1
    with pytest.raises(ValueError, match="verbose must be"):
        utils.ProgressBar(3, verbose=3)
    with pytest.raises(ValueError, match="total must be"):
        utils.ProgressBar(-1)


def test_default_output_is_standard_error(fake_clock, capsys):
    bar = utils.ProgressBar(1, verbose=2)
    bar.update(1, {"loss": 1.0})
    bar.close()
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("1/1 - 0s")
