"""Checks an installed ferrotape wheel the way a new user meets it.

Run with the Python of a virtual environment that holds the wheel and nothing installed by hand
(pip brought in the declared dependencies): ``python scripts/wheel_smoke.py``. It checks that
``ferrotape`` is imported from that environment, not from this repository, and that its
extension is the abi3 build; then it takes a GradientTape gradient, fits a small Keras model and
runs ``ferrotape train --epochs 1`` through the installed console script. Exits non-zero, with
the failed check's message, on the first failure. scripts/test.sh runs it on the wheel that
scripts/build_wheel.sh builds.
"""

import os
import pathlib
import subprocess
import sys
import sysconfig
import tempfile
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent


def check(condition, message):
    """Stops the program with ``message`` when ``condition`` is false."""
    if not condition:
        sys.exit(f"wheel smoke: FAILED: {message}")


def installed_package():
    """Imports ferrotape and checks it is the installed wheel's copy."""
    started = time.perf_counter()
    import ferrotape as tf

    seconds = time.perf_counter() - started
    package = pathlib.Path(tf.__file__).resolve().parent
    site = pathlib.Path(sysconfig.get_paths()["platlib"]).resolve()
    # Run as `python scripts/wheel_smoke.py`, sys.path[0] is scripts/, so the repository's
    # python/ferrotape can only be picked up through PYTHONPATH or an editable install.
    check(package.parent == site, f"ferrotape imported from {package}, not from {site}")
    check(REPO / "python" not in package.parents, "ferrotape imported from the repository")
    core = pathlib.Path(tf._core.__file__).name
    check(core.endswith(".abi3.so"), f"the extension is {core}, not an abi3 build")
    print(f"import ferrotape {tf.__version__}: {seconds:.2f} s, extension {core}")
    return tf


def tape_gradient(tf):
    """d/dx of x^3 + 2x at x = 3 is 3x^2 + 2 = 29; d/dw of sum(w * [1, 2]) is [1, 2]."""
    x = tf.Variable(3.0)
    w = tf.Variable([0.5, -1.0])
    with tf.GradientTape() as tape:
        y = x**3 + 2.0 * x + tf.reduce_sum(w * tf.constant([1.0, 2.0]))
    dx, dw = tape.gradient(y, [x, w])
    check(float(dx) == 29.0, f"d(x^3 + 2x)/dx at 3 is {float(dx)}, expected 29")
    check(np.array_equal(dw.numpy(), [1.0, 2.0]), f"d/dw is {dw.numpy()}, expected [1, 2]")
    print(f"GradientTape: dy/dx = {float(dx)}, dy/dw = {dw.numpy()}")


def keras_fit(tf):
    """A two-layer model fits y = 2a - b + 0.5: the loss falls by at least ten times."""
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 2)).astype("float32")
    y = (2.0 * x[:, :1] - x[:, 1:] + 0.5).astype("float32")
    model = tf.keras.Sequential(
        [tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(16, "relu"), tf.keras.layers.Dense(1)]
    )
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    history = model.fit(x, y, epochs=30, batch_size=32, verbose=0)
    first, last = history.history["loss"][0], history.history["loss"][-1]
    check(last < first / 10, f"Keras fit: loss went from {first:.4f} to {last:.4f}")
    prediction = model.predict(x[:4], verbose=0)
    check(prediction.shape == (4, 1), f"predict gave shape {prediction.shape}, expected (4, 1)")
    print(f"Keras fit: loss {first:.4f} -> {last:.4f} in 30 epochs")


def train_command():
    """``ferrotape train --epochs 1`` through the console script the wheel installs."""
    command = pathlib.Path(sys.executable).parent / "ferrotape"
    check(command.is_file(), f"the wheel installed no {command}")
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        completed = subprocess.run(
            [str(command), "train", "--epochs", "1", "--seed", "0", "--quiet", "--out", out],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": ""},
        )
        seconds = time.perf_counter() - started
        check(
            completed.returncode == 0,
            f"ferrotape train exited {completed.returncode}:\n{completed.stderr}",
        )
        written = sorted(path.name for path in pathlib.Path(out).iterdir())
        check("weights.safetensors" in written, f"ferrotape train wrote only {written}")
        check("history.json" in written, f"ferrotape train wrote only {written}")
    result = [line for line in completed.stdout.splitlines() if line.startswith("Test accuracy")]
    check(result, f"ferrotape train printed no test accuracy:\n{completed.stdout}")
    print(f"ferrotape train --epochs 1: {seconds:.1f} s, {result[-1]}")


def main():
    tf = installed_package()
    tape_gradient(tf)
    keras_fit(tf)
    train_command()
    print(f"wheel smoke: OK on Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
