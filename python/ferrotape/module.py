"""``ft.Module``: collects the variables and submodules found in its attributes."""

import contextlib
import re

from ._core import Variable


def _leaves(value):
    """Variables and Modules inside one attribute value (lists, tuples, dicts sorted by key)."""
    if isinstance(value, (Variable, Module)):
        yield value
    elif isinstance(value, dict):
        for key in sorted(value, key=str):
            yield from _leaves(value[key])
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)


def _walk(module, seen):
    """TensorFlow's order: a module's own attributes (sorted by name) first, then each
    submodule found, recursively."""
    submodules = []
    for name in sorted(vars(module)):
        for leaf in _leaves(vars(module)[name]):
            if id(leaf) in seen:
                continue
            seen.add(id(leaf))
            yield leaf
            if isinstance(leaf, Module):
                submodules.append(leaf)
    for sub in submodules:
        yield from _walk(sub, seen)


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
        self._name = name or re.sub(r"(?<!^)(?=[A-Z])", "_", type(self).__name__).lower()

    @property
    def name(self):
        return self._name

    @property
    def name_scope(self):
        return contextlib.nullcontext()

    def _found(self):
        return list(_walk(self, {id(self)}))

    @property
    def variables(self):
        return tuple(v for v in self._found() if isinstance(v, Variable))

    @property
    def trainable_variables(self):
        return tuple(v for v in self.variables if v.trainable)

    @property
    def non_trainable_variables(self):
        return tuple(v for v in self.variables if not v.trainable)

    @property
    def submodules(self):
        return tuple(m for m in self._found() if isinstance(m, Module))

    @classmethod
    def with_name_scope(cls, method):
        return method
