"""The programs in `examples/`, one per seed tutorial, run as subprocesses on small settings.

Each test runs an example the way the README does (`python examples/NAME.py ...`, from the
repository root) with flags that keep it to a few seconds on a debug build, and checks what it
prints: the tutorial's values where they are exact, otherwise that training did what it should
(the loss falls, accuracy beats chance, the fitted line is the least-squares line). The snippets
of the seeds are checked one by one, in-process, by `test_seeds.py`.
"""

import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_seeds import NON_PERSISTENT_MESSAGE, linear_regression_numpy

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")
DATASET_NAMES = ("mnist", "fashion_mnist", "fashion_mnist_small")


def run_example(name, *args, timeout=120, expect_rc=0):
    """Runs examples/NAME with ARGS from the repository root; returns its non-empty stdout lines
    (or, when `expect_rc` is not 0, the completed process)."""
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == expect_rc, (
        f"{name} exited with {result.returncode}:\n{result.stdout}\n{result.stderr}"
    )
    if expect_rc != 0:
        return result
    return [line for line in result.stdout.splitlines() if line.strip()]


def same_line(actual, expected, rtol=1e-5):
    """Equal up to whitespace, with every number compared to a relative tolerance."""

    def skeleton(line):
        return re.sub(r"\s+", "", NUMBER.sub("#", line))

    actual_numbers, expected_numbers = NUMBER.findall(actual), NUMBER.findall(expected)
    if skeleton(actual) != skeleton(expected) or len(actual_numbers) != len(expected_numbers):
        return False
    return all(
        math.isclose(float(a), float(e), rel_tol=rtol, abs_tol=1e-6)
        for a, e in zip(actual_numbers, expected_numbers, strict=True)
    )


def assert_contains_in_order(lines, expected):
    """Every expected line appears (same_line) in `lines`, in order."""
    position = 0
    for want in expected:
        while position < len(lines) and not same_line(lines[position], want):
            position += 1
        assert position < len(lines), f"missing or out of order: {want!r}\noutput:\n" + "\n".join(
            lines
        )
        position += 1


def values_after(lines, prefix):
    """The number that ends each line starting with `prefix`, in order."""
    return [float(line.rsplit(maxsplit=1)[-1]) for line in lines if line.startswith(prefix)]


def assert_dataset_reported(lines, name_pattern):
    """The data set line names MNIST or a fallback, and a fallback says why it was taken."""
    matches = [re.fullmatch(name_pattern, line) for line in lines]
    matches = [m for m in matches if m]
    assert len(matches) == 1, lines
    name = matches[0].group(1)
    assert name in DATASET_NAMES
    if name != "mnist":
        assert "[INFO] MNIST is not on this machine and could not be downloaded" in lines
    return name


# ---------------------------------------------------------------- seed 001 and seed 000's tape

