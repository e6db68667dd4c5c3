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

from . import errors


class Iterator:
    """An iterator over a dataset's elements as ferrotape tensors (nests of them)."""

    def __init__(self, elements, convert):
        """Wraps ``elements`` (``iter(dataset)`` makes one).

        Args:
            elements: An iterator over the elements as numpy nests.
            convert: Turns one numpy element into tensors.
        """
        self._elements = elements
        self._convert = convert

    def __iter__(self):
        return self

    def __next__(self):
        return self._convert(next(self._elements))

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
