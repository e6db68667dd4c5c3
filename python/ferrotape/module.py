"""``ft.Module``: collects the variables and submodules found in its attributes."""

import contextlib
import re

from . import nest, trackable
from ._core import Variable

_END = object()


def _leaves(value):
    """Variables and Modules inside one attribute value (lists, tuples, dicts sorted by key),
    with an explicit stack: a container met again (a list holding itself) adds nothing, and a
    nest deeper than ``nest.MAX_DEPTH`` is refused with a ValueError instead of overflowing."""
    stack = [iter((value,))]
    open_containers = set()  # ids of the containers on the stack (cycles)
    owners = [None]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
            open_containers.discard(owners.pop())
            continue
        if isinstance(item, (Variable, Module)):
            yield item
        elif isinstance(item, (dict, list, tuple)):
            if id(item) in open_containers:
                continue
            if len(stack) > nest.MAX_DEPTH:
                raise ValueError(
                    f"Module: an attribute is nested more than {nest.MAX_DEPTH} levels deep"
                )
            children = [item[k] for k in sorted(item, key=str)] if isinstance(item, dict) else item
            open_containers.add(id(item))
            owners.append(id(item))
            stack.append(iter(children))


def _walk(module, seen):
    """TensorFlow's order: a module's own attributes (sorted by name) first, then each
    submodule found, depth first (an explicit stack: chains of modules can be long)."""
    stack = [iter([module])]
    while stack:
        current = next(stack[-1], _END)
        if current is _END:
            stack.pop()
            continue
        submodules = []
        for name in sorted(vars(current)):
            for leaf in _leaves(vars(current)[name]):
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
                yield leaf
                if isinstance(leaf, Module):
                    submodules.append(leaf)
        stack.append(iter(submodules))


class Module:
    """Base class for objects holding variables, like ``tf.Module``: ``variables``,
    ``trainable_variables`` and ``submodules`` are found by walking the attributes (and lists,
    tuples and dicts in them), in sorted attribute order.

    >>> import ferrotape as ft
    >>> class Affine(ft.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = ft.Variable(ft.ones([2, 1]))
    ...         self.b = ft.Variable(0.0, trainable=False)
    >>> [v.shape.as_list() for v in Affine().trainable_variables]
    [[2, 1]]
    """

    def __init__(self, name=None):
        """Creates the module.

        Args:
            name: The module's name; by default the class name in snake case (``MyModel`` gives
                ``my_model``).
        """
        self._name = name or re.sub(r"(?<!^)(?=[A-Z])", "_", type(self).__name__).lower()

    @property
    def name(self):
        """The name given at construction (or derived from the class name)."""
        return self._name

    @property
    def name_scope(self):
        """A context manager for the module's name scope; ferrotape has no graph names, so it does
        nothing.
        """
        return contextlib.nullcontext()

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if trackable.has_deferred() and trackable.holds_trackables(value):
            # A checkpoint restored before this attribute existed assigns its values now
            # (TensorFlow's deferred restoration: a module made its variables on first call).
            trackable.restore_deferred()

    def _checkpoint_children(self):
        """TensorFlow's children of a module: the attributes holding trackables, in the order
        they were assigned (``ferrotape.trackable``)."""
        return trackable.attribute_children(self, exclude=("_name",))

    def _found(self):
        return list(_walk(self, {id(self)}))

    @property
    def variables(self):
        """Every ``Variable`` held by this module and its submodules, in sorted attribute order."""
        return tuple(v for v in self._found() if isinstance(v, Variable))

    @property
    def trainable_variables(self):
        """The trainable ones among ``variables``."""
        return tuple(v for v in self.variables if v.trainable)

    @property
    def non_trainable_variables(self):
        """The non-trainable ones among ``variables``."""
        return tuple(v for v in self.variables if not v.trainable)

    @property
    def submodules(self):
        """Every ``Module`` held by this module, directly or through modules, lists and dicts."""
        return tuple(m for m in self._found() if isinstance(m, Module))

    @classmethod
    def with_name_scope(cls, method):
        """Decorator that runs ``method`` inside the module's name scope (unchanged in ferrotape).

        Args:
            method: The method to decorate.

        Returns:
            ``method`` itself.
        """
        return method
