"""``ft.train``: object-based checkpoints, as TensorFlow's ``tf.train.Checkpoint``.

A checkpoint saves every variable reachable from the objects it is given (variables, modules,
Keras layers and models, optimizers, lists and dicts of them, nested checkpoints), each under
the path of attribute names that leads to it (``net/dense/kernel``); restoring walks the same
objects and assigns each variable the value saved under its path.

Restoration is deferred as in TensorFlow: a value whose variable does not exist yet (a Keras
layer not built, an optimizer without its slots) is kept and assigned when the variable is
created (when a Keras layer builds, before its first call computes, or when the optimizer
creates its slots).

File format (a choice that is hard to undo, hence recorded here): ``save``/``write`` of path
``P`` write ONE file, ``P.index``, in the safetensors format (names are the paths above plus
TensorFlow's ``/.ATTRIBUTES/VARIABLE_VALUE`` suffix), atomically. TensorFlow's own checkpoints
are a ``.index`` table plus ``.data-*`` shards in its tensor-bundle format, which ferrotape
neither reads nor writes; the ``checkpoint`` state file beside them is TensorFlow's text format,
so ``latest_checkpoint`` works on directories of either library.

>>> import os, tempfile
>>> import ferrotape as ft
>>> step = ft.Variable(1)
>>> ckpt = ft.train.Checkpoint(step=step, w=ft.Variable([1.0, 2.0]))
>>> manager = ft.train.CheckpointManager(ckpt, tempfile.mkdtemp(), max_to_keep=2)
>>> path = manager.save()
>>> os.path.basename(path)
'ckpt-1'
>>> _ = step.assign(7)
>>> ckpt.restore(manager.latest_checkpoint).assert_consumed() is not None
True
>>> int(step)
1
"""

import os
import re
import sys
import weakref

import numpy as np

from ._core import Variable
from .module import Module

_VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_STATE_FILE = "checkpoint"
# Checkpoints whose restore left values waiting for variables not created yet.
_DEFERRED = weakref.WeakSet()


# ---------------------------------------------------------------------------- the object graph


def _is_container_object(value):
    """Objects whose attributes are walked: modules, Keras layers/models/optimizers, checkpoints."""
    if isinstance(value, (Module, Checkpoint)):
        return True
    keras_engine = sys.modules.get("ferrotape.keras.engine")
    if keras_engine is not None and isinstance(value, keras_engine.Layer):
        return True
    return _is_optimizer(value)


def _is_optimizer(value):
    keras_optimizers = sys.modules.get("ferrotape.keras.optimizers.base_optimizer")
    return keras_optimizers is not None and isinstance(value, keras_optimizers.BaseOptimizer)


def _children(value):
    """(name, child) pairs of one object in a fixed order: public attributes first, each group
    in the order the attributes were set."""
    if isinstance(value, dict):
        return [(str(k), v) for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(value)]
    if isinstance(value, Checkpoint):
        own = list(value._children.items())
        return own if value._root is None else _children(value._root) + own
    if _is_optimizer(value):
        # Only the optimizer's own variables (step count, slots in creation order): it also
        # refers to the model's variables, which belong under the model's path.
        return [("variables", list(value.variables))]
    attributes = list(vars(value).items())
    public = [(k, v) for k, v in attributes if not k.startswith("_")]
    private = [(k, v) for k, v in attributes if k.startswith("_")]
    return public + private


def _variables_by_path(root):
    """Every variable reachable from ``root`` under its first path (depth first, in
    ``_children`` order); a variable reachable twice keeps its first path."""
    found, seen_objects, seen_variables = {}, set(), set()
    stack = [("", root)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, Variable):
            if id(value) not in seen_variables:
                seen_variables.add(id(value))
                found[path] = value
            continue
        walkable = isinstance(value, (list, tuple, dict)) or _is_container_object(value)
        if not walkable or id(value) in seen_objects:
            continue
        seen_objects.add(id(value))
        children = _children(value)
        for name, child in reversed(children):
            stack.append((f"{path}/{name}" if path else name, child))
    return found


def _restore_deferred():
    """Called by Keras when a layer has built its weights and when an optimizer has created
    slots."""
    for checkpoint in list(_DEFERRED):
        checkpoint._assign_pending()


def _has_deferred():
    return bool(_DEFERRED)


