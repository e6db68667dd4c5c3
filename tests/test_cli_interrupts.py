"""``ferrotape train`` stopped at any moment leaves one whole, resumable set of results:
Ctrl-C during training, at its last step, twice, or during the final save, and kill -9 in
the middle of a save (in a real process). After each, the weights, the history and the
training state come from the same step, and ``--resume`` goes on from them."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import safetensors.numpy
from test_cli import ctrl_c_at, run_main, run_train, tiny_data  # noqa: F401 - the fixture

from ferrotape import cli

OPTIONS = "--model mlp --epochs 2 --seed 3"


@pytest.fixture
def no_plot(monkeypatch):
    monkeypatch.setattr(cli, "plot_history", lambda history, path: None)


def assert_one_set(out, epochs):
    """The files in ``out`` agree: the weights are the state's, the history the state's, and
    it has ``epochs`` finished epochs."""
    arrays, state = cli.read_training_state(out)
    weights = safetensors.numpy.load_file(str(out / cli.WEIGHTS_FILE))
    model = cli.build_model("mlp")
    model.load_weights(out / cli.WEIGHTS_FILE)
    assert len(weights) == len(model.weights)
    for index, weight in enumerate(model.get_weights()):
        np.testing.assert_array_equal(weight, arrays[f"model/{index}"])
    history = json.loads((out / cli.HISTORY_FILE).read_text())
    assert state["epoch"] == epochs and len(history["loss"]) == epochs
    assert history["loss"] == state["history"]["loss"]
    # One save directory is left, the one .current names.
    saves = sorted(p.name for p in out.glob(f"{cli.SAVE_PREFIX}*"))
    assert saves == [os.readlink(out / cli.CURRENT_LINK)]


def ctrl_c_during_save(monkeypatch, times=1):
    """Sends SIGINT to this process while the training state of the final save is written."""
    write = cli.write_training_state

    def interrupted_write(*args):
        for _ in range(times):
            os.kill(os.getpid(), signal.SIGINT)
        write(*args)

    monkeypatch.setattr(cli, "write_training_state", interrupted_write)


@pytest.mark.parametrize("times", [1, 3])
def test_ctrl_c_during_the_final_save_finishes_it(
    tiny_data,  # noqa: F811
    tmp_path,
    capsys,
    no_plot,
    monkeypatch,
    times,
):
    ctrl_c_during_save(monkeypatch, times)
    status, stdout, stderr = run_train(capsys, OPTIONS, tiny_data, tmp_path)
    monkeypatch.undo()
    assert status == 0, stderr
    assert "Ctrl-C: saving the run; it ends when the save is done" in stderr
    assert "interrupted" not in stderr
    assert f"Training state: {tmp_path / cli.STATE_FILE}" in stdout
    assert_one_set(tmp_path, 2)
    status, _, _ = run_main(capsys, "train", "--resume", tmp_path, "--epochs", 3)
    assert status == 0
    assert_one_set(tmp_path, 3)


@pytest.mark.parametrize("epoch, step", [(1, 1), (1, 3), (2, 3)])
def test_ctrl_c_during_training_and_again_during_its_save(
    tiny_data,  # noqa: F811
    tmp_path,
    capsys,
    no_plot,
    monkeypatch,
    epoch,
    step,
):
    ctrl_c_at(monkeypatch, epoch=epoch, step=step)
    ctrl_c_during_save(monkeypatch)
    status, _, stderr = run_train(capsys, OPTIONS, tiny_data, tmp_path)
    monkeypatch.undo()
    assert status in (0, 130), stderr  # at the last step the run had already finished
    _, state = cli.read_training_state(tmp_path)
    assert_one_set(tmp_path, state["epoch"])
    status, _, stderr = run_main(capsys, "train", "--resume", tmp_path)
    assert status == 0, stderr
    assert_one_set(tmp_path, 2)


def test_resume_reads_a_directory_of_plain_files_and_links_it(
    tiny_data,  # noqa: F811
    tmp_path,
    capsys,
    no_plot,
):
    # A run saved by the version before the linked sets: plain files in the directory.
    status, _, _ = run_train(capsys, "--model mlp --epochs 1 --seed 3", tiny_data, tmp_path)
    assert status == 0
    for name in (cli.WEIGHTS_FILE, cli.HISTORY_FILE, cli.STATE_FILE):
        data = (tmp_path / name).read_bytes()
        (tmp_path / name).unlink()
        (tmp_path / name).write_bytes(data)
    for name in (cli.CURRENT_LINK,):
        (tmp_path / name).unlink()
    for old in tmp_path.glob(f"{cli.SAVE_PREFIX}*"):
        for f in old.iterdir():
            f.unlink()
        old.rmdir()
    status, _, stderr = run_main(capsys, "train", "--resume", tmp_path, "--epochs", 2)
    assert status == 0, stderr
    assert (tmp_path / cli.WEIGHTS_FILE).is_symlink()
    assert_one_set(tmp_path, 2)


KILL_DURING_SAVE = textwrap.dedent(
    """
    import os, signal, sys
    from ferrotape import cli

    write = cli.write_training_state
    def killed(path, *args):
        # The new set's weights and history are written; the state is half-way.
        path.write_bytes(b"half a file")
        os.kill(os.getpid(), signal.SIG{signal})
    cli.write_training_state = killed
    cli.plot_history = lambda history, path: None
    sys.exit(cli.main(sys.argv[1:]))
    """
)


@pytest.mark.parametrize("kill", ["KILL"])
def test_kill_9_during_a_save_leaves_the_previous_set(
    tiny_data,  # noqa: F811
    tmp_path,
    capsys,
    no_plot,
    kill,
):
    status, _, _ = run_train(capsys, OPTIONS.replace("2", "1"), tiny_data, tmp_path)
    assert status == 0
    assert_one_set(tmp_path, 1)
    before = (tmp_path / cli.WEIGHTS_FILE).read_bytes()
    command = [sys.executable, "-c", KILL_DURING_SAVE.format(signal=kill), "train"]
    command += ["--resume", str(tmp_path), "--epochs", "2"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr
    # The killed save's directory is there, half written, but no name points into it.
    assert len(list(tmp_path.glob(f"{cli.SAVE_PREFIX}*"))) == 2
    assert (tmp_path / cli.WEIGHTS_FILE).read_bytes() == before
    arrays, state = cli.read_training_state(tmp_path)
    assert state["epoch"] == 1
    status, _, stderr = run_main(capsys, "train", "--resume", tmp_path, "--epochs", 2)
    assert status == 0, stderr
    assert_one_set(tmp_path, 2)  # and the killed save's directory is gone
