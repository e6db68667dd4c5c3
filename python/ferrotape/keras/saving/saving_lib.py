"""Keras 3's file layouts (``keras.src.saving.saving_lib``): the ``.keras`` zip and the
``.weights.h5`` weights file, read and written the way Keras 3 does, so files move both ways.

A ``.keras`` file is a zip of ``metadata.json`` (versions, date), ``config.json`` (the model
as ``serialize_keras_object`` gives it, with ``build_config`` and ``compile_config``) and
``model.weights.h5``. The HDF5 file holds one group per object that owns variables, at the
path Keras's walk gives it: a Sequential or functional model's layers under
``layers/<snake_case class name>`` (``dense``, ``dense_1``, ...), other sublayers under the
attribute that holds them, the optimizer under ``optimizer``; each object's own variables are
the datasets ``<path>/vars/0``, ``1``, ... in creation order (trainable first), and the group's
``name`` attribute is the object's name. Objects are matched by path, never by layer name, so
a file loads into any model of the same architecture.

>>> import os, tempfile, numpy as np, ferrotape as ft
>>> model = ft.keras.Sequential([ft.keras.Input(shape=(3,)), ft.keras.layers.Dense(2)])
>>> path = os.path.join(tempfile.mkdtemp(), "m.keras")
>>> model.save(path)
>>> loaded = ft.keras.models.load_model(path)
>>> x = np.ones((1, 3), "float32")
>>> bool(np.array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0)))
True
"""

import contextlib
import datetime
import io
import json
import os
import warnings
import zipfile

import numpy as np

from .. import object_registration
from ..layers.layer import Layer
from ..layers.layer_utils import _snake_case
from .file_io import _open_regular_file, _write_atomically

CONFIG_FILENAME = "config.json"
METADATA_FILENAME = "metadata.json"
VARS_FILENAME = "model.weights.h5"
# The Keras release whose file layout this module writes (Keras reads it from metadata.json).
KERAS_FORMAT_VERSION = "3.15.1"
# config.json and metadata.json are read whole: refuse a zip entry claiming more than this.
_MAX_JSON_BYTES = 256 * 1024 * 1024


def _h5py():
    # Imported on use: h5py takes a quarter of a second to import, ferrotape a tenth.
    import h5py

    return h5py


# ----------------------------------------------------------------------------- the walk
def _is_optimizer(obj):
    from ..optimizers.base_optimizer import BaseOptimizer

    return isinstance(obj, BaseOptimizer)


def _is_saveable(obj):
    return isinstance(obj, Layer) or _is_optimizer(obj)


def _own_variables(obj):
    """The variables an object stores in its own ``vars`` group, in Keras's order."""
    if _is_optimizer(obj):
        return obj.variables
    return obj._own_trainable + obj._own_non_trainable


def _name_key(name):
    # Keras visits private attributes last.
    return f"~{name}" if name.startswith("_") else name


def _children(obj):
    """(attribute, value) pairs in the order Keras's ``_walk_saveable`` visits them: a
    Sequential or functional model's ``layers`` first, then attributes by name, private last."""
    if _is_optimizer(obj):
        return []
    found = {}
    for name, value in obj.__dict__.items():
        if name not in obj._engine_attrs and isinstance(value, (Layer, list, tuple, dict)):
            found[name] = value
    # Imported here: the models import saving.
    from ..models.functional import Functional
    from ..models.model import Model
    from ..models.sequential import Sequential

    ordered = []
    if isinstance(obj, Model):  # Keras also sees a model's `layers` and `optimizer`
        if isinstance(obj, (Sequential, Functional)):
            ordered.append(("layers", obj.layers))
        else:
            found["layers"] = obj.layers
        if obj.optimizer is not None:
            found["optimizer"] = obj.optimizer
    ordered += [(name, found[name]) for name in sorted(found, key=_name_key)]
    return ordered


def _unique(name, used):
    if name in used:
        used[name] += 1
        return f"{name}_{used[name]}"
    used[name] = 0
    return name


def _walk(obj, path="", visited=None):
    """(path, object) for every saveable reachable from ``obj``, each once, in Keras's order."""
    visited = set() if visited is None else visited
    if id(obj) in visited:
        return
    visited.add(id(obj))
    yield path, obj
    for attr, child in _children(obj):
        yield from _walk_child(child, _join(path, attr), visited, set())


