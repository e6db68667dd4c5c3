"""``Activation`` (Keras 3's ``keras.src.layers.activations.activation``)."""

from .... import _core
from ... import activations
from ..layer import Layer
from ..layer_helpers import _current_activation


class Activation(Layer):
    """Applies an activation function (a Keras name or a callable)."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)
        self._make_native()

    def _make_native(self):
        self._native = _core.keras.NativeLayer("Activation", {})

    def call(self, inputs):
        fused, after = _current_activation(self)
        if after is not None:
            return after(inputs)
        return self._native(inputs, activation=fused)

    def get_config(self):
        return {**super().get_config(), "activation": activations.serialize(self.activation)}
