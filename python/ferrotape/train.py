"""``ft.train``: object-based checkpoints, as TensorFlow's ``tf.train.Checkpoint``.

A checkpoint saves the graph of objects reachable from the objects it is given (variables,
modules, Keras layers and models, optimizers, lists and dicts of them, nested checkpoints), and
each variable's value under the key TensorFlow gives it (``net/l1/_kernel/.ATTRIBUTES/
VARIABLE_VALUE``): ``ferrotape.trackable`` holds the naming rules. Restoring matches the saved
graph to the live objects edge by edge from the root, as TensorFlow does, so a value reaches its
variable whatever key it was written under.

Restoration is deferred as in TensorFlow: a value whose variable does not exist yet (a Keras
layer not built, an optimizer without its slots, a module that makes its variables on its first
call) is kept and assigned when the variable is created and attached. A checkpoint that still
holds unused values when it is deleted logs TensorFlow's warning, unless ``expect_partial()``
was called on the restore's status.

File format (a choice that is hard to undo, hence recorded here): TensorFlow's own. ``save``
and ``write`` of path ``P`` write ``P.index`` (the tensor-bundle index, a table of entries) and
``P.data-00000-of-00001`` (the values), with the serialized object graph under the key
``_CHECKPOINTABLE_OBJECT_GRAPH``: TensorFlow restores ferrotape's checkpoints and ferrotape
restores TensorFlow's, with no conversion. Both files are written to temporary names and renamed
into place, the index last, so an interrupted save leaves the previous checkpoint usable. The
``checkpoint`` state file beside them is TensorFlow's text format.

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
import time
import weakref

import numpy as np

from . import _tensor_bundle, trackable
from ._core import Variable
from .framework_ops import get_logger, init_scope

_STATE_FILE = "checkpoint"


# ---------------------------------------------------------------------------- reading a file


def _is_tensorflow_index(path):
    """Whether ``path`` (a checkpoint prefix) has a TensorFlow index (else it may be the single
    safetensors file older ferrotape versions wrote)."""
    try:
        with open(path + ".index", "rb") as file:
            head = file.read(9)
    except OSError:
        return True  # let the reader say what is wrong
    # A safetensors file starts with its header's length (8 bytes) and then "{".
    return not (len(head) == 9 and head[8:9] == b"{")


class _SavedGraph:
    """One restore: the saved object graph (children by node id), the key of each node's value,
    and the values still to assign (read at restore: a later save may delete the files before a
    deferred variable appears).

    Values wait for their variables as long as the restored objects live, not the
    ``Checkpoint``: ``tf.train.Checkpoint(model=model).restore(path)`` then building the model
    restores its weights, as in TensorFlow. The restore holds the checkpoint's children weakly
    (containers, which cannot be, strongly); when they are all gone, the values still waiting
    are reported by TensorFlow's warning."""

    def __init__(self, path):
        self.path = path
        if not _is_tensorflow_index(path):
            raise ValueError(
                f"Checkpoint.restore: {path!r} was written by an older ferrotape in its own "
                "format, which restore no longer reads; its values are still readable with "
                "tf.train.load_checkpoint(path).get_tensor(name) and tf.train.list_variables"
            )
        reader = _tensor_bundle.BundleReader(path)  # the index is parsed once
        index = reader.index()
        if _tensor_bundle.OBJECT_GRAPH_KEY not in index:
            raise ValueError(
                f"Checkpoint.restore: {path!r} has no object graph "
                f"({_tensor_bundle.OBJECT_GRAPH_KEY}); it is a name-based (TensorFlow 1) "
                "checkpoint: read its values with tf.train.load_checkpoint(path).get_tensor(name)"
            )
        nodes = _tensor_bundle.decode_object_graph(reader.read(_tensor_bundle.OBJECT_GRAPH_KEY))
        self.children = [[(c.node_id, c.local_name) for c in node.children] for node in nodes]
        # (node id, attribute name) -> key, for every saved value; pending holds those not
        # assigned yet (None for a value ferrotape cannot read: TensorFlow's iterator state).
        self.keys = {}
        for node_id, node in enumerate(nodes):
            for attribute in node.attributes:
                self.keys[(node_id, attribute.name)] = attribute.checkpoint_key
        self.pending = {slot: _read_saved(reader, index, key) for slot, key in self.keys.items()}
        self.expect_partial = False
        self._checkpoint = None
        self._roots = []
        self._alive = 0

    def attach(self, checkpoint):
        """Restores into ``checkpoint``'s objects now, and later as their variables appear."""
        self._checkpoint = weakref.ref(checkpoint)
        roots = checkpoint._checkpoint_children()
        if isinstance(checkpoint._root, Variable):
            roots = [("", checkpoint._root)]
        for name, child in roots:
            try:
                self._roots.append((name, weakref.ref(child)))
            except TypeError:  # a list or dict: held as it is
                self._roots.append((name, lambda child=child: child))
                self._alive += 1
                continue
            self._alive += 1
            weakref.finalize(child, self._root_gone)
        self.assign_pending()

    def _root(self):
        checkpoint = self._checkpoint() if self._checkpoint is not None else None
        if checkpoint is not None:
            return checkpoint._graph_root()
        if self._roots and self._roots[0][0] == "":  # a variable was the root
            return self._roots[0][1]() or _Roots([])
        return _Roots([(name, ref()) for name, ref in self._roots])

    def _root_gone(self):
        self._alive -= 1
        if self._alive == 0:
            trackable.set_deferred(self, False)
            self.warn_if_unused()

    def assign_pending(self):
        """Assigns the waiting values whose variables now exist: once, outside any trace being
        recorded (a model first built inside a traced step, by ``fit`` say, must not replay
        the restore on every call), as TensorFlow runs restore ops in its init scope."""
        if self.pending:
            with init_scope():
                self.assign(self._root())
        trackable.set_deferred(self, bool(self.pending) and self._alive > 0)

    def assign(self, root):
        """Assigns the values of the nodes that now pair with live objects."""
        by_node = {}
        for node, attribute in self.pending:
            by_node.setdefault(node, []).append(attribute)
        for node, objects in trackable.match(self.children, root).items():
            for attribute in by_node.get(node, ()):
                value = self.pending[(node, attribute)]
                key = self.keys[(node, attribute)]
                if value is None:
                    continue
                targets = [obj for obj in objects if _holds(obj, attribute)]
                for obj in targets:
                    if isinstance(obj, Variable):
                        _assign_saved(obj, value, key)
                    else:
                        obj._restore_checkpoint_values({attribute: value})
                if targets:
                    del self.pending[(node, attribute)]

    def pretty_path(self, node):
        """TensorFlow's way of naming a saved node in messages: ``(root).model.w``."""
        parents = {0: None}
        queue = [0]
        for current in queue:
            for child, name in self.children[current]:
                if child not in parents:
                    parents[child] = (current, name)
                    queue.append(child)
        names = []
        while parents.get(node) is not None:
            node, name = parents[node]
            names.append(name)
        return ".".join(["(root)"] + names[::-1])

    def warn_if_unused(self):
        """TensorFlow's warning when a checkpoint with unrestored values goes away."""
        if self.expect_partial or not self.pending:
            return
        logger = get_logger()
        logger.warning(
            "Detecting that an object or model or tf.train.Checkpoint is being deleted with "
            "unrestored values. See the following logs for the specific values in question. "
            "To silence these warnings, use `status.expect_partial()`."
        )
        for node, attribute in sorted(self.pending):
            name = self.pretty_path(node)
            if attribute != trackable.VALUE_ATTRIBUTE:
                name += f".{attribute}"
            logger.warning(
                "Value in checkpoint could not be found in the restored object: %s", name
            )


