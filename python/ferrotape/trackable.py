"""The object graph a checkpoint saves, named by TensorFlow's rules for trackable objects.

A checkpoint does not save variables by their ``name``: it saves the graph of objects reachable
from its root, each edge named after the attribute (or list index, or dict key) that holds the
child, and each variable's value under the path of edge names of its first appearance in a
breadth-first walk from the root. TensorFlow 2.21 with Keras 3 names the edges this way:

- a ``tf.Module`` or any plain trackable object: its attributes holding trackables (variables,
  modules, layers, optimizers, lists, tuples and dicts of them), public and private, in the order
  they were first assigned;
- a list or tuple: ``"0"``, ``"1"``, ...; a dict: its keys;
- a Keras layer: its attributes as Keras 3's own layer classes name them (``Dense`` keeps its
  kernel in ``_kernel``, ``Embedding`` in ``_embeddings``, an RNN's weights are in ``cell``);
  a ``Sequential`` holds its layers under ``_functional/_operations/<i>``, a functional model under
  ``_operations/<i>``, index 0 being the input layer; a compiled model adds ``optimizer``;
- a Keras optimizer: ``_variables`` (the step count, the learning rate, then the slots in
  creation order), ``_trainable_variables`` (the model's variables it was built with),
  ``_iterations`` and ``_learning_rate``, and any other variable in its own attribute.

Each object says what its children are through a ``_checkpoint_children()`` method returning
``(name, child)`` pairs in order; :func:`children` adds the containers and variables. The names
follow Keras 3 so that ``tf.train.list_variables`` gives TensorFlow's keys, and the same model
names the same keys before and after training (no cache or engine bookkeeping is a child).
Where Keras 3 on TensorFlow saves nothing (a weight made by ``add_weight`` and kept in no
attribute, layers held in a list attribute of a subclassed model), ferrotape still saves the
values, under the weight's name or the attribute's: a checkpoint never drops a variable it can
reach.

A key is the path's names escaped as TensorFlow escapes them (``.`` as ``..``, ``/`` as ``.S``)
and joined by ``/``, then ``/.ATTRIBUTES/VARIABLE_VALUE``.
"""

import collections

from ._core import Variable

VALUE_ATTRIBUTE = "VARIABLE_VALUE"
ATTRIBUTES_SEGMENT = ".ATTRIBUTES"


def escape(name):
    """A child's name as it appears in a checkpoint key."""
    return name.replace(".", "..").replace("/", ".S")


def key_of(path, attribute=VALUE_ATTRIBUTE):
    """The checkpoint key of ``attribute`` of the object at ``path`` (a tuple of names; the
    root's attributes, at the empty path, are ``/.ATTRIBUTES/...`` as in TensorFlow)."""
    return "/".join(escape(name) for name in path) + f"/{ATTRIBUTES_SEGMENT}/{attribute}"


