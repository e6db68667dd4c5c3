"""Complete TF2 programs of the kinds users write (`tests/programs/`), run unchanged under
ferrotape, and, where TensorFlow is available, under TensorFlow too.

Each program imports the library with the single line `import ferrotape as tf`; to run it under
TensorFlow that line alone becomes `import tensorflow as tf` (see tests/programs/README.md). A
program ends by printing `RESULT {json}` with two parts: "check" (what this harness asserts about
the run: the loss falls, accuracy beats chance, a restored run resumes exactly) and "compare"
(values that do not depend on the library's random streams, e.g. losses after identical weights
were loaded with `set_weights` from numpy, shapes, names: they must agree with TensorFlow's).

The TensorFlow runs need an interpreter that imports TensorFlow: this one, or the one named by
the FERROTAPE_TF_PYTHON environment variable; without either they skip (CI has no TensorFlow).
"""

import functools
import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "programs"
IMPORT_LINE = "import ferrotape as tf"


def _falls(values, factor=0.8):
    """The last value is below `factor` times the first."""
    return values[-1] < factor * values[0]


def _check_custom_training_loop(check):
    assert _falls(check["epoch_losses"], 0.2)
    assert check["test_accuracy"] > 0.8  # chance: 0.1


def _check_sequential_cnn_callbacks(check):
    assert _falls(check["loss"], 0.2)
    assert min(check["val_loss"]) < 0.3 * check["val_loss"][0]
    assert check["final_accuracy"] > 0.9  # chance: 1/3
    assert check["checkpoint_saved"]
    assert all(math.isclose(total, 1.0, abs_tol=1e-5) for total in check["probability_row_sums"])


def _check_functional_multi_io(check):
    assert _falls(check["loss"], 0.6)
    assert check["final_department_accuracy"] > 0.5  # chance: 0.25
    assert check["output_shapes"] == [[256, 1], [256, 4]]


def _check_subclassed_train_step(check):
    assert _falls(check["loss"], 0.05)
    assert check["final_mae"] < 0.5


def _check_dcgan_step(check):
    for gen_loss, disc_loss in check["losses"]:
        assert 0.0 < gen_loss < 5.0 and 0.0 < disc_loss < 5.0
    # The generator ends in tanh.
    assert -1.0 <= check["sample_min"] <= check["sample_max"] <= 1.0


def _check_vae_add_loss(check):
    # Reconstruction + KL falls well below the data's mean square (predicting zeros).
    assert _falls(check["loss"], 0.7)
    assert check["loss"][-1] < 0.7 * check["data_variance"]


def _check_text_classifier_rnn(check):
    assert _falls(check["loss"], 0.5)
    assert check["test_accuracy"] > 0.75
    assert check["mask_invariance"] < 1e-5


def _check_pinn_heat_equation(check):
    assert _falls(check["adam_losses"], 0.01)


def _check_actor_critic(check):
    # Steps right earn +1: the policy learns to take more of them.
    assert check["last_right_fraction"] > max(check["first_right_fraction"], 0.8)


def _check_transformer_block(check):
    assert _falls(check["loss"], 0.8)
    assert check["train_accuracy"] > 0.7  # chance: 0.5


def _check_checkpoint_manager(check):
    assert _falls(check["first_run"], 0.2)
    # The resumed run repeats the first run's last four steps from the restored state.
    assert check["resumed_matches"] < 1e-5
    # The checkpoint lists the Dense's kernel and bias, and the optimizer's state (its step
    # counter and Adam's two slots per variable, at least).
    assert check["model_entries"] == 2
    assert check["optimizer_entries"] >= 5


def _check_regression_normalization(check):
    assert _falls(check["loss"], 0.2)
    assert check["test_mae"] < 0.5 * check["baseline_mae"]


def _check_resnet_block(check):
    assert _falls(check["loss"], 0.5)
    assert check["test_accuracy"] > 0.7  # chance: 1/3


def _check_tf_function_ops(check):
    assert _falls(check["losses"], 0.3)
    assert check["accuracy"] > 0.9  # chance: 1/3


def _check_advanced_autodiff(check):
    # The Jacobian-penalised fit still learns sin.
    assert _falls(check["losses"], 0.1)


def _check_image_augmentation_sepconv(check):
    assert _falls(check["loss"], 0.1)
    assert check["accuracy"][-1] > 0.9  # chance: 1/2
    # RandomContrast clips to the input's [0, 255] range.
    assert 0.0 <= check["augmented_range"][0] <= check["augmented_range"][1] <= 255.0


def _check_custom_fit_metrics(check):
    assert _falls(check["loss"], 0.7)
    assert check["auc"] > 0.9