TAPE_BASICS_OUTPUT = f"""
=== GradientTape on a Variable ===
<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=20.0>
tf.Tensor(40.0, shape=(), dtype=float32)
=== GradientTape on an integer Variable ===
<tf.Variable 'Variable:0' shape=() dtype=int32, numpy=30>
tf.Tensor(27000, shape=(), dtype=int32)
None
=== Integer value with an explicit float32 dtype ===
<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=30.0>
tf.Tensor(2700.0, shape=(), dtype=float32)
=== GradientTape on a 1D tensor Variable ===
tf.Tensor([ 1.  8. 27.], shape=(3,), dtype=float32)
tf.Tensor([ 3. 12. 27.], shape=(3,), dtype=float32)
=== GradientTape on a tf.constant() tensor ===
tf.Tensor(3.0, shape=(), dtype=float32)
None
tf.Tensor(6.0, shape=(), dtype=float32)
=== Controlling trainable variables ===
None
tf.Tensor(75.0, shape=(), dtype=float32)
=== Watching accessed variables ===
tf.Tensor(10.0, shape=(), dtype=float32)
None
tf.Tensor(10.0, shape=(), dtype=float32)
=== More than one gradient needs persistent=True ===
RuntimeError: {NON_PERSISTENT_MESSAGE}
tf.Tensor(10.0, shape=(), dtype=float32)
tf.Tensor(20.0, shape=(), dtype=float32)
=== Everything in a single code block ===
<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=20.0>
TensorFlow GradientTape on a floating variable: 40.0
<tf.Variable 'Variable:0' shape=() dtype=int32, numpy=30>
tf.Tensor(27000, shape=(), dtype=int32)
TensorFlow GradientTape on an integer variable: None
tf.Tensor([ 1.  8. 27.], shape=(3,), dtype=float32)
GradientTape on a 1D tensor variable: [ 3. 12. 27.]
GradientTape on a constant tensor: 6.0
GradientTape does not watch non-trainable variables: None
We need to tell GradientTape to watch non-trainable variables explicitly: 75.0
tf.Tensor(10.0, shape=(), dtype=float32)
tf.Tensor(20.0, shape=(), dtype=float32)
=== Seed 000 In[9]: watching a constant ===
27.0
=== Seed 000 In[10]: trainable variables are watched automatically ===
27.0
=== Seed 000 In[11]: watch_accessed_variables=False ===
None
=== Seed 000 In[12]: higher-order derivatives ===
18.0
=== Seed 000: a second gradient() on a non-persistent tape ===
12.0
RuntimeError: {NON_PERSISTENT_MESSAGE}
=== Seed 000 In[13]: persistent=True ===
12.0
12.0
=== Seed 000 In[14]: gradients inside stop_recording() ===
12.0
12.0
"""


def test_tape_basics_prints_the_tutorial_output():
    lines = run_example("tape_basics.py")
    expected = [line for line in TAPE_BASICS_OUTPUT.splitlines() if line.strip()]
    assert len(lines) == len(expected), "\n".join(lines)
    for actual, want in zip(lines, expected, strict=True):
        if want.startswith("RuntimeError: "):
            # The exact wording is checked by test_001_second_gradient_on_non_persistent_..._raises.
            assert actual.startswith("RuntimeError: ") and actual.endswith(NON_PERSISTENT_MESSAGE)
        else:
            assert same_line(actual, want), f"{actual!r} != {want!r}"


def test_linear_regression_moves_toward_10_and_5():
    import random

    random.seed(42)  # the example's SEED
    a0, b0 = random.random(), random.random()
    lines = run_example("linear_regression.py", 2000)
    match = re.fullmatch(r"y ≈ (\S+)x \+ (\S+)", lines[-1])
    assert match, lines
    a, b = float(match.group(1)), float(match.group(2))
    assert abs(a - 10.0) < 0.1 * abs(a0 - 10.0)
    assert abs(b - 5.0) < 0.1 * abs(b0 - 5.0)
    a_ref, b_ref = linear_regression_numpy(
        a0, b0, np.arange(11, dtype="float32"), np.arange(11) * 10 + 5, 2000
    )
    assert a == pytest.approx(a_ref, abs=0.02)
    assert b == pytest.approx(b_ref, abs=0.02)


# ---------------------------------------------------------------- seed 000: the Keras CNN


def test_keras_cnn_trains_and_evaluates():
    # The default data set: MNIST when it is here, else the Fashion-MNIST fallback (no skip).
    # 2 epochs over the same 192 images: the second epoch's mean loss must be lower.
    lines = run_example("keras_cnn.py", "--epochs", 2, "--limit", 192, "--test-limit", 256)
    assert lines[0] == "[INFO] loading MNIST dataset..."
    assert_dataset_reported(lines, r"\[INFO\] (\w+): 192 training and 256 test images")
    assert "[INFO] creating model..." in lines
    epochs = [line for line in lines if line.startswith("[INFO] starting epoch")]
    assert [line.split("...")[0] for line in epochs] == [
        "[INFO] starting epoch 1/2",
        "[INFO] starting epoch 2/2",
    ]
    losses = values_after(epochs, "[INFO] starting epoch")
    # Untrained, a softmax over 10 classes gives a loss near ln(10); training lowers it.
    assert math.log(10.0) - 0.1 < losses[0] < math.log(10.0) + 0.5
    assert losses[1] < losses[0] - 0.01
    (accuracy,) = values_after(lines, "[INFO] test accuracy:")
    assert lines[-1].startswith("[INFO] test accuracy:")
    assert 0.15 < accuracy <= 1.0  # chance is 0.1