# ---------------------------------------------------------------------------- Checkpoint


class CheckpointLoadStatus:
    """What ``Checkpoint.restore`` returns: checks of how the saved values were matched."""

    def __init__(self, checkpoint, path, saved_paths):
        """Made by ``Checkpoint.restore``; not built by user code.

        Args:
            checkpoint: The restoring ``Checkpoint``.
            path: The checkpoint path restored from.
            saved_paths: The object paths the checkpoint holds values for.
        """
        self._checkpoint = checkpoint
        self._path = path
        self._saved_paths = frozenset(saved_paths)

    def assert_consumed(self):
        """Every saved value was assigned to a variable (now), and every variable was given one."""
        pending = self._checkpoint._pending
        if pending:
            raise AssertionError(
                f"Unresolved values in checkpoint {self._path}: {sorted(pending)[:10]} "
                f"(their variables do not exist yet, or no longer exist)"
            )
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self):
        """Every variable that exists now had a value in the checkpoint."""
        missing = [
            path
            for path in _variables_by_path(self._checkpoint)
            if path + _VALUE_SUFFIX not in self._saved_paths
        ]
        if missing:
            raise AssertionError(
                f"Variables without a value in checkpoint {self._path}: {missing[:10]}"
            )
        return self

    def assert_nontrivial_match(self):
        """At least one variable besides the save counter was restored."""
        restored = self._saved_paths - set(self._checkpoint._pending)
        if not any(not p.startswith("save_counter/") for p in restored):
            raise AssertionError(f"Nothing except the save counter matched in {self._path}")
        return self

    def expect_partial(self):
        """Silences the warnings about values never used (ferrotape warns about none)."""
        return self

    def run_restore_ops(self, session=None):
        """Graph-mode API: restoration already happened eagerly.

        Args:
            session: Ignored (TF 1's session).
        """
        del session


