"""``tf.train.TrackableView`` and ``tf.train.CheckpointView``: the object graphs a checkpoint
saves, walked from live objects and read back from a checkpoint file.

A live object's children are what ``ft.train.Checkpoint`` walks (``train._children``): its
variables, modules, Keras layers and optimizers, and the lists and dicts holding any of them.
ferrotape's checkpoint file records each variable under its path of names, not an object graph;
``CheckpointView`` rebuilds the graph from those paths (so it holds the objects on the way to a
variable, not empty ones) and numbers its nodes breadth first from the root (0), children in
the order they were saved, as TensorFlow numbers its graph.
"""

import collections
import os

from ._core import Variable
from .train import _VALUE_SUFFIX, _checkpoint_file, _children, _is_container_object


def _trackable(value):
    if isinstance(value, Variable) or _is_container_object(value):
        return True
    if isinstance(value, dict):
        return any(_trackable(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_trackable(v) for v in value)
    return False


class TrackableView:
    """The object graph below ``root`` as a checkpoint sees it.

    Args:
        root: The root object (a ``Checkpoint``, module, Keras model, ...).

    >>> import ferrotape as ft
    >>> module = ft.Module()
    >>> module.w = ft.Variable(1.0)
    >>> list(ft.train.TrackableView.children(module))
    ['w']
    """

    def __init__(self, root):
        """Views the graph below ``root``.

        Args:
            root: The root object.
        """
        self._root = root

    @property
    def root(self):
        """The root object."""
        return self._root

    @classmethod
    def children(cls, obj, save_type="checkpoint", **kwargs):
        """The named children a checkpoint walks from ``obj``.

        Args:
            obj: An object of the graph.
            save_type: Ignored (TensorFlow's checkpoint or SavedModel choice).
            **kwargs: Ignored.

        Returns:
            A dict name -> child, in the order a checkpoint visits them.
        """
        del save_type, kwargs
        if isinstance(obj, Variable) or not _trackable(obj):
            return {}
        return {name: child for name, child in _children(obj) if _trackable(child)}

    def descendants(self):
        """Every object of the graph once, breadth first from the root.

        Returns:
            A list of objects, the root first.
        """
        seen, order, queue = {id(self._root)}, [self._root], collections.deque([self._root])
        while queue:
            for child in self.children(queue.popleft()).values():
                if id(child) not in seen:
                    seen.add(id(child))
                    order.append(child)
                    queue.append(child)
        return order


class CheckpointView:
    """The object graph saved in a checkpoint, node 0 its root.

    Args:
        save_path: A checkpoint path prefix (as ``save`` returns) or a directory (its newest
            checkpoint).

    Raises:
        ValueError: if a directory holds no checkpoint.

    >>> import os, tempfile
    >>> import ferrotape as ft
    >>> path = ft.train.Checkpoint(step=ft.Variable(1)).save(os.path.join(tempfile.mkdtemp(), "c"))
    >>> ft.train.CheckpointView(path).children(0)
    {'step': 1, 'save_counter': 2}
    """

    def __init__(self, save_path):
        """Reads the graph saved at ``save_path``.

        Args:
            save_path: A checkpoint path prefix or a directory (its newest checkpoint).

        Raises:
            ValueError: if a directory holds no checkpoint.
        """
        from .keras.saving import load_weights_file

        saved = load_weights_file(_checkpoint_file(os.fspath(save_path)))
        tree = {}  # nested dicts in saved order; a variable is an empty dict
        for key in saved:
            node = tree
            for name in key.removesuffix(_VALUE_SUFFIX).split("/"):
                node = node.setdefault(name, {})
        self._children = []
        queue = collections.deque([tree])
        while queue:
            node = queue.popleft()
            first = len(self._children) + len(queue) + 1
            self._children.append({name: first + i for i, name in enumerate(node)})
            queue.extend(node.values())

    def children(self, node_id):
        """The named children of node ``node_id``.

        Args:
            node_id: A node id (0 is the root).

        Returns:
            A dict name -> child node id.
        """
        return dict(self._children[node_id])

    def descendants(self):
        """Every node id, breadth first from the root.

        Returns:
            A list of ints, 0 first.
        """
        return list(range(len(self._children)))

    def match(self, obj):
        """Pairs the checkpoint's nodes with the objects below ``obj`` reached by the same names.

        Args:
            obj: The root object to match against node 0.

        Returns:
            A dict node id -> object, ``{0: obj, ...}``.
        """
        matched, queue = {0: obj}, collections.deque([(0, obj)])
        while queue:
            node_id, current = queue.popleft()
            live = TrackableView.children(current)
            for name, child_id in self._children[node_id].items():
                if name in live and child_id not in matched:
                    matched[child_id] = live[name]
                    queue.append((child_id, live[name]))
        return matched

    def diff(self, obj):
        """What a restore into ``obj`` would pair, and what it would leave out on each side.

        Args:
            obj: The root object to match against node 0.

        Returns:
            ``(match(obj), node ids only in the checkpoint, objects only below obj)``.
        """
        matched = self.match(obj)
        paired = {id(v) for v in matched.values()}
        only_saved = [n for n in self.descendants() if n not in matched]
        only_live = [t for t in TrackableView(obj).descendants() if id(t) not in paired]
        return matched, only_saved, only_live
