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

from . import _tensor_bundle, errors
from .dtypes import as_dtype
from .train import _checkpoint_prefix, _is_tensorflow_index, _read_state, latest_checkpoint


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
    """What the ``checkpoint`` state file says: ``model_checkpoint_path`` (the newest),
    ``all_model_checkpoint_paths`` (oldest first), both absolute as TensorFlow makes them, their
    ``all_model_checkpoint_timestamps`` and ``last_preserved_timestamp`` (the files'
    modification times where the state file records none)."""

    def __init__(self, state):
        """Holds what ``state`` (the parsed state file) says.

        Args:
            state: The parsed state file.
        """
        self.model_checkpoint_path = state.latest
        self.all_model_checkpoint_paths = list(state.all_paths)
        self.all_model_checkpoint_timestamps = [
            _mtime(p) if t is None else t
            for p, t in zip(self.all_model_checkpoint_paths, state.timestamps, strict=True)
        ]
        self.last_preserved_timestamp = (
            min(self.all_model_checkpoint_timestamps, default=0.0)
            if state.last_preserved is None
            else state.last_preserved
        )

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
    return None if state is None else CheckpointState(state)


class CheckpointReader:
    """The values saved in one checkpoint, by name (``load_checkpoint`` opens one). Values are
    read from the file when asked for."""

    def __init__(self, prefix):
        """Reads the index of the checkpoint at ``prefix``.

        Args:
            prefix: The checkpoint's path prefix (without ``.index``).

        Raises:
            NotFoundError: if there is no checkpoint there.
        """
        self._prefix = prefix
        if not os.path.exists(prefix + ".index"):
            raise errors.NotFoundError(
                f"Unsuccessful TensorSliceReader constructor: Failed to find any matching files "
                f"for {prefix}"
            )
        if _is_tensorflow_index(prefix):
            self._legacy = None
            self._reader = _tensor_bundle.BundleReader(prefix)
            self._entries = self._reader.index()
        else:
            # The single safetensors file older ferrotape versions wrote: still readable.
            from .keras.saving import load_weights_file

            self._legacy = load_weights_file(prefix + ".index")
            self._entries = {k: (v.dtype, v.shape) for k, v in self._legacy.items()}

    def has_tensor(self, name):
        """Whether the checkpoint holds a value named ``name``.

        Args:
            name: A full name, as ``get_variable_to_shape_map`` lists it.

        Returns:
            A bool.
        """
        return name in self._entries

    def get_tensor(self, name):
        """The value named ``name``.

        Args:
            name: A full name, as ``get_variable_to_shape_map`` lists it.

        Returns:
            A numpy array (``bytes`` for a string scalar).

        Raises:
            NotFoundError: if the checkpoint has no value of that name.
        """
        if name not in self._entries:
            raise errors.NotFoundError(f"Key {name} not found in checkpoint")
        if self._legacy is not None:
            return self._legacy[name]
        return self._reader.read(name)

    def get_variable_to_shape_map(self):
        """``{name: shape}``, shapes as lists of ints."""
        return {name: list(shape) for name, (_, shape) in self._entries.items()}

    def get_variable_to_dtype_map(self):
        """``{name: dtype}``, as ferrotape dtypes; a string tensor (the object graph) as the
        name ``"string"``, ferrotape having no string dtype."""
        return {
            name: dtype if isinstance(dtype, str) else as_dtype(dtype)
            for name, (dtype, _) in self._entries.items()
        }


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
    return CheckpointReader(_checkpoint_prefix(ckpt_dir_or_file))


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
