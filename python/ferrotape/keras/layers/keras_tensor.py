"""Symbolic tensors and the call graph of the functional API (Keras 3's
``keras.src.backend.common.keras_tensor`` and ``keras.src.ops.node``).
"""

import numpy as np

from ... import _core, nest
from ..backend_dtypes import as_dtype
from .layer_utils import _plain_shape, _zeros_for


def _holds_keras_tensor(value, who="Layer"):
    """Whether a (nested) input holds a symbolic tensor. The walk is nest's, without
    recursion and bounded in depth, so every later recursive helper sees a shallow nest."""
    if isinstance(value, KerasTensor):
        return True
    if not isinstance(value, (list, tuple, dict)):
        return False
    leaves = nest.flatten_for(value, (list, tuple), who)
    return any(isinstance(leaf, KerasTensor) for leaf in leaves)


# ----------------------------------------------------------------------------- Input


class KerasTensor:
    """A symbolic input or layer output of a functional model: a shape (batch dim ``None``) and
    a dtype, plus the layer call that produced it."""

    def __init__(self, shape, dtype="float32", name=None, node=None):
        self.shape = _plain_shape(tuple(shape))
        self.dtype = as_dtype(dtype).name
        self.name = name
        self._node = node

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        name = f", name={self.name}" if self.name else ""
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, sparse=False{name}>"

    # A KerasTensor has no value: ferrotape's ops convert their arguments through numpy, so
    # this is where a tf.* op given one fails, with Keras 3's ValueError and its advice.
    def __array__(self, *args, **kwargs):
        raise ValueError(_NOT_A_VALUE)

    def __bool__(self):
        raise TypeError("A symbolic KerasTensor cannot be used as a boolean.")

    def __iter__(self):
        raise NotImplementedError("Iterating over a symbolic KerasTensor is not supported.")

    def reshape(self, newshape):
        """``keras.ops.reshape(self, newshape)``."""
        return _ops().reshape(self, newshape)

    def squeeze(self, axis=None):
        """``keras.ops.squeeze(self, axis)``."""
        return _ops().squeeze(self, axis=axis)

    # Arithmetic builds the functional graph through keras.ops, as in Keras 3.
    def __add__(self, other):
        return _ops().add(self, other)

    def __radd__(self, other):
        return _ops().add(other, self)

    def __sub__(self, other):
        return _ops().subtract(self, other)

    def __rsub__(self, other):
        return _ops().subtract(other, self)

    def __mul__(self, other):
        return _ops().multiply(self, other)

    def __rmul__(self, other):
        return _ops().multiply(other, self)

    def __matmul__(self, other):
        return _ops().matmul(self, other)

    def __rmatmul__(self, other):
        return _ops().matmul(other, self)

    def __truediv__(self, other):
        return _ops().true_divide(self, other)

    def __rtruediv__(self, other):
        return _ops().true_divide(other, self)

    def __floordiv__(self, other):
        return _ops().floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _ops().floor_divide(other, self)

    def __mod__(self, other):
        return _ops().mod(self, other)

    def __rmod__(self, other):
        return _ops().mod(other, self)

    def __pow__(self, other):
        return _ops().power(self, other)

    def __rpow__(self, other):
        return _ops().power(other, self)

    def __neg__(self):
        return _ops().negative(self)

    def __abs__(self):
        return _ops().absolute(self)

    def __invert__(self):
        return _ops().logical_not(self)

    def __lt__(self, other):
        return _ops().less(self, other)

    def __le__(self, other):
        return _ops().less_equal(self, other)

    def __gt__(self, other):
        return _ops().greater(self, other)

    def __ge__(self, other):
        return _ops().greater_equal(self, other)

    def __ne__(self, other):
        return _ops().not_equal(self, other)

    def __and__(self, other):
        return _ops().logical_and(self, other)

    def __rand__(self, other):
        return _ops().logical_and(other, self)

    def __or__(self, other):
        return _ops().logical_or(self, other)

    def __ror__(self, other):
        return _ops().logical_or(other, self)

    def __getitem__(self, key):
        return _ops().get_item(self, key)

    # Identity comparison and hashing stay (Keras keeps them: tensors key the graph's maps).
    __eq__ = object.__eq__
    __hash__ = object.__hash__


def _ops():
    from .. import ops  # keras.ops builds on this module

    return ops


_NOT_A_VALUE = (
    "A KerasTensor cannot be used as input to a TensorFlow function. A KerasTensor is a "
    "symbolic placeholder for a shape and dtype, used when constructing Keras Functional "
    "models or Keras Functions. You can only use it as input to a Keras layer or a Keras "
    "operation (from the namespaces `keras.layers` and `keras.ops`). You are likely doing "
    "something like:\n\n```\nx = Input(...)\n...\ntf_fn(x)  # Invalid.\n```\n\nWhat you "
    "should do instead is wrap `tf_fn` in a layer:\n\n```\nclass MyLayer(Layer):\n    def "
    "call(self, x):\n        return tf_fn(x)\n\nx = MyLayer()(x)\n```\n"
)


class _Node:
    """One call of a layer on KerasTensors."""

    def __init__(self, layer, inputs, rest=(), kwargs=None):
        self.layer = layer
        self.inputs = inputs
        self.rest = rest
        self.kwargs = dict(kwargs or {})
        self.outputs = []

    def input_tensors(self):
        every = nest.flatten((self.inputs, list(self.rest), self.kwargs))
        return [v for v in every if isinstance(v, KerasTensor)]


def _is_tensor_like(value):
    return isinstance(value, (_core.Tensor, _core.Variable, np.ndarray, KerasTensor))


def get_source_inputs(tensor):
    """The ``Input`` tensors a functional tensor is computed from, in first-seen order
    (``tensor`` itself when it is an input; a non-symbolic value gives ``[tensor]``).

    Args:
        tensor: a KerasTensor (or a nest of them).

    Returns:
        A list of KerasTensors.
    """
    sources, seen = [], set()
    pending = list(reversed(nest.flatten(tensor)))
    while pending:
        current = pending.pop()
        node = getattr(current, "_node", None)
        parents = node.input_tensors() if node is not None else []
        if not parents:  # an Input (its InputLayer's node has no inputs) or a plain value
            if id(current) not in seen:
                seen.add(id(current))
                sources.append(current)
            continue
        pending.extend(reversed(parents))
    return sources


def _zeros_standing_in(structure):
    """``structure`` with each KerasTensor replaced by zeros of its shape (a first call on
    symbolic inputs, in any argument: attention layers take the value as the second)."""
    return nest.map_structure(
        lambda v: _zeros_for(v.shape, v.dtype) if isinstance(v, KerasTensor) else v, structure
    )