def _check_timeseries_lstm(check):
    assert _falls(check["loss"], 0.2)
    # The forecaster beats repeating the last value.
    assert check["final_val_loss"] < check["naive_val_loss"]
    # Dataset.window and timeseries_dataset_from_array cut the same first window.
    assert check["same_first_window"] and check["same_first_target"]


def _check_structured_data(check):
    assert _falls(check["loss"], 0.7)
    assert check["val_accuracy"] > 0.75
    assert 0.0 <= check["probability"] <= 1.0


def _check_wgan_gp(check):
    assert all(math.isfinite(loss) for loss in check["d_loss"])
    # The generator's samples move towards the real blob without collapsing to a point.
    assert check["center_error"] < 0.7 * check["first_center_error"]
    assert min(check["sample_std"]) > 0.1


def _check_module_signature_checkpoint(check):
    assert _falls(check["losses"], 0.1)
    assert check["restored_same"]


def _check_functional_shared_save(check):
    assert _falls(check["loss"], 0.98)
    # from_config + set_weights, and save + load_model, reproduce the trained predictions.
    assert check["rebuilt_same"] < 1e-6
    assert check["loaded_same"] < 1e-6
    assert check["autoencoder_loaded_same"] < 1e-6
    assert all(check["summary"].values()), check["summary"]


def _check_functional_ops_gaussian(check):
    # A negative log-likelihood: it falls by an absolute amount (it goes below zero).
    assert check["loss"][-1] < check["loss"][0] - 0.5
    assert 0.85 < check["coverage"] <= 1.0  # a calibrated 2-sigma band covers ~95%
    assert check["min_scale"] > 0.0
    assert check["loaded_same"] < 1e-6


CHECKS = {
    name.removeprefix("_check_"): fn
    for name, fn in globals().items()
    if name.startswith("_check_") and callable(fn)
}


def _run(python, path, timeout=300):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python"), "TF_CPP_MIN_LOG_LEVEL": "3"}
    return subprocess.run(
        [python, str(path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _result(completed, who):
    assert completed.returncode == 0, (
        f"{who} exited with {completed.returncode}:\n{completed.stdout}\n{completed.stderr}"
    )
    lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, f"{who} printed no RESULT line:\n{completed.stdout}"
    return json.loads(lines[0].removeprefix("RESULT "))


@functools.cache
def _ferrotape_result(name):
    """A program's result under ferrotape (run once for both tests that read it)."""
    return _result(_run(sys.executable, PROGRAMS / f"{name}.py"), name)


def _tensorflow_python():
    if importlib.util.find_spec("tensorflow") is not None:
        return sys.executable
    return os.environ.get("FERROTAPE_TF_PYTHON")


def _agree(ours, theirs, rtol=1e-4, atol=1e-5):
    if isinstance(theirs, list):
        return (
            isinstance(ours, list)
            and len(ours) == len(theirs)
            and all(_agree(a, b, rtol, atol) for a, b in zip(ours, theirs, strict=True))
        )
    if isinstance(theirs, float) or isinstance(ours, float):
        return math.isclose(ours, theirs, rel_tol=rtol, abs_tol=atol)
    return ours == theirs


def test_every_program_has_a_check_and_one_import_line():
    names = sorted(path.stem for path in PROGRAMS.glob("*.py"))
    assert names == sorted(CHECKS)
    assert len(names) >= 22
    for name in names:
        lines = (PROGRAMS / f"{name}.py").read_text().splitlines()
        assert lines.count(IMPORT_LINE) == 1, name
        # The import line is the only place the library is named: the program is unchanged
        # under TensorFlow apart from it.
        assert sum("ferrotape" in line for line in lines) == 1, name


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_program_runs_under_ferrotape(name):
    CHECKS[name](_ferrotape_result(name)["check"])


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_program_agrees_with_tensorflow(name, tmp_path):
    python = _tensorflow_python()
    if python is None:
        pytest.skip("TensorFlow is not importable (set FERROTAPE_TF_PYTHON to an interpreter)")
    source = (PROGRAMS / f"{name}.py").read_text()
    tf_path = tmp_path / f"{name}.py"
    tf_path.write_text(source.replace(IMPORT_LINE, "import tensorflow as tf"))
    theirs = _result(_run(python, tf_path), f"{name} under TensorFlow")
    # The invariants hold for TensorFlow's run too: they are about the program, not ferrotape.
    CHECKS[name](theirs["check"])
    ours = _ferrotape_result(name)
    assert sorted(ours["compare"]) == sorted(theirs["compare"])
    disagree = {
        key: (ours["compare"][key], value)
        for key, value in theirs["compare"].items()
        if not _agree(ours["compare"][key], value)
    }
    assert not disagree, f"{name}: ferrotape vs TensorFlow differ on {disagree}"
