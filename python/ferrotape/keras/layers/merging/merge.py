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
    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 1:
            raise ValueError(
                f"{type(self).__name__}: expected a list of input tensors, received {inputs!r}"
            )
        return self._merge(list(inputs))

    def compute_mask(self, inputs, mask=None):
        """A step is kept where any input keeps it (Keras 3); None unless every input has a
        mask.

        Args:
            inputs: The list of inputs.
            mask: Their masks (a list), or None.

        Returns:
            The OR of the masks, or None.
        """
        del inputs
        if mask is None or any(m is None for m in mask):
            return None
        combined = _core.cast(mask[0], "bool")
        for m in mask[1:]:
            combined = _core.logical_or(combined, _core.cast(m, "bool"))
        return combined


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

    def compute_mask(self, inputs, mask=None):
        """The masks joined as the inputs are (an unmasked input counts as all kept), reduced
        over the last axis (Keras 3); None when no input has a mask.

        Args:
            inputs: The list of inputs.
            mask: Their masks (a list), or None.

        Returns:
            The joined mask, or None.
        """
        if mask is None or all(m is None for m in mask):
            return None
        masks = []
        for x, m in zip(inputs, mask, strict=True):
            if m is None:
                m = _core.ones_like(x, dtype="bool")
            elif len(m.shape) < len(x.shape):
                m = _core.logical_or(
                    _core.expand_dims(_core.cast(m, "bool"), -1), _core.zeros_like(x, dtype="bool")
                )
            masks.append(_core.cast(m, "bool"))
        return _core.reduce_any(_core.concat(masks, self.axis), [-1])

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
