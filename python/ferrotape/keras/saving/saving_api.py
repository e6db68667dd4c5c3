"""``save_model``, ``load_model``, ``save_weights`` and ``load_weights`` (Keras 3's
``keras.src.saving.saving_api``): the file name picks the format, as in Keras.

- ``.keras``: the whole model (config, weights, optimizer state), Keras 3's zip format.
- ``.weights.h5``: the weights (and optimizer state) in Keras 3's HDF5 layout.
- ``.safetensors``: the weights as a flat safetensors file keyed ``"0003/conv2d_1/kernel"``
  (position, layer, weight), for tools outside Keras; ferrotape's own extension.

Any other name is refused with a ``ValueError``; every write is atomic (a temporary file in
the same directory, renamed over the target).

>>> import os, tempfile, ferrotape as ft
>>> model = ft.keras.Sequential([ft.keras.Input(shape=(3,)), ft.keras.layers.Dense(2)])
>>> path = os.path.join(tempfile.mkdtemp(), "m.weights.h5")
>>> save_weights(model, path)
>>> load_weights(model, path)
"""

import os

import numpy as np

from . import saving_lib
from .file_io import _open_regular_file, _write_atomically
from .safetensors_file import WeightsFileReader, save_weights_file


def _checked_path(filepath, who):
    try:
        return os.fspath(filepath)
    except TypeError:
        raise TypeError(
            f"{who}: expected a file path (str or os.PathLike). Received: filepath={filepath!r}"
        ) from None


