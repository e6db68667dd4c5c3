"""``Add``, ``Subtract``, ``Multiply``, ``Average``, ``Concatenate`` (Keras 3's
``keras.src.layers.merging``).
"""

from .... import _core
from ..layer import Layer


class _Merge(Layer):
    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 1:
            raise ValueError(
                f"{type(self).__name__}: expected a list of input tensors, received {inputs!r}"
            )
        return self._merge(list(inputs))


class Add(_Merge):
    """The elementwise sum of a list of inputs."""

    def _merge(self, inputs):
        return _core.add_n(inputs) if len(inputs) > 1 else inputs[0]


class Subtract(_Merge):
    """``inputs[0] - inputs[1]``."""

    def _merge(self, inputs):
        if len(inputs) != 2:
            raise ValueError(f"Subtract: expected exactly 2 inputs, received {len(inputs)}")
        return inputs[0] - inputs[1]


class Multiply(_Merge):
    """The elementwise product of a list of inputs."""

    def _merge(self, inputs):
        out = inputs[0]
        for x in inputs[1:]:
            out = out * x
        return out


class Average(_Merge):
    """The elementwise mean of a list of inputs."""

    def _merge(self, inputs):
        return _core.add_n(inputs) / float(len(inputs))


class Concatenate(_Merge):
    """Joins a list of inputs along ``axis``."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)

    def _merge(self, inputs):
        return _core.concat(inputs, self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
