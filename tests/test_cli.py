"""The ``ferrotape`` command: ``ferrotape train`` end to end, its files, options and errors.

One run goes through ``python -m ferrotape`` in a subprocess; the others call ``cli.main`` in
this process on a tiny IDX data set written here (so a debug build stays quick).
"""

import gzip
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy

import ferrotape as ft
from ferrotape import cli
from ferrotape.keras.datasets import fashion_mnist

ROOT = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
EPOCH_LINE = re.compile(
    r"^Epoch (\d+)/(\d+) - loss: (\S+) - accuracy: (\S+) - val_loss: (\S+) - "
    r"val_accuracy: (\S+) - (\S+)s - (\d+) images/s$",
    re.MULTILINE,
)
HISTORY_KEYS = {"loss", "accuracy", "val_loss", "val_accuracy", "seconds", "images_per_second"}


def write_idx(path, array):
    """Writes ``array`` (uint8) as a gzip-compressed IDX file."""
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(
        int(n).to_bytes(4, "big") for n in array.shape
    )
    path.write_bytes(gzip.compress(header + array.astype(np.uint8).tobytes()))


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory):
    """A directory with the four Fashion-MNIST IDX files: 192 training and 64 test images
    taken from the shipped subset."""
    directory = tmp_path_factory.mktemp("idx")
    (x_train, y_train), (x_test, y_test) = fashion_mnist.load_data(subset="small")
    for name, array in zip(
        fashion_mnist.FILES, (x_train[:192], y_train[:192], x_test[:64], y_test[:64]), strict=True
    ):
        write_idx(directory / name, array)
    return directory


def run_main(capsys, *argv):
    """``cli.main(argv)`` in this process: (exit status, stdout, stderr)."""
    status = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def run_train(capsys, options, data, out):
    """``ferrotape train OPTIONS --data DATA --out OUT`` in this process."""
    return run_main(capsys, "train", *options.split(), "--data", data, "--out", out)


@pytest.fixture
def no_plot(monkeypatch):
    """Skips drawing the PNG (a few tenths of a second) in tests that do not look at it."""
    monkeypatch.setattr(cli, "plot_history", lambda history, path: None)


def epoch_lines(stdout):
    return [
        {
            "epoch": int(m[0]),
            "epochs": int(m[1]),
            "loss": float(m[2]),
            "accuracy": float(m[3]),
            "val_loss": float(m[4]),
            "val_accuracy": float(m[5]),
        }
        for m in EPOCH_LINE.findall(stdout)
    ]


def test_file_names_match_the_docs():
    assert cli.STATE_FILE in cli.__doc__
    assert cli.WEIGHTS_FILE in cli.__doc__
    assert cli.HISTORY_FILE in cli.__doc__
    assert cli.CURVES_FILE in cli.__doc__