class InitializationOnlyStatus(CheckpointLoadStatus):
    """What ``restore(None)`` returns: nothing was restored (a fresh start)."""

    def __init__(self, checkpoint):
        super().__init__(checkpoint, None, ())

    def assert_consumed(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    def assert_existing_objects_matched(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    def assert_nontrivial_match(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")


class Checkpoint:
    """Groups the objects to save and restore: ``Checkpoint(step=v, optimizer=opt, net=model)``.

    ``save(prefix)`` writes ``prefix-N`` (N counts saves, the ``save_counter``) and returns that
    path; ``write(path)`` writes exactly ``path``; ``restore(path)`` assigns the saved values
    (deferring those whose variables do not exist yet) and returns a status with
    ``assert_consumed()``, ``expect_partial()`` and the other checks.
    """

    def __init__(self, root=None, **kwargs):
        """Groups ``root`` and the keyword objects for saving and restoring.

        Args:
            root: The object whose attributes form the top of the checkpoint (a module,
                layer, model or optimizer; a variable is saved under the name ``root``), or
                ``None``.
            **kwargs: The objects to save by name: variables, optimizers, models, modules,
                other checkpoints.

        Raises:
            ValueError: if one of the objects is ``None``.
        """
        children = {}
        # A module, layer or optimizer given as the root is the root itself, as in TensorFlow:
        # its attributes are saved at the top level beside the keyword objects (``w``, not
        # ``root/w``). Anything else (a variable) is saved under the name ``root``.
        object.__setattr__(self, "_root", root if _is_container_object(root) else None)
        if root is not None and self._root is None:
            children["root"] = root
        for name, value in kwargs.items():
            if value is None:
                raise ValueError(f"Checkpoint: the object for {name!r} is None")
            children[name] = value
        object.__setattr__(self, "_children", children)
        object.__setattr__(self, "_save_counter", None)
        object.__setattr__(self, "_pending", {})

    def __getattr__(self, name):
        if name == "root":
            root = object.__getattribute__(self, "_root")
            if root is not None:
                return root
        children = object.__getattribute__(self, "_children")
        if name in children:
            return children[name]
        raise AttributeError(f"'Checkpoint' object has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            self._children[name] = value

    @property
    def save_counter(self):
        """An int64 variable counting the calls of ``save`` (created on first use)."""
        if self._save_counter is None:
            counter = Variable(np.int64(0), trainable=False, name="save_counter")
            object.__setattr__(self, "_save_counter", counter)
            self._children["save_counter"] = counter
        return self._save_counter

    def write(self, file_prefix, options=None):
        """Writes the values to ``file_prefix`` (the file ``file_prefix.index``); returns the
        path given.

        Args:
            file_prefix: The path prefix (str or path) to write to.
            options: A ``tf.train.CheckpointOptions`` (its write callbacks run after the write).

        Returns:
            ``file_prefix``, as a string.
        """

        path = self._write(file_prefix, options)
        _run_write_callbacks(options, path)
        return path

    def _write(self, file_prefix, options):
        from .keras.saving import save_weights_file

        _check_options(options)
        path = os.fspath(file_prefix)
        # As TensorFlow's writer does, a missing directory is created.
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        arrays = {
            key + _VALUE_SUFFIX: variable.numpy()
            for key, variable in _variables_by_path(self).items()
        }
        save_weights_file(path + ".index", arrays, {"format": "ferrotape.train.Checkpoint"})
        return path

    def save(self, file_prefix, options=None):
        """Counts this save, writes ``file_prefix-N`` and records it as the latest checkpoint of
        its directory; returns ``file_prefix-N``.

        Args:
            file_prefix: The path prefix (str or path); the save number is appended.
            options: A ``tf.train.CheckpointOptions`` (its write callbacks run after the save).

        Returns:
            The path written, ``file_prefix-N``.

        >>> import os, tempfile
        >>> import ferrotape as ft
        >>> ckpt = ft.train.Checkpoint(v=ft.Variable(1.0))
        >>> path = ckpt.save(os.path.join(tempfile.mkdtemp(), "ckpt"))
        >>> os.path.basename(path), ft.train.latest_checkpoint(os.path.dirname(path)) == path
        ('ckpt-1', True)
        >>> ft.train.list_variables(path)[-1]
        ('v/.ATTRIBUTES/VARIABLE_VALUE', [])
        """
        counter = self.save_counter
        counter.assign_add(1)
        path = self._write(f"{os.fspath(file_prefix)}-{int(counter.numpy())}", options)
        directory = os.path.dirname(path) or "."
        previous = _read_state(directory)
        paths = [p for p in (previous[1] if previous else []) if p != path] + [path]
        _write_state(directory, path, paths)
        _run_write_callbacks(options, path)
        return path

    def read(self, save_path, options=None):
        """Restores from ``save_path`` (without the save counter's bookkeeping of ``restore``).

        Args:
            save_path: A path from ``save``, ``write`` or ``latest_checkpoint``.
            options: A ``tf.train.CheckpointOptions`` (nothing in it changes a read).

        Returns:
            A ``CheckpointLoadStatus``.
        """
        return self.restore(save_path, options)

    def restore(self, save_path, options=None):
        """Assigns the values saved at ``save_path`` (a path from ``save``/``write`` or
        ``latest_checkpoint``); values whose variables do not exist yet are assigned when those
        variables are created. ``None`` restores nothing.

        Args:
            save_path: A path from ``save``, ``write`` or ``latest_checkpoint``, or ``None``.
            options: A ``tf.train.CheckpointOptions`` (nothing in it changes a read).

        Returns:
            A ``CheckpointLoadStatus`` (an ``InitializationOnlyStatus`` for ``None``).
        """
        _check_options(options)
        if save_path is None:
            return InitializationOnlyStatus(self)
        from .keras.saving import load_weights_file

        path = os.fspath(save_path)
        file = path + ".index"
        if not os.path.exists(file):
            raise FileNotFoundError(
                f"Checkpoint.restore: no checkpoint at {path!r} (expected the file {file!r}); "
                "pass a path returned by save() or tf.train.latest_checkpoint(directory)"
            )
        saved = load_weights_file(file)
        if "save_counter" + _VALUE_SUFFIX in saved:
            self.save_counter  # noqa: B018 - created so that its saved value is restored
        self._pending.clear()
        for key, value in saved.items():
            if key.endswith(_VALUE_SUFFIX):
                self._pending[key[: -len(_VALUE_SUFFIX)]] = value
        self._assign_pending()
        return CheckpointLoadStatus(self, path, saved)

    def _assign_pending(self):
        if not self._pending:
            _DEFERRED.discard(self)
            return
        for key, variable in _variables_by_path(self).items():
            if key not in self._pending:
                continue
            value = self._pending.pop(key)
            if tuple(variable.shape) != value.shape:
                raise ValueError(
                    f"Checkpoint.restore: {key} has shape {value.shape} in the checkpoint but "
                    f"{tuple(variable.shape)} in the program"
                )
            variable.assign(value.astype(variable.dtype.name, copy=False))
        if self._pending:
            _DEFERRED.add(self)
        else:
            _DEFERRED.discard(self)


# ---------------------------------------------------------------------------- the state file


def _read_state(directory):
    """(latest path, all paths) from TensorFlow's ``checkpoint`` text file, or None."""
    state = os.path.join(directory, _STATE_FILE)
    try:
        with open(state, encoding="utf-8") as file:
            text = file.read(1 << 20)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    latest = re.search(r'^model_checkpoint_path:\s*"(.*)"\s*$', text, re.M)
    if latest is None:
        return None
    all_paths = re.findall(r'^all_model_checkpoint_paths:\s*"(.*)"\s*$', text, re.M)

    def absolute(p):
        return p if os.path.isabs(p) else os.path.join(directory, p)

    return absolute(latest.group(1)), [absolute(p) for p in all_paths]


def _write_state(directory, latest, paths):
    from pathlib import Path

    from .keras.saving.file_io import _write_atomically

    def relative(p):
        return os.path.relpath(p, directory)

    lines = [f'model_checkpoint_path: "{relative(latest)}"']
    lines += [f'all_model_checkpoint_paths: "{relative(p)}"' for p in paths]
    _write_atomically(Path(directory) / _STATE_FILE, ("\n".join(lines) + "\n").encode())


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The path prefix of the newest checkpoint recorded in ``checkpoint_dir``.

    Args:
        checkpoint_dir: The directory holding the ``checkpoint`` state file (str or path).
        latest_filename: Ignored (TensorFlow's name of the state file).

    Returns:
        The path of the newest checkpoint (without ``.index``), or ``None`` when there is none.

    >>> import tempfile
    >>> import ferrotape as ft
    >>> ft.train.latest_checkpoint(tempfile.mkdtemp()) is None
    True
    """
    del latest_filename
    state = _read_state(os.fspath(checkpoint_dir))
    if state is None or not os.path.exists(state[0] + ".index"):
        return None
    return state[0]


def _checkpoint_file(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise ValueError(
                f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}"
            )
        path = latest
    return path + ".index"


def list_variables(ckpt_dir_or_file):
    """The names and shapes of the values saved in a checkpoint.

    Args:
        ckpt_dir_or_file: A checkpoint path prefix, or a directory (its newest checkpoint).

    Returns:
        A sorted list of ``(name, shape)`` pairs, shapes as lists of ints.

    Raises:
        ValueError: if a directory holds no checkpoint.
    """
    from .keras.saving import load_weights_file

    saved = load_weights_file(_checkpoint_file(ckpt_dir_or_file))
    return sorted((name, list(value.shape)) for name, value in saved.items())


def load_variable(ckpt_dir_or_file, name):
    """The value saved under ``name`` in a checkpoint, as a numpy array.

    Args:
        ckpt_dir_or_file: A checkpoint path prefix, or a directory (its newest checkpoint).
        name: A name as ``list_variables`` gives it.

    Returns:
        A numpy array.

    Raises:
        ValueError: if the checkpoint has no value of that name, or a directory holds none.
    """
    from .keras.saving import load_weights_file

    saved = load_weights_file(_checkpoint_file(ckpt_dir_or_file))
    for key in (name, name + _VALUE_SUFFIX):
        if key in saved:
            return saved[key]
    raise ValueError(f"load_variable: {name!r} is not in the checkpoint; it has {sorted(saved)}")


# ---------------------------------------------------------------------------- CheckpointManager


class CheckpointManager:
    """Saves ``checkpoint`` as ``directory/ckpt-N``, keeps the newest ``max_to_keep`` (None:
    all), and records them in ``directory/checkpoint`` for ``latest_checkpoint``."""

    def __init__(
        self,
        checkpoint,
        directory,
        max_to_keep,
        keep_checkpoint_every_n_hours=None,
        checkpoint_name="ckpt",
        step_counter=None,
        checkpoint_interval=None,
        init_fn=None,
    ):
        """Manages the checkpoints of ``checkpoint`` in ``directory``.

        Args:
            checkpoint: The ``Checkpoint`` to save.
            directory: The directory for the files and the ``checkpoint`` state file.
            max_to_keep: How many checkpoints to keep (a non-negative int), or ``None`` for all.
            keep_checkpoint_every_n_hours: Ignored.
            checkpoint_name: The file name prefix (``"ckpt"``).
            step_counter: A variable holding the training step, for ``checkpoint_interval``.
            checkpoint_interval: The smallest number of steps between two saves, or ``None``.
            init_fn: Ignored.

        Raises:
            ValueError: for a bad ``max_to_keep``, or ``checkpoint_interval`` without
                ``step_counter``.
        """
        del keep_checkpoint_every_n_hours, init_fn
        if max_to_keep is not None and (not isinstance(max_to_keep, int) or max_to_keep < 0):
            raise ValueError(
                f"CheckpointManager: max_to_keep must be None or a non-negative int, received "
                f"{max_to_keep!r}"
            )
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("CheckpointManager: checkpoint_interval needs a step_counter")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._interval = checkpoint_interval
        self._last_step = None
        state = _read_state(self._directory)
        self._paths = [p for p in state[1] if os.path.exists(p + ".index")] if state else []

    @property
    def directory(self):
        """The directory the checkpoints are written to."""
        return self._directory

    @property
    def checkpoints(self):
        """The managed checkpoints, oldest first."""
        return list(self._paths)

    @property
    def latest_checkpoint(self):
        """The newest managed checkpoint, or None."""
        return self._paths[-1] if self._paths else None

    @property
    def checkpoint_interval(self):
        """The smallest number of steps between two saves, or None."""
        return self._interval

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Writes a new checkpoint and returns its path (None when ``checkpoint_interval`` says
        it is too early); removes the oldest beyond ``max_to_keep``.

        Args:
            checkpoint_number: The N of ``ckpt-N``; by default the checkpoint's save counter
                (counted up by every save).
            check_interval: If false, saves even when ``checkpoint_interval`` says it is too early.
            options: A ``tf.train.CheckpointOptions`` (its write callbacks run after the write).

        Returns:
            The path written, or ``None``.
        """
        if self._interval is not None and check_interval:
            step = int(self._step_counter)
            if self._last_step is not None and step < self._last_step + self._interval:
                return None
            self._last_step = step
        os.makedirs(self._directory, exist_ok=True)
        counter = self._checkpoint.save_counter
        counter.assign_add(1)
        number = int(counter.numpy()) if checkpoint_number is None else int(checkpoint_number)
        path = self._checkpoint.write(f"{self._prefix}-{number}", options)
        self._paths = [p for p in self._paths if p != path] + [path]
        if self._max_to_keep is not None:
            while len(self._paths) > max(self._max_to_keep, 1):
                old = self._paths.pop(0)
                try:
                    os.remove(old + ".index")
                except FileNotFoundError:
                    pass
        _write_state(self._directory, path, self._paths)
        return path

    def restore_or_initialize(self):
        """Restores the latest checkpoint if there is one; returns its path or None."""
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint)
            return self.latest_checkpoint
        return None


def _check_options(options):
    from .checkpoint_utils import CheckpointOptions

    if options is not None and not isinstance(options, CheckpointOptions):
        raise TypeError(f"options must be a tf.train.CheckpointOptions. Received: {options!r}")


def _run_write_callbacks(options, path):
    from .checkpoint_utils import run_write_callbacks

    run_write_callbacks(options, path)


# The state-file and reader utilities live in their own module, which reads this one's
# helpers: imported last, once they are defined.
from .checkpoint_utils import (  # noqa: E402
    CheckpointOptions,
    checkpoints_iterator,
    get_checkpoint_state,
    load_checkpoint,
)
from .checkpoint_view import CheckpointView, TrackableView  # noqa: E402 (it reads the above)
from .moving_averages import ExponentialMovingAverage  # noqa: E402

__all__ = [
    "Checkpoint",
    "CheckpointLoadStatus",
    "CheckpointManager",
    "CheckpointOptions",
    "CheckpointView",
    "ExponentialMovingAverage",
    "checkpoints_iterator",
    "get_checkpoint_state",
    "latest_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
    "TrackableView",
]