class _Roots:
    """The children a checkpoint had when it restored, once the ``Checkpoint`` itself is gone."""

    def __init__(self, children):
        self._children = [(name, child) for name, child in children if child is not None]

    def _checkpoint_children(self):
        return self._children


def _holds(obj, attribute):
    """Whether ``obj`` takes a saved value named ``attribute``: a variable its value, another
    object what its ``_checkpoint_values()`` names."""
    if isinstance(obj, Variable):
        return attribute == trackable.VALUE_ATTRIBUTE
    method = getattr(obj, "_checkpoint_values", None)
    return method is not None and attribute in method()


def _read_saved(reader, index, key):
    """The value saved under ``key``, or None for one ferrotape does not read: a variant
    tensor, or a key the index lacks (TensorFlow's iterator state is saved under the graph's
    key plus ``_STATE``, as a variant)."""
    if key not in index:
        return None
    dtype = index[key][0]
    if isinstance(dtype, str) and dtype != "string":
        return None
    return reader.read(key)


def _assign_saved(variable, value, key):
    value = np.asarray(value)
    if tuple(variable.shape) != value.shape:
        raise ValueError(
            f"Checkpoint.restore: {key} has shape {value.shape} in the checkpoint but "
            f"{tuple(variable.shape)} in the program (variable {variable.name})"
        )
    variable.assign(value.astype(variable.dtype.name, copy=False))


