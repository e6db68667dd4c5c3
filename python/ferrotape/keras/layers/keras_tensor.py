"""Symbolic tensors and the call graph of the functional API (Keras 3's
``keras.src.backend.common.keras_tensor`` and ``keras.src.ops.node``).
"""

import numpy as np

from ... import _core, nest
from ... import dtypes as ft_dtypes
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
        self.dtype = ft_dtypes.as_dtype(dtype).name
        self.name = name
        self._node = node

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        name = f", name={self.name}" if self.name else ""
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, sparse=False{name}>"


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