def test_keras_cnn_rejects_a_limit_below_the_batch_size():
    result = run_example("keras_cnn.py", "--limit", 10, expect_rc=2)
    assert "--limit must be at least the batch size (64)" in result.stderr


# ---------------------------------------------------------------- seed 002: subclassed model


def least_squares_line():
    """Seed 002's synthetic data and the least-squares slope and intercept it implies."""
    np.random.seed(42)
    x = np.linspace(-1, 1, 100).astype(np.float32)
    y = 2 * x - 1 + np.random.randn(*x.shape).astype(np.float32) * 0.2
    slope, intercept = np.polyfit(x.astype(np.float64), y.astype(np.float64), 1)
    mse = np.mean((slope * x + intercept - y) ** 2)
    return slope, intercept, mse


def test_keras_linear_model_learns_the_line():
    lines = run_example("keras_linear_model.py")
    assert lines[0] == "Starting custom training loop..."
    epochs = [line for line in lines if line.startswith("Epoch ")]
    assert [line.split(",")[0] for line in epochs] == [
        f"Epoch {e}/50" for e in (10, 20, 30, 40, 50)
    ]
    assert lines[-3] == "Custom training loop finished."
    (slope,) = values_after(lines, "Learned m (kernel):")
    (intercept,) = values_after(lines, "Learned b (bias):")
    ls_slope, ls_intercept, ls_mse = least_squares_line()
    # SGD with batches of 32 and learning rate 0.1 ends near, not at, the least-squares line.
    assert slope == pytest.approx(ls_slope, abs=0.1)
    assert intercept == pytest.approx(ls_intercept, abs=0.1)
    assert slope == pytest.approx(2.0, abs=0.15) and intercept == pytest.approx(-1.0, abs=0.15)
    # From epoch 10 on, the mean batch loss stays near the least-squares error (about the noise's
    # variance, 0.04); the initial weights give a loss above 1. (Batch means of a shuffled last
    # batch of 4 can fall below the least-squares error.)
    losses = values_after(epochs, "Epoch ")
    assert all(0.5 * ls_mse < loss < 2.5 * ls_mse for loss in losses), (losses, ls_mse)


# ---------------------------------------------------------------- seed 003: advanced tape


def test_advanced_tape_snippets_mlp_and_gan():
    # The shipped Fashion-MNIST subset, so that this path is run wherever the tests run.
    lines = run_example(
        "advanced_tape.py",
        *("--epochs", 3, "--limit", 1024, "--gan-epochs", 20, "--dataset", "fashion_mnist_small"),
    )
    assert_contains_in_order(
        lines,
        [
            "6.0",
            "27.0",
            "18.0",
            "[[2. 0.]",
            "[0. 2.]]",
            "=== Gradient clipping ===",
            "=== Custom gradient scaling ===",
            "[[2. 0.]",
            "[ 0. 12.]]",
            "[ 2. 12.]",
        ],
    )
    clipped = lines[lines.index("=== Gradient clipping ===") + 1 :][:2]
    norm = math.hypot(*(float(NUMBER.search(row).group()) for row in clipped))
    assert norm <= 1.0 + 1e-6  # clip_by_norm(grads, 1.0)
    scaled = lines[lines.index("=== Custom gradient scaling ===") + 1]
    assert scaled.count("array(") == 2  # one scaled row per element of the (2, 1) gradient

    mlp = lines.index(
        "=== MLP on MNIST: persistent tape, L2 regularization, clip_by_norm, Adam ==="
    )
    gan = lines.index("=== GAN: generator and discriminator trained from one persistent tape ===")
    assert "fashion_mnist_small: 1024 training images" in lines[mlp:gan]
    losses = values_after(lines[mlp:gan], "Epoch ")
    assert len(losses) == 3
    # Each epoch ends on the same last batch, so its loss falls as the model trains.
    assert losses[0] > losses[1] > losses[2] and losses[2] < 0.8 * losses[0]
    (accuracy,) = values_after(lines[mlp:gan], "Training accuracy:")
    assert 0.0 <= accuracy <= 1.0

    gan_lines = lines[gan + 1 :]
    assert [line.split(",")[0] for line in gan_lines] == ["Epoch 0", "Epoch 10"]
    for line in gan_lines:
        match = re.fullmatch(r"Epoch \d+, G Loss: (\S+), D Loss: (\S+)", line)
        assert match, line
        # Sigmoid cross-entropies: positive and finite (the stable formula never overflows).
        assert all(0.0 < float(value) < math.inf for value in match.groups())


