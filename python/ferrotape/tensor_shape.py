"""``ft.TensorShape``: a tuple of ints with TensorFlow's helpers (``as_list``, ``rank``).

A dimension may be None (unknown), as in TensorFlow, for shapes that describe many tensors
(Keras's ``(None, 3)``); every tensor's own shape is fully known. A shape of unknown rank
(``TensorShape(None)``) is not supported.
"""

import operator
import reprlib


class TensorShape(tuple):
    """The static shape of a tensor. Compares equal to lists and tuples of the same dims.

    >>> import ferrotape as ft
    >>> s = ft.zeros([2, 3]).shape
    >>> s == [2, 3], s.as_list(), s.rank, s.num_elements()
    (True, [2, 3], 2, 6)
    """

    __slots__ = ()

    def __new__(cls, dims=()):
        if type(dims) is tuple and all(type(d) is int and d >= 0 for d in dims):
            return super().__new__(cls, dims)  # the bindings' call: plain non-negative ints
        return super().__new__(cls, _checked_dims(dims))

    def as_list(self):
        """The dimensions as a list of ints.

        >>> import ferrotape as ft
        >>> ft.TensorShape([2, 3]).as_list()
        [2, 3]
        """
        return list(self)

    @property
    def rank(self):
        """The number of dimensions (``ndims`` is the same).

        >>> import ferrotape as ft
        >>> ft.TensorShape([2, 3]).rank
        2
        """
        return len(self)

    ndims = rank

    @property
    def dims(self):
        """The dimensions as a list (TF 2 returns ints, as here)."""
        return list(self)

    def num_elements(self):
        """The number of elements, None if a dimension is unknown."""
        n = 1
        for d in self:
            if d is None:
                return None
            n *= d
        return n

    def is_fully_defined(self):
        """Whether every dimension is known (eager tensors' shapes always are).

        >>> import ferrotape as ft
        >>> ft.TensorShape([2, 3]).is_fully_defined()
        True
        """
        return None not in self

    def __eq__(self, other):
        try:
            return tuple(self) == _checked_dims(other)
        except (TypeError, ValueError):
            return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = tuple.__hash__

    def __getitem__(self, key):
        item = super().__getitem__(key)
        return TensorShape(item) if isinstance(key, slice) else item

    def __repr__(self):
        return f"TensorShape({list(self)})"

    def __str__(self):
        return tuple.__repr__(tuple(self))


def _checked_dims(dims):
    """``dims`` as a tuple of non-negative ints or None (an int is one dimension, as in TF)."""
    if dims is None:
        raise ValueError(
            "TensorShape: shapes of unknown rank are not supported (every ferrotape tensor has "
            "a known shape); received dims=None"
        )
    if isinstance(dims, str) or not hasattr(dims, "__iter__"):
        dims = (dims,)
    out = []
    for d in dims:
        try:
            d = None if d is None else operator.index(d)
        except TypeError:
            raise TypeError(
                f"TensorShape: dimension value must be an integer or None, received "
                f"{reprlib.repr(d)}"
            ) from None
        if d is not None and d < 0:
            raise ValueError(
                f"TensorShape: dimension {d} must be >= 0, received dims={reprlib.repr(dims)}"
            )
        out.append(d)
    return tuple(out)
