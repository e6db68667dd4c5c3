"""``ft.summary.experimental``: the default step and ``summary_scope`` (TF's
``tf.summary.experimental``)."""

import contextlib

from .writer import _state


def set_step(step):
    """Sets the default step of the summary functions for the current thread.

    Args:
        step: An int, a scalar tensor or a Variable (read each time a summary is written, so a
            Variable such as ``optimizer.iterations`` follows training), or ``None`` to unset.

    >>> import ferrotape as ft
    >>> ft.summary.experimental.set_step(7)
    >>> ft.summary.experimental.get_step()
    7
    >>> ft.summary.experimental.set_step(None)
    """
    _state.step = step


def get_step():
    """The default step of the summary functions for the current thread.

    Returns:
        What ``set_step`` or ``as_default(step=...)`` set (unconverted), or ``None``.

    >>> import ferrotape as ft
    >>> ft.summary.experimental.get_step() is None
    True
    """
    return _state.step


@contextlib.contextmanager
def summary_scope(name, default_name=None, values=None):
    """A scope for writing a summary, yielding its ``(tag, scope_name)``.

    ferrotape has no graph name scopes, so the tag is the name itself (TF prefixes the enclosing
    ``name_scope``); custom summary functions written against TF's API run unchanged.

    Args:
        name: The summary's name.
        default_name: Used when ``name`` is ``None``.
        values: Ignored (TF's graph inputs).

    Yields:
        The pair ``(tag, scope_name)``, both the name.

    >>> import ferrotape as ft
    >>> with ft.summary.experimental.summary_scope("loss") as (tag, _):
    ...     print(tag)
    loss
    """
    del values
    tag = name if name is not None else default_name
    if tag is None:
        raise ValueError("summary_scope: name and default_name cannot both be None")
    yield tag, tag


__all__ = ["get_step", "set_step", "summary_scope"]