# ----------------------------------------------------------------------------- python -m
@pytest.fixture(scope="module")
def module_run(tmp_path_factory):
    """``python -m ferrotape train --limit 256 --epochs 1`` on the shipped subset (the CNN)."""
    out = tmp_path_factory.mktemp("run") / "results"
    completed = subprocess.run(
        [sys.executable, "-m", "ferrotape", "train", "--limit", "256", "--epochs", "1"]
        + ["--seed", "3", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return completed, out


def test_python_m_ferrotape_train_prints_the_epoch_and_the_results(module_run):
    completed, out = module_run
    assert completed.returncode == 0, completed.stderr
    stdout = completed.stdout
    assert "Training the CNN on 256 Fashion-MNIST images (1000 test images) for 1 epoch," in stdout
    (line,) = epoch_lines(stdout)
    assert (line["epoch"], line["epochs"]) == (1, 1)
    assert 0 <= line["accuracy"] <= 1 and 0 <= line["val_accuracy"] <= 1
    # The progress bar (standard error) ends the epoch with Keras's line.
    assert re.search(
        r"Epoch 1/1: 4/4 .* - loss: \S+ - accuracy: \S+ - \d+ samples/s", completed.stderr
    )
    test_accuracy = float(re.search(r"^Test accuracy: (\S+)$", stdout, re.MULTILINE)[1])
    assert test_accuracy == line["val_accuracy"]
    for label, name in (
        ("Weights", cli.WEIGHTS_FILE),
        ("History", cli.HISTORY_FILE),
        ("Training curves", cli.CURVES_FILE),
    ):
        assert f"{label}: {out / name}\n" in stdout
    assert f"Training state: {out / cli.STATE_FILE} (go on with: ferrotape train --resume" in stdout
    assert "Traceback" not in completed.stderr


def test_python_m_ferrotape_train_writes_weights_history_and_png(module_run):
    completed, out = module_run
    assert completed.returncode == 0, completed.stderr
    stored = safetensors.numpy.load_file(str(out / cli.WEIGHTS_FILE))
    model = cli.build_model("cnn")
    model.build((None, 28, 28, 1))
    # Every weight, trainable or not (BatchNormalization's moving statistics too), in order.
    assert len(stored) == len(model.weights) == 6 * 2 + 7 * 4 + 2 * 2  # convs, BatchNorms, Denses
    assert [stored[k].shape for k in sorted(stored)] == [tuple(w.shape) for w in model.weights]
    model.load_weights(out / cli.WEIGHTS_FILE)
    for key, weight in zip(sorted(stored), model.get_weights(), strict=True):
        np.testing.assert_array_equal(weight, stored[key])
    history = json.loads((out / cli.HISTORY_FILE).read_text())
    assert set(history) == HISTORY_KEYS
    assert all(len(values) == 1 for values in history.values())
    (line,) = epoch_lines(completed.stdout)
    assert round(history["loss"][0], 4) == line["loss"]
    assert round(history["val_accuracy"][0], 4) == line["val_accuracy"]
    assert (out / cli.CURVES_FILE).read_bytes()[:8] == PNG_SIGNATURE


# ----------------------------------------------------------------------------- in process
def mlp_reference(weights, x, y):
    """The MLP's test loss (Keras's clipped cross-entropy) and accuracy, in numpy."""
    kernel_1, bias_1, kernel_2, bias_2 = weights
    hidden = np.maximum(x @ kernel_1 + bias_1, 0)
    logits = hidden @ kernel_2 + bias_2
    probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    clipped = np.clip(probabilities, 1e-7, 1 - 1e-7)
    loss = -np.sum(y * np.log(clipped), axis=1).mean()
    accuracy = np.mean(probabilities.argmax(axis=1) == y.argmax(axis=1))
    return loss, accuracy


def test_mlp_history_matches_a_numpy_evaluation_of_the_saved_weights(tiny_data, tmp_path, capsys):
    status, stdout, _ = run_train(
        capsys, "--model mlp --epochs 3 --seed 0 --batch-size 32", tiny_data, tmp_path
    )
    assert status == 0
    assert "Training the MLP on 192 Fashion-MNIST images (64 test images) for 3 epochs" in stdout
    lines = epoch_lines(stdout)
    assert [line["epoch"] for line in lines] == [1, 2, 3]
    history = json.loads((tmp_path / cli.HISTORY_FILE).read_text())
    assert history["loss"][-1] < history["loss"][0]  # it learns
    stored = safetensors.numpy.load_file(str(tmp_path / cli.WEIGHTS_FILE))
    weights = [stored[k] for k in sorted(stored)]
    assert [w.shape for w in weights] == [(784, 128), (128,), (128, 10), (10,)]
    (x_test, y_test) = cli.prepare(*fashion_mnist.load_data(subset="small")[1], "mlp")
    loss, accuracy = mlp_reference(weights, x_test[:64], y_test[:64])
    np.testing.assert_allclose(history["val_loss"][-1], loss, rtol=1e-4)
    assert history["val_accuracy"][-1] == pytest.approx(accuracy)
    assert f"Test accuracy: {accuracy:.4f}" in stdout


def test_fit_trains_the_cnn_and_its_weights_reload_into_a_fresh_model(tiny_data, tmp_path, capsys):
    status, stdout, stderr = run_train(
        capsys, "--fit --limit 64 --batch-size 32 --epochs 2 --seed 1", tiny_data, tmp_path
    )
    assert status == 0
    assert "with a model.fit" in stdout
    lines = epoch_lines(stdout)
    assert [line["epoch"] for line in lines] == [1, 2]
    assert "Epoch 2/2: 2/2 " in stderr  # fit's progress bar
    history = json.loads((tmp_path / cli.HISTORY_FILE).read_text())
    assert set(history) == HISTORY_KEYS and len(history["loss"]) == 2
    assert round(history["val_accuracy"][1], 4) == lines[1]["val_accuracy"]
    # The reloaded model scores exactly what the run reported on the test images.
    model = cli.build_model("cnn")
    model.build((None, 28, 28, 1))
    model.load_weights(tmp_path / cli.WEIGHTS_FILE)
    x_test, y_test = cli.prepare(*fashion_mnist.load_data(subset="small")[1], "cnn")
    loss, accuracy = cli.evaluate(model, x_test[:64], y_test[:64])
    assert accuracy == history["val_accuracy"][-1]
    np.testing.assert_allclose(loss, history["val_loss"][-1], rtol=1e-5)


def test_the_same_seed_gives_the_same_weights(tiny_data, tmp_path, capsys, no_plot):
    results = []
    for run, seed in (("a", 5), ("b", 5), ("c", 6)):
        status, _, _ = run_train(
            capsys, f"--model mlp --limit 100 --epochs 1 --seed {seed}", tiny_data, tmp_path / run
        )
        assert status == 0
        results.append(safetensors.numpy.load_file(str(tmp_path / run / cli.WEIGHTS_FILE)))
    # Keys hold layer names, which count up within a process: compare by position.
    a, b, c = ([stored[key] for key in sorted(stored)] for stored in results)
    for weight_a, weight_b in zip(a, b, strict=True):
        np.testing.assert_array_equal(weight_a, weight_b)
    assert any(not np.array_equal(a_i, c_i) for a_i, c_i in zip(a, c, strict=True))


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_the_tape_loops_traced_step_trains_as_the_eager_step_does(
    model, tiny_data, tmp_path, capsys, no_plot, recwarn
):
    # The step is an ft.function; run_functions_eagerly(True) runs the same step eagerly.
    options = f"--model {model} --limit 40 --batch-size 16 --epochs 2 --seed 3"
    ft.config.run_functions_eagerly(True)
    try:
        assert run_train(capsys, options, tiny_data, tmp_path / "eager")[0] == 0
    finally:
        ft.config.run_functions_eagerly(False)
    assert run_train(capsys, options, tiny_data, tmp_path / "traced")[0] == 0
    # A step that could not be traced would have warned that it runs eagerly.
    assert not [w for w in recwarn if "runs eagerly" in str(w.message)]
    histories = [
        json.loads((tmp_path / run / cli.HISTORY_FILE).read_text()) for run in ("eager", "traced")
    ]
    for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
        np.testing.assert_allclose(histories[1][key], histories[0][key], rtol=1e-5)
    weights = [
        safetensors.numpy.load_file(str(tmp_path / run / cli.WEIGHTS_FILE))
        for run in ("eager", "traced")
    ]
    eager, traced = ([stored[key] for key in sorted(stored)] for stored in weights)
    for a, b in zip(eager, traced, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_limit_takes_the_first_images(tiny_data, tmp_path, capsys, no_plot):
    status, stdout, stderr = run_train(
        capsys, "--model mlp --limit 40 --batch-size 16 --epochs 1", tiny_data, tmp_path
    )
    assert status == 0
    assert "on 40 Fashion-MNIST images" in stdout
    assert "Epoch 1/1: 3/3 " in stderr  # 40 images in batches of 16: 3 steps


def test_quiet_prints_only_the_results(tiny_data, tmp_path, capsys, no_plot):
    status, stdout, stderr = run_train(
        capsys, "--model mlp --epochs 2 --quiet", tiny_data, tmp_path
    )
    assert status == 0
    assert stderr == ""
    assert [line.split(":")[0] for line in stdout.splitlines()] == [
        "Test accuracy",
        "Weights",
        "History",
        "Training curves",
        "Training state",
    ]


def test_threads_sets_rayon_num_threads(tiny_data, tmp_path, capsys, no_plot, monkeypatch):
    monkeypatch.setenv("RAYON_NUM_THREADS", "7")
    status, _, _ = run_train(
        capsys, "--model mlp --limit 16 --epochs 1 --threads 3 --quiet", tiny_data, tmp_path
    )
    assert status == 0
    assert os.environ["RAYON_NUM_THREADS"] == "3"


def test_without_matplotlib_the_png_is_skipped_with_a_note(
    tiny_data, tmp_path, capsys, monkeypatch
):
    # A None entry in sys.modules makes the import raise ImportError.
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    status, stdout, _ = run_train(capsys, "--model mlp --limit 16 --epochs 1", tiny_data, tmp_path)
    assert status == 0
    assert "Training curves: skipped (matplotlib is not installed)\n" in stdout
    assert not (tmp_path / cli.CURVES_FILE).exists()
    assert (tmp_path / cli.WEIGHTS_FILE).exists() and (tmp_path / cli.HISTORY_FILE).exists()


def test_uncompressed_idx_files_are_read_too(tiny_data, tmp_path, capsys, no_plot):
    for name in fashion_mnist.FILES:
        (tmp_path / name.removesuffix(".gz")).write_bytes(
            gzip.decompress((tiny_data / name).read_bytes())
        )
    status, stdout, _ = run_train(
        capsys, "--model mlp --epochs 1 --quiet", tmp_path, tmp_path / "out"
    )
    assert status == 0
    assert (tmp_path / "out" / cli.WEIGHTS_FILE).exists()


# ----------------------------------------------------------------------------- errors and help
def test_a_missing_data_directory_is_one_line_and_exit_2(tmp_path):
    missing = tmp_path / "nowhere"
    completed = subprocess.run(
        [sys.executable, "-m", "ferrotape", "train", "--data", str(missing)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr == f"ferrotape train: error: --data {missing}: no such directory\n"


def test_missing_or_corrupt_idx_files_are_reported(tiny_data, tmp_path, capsys):
    status, _, stderr = run_main(capsys, "train", "--data", tmp_path)
    assert status == 2
    assert stderr.startswith("ferrotape train: error: --data ")
    assert "train-images-idx3-ubyte.gz is missing" in stderr and len(stderr.splitlines()) == 1
    for name in fashion_mnist.FILES:
        (tmp_path / name).write_bytes((tiny_data / name).read_bytes())
    (tmp_path / fashion_mnist.FILES[2]).write_bytes(b"\x00\x00\x08\x03 truncated")
    status, _, stderr = run_main(capsys, "train", "--data", tmp_path)
    assert status == 2
    assert stderr.startswith("ferrotape train: error: ")
    assert fashion_mnist.FILES[2] in stderr and "Traceback" not in stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "--epochs", "0"], "argument --epochs: expected a positive integer, got '0'"),
        (["train", "--batch-size", "x"], "argument --batch-size: expected a positive integer"),
        (["train", "--learning-rate", "-1"], "argument --learning-rate: expected a positive"),
        (["train", "--model", "resnet"], "argument --model: invalid choice: 'resnet'"),
        (["train", "--data", "d", "--full"], "argument --full: not allowed with argument --data"),
        (["train", "--bogus"], "unrecognized arguments: --bogus"),
        ([], "the following arguments are required: COMMAND"),
        (["bench"], "argument COMMAND: invalid choice: 'bench'"),
    ],
)
def test_bad_flags_are_argparse_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    stderr = capsys.readouterr().err
    assert stderr.startswith("usage: ferrotape")
    assert message in stderr


def test_help_and_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--help"])
    assert exit_info.value.code == 0
    top = capsys.readouterr().out
    assert top.startswith("usage: ferrotape [-h] [--version] COMMAND ...")
    assert "train" in top
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["train", "--help"])
    assert exit_info.value.code == 0
    train_help = capsys.readouterr().out
    for option in (
        "--model",
        "--fit",
        "--epochs",
        "--batch-size",
        "--learning-rate",
        "--seed",
        "--data",
        "--full",
        "--limit",
        "--no-augment",
        "--resume",
        "--threads",
        "--out",
        "--quiet",
    ):
        assert option in train_help
    assert "RAYON_NUM_THREADS" in train_help
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"ferrotape {ft.__version__}\n"


