"""The checkpoint utilities of ``ft.train`` (TensorFlow's ``checkpoint_utils`` and
``checkpoint_management``): reading the ``checkpoint`` state file, opening a checkpoint as a
reader, and waiting for new checkpoints, on the files ``ft.train.Checkpoint`` writes.

>>> import tempfile
>>> import ferrotape as ft
>>> directory = tempfile.mkdtemp()
>>> manager = ft.train.CheckpointManager(ft.train.Checkpoint(w=ft.Variable([1.0, 2.0])),
...                                      directory, max_to_keep=3)
>>> _ = manager.save(); _ = manager.save()
>>> state = ft.train.get_checkpoint_state(directory)
>>> [p[len(directory) + 1:] for p in state.all_model_checkpoint_paths]
['ckpt-1', 'ckpt-2']
>>> ft.train.load_checkpoint(directory).get_tensor("w/.ATTRIBUTES/VARIABLE_VALUE").tolist()
[1.0, 2.0]
"""

import inspect
import os
import time

from . import errors
from .dtypes import as_dtype
from .train import _checkpoint_file, _read_state, latest_checkpoint


class CheckpointOptions:
    """Options of ``Checkpoint.save``/``write``/``restore`` and ``CheckpointManager.save``.

    ferrotape writes a checkpoint as one file on the calling thread: ``enable_async``
    (``experimental_enable_async_checkpoint``) is accepted and the write is simply done
    before ``save`` returns, and ``experimental_io_device`` and
    ``experimental_sharding_callback`` change nothing. ``experimental_write_callbacks`` run
    after each ``save``/``write``, given the path written when they take an argument.
    ``experimental_skip_slot_variables=True`` is not supported.
    """

    def __init__(
        self,
        experimental_io_device=None,
        experimental_enable_async_checkpoint=False,
        experimental_write_callbacks=None,
        enable_async=False,
        experimental_skip_slot_variables=False,
        experimental_sharding_callback=None,
    ):
        """Holds the options.

        Args:
            experimental_io_device: The device for file I/O (ignored).
            experimental_enable_async_checkpoint: Old name of ``enable_async``.
            experimental_write_callbacks: Callables run after each save or write.
            enable_async: Write in the background (ferrotape writes before returning).
            experimental_skip_slot_variables: Must be False.
            experimental_sharding_callback: How to shard the file (ignored: one file).
        """
        if experimental_skip_slot_variables:
            raise errors.UnimplementedError(
                "CheckpointOptions: experimental_skip_slot_variables=True is not supported"
            )
        self.experimental_io_device = experimental_io_device
        self.enable_async = bool(enable_async or experimental_enable_async_checkpoint)
        self.experimental_enable_async_checkpoint = self.enable_async
        self.experimental_write_callbacks = list(experimental_write_callbacks or [])
        self.experimental_skip_slot_variables = False
        self.experimental_sharding_callback = experimental_sharding_callback


def run_write_callbacks(options, path):
    """Runs ``options``' write callbacks, passing ``path`` to those that take an argument."""
    for callback in getattr(options, "experimental_write_callbacks", None) or []:
        try:
            takes_path = bool(inspect.signature(callback).parameters)
        except (TypeError, ValueError):
            takes_path = False
        callback(path) if takes_path else callback()


class CheckpointState:
    """What the ``checkpoint`` state file says: ``model_checkpoint_path`` (the newest) and
    ``all_model_checkpoint_paths`` (oldest first), both absolute as TensorFlow makes them;
    the timestamps, which ferrotape's state file does not record, are the files' modification
    times."""

    def __init__(self, latest, paths):
        """Holds ``latest`` and ``paths`` (absolute path prefixes).

        Args:
            latest: The newest checkpoint's path prefix.
            paths: Every recorded checkpoint's, oldest first.
        """
        self.model_checkpoint_path = latest
        self.all_model_checkpoint_paths = list(paths)
        self.all_model_checkpoint_timestamps = [_mtime(p) for p in self.all_model_checkpoint_paths]
        self.last_preserved_timestamp = min(self.all_model_checkpoint_timestamps, default=0.0)

    def __repr__(self):
        lines = [f'model_checkpoint_path: "{self.model_checkpoint_path}"']
        lines += [f'all_model_checkpoint_paths: "{p}"' for p in self.all_model_checkpoint_paths]
        return "\n".join(lines)


