"""``ft.print``: TensorFlow's ``tf.print``, with its formatting of tensors.

The text is built as TensorFlow builds it: each input that is not a string is laid out with
``pprint.pformat`` (tensors stand in as a placeholder), the pieces are joined with ``sep``, and
each placeholder is replaced by the tensor's summary. A summary shows at most ``summarize``
entries from each end of every axis (``...`` between), bools as 1/0, and floats as C's
``%.6g`` (float32, float16, bfloat16) or ``%.15g`` (float64), widened to 9 or 17 significant
digits when the short form does not read back as the same number.

Output goes to ``sys.stderr`` by default (the stream current at the call), ``sys.stdout``, a
``logging`` level or function (logged by the ``ferrotape`` logger), or is appended to a file
named ``"file://<path>"``.
"""

import logging
import os
import pprint
import random
import sys

import numpy as np

from . import _core, nest

_LEVELS = {
    logging.INFO: logging.INFO,
    logging.info: logging.INFO,
    logging.WARNING: logging.WARNING,
    logging.warning: logging.WARNING,
    logging.warn: logging.WARNING,
    logging.ERROR: logging.ERROR,
    logging.error: logging.ERROR,
}


def _is_tensor(x):
    return isinstance(x, (_core.Tensor, _core.Variable))


def _float_text(value, short, full):
    """C's ``%.{short}g``, or ``%.{full}g`` when the short text does not read back exactly."""
    value = float(value)
    if np.isnan(value):
        return "nan"
    if np.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = format(value, f".{short}g")
    return text if float(text) == value else format(value, f".{full}g")


def _element(value, dtype):
    if dtype == "bool":
        return "1" if value else "0"
    if dtype == "float64":
        return _float_text(value, 15, 17)
    if dtype in ("float32", "float16", "bfloat16"):
        # float16/bfloat16 print as the float32 they widen to, as in TensorFlow.
        f32 = np.float32(value)
        text = format(float(f32), ".6g")
        return text if np.float32(text) == f32 else _float_text(f32, 9, 9)
    return str(int(value))


def _spacing(dim, rank):
    """The separator between two entries of axis ``dim`` (TensorFlow's PrintDimSpacing)."""
    if dim == rank - 1:
        return " "
    return "\n" * (rank - dim - 1) + " " * (dim + 1)


def _summary(array, dtype, limit):
    """TensorFlow's ``SummarizeValue`` (print_v2) of ``array``: ``limit`` entries per end."""
    if dtype == "bool" and limit == 0:
        return ""  # TensorFlow's bool summary shows nothing at all when no entry fits
    if array.ndim == 0:
        return _element(array[()], dtype) if limit > 0 else "..."
    out = []

    def walk(dim, index):
        if dim == array.ndim:
            out.append(_element(array[index], dtype))
            return
        out.append("[")
        count = array.shape[dim]
        for i in range(min(limit, count)):
            if i > 0:
                out.append(_spacing(dim, array.ndim))
            walk(dim + 1, (*index, i))
        if count > 2 * limit:
            out.append(_spacing(dim, array.ndim))
            out.append("...")
        for i in range(max(limit, count - limit), count):
            out.append(_spacing(dim, array.ndim))
            walk(dim + 1, (*index, i))
        out.append("]")

    walk(0, ())
    return "".join(out)


def format_tensor(tensor, summarize=3):
    """The text ``ft.print`` shows for ``tensor``.

    Args:
        tensor: A tensor or variable.
        summarize: Entries shown from each end of every axis; -1 shows all, None means 3.

    Returns:
        A str.

    >>> import ferrotape as ft
    >>> format_tensor(ft.range(10))
    '[0 1 2 ... 7 8 9]'
    >>> format_tensor(ft.constant([[0.5, 1.0], [1 / 3, 2.0]]))
    '[[0.5 1]\\n [0.333333343 2]]'
    """
    # Read without refusing a trace: inside ``ft.function`` the print is recorded as an effect
    # that runs again with the replayed values (see ``print``).
    array = np.asarray(_core.host_value(tensor))
    summarize = 3 if summarize is None else int(summarize)
    limit = array.size if summarize < 0 else min(summarize, array.size)
    return _summary(array, tensor.dtype.name, limit)


