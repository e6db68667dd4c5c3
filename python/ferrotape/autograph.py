"""``ft.autograph``: TensorFlow's ``tf.autograph`` names, for programs that call them.

TensorFlow's autograph rewrites a function's Python ``if``/``while``/``for`` on tensors into
graph ops. ``ft.function`` converts nothing: it traces the branch a call takes and guards the
trace on the value it branched on (see ``ft.function``), so the result is your code's either
way. These names are therefore the identity (``to_graph``, ``do_not_convert``) or accepted and
ignored (``set_verbosity``, ``set_loop_options``).

>>> import ferrotape as ft
>>> @ft.autograph.experimental.do_not_convert
... def double(x):
...     return 2 * x
>>> double(ft.constant(2.0)).numpy()
np.float32(4.0)
"""

import builtins
import enum
import types

__all__ = ["experimental", "set_verbosity", "to_graph", "trace"]


def set_verbosity(level, alsologtostdout=False):
    """Accepted and ignored (autograph's logging level): ferrotape converts nothing.

    Args:
        level: The verbosity level.
        alsologtostdout: Whether to echo to stdout.
    """
    del level, alsologtostdout


def trace(*args):
    """Prints ``args`` when it runs: inside ``ft.function``, while the function is traced (as
    TensorFlow's, which prints at conversion time); use ``ft.print`` for every call.

    Args:
        *args: The values to print.
    """
    builtins.print(*args)


def to_graph(entity, recursive=True, experimental_optional_features=None):
    """``entity`` itself: ferrotape guards traces on Python control flow instead of converting
    it, so there is no converted function to return.

    Args:
        entity: A Python function or method.
        recursive: Ignored.
        experimental_optional_features: Ignored.

    Returns:
        ``entity``.
    """
    del recursive, experimental_optional_features
    return entity


class Feature(enum.Enum):
    """Autograph's optional conversions (accepted by ``to_graph``, which ignores them)."""

    ALL = "ALL"
    AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
    ASSERT_STATEMENTS = "ASSERT_STATEMENTS"
    BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
    EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
    LISTS = "LISTS"
    NAME_SCOPES = "NAME_SCOPES"


def do_not_convert(func=None):
    """Marks ``func`` as not to be converted: the identity, since ferrotape converts nothing.
    Usable as ``@do_not_convert`` or ``@do_not_convert()``.

    Args:
        func: The function.

    Returns:
        ``func``, or a decorator returning its argument.
    """
    if func is None:
        return lambda f: f
    return func


def set_loop_options(
    parallel_iterations=None,
    swap_memory=None,
    maximum_iterations=None,
    shape_invariants=None,
):
    """Accepted and ignored: a loop inside ``ft.function`` runs as Python while tracing."""
    del parallel_iterations, swap_memory, maximum_iterations, shape_invariants


experimental = types.SimpleNamespace(
    do_not_convert=do_not_convert,
    set_loop_options=set_loop_options,
    Feature=Feature,
)
