"""The ``ferrotape`` command: ``ferrotape train`` trains a classifier on Fashion-MNIST.

``ferrotape train`` builds the Keras CNN of the GradientTape tutorial (seed 000) or, with
``--model mlp``, a 784-128-10 MLP, and trains it with a custom ``GradientTape`` loop (or with
``model.fit`` given ``--fit``). Each epoch shows a progress bar on standard error and then one
line on standard output with the loss, the accuracy, the test-set loss and accuracy, the
epoch's time and its throughput. At the end it writes, into ``--out`` (``./ferrotape-run``):

- ``weights.safetensors``: ``model.save_weights``; ``model.load_weights`` reads it back;
- ``history.json``: per epoch ``loss``, ``accuracy``, ``val_loss``, ``val_accuracy`` (the test
  set), ``seconds`` (training time) and ``images_per_second`` (training throughput);
- ``training_curves.png``: loss and accuracy per epoch, train and test (needs matplotlib).

The data is the class-balanced subset shipped with ferrotape (6,000 training and 1,000 test
images) unless ``--full`` (the 60,000 + 10,000 images, looked for where
``fashion_mnist.load_data`` looks) or ``--data DIR`` (the four IDX files in ``DIR``) is given.

``--threads N`` sets ``RAYON_NUM_THREADS``, the size of the native module's thread pool. The pool
reads that variable once, when the first op runs, so the variable has to be set before any
tensor is computed; the command does that first thing, before loading the data.

Run it as ``ferrotape train ...`` or ``python -m ferrotape train ...``. Exit status: 0 on
success, 2 for a usage error or missing data (one line on standard error, no traceback), 1 when
writing the results fails, 130 when interrupted.
"""

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from . import __version__

PROG = "ferrotape"
DEFAULT_OUT = "ferrotape-run"
# The shipped subset has 94 batches per epoch; BatchNormalization's moving averages (momentum
# 0.99) need about 400 steps to forget their initial values, so the test accuracy is poor
# before epoch 5 (seed 0: 0.10, 0.34, 0.54, 0.68, 0.82; unseeded runs 0.75-0.82 at epoch 5)
# and about flat after it (seed 0: 0.81-0.84 up to epoch 8, while the training set overfits).
DEFAULT_EPOCHS = 5
DEFAULT_BATCH_SIZE = 64
DEFAULT_LEARNING_RATE = 1e-3
# Batch size of the test-set evaluation: no gradients are kept, so bigger batches are cheaper.
EVAL_BATCH_SIZE = 500
WEIGHTS_FILE = "weights.safetensors"
HISTORY_FILE = "history.json"
CURVES_FILE = "training_curves.png"
NUM_CLASSES = 10


class CommandError(Exception):
    """A failure reported as one line on standard error (no traceback) with ``exit_status``."""

    exit_status = 1


class UsageError(CommandError):
    """A problem with the command line or the data it names."""

    exit_status = 2


# ----------------------------------------------------------------------------- arguments
def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 2**32 - 1, got {text!r}")
    return value


# More native threads than this never helps (each is a full core's worth of work) and, in the
# thousands, they exhaust memory for their stacks.
MAX_THREADS = max(64, 4 * (os.cpu_count() or 1))