def _placeholder(text):
    # TensorFlow's choice: "{}", lengthened with seeded random digits until it is not in text.
    placeholder, rng = "{}", random.Random(5)
    while placeholder in text:
        placeholder += str(rng.randint(0, 9))
    return placeholder


def _template(inputs, sep):
    """The text with one placeholder per tensor, the placeholder, and the tensors in order."""
    free = nest.map_structure(lambda x: "" if _is_tensor(x) else x, list(inputs))
    placeholder = _placeholder(" ".join(pprint.pformat(x) for x in free))
    pieces, tensors = [], []
    for item in inputs:
        leaves = []
        for leaf in nest.flatten(item):
            if _is_tensor(leaf):
                tensors.append(leaf)
                leaves.append(placeholder)
            else:
                leaves.append(leaf)
        if isinstance(item, str):
            pieces.append(item)
        else:
            pieces.append(pprint.pformat(nest.pack_sequence_as(item, leaves)))
    template = sep.join(pieces).replace(f"'{placeholder}'", placeholder)
    return template, placeholder, tensors


def _write(text, output_stream):
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        with open(output_stream[len("file://") :], "a", encoding="utf-8") as f:
            f.write(text)
    elif output_stream is sys.stdout or output_stream is sys.stderr:
        output_stream.write(text)
        output_stream.flush()
    else:
        level = _LEVELS.get(output_stream) if not isinstance(output_stream, bool) else None
        if level is None:
            raise ValueError(
                f"print: unsupported output stream, logging level, or file: {output_stream!r}. "
                f"Supported streams are sys.stdout, sys.stderr, logging.info, logging.warning, "
                f"logging.error (or their levels). A file needs to be in the form of "
                f"'file://<filepath>'."
            )
        logging.getLogger("ferrotape").log(level, text.rstrip("\n"))


def print(*inputs, **kwargs):  # noqa: A001 - TensorFlow's name
    """Prints tensors (and other values) with TensorFlow's formatting.

    Args:
        *inputs: Tensors, variables, strings and other Python values, or nests of them.
            Strings print as they are; other values as ``pprint`` shows them, with each tensor
            shown by its summary.
        **kwargs: ``output_stream`` (``sys.stderr`` by default, ``sys.stdout``, a ``logging``
            level or function, or ``"file://<path>"`` to append to a file), ``summarize``
            (entries shown from each end of every axis, 3 by default, -1 for all), ``sep``
            (between inputs, ``" "``), ``end`` (``os.linesep``) and ``name`` (ignored).

    Returns:
        None (eager TensorFlow's print op has nothing to return).

    Raises:
        ValueError: for an unknown keyword or output stream.

    >>> import sys
    >>> import ferrotape as ft
    >>> ft.print("x:", ft.constant([[1.5, 2.0], [3.0, 4.0]]), output_stream=sys.stdout)
    x: [[1.5 2]
     [3 4]]
    >>> ft.print(ft.range(10), {"step": ft.constant(2)}, output_stream=sys.stdout)
    [0 1 2 ... 7 8 9] {'step': 2}
    """
    output_stream = kwargs.pop("output_stream", sys.stderr)
    kwargs.pop("name", None)
    summarize = kwargs.pop("summarize", 3)
    sep = kwargs.pop("sep", " ")
    end = kwargs.pop("end", os.linesep)
    if kwargs:
        raise ValueError(f"print: unrecognized keyword arguments: {kwargs}")
    template, placeholder, tensors = _template(inputs, sep)
    parts = template.split(placeholder)

    def emit(*values):
        text = parts[0]
        for tensor, rest in zip(values, parts[1:], strict=True):
            text += format_tensor(tensor, summarize) + rest
        _write(text + end, output_stream)

    emit(*tensors)
    if _core.is_tracing():
        # Inside ft.function: print again on every replayed call, as TensorFlow's print op.
        _core.trace_host_effect(emit, list(tensors), output_only=True)


__all__ = ["format_tensor", "print"]