# ---------------------------------------------------------------- seed 004: autodiff guide


def test_autodiff_guide_with_keras_layers(tmp_path):
    lines = run_example("autodiff_guide.py", "--plot-dir", tmp_path)
    four = "dz/dx: tf.Tensor(4.0, shape=(), dtype=float32)"
    assert_contains_in_order(
        lines,
        [
            four,
            "dz/dy: None",
            four,
            "dz/dy: None",
            four,
            "dz/dy: None",
            "tf.Tensor(2.0, shape=(), dtype=float32)",
            "1.0",
            "0.25",
            "dy_dx: 3.0",
            "d2y_dx2: 6.0",
            "[TensorShape([5, 10]), TensorShape([10])]",
            "y.shape: (201,) dy_dx.shape: (201,)",
            "max dy/dx: 0.25",
            "y.shape: (7, 10)",
            "layer.kernel.shape: (5, 10)",
            "j.shape: (7, 10, 5, 10)",
            "g.shape: (5, 10)",
            "layer.kernel.shape: (5, 8)",
            "h.shape: (5, 8, 5, 8)",
            "y.shape: (7, 6)",
            "j.shape: (7, 6, 7, 5)",
            "max off-diagonal |j|: 0.0",
            "j_sum.shape: (7, 6, 5)",
            "j_select.shape: (7, 6, 5)",
            "jb.shape: (7, 6, 5)",
            "=== Batch Jacobian through BatchNormalization ===",
            "j.shape: (7, 6, 7, 5)",
            "jb.shape: (7, 6, 5)",
        ],
    )
    assert values_after(lines, "delta:")[0] < 1e-3
    assert values_after(lines, "max |h - h^T|:")[0] < 1e-5  # the Hessian is symmetric
    assert values_after(lines, "max |(H + eps I) update - g|:")[0] < 1e-4
    assert values_after(lines, "error:")[0] < 1e-3
    # Training-mode BatchNormalization couples the examples of the batch.
    assert values_after(lines, "max off-diagonal |j|:")[1] > 1e-3
    figures = sorted(path.name for path in tmp_path.iterdir())
    assert figures == [
        "batch_norm_slices.png",
        "batch_slice.png",
        "batch_slices_diagonal.png",
        "hessian.png",
        "jacobian_scalar_source.png",
    ]
    for path in tmp_path.iterdir():
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------- the script that runs them all


def test_examples_script_runs_every_example():
    script = (ROOT / "scripts" / "examples.sh").read_text()
    programs = sorted(
        path.name
        for path in EXAMPLES.glob("*.py")
        if path.read_text().lstrip().startswith('"""') and "__main__" in path.read_text()
    )
    assert programs, "no example programs found"
    for name in programs:
        assert name.removesuffix(".py") in script, f"scripts/examples.sh does not run {name}"


@pytest.mark.parametrize(
    "name", sorted(p.name for p in EXAMPLES.glob("*.py") if p.name != "mnist_data.py")
)
def test_every_example_answers_help(name):
    """``--help`` prints a usage line and exits 0 (it neither trains nor ends in a traceback)."""
    lines = run_example(name, "--help", timeout=60)
    assert lines[0].startswith("usage:"), lines
