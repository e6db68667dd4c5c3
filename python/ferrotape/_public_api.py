"""Errors leaving a public function name the function.

An error raised inside ``tf.math.cumsum`` (by an argument's conversion, by numpy underneath, or
by a check) gets a note below its message, ``while calling 'cumsum'``, as the native ops' errors
do (``#[op_errors]`` in the bindings) and as PyO3 names an argument it could not convert
(``while processing 'axis'``). The message itself stays TensorFlow's, so programs that match
TF's wording keep working; the note says which op refused the value when the traceback ends deep
in the library.

The public functions written in Python are wrapped once, when ``ferrotape`` is imported, in the
op namespaces of ``OP_NAMESPACES``. A function exported under several names (``tf.cumsum`` and
``tf.math.cumsum``) gets one wrapper, so the names stay the same object. Native functions are not
wrapped here: a Python frame would cost them a third of a small op's time, and their notes come
from the bindings.

The same wrappers filter tracebacks, as TensorFlow and Keras do: an error leaving a public
function, a Keras layer's call or ``fit``/``evaluate``/``predict`` shows the user's frames, the
wrapper's and the line that raised, not every library frame between them.
``tf.debugging.disable_traceback_filtering()`` (``keras.config``'s too) shows them all again.
A layer's error also names the layer and the arguments of its ``call``, as Keras 3 words it
(``call_failed``).
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import sys
import types

# Frames of files under this directory are the library's own (hidden by filtering).
_LIBRARY = os.path.dirname(os.path.abspath(__file__)) + os.sep
# tf.debugging's and keras.config's switch (on by default, as in both).
_filtering = {"enabled": True}

# The namespaces whose functions are ops (relative to ``ferrotape``; "" is ``tf`` itself).
OP_NAMESPACES = (
    "",
    "math",
    "math.special",
    "nn",
    "linalg",
    "random",
    "signal",
    "image",
    "debugging",
)


def note_op(error: BaseException, name: str) -> None:
    """Adds "while calling 'NAME'" below ``error``'s message unless the message or a note
    names the op already."""
    note = f"while calling '{name}'"
    if note in getattr(error, "__notes__", ()):
        return
    if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", str(error)):
        return
    if hasattr(error, "add_note"):  # Python 3.11 and later
        error.add_note(note)


def set_traceback_filtering(enabled: bool) -> None:
    _filtering["enabled"] = bool(enabled)


def is_traceback_filtering_enabled() -> bool:
    return _filtering["enabled"]


def without_library_frames(traceback: types.TracebackType | None):
    """``traceback`` without the frames of ferrotape's own files, except the innermost one
    (the line that raised, or that called the native op that did)."""
    entries = []
    while traceback is not None:
        entries.append(traceback)
        traceback = traceback.tb_next
    kept = None
    for depth, entry in enumerate(reversed(entries)):
        if depth == 0 or not entry.tb_frame.f_code.co_filename.startswith(_LIBRARY):
            kept = types.TracebackType(kept, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return kept


def filtered(error: BaseException) -> BaseException:
    """``error`` with its traceback filtered, when filtering is on (to re-raise it)."""
    if _filtering["enabled"]:
        error = error.with_traceback(without_library_frames(error.__traceback__))
    return error


def filter_traceback(function, op: str | None = None):
    """Decorates a public function or method (``Model.fit``) so that its errors leave with a
    filtered traceback, and with a note naming ``op`` when given."""

    @functools.wraps(function)
    def call(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Exception as error:
            if op is not None:
                note_op(error, op)
            raise filtered(error)  # noqa: B904 (the same exception: its cause and context stay)

    return call


def call_failed(error: Exception, owner: str, call, args: tuple, kwargs: dict) -> Exception:
    """The error to raise for ``error`` escaping ``call(*args, **kwargs)``, the bound ``call``
    of ``owner`` (``"Dense.call()"``): Keras 3's message, naming the call and the arguments it
    received, in an exception of the same type, to raise ``from error.__cause__``. Only the
    innermost failing call adds this; with filtering off, or for an exception type built from
    other arguments, ``error`` itself."""
    if not _filtering["enabled"] or getattr(error, "_call_arguments_shown", False):
        return error
    try:
        signature = inspect.signature(call)
        bound = signature.bind_partial(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return error
    parameters = signature.parameters.values()
    lines = [
        f"  • {p.name}={_argument(bound[p.name]) if p.name in bound else p.default}"
        for p in parameters
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in bound
    ]
    message = error.args[0] if error.args else str(error)
    message = (
        f"Exception encountered when calling {owner}.\n\n\x1b[1m{message}\x1b[0m\n\n"
        f"Arguments received by {owner}:\n" + "\n".join(lines)
    )
    try:
        replacement = type(error)(message)
    except Exception:
        return error  # a type that takes other arguments keeps its own message
    replacement.__notes__ = list(getattr(error, "__notes__", ()))
    replacement._call_arguments_shown = True
    return filtered(replacement.with_traceback(error.__traceback__))


def raise_call_failed(error: Exception, layer, args: tuple, kwargs: dict):
    """Raises ``error``, which escaped ``layer.call(*args, **kwargs)``, as Keras 3 does: with
    the layer's call and its arguments named (``call_failed``)."""
    replacement = call_failed(error, f"{type(layer).__name__}.call()", layer.call, args, kwargs)
    if replacement is error:
        raise error
    raise replacement from error.__cause__


def _argument(value):
    """An argument as Keras shows it: tensors by shape and dtype, nests element by element."""
    from . import _core, nest

    def show(item):
        if isinstance(item, _core.Tensor | _core.Variable):
            return f"tf.Tensor(shape={tuple(item.shape)}, dtype={item.dtype.name})"
        if hasattr(item, "shape") and hasattr(item, "dtype") and hasattr(item, "__array__"):
            return f"np.ndarray(shape={tuple(item.shape)}, dtype={item.dtype})"
        return repr(item)

    try:
        return nest.map_structure(show, value)
    except Exception:
        return show(value)


def _named(function: types.FunctionType):
    call = filter_traceback(function, op=function.__name__)
    # `functools.wraps` keeps the defining module and name: doctest collects a docstring only in
    # the module an object says it comes from, so the examples run once, with that module's
    # globals (in the `ferrotape` namespace itself, `print` is `tf.print`).
    call.__names_errors__ = True
    return call


def name_errors() -> None:
    """Wraps the Python functions of every namespace in ``OP_NAMESPACES`` (once each)."""
    root = sys.modules["ferrotape"]  # still importing: this runs at the end of its __init__
    wrapped: dict[int, object] = {}
    for path in OP_NAMESPACES:
        module = functools.reduce(getattr, path.split(".") if path else (), root)
        for name in getattr(module, "__all__", None) or dir(module):
            function = vars(module).get(name)  # not getattr: that would load ft.keras
            if name.startswith("_") or type(function) is not types.FunctionType:
                continue
            if not function.__module__.startswith("ferrotape"):
                continue
            if getattr(function, "__names_errors__", False):
                continue  # wrapped already (a module imported twice)
            if id(function) not in wrapped:
                wrapped[id(function)] = _named(function)
            setattr(module, name, wrapped[id(function)])