def _walk_child(child, path, visited, containers):
    if _is_saveable(child):
        yield from _walk(child, path, visited)
        return
    if not isinstance(child, (list, tuple, dict)) or id(child) in containers:
        return
    containers.add(id(child))
    used = {}
    for item in child.values() if isinstance(child, dict) else child:
        if _is_saveable(item):
            name = _unique(_snake_case(type(item).__name__), used)
            yield from _walk(item, _join(path, name), visited)
        elif isinstance(item, (list, tuple, dict)):
            name = _unique("container", used)
            yield from _walk_child(item, _join(path, name), visited, containers)


def _join(path, name):
    return f"{path}/{name}" if path else name


# ----------------------------------------------------------------------------- HDF5 weights
def weights_h5_bytes(model):
    """The model's (and its optimizer's) variables as the bytes of a Keras 3 ``.weights.h5``."""
    buffer = io.BytesIO()
    with _h5py().File(buffer, "w") as h5:
        for path, obj in _walk(model):
            group = h5.create_group(_join(path, "vars"))
            if isinstance(getattr(obj, "name", None), str):
                group.attrs["name"] = obj.name
            for index, variable in enumerate(_own_variables(obj)):
                value = np.asarray(variable.numpy())
                if value.dtype.name == "bfloat16":
                    # Keras marks bfloat16 datasets; HDF5 has no such type, float32 holds it.
                    group.create_dataset(str(index), data=value.astype(np.float32))
                    group[str(index)].attrs["dtype"] = "bfloat16"
                else:
                    group[str(index)] = value
    return buffer.getvalue()


def load_weights_h5(model, source, skip_mismatch=False, origin="the weights file"):
    """Assigns the variables stored in an HDF5 weights file (a path or a file object).

    Every layer's variable count, shapes and dtypes are checked against the file's metadata
    before a byte of data is read, so a file that does not fit leaves the model unchanged
    (unless ``skip_mismatch``, which skips the layers that do not fit, with a warning) and the
    memory a load takes stays the size of the model, whatever the file declares. Data must be
    stored in the file itself: soft and external links, virtual datasets and external storage
    are refused. An optimizer whose variables do not match (not built yet, or another
    optimizer) is skipped with a warning, as Keras does.
    """
    assignments = []
    with _open_h5(source, origin) as h5:
        for path, obj in _walk(model):
            stored = _stored_datasets(h5, _join(path, "vars"), origin)
            variables = _own_variables(obj)
            problem = _mismatch(obj, path, variables, stored)
            if problem is None:
                assignments += [
                    (v, _read(d, origin)) for v, d in zip(variables, stored, strict=True)
                ]
            elif _is_optimizer(obj) or skip_mismatch:
                warnings.warn(f"load_weights: skipping {problem}", stacklevel=3)
            else:
                raise ValueError(f"load_weights: {origin} does not fit the model: {problem}")
    for variable, value in assignments:
        variable.assign(np.asarray(value, dtype=variable.dtype.name))


def _open_h5(source, origin):
    try:
        return _h5py().File(source, "r")
    except OSError as error:  # h5py's report of a file that is not HDF5, or is truncated
        # Still an OSError, as Keras's (h5py's) is: BackupAndRestore falls back on its previous
        # backup when loading the latest raises one.
        raise OSError(f"load_weights: {origin} is not an HDF5 weights file ({error})") from None


def _in_place(parent, name, where, origin):
    """``parent[name]`` when it is stored in this file (a hard link), ``None`` when absent."""
    link = parent.get(name, getlink=True)
    if link is None:
        return None
    if not isinstance(link, _h5py().HardLink):
        kind = "an external link" if isinstance(link, _h5py().ExternalLink) else "a soft link"
        raise ValueError(
            f"load_weights: {origin}: '{where}' is {kind}; a weights file must hold its data "
            "itself, not refer to other objects or files"
        )
    return parent[name]


def _stored_datasets(h5, key, origin):
    """The datasets ``<key>/0``, ``1``, ... as h5py objects, their data not read yet."""
    node, where = h5, ""
    for part in key.split("/"):
        where = _join(where, part)
        node = _in_place(node, part, where, origin)
        if node is None:
            return []
        if not isinstance(node, _h5py().Group):
            raise ValueError(f"load_weights: {origin}: '{where}' is not a group")
    datasets = []
    for index in range(len(node)):
        dataset = _in_place(node, str(index), f"{key}/{index}", origin)
        if dataset is None:
            raise ValueError(f"load_weights: the group {key!r} has no dataset {str(index)!r}")
        if not isinstance(dataset, _h5py().Dataset):
            raise ValueError(f"load_weights: {origin}: '{key}/{index}' is not a dataset")
        if dataset.is_virtual or dataset.external:
            kind = "a virtual dataset" if dataset.is_virtual else "stored in external files"
            raise ValueError(
                f"load_weights: {origin}: '{key}/{index}' is {kind}; a weights file must hold "
                "its data itself"
            )
        datasets.append(dataset)
    return datasets