def _refuse_overwrite(filepath, overwrite, who):
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"{who}: {filepath} exists and overwrite=False was given")


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """Saves a model as a Keras 3 ``.keras`` file (architecture, weights, compile state).

    Args:
        model: The ``Model`` to save.
        filepath: A path ending in ``.keras``.
        overwrite: Whether to replace an existing file (else ``FileExistsError``).
        zipped: Only ``None``/``True`` (the zip format) is supported.

    Returns:
        None.
    """
    filepath = _checked_path(filepath, "save_model")
    if kwargs.pop("save_format", None) not in (None, "keras"):
        raise ValueError("save_model: only the Keras 3 `.keras` format is supported")
    if kwargs:
        raise ValueError(f"save_model: unrecognized arguments {sorted(kwargs)}")
    if zipped is False:
        raise ValueError("save_model: zipped=False (an unzipped directory) is not supported")
    if not filepath.endswith(".keras"):
        raise ValueError(
            "Invalid filepath extension for saving. Please add a `.keras` extension for the "
            "native Keras format (ferrotape does not write the legacy `.h5` model format). "
            f"Received: filepath={filepath}"
        )
    _refuse_overwrite(filepath, overwrite, "save_model")
    saving_lib.save_model(model, filepath)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Loads a model saved as a Keras 3 ``.keras`` file (by ferrotape or by Keras).

    Args:
        filepath: A path ending in ``.keras``.
        custom_objects: A dict of names to custom classes or functions the config refers to
            (also found through ``register_keras_serializable``).
        compile: Whether to compile the model again from the saved ``compile_config``.
        safe_mode: Refuse Python bytecode (a Keras ``lambda``) in the file; ferrotape never
            loads bytecode, and refuses a config naming anything but modeling objects
            (layers, losses, metrics, optimizers, ...) whatever ``safe_mode`` is.

    Returns:
        The model, with its weights (and optimizer state when compiled).
    """
    filepath = _checked_path(filepath, "load_model")
    if filepath.endswith((".h5", ".hdf5")) and not filepath.endswith(".weights.h5"):
        raise ValueError(
            f"load_model: {filepath} looks like a legacy Keras 2 HDF5 model, which ferrotape "
            "cannot read; save it from Keras as `.keras` instead"
        )
    if not filepath.endswith(".keras"):
        raise ValueError(
            f"File format not supported: filepath={filepath}. ferrotape loads Keras 3 `.keras` "
            "files (use `load_weights` for `.weights.h5` and `.safetensors` files)."
        )
    return saving_lib.load_model(filepath, custom_objects, compile, safe_mode)


def save_weights(model, filepath, overwrite=True, max_shard_size=None):
    """Writes a model's weights: Keras 3's HDF5 layout for ``.weights.h5`` names (optimizer
    state included), a flat safetensors file for ``.safetensors`` names.

    Args:
        model: The ``Model`` whose weights to save.
        filepath: A path ending in ``.weights.h5`` or ``.safetensors``.
        overwrite: Whether to replace an existing file (else ``FileExistsError``).
        max_shard_size: Sharding is not supported; must be None.

    Returns:
        None.
    """
    filepath = _checked_path(filepath, "save_weights")
    if max_shard_size is not None:
        raise ValueError("save_weights: sharded weight files (max_shard_size) are not supported")
    if filepath.endswith(".weights.h5"):
        _refuse_overwrite(filepath, overwrite, "save_weights")
        _write_atomically(filepath, saving_lib.weights_h5_bytes(model))
    elif filepath.endswith(".safetensors"):
        _refuse_overwrite(filepath, overwrite, "save_weights")
        _save_safetensors(model, filepath)
    else:
        raise ValueError(
            "The filename must end in `.weights.h5` (Keras 3's format) or `.safetensors`. "
            f"Received: filepath={filepath}"
        )


def load_weights(model, filepath, skip_mismatch=False):
    """Loads weights saved by ``save_weights`` (or by Keras) into a built model.

    Args:
        model: The ``Model`` to load into (built: called once, or given an input shape).
        filepath: A ``.weights.h5``, ``.keras`` or ``.safetensors`` path.
        skip_mismatch: Skip (with a warning) the layers whose weights do not fit, instead of
            raising a ``ValueError``.

    Returns:
        None.
    """
    filepath = _checked_path(filepath, "load_weights")
    if filepath.endswith(".keras"):
        saving_lib.load_weights_from_keras_file(model, filepath, skip_mismatch)
    elif filepath.endswith(".weights.h5"):
        if not os.path.exists(filepath):
            raise FileNotFoundError(f"load_weights: no such file: {filepath}")
        with _open_regular_file(filepath) as file:  # read in place: only what fits the model
            saving_lib.load_weights_h5(model, file, skip_mismatch, filepath)
    elif filepath.endswith(".safetensors"):
        _load_safetensors(model, filepath, skip_mismatch)
    else:
        raise ValueError(
            "The filename must end in `.weights.h5`, `.keras` or `.safetensors`. "
            f"Received: filepath={filepath}"
        )


def _save_safetensors(model, filepath):
    from ... import __version__

    named = {
        f"{index:04d}/{layer.name}/{weight_name}": variable.numpy()
        for index, (layer, weight_name, variable) in enumerate(model._weights_with_owners())
    }
    metadata = {
        "format": "ferrotape.keras.weights",
        "format_version": "1",
        "ferrotape_version": str(__version__),
        "model_name": model.name,
    }
    save_weights_file(filepath, named, metadata)


def _load_safetensors(model, filepath, skip_mismatch):
    """Matched by position, with the count and every shape checked against the file's header
    before any tensor is read (a ValueError names the first mismatching weight), so a load
    reads no more than the model holds."""
    with WeightsFileReader(filepath) as reader:
        keys = sorted(reader.names)
        owned = model._weights_with_owners()
        if not owned and keys:
            raise ValueError(
                f"load_weights: model '{model.name}' has no weights yet; build it first (call "
                f"it on a batch, or give it an input shape) and then load {filepath}"
            )
        if len(keys) != len(owned) and not skip_mismatch:
            raise ValueError(
                f"load_weights: {filepath} holds {len(keys)} weights but model '{model.name}' "
                f"has {len(owned)}"
            )
        matched = []
        for key, (layer, weight_name, variable) in zip(keys, owned, strict=False):
            _, shape = reader.entry(key)
            expected = tuple(variable.shape)
            if shape != expected:
                if skip_mismatch:
                    continue
                raise ValueError(
                    f"load_weights: weight {key!r} in {filepath} has shape {shape} but the "
                    f"model's weight '{layer.name}/{weight_name}' has shape {expected}"
                )
            matched.append((variable, key))
        assignments = [(variable, reader.read(key)) for variable, key in matched]
    for variable, value in assignments:
        variable.assign(np.asarray(value, dtype=variable.dtype.name))