def test_the_console_script_points_at_main():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["ferrotape"] == "ferrotape.cli:main"


# ----------------------------------------------------------------------------- hostile input
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--seed", "-1"], "--seed: expected an integer from 0 to 2**32 - 1, got '-1'"),
        (["--threads", "4000"], f"--threads: expected at most {cli.MAX_THREADS} threads"),
    ],
)
def test_out_of_range_seeds_and_thread_counts_are_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["train", *argv])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_images_of_another_size_are_one_line_and_exit_2(tmp_path, capsys):
    for name, array in zip(
        fashion_mnist.FILES,
        (np.zeros((8, 10, 10)), np.zeros(8), np.zeros((4, 10, 10)), np.zeros(4)),
        strict=True,
    ):
        write_idx(tmp_path / name, array)
    status, stdout, stderr = run_main(capsys, "train", "--data", tmp_path, "--out", tmp_path / "o")
    assert status == 2 and stdout == ""
    assert stderr == (
        "ferrotape train: error: the images are 10x10 pixels; the models take 28x28 "
        "Fashion-MNIST images\n"
    )


def test_a_gzip_bomb_is_refused_without_inflating_it(tiny_data, tmp_path, capsys):
    for name in fashion_mnist.FILES:
        (tmp_path / name).write_bytes((tiny_data / name).read_bytes())
    header = bytes([0, 0, 0x08, 1]) + (4).to_bytes(4, "big")
    bomb = gzip.compress(header + b"\0" * 200_000_000, compresslevel=1)
    assert len(bomb) < 1_000_000
    (tmp_path / fashion_mnist.FILES[1]).write_bytes(bomb)
    status, _, stderr = run_main(capsys, "train", "--data", tmp_path, "--out", tmp_path / "o")
    assert status == 2
    assert "corrupt IDX file: the header declares shape (4,)" in stderr


