"""The iterators of ``ft.data`` datasets: ``tf.data.Iterator`` (what ``iter(dataset)``
returns: tensors, and ``get_next``) and ``tf.data.NumpyIterator`` (what
``as_numpy_iterator`` returns: numpy values).

>>> import ferrotape as ft
>>> it = iter(ft.data.Dataset.range(2))
>>> isinstance(it, ft.data.Iterator), int(it.get_next()), int(next(it))
(True, 0, 1)
>>> list(ft.data.Dataset.range(2).as_numpy_iterator())
[array(0), array(1)]
"""

import numpy as np

from . import _core, errors

# What a replay fetched at the end of the elements (see ``Iterator._next_in_trace``).
_END = object()


class Iterator:
    """An iterator over a dataset's elements as ferrotape tensors (nests of them).

    Inside a function ``ft.function`` traces, each element is a host computation of the trace
    (see ``_next_in_trace``): every replay fetches the next element, as TensorFlow's iterator
    ops do, instead of replaying the batch the trace saw.
    """

    def __init__(self, elements, convert, restart=None):
        """Wraps ``elements`` (``iter(dataset)`` makes one).

        Args:
            elements: An iterator over the elements as numpy nests.
            convert: Turns one numpy element into tensors.
            restart: Makes a fresh iterator over the same elements (the dataset's), for a
                checkpoint's restore.
        """
        self._elements = elements
        self._convert = convert
        self._make_elements = restart
        # How many elements were taken: what a checkpoint saves (see _checkpoint_children).
        self._taken = 0
        self._position_node = None
        # The element (or _END) fetched and not yet taken: a replay that fetched it then took
        # another path (a batch of a new shape, the end of the elements), so the trace of that
        # path, recorded next, takes it.
        self._fetched = None

    def __iter__(self):
        return self

    def __next__(self):
        if _core.is_tracing():
            return self._next_in_trace()
        element = self._fetch()
        self._fetched = None
        if element is _END:
            raise StopIteration
        self._taken += 1
        return self._convert(element)

    def _fetch(self):
        if self._fetched is None:
            try:
                self._fetched = next(self._elements)
            except StopIteration:
                self._fetched = _END
        return self._fetched

    def _restart(self, elements):
        """Starts again on ``elements`` (a replay's ``iter(dataset)``)."""
        self._elements, self._fetched, self._taken = elements, None, 0

    # A checkpoint saves an iterator's position (ferrotape.trackable): the number of elements
    # taken, as the value of a child node ``_position``. TensorFlow saves its iterator's own
    # attribute (a serialized pipeline state, which ferrotape can neither write nor read) and
    # restores that attribute from any node it pairs with its iterator: keeping ferrotape's value
    # one node below leaves TensorFlow an iterator node without attributes, which it skips, and
    # a child it does not know, which it reports as unused. Restoring iterates the dataset afresh
    # and skips that many elements: the same position for a pipeline whose order is fixed (or
    # seeded), not the same shuffle buffer for an unseeded shuffle, which TensorFlow's state
    # would restore.
    def _checkpoint_children(self):
        # One node object for the iterator's life: a restore pairs saved nodes with objects.
        if self._position_node is None:
            self._position_node = _IteratorPosition(self)
        return [("_position", self._position_node)]

    def _restore_position(self, position):
        if self._make_elements is None:
            raise ValueError(
                "Checkpoint.restore: this iterator cannot start again from its dataset, so "
                "its saved position cannot be restored"
            )
        elements = self._make_elements()
        for taken in range(position):
            if next(elements, _END) is _END:
                raise ValueError(
                    f"Checkpoint.restore: the iterator was saved after {position} elements, "
                    f"but its dataset now has {taken}"
                )
        self._elements, self._fetched, self._taken = elements, None, position

    def _next_in_trace(self):
        """``next`` while a trace is recorded: the pipeline runs in Python, so an element made
        here would be a constant of the trace. Instead two host computations fetch it on every
        replay: the first gives whether there was an element and a hash of its components'
        shapes and dtypes, which the trace guards (a replay meeting the end of the elements or
        a smaller last batch takes another path, traced when new); the second gives the
        element's tensors."""
        from .data import _flatten, _pack  # the element structure's rules live there
        from .polymorphic_function import host_computed

        element = self._fetch()
        if element is not _END:
            converted = self._convert(element)
            if not all(isinstance(c, _core.Tensor) for c in _flatten(converted)):
                _core.trace_refuse(
                    "an element of a dataset iterated inside it holds datasets (windows), "
                    "which a replay cannot fetch again"
                )
                self._fetched = None
                return converted

        def fetch():
            return [np.asarray(_signature(self._fetch(), _flatten), np.int64)]

        ended, _ = host_computed(fetch, [])[0].numpy().tolist()  # guarded
        if ended:
            self._fetched = None
            raise StopIteration

        def take():
            element, self._fetched = self._fetched, None
            self._taken += 1
            return _flatten(self._convert(element))

        return _pack(converted, host_computed(take, []))

    def get_next(self):
        """The next element.

        Returns:
            The element, as tensors.

        Raises:
            OutOfRangeError: at the end of the dataset (as TensorFlow's ``get_next``).
        """
        try:
            return next(self)
        except StopIteration:
            raise errors.OutOfRangeError("End of sequence") from None


class _IteratorPosition:
    """An iterator's position as a checkpoint saves it: an int64 ``VARIABLE_VALUE``."""

    def __init__(self, iterator):
        self._iterator = iterator

    def _checkpoint_children(self):
        return []

    def _checkpoint_values(self):
        return {"VARIABLE_VALUE": np.int64(self._iterator._taken)}

    def _restore_checkpoint_values(self, values):
        self._iterator._restore_position(int(values["VARIABLE_VALUE"]))


def _signature(element, flatten):
    """``(1, 0)`` at the end of the elements, else ``(0, h)``: ``h`` hashes the shapes and
    dtypes of the element's components (a guard compares it, so a replay cannot fill the
    trace's tensors with another shape)."""
    if element is _END:
        return (1, 0)
    parts = tuple((np.shape(c), np.asarray(c).dtype.str) for c in flatten(element))
    return (0, hash(parts))


class NumpyIterator:
    """An iterator over a dataset's elements as numpy values (``as_numpy_iterator``)."""

    def __init__(self, elements):
        """Wraps ``elements`` (``as_numpy_iterator`` makes one).

        Args:
            elements: An iterator over the elements as numpy nests.
        """
        self._elements = elements

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._elements)

    def __repr__(self):
        return "NumpyIterator()"


__all__ = ["Iterator", "NumpyIterator"]
