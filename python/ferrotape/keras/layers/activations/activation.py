"""``Activation`` (Keras 3's ``keras.src.layers.activations.activation``)."""

from .... import _core
from ... import activations
from ..layer import Layer
from ..layer_helpers import _split_activation


class Activation(Layer):
    """Applies an activation function (a Keras name or a callable)."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)
        self._core_name, self._after = _split_activation(self.activation)

    def call(self, inputs):
        if self._after is not None:
            return self._after(inputs)
        return _core.keras.activation(self._core_name, inputs)

    def get_config(self):
        return {**super().get_config(), "activation": activations.serialize(self.activation)}