def _read(dataset, origin):
    # Only called once the dataset's shape equals its variable's, so the read is that size.
    try:
        return np.asarray(dataset[()])
    except (OSError, RuntimeError) as error:  # a truncated or corrupt file, found on reading
        raise ValueError(f"load_weights: {origin}: cannot read '{dataset.name}': {error}") from None


def _mismatch(obj, path, variables, stored):
    kind = "optimizer" if _is_optimizer(obj) else "layer"
    where = f"{kind} '{obj.name}' (at '{path or '/'}')"
    if stored and not variables and not getattr(obj, "built", True):
        return (
            f"{where} has no weights yet: build the model first (call it on a batch, or give "
            f"it an input shape), then load"
        )
    if len(stored) != len(variables):
        names = [str(v.name) for v in variables]
        return (
            f"{where} expected {len(variables)} variables, but received {len(stored)} "
            f"variables during loading. Expected: {names}"
        )
    for variable, value in zip(variables, stored, strict=True):
        if tuple(variable.shape) != tuple(value.shape):
            return (
                f"{where}: variable '{variable.name}' has shape {tuple(variable.shape)} but the "
                f"stored value has shape {tuple(value.shape)}"
            )
        if value.dtype.kind not in "biuf":
            return (
                f"{where}: variable '{variable.name}' is {variable.dtype.name} but the stored "
                f"value has the non-numeric type {value.dtype}"
            )
    return None


# ----------------------------------------------------------------------------- .keras files
def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} {value!r} to config.json")


def config_json(model):
    """The model's ``serialize_keras_object`` dict as JSON text (what ``to_json`` gives)."""
    return json.dumps(object_registration.serialize_keras_object(model), default=_json_default)


def save_model(model, filepath):
    """Writes ``model`` to ``filepath`` as a Keras 3 ``.keras`` zip, atomically."""
    from ... import __version__

    metadata = {
        "keras_version": KERAS_FORMAT_VERSION,
        "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
        "ferrotape_version": str(__version__),
    }
    config = config_json(model)
    weights = weights_h5_bytes(model)
    buffer = io.BytesIO()
    # Keras stores the entries uncompressed (ZIP_STORED), so the weights can be read in place.
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(METADATA_FILENAME, json.dumps(metadata))
        archive.writestr(CONFIG_FILENAME, config)
        archive.writestr(VARS_FILENAME, weights)
    _write_atomically(os.fspath(filepath), buffer.getvalue())


@contextlib.contextmanager
def _open_archive(filepath):
    # The zip is read in place, never whole: what is read is what the model needs.
    with _open_regular_file(filepath) as file:
        try:
            archive = zipfile.ZipFile(file)
        except zipfile.BadZipFile:
            raise ValueError(
                f"load_model: {filepath} is not a .keras file (a zip archive); it may be truncated"
            ) from None
        with archive:
            for name in (CONFIG_FILENAME, VARS_FILENAME):
                if name not in archive.namelist():
                    raise ValueError(
                        f"load_model: {filepath} is not a Keras 3 model file: it has no {name} "
                        f"(entries: {archive.namelist()})"
                    )
            if archive.getinfo(CONFIG_FILENAME).file_size > _MAX_JSON_BYTES:
                raise ValueError(f"load_model: {filepath}: config.json is implausibly large")
            yield archive


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """The model a ``.keras`` file holds: rebuilt from its config (compiled again from its
    ``compile_config`` unless ``compile=False``), then its weights and optimizer state."""
    with _open_archive(filepath) as archive:
        try:
            config = json.loads(archive.read(CONFIG_FILENAME))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
            reason = "nested too deeply" if isinstance(error, RecursionError) else error
            raise ValueError(
                f"load_model: {filepath}: config.json is not JSON ({reason})"
            ) from None
        if not compile and isinstance(config, dict):
            config.pop("compile_config", None)
        model = object_registration.deserialize_keras_object(
            config, custom_objects=custom_objects, safe_mode=safe_mode
        )
        with archive.open(VARS_FILENAME) as weights:
            # Read in place (seeking), so only what the model's variables need is read.
            load_weights_h5(model, weights, origin=os.fspath(filepath))
    return model


def load_weights_from_keras_file(model, filepath, skip_mismatch=False):
    """Loads only the weights of a ``.keras`` file into ``model``."""
    with _open_archive(filepath) as archive, archive.open(VARS_FILENAME) as weights:
        load_weights_h5(model, weights, skip_mismatch, os.fspath(filepath))