def _thread_count(text):
    value = _positive_int(text)
    if value > MAX_THREADS:
        raise argparse.ArgumentTypeError(
            f"expected at most {MAX_THREADS} threads (4 per CPU core, or 64), got {text!r}"
        )
    return value


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def build_parser():
    """The ``ferrotape`` argument parser with its ``train`` subcommand."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="ferrotape: eager automatic differentiation with TensorFlow 2's "
        "GradientTape API, on a Rust core.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    train = commands.add_parser(
        "train",
        help="train a CNN (or an MLP) on Fashion-MNIST",
        description="Train the Keras CNN of the GradientTape tutorial (Conv-ReLU-BatchNorm "
        "blocks, Dense 256, Dropout, softmax; Adam, categorical cross-entropy) on Fashion-MNIST "
        "with a custom GradientTape loop, evaluate it on the test set after every epoch, and "
        "write the weights, the history and a plot of the training curves.",
        epilog="The native thread pool reads RAYON_NUM_THREADS once, when the first op runs; "
        "--threads sets it before any op. Progress bars go to standard error, results to "
        "standard output.",
    )
    train.add_argument(
        "--model",
        choices=("cnn", "mlp"),
        default="cnn",
        help="cnn: the tutorial's CNN (default); mlp: Dense 128 relu, Dense 10 softmax",
    )
    train.add_argument(
        "--fit",
        action="store_true",
        help="train with model.compile + model.fit instead of the custom GradientTape loop",
    )
    train.add_argument(
        "--epochs",
        type=_positive_int,
        default=DEFAULT_EPOCHS,
        help=f"passes over the training images (default: {DEFAULT_EPOCHS})",
    )
    train.add_argument(
        "--batch-size",
        type=_positive_int,
        default=DEFAULT_BATCH_SIZE,
        help=f"images per training step (default: {DEFAULT_BATCH_SIZE})",
    )
    train.add_argument(
        "--learning-rate",
        type=_positive_float,
        default=DEFAULT_LEARNING_RATE,
        help=f"Adam's learning rate (default: {DEFAULT_LEARNING_RATE:g})",
    )
    train.add_argument(
        "--seed",
        type=_seed,
        default=None,
        help="seed for the weights, dropout and shuffling (ft.random.set_seed and numpy), "
        "for repeatable runs (default: a fresh one each run)",
    )
    data = train.add_mutually_exclusive_group()
    data.add_argument(
        "--data",
        metavar="DIR",
        help="read the four Fashion-MNIST IDX files (train-images-idx3-ubyte.gz, ...) from DIR",
    )
    data.add_argument(
        "--full",
        action="store_true",
        help="use the full 60,000 + 10,000 images, found in $FERROTAPE_DATA, "
        "~/.ferrotape/datasets or /usr/share/datasets/fashion-mnist (default: the 6,000 + "
        "1,000 image subset shipped with ferrotape)",
    )
    train.add_argument(
        "--limit",
        type=_positive_int,
        metavar="N",
        help="train on the first N training images only (quick checks and tests)",
    )
    train.add_argument(
        "--threads",
        type=_thread_count,
        metavar="N",
        help="native worker threads (sets RAYON_NUM_THREADS; default: one per CPU core)",
    )
    train.add_argument(
        "--out",
        metavar="DIR",
        default=DEFAULT_OUT,
        help=f"where to write the weights, history and plot (default: ./{DEFAULT_OUT})",
    )
    train.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bars or per-epoch lines; print only the results",
    )
    train.set_defaults(handler=train_command)
    return parser


def main(argv=None):
    """Runs the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except CommandError as error:
        print(f"{PROG} {args.command}: error: {error}", file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt:
        print(f"{PROG} {args.command}: interrupted", file=sys.stderr)
        return 130


# ----------------------------------------------------------------------------- train
def train_command(args):
    """``ferrotape train``: loads the data, trains, evaluates and writes the results."""
    if args.threads is not None:
        # Before the first op: the native pool reads this variable once, when it starts.
        os.environ["RAYON_NUM_THREADS"] = str(args.threads)
    import ferrotape as ft

    (x_train, y_train), (x_test, y_test) = load_fashion_mnist(args.data, args.full)
    if args.limit is not None:
        x_train, y_train = x_train[: args.limit], y_train[: args.limit]
    if len(x_train) == 0 or len(x_test) == 0:
        raise UsageError("the data set has no training or no test images")
    for images in (x_train, x_test):
        if images.shape[1:] != (28, 28):
            raise UsageError(
                f"the images are {images.shape[1]}x{images.shape[2]} pixels; the models take "
                "28x28 Fashion-MNIST images"
            )
    x_train, y_train = prepare(x_train, y_train, args.model)
    x_test, y_test = prepare(x_test, y_test, args.model)
    out_dir = _writable_directory(args.out)

    say = _Printer(args.quiet)
    if args.seed is not None:
        ft.random.set_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = build_model(args.model)
    optimizer = ft.keras.optimizers.Adam(learning_rate=args.learning_rate)
    loop = "model.fit" if args.fit else "GradientTape loop"
    epochs = f"{args.epochs} epoch" + ("s" if args.epochs != 1 else "")
    say.info(
        f"Training the {args.model.upper()} on {len(x_train)} Fashion-MNIST images "
        f"({len(x_test)} test images) for {epochs}, batch size {args.batch_size}, "
        f"with a {loop}"
    )
    train = fit_loop if args.fit else tape_loop
    history = _empty_history()
    try:
        train(model, optimizer, (x_train, y_train), (x_test, y_test), args, rng, say, history)
    except KeyboardInterrupt:
        # An interrupt lands between Python statements, so the weights are those after a
        # whole step: keep them, and the history of the epochs that finished.
        finished = len(history["loss"])
        print(
            f"{PROG} train: interrupted after {finished} finished epoch"
            f"{'' if finished == 1 else 's'}; saving into {out_dir}",
            file=sys.stderr,
        )
        write_results(model, history, out_dir, say)
        return 130
    say.result(f"Test accuracy: {history['val_accuracy'][-1]:.4f}")
    write_results(model, history, out_dir, say)
    return 0


def _writable_directory(name):
    """``--out``, created if needed and checked writable now, not after hours of training."""
    import tempfile

    out_dir = Path(name)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out_dir):
            pass
    except OSError as error:
        raise UsageError(f"--out {name}: cannot write into the directory ({error})") from None
    return out_dir


