"""The ``ferrotape`` command: ``ferrotape train`` trains a classifier on Fashion-MNIST.

``ferrotape train`` builds the Keras CNN of the GradientTape tutorial or, with ``--model mlp``,
a 784-128-10 MLP, and trains it with a custom ``GradientTape`` loop whose step is an
``ft.function`` (or with ``model.fit`` given ``--fit``, which traces its step the same way).
Each epoch shows a progress bar on standard error and then one line on standard output with
the loss, the accuracy, the test-set loss and accuracy, the epoch's time and its throughput.
At the end it writes, into ``--out`` (``./ferrotape-run``):

- ``weights.safetensors``: ``model.save_weights``; ``model.load_weights`` reads it back;
- ``history.json``: per epoch ``loss``, ``accuracy``, ``val_loss``, ``val_accuracy`` (the test
  set), ``seconds`` (training time) and ``images_per_second`` (training throughput);
- ``training_curves.png``: loss and accuracy per epoch, train and test (needs matplotlib);
- ``training_state.safetensors``: what ``--resume`` needs to go on: the weights, the
  optimizer's variables and, in the file's metadata, the run's settings, its history, where in
  the epoch it stopped and the state of the shuffling and augmentation generators.

The default recipe (the README's section on the main job says why): 10 epochs of batches of
64, Adam with a peak learning rate of 0.002 and cosine decay to 0 over the run,
BatchNormalization with momentum 0.9 (with Keras's 0.99 the moving statistics keep their
initial values for hundreds of steps: 4 of the 10 epochs), and each training image flipped
left-right with probability 1/2 and shifted by up to one pixel in each direction
(``--no-augment`` turns that off). The test images are only evaluated, never trained on.

Ctrl-C stops the run at the end of the current step (a second Ctrl-C quits at once, saving
nothing new): it writes the four files above for the steps done so far, and ``--resume DIR``
goes on from them (the same step, learning rate, epoch counter and history; the unfinished
epoch goes on from where it stopped, except with ``--fit``, which starts it again). Ctrl-C
while the results are being written waits for the save to end. The four files are written as
one set (a new hidden directory, then one rename of the link ``.current`` that the four names
point through), so even a kill -9 leaves the files of one step: the new save's or the one
before.

The data is the class-balanced subset shipped with ferrotape (6,000 training and 1,000 test
images) unless ``--full`` (the 60,000 + 10,000 images, looked for where
``fashion_mnist.load_data`` looks) or ``--data DIR`` (the four IDX files in ``DIR``) is given.

``--threads N`` sets ``RAYON_NUM_THREADS``, the size of the native module's thread pool. The pool
reads that variable once, when ferrotape is imported (which running this command has already
done), so the command sets it and starts itself again in a fresh process before loading the
data; called in-process with ``main(argv)``, it only sets the variable.

``--device gpu`` trains on the first GPU of a build with the ``gpu`` feature (the model, the
optimizer and each batch live there; an op without a GPU kernel runs on the CPU); without a GPU
it is a usage error.

Run it as ``ferrotape train ...`` or ``python -m ferrotape train ...``. Exit status: 0 on
success, 2 for a usage error or missing data (one line on standard error, no traceback), 1 when
writing the results fails, 130 when interrupted.
"""

import argparse
import json
import math
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np

from . import __version__