# ---------------------------------------------------------------------------- Checkpoint


class _GraphModeStatus:
    """TensorFlow 1's graph-mode calls on a restore status: restoration already ran eagerly."""

    def run_restore_ops(self, session=None):
        """Graph-mode API: restoration already happened eagerly.

        Args:
            session: Ignored (TF 1's session).
        """
        del session

    def initialize_or_restore(self, session=None):
        """Graph-mode API: restoration already happened eagerly.

        Args:
            session: Ignored (TF 1's session).
        """
        del session


class CheckpointLoadStatus(_GraphModeStatus):
    """What ``Checkpoint.restore`` returns: checks of how the saved values were matched."""

    def __init__(self, checkpoint, saved):
        """Made by ``Checkpoint.restore``; not built by user code.

        Args:
            checkpoint: The restoring ``Checkpoint``.
            saved: What the restore read.
        """
        self._checkpoint = checkpoint
        self._saved = saved

    def assert_consumed(self):
        """Every value in the checkpoint was assigned to a variable (now), and every variable
        of the program was given one.

        Returns:
            This status.

        Raises:
            AssertionError: naming the values or variables left over.
        """
        if self._saved.pending:
            names = [self._saved.pretty_path(node) for node, _ in sorted(self._saved.pending)]
            raise AssertionError(
                f"Unresolved object in checkpoint {self._saved.path}: {names[:10]} (their "
                "variables do not exist yet, or the program has no such objects)"
            )
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self):
        """Every variable that exists now had a value in the checkpoint.

        Returns:
            This status.

        Raises:
            AssertionError: naming the variables without a value.
        """
        root = self._checkpoint._graph_root()
        graph = trackable.ObjectGraph(root)
        matched = trackable.match(self._saved.children, root)
        saved_nodes = {node for node, _ in self._saved.keys}
        restored = {
            id(obj) for node, objs in matched.items() if node in saved_nodes for obj in objs
        }
        missing = [
            key for node, _, key, _ in graph.values() if id(graph.objects[node]) not in restored
        ]
        if missing:
            raise AssertionError(
                "Some Python objects were not bound to checkpointed values, likely due to "
                f"changes in the Python program: variables without a value in checkpoint "
                f"{self._saved.path}: {missing[:10]}"
            )
        return self

    def assert_nontrivial_match(self):
        """Something besides the save counter was matched.

        Returns:
            This status.

        Raises:
            AssertionError: if nothing else was.
        """
        restored = set(self._saved.keys) - set(self._saved.pending)
        if not any(not self._saved.keys[slot].startswith("save_counter/") for slot in restored):
            raise AssertionError(
                f"Nothing except the root object matched a checkpointed value in {self._saved.path}"
            )
        return self

    def expect_partial(self):
        """Silences the warning about values never used, printed when the checkpoint goes away.

        Returns:
            This status.
        """
        self._saved.expect_partial = True
        return self