class _Printer:
    """Standard output: progress lines unless ``--quiet``, results always."""

    def __init__(self, quiet):
        self.quiet = quiet

    def info(self, line):
        if not self.quiet:
            print(line, flush=True)

    def result(self, line):
        print(line, flush=True)


# ----------------------------------------------------------------------------- data
def load_fashion_mnist(data_dir=None, full=False):
    """``(x_train, y_train), (x_test, y_test)`` as uint8 arrays: the shipped subset, the full
    set (``full``) or the IDX files in ``data_dir``. Raises ``UsageError`` when files are
    missing or unreadable."""
    from .keras.datasets import fashion_mnist

    try:
        if data_dir is not None:
            return _load_idx_dir(Path(data_dir), fashion_mnist.FILES)
        return fashion_mnist.load_data(subset=None if full else "small")
    except (FileNotFoundError, ValueError) as error:
        raise UsageError(str(error)) from None


def _load_idx_dir(directory, filenames):
    """Reads the four IDX files (gzip-compressed, or not with ``.gz`` dropped) from
    ``directory``."""
    from .keras.datasets import _idx

    if not directory.is_dir():
        raise FileNotFoundError(f"--data {directory}: no such directory")
    paths = []
    for name in filenames:
        candidates = [directory / name, directory / name.removesuffix(".gz")]
        found = next((p for p in candidates if p.is_file()), None)
        if found is None:
            raise FileNotFoundError(
                f"--data {directory}: {name} is missing (the directory needs "
                f"{', '.join(filenames)})"
            )
        paths.append(found)
    train = _idx.read_images_and_labels(paths[0], paths[1])
    test = _idx.read_images_and_labels(paths[2], paths[3])
    return train, test


def prepare(images, labels, model_kind):
    """Scales the images to [0, 1] float32 (with a channel axis for the CNN, flat for the
    MLP) and one-hot encodes the labels."""
    from .keras.utils import to_categorical

    x = images.astype("float32") / 255.0
    x = x[..., np.newaxis] if model_kind == "cnn" else x.reshape(len(x), -1)
    return x, to_categorical(labels, NUM_CLASSES)


