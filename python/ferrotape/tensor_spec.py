"""``ft.TensorSpec``: the shape, dtype and name that describe a set of tensors.

Used where TensorFlow describes values instead of holding them: ``map_fn``'s
``fn_output_signature``, ``tf.function``'s ``input_signature``, ``tf.data`` signatures. A
dimension of ``None`` matches any size; a shape of ``None`` (unknown rank) matches any shape, and
then ``spec.shape`` is ``None`` (ferrotape's ``TensorShape`` has no unknown-rank form).

Equality compares shape, dtype and name; the hash leaves the name out, as TensorFlow's does.
"""

import reprlib

from . import _core
from .dtypes import DType, float32
from .tensor_shape import TensorShape


def _shape_or_none(shape):
    """``shape`` as a TensorShape, or None for unknown rank."""
    if shape is None or isinstance(shape, TensorShape):
        return shape
    if hasattr(shape, "numpy"):
        shape = shape.numpy().tolist()
    elif hasattr(shape, "tolist"):
        shape = shape.tolist()
    try:
        return TensorShape(shape)
    except TypeError:
        raise TypeError(
            f"TensorSpec: shape must be None, an int or a list of ints or None, received "
            f"{reprlib.repr(shape)}"
        ) from None


def _compatible(a, b):
    """Whether two shapes (TensorShape or None for unknown rank) can describe one tensor."""
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(
        x is None or y is None or x == y for x, y in zip(a, b, strict=True)
    )


class TypeSpec:
    """The base class of the specs of values a ``tf.function`` takes (TensorFlow's
    ``tf.TypeSpec``); ferrotape's one kind is ``TensorSpec``."""

    __slots__ = ()


class TensorSpec(TypeSpec):
    """Describes a tensor by its shape, dtype and an optional name (``tf.TensorSpec``).

    Args:
        shape: The shape: a list of ints or None (unknown dimensions), a ``TensorShape``, an
            int (one dimension), or None (unknown rank).
        dtype: The dtype (anything ``ft.as_dtype`` takes); float32 by default.
        name: An optional name (any value; TensorFlow does not check it either).

    Raises:
        TypeError: for a dtype or dimension that cannot be converted.
        ValueError: for a negative dimension.

    >>> import ferrotape as ft
    >>> spec = ft.TensorSpec([None, 2], ft.float32, name="x")
    >>> spec
    TensorSpec(shape=(None, 2), dtype=tf.float32, name='x')
    >>> spec.is_compatible_with(ft.zeros([5, 2]))
    True
    >>> ft.TensorSpec.from_tensor(ft.constant([1, 2]))
    TensorSpec(shape=(2,), dtype=tf.int32, name=None)
    """

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype=float32, name=None):
        """A spec of ``shape``, ``dtype`` and ``name``.

        Args:
            shape: A list of ints or None, a ``TensorShape``, an int, or None (unknown rank).
            dtype: The dtype (float32 by default).
            name: An optional name.
        """
        self._shape = _shape_or_none(shape)
        self._dtype = DType(dtype)
        self._name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        """The spec of ``tensor``: its shape and dtype.

        Args:
            tensor: A ``ft.Tensor`` (not a Variable, NumPy array or Python value, as in TF).
            name: The spec's name.

        Returns:
            A ``TensorSpec``.

        Raises:
            ValueError: if ``tensor`` is not a tensor.
        """
        if not isinstance(tensor, _core.Tensor):
            raise ValueError(
                f"TensorSpec.from_tensor: `tensor` should be a tf.Tensor, but got type "
                f"{type(tensor)}."
            )
        return cls(tensor.shape, tensor.dtype, name)

    @classmethod
    def from_spec(cls, spec, name=None):
        """A copy of ``spec``, renamed to ``name`` when one is given.

        Args:
            spec: A ``TensorSpec``.
            name: The new name; ``None`` keeps ``spec``'s.

        Returns:
            A ``TensorSpec``.
        """
        return cls(spec.shape, spec.dtype, spec.name if name is None else name)

    @property
    def shape(self):
        """The ``TensorShape``, or None when the rank is unknown."""
        return self._shape

    @property
    def dtype(self):
        """The ``DType``."""
        return self._dtype

    @property
    def name(self):
        """The name (None when not given)."""
        return self._name

    @property
    def value_type(self):
        """The type of the values this spec describes: ``ft.Tensor``."""
        return _core.Tensor

    def is_compatible_with(self, spec_or_value):
        """Whether ``spec_or_value`` (a spec or a tensor) fits this spec; names are ignored.

        Args:
            spec_or_value: A ``TensorSpec`` or a tensor. Other values (NumPy arrays, Python
                numbers, Variables) are not tensors and give False, as in TensorFlow.

        Returns:
            True when the dtypes are equal and the shapes agree wherever both are known.
        """
        if isinstance(spec_or_value, TensorSpec):
            other_shape = spec_or_value.shape
        elif isinstance(spec_or_value, _core.Tensor):
            other_shape = spec_or_value.shape
        else:
            return False
        return self._dtype == spec_or_value.dtype and _compatible(self._shape, other_shape)

    def is_subtype_of(self, other):
        """Whether every tensor this spec describes is also described by ``other``.

        Args:
            other: A ``TensorSpec``.

        Returns:
            A bool; names must be equal too.
        """
        if not isinstance(other, TensorSpec) or (self._dtype, self._name) != (
            other.dtype,
            other.name,
        ):
            return False
        if other.shape is None:
            return True
        if self._shape is None or len(self._shape) != len(other.shape):
            return False
        return all(o is None or s == o for s, o in zip(self._shape, other.shape, strict=True))

    def most_specific_common_supertype(self, others):
        """The narrowest spec that describes everything this spec and ``others`` describe.

        Args:
            others: A list of ``TensorSpec``.

        Returns:
            A ``TensorSpec`` with ``None`` where the dimensions differ (unknown rank where the
            ranks differ), or None when a dtype or name differs.
        """
        shape = self._shape
        for other in others:
            if not isinstance(other, TensorSpec) or (other.dtype, other.name) != (
                self._dtype,
                self._name,
            ):
                return None
            if shape is None or other.shape is None or len(shape) != len(other.shape):
                shape = None
            else:
                shape = TensorShape(
                    [a if a == b else None for a, b in zip(shape, other.shape, strict=True)]
                )
        return TensorSpec(shape, self._dtype, self._name)

    def most_specific_compatible_type(self, other):
        """``most_specific_common_supertype([other])`` (TensorFlow's older name).

        Args:
            other: A ``TensorSpec``.

        Returns:
            A ``TensorSpec``.

        Raises:
            ValueError: if the dtypes or names differ.
        """
        merged = self.most_specific_common_supertype([other])
        if merged is None:
            raise ValueError(f"TensorSpec: no type is compatible with both {self!r} and {other!r}")
        return merged

    def _key(self):
        shape = None if self._shape is None else tuple(self._shape)
        return (shape, self._dtype.name)

    def __eq__(self, other):
        if type(other) is not type(self):
            return False
        return self._key() == other._key() and self._name == other.name

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self._key())

    def __reduce__(self):
        return (type(self), (self._shape, self._dtype.name, self._name))

    def __repr__(self):
        shape = "<unknown>" if self._shape is None else str(self._shape)
        return f"TensorSpec(shape={shape}, dtype={self._dtype!r}, name={self._name!r})"


__all__ = ["TensorSpec", "TypeSpec"]
