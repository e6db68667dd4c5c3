"""``ft.TensorShape``: a tuple of ints with TensorFlow's helpers (``as_list``, ``rank``)."""


class TensorShape(tuple):
    """The static shape of a tensor. Compares equal to lists and tuples of the same dims.

    >>> import ferrotape as ft
    >>> s = ft.zeros([2, 3]).shape
    >>> s == [2, 3], s.as_list(), s.rank, s.num_elements()
    (True, [2, 3], 2, 6)
    """

    __slots__ = ()

    def __new__(cls, dims=()):
        return super().__new__(cls, (int(d) for d in dims))

    def as_list(self):
        return list(self)

    @property
    def rank(self):
        return len(self)

    ndims = rank

    @property
    def dims(self):
        return list(self)

    def num_elements(self):
        n = 1
        for d in self:
            n *= d
        return n

    def is_fully_defined(self):
        return True

    def __eq__(self, other):
        try:
            return tuple(self) == tuple(int(d) for d in other)
        except TypeError:
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
