"""``Add``, ``Subtract``, ``Multiply``, ``Average``, ``Maximum``, ``Minimum``, ``Concatenate``
and their functional forms ``add``, ``subtract``... (Keras 3's ``keras.src.layers.merging``).

>>> import ferrotape as ft
>>> a, b = ft.constant([[1.0, 5.0]]), ft.constant([[3.0, 2.0]])
>>> ft.keras.layers.Maximum()([a, b]).numpy().tolist()
[[3.0, 5.0]]
>>> ft.keras.layers.subtract([a, b]).numpy().tolist()
[[-2.0, 3.0]]
"""

from .... import _core
from ..layer import Layer


class _Merge(Layer):
    _supports_masking = True  # as Keras 3: the input's mask passes through

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


class Maximum(_Merge):
    """The elementwise maximum of a list of inputs."""

    def _merge(self, inputs):
        out = inputs[0]
        for x in inputs[1:]:
            out = _core.maximum(out, x)
        return out


class Minimum(_Merge):
    """The elementwise minimum of a list of inputs."""

    def _merge(self, inputs):
        out = inputs[0]
        for x in inputs[1:]:
            out = _core.minimum(out, x)
        return out


class Concatenate(_Merge):
    """Joins a list of inputs along ``axis``."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)

    def _merge(self, inputs):
        return _core.concat(inputs, self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def add(inputs, **kwargs):
    """``Add(**kwargs)(inputs)``: the elementwise sum of a list of tensors."""
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """``Subtract(**kwargs)(inputs)``: ``inputs[0] - inputs[1]``."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """``Multiply(**kwargs)(inputs)``: the elementwise product of a list of tensors."""
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """``Average(**kwargs)(inputs)``: the elementwise mean of a list of tensors."""
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    """``Maximum(**kwargs)(inputs)``: the elementwise maximum of a list of tensors."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """``Minimum(**kwargs)(inputs)``: the elementwise minimum of a list of tensors."""
    return Minimum(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    """``Concatenate(axis, **kwargs)(inputs)``: a list of tensors joined along ``axis``."""
    return Concatenate(axis=axis, **kwargs)(inputs)
