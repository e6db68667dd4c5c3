"""``tf.saved_model``: TensorFlow's SavedModel format is not read or written by ferrotape.

A SavedModel is a serialized TensorFlow graph (``saved_model.pb``) with its variables; ferrotape
runs no TensorFlow graphs, so it can neither load one nor produce one. What ferrotape offers
instead, each readable by TensorFlow and Keras: ``tf.train.Checkpoint`` (TensorFlow's own
checkpoint files, restored by either library), ``model.save("m.keras")`` with
``keras.models.load_model``, and ``model.save_weights("m.weights.h5")``. A SavedModel's
``variables/variables`` files are a TensorFlow checkpoint: ``tf.train.list_variables`` and
``tf.train.load_checkpoint`` read their values.

>>> import ferrotape as ft
>>> ft.saved_model.load("exported")
Traceback (most recent call last):
...
NotImplementedError: tf.saved_model.load: ferrotape does not read or write TensorFlow's ...
"""

import os

_INSTEAD = (
    "ferrotape does not read or write TensorFlow's SavedModel format (a serialized TensorFlow "
    "graph). Save with tf.train.Checkpoint (TensorFlow's checkpoint files, which TensorFlow "
    "restores), model.save('m.keras') or model.save_weights('m.weights.h5'); the values of an "
    "existing SavedModel are a checkpoint at 'DIR/variables/variables', which "
    "tf.train.load_checkpoint reads."
)


def _refuse(name):
    raise NotImplementedError(f"tf.saved_model.{name}: {_INSTEAD}")


def save(obj, export_dir, signatures=None, options=None):
    """Refused: ferrotape does not write SavedModels.

    Args:
        obj: The object TensorFlow would export.
        export_dir: The directory TensorFlow would write.
        signatures: TensorFlow's serving signatures.
        options: A ``tf.saved_model.SaveOptions``.

    Raises:
        NotImplementedError: always, naming what to use instead.
    """
    del obj, export_dir, signatures, options
    _refuse("save")


def load(export_dir, tags=None, options=None):
    """Refused: ferrotape does not read SavedModels.

    Args:
        export_dir: The SavedModel directory.
        tags: TensorFlow's MetaGraph tags.
        options: A ``tf.saved_model.LoadOptions``.

    Raises:
        NotImplementedError: always, naming what to use instead.
    """
    del export_dir, tags, options
    _refuse("load")


def contains_saved_model(export_dir):
    """Whether ``export_dir`` holds a SavedModel (its ``saved_model.pb`` or ``.pbtxt``).

    Args:
        export_dir: A directory path.

    Returns:
        A bool.
    """
    directory = os.fspath(export_dir)
    return any(
        os.path.isfile(os.path.join(directory, name))
        for name in ("saved_model.pb", "saved_model.pbtxt")
    )


__all__ = ["contains_saved_model", "load", "save"]