def holds_trackables(value, _depth=0):
    """Whether ``value`` is a variable or trackable object, or a container holding one."""
    if isinstance(value, Variable) or hasattr(value, "_checkpoint_children"):
        return True
    if _depth > 64:
        return False
    if isinstance(value, dict):
        return any(holds_trackables(v, _depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(holds_trackables(v, _depth + 1) for v in value)
    return False


def children(value):
    """The ``(name, child)`` pairs of one object of the graph, in TensorFlow's order."""
    if isinstance(value, Variable):
        return []
    if isinstance(value, dict):
        return [(str(k), v) for k, v in value.items() if holds_trackables(v)]
    if isinstance(value, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(value) if holds_trackables(v)]
    method = getattr(value, "_checkpoint_children", None)
    if method is None:
        return []
    return [(name, child) for name, child in method() if holds_trackables(child)]


def attribute_children(obj, exclude=(), rename=None, weights=()):
    """TensorFlow's rule for a plain trackable object: the attributes of ``obj`` holding
    trackables, in assignment order, minus ``exclude``, names mapped through ``rename``; then
    the ``(name, variable)`` pairs of ``weights`` that no attribute holds, under their names
    (a Keras layer's weights made by ``add_weight`` and kept in no attribute, which Keras 3 on
    TensorFlow leaves out of checkpoints and ferrotape keeps)."""
    rename = rename or {}
    found = [
        (rename.get(name, name), value)
        for name, value in vars(obj).items()
        if name not in exclude and holds_trackables(value)
    ]
    if not weights:
        return found
    held, stack = set(), [value for _, value in found]
    while stack:
        value = stack.pop()
        if isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        else:
            held.add(id(value))
    taken = {name for name, _ in found}
    for name, variable in weights:
        if id(variable) in held:
            continue
        name = rename.get(name, name)
        unique, n = name, 1
        while unique in taken:
            unique, n = f"{name}_{n}", n + 1
        taken.add(unique)
        found.append((unique, variable))
    return found


class ObjectGraph:
    """The graph below ``root`` as a checkpoint writes it: nodes numbered breadth first from the
    root (0), each with its children ``[(node id, name)]``, and the path of the first walk that
    reached it."""

    def __init__(self, root):
        self.objects = [root]
        self.paths = [()]
        self.children = []
        ids = {id(root): 0}
        queue = collections.deque([0])
        while queue:
            node = queue.popleft()
            edges = []
            for name, child in children(self.objects[node]):
                child_id = ids.get(id(child))
                if child_id is None:
                    child_id = ids[id(child)] = len(self.objects)
                    self.objects.append(child)
                    self.paths.append(self.paths[node] + (name,))
                    queue.append(child_id)
                edges.append((child_id, name))
            self.children.append(edges)

    def variables(self):
        """``(node id, key, variable)`` for every variable of the graph, in node order."""
        return [
            (node, key_of(self.paths[node]), obj)
            for node, obj in enumerate(self.objects)
            if isinstance(obj, Variable)
        ]

    def values(self):
        """``(node id, attribute name, key, value)`` for every value the graph saves: each
        variable's ``VARIABLE_VALUE`` and what other objects give through
        ``_checkpoint_values()`` (a data iterator's position), as numpy values."""
        found = []
        for node, obj in enumerate(self.objects):
            if isinstance(obj, Variable):
                attributes = {VALUE_ATTRIBUTE: obj.numpy()}
            else:
                method = getattr(obj, "_checkpoint_values", None)
                attributes = method() if method is not None else {}
            for name, value in attributes.items():
                found.append((node, name, key_of(self.paths[node], name), value))
        return found


def match(saved_children, root):
    """Pairs the nodes of a saved graph with live objects reached by the same edge names from
    ``root`` (node 0): ``{node id: [objects]}`` (a node reached by two paths can pair with two
    objects when the program holds two)."""
    matched = {0: [root]}
    seen = {(0, id(root))}
    queue = collections.deque([(0, root)])
    while queue:
        node, obj = queue.popleft()
        saved = saved_children[node] if node < len(saved_children) else ()
        if not saved:
            continue
        live = dict(children(obj))
        for child_id, name in saved:
            child = live.get(name)
            if child is None or (child_id, id(child)) in seen:
                continue
            seen.add((child_id, id(child)))
            matched.setdefault(child_id, []).append(child)
            queue.append((child_id, child))
    return matched


# ---------------------------------------------------------------------------- deferred values

# Restorations with values waiting for variables not created yet (held strongly: a program
# commonly drops the ``Checkpoint`` it restored with and keeps only the model).
_DEFERRED = set()


def set_deferred(restoration, waiting):
    """Records whether ``restoration`` (an object with ``assign_pending()``) has values waiting
    for their variables."""
    if waiting:
        _DEFERRED.add(restoration)
    else:
        _DEFERRED.discard(restoration)


def has_deferred():
    """Whether values wait for variables (a cheap test before ``restore_deferred``)."""
    return bool(_DEFERRED)


def restore_deferred():
    """Gives the waiting values to the variables that now exist: called when variables may have
    appeared (a Keras layer built its weights, an optimizer made its slots, a module or
    checkpoint was given a trackable attribute)."""
    for restoration in list(_DEFERRED):
        restoration.assign_pending()
