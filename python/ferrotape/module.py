"""``ft.Module``: collects the variables and submodules found in its attributes."""

import contextlib
import re

from ._core import Variable


def _walk(value, seen):
    """Yields Variables and Modules found in ``value`` (depth first, attributes sorted)."""
    if id(value) in seen:
        return
    if isinstance(value, (Variable, Module)):
        seen.add(id(value))
        yield value
        if isinstance(value, Module):
            yield from _walk_attributes(value, seen)
    elif isinstance(value, dict):
        for key in sorted(value, key=str):
            yield from _walk(value[key], seen)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _walk(item, seen)


def _walk_attributes(module, seen):
    for name in sorted(vars(module)):
        yield from _walk(vars(module)[name], seen)


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
        return list(_walk_attributes(self, {id(self)}))

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
