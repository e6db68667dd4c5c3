"""``InputLayer`` and ``Input`` (Keras 3's ``keras.src.layers.core.input_layer``)."""

import reprlib

import numpy as np

from ..keras_tensor import KerasTensor, _Node
from ..layer import Layer
from ..layer_utils import _plain_shape, _unique_name


def _checked_shape(name, shape):
    """A shape argument as a tuple of non-negative ints or None (Keras's standardize_shape)."""
    if hasattr(shape, "as_list"):
        shape = shape.as_list()
    if isinstance(shape, (str, bytes)) or not isinstance(shape, (tuple, list)):
        raise ValueError(
            f"InputLayer: cannot convert {reprlib.repr(shape)} to a shape; expected a tuple of "
            f"ints or None. "
            f"Received: {name}={reprlib.repr(shape)}"
        )
    for dim in shape:
        is_int = isinstance(dim, (int, np.integer)) and not isinstance(dim, bool)
        if dim is not None and (not is_int or dim < 0):
            raise ValueError(
                f"InputLayer: cannot convert {reprlib.repr(tuple(shape))} to a shape: found the "
                f"entry {reprlib.repr(dim)}; dimensions are non-negative ints or None. "
                f"Received: {name}={reprlib.repr(shape)}"
            )
    return tuple(shape)


class InputLayer(Layer):
    """The entry point of a model: holds the input's batch shape and passes inputs through."""

    def __init__(
        self,
        shape=None,
        batch_size=None,
        dtype=None,
        sparse=None,
        batch_shape=None,
        input_tensor=None,
        optional=False,
        name=None,
        ragged=None,
        **kwargs,
    ):
        del sparse, input_tensor, optional, ragged
        if "input_shape" in kwargs and shape is None:
            shape = kwargs.pop("input_shape")
        if "batch_input_shape" in kwargs and batch_shape is None:
            batch_shape = kwargs.pop("batch_input_shape")
        super().__init__(name=name or _unique_name("input_layer"), dtype=dtype, **kwargs)
        if batch_shape is None:
            if shape is None:
                raise ValueError("InputLayer: you must pass a `shape` argument")
            if isinstance(shape, int):
                shape = (shape,)
            batch_shape = (batch_size, *_checked_shape("shape", shape))
        elif shape is not None:
            raise ValueError("InputLayer: pass `shape` or `batch_shape`, not both")
        self.batch_shape = _plain_shape(_checked_shape("batch_shape", batch_shape))
        object.__setattr__(self, "built", True)
        object.__setattr__(self, "_build_input_shape", self.batch_shape)
        object.__setattr__(self, "_output_shape", self.batch_shape)
        node = _Node(self, None)
        self.output = KerasTensor(self.batch_shape, self.dtype, name=self.name, node=node)
        node.outputs = [self.output]

    @property
    def dtype(self):
        return self._policy.compute_dtype

    def call(self, inputs):
        return inputs

    def get_build_config(self):
        return None  # built on construction; Keras writes no build_config for it

    def get_config(self):
        """Keras 3's InputLayer config (``sparse``, ``ragged`` and ``optional`` are always
        False in ferrotape)."""
        return {
            "batch_shape": self.batch_shape,
            "dtype": self.dtype,
            "sparse": False,
            "ragged": False,
            "name": self.name,
            "optional": False,
        }


def Input(  # noqa: N802 - Keras's name
    shape=None,
    batch_size=None,
    dtype=None,
    sparse=None,
    batch_shape=None,
    name=None,
    tensor=None,
    optional=False,
):
    """A symbolic model input of ``shape`` (without the batch dim): the first element of a
    ``Sequential`` model, or the start of a functional model."""
    layer = InputLayer(
        shape=shape,
        batch_size=batch_size,
        dtype=dtype,
        sparse=sparse,
        batch_shape=batch_shape,
        input_tensor=tensor,
        optional=optional,
        name=name,
    )
    return layer.output