PROG = "ferrotape"
DEFAULT_OUT = "ferrotape-run"
# The default recipe. The shipped subset gives 94 steps an epoch. Keras's defaults
# (BatchNormalization momentum 0.99, a constant learning rate of 0.001, 5 epochs, no
# augmentation) left the moving statistics unsettled for 400 steps (test accuracy 0.10 after
# epoch 1) and then overfitted the 6,000 images (training 0.90, test 0.69-0.80 after 5
# epochs). Momentum 0.9 averages over about the last 10 steps, so the first epoch already
# evaluates sensibly (0.74-0.78); flips and one-pixel shifts make each epoch's images new
# ones, and the cosine decay ends the run on small steps: test accuracy 0.858-0.873 after 10
# epochs in three seeded runs (the README gives them; 12 epochs gained nothing).
DEFAULT_EPOCHS = 10
DEFAULT_BATCH_SIZE = 64
DEFAULT_LEARNING_RATE = 2e-3  # Adam's rate at the first step; cosine decay to 0 at the last
BATCH_NORM_MOMENTUM = 0.9
SHIFT_PIXELS = 1  # augmentation: each image moves by up to this many pixels each way
# Batch size of the test-set evaluation: no gradients are kept, so bigger batches are cheaper.
EVAL_BATCH_SIZE = 500
WEIGHTS_FILE = "weights.safetensors"
HISTORY_FILE = "history.json"
CURVES_FILE = "training_curves.png"
STATE_FILE = "training_state.safetensors"
# Each save's files go into a new directory of this prefix; CURRENT_LINK names the last whole one.
SAVE_PREFIX = ".save-"
CURRENT_LINK = ".current"
# The metadata key of the training state's settings, history and position (JSON).
STATE_KEY = "ferrotape.train"
STATE_VERSION = 1
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
        epilog="Ctrl-C stops at the end of the current step and saves the run into --out; "
        "--resume DIR goes on from there. The native thread pool reads RAYON_NUM_THREADS "
        "once, at import; --threads sets it and restarts the command. Progress bars go to "
        "standard error, results to standard output.",
    )
    # The run's settings default to None here: an option left out is taken from the saved
    # run under --resume (and from the DEFAULT_* constants otherwise); see _fill_settings.
    train.add_argument(
        "--model",
        choices=("cnn", "mlp"),
        help="cnn: the tutorial's CNN (default); mlp: Dense 128 relu, Dense 10 softmax",
    )
    train.add_argument(
        "--fit",
        action="store_true",
        default=None,
        help="train with model.compile + model.fit instead of the custom GradientTape loop",
    )
    train.add_argument(
        "--epochs",
        type=_positive_int,
        help=f"passes over the training images (default: {DEFAULT_EPOCHS}); with --resume, "
        "the total to reach (the learning-rate decay is stretched over the new total)",
    )
    train.add_argument(
        "--batch-size",
        type=_positive_int,
        help=f"images per training step (default: {DEFAULT_BATCH_SIZE})",
    )
    train.add_argument(
        "--learning-rate",
        type=_positive_float,
        help=f"Adam's learning rate at the first step, decayed along a cosine to 0 at the "
        f"last (default: {DEFAULT_LEARNING_RATE:g})",
    )
    train.add_argument(
        "--no-augment",
        action="store_true",
        default=None,
        help="train on the images as they are (default: flip each left-right with "
        f"probability 1/2 and shift it by up to {SHIFT_PIXELS} pixel each way)",
    )
    train.add_argument(
        "--seed",
        type=_seed,
        help="seed for the weights, dropout, shuffling and augmentation (ft.random.set_seed "
        "and numpy), for repeatable runs (default: a fresh one each run)",
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
        default=None,
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
        "--resume",
        metavar="DIR",
        help=f"go on with the run saved in DIR (its {STATE_FILE}, written when a run ends or "
        "is stopped with Ctrl-C), with its settings; results go to DIR unless --out is given",
    )
    train.add_argument(
        "--device",
        choices=("cpu", "gpu"),
        default="cpu",
        help="where the model trains: cpu (default) or gpu, the first GPU (needs a build "
        "with the gpu feature and an adapter; ops without a GPU kernel run on the CPU)",
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
        help="where to write the weights, history, plot and training state (default: "
        f"./{DEFAULT_OUT}, or the --resume directory)",
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
    threads = getattr(args, "threads", None)
    if threads is not None and os.environ.get("RAYON_NUM_THREADS") != str(threads):
        # The native pool was sized when ferrotape was imported: a command of its own starts
        # again with the variable set, so that the pool has the threads asked for.
        os.environ["RAYON_NUM_THREADS"] = str(threads)
        if argv is None:
            os.execv(sys.executable, [sys.executable, "-m", "ferrotape", *sys.argv[1:]])
    try:
        return args.handler(args)
    except CommandError as error:
        print(f"{PROG} {args.command}: error: {error}", file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt:
        print(f"{PROG} {args.command}: interrupted", file=sys.stderr)
        return 130


# ----------------------------------------------------------------------------- train
# The settings a run is made of, saved with its state and taken from it by --resume:
# (attribute, option, default).
_SETTINGS = (
    ("model", "--model", "cnn"),
    ("fit", "--fit", False),
    ("batch_size", "--batch-size", DEFAULT_BATCH_SIZE),
    ("learning_rate", "--learning-rate", DEFAULT_LEARNING_RATE),
    ("no_augment", "--no-augment", False),
    ("seed", "--seed", None),
    ("data", "--data", None),
    ("full", "--full", False),
    ("limit", "--limit", None),
)


def train_command(args):
    """``ferrotape train``: loads the data, trains, evaluates and writes the results."""
    import ferrotape as ft

    saved_arrays, state = (None, None)
    if args.resume is not None:
        saved_arrays, state = read_training_state(args.resume)
    _fill_settings(args, state)
    device = _device_name(args.device)

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
    out_dir = _writable_directory(args.out or args.resume or DEFAULT_OUT)

    say = _Printer(args.quiet)
    data = (x_train, y_train), (x_test, y_test)
    run = _Run(np.random.default_rng(args.seed))
    if state is not None:
        run.restore(state)
    if args.seed is not None:
        # Offset by the steps done, so that a resumed run does not draw the first run's
        # dropout masks again.
        ft.random.set_seed((args.seed + run.steps_done) % 2**32)
    with ft.device(device):
        return _train_on_device(args, state, saved_arrays, run, say, data, out_dir)


def _device_name(device):
    """TensorFlow's name of ``--device``'s device; a usage error when it does not exist."""
    import ferrotape as ft

    if device == "gpu":
        if not ft.config.list_physical_devices("GPU"):
            raise UsageError(
                "--device gpu: no GPU was found (this build has no gpu feature, or no adapter "
                "was found; a software adapter such as Mesa's lavapipe is listed only with "
                "FERROTAPE_GPU_ALLOW_SOFTWARE=1)"
            )
        return "/GPU:0"
    return "/CPU:0"


def _train_on_device(args, state, saved_arrays, run, say, data, out_dir):
    """The part of ``train_command`` that runs inside the ``--device`` scope: builds the
    model and optimizer, trains, and writes the results; returns the exit status."""
    import ferrotape as ft

    train_data, test_data = data
    x_train = train_data[0]
    model = build_model(args.model)
    steps = -(-len(x_train) // args.batch_size)
    schedule = ft.keras.optimizers.schedules.CosineDecay(args.learning_rate, args.epochs * steps)
    optimizer = ft.keras.optimizers.Adam(learning_rate=schedule)
    # Built now, not at the first step: its variables are saved on Ctrl-C and restored here.
    optimizer.build(model.trainable_variables)
    if state is not None:
        _restore_variables(model, optimizer, saved_arrays, args.resume)
    say.info(_start_line(args, run, len(x_train), len(test_data[0])))
    train = fit_loop if args.fit else tape_loop
    # One handler from the first step to the last file written: no moment between training
    # and saving where Ctrl-C would fall back to Python's default and cut the save short.
    with _StopOnCtrlC() as stop:
        try:
            train(model, optimizer, train_data, test_data, args, run, stop, say)
            status = 0
        except _Stopped:
            print(
                f"{PROG} train: {_stopped_line(args, run, steps)}; saving into {out_dir}",
                file=sys.stderr,
                flush=True,
            )
            if args.fit:
                run.restart_epoch()  # fit cannot start an epoch part of the way through
            status = 130
        if status == 0:
            say.result(f"Test accuracy: {run.history['val_accuracy'][-1]:.4f}")
        stop.saving = True
        write_results(model, optimizer, args, run, out_dir, say)
    return status


def _fill_settings(args, state):
    """Sets ``args``'s settings: as given, else the saved run's (``state``, under --resume),
    else the defaults. Under --resume a setting given with another value than the run had is a
    usage error; ``--epochs`` is not one of them but the total to reach."""
    if args.data is not None:
        args.data = os.path.abspath(args.data)  # the saved run must find it from anywhere
    saved = state["settings"] if state is not None else None
    for name, option, default in _SETTINGS:
        given = getattr(args, name)
        if saved is None:
            setattr(args, name, default if given is None else given)
            continue
        if given is not None and given != saved[name]:
            raise UsageError(
                f"--resume {args.resume}: the run was trained "
                f"{_with_option(option, saved[name])}; leave {option} out to go on with it, "
                "or start a new run in another --out directory"
            )
        setattr(args, name, saved[name])
    args.augment = not args.no_augment
    if saved is None:
        args.epochs = args.epochs or DEFAULT_EPOCHS
        return
    args.epochs = args.epochs or saved["epochs"]
    finished = len(state["history"]["loss"])
    if args.epochs <= finished:
        raise UsageError(
            f"--resume {args.resume}: the run has finished {finished} of its "
            f"{saved['epochs']} epochs; pass --epochs with a larger total to train on"
        )


def _with_option(option, value):
    if value is None or value is False:
        return f"without {option}"
    return f"with {option}" if value is True else f"with {option} {value}"


def _start_line(args, run, train_count, test_count):
    loop = "model.fit" if args.fit else "GradientTape loop"
    epochs = f"{args.epochs} epoch" + ("s" if args.epochs != 1 else "")
    if run.steps_done:
        return (
            f"Resuming the {args.model.upper()} run at epoch {run.epoch + 1}/{args.epochs}, "
            f"step {run.step + 1} ({train_count} Fashion-MNIST images, {test_count} test "
            f"images, batch size {args.batch_size}, with a {loop})"
        )
    return (
        f"Training the {args.model.upper()} on {train_count} Fashion-MNIST images "
        f"({test_count} test images) for {epochs}, batch size {args.batch_size}, "
        f"with a {loop}" + (" on the GPU" if args.device == "gpu" else "")
    )


def _stopped_line(args, run, steps):
    finished = f"{run.epoch} finished epoch" + ("" if run.epoch == 1 else "s")
    if run.step == 0:
        return f"interrupted after {finished}"
    line = f"interrupted after {finished} and {run.step} of {steps} steps of epoch {run.epoch + 1}"
    if args.fit:
        line += f" (--fit: --resume starts epoch {run.epoch + 1} again)"
    return line


class _Stopped(Exception):
    """Raised at a step's end after Ctrl-C, to stop training and save."""


class _StopOnCtrlC:
    """While active, Ctrl-C asks the training to stop at the end of the current step (where
    the weights and the optimizer agree), and a second Ctrl-C raises ``KeyboardInterrupt`` at
    once, as usual.

    Once ``saving`` is set (the results are being written), every Ctrl-C is ignored with a
    note: the save is short, and cutting it off would lose the steps since the last one.

    Python's handler is replaced for the time, which also unhooks the native kernels' stop
    flag (rust/ferrotape-py/src/interrupts.rs) for the rest of the process: wanted here, since
    a step should finish rather than be cut off inside ``apply_gradients``.
    """

    def __init__(self):
        self.requested = False
        self.saving = False
        self._previous = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc_info):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _handle(self, signum, frame):
        if self.saving:
            print(
                f"\n{PROG} train: Ctrl-C: saving the run; it ends when the save is done",
                file=sys.stderr,
                flush=True,
            )
            return
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print(
            f"\n{PROG} train: Ctrl-C: stopping at the end of this step to save the run "
            "(Ctrl-C again quits without saving)",
            file=sys.stderr,
            flush=True,
        )


class _Run:
    """Where training is: the epoch under way (the number of finished epochs), the steps done
    in it and their running sums, the history of the finished epochs, and the generators that
    shuffle and augment (with the shuffler's state when the epoch began)."""

    def __init__(self, rng):
        # Two independent streams, so that resuming part of the way through an epoch can redo
        # that epoch's shuffle without replaying the augmentation's draws.
        self.shuffle, self.augment = rng.spawn(2)
        self.epoch_shuffle_state = self.shuffle.bit_generator.state
        self.epoch = self.step = self.steps_done = 0
        self.history = _empty_history()
        self._clear_sums()

    def _clear_sums(self):
        self.loss_sum, self.correct, self.seen, self.seconds = 0.0, 0, 0, 0.0

    def begin_epoch(self, count):
        """This epoch's order of the ``count`` training images (the same again when resuming
        part of the way through it)."""
        if self.step == 0:
            self.epoch_shuffle_state = self.shuffle.bit_generator.state
        else:
            self.shuffle.bit_generator.state = self.epoch_shuffle_state
        return self.shuffle.permutation(count)

    def add_step(self, loss, correct, images, seconds):
        self.loss_sum += loss * images
        self.correct += correct
        self.seen += images
        self.seconds = seconds
        self.step += 1
        self.steps_done += 1

    def logs(self):
        return {"loss": self.loss_sum / self.seen, "accuracy": self.correct / self.seen}

    def end_epoch(self, logs, val_loss, val_accuracy, images):
        _record(self.history, logs, val_loss, val_accuracy, self.seconds, images)
        self.epoch += 1
        self.step = 0
        self._clear_sums()

    def restart_epoch(self):
        """Forgets the unfinished epoch's steps (not their effect on the weights)."""
        self.step = 0
        self._clear_sums()

    def state(self):
        """The position as JSON-able values."""
        return {
            "epoch": self.epoch,
            "step": self.step,
            "steps_done": self.steps_done,
            "sums": [self.loss_sum, self.correct, self.seen, self.seconds],
            "epoch_shuffle_state": self.epoch_shuffle_state,
            "shuffle_state": self.shuffle.bit_generator.state,
            "augment_state": self.augment.bit_generator.state,
            "history": self.history,
        }

    def restore(self, state):
        self.epoch, self.step, self.steps_done = state["epoch"], state["step"], state["steps_done"]
        self.loss_sum, self.correct, self.seen, self.seconds = state["sums"]
        self.epoch_shuffle_state = state["epoch_shuffle_state"]
        self.shuffle.bit_generator.state = state["shuffle_state"]
        self.augment.bit_generator.state = state["augment_state"]
        self.history = state["history"]


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
    """The tutorial's CNN (``"cnn"``, its BatchNormalization momentum
    ``BATCH_NORM_MOMENTUM``) or a 784-128-10 MLP (``"mlp"``), as a ``Sequential``."""
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
            layers.BatchNormalization(axis=-1, momentum=BATCH_NORM_MOMENTUM),
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
            layers.BatchNormalization(momentum=BATCH_NORM_MOMENTUM),
            layers.Dropout(0.5),
            layers.Dense(NUM_CLASSES),
            layers.Activation("softmax"),
        ],
        name="cnn",
    )