def _mtime(path):
    try:
        return os.path.getmtime(path + ".index")
    except OSError:
        return 0.0


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The checkpoint state recorded in ``checkpoint_dir``'s ``checkpoint`` file.

    Args:
        checkpoint_dir: The directory of the checkpoints.
        latest_filename: Ignored (TensorFlow's name of the state file).

    Returns:
        A ``CheckpointState`` (``model_checkpoint_path``, ``all_model_checkpoint_paths``), or
        None when the directory has no state file.
    """
    del latest_filename
    state = _read_state(os.fspath(checkpoint_dir))
    return None if state is None else CheckpointState(*state)


class CheckpointReader:
    """The values saved in one checkpoint, by name (``load_checkpoint`` opens one)."""

    def __init__(self, path):
        """Reads the checkpoint file ``path`` (an ``.index`` file).

        Args:
            path: The file's path.
        """
        from .keras.saving import load_weights_file

        self._path = path
        self._values = load_weights_file(path)

    def has_tensor(self, name):
        """Whether the checkpoint holds a value named ``name``.

        Args:
            name: A full name, as ``get_variable_to_shape_map`` lists it.

        Returns:
            A bool.
        """
        return name in self._values

    def get_tensor(self, name):
        """The value named ``name``.

        Args:
            name: A full name, as ``get_variable_to_shape_map`` lists it.

        Returns:
            A numpy array.

        Raises:
            NotFoundError: if the checkpoint has no value of that name.
        """
        if name not in self._values:
            raise errors.NotFoundError(f"Key {name} not found in checkpoint")
        return self._values[name]

    def get_variable_to_shape_map(self):
        """``{name: shape}``, shapes as lists of ints."""
        return {name: list(value.shape) for name, value in self._values.items()}

    def get_variable_to_dtype_map(self):
        """``{name: dtype}``, as ferrotape dtypes."""
        return {name: as_dtype(value.dtype) for name, value in self._values.items()}


def load_checkpoint(ckpt_dir_or_file):
    """Opens a checkpoint for reading.

    Args:
        ckpt_dir_or_file: A checkpoint path prefix, or a directory (its newest checkpoint).

    Returns:
        A ``CheckpointReader`` (``get_tensor``, ``has_tensor``,
        ``get_variable_to_shape_map``, ``get_variable_to_dtype_map``).

    Raises:
        ValueError: if a directory holds no checkpoint.
    """
    return CheckpointReader(_checkpoint_file(ckpt_dir_or_file))


def _wait_for_new_checkpoint(checkpoint_dir, last, seconds_to_sleep=1.0, timeout=None):
    stop = None if timeout is None else time.time() + timeout
    while True:
        path = latest_checkpoint(checkpoint_dir)
        if path is not None and path != last:
            return path
        if stop is not None and time.time() + seconds_to_sleep > stop:
            return None
        time.sleep(seconds_to_sleep)


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields each new checkpoint of ``checkpoint_dir`` as it appears (polling once a second).

    Args:
        checkpoint_dir: The directory of the checkpoints.
        min_interval_secs: The least time between two yielded checkpoints.
        timeout: Seconds to wait for a new checkpoint; None waits for ever.
        timeout_fn: Called when a wait times out: the iteration ends if it returns true (or
            if there is no ``timeout_fn``), and waits again otherwise.

    Yields:
        The path prefix of each new newest checkpoint.
    """
    path = None
    while True:
        new = _wait_for_new_checkpoint(checkpoint_dir, path, timeout=timeout)
        if new is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        start = time.time()
        path = new
        yield path
        remaining = start + min_interval_secs - time.time()
        if remaining > 0:
            time.sleep(remaining)


__all__ = [
    "CheckpointOptions",
    "CheckpointReader",
    "CheckpointState",
    "checkpoints_iterator",
    "get_checkpoint_state",
    "load_checkpoint",
]