# ----------------------------------------------------------------------------- models
def build_model(kind):
    """The tutorial's CNN (``"cnn"``) or a 784-128-10 MLP (``"mlp"``), as a ``Sequential``."""
    from .keras import Input, Sequential, layers

    if kind == "mlp":
        return Sequential(
            [
                Input(shape=(784,)),
                layers.Dense(128, activation="relu"),
                layers.Dense(NUM_CLASSES, activation="softmax"),
            ],
            name="mlp",
        )

    def conv_block(filters):
        # CONV => RELU => BN, channels last, as in the tutorial.
        return [
            layers.Conv2D(filters, (3, 3), padding="same"),
            layers.Activation("relu"),
            layers.BatchNormalization(axis=-1),
        ]

    pool = layers.MaxPooling2D
    return Sequential(
        [
            Input(shape=(28, 28, 1)),
            *conv_block(16),
            pool(pool_size=(2, 2)),
            *conv_block(32),
            *conv_block(32),
            pool(pool_size=(2, 2)),
            *conv_block(64),
            *conv_block(64),
            *conv_block(64),
            pool(pool_size=(2, 2)),
            layers.Flatten(),
            layers.Dense(256),
            layers.Activation("relu"),
            layers.BatchNormalization(),
            layers.Dropout(0.5),
            layers.Dense(NUM_CLASSES),
            layers.Activation("softmax"),
        ],
        name="cnn",
    )


