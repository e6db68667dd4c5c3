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
"""

from __future__ import annotations

import functools
import re
import sys
import types

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


def _named(function: types.FunctionType, module: str, name: str):
    @functools.wraps(function)
    def call(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Exception as error:
            note_op(error, function.__name__)
            raise

    # Pickle and the docs find the wrapper under its public name.
    call.__module__, call.__qualname__ = module, name
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
                wrapped[id(function)] = _named(function, module.__name__, name)
            setattr(module, name, wrapped[id(function)])