def test_an_unusable_out_directory_stops_before_training(tiny_data, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    status, stdout, stderr = run_main(
        capsys, "train", "--data", tiny_data, "--model", "mlp", "--out", blocker / "out"
    )
    assert status == 2
    assert "Epoch" not in stdout and "--out" in stderr and "cannot write" in stderr


def test_a_diverged_loss_still_writes_valid_json():
    history = cli._empty_history()
    cli._record(history, {"loss": float("nan"), "accuracy": 0.1}, float("inf"), 0.1, 1.0, 10)
    parsed = json.loads(cli._history_json(history))
    assert parsed["loss"] == [None] and parsed["val_loss"] == [None]
    assert parsed["accuracy"] == [0.1]


# ----------------------------------------------------------------------------- the recipe
def test_the_default_recipe_is_the_one_the_readme_and_the_docs_give():
    args = cli.build_parser().parse_args(["train"])
    cli._fill_settings(args, None)
    assert (args.model, args.fit, args.augment) == ("cnn", False, True)
    assert (args.epochs, args.batch_size, args.learning_rate) == (10, 64, 0.002)
    assert cli.BATCH_NORM_MOMENTUM == 0.9 and cli.SHIFT_PIXELS == 1
    norms = [
        layer for layer in cli.build_model("cnn").layers if "BatchNorm" in type(layer).__name__
    ]
    assert len(norms) == 7 and {layer.momentum for layer in norms} == {0.9}
    recipe = (
        "10 epochs of batches of 64, Adam with a peak learning rate of 0.002 and cosine decay to 0",
        "BatchNormalization with momentum 0.9",
        "flipped left-right with probability 1/2 and shifted by up to one pixel",
    )
    readme = " ".join((ROOT / "README.md").read_text().split())
    docs = " ".join(cli.__doc__.split())
    for phrase in recipe:
        assert phrase in readme and phrase in docs


def test_the_learning_rate_decays_along_a_cosine_over_the_run(
    tiny_data, tmp_path, capsys, no_plot, monkeypatch
):
    # 64 images in batches of 32 for 2 epochs: 4 steps, so the rate ends at 0.
    seen = []
    original = cli.tape_loop

    def spy(model, optimizer, *rest):
        original(model, optimizer, *rest)
        schedule = optimizer._learning_rate  # the schedule itself (learning_rate: its value)
        seen.extend(float(schedule(step)) for step in range(5))
        seen.append(int(optimizer.iterations))

    monkeypatch.setattr(cli, "tape_loop", spy)
    status, _, _ = run_train(
        capsys, "--model mlp --limit 64 --batch-size 32 --epochs 2", tiny_data, tmp_path
    )
    assert status == 0
    *rates, iterations = seen
    np.testing.assert_allclose(
        rates, [0.002, 0.001 * (1 + 0.5**0.5), 0.001, 0.001 * (1 - 0.5**0.5), 0]
    )
    assert iterations == 4


def test_augment_flips_and_shifts_by_at_most_one_pixel():
    rng = np.random.default_rng(0)
    images = np.zeros((400, 28, 28, 1), np.float32)
    images[:, 10, 5] = 1.0  # one bright pixel, off the vertical axis of symmetry
    out = cli.augment(images, rng)
    assert out.shape == images.shape and out.dtype == images.dtype
    assert np.all(out.sum(axis=(1, 2, 3)) == 1)  # moved, never lost (away from the border)
    rows, cols = np.nonzero(out[..., 0])[1:]
    assert set(rows) == {9, 10, 11}
    assert set(cols) == {4, 5, 6} | {21, 22, 23}  # 5 or its mirror image 22, then shifted
    assert 150 < np.sum(cols > 13) < 250  # about half flipped
    flat = cli.augment(images.reshape(400, 784), np.random.default_rng(0))
    np.testing.assert_array_equal(flat, out.reshape(400, 784))
    np.testing.assert_array_equal(images[:, 10, 5], 1.0)  # the input is left alone


# ----------------------------------------------------------------------------- Ctrl-C, --resume
def ctrl_c_at(monkeypatch, epoch, step, times=1):
    """Makes this process get SIGINT (``times`` in a row) when the progress bar of ``epoch``
    (1-based) reaches ``step``: a deterministic Ctrl-C, handled at that step's end."""
    original = cli._progress_bar

    def progress_bar(steps, epoch_index, args):
        bar = original(steps, epoch_index, args)
        update = bar.update

        def update_and_interrupt(done, *rest):
            update(done, *rest)
            if (epoch_index + 1, done) == (epoch, step):
                for _ in range(times):
                    os.kill(os.getpid(), signal.SIGINT)

        bar.update = update_and_interrupt
        return bar

    monkeypatch.setattr(cli, "_progress_bar", progress_bar)


def saved_state(out):
    arrays, state = cli.read_training_state(out)
    return arrays, state


def test_ctrl_c_mid_epoch_saves_a_loadable_run_and_resume_ends_where_an_unbroken_run_does(
    tiny_data, tmp_path, capsys, no_plot, monkeypatch
):
    # 192 images in batches of 64: 3 steps an epoch. The MLP has no dropout, so a run stopped
    # at epoch 2, step 2 and resumed must give exactly the weights and history of one that ran
    # through: same shuffles, augmentation, optimizer state and step count.
    options = "--model mlp --epochs 3 --seed 7"
    status, _, _ = run_train(capsys, options, tiny_data, tmp_path / "unbroken")
    assert status == 0
    ctrl_c_at(monkeypatch, epoch=2, step=2)
    out = tmp_path / "stopped"
    status, stdout, stderr = run_train(capsys, options, tiny_data, out)
    monkeypatch.undo()
    assert status == 130
    assert "Ctrl-C: stopping at the end of this step" in stderr
    assert "Epoch 2/3: 2/3 (stopped) - " in stderr  # the bar ends where training stopped
    assert (
        f"interrupted after 1 finished epoch and 2 of 3 steps of epoch 2; saving into {out}"
        in stderr
    )
    assert (
        f"Training state: {out / cli.STATE_FILE} (go on with: ferrotape train --resume {out})"
        in stdout
    )
    assert [line["epoch"] for line in epoch_lines(stdout)] == [1]
    # What was saved loads: the weights into a fresh model, the history as JSON.
    history = json.loads((out / cli.HISTORY_FILE).read_text())
    assert set(history) == HISTORY_KEYS and len(history["loss"]) == 1
    model = cli.build_model("mlp")
    model.load_weights(out / cli.WEIGHTS_FILE)
    arrays, state = saved_state(out)
    assert (state["epoch"], state["step"], state["steps_done"]) == (1, 2, 5)
    for index, weight in enumerate(model.get_weights()):
        np.testing.assert_array_equal(weight, arrays[f"model/{index}"])
    assert int(arrays["optimizer/0"]) == 5  # Adam's iterations: the steps done

    status, stdout, _ = run_main(capsys, "train", "--resume", out)
    assert status == 0
    assert "Resuming the MLP run at epoch 2/3, step 3 (192 Fashion-MNIST images" in stdout
    assert [line["epoch"] for line in epoch_lines(stdout)] == [2, 3]
    unbroken = json.loads((tmp_path / "unbroken" / cli.HISTORY_FILE).read_text())
    resumed = json.loads((out / cli.HISTORY_FILE).read_text())
    for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
        assert resumed[key] == unbroken[key]
    expected = safetensors.numpy.load_file(str(tmp_path / "unbroken" / cli.WEIGHTS_FILE))
    got = safetensors.numpy.load_file(str(out / cli.WEIGHTS_FILE))
    for a, b in zip(
        (expected[k] for k in sorted(expected)), (got[k] for k in sorted(got)), strict=True
    ):
        np.testing.assert_array_equal(a, b)
    # The finished run can be taken further.
    status, stdout, _ = run_main(capsys, "train", "--resume", out, "--epochs", 4)
    assert status == 0 and [line["epoch"] for line in epoch_lines(stdout)] == [4]
    assert len(json.loads((out / cli.HISTORY_FILE).read_text())["loss"]) == 4


def test_a_second_ctrl_c_quits_at_once_without_saving(
    tiny_data, tmp_path, capsys, no_plot, monkeypatch
):
    handler = signal.getsignal(signal.SIGINT)
    ctrl_c_at(monkeypatch, epoch=1, step=1, times=2)
    status, _, stderr = run_train(capsys, "--model mlp --epochs 2", tiny_data, tmp_path)
    assert status == 130
    assert stderr.endswith("ferrotape train: interrupted\n") and "saving into" not in stderr
    assert not (tmp_path / cli.STATE_FILE).exists() and not (tmp_path / cli.WEIGHTS_FILE).exists()
    assert signal.getsignal(signal.SIGINT) is handler  # the command's handler is gone again


def test_ctrl_c_during_fit_saves_and_resume_starts_the_unfinished_epoch_again(
    tiny_data, tmp_path, capsys, no_plot, monkeypatch
):
    # fit's own progress bar is not cli._progress_bar: interrupt from a callback instead.
    from ferrotape.keras.callbacks import Callback

    class CtrlC(Callback):
        def on_train_batch_end(self, batch, logs=None):
            if self.epoch == 1 and batch == 0:
                os.kill(os.getpid(), signal.SIGINT)

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

    fit = ft.keras.Model.fit

    def fit_with_ctrl_c(model, *args, callbacks=(), **kwargs):
        return fit(model, *args, callbacks=[CtrlC(), *callbacks], **kwargs)

    monkeypatch.setattr(ft.keras.Model, "fit", fit_with_ctrl_c)
    out = tmp_path / "run"
    options = "--fit --model mlp --batch-size 96 --epochs 3 --seed 2"
    status, stdout, stderr = run_train(capsys, options, tiny_data, out)
    monkeypatch.undo()
    assert status == 130
    assert (
        "interrupted after 1 finished epoch and 1 of 2 steps of epoch 2 "
        "(--fit: --resume starts epoch 2 again)" in stderr
    )
    _, state = saved_state(out)
    assert (state["epoch"], state["step"], state["steps_done"]) == (1, 0, 3)
    status, stdout, _ = run_main(capsys, "train", "--resume", out)
    assert status == 0
    assert [line["epoch"] for line in epoch_lines(stdout)] == [2, 3]
    history = json.loads((out / cli.HISTORY_FILE).read_text())
    assert len(history["loss"]) == 3
    _, state = saved_state(out)
    assert (state["epoch"], state["steps_done"]) == (3, 7)


def test_ctrl_c_in_a_real_process_saves_and_exits_130(tiny_data, tmp_path):
    # SIGINT goes in once the first epoch's line is out (no timing guess); the run stops at
    # the end of the step under way, whichever it is.
    out = tmp_path / "run"
    command = [sys.executable, "-m", "ferrotape", "train", "--data", str(tiny_data)]
    command += ["--model", "mlp", "--epochs", "100000", "--out", str(out)]
    trainer = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in trainer.stdout:
            if line.startswith("Epoch 1/"):
                break
        trainer.send_signal(signal.SIGINT)
        stdout, stderr = trainer.communicate(timeout=120)
    finally:
        trainer.kill()
    assert trainer.returncode == 130, stderr
    assert "interrupted after" in stderr and f"saving into {out}" in stderr
    assert "Traceback" not in stderr
    assert f"Training state: {out / cli.STATE_FILE}" in stdout
    history = json.loads((out / cli.HISTORY_FILE).read_text())
    assert len(history["loss"]) >= 1
    weights = safetensors.numpy.load_file(out / cli.WEIGHTS_FILE)
    assert len(weights) == 4
    _, state = saved_state(out)
    assert state["epoch"] == len(history["loss"])
    assert state["settings"]["epochs"] == 100000 and state["settings"]["model"] == "mlp"


def test_bad_resume_directories_are_one_line_and_exit_2(tiny_data, tmp_path, capsys, no_plot):
    status, _, _ = run_train(
        capsys, "--model mlp --limit 64 --epochs 1", tiny_data, tmp_path / "run"
    )
    assert status == 0
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "empty").mkdir()
    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / cli.STATE_FILE).write_bytes(
        b"\x10\x00\x00\x00\x00\x00\x00\x00{not json"
    )
    (tmp_path / "weights-only").mkdir()
    (tmp_path / "weights-only" / cli.STATE_FILE).write_bytes(
        (tmp_path / "run" / cli.WEIGHTS_FILE).read_bytes()
    )
    cases = [
        (["--resume", tmp_path / "nowhere"], "no such directory"),
        (["--resume", tmp_path / "a-file"], "not a directory (pass the --out directory of a run)"),
        (["--resume", tmp_path / "empty"], f"there is no {cli.STATE_FILE} in it"),
        (["--resume", tmp_path / "garbage"], cli.STATE_FILE),
        (["--resume", tmp_path / "weights-only"], "is not a ferrotape training state"),
        (["--resume", tmp_path / "run"], "the run has finished 1 of its 1 epochs; pass --epochs"),
        (
            ["--resume", tmp_path / "run", "--epochs", "2", "--model", "cnn"],
            "the run was trained with --model mlp; leave --model out",
        ),
        (
            ["--resume", tmp_path / "run", "--epochs", "2", "--fit"],
            "the run was trained without --fit",
        ),
    ]
    for argv, message in cases:
        status, stdout, stderr = run_main(capsys, "train", *argv)
        assert status == 2, argv
        assert stdout == "" and len(stderr.splitlines()) == 1, stderr
        assert stderr.startswith(f"ferrotape train: error: --resume {argv[1]}: ")
        assert message in stderr, (argv, stderr)