# ----------------------------------------------------------------------------- training
def tape_loop(model, optimizer, train_data, test_data, args, rng, say, history):
    """Trains with the tutorial's step: ``model(x, training=True)``, the loss,
    ``tape.gradient`` and ``optimizer.apply_gradients``, appending each epoch to ``history``."""
    import ferrotape as ft

    from .keras.losses import categorical_crossentropy

    def step(x, y):
        with ft.GradientTape() as tape:
            predictions = model(x, training=True)
            loss = ft.reduce_mean(categorical_crossentropy(y, predictions))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return float(loss), predictions.numpy()

    x_train, y_train = train_data
    count, batch_size = len(x_train), args.batch_size
    steps = -(-count // batch_size)
    for epoch in range(args.epochs):
        bar = _progress_bar(steps, epoch, args)
        order = rng.permutation(count)
        loss_sum = correct = seen = 0
        start = time.perf_counter()
        for index in range(steps):
            batch = order[index * batch_size : (index + 1) * batch_size]
            x, y = x_train[batch], y_train[batch]
            loss, predictions = step(x, y)
            loss_sum += loss * len(batch)
            correct += _correct(y, predictions)
            seen += len(batch)
            logs = {"loss": loss_sum / seen, "accuracy": correct / seen}
            bar.update(index + 1, logs, seen)
        seconds = time.perf_counter() - start
        bar.close()
        val_loss, val_accuracy = evaluate(model, *test_data)
        _record(history, logs, val_loss, val_accuracy, seconds, count)
        say.info(_epoch_line(history, epoch, args.epochs))
    return history


def fit_loop(model, optimizer, train_data, test_data, args, rng, say, history):
    """Trains with ``model.compile`` and ``model.fit`` (test set as validation data)."""
    from .keras.callbacks import Callback

    del rng  # fit shuffles with ft.random, seeded by ft.random.set_seed
    count = len(train_data[0])

    class EpochReport(Callback):
        """Times each epoch's training part and prints the epoch line."""

        def on_epoch_begin(self, epoch, logs=None):
            self.start = time.perf_counter()

        def on_test_begin(self, logs=None):
            # fit evaluates the validation data after the epoch's last step.
            self.seconds = time.perf_counter() - self.start

        def on_epoch_end(self, epoch, logs=None):
            train_logs = {"loss": logs["loss"], "accuracy": logs["accuracy"]}
            _record(
                history, train_logs, logs["val_loss"], logs["val_accuracy"], self.seconds, count
            )
            say.info(_epoch_line(history, epoch, args.epochs))

    model.compile(optimizer=optimizer, loss="categorical_crossentropy", metrics=["accuracy"])
    model.fit(
        *train_data,
        batch_size=args.batch_size,
        epochs=args.epochs,
        verbose=0 if args.quiet else 1,
        callbacks=[EpochReport()],
        validation_data=test_data,
        validation_batch_size=EVAL_BATCH_SIZE,
        shuffle=True,
    )
    return history


def evaluate(model, x, y):
    """The mean categorical cross-entropy and the accuracy of ``model`` (inference mode)."""
    import ferrotape as ft

    from .keras.losses import categorical_crossentropy

    loss_sum = correct = 0.0
    for start in range(0, len(x), EVAL_BATCH_SIZE):
        x_batch, y_batch = x[start : start + EVAL_BATCH_SIZE], y[start : start + EVAL_BATCH_SIZE]
        predictions = model(x_batch, training=False)
        loss_sum += float(ft.reduce_sum(categorical_crossentropy(y_batch, predictions)))
        correct += _correct(y_batch, predictions.numpy())
    return loss_sum / len(x), correct / len(x)


def _correct(one_hot, predictions):
    return int(np.sum(np.argmax(predictions, axis=-1) == np.argmax(one_hot, axis=-1)))


def _progress_bar(steps, epoch, args):
    from .keras.utils import ProgressBar

    description = f"Epoch {epoch + 1}/{args.epochs}"
    return ProgressBar(steps, description=description, verbose=0 if args.quiet else 1)


def _empty_history():
    keys = ("loss", "accuracy", "val_loss", "val_accuracy", "seconds", "images_per_second")
    return {key: [] for key in keys}


def _record(history, logs, val_loss, val_accuracy, seconds, images):
    history["loss"].append(float(logs["loss"]))
    history["accuracy"].append(float(logs["accuracy"]))
    history["val_loss"].append(float(val_loss))
    history["val_accuracy"].append(float(val_accuracy))
    history["seconds"].append(seconds)
    history["images_per_second"].append(images / seconds if seconds > 0 else float("inf"))


def _epoch_line(history, epoch, epochs):
    """``Epoch 1/3 - loss: 0.5310 - accuracy: 0.8101 - val_loss: ... - 12.3s - 488 images/s``."""
    from .keras.utils import format_logs

    names = ("loss", "accuracy", "val_loss", "val_accuracy")
    logs = format_logs({name: history[name][-1] for name in names})
    seconds, rate = history["seconds"][-1], history["images_per_second"][-1]
    return f"Epoch {epoch + 1}/{epochs} - {logs} - {seconds:.1f}s - {rate:.0f} images/s"


# ----------------------------------------------------------------------------- results
def write_results(model, history, out_dir, say):
    """Writes the weights, the history as JSON and the curves as PNG; prints the paths."""
    weights_path = out_dir / WEIGHTS_FILE
    history_path = out_dir / HISTORY_FILE
    from .keras.saving.file_io import _write_atomically

    try:
        model.save_weights(weights_path)
        _write_atomically(history_path, (_history_json(history) + "\n").encode())
        curves_path = plot_history(history, out_dir / CURVES_FILE)
    except OSError as error:
        raise CommandError(f"cannot write the results into {out_dir}: {error}") from None
    say.result(f"Weights: {weights_path}")
    say.result(f"History: {history_path}")
    if curves_path is None:
        say.result("Training curves: skipped (matplotlib is not installed)")
    else:
        say.result(f"Training curves: {curves_path}")


def _history_json(history):
    """The history as strict JSON: a NaN or infinite value (a diverged loss) becomes null,
    which every JSON reader accepts, where Python's default would write the invalid NaN."""

    def finite(value):
        return value if not isinstance(value, float) or math.isfinite(value) else None

    clean = {key: [finite(v) for v in values] for key, values in history.items()}
    return json.dumps(clean, indent=2, allow_nan=False)


def plot_history(history, path):
    """Draws loss and accuracy per epoch (train and test) into a PNG at ``path`` with
    matplotlib's Agg backend; returns ``path``, or ``None`` when matplotlib is missing."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        return None
    epochs = range(1, len(history["loss"]) + 1)
    # A bare Figure on an Agg canvas: no pyplot, so no display and no global figure state.
    figure = Figure(figsize=(10, 4), layout="constrained")
    FigureCanvasAgg(figure)
    panels = figure.subplots(1, 2)
    for axes, name, title in ((panels[0], "loss", "Loss"), (panels[1], "accuracy", "Accuracy")):
        axes.plot(epochs, history[name], marker="o", label="train")
        axes.plot(epochs, history[f"val_{name}"], marker="o", label="test")
        axes.set_title(title)
        axes.set_xlabel("epoch")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.grid(alpha=0.3)
        axes.legend()
    figure.savefig(path, dpi=100)
    return path
