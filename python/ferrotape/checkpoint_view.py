"""``tf.train.TrackableView`` and ``tf.train.CheckpointView``: the object graph a checkpoint
saves, walked from live objects and read back from a checkpoint file.

A live object's children are those ``ft.train.Checkpoint`` saves (``ferrotape.trackable``): its
variables, modules, Keras layers and optimizers, and the lists and dicts holding any of them.
``CheckpointView`` reads the object graph stored in the checkpoint, its nodes numbered breadth
first from the root (0), as TensorFlow numbers them.
"""

import collections
import os

from . import _tensor_bundle, trackable
from ._core import Variable
from .train import _checkpoint_prefix


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
        if isinstance(obj, Variable):
            return {}
        return dict(trackable.children(obj))

    def descendants(self):
        """Every object of the graph once, breadth first from the root.

        Returns:
            A list of objects, the root first.
        """
        return list(trackable.ObjectGraph(self._root).objects)


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
        prefix = _checkpoint_prefix(os.fspath(save_path))
        nodes = _tensor_bundle.decode_object_graph(
            _tensor_bundle.read_tensor(prefix, _tensor_bundle.OBJECT_GRAPH_KEY)
        )
        self._children = [[(c.node_id, c.local_name) for c in node.children] for node in nodes]

    def children(self, node_id):
        """The named children of node ``node_id``.

        Args:
            node_id: A node id (0 is the root).

        Returns:
            A dict name -> child node id.
        """
        return {name: child for child, name in self._children[node_id]}

    def descendants(self):
        """Every node reachable from the root, breadth first.

        Returns:
            A list of ints, 0 first.
        """
        order, seen, queue = [], {0}, collections.deque([0])
        while queue:
            node = queue.popleft()
            order.append(node)
            for child, _ in self._children[node]:
                if child not in seen:
                    seen.add(child)
                    queue.append(child)
        return order

    def match(self, obj):
        """Pairs the checkpoint's nodes with the objects below ``obj`` reached by the same names.

        Args:
            obj: The root object to match against node 0.

        Returns:
            A dict node id -> object, ``{0: obj, ...}``.
        """
        return {node: objs[0] for node, objs in trackable.match(self._children, obj).items()}

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
