"""``Reshape`` (Keras 3's ``keras.src.layers.reshaping.reshape``)."""

import reprlib

from .... import _core
from ..layer import Layer
from ..layer_helpers import _is_int


class Reshape(Layer):
    """Reshapes each sample to ``target_shape`` (one entry may be -1)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(target_shape, (tuple, list)) or not all(
            _is_int(d) and (d >= 1 or d == -1) for d in target_shape
        ):
            raise ValueError(
                f"Reshape: target_shape must be a tuple of positive ints (one may be -1). "
                f"Received: target_shape={reprlib.repr(target_shape)}"
            )
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(d == -1 for d in self.target_shape) > 1:
            raise ValueError(
                f"Reshape: at most one dimension of target_shape may be -1, "
                f"received {self.target_shape}"
            )

    def call(self, inputs):
        return _core.reshape(inputs, [inputs.shape[0], *self.target_shape])

    def get_config(self):
        return {**super().get_config(), "target_shape": self.target_shape}