# ----------------------------------------------------------------------------- training
def augment(images, rng):
    """A new array of ``images`` (``(n, 28, 28, 1)``, or flat ``(n, 784)``), each flipped
    left-right with probability 1/2 and shifted by up to ``SHIFT_PIXELS`` pixels along each
    axis (zeros fill in), drawing from the numpy generator ``rng``."""
    count, k = len(images), SHIFT_PIXELS
    square = images.reshape(count, 28, 28)
    flip = rng.random(count) < 0.5
    square = np.where(flip[:, np.newaxis, np.newaxis], square[:, :, ::-1], square)
    padded = np.pad(square, ((0, 0), (k, k), (k, k)))
    rows = rng.integers(0, 2 * k + 1, count)[:, np.newaxis] + np.arange(28)
    cols = rng.integers(0, 2 * k + 1, count)[:, np.newaxis] + np.arange(28)
    shifted = padded[np.arange(count)[:, None, None], rows[:, :, None], cols[:, None, :]]
    return shifted.reshape(images.shape)


def _batch(train_data, order, index, args, run):
    """The ``index``-th training batch of this epoch's ``order``, augmented unless told not."""
    x_train, y_train = train_data
    rows = order[index * args.batch_size : (index + 1) * args.batch_size]
    x = augment(x_train[rows], run.augment) if args.augment else x_train[rows]
    return x, y_train[rows]


