"""``ft.TensorArray``: TensorFlow's list of same-dtype tensors for loops, in its eager form.

As eager TensorFlow does, it is a Python list of tensors: ``write`` stores a tensor and returns
the array itself, ``stack``/``gather``/``concat`` join the stored tensors with ferrotape's
``stack``/``concat``, so gradients flow from the joined result back to whatever was written.
Elements never written read as zeros when the element shape is known.
"""

from . import _core
from .dtypes import as_dtype
from .errors import InvalidArgumentError, OutOfRangeError
from .tensor_shape import TensorShape


def _index(value):
    return int(value.numpy()) if _core.is_tensor(value) else int(value)


class TensorArray:
    """A list of tensors of one dtype (and, with ``infer_shape``, one shape) that loops fill
    with ``write`` and read back whole with ``stack``.

    >>> import ferrotape as ft
    >>> ta = ft.TensorArray(ft.float32, size=0, dynamic_size=True)
    >>> for i in range(3):
    ...     ta = ta.write(i, ft.constant(float(i)) * 2.0)
    >>> ta.stack().numpy()
    array([0., 2., 4.], dtype=float32)
    """

    def __init__(
        self,
        dtype,
        size=None,
        dynamic_size=None,
        clear_after_read=None,
        tensor_array_name=None,
        handle=None,
        flow=None,
        infer_shape=True,
        element_shape=None,
        colocate_with_first_write_call=True,
        name=None,
    ):
        """An array of ``size`` unwritten elements.

        Args:
            dtype: The elements' dtype.
            size: The initial number of elements (an int or int scalar tensor): required.
            dynamic_size: Whether writes past the end grow the array (default false).
            clear_after_read: Whether ``read`` forgets the element it returns (default true),
                so a second read of it is an error.
            tensor_array_name: Ignored.
            handle: Unsupported (graph mode's); must be None.
            flow: Ignored.
            infer_shape: Whether the first write fixes the element shape for later ones.
            element_shape: The elements' shape, if known (``None`` dims allowed).
            colocate_with_first_write_call: Ignored.
            name: Ignored.

        Raises:
            ValueError: without ``size``, or with a ``handle``.
        """
        del tensor_array_name, flow, colocate_with_first_write_call, name
        if handle is not None:
            raise ValueError(
                "TensorArray: handles are not supported when eager execution is enabled."
            )
        if size is None:
            raise ValueError(
                "TensorArray: Size must be declared for TensorArrays when eager execution is "
                "enabled."
            )
        self._dtype = as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = infer_shape
        self._shape = None if element_shape is None else list(TensorShape(element_shape))
        self._items = [None] * _index(size)
        self._read = set()

    @property
    def dtype(self):
        """The elements' dtype."""
        return self._dtype

    @property
    def dynamic_size(self):
        """Whether writes past the end grow the array."""
        return self._dynamic_size

    @property
    def element_shape(self):
        """The elements' shape as far as known (a ``TensorShape``), or ``None`` while nothing
        is known of it (ferrotape has no shape of unknown rank)."""
        return None if self._shape is None else TensorShape(self._shape)

    @property
    def flow(self):
        """A placeholder int32 zero: flows order graph-mode ops and mean nothing eagerly."""
        return _core.constant(0)

    @property
    def handle(self):
        """``None``: handles are graph mode's."""
        return None

    def identity(self):
        """The array itself (graph mode's copy of the handle).

        Returns:
            This ``TensorArray``.
        """
        return self

    def grad(self, source, flow=None, name=None):
        """Not available eagerly: gradients reach the written tensors through ``stack``.

        Args:
            source: Ignored.
            flow: Ignored.
            name: Ignored.

        Raises:
            NotImplementedError: always, as in eager TensorFlow.
        """
        raise NotImplementedError(
            "TensorArray.grad is not supported when executing eagerly; gradients flow through "
            "the tensors read, stacked or gathered from it."
        )

    def _element(self, i):
        """Element ``i``, zeros (stored) if it was never written."""
        if self._items[i] is None:
            if self._shape is None or None in self._shape:
                raise InvalidArgumentError(
                    f"TensorArray: element {i} was never written and the element shape "
                    f"{self._shape} is not fully defined, so it cannot be read as zeros"
                )
            self._items[i] = _core.zeros(self._shape, self._dtype)
        return self._items[i]

    def read(self, index, name=None):
        """The element at ``index`` (zeros if never written; forgotten afterwards when
        ``clear_after_read``).

        Args:
            index: An int (or int scalar tensor) in ``[0, size)``.
            name: Ignored.

        Returns:
            A tensor.

        Raises:
            OutOfRangeError: for an index outside the array.
            InvalidArgumentError: for an element cleared by an earlier read.
        """
        del name
        i = _index(index)
        if not 0 <= i < len(self._items):
            raise OutOfRangeError(
                f"TensorArray.read: Tried to read from index {i} but array size is: "
                f"{len(self._items)}"
            )
        if self._items[i] is None and i in self._read:
            raise InvalidArgumentError(
                f"TensorArray.read: Could not read index {i} twice because it was cleared "
                f"after a previous read (perhaps try setting clear_after_read = false?)"
            )
        value = self._element(i)
        if self._clear_after_read:
            self._items[i] = None
            self._read.add(i)
        return value

    def _store(self, i, value):
        if i < 0:
            raise OutOfRangeError(f"TensorArray.write: Writing to negative indices (index {i})")
        if i >= len(self._items):
            if not self._dynamic_size:
                raise OutOfRangeError(
                    f"TensorArray.write: Tried to write to index {i} but array is not "
                    f"resizeable and size is: {len(self._items)}"
                )
            self._items.extend([None] * (i + 1 - len(self._items)))
        if not _core.is_tensor(value):
            value = _core.convert_to_tensor(value, dtype=self._dtype)
        if value.dtype != self._dtype:
            raise InvalidArgumentError(
                f"TensorArray.write: TensorArray dtype is {self._dtype.name} but Op is trying "
                f"to write dtype {value.dtype.name}"
            )
        shape = list(value.shape)
        known = self._shape
        if known is not None and (
            len(known) != len(shape)
            or any(k not in (None, d) for k, d in zip(known, shape, strict=True))
        ):
            raise ValueError(
                f"TensorArray.write: Incompatible shape for value ({shape}), expected ({known})"
            )
        if self._infer_shape:
            self._shape = shape
        self._items[i] = value

    def write(self, index, value, name=None):
        """Stores ``value`` at ``index`` (growing the array if ``dynamic_size``).

        Args:
            index: An int (or int scalar tensor).
            value: A tensor of the array's dtype (and element shape).
            name: Ignored.

        Returns:
            The array itself, for TensorFlow's ``ta = ta.write(i, x)`` style.

        Raises:
            OutOfRangeError: for a negative index, or one past a fixed size.
            InvalidArgumentError: for another dtype.
            ValueError: for a shape incompatible with the element shape.
        """
        del name
        self._store(_index(index), value)
        return self

    def stack(self, name=None):
        """The elements stacked along a new first axis (unwritten ones as zeros).

        Args:
            name: Ignored.

        Returns:
            A tensor ``[size] + element_shape``.

        Gradient: each element's slice of the upstream gradient flows to what was written.
        """
        del name
        if not self._items:
            shape = [d or 0 for d in self._shape] if self._shape is not None else []
            return _core.zeros([0, *shape], self._dtype)
        return _core.stack([self._element(i) for i in range(len(self._items))], 0)

    def gather(self, indices, name=None):
        """The elements at ``indices``, stacked.

        Args:
            indices: A 1-D int list or tensor.
            name: Ignored.

        Returns:
            A tensor ``[len(indices)] + element_shape``.
        """
        del name
        positions = indices.numpy().tolist() if _core.is_tensor(indices) else list(indices)
        return _core.stack([self._element(int(i)) for i in positions], 0)

    def concat(self, name=None):
        """The elements joined along their first axis.

        Args:
            name: Ignored.

        Returns:
            A tensor.

        Raises:
            InvalidArgumentError: if an element is a scalar.
        """
        del name
        parts = [self._element(i) for i in range(len(self._items))]
        for i, p in enumerate(parts):
            if p.ndim == 0:
                raise InvalidArgumentError(
                    f"TensorArray.concat: Concat saw a scalar shape at index {i} but requires "
                    f"at least vectors."
                )
        return _core.concat(parts, 0)

    def unstack(self, value, name=None):
        """Replaces the elements by the slices of ``value`` along its first axis.

        Args:
            value: A tensor of rank at least 1.
            name: Ignored.

        Returns:
            The array itself.

        Raises:
            ValueError: for more slices than a fixed size holds.
        """
        del name
        parts = _core.unstack(_core.convert_to_tensor(value, dtype=self._dtype), axis=0)
        if len(parts) > len(self._items) and not self._dynamic_size:
            raise ValueError(
                f"TensorArray.unstack: Cannot unstack {len(parts)} tensors into a TensorArray "
                f"of static size {len(self._items)}"
            )
        self._items = list(parts)
        return self

    def scatter(self, indices, value, name=None):
        """Writes the slices of ``value`` along its first axis at ``indices``.

        Args:
            indices: A 1-D int list or tensor.
            value: A tensor ``[len(indices)] + element_shape``.
            name: Ignored.

        Returns:
            The array itself.
        """
        del name
        positions = indices.numpy().tolist() if _core.is_tensor(indices) else list(indices)
        parts = _core.unstack(_core.convert_to_tensor(value, dtype=self._dtype), axis=0)
        for i, part in zip(positions, parts, strict=True):
            self._store(int(i), part)
        return self

    def split(self, value, lengths, name=None):
        """Replaces the elements by consecutive pieces of ``value`` of ``lengths`` rows.

        Args:
            value: A tensor of rank at least 1.
            lengths: A 1-D int list: the rows of each piece, summing to ``value.shape[0]``.
            name: Ignored.

        Returns:
            The array itself.

        Raises:
            InvalidArgumentError: for lengths that do not fit ``value`` or the array's size.
        """
        del name
        value = _core.convert_to_tensor(value, dtype=self._dtype)
        sizes = lengths.numpy().tolist() if _core.is_tensor(lengths) else list(lengths)
        if value.ndim == 0 or sum(sizes) != value.shape[0]:
            raise InvalidArgumentError(
                f"TensorArray.split: Expected sum of lengths to be equal to values.shape[0], "
                f"but sum of lengths is {sum(sizes)} and value's shape is: {list(value.shape)}"
            )
        if not self._dynamic_size and len(sizes) != len(self._items):
            raise InvalidArgumentError(
                f"TensorArray.split: TensorArray's size is not equal to the size of lengths "
                f"({len(self._items)} vs. {len(sizes)}), and the TensorArray is not marked as "
                f"dynamically resizeable."
            )
        self._items = list(_core.split(value, sizes, 0))
        return self

    def size(self, name=None):
        """The number of elements, as an int32 scalar tensor.

        Args:
            name: Ignored.

        Returns:
            A tensor.
        """
        del name
        return _core.constant(len(self._items))

    def close(self, name=None):
        """Forgets every element (the size becomes 0).

        Args:
            name: Ignored.
        """
        del name
        self._items.clear()