class InitializationOnlyStatus(_GraphModeStatus):
    """What ``restore(None)`` returns: nothing was restored (a fresh start)."""

    def __init__(self, checkpoint):
        """Made by ``Checkpoint.restore(None)``.

        Args:
            checkpoint: The checkpoint.
        """
        self._checkpoint = checkpoint

    def _nothing(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    def assert_consumed(self):
        """Fails: nothing was restored."""
        self._nothing()

    def assert_existing_objects_matched(self):
        """Fails: nothing was restored."""
        self._nothing()

    def assert_nontrivial_match(self):
        """Fails: nothing was restored."""
        self._nothing()

    def expect_partial(self):
        """Nothing to silence.

        Returns:
            This status.
        """
        return self


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
        # The root, as in TensorFlow, is the top of the saved graph: a module's attributes are
        # saved at the top level beside the keyword objects (``w``, not ``root/w``), a variable
        # as the root node itself (``/.ATTRIBUTES/VARIABLE_VALUE``).
        object.__setattr__(self, "_root", root)
        for name, value in kwargs.items():
            if value is None:
                raise ValueError(f"Checkpoint: the object for {name!r} is None")
            children[name] = value
        object.__setattr__(self, "_children", children)
        object.__setattr__(self, "_save_counter", None)

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
            if trackable.has_deferred():
                trackable.restore_deferred()

    def _checkpoint_children(self):
        own = list(self._children.items())
        return own if self._root is None else trackable.children(self._root) + own

    def _graph_root(self):
        """The root node of the saved graph: this checkpoint, or the variable given as root."""
        return self._root if isinstance(self._root, Variable) else self

    @property
    def save_counter(self):
        """An int64 variable counting the calls of ``save`` (created on first use)."""
        if self._save_counter is None:
            counter = Variable(np.int64(0), trainable=False, name="save_counter")
            object.__setattr__(self, "_save_counter", counter)
            self._children["save_counter"] = counter
            if trackable.has_deferred():
                trackable.restore_deferred()
        return self._save_counter

    def write(self, file_prefix, options=None):
        """Writes the values to ``file_prefix`` (the files ``file_prefix.index`` and
        ``file_prefix.data-00000-of-00001``); returns the path given.

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
        _check_options(options)
        path = os.fspath(file_prefix)
        graph = trackable.ObjectGraph(self._graph_root())
        values = {key: value for _, _, key, value in graph.values()}
        values[_tensor_bundle.OBJECT_GRAPH_KEY] = _tensor_bundle.encode_object_graph(
            _object_graph_nodes(graph)
        )
        _tensor_bundle.write_bundle(path, values)
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
        paths = [p for p in (previous.all_paths if previous else []) if p != path] + [path]
        stamps = dict(zip(previous.all_paths, previous.timestamps, strict=True)) if previous else {}
        stamps[path] = time.time()
        _write_state(directory, path, paths, [stamps.get(p) or stamps[path] for p in paths])
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
        _check_options(options)
        if save_path is None:
            return InitializationOnlyStatus(self)
        path = os.fspath(save_path)
        if not os.path.exists(path + ".index"):
            raise FileNotFoundError(
                f"Checkpoint.restore: no checkpoint at {path!r} (expected the file "
                f"{path + '.index'!r}); pass a path returned by save() or "
                "tf.train.latest_checkpoint(directory)"
            )
        saved = _SavedGraph(path)
        saved.attach(self)
        return CheckpointLoadStatus(self, saved)

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
        if save_path is not None:
            # Made first, so that the saved count is restored into it (TensorFlow's order).
            self.save_counter  # noqa: B018
        return self.read(save_path, options)


def _object_graph_nodes(graph):
    """The object graph in the form the file stores (TensorFlow's ``TrackableObjectGraph``)."""
    attributes = [[] for _ in graph.objects]
    for node, name, key, _ in graph.values():
        obj = graph.objects[node]
        full_name = ""
        if isinstance(obj, Variable):
            full_name = obj.name[:-2] if obj.name.endswith(":0") else obj.name
        attributes[node].append(_tensor_bundle.SerializedTensor(name, full_name, key))
    # A node has values when it or any node below it has (repeated until nothing changes:
    # an edge may lead back to a node met earlier).
    has_values = [bool(a) for a in attributes]
    changed = True
    while changed:
        changed = False
        for node in reversed(range(len(graph.objects))):
            if not has_values[node] and any(has_values[c] for c, _ in graph.children[node]):
                has_values[node] = changed = True
    return [
        _tensor_bundle.TrackableObject(
            children=[_tensor_bundle.ObjectReference(c, name) for c, name in graph.children[node]],
            attributes=attributes[node],
            has_checkpoint_values=has_values[node],
        )
        for node in range(len(graph.objects))
    ]


# ---------------------------------------------------------------------------- the state file


class _State:
    """What a ``checkpoint`` state file says, paths made absolute: ``latest``, ``all_paths``
    (oldest first), their ``timestamps`` and ``last_preserved``."""

    def __init__(self, latest, all_paths, timestamps, last_preserved):
        self.latest = latest
        self.all_paths = all_paths
        self.timestamps = timestamps
        self.last_preserved = last_preserved


def _inside(directory, path):
    """``path`` (relative to ``directory`` or absolute) made absolute, or None when it leads
    outside ``directory``: a state file names the checkpoints of its own directory only, so a
    crafted one cannot make a manager delete, or a restore read, files elsewhere."""
    base = os.path.realpath(directory)
    full = os.path.realpath(path if os.path.isabs(path) else os.path.join(directory, path))
    if os.path.dirname(full) != base:
        return None
    return os.path.join(os.path.abspath(directory), os.path.basename(full))


def _read_state(directory):
    """The ``checkpoint`` text file of ``directory`` (TensorFlow's ``CheckpointState``), or
    None. Paths leading outside ``directory`` are left out, with a warning."""
    state = os.path.join(directory, _STATE_FILE)
    try:
        with open(state, encoding="utf-8") as file:
            text = file.read(1 << 20)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    latest = re.search(r'^model_checkpoint_path:\s*"(.*)"\s*$', text, re.M)
    if latest is None:
        return None
    named = re.findall(r'^all_model_checkpoint_paths:\s*"(.*)"\s*$', text, re.M)
    stamps = [
        float(s) for s in re.findall(r"^all_model_checkpoint_timestamps:\s*(\S+)\s*$", text, re.M)
    ]
    preserved = re.search(r"^last_preserved_timestamp:\s*(\S+)\s*$", text, re.M)
    outside = [p for p in [latest.group(1), *named] if _inside(directory, p) is None]
    if outside:
        get_logger().warning(
            "The checkpoint state file %s names paths outside its directory, which are ignored: %s",
            state,
            outside,
        )
    if len(stamps) != len(named):
        stamps = [None] * len(named)
    kept = [(_inside(directory, p), s) for p, s in zip(named, stamps, strict=True)]
    kept = [(p, s) for p, s in kept if p is not None]
    return _State(
        _inside(directory, latest.group(1)),
        [p for p, _ in kept],
        [s for _, s in kept],
        float(preserved.group(1)) if preserved else None,
    )


def _write_state(directory, latest, paths, timestamps=None, last_preserved=None):
    from pathlib import Path

    from .keras.saving.file_io import _write_atomically

    def relative(p):
        return os.path.relpath(p, directory)

    lines = [f'model_checkpoint_path: "{relative(latest)}"']
    lines += [f'all_model_checkpoint_paths: "{relative(p)}"' for p in paths]
    if timestamps is not None:
        lines += [f"all_model_checkpoint_timestamps: {t!r}" for t in timestamps]
    if last_preserved is not None:
        lines.append(f"last_preserved_timestamp: {last_preserved!r}")
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
    if state is None or state.latest is None or not os.path.exists(state.latest + ".index"):
        return None
    return state.latest


def _checkpoint_prefix(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise ValueError(
                f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}"
            )
        path = latest
    return path


def list_variables(ckpt_dir_or_file):
    """The names and shapes of the values saved in a checkpoint.

    Args:
        ckpt_dir_or_file: A checkpoint path prefix, or a directory (its newest checkpoint).

    Returns:
        A sorted list of ``(name, shape)`` pairs, shapes as lists of ints.

    Raises:
        ValueError: if a directory holds no checkpoint.
    """
    from .checkpoint_utils import load_checkpoint

    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return sorted(shapes.items())


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
    from .checkpoint_utils import load_checkpoint

    reader = load_checkpoint(ckpt_dir_or_file)
    suffix = "/" + trackable.ATTRIBUTES_SEGMENT + "/" + trackable.VALUE_ATTRIBUTE
    for key in (name, name + suffix):
        if reader.has_tensor(key):
            return reader.get_tensor(key)
    raise ValueError(
        f"load_variable: {name!r} is not in the checkpoint; it has "
        f"{sorted(reader.get_variable_to_shape_map())}"
    )


# ---------------------------------------------------------------------------- CheckpointManager


class CheckpointManager:
    """Saves ``checkpoint`` as ``directory/ckpt-N``, keeps the newest ``max_to_keep`` (None:
    all) plus one every ``keep_checkpoint_every_n_hours``, and records them in
    ``directory/checkpoint`` for ``latest_checkpoint``. Only files inside ``directory`` are ever
    deleted, whatever its state file says."""

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
        last_checkpoint_step=None,
    ):
        """Manages the checkpoints of ``checkpoint`` in ``directory``.

        Args:
            checkpoint: The ``Checkpoint`` to save.
            directory: The directory for the files and the ``checkpoint`` state file.
            max_to_keep: How many checkpoints to keep (a positive int), or ``None`` for all.
            keep_checkpoint_every_n_hours: Besides the newest ``max_to_keep``, keep one
                checkpoint every this many hours (``None``: none).
            checkpoint_name: The file name prefix (``"ckpt"``).
            step_counter: A variable holding the training step, for ``checkpoint_interval``.
            checkpoint_interval: The smallest number of steps between two saves, or ``None``.
            init_fn: Called by ``restore_or_initialize`` when there is no checkpoint.
            last_checkpoint_step: The step of the last save, for ``checkpoint_interval``.

        Raises:
            ValueError: for a bad ``max_to_keep``, or ``checkpoint_interval`` without
                ``step_counter``.
        """
        if max_to_keep is not None and (
            isinstance(max_to_keep, bool) or not isinstance(max_to_keep, int) or max_to_keep <= 0
        ):
            raise ValueError(
                f"Expected a positive integer or `None` for `max_to_keep`, got {max_to_keep!r}."
            )
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError(
                "`step_counter` should be passed if `checkpoint_interval` is not None."
            )
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_every_n_hours = keep_checkpoint_every_n_hours
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._interval = checkpoint_interval
        self._last_step = last_checkpoint_step
        self._init_fn = init_fn
        now = time.time()
        state = _read_state(self._directory)
        self._maybe_delete = {}  # path -> timestamp, oldest first
        if state is None:
            self._latest = None
            # A little in the past, as TensorFlow: a manager made again at once keeps its files.
            self._last_preserved = now - 1.0
            return
        self._latest = state.latest
        self._last_preserved = min(
            state.last_preserved if state.last_preserved is not None else now, now
        )
        for path, stamp in zip(state.all_paths, state.timestamps, strict=True):
            stamp = min(self._last_preserved if stamp is None else stamp, now)
            if stamp > self._last_preserved or state.last_preserved is None:
                self._maybe_delete[path] = stamp

    @property
    def directory(self):
        """The directory the checkpoints are written to."""
        return self._directory

    @property
    def checkpoint(self):
        """The managed ``Checkpoint``."""
        return self._checkpoint

    @property
    def checkpoints(self):
        """The managed checkpoints, oldest first."""
        return list(self._maybe_delete)

    @property
    def latest_checkpoint(self):
        """The newest checkpoint of ``directory``, or None."""
        return self._latest

    @property
    def checkpoint_interval(self):
        """The smallest number of steps between two saves, or None."""
        return self._interval

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Writes a new checkpoint and returns its path (None when ``checkpoint_interval`` says
        it is too early); removes the oldest beyond ``max_to_keep``.

        Args:
            checkpoint_number: The N of ``ckpt-N`` (an int, or an integer variable or tensor);
                by default the checkpoint's save counter (counted up by every save).
            check_interval: If false, saves even when ``checkpoint_interval`` says it is too
                early (but never twice at one step).
            options: A ``tf.train.CheckpointOptions`` (its write callbacks run after the write).

        Returns:
            The path written, or ``None``.
        """
        if self._interval is not None:
            step = int(self._step_counter)
            if self._last_step is not None:
                if step == self._last_step:
                    return None
                if check_interval and step < self._last_step + self._interval:
                    return None
            self._last_step = step
        counter = self._checkpoint.save_counter
        counter.assign_add(1)
        number = counter if checkpoint_number is None else checkpoint_number
        path = self._checkpoint._write(f"{self._prefix}-{int(number)}", options)
        self._maybe_delete.pop(path, None)
        self._maybe_delete[path] = time.time()
        self._latest = path
        # Recorded before the sweep, so that an interruption while deleting leaves a state
        # file naming the new checkpoint; then again without the deleted ones.
        self._record_state()
        self._sweep()
        self._record_state()
        _run_write_callbacks(options, path)
        return path

    def _sweep(self):
        if not self._max_to_keep:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            path = next(iter(self._maybe_delete))
            stamp = self._maybe_delete.pop(path)
            if (
                self._keep_every_n_hours
                and stamp - self._keep_every_n_hours * 3600.0 >= self._last_preserved
            ):
                self._last_preserved = stamp
                continue
            _delete_checkpoint_files(self._directory, path)

    def _record_state(self):
        _write_state(
            self._directory,
            self._latest,
            list(self._maybe_delete),
            list(self._maybe_delete.values()),
            self._last_preserved,
        )

    def restore_or_initialize(self):
        """Restores the latest checkpoint if there is one, else calls ``init_fn`` (if given).

        Returns:
            The path restored, or None.
        """
        if self._latest is not None:
            self._checkpoint.restore(self._latest)
            if self._interval is not None:
                self._last_step = int(self._step_counter)
            return self._latest
        if self._init_fn is not None:
            self._init_fn()
        return None


def _delete_checkpoint_files(directory, path):
    """Deletes ``path``'s index and data files, only inside ``directory``."""
    inside = _inside(directory, path)
    if inside is None:
        return
    base = os.path.basename(inside)
    pattern = re.compile(re.escape(base) + r"\.(index|data-\d{5}-of-\d{5})$")
    for name in os.listdir(os.path.dirname(inside)):
        if pattern.match(name):
            try:
                os.remove(os.path.join(os.path.dirname(inside), name))
            except FileNotFoundError:
                pass


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