def tape_loop(model, optimizer, train_data, test_data, args, run, stop, say):
    """Trains with the tutorial's step: ``model(x, training=True)``, the loss,
    ``tape.gradient`` and ``optimizer.apply_gradients``, from ``run``'s position on, adding
    each epoch to ``run.history``; raises ``_Stopped`` at a step's end once ``stop`` asks."""
    import ferrotape as ft

    from .keras.losses import categorical_crossentropy

    @ft.function
    def train_step(x, y):
        # Traced once per batch shape (the last, smaller batch traces once more), then replayed
        # from Rust; the results are read on the host after the call.
        with ft.GradientTape() as tape:
            predictions = model(x, training=True)
            loss = ft.reduce_mean(categorical_crossentropy(y, predictions))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss, predictions

    def step(x, y):
        loss, predictions = train_step(x, y)
        return float(loss), predictions.numpy()

    count = len(train_data[0])
    steps = -(-count // args.batch_size)
    while run.epoch < args.epochs:
        epoch = run.epoch
        order = run.begin_epoch(count)
        bar = _progress_bar(steps, epoch, args)
        start = time.perf_counter() - run.seconds
        for index in range(run.step, steps):
            x, y = _batch(train_data, order, index, args, run)
            loss, predictions = step(x, y)
            run.add_step(loss, _correct(y, predictions), len(x), time.perf_counter() - start)
            bar.update(index + 1, run.logs(), run.seen)
            if stop.requested:
                bar.stop()  # the line stays at this step, not filled to the epoch's end
                raise _Stopped
        bar.close()
        logs = run.logs()
        val_loss, val_accuracy = evaluate(model, *test_data)
        run.end_epoch(logs, val_loss, val_accuracy, count)
        say.info(_epoch_line(run.history, epoch, args.epochs))
        if stop.requested:
            raise _Stopped


def fit_loop(model, optimizer, train_data, test_data, args, run, stop, say):
    """Trains with ``model.compile`` and ``model.fit`` (the test set as validation data) from
    ``run``'s epoch on; raises ``_Stopped`` at a step's end once ``stop`` asks."""
    from .keras.callbacks import Callback
    from .keras.utils import PyDataset

    count = len(train_data[0])

    class Batches(PyDataset):
        """The training batches in the same order and augmentation as the tape loop's."""

        def __len__(self):
            return -(-count // args.batch_size)

        def on_epoch_begin(self):
            self.order = run.begin_epoch(count)

        def __getitem__(self, index):
            return _batch(train_data, self.order, index, args, run)

    class EpochReport(Callback):
        """Times each epoch's training part, keeps ``run`` up to date, prints the epoch line
        and stops at a step's end after Ctrl-C."""

        def on_epoch_begin(self, epoch, logs=None):
            self.start = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            run.step += 1
            run.steps_done += 1
            if stop.requested:
                raise _Stopped

        def on_test_begin(self, logs=None):
            # fit evaluates the validation data after the epoch's last step.
            run.seconds = time.perf_counter() - self.start

        def on_epoch_end(self, epoch, logs=None):
            train_logs = {"loss": logs["loss"], "accuracy": logs["accuracy"]}
            run.end_epoch(train_logs, logs["val_loss"], logs["val_accuracy"], count)
            say.info(_epoch_line(run.history, epoch, args.epochs))
            if stop.requested:
                raise _Stopped

    model.compile(optimizer=optimizer, loss="categorical_crossentropy", metrics=["accuracy"])
    model.fit(
        Batches(),
        epochs=args.epochs,
        initial_epoch=run.epoch,
        verbose=0 if args.quiet else 1,
        callbacks=[EpochReport()],
        validation_data=test_data,
        validation_batch_size=EVAL_BATCH_SIZE,
    )


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
def write_results(model, optimizer, args, run, out_dir, say):
    """Writes the weights, the history as JSON, the curves as PNG and the training state as
    one set (see ``_write_result_set``); prints the paths."""
    weights_path = out_dir / WEIGHTS_FILE
    history_path = out_dir / HISTORY_FILE
    state_path = out_dir / STATE_FILE
    try:
        curves_path = _write_result_set(model, optimizer, args, run, out_dir)
    except OSError as error:
        raise CommandError(f"cannot write the results into {out_dir}: {error}") from None
    say.result(f"Weights: {weights_path}")
    say.result(f"History: {history_path}")
    if curves_path is None:
        say.result("Training curves: skipped (matplotlib is not installed)")
    else:
        say.result(f"Training curves: {curves_path}")
    say.result(f"Training state: {state_path} (go on with: {PROG} train --resume {out_dir})")


def _write_result_set(model, optimizer, args, run, out_dir):
    """Writes the results so that they always come from one step, whatever stops the save.

    The four files go into a new hidden directory (``.save-<steps>-<pid>-<ns>``), synced; then
    the link ``.current`` is switched to it by one rename, and the documented names
    (``weights.safetensors``, ...) are links through ``.current``. A reader, ``--resume``
    included, sees the whole new set or the whole previous one, even after a kill -9 at any
    point. (A directory written before these links existed holds plain files: they are
    replaced by links one by one, the training state first, on its first save.) Older sets
    are removed last. Returns the curves' path, or None when matplotlib is missing.
    """
    from .keras.saving.file_io import _sync_directory, _write_atomically

    tag = f"{SAVE_PREFIX}{run.steps_done}-{os.getpid()}-{time.time_ns()}"
    new = out_dir / tag
    new.mkdir()
    model.save_weights(new / WEIGHTS_FILE)
    _write_atomically(new / HISTORY_FILE, (_history_json(run.history) + "\n").encode())
    curves = plot_history(run.history, new / CURVES_FILE)
    write_training_state(new / STATE_FILE, model, optimizer, args, run)
    _sync_directory(new)
    _link(out_dir, CURRENT_LINK, tag)
    for name in (STATE_FILE, WEIGHTS_FILE, HISTORY_FILE, CURVES_FILE):
        if name == CURVES_FILE and curves is None:
            if (out_dir / name).is_symlink():
                (out_dir / name).unlink()  # it would point at nothing in the new set
            continue
        _link(out_dir, name, os.path.join(CURRENT_LINK, name))
    _sync_directory(out_dir)
    for old in out_dir.glob(f"{SAVE_PREFIX}*"):
        if old.name != tag and old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
    return None if curves is None else out_dir / CURVES_FILE


def _link(directory, name, target):
    """Makes ``directory/name`` a symbolic link to ``target`` in one rename (over whatever
    was there), unless it already is one."""
    path = directory / name
    if path.is_symlink() and os.readlink(path) == target:
        return
    temporary = directory / f".{name}.{os.getpid()}.link"
    temporary.unlink(missing_ok=True)
    os.symlink(target, temporary)
    os.replace(temporary, path)


def write_training_state(path, model, optimizer, args, run):
    """Writes what ``--resume`` needs into one safetensors file, atomically: the model's
    weights and the optimizer's variables (by position) and, as JSON in the metadata, the
    settings and ``run``'s position and history."""
    from .keras.saving import save_weights_file

    arrays = {f"model/{i}": w.numpy() for i, w in enumerate(model.weights)}
    arrays.update({f"optimizer/{i}": v.numpy() for i, v in enumerate(optimizer.variables)})
    settings = {name: getattr(args, name) for name, _, _ in _SETTINGS}
    state = {"version": STATE_VERSION, "settings": {**settings, "epochs": args.epochs}}
    state.update(run.state())
    save_weights_file(path, arrays, {STATE_KEY: json.dumps(state)})


def read_training_state(directory):
    """``(arrays, state)`` from the training state in ``directory`` (``--resume``); raises
    ``UsageError`` saying what is wrong with it."""
    from .keras.saving import load_weights_file

    where = f"--resume {directory}"
    directory = Path(directory)
    if not directory.exists():
        raise UsageError(f"{where}: no such directory")
    if not directory.is_dir():
        raise UsageError(f"{where}: not a directory (pass the --out directory of a run)")
    path = directory / STATE_FILE
    if not path.is_file():
        raise UsageError(
            f"{where}: there is no {STATE_FILE} in it (a run writes one when it ends or is "
            "stopped with Ctrl-C)"
        )
    try:
        arrays, metadata = load_weights_file(path, return_metadata=True)
    except (OSError, ValueError) as error:
        raise UsageError(f"{where}: {error}") from None
    try:
        state = json.loads(metadata[STATE_KEY])
        if state["version"] != STATE_VERSION:
            raise UsageError(
                f"{where}: {path} is a version {state['version']} training state; this "
                f"ferrotape reads version {STATE_VERSION}"
            )
        missing = {"settings", *_Run(np.random.default_rng(0)).state()} - set(state)
        missing |= {name for name, _, _ in _SETTINGS} - set(state["settings"])
        if missing:
            raise KeyError(", ".join(sorted(missing)))
    except (KeyError, TypeError, ValueError) as error:
        raise UsageError(
            f"{where}: {path} is not a ferrotape training state ({type(error).__name__}: {error})"
        ) from None
    return arrays, state


def _restore_variables(model, optimizer, arrays, directory):
    """Assigns the saved weights and optimizer variables, checking that they fit."""
    for kind, variables in (("model", model.weights), ("optimizer", optimizer.variables)):
        saved = [key for key in arrays if key.startswith(f"{kind}/")]
        if len(saved) != len(variables):
            raise UsageError(
                f"--resume {directory}: the saved {kind} has {len(saved)} variables, this "
                f"one {len(variables)}"
            )
        for index, variable in enumerate(variables):
            value = arrays[f"{kind}/{index}"]
            if value.shape != tuple(variable.shape):
                raise UsageError(
                    f"--resume {directory}: {kind} variable {index} ({variable.name}) has shape "
                    f"{value.shape} in the saved run but {tuple(variable.shape)} here"
                )
            variable.assign(value)


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
